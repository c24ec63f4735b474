/* Memory aggregation of injected allocation events: counts, deltas,
 * frees crediting creation sites, zero sizes, a moving peak, retained
 * sites, ids, the retention budget and several workers.  Every expected
 * number is computed by hand in the comments. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/agg.h"
#include "daemon/rank.h"
#include "daemon/render.h"
#include "tests/agg_events.h"

Suite *agg_mem_suite(void);

static const char text[] = "fn main() {\n  f()\n}\nfn f() {\n  g()\n}\nfn g() {\n  f()\n}\n";

/* main (0-20, line 1), make (20-37, line 4), grow (37-54, line 7);
 * stacks 0 main, 1 main>make, 2 main>grow. */
static struct ev setup(uint64_t budget)
{
    struct ev e = ev_mem_start(budget);
    ck_assert_int_eq(ev_source(&e, 0, "src/m.jett", text), 0);
    ck_assert_int_eq(ev_func(&e, 0, "app", "main", 0, 0, 20), 0);
    ck_assert_int_eq(ev_func(&e, 1, "app", "make", 0, 20, 37), 0);
    ck_assert_int_eq(ev_func(&e, 2, "app", "grow", 0, 37, 54), 0);
    ck_assert_int_eq(ev_stack(&e, 0, WIRE_NONE32, 0), 0);
    ck_assert_int_eq(ev_stack(&e, 1, 0, 1), 0);
    ck_assert_int_eq(ev_stack(&e, 2, 0, 2), 0);
    return e;
}

static void check_site(const struct rank_entry *x, const char *fn, uint64_t count,
                       uint64_t allocated, uint64_t pct, uint64_t freed, uint64_t retained,
                       uint64_t at_peak, uint64_t resizes)
{
    ck_assert_str_eq(x->fn.ptr, fn);
    ck_assert_uint_eq(x->secondary, count);
    ck_assert_uint_eq(x->primary, allocated);
    ck_assert_uint_eq(x->percent_hundredths, pct);
    ck_assert_uint_eq(x->freed_bytes, freed);
    ck_assert_uint_eq(x->retained_bytes, retained);
    ck_assert_uint_eq(x->live_at_peak_bytes, at_peak);
    ck_assert_uint_eq(x->resize_count, resizes);
}

/* The events of churn_peak_and_sites, in order. */
static const struct {
    uint8_t op;
    uint64_t id, old, neu;
    uint32_t stack;
} churn[] = {
    {WIRE_OP_ALLOCATE, 1, EV_NA, 100, 1}, {WIRE_OP_ALLOCATE, 2, EV_NA, 0, 1},
    {WIRE_OP_ALLOCATE, 3, EV_NA, 50, 0},  {WIRE_OP_RESIZE, 1, 100, 300, 2},
    {WIRE_OP_RESIZE, 3, 50, 20, 2},       {WIRE_OP_FREE, 1, 300, EV_NA, 0},
    {WIRE_OP_ALLOCATE, 4, EV_NA, 400, 1}, {WIRE_OP_FREE, 4, 400, EV_NA, 2},
    {WIRE_OP_RESIZE, 2, 0, 10, 1},
};

/* Feeds churn events [from, to). */
static void feed_churn(struct ev *e, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        ck_assert_int_eq(
            ev_alloc(e, churn[i].op, churn[i].id, churn[i].old, churn[i].neu, churn[i].stack), 0);
}

/* The profile of all nine churn events, as computed by hand below. */
static void check_churn(const struct rank_report *r)
{
    ck_assert_int_eq(r->status, AGG_COMPLETE);
    ck_assert_uint_eq(r->mem.allocation_count, 4);
    ck_assert_uint_eq(r->mem.resize_count, 3);
    ck_assert_uint_eq(r->mem.allocated_bytes, 760);
    ck_assert_uint_eq(r->mem.freed_bytes, 730);
    ck_assert_uint_eq(r->mem.peak_live_bytes, 420);
    ck_assert_uint_eq(r->mem.retained_bytes, 30);
    ck_assert_uint_eq(r->mem.attributed_allocated_bytes, 760);
    ck_assert_uint_eq(r->n_entries, 3);
    check_site(&r->entries[0], "make", 3, 510, 6711, 700, 10, 400, 1);
    check_site(&r->entries[1], "grow", 0, 200, 2632, 0, 0, 0, 2);
    check_site(&r->entries[2], "main", 1, 50, 658, 30, 20, 20, 0);
}

/* Events (live after each, peak moving 100, 150, 350, 420):
 *   1 allocate id1 100 at make        live 100  peak
 *   2 allocate id2 0 at make          live 100  (zero size: counted, 0 bytes)
 *   3 allocate id3 50 at main         live 150  peak
 *   4 resize id1 100->300 at grow     live 350  peak (growth 200 to grow)
 *   5 resize id3 50->20 at grow       live 320  (30 freed, credited to main)
 *   6 free id1 300 at main            live 20   (300 freed, credited to make)
 *   7 allocate id4 400 at make        live 420  peak
 *   8 free id4 400 at grow            live 20   (credited to make)
 *   9 resize id2 0->10 at make        live 30   (growth 10 to make)
 * Totals: 4 allocations, 3 resizes, allocated 100+0+50+200+400+10 = 760,
 * freed 30+300+400 = 730, peak 420, retained 30, attributed 760.
 * make: 3 allocations, 100+0+400+10 = 510 bytes (67.11%), 1 resize,
 *   freed 700, retained 10 (id2), 400 live at the peak (id4).
 * grow: 0 allocations, 200 bytes (26.32%), 2 resizes, freed 0,
 *   retained 0, 0 at the peak.
 * main: 1 allocation, 50 bytes (6.58%), 0 resizes, freed 30, retained
 *   20, 20 at the peak.
 * Suggestions at 5.00%: make is rank 1 (pressure); no site retains
 * 5% of 760 = 38 bytes (10 and 20 do not). */
START_TEST(churn_peak_and_sites)
{
    struct ev e = setup(AGG_RETENTION_BUDGET_MAX);
    feed_churn(&e, 0, 9);
    ck_assert_int_eq(ev_mem_finish(&e), 0);
    struct rank_report r;
    ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
    check_churn(&r);
    ck_assert_str_eq(r.entries[0].chains[0].chain, "app.main > app.make");
    ck_assert_uint_eq(r.entries[0].chains[0].weight, 510);
    ck_assert_str_eq(r.entries[2].chains[0].chain, "app.main");
    ck_assert_uint_eq(r.entries[0].n_suggestions, 1);
    ck_assert_str_eq(r.entries[0].suggestions[0].rule, "MEM_ALLOCATION_PRESSURE");
    ck_assert_str_eq(r.entries[0].suggestions[0].text,
                     "Reduce, reuse, or batch allocations in app.make; it allocated 67.11% of "
                     "attributed bytes.");
    ck_assert_uint_eq(r.entries[1].n_suggestions, 0);
    ck_assert_uint_eq(r.entries[2].n_suggestions, 0);
    rank_free(&r);
    agg_free(e.a);
}
END_TEST

