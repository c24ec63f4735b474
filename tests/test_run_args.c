/* Tests of `jett run` option validation: every rule of DESIGN section 3. */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>

#include "cli/run_args.h"

/* Parses a NULL-terminated list after "run"; returns 0 or -1, err set. */
static int parse(struct run_args *a, char *err, ...)
{
    static char *argv[32] = {"run"}; /* prog_argv points into it */
    int argc = 1;
    va_list ap;
    va_start(ap, err);
    for (char *s; (s = va_arg(ap, char *)) != NULL;)
        argv[argc++] = s;
    va_end(ap);
    return run_args_parse(argc, argv, a, err, 256);
}

static void expect_error(const char *want, ...)
{
    char *argv[32] = {"run"};
    int argc = 1;
    va_list ap;
    va_start(ap, want);
    for (char *s; (s = va_arg(ap, char *)) != NULL;)
        argv[argc++] = s;
    va_end(ap);
    struct run_args a;
    char err[256] = "";
    ck_assert_int_eq(run_args_parse(argc, argv, &a, err, sizeof err), -1);
    ck_assert_msg(strcmp(err, want) == 0, "error '%s', want '%s'", err, want);
}

START_TEST(defaults_and_order)
{
    struct run_args a;
    char err[256];
    ck_assert_int_eq(parse(&a, err, "app.jett", NULL), 0);
    ck_assert_str_eq(a.file, "app.jett");
    ck_assert_int_eq(a.mode, RUN_MODE_NONE);
    ck_assert_uint_eq(a.threshold_bp, 500);
    ck_assert_uint_eq(a.limit, 10);
    ck_assert_uint_eq(a.rate_hz, 1000);
    ck_assert_int_eq(parse(&a, err, "--profile-rate", "250", "--agent", "--profile-limit", "3",
                           "app.jett", "--profile", "--profile-threshold", "2.5", NULL),
                     0);
    ck_assert_int_eq(a.mode, RUN_MODE_CPU);
    ck_assert(a.agent);
    ck_assert_uint_eq(a.rate_hz, 250);
    ck_assert_uint_eq(a.limit, 3);
    ck_assert_uint_eq(a.threshold_bp, 250);
    ck_assert_int_eq(parse(&a, err, "--profile-memory", "x.jett", "--profile-capture", "c.jcap",
                           "--", "--profile", "arg", NULL),
                     0);
    ck_assert_int_eq(a.mode, RUN_MODE_MEMORY);
    ck_assert_str_eq(a.capture, "c.jcap");
    ck_assert_int_eq(a.prog_argc, 2);
    ck_assert_str_eq(a.prog_argv[0], "--profile");
}
END_TEST

START_TEST(percent_grammar)
{
    static const struct {
        const char *in;
        uint32_t bp;
    } good[] = {{"0", 0},       {"5", 500},        {"5.0", 500}, {"5.25", 525},
                {"100", 10000}, {"100.00", 10000}, {"0.01", 1},  {"007", 700}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        struct run_args a;
        char err[256];
        ck_assert_msg(
            parse(&a, err, "--profile", "--profile-threshold", good[i].in, "a.jett", NULL) == 0,
            "%s: %s", good[i].in, err);
        ck_assert_uint_eq(a.threshold_bp, good[i].bp);
    }
    static const char *const bad[] = {".5",  "5.", "+5", "1e1", "5.001", "100.01",
                                      "101", "-1", "",   "5,5", " 5",    "0x5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char want[256];
        snprintf(want, sizeof want,
                 "--profile-threshold expects a PERCENT from 0 to 100 with at most two "
                 "decimals (e.g. 5 or 2.5), not '%s'",
                 bad[i]);
        expect_error(want, "--profile", "--profile-threshold", bad[i], "a.jett", NULL);
    }
}
END_TEST

