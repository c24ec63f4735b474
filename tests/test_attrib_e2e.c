/*
 * End-to-end CPU attribution through the real binaries: a tick is charged
 * to the statement that was running (not the next one), time inside long
 * builtins is sampled at their call line, workers of equal measured time
 * get equal shares, and SIGINT stops a long builtin at once.
 *
 * Ground truth is hand-made: each skid program has one statement that
 * does all but a sliver of its function's own work, and the five-worker
 * program prints its own now_ms() timings.
 */
#include <check.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

static char *jett, *dir;

static void setup(void)
{
    jett = tu_build_path("cli/jett");
    dir = tu_tmpdir();
}

static void teardown(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
    free(jett), free(dir);
}

/* Runs `text` as main.jett of a fresh project under --profile --agent
 * with `arg` for main; the TOON document (malloc'd). */
static char *profile(const char *name, const char *text, const char *arg)
{
    char sub[700];
    snprintf(sub, sizeof sub, "%s/%s", dir, name);
    ck_assert_int_eq(mkdir(sub, 0700), 0);
    char *path = tu_write_program(sub, "main.jett", text);
    ck_assert_ptr_nonnull(path);
    const char *argv[] = {
        jett, "run", path, "--profile", "--profile-threshold", "0", "--agent", arg ? "--" : NULL,
        arg,  NULL};
    struct tu_output o;
    ck_assert_int_eq(tu_run(argv, NULL, 0, &o), 0);
    ck_assert_msg(o.status == 0, "%s\n%s", o.out, o.err);
    free(path);
    free(o.err);
    return o.out;
}

/* The bottleneck block of function `fn` (up to the next one). */
static const char *block(const char *doc, const char *fn, size_t *len)
{
    char pat[128];
    snprintf(pat, sizeof pat, "      function: %s\n", fn);
    const char *p = strstr(doc, pat);
    ck_assert_msg(p != NULL, "no bottleneck %s in\n%s", fn, doc);
    const char *end = strstr(p, "\n    - rank:");
    if (end == NULL)
        end = strstr(p, "\n  eligible_bottlenecks:");
    *len = end ? (size_t)(end - p) : strlen(p);
    return p;
}

static long number(const char *blk, size_t len, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\n      %s: ", key);
    const char *p = strstr(blk, pat);
    ck_assert_msg(p != NULL && (size_t)(p - blk) < len, "no %s", key);
    return atol(p + strlen(pat));
}

/* Self samples of `fn` on source line `line` (0 when not a hot line). */
static long hot_line(const char *doc, const char *fn, long line)
{
    size_t len;
    const char *b = block(doc, fn, &len);
    const char *rows = strstr(b, "      hot_lines[");
    if (rows == NULL || (size_t)(rows - b) >= len)
        return 0;
    for (const char *r = strchr(rows, '\n'); r && strncmp(r, "\n        ", 9) == 0;
         r = strchr(r + 1, '\n')) {
        long l, col, n;
        if (sscanf(r + 9, "%*[^,],%ld,%ld,%ld", &l, &col, &n) == 3 && l == line)
            return n;
    }
    return 0;
}

/* At least 90% of fn's self samples are on `line`. */
static void check_hot(const char *doc, const char *fn, long line)
{
    size_t len;
    const char *b = block(doc, fn, &len);
    long self = number(b, len, "self_samples");
    long hot = hot_line(doc, fn, line);
    ck_assert_msg(self >= 200, "%s: only %ld self samples\n%s", fn, self, doc);
    ck_assert_msg(hot * 10 >= self * 9, "%s: %ld of %ld self samples on line %ld\n%s", fn, hot,
                  self, line, doc);
}

/* A string that grows: each concatenation copies it (line 5); the
 * statement after it is one remainder. */
START_TEST(skid_large_concatenation)
{
    char *doc = profile("concat",
                        "namespace concat\n"
                        "fn build(n) {\n"
                        "    let out = \"\"\n"
                        "    for r in 0..n {\n"
                        "        out = out + \"piece-of-text\"\n"
                        "        let k = r % 3\n"
                        "    }\n"
                        "    return len(out)\n"
                        "}\n"
                        "fn main() {\n"
                        "    print(build(40000))\n"
                        "}\n",
                        NULL);
    check_hot(doc, "build", 5);
    free(doc);
}
END_TEST

/* A sort of 5000 items per iteration (line 5) against one remainder. */
START_TEST(skid_builtin_call)
{
    char *doc = profile("bcall",
                        "namespace bcall\n"
                        "fn order(xs, n) {\n"
                        "    let t = 0\n"
                        "    for r in 0..n {\n"
                        "        let ys = sort(xs)\n"
                        "        let k = r % 3\n"
                        "    }\n"
                        "    return t\n"
                        "}\n"
                        "fn main() {\n"
                        "    let xs = []\n"
                        "    for i in 0..5000 {\n"
                        "        push(xs, (i * 7919) % 5003)\n"
                        "    }\n"
                        "    print(order(xs, 1500))\n"
                        "}\n",
                        NULL);
    check_hot(doc, "order", 5);
    free(doc);
}
END_TEST