/* The stream cut short after churn event 7, with no FINISH: the run's
 * exit is unknown, so retained bytes are unavailable, while freed, peak
 * and live-at-peak bytes are those of the seven events read (jett-profile(7),
 * Status).  By hand from the table above: live after event 7 is 420, a
 * peak; totals 4 allocations, 2 resizes, allocated 100+0+50+200+400 =
 * 750, freed 30+300 = 330, peak 420, attributed 750.  make: 3
 * allocations, 500 bytes (66.67%), freed 300, at the peak 0+400 = 400;
 * grow: 200 bytes (26.67%), 2 resizes, freed 0, at the peak 0; main: 1
 * allocation, 50 bytes (6.67%), freed 30, at the peak 20.  The status
 * is partial (collector_failure: no FINISH), so no suggestion; the
 * human report says retained bytes are unavailable and has no "retained
 * at exit" line; the TOON writes unavailable beside the numbers. */
START_TEST(cut_short_keeps_what_was_read)
{
    struct ev e = setup(AGG_RETENTION_BUDGET_MAX);
    feed_churn(&e, 0, 7);
    agg_end(e.a);
    struct rank_report r;
    ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
    ck_assert_int_eq(r.status, AGG_PARTIAL);
    ck_assert_int_eq(r.reason, AGG_REASON_COLLECTOR_FAILURE);
    ck_assert_str_eq(r.termination, "unavailable");
    ck_assert_uint_eq(r.mem.allocation_count, 4);
    ck_assert_uint_eq(r.mem.resize_count, 2);
    ck_assert_uint_eq(r.mem.allocated_bytes, 750);
    ck_assert_uint_eq(r.mem.freed_bytes, 330);
    ck_assert_uint_eq(r.mem.peak_live_bytes, 420);
    ck_assert(!r.mem.live_unavailable);
    ck_assert(r.mem.retained_unavailable);
    ck_assert_uint_eq(r.mem.retained_bytes, RANK_NA);
    ck_assert_uint_eq(r.n_entries, 3);
    check_site(&r.entries[0], "make", 3, 500, 6667, 300, RANK_NA, 400, 0);
    check_site(&r.entries[1], "grow", 0, 200, 2667, 0, RANK_NA, 0, 2);
    check_site(&r.entries[2], "main", 1, 50, 667, 30, RANK_NA, 20, 0);
    for (size_t i = 0; i < r.n_entries; i++) {
        ck_assert(!r.entries[i].live_unavailable);
        ck_assert(r.entries[i].retained_unavailable);
        ck_assert_uint_eq(r.entries[i].n_suggestions, 0);
    }
    char *out, err[128];
    size_t len;
    ck_assert_int_eq(render_toon(&r, &out, &len, err, sizeof err), 0);
    ck_assert_msg(strstr(out, "\n    freed_bytes: 330\n"
                              "    peak_live_bytes: 420\n"
                              "    retained_bytes: unavailable\n"),
                  "%s", out);
    ck_assert_ptr_nonnull(strstr(out, "\n      freed_bytes: 300\n"
                                      "      retained_bytes: unavailable\n"
                                      "      live_at_peak_bytes: 400\n"));
    free(out);
    ck_assert_int_eq(render_human(&r, &out, &len), 0);
    ck_assert_msg(strstr(out, "\n  peak live bytes       420\n"
                              "  retained bytes        unavailable\n"),
                  "%s", out);
    ck_assert_ptr_nonnull(strstr(out, "freed 300 bytes, retained unavailable, live at peak 400 "
                                      "bytes, resizes 0\n"));
    ck_assert_ptr_null(strstr(out, "retained at exit"));
    free(out);
    rank_free(&r);
    agg_free(e.a);
}
END_TEST

/* Ids: a reused id, a free of an unknown or retired id, a resize of a
 * retired one, a size the record contradicts and a malformed operation
 * are collector errors, counted and never guessed:
 *   allocate id5 64 at make; allocate id5 again (reused: ignored);
 *   allocate id4 (below the last id: ignored); free id9 (unknown);
 *   free id5 saying 60 bytes (error; the 64 tracked bytes are freed);
 *   free id5 again (retired); resize id5 (retired); a free with a new size.
 * By hand: 7 errors (every event after the first), allocation_count 1,
 * allocated 64, freed 64 (the wrong-size free still retires id5 with its
 * tracked 64 bytes), retained 0, peak 64. */
START_TEST(id_errors)
{
    struct ev e = setup(AGG_RETENTION_BUDGET_MAX);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_ALLOCATE, 5, EV_NA, 64, 1), 0);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_ALLOCATE, 5, EV_NA, 8, 1), -1);
    ck_assert_str_eq(agg_error(e.a), "ALLOC sequence 2: allocation id reused or out of order");
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_ALLOCATE, 4, EV_NA, 8, 1), -1);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_FREE, 9, 8, EV_NA, 1), -1);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_FREE, 5, 60, EV_NA, 1), -1);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_FREE, 5, 64, EV_NA, 1), -1);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_RESIZE, 5, 64, 128, 1), -1);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_FREE, 5, 64, 3, 1), -1);
    ck_assert_uint_eq(agg_error_count(e.a), 7);
    ck_assert_int_eq(ev_mem_finish(&e), 0);
    struct rank_report r;
    ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
    ck_assert_int_eq(r.status, AGG_PARTIAL);
    ck_assert_int_eq(r.reason, AGG_REASON_COLLECTOR_FAILURE);
    ck_assert_uint_eq(r.mem.allocation_count, 1);
    ck_assert_uint_eq(r.mem.resize_count, 0);
    ck_assert_uint_eq(r.mem.allocated_bytes, 64);
    ck_assert_uint_eq(r.mem.freed_bytes, 64);
    ck_assert_uint_eq(r.mem.retained_bytes, 0);
    ck_assert_uint_eq(r.mem.peak_live_bytes, 64);
    rank_free(&r);
    agg_free(e.a);
}
END_TEST

/* Retention budget 2112 bytes.  Event 1 (id1 100 at make): make's site
 * bucket 56 and its chain bucket 8 (64), then the window of recent ids,
 * 256 slots of 8 bytes: 64 + 2048 = 2112, exactly the budget.  Event 2
 * (id2 50 at make) fits the window.  Event 3 (id3 30 at main) needs
 * main's site bucket (56 more): the buckets come first (jett-profile(7),
 * Budgets), so the records are released (64 held) and main's site and
 * chain take 64 (128); the profile is partial / retention_metadata_limit
 * and no allocation is tracked from then on.  Event 4 frees id3, event
 * 5 id1: taken as they say.  Event 6 allocates id4 20 at make.
 * By hand: 4 allocations, allocated 100+50+30+20 = 200, attributed 200;
 * freed, peak and retained unavailable; make: 3 allocations, 170 bytes
 * (85.00%), main: 1, 30 bytes (15.00%), their live values unavailable,
 * no suggestion (partial); bytes held 128. */
