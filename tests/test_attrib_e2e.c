/*
 * End-to-end CPU attribution through the real binaries: a tick is charged
 * to the statement that was running (not the next one), time inside long
 * builtins is sampled at their call line, workers of equal measured time
 * get equal shares, and SIGINT stops a long builtin at once.
 *
 * The programs are in tests/attrib/ (the benchmark runs them too).
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
#include <time.h>
#include <unistd.h>

#include "testutil.h"

/* tests/attrib/NAME/main.jett (malloc'd path). */
static char *attrib_program(const char *name)
{
    char rel[200];
    snprintf(rel, sizeof rel, "tests/attrib/%s/main.jett", name);
    return tu_source_path(rel);
}

/* The 1-based line of the program that holds `text`. */
static long line_of(const char *path, const char *text)
{
    size_t len;
    char *src = tu_read_file(path, &len);
    ck_assert_ptr_nonnull(src);
    const char *at = strstr(src, text);
    ck_assert_msg(at != NULL, "%s not in %s", text, path);
    long line = 1;
    for (const char *p = src; p < at; p++)
        line += *p == '\n';
    free(src);
    return line;
}

/* Profiles tests/attrib/NAME under --profile --agent with `arg` for main;
 * the TOON document (malloc'd). */
static char *profile(const char *name, const char *arg)
{
    char *path = attrib_program(name);
    const char *argv[] = {
        tu_jett,           "run", path, "--profile", "--profile-threshold", "0", "--agent",
        arg ? "--" : NULL, arg,   NULL};
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

/* Profiles program `name`: at least 90% of fn's self samples are on the
 * line that holds `expensive`. */
static void check_hot(const char *name, const char *fn, const char *expensive)
{
    char *path = attrib_program(name);
    long line = line_of(path, expensive);
    free(path);
    char *doc = profile(name, NULL);
    size_t len;
    const char *b = block(doc, fn, &len);
    long self = number(b, len, "self_samples");
    long hot = hot_line(doc, fn, line);
    ck_assert_msg(self >= 200, "%s: only %ld self samples\n%s", fn, self, doc);
    ck_assert_msg(hot * 10 >= self * 9, "%s: %ld of %ld self samples on line %ld\n%s", fn, hot,
                  self, line, doc);
    free(doc);
}

/* A growing string copied by each concatenation, then one remainder. */
START_TEST(skid_large_concatenation)
{
    check_hot("concat", "build", "out = out + ");
}
END_TEST

/* A sort of 5000 items per iteration, then one remainder. */
START_TEST(skid_builtin_call)
{
    check_hot("bcall", "order", "let ys = sort(xs)");
}
END_TEST

/* A call of a cheap Jett function whose argument the caller builds: the
 * caller's work before the push and after the pop is the call line's. */
START_TEST(skid_jett_call)
{
    check_hot("jcall", "drive", "acc = step(");
}
END_TEST

/* Each worker's inclusive share of the workers' samples is within 5
 * points of its share of their measured time. */
START_TEST(five_workers_get_their_measured_share)
{
    char *doc = profile("five", "12");
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
    char shares[400] = "";
    double worst = 0;
    for (int i = 0; i < 5; i++) {
        double sampled = 100.0 * (double)inc[i] / (double)inc_sum;
        double measured = 100.0 * (double)ms[i] / (double)ms_sum;
        double err = sampled > measured ? sampled - measured : measured - sampled;
        worst = err > worst ? err : worst;
        size_t used = strlen(shares);
        snprintf(shares + used, sizeof shares - used, " %s %.2f/%.2f", fns[i], sampled, measured);
    }
    /* ~1000 samples make one share's sampling error about 1.3 points */
    ck_assert_msg(inc_sum >= 1000, "only %ld samples:%s", inc_sum, shares);
    ck_assert_msg(worst <= 5, "share error %.2f points (sampled/measured %%):%s", worst, shares);
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

/* tests/attrib/longsort sorts for ten seconds or more after 21 short
 * statements, so once the runtime thread has used half a second of CPU it
 * is sorting.  SIGINT then ends the run within a second (the figure for
 * an idle machine is 100 ms), exit 130, with an interrupted profile. */
START_TEST(sigint_during_long_sort)
{
    char out[800];
    char *path = attrib_program("longsort");
    long sort_line = line_of(path, "let ys = sort(xs)");
    snprintf(out, sizeof out, "%s/out.toon", tu_dir);
    const char *argv[] = {tu_jett, "run", path, "--profile", "--agent", NULL};
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
    ck_assert_msg(hot_line(doc, "main", sort_line) > 0, "%s", doc);
    free(doc);
    free(path);
}
END_TEST

Suite *attrib_e2e_suite(void);
Suite *attrib_e2e_suite(void)
{
    Suite *s = suite_create("attrib_e2e");
    TCase *tc = tcase_create("cpu");
    tcase_add_checked_fixture(tc, tu_e2e_setup, tu_e2e_teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, skid_large_concatenation);
    tcase_add_test(tc, skid_builtin_call);
    tcase_add_test(tc, skid_jett_call);
    tcase_add_test(tc, five_workers_get_their_measured_share);
    tcase_add_test(tc, sigint_during_long_sort);
    suite_add_tcase(s, tc);
    return s;
}
