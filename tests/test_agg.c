/* Aggregation of injected CPU events: counts, chains, hot lines, states,
 * truncation, budgets and collector errors.  Every expected number is
 * computed by hand from the event list, as the comments show. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/agg.h"
#include "daemon/rank.h"
#include "tests/agg_events.h"

/* Offsets: line 1 "fn main() {" 0..11, line 2 "  f()" starts 12 (f at 14),
 * line 3 "}" 18, line 4 "fn f() {" 20, line 5 "  g()" 29 (g at 31),
 * line 6 "}" 35, line 7 "fn g() {" 37, line 8 "  f()" 46 (f at 48),
 * line 9 "}" 52; length 54. */
static const char rec_text[] = "fn main() {\n  f()\n}\nfn f() {\n  g()\n}\nfn g() {\n  f()\n}\n";

/* main (decl 0-20, line 1), f (20-37, line 4), g (37-54, line 7);
 * stacks 0 main, 1 main>f, 2 main>f>g, 3 main>f>g>f, 4 main>f>g>f>g. */
static struct ev rec_setup(void)
{
    struct ev e = ev_default();
    ck_assert_int_eq(ev_source(&e, 0, "src/rec.jett", rec_text), 0);
    ck_assert_int_eq(ev_func(&e, 0, "app", "main", 0, 0, 20), 0);
    ck_assert_int_eq(ev_func(&e, 1, "app", "f", 0, 20, 37), 0);
    ck_assert_int_eq(ev_func(&e, 2, "app", "g", 0, 37, 54), 0);
    ck_assert_int_eq(ev_stack(&e, 0, WIRE_NONE32, 0), 0);
    ck_assert_int_eq(ev_stack(&e, 1, 0, 1), 0);
    ck_assert_int_eq(ev_stack(&e, 2, 1, 2), 0);
    ck_assert_int_eq(ev_stack(&e, 3, 2, 1), 0);
    ck_assert_int_eq(ev_stack(&e, 4, 3, 2), 0);
    return e;
}

static void check_entry(const struct rank_entry *x, uint64_t rank, const char *fn, uint64_t line,
                        uint64_t incl, uint64_t self, uint64_t pct)
{
    ck_assert_uint_eq(x->rank, rank);
    ck_assert_str_eq(x->ns.ptr, "app");
    ck_assert_str_eq(x->fn.ptr, fn);
    ck_assert_str_eq(x->path.ptr, "src/rec.jett");
    ck_assert_uint_eq(x->line, line);
    ck_assert_uint_eq(x->primary, incl);
    ck_assert_uint_eq(x->secondary, self);
    ck_assert_uint_eq(x->percent_hundredths, pct);
    ck_assert_int_eq(x->origin, WIRE_ORIGIN_PROJECT);
}

/* Samples: s1, s2 on main>f>g>f at f's "g()" (31); s3 on main>f>g at g's
 * "f()" (48); s4 on main at "f()" (14); s5 on main>f>g>f>g at 48; then one
 * runtime, two waiting, one unavailable sample.  By hand:
 *   attributed 5, recorded 9;
 *   main: inclusive 5, self 1 (s4)            -> 100.00%
 *   f: in s1 s2 s3 s5 once each -> 4, self 2 (s1 s2) -> 80.00%
 *   g: in s1 s2 s3 s5 -> 4, self 2 (s3 s5)    -> 80.00%
 *   f and g tie on 4 and 2; "f" < "g" bytewise, so f is rank 2.
 *   chains: main "app.main" 5; f "app.main > app.f" 4 (outermost f);
 *   g "app.main > app.f > app.g" 4.
 *   hot lines: main 2:3 x1; f 5:3 x2; g 8:3 x2. */
START_TEST(recursion_counts_once)
{
    struct ev e = rec_setup();
    ck_assert_int_eq(ev_jett(&e, 3, 31, 34), 0);
    ck_assert_int_eq(ev_jett(&e, 3, 31, 34), 0);
    ck_assert_int_eq(ev_jett(&e, 2, 48, 51), 0);
    ck_assert_int_eq(ev_jett(&e, 0, 14, 17), 0);
    ck_assert_int_eq(ev_jett(&e, 4, 48, 51), 0);
    ck_assert_int_eq(ev_sample(&e, WIRE_STATE_RUNTIME, WIRE_NONE32, WIRE_NONE32, WIRE_NONE32), 0);
    ck_assert_int_eq(ev_sample(&e, WIRE_STATE_WAITING, WIRE_NONE32, WIRE_NONE32, WIRE_NONE32), 0);
    ck_assert_int_eq(ev_sample(&e, WIRE_STATE_WAITING, WIRE_NONE32, WIRE_NONE32, WIRE_NONE32), 0);
    ck_assert_int_eq(ev_sample(&e, WIRE_STATE_UNAVAILABLE, WIRE_NONE32, WIRE_NONE32, WIRE_NONE32),
                     0);
    ck_assert_int_eq(ev_finish(&e, WIRE_TERM_RETURNED, 3, 1), 0);
    agg_end(e.a);
    struct rank_report r;
    ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
    ck_assert_int_eq(r.status, AGG_COMPLETE);
    /* requested = 9 recorded + 3 coalesced + 1 dropped = 13 */
    ck_assert_uint_eq(r.cpu.requested_ticks, 13);
    ck_assert_uint_eq(r.cpu.recorded_samples, 9);
    ck_assert_uint_eq(r.cpu.attributed_samples, 5);
    ck_assert_uint_eq(r.cpu.runtime_samples, 1);
    ck_assert_uint_eq(r.cpu.waiting_samples, 2);
    ck_assert_uint_eq(r.cpu.unavailable_samples, 1);
    ck_assert_uint_eq(r.cpu.coalesced_ticks, 3);
    ck_assert_uint_eq(r.cpu.dropped_ticks, 1);
    ck_assert_uint_eq(r.cpu.truncated_stacks, 0);
    /* 9 samples in 4 ms: 2250 Hz -> 225000 hundredths; wall 4 ms */
    ck_assert_uint_eq(r.cpu.observed_rate_hundredths, 225000);
    ck_assert_uint_eq(r.cpu.wall_ms, 4);
    ck_assert_uint_eq(r.cpu.process_cpu_ms, RANK_NA);
    ck_assert_uint_eq(r.eligible, 3);
    ck_assert_uint_eq(r.n_entries, 3);
    check_entry(&r.entries[0], 1, "main", 1, 5, 1, 10000);
    check_entry(&r.entries[1], 2, "f", 4, 4, 2, 8000);
    check_entry(&r.entries[2], 3, "g", 7, 4, 2, 8000);
    ck_assert_uint_eq(r.entries[0].n_chains, 1);
    ck_assert_str_eq(r.entries[0].chains[0].chain, "app.main");
    ck_assert_uint_eq(r.entries[0].chains[0].weight, 5);
    ck_assert_str_eq(r.entries[1].chains[0].chain, "app.main > app.f");
    ck_assert_uint_eq(r.entries[1].chains[0].weight, 4);
    ck_assert_uint_eq(r.entries[1].n_chains, 1);
    ck_assert_str_eq(r.entries[2].chains[0].chain, "app.main > app.f > app.g");
    ck_assert_uint_eq(r.entries[2].chains[0].weight, 4);
    ck_assert_uint_eq(r.entries[0].n_hot, 1);
    ck_assert_uint_eq(r.entries[0].hot[0].line, 2);
    ck_assert_uint_eq(r.entries[0].hot[0].column, 3);
    ck_assert_uint_eq(r.entries[0].hot[0].self_samples, 1);
    ck_assert_str_eq(r.entries[0].hot[0].code, "f()");
    ck_assert_uint_eq(r.entries[1].hot[0].line, 5);
    ck_assert_uint_eq(r.entries[1].hot[0].self_samples, 2);
    ck_assert_str_eq(r.entries[1].hot[0].code, "g()");
    ck_assert_uint_eq(r.entries[2].hot[0].line, 8);
    ck_assert_uint_eq(r.entries[2].hot[0].column, 3);
    rank_free(&r);
    agg_free(e.a);
}
END_TEST