START_TEST(retention_budget)
{
    struct ev e = setup(2112);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_ALLOCATE, 1, EV_NA, 100, 1), 0);
    ck_assert_uint_eq(agg_retention_bytes(e.a), 2112);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_ALLOCATE, 2, EV_NA, 50, 1), 0);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_ALLOCATE, 3, EV_NA, 30, 0), 0);
    ck_assert_uint_eq(agg_retention_bytes(e.a), 128);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_FREE, 3, 30, EV_NA, 0), 0);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_FREE, 1, 100, EV_NA, 0), 0);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_ALLOCATE, 4, EV_NA, 20, 1), 0);
    ck_assert_int_eq(ev_mem_finish(&e), 0);
    ck_assert_uint_eq(agg_error_count(e.a), 0);
    ck_assert_uint_eq(agg_retention_bytes(e.a), 128);
    struct rank_report r;
    ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
    ck_assert_int_eq(r.status, AGG_PARTIAL);
    ck_assert_int_eq(r.reason, AGG_REASON_RETENTION_METADATA_LIMIT);
    ck_assert_uint_eq(r.mem.allocation_count, 4);
    ck_assert_uint_eq(r.mem.allocated_bytes, 200);
    ck_assert_uint_eq(r.mem.attributed_allocated_bytes, 200);
    ck_assert_uint_eq(r.mem.freed_bytes, RANK_NA);
    ck_assert_uint_eq(r.mem.peak_live_bytes, RANK_NA);
    ck_assert_uint_eq(r.mem.retained_bytes, RANK_NA);
    ck_assert_uint_eq(r.n_entries, 2);
    check_site(&r.entries[0], "make", 3, 170, 8500, RANK_NA, RANK_NA, RANK_NA, 0);
    check_site(&r.entries[1], "main", 1, 30, 1500, RANK_NA, RANK_NA, RANK_NA, 0);
    ck_assert_str_eq(r.entries[1].chains[0].chain, "app.main");
    ck_assert_uint_eq(r.entries[1].chains[0].weight, 30);
    ck_assert_uint_eq(r.entries[0].n_suggestions, 0);
    rank_free(&r);
    agg_free(e.a);
}
END_TEST

/* Once the records are released, frees and resizes are taken as their
 * events say, checked against no record (jett-profile(7), Budgets):
 * budget 2112 filled by id1 (100 at make) as above; id2 (50 at grow)
 * releases the records for grow's buckets.  Then, none an error: id2
 * freed twice; id 1 resized at grow from 7 bytes (not its 100) to 40,
 * growth 33 at grow; id 2 resized at make from 60 to 10, no growth; a
 * free of id 1 saying 5 bytes.  An id above every allocate's (3) is
 * still refused, in a free and in a resize.  By hand: 2 allocations, 2
 * resizes, allocated 100 + 50 + 33 = 183: make 100 / 1 allocation and
 * 1 resize, grow 83 / 1 allocation and 1 resize. */
START_TEST(frees_unchecked_once_released)
{
    struct ev e = setup(2112);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_ALLOCATE, 1, EV_NA, 100, 1), 0);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_ALLOCATE, 2, EV_NA, 50, 2), 0);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_FREE, 2, 50, EV_NA, 0), 0);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_FREE, 2, 50, EV_NA, 0), 0);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_RESIZE, 1, 7, 40, 2), 0);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_RESIZE, 2, 60, 10, 1), 0);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_FREE, 1, 5, EV_NA, 0), 0);
    ck_assert_uint_eq(agg_error_count(e.a), 0);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_FREE, 3, 5, EV_NA, 0), -1);
    ck_assert_str_eq(agg_error(e.a), "ALLOC sequence 8: free of an unknown or retired allocation");
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_RESIZE, 9, 5, 8, 0), -1);
    ck_assert_uint_eq(agg_error_count(e.a), 2);
    ck_assert_int_eq(ev_mem_finish(&e), 0);
    struct rank_report r;
    ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
    ck_assert_uint_eq(r.mem.allocation_count, 2);
    ck_assert_uint_eq(r.mem.resize_count, 2);
    ck_assert_uint_eq(r.mem.allocated_bytes, 183);
    ck_assert_uint_eq(r.n_entries, 2);
    check_site(&r.entries[0], "make", 1, 100, 5464, RANK_NA, RANK_NA, RANK_NA, 1);
    check_site(&r.entries[1], "grow", 1, 83, 4536, RANK_NA, RANK_NA, RANK_NA, 1);
    rank_free(&r);
    agg_free(e.a);
}
END_TEST

/* The buckets alone fill a budget of 124 bytes (jett-profile(7),
 * Budgets).  id1 100 at make: make's site 56 and chain 8 (64); the
 * window (2048) does not fit and there is no record to release: no
 * allocation is tracked.  id2 30 at main: main's site 56 fits (120), its
 * chain 8 does not (128): refused with no record to release, and from
 * then on no bucket is made, even one that would fit.  id3 20 at grow:
 * no site bucket.  id4 10 at make: make's buckets count it.  By hand: 4
 * allocations, 160 bytes, attributed 160; make 110 / 2 (68.75%, chain
 * app.main > app.make 110), main 30 / 1 (18.75%, no call chain), grow in
 * no entry (its 20 bytes in the totals only); 120 bytes held. */
START_TEST(buckets_alone_fill_the_budget)
{
    struct ev e = setup(124);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_ALLOCATE, 1, EV_NA, 100, 1), 0);
    ck_assert_uint_eq(agg_retention_bytes(e.a), 64);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_ALLOCATE, 2, EV_NA, 30, 0), 0);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_ALLOCATE, 3, EV_NA, 20, 2), 0);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_ALLOCATE, 4, EV_NA, 10, 1), 0);
    ck_assert_int_eq(ev_mem_finish(&e), 0);
    ck_assert_uint_eq(agg_error_count(e.a), 0);
    ck_assert_uint_eq(agg_retention_bytes(e.a), 120);
    struct rank_report r;
    ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
    ck_assert_int_eq(r.reason, AGG_REASON_RETENTION_METADATA_LIMIT);
    ck_assert_uint_eq(r.mem.allocation_count, 4);
    ck_assert_uint_eq(r.mem.allocated_bytes, 160);
    ck_assert_uint_eq(r.mem.attributed_allocated_bytes, 160);
    ck_assert_uint_eq(r.n_entries, 2);
    check_site(&r.entries[0], "make", 2, 110, 6875, RANK_NA, RANK_NA, RANK_NA, 0);
    ck_assert_uint_eq(r.entries[0].n_chains, 1);
    ck_assert_uint_eq(r.entries[0].chains[0].weight, 110);
    check_site(&r.entries[1], "main", 1, 30, 1875, RANK_NA, RANK_NA, RANK_NA, 0);
    ck_assert_uint_eq(r.entries[1].n_chains, 0);
    rank_free(&r);
    agg_free(e.a);
}
END_TEST

/* Worker 0 creates id1 (64) at make, worker 1 frees it at grow and
 * worker 1 creates id2 (16) at grow: the free credits make.  By hand:
 * make 64 allocated, 64 freed, retained 0; grow 16, retained 16. */
