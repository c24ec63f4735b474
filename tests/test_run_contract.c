/*
 * End-to-end checks of clauses of the profiling contract that span the
 * launcher, the interpreter and the daemon: nested secret and literal
 * spans, the run manifest checked before main, collector failures in the
 * envelope, the launcher's own fallback profile, probed capabilities,
 * NUL bytes in debug rows and logs, and reports without wire ids.  Every
 * expected value is worked out from the program text in the test.
 */
#include <check.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static void run(const char *const *argv, struct tu_output *o)
{
    ck_assert_int_eq(tu_run(argv, NULL, 0, o), 0);
}

static bool has(const struct tu_output *o, const char *needle)
{
    return strstr(o->out, needle) != NULL;
}

/* JETT.md's own secret example, on the hot line of a loop: the secret
 * span `env("API_TOKEN")` holds the literal span `"API_TOKEN"`.  The
 * profile is complete in both modes, and the CPU hot line of line 6 is
 * the line with the whole secret expression replaced (the literal inside
 * goes with it): `let token: secret<string> = <secret-expression>`. */
START_TEST(secret_expression_holding_a_literal)
{
    char *p = tu_program("sec.jett", "namespace sec\n"
                                     "fn main() {\n"
                                     "    let t0 = now_ms()\n"
                                     "    let n = 0\n"
                                     "    while now_ms() - t0 < 300 {\n"
                                     "        let token: secret<string> = env(\"API_TOKEN\")\n"
                                     "        n += 1\n"
                                     "    }\n"
                                     "}\n");
    setenv("API_TOKEN", "TOKEN-VALUE-77", 1);
    static const char *const modes[] = {"--profile", "--profile-memory"};
    for (int m = 0; m < 2; m++) {
        struct tu_output o;
        const char *argv[] = {tu_jett, "run",     p,   modes[m], "--profile-threshold",
                              "0",     "--agent", NULL};
        run(argv, &o);
        ck_assert_msg(o.status == 0, "%s\n%s", o.out, o.err);
        ck_assert_msg(has(&o, "\n  status: complete\n  termination: returned\n"), "%s", o.out);
        ck_assert(!has(&o, "TOKEN-VALUE") && !has(&o, "API_TOKEN"));
        if (m == 0)
            ck_assert_msg(
                has(&o, ",6,9,") &&
                    has(&o, ",\"let token: secret<string> = <secret-expression>\",true\n"),
                "%s", o.out);
        tu_output_free(&o);
    }
    unsetenv("API_TOKEN");
    free(p);
}
END_TEST

/* The daemon refuses FINISH (a test knob makes it claim one requested
 * tick more than recorded + coalesced + dropped) after the program
 * returned: the envelope says status error, profiler_failure, exit 4.
 * A runtime error keeps its own status and error. */
START_TEST(collector_failure_found_by_the_daemon)
{
    char *ok = tu_program("ok.jett", "namespace ok\nfn main() {\n    print(\"done\")\n}\n");
    char *bad = tu_program("bad.jett", "namespace bad\nfn main() {\n    fail(\"late\")\n}\n");
    setenv("JETT_TEST_SKEW_FINISH", "1", 1);
    struct tu_output o;
    const char *argv[] = {tu_jett, "run", ok, "--profile", "--agent", NULL};
    run(argv, &o);
    ck_assert_int_eq(o.status, 4);
    ck_assert_msg(!strncmp(o.out,
                           "schema: jett.run.v1\nstatus: error\ntermination: returned\n"
                           "exit_code: 4\nstdout: \"done\\n\"\n",
                           76),
                  "%s", o.out);
    ck_assert(has(&o, "\n  status: partial\n  partial_reason: collector_failure\n"));
    ck_assert(has(&o, "\nerror_kind: profiler_failure\nerror: \"profiler: collector failure\"\n"));
    tu_output_free(&o);
    const char *human[] = {tu_jett, "run", ok, "--profile", NULL};
    run(human, &o);
    ck_assert_int_eq(o.status, 4);
    ck_assert_str_eq(o.out, "done\n");
    ck_assert_msg(strstr(o.err, "CPU profile\ntime: ") &&
                      strstr(o.err, "\nstatus: partial (collector_failure)") &&
                      strstr(o.err, "\njett: profiler: collector failure\n"),
                  "%s", o.err);
    tu_output_free(&o);
    const char *rt[] = {tu_jett, "run", bad, "--profile", "--agent", NULL};
    run(rt, &o);
    ck_assert_int_eq(o.status, 1);
    ck_assert(has(&o, "\n  partial_reason: collector_failure\n"));
    ck_assert(has(&o, "\nerror_kind: runtime_error\n"));
    tu_output_free(&o);
    unsetenv("JETT_TEST_SKEW_FINISH");
    free(ok), free(bad);
}
END_TEST