/* Stacks main>f>g>f, main>f>g, main, one sample each: main 3/1, f 2/1
 * (leaf of the first), g 2/1 (leaf of the second); f and g tie, "f" <
 * "g". */
static struct ev three_samples(void)
{
    struct ev e = rec_setup();
    ck_assert_int_eq(ev_jett(&e, 3, 31, 34), 0);
    ck_assert_int_eq(ev_jett(&e, 2, 48, 51), 0);
    ck_assert_int_eq(ev_jett(&e, 0, 14, 17), 0);
    ck_assert_int_eq(ev_finish(&e, WIRE_TERM_RETURNED, 0, 0), 0);
    agg_end(e.a);
    return e;
}

/* A detached report owns its strings: the aggregator is freed first (the
 * sanitizers catch any string still borrowed) and every name, path and
 * hot-line path reads the same. */
START_TEST(detached_report_outlives_its_aggregator)
{
    struct ev e = three_samples();
    struct rank_report r;
    ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
    const char *borrowed = r.entries[0].fn.ptr;
    ck_assert_int_eq(rank_detach(&r), 0);
    ck_assert_ptr_ne(r.entries[0].fn.ptr, borrowed);
    agg_free(e.a);
    check_entry(&r.entries[0], 1, "main", 1, 3, 1, 10000);
    check_entry(&r.entries[1], 2, "f", 4, 2, 1, 6667);
    check_entry(&r.entries[2], 3, "g", 7, 2, 1, 6667);
    ck_assert_str_eq(r.entries[1].hot[0].path.ptr, "src/rec.jett");
    ck_assert_str_eq(r.backend, "interpreter_safe_point");
    ck_assert_str_eq(r.collector_error, "");
    rank_free(&r);
}
END_TEST

/* numbers_only: the same entries and numbers, without hot lines, call
 * chains or suggestions (what a diff compares). */
START_TEST(numbers_only_report)
{
    struct ev e = three_samples();
    struct rank_options o = {false, false, 0, 0, true, false};
    struct rank_report r;
    ck_assert_int_eq(rank_build(e.a, &o, &r), 0);
    ck_assert_uint_eq(r.n_entries, 3);
    check_entry(&r.entries[0], 1, "main", 1, 3, 1, 10000);
    check_entry(&r.entries[1], 2, "f", 4, 2, 1, 6667);
    check_entry(&r.entries[2], 3, "g", 7, 2, 1, 6667);
    for (int i = 0; i < 3; i++) {
        ck_assert_uint_eq(r.entries[i].n_hot, 0);
        ck_assert_uint_eq(r.entries[i].n_chains, 0);
        ck_assert_uint_eq(r.entries[i].n_suggestions, 0);
    }
    rank_free(&r);
    agg_free(e.a);
}
END_TEST

/* Runtime, waiting and unavailable samples only: the denominator is 0, so
 * no entry, no division; totals intact (4 recorded, 0 attributed).  The
 * two waiting samples (stacks 1 main>f and 2 main>f>g, no span) are
 * waiting call sites at f and g, one sample (50.00%) each, f first by
 * name, each with its stack as its chain; no function bucket: CPU bytes
 * are the two sites and their two chains (24 each) and the index's 16
 * slots of 8 bytes, 96 + 128 = 224. */
START_TEST(states_never_charged)
{
    struct ev e = rec_setup();
    ck_assert_int_eq(ev_sample(&e, WIRE_STATE_RUNTIME, 0, WIRE_NONE32, WIRE_NONE32), 0);
    ck_assert_int_eq(ev_sample(&e, WIRE_STATE_WAITING, 1, WIRE_NONE32, WIRE_NONE32), 0);
    ck_assert_int_eq(ev_sample(&e, WIRE_STATE_WAITING, 2, WIRE_NONE32, WIRE_NONE32), 0);
    ck_assert_int_eq(ev_sample(&e, WIRE_STATE_UNAVAILABLE, 0, WIRE_NONE32, WIRE_NONE32), 0);
    ck_assert_int_eq(ev_finish(&e, WIRE_TERM_RETURNED, 0, 0), 0);
    agg_end(e.a);
    struct rank_report r;
    struct rank_options o = {true, false, 0,
                             0,    false, false}; /* threshold 0: anything would pass */
    ck_assert_int_eq(rank_build(e.a, &o, &r), 0);
    ck_assert_int_eq(r.status, AGG_COMPLETE);
    ck_assert_uint_eq(r.cpu.recorded_samples, 4);
    ck_assert_uint_eq(r.cpu.attributed_samples, 0);
    ck_assert_uint_eq(r.cpu.runtime_samples, 1);
    ck_assert_uint_eq(r.cpu.waiting_samples, 2);
    ck_assert_uint_eq(r.cpu.unavailable_samples, 1);
    ck_assert_uint_eq(r.eligible, 0);
    ck_assert_uint_eq(r.emitted, 0);
    ck_assert_uint_eq(r.truncated, 0);
    ck_assert_uint_eq(r.n_entries, 0);
    ck_assert_uint_eq(r.n_waits, 2);
    ck_assert_str_eq(r.waits[0].fn.ptr, "f");
    ck_assert_str_eq(r.waits[1].fn.ptr, "g");
    for (int k = 0; k < 2; k++) {
        ck_assert_uint_eq(r.waits[k].where.self_samples, 1);
        ck_assert_uint_eq(r.waits[k].percent_hundredths, 5000);
        ck_assert_uint_eq(r.waits[k].where.line, RANK_NA);
    }
    ck_assert_str_eq(r.waits[0].chain, "app.main > app.f");
    ck_assert_str_eq(r.waits[1].chain, "app.main > app.f > app.g");
    ck_assert_uint_eq(agg_cpu_bytes(e.a), 224); /* no function bucket was created */
    rank_free(&r);
    agg_free(e.a);
}
END_TEST

/* rec_setup plus app.r (func 3) and <runtime>.<truncated-stack> (func
 * 4, no source): stacks 5..131 are 127 app.r frames, stack 132 the
 * bucket under them, as the agent sends a stack deeper than 128. */
static struct ev truncated_setup(void)
{
    struct ev e = rec_setup();
    ck_assert_int_eq(ev_func(&e, 3, "app", "r", 0, 20, 37), 0);
    ck_assert_int_eq(
        ev_func(&e, 4, "<runtime>", "<truncated-stack>", WIRE_NONE32, WIRE_NONE32, WIRE_NONE32), 0);
    for (uint32_t i = 0; i < 127; i++)
        ck_assert_int_eq(ev_stack(&e, 5 + i, i ? 4 + i : WIRE_NONE32, 3), 0);
    ck_assert_int_eq(ev_stack(&e, 132, 131, 4), 0);
    return e;
}

/* A stack of 127 app.r frames plus <runtime>.<truncated-stack> as leaf;
 * two samples on it.  By hand: truncated_stacks 2; both functions have
 * inclusive 2; the bucket has self 2 against r's 0, so it ranks first;
 * it has no source: path, line, origin and suggestions unavailable; its
 * chain is 127 "app.r" (5 bytes each) and the 27-byte bucket name joined
 * by 127 " > ": 635 + 27 + 381 = 1043 bytes. */
