/*
 * CPU ticks as a signal: a POSIX timer signals the jett-runtime thread
 * alone, from when it starts to when it ends; no timer thread exists;
 * sleep keeps its deadline through the ticks; a caller that blocked the
 * signal does not hold the ticks back; stopping does not wait for a
 * deadline; a timer that cannot be made is a failure before any Jett
 * code.  Programs run in this process (tickspy), so that the handler's
 * deliveries and /proc/self are seen directly.
 */
#include <check.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "agent/profiler.h"
#include "testutil.h"
#include "tickspy.h"

/* About 300 ms of work, then a 200 ms sleep. */
static const char busy_then_sleep[] = "namespace t\n"
                                      "fn main() {\n"
                                      "    let t0 = now_ms()\n"
                                      "    let n = 0\n"
                                      "    while now_ms() - t0 < 300 {\n"
                                      "        n += 1\n"
                                      "    }\n"
                                      "    sleep(200)\n"
                                      "}\n";

START_TEST(ticks_reach_the_runtime_thread_alone)
{
    struct tickspy t = {.rate_hz = 1000};
    tickspy_run(&t, busy_then_sleep);
    ck_assert_int_eq(t.run_rc, 0);
    /* 500 ms at 1000 Hz; a delivery late by k periods carries k ticks
     * (its overrun), so deliveries are at most the ticks */
    ck_assert_uint_ge(t.fin.requested_ticks, 450);
    ck_assert_int_ge(t.on_runtime, 50);
    ck_assert_uint_le((uint64_t)t.on_runtime, t.fin.requested_ticks);
    ck_assert_int_eq(t.elsewhere, 0);
}
END_TEST

/* What the runtime thread sees of the process as the program prints. */
static char seen_timers[4096], seen_threads[1024];
static pid_t seen_tid;

static void read_proc(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, cap - 1, f) : 0;
    buf[n] = 0;
    if (f)
        fclose(f);
}

/* The names of this process's threads, one a line. */
static void list_threads(char *buf, size_t cap)
{
    DIR *d = opendir("/proc/self/task");
    ck_assert_ptr_nonnull(d);
    size_t len = 0;
    buf[0] = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        char path[300], name[64];
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        read_proc(path, name, sizeof name);
        len += (size_t)snprintf(buf + len, cap - len, "%s", name);
        ck_assert_uint_lt(len, cap);
    }
    closedir(d);
}

static void look_around(void *ctx, const char *data, size_t len)
{
    (void)ctx, (void)data, (void)len;
    seen_tid = gettid();
    read_proc("/proc/self/timers", seen_timers, sizeof seen_timers);
    list_threads(seen_threads, sizeof seen_threads);
}

/* The entries of /proc/self/timers for the tick signal (the test
 * runner has timers of its own); the last one's text in *entry. */
static int tick_timers(const char *text, char *entry, size_t cap)
{
    char sig[32];
    snprintf(sig, sizeof sig, "\nsignal: %d/", PROFILER_TICK_SIGNAL);
    int n = 0;
    for (const char *p = strncmp(text, "ID: ", 4) == 0 ? text : NULL; p;) {
        const char *next = strstr(p, "\nID: "); /* not ClockID: */
        size_t len = next ? (size_t)(next - p) + 1 : strlen(p);
        const char *hit = strstr(p, sig);
        if (hit && hit < p + len) {
            n++;
            snprintf(entry, cap, "%.*s", (int)len, p);
        }
        p = next ? next + 1 : NULL;
    }
    return n;
}

START_TEST(one_timer_signals_the_runtime_thread_while_it_runs)
{
    struct interp_host host = {.write_stdout = look_around};
    struct tickspy t = {.rate_hz = 1000, .host = &host};
    tickspy_run(&t, "namespace t\nfn main() {\n    sleep(20)\n    print(1)\n    sleep(20)\n}\n");
    ck_assert_int_eq(t.run_rc, 0);
    /* while the program ran: one timer, of the tick signal, for this
     * thread alone; no timer thread */
    char want[128], entry[512] = "";
    ck_assert_msg(tick_timers(seen_timers, entry, sizeof entry) == 1, "%s", seen_timers);
    snprintf(want, sizeof want, "\nnotify: signal/tid.%d\n", (int)seen_tid);
    ck_assert_msg(strstr(entry, want), "tid %d:\n%s", (int)seen_tid, entry);
    snprintf(want, sizeof want, "\nClockID: %d\n", CLOCK_MONOTONIC);
    ck_assert_msg(strstr(entry, want), "%s", entry);
    ck_assert_msg(strstr(seen_threads, "jett-runtime\n"), "%s", seen_threads);
    ck_assert_msg(!strstr(seen_threads, "jett-timer"), "%s", seen_threads);
    /* the runtime thread deleted it as it ended */
    char after[4096];
    read_proc("/proc/self/timers", after, sizeof after);
    ck_assert_msg(tick_timers(after, entry, sizeof entry) == 0, "%s", after);
}
END_TEST

