/* Ranking: exact thresholds, the four ordering keys with their collation,
 * limits, empty profiles and display rounding.  Expected values are
 * computed by hand in the comments. */
#include <check.h>
#include <stdlib.h>

#include "daemon/rank.h"
#include "tests/agg_events.h"

Suite *rank_suite(void);

static const char two_fns[] = "fn main() {\n  f()\n}\nfn f() {\n  g()\n}\n";

/* main (root) and f (main>f); `on_f` samples on main>f, `on_main` on main
 * alone.  main's inclusive is every sample, f's is `on_f`. */
static struct ev split(int on_f, int on_main)
{
    struct ev e = ev_default();
    ck_assert_int_eq(ev_source(&e, 0, "src/m.jett", two_fns), 0);
    ck_assert_int_eq(ev_func(&e, 0, "app", "main", 0, 0, 20), 0);
    ck_assert_int_eq(ev_func(&e, 1, "app", "f", 0, 20, 37), 0);
    ck_assert_int_eq(ev_stack(&e, 0, WIRE_NONE32, 0), 0);
    ck_assert_int_eq(ev_stack(&e, 1, 0, 1), 0);
    for (int i = 0; i < on_f; i++)
        ck_assert_int_eq(ev_jett(&e, 1, 31, 34), 0);
    for (int i = 0; i < on_main; i++)
        ck_assert_int_eq(ev_jett(&e, 0, 14, 17), 0);
    ck_assert_int_eq(ev_finish(&e, WIRE_TERM_RETURNED, 0, 0), 0);
    return e;
}

static uint64_t eligible_at(struct ev *e, uint32_t bp)
{
    struct rank_options o = {true, false, bp, 0, false, false};
    struct rank_report r;
    ck_assert_int_eq(rank_build(e->a, &o, &r), 0);
    uint64_t n = r.eligible;
    rank_free(&r);
    return n;
}

/* f has 999 of 20000 samples: 4.995%, shown as 5.00 (499.5 hundredths
 * rounds half away from zero to 500) but below 5.00% exactly
 * (999 * 10000 = 9990000 < 500 * 20000 = 10000000): only main is
 * eligible at 500 bp; at 499 bp (9990000 >= 9980000) both are. */
START_TEST(threshold_display_cannot_admit)
{
    struct ev e = split(999, 19001);
    ck_assert_uint_eq(rank_percent_hundredths(999, 20000), 500);
    ck_assert_uint_eq(eligible_at(&e, 500), 1);
    ck_assert_uint_eq(eligible_at(&e, 499), 2);
    agg_free(e.a);
}
END_TEST

/* f has 29 of 100 samples: exactly 29.00%, which binary floating point
 * computes as 28.999999999999996 (0.29 * 100).  At 2900 bp f is eligible
 * (290000 >= 290000); at 2901 bp it is not (290000 < 290100). */
START_TEST(threshold_exact_equality_admits)
{
    struct ev e = split(29, 71);
    ck_assert_uint_eq(eligible_at(&e, 2900), 2);
    ck_assert_uint_eq(eligible_at(&e, 2901), 1);
    ck_assert_uint_eq(eligible_at(&e, 10000), 1); /* main: 100% */
    ck_assert_uint_eq(eligible_at(&e, 0), 2);
    agg_free(e.a);
}
END_TEST

START_TEST(percent_rounding)
{
    ck_assert_uint_eq(rank_percent_hundredths(1, 8), 1250);  /* 12.5 */
    ck_assert_uint_eq(rank_percent_hundredths(1, 3), 3333);  /* 33.333.. */
    ck_assert_uint_eq(rank_percent_hundredths(2, 3), 6667);  /* 66.666.. */
    ck_assert_uint_eq(rank_percent_hundredths(1, 32), 313);  /* 3.125: half up */
    ck_assert_uint_eq(rank_percent_hundredths(1, 20000), 1); /* 0.005: half up */
    ck_assert_uint_eq(rank_percent_hundredths(1, 20001), 0); /* 0.0049.. */
    ck_assert_uint_eq(rank_percent_hundredths(UINT64_MAX, UINT64_MAX), 10000);
    ck_assert(rank_meets(UINT64_MAX, UINT64_MAX, 10000));
    ck_assert(!rank_meets(UINT64_MAX - 1, UINT64_MAX, 10000));
    ck_assert(rank_meets(0, UINT64_MAX, 0));
}
END_TEST

static const char *const tie_paths[] = {"stdlib/a.jett", "dep/a.jett", "src/b.jett", "src/a.jett"};
static const uint8_t tie_origins[] = {WIRE_ORIGIN_STDLIB, WIRE_ORIGIN_DEPENDENCY,
                                      WIRE_ORIGIN_PROJECT, WIRE_ORIGIN_PROJECT};