START_TEST(truncated_stack_bucket)
{
    struct ev e = truncated_setup();
    ck_assert_int_eq(ev_jett(&e, 132, WIRE_NONE32, WIRE_NONE32), 0);
    ck_assert_int_eq(ev_jett(&e, 132, WIRE_NONE32, WIRE_NONE32), 0);
    ck_assert_int_eq(ev_finish(&e, WIRE_TERM_RETURNED, 0, 0), 0);
    struct rank_report r;
    ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
    ck_assert_int_eq(r.status, AGG_COMPLETE);
    ck_assert_uint_eq(r.cpu.truncated_stacks, 2);
    ck_assert_uint_eq(r.n_entries, 2);
    const struct rank_entry *t = &r.entries[0], *x = &r.entries[1];
    ck_assert_str_eq(t->fn.ptr, "<truncated-stack>");
    ck_assert_uint_eq(t->primary, 2);
    ck_assert_uint_eq(t->secondary, 2);
    ck_assert_ptr_null(t->path.ptr);
    ck_assert_uint_eq(t->line, RANK_NA);
    ck_assert_int_eq(t->origin, -1);
    ck_assert(t->suggestions_unavailable);
    ck_assert_uint_eq(t->n_suggestions, 0);
    ck_assert_uint_eq(t->n_hot, 1);
    ck_assert_ptr_null(t->hot[0].path.ptr);
    ck_assert_uint_eq(t->hot[0].line, RANK_NA);
    ck_assert_ptr_null(t->hot[0].code);
    ck_assert_uint_eq(t->chains[0].len, 1043);
    ck_assert_str_eq(x->fn.ptr, "r");
    ck_assert_uint_eq(x->primary, 2);
    ck_assert_uint_eq(x->secondary, 0);
    ck_assert_str_eq(x->chains[0].chain, "app.r");
    /* a 129th frame is a collector error */
    ck_assert_int_eq(ev_stack(&e, 133, 132, 3), -1);
    rank_free(&r);
    agg_free(e.a);
}
END_TEST

/* The truncated stack of truncated_stack_bucket (127 app.r frames and
 * the bucket, stack 132): one Jett sample on it, two waiting samples on
 * it, a waiting sample on the plain stack main (0) and one without a
 * stack.  The contract counts every sample whose stack was truncated,
 * whatever its state.  By hand: truncated_stacks 1 + 2 = 3; waiting 4;
 * attributed 1; recorded 5. */
START_TEST(truncated_waiting_counted)
{
    struct ev e = truncated_setup();
    ck_assert_int_eq(ev_jett(&e, 132, WIRE_NONE32, WIRE_NONE32), 0);
    ck_assert_int_eq(ev_sample(&e, WIRE_STATE_WAITING, 132, WIRE_NONE32, WIRE_NONE32), 0);
    ck_assert_int_eq(ev_sample(&e, WIRE_STATE_WAITING, 132, WIRE_NONE32, WIRE_NONE32), 0);
    ck_assert_int_eq(ev_sample(&e, WIRE_STATE_WAITING, 0, WIRE_NONE32, WIRE_NONE32), 0);
    ck_assert_int_eq(ev_sample(&e, WIRE_STATE_WAITING, WIRE_NONE32, WIRE_NONE32, WIRE_NONE32), 0);
    ck_assert_int_eq(ev_finish(&e, WIRE_TERM_RETURNED, 0, 0), 0);
    struct rank_report r;
    ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
    ck_assert_int_eq(r.status, AGG_COMPLETE);
    ck_assert_uint_eq(r.cpu.truncated_stacks, 3);
    ck_assert_uint_eq(r.cpu.waiting_samples, 4);
    ck_assert_uint_eq(r.cpu.attributed_samples, 1);
    ck_assert_uint_eq(r.cpu.recorded_samples, 5);
    rank_free(&r);
    agg_free(e.a);
}
END_TEST

/* The truncation bucket (no source) in an interrupted, so partial,
 * profile: the contract marks the source and suggestions of a function
 * without a source unavailable, whatever the status; a function with a
 * source has no suggestions in a partial profile (an empty list).  Two
 * samples on stack 132 as in truncated_stack_bucket: the bucket ranks
 * first, app.r second. */
START_TEST(sourceless_suggestions_unavailable_when_partial)
{
    struct ev e = truncated_setup();
    ck_assert_int_eq(ev_jett(&e, 132, WIRE_NONE32, WIRE_NONE32), 0);
    ck_assert_int_eq(ev_jett(&e, 132, WIRE_NONE32, WIRE_NONE32), 0);
    ck_assert_int_eq(ev_finish(&e, WIRE_TERM_INTERRUPTED, 0, 0), 0);
    struct rank_report r;
    ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
    ck_assert_int_eq(r.status, AGG_PARTIAL);
    ck_assert_int_eq(r.reason, AGG_REASON_INTERRUPTED);
    ck_assert_uint_eq(r.n_entries, 2);
    ck_assert_str_eq(r.entries[0].fn.ptr, "<truncated-stack>");
    ck_assert(r.entries[0].suggestions_unavailable);
    ck_assert_uint_eq(r.entries[0].n_suggestions, 0);
    ck_assert_str_eq(r.entries[1].fn.ptr, "r");
    ck_assert(!r.entries[1].suggestions_unavailable);
    ck_assert_uint_eq(r.entries[1].n_suggestions, 0);
    rank_free(&r);
    agg_free(e.a);
}
END_TEST

/* h is called from b (defined first, lower ids) and from a, once each.
 * The chains tie on 1 sample; "app.a > app.h" sorts before
 * "app.b > app.h" by identity, whatever the ids. */
START_TEST(chain_ties_by_identity)
{
    struct ev e = ev_default();
    ck_assert_int_eq(ev_source(&e, 0, "src/t.jett", "fn b() {}\nfn a() {}\nfn h() {}\n"), 0);
    ck_assert_int_eq(ev_func(&e, 0, "app", "b", 0, 0, 9), 0);
    ck_assert_int_eq(ev_func(&e, 1, "app", "a", 0, 10, 19), 0);
    ck_assert_int_eq(ev_func(&e, 2, "app", "h", 0, 20, 29), 0);
    ck_assert_int_eq(ev_stack(&e, 0, WIRE_NONE32, 0), 0);
    ck_assert_int_eq(ev_stack(&e, 1, 0, 2), 0);
    ck_assert_int_eq(ev_stack(&e, 2, WIRE_NONE32, 1), 0);
    ck_assert_int_eq(ev_stack(&e, 3, 2, 2), 0);
    ck_assert_int_eq(ev_jett(&e, 1, 20, 29), 0);
    ck_assert_int_eq(ev_jett(&e, 3, 20, 29), 0);
    ck_assert_int_eq(ev_finish(&e, WIRE_TERM_RETURNED, 0, 0), 0);
    struct rank_report r;
    ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
    /* h 2/2 = 100%, a and b 1/2 = 50% with self 0 each: a before b */
    ck_assert_uint_eq(r.n_entries, 3);
    ck_assert_str_eq(r.entries[0].fn.ptr, "h");
    ck_assert_str_eq(r.entries[1].fn.ptr, "a");
    ck_assert_str_eq(r.entries[2].fn.ptr, "b");
    ck_assert_uint_eq(r.entries[0].n_chains, 2);
    ck_assert_str_eq(r.entries[0].chains[0].chain, "app.a > app.h");
    ck_assert_str_eq(r.entries[0].chains[1].chain, "app.b > app.h");
    ck_assert_uint_eq(r.entries[0].chains[1].weight, 1);
    /* one hot line at 20 (line 3, column 1) with both samples */
    ck_assert_uint_eq(r.entries[0].n_hot, 1);
    ck_assert_uint_eq(r.entries[0].hot[0].line, 3);
    ck_assert_uint_eq(r.entries[0].hot[0].column, 1);
    ck_assert_uint_eq(r.entries[0].hot[0].self_samples, 2);
    rank_free(&r);
    agg_free(e.a);
}
END_TEST

