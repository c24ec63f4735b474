/*
 * End-to-end tests of `jett run --profile` / `--profile-memory` through the
 * real binaries: sampling semantics, terminations, daemon failures, setup
 * failures, captures and what may never appear in an output.
 */
#include <check.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

/* Writes a one-file program into the temp folder; returns its path. */
/* The unsigned value of "  key: N" in a TOON profile; -1 when absent. */
static long long field(const char *doc, const char *key)
{
    char pat[128];
    snprintf(pat, sizeof pat, "\n    %s: ", key);
    const char *p = strstr(doc, pat);
    return p ? atoll(p + strlen(pat)) : -1;
}

/* cpu_percent of the bottleneck whose function is `fn` (x100), or -1. */
static long bottleneck_percent(const char *doc, const char *fn)
{
    char pat[128];
    snprintf(pat, sizeof pat, "      function: %s\n", fn);
    const char *p = strstr(doc, pat);
    if (!p)
        return -1;
    p = strstr(p, "      cpu_percent: ");
    return p ? (long)(atof(p + 19) * 100 + 0.5) : -1;
}

static void run(const char *const *argv, struct tu_output *o)
{
    ck_assert_int_eq(tu_run(argv, NULL, 0, o), 0);
}

/* Requested ticks are exactly recorded + coalesced + dropped. */
static void check_tick_invariant(const char *doc)
{
    long long req = field(doc, "requested_ticks"), rec = field(doc, "recorded_samples"),
              coa = field(doc, "coalesced_ticks"), dro = field(doc, "dropped_ticks");
    ck_assert_int_ge(req, 0);
    ck_assert_int_eq(req, rec + coa + dro);
}

/* Equal wall time, one function in fewer, slower statements (a builtin
 * call building 1 kB, tens of times slower than `x += 1`, yet well below
 * the 1 ms tick even under sanitizers on a loaded machine, so that its
 * ticks do not coalesce) and one in many cheap statements: elapsed-time
 * sampling gives both about half, where counting statements would give
 * `fast` nearly everything.  On a loaded machine the ticks of one time
 * slice coalesce and the share of CPU the run gets changes from second to
 * second, so the halves take turns, 100 ms at a time, for 5 s in all. */
START_TEST(elapsed_time_not_statement_counts)
{
    char *p = tu_program("share.jett", "namespace share\n"
                                       "fn slow(ms: int) {\n"
                                       "    let t0 = now_ms()\n"
                                       "    while now_ms() - t0 < ms {\n"
                                       "        let s = repeat(\"ab\", 500)\n"
                                       "    }\n"
                                       "}\n"
                                       "fn fast(ms: int) {\n"
                                       "    let t0 = now_ms()\n"
                                       "    let x = 0\n"
                                       "    while now_ms() - t0 < ms {\n"
                                       "        x += 1\n"
                                       "    }\n"
                                       "}\n"
                                       "fn main() {\n"
                                       "    for i in 0..25 {\n"
                                       "        slow(100)\n"
                                       "        fast(100)\n"
                                       "    }\n"
                                       "}\n");
    struct tu_output o;
    const char *argv[] = {tu_jett, "run", p, "--profile", "--agent", NULL};
    run(argv, &o);
    ck_assert_int_eq(o.status, 0);
    long slow = bottleneck_percent(o.out, "slow"), fast = bottleneck_percent(o.out, "fast");
    ck_assert_msg(slow > 0 && fast > 0, "%s", o.out);
    ck_assert_msg(labs(slow - 5000) <= 500 && labs(fast - 5000) <= 500,
                  "slow %ld, fast %ld hundredths of a percent", slow, fast);
    check_tick_invariant(o.out);
    tu_output_free(&o);
    free(p);
}
END_TEST

/* sleep: one waiting sample per tick, never charged to the caller. */
START_TEST(waiting_samples_during_sleep)
{
    char *p = tu_program("nap.jett", "namespace nap\n"
                                     "fn doze() {\n"
                                     "    sleep(400)\n"
                                     "}\n"
                                     "fn main() {\n"
                                     "    doze()\n"
                                     "}\n");
    struct tu_output o;
    const char *argv[] = {tu_jett, "run", p, "--profile", "--profile-rate", "200", "--agent", NULL};
    run(argv, &o);
    ck_assert_int_eq(o.status, 0);
    /* 400 ms at 200 Hz: about 80 waiting ticks. */
    long long waiting = field(o.out, "waiting_samples");
    ck_assert_msg(waiting >= 60 && waiting <= 90, "waiting %lld\n%s", waiting, o.out);
    ck_assert_int_le(field(o.out, "attributed_samples"), 5);
    check_tick_invariant(o.out);
    tu_output_free(&o);
    free(p);
}
END_TEST

