/* Tests of `jett profile diff`: exact rounding, hand-computed pairs,
 * self-diffs of every fixture, and the command's errors. */
#include <check.h>
#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/diff.h"
#include "testutil.h"

static char *jett;

static void setup(void)
{
    jett = tu_build_path("cli/jett");
}

static void teardown(void)
{
    free(jett);
}

/* Shares differ by n1/d1 - n0/d0, in hundredths of a point, rounded half
 * away from zero; a zero denominator is a zero share. */
START_TEST(points_are_exact)
{
    ck_assert_int_eq(diff_points_hundredths(0, 3, 1, 3), 3333);   /* 33.333... */
    ck_assert_int_eq(diff_points_hundredths(0, 3, 2, 3), 6667);   /* 66.666... */
    ck_assert_int_eq(diff_points_hundredths(0, 0, 1, 8), 1250);   /* 12.5 */
    ck_assert_int_eq(diff_points_hundredths(1, 8, 0, 0), -1250);  /* -12.5 */
    ck_assert_int_eq(diff_points_hundredths(0, 1, 1, 20000), 1);  /* 0.005 -> 0.01 */
    ck_assert_int_eq(diff_points_hundredths(1, 20000, 0, 1), -1); /* -0.005 -> -0.01 */
    ck_assert_int_eq(diff_points_hundredths(0, 1, 1, 20001), 0);  /* 0.00499... */
    ck_assert_int_eq(diff_points_hundredths(3, 4, 1, 5), -5500);  /* 20 - 75 */
    ck_assert_int_eq(diff_points_hundredths(0, 0, 0, 0), 0);
}
END_TEST

static char *run_diff(const char *a, const char *b, bool agent, int want_status)
{
    char *pa = tu_build_path(a), *pb = tu_build_path(b);
    struct tu_output o;
    const char *argv[] = {jett, "profile", "diff", pa, pb, agent ? "--agent" : NULL, NULL};
    ck_assert_int_eq(tu_run(argv, NULL, 0, &o), 0);
    ck_assert_msg(o.status == want_status, "status %d: %s", o.status, o.err);
    free(pa), free(pb);
    char *out = o.out;
    o.out = NULL;
    tu_output_free(&o);
    return out;
}

/* diff-base: f 3, g 1, main 4 of 4; diff-new: f 1, g 3, main 5 of 5.
 * f: 75% -> 20% = -55 points, key |1*4 - 3*5| = 11; g: 25% -> 60% = +35,
 * key |3*4 - 1*5| = 7; main: 100% -> 100%, key 0, counts changed. */
START_TEST(cpu_pair_by_hand)
{
    char *out = run_diff("fixtures/diff-base.jcap", "fixtures/diff-new.jcap", true, 0);
    ck_assert_str_eq(out, "diff:\n"
                          "  schema: jett.profile-diff.v1\n"
                          "  mode: cpu\n"
                          "  base:\n"
                          "    status: complete\n"
                          "    attributed_samples: 4\n"
                          "  new:\n"
                          "    status: complete\n"
                          "    attributed_samples: 5\n"
                          "  functions[3]{namespace,function,path,line,change,base_samples,"
                          "new_samples,base_percent,new_percent,delta_points}:\n"
                          "    a,f,src/a.jett,2,changed,3,1,75,20,-55\n"
                          "    a,g,src/a.jett,3,changed,1,3,25,60,35\n"
                          "    a,main,src/a.jett,1,changed,4,5,100,100,0\n");
    /* Canonical for the reference library (without the final newline). */
    char *dir = tu_tmpdir(), path[600];
    snprintf(path, sizeof path, "%s/diff.toon", dir);
    ck_assert_int_eq(tu_write_file(path, out, strlen(out) - 1), 0);
    char *checker = tu_source_path("tests/toon-check/toon-check");
    struct tu_output o;
    const char *argv[] = {checker, path, NULL};
    ck_assert_int_eq(tu_run(argv, NULL, 0, &o), 0);
    ck_assert_msg(o.status == 0, "%s%s", o.out, o.err);
    tu_output_free(&o);
    unlink(path), rmdir(dir);
    free(dir), free(checker);
    free(out);
    out = run_diff("fixtures/diff-base.jcap", "fixtures/diff-new.jcap", false, 0);
    ck_assert_ptr_nonnull(strstr(out, "CPU profile diff: 4 -> 5 attributed samples\n"));
    ck_assert_ptr_nonnull(strstr(out, "-55.00 pt   75.00% ->  20.00%         3 -> 1         a.f  "
                                      "src/a.jett:2\n"));
    free(out);
}
END_TEST

