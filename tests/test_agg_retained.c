/* The walk's RETAINED records injected into the aggregation without a
 * decoder: the rules the aggregation applies itself (the mode, the
 * references, the order, sums that fit and that equal the live
 * allocations), the section's status, and a report that outlives its
 * aggregator.  Every expected number is computed by hand. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/agg.h"
#include "daemon/rank.h"
#include "daemon/render.h"
#include "tests/agg_events.h"

Suite *agg_retained_suite(void);

static const char text[] = "namespace app\nlet a = []\nlet b = []\nfn f() {\n}\nfn main() {\n}\n";

/* a 14-24 (line 2), b 25-35 (line 3), f 36-42 (line 4), main 47-56
 * (line 6); stacks 0 main, 1 main>f.  Live: id1 100 at f, id2 50 at
 * main: 150 bytes in 2 objects. */
static struct ev setup(uint64_t budget)
{
    struct ev e = ev_mem_start(budget);
    ck_assert_int_eq(ev_source(&e, 0, "src/app.jett", text), 0);
    ck_assert_int_eq(ev_func(&e, 0, "app", "f", 0, 36, 42), 0);
    ck_assert_int_eq(ev_func(&e, 1, "app", "main", 0, 47, 56), 0);
    ck_assert_int_eq(ev_stack(&e, 0, WIRE_NONE32, 1), 0);
    ck_assert_int_eq(ev_stack(&e, 1, 0, 0), 0);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_ALLOCATE, 1, EV_NA, 100, 1), 0);
    ck_assert_int_eq(ev_alloc(&e, WIRE_OP_ALLOCATE, 2, EV_NA, 50, 0), 0);
    return e;
}

/* A RETAINED record of one row; ns NULL: a closing one. */
static int retained(struct ev *e, const char *ns, const char *name, uint32_t func, uint64_t bytes,
                    uint64_t objects, bool complete)
{
    uint8_t row[WIRE_RETAINED_ROW_SIZE];
    wire_put_retained_row(row, &(struct wire_retained_row){func, bytes, objects});
    struct wire_retained r = {ns ? ev_str(ns) : (struct wire_str){NULL, 0},
                              name ? ev_str(name) : (struct wire_str){NULL, 0},
                              ns ? 0 : WIRE_NONE32,
                              ns ? (struct wire_span){14, 24} : WIRE_SPAN_NONE,
                              row,
                              objects ? 1 : 0,
                              complete};
    return agg_retained(e->a, &r);
}

static void expect_error(struct ev *e, const char *needle)
{
    ck_assert_uint_ge(agg_error_count(e->a), 1);
    ck_assert_msg(strstr(agg_error(e->a), needle), "'%s' lacks '%s'", agg_error(e->a), needle);
}

START_TEST(cpu_profile_refuses)
{
    struct ev e = ev_default();
    ck_assert_int_eq(retained(&e, NULL, NULL, WIRE_NONE32, 0, 0, true), -1);
    expect_error(&e, "RETAINED in a cpu profile");
    agg_free(e.a);
}
END_TEST

/* Records fed without a decoder still cannot name what is not there, nor
 * put a holder after the closing record or an incomplete one. */
START_TEST(references_and_order)
{
    struct ev e = setup(AGG_RETENTION_BUDGET_MAX);
    ck_assert_int_eq(retained(&e, "app", "a", 7, 10, 1, true), -1);
    expect_error(&e, "RETAINED: row 1 names a function that is not defined");
    agg_free(e.a);
    e = setup(AGG_RETENTION_BUDGET_MAX);
    ck_assert_int_eq(retained(&e, NULL, NULL, 0, 100, 1, true), 0);
    ck_assert_int_eq(retained(&e, "app", "a", 0, 50, 1, true), -1);
    expect_error(&e, "RETAINED: a holder after the closing record");
    agg_free(e.a);
    e = setup(AGG_RETENTION_BUDGET_MAX);
    ck_assert_int_eq(retained(&e, "app", "a", 0, 100, 1, false), 0);
    ck_assert_int_eq(retained(&e, "app", "b", 1, 50, 1, true), -1);
    expect_error(&e, "RETAINED: a holder after an incomplete record");
    agg_free(e.a);
    e = setup(AGG_RETENTION_BUDGET_MAX);
    ck_assert_int_eq(ev_finish(&e, WIRE_TERM_RETURNED, 0, 0), 0);
    ck_assert_int_eq(retained(&e, NULL, NULL, 0, 100, 1, true), -1);
    expect_error(&e, "RETAINED after FINISH");
    agg_free(e.a);
}
END_TEST

