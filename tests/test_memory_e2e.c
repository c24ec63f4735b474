/*
 * End-to-end tests of `jett run --profile-memory` through the real
 * binaries: the daemon's totals equal the heap observer's own exact
 * totals, hand-computed attribution, out-of-memory, the retention budget,
 * and every way the daemon can fail.
 */
#include <check.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "keeper_program.h"
#include "testutil.h"

/* Every total of the profile `doc` against the heap observer's (the file
 * JETT_TEST_HEAP_TOTALS named). */
static void compare_totals(const char *doc, const char *totals)
{
    tu_expect_heap_totals(doc, totals);
    ck_assert_int_gt(tu_profile_total(doc, "allocation_count"), 0);
}

/* Runs with JETT_TEST_HEAP_TOTALS and checks every total against the
 * heap observer's. */
static void check_totals_match(const char *prog)
{
    char totals[600];
    snprintf(totals, sizeof totals, "%s/heap.txt", tu_dir);
    setenv("JETT_TEST_HEAP_TOTALS", totals, 1);
    struct tu_output o;
    const char *argv[] = {tu_jett, "run", prog, "--profile-memory", "--agent", NULL};
    ck_assert_int_eq(tu_run(argv, NULL, 0, &o), 0);
    unsetenv("JETT_TEST_HEAP_TOTALS");
    ck_assert_msg(o.status == 0, "%s", o.out);
    compare_totals(o.out, totals);
    tu_output_free(&o);
}

static const char churn[] = "namespace churn\n"
                            "let kept = {}\n"
                            "fn words(n: int) -> list {\n"
                            "    let out = []\n"
                            "    for i in 0..n {\n"
                            "        push(out, \"w\" + str(i % 97))\n"
                            "    }\n"
                            "    return out\n"
                            "}\n"
                            "fn main() {\n"
                            "    for r in 0..20 {\n"
                            "        let ws = words(500)\n"
                            "        kept[str(r)] = ws[0]\n"
                            "        let s = \"\"\n"
                            "        for w in ws {\n"
                            "            s += w\n"
                            "        }\n"
                            "    }\n"
                            "}\n";

START_TEST(totals_equal_the_heap_observer)
{
    char *p = tu_program("churn.jett", churn);
    check_totals_match(p);
    free(p);
}
END_TEST

/* The daemon stops reading mid-run (SIGSTOP) until the program waits on
 * the full ring (its runtime thread sleeps in back-pressure), then goes
 * on: no heap event is lost, every total is exact.  Most of the events
 * fold (some 4 bytes an iteration): 1.6 million iterations are more than
 * the ring and the socket hold. */
START_TEST(paused_daemon_loses_no_event)
{
    char *p = tu_program("busy.jett", "namespace busy\n"
                                      "fn main() {\n"
                                      "    let kept = []\n"
                                      "    for i in 0..1600000 {\n"
                                      "        let s = \"w\" + str(i % 97)\n"
                                      "        if i % 4000 == 0 {\n"
                                      "            push(kept, s)\n"
                                      "        }\n"
                                      "    }\n"
                                      "}\n");
    char totals[600], out[600];
    snprintf(totals, sizeof totals, "%s/heap.txt", tu_dir);
    snprintf(out, sizeof out, "%s/paused.toon", tu_dir);
    setenv("JETT_TEST_HEAP_TOTALS", totals, 1);
    const char *argv[] = {tu_jett, "run", p, "--profile-memory", "--agent", NULL};
    pid_t pid = tu_spawn(argv, out);
    unsetenv("JETT_TEST_HEAP_TOTALS");
    pid_t d = tu_child_named(pid, "jett-profd");
    ck_assert_int_gt(d, 0);
    /* after the handshake: user code runs */
    ck_assert_int_eq(tu_wait_thread(pid, "jett-runtime", NULL), 0);
    ck_assert_int_eq(kill(d, SIGSTOP), 0);
    ck_assert_int_eq(tu_wait_thread(pid, "jett-runtime", "S"), 0);
    ck_assert_int_eq(kill(d, SIGCONT), 0);
    ck_assert_int_eq(tu_wait(pid), 0);
    size_t len;
    char *doc = tu_read_file(out, &len);
    ck_assert_ptr_nonnull(doc);
    ck_assert_msg(strstr(doc, "\n  status: complete\n"), "%s", doc);
    compare_totals(doc, totals);
    free(doc);
    free(p);
}
END_TEST