START_TEST(cross_worker_free)
{
    struct ev e = setup(AGG_RETENTION_BUDGET_MAX);
    ck_assert_int_eq(ev_alloc_on(&e, 0, WIRE_OP_ALLOCATE, 1, EV_NA, 64, 1), 0);
    ck_assert_int_eq(ev_alloc_on(&e, 1, WIRE_OP_FREE, 1, 64, EV_NA, 2), 0);
    ck_assert_int_eq(ev_alloc_on(&e, 1, WIRE_OP_ALLOCATE, 2, EV_NA, 16, 2), 0);
    ck_assert_int_eq(ev_mem_finish(&e), 0);
    struct rank_report r;
    ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
    /* make 64/80 = 80.00%, grow 16/80 = 20.00%; peak 64 after event 1, when
     * make held 64 and grow 0 */
    check_site(&r.entries[0], "make", 1, 64, 8000, 64, 0, 64, 0);
    check_site(&r.entries[1], "grow", 1, 16, 2000, 0, 16, 0, 0);
    ck_assert_uint_eq(r.mem.peak_live_bytes, 64);
    rank_free(&r);
    agg_free(e.a);
}
END_TEST

/* Two workers, each in its own order: A allocates 10 at make and frees
 * it; B allocates 5 at grow and resizes it to 7.  Any interleaving that
 * keeps each worker's order gives the same counts, bytes and retained
 * values (ids are numbered in stream order).  Peak and live-at-peak are
 * not compared: they are defined on the stream order ("after any
 * event"), so AABB peaks at 10 and ABAB at 15 by definition. */
START_TEST(interleavings)
{
    static const char *const orders[] = {"AABB", "ABAB", "ABBA", "BAAB", "BABA", "BBAA"};
    for (int k = 0; k < 6; k++) {
        struct ev e = setup(AGG_RETENTION_BUDGET_MAX);
        int a = 0, b = 0;
        uint64_t id = 0, a_id = 0, b_id = 0;
        for (const char *p = orders[k]; *p; p++) {
            if (*p == 'A' && a++ == 0)
                ck_assert_int_eq(ev_alloc_on(&e, 0, WIRE_OP_ALLOCATE, a_id = ++id, EV_NA, 10, 1),
                                 0);
            else if (*p == 'A')
                ck_assert_int_eq(ev_alloc_on(&e, 0, WIRE_OP_FREE, a_id, 10, EV_NA, 1), 0);
            else if (b++ == 0)
                ck_assert_int_eq(ev_alloc_on(&e, 1, WIRE_OP_ALLOCATE, b_id = ++id, EV_NA, 5, 2), 0);
            else
                ck_assert_int_eq(ev_alloc_on(&e, 1, WIRE_OP_RESIZE, b_id, 5, 7, 2), 0);
        }
        ck_assert_int_eq(ev_mem_finish(&e), 0);
        struct rank_report r;
        ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
        /* allocated 10 + 5 + 2 = 17: make 10 (58.82%), grow 7 (41.18%) */
        ck_assert_uint_eq(r.mem.allocated_bytes, 17);
        ck_assert_uint_eq(r.mem.freed_bytes, 10);
        ck_assert_uint_eq(r.mem.retained_bytes, 7);
        ck_assert_uint_eq(r.n_entries, 2);
        ck_assert_str_eq(r.entries[0].fn.ptr, "make");
        ck_assert_uint_eq(r.entries[0].percent_hundredths, 5882);
        ck_assert_uint_eq(r.entries[1].retained_bytes, 7);
        ck_assert_uint_eq(r.entries[1].resize_count, 1);
        rank_free(&r);
        agg_free(e.a);
    }
}
END_TEST

/* An event without a Jett stack counts in the totals, not in
 * attributed_allocated_bytes: 100 at make, 300 with no stack.  By hand:
 * allocated 400, attributed 100; make 100/100 = 100.00%, retaining 100
 * bytes (100 * 10000 >= 500 * 100): both memory rules, by rule id. */
START_TEST(unattributed_and_retained)
{
    struct ev e = setup(AGG_RETENTION_BUDGET_MAX);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_ALLOCATE, 1, EV_NA, 100, 1), 0);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_ALLOCATE, 2, EV_NA, 300, WIRE_NONE32), 0);
    ck_assert_int_eq(ev_mem_finish(&e), 0);
    struct rank_report r;
    ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
    ck_assert_uint_eq(r.mem.allocated_bytes, 400);
    ck_assert_uint_eq(r.mem.attributed_allocated_bytes, 100);
    ck_assert_uint_eq(r.mem.retained_bytes, 400);
    ck_assert_uint_eq(r.n_entries, 1);
    check_site(&r.entries[0], "make", 1, 100, 10000, 0, 100, 100, 0);
    ck_assert_uint_eq(r.entries[0].n_suggestions, 2);
    ck_assert_str_eq(r.entries[0].suggestions[0].rule, "MEM_ALLOCATION_PRESSURE");
    ck_assert_str_eq(r.entries[0].suggestions[1].text,
                     "Review the lifetime of allocations created in app.make; 100 bytes "
                     "(100.00%) were still live at exit.");
    rank_free(&r);
    agg_free(e.a);
}
END_TEST

/* The stack-table cap in memory mode.  With one byte less than the first
 * STACK needs (node table 16 x 28, chain table 16 x 16, chain index
 * 16 x 8: 832 bytes over SOURCE and FUNC), no stack is kept: an
 * allocation on stack 0 counts in the totals but is not attributed, no
 * entry exists, and the profile is partial / stack_capture_limit.  By
 * hand: 1 allocation, 100 bytes allocated, 0 attributed, retained 100. */
START_TEST(stack_cap_memory)
{
    struct ev probe = ev_mem_start(AGG_RETENTION_BUDGET_MAX);
    ck_assert_int_eq(ev_source(&probe, 0, "src/m.jett", text), 0);
    ck_assert_int_eq(ev_func(&probe, 0, "app", "main", 0, 0, 20), 0);
    size_t base = agg_stack_bytes(probe.a);
    agg_free(probe.a);
    struct ev e = ev_mem_start2(AGG_RETENTION_BUDGET_MAX, base + 831);
    ck_assert_int_eq(ev_source(&e, 0, "src/m.jett", text), 0);
    ck_assert_int_eq(ev_func(&e, 0, "app", "main", 0, 0, 20), 0);
    ck_assert_int_eq(ev_stack(&e, 0, WIRE_NONE32, 0), 0);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_ALLOCATE, 1, EV_NA, 100, 0), 0);
    ck_assert_int_eq(ev_mem_finish(&e), 0);
    struct rank_report r;
    ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
    ck_assert_int_eq(r.status, AGG_PARTIAL);
    ck_assert_int_eq(r.reason, AGG_REASON_STACK_CAPTURE_LIMIT);
    ck_assert_uint_eq(r.mem.allocation_count, 1);
    ck_assert_uint_eq(r.mem.allocated_bytes, 100);
    ck_assert_uint_eq(r.mem.attributed_allocated_bytes, 0);
    ck_assert_uint_eq(r.mem.retained_bytes, 100);
    ck_assert_uint_eq(r.n_entries, 0);
    rank_free(&r);
    agg_free(e.a);
}
END_TEST