/* Eleven functions, each on its own root stack with one sample, so every
 * entry ties on inclusive 1 and self 1 (1/11 = 9.09%).  They are defined
 * in an order unlike the expected one, so ids cannot produce it. */
static struct ev ties(void)
{
    static const struct {
        const char *ns, *fn;
        uint32_t src, start, end;
    } fns[] = {
        {"app", "dup", WIRE_NONE32, WIRE_NONE32, WIRE_NONE32}, /* 0: no source */
        {"app", "dup", 0, 0, 9},                               /* 1: stdlib */
        {"app", "dup", 1, 0, 9},                               /* 2: dependency */
        {"app", "dup", 2, 0, 9},                               /* 3: src/b.jett */
        {"app", "dup", 3, 10, 19},                             /* 4: src/a.jett 10-19 */
        {"app", "dup", 3, 0, 19},                              /* 5: src/a.jett 0-19 */
        {"app", "dup", 3, 0, 9},                               /* 6: src/a.jett 0-9 */
        {"b", "a", 3, 0, 9},                                   /* 7 */
        {"app", "z", 3, 0, 9},                                 /* 8 */
        {"Zed", "q", 3, 0, 9},                                 /* 9 */
        {"\xc3\xa9t\xc3\xa9", "a", 3, 0, 9},                   /* 10: "été" */
    };
    struct ev e = ev_default();
    for (uint32_t i = 0; i < 4; i++)
        ck_assert_int_eq(
            ev_source_spans(&e, i, tie_origins[i], tie_paths[i], "fn x() {}\nfn y() {}\n", NULL, 0),
            0);
    for (uint32_t i = 0; i < 11; i++) {
        ck_assert_int_eq(ev_func(&e, i, fns[i].ns, fns[i].fn, fns[i].src, fns[i].start, fns[i].end),
                         0);
        ck_assert_int_eq(ev_stack(&e, i, WIRE_NONE32, i), 0);
        /* 5 and 6 differ only in their declaration end: their hot lines
         * (line 2 for 5, line 1 for 6) tell them apart in the output */
        uint32_t at = i == 5 ? 10 : i == 6 ? 0 : WIRE_NONE32;
        ck_assert_int_eq(ev_jett(&e, i, at, at == WIRE_NONE32 ? at : at + 9), 0);
    }
    ck_assert_int_eq(ev_finish(&e, WIRE_TERM_RETURNED, 0, 0), 0);
    return e;
}

/* By hand: namespaces bytewise "Zed" (0x5a) < "app" < "b" < "été" (0xc3);
 * in app, "dup" < "z"; the app.dup identities by origin (project first),
 * path ("src/a.jett" < "src/b.jett"), declaration start, then end, and the
 * one without a source last. */
START_TEST(ordering_keys_in_turn)
{
    static const struct {
        const char *ns, *fn, *path;
        uint64_t line;
    } want[] = {
        {"Zed", "q", "src/a.jett", 1},
        {"app", "dup", "src/a.jett", 1}, /* 0-9 */
        {"app", "dup", "src/a.jett", 1}, /* 0-19 */
        {"app", "dup", "src/a.jett", 2}, /* 10-19 */
        {"app", "dup", "src/b.jett", 1},
        {"app", "dup", "dep/a.jett", 1},
        {"app", "dup", "stdlib/a.jett", 1},
        {"app", "dup", NULL, RANK_NA},
        {"app", "z", "src/a.jett", 1},
        {"b", "a", "src/a.jett", 1},
        {"\xc3\xa9t\xc3\xa9", "a", "src/a.jett", 1},
    };
    struct ev e = ties();
    struct rank_options o = {false, true, 0, 100, false, false};
    struct rank_report r;
    ck_assert_int_eq(rank_build(e.a, &o, &r), 0);
    ck_assert_uint_eq(r.eligible, 11);
    ck_assert_uint_eq(r.emitted, 11);
    ck_assert_uint_eq(r.truncated, 0);
    for (size_t i = 0; i < 11; i++) {
        const struct rank_entry *x = &r.entries[i];
        ck_assert_uint_eq(x->rank, i + 1);
        ck_assert_str_eq(x->ns.ptr, want[i].ns);
        ck_assert_str_eq(x->fn.ptr, want[i].fn);
        if (want[i].path)
            ck_assert_str_eq(x->path.ptr, want[i].path);
        else
            ck_assert_ptr_null(x->path.ptr);
        ck_assert_uint_eq(x->line, want[i].line);
        ck_assert_uint_eq(x->percent_hundredths, 909); /* 1/11 = 9.0909% */
    }
    /* the second and third differ only in their declaration end: 0-9
     * (hot line 1) before 0-19 (hot line 2) */
    ck_assert_uint_eq(r.entries[1].hot[0].line, 1);
    ck_assert_uint_eq(r.entries[2].hot[0].line, 2);
    rank_free(&r);
    agg_free(e.a);
}
END_TEST