START_TEST(example_totals_equal_the_heap_observer)
{
    char *examples = tu_source_path("fixtures/programs");
    DIR *d = opendir(examples);
    int seen = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char main_file[1200];
        snprintf(main_file, sizeof main_file, "%s/%s/main.jett", examples, e->d_name);
        if (access(main_file, R_OK) != 0)
            continue;
        check_totals_match(main_file);
        seen++;
    }
    if (d)
        closedir(d);
    free(examples);
    ck_assert_int_ge(seen, 5); /* every example project */
}
END_TEST

/* Hand-computed from heap.h's sizes: `store = []` is a 32-byte list made
 * in <init>; the first push grows it to capacity 4 (32 + 64 = 96, a
 * 64-byte resize in remember); the strings are 24 + 1000 and 24 + 76.
 * Attributed 1220 bytes; remember allocated 64 + 1024 + 100 = 1188
 * (97.38%) and still holds its two strings, 1124 bytes (92.13%). */
START_TEST(retained_memory_is_credited_to_its_creator)
{
    char *p = tu_program("keep.jett", "namespace keep\n"
                                      "let store = []\n"
                                      "fn remember() {\n"
                                      "    push(store, repeat(\"ab\", 500))\n"
                                      "    push(store, repeat(\"c\", 76))\n"
                                      "}\n"
                                      "fn main() {\n"
                                      "    remember()\n"
                                      "}\n");
    struct tu_output o;
    const char *argv[] = {tu_jett, "run", p, "--profile-memory", "--agent", NULL};
    ck_assert_int_eq(tu_run(argv, NULL, 0, &o), 0);
    ck_assert_int_eq(o.status, 0);
    ck_assert_int_eq(tu_profile_total(o.out, "allocation_count"), 3);
    ck_assert_int_eq(tu_profile_total(o.out, "resize_count"), 1);
    ck_assert_int_eq(tu_profile_total(o.out, "allocated_bytes"), 1220);
    ck_assert_int_eq(tu_profile_total(o.out, "freed_bytes"), 0);
    ck_assert_int_eq(tu_profile_total(o.out, "retained_bytes"), 1220);
    ck_assert_int_eq(tu_profile_total(o.out, "attributed_allocated_bytes"), 1220);
    const char *b =
        strstr(o.out, "    - rank: 1\n      namespace: keep\n      function: remember\n");
    ck_assert_msg(b != NULL, "%s", o.out);
    ck_assert_ptr_nonnull(
        strstr(b, "      allocated_bytes: 1188\n      allocation_percent: 97.38\n"));
    ck_assert_ptr_nonnull(strstr(b, "      retained_bytes: 1124\n"));
    /* No comma or colon in the text: canonical TOON leaves it unquoted. */
    ck_assert_ptr_nonnull(strstr(b, "MEM_RETAINED,Review the lifetime of allocations created in "
                                    "keep.remember; 1124 bytes (92.13%) were still live at "
                                    "exit.\n"));
    tu_output_free(&o);
    free(p);
}
END_TEST

/* The Nth allocation fails: `out of memory`, no event for it, and the
 * profile of what happened before is complete. */