/* Live records of recent ids sit in a window of 256 ids (8 bytes a
 * slot); an allocation 256 or more ids later slides it, moving the live
 * records it passes to the table of older ids (256 slots of 16 bytes).
 *   1 allocate id1 100 at make     64 + 2048 = 2112 bytes held
 *   2 allocate id2 50 at main      + main's site and chain: 2176
 *   3 free id2
 *   4 allocate id300 30 at make    id1 moves to the table: 2176 + 4096
 *   5 resize id1 100->40 at grow   found in the table; 60 freed, credited
 *                                  to make; grow's site bucket: + 56
 *   6 free id1 40, 7 free id300 30
 *   8 free id1 again: a collector error (retired, below the window)
 * By hand: 3 allocations, 180 bytes, 1 resize, freed 50 + 60 + 40 + 30 =
 * 180, retained 0, peak 150 (after event 2: make 100, main 50). */
START_TEST(window_slides_records_to_table)
{
    struct ev e = setup(AGG_RETENTION_BUDGET_MAX);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_ALLOCATE, 1, EV_NA, 100, 1), 0);
    ck_assert_uint_eq(agg_retention_bytes(e.a), 2112);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_ALLOCATE, 2, EV_NA, 50, 0), 0);
    ck_assert_uint_eq(agg_retention_bytes(e.a), 2176);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_FREE, 2, 50, EV_NA, 0), 0);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_ALLOCATE, 300, EV_NA, 30, 1), 0);
    ck_assert_uint_eq(agg_retention_bytes(e.a), 2176 + 4096);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_RESIZE, 1, 100, 40, 2), 0);
    ck_assert_uint_eq(agg_retention_bytes(e.a), 2176 + 4096 + 56);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_FREE, 1, 40, EV_NA, 2), 0);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_FREE, 300, 30, EV_NA, 0), 0);
    ck_assert_uint_eq(agg_error_count(e.a), 0);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_FREE, 1, 40, EV_NA, 2), -1);
    ck_assert_str_eq(agg_error(e.a), "ALLOC sequence 8: free of an unknown or retired allocation");
    struct rank_report r;
    ck_assert_int_eq(ev_mem_finish(&e), 0);
    ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
    ck_assert_uint_eq(r.mem.allocation_count, 3);
    ck_assert_uint_eq(r.mem.resize_count, 1);
    ck_assert_uint_eq(r.mem.allocated_bytes, 180);
    ck_assert_uint_eq(r.mem.freed_bytes, 180);
    ck_assert_uint_eq(r.mem.retained_bytes, 0);
    ck_assert_uint_eq(r.mem.peak_live_bytes, 150);
    /* make 130 of 180 bytes (72.22%), freed 60 + 40 + 30 */
    check_site(&r.entries[0], "make", 2, 130, 7222, 130, 0, 100, 0);
    rank_free(&r);
    agg_free(e.a);
}
END_TEST

/* The window doubles when a third of it would be live: the 86th live
 * record ((85 + 1) x 3 > 256) moves the window to 512 slots, 64 + 4096
 * bytes, and every record survives the move.  Id 400 then still fits
 * (400 - 1 < 512): nothing moves to the table. */
START_TEST(window_grows)
{
    struct ev e = setup(AGG_RETENTION_BUDGET_MAX);
    for (uint64_t id = 1; id <= 85; id++)
        ck_assert_int_eq(ev_alloc(&e, WIRE_OP_ALLOCATE, id, EV_NA, id, 1), 0);
    ck_assert_uint_eq(agg_retention_bytes(e.a), 64 + 2048);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_ALLOCATE, 86, EV_NA, 86, 1), 0);
    ck_assert_uint_eq(agg_retention_bytes(e.a), 64 + 4096);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_ALLOCATE, 400, EV_NA, 400, 1), 0);
    ck_assert_uint_eq(agg_retention_bytes(e.a), 64 + 4096);
    for (uint64_t id = 1; id <= 86; id++)
        ck_assert_int_eq(ev_alloc(&e, WIRE_OP_FREE, id, id, EV_NA, 1), 0);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_FREE, 400, 400, EV_NA, 1), 0);
    ck_assert_uint_eq(agg_error_count(e.a), 0);
    agg_free(e.a);
}
END_TEST

/* Budget 2112: id1 fills it (site, chain, window).  Id 300 would slide
 * the window past live id1, whose move needs the table (4096 bytes):
 * refused, so the records are released (64 held) and the profile is
 * partial.  Freeing id1 and id300 is no error. */
START_TEST(window_slide_refused)
{
    struct ev e = setup(2112);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_ALLOCATE, 1, EV_NA, 100, 1), 0);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_ALLOCATE, 300, EV_NA, 30, 1), 0);
    ck_assert_uint_eq(agg_retention_bytes(e.a), 64);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_FREE, 1, 100, EV_NA, 1), 0);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_FREE, 300, 30, EV_NA, 1), 0);
    ck_assert_uint_eq(agg_error_count(e.a), 0);
    ck_assert_uint_eq(agg_retention_bytes(e.a), 64);
    enum agg_reason why;
    ck_assert_int_eq(agg_status(e.a, &why), AGG_PARTIAL);
    ck_assert_int_eq(why, AGG_REASON_RETENTION_METADATA_LIMIT);
    agg_free(e.a);
}
END_TEST

/* An empty window jumps over any gap without the table: id1 allocated
 * and freed, then id 10^12; 2112 bytes stay held.  A free of id 5 (never
 * allocated, below the window, no table) is a collector error. */
START_TEST(window_jumps_gaps)
{
    struct ev e = setup(AGG_RETENTION_BUDGET_MAX);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_ALLOCATE, 1, EV_NA, 100, 1), 0);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_FREE, 1, 100, EV_NA, 1), 0);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_ALLOCATE, 1000000000000, EV_NA, 7, 1), 0);
    ck_assert_uint_eq(agg_retention_bytes(e.a), 2112);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_RESIZE, 1000000000000, 7, 9, 1), 0);
    ck_assert_uint_eq(agg_error_count(e.a), 0);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_FREE, 5, 1, EV_NA, 1), -1);
    ck_assert_str_eq(agg_error(e.a), "ALLOC sequence 5: free of an unknown or retired allocation");
    agg_free(e.a);
}
END_TEST