/* CPU budget 231 bytes.  First sample (main>f, f's statement at 31; the
 * STACK has no call site, so no call line): f bucket 32 (0+32 <= 231),
 * hot line 24 + index 16 slots x 8 = 128 (56+128 = 184), chain main>f 8
 * (192), main bucket 32 (224), chain main 8 would make 232 > 231:
 * refused, the profile is partial.  Second sample (main alone at 14):
 * main's new hot line is refused; main still counts.  By hand: main
 * inclusive 2 self 1, no hot line, no chain; f inclusive 1 self 1 with
 * one hot line and one chain; bytes held 96 + 128 = 224. */
START_TEST(cpu_budget_exhaustion)
{
    struct ev e = ev_start(231, AGG_STACK_BUDGET_MAX);
    ck_assert_int_eq(ev_source(&e, 0, "src/rec.jett", rec_text), 0);
    ck_assert_int_eq(ev_func(&e, 0, "app", "main", 0, 0, 20), 0);
    ck_assert_int_eq(ev_func(&e, 1, "app", "f", 0, 20, 37), 0);
    ck_assert_int_eq(ev_stack(&e, 0, WIRE_NONE32, 0), 0);
    ck_assert_int_eq(ev_stack(&e, 1, 0, 1), 0);
    ck_assert_int_eq(ev_jett(&e, 1, 31, 34), 0);
    ck_assert_uint_eq(agg_cpu_bytes(e.a), 224);
    ck_assert_int_eq(ev_jett(&e, 0, 14, 17), 0);
    ck_assert_int_eq(ev_finish(&e, WIRE_TERM_RETURNED, 0, 0), 0);
    enum agg_reason why;
    ck_assert_int_eq(agg_status(e.a, &why), AGG_PARTIAL);
    ck_assert_int_eq(why, AGG_REASON_CPU_METADATA_LIMIT);
    ck_assert_uint_eq(agg_cpu_bytes(e.a), 224);
    struct rank_report r;
    ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
    ck_assert_uint_eq(r.cpu.attributed_samples, 2);
    ck_assert_uint_eq(r.cpu.recorded_samples, 2);
    ck_assert_uint_eq(r.n_entries, 2);
    ck_assert_str_eq(r.entries[0].fn.ptr, "main");
    ck_assert_uint_eq(r.entries[0].primary, 2);
    ck_assert_uint_eq(r.entries[0].secondary, 1);
    ck_assert_uint_eq(r.entries[0].n_hot, 0);
    ck_assert_uint_eq(r.entries[0].n_chains, 0);
    ck_assert_uint_eq(r.entries[0].n_suggestions, 0); /* partial: no suggestions */
    ck_assert(!r.entries[0].suggestions_unavailable);
    ck_assert_str_eq(r.entries[1].fn.ptr, "f");
    ck_assert_uint_eq(r.entries[1].primary, 1);
    ck_assert_uint_eq(r.entries[1].n_hot, 1);
    ck_assert_uint_eq(r.entries[1].n_chains, 1);
    rank_free(&r);
    agg_free(e.a);
}
END_TEST

/* With 232 bytes the main chain fits exactly (232 held); the next new
 * bucket, main's hot line (24 more), does not. */
START_TEST(cpu_budget_exact_fit)
{
    struct ev e = ev_start(232, AGG_STACK_BUDGET_MAX);
    ck_assert_int_eq(ev_source(&e, 0, "src/rec.jett", rec_text), 0);
    ck_assert_int_eq(ev_func(&e, 0, "app", "main", 0, 0, 20), 0);
    ck_assert_int_eq(ev_func(&e, 1, "app", "f", 0, 20, 37), 0);
    ck_assert_int_eq(ev_stack(&e, 0, WIRE_NONE32, 0), 0);
    ck_assert_int_eq(ev_stack(&e, 1, 0, 1), 0);
    ck_assert_int_eq(ev_jett(&e, 1, 31, 34), 0);
    enum agg_reason why;
    ck_assert_uint_eq(agg_cpu_bytes(e.a), 232);
    ck_assert_int_eq(agg_status(e.a, &why), AGG_COMPLETE);
    ck_assert_int_eq(ev_jett(&e, 0, 14, 17), 0);
    ck_assert_uint_eq(agg_cpu_bytes(e.a), 232);
    ck_assert_int_eq(agg_status(e.a, &why), AGG_PARTIAL);
    ck_assert_int_eq(why, AGG_REASON_CPU_METADATA_LIMIT);
    agg_free(e.a);
}
END_TEST

static size_t stack_bytes_after_setup(uint64_t stack_budget, struct ev *out)
{
    struct ev e = ev_start(AGG_CPU_BUDGET_MAX, stack_budget);
    ck_assert_int_eq(ev_source(&e, 0, "src/rec.jett", rec_text), 0);
    ck_assert_int_eq(ev_func(&e, 0, "app", "main", 0, 0, 20), 0);
    ck_assert_int_eq(ev_func(&e, 1, "app", "f", 0, 20, 37), 0);
    size_t b = agg_stack_bytes(e.a);
    if (out)
        *out = e;
    else
        agg_free(e.a);
    return b;
}

/* The first STACK needs the node table (16 x 28 bytes), the chain table
 * (16 x 16) and the chain index (16 x 8): 832 bytes over what SOURCE and
 * FUNC hold.  One byte short: the node is refused, its sample counts as
 * unavailable and the profile is partial / stack_capture_limit; every
 * later STACK is refused too.  Exactly enough: both stacks are kept (the
 * second needs no growth). */
START_TEST(stack_budget_cap)
{
    size_t base = stack_bytes_after_setup(AGG_STACK_BUDGET_MAX, NULL);
    struct ev e;
    stack_bytes_after_setup(base + 831, &e);
    ck_assert_int_eq(ev_stack(&e, 0, WIRE_NONE32, 0), 0);
    ck_assert_int_eq(ev_stack(&e, 1, 0, 1), 0);
    ck_assert_int_eq(ev_jett(&e, 1, 31, 34), 0);
    ck_assert_int_eq(ev_finish(&e, WIRE_TERM_RETURNED, 0, 0), 0);
    ck_assert_uint_eq(agg_stack_bytes(e.a), base);
    struct rank_report r;
    ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
    ck_assert_int_eq(r.status, AGG_PARTIAL);
    ck_assert_int_eq(r.reason, AGG_REASON_STACK_CAPTURE_LIMIT);
    ck_assert_uint_eq(r.cpu.recorded_samples, 1);
    ck_assert_uint_eq(r.cpu.attributed_samples, 0);
    ck_assert_uint_eq(r.cpu.unavailable_samples, 1);
    ck_assert_uint_eq(r.n_entries, 0);
    rank_free(&r);
    agg_free(e.a);

    stack_bytes_after_setup(base + 832, &e);
    ck_assert_int_eq(ev_stack(&e, 0, WIRE_NONE32, 0), 0);
    ck_assert_int_eq(ev_stack(&e, 1, 0, 1), 0);
    ck_assert_uint_eq(agg_stack_bytes(e.a), base + 832);
    ck_assert_int_eq(ev_jett(&e, 1, 31, 34), 0);
    ck_assert_int_eq(ev_finish(&e, WIRE_TERM_RETURNED, 0, 0), 0);
    enum agg_reason why;
    ck_assert_int_eq(agg_status(e.a, &why), AGG_COMPLETE);
    agg_free(e.a);
}
END_TEST

