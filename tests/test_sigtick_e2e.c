/*
 * CPU ticks as a signal, through the real launcher: the program's writes
 * that a tick interrupts are restarted (its output through a pipe that
 * stays full arrives whole), sleep keeps its time and gives one waiting
 * sample per tick while the only tick source is the runtime thread's own
 * timer (no jett-timer thread), and a timer that cannot be made is a
 * setup failure before any user code.
 */
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

/* The first line of /proc/PID/task/TID/`file` that starts with `key`,
 * from its value on; "" when there is none. */
static void task_line(pid_t pid, pid_t tid, const char *file, const char *key, char *out,
                      size_t cap)
{
    char path[128], line[256];
    snprintf(path, sizeof path, "/proc/%d/task/%d/%s", (int)pid, (int)tid, file);
    out[0] = 0;
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, key, strlen(key))) {
            snprintf(out, cap, "%s", line + strlen(key));
            break;
        }
    if (f)
        fclose(f);
}

/* The thread of pid named `comm`, or -1; all thread names, one a line,
 * in `names` when given. */
static pid_t find_thread(pid_t pid, const char *comm, char *names, size_t cap)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%d/task", (int)pid);
    DIR *d = opendir(dir);
    pid_t found = -1;
    size_t len = 0;
    if (names)
        names[0] = 0;
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        char name[64];
        task_line(pid, (pid_t)atoi(e->d_name), "comm", "", name, sizeof name);
        if (names && len < cap)
            len += (size_t)snprintf(names + len, cap - len, "%s", name);
        if (strcspn(name, "\n") == strlen(comm) && !strncmp(name, comm, strlen(comm)))
            found = (pid_t)atoi(e->d_name);
    }
    if (d)
        closedir(d);
    return found;
}

static char thread_state(pid_t pid, pid_t tid)
{
    char st[32];
    task_line(pid, tid, "status", "State:\t", st, sizeof st);
    return st[0];
}

static long voluntary_switches(pid_t pid, pid_t tid)
{
    char v[32];
    task_line(pid, tid, "status", "voluntary_ctxt_switches:\t", v, sizeof v);
    return v[0] ? atol(v) : -1;
}

static const struct timespec poll_pause = {0, 1000000};

/* 40,000 lines of about 90 bytes: 3.6 MB, fifty-odd times what a pipe
 * holds. */
static const char chatty[] = "namespace chatty\n"
                             "fn main() {\n"
                             "    let pad = repeat(\"x\", 80)\n"
                             "    for i in 0..40000 {\n"
                             "        print(\"line\", i, pad)\n"
                             "    }\n"
                             "}\n";

/* Each of the first rounds reads only once the pipe is full, the
 * runtime thread sleeps in its write, and it has since been woken and
 * gone back to sleep three times: only a signal wakes a writer blocked on
 * a full pipe nobody reads, so ticks cut that write short, and a write
 * they cut short that was not restarted would lose output (stdio gives
 * up on EINTR). */
