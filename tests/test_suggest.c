/* Suggestions: rule ids, exact predicates at their boundary, wording,
 * ordering, and omission when the profile is not complete. */
#include <check.h>
#include <stdlib.h>

#include "daemon/rank.h"
#include "daemon/suggest.h"
#include "tests/agg_events.h"

Suite *suggest_suite(void);

static const char two_fns[] = "fn main() {\n  f()\n}\nfn f() {\n  g()\n}\n";

static struct ev split(int on_f, int on_main, uint8_t term)
{
    struct ev e = ev_default();
    ck_assert_int_eq(ev_source(&e, 0, "src/m.jett", two_fns), 0);
    ck_assert_int_eq(ev_func(&e, 0, "app.core", "main", 0, 0, 20), 0);
    ck_assert_int_eq(ev_func(&e, 1, "app.core", "f", 0, 20, 37), 0);
    ck_assert_int_eq(ev_stack(&e, 0, WIRE_NONE32, 0), 0);
    ck_assert_int_eq(ev_stack(&e, 1, 0, 1), 0);
    for (int i = 0; i < on_f; i++)
        ck_assert_int_eq(ev_jett(&e, 1, 31, 34), 0);
    for (int i = 0; i < on_main; i++)
        ck_assert_int_eq(ev_jett(&e, 0, 14, 17), 0);
    ck_assert_int_eq(ev_finish(&e, term, 0, 0), 0);
    return e;
}

/* main's self samples are at 14-17, line 2 of two_fns; with split(3, 2)
 * main's dominant chain is `app.core.main` (5 samples) and 3 of them go
 * on to app.core.f: 60.00%. */
static const char high_main[] = "Inspect the reported hot lines in app.core.main; self work "
                                "accounts for at least half of its samples, the most at "
                                "src/m.jett:2 (2 of 2 self samples).";
static const char callee_main[] = "Inspect the dominant call chain through app.core.main; its "
                                  "callees account for more than half of its samples; "
                                  "app.core.f takes 60.00% of the samples on that chain.";

/* main: inclusive 4, self 2: 2 * 2 >= 4, exactly half: CPU_HIGH_SELF.
 * f: inclusive 2, self 2: CPU_HIGH_SELF.  One suggestion each. */
START_TEST(high_self_at_half)
{
    struct ev e = split(2, 2, WIRE_TERM_RETURNED);
    struct rank_report r;
    ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
    ck_assert_str_eq(r.entries[0].fn.ptr, "main");
    ck_assert_uint_eq(r.entries[0].n_suggestions, 1);
    ck_assert_str_eq(r.entries[0].suggestions[0].rule, "CPU_HIGH_SELF");
    ck_assert_str_eq(r.entries[0].suggestions[0].text, high_main);
    ck_assert_str_eq(r.entries[1].suggestions[0].rule, "CPU_HIGH_SELF");
    rank_free(&r);
    agg_free(e.a);
}
END_TEST

/* main: inclusive 5, self 2: 4 < 5: CPU_CALLEE_DOMINATED. */
START_TEST(callee_dominated_below_half)
{
    struct ev e = split(3, 2, WIRE_TERM_RETURNED);
    struct rank_report r;
    ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
    ck_assert_uint_eq(r.entries[0].n_suggestions, 1);
    ck_assert_str_eq(r.entries[0].suggestions[0].rule, "CPU_CALLEE_DOMINATED");
    ck_assert_str_eq(r.entries[0].suggestions[0].text, callee_main);
    rank_free(&r);
    agg_free(e.a);
}
END_TEST

/* A runtime error still finalizes a complete profile: suggestions stay.
 * An interrupt makes it partial / interrupted: none. */