/* The profile between "\nprofile:\n" and the error pair, as a string. */
static char *profile_of(const char *doc)
{
    const char *p = strstr(doc, "\nprofile:\n"), *e = p ? strstr(p, "\nerror_kind: ") : NULL;
    ck_assert_ptr_nonnull(e);
    return strndup(p + 1, (size_t)(e - p));
}

/* The unsigned value of "    key: N" (a total); -1 when it is not a
 * number. */
static long long total(const char *doc, const char *key)
{
    char pat[128];
    snprintf(pat, sizeof pat, "\n    %s: ", key);
    const char *p = strstr(doc, pat);
    return p && p[strlen(pat)] >= '0' && p[strlen(pat)] <= '9' ? atoll(p + strlen(pat)) : -1;
}

/* Only the launcher's numbers: the daemon was killed 200 ms in, so what
 * is left is config, requested and coalesced ticks, wall and process CPU
 * time; every other count is unavailable, none is omitted. */
static const char fallback_shape[] =
    "profile:\n  schema: jett.profile.v1\n  mode: cpu\n  status: unavailable\n"
    "  partial_reason: collector_failure\n  termination: returned\n"
    "  backend: interpreter_safe_point\n  coverage: jett_runtime_threads\n  config:\n"
    "    requested_rate_hz: 100\n    threshold_basis_points: 500\n    limit: 10\n"
    "    cpu_metadata_budget_bytes: 33554432\n  totals:\n    requested_ticks: #\n"
    "    recorded_samples: unavailable\n    attributed_samples: unavailable\n"
    "    runtime_samples: unavailable\n    waiting_samples: unavailable\n"
    "    unavailable_samples: unavailable\n    coalesced_ticks: #\n"
    "    dropped_ticks: unavailable\n    truncated_stacks: unavailable\n"
    "    observed_rate_hz: unavailable\n    wall_ms: #\n    process_cpu_ms: #\n"
    "  bottlenecks: []\n  eligible_bottlenecks: unavailable\n  emitted_bottlenecks: 0\n"
    "  truncated_bottlenecks: unavailable\n  leads: unavailable\n  waiting: unavailable\n"
    "  capabilities:\n    cpu_tick_source: true\n"
    "    safe_stack_capture: true\n    jett_runtime_thread_registration: true\n"
    "    task_attribution: false\n    source_spans: true\n    process_cpu_time: true\n"
    "    jett_heap_allocation_hooks: true\n    free_and_resize_events: true\n";

/* doc matches the shape where '#' stands for a decimal number. */
static bool shaped(const char *doc, const char *shape)
{
    for (; *shape; shape++) {
        if (*shape != '#') {
            if (*doc++ != *shape)
                return false;
            continue;
        }
        if (*doc < '0' || *doc > '9')
            return false;
        while (*doc >= '0' && *doc <= '9')
            doc++;
    }
    return *doc == 0;
}