START_TEST(output_through_a_full_pipe_survives_ticks)
{
    char *prog = tu_program("chatty.jett", chatty);
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        int null = open("/dev/null", O_WRONLY);
        dup2(null, STDERR_FILENO);
        close(fds[0]), close(fds[1]), close(null);
        execl(tu_jett, tu_jett, "run", prog, "--profile", (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    int pipe_size = fcntl(fds[0], F_GETPIPE_SZ);
    ck_assert_int_gt(pipe_size, 4096);
    pid_t tid = -1;
    for (int i = 0; i < 60000 && tid < 0; i++, nanosleep(&poll_pause, NULL))
        tid = find_thread(pid, "jett-runtime", NULL, 0);
    ck_assert_int_gt(tid, 0);
    size_t len = 0, cap = 8u << 20;
    char *text = malloc(cap);
    ck_assert_ptr_nonnull(text);
    for (int round = 0;; round++) {
        if (round < 10) {
            int queued = 0, tries = 0;
            long v0 = -1;
            /* full (stdio writes 4 KiB at a time) and blocked */
            for (; tries < 10000; tries++, nanosleep(&poll_pause, NULL)) {
                ioctl(fds[0], FIONREAD, &queued);
                if (queued > pipe_size - 4096 && thread_state(pid, tid) == 'S')
                    break;
            }
            ck_assert_msg(tries < 10000, "round %d: the pipe never filled (%d bytes)", round,
                          queued);
            v0 = voluntary_switches(pid, tid);
            for (tries = 0; tries < 10000; tries++, nanosleep(&poll_pause, NULL))
                if (voluntary_switches(pid, tid) >= v0 + 3 && thread_state(pid, tid) == 'S')
                    break;
            ck_assert_msg(tries < 10000, "round %d: nothing woke the blocked writer", round);
        }
        ck_assert_uint_lt(len + 65536, cap);
        ssize_t n = read(fds[0], text + len, 65536);
        ck_assert_int_ge(n, 0);
        if (n == 0)
            break;
        len += (size_t)n;
    }
    close(fds[0]);
    ck_assert_int_eq(tu_wait(pid), 0);
    /* every line, in order */
    char pad[81], want[128];
    memset(pad, 'x', 80), pad[80] = 0;
    size_t at = 0;
    for (int i = 0; i < 40000; i++) {
        int n = snprintf(want, sizeof want, "line %d %s\n", i, pad);
        ck_assert_msg(at + (size_t)n <= len && !memcmp(text + at, want, (size_t)n),
                      "line %d missing or wrong (%zu of %zu bytes)", i, at, len);
        at += (size_t)n;
    }
    ck_assert_uint_eq(at, len);
    free(text);
    free(prog);
}
END_TEST

/* "    key: N" in a profile; -1 when absent. */
static long long field(const char *doc, const char *key)
{
    char pat[128];
    snprintf(pat, sizeof pat, "\n    %s: ", key);
    const char *p = strstr(doc, pat);
    return p ? atoll(p + strlen(pat)) : -1;
}

/* Whether pid's /proc timers hold one for the tick signal that signals
 * thread tid (on CLOCK_MONOTONIC). */
static bool has_tick_timer(pid_t pid, pid_t tid)
{
    char path[64], buf[4096], want[128];
    snprintf(path, sizeof path, "/proc/%d/timers", (int)pid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = 0;
    snprintf(want, sizeof want, "signal: %d/", SIGRTMIN);
    const char *p = strstr(buf, want);
    snprintf(want, sizeof want, "\nnotify: signal/tid.%d\nClockID: %d\n", (int)tid,
             CLOCK_MONOTONIC);
    return p && !strncmp(strchr(p, '\n'), want, strlen(want));
}

START_TEST(sleep_gives_a_waiting_sample_per_signalled_tick)
{
    char *prog = tu_program("nap.jett", "namespace nap\n"
                                        "fn main() {\n"
                                        "    let a = now_ms()\n"
                                        "    sleep(400)\n"
                                        "    print(now_ms() - a)\n"
                                        "}\n");
    char *out = tu_tmp_path("out.toon");
    const char *argv[] = {tu_jett, "run", prog, "--profile", "--agent", NULL};
    pid_t pid = tu_spawn(argv, out);
    ck_assert_int_gt(pid, 0);
    pid_t tid = -1;
    for (int i = 0; i < 60000 && tid < 0; i++, nanosleep(&poll_pause, NULL))
        tid = find_thread(pid, "jett-runtime", NULL, 0);
    ck_assert_int_gt(tid, 0);
    /* the runtime thread arms its timer as it starts */
    int tries = 0;
    for (; tries < 60000 && !has_tick_timer(pid, tid); tries++)
        nanosleep(&poll_pause, NULL);
    ck_assert_msg(tries < 60000, "no tick timer for the runtime thread");
    /* the launcher's thread, the writer (once it has named itself) and
     * the runtime thread: no timer thread, named yet or not */
    for (tries = 0; tries < 60000 && find_thread(pid, "jett-writer", NULL, 0) < 0; tries++)
        nanosleep(&poll_pause, NULL);
    char names[512];
    find_thread(pid, "", names, sizeof names);
    int threads = 0;
    for (const char *c = names; (c = strchr(c, '\n')) != NULL; c++)
        threads++;
    ck_assert_msg(threads == 3 && strstr(names, "jett-writer\n") && !strstr(names, "jett-timer"),
                  "%s", names);
    ck_assert_int_eq(tu_wait(pid), 0);
    size_t len;
    char *doc = tu_read_file(out, &len);
    ck_assert_ptr_nonnull(doc);
    const char *so = strstr(doc, "\nstdout: \"");
    ck_assert_ptr_nonnull(so);
    long long slept = atoll(so + 10), waiting = field(doc, "waiting_samples");
    /* now_ms rounds each end down: whole milliseconds of difference are
     * at least the whole milliseconds slept */
    ck_assert_msg(slept >= 400, "slept %lld ms", slept);
    /* a tick a millisecond on the grid: at most slept + 2 fall inside the
     * sleep; all but a late few become waiting samples */
    ck_assert_msg(waiting >= 390 && waiting <= slept + 2, "waiting %lld, slept %lld\n%s", waiting,
                  slept, doc);
    ck_assert_int_eq(field(doc, "requested_ticks"), field(doc, "recorded_samples") +
                                                        field(doc, "coalesced_ticks") +
                                                        field(doc, "dropped_ticks"));
    free(doc);
    free(out);
    free(prog);
}
END_TEST

/* No signal may be queued (RLIMIT_SIGPENDING 0, which the launcher
 * inherits): the runtime thread cannot make its timer, and the run is a
 * setup failure in which neither the initializer nor main runs.  Memory
 * mode has no timer and runs. */
START_TEST(a_timer_that_cannot_be_made_is_a_setup_failure)
{
    char *p = tu_program("s.jett", "namespace s\nlet g = init()\nfn init() -> int {\n"
                                   "    print(\"init ran\")\n    return 1\n}\n"
                                   "fn main() {\n    print(\"main ran\")\n}\n");
    struct rlimit rl;
    ck_assert_int_eq(getrlimit(RLIMIT_SIGPENDING, &rl), 0);
    rlim_t was = rl.rlim_cur;
    rl.rlim_cur = 0;
    ck_assert_int_eq(setrlimit(RLIMIT_SIGPENDING, &rl), 0);
    struct tu_output agent, human, memory;
    const char *a[] = {tu_jett, "run", p, "--profile", "--agent", NULL};
    const char *h[] = {tu_jett, "run", p, "--profile", NULL};
    const char *m[] = {tu_jett, "run", p, "--profile-memory", NULL};
    int ra = tu_run(a, NULL, 0, &agent), rh = tu_run(h, NULL, 0, &human),
        rm = tu_run(m, NULL, 0, &memory);
    rl.rlim_cur = was; /* the test runner's own timers need it */
    ck_assert_int_eq(setrlimit(RLIMIT_SIGPENDING, &rl), 0);
    ck_assert(ra == 0 && rh == 0 && rm == 0);
    ck_assert_int_eq(agent.status, 4);
    ck_assert_msg(!strncmp(agent.out,
                           "schema: jett.run.v1\nstatus: error\n"
                           "termination: not_started\nexit_code: 4\nstdout: \"\"\n",
                           81),
                  "%s", agent.out);
    ck_assert_msg(strstr(agent.out, "\n  status: unavailable\n  partial_reason: collector_failure\n"
                                    "  termination: not_started\n"),
                  "%s", agent.out);
    ck_assert_msg(strstr(agent.out, "\nerror_kind: profiler_setup_failure\n"
                                    "error: \"profiler: setup failure: cannot start the timer\"\n"),
                  "%s", agent.out);
    ck_assert_int_eq(human.status, 4);
    ck_assert_str_eq(human.out, "");
    ck_assert_str_eq(human.err, "jett: profiler: setup failure: cannot start the timer\n");
    ck_assert_int_eq(memory.status, 0);
    ck_assert_str_eq(memory.out, "init ran\nmain ran\n");
    tu_output_free(&agent), tu_output_free(&human), tu_output_free(&memory);
    free(p);
}
END_TEST

Suite *sigtick_e2e_suite(void)
{
    Suite *s = suite_create("sigtick_e2e");
    TCase *t = tcase_create("sigtick_e2e");
    tcase_add_checked_fixture(t, tu_e2e_setup, tu_e2e_teardown);
    tcase_set_timeout(t, 120);
    tcase_add_test(t, output_through_a_full_pipe_survives_ticks);
    tcase_add_test(t, sleep_gives_a_waiting_sample_per_signalled_tick);
    tcase_add_test(t, a_timer_that_cannot_be_made_is_a_setup_failure);
    suite_add_tcase(s, t);
    return s;
}
