/*
 * End-to-end tests of `jett run` on hostile sources: flat chains as long
 * as the parser accepts and one link longer, plain and profiled, and deep
 * recursion through the deepest trees (the runtime stack's margin).
 *
 * The limits are worked out by hand from jett(1), LIMITS: a tree has at
 * most 1000 levels, a leaf counts 1, every operator, call, index,
 * statement and block one more.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* A growable source text. */
struct text {
    char *s;
    size_t len, cap;
};

static void put(struct text *t, const char *s)
{
    size_t n = strlen(s);
    if (t->len + n + 1 > t->cap) {
        t->cap = (t->len + n + 1) * 2;
        t->s = realloc(t->s, t->cap);
        ck_assert_ptr_nonnull(t->s);
    }
    memcpy(t->s + t->len, s, n + 1);
    t->len += n;
}

static void put_n(struct text *t, const char *s, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        put(t, s);
}

enum chain { CHAIN_ADD, CHAIN_AND, CHAIN_CALL, CHAIN_INDEX };

/* A program whose main does `let x = CHAIN` with `links` operators,
 * calls or indexes, then prints x.  The tree: block, let, then the chain
 * (links + 1 levels), so links + 3 levels in all; main is on line 6. */
static char *chain_program(enum chain c, unsigned links)
{
    struct text t = {0};
    put(&t, "namespace hostile.chain\nfn f() {\n  return f\n}\n\nfn main() {\n  let x = ");
    switch (c) {
    case CHAIN_ADD:
        put(&t, "1");
        put_n(&t, "+1", links);
        break;
    case CHAIN_AND:
        put(&t, "true");
        put_n(&t, " && true", links);
        break;
    case CHAIN_CALL:
        put(&t, "f");
        put_n(&t, "()", links);
        break;
    case CHAIN_INDEX:
        put(&t, "\"a\"");
        put_n(&t, "[0]", links);
        break;
    }
    put(&t, "\n  print(x)\n}\n");
    char *path = tu_write_program(tu_dir, "main.jett", t.s);
    ck_assert_ptr_nonnull(path);
    free(t.s);
    return path;
}

/* What main prints for each chain: 1 + links ones, true, f, "a". */
static void expect_printed(enum chain c, unsigned links, const struct tu_output *o)
{
    char want[64];
    if (c == CHAIN_ADD)
        snprintf(want, sizeof want, "%u\n", links + 1);
    else
        snprintf(want, sizeof want, "%s\n",
                 c == CHAIN_AND    ? "true"
                 : c == CHAIN_CALL ? "<fn f>"
                                   : "a");
    ck_assert_str_eq(o->out, want);
}

/* The largest chain of each shape runs, plain and profiled; one link more
 * is a compile error at the statement (line 7, column 3), exit 3. */
START_TEST(longest_chain_and_one_past)
{
    static const char *const modes[] = {NULL, "--profile", "--profile-memory"};
    enum chain c = (enum chain)_i;
    unsigned largest = 1000 - 3;
    for (int m = 0; m < 3; m++) {
        struct tu_output o;
        char *path = chain_program(c, largest);
        int st = tu_run_jett(&o, "run", path, modes[m], NULL);
        ck_assert_msg(st == 0, "shape %d mode %d: exit %d\n%s", c, m, st, o.err);
        expect_printed(c, largest, &o);
        tu_output_free(&o);
        free(path);

        path = chain_program(c, largest + 1);
        st = tu_run_jett(&o, "run", path, modes[m], NULL);
        ck_assert_msg(st == 3, "shape %d mode %d: exit %d\n%s", c, m, st, o.err);
        ck_assert_str_eq(
            o.err, "main.jett:7:3: error: expression or block too deep: more than 1000 levels\n");
        tu_output_free(&o);
        free(path);
    }
}
END_TEST

/* 150,000 links (the size that crashed the checker) are refused where
 * the chain itself passes 1000 levels: at its 1000th link. */