START_TEST(fallback_profile_has_every_field)
{
    char *p = tu_program("k.jett", "namespace k\nfn main() {\n    for i in 0..40 {\n"
                                   "        sleep(25)\n    }\n}\n");
    char out[600], err[600], cmd[1600];
    snprintf(out, sizeof out, "%s/out.toon", tu_dir);
    const char *argv[] = {tu_jett, "run", p, "--profile", "--profile-rate", "100", "--agent", NULL};
    ck_assert_int_eq(tu_disturb_daemon(argv, out, SIGKILL, 0), 4);
    size_t len;
    char *doc = tu_read_file(out, &len), *prof = profile_of(doc);
    ck_assert_msg(shaped(prof, fallback_shape), "%s", prof);
    /* 40 sleeps of 25 ms: at least 1000 ms.  At 100 Hz the timer's gaps
     * are drawn uniformly from [5 ms, 15 ms), 10 ms on average with a
     * standard deviation of 10 / sqrt(12) ms, so ~100 ticks in the run
     * number wall / 10 give or take sqrt(100 / 12) ~= 2.9: 16 more is
     * over five deviations (+1 for the rounding of wall_ms).  At least
     * the ticks of the sleeps less what a loaded machine may delay the
     * timer's last wake-up by. */
    long long wall = total(prof, "wall_ms"), ticks = total(prof, "requested_ticks");
    ck_assert_int_ge(wall, 1000);
    ck_assert_int_le(ticks, wall / 10 + 17);
    ck_assert_int_ge(ticks, 50);
    /* canonical TOON for the reference library (no final newline) */
    snprintf(cmd, sizeof cmd, "%s/env.toon", tu_dir);
    size_t n = strlen(doc);
    ck_assert_int_eq(tu_write_file(cmd, doc, n && doc[n - 1] == '\n' ? n - 1 : n), 0);
    char *checker = tu_source_path("tests/toon-check/toon-check");
    struct tu_output chk;
    const char *cargv[] = {checker, cmd, NULL};
    run(cargv, &chk);
    ck_assert_msg(chk.status == 0, "%s%s", chk.out, chk.err);
    tu_output_free(&chk), free(checker), free(doc), free(prof);
    /* the human report: heading, status, config and totals on stderr */
    snprintf(err, sizeof err, "%s/err.txt", tu_dir);
    snprintf(cmd, sizeof cmd, "exec \"$0\" run \"$1\" --profile --profile-rate 100 2>'%s'", err);
    const char *hargv[] = {"/bin/sh", "-c", cmd, tu_jett, p, NULL};
    ck_assert_int_eq(tu_disturb_daemon(hargv, out, SIGKILL, 0), 4);
    char *text = tu_read_file(err, &len);
    static const char head[] = "CPU profile\ntime: unavailable\n"
                               "status: unavailable (collector_failure), "
                               "termination: returned\n";
    ck_assert_msg(!strncmp(text, head, sizeof head - 1), "%s", text);
    ck_assert_msg(strstr(text, "\nlook first: unavailable\n") &&
                      strstr(text, "\nbackend: interpreter_safe_point, "
                                   "coverage: jett_runtime_threads\n"),
                  "%s", text);
    ck_assert_msg(strstr(text, "\n  recorded samples      unavailable\n") &&
                      strstr(text, "\nbottlenecks: unavailable eligible, 0 emitted, unavailable "
                                   "truncated\n") &&
                      strstr(text, " ms\njett: profiler: collector failure\n"),
                  "%s", text);
    free(text);
    /* memory mode: the launcher counts no memory totals of its own */
    const char *margv[] = {tu_jett, "run", p, "--profile-memory", "--agent", NULL};
    ck_assert_int_eq(tu_disturb_daemon(margv, out, SIGKILL, 0), 4);
    doc = tu_read_file(out, &len);
    ck_assert_msg(strstr(doc, "\n  status: unavailable\n  partial_reason: collector_failure\n"
                              "  termination: returned\n  backend: interpreter_alloc_hooks\n"
                              "  coverage: jett_heap\n  config:\n    threshold_basis_points: 500\n"
                              "    limit: 10\n    retention_metadata_budget_bytes: 67108864\n"
                              "  totals:\n    allocation_count: unavailable\n"
                              "    resize_count: unavailable\n    allocated_bytes: unavailable\n"
                              "    freed_bytes: unavailable\n    peak_live_bytes: unavailable\n"
                              "    retained_bytes: unavailable\n"
                              "    attributed_allocated_bytes: unavailable\n  bottlenecks: []\n"
                              "  eligible_bottlenecks: unavailable\n  emitted_bottlenecks: 0\n"
                              "  truncated_bottlenecks: unavailable\n  leads: unavailable\n"
                              "  retained_status: unavailable\n  retained: unavailable\n"
                              "  capabilities:\n"),
                  "%s", doc);
    free(doc), free(p);
}
END_TEST