/* Sizes at and past the packed record's 40 bits are exact (T = 2^40;
 * make is stack 1, grow 2, main 0):
 *   1 allocate id1 T @make        allocated T,      live T
 *   2 resize id1 T -> T+16 @grow  growth 16         live T+16
 *   3 allocate id2 T-1 @make                        live 2T+15
 *   4 allocate id3 T+1 @main      allocated 3T+16,  live 3T+16
 *   5 resize id2 T-1 -> 8 @grow   (down across the boundary) freed T-9,
 *                                                   live 2T+25
 *   6 allocate id4 8 @make        allocated 3T+24,  live 2T+33
 *   7 resize id4 8 -> T @grow     (up across it) growth T-8,
 *                                 allocated 4T+16,  live 3T+25: the peak;
 *                                 make then holds id1 T+16, id2 8, id4 T
 *                                 = 2T+24, main id3 T+1
 *   8 free id1 (T+16) @main       freed 2T+7,       live 2T+9
 * Totals: 4 allocations, 3 resizes, allocated 4T+16 (all attributed),
 * freed 2T+7, peak 3T+25, retained 2T+9 (id2 8 + id3 T+1 + id4 T).
 * make: 3 allocations, T + T-1 + 8 = 2T+7 bytes, 50.00% ((2T+7)/(4T+16)
 * is half less 1/(4T+16)), freed T-9 + T+16 = 2T+7, retained 8 + T,
 * at peak 2T+24; grow: 16 + T-8 = T+8 bytes (25.00%), 3 resizes;
 * main: 1 allocation, T+1 bytes (25.00%), retained and at peak T+1.
 * After event 1 the records hold the 2048-byte window, make's 56-byte
 * site and 8-byte chain buckets and the 4096-byte table of full sizes
 * (256 slots of 16 bytes): 6208. */
START_TEST(sizes_past_40_bits)
{
    const uint64_t T = UINT64_C(1) << 40;
    struct ev e = setup(AGG_RETENTION_BUDGET_MAX);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_ALLOCATE, 1, EV_NA, T, 1), 0);
    ck_assert_uint_eq(agg_retention_bytes(e.a), 6208);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_RESIZE, 1, T, T + 16, 2), 0);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_ALLOCATE, 2, EV_NA, T - 1, 1), 0);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_ALLOCATE, 3, EV_NA, T + 1, 0), 0);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_RESIZE, 2, T - 1, 8, 2), 0);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_ALLOCATE, 4, EV_NA, 8, 1), 0);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_RESIZE, 4, 8, T, 2), 0);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_FREE, 1, T + 16, EV_NA, 0), 0);
    ck_assert_int_eq(ev_mem_finish(&e), 0);
    ck_assert_uint_eq(agg_error_count(e.a), 0);
    struct rank_report r;
    ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
    ck_assert_int_eq(r.status, AGG_COMPLETE);
    ck_assert_uint_eq(r.mem.allocation_count, 4);
    ck_assert_uint_eq(r.mem.resize_count, 3);
    ck_assert_uint_eq(r.mem.allocated_bytes, 4 * T + 16);
    ck_assert_uint_eq(r.mem.freed_bytes, 2 * T + 7);
    ck_assert_uint_eq(r.mem.peak_live_bytes, 3 * T + 25);
    ck_assert_uint_eq(r.mem.retained_bytes, 2 * T + 9);
    ck_assert_uint_eq(r.mem.attributed_allocated_bytes, 4 * T + 16);
    ck_assert_uint_eq(r.n_entries, 3);
    check_site(&r.entries[0], "make", 3, 2 * T + 7, 5000, 2 * T + 7, T + 8, 2 * T + 24, 0);
    check_site(&r.entries[1], "grow", 0, T + 8, 2500, 0, 0, 0, 3);
    check_site(&r.entries[2], "main", 1, T + 1, 2500, 0, T + 1, T + 1, 0);
    rank_free(&r);
    agg_free(e.a);
}
END_TEST

/* 2^63 at make, resized to 2^64 - 1 at grow (growth 2^63 - 1), freed at
 * main: allocated, freed and peak are 2^64 - 1, a value and not the
 * unavailable marker; retained 0.  make: 2^63 bytes, 50.00% (2^63 of
 * 2^64 - 1), freed and at peak 2^64 - 1; grow 2^63 - 1 bytes, 50.00%
 * (half less 1/(2^65 - 2)).  Then any byte more passes 2^64 - 1: an
 * allocate of 1 byte and a resize of a zero-size allocation by 1 are
 * refused as collector errors and change nothing (an allocate of 0 still
 * fits); allocation 3 is then not live, so its resize is unknown. */
START_TEST(sizes_up_to_2_64)
{
    const uint64_t H = UINT64_C(1) << 63;
    struct ev e = setup(AGG_RETENTION_BUDGET_MAX);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_ALLOCATE, 1, EV_NA, H, 1), 0);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_RESIZE, 1, H, UINT64_MAX, 2), 0);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_FREE, 1, UINT64_MAX, EV_NA, 0), 0);
    ck_assert_int_eq(ev_mem_finish(&e), 0);
    struct rank_report r;
    ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
    ck_assert_int_eq(r.status, AGG_COMPLETE);
    ck_assert_uint_eq(r.mem.allocated_bytes, UINT64_MAX);
    ck_assert_uint_eq(r.mem.freed_bytes, UINT64_MAX);
    ck_assert_uint_eq(r.mem.peak_live_bytes, UINT64_MAX);
    ck_assert_uint_eq(r.mem.retained_bytes, 0);
    ck_assert(!r.mem.live_unavailable);
    ck_assert_uint_eq(r.n_entries, 2);
    check_site(&r.entries[0], "make", 1, H, 5000, UINT64_MAX, 0, UINT64_MAX, 0);
    ck_assert(!r.entries[0].live_unavailable);
    check_site(&r.entries[1], "grow", 0, H - 1, 5000, 0, 0, 0, 1);
    char *toon;
    size_t len;
    char err[128];
    ck_assert_int_eq(render_toon(&r, &toon, &len, err, sizeof err), 0);
    ck_assert_ptr_nonnull(strstr(toon, "\n    allocated_bytes: 18446744073709551615\n"
                                       "    freed_bytes: 18446744073709551615\n"
                                       "    peak_live_bytes: 18446744073709551615\n"
                                       "    retained_bytes: 0\n"));
    ck_assert_ptr_nonnull(strstr(toon, "\n      freed_bytes: 18446744073709551615\n"));
    free(toon);
    rank_free(&r);
    agg_free(e.a);

    e = setup(AGG_RETENTION_BUDGET_MAX);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_ALLOCATE, 1, EV_NA, UINT64_MAX, 1), 0);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_ALLOCATE, 2, EV_NA, 0, 1), 0);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_ALLOCATE, 3, EV_NA, 1, 1), -1);
    ck_assert_str_eq(agg_error(e.a), "ALLOC sequence 3: allocated bytes would pass 2^64 - 1");
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_RESIZE, 2, 0, 1, 2), -1);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_RESIZE, 3, 1, 2, 2), -1);
    ck_assert_uint_eq(agg_error_count(e.a), 3);
    ck_assert_int_eq(ev_mem_finish(&e), 0);
    ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
    ck_assert_int_eq(r.status, AGG_PARTIAL);
    ck_assert_int_eq(r.reason, AGG_REASON_COLLECTOR_FAILURE);
    ck_assert_uint_eq(r.mem.allocation_count, 2);
    ck_assert_uint_eq(r.mem.resize_count, 0);
    ck_assert_uint_eq(r.mem.allocated_bytes, UINT64_MAX);
    ck_assert_uint_eq(r.mem.peak_live_bytes, UINT64_MAX);
    ck_assert_uint_eq(r.mem.retained_bytes, UINT64_MAX);
    rank_free(&r);
    agg_free(e.a);
}
END_TEST