/* sleep's output: the milliseconds it measured around its own sleep. */
static char printed[64];

static void keep_output(void *ctx, const char *data, size_t len)
{
    (void)ctx;
    snprintf(printed, sizeof printed, "%.*s", (int)len, data);
}

START_TEST(sleep_keeps_its_deadline_through_ticks)
{
    struct interp_host host = {.write_stdout = keep_output};
    struct tickspy t = {.rate_hz = 1000, .host = &host};
    tickspy_run(&t, "namespace t\nfn main() {\n    let a = now_ms()\n    sleep(250)\n"
                    "    print(now_ms() - a)\n}\n");
    ck_assert_int_eq(t.run_rc, 0);
    /* a tick a millisecond cut the wait short again and again, and it
     * still lasted 250 ms (each end of now_ms rounds down: a difference
     * of whole milliseconds is at least the whole milliseconds slept) */
    ck_assert_int_ge(t.on_runtime, 50);
    ck_assert_msg(atoll(printed) >= 250, "slept %s", printed);
}
END_TEST

START_TEST(ticks_arrive_though_the_caller_blocked_their_signal)
{
    /* the runtime thread inherits this thread's mask */
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, PROFILER_TICK_SIGNAL);
    ck_assert_int_eq(pthread_sigmask(SIG_BLOCK, &set, &old), 0);
    struct tickspy t = {.rate_hz = 1000};
    tickspy_run(&t, busy_then_sleep);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    ck_assert_int_eq(t.run_rc, 0);
    ck_assert_int_ge(t.on_runtime, 50);
    ck_assert_uint_ge(t.fin.requested_ticks, 450);
}
END_TEST

/* At 1 Hz the next deadline is up to a second away: the run neither
 * waits for it as it ends nor as the profiler stops. */
START_TEST(stopping_at_1_hz_waits_for_no_deadline)
{
    struct tickspy t = {.rate_hz = 1};
    tickspy_run(&t, "namespace t\nfn main() {\n}\n");
    ck_assert_int_eq(t.run_rc, 0);
    ck_assert_uint_eq(t.fin.requested_ticks, 0);
    ck_assert_msg(t.run_ns < 500000000ull, "interp_run took %llu ns", (unsigned long long)t.run_ns);
    ck_assert_msg(t.stop_ns < 100000000ull, "profiler_stop took %llu ns",
                  (unsigned long long)t.stop_ns);
}
END_TEST

static int jett_ran;

static void note_run(void *ctx, const char *data, size_t len)
{
    (void)ctx, (void)data, (void)len;
    jett_ran = 1;
}

/* No pending signal may be queued (RLIMIT_SIGPENDING 0): timer_create
 * fails, and neither the initializer nor main runs. */
START_TEST(a_timer_that_cannot_be_made_runs_no_jett_code)
{
    struct rlimit rl;
    ck_assert_int_eq(getrlimit(RLIMIT_SIGPENDING, &rl), 0);
    rlim_t was = rl.rlim_cur;
    rl.rlim_cur = 0;
    ck_assert_int_eq(setrlimit(RLIMIT_SIGPENDING, &rl), 0);
    struct interp_host host = {.write_stdout = note_run};
    struct tickspy t = {.rate_hz = 1000, .host = &host};
    tickspy_run(&t, "namespace t\nlet g = init()\nfn init() -> int {\n    print(1)\n"
                    "    return 1\n}\nfn main() {\n    print(2)\n}\n");
    rl.rlim_cur = was; /* the test runner's own timers need it */
    ck_assert_int_eq(setrlimit(RLIMIT_SIGPENDING, &rl), 0);
    ck_assert_int_eq(t.run_rc, -1);
    ck_assert(t.timer_failed);
    ck_assert_int_eq(jett_ran, 0);
    ck_assert_uint_eq(t.fin.requested_ticks, 0);
}
END_TEST

Suite *sigtick_suite(void)
{
    Suite *s = suite_create("sigtick");
    TCase *t = tcase_create("sigtick");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, ticks_reach_the_runtime_thread_alone);
    tcase_add_test(t, one_timer_signals_the_runtime_thread_while_it_runs);
    tcase_add_test(t, sleep_keeps_its_deadline_through_ticks);
    tcase_add_test(t, ticks_arrive_though_the_caller_blocked_their_signal);
    tcase_add_test(t, stopping_at_1_hz_waits_for_no_deadline);
    tcase_add_test(t, a_timer_that_cannot_be_made_runs_no_jett_code);
    suite_add_tcase(s, t);
    return s;
}