START_TEST(recursion_deeper_than_128_is_truncated)
{
    char *p = tu_program("deep.jett", "namespace deep\n"
                                      "fn down(n: int) -> int {\n"
                                      "    if n == 0 {\n"
                                      "        let x = 0\n"
                                      "        while x < 1000000 {\n"
                                      "            x += 1\n"
                                      "        }\n"
                                      "        return x\n"
                                      "    }\n"
                                      "    return down(n - 1)\n"
                                      "}\n"
                                      "fn main() {\n"
                                      "    down(300)\n"
                                      "}\n");
    struct tu_output o;
    const char *argv[] = {tu_jett, "run", p, "--profile", "--agent", NULL};
    run(argv, &o);
    ck_assert_int_eq(o.status, 0);
    /* Nearly every sample lands in the loop 301 frames deep: a fixed
     * amount of work (about 0.2 s of CPU), not of wall time, so that a
     * loaded machine still gives it many samples. */
    long long trunc = field(o.out, "truncated_stacks"), att = field(o.out, "attributed_samples");
    ck_assert_msg(trunc > 10 && trunc * 10 >= att * 9, "%lld of %lld\n%s", trunc, att, o.out);
    ck_assert_ptr_nonnull(strstr(o.out, "function: <truncated-stack>"));
    tu_output_free(&o);
    free(p);
}
END_TEST

START_TEST(runtime_error_keeps_partial_observations)
{
    char *p = tu_program("boom.jett", "namespace boom\n"
                                      "fn main() {\n"
                                      "    let t0 = now_ms()\n"
                                      "    while now_ms() - t0 < 500 {\n"
                                      "    }\n"
                                      "    fail(\"boom\")\n"
                                      "}\n");
    struct tu_output o;
    const char *argv[] = {tu_jett, "run", p, "--profile", "--agent", NULL};
    run(argv, &o);
    ck_assert_int_eq(o.status, 1);
    ck_assert_ptr_nonnull(strstr(o.out, "\n  termination: runtime_error\n"));
    ck_assert_ptr_nonnull(strstr(o.out, "\nerror_kind: runtime_error\n"));
    ck_assert_int_gt(field(o.out, "recorded_samples"), 10);
    tu_output_free(&o);
    free(p);
}
END_TEST

/* The daemon dies mid-run; the program finishes; `ending` decides how. */
static void daemon_killed(const char *ending, int signal_jett, int want_status,
                          const char *want_kind)
{
    char text[600];
    snprintf(text, sizeof text,
             "namespace k\n"
             "fn main() {\n"
             "    for i in 0..40 {\n"
             "        sleep(25)\n"
             "    }\n"
             "    %s\n"
             "}\n",
             ending);
    char *p = tu_program("k.jett", text), out[600];
    snprintf(out, sizeof out, "%s/out.toon", tu_dir);
    const char *argv[] = {tu_jett, "run", p, "--profile", "--agent", NULL};
    ck_assert_int_eq(tu_disturb_daemon(argv, out, SIGKILL, signal_jett), want_status);
    size_t len;
    char *doc = tu_read_file(out, &len);
    ck_assert_ptr_nonnull(strstr(doc, "\n  partial_reason: collector_failure\n"));
    ck_assert_msg(strstr(doc, want_kind) != NULL, "%s", doc);
    free(doc);
    free(p);
}

START_TEST(daemon_killed_alone_exits_4)
{
    daemon_killed("return 0", 0, 4,
                  "\nerror_kind: profiler_failure\nerror: \"profiler: collector failure\"");
}
END_TEST

START_TEST(daemon_killed_with_runtime_error_exits_1)
{
    daemon_killed("fail(\"late\")", 0, 1, "\nerror_kind: runtime_error\n");
}
END_TEST

START_TEST(daemon_killed_with_sigint_exits_130)
{
    daemon_killed("return 0", SIGINT, 130, "\nerror_kind: interrupted\n");
}
END_TEST