/* Full sizes are charged to the retention budget.  With 4000 bytes, a
 * 2^40-byte allocation's full size (a 4096-byte table) does not fit: it
 * is not tracked (retention_metadata_limit: live values unavailable,
 * allocated bytes exact) and its free is expected.  With 5000 bytes, an
 * 8-byte allocation fits (2048-byte window, 64 bytes of make's buckets),
 * but its resize to 2^40 at grow needs the table too (2112 + 64 + 4096 >
 * 5000): it stops being tracked, so its free is expected as well;
 * allocated 8 + (2^40 - 8) = 2^40. */
/* An ALLOC at stack `stack` whose leaf statement is [start, end). */
static int alloc_at(struct ev *e, uint64_t id, uint64_t size, uint32_t stack, uint32_t start,
                    uint32_t end)
{
    e->seq++;
    struct wire_alloc x = {e->seq, WIRE_OP_ALLOCATE, id, EV_NA, size, {WIRE_NONE32, WIRE_NONE32, 0},
                           stack,  {start, end}};
    return agg_alloc(e->a, &x);
}

/* Allocation lines are charged to the retention budget.  Budget 2272:
 * event 1 (id1 100 at make, "g()" 31-34, line 5:3) takes make's site
 * bucket 56, its chain 8, the line 32 and the line index's 16 slots of
 * 8 bytes (128), then the window 2048: 2272, exactly the budget.  Event
 * 2 (id2 50, same statement) needs nothing new.  Event 3 (id3 30 at make,
 * 14-17) needs a second line (32; the index of 16 slots holds 2 at half
 * full): the records are released (224 held) and the line takes 32
 * (256); the profile is partial / retention_metadata_limit and id3
 * untracked.  By hand: make 3 allocations, 180 bytes, the lines 5:3 of
 * 150 bytes / 2 allocations and 2:3 ("f()") of 30 / 1. */
START_TEST(lines_charged)
{
    struct ev e = setup(2272);
    ck_assert_int_eq(alloc_at(&e, 1, 100, 1, 31, 34), 0);
    ck_assert_uint_eq(agg_retention_bytes(e.a), 2272);
    ck_assert_int_eq(alloc_at(&e, 2, 50, 1, 31, 34), 0);
    ck_assert_uint_eq(agg_retention_bytes(e.a), 2272);
    ck_assert_int_eq(alloc_at(&e, 3, 30, 1, 14, 17), 0);
    ck_assert_uint_eq(agg_retention_bytes(e.a), 256);
    ck_assert_int_eq(ev_mem_finish(&e), 0);
    ck_assert_uint_eq(agg_error_count(e.a), 0);
    struct rank_report r;
    ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
    ck_assert_int_eq(r.status, AGG_PARTIAL);
    ck_assert_int_eq(r.reason, AGG_REASON_RETENTION_METADATA_LIMIT);
    ck_assert_uint_eq(r.n_entries, 1);
    check_site(&r.entries[0], "make", 3, 180, 10000, RANK_NA, RANK_NA, RANK_NA, 0);
    ck_assert_uint_eq(r.entries[0].n_hot, 2);
    ck_assert_uint_eq(r.entries[0].hot[0].line, 5);
    ck_assert_uint_eq(r.entries[0].hot[0].column, 3);
    ck_assert_uint_eq(r.entries[0].hot[0].allocated_bytes, 150);
    ck_assert_uint_eq(r.entries[0].hot[0].allocation_count, 2);
    ck_assert_str_eq(r.entries[0].hot[0].code, "g()");
    ck_assert_uint_eq(r.entries[0].hot[1].line, 2);
    ck_assert_uint_eq(r.entries[0].hot[1].column, 3);
    ck_assert_uint_eq(r.entries[0].hot[1].allocated_bytes, 30);
    ck_assert_uint_eq(r.entries[0].hot[1].allocation_count, 1);
    ck_assert_str_eq(r.entries[0].hot[1].code, "f()");
    rank_free(&r);
    agg_free(e.a);
}
END_TEST

/* The first function's lines, from its first byte: line 1:1 ("fn",
 * 0-2) and 2:3 ("f()", 14-17) of main, the first identity, taken in
 * turn so that each finds its line again among the recent ones; an
 * allocation whose span has no end comes first and charges no line.
 * By hand: main 5 allocations, 5+10+20+30+40 = 105 bytes; line 1:1
 * holds 10+30+40 = 80 bytes / 3 allocations, line 2:3 20 / 1. */
START_TEST(lines_from_the_first_byte)
{
    struct ev e = setup(AGG_RETENTION_BUDGET_MAX);
    ck_assert_int_eq(alloc_at(&e, 1, 5, 0, 0, WIRE_NONE32), 0);
    ck_assert_int_eq(alloc_at(&e, 2, 10, 0, 0, 2), 0);
    ck_assert_int_eq(alloc_at(&e, 3, 20, 0, 14, 17), 0);
    ck_assert_int_eq(alloc_at(&e, 4, 30, 0, 0, 2), 0);
    ck_assert_int_eq(alloc_at(&e, 5, 40, 0, 0, 2), 0);
    ck_assert_int_eq(ev_mem_finish(&e), 0);
    struct rank_report r;
    ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
    ck_assert_uint_eq(r.n_entries, 1);
    check_site(&r.entries[0], "main", 5, 105, 10000, 0, 105, 105, 0);
    ck_assert_uint_eq(r.entries[0].n_hot, 2);
    const struct rank_hot *h = r.entries[0].hot;
    ck_assert_uint_eq(h[0].line, 1);
    ck_assert_uint_eq(h[0].column, 1);
    ck_assert_uint_eq(h[0].allocated_bytes, 80);
    ck_assert_uint_eq(h[0].allocation_count, 3);
    ck_assert_str_eq(h[0].code, "fn main() {"); /* the line, trimmed */
    ck_assert_uint_eq(h[1].line, 2);
    ck_assert_uint_eq(h[1].column, 3);
    ck_assert_uint_eq(h[1].allocated_bytes, 20);
    ck_assert_uint_eq(h[1].allocation_count, 1);
    ck_assert_str_eq(h[1].code, "f()");
    rank_free(&r);
    agg_free(e.a);
}
END_TEST

