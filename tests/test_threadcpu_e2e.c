/*
 * End-to-end tests of the test-only JETT_TEST_THREAD_CPU=PATH knob: the
 * CPU time of the timer and writer threads, of the daemon and of the
 * whole launcher process, each read exactly, so that a benchmark can
 * measure the profiler's own cost directly.  The checks tie every number
 * to a figure obtained independently: the kernel's usage of the jett
 * process as its parent reaps it (which includes the daemon it reaped),
 * and the profile's own process CPU time (read earlier, on the same
 * clock).
 */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

/* About 0.3 s of CPU (a few hundred timer ticks) and a 100 ms sleep. */
static const char busy[] = "namespace busy\n"
                           "fn main() {\n"
                           "    let t = 0\n"
                           "    for i in 0..1500000 {\n"
                           "        t += i % 7\n"
                           "    }\n"
                           "    sleep(100)\n"
                           "    print(t)\n"
                           "}\n";

/* The value after "key " in the file's text; -1 when absent. */
static long long field(const char *text, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "%s ", key);
    const char *p = strstr(text, pat);
    return p ? atoll(p + strlen(pat)) : -1;
}

/* "    key: N" in the agent document; -1 when absent. */
static long long doc_total(const char *doc, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\n    %s: ", key);
    const char *p = strstr(doc, pat);
    return p ? atoll(p + strlen(pat)) : -1;
}

struct run {
    char *cpu;       /* the knob's file, or NULL when none was written */
    char *doc;       /* stdout */
    long long ru_ns; /* the reaped jett's user + system, its reaped children included */
};

static void run_with_knob(const char *mode_flag, struct run *r)
{
    char *prog = tu_program("busy.jett", busy);
    ck_assert_ptr_nonnull(prog);
    char cpu[600], out[600];
    snprintf(cpu, sizeof cpu, "%s/cpu.txt", tu_dir);
    snprintf(out, sizeof out, "%s/out.toon", tu_dir);
    unlink(cpu);
    setenv("JETT_TEST_THREAD_CPU", cpu, 1);
    const char *with[] = {tu_jett, "run", prog, mode_flag, "--agent", NULL};
    const char *plain[] = {tu_jett, "run", prog, "--agent", NULL};
    pid_t pid = tu_spawn(mode_flag ? with : plain, out);
    unsetenv("JETT_TEST_THREAD_CPU");
    ck_assert_int_gt(pid, 0);
    int st;
    struct rusage ru;
    ck_assert_int_eq(wait4(pid, &st, 0, &ru), pid);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "jett ended with status %d", st);
    r->ru_ns = (long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ll +
               (long long)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ll;
    size_t len;
    r->cpu = access(cpu, F_OK) == 0 ? tu_read_file(cpu, &len) : NULL;
    r->doc = tu_read_file(out, &len);
    ck_assert_ptr_nonnull(r->doc);
    free(prog);
}

static void run_free(struct run *r)
{
    free(r->cpu), free(r->doc);
}

/* The parts add up: the process's own CPU and the daemon's are, within
 * the microsecond rounding of rusage and the few instructions between the
 * file's write and the exit, what the kernel charged the reaped jett. */
static void check_accounting(const struct run *r)
{
    ck_assert_ptr_nonnull(r->cpu);
    long long timer = field(r->cpu, "timer_ns"), writer = field(r->cpu, "writer_ns"),
              daemon = field(r->cpu, "daemon_ns"), process = field(r->cpu, "process_ns"),
              launcher = field(r->cpu, "launcher_ns");
    ck_assert_msg(timer >= 0 && writer >= 0 && daemon >= 0 && process > 0 && launcher > 0, "%s",
                  r->cpu);
    /* threads of the one process: their sum cannot exceed its total */
    ck_assert_msg(timer + writer + launcher < process, "%s", r->cpu);
    /* a CPU profile's process CPU was read at the end of the program, the
     * file's at the very end of the launcher */
    long long prof_ms = doc_total(r->doc, "process_cpu_ms");
    ck_assert_msg(process >= prof_ms * 1000000ll, "process %lld ns < profile %lld ms", process,
                  prof_ms);
    ck_assert_msg(process + daemon <= r->ru_ns + 2000, "%s\nrusage %lld", r->cpu, r->ru_ns);
    ck_assert_msg(r->ru_ns - (process + daemon) < 20000000ll, "%s\nrusage %lld", r->cpu, r->ru_ns);
}

/* Each mode: which parties it has (their CPU above zero, exactly zero
 * without them) and whether its profile has a process CPU figure. */
static const struct mode_case {
    const char *flag; /* NULL: a plain run */
    bool timer, profiled, process_cpu, walk;
} mode_cases[] = {
    /* the timer ran for the whole program, about 0.4 s at 1000 Hz */
    {"--profile", true, true, true, false},
    /* the walk of retained holders, on the launcher's thread */
    {"--profile-memory", false, true, false, true},
    /* no profiler, no daemon: zeros for them, the process's own figures */
    {NULL, false, false, false, false},
};

START_TEST(every_mode_reports_its_parties)
{
    const struct mode_case *m = &mode_cases[_i];
    struct run r;
    run_with_knob(m->flag, &r);
    check_accounting(&r);
    if (m->process_cpu)
        ck_assert_int_gt(doc_total(r.doc, "process_cpu_ms"), 0);
    if (m->timer)
        ck_assert_int_gt(field(r.cpu, "timer_ns"), 0);
    else
        ck_assert_int_eq(field(r.cpu, "timer_ns"), 0);
    if (m->profiled) {
        ck_assert_int_gt(field(r.cpu, "writer_ns"), 0);
        ck_assert_int_gt(field(r.cpu, "daemon_ns"), 0);
    } else {
        ck_assert_int_eq(field(r.cpu, "writer_ns"), 0);
        ck_assert_int_eq(field(r.cpu, "daemon_ns"), 0);
    }
    if (m->walk)
        ck_assert_int_gt(field(r.cpu, "walk_ns"), 0);
    else
        ck_assert_int_eq(field(r.cpu, "walk_ns"), 0);
    ck_assert_int_le(field(r.cpu, "walk_ns"), field(r.cpu, "launcher_ns"));
    run_free(&r);
}
END_TEST

Suite *threadcpu_e2e_suite(void)
{
    Suite *s = suite_create("threadcpu_e2e");
    TCase *tc = tcase_create("threadcpu_e2e");
    tcase_add_checked_fixture(tc, tu_e2e_setup, tu_e2e_teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, every_mode_reports_its_parties, 0,
                        (int)(sizeof mode_cases / sizeof mode_cases[0]));
    suite_add_tcase(s, tc);
    return s;
}