/* SIGTERM to the whole process group, as a service manager sends it: the
 * daemon ignores it and the launcher still finishes the profile. */
START_TEST(group_sigterm_finishes_the_profile)
{
    char *p = tu_program("term.jett", "namespace term\n"
                                      "fn main() {\n"
                                      "    while true {\n"
                                      "        sleep(10)\n"
                                      "    }\n"
                                      "}\n"),
         out[600];
    snprintf(out, sizeof out, "%s/out.toon", tu_dir);
    const char *argv[] = {tu_jett, "run", p, "--profile", "--agent", NULL};
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        if (!freopen(out, "w", stdout) || !freopen("/dev/null", "w", stderr))
            _exit(126);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    setpgid(pid, pid);
    ck_assert_int_gt(tu_child_named(pid, "jett-profd"), 0);
    ck_assert_int_eq(tu_wait_thread(pid, "jett-runtime", "S"), 0); /* in sleep() */
    kill(-pid, SIGTERM);
    ck_assert_int_eq(tu_wait(pid), 143);
    size_t len;
    char *doc = tu_read_file(out, &len);
    ck_assert_msg(strstr(doc, "\n  status: partial\n  partial_reason: interrupted\n"), "%s", doc);
    ck_assert_ptr_nonnull(strstr(doc, "\nerror: interrupted by SIGTERM"));
    free(doc);
    free(p);
}
END_TEST

START_TEST(sigint_finishes_an_interrupted_profile)
{
    char *p = tu_program("spin.jett", "namespace spin\n"
                                      "fn main() {\n"
                                      "    while true {\n"
                                      "        sleep(10)\n"
                                      "    }\n"
                                      "}\n"),
         out[600];
    snprintf(out, sizeof out, "%s/out.toon", tu_dir);
    const char *argv[] = {tu_jett, "run", p, "--profile", "--agent", NULL};
    pid_t pid = tu_spawn(argv, out);
    ck_assert_int_gt(tu_child_named(pid, "jett-profd"), 0);
    ck_assert_int_eq(tu_wait_thread(pid, "jett-runtime", "S"), 0); /* in sleep() */
    kill(pid, SIGINT);
    ck_assert_int_eq(tu_wait(pid), 130);
    size_t len;
    char *doc = tu_read_file(out, &len);
    ck_assert_msg(strstr(doc, "\n  status: partial\n  partial_reason: interrupted\n"), "%s", doc);
    ck_assert_ptr_nonnull(strstr(doc, "\n  termination: interrupted\n"));
    ck_assert_ptr_nonnull(strstr(doc, "\nerror_kind: interrupted\n"));
    free(doc);
    free(p);
}
END_TEST

/* Setup failures run no user code: the program would print first. */
START_TEST(unsupported_mode_runs_no_user_code)
{
    char *p = tu_program("hi.jett", "namespace hi\nfn main() {\n    print(\"user code ran\")\n}\n");
    struct tu_output o;
    setenv("JETT_TEST_WITHDRAW_CAPABILITY", "jett_heap_allocation_hooks", 1);
    const char *argv[] = {tu_jett, "run", p, "--profile-memory", "--agent", NULL};
    run(argv, &o);
    unsetenv("JETT_TEST_WITHDRAW_CAPABILITY");
    ck_assert_int_eq(o.status, 4);
    ck_assert_ptr_null(strstr(o.out, "user code ran"));
    ck_assert_ptr_nonnull(strstr(o.out, "\n  partial_reason: backend_unsupported\n"));
    ck_assert_ptr_nonnull(strstr(o.out, "\nerror_kind: profiler_unsupported\nerror: \"profiler: "
                                        "unsupported: missing capability "
                                        "jett_heap_allocation_hooks\""));
    tu_output_free(&o);
    free(p);
}
END_TEST

START_TEST(missing_daemon_is_a_setup_failure)
{
    char *p = tu_program("hi.jett", "namespace hi\nfn main() {\n    print(\"user code ran\")\n}\n");
    char lone[600], cmd[1400];
    snprintf(lone, sizeof lone, "%s/bin", tu_dir);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && cp '%s' '%s/jett'", lone, tu_jett, lone);
    ck_assert_int_eq(system(cmd), 0);
    strcat(lone, "/jett");
    struct tu_output o;
    const char *argv[] = {lone, "run", p, "--profile", NULL};
    run(argv, &o);
    ck_assert_int_eq(o.status, 4);
    ck_assert_str_eq(o.out, "");
    ck_assert_ptr_nonnull(strstr(o.err, "profiler: setup failure: jett-profd not found"));
    tu_output_free(&o);
    free(p);
}
END_TEST