START_TEST(out_of_memory_emits_no_event)
{
    char *p = tu_program("oom.jett", "namespace oom\n"
                                     "fn main() {\n"
                                     "    let a = repeat(\"x\", 10)\n"
                                     "    let b = repeat(\"y\", 10)\n"
                                     "    let c = repeat(\"z\", 10)\n"
                                     "}\n");
    setenv("JETT_TEST_FAIL_ALLOC", "2", 1);
    struct tu_output o;
    const char *argv[] = {tu_jett, "run", p, "--profile-memory", "--agent", NULL};
    ck_assert_int_eq(tu_run(argv, NULL, 0, &o), 0);
    unsetenv("JETT_TEST_FAIL_ALLOC");
    ck_assert_int_eq(o.status, 1);
    ck_assert_ptr_nonnull(strstr(o.out, "out of memory"));
    ck_assert_ptr_nonnull(strstr(o.out, "\n  status: complete\n"));
    ck_assert_ptr_nonnull(strstr(o.out, "\n  termination: runtime_error\n"));
    /* Only the first string was made (34 bytes); it is freed as main unwinds. */
    ck_assert_int_eq(tu_profile_total(o.out, "allocation_count"), 1);
    ck_assert_int_eq(tu_profile_total(o.out, "allocated_bytes"), 34);
    tu_output_free(&o);
    free(p);
}
END_TEST

START_TEST(retention_budget_exhaustion_is_partial)
{
    char *p = tu_program("churn.jett", churn);
    setenv("JETT_TEST_RETENTION_BUDGET", "4096", 1);
    struct tu_output o;
    const char *argv[] = {tu_jett, "run", p, "--profile-memory", "--agent", NULL};
    ck_assert_int_eq(tu_run(argv, NULL, 0, &o), 0);
    unsetenv("JETT_TEST_RETENTION_BUDGET");
    ck_assert_int_eq(o.status, 0);
    ck_assert_msg(
        strstr(o.out, "\n  status: partial\n  partial_reason: retention_metadata_limit\n"), "%s",
        o.out);
    ck_assert_ptr_nonnull(strstr(o.out, "\n    freed_bytes: unavailable\n"));
    ck_assert_ptr_nonnull(strstr(o.out, "\n    retained_bytes: unavailable\n"));
    ck_assert_int_gt(tu_profile_total(o.out, "allocated_bytes"), 0);
    ck_assert_ptr_nonnull(strstr(o.out, "\n    retention_metadata_budget_bytes: 4096\n"));
    tu_output_free(&o);
    free(p);
}
END_TEST

/* hold() keeps 3000 strings live: more records than a 4096-byte
 * retention budget holds, so the profile is partial; later() and after()
 * allocate only afterwards, and the buckets come first (jett-profile(7),
 * Budgets): every function keeps its exact count and bytes, and the
 * report agrees with the collapsed export of its capture.  Sizes from
 * jett(1): a string 24 + its length, a list 32 + 16 a slot grown by push
 * to twice its capacity, at least 4.  str(i) for i in 0..3000 holds 10 x
 * 1 + 90 x 2 + 900 x 3 + 2000 x 4 = 10890 characters: hold() allocates
 * [] (32, line 3), and at line 5 the 3000 str(i) (72000 + 10890), the
 * 3000 "h" + str(i) (72000 + 13890) and the list's growth to 4096 slots
 * (16 x 4096 = 65536): 6001 allocations, 32 + 234316 = 234348 bytes.
 * later() (line 12) and after() (line 19), over 0..300 (10 + 180 + 600 =
 * 790 characters): 600 allocations, 7200 + 790 + 7200 + 1090 = 16280
 * bytes each. */

