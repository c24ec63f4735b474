/* Fixture programs under fixtures/interp: each runs and its stdout (and,
 * for failing ones, its runtime error and trace) match the expected
 * files written next to it. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/interp_harness.h"

static char *read_fixture(const char *rel)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/fixtures/interp/%s", getenv("JETT_SOURCE_ROOT"), rel);
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", rel);
    static char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return strdup(buf);
}

static void run_fixture(const char *program, const char *out, const char *err, int code)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/fixtures/interp/%s", getenv("JETT_SOURCE_ROOT"), program);
    struct harness_run r;
    harness_run_file(&r, path, 0);
    ck_assert_msg(r.loaded, "%s", r.diags);
    char *want = read_fixture(out);
    ck_assert_str_eq(r.out, want);
    free(want);
    ck_assert_int_eq(r.result.exit_code, code);
    if (err != NULL) {
        char got[8192];
        snprintf(got, sizeof got, "%s\n%s", r.result.message, r.result.trace);
        want = read_fixture(err);
        ck_assert_str_eq(got, want);
        free(want);
    }
    harness_free(&r);
}

START_TEST(queens)
{
    run_fixture("queens.jett", "queens.out", NULL, 0);
}
END_TEST

START_TEST(wordcount_project)
{
    run_fixture("wordcount/src/main.jett", "wordcount/expected.out", NULL, 0);
}
END_TEST

START_TEST(runtime_error_trace)
{
    run_fixture("runtime_error.jett", "runtime_error.out", "runtime_error.err", 1);
}
END_TEST

Suite *fixtures_suite(void);
Suite *fixtures_suite(void)
{
    Suite *s = suite_create("fixtures");
    TCase *tc = tcase_create("fixtures");
    tcase_add_test(tc, queens);
    tcase_add_test(tc, wordcount_project);
    tcase_add_test(tc, runtime_error_trace);
    suite_add_tcase(s, tc);
    return s;
}