/* A capture replays to the very profile the live run printed. */
START_TEST(capture_replays_to_the_same_bytes)
{
    char *p = tu_program("cap.jett", "namespace cap\n"
                                     "fn work() -> int {\n"
                                     "    let t0 = now_ms()\n"
                                     "    let x = 0\n"
                                     "    while now_ms() - t0 < 150 {\n"
                                     "        x += 1\n"
                                     "    }\n"
                                     "    return x\n"
                                     "}\n"
                                     "fn main() {\n"
                                     "    work()\n"
                                     "}\n"),
         cap[600];
    snprintf(cap, sizeof cap, "%s/run.jcap", tu_dir);
    struct tu_output live, again;
    const char *argv[] = {tu_jett, "run",     p,   "--profile", "--profile-capture",
                          cap,     "--agent", NULL};
    run(argv, &live);
    ck_assert_int_eq(live.status, 0);
    const char *rargv[] = {tu_profd, "replay", cap, "--agent", NULL};
    run(rargv, &again);
    ck_assert_int_eq(again.status, 0);
    const char *prof = strstr(live.out, "\nprofile:\n");
    ck_assert_ptr_nonnull(prof);
    /* The whole envelope is canonical TOON for the reference library. */
    char env_path[600];
    snprintf(env_path, sizeof env_path, "%s/live.toon", tu_dir);
    ck_assert_int_eq(tu_write_file(env_path, live.out, live.out_len - 1), 0); /* no final \n */
    char *checker = tu_source_path("tests/toon-check/toon-check");
    struct tu_output chk;
    const char *cargv[] = {checker, env_path, NULL};
    run(cargv, &chk);
    ck_assert_msg(chk.status == 0, "%s%s", chk.out, chk.err);
    tu_output_free(&chk);
    free(checker);
    /* The envelope ends with the profile (no error pair on success). */
    ck_assert_str_eq(prof + 1, again.out);
    tu_output_free(&live);
    tu_output_free(&again);
    free(p);
}
END_TEST

/* No absolute path, literal, comment or secret value in any output or
 * in the capture. */
START_TEST(nothing_secret_leaks)
{
    char *p = tu_program("leak.jett",
                         "namespace leak\n"
                         "// COMMENT-MARKER-1234\n"
                         "fn spin(k: secret<string>) -> int {\n"
                         "    let t0 = now_ms()\n"
                         "    let x = 0\n"
                         "    while now_ms() - t0 < 150 {\n"
                         "        let y = \"LITERAL-MARKER-5678\" /* BLOCK-MARKER-9 */\n"
                         "        x += 1\n"
                         "    }\n"
                         "    return x\n"
                         "}\n"
                         "fn main() {\n"
                         "    let token: secret<string> = env(\"JETT_LEAK_TOKEN\")\n"
                         "    spin(token)\n"
                         "}\n"),
         cap[600];
    snprintf(cap, sizeof cap, "%s/leak.jcap", tu_dir);
    setenv("JETT_LEAK_TOKEN", "SECRET-VALUE-4242", 1);
    static const char *const modes[] = {"--profile", "--profile-memory"};
    for (int m = 0; m < 2; m++)
        for (int agent = 0; agent < 2; agent++) {
            struct tu_output o;
            const char *argv[] = {
                tu_jett, "run", p, modes[m], "--profile-capture", cap, agent ? "--agent" : NULL,
                NULL};
            run(argv, &o);
            ck_assert_msg(o.status == 0, "%s\n%s", o.out, o.err);
            size_t cl;
            char *capbytes = tu_read_file(cap, &cl);
            const char *hay[3] = {o.out, o.err, capbytes};
            size_t lens[3] = {o.out_len, o.err_len, cl};
            static const char *const needles[] = {"COMMENT-MARKER", "LITERAL-MARKER",
                                                  "BLOCK-MARKER", "SECRET-VALUE", "/tmp/"};
            for (int h = 0; h < 3; h++)
                for (size_t n = 0; n < 5; n++)
                    ck_assert_msg(!memmem(hay[h], lens[h], needles[n], strlen(needles[n])),
                                  "%s found in %s (%s, agent %d)", needles[n],
                                  h == 2 ? "the capture"
                                  : h    ? "stderr"
                                         : "stdout",
                                  modes[m], agent);
            free(capbytes);
            tu_output_free(&o);
        }
    unsetenv("JETT_LEAK_TOKEN");
    free(p);
}
END_TEST