/* A call of a cheap Jett function (line 8) whose argument the caller
 * builds by copying 200 items: the caller's work is before the push and
 * after the pop of the callee's frame, and belongs to the call line. */
START_TEST(skid_jett_call)
{
    char *doc = profile("jcall",
                        "namespace jcall\n"
                        "fn step(v) {\n"
                        "    return len(v)\n"
                        "}\n"
                        "fn drive(xs, n) {\n"
                        "    let acc = 0\n"
                        "    for r in 0..n {\n"
                        "        acc = step(xs + [r]) + acc\n"
                        "        let k = r % 3\n"
                        "    }\n"
                        "    return acc\n"
                        "}\n"
                        "fn main() {\n"
                        "    let xs = []\n"
                        "    for i in 0..200 {\n"
                        "        push(xs, i)\n"
                        "    }\n"
                        "    print(drive(xs, 400000))\n"
                        "}\n",
                        NULL);
    check_hot(doc, "drive", 8);
    free(doc);
}
END_TEST

/* Five kinds of work, each run for `ms` per round, in turns, so that the
 * machine's load changes touch all of them alike; the program prints the
 * time each took by its own clock. */
static const char five_workers[] = "namespace five\n"
                                   "fn w_loop(ms) {\n"
                                   "    let t0 = now_ms()\n"
                                   "    let x = 0\n"
                                   "    while now_ms() - t0 < ms {\n"
                                   "        for i in 0..1000 {\n"
                                   "            x = (x + i * 3) % 1000003\n"
                                   "        }\n"
                                   "    }\n"
                                   "    return now_ms() - t0\n"
                                   "}\n"
                                   "fn w_sort(xs, ms) {\n"
                                   "    let t0 = now_ms()\n"
                                   "    while now_ms() - t0 < ms {\n"
                                   "        let ys = slice(xs, 0, len(xs))\n"
                                   "        sort(ys)\n"
                                   "    }\n"
                                   "    return now_ms() - t0\n"
                                   "}\n"
                                   "fn w_repeat(ms) {\n"
                                   "    let t0 = now_ms()\n"
                                   "    while now_ms() - t0 < ms {\n"
                                   "        let s = repeat(\"abcdefgh\", 1000000)\n"
                                   "    }\n"
                                   "    return now_ms() - t0\n"
                                   "}\n"
                                   "fn w_split_join(text, ms) {\n"
                                   "    let t0 = now_ms()\n"
                                   "    while now_ms() - t0 < ms {\n"
                                   "        let parts = split(text, \",\")\n"
                                   "        let j = join(parts, \";\")\n"
                                   "    }\n"
                                   "    return now_ms() - t0\n"
                                   "}\n"
                                   "fn w_map(keys, ms) {\n"
                                   "    let t0 = now_ms()\n"
                                   "    while now_ms() - t0 < ms {\n"
                                   "        let m = {}\n"
                                   "        for k in keys {\n"
                                   "            m[k] = 1\n"
                                   "        }\n"
                                   "    }\n"
                                   "    return now_ms() - t0\n"
                                   "}\n"
                                   "fn main(args) {\n"
                                   "    let rounds = int(args[0])\n"
                                   "    let ms = 100\n"
                                   "    let xs = []\n"
                                   "    let keys = []\n"
                                   "    for i in 0..50000 {\n"
                                   "        push(xs, (i * 7919) % 50021)\n"
                                   "        push(keys, str(i * 31))\n"
                                   "    }\n"
                                   "    let text = join(keys, \",\")\n"
                                   "    let t = [0, 0, 0, 0, 0]\n"
                                   "    for r in 0..rounds {\n"
                                   "        t[0] += w_loop(ms)\n"
                                   "        t[1] += w_sort(xs, ms)\n"
                                   "        t[2] += w_repeat(ms)\n"
                                   "        t[3] += w_split_join(text, ms)\n"
                                   "        t[4] += w_map(keys, ms)\n"
                                   "    }\n"
                                   "    print(t[0], t[1], t[2], t[3], t[4])\n"
                                   "}\n";

/* Each worker's inclusive share of the workers' samples is within 5
 * points of its share of their measured time. */