/* 2^63 + 2^63 does not fit in 64 bits: refused, and nothing kept. */
START_TEST(sums_past_2_64_refused)
{
    struct ev e = setup(AGG_RETENTION_BUDGET_MAX);
    ck_assert_int_eq(retained(&e, "app", "a", 0, UINT64_C(1) << 63, 1, true), 0);
    ck_assert_int_eq(retained(&e, "app", "b", 0, UINT64_C(1) << 63, 1, true), -1);
    expect_error(&e, "RETAINED: the rows add up past 2^64 - 1");
    agg_free(e.a);
}
END_TEST

/* A complete walk holds exactly the live allocations: 150 bytes in 2. */
START_TEST(complete_walk_matches_live)
{
    struct ev e = setup(AGG_RETENTION_BUDGET_MAX);
    ck_assert_int_eq(retained(&e, "app", "a", 0, 100, 1, true), 0);
    ck_assert_int_eq(retained(&e, NULL, NULL, 1, 50, 1, true), 0);
    ck_assert_int_eq(ev_finish(&e, WIRE_TERM_RETURNED, 0, 0), 0);
    ck_assert_uint_eq(agg_error_count(e.a), 0);
    agg_free(e.a);
    e = setup(AGG_RETENTION_BUDGET_MAX); /* 120 bytes where 100 are live */
    ck_assert_int_eq(retained(&e, "app", "a", 0, 120, 1, true), 0);
    ck_assert_int_eq(retained(&e, NULL, NULL, 1, 50, 1, true), 0);
    ck_assert_int_eq(ev_finish(&e, WIRE_TERM_RETURNED, 0, 0), -1);
    expect_error(&e, "RETAINED: the walk found 170 bytes in 2 objects, the live allocations "
                     "hold 150 bytes in 2");
    agg_free(e.a);
    e = setup(AGG_RETENTION_BUDGET_MAX); /* an object missing */
    ck_assert_int_eq(retained(&e, "app", "a", 0, 100, 1, true), 0);
    ck_assert_int_eq(retained(&e, NULL, NULL, WIRE_NONE32, 0, 0, true), 0);
    ck_assert_int_eq(ev_finish(&e, WIRE_TERM_RETURNED, 0, 0), -1);
    expect_error(&e, "the walk found 100 bytes in 1 object, the live allocations hold 150 "
                     "bytes in 2");
    agg_free(e.a);
    e = setup(AGG_RETENTION_BUDGET_MAX); /* a cut walk holds less, rightly */
    ck_assert_int_eq(retained(&e, "app", "a", 0, 100, 1, false), 0);
    ck_assert_int_eq(retained(&e, NULL, NULL, WIRE_NONE32, 0, 0, false), 0);
    ck_assert_int_eq(ev_finish(&e, WIRE_TERM_RETURNED, 0, 0), 0);
    ck_assert_uint_eq(agg_error_count(e.a), 0);
    agg_free(e.a);
}
END_TEST

static struct rank_report report(struct ev *e)
{
    struct rank_report r;
    ck_assert_int_eq(rank_build(e->a, NULL, &r), 0);
    return r;
}

/* No walk: unavailable; a whole one: complete; cut: partial, with the
 * rest in the remainder row (150 - 100 = 50 bytes, 1 object). */