/* diff-mem-base: f 100 live; diff-mem-new: f 100 then freed after the
 * 150-byte peak, g 50 live.  g appears (+50 allocated, +50 retained, +50
 * at peak); f keeps its 100 allocated and at peak but retains 0 (-100). */
START_TEST(memory_pair_by_hand)
{
    char *out = run_diff("fixtures/diff-mem-base.jcap", "fixtures/diff-mem-new.jcap", true, 0);
    ck_assert_ptr_nonnull(strstr(out, "  base:\n    status: complete\n"
                                      "    attributed_allocated_bytes: 100\n"));
    ck_assert_ptr_nonnull(strstr(out, "    attributed_allocated_bytes: 150\n"));
    ck_assert_ptr_nonnull(strstr(out, "\n    m,g,src/m.jett,2,appeared,0,50,50,0,50,50,0,50,50\n"
                                      "    m,f,src/m.jett,1,changed,100,100,0,100,0,-100,100,100,"
                                      "0\n"));
    free(out);
}
END_TEST

/* A capture against itself: every function unchanged, every delta 0. */
START_TEST(self_diff_is_all_zeros)
{
    char *dir = tu_build_path("fixtures");
    DIR *d = opendir(dir);
    int seen = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 6 || strcmp(e->d_name + n - 5, ".jcap") != 0)
            continue;
        char rel[600];
        snprintf(rel, sizeof rel, "fixtures/%s", e->d_name);
        char *out = run_diff(rel, rel, true, 0);
        const char *rows = strstr(out, "}:\n");
        for (const char *line = rows ? rows + 3 : ""; *line;) {
            const char *end = strchr(line, '\n');
            size_t len = end ? (size_t)(end - line) : strlen(line);
            ck_assert_msg(memmem(line, len, ",unchanged,", 11) != NULL, "%s: %.*s", rel, (int)len,
                          line);
            /* The last column is a delta: 0, or unavailable past a budget. */
            const char *last = memrchr(line, ',', len);
            size_t tail = len - (size_t)(last - line) - 1;
            ck_assert_msg(last && ((tail == 1 && last[1] == '0') ||
                                   (tail == 11 && memcmp(last + 1, "unavailable", 11) == 0)),
                          "%s: %.*s", rel, (int)len, line);
            line += len + (end ? 1 : 0);
        }
        free(out);
        seen++;
    }
    if (d)
        closedir(d);
    free(dir);
    ck_assert_int_ge(seen, 5);
}
END_TEST