/* Same eleven with the default limit 10 (from HELLO), then limit 2: the
 * first ones are emitted, the rest counted as truncated. */
START_TEST(limit_truncates)
{
    struct ev e = ties();
    struct rank_report r;
    ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
    ck_assert_uint_eq(r.limit, 10);
    ck_assert_uint_eq(r.eligible, 11);
    ck_assert_uint_eq(r.emitted, 10);
    ck_assert_uint_eq(r.truncated, 1);
    ck_assert_uint_eq(r.n_entries, 10);
    ck_assert_str_eq(r.entries[9].ns.ptr, "b");
    rank_free(&r);
    struct rank_options o = {false, true, 0, 2, false, false};
    ck_assert_int_eq(rank_build(e.a, &o, &r), 0);
    ck_assert_uint_eq(r.limit, 2);
    ck_assert_uint_eq(r.emitted, 2);
    ck_assert_uint_eq(r.truncated, 9);
    ck_assert_str_eq(r.entries[1].fn.ptr, "dup");
    rank_free(&r);
    agg_free(e.a);
}
END_TEST

/* HELLO then FINISH: complete, zero everywhere, no entries; 0 samples in
 * 4 ms is an observed rate of 0. */
START_TEST(empty_profile)
{
    struct ev e = ev_default();
    ck_assert_int_eq(ev_finish(&e, WIRE_TERM_RETURNED, 0, 0), 0);
    agg_end(e.a);
    struct rank_report r;
    ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
    ck_assert_int_eq(r.status, AGG_COMPLETE);
    ck_assert_uint_eq(r.cpu.requested_ticks, 0);
    ck_assert_uint_eq(r.cpu.observed_rate_hundredths, 0);
    ck_assert_uint_eq(r.eligible, 0);
    ck_assert_uint_eq(r.n_entries, 0);
    rank_free(&r);
    agg_free(e.a);
}
END_TEST

/* DESIGN section 3: PERCENT ^[0-9]+(\.[0-9]{1,2})?$ up to 100, COUNT
 * 1..100. */
START_TEST(cli_values)
{
    static const struct {
        const char *s;
        int rc;
        uint32_t bp;
    } pct[] = {
        {"5", 0, 500},        {"5.00", 0, 500},  {"0", 0, 0},    {"100", 0, 10000},
        {"100.00", 0, 10000}, {"33.3", 0, 3330}, {"0.01", 0, 1}, {"007.5", 0, 750},
        {".5", -1, 0},        {"5.", -1, 0},     {"+5", -1, 0},  {"1e1", -1, 0},
        {"5.001", -1, 0},     {"100.01", -1, 0}, {"101", -1, 0}, {"", -1, 0},
        {"-1", -1, 0},        {"5%", -1, 0},     {" 5", -1, 0},  {"99999999999999999999", -1, 0},
    };
    for (size_t i = 0; i < sizeof pct / sizeof pct[0]; i++) {
        uint32_t bp = 12345;
        ck_assert_msg(rank_parse_percent(pct[i].s, &bp) == pct[i].rc, "'%s'", pct[i].s);
        if (pct[i].rc == 0)
            ck_assert_uint_eq(bp, pct[i].bp);
    }
    static const struct {
        const char *s;
        int rc;
        uint32_t n;
    } lim[] = {
        {"1", 0, 1}, {"100", 0, 100}, {"10", 0, 10},  {"0", -1, 0},    {"101", -1, 0},
        {"", -1, 0}, {"+1", -1, 0},   {"1.0", -1, 0}, {"0x10", -1, 0}, {"99999999999", -1, 0},
    };
    for (size_t i = 0; i < sizeof lim / sizeof lim[0]; i++) {
        uint32_t n = 12345;
        ck_assert_msg(rank_parse_limit(lim[i].s, &n) == lim[i].rc, "'%s'", lim[i].s);
        if (lim[i].rc == 0)
            ck_assert_uint_eq(n, lim[i].n);
    }
}
END_TEST

Suite *rank_suite(void)
{
    Suite *s = suite_create("rank");
    TCase *t = tcase_create("rank");
    tcase_add_test(t, threshold_display_cannot_admit);
    tcase_add_test(t, threshold_exact_equality_admits);
    tcase_add_test(t, percent_rounding);
    tcase_add_test(t, ordering_keys_in_turn);
    tcase_add_test(t, limit_truncates);
    tcase_add_test(t, empty_profile);
    tcase_add_test(t, cli_values);
    suite_add_tcase(s, t);
    return s;
}