/* Capabilities are probed; a withdrawn process_cpu_time makes
 * process_cpu_ms unavailable (and the capability false) while the rest
 * of the profile stays complete. */
START_TEST(process_cpu_time_withdrawn)
{
    char *p = tu_program("c.jett", "namespace c\nfn main() {\n    let t0 = now_ms()\n"
                                   "    while now_ms() - t0 < 50 {\n    }\n}\n");
    const char *argv[] = {tu_jett, "run", p, "--profile", "--agent", NULL};
    struct tu_output o;
    run(argv, &o);
    ck_assert_int_eq(o.status, 0);
    ck_assert_int_ge(total(o.out, "process_cpu_ms"), 0);
    ck_assert(has(&o, "\n    process_cpu_time: true\n"));
    tu_output_free(&o);
    setenv("JETT_TEST_WITHDRAW_CAPABILITY", "process_cpu_time", 1);
    run(argv, &o);
    unsetenv("JETT_TEST_WITHDRAW_CAPABILITY");
    ck_assert_int_eq(o.status, 0);
    ck_assert(has(&o, "\n  status: complete\n"));
    ck_assert_msg(has(&o, "\n    process_cpu_ms: unavailable\n"), "%s", o.out);
    ck_assert(has(&o, "\n    process_cpu_time: false\n"));
    tu_output_free(&o);
    free(p);
}
END_TEST

/* Collection that cannot start is a setup failure: exit 4, the
 * pre-execution envelope, and neither the namespace initializer nor main
 * runs. */
START_TEST(profiler_start_failure_runs_no_user_code)
{
    char *p = tu_program("s.jett", "namespace s\nlet g = init()\nfn init() -> int {\n"
                                   "    print(\"init ran\")\n    return 1\n}\n"
                                   "fn main() {\n    print(\"main ran\")\n}\n");
    setenv("JETT_TEST_FAIL_PROFILER_START", "1", 1);
    static const char *const modes[] = {"--profile", "--profile-memory"};
    for (int m = 0; m < 2; m++) {
        struct tu_output o;
        const char *argv[] = {tu_jett, "run", p, modes[m], "--agent", NULL};
        run(argv, &o);
        ck_assert_int_eq(o.status, 4);
        ck_assert_msg(!strncmp(o.out,
                               "schema: jett.run.v1\nstatus: error\n"
                               "termination: not_started\nexit_code: 4\nstdout: \"\"\n",
                               81),
                      "%s", o.out);
        ck_assert(has(&o, "\n  status: unavailable\n  partial_reason: collector_failure\n"
                          "  termination: not_started\n"));
        ck_assert(has(&o, "\nerror_kind: profiler_setup_failure\n"
                          "error: \"profiler: setup failure: cannot start collection\"\n"));
        tu_output_free(&o);
        const char *human[] = {tu_jett, "run", p, modes[m], NULL};
        run(human, &o);
        ck_assert_int_eq(o.status, 4);
        ck_assert_str_eq(o.out, "");
        ck_assert_str_eq(o.err, "jett: profiler: setup failure: cannot start collection\n");
        tu_output_free(&o);
    }
    unsetenv("JETT_TEST_FAIL_PROFILER_START");
    free(p);
}
END_TEST

/* NUL bytes in debug() values, log() messages, field keys and values are
 * kept, escaped as TOON escapes them (\u0000), like stdout; a level with
 * a NUL is not "info" (the record is rejected, its number consumed). */