START_TEST(missing_hello)
{
    struct agg *a = agg_new();
    struct ev e = {a, 0};
    ck_assert_int_eq(ev_source(&e, 0, "src/a.jett", "x"), -1);
    ck_assert_int_eq(ev_jett(&e, 0, WIRE_NONE32, WIRE_NONE32), -1);
    agg_end(a);
    enum agg_reason why;
    ck_assert_int_eq(agg_status(a, &why), AGG_UNAVAILABLE);
    ck_assert_int_eq(why, AGG_REASON_COLLECTOR_FAILURE);
    ck_assert_str_eq(agg_error(a), "SOURCE before HELLO");
    /* the SOURCE, the sample and the end of stream: 3 errors */
    ck_assert_uint_eq(agg_error_count(a), 3);
    agg_free(a);
}
END_TEST

/* No FINISH: what only FINISH knows is unavailable; the samples still
 * count; no suggestions (partial). */
START_TEST(missing_finish)
{
    struct ev e = rec_setup();
    ck_assert_int_eq(ev_jett(&e, 1, 31, 34), 0);
    agg_end(e.a);
    struct rank_report r;
    ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
    ck_assert_int_eq(r.status, AGG_PARTIAL);
    ck_assert_int_eq(r.reason, AGG_REASON_COLLECTOR_FAILURE);
    ck_assert_str_eq(r.termination, "unavailable");
    ck_assert_str_eq(r.collector_error, "stream ended without FINISH");
    ck_assert_uint_eq(r.cpu.requested_ticks, RANK_NA);
    ck_assert_uint_eq(r.cpu.coalesced_ticks, RANK_NA);
    ck_assert_uint_eq(r.cpu.dropped_ticks, RANK_NA);
    ck_assert_uint_eq(r.cpu.wall_ms, RANK_NA);
    ck_assert_uint_eq(r.cpu.observed_rate_hundredths, RANK_NA);
    ck_assert_uint_eq(r.cpu.recorded_samples, 1);
    ck_assert_uint_eq(r.n_entries, 2);
    ck_assert_uint_eq(r.entries[0].n_suggestions, 0);
    rank_free(&r);
    agg_free(e.a);
}
END_TEST

START_TEST(undefined_references)
{
    struct ev e = rec_setup();
    ck_assert_int_eq(ev_jett(&e, 99, 31, 34), -1);
    ck_assert_str_eq(agg_error(e.a), "CPU_SAMPLE sequence 1: jett sample with an undefined stack");
    ck_assert_int_eq(ev_stack(&e, 5, 4, 9), -1);
    ck_assert_int_eq(ev_func(&e, 3, "app", "x", 7, WIRE_NONE32, WIRE_NONE32), -1);
    ck_assert_int_eq(ev_jett(&e, WIRE_NONE32, 31, 34), -1);
    /* a statement span past the end of the source (54 bytes) */
    ck_assert_int_eq(ev_jett(&e, 1, 50, 60), 0);
    ck_assert_uint_eq(agg_error_count(e.a), 5);
    /* recorded 3 = 0 coalesced: requested 4 contradicts it */
    struct wire_finish f = {WIRE_TERM_RETURNED, 1, WIRE_NONE64, 4, 0, 0, false, false};
    ck_assert_int_eq(agg_finish(e.a, &f), -1);
    ck_assert_int_eq(ev_jett(&e, 1, 31, 34), -1); /* after FINISH */
    struct rank_report r;
    ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
    ck_assert_uint_eq(agg_error_count(e.a), 7);
    ck_assert_int_eq(r.status, AGG_PARTIAL);
    ck_assert_int_eq(r.reason, AGG_REASON_COLLECTOR_FAILURE);
    ck_assert_uint_eq(r.cpu.recorded_samples, 3);
    ck_assert_uint_eq(r.cpu.unavailable_samples, 2);
    ck_assert_uint_eq(r.cpu.attributed_samples, 1);
    /* f (inclusive 1, self 1) ranks before main (1, 0); the bad span is
     * kept as an unavailable location, not guessed */
    ck_assert_str_eq(r.entries[0].fn.ptr, "f");
    ck_assert_uint_eq(r.entries[0].hot[0].line, RANK_NA);
    ck_assert_ptr_null(r.entries[0].hot[0].code);
    rank_free(&r);
    agg_free(e.a);
}
END_TEST

/* Logical paths: relative and normalized; stdlib under stdlib/.  A bad one
 * is a collector error and its functions have no source. */