START_TEST(very_long_chain_refused)
{
    enum chain c = (enum chain)_i;
    /* The chain starts at column 11 ("  let x = " before it); the error
     * is at the last token of the 1000th link, after 999 whole links:
     * "+1" the 1 (13), " && true" the true (19), "()" the ')' (13),
     * "[0]" the ']' (16 after the 3 columns of "a"). */
    static const unsigned column[] = {13 + 2 * 999, 19 + 8 * 999, 13 + 2 * 999, 16 + 3 * 999};
    char *path = chain_program(c, 150000);
    for (int profiled = 0; profiled < 2; profiled++) {
        struct tu_output o;
        int st = tu_run_jett(&o, "run", path, profiled ? "--profile" : NULL, NULL);
        ck_assert_msg(st == 3, "shape %d: exit %d\n%s", c, st, o.err);
        char want[128];
        snprintf(want, sizeof want,
                 "main.jett:7:%u: error: expression or block too deep: more than 1000 levels\n",
                 column[c]);
        ck_assert_str_eq(o.err, want);
        tu_output_free(&o);
    }
    free(path);
}
END_TEST

/* Recursion through the deepest call chain (the evaluator's costliest
 * level): each deep() evaluates g()()...() of 997 links, and the
 * innermost g() calls deep() again.  The runtime stack runs out before
 * 10000 calls; that is a runtime error, never a crash. */
START_TEST(deep_recursion_through_deepest_trees)
{
    struct text t = {0};
    put(&t, "namespace hostile.deep\nfn g() {\n  deep()\n  return g\n}\n"
            "fn deep() {\n  return g");
    put_n(&t, "()", 1000 - 3);
    put(&t, "\n}\nfn main() {\n  deep()\n}\n");
    char *path = tu_write_program(tu_dir, "main.jett", t.s);
    free(t.s);
    for (int profiled = 0; profiled < 2; profiled++) {
        struct tu_output o;
        int st = tu_run_jett(&o, "run", path, profiled ? "--profile" : NULL, NULL);
        ck_assert_msg(st == 1, "exit %d\n%.2000s", st, o.err);
        ck_assert_msg(
            strstr(o.err, "runtime error: stack overflow: the runtime stack is exhausted\n"),
            "%.2000s", o.err);
        tu_output_free(&o);
    }
    free(path);
}
END_TEST

/* Unbounded recursion stops at 10000 calls; its trace folds the 9,999
 * identical frames of f into ten lines and one count. */
START_TEST(stack_overflow_trace_is_folded)
{
    char *path = tu_write_program(tu_dir, "main.jett",
                                  "namespace hostile.deep\nfn f() {\n  f()\n}\n"
                                  "fn main() {\n  f()\n}\n");
    struct tu_output o;
    ck_assert_int_eq(tu_run_jett(&o, "run", path, NULL), 1);
    struct text want = {0};
    put(&want, "main.jett:3:3: runtime error: stack overflow: more than 10000 nested calls\n");
    put_n(&want, "  at hostile.deep.f (main.jett:3:3)\n", 10);
    put(&want, "  \u2026 9,989 more frames of hostile.deep.f\n"
               "  at hostile.deep.main (main.jett:6:3)\n");
    ck_assert_str_eq(o.err, want.s);
    free(want.s);
    tu_output_free(&o);
    free(path);
}
END_TEST

/* An empty program path is a usage error (exit 2), not a missing file
 * (a compile error, exit 3); so is its envelope with --agent. */
START_TEST(empty_program_path_is_usage_error)
{
    struct tu_output o;
    ck_assert_int_eq(tu_run_jett(&o, "run", "", NULL), 2);
    ck_assert_str_eq(o.err, "jett: run: the program FILE.jett is an empty string\n");
    ck_assert_str_eq(o.out, "");
    tu_output_free(&o);
    ck_assert_int_eq(tu_run_jett(&o, "run", "", "--agent", NULL), 2);
    ck_assert_ptr_nonnull(strstr(o.out, "\nexit_code: 2\n"));
    ck_assert_ptr_nonnull(strstr(o.out, "\nerror_kind: usage_error\n"));
    tu_output_free(&o);
}
END_TEST

/* A capture damaged in its first frame: `jett profile replay` says what
 * is wrong with it, in the words of `jett-profd replay`, and exits 1
 * (there is no HELLO, so no profile). */