START_TEST(budget_keeps_every_function)
{
    char *p = tu_program("mem.jett", keeper_program), *cap = tu_tmp_path("mem.jcap");
    setenv("JETT_TEST_RETENTION_BUDGET", "4096", 1);
    struct tu_output o;
    const char *argv[] = {tu_jett,
                          "run",
                          p,
                          "--profile-memory",
                          "--profile-capture",
                          cap,
                          "--agent",
                          "--profile-threshold",
                          "0",
                          NULL};
    ck_assert_int_eq(tu_run(argv, NULL, 0, &o), 0);
    unsetenv("JETT_TEST_RETENTION_BUDGET");
    ck_assert_msg(o.status == 0, "%s", o.err);
    ck_assert_msg(strstr(o.out, "\n  partial_reason: retention_metadata_limit\n"), "%s", o.out);
    ck_assert_int_eq(tu_profile_total(o.out, "allocated_bytes"), 234348 + 2 * 16280);
    static const char *const want[] = {
        "      function: hold\n      path: mem.jett\n      line: 2\n"
        "      allocation_count: 6001\n      allocated_bytes: 234348\n",
        "        mem.jett,5,9,6000,234316,",
        "        mem.jett,3,5,1,32,",
        "      function: later\n      path: mem.jett\n      line: 9\n"
        "      allocation_count: 600\n      allocated_bytes: 16280\n",
        "        mem.jett,12,9,600,16280,",
        "      function: after\n      path: mem.jett\n      line: 16\n"
        "      allocation_count: 600\n      allocated_bytes: 16280\n",
        "        mem.jett,19,9,600,16280,",
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        ck_assert_msg(strstr(o.out, want[i]), "missing %s in %s", want[i], o.out);
    tu_output_free(&o);
    const char *bytes[] = {tu_jett, "profile", "export", cap, "--format", "collapsed", NULL};
    ck_assert_int_eq(tu_run(bytes, NULL, 0, &o), 0);
    ck_assert_str_eq(
        o.out, "mem.main;mem.after 16280\nmem.main;mem.hold 234348\nmem.main;mem.later 16280\n");
    tu_output_free(&o);
    const char *count[] = {tu_jett,     "profile",  "export", cap, "--format",
                           "collapsed", "--weight", "count",  NULL};
    ck_assert_int_eq(tu_run(count, NULL, 0, &o), 0);
    ck_assert_str_eq(o.out,
                     "mem.main;mem.after 600\nmem.main;mem.hold 6001\nmem.main;mem.later 600\n");
    tu_output_free(&o);
    free(cap), free(p);
}
END_TEST

/* The daemon is killed or stopped while the program allocates. */
static void daemon_fails(int daemon_signal, const char *ending, int jett_signal, int want,
                         const char *want_kind)
{
    char text[800];
    snprintf(text, sizeof text,
             "namespace m\n"
             "fn main() {\n"
             "    let t0 = now_ms()\n"
             "    while now_ms() - t0 < 1500 {\n"
             "        let s = str(now_ms()) + \"x\"\n"
             "    }\n"
             "    %s\n"
             "}\n",
             ending);
    char *p = tu_program("m.jett", text), out[600];
    snprintf(out, sizeof out, "%s/out.toon", tu_dir);
    const char *argv[] = {tu_jett, "run", p, "--profile-memory", "--agent", NULL};
    ck_assert_int_eq(tu_disturb_daemon(argv, out, daemon_signal, jett_signal), want);
    size_t len;
    char *doc = tu_read_file(out, &len);
    ck_assert_ptr_nonnull(doc);
    ck_assert_msg(strstr(doc, "\n  partial_reason: collector_failure\n"), "%s", doc);
    ck_assert_msg(strstr(doc, want_kind) != NULL, "%s", doc);
    free(doc);
    free(p);
}

START_TEST(daemon_killed_in_memory_mode)
{
    daemon_fails(SIGKILL, "return 0", 0, 4, "\nerror_kind: profiler_failure\n");
}
END_TEST

/* SIGSTOP: no progress for 5 s, the collector gives up, the program
 * finishes unblocked. */
START_TEST(daemon_stopped_back_pressure_times_out)
{
    daemon_fails(SIGSTOP, "return 0", 0, 4, "\nerror_kind: profiler_failure\n");
}
END_TEST

START_TEST(daemon_killed_then_runtime_error)
{
    daemon_fails(SIGKILL, "fail(\"late\")", 0, 1, "\nerror_kind: runtime_error\n");
}
END_TEST

START_TEST(daemon_killed_then_sigint)
{
    daemon_fails(SIGKILL, "return 0", SIGINT, 130, "\nerror_kind: interrupted\n");
}
END_TEST

/* Allocations at several statements of one frame, before and after a
 * call, keep their own lines (the agent reuses the interned stack while
 * no frame is pushed or popped, and must still follow the statement). */
START_TEST(allocation_lines_follow_the_statement)
{
    char *p = tu_program("lines.jett", "namespace lines\n"               /* 1 */
                                       "fn f() -> string {\n"            /* 2 */
                                       "    return repeat(\"b\", 10)\n"  /* 3 */
                                       "}\n"                             /* 4 */
                                       "fn main() {\n"                   /* 5 */
                                       "    let a = repeat(\"a\", 10)\n" /* 6 */
                                       "    let b = f()\n"               /* 7 */
                                       "    let c = repeat(\"c\", 20)\n" /* 8 */
                                       "}\n");
    char cap[600], cg[600];
    snprintf(cap, sizeof cap, "%s/lines.jcap", tu_dir);
    snprintf(cg, sizeof cg, "%s/lines.callgrind", tu_dir);
    struct tu_output o;
    const char *argv[] = {tu_jett, "run", p, "--profile-memory", "--profile-capture", cap, NULL};
    ck_assert_int_eq(tu_run(argv, NULL, 0, &o), 0);
    ck_assert_int_eq(o.status, 0);
    tu_output_free(&o);
    const char *exp[] = {tu_jett,     "profile", "export", cap, "--format",
                         "callgrind", "-o",      cg,       NULL};
    ck_assert_int_eq(tu_run(exp, NULL, 0, &o), 0);
    ck_assert_int_eq(o.status, 0);
    tu_output_free(&o);
    size_t len;
    char *text = tu_read_file(cg, &len);
    /* Strings are 24 + length bytes: 34 at line 6, 34 at line 3 in f
     * (reached from main's line 7), 44 at line 8. */
    ck_assert_msg(strstr(text, "fn=(1) lines.f\n3 34 1\n") != NULL, "%s", text);
    ck_assert_msg(strstr(text, "fn=(2) lines.main\n6 34 1\n8 44 1\n") != NULL, "%s", text);
    ck_assert_msg(strstr(text, "calls=1 2\n7 34 1\n") != NULL, "%s", text);
    free(text);
    free(p);
}
END_TEST

Suite *memory_e2e_suite(void)
{
    Suite *s = suite_create("memory_e2e");
    TCase *t = tcase_create("numbers");
    tcase_add_checked_fixture(t, tu_e2e_setup, tu_e2e_teardown);
    tcase_set_timeout(t, 120);
    tcase_add_test(t, totals_equal_the_heap_observer);
    tcase_add_test(t, example_totals_equal_the_heap_observer);
    tcase_add_test(t, paused_daemon_loses_no_event);
    tcase_add_test(t, retained_memory_is_credited_to_its_creator);
    tcase_add_test(t, out_of_memory_emits_no_event);
    tcase_add_test(t, retention_budget_exhaustion_is_partial);
    tcase_add_test(t, budget_keeps_every_function);
    tcase_add_test(t, allocation_lines_follow_the_statement);
    suite_add_tcase(s, t);
    t = tcase_create("failures");
    tcase_add_checked_fixture(t, tu_e2e_setup, tu_e2e_teardown);
    tcase_set_timeout(t, 120);
    tcase_add_test(t, daemon_killed_in_memory_mode);
    tcase_add_test(t, daemon_stopped_back_pressure_times_out);
    tcase_add_test(t, daemon_killed_then_runtime_error);
    tcase_add_test(t, daemon_killed_then_sigint);
    suite_add_tcase(s, t);
    return s;
}