START_TEST(omitted_unless_complete)
{
    struct ev e = split(3, 2, WIRE_TERM_RUNTIME_ERROR);
    struct rank_report r;
    ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
    ck_assert_int_eq(r.status, AGG_COMPLETE);
    ck_assert_str_eq(r.termination, "runtime_error");
    ck_assert_uint_eq(r.entries[0].n_suggestions, 1);
    rank_free(&r);
    agg_free(e.a);
    e = split(3, 2, WIRE_TERM_INTERRUPTED);
    ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
    ck_assert_int_eq(r.status, AGG_PARTIAL);
    ck_assert_int_eq(r.reason, AGG_REASON_INTERRUPTED);
    ck_assert_str_eq(r.termination, "interrupted");
    ck_assert_uint_eq(r.entries[0].n_suggestions, 0);
    ck_assert_uint_eq(r.entries[1].n_suggestions, 0);
    rank_free(&r);
    agg_free(e.a);
}
END_TEST

/* The memory rules' wording, filled from reported numbers: allocated
 * 42.11%; retained 75272960 of 891289600 attributed bytes is 8.4454%,
 * shown 8.45, and meets 5.00% (752729600000 >= 445644800000). */
START_TEST(memory_wording)
{
    struct rank_entry e = {0};
    e.rank = 1;
    e.ns = (struct rank_str){"search.indexer", 14};
    e.fn = (struct rank_str){"build_index", 11};
    e.percent_hundredths = 4211;
    e.retained_bytes = 75272960;
    ck_assert_int_eq(suggest_mem(&e, 500, 891289600), 0);
    ck_assert_uint_eq(e.n_suggestions, 2);
    ck_assert_str_eq(e.suggestions[0].rule, "MEM_ALLOCATION_PRESSURE");
    ck_assert_str_eq(e.suggestions[0].text, "Reduce, reuse, or batch allocations in "
                                            "search.indexer.build_index; it allocated 42.11% of "
                                            "attributed bytes.");
    ck_assert_str_eq(e.suggestions[1].rule, "MEM_RETAINED");
    ck_assert_str_eq(e.suggestions[1].text,
                     "Review the lifetime of allocations created in search.indexer.build_index; "
                     "75272960 bytes (8.45%) were still live at exit.");
    suggest_clear(&e);
    /* rank 2, retained below the threshold: 4000 * 10000 < 500 * 891289600 */
    e.rank = 2;
    e.retained_bytes = 4000;
    ck_assert_int_eq(suggest_mem(&e, 500, 891289600), 0);
    ck_assert_uint_eq(e.n_suggestions, 0);
    /* exactly at the threshold: 50 of 1000 bytes at 500 bp; 5.00% */
    e.retained_bytes = 50;
    ck_assert_int_eq(suggest_mem(&e, 500, 1000), 0);
    ck_assert_uint_eq(e.n_suggestions, 1);
    ck_assert_str_eq(e.suggestions[0].text,
                     "Review the lifetime of allocations created in search.indexer.build_index; "
                     "50 bytes (5.00%) were still live at exit.");
    suggest_clear(&e);
    e.retained_bytes = RANK_NA; /* unavailable: omitted */
    e.retained_unavailable = true;
    ck_assert_int_eq(suggest_mem(&e, 0, 1000), 0);
    ck_assert_uint_eq(e.n_suggestions, 0);
    suggest_clear(&e);
    /* 2^64 - 1 retained bytes is a value, not the unavailable marker:
     * 2^64 - 1 of 2^64 - 1 attributed bytes is 100.00% */
    e.retained_bytes = UINT64_MAX;
    e.retained_unavailable = false;
    ck_assert_int_eq(suggest_mem(&e, 500, UINT64_MAX), 0);
    ck_assert_uint_eq(e.n_suggestions, 1);
    ck_assert_str_eq(e.suggestions[0].text,
                     "Review the lifetime of allocations created in search.indexer.build_index; "
                     "18446744073709551615 bytes (100.00%) were still live at exit.");
    suggest_clear(&e);
}
END_TEST

Suite *suggest_suite(void)
{
    Suite *s = suite_create("suggest");
    TCase *t = tcase_create("suggest");
    tcase_add_test(t, high_self_at_half);
    tcase_add_test(t, callee_dominated_below_half);
    tcase_add_test(t, omitted_unless_complete);
    tcase_add_test(t, memory_wording);
    suite_add_tcase(s, t);
    return s;
}