START_TEST(command_errors)
{
    char *out = run_diff("fixtures/tiny-cpu.jcap", "fixtures/tiny-memory.jcap", true, 1);
    free(out);
    char *a = tu_build_path("fixtures/tiny-cpu.jcap");
    struct tu_output o;
    const char *one[] = {jett, "profile", "diff", a, NULL};
    ck_assert_int_eq(tu_run(one, NULL, 0, &o), 0);
    ck_assert_int_eq(o.status, 2);
    ck_assert_ptr_nonnull(strstr(o.err, "expected two captures, BASE and NEW"));
    tu_output_free(&o);
    const char *opt[] = {jett, "profile", "diff", a, a, "--human", NULL};
    ck_assert_int_eq(tu_run(opt, NULL, 0, &o), 0);
    ck_assert_int_eq(o.status, 2);
    ck_assert_ptr_nonnull(strstr(o.err, "unknown option '--human'"));
    tu_output_free(&o);
    const char *missing[] = {jett, "profile", "diff", a, "/nonexistent.jcap", NULL};
    ck_assert_int_eq(tu_run(missing, NULL, 0, &o), 0);
    ck_assert_int_eq(o.status, 2);
    tu_output_free(&o);
    /* both sides are read at once; both errors come out, BASE's first */
    const char *both[] = {jett, "profile", "diff", "/nonexistent-base.jcap", a, NULL};
    both[4] = tu_source_path("fixtures/captures/cpu-simple.jcap.txt");
    ck_assert_int_eq(tu_run(both, NULL, 0, &o), 0);
    ck_assert_int_eq(o.status, 2);
    const char *eb = strstr(o.err, "jett: /nonexistent-base.jcap: cannot open");
    const char *en = strstr(o.err, "cpu-simple.jcap.txt: ");
    ck_assert_ptr_nonnull(eb);
    ck_assert_ptr_nonnull(en);
    ck_assert(eb < en);
    tu_output_free(&o);
    free((char *)both[4]);
    const char *modes[] = {jett, "profile", "diff", a, a, NULL};
    modes[4] = tu_build_path("fixtures/tiny-memory.jcap");
    ck_assert_int_eq(tu_run(modes, NULL, 0, &o), 0);
    ck_assert_int_eq(o.status, 1);
    ck_assert_ptr_nonnull(strstr(o.err, "BASE is a cpu profile and NEW a memory profile"));
    tu_output_free(&o);
    free((char *)modes[4]);
    free(a);
}
END_TEST

/* On one CPU the two captures are read in turn, not at once: the same
 * documents and the same errors, BASE's first. */
START_TEST(one_cpu_reads_in_turn)
{
    char *both_cpus[2];
    both_cpus[0] = run_diff("fixtures/diff-base.jcap", "fixtures/diff-new.jcap", true, 0);
    both_cpus[1] = run_diff("fixtures/diff-mem-base.jcap", "fixtures/diff-mem-new.jcap", false, 0);
    cpu_set_t all, one;
    ck_assert_int_eq(sched_getaffinity(0, sizeof all, &all), 0);
    CPU_ZERO(&one);
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &all)) {
            CPU_SET(c, &one);
            break;
        }
    ck_assert_int_eq(sched_setaffinity(0, sizeof one, &one), 0); /* inherited by jett */
    char *out = run_diff("fixtures/diff-base.jcap", "fixtures/diff-new.jcap", true, 0);
    ck_assert_str_eq(out, both_cpus[0]);
    free(out);
    out = run_diff("fixtures/diff-mem-base.jcap", "fixtures/diff-mem-new.jcap", false, 0);
    ck_assert_str_eq(out, both_cpus[1]);
    free(out);
    struct tu_output o;
    const char *argv[] = {
        jett, "profile", "diff", "/nonexistent-base.jcap", "/nonexistent-new.jcap", NULL};
    ck_assert_int_eq(tu_run(argv, NULL, 0, &o), 0);
    ck_assert_int_eq(o.status, 2);
    const char *eb = strstr(o.err, "/nonexistent-base.jcap: cannot open");
    const char *en = strstr(o.err, "/nonexistent-new.jcap: cannot open");
    ck_assert(eb && en && eb < en);
    tu_output_free(&o);
    ck_assert_int_eq(sched_setaffinity(0, sizeof all, &all), 0);
    free(both_cpus[0]), free(both_cpus[1]);
}
END_TEST

Suite *diff_suite(void)
{
    Suite *s = suite_create("diff");
    TCase *t = tcase_create("diff");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, points_are_exact);
    tcase_add_test(t, cpu_pair_by_hand);
    tcase_add_test(t, memory_pair_by_hand);
    tcase_add_test(t, self_diff_is_all_zeros);
    tcase_add_test(t, command_errors);
    tcase_add_test(t, one_cpu_reads_in_turn);
    suite_add_tcase(s, t);
    return s;
}