START_TEST(section_status)
{
    struct ev e = setup(AGG_RETENTION_BUDGET_MAX);
    ck_assert_int_eq(ev_finish(&e, WIRE_TERM_RETURNED, 0, 0), 0);
    struct rank_report r = report(&e);
    ck_assert_int_eq(r.walk, RANK_WALK_UNAVAILABLE);
    ck_assert_uint_eq(r.n_retained, 0);
    rank_free(&r);
    agg_free(e.a);
    e = setup(AGG_RETENTION_BUDGET_MAX);
    ck_assert_int_eq(retained(&e, "app", "a", 0, 100, 1, false), 0);
    ck_assert_int_eq(retained(&e, NULL, NULL, WIRE_NONE32, 0, 0, false), 0);
    ck_assert_int_eq(ev_finish(&e, WIRE_TERM_RETURNED, 0, 0), 0);
    r = report(&e);
    ck_assert_int_eq(r.walk, RANK_WALK_PARTIAL);
    ck_assert_uint_eq(r.n_retained, 2);
    ck_assert(!r.retained[0].remainder && r.retained[0].bytes == 100);
    ck_assert_str_eq(r.retained[0].fn.ptr, "f");
    ck_assert_uint_eq(r.retained[0].holder_line, 2);
    ck_assert_uint_eq(r.retained[0].line, 4);
    ck_assert(r.retained[1].remainder && r.retained[1].bytes == 50 && r.retained[1].objects == 1);
    rank_free(&r);
    agg_free(e.a);
}
END_TEST

/* A whole walk, then the stream ends without FINISH (a capture cut just
 * before it): the run's exit is not recorded, so the section is
 * unavailable, as the retained total is (jett-profile(7), Status), and
 * the human report prints no "retained at exit" line. */
START_TEST(no_walk_without_finish)
{
    struct ev e = setup(AGG_RETENTION_BUDGET_MAX);
    ck_assert_int_eq(retained(&e, "app", "a", 0, 100, 1, true), 0);
    ck_assert_int_eq(retained(&e, NULL, NULL, 1, 50, 1, true), 0);
    agg_end(e.a);
    struct rank_report r = report(&e);
    ck_assert_int_eq(r.walk, RANK_WALK_UNAVAILABLE);
    ck_assert_uint_eq(r.n_retained, 0);
    ck_assert(r.mem.retained_unavailable);
    char *out;
    size_t len;
    ck_assert_int_eq(render_human(&r, &out, &len), 0);
    ck_assert_ptr_null(strstr(out, "retained at exit"));
    free(out);
    char err[128];
    ck_assert_int_eq(render_toon(&r, &out, &len, err, sizeof err), 0);
    ck_assert_msg(strstr(out, "\n  retained_status: unavailable\n  retained: unavailable\n"), "%s",
                  out);
    free(out);
    rank_free(&r);
    agg_free(e.a);
}
END_TEST

/* A detached report keeps the rows' names once the aggregator is gone
 * (the sanitizers catch a read of freed memory). */
START_TEST(detached_rows_keep_their_names)
{
    struct ev e = setup(AGG_RETENTION_BUDGET_MAX);
    ck_assert_int_eq(retained(&e, "app", "a", 0, 100, 1, true), 0);
    ck_assert_int_eq(retained(&e, NULL, NULL, 1, 50, 1, true), 0);
    ck_assert_int_eq(ev_finish(&e, WIRE_TERM_RETURNED, 0, 0), 0);
    struct rank_report r = report(&e);
    ck_assert_int_eq(rank_detach(&r), 0);
    agg_free(e.a);
    ck_assert_int_eq(r.walk, RANK_WALK_COMPLETE);
    ck_assert_uint_eq(r.n_retained, 2);
    ck_assert(r.retained[0].holder_ns.len == 3 && !memcmp(r.retained[0].holder_ns.ptr, "app", 3));
    ck_assert(r.retained[0].holder_name.len == 1 && r.retained[0].holder_name.ptr[0] == 'a');
    ck_assert_str_eq(r.retained[0].holder_path.ptr, "src/app.jett");
    ck_assert_str_eq(r.retained[1].fn.ptr, "main");
    ck_assert_ptr_null(r.retained[1].holder_ns.ptr);
    rank_free(&r);
}
END_TEST

Suite *agg_retained_suite(void)
{
    Suite *s = suite_create("agg_retained");
    TCase *t = tcase_create("retained");
    tcase_add_test(t, cpu_profile_refuses);
    tcase_add_test(t, references_and_order);
    tcase_add_test(t, sums_past_2_64_refused);
    tcase_add_test(t, complete_walk_matches_live);
    tcase_add_test(t, section_status);
    tcase_add_test(t, no_walk_without_finish);
    tcase_add_test(t, detached_rows_keep_their_names);
    suite_add_tcase(s, t);
    return s;
}