START_TEST(five_workers_get_their_measured_share)
{
    char *doc = profile("five", five_workers, "12");
    long ms[5], inc[5], ms_sum = 0, inc_sum = 0;
    const char *out = strstr(doc, "\nstdout: \"");
    ck_assert_ptr_nonnull(out);
    ck_assert_int_eq(
        sscanf(out + 10, "%ld %ld %ld %ld %ld", &ms[0], &ms[1], &ms[2], &ms[3], &ms[4]), 5);
    static const char *const fns[] = {"w_loop", "w_sort", "w_repeat", "w_split_join", "w_map"};
    for (int i = 0; i < 5; i++) {
        size_t len;
        const char *b = block(doc, fns[i], &len);
        inc[i] = number(b, len, "inclusive_samples");
        ms_sum += ms[i], inc_sum += inc[i];
    }
    ck_assert_msg(inc_sum >= 2000, "only %ld samples\n%s", inc_sum, doc);
    for (int i = 0; i < 5; i++) {
        double sampled = 100.0 * (double)inc[i] / (double)inc_sum;
        double measured = 100.0 * (double)ms[i] / (double)ms_sum;
        ck_assert_msg(sampled - measured <= 5 && measured - sampled <= 5,
                      "%s: %.2f%% of the samples, %.2f%% of the measured time\n%s", fns[i], sampled,
                      measured, doc);
    }
    free(doc);
}
END_TEST

/* CPU time of `pid`'s thread named `comm`, in clock ticks; -1 if none. */
static long thread_cpu_ticks(pid_t pid, const char *comm)
{
    char path[300];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    long ticks = -1;
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "/proc/%d/task/%s/stat", (int)pid, e->d_name);
        FILE *f = fopen(path, "r");
        char line[1024] = "";
        if (f) {
            if (!fgets(line, sizeof line, f))
                line[0] = '\0';
            fclose(f);
        }
        char name[64];
        const char *close = strrchr(line, ')');
        long ut, st;
        if (sscanf(line, "%*d (%63[^)])", name) == 1 && strcmp(name, comm) == 0 && close &&
            sscanf(close + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %ld %ld", &ut, &st) == 2)
            ticks = ut + st;
    }
    if (d)
        closedir(d);
    return ticks;
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One sort of 2^20 references to one 20 KB string: about 10 million
 * comparisons of 20 KB each, ten seconds or more.  Building the list takes
 * 21 statements, so once the runtime thread has used half a second of CPU
 * it is sorting.  SIGINT then ends the run within a second (the figure
 * for an idle machine is 100 ms), exit 130, with an interrupted profile. */
START_TEST(sigint_during_long_sort)
{
    char sub[700], out[800];
    snprintf(sub, sizeof sub, "%s/sigint", dir);
    ck_assert_int_eq(mkdir(sub, 0700), 0);
    char *path = tu_write_program(sub, "main.jett",
                                  "namespace sigint\n"
                                  "fn main() {\n"
                                  "    let xs = [repeat(\"x\", 20000)]\n"
                                  "    for i in 0..20 {\n"
                                  "        xs = xs + xs\n"
                                  "    }\n"
                                  "    let ys = sort(xs)\n"
                                  "    print(\"sorted\")\n"
                                  "}\n");
    ck_assert_ptr_nonnull(path);
    snprintf(out, sizeof out, "%s/out.toon", dir);
    const char *argv[] = {jett, "run", path, "--profile", "--agent", NULL};
    pid_t pid = tu_spawn(argv, out);
    long hz = sysconf(_SC_CLK_TCK);
    while (thread_cpu_ticks(pid, "jett-runtime") < hz / 2) {
        ck_assert_msg(kill(pid, 0) == 0, "jett ended before the sort");
        struct timespec nap = {0, 10000000};
        nanosleep(&nap, NULL);
    }
    double t0 = mono_s();
    kill(pid, SIGINT);
    int status = tu_wait(pid);
    double took = mono_s() - t0;
    ck_assert_int_eq(status, 130);
    ck_assert_msg(took <= 1.0, "SIGINT took %.3f s to end the run", took);
    size_t len;
    char *doc = tu_read_file(out, &len);
    ck_assert_ptr_nonnull(doc);
    ck_assert_msg(strstr(doc, "\n  status: partial\n  partial_reason: interrupted\n"), "%s", doc);
    ck_assert_ptr_nonnull(strstr(doc, "\n  termination: interrupted\n"));
    ck_assert_ptr_null(strstr(doc, "sorted"));
    /* the sort's time is main's, at the sort's line */
    ck_assert_msg(hot_line(doc, "main", 7) > 0, "%s", doc);
    free(doc);
    free(path);
}
END_TEST

Suite *attrib_e2e_suite(void);
Suite *attrib_e2e_suite(void)
{
    Suite *s = suite_create("attrib_e2e");
    TCase *tc = tcase_create("cpu");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, skid_large_concatenation);
    tcase_add_test(tc, skid_builtin_call);
    tcase_add_test(tc, skid_jett_call);
    tcase_add_test(tc, five_workers_get_their_measured_share);
    tcase_add_test(tc, sigint_during_long_sort);
    suite_add_tcase(s, tc);
    return s;
}