START_TEST(full_sizes_charged)
{
    const uint64_t T = UINT64_C(1) << 40;
    for (int resized = 0; resized < 2; resized++) {
        struct ev e = setup(resized ? 5000 : 4000);
        if (resized) {
            ck_assert_int_eq(ev_alloc(&e, WIRE_OP_ALLOCATE, 1, EV_NA, 8, 1), 0);
            ck_assert_uint_eq(agg_retention_bytes(e.a), 2112);
            ck_assert_int_eq(ev_alloc(&e, WIRE_OP_RESIZE, 1, 8, T, 2), 0);
        } else {
            ck_assert_int_eq(ev_alloc(&e, WIRE_OP_ALLOCATE, 1, EV_NA, T, 1), 0);
        }
        ck_assert_uint_le(agg_retention_bytes(e.a), resized ? 5000 : 4000);
        ck_assert_int_eq(ev_alloc(&e, WIRE_OP_FREE, 1, T, EV_NA, 0), 0);
        ck_assert_int_eq(ev_mem_finish(&e), 0);
        ck_assert_uint_eq(agg_error_count(e.a), 0);
        struct rank_report r;
        ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
        ck_assert_int_eq(r.status, AGG_PARTIAL);
        ck_assert_int_eq(r.reason, AGG_REASON_RETENTION_METADATA_LIMIT);
        ck_assert_uint_eq(r.mem.allocated_bytes, T);
        ck_assert_uint_eq(r.mem.allocation_count, 1);
        ck_assert_uint_eq(r.mem.resize_count, (uint64_t)resized);
        ck_assert(r.mem.live_unavailable);
        ck_assert_uint_eq(r.mem.freed_bytes, RANK_NA);
        rank_free(&r);
        agg_free(e.a);
    }
}
END_TEST

/* The churn events of churn_peak_and_sites, then the records released:
 * a release before the end does nothing; after it, the records' bytes
 * are no longer held and the profile is the same (the sites keep its
 * numbers); an event after the end is refused. */
START_TEST(released_records_keep_the_profile)
{
    struct ev e = setup(AGG_RETENTION_BUDGET_MAX);
    feed_churn(&e, 0, 8);
    agg_release_records(e.a);
    ck_assert_uint_gt(agg_retention_bytes(e.a), 0);
    feed_churn(&e, 8, 9);
    ck_assert_int_eq(ev_mem_finish(&e), 0);
    agg_end(e.a);
    size_t held = agg_retention_bytes(e.a);
    agg_release_records(e.a);
    /* ids 1..4 all sit in the first window, 256 slots of 8 bytes; the
     * site buckets stay */
    ck_assert_uint_eq(agg_retention_bytes(e.a), held - 256 * 8);
    struct rank_report r;
    ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
    check_churn(&r);
    rank_free(&r);
    ck_assert_uint_eq(agg_error_count(e.a), 0);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_FREE, 2, 10, EV_NA, 1), -1);
    ck_assert_str_eq(agg_error(e.a), "ALLOC after FINISH");
    agg_free(e.a);

    /* without FINISH: the end itself is an error, and so is what follows */
    e = setup(AGG_RETENTION_BUDGET_MAX);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_ALLOCATE, 1, EV_NA, 100, 1), 0);
    agg_end(e.a);
    agg_release_records(e.a);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_ALLOCATE, 2, EV_NA, 10, 1), -1);
    ck_assert_uint_eq(agg_error_count(e.a), 2);
    ck_assert_str_eq(agg_error(e.a), "stream ended without FINISH");
    agg_free(e.a);
}
END_TEST

/* Recursion (issue 19 item 1): a function's chain runs from the root to
 * its outermost occurrence (DESIGN section 6), as in CPU mode.  Stacks
 * 0 main, 1 main>f, 2 main>f>f, 3 main>f>g, 4 main>f>g>f:
 *   allocate id1 16 at main>f>f      f: 16, chain main>f
 *   allocate id2 8 at main>f         f: 24
 *   allocate id3 4 at main>f>g>f     f: 28 (mutual recursion, same chain)
 *   resize id2 8->20 at main>f>f     growth 12: f 40
 * f: 3 allocations, 1 resize, 40 bytes (100.00%) and one chain
 * "app.main > app.f" of 40 bytes; no chain ends in f twice. */
START_TEST(recursive_chain_to_outermost)
{
    struct ev e = ev_mem_start(AGG_RETENTION_BUDGET_MAX);
    ck_assert_int_eq(ev_source(&e, 0, "src/m.jett", text), 0);
    ck_assert_int_eq(ev_func(&e, 0, "app", "main", 0, 0, 20), 0);
    ck_assert_int_eq(ev_func(&e, 1, "app", "f", 0, 20, 37), 0);
    ck_assert_int_eq(ev_func(&e, 2, "app", "g", 0, 37, 54), 0);
    ck_assert_int_eq(ev_stack(&e, 0, WIRE_NONE32, 0), 0);
    ck_assert_int_eq(ev_stack(&e, 1, 0, 1), 0);
    ck_assert_int_eq(ev_stack(&e, 2, 1, 1), 0);
    ck_assert_int_eq(ev_stack(&e, 3, 1, 2), 0);
    ck_assert_int_eq(ev_stack(&e, 4, 3, 1), 0);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_ALLOCATE, 1, EV_NA, 16, 2), 0);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_ALLOCATE, 2, EV_NA, 8, 1), 0);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_ALLOCATE, 3, EV_NA, 4, 4), 0);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_RESIZE, 2, 8, 20, 2), 0);
    ck_assert_int_eq(ev_mem_finish(&e), 0);
    struct rank_report r;
    ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
    ck_assert_uint_eq(r.n_entries, 1);
    check_site(&r.entries[0], "f", 3, 40, 10000, 0, 40, 40, 1);
    ck_assert_uint_eq(r.entries[0].n_chains, 1);
    ck_assert_str_eq(r.entries[0].chains[0].chain, "app.main > app.f");
    ck_assert_uint_eq(r.entries[0].chains[0].weight, 40);
    rank_free(&r);
    agg_free(e.a);
}
END_TEST

Suite *agg_mem_suite(void)
{
    Suite *s = suite_create("agg_mem");
    TCase *t = tcase_create("memory");
    tcase_add_test(t, churn_peak_and_sites);
    tcase_add_test(t, cut_short_keeps_what_was_read);
    tcase_add_test(t, recursive_chain_to_outermost);
    tcase_add_test(t, id_errors);
    tcase_add_test(t, retention_budget);
    tcase_add_test(t, frees_unchecked_once_released);
    tcase_add_test(t, buckets_alone_fill_the_budget);
    tcase_add_test(t, lines_charged);
    tcase_add_test(t, lines_from_the_first_byte);
    tcase_add_test(t, cross_worker_free);
    tcase_add_test(t, interleavings);
    tcase_add_test(t, unattributed_and_retained);
    tcase_add_test(t, stack_cap_memory);
    tcase_add_test(t, window_slides_records_to_table);
    tcase_add_test(t, window_grows);
    tcase_add_test(t, window_slide_refused);
    tcase_add_test(t, window_jumps_gaps);
    tcase_add_test(t, sizes_past_40_bits);
    tcase_add_test(t, sizes_up_to_2_64);
    tcase_add_test(t, full_sizes_charged);
    tcase_add_test(t, released_records_keep_the_profile);
    suite_add_tcase(s, t);
    return s;
}
