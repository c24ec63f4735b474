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

/* The value of `key=` in the dump line of record `kw` (malloc'd). */
static char *dump_field(const char *dump, const char *kw, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\n%s ", kw);
    const char *line = strstr(dump, pat);
    ck_assert_msg(line != NULL, "no %s in\n%s", kw, dump);
    snprintf(pat, sizeof pat, " %s=", key);
    const char *v = strstr(line, pat);
    ck_assert_ptr_nonnull(v);
    v += strlen(pat);
    return strndup(v, strcspn(v, " \n"));
}

/* The id of FUNC `name` in a dump. */
static long func_id(const char *dump, const char *name)
{
    char pat[160];
    snprintf(pat, sizeof pat, "\" function=\"%s\" ", name);
    const char *at = strstr(dump, pat);
    ck_assert_msg(at != NULL, "no FUNC %s", name);
    while (at > dump && strncmp(at, "\nFUNC id=", 9) != 0)
        at--;
    return atol(at + 9);
}

/* tests/attrib/loopcalls makes every count known by construction: step
 * is called 300 times from its loop, fact(20) 50 times from main and 950
 * times from itself (19 a call).  The profile gives step 300 calls and
 * main's call line of step(i) 300 calls; the capture's CALLS record has
 * fact's 1000 and both of its call sites' counts, and main and <init>
 * called once. */
START_TEST(loop_calls_are_exact)
{
    char *path = attrib_program("loopcalls"), cap[800];
    snprintf(cap, sizeof cap, "%s/lc.jcap", tu_dir);
    const char *argv[] = {tu_jett,
                          "run",
                          path,
                          "--profile",
                          "--profile-threshold",
                          "0",
                          "--agent",
                          "--profile-capture",
                          cap,
                          NULL};
    struct tu_output o;
    ck_assert_int_eq(tu_run(argv, NULL, 0, &o), 0);
    ck_assert_msg(o.status == 0, "%s\n%s", o.out, o.err);
    size_t len;
    const char *b = block(o.out, "step", &len);
    ck_assert_int_eq(number(b, len, "calls"), 300);
    b = block(o.out, "main", &len);
    ck_assert_int_eq(number(b, len, "calls"), 1);
    char row[200];
    snprintf(row, sizeof row, ",%ld,18,", line_of(path, "s = (s + step(i))"));
    const char *lines = strstr(b, "call_lines[");
    ck_assert_msg(lines && (size_t)(lines - b) < len, "%s", o.out);
    const char *r = strstr(lines, row);
    ck_assert_msg(r != NULL, "no call line %s in\n%.*s", row, (int)len, b);
    long samples, calls;
    ck_assert_int_eq(sscanf(r + strlen(row), "%ld,%ld,", &samples, &calls), 2);
    ck_assert_int_eq(calls, 300);
    ck_assert_int_gt(samples, 0);
    tu_output_free(&o);

    const char *dump[] = {tu_jett, "profile", "dump", cap, NULL};
    ck_assert_int_eq(tu_run(dump, NULL, 0, &o), 0);
    ck_assert_int_eq(o.status, 0);
    char *fns = dump_field(o.out, "CALLS", "functions"),
         *sites = dump_field(o.out, "CALLS", "sites");
    char want[200];
    snprintf(want, sizeof want, "%ld:1000", func_id(o.out, "fact"));
    ck_assert_msg(strstr(fns, want), "%s not in %s", want, fns);
    snprintf(want, sizeof want, "%ld:300", func_id(o.out, "step"));
    ck_assert_msg(strstr(fns, want), "%s not in %s", want, fns);
    snprintf(want, sizeof want, "%ld:1", func_id(o.out, "main"));
    ck_assert_msg(strstr(fns, want), "%s not in %s", want, fns);
    size_t src_len;
    char *src = tu_read_file(path, &src_len);
    long rec = strstr(src, "fact(n - 1)") - src, outer = strstr(src, "f = fact(20)") - src + 4;
    snprintf(want, sizeof want, "%ld:%ld-%ld:950", func_id(o.out, "fact"), rec, rec + 11);
    ck_assert_msg(strstr(sites, want), "%s not in %s", want, sites);
    snprintf(want, sizeof want, "%ld:%ld-%ld:50", func_id(o.out, "main"), outer, outer + 8);
    ck_assert_msg(strstr(sites, want), "%s not in %s", want, sites);
    free(src), free(fns), free(sites), free(path);
    tu_output_free(&o);
}
END_TEST

/* tests/attrib/sleepwork sleeps 30 ms and computes 20 ms in turns and
 * prints what each took by its own clock; the report's time split is
 * within 8 points of it: waiting for the sleep, running Jett code for
 * the rest (the samples of this many ticks are about 1.6 points apart at
 * 95%, and a loaded machine adds its own). */
START_TEST(time_split_follows_the_program_clock)
{
    char *path = attrib_program("sleepwork");
    const char *argv[] = {tu_jett, "run", path, "--profile", NULL};
    struct tu_output o;
    ck_assert_int_eq(tu_run(argv, NULL, 0, &o), 0);
    ck_assert_msg(o.status == 0, "%s", o.err);
    long slept, worked;
    ck_assert_int_eq(sscanf(o.out, "%ld %ld", &slept, &worked), 2);
    double running, waiting, runtime;
    /* "time: N ms wall, M ms CPU: X% running Jett code, ..." */
    const char *t = strstr(o.err, "\ntime: ");
    ck_assert_ptr_nonnull(t);
    t = strstr(t, " ms CPU: ");
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(sscanf(t, " ms CPU: %lf%% running Jett code, %lf%% waiting, %lf%% runtime",
                            &running, &waiting, &runtime),
                     3);
    double slept_pct = 100.0 * (double)slept / (double)(slept + worked);
    ck_assert_msg(waiting > slept_pct - 8 && waiting < slept_pct + 8 &&
                      running > 100 - slept_pct - 8 && running < 100 - slept_pct + 8,
                  "time split %.2f%% running, %.2f%% waiting; the program slept %ld ms and "
                  "computed %ld ms (%.2f%% asleep)\n%s",
                  running, waiting, slept, worked, slept_pct, o.err);
    ck_assert_msg(runtime < 1, "%s", o.err);
    free(path);
    tu_output_free(&o);
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
    tcase_add_test(tc, loop_calls_are_exact);
    tcase_add_test(tc, time_split_follows_the_program_clock);
    suite_add_tcase(s, tc);
    return s;
}