/* A signal that arrives while a large program is still loading stops it at
 * its first safe point instead of being lost. */
START_TEST(signal_during_load_is_kept)
{
    size_t cap = 8000 * 40 + 200, n = 0;
    char *text = malloc(cap);
    n += (size_t)snprintf(text + n, cap - n, "namespace big\n");
    for (int i = 0; i < 8000; i++)
        n += (size_t)snprintf(text + n, cap - n, "fn f%d() -> int {\n    return %d\n}\n", i, i);
    snprintf(text + n, cap - n, "fn main() {\n    while true {\n        sleep(10)\n    }\n}\n");
    char *p = tu_program("big.jett", text), out[600];
    free(text);
    snprintf(out, sizeof out, "%s/out.txt", tu_dir);
    const char *argv[] = {tu_jett, "run", p, NULL};
    pid_t pid = tu_spawn(argv, out);
    ck_assert_int_eq(tu_wait_handler(pid, "jett", SIGINT), 0); /* jett's, not the default */
    kill(pid, SIGINT);
    ck_assert_int_eq(tu_wait(pid), 130);
    free(p);
}
END_TEST

START_TEST(run_help_and_directory)
{
    struct tu_output o;
    const char *help[] = {tu_jett, "run", "--help", NULL};
    run(help, &o);
    ck_assert_int_eq(o.status, 0);
    ck_assert_ptr_nonnull(strstr(o.out, "usage: jett run FILE.jett"));
    tu_output_free(&o);
    const char *d[] = {tu_jett, "run", tu_dir, NULL};
    run(d, &o);
    ck_assert_int_eq(o.status, 2);
    ck_assert_ptr_nonnull(strstr(o.err, "is a directory, not a FILE.jett"));
    tu_output_free(&o);
}
END_TEST

Suite *profile_e2e_suite(void)
{
    Suite *s = suite_create("profile_e2e");
    TCase *t = tcase_create("cpu");
    tcase_add_checked_fixture(t, tu_e2e_setup, tu_e2e_teardown);
    tcase_set_timeout(t, 120);
    tcase_add_test(t, elapsed_time_not_statement_counts);
    tcase_add_test(t, waiting_samples_during_sleep);
    tcase_add_test(t, recursion_deeper_than_128_is_truncated);
    tcase_add_test(t, runtime_error_keeps_partial_observations);
    tcase_add_test(t, sigint_finishes_an_interrupted_profile);
    tcase_add_test(t, group_sigterm_finishes_the_profile);
    suite_add_tcase(s, t);
    t = tcase_create("failures");
    tcase_add_checked_fixture(t, tu_e2e_setup, tu_e2e_teardown);
    tcase_set_timeout(t, 120);
    tcase_add_test(t, daemon_killed_alone_exits_4);
    tcase_add_test(t, daemon_killed_with_runtime_error_exits_1);
    tcase_add_test(t, daemon_killed_with_sigint_exits_130);
    tcase_add_test(t, unsupported_mode_runs_no_user_code);
    tcase_add_test(t, missing_daemon_is_a_setup_failure);
    suite_add_tcase(s, t);
    t = tcase_create("launcher");
    tcase_add_checked_fixture(t, tu_e2e_setup, tu_e2e_teardown);
    tcase_set_timeout(t, 60);
    tcase_add_test(t, signal_during_load_is_kept);
    tcase_add_test(t, run_help_and_directory);
    suite_add_tcase(s, t);
    t = tcase_create("outputs");
    tcase_add_checked_fixture(t, tu_e2e_setup, tu_e2e_teardown);
    tcase_set_timeout(t, 120);
    tcase_add_test(t, capture_replays_to_the_same_bytes);
    tcase_add_test(t, nothing_secret_leaks);
    suite_add_tcase(s, t);
    return s;
}