START_TEST(path_normalization)
{
    static const struct {
        uint8_t origin;
        const char *path;
        int rc;
    } cases[] = {
        {WIRE_ORIGIN_PROJECT, "src/main.jett", 0},
        {WIRE_ORIGIN_DEPENDENCY, "json/src/parse.jett", 0},
        {WIRE_ORIGIN_STDLIB, "stdlib/io.jett", 0},
        {WIRE_ORIGIN_STDLIB, "io.jett", -1},
        {WIRE_ORIGIN_PROJECT, "/home/u/src/main.jett", -1},
        {WIRE_ORIGIN_PROJECT, "src/../secret.jett", -1},
        {WIRE_ORIGIN_PROJECT, "./src/x.jett", -1},
        {WIRE_ORIGIN_PROJECT, "src//x.jett", -1},
        {WIRE_ORIGIN_PROJECT, "C:/x.jett", -1},
        {WIRE_ORIGIN_PROJECT, "src\\x.jett", -1},
        {WIRE_ORIGIN_PROJECT, "src/main.jett", -1}, /* duplicate */
    };
    struct ev e = ev_default();
    for (uint32_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        ck_assert_msg(ev_source_spans(&e, i, cases[i].origin, cases[i].path, "fn x() {}\n", NULL,
                                      0) == cases[i].rc,
                      "%s", cases[i].path);
    ck_assert_int_eq(ev_func(&e, 0, "app", "ok", 0, 0, 9), 0);
    ck_assert_int_eq(ev_func(&e, 1, "app", "abs", 4, 0, 9), 0);
    ck_assert_int_eq(ev_stack(&e, 0, WIRE_NONE32, 0), 0);
    ck_assert_int_eq(ev_stack(&e, 1, 0, 1), 0);
    ck_assert_int_eq(ev_jett(&e, 1, 0, 9), 0);
    ck_assert_int_eq(ev_finish(&e, WIRE_TERM_RETURNED, 0, 0), 0);
    struct rank_report r;
    ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
    /* both 1/1; self 1 for abs, 0 for ok: abs first, without a path */
    ck_assert_str_eq(r.entries[0].fn.ptr, "abs");
    ck_assert_ptr_null(r.entries[0].path.ptr);
    ck_assert_ptr_null(r.entries[0].hot[0].path.ptr);
    ck_assert_str_eq(r.entries[1].path.ptr, "src/main.jett");
    rank_free(&r);
    agg_free(e.a);
}
END_TEST

START_TEST(hello_budgets_capped)
{
    struct agg *a = agg_new();
    struct wire_hello h = ev_hello_rec(AGG_CPU_BUDGET_MAX + 1, AGG_STACK_BUDGET_MAX);
    ck_assert_int_eq(agg_hello(a, &h), -1);
    ck_assert_str_eq(agg_error(a), "HELLO.config.cpu_budget: 33554433 outside 1..33554432");
    ck_assert_int_eq(agg_hello(a, &h), -1); /* repeated */
    agg_free(a);
    a = agg_new();
    h = ev_hello_rec(AGG_CPU_BUDGET_MAX, AGG_STACK_BUDGET_MAX);
    h.config.limit = 101;
    ck_assert_int_eq(agg_hello(a, &h), -1);
    ck_assert_str_eq(agg_error(a), "HELLO.config.limit: 101 outside 1..100");
    agg_free(a);
}
END_TEST

/* Random records with random references, spans, states, sizes and
 * operations in both modes: never a crash (ASan/UBSan runs this too), the
 * errors are counted, and a report can still be built.  The expected
 * numbers are invariants, not outputs: recorded samples equal the
 * samples fed, and attributed + runtime + waiting + unavailable equal
 * recorded. */
START_TEST(random_hostile_records)
{
    uint64_t x = 0x2545f4914f6cdd1dull + (uint64_t)_i;
    for (int round = 0; round < 40; round++) {
        struct ev e =
            round % 2 ? ev_mem_start(4096 + (round * 97) % 2000) : ev_start(64 + round * 13, 4096);
        uint64_t fed = 0;
        for (int k = 0; k < 400; k++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            uint32_t a = (uint32_t)(x % 40), b = (uint32_t)((x >> 8) % 40),
                     c = (uint32_t)((x >> 16) % 300);
            switch ((x >> 24) % 6) {
            case 0:
                ev_source(&e, a % 4, (x >> 30) % 2 ? "src/x.jett" : "/abs.jett", "ab\ncd \x01\n");
                break;
            case 1:
                ev_func(&e, a % 12, "n", (x >> 30) % 2 ? "f" : "g", b % 3, c % 9, (c + a) % 12);
                break;
            case 2:
                ev_stack(&e, a, (x >> 30) % 3 ? b : WIRE_NONE32, c % 14);
                break;
            case 3:
                fed += round % 2 == 0;
                ev_sample(&e, (uint8_t)(x >> 33) % 5, (x >> 30) % 4 ? b : WIRE_NONE32, c % 10,
                          c % 13);
                break;
            case 4:
                ev_alloc(&e, (uint8_t)(x >> 33) % 4, a % 20, (x >> 36) % 3 ? c : EV_NA,
                         (x >> 40) % 3 ? b * 100 : EV_NA, (x >> 30) % 4 ? b : WIRE_NONE32);
                break;
            default:
                e.seq -= (x >> 30) % 3 == 0; /* a repeated sequence now and then */
            }
        }
        agg_end(e.a);
        struct rank_report r;
        struct rank_options o = {true,  true, (uint32_t)(x % 10001), 1 + (uint32_t)(x % 100),
                                 false, false};
        ck_assert_int_eq(rank_build(e.a, &o, &r), 0);
        ck_assert(agg_error_count(e.a) > 0);
        if (round % 2 == 0) {
            ck_assert_uint_le(r.cpu.recorded_samples, fed);
            ck_assert_uint_eq(r.cpu.recorded_samples,
                              r.cpu.attributed_samples + r.cpu.runtime_samples +
                                  r.cpu.waiting_samples + r.cpu.unavailable_samples);
        }
        ck_assert_uint_le(agg_cpu_bytes(e.a), 64 + round * 13);
        ck_assert_uint_le(agg_retention_bytes(e.a), 4096 + (round * 97) % 2000);
        ck_assert_uint_le(agg_stack_bytes(e.a), AGG_STACK_BUDGET_MAX);
        rank_free(&r);
        agg_free(e.a);
    }
}
END_TEST

/* ---- calls, call lines and waiting chains ---- */

/* rec_text's functions with the call sites of its calls: stacks 0 main,
 * 1 main>f (main's f() at 14-17), 2 main>f>g (f's g() at 31-34),
 * 3 main>f>g>f (g's f() at 48-51), 4 main>f>g>f>g (31-34). */
static struct ev rec_sites(uint64_t cpu_budget)
{
    struct ev e = ev_start(cpu_budget, AGG_STACK_BUDGET_MAX);
    ck_assert_int_eq(ev_source(&e, 0, "src/rec.jett", rec_text), 0);
    ck_assert_int_eq(ev_func(&e, 0, "app", "main", 0, 0, 20), 0);
    ck_assert_int_eq(ev_func(&e, 1, "app", "f", 0, 20, 37), 0);
    ck_assert_int_eq(ev_func(&e, 2, "app", "g", 0, 37, 54), 0);
    ck_assert_int_eq(ev_stack(&e, 0, WIRE_NONE32, 0), 0);
    ck_assert_int_eq(ev_stack_at(&e, 1, 0, 1, 14, 17), 0);
    ck_assert_int_eq(ev_stack_at(&e, 2, 1, 2, 31, 34), 0);
    ck_assert_int_eq(ev_stack_at(&e, 3, 2, 1, 48, 51), 0);
    ck_assert_int_eq(ev_stack_at(&e, 4, 3, 2, 31, 34), 0);
    return e;
}

static void check_call_line(const struct rank_call *c, uint64_t line, uint64_t samples,
                            uint64_t pct, uint64_t calls, const char *callee, const char *code)
{
    ck_assert_str_eq(c->where.path.ptr, "src/rec.jett");
    ck_assert_uint_eq(c->where.line, line);
    ck_assert_uint_eq(c->where.column, 3);
    ck_assert_uint_eq(c->where.self_samples, samples);
    ck_assert_uint_eq(c->percent_hundredths, pct);
    ck_assert_uint_eq(c->calls, calls);
    ck_assert_str_eq(c->callee_ns.ptr, "app");
    ck_assert_str_eq(c->callee_fn.ptr, callee);
    ck_assert_str_eq(c->where.code, code);
}

/* Samples: s1 main>f>g>f at 31, s2 main>f>g>f>g at 48, s3 main>f>g at
 * 48, s4 main at 14, s5 main>f at 31.  By hand, a sample counts for a
 * call line when the function's frame is at that call with a deeper
 * frame, once however often the function recurses through it:
 *   main at 14 (line 2): s1 s2 s3 s5 (s4 is main's own time) -> 4
 *     (80.00% of 5), all through f;
 *   f at 31 (line 5): s1 s2 (its two frames at 31, once) s3 -> 3
 *     (60.00%), all through g (the frame the outermost f made);
 *   g at 48 (line 8): s1 s2 -> 2 (40.00%), through f.
 * CALLS: main 1, f 3, g 2 calls; main's site 1 call, f's 2, g's 2 (both
 * of g's calls of f, in two records that add up: 1 + 1).  The calls
 * entries follow: main 1, f 3, g 2. */
START_TEST(call_lines_under_recursion)
{
    struct ev e = rec_sites(AGG_CPU_BUDGET_MAX);
    ck_assert_int_eq(ev_jett(&e, 3, 31, 34), 0);
    ck_assert_int_eq(ev_jett(&e, 4, 48, 51), 0);
    ck_assert_int_eq(ev_jett(&e, 2, 48, 51), 0);
    ck_assert_int_eq(ev_jett(&e, 0, 14, 17), 0);
    ck_assert_int_eq(ev_jett(&e, 1, 31, 34), 0);
    const struct wire_fn_calls fn[] = {{0, 1}, {1, 3}, {2, 2}};
    const struct wire_site_calls site[] = {{0, {14, 17}, 1}, {1, {31, 34}, 2}, {2, {48, 51}, 1}};
    ck_assert_int_eq(ev_calls(&e, fn, 3, site, 3), 0);
    ck_assert_int_eq(ev_calls(&e, NULL, 0, &site[2], 1), 0);
    ck_assert_int_eq(ev_finish(&e, WIRE_TERM_RETURNED, 0, 0), 0);
    agg_end(e.a);
    struct rank_report r;
    ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
    ck_assert_int_eq(r.status, AGG_COMPLETE);
    ck_assert_uint_eq(r.n_entries, 3);
    check_entry(&r.entries[0], 1, "main", 1, 5, 1, 10000);
    check_entry(&r.entries[1], 2, "f", 4, 4, 2, 8000);
    check_entry(&r.entries[2], 3, "g", 7, 3, 2, 6000);
    ck_assert_uint_eq(r.entries[0].calls, 1);
    ck_assert_uint_eq(r.entries[1].calls, 3);
    ck_assert_uint_eq(r.entries[2].calls, 2);
    ck_assert_uint_eq(r.entries[0].n_calls, 1);
    check_call_line(&r.entries[0].call_lines[0], 2, 4, 8000, 1, "f", "f()");
    ck_assert_uint_eq(r.entries[1].n_calls, 1);
    check_call_line(&r.entries[1].call_lines[0], 5, 3, 6000, 2, "g", "g()");
    ck_assert_uint_eq(r.entries[2].n_calls, 1);
    check_call_line(&r.entries[2].call_lines[0], 8, 2, 4000, 2, "f", "f()");
    rank_free(&r);
    agg_free(e.a);

    /* Without CALLS the samples are the same and every count unavailable. */
    e = rec_sites(AGG_CPU_BUDGET_MAX);
    ck_assert_int_eq(ev_jett(&e, 3, 31, 34), 0);
    ck_assert_int_eq(ev_finish(&e, WIRE_TERM_RETURNED, 0, 0), 0);
    agg_end(e.a);
    ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
    ck_assert_uint_eq(r.n_entries, 3);
    for (size_t i = 0; i < r.n_entries; i++)
        ck_assert_uint_eq(r.entries[i].calls, RANK_NA);
    ck_assert_uint_eq(r.entries[0].n_calls, 1);
    ck_assert_uint_eq(r.entries[0].call_lines[0].calls, RANK_NA);
    ck_assert_uint_eq(r.entries[0].call_lines[0].where.self_samples, 1);
    rank_free(&r);
    agg_free(e.a);
}
END_TEST

/* One call site reached through two callees (a function value): a call
 * line ranks by its samples over all callees and names the callee in
 * most of them; ties go by identity.  main's f() at 14 makes f (stack
 * 1) and g (stack 5, the same site); 2 samples on main>g, 1 on main>f:
 * one call line of 3 samples, callee g.  Then a tie, 2 and 2: f, whose
 * name comes first.  Call lines of one function rank by samples, then
 * position: main's call at 14 (3 samples) before a second one, stack 6
 * main>f made at 48-51 (one source holds main, f and g), 1 sample. */
START_TEST(call_line_callee_and_order)
{
    struct ev e = rec_sites(AGG_CPU_BUDGET_MAX);
    ck_assert_int_eq(ev_stack_at(&e, 5, 0, 2, 14, 17), 0);
    ck_assert_int_eq(ev_stack_at(&e, 6, 0, 1, 48, 51), 0);
    ck_assert_int_eq(ev_jett(&e, 5, 48, 51), 0);
    ck_assert_int_eq(ev_jett(&e, 5, 48, 51), 0);
    ck_assert_int_eq(ev_jett(&e, 1, 31, 34), 0);
    ck_assert_int_eq(ev_jett(&e, 6, 31, 34), 0);
    ck_assert_int_eq(ev_finish(&e, WIRE_TERM_RETURNED, 0, 0), 0);
    agg_end(e.a);
    struct rank_report r;
    ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
    ck_assert_str_eq(r.entries[0].fn.ptr, "main");
    ck_assert_uint_eq(r.entries[0].n_calls, 2);
    ck_assert_uint_eq(r.entries[0].call_lines[0].where.line, 2);
    ck_assert_uint_eq(r.entries[0].call_lines[0].where.self_samples, 3);
    ck_assert_str_eq(r.entries[0].call_lines[0].callee_fn.ptr, "g");
    ck_assert_uint_eq(r.entries[0].call_lines[1].where.line, 8);
    ck_assert_uint_eq(r.entries[0].call_lines[1].where.self_samples, 1);
    ck_assert_str_eq(r.entries[0].call_lines[1].callee_fn.ptr, "f");
    rank_free(&r);
    agg_free(e.a);

    e = rec_sites(AGG_CPU_BUDGET_MAX);
    ck_assert_int_eq(ev_stack_at(&e, 5, 0, 2, 14, 17), 0);
    for (int k = 0; k < 2; k++) {
        ck_assert_int_eq(ev_jett(&e, 5, 48, 51), 0);
        ck_assert_int_eq(ev_jett(&e, 1, 31, 34), 0);
    }
    ck_assert_int_eq(ev_finish(&e, WIRE_TERM_RETURNED, 0, 0), 0);
    agg_end(e.a);
    ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
    ck_assert_uint_eq(r.entries[0].call_lines[0].where.self_samples, 4);
    ck_assert_str_eq(r.entries[0].call_lines[0].callee_fn.ptr, "f");
    rank_free(&r);
    agg_free(e.a);
}
END_TEST

/* The CALLS record's rules, each a collector error that changes no
 * number: a memory capture's; a call site outside its function's source
 * (rec_text is 54 bytes), or of a function without one; counts added past
 * 2^64 - 1 (the first record's stay); before HELLO or after FINISH. */
START_TEST(calls_record_rules)
{
    struct ev e = rec_sites(AGG_CPU_BUDGET_MAX);
    ck_assert_int_eq(
        ev_func(&e, 3, "<runtime>", "<truncated-stack>", WIRE_NONE32, WIRE_NONE32, WIRE_NONE32), 0);
    ck_assert_int_eq(ev_jett(&e, 1, 31, 34), 0);
    const struct wire_site_calls outside[] = {{0, {14, 55}, 1}}, sourceless[] = {{3, {0, 1}, 1}};
    ck_assert_int_eq(ev_calls(&e, NULL, 0, outside, 1), -1);
    ck_assert_str_eq(agg_error(e.a), "CALLS: call site [14, 55) outside the source of app.main");
    ck_assert_int_eq(ev_calls(&e, NULL, 0, sourceless, 1), -1);
    const struct wire_fn_calls big[] = {{1, UINT64_MAX}}, one[] = {{1, 1}};
    ck_assert_int_eq(ev_calls(&e, big, 1, NULL, 0), 0);
    ck_assert_int_eq(ev_calls(&e, one, 1, NULL, 0), -1);
    ck_assert_uint_eq(agg_error_count(e.a), 3);
    ck_assert_int_eq(ev_finish(&e, WIRE_TERM_RETURNED, 0, 0), 0);
    ck_assert_int_eq(ev_calls(&e, one, 1, NULL, 0), -1);
    agg_end(e.a);
    struct rank_report r;
    ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
    ck_assert_int_eq(r.status, AGG_PARTIAL);
    ck_assert_int_eq(r.reason, AGG_REASON_COLLECTOR_FAILURE);
    ck_assert_str_eq(r.entries[0].fn.ptr, "f"); /* self 1 before main's 0 */
    ck_assert(r.entries[0].calls == UINT64_MAX);
    rank_free(&r);
    agg_free(e.a);

    e = ev_mem_start(AGG_RETENTION_BUDGET_MAX);
    ck_assert_int_eq(ev_func(&e, 0, "app", "main", WIRE_NONE32, WIRE_NONE32, WIRE_NONE32), 0);
    ck_assert_int_eq(ev_calls(&e, one, 1, NULL, 0), -1);
    ck_assert_str_eq(agg_error(e.a), "CALLS in a memory profile");
    agg_free(e.a);

    struct agg *a = agg_new();
    struct ev none = {a, 0};
    ck_assert_int_eq(ev_calls(&none, NULL, 0, NULL, 0), -1);
    ck_assert_str_eq(agg_error(a), "CALLS before HELLO");
    agg_free(a);
}
END_TEST

/* Each waiting call site's dominant chain: the stack (every frame) with
 * most of the site's samples.  At g's 48: 2 samples on main>f>g, 1 on
 * main>f>g>f>g -> "app.main > app.f > app.g"; then one more on the long
 * stack makes 2 and 2, a tie the identities in order break (the prefix
 * first).  At f's 31: one sample on main>f>g>f, its own chain.  Waiting
 * samples count in no function and no call line. */
START_TEST(waiting_call_site_chains)
{
    struct ev e = rec_sites(AGG_CPU_BUDGET_MAX);
    ck_assert_int_eq(ev_sample(&e, WIRE_STATE_WAITING, 2, 48, 51), 0);
    ck_assert_int_eq(ev_sample(&e, WIRE_STATE_WAITING, 2, 48, 51), 0);
    ck_assert_int_eq(ev_sample(&e, WIRE_STATE_WAITING, 4, 48, 51), 0);
    ck_assert_int_eq(ev_sample(&e, WIRE_STATE_WAITING, 3, 31, 34), 0);
    ck_assert_int_eq(ev_jett(&e, 0, 14, 17), 0);
    ck_assert_int_eq(ev_finish(&e, WIRE_TERM_RETURNED, 0, 0), 0);
    agg_end(e.a);
    struct rank_report r;
    ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
    ck_assert_uint_eq(r.n_waits, 2);
    ck_assert_str_eq(r.waits[0].fn.ptr, "g");
    ck_assert_uint_eq(r.waits[0].where.self_samples, 3);
    ck_assert_str_eq(r.waits[0].chain, "app.main > app.f > app.g");
    ck_assert_str_eq(r.waits[1].fn.ptr, "f");
    ck_assert_str_eq(r.waits[1].chain, "app.main > app.f > app.g > app.f");
    ck_assert_str_eq(r.waits[1].folded, "app.main > app.f > app.g > app.f");
    ck_assert_uint_eq(r.n_entries, 1);
    ck_assert_uint_eq(r.entries[0].n_calls, 0);
    rank_free(&r);
    agg_free(e.a);

    e = rec_sites(AGG_CPU_BUDGET_MAX);
    for (int k = 0; k < 2; k++) {
        ck_assert_int_eq(ev_sample(&e, WIRE_STATE_WAITING, 4, 48, 51), 0);
        ck_assert_int_eq(ev_sample(&e, WIRE_STATE_WAITING, 2, 48, 51), 0);
    }
    ck_assert_int_eq(ev_finish(&e, WIRE_TERM_RETURNED, 0, 0), 0);
    agg_end(e.a);
    ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
    ck_assert_str_eq(r.waits[0].chain, "app.main > app.f > app.g");
    rank_free(&r);
    agg_free(e.a);
}
END_TEST

/* Budget cuts, by hand from the documented costs.  One sample on main>f
 * (main's f() at 14) at f's 31: f bucket 32, f's hot line 24 + the
 * index's 16 slots x 8 (184), chain main>f 8 (192), main bucket 32
 * (224), chain main 8 (232), main's call line at 14 32 (264), its callee
 * f 24 (288).  288 bytes: all of it, complete.  287: the callee does not
 * fit: main's call line has no samples and is not listed, the profile is
 * partial (cpu_metadata_limit), main is still an entry (rank 2, after f
 * and its self sample).  263: the call
 * line itself does not fit, the same profile.  A waiting sample on
 * main>f at 31: its site 24 + 128 (152) and its chain 24 (176); with 175
 * bytes the site counts but its chain is unavailable. */
START_TEST(call_line_and_chain_budget)
{
    static const uint64_t budgets[] = {288, 287, 263};
    for (int k = 0; k < 3; k++) {
        struct ev e = rec_sites(budgets[k]);
        ck_assert_int_eq(ev_jett(&e, 1, 31, 34), 0);
        ck_assert_uint_eq(agg_cpu_bytes(e.a), k == 0 ? 288 : k == 1 ? 264 : 232);
        ck_assert_int_eq(ev_finish(&e, WIRE_TERM_RETURNED, 0, 0), 0);
        agg_end(e.a);
        struct rank_report r;
        ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
        ck_assert_int_eq(r.status, k == 0 ? AGG_COMPLETE : AGG_PARTIAL);
        ck_assert_uint_eq(r.n_entries, 2);
        ck_assert_str_eq(r.entries[1].fn.ptr, "main"); /* f first: its self sample */
        ck_assert_uint_eq(r.entries[1].n_calls, k == 0 ? 1 : 0);
        rank_free(&r);
        agg_free(e.a);
    }
    for (int k = 0; k < 2; k++) {
        struct ev e = rec_sites(k == 0 ? 176 : 175);
        ck_assert_int_eq(ev_sample(&e, WIRE_STATE_WAITING, 1, 31, 34), 0);
        ck_assert_int_eq(ev_finish(&e, WIRE_TERM_RETURNED, 0, 0), 0);
        agg_end(e.a);
        struct rank_report r;
        ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
        ck_assert_uint_eq(agg_cpu_bytes(e.a), k == 0 ? 176 : 152);
        ck_assert_uint_eq(r.n_waits, 1);
        ck_assert_uint_eq(r.waits[0].where.self_samples, 1);
        if (k == 0)
            ck_assert_str_eq(r.waits[0].chain, "app.main > app.f");
        else
            ck_assert_ptr_null(r.waits[0].chain);
        rank_free(&r);
        agg_free(e.a);
    }
}
END_TEST

Suite *agg_suite(void);

Suite *agg_suite(void)
{
    Suite *s = suite_create("agg");
    TCase *t = tcase_create("cpu");
    tcase_add_test(t, recursion_counts_once);
    tcase_add_test(t, detached_report_outlives_its_aggregator);
    tcase_add_test(t, numbers_only_report);
    tcase_add_test(t, states_never_charged);
    tcase_add_test(t, truncated_stack_bucket);
    tcase_add_test(t, truncated_waiting_counted);
    tcase_add_test(t, sourceless_suggestions_unavailable_when_partial);
    tcase_add_test(t, chain_ties_by_identity);
    tcase_add_test(t, cpu_budget_exhaustion);
    tcase_add_test(t, cpu_budget_exact_fit);
    tcase_add_test(t, stack_budget_cap);
    tcase_add_test(t, missing_hello);
    tcase_add_test(t, missing_finish);
    tcase_add_test(t, undefined_references);
    tcase_add_test(t, path_normalization);
    tcase_add_test(t, hello_budgets_capped);
    tcase_add_loop_test(t, random_hostile_records, 0, 8);
    suite_add_tcase(s, t);
    t = tcase_create("calls");
    tcase_add_test(t, call_lines_under_recursion);
    tcase_add_test(t, call_line_callee_and_order);
    tcase_add_test(t, calls_record_rules);
    tcase_add_test(t, waiting_call_site_chains);
    tcase_add_test(t, call_line_and_chain_budget);
    suite_add_tcase(s, t);
    return s;
}