START_TEST(replay_of_capture_damaged_in_first_frame)
{
    static const struct {
        const char *bytes;
        size_t len;
        const char *error;
    } damaged[] = {
        {"JETTCAP1\xff\xff\xff\xff\x00\x01", 14,
         "byte 8: frame length 4294967295 is over the 4 MiB limit"},
        {"JETTCAP1\x00\x00\x00", 11, "byte 8: frame header cut short: 3 of 4 bytes present"},
    };
    char *path = tu_write_program(tu_dir, "damaged.jcap", "");
    for (size_t i = 0; i < sizeof damaged / sizeof damaged[0]; i++) {
        ck_assert_int_eq(tu_write_file(path, damaged[i].bytes, damaged[i].len), 0);
        char want[512];
        struct tu_output o;
        ck_assert_int_eq(tu_run_jett(&o, "profile", "replay", path, NULL), 1);
        snprintf(want, sizeof want, "jett: %s: %s\n", path, damaged[i].error);
        ck_assert_str_eq(o.err, want);
        ck_assert_str_eq(o.out, "");
        tu_output_free(&o);
        const char *argv[] = {tu_profd, "replay", path, NULL};
        ck_assert_int_eq(tu_run(argv, NULL, 0, &o), 0);
        ck_assert_int_eq(o.status, 1);
        snprintf(want, sizeof want, "jett-profd: %s: %s\n", path, damaged[i].error);
        ck_assert_str_eq(o.err, want);
        tu_output_free(&o);
    }
    free(path);
}
END_TEST

/* JETT_TEST_FAIL_ALLOC is read by the one parser every runner uses:
 * digits only, from 1.  "1x", "-1" and "0" fail nothing; "1" fails the
 * first allocation, the concatenation on line 4. */
START_TEST(fail_alloc_switch_parsed_once)
{
    char *path = tu_write_program(tu_dir, "main.jett",
                                  "namespace hostile.alloc\nfn main() {\n  let a = \"x\"\n"
                                  "  print(a + a)\n}\n");
    static const char *const ignored[] = {"1x", "-1", "0", " 1"};
    for (size_t i = 0; i < sizeof ignored / sizeof ignored[0]; i++) {
        ck_assert_int_eq(setenv("JETT_TEST_FAIL_ALLOC", ignored[i], 1), 0);
        struct tu_output o;
        ck_assert_msg(tu_run_jett(&o, "run", path, NULL) == 0, "'%s': %s", ignored[i], o.err);
        ck_assert_str_eq(o.out, "xx\n");
        tu_output_free(&o);
    }
    ck_assert_int_eq(setenv("JETT_TEST_FAIL_ALLOC", "1", 1), 0);
    struct tu_output o;
    ck_assert_int_eq(tu_run_jett(&o, "run", path, NULL), 1);
    ck_assert_str_eq(o.err, "main.jett:4:9: runtime error: out of memory\n"
                            "  at hostile.alloc.main (main.jett:4:9)\n");
    tu_output_free(&o);
    unsetenv("JETT_TEST_FAIL_ALLOC");
    free(path);
}
END_TEST

Suite *hostile_e2e_suite(void);
Suite *hostile_e2e_suite(void)
{
    Suite *s = suite_create("hostile_e2e");
    TCase *tc = tcase_create("chains");
    tcase_add_checked_fixture(tc, tu_e2e_setup, tu_e2e_teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, longest_chain_and_one_past, CHAIN_ADD, CHAIN_INDEX + 1);
    tcase_add_loop_test(tc, very_long_chain_refused, CHAIN_ADD, CHAIN_INDEX + 1);
    tcase_add_test(tc, deep_recursion_through_deepest_trees);
    tcase_add_test(tc, stack_overflow_trace_is_folded);
    suite_add_tcase(s, tc);
    TCase *args = tcase_create("arguments");
    tcase_add_checked_fixture(args, tu_e2e_setup, tu_e2e_teardown);
    tcase_add_test(args, empty_program_path_is_usage_error);
    tcase_add_test(args, replay_of_capture_damaged_in_first_frame);
    tcase_add_test(args, fail_alloc_switch_parsed_once);
    suite_add_tcase(s, args);
    return s;
}