START_TEST(nul_bytes_in_debug_and_logs)
{
    char *p =
        tu_program("nul.jett", "namespace nul\nfn main() {\n"
                               "    print(\"p\\u{0}q\")\n"
                               "    debug(\"a\\u{0}b\")\n"
                               "    log(\"info\\u{0}x\", \"bad level\")\n"
                               "    log(\"info\", \"m\\u{0}n\", {\"k\\u{0}y\": \"v\\u{0}l\"})\n"
                               "}\n");
    const char *argv[] = {tu_jett, "run", p, "--agent", NULL};
    struct tu_output o;
    run(argv, &o);
    ck_assert_int_eq(o.status, 0);
    ck_assert_msg(has(&o, "\nstdout: \"p\\u0000q\\n\"\n"), "%s", o.out);
    ck_assert_msg(has(&o, "\ndebug[1]{seq,path,line,column,value}:\n"
                          "  1,nul.jett,4,5,\"a\\u0000b\"\n"
                          "logs[1]{seq,level,message,source}:\n"
                          "  2,info,\"m\\u0000n\",0\n"),
                  "%s", o.out);
    ck_assert_msg(has(&o, "\nlog_fields[1]{seq,key,value}:\n  2,\"k\\u0000y\",\"v\\u0000l\""), "%s",
                  o.out);
    tu_output_free(&o);
    free(p);
}
END_TEST

/* A project file whose name the wire cannot carry (a backslash, a
 * control character) is a compile error before anything runs, profiled
 * or not: exit 3, no user output, the name escaped for the terminal. */
START_TEST(unrepresentable_file_names_fail_before_main)
{
    char *bs = tu_program("a\\b.jett", "namespace a\nfn main() {\n    print(\"ran\")\n}\n");
    char *ctl = tu_program("c\x01"
                           "d.jett",
                           "namespace c\nfn main() {\n    print(\"ran\")\n}\n");
    struct tu_output o;
    const char *human[] = {tu_jett, "run", bs, "--profile", NULL};
    run(human, &o);
    ck_assert_int_eq(o.status, 3);
    ck_assert_str_eq(o.out, "");
    ck_assert_str_eq(o.err, "a\\b.jett:1:1: error: this file name cannot be a logical path: "
                            "backslash in path\n");
    tu_output_free(&o);
    const char *plain[] = {tu_jett, "run", ctl, NULL};
    run(plain, &o);
    ck_assert_int_eq(o.status, 3);
    ck_assert_str_eq(o.out, "");
    ck_assert_str_eq(o.err, "c\\x01d.jett:1:1: error: this file name cannot be a logical path: "
                            "control character in path\n");
    tu_output_free(&o);
    const char *agent[] = {tu_jett, "run", ctl, "--profile-memory", "--agent", NULL};
    run(agent, &o);
    ck_assert_int_eq(o.status, 3);
    ck_assert_msg(has(&o, "\nstdout: \"\"\n") &&
                      has(&o, "\ndiagnostics[1]{path,line,column,severity,message}:\n"
                              "  \"c\\u0001d.jett\",1,1,error,\"this file name cannot be a "
                              "logical path: control character in path\"\n"
                              "error_kind: compile_error\n") &&
                      !has(&o, "\nprofile:"),
                  "%s", o.out);
    tu_output_free(&o);
    free(bs), free(ctl);
}
END_TEST

Suite *run_contract_suite(void)
{
    Suite *s = suite_create("run_contract");
    TCase *t = tcase_create("run_contract");
    tcase_add_checked_fixture(t, tu_e2e_setup, tu_e2e_teardown);
    tcase_set_timeout(t, 120);
    tcase_add_test(t, secret_expression_holding_a_literal);
    tcase_add_test(t, collector_failure_found_by_the_daemon);
    tcase_add_test(t, fallback_profile_has_every_field);
    tcase_add_test(t, process_cpu_time_withdrawn);
    tcase_add_test(t, profiler_start_failure_runs_no_user_code);
    tcase_add_test(t, nul_bytes_in_debug_and_logs);
    tcase_add_test(t, unrepresentable_file_names_fail_before_main);
    suite_add_tcase(s, t);
    return s;
}