START_TEST(count_and_rate_ranges)
{
    expect_error("--profile-limit expects a COUNT from 1 to 100, not '0'", "--profile",
                 "--profile-limit", "0", "a.jett", NULL);
    expect_error("--profile-limit expects a COUNT from 1 to 100, not '101'", "--profile",
                 "--profile-limit", "101", "a.jett", NULL);
    expect_error("--profile-limit expects a COUNT from 1 to 100, not '1.5'", "--profile",
                 "--profile-limit", "1.5", "a.jett", NULL);
    expect_error("--profile-rate expects a rate in HZ from 1 to 1000, not '0'", "--profile",
                 "--profile-rate", "0", "a.jett", NULL);
    expect_error("--profile-rate expects a rate in HZ from 1 to 1000, not '1001'", "--profile",
                 "--profile-rate", "1001", "a.jett", NULL);
    expect_error("--profile-rate expects a rate in HZ from 1 to 1000", "a.jett", "--profile",
                 "--profile-rate", NULL);
    struct run_args a;
    char err[256];
    ck_assert_int_eq(parse(&a, err, "--profile", "--profile-rate", "1", "--profile-limit", "100",
                           "a.jett", NULL),
                     0);
    ck_assert_uint_eq(a.rate_hz, 1);
    ck_assert_uint_eq(a.limit, 100);
}
END_TEST

START_TEST(workers_range)
{
    struct run_args a;
    char err[256];
    ck_assert_int_eq(parse(&a, err, "a.jett", NULL), 0);
    ck_assert_uint_eq(a.workers, 0); /* the default: the CPUs, at most 8 */
    ck_assert_int_eq(parse(&a, err, "--workers", "64", "a.jett", NULL), 0);
    ck_assert_uint_eq(a.workers, 64);
    ck_assert_int_eq(parse(&a, err, "a.jett", "--profile-memory", "--workers", "1", NULL), 0);
    ck_assert_uint_eq(a.workers, 1);
    expect_error("--workers expects a number of worker threads from 1 to 64, not '0'", "--workers",
                 "0", "a.jett", NULL);
    expect_error("--workers expects a number of worker threads from 1 to 64, not '65'", "--workers",
                 "65", "a.jett", NULL);
    expect_error("--workers expects a number of worker threads from 1 to 64, not '+2'", "--workers",
                 "+2", "a.jett", NULL);
    expect_error("--workers expects a number of worker threads from 1 to 64", "a.jett", "--workers",
                 NULL);
    expect_error("--workers is given more than once", "--workers", "2", "--workers", "2", "a.jett",
                 NULL);
}
END_TEST

START_TEST(mode_rules)
{
    expect_error("--profile and --profile-memory cannot be used together", "--profile",
                 "--profile-memory", "a.jett", NULL);
    expect_error("--profile-threshold needs --profile or --profile-memory", "--profile-threshold",
                 "5", "a.jett", NULL);
    expect_error("--profile-limit needs --profile or --profile-memory", "a.jett", "--profile-limit",
                 "5", NULL);
    expect_error("--profile-capture needs --profile or --profile-memory", "a.jett",
                 "--profile-capture", "x", NULL);
    expect_error("--profile-rate needs --profile", "--profile-rate", "5", "a.jett", NULL);
    expect_error("--profile-rate applies to --profile only", "--profile-memory", "--profile-rate",
                 "5", "a.jett", NULL);
}
END_TEST

START_TEST(shape_errors)
{
    expect_error("--profile is given more than once", "--profile", "a.jett", "--profile", NULL);
    expect_error("--agent is given more than once", "--agent", "--agent", "a.jett", NULL);
    expect_error("--profile-limit is given more than once", "--profile", "--profile-limit", "2",
                 "--profile-limit", "2", "a.jett", NULL);
    expect_error("run: unknown option '--profiel' (did you mean --profile?)", "--profiel", "a.jett",
                 NULL);
    expect_error("run: unknown option '--profile-limit=3' (did you mean --profile-limit?)",
                 "--profile", "--profile-limit=3", "a.jett", NULL);
    expect_error("run: expected a program FILE.jett", "--profile", NULL);
    expect_error("run: the program FILE.jett is an empty string", "", NULL);
    expect_error("run: the program FILE.jett is an empty string", "--profile", "", NULL);
    expect_error("run: unexpected argument 'b.jett' (program arguments go after --)", "a.jett",
                 "b.jett", NULL);
}
END_TEST

Suite *run_args_suite(void)
{
    Suite *s = suite_create("run_args");
    TCase *t = tcase_create("run_args");
    tcase_add_test(t, defaults_and_order);
    tcase_add_test(t, percent_grammar);
    tcase_add_test(t, count_and_rate_ranges);
    tcase_add_test(t, workers_range);
    tcase_add_test(t, mode_rules);
    tcase_add_test(t, shape_errors);
    suite_add_tcase(s, t);
    return s;
}
