/* Tests of `jett profile diff`: exact rounding, hand-computed pairs,
 * self-diffs of every fixture, and the command's errors. */
#include <check.h>
#include <math.h>
#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/diff.h"
#include "daemon/export/flame_diff.h"
#include "keeper_program.h"
#include "testutil.h"
#include "cli/diff_pace.h"
#include "daemon/attrib.h"
#include "daemon/feed.h"

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
    const char *argv[] = {tu_jett, "profile", "diff", pa, pb, agent ? "--agent" : NULL, NULL};
    ck_assert_int_eq(tu_run(argv, NULL, 0, &o), 0);
    ck_assert_msg(o.status == want_status, "status %d: %s", o.status, o.err);
    free(pa), free(pb);
    char *out = o.out;
    o.out = NULL;
    tu_output_free(&o);
    return out;
}

/* The text with every run of spaces as one space: the human diff's
 * content and order, not its column widths. */
static char *squeeze(char *s)
{
    char *w = s;
    for (const char *r = s; *r; r++)
        if (*r != ' ' || w == s || w[-1] != ' ')
            *w++ = *r;
    *w = '\0';
    return s;
}

/* Checks that a TOON document (with its final newline) is canonical for
 * the reference library. */
static void assert_canonical(const char *doc)
{
    char *dir = tu_tmpdir(), path[600];
    snprintf(path, sizeof path, "%s/diff.toon", dir);
    ck_assert_int_eq(tu_write_file(path, doc, strlen(doc) - 1), 0);
    char *checker = tu_source_path("tests/toon-check/toon-check");
    struct tu_output o;
    const char *argv[] = {checker, path, NULL};
    ck_assert_int_eq(tu_run(argv, NULL, 0, &o), 0);
    ck_assert_msg(o.status == 0, "%s%s", o.out, o.err);
    tu_output_free(&o);
    unlink(path), rmdir(dir);
    free(dir), free(checker);
}

/* diff-base: f 3, g 1, main 4 of 4 (self: f 3, g 1, main 0); diff-new:
 * f 1, g 3, main 5 of 5 (self f 1, g 3, main 1).  Self changes: f -2,
 * g +2 (tie: f first by self samples 3 vs 3, then name), main +1.
 * p-values (rates equal, pi = 1/2): 3 vs 1 -> 2 * P(X <= 1 | n=4) =
 * 2 * 5/16 = 0.625; 0 vs 1 -> 2 * P(X >= 1 | n=1) = 1; 4 vs 5 ->
 * 2 * P(X >= 5 | n=9) = 2 * 256/512 = 1.  At equal rates each direction
 * is the sign of its delta: f shrank, g and main grew.  Shares: f 75% ->
 * 20% (-55 points), g 25% -> 60% (+35).  Version 1 ordered these by
 * change of share and matched by line; the order here is by self
 * samples. */
START_TEST(cpu_pair_by_hand)
{
    char *out = run_diff("fixtures/diff-base.jcap", "fixtures/diff-new.jcap", true, 0);
    ck_assert_str_eq(out,
                     "diff:\n"
                     "  schema: jett.profile-diff.v2\n"
                     "  mode: cpu\n"
                     "  test: exact_binomial_two_sided\n"
                     "  level: 0.01\n"
                     "  base:\n"
                     "    status: complete\n"
                     "    requested_rate_hz: 1000\n"
                     "    attributed_samples: 4\n"
                     "  new:\n"
                     "    status: complete\n"
                     "    requested_rate_hz: 1000\n"
                     "    attributed_samples: 5\n"
                     "  totals[7]{name,base,new,delta,ratio,p_value,significance}:\n"
                     "    wall_ms,4,5,1,1.25,unavailable,untested\n"
                     "    process_cpu_ms,4,5,1,1.25,unavailable,untested\n"
                     "    recorded_samples,4,5,1,1.25,1,noise\n"
                     "    attributed_samples,4,5,1,1.25,1,noise\n"
                     "    runtime_samples,0,0,0,unavailable,1,none\n"
                     "    waiting_samples,0,0,0,unavailable,1,none\n"
                     "    unavailable_samples,0,0,0,unavailable,1,none\n"
                     "  functions[3]{namespace,function,origin,path,base_line,new_line,change,"
                     "base_self_samples,new_self_samples,delta_self_samples,self_ratio,"
                     "self_p_value,self_significance,self_direction,base_samples,new_samples,"
                     "delta_samples,ratio,p_value,significance,direction,base_percent,"
                     "new_percent,delta_points}:\n"
                     "    a,f,project,src/a.jett,2,2,changed,3,1,-2,0.3333,0.625,noise,shrank,"
                     "3,1,-2,0.3333,0.625,noise,shrank,75,20,-55\n"
                     "    a,g,project,src/a.jett,3,3,changed,1,3,2,3,0.625,noise,grew,"
                     "1,3,2,3,0.625,noise,grew,25,60,35\n"
                     "    a,main,project,src/a.jett,1,1,changed,0,1,1,unavailable,1,noise,grew,"
                     "4,5,1,1.25,1,noise,grew,100,100,0\n"
                     "  waiting: []\n");
    assert_canonical(out);
    free(out);
    out = squeeze(run_diff("fixtures/diff-base.jcap", "fixtures/diff-new.jcap", false, 0));
    ck_assert_ptr_nonnull(strstr(out, "CPU profile diff: 4 -> 5 attributed samples\n"));
    ck_assert_msg(strstr(out, " 1. a.f src/a.jett:2 changed\n"
                              " self samples 3 -> 1 -2 x0.3333 noise (p = 0.6250)\n"
                              " inclusive samples 3 -> 1 -2 x0.3333 noise (p = 0.6250)\n"
                              " 2. a.g src/a.jett:3 changed\n") != NULL,
                  "%s", out);
    free(out);
}
END_TEST

/* The optimization pair (fixtures/captures/diff-opt-*.jcap.txt): a
 * comment line moved hot, helper and tail down one line, and hot got
 * fast.  Self samples base -> new: hot 200 -> 10, helper 50 -> 52,
 * tail 30 -> 29, main 20 -> 21; inclusive main 300 -> 112, wall 300 ->
 * 112 ms.  Matched without the line, the moved functions keep their
 * rows (base_line 2, 3, 4 -> new_line 3, 4, 5).  Order by |self change|:
 * hot 190, helper 2, then main and tail at 1, main first by |inclusive
 * change| 188 > 1.  Exact binomial p-values (pi = 1/2, computed with
 * tests/reference/binomial_p.py in rational arithmetic):
 *   200 vs 10:  2 * sum_{j<=10} C(210,j) / 2^210 = 4.73e-47 -> 0
 *   50 vs 52:   2 * sum_{j>=52} C(102,j) / 2^102 = 0.921191049...
 *   30 vs 29:   n = 59 is odd and 29 < 29.5: 2 * P(X <= 29) = 2 * 1/2 = 1
 *   20 vs 21:   likewise 2 * P(X >= 21 | n=41) = 1
 *   300 vs 112: 6.47e-21 -> 0
 * Ratios new/base: 10/200 = 0.05, 52/50 = 1.04, 21/20 = 1.05, 29/30 =
 * 0.96666 -> 0.9667, 112/300 = 0.37333 -> 0.3733.  Shares: hot 200/300
 * = 66.67% -> 10/112 = 8.93% (-57.738 points), helper 16.67% -> 46.43%
 * (+29.762), tail 10% -> 25.89% (+15.893). */
START_TEST(optimization_pair_by_hand)
{
    char *out = run_diff("fixtures/diff-opt-base.jcap", "fixtures/diff-opt-new.jcap", true, 0);
    const char *totals = "  totals[7]{name,base,new,delta,ratio,p_value,significance}:\n"
                         "    wall_ms,300,112,-188,0.3733,unavailable,untested\n"
                         "    process_cpu_ms,300,112,-188,0.3733,unavailable,untested\n"
                         "    recorded_samples,300,112,-188,0.3733,0,significant\n"
                         "    attributed_samples,300,112,-188,0.3733,0,significant\n"
                         "    runtime_samples,0,0,0,unavailable,1,none\n"
                         "    waiting_samples,0,0,0,unavailable,1,none\n"
                         "    unavailable_samples,0,0,0,unavailable,1,none\n";
    const char *rows =
        "}:\n"
        "    opt,hot,project,src/opt.jett,2,3,changed,200,10,-190,0.05,0,significant,shrank,"
        "200,10,-190,0.05,0,significant,shrank,66.67,8.93,-57.74\n"
        "    opt,helper,project,src/opt.jett,3,4,changed,50,52,2,1.04,0.921191,noise,grew,"
        "50,52,2,1.04,0.921191,noise,grew,16.67,46.43,29.76\n"
        "    opt,main,project,src/opt.jett,1,1,changed,20,21,1,1.05,1,noise,grew,"
        "300,112,-188,0.3733,0,significant,shrank,100,100,0\n"
        "    opt,tail,project,src/opt.jett,4,5,changed,30,29,-1,0.9667,1,noise,shrank,"
        "30,29,-1,0.9667,1,noise,shrank,10,25.89,15.89\n";
    ck_assert_msg(strstr(out, totals) != NULL, "%s", out);
    ck_assert_msg(strstr(out, rows) != NULL, "%s", out);
    ck_assert_ptr_nonnull(strstr(out, "  functions[4]{"));
    assert_canonical(out);
    free(out);
    /* The human diff: the same order, units in the labels. */
    out = squeeze(run_diff("fixtures/diff-opt-base.jcap", "fixtures/diff-opt-new.jcap", false, 0));
    const char *hot = strstr(out, " 1. opt.hot src/opt.jett:2 -> 3 changed\n"
                                  " self samples 200 -> 10 -190 x0.0500 significant (p < 0.0001)\n"
                                  " inclusive samples 200 -> 10 -190 x0.0500 significant "
                                  "(p < 0.0001)\n");
    const char *helper = strstr(out, " 2. opt.helper src/opt.jett:3 -> 4 changed\n"
                                     " self samples 50 -> 52 +2 x1.0400 noise (p = 0.9212)\n");
    const char *mainrow = strstr(out, " 3. opt.main src/opt.jett:1 changed\n"
                                      " self samples 20 -> 21 +1 x1.0500 noise (p = 1.0000)\n"
                                      " inclusive samples 300 -> 112 -188 x0.3733 significant "
                                      "(p < 0.0001)\n");
    const char *tail = strstr(out, " 4. opt.tail src/opt.jett:4 -> 5 changed\n");
    ck_assert_msg(hot && helper && mainrow && tail && hot < helper && helper < mainrow &&
                      mainrow < tail,
                  "%s", out);
    ck_assert_msg(strstr(out, "Totals:\n wall time (ms) 300 -> 112 -188 x0.3733 untested\n") &&
                      strstr(out, " recorded samples 300 -> 112 -188 x0.3733 significant "
                                  "(p < 0.0001)\n"),
                  "%s", out);
    free(out);
}
END_TEST

/* The field'th comma-separated column of a row (no quoting in these
 * rows), copied into buf. */
static const char *column(const char *row, int field, char *buf, size_t n)
{
    const char *p = row;
    for (int i = 0; i < field && p; i++)
        p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL;
    size_t len = p ? strcspn(p, ",\n") : 0;
    snprintf(buf, n, "%.*s", (int)(len < n ? len : n - 1), p ? p : "");
    return buf;
}

/* The row of a function in the functions table, or NULL. */
static const char *row_in(const char *doc, const char *ns, const char *fn)
{
    char key[300];
    snprintf(key, sizeof key, "\n    %s,%s,", ns, fn);
    const char *fns = strstr(doc, "  functions[");
    const char *r = fns ? strstr(fns, key) : NULL;
    return r ? r + 5 : NULL;
}

static const char *row_of(const char *doc, const char *fn)
{
    return row_in(doc, "speedup.main", fn);
}

/* Starts the profile of fixtures/programs/speedup/NAME/main.jett into
 * DIR/NAME.jcap, its stdout in DIR/NAME.out. */
static pid_t start_program(const char *dir, const char *name)
{
    char rel[100], cap[600], out[600];
    snprintf(rel, sizeof rel, "fixtures/programs/speedup/%s/main.jett", name);
    snprintf(cap, sizeof cap, "%s/%s.jcap", dir, name);
    snprintf(out, sizeof out, "%s/%s.out", dir, name);
    char *prog = tu_source_path(rel);
    const char *argv[] = {tu_jett, "run", prog, "--profile", "--profile-capture", cap, NULL};
    pid_t pid = tu_spawn(argv, out);
    free(prog);
    ck_assert_int_gt(pid, 0);
    return pid;
}

static char *read_out(const char *dir, const char *name)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s.out", dir, name);
    size_t len;
    char *text = tu_read_file(path, &len);
    ck_assert_ptr_nonnull(text);
    unlink(path);
    return text;
}

/* A real before/after (fixtures/programs/speedup/): after/ adds one
 * comment line above tally(), so tally (line 8 -> 9), checksum (16 -> 17),
 * main (26 -> 27) and lookup (45 -> 46) all move, and lookup() swaps its
 * scan of 4000 x 4000 string comparisons for a map.  Both print the same.
 * The diff's first row is lookup, its self samples falling significantly
 * (hundreds of samples to a handful: p far below 0.01 under any load);
 * tally, checksum and main are matched across the move.  Whether the
 * unchanged work is within noise is pinned by the hand-computed pair
 * above, not here: samples count the wall time a program ran, and a busy
 * machine (load 18 on 2 cores while this was written) slows one run's
 * unchanged work 2x and not the other's, a real difference in time.  What
 * holds under any load is that their change is far smaller than lookup's.
 * The two run at once, unchanged work first, so that load falls on both
 * alike as far as it can.  lookup may have no sample at all in NEW, and
 * then it has no bucket there (disappeared). */
START_TEST(real_program_before_after)
{
    char *dir = tu_tmpdir();
    pid_t pb = start_program(dir, "before"), pa = start_program(dir, "after");
    ck_assert_int_eq(tu_wait(pb), 0);
    ck_assert_int_eq(tu_wait(pa), 0);
    char *before = read_out(dir, "before"), *after = read_out(dir, "after");
    ck_assert_str_eq(before, after);
    free(before), free(after);
    char a[600], b[600], f[32];
    snprintf(a, sizeof a, "%s/before.jcap", dir);
    snprintf(b, sizeof b, "%s/after.jcap", dir);
    struct tu_output o;
    const char *argv[] = {tu_jett, "profile", "diff", a, b, "--agent", NULL};
    ck_assert_int_eq(tu_run(argv, NULL, 0, &o), 0);
    ck_assert_msg(o.status == 0, "%s", o.err);
    /* four functions, and a fifth when a sample fell in the namespace's
     * <init> (its constants) on one side */
    const char *fns = strstr(o.out, "  functions[");
    ck_assert_msg(fns != NULL, "%s", o.out);
    const char *first = strstr(fns, "}:\n") + 3;
    ck_assert_msg(strncmp(first, "    speedup.main,lookup,project,main.jett,45,", 45) == 0, "%s",
                  o.out);
    ck_assert_str_eq(column(first, 12, f, sizeof f), "significant");
    long hot_drop = -strtol(column(first, 9, f, sizeof f), NULL, 10);
    ck_assert_msg(hot_drop > 0, "%s", o.out);
    static const char *const steady[][3] = {
        {"tally", "8", "9"}, {"checksum", "16", "17"}, {"main", "26", "27"}};
    for (int k = 0; k < 3; k++) {
        const char *r = row_of(o.out, steady[k][0]);
        ck_assert_msg(r != NULL, "%s: %s", steady[k][0], o.out);
        ck_assert_str_eq(column(r, 4, f, sizeof f), steady[k][1]);
        ck_assert_str_eq(column(r, 5, f, sizeof f), steady[k][2]);
        long d = labs(strtol(column(r, 9, f, sizeof f), NULL, 10));
        ck_assert_msg(d * 4 < hot_drop, "%s: %s", steady[k][0], o.out);
    }
    /* main's own samples are few; its inclusive samples fell with lookup's */
    ck_assert_str_eq(column(row_of(o.out, "main"), 19, f, sizeof f), "significant");
    assert_canonical(o.out);
    tu_output_free(&o);
    unlink(a), unlink(b), rmdir(dir);
    free(dir);
}
END_TEST

/* diff-mem-base: f 100 live; diff-mem-new: f 100 then freed after the
 * 150-byte peak, g 50 live.  g appears (+50 allocated, +50 retained, +50
 * at peak, no ratio: nothing before); f keeps its 100 allocated (ratio 1)
 * and at peak but retains 0 (-100).  Totals: 1 -> 2 allocations, 100 ->
 * 150 allocated (1.5), 0 -> 100 freed, peak 100 -> 150, retained 100 ->
 * 50 (0.5).  Counts are exact: every change is significant. */
START_TEST(memory_pair_by_hand)
{
    char *out = run_diff("fixtures/diff-mem-base.jcap", "fixtures/diff-mem-new.jcap", true, 0);
    ck_assert_ptr_nonnull(strstr(out, "  test: exact_counts\n  base:\n    status: complete\n"
                                      "    attributed_allocated_bytes: 100\n"));
    ck_assert_ptr_nonnull(strstr(out, "    attributed_allocated_bytes: 150\n"));
    ck_assert_ptr_nonnull(strstr(out, "  totals[5]{name,base,new,delta,ratio,significance}:\n"
                                      "    allocation_count,1,2,1,2,significant\n"
                                      "    allocated_bytes,100,150,50,1.5,significant\n"
                                      "    freed_bytes,0,100,100,unavailable,significant\n"
                                      "    peak_live_bytes,100,150,50,1.5,significant\n"
                                      "    retained_bytes,100,50,-50,0.5,significant\n"));
    ck_assert_ptr_nonnull(
        strstr(out, "\n    m,g,project,src/m.jett,unavailable,2,appeared,0,50,50,unavailable,"
                    "0,50,50,0,50,50,significant\n"
                    "    m,f,project,src/m.jett,1,1,changed,100,100,0,1,100,0,-100,100,100,0,"
                    "significant\n"));
    assert_canonical(out);
    free(out);
    out = squeeze(run_diff("fixtures/diff-mem-base.jcap", "fixtures/diff-mem-new.jcap", false, 0));
    ck_assert_ptr_nonnull(strstr(out, "every change is real"));
    ck_assert_msg(strstr(out, " 1. m.g src/m.jett:2 appeared\n"
                              " allocated bytes 0 -> 50 +50 - significant\n"
                              " retained bytes 0 -> 50 +50 - significant\n"
                              " live-at-peak bytes 0 -> 50 +50 - significant\n"
                              " 2. m.f src/m.jett:1 changed\n"
                              " allocated bytes 100 -> 100 +0 x1.0000 none\n"
                              " retained bytes 100 -> 0 -100 x0.0000 significant\n") &&
                      strstr(out, " retained bytes 100 -> 50 -50 x0.5000 significant\n"),
                  "%s", out);
    free(out);
}
END_TEST

/* The p-values against exact rational arithmetic
 * (tests/reference/binomial_p.py X0 X1 R0 R1), to 1e-9 relative. */
START_TEST(binomial_matches_exact)
{
    static const struct {
        uint64_t x0, x1;
        uint32_t r0, r1;
        double p;
    } cases[] = {
        {200, 10, 1000, 1000, 4.7282634428769906e-47},
        {50, 52, 1000, 1000, 0.92119104925387196},
        {300, 112, 1000, 1000, 6.4663158776548804e-21},
        {3, 1, 1000, 1000, 0.625},
        {1, 3, 1000, 1000, 0.625},
        {4, 5, 1000, 1000, 1},
        {0, 1, 1000, 1000, 1},
        {10, 0, 1000, 1000, 0.001953125}, /* 2 / 2^10 */
        {0, 10, 1000, 1000, 0.001953125},
        {100, 130, 1000, 1000, 0.055613577781392386},
        {1000, 1100, 1000, 1000, 0.030720707864242296},
        {1000, 1150, 1000, 1000, 0.0013063541365220407},
        {2000, 2150, 1000, 1000, 0.020715456049267219},
        /* at half the rate, 20 samples are what 10 were: pi = 1/3 */
        {10, 20, 1000, 500, 0.00038751860274060639},
        {20, 5, 1000, 100, 0.14208155669569739},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double p = diff_binomial_p(cases[i].x0, cases[i].x1, cases[i].r0, cases[i].r1);
        ck_assert_msg(fabs(p - cases[i].p) <= 1e-9 * cases[i].p, "%llu vs %llu: %.17g, not %.17g",
                      (unsigned long long)cases[i].x0, (unsigned long long)cases[i].x1, p,
                      cases[i].p);
    }
    ck_assert(diff_binomial_p(0, 0, 1000, 1000) == 1);
    double p;
    /* 1000 vs 1100 is p = 0.0307: noise at the 0.01 level; 1000 vs 1150
     * (0.0013) is not; equal counts are no change at all */
    ck_assert_int_eq(diff_samples_verdict(1000, 1100, 1000, 1000, &p), DIFF_NOISE);
    ck_assert_int_eq(diff_samples_verdict(1000, 1150, 1000, 1000, &p), DIFF_SIGNIFICANT);
    ck_assert_int_eq(diff_samples_verdict(7, 7, 1000, 1000, &p), DIFF_NONE);
    /* large counts stay fast and sane: 10^8 vs 10^8 + 10^4 is 0.7 sd */
    p = diff_binomial_p(100000000, 100010000, 1000, 1000);
    ck_assert_msg(p > 0.4 && p < 0.6, "%.17g", p);
}
END_TEST

static struct diff_side fn_side(const char *fn, uint64_t line, uint64_t samples)
{
    struct diff_side s = {
        {"n", 1}, {fn, strlen(fn)}, {"src/n.jett", 10}, line, 0, samples, samples, 0, 0};
    return s;
}

/* Two functions named f in one file are told apart by declaration order:
 * base f@3 and f@9, new f@4 and f@10 (both moved one line) pair as
 * (3, 4) and (9, 10); a third f in NEW appears. */
START_TEST(same_name_pairs_in_declaration_order)
{
    struct rank_report base = {.mode = WIRE_MODE_CPU, .rate_hz = 1000};
    struct rank_report neu = base;
    struct diff_side b[] = {fn_side("f", 3, 40), fn_side("f", 9, 5)};
    struct diff_side n[] = {fn_side("f", 4, 41), fn_side("f", 10, 6), fn_side("f", 20, 2)};
    base.cpu.attributed_samples = 45, neu.cpu.attributed_samples = 49;
    struct diff_sides bs = {b, 2}, ns = {n, 3};
    struct diff d;
    char err[100];
    ck_assert_int_eq(diff_build(&base, &bs, &neu, &ns, &d, err, sizeof err), 0);
    ck_assert_int_eq(d.n, 3);
    /* |self change|: 2 (appeared), 1 and 1; the tie by self samples 41 > 6 */
    ck_assert(!d.rows[0].has_base && d.rows[0].neu.line == 20);
    ck_assert(d.rows[1].base.line == 3 && d.rows[1].neu.line == 4);
    ck_assert(d.rows[2].base.line == 9 && d.rows[2].neu.line == 10);
    ck_assert_int_eq(d.rows[1].change, DIFF_CHANGED);
    diff_free(&d);
}
END_TEST

/* Where the programs waited, compared site by site: cpu-waiting (base)
 * waited at w.main 3:3 (3 samples), w.poll 7:3 (3) and 8:3 (2) and at
 * w.main with no span (1); cpu-states (new) at st.main with no span (1).
 * No site is on both sides.  Order by |change|: w.main 3:3 and w.poll
 * 7:3 at 3 (main before poll), w.poll 8:3 at 2, then st.main and w.main
 * (unknown line) at 1, "st" before "w".  Exact binomial p-values (pi =
 * 1/2): 3 vs 0: 2 * P(X <= 0 | n=3) = 2/8 = 0.25; 2 vs 0: 2/4 = 0.5;
 * 1 vs 0 and 0 vs 1: min(1, 2 * 1/2) = 1.  Ratios new/base: 0 / 3 = 0,
 * none for a base of 0. */
START_TEST(waiting_sites_by_hand)
{
    char *out = run_diff("fixtures/cpu-waiting.jcap", "fixtures/cpu-states.jcap", true, 0);
    const char *want =
        "  waiting[5]{namespace,function,origin,path,line,column,base_samples,new_samples,"
        "delta_samples,ratio,p_value,significance,direction}:\n"
        "    w,main,project,src/w.jett,3,3,3,0,-3,0,0.25,noise,shrank\n"
        "    w,poll,project,src/w.jett,7,3,3,0,-3,0,0.25,noise,shrank\n"
        "    w,poll,project,src/w.jett,8,3,2,0,-2,0,0.5,noise,shrank\n"
        "    st,main,project,src/st.jett,unavailable,unavailable,0,1,1,unavailable,1,noise,grew\n"
        "    w,main,project,src/w.jett,unavailable,unavailable,1,0,-1,0,1,noise,shrank\n";
    ck_assert_msg(strstr(out, want) != NULL, "%s", out);
    assert_canonical(out);
    free(out);
    out = squeeze(run_diff("fixtures/cpu-waiting.jcap", "fixtures/cpu-states.jcap", false, 0));
    const char *first = strstr(out, "\nWaiting call sites, by change in samples:\n"
                                    " 1. w.main src/w.jett:3:3\n"
                                    " waiting samples 3 -> 0 -3 x0.0000 noise (p = 0.2500)\n"
                                    " 2. w.poll src/w.jett:7:3\n");
    const char *last = strstr(out, " 4. st.main src/st.jett\n"
                                   " waiting samples 0 -> 1 +1 - noise (p = 1.0000)\n"
                                   " 5. w.main src/w.jett\n");
    ck_assert_msg(first && last && first < last, "%s", out);
    free(out);
    /* a diff without waiting says so */
    out = run_diff("fixtures/diff-base.jcap", "fixtures/diff-new.jcap", false, 0);
    ck_assert_ptr_nonnull(strstr(out, "\nWaiting call sites, by change in samples:\n"
                                      "  no waiting call sites in either profile\n"));
    free(out);
}
END_TEST

/* Waiting call sites against a partial side (fixtures/captures/
 * diff-wait-part-*.jcap.txt): BASE ran out of its CPU budget before the
 * site wait(2) (main 4:3) had a bucket, so it holds main 3:3 only (2
 * samples); NEW, complete, has 3:3 once and 4:3 three times.  3:3 is
 * held by both: compared, 2 -> 1, ratio 0.5, 2 P(X <= 1 | n = 3) =
 * 2 * 4/8 = 1: noise, shrank.  4:3 is missing from a partial side: not
 * comparable, its BASE count unavailable, whatever its NEW count; it
 * comes after the compared site although its count (3) is larger.  The
 * other way round, 3:3 grew 1 -> 2 and 4:3 has NEW unavailable. */
START_TEST(waiting_sites_partial_by_hand)
{
    char *out =
        run_diff("fixtures/diff-wait-part-base.jcap", "fixtures/diff-wait-part-new.jcap", true, 0);
    ck_assert_msg(strstr(out, "}:\n    wp,main,project,src/wp.jett,3,3,2,1,-1,0.5,1,noise,shrank\n"
                              "    wp,main,project,src/wp.jett,4,3,unavailable,3,unavailable,"
                              "unavailable,unavailable,not_comparable,unavailable\n") != NULL,
                  "%s", out);
    ck_assert_ptr_nonnull(strstr(out, "    waiting_samples,3,4,1,1.3333,1,noise\n"));
    assert_canonical(out);
    free(out);
    out = squeeze(run_diff("fixtures/diff-wait-part-base.jcap", "fixtures/diff-wait-part-new.jcap",
                           false, 0));
    ck_assert_msg(strstr(out, "\nWaiting call sites, by change in samples:\n"
                              " 1. wp.main src/wp.jett:3:3\n"
                              " waiting samples 2 -> 1 -1 x0.5000 noise (p = 1.0000)\n"
                              " 2. wp.main src/wp.jett:4:3 not comparable\n"
                              " waiting samples unavailable -> 3 unavailable - not comparable\n") !=
                      NULL,
                  "%s", out);
    free(out);
    out =
        run_diff("fixtures/diff-wait-part-new.jcap", "fixtures/diff-wait-part-base.jcap", true, 0);
    ck_assert_msg(strstr(out, "}:\n    wp,main,project,src/wp.jett,3,3,1,2,1,2,1,noise,grew\n"
                              "    wp,main,project,src/wp.jett,4,3,3,unavailable,unavailable,"
                              "unavailable,unavailable,not_comparable,unavailable\n") != NULL,
                  "%s", out);
    free(out);
}
END_TEST

/* A capture against itself: every function unchanged, every delta 0;
 * or, when the capture is partial for a reason that may count any
 * function short (jett-profile(7), "Partial sides"), every function not
 * comparable, with no delta.  A partial capture whose budget ran out
 * still counts the functions it holds exactly: unchanged. */
START_TEST(self_diff_is_all_zeros)
{
    char *dir = tu_build_path("fixtures");
    DIR *d = opendir(dir);
    int seen = 0, untrusted = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 6 || strcmp(e->d_name + n - 5, ".jcap") != 0)
            continue;
        char rel[600];
        snprintf(rel, sizeof rel, "fixtures/%s", e->d_name);
        char *out = run_diff(rel, rel, true, 0);
        bool trusted = strstr(out, "  base:\n    status: complete\n") ||
                       strstr(out, "  base:\n    status: partial\n"
                                   "    partial_reason: cpu_metadata_limit\n") ||
                       strstr(out, "  base:\n    status: partial\n"
                                   "    partial_reason: retention_metadata_limit\n");
        const char *change = trusted ? ",unchanged," : ",not_comparable,";
        const char *fns = strstr(out, "  functions[");
        const char *rows = fns ? strstr(fns, "}:\n") : NULL;
        for (const char *line = rows ? rows + 3 : ""; *line && !strncmp(line, "    ", 4);) {
            const char *end = strchr(line, '\n');
            size_t len = end ? (size_t)(end - line) : strlen(line);
            ck_assert_msg(memmem(line, len, change, strlen(change)) != NULL, "%s: %.*s", rel,
                          (int)len, line);
            /* The last column is a CPU delta (0, or unavailable past a
             * budget or when not comparable) or a memory verdict (none,
             * or not_comparable). */
            const char *last = memrchr(line, ',', len);
            size_t tail = len - (size_t)(last - line) - 1;
            ck_assert_msg(
                last && ((trusted && tail == 1 && last[1] == '0') ||
                         (trusted && tail == 4 && memcmp(last + 1, "none", 4) == 0) ||
                         (tail == 11 && memcmp(last + 1, "unavailable", 11) == 0) ||
                         (!trusted && tail == 14 && memcmp(last + 1, "not_comparable", 14) == 0)),
                "%s: %.*s", rel, (int)len, line);
            line += len + (end ? 1 : 0);
        }
        /* every waiting call site the same on both sides, or not
         * comparable on an untrusted side */
        const char *same = trusted ? ",0,1,1,none,none"
                                   : ",unavailable,unavailable,unavailable,not_comparable,"
                                     "unavailable";
        const char *waits = strstr(out, "\n  waiting[");
        waits = waits ? strstr(waits, "}:\n") : NULL;
        for (const char *line = waits ? waits + 3 : ""; *line && !strncmp(line, "    ", 4);) {
            const char *end = strchr(line, '\n');
            size_t len = end ? (size_t)(end - line) : strlen(line);
            ck_assert_msg(len > strlen(same) &&
                              !memcmp(line + len - strlen(same), same, strlen(same)),
                          "%s: %.*s", rel, (int)len, line);
            line += len + (end ? 1 : 0);
        }
        untrusted += !trusted && rows && rows[3];
        free(out);
        seen++;
    }
    if (d)
        closedir(d);
    free(dir);
    ck_assert_int_ge(seen, 5);
    /* every-record (collector_failure), hostile-names (stack_capture_limit),
     * cpu-interrupted and cpu-deep-waiting (interrupted), with functions */
    ck_assert_int_ge(untrusted, 4);
}
END_TEST

START_TEST(command_errors)
{
    char *out = run_diff("fixtures/tiny-cpu.jcap", "fixtures/tiny-memory.jcap", true, 1);
    free(out);
    char *a = tu_build_path("fixtures/tiny-cpu.jcap");
    struct tu_output o;
    const char *one[] = {tu_jett, "profile", "diff", a, NULL};
    ck_assert_int_eq(tu_run(one, NULL, 0, &o), 0);
    ck_assert_int_eq(o.status, 2);
    ck_assert_ptr_nonnull(strstr(o.err, "expected two captures, BASE and NEW"));
    tu_output_free(&o);
    const char *opt[] = {tu_jett, "profile", "diff", a, a, "--human", NULL};
    ck_assert_int_eq(tu_run(opt, NULL, 0, &o), 0);
    ck_assert_int_eq(o.status, 2);
    ck_assert_ptr_nonnull(strstr(o.err, "unknown option '--human'"));
    tu_output_free(&o);
    const char *missing[] = {tu_jett, "profile", "diff", a, "/nonexistent.jcap", NULL};
    ck_assert_int_eq(tu_run(missing, NULL, 0, &o), 0);
    ck_assert_int_eq(o.status, 2);
    tu_output_free(&o);
    /* both sides are read at once; both errors come out, BASE's first */
    const char *both[] = {tu_jett, "profile", "diff", "/nonexistent-base.jcap", a, NULL};
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
    const char *modes[] = {tu_jett, "profile", "diff", a, a, NULL};
    modes[4] = tu_build_path("fixtures/tiny-memory.jcap");
    ck_assert_int_eq(tu_run(modes, NULL, 0, &o), 0);
    ck_assert_int_eq(o.status, 1);
    ck_assert_ptr_nonnull(strstr(o.err, "BASE is a cpu profile and NEW a memory profile"));
    tu_output_free(&o);
    free((char *)modes[4]);
    free(a);
}
END_TEST

/* The differential flame graph's colour: intensity t = |change| / the
 * largest, red (250 - 35t, 215 - 175t, 215 - 175t) for growth, blue
 * (215 - 175t, 215 - 145t, 250 - 35t) for a shrink, rounded. */
START_TEST(diff_colour_by_hand)
{
    char c[32];
    flame_diff_colour(false, 1, c);
    ck_assert_str_eq(c, "rgb(40,70,215)");
    flame_diff_colour(true, 1, c);
    ck_assert_str_eq(c, "rgb(215,40,40)");
    flame_diff_colour(true, 0.5, c); /* 232.5, 127.5, 127.5 */
    ck_assert_str_eq(c, "rgb(233,128,128)");
    flame_diff_colour(false, 0.5, c); /* 127.5, 142.5, 232.5 */
    ck_assert_str_eq(c, "rgb(128,143,233)");
    flame_diff_colour(true, 0, c); /* the faintest red is still not grey */
    ck_assert_str_eq(c, "rgb(250,215,215)");
}
END_TEST

/* The frame of the function whose markup follows `name` in the SVG. */
static const char *frame_of(const char *svg, const char *title)
{
    const char *t = strstr(svg, title);
    ck_assert_msg(t != NULL, "no frame %s", title);
    const char *g = t;
    while (g > svg && strncmp(g, "<g class=", 9) != 0)
        g--;
    return g;
}

static void frame_has(const char *svg, const char *title, const char *what)
{
    const char *g = frame_of(svg, title);
    const char *end = strstr(g, "</g>");
    const char *at = strstr(g, what);
    ck_assert_msg(at && at < end, "%s: missing %s", title, what);
}

/* diff-opt: hot went from 200 to 10 self samples, -190 (x0.05), far
 * beyond noise: blue, and the only coloured change, so at full
 * intensity; helper 50 -> 52 (p = 0.9212), tail 30 -> 29 and main 20 ->
 * 21 (p = 1) are within noise (their shares grew as the total shrank):
 * grey. */
START_TEST(differential_svg_by_hand)
{
    char *a = tu_build_path("fixtures/diff-opt-base.jcap");
    char *b = tu_build_path("fixtures/diff-opt-new.jcap");
    const char *argv[] = {tu_jett, "profile", "diff", a, b, "--format", "svg", NULL};
    struct tu_output o;
    ck_assert_int_eq(tu_run(argv, NULL, 0, &o), 0);
    ck_assert_msg(o.status == 0, "%s", o.err);
    const char *svg = o.out;
    frame_has(svg, "<title>opt.hot: 10 samples (8.93%)", "fill=\"rgb(40,70,215)\"");
    frame_has(svg, "<title>opt.hot: 10 samples", "data-before=\"200 self samples\"");
    frame_has(svg, "<title>opt.hot: 10 samples", "data-after=\"10 self samples\"");
    frame_has(svg, "<title>opt.hot: 10 samples",
              "data-change=\"shrank: -190 self samples, x0.0500; significant (p &lt; 0.0001)\"");
    frame_has(svg, "<title>opt.hot: 10 samples", "data-p=\"src/opt.jett:3\"");
    frame_has(svg, "<title>opt.helper: 52 samples", "fill=\"" FLAME_DIFF_NEUTRAL "\"");
    frame_has(svg, "<title>opt.helper: 52 samples",
              "data-change=\"+2 self samples, x1.0400; within noise (p = 0.9212)\"");
    frame_has(svg, "<title>opt.tail: 29 samples",
              "data-change=\"-1 self sample, x0.9667; within noise (p = 1.0000)\"");
    frame_has(svg, "<title>opt.tail: 29 samples", "fill=\"" FLAME_DIFF_NEUTRAL "\"");
    frame_has(svg, "<title>opt.main: 112 samples", "fill=\"" FLAME_DIFF_NEUTRAL "\"");
    /* the root is the whole profile on both sides: neutral, not the
     * warm colour of a plain graph */
    frame_has(svg, "<title>all: 112 samples (100.00%)", "fill=\"" FLAME_DIFF_NEUTRAL "\"");
    ck_assert_ptr_nonnull(strstr(svg, ">Differential flame graph: NEW against BASE, samples<"));
    ck_assert_ptr_nonnull(strstr(svg, ">status: BASE complete, NEW complete<"));
    tu_output_free(&o);
    /* -o writes the same document */
    char *out = tu_build_path("diff-flame-test.svg");
    const char *to[] = {tu_jett, "profile", "diff", a, b, "--format", "svg", "-o", out, NULL};
    ck_assert_int_eq(tu_run(to, NULL, 0, &o), 0);
    ck_assert_int_eq(o.status, 0);
    ck_assert_int_eq(o.out_len, 0);
    size_t len;
    char *file = tu_read_file(out, &len);
    ck_assert_ptr_nonnull(file);
    ck_assert_ptr_nonnull(strstr(file, "fill=\"rgb(40,70,215)\""));
    free(file);
    unlink(out);
    tu_output_free(&o);
    free(out), free(a), free(b);
}
END_TEST

/* Memory: byte counts are exact.  diff-mem: f allocated 100 bytes on
 * both sides (neutral though its share fell from 100% to 66.67%); g is
 * new with 50 bytes, the only coloured change: full red. */
START_TEST(differential_svg_memory)
{
    char *a = tu_build_path("fixtures/diff-mem-base.jcap");
    char *b = tu_build_path("fixtures/diff-mem-new.jcap");
    const char *argv[] = {tu_jett, "profile", "diff", a, b, "--format", "svg", NULL};
    struct tu_output o;
    ck_assert_int_eq(tu_run(argv, NULL, 0, &o), 0);
    ck_assert_msg(o.status == 0, "%s", o.err);
    frame_has(o.out, "<title>m.f: 100 bytes", "fill=\"" FLAME_DIFF_NEUTRAL "\"");
    frame_has(o.out, "<title>m.f: 100 bytes", "data-change=\"no change\"");
    frame_has(o.out, "<title>m.g: 50 bytes", "data-change=\"grew (appeared): +50 bytes\"");
    frame_has(o.out, "<title>m.g: 50 bytes", "fill=\"rgb(215,40,40)\"");
    frame_has(o.out, "<title>all: 150 bytes (100.00%)", "fill=\"" FLAME_DIFF_NEUTRAL "\"");
    frame_has(o.out, "<title>m.g: 50 bytes", "data-before=\"0 bytes allocated (not in BASE)\"");
    frame_has(o.out, "<title>m.g: 50 bytes", "data-after=\"50 bytes allocated\"");
    tu_output_free(&o);
    free(a), free(b);
}
END_TEST

START_TEST(differential_svg_usage)
{
    char *a = tu_build_path("fixtures/tiny-cpu.jcap");
    struct tu_output o;
    const char *pdf[] = {tu_jett, "profile", "diff", a, a, "--format", "pdf", NULL};
    ck_assert_int_eq(tu_run(pdf, NULL, 0, &o), 0);
    ck_assert_int_eq(o.status, 2);
    ck_assert_str_eq(o.err, "jett: profile diff: --format must be svg, not 'pdf'\n");
    tu_output_free(&o);
    const char *both[] = {tu_jett, "profile", "diff", a, a, "--format", "svg", "--agent", NULL};
    ck_assert_int_eq(tu_run(both, NULL, 0, &o), 0);
    ck_assert_int_eq(o.status, 2);
    ck_assert_ptr_nonnull(strstr(o.err, "--agent and --format svg are two outputs"));
    tu_output_free(&o);
    const char *noformat[] = {tu_jett, "profile", "diff", a, a, "-o", "x.svg", NULL};
    ck_assert_int_eq(tu_run(noformat, NULL, 0, &o), 0);
    ck_assert_int_eq(o.status, 2);
    ck_assert_str_eq(o.err, "jett: profile diff: -o applies to --format svg\n");
    tu_output_free(&o);
    const char *novalue[] = {tu_jett, "profile", "diff", a, a, "--format", NULL};
    ck_assert_int_eq(tu_run(novalue, NULL, 0, &o), 0);
    ck_assert_int_eq(o.status, 2);
    ck_assert_str_eq(o.err, "jett: profile diff: --format needs a value\n");
    tu_output_free(&o);
    free(a);
}
END_TEST

/* NEW waits at half its capture when its tables grew by more than an
 * eighth since a quarter: 800 bytes at a quarter of 1000, then 901 at
 * half (101 > 800 / 8 = 100) waits; 900 (100, not more) does not. */
START_TEST(pace_waits_when_tables_keep_growing)
{
    struct diff_pace p;
    diff_pace_init(&p, 1000);
    ck_assert(!diff_pace_wait(&p, 0, 0));
    ck_assert(!diff_pace_wait(&p, 250, 800)); /* a quarter: 800 noted */
    ck_assert(!diff_pace_wait(&p, 400, 1000));
    ck_assert(diff_pace_wait(&p, 500, 901));
    ck_assert(!diff_pace_wait(&p, 700, 5000)); /* decided once */
    diff_pace_init(&p, 1000);
    ck_assert(!diff_pace_wait(&p, 300, 800));
    ck_assert(!diff_pace_wait(&p, 500, 900));
    ck_assert(!diff_pace_wait(&p, 600, 5000));
    /* tables that shrink (a memory capture's records released) or that
     * one record takes past both marks: no wait */
    diff_pace_init(&p, 1000);
    ck_assert(!diff_pace_wait(&p, 250, 800));
    ck_assert(!diff_pace_wait(&p, 500, 700));
    diff_pace_init(&p, 1000);
    ck_assert(!diff_pace_wait(&p, 600, 1000));
    /* no size (standard input): never */
    diff_pace_init(&p, 0);
    ck_assert(!diff_pace_wait(&p, 500, 1000000));
}
END_TEST

struct pace_log {
    uint64_t last, calls;
    bool increasing;
};

static void log_pace(void *ctx, const struct agg *g, uint64_t offset)
{
    struct pace_log *l = ctx;
    (void)g;
    l->increasing &= l->calls == 0 || offset > l->last;
    l->last = offset, l->calls++;
}

/* The paced feed calls its pace once a record (the records counted by
 * reading the capture), at growing offsets, and aggregates what
 * feed_capture does. */
START_TEST(paced_feed_is_the_plain_feed)
{
    char *path = tu_build_path("fixtures/diff-base.jcap");
    size_t len;
    char *data = tu_read_file(path, &len);
    ck_assert_ptr_nonnull(data);
    struct capture_reader *r = capture_reader_mem(data, len);
    struct wire_record rec;
    uint64_t records = 0;
    while (capture_reader_next(r, &rec) > 0)
        records++;
    capture_reader_free(r);
    struct agg *g[2] = {agg_new(), agg_new()};
    char err[320];
    struct pace_log log = {0, 0, true};
    r = capture_reader_mem(data, len);
    ck_assert_int_eq(feed_capture_paced(g[0], r, log_pace, &log, err, sizeof err), 0);
    capture_reader_free(r);
    r = capture_reader_mem(data, len);
    ck_assert_int_eq(feed_capture(g[1], r, err, sizeof err), 0);
    capture_reader_free(r);
    ck_assert_uint_gt(records, 3);
    ck_assert_uint_eq(log.calls, records);
    ck_assert(log.increasing);
    ck_assert_uint_lt(log.last, len);
    struct attrib_cpu_totals t[2];
    for (int k = 0; k < 2; k++)
        agg_end(g[k]), attrib_cpu_totals(g[k], &t[k]);
    ck_assert_uint_gt(t[0].attributed, 0);
    ck_assert_mem_eq(&t[0], &t[1], sizeof t[0]);
    agg_free(g[0]), agg_free(g[1]);
    free(data), free(path);
}
END_TEST

/* A differential flame graph, its NEW capture paced beside BASE (two
 * CPUs) or read after it (one): the same document. */
static char *run_diff_svg(const char *a, const char *b)
{
    char *pa = tu_build_path(a), *pb = tu_build_path(b);
    struct tu_output o;
    const char *argv[] = {tu_jett, "profile", "diff", pa, pb, "--format", "svg", NULL};
    ck_assert_int_eq(tu_run(argv, NULL, 0, &o), 0);
    ck_assert_msg(o.status == 0, "status %d: %s", o.status, o.err);
    free(pa), free(pb);
    char *out = o.out;
    o.out = NULL;
    tu_output_free(&o);
    return out;
}

/* On one CPU the two captures are read in turn, not at once: the same
 * documents and the same errors, BASE's first. */
START_TEST(one_cpu_reads_in_turn)
{
    char *both_cpus[4];
    both_cpus[0] = run_diff("fixtures/diff-base.jcap", "fixtures/diff-new.jcap", true, 0);
    both_cpus[1] = run_diff("fixtures/diff-mem-base.jcap", "fixtures/diff-mem-new.jcap", false, 0);
    both_cpus[2] = run_diff_svg("fixtures/diff-opt-base.jcap", "fixtures/diff-opt-new.jcap");
    both_cpus[3] = run_diff_svg("fixtures/diff-mem-base.jcap", "fixtures/diff-mem-new.jcap");
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
    out = run_diff_svg("fixtures/diff-opt-base.jcap", "fixtures/diff-opt-new.jcap");
    ck_assert_str_eq(out, both_cpus[2]);
    free(out);
    out = run_diff_svg("fixtures/diff-mem-base.jcap", "fixtures/diff-mem-new.jcap");
    ck_assert_str_eq(out, both_cpus[3]);
    free(out);
    struct tu_output o;
    const char *argv[] = {
        tu_jett, "profile", "diff", "/nonexistent-base.jcap", "/nonexistent-new.jcap", NULL};
    ck_assert_int_eq(tu_run(argv, NULL, 0, &o), 0);
    ck_assert_int_eq(o.status, 2);
    const char *eb = strstr(o.err, "/nonexistent-base.jcap: cannot open");
    const char *en = strstr(o.err, "/nonexistent-new.jcap: cannot open");
    ck_assert(eb && en && eb < en);
    tu_output_free(&o);
    ck_assert_int_eq(sched_setaffinity(0, sizeof all, &all), 0);
    for (int k = 0; k < 4; k++)
        free(both_cpus[k]);
}
END_TEST

/* Different rates (fixtures/captures/diff-rate-*.jcap.txt): BASE at 1000
 * Hz, NEW at 500 Hz, so a NEW sample stands for twice the time and
 * pi = 500 / 1500 = 1/3.  Directions are the sign of x1 * 1000 - x0 * 500:
 *   f self 100 -> 50:   50000 - 50000 = 0: none, p = 1, unchanged
 *   g self 100 -> 100:  100000 - 50000 > 0: grew with a delta of 0;
 *                       2 P(X >= 100 | n = 200, 1/3) = 1.68234e-06
 *   main self 0 -> 0:   none (not noise with p = 1); inclusive 200 ->
 *                       150: 150000 - 100000 > 0: grew;
 *                       2 P(X >= 150 | n = 350, 1/3) = 0.000255617
 * (p-values by tests/reference/binomial_p.py --verdict, in rational
 * arithmetic).  Rows by |self change|: f 50, then main and g at 0, main
 * first by |inclusive change| 50 > 0.  Shares: f 100/200 = 50% -> 50/150
 * = 33.33%, g 50% -> 66.67%. */
/* At different rates a row is ordered by its change at the ratio of the
 * rates: g doubled its time (100 -> 100 at half the rate: |100 x 1000 -
 * 100 x 500| = 50000) and comes first; f kept its time (|50 x 1000 - 100 x
 * 500| = 0) and comes last although its count fell by 50. */
START_TEST(rate_pair_by_hand)
{
    char *out = run_diff("fixtures/diff-rate-base.jcap", "fixtures/diff-rate-new.jcap", true, 0);
    ck_assert_msg(
        strstr(out, "}:\n"
                    "    rate,g,project,src/rate.jett,6,6,changed,100,100,0,1,0.000002,significant,"
                    "grew,100,100,0,1,0.000002,significant,grew,50,66.67,16.67\n"
                    "    rate,main,project,src/rate.jett,1,1,changed,0,0,0,unavailable,1,none,none,"
                    "200,150,-50,0.75,0.000256,significant,grew,100,100,0\n"
                    "    rate,f,project,src/rate.jett,5,5,unchanged,100,50,-50,0.5,1,none,none,"
                    "100,50,-50,0.5,1,none,none,50,33.33,-16.67\n") != NULL,
        "%s", out);
    ck_assert_ptr_nonnull(strstr(out, "    recorded_samples,200,150,-50,0.75,0.000256,significant\n"
                                      "    attributed_samples,200,150,-50,0.75,0.000256,"
                                      "significant\n"
                                      "    runtime_samples,0,0,0,unavailable,1,none\n"));
    assert_canonical(out);
    free(out);
    out =
        squeeze(run_diff("fixtures/diff-rate-base.jcap", "fixtures/diff-rate-new.jcap", false, 0));
    ck_assert_msg(strstr(out, "\nBASE was sampled at 1000 Hz and NEW at 500 Hz: a count grew when "
                              "NEW's count\nx 1000 / 500 is above BASE's, whatever the sign of its "
                              "delta.\n") &&
                      strstr(out, " 1. rate.g src/rate.jett:6 changed\n"
                                  " self samples 100 -> 100 +0 x1.0000 significant "
                                  "(p < 0.0001), grew\n") &&
                      strstr(out, " 2. rate.main src/rate.jett:1 changed\n"
                                  " self samples 0 -> 0 +0 - none\n"
                                  " inclusive samples 200 -> 150 -50 x0.7500 significant "
                                  "(p = 0.0003), grew\n") &&
                      strstr(out, " 3. rate.f src/rate.jett:5 unchanged\n"
                                  " self samples 100 -> 50 -50 x0.5000 none\n"),
                  "%s", out);
    ck_assert_ptr_null(strstr(out, "p = 1.0000"));
    free(out);
    /* at equal rates there is no such line, nor a direction word */
    out = run_diff("fixtures/diff-opt-base.jcap", "fixtures/diff-opt-new.jcap", false, 0);
    ck_assert_ptr_null(strstr(out, "was sampled at"));
    ck_assert_ptr_null(strstr(out, ", grew"));
    free(out);
    double p;
    ck_assert_int_eq(diff_samples_verdict(0, 0, 1000, 500, &p), DIFF_NONE);
    ck_assert(p == 1);
    ck_assert_int_eq(diff_samples_verdict(10, 5, 1000, 500, &p), DIFF_NONE);
    ck_assert_int_eq(diff_samples_direction(100, 60, 1000, 500), DIFF_GREW);
    ck_assert_int_eq(diff_samples_direction(100, 40, 1000, 500), DIFF_SHRANK);
    /* a rate that is not stated counts as the other's */
    ck_assert_int_eq(diff_samples_direction(100, 60, 0, 500), DIFF_SHRANK);
    ck_assert_int_eq(diff_samples_verdict(7, 7, 1000, 0, &p), DIFF_NONE);
}
END_TEST

/* The collapsed export of the fixture NAME is `want`. */
static void assert_collapsed(const char *name, const char *want)
{
    char *cap = tu_capture_path(name);
    struct tu_output o;
    ck_assert_int_eq(tu_run_jett(&o, "profile", "export", cap, "--format", "collapsed", NULL), 0);
    ck_assert_str_eq(o.out, want);
    tu_output_free(&o);
    free(cap);
}

/* The partial pair (fixtures/captures/diff-part-*.jcap.txt): BASE ran out
 * of its CPU budget (288 bytes) before g's first sample, so its report
 * has main (inclusive 5, self 0) and f (3, 3) but not g, whose 2 samples
 * its collapsed export still shows; NEW, complete, has f 3, g 6, main
 * inclusive 9.  f and main are held by BASE and counted exactly: compared.
 * main 5 -> 9: 2 P(X >= 9 | n = 14) = 2 * 3473 / 16384 = 0.4239501953125
 * -> 0.42395, noise, grew; f unchanged, shares 3/5 = 60% -> 3/9 = 33.33%.
 * g is missing from a partial side: not comparable, never "appeared";
 * its NEW figures stay (6 of 9: 66.67%), every change is unavailable.
 * Compared rows first (main by |inclusive change| 4, then f), then g. */
START_TEST(partial_base_by_hand)
{
    assert_collapsed("diff-part-base", "part.main;part.f 3\npart.main;part.g 2\n");
    char *out = run_diff("fixtures/diff-part-base.jcap", "fixtures/diff-part-new.jcap", true, 0);
    ck_assert_msg(strstr(out, "  base:\n    status: partial\n"
                              "    partial_reason: cpu_metadata_limit\n"
                              "    requested_rate_hz: 1000\n    attributed_samples: 5\n"
                              "  new:\n    status: complete\n    requested_rate_hz: 1000\n"
                              "    attributed_samples: 9\n") != NULL,
                  "%s", out);
    ck_assert_msg(
        strstr(out, "}:\n"
                    "    part,main,project,src/part.jett,1,1,changed,0,0,0,unavailable,1,none,none,"
                    "5,9,4,1.8,0.42395,noise,grew,100,100,0\n"
                    "    part,f,project,src/part.jett,5,5,unchanged,3,3,0,1,1,none,none,"
                    "3,3,0,1,1,none,none,60,33.33,-26.67\n"
                    "    part,g,project,src/part.jett,unavailable,6,not_comparable,unavailable,6,"
                    "unavailable,unavailable,unavailable,not_comparable,unavailable,unavailable,6,"
                    "unavailable,unavailable,unavailable,not_comparable,unavailable,unavailable,"
                    "66.67,unavailable\n") != NULL,
        "%s", out);
    ck_assert_ptr_nonnull(strstr(out, "    recorded_samples,5,9,4,1.8,0.42395,noise\n"));
    assert_canonical(out);
    free(out);
    out =
        squeeze(run_diff("fixtures/diff-part-base.jcap", "fixtures/diff-part-new.jcap", false, 0));
    ck_assert_msg(strstr(out, "otherwise it is within sampling noise.\n\n"
                              "BASE is partial (cpu_metadata_limit): a function missing from it is "
                              "not comparable.\n\nTotals:\n") &&
                      strstr(out, " 3. part.g src/part.jett:6 not comparable\n"
                                  " self samples unavailable -> 6 unavailable - not comparable\n"
                                  " inclusive samples unavailable -> 6 unavailable - not "
                                  "comparable\n"),
                  "%s", out);
    ck_assert_ptr_null(strstr(out, "appeared"));
    free(out);
    /* The other way round, the partial side is NEW: g is missing from it,
     * not "disappeared"; main 9 -> 5 shrank. */
    out = run_diff("fixtures/diff-part-new.jcap", "fixtures/diff-part-base.jcap", true, 0);
    ck_assert_msg(
        strstr(out, "  new:\n    status: partial\n    partial_reason: cpu_metadata_limit\n") &&
            strstr(out, "    part,main,project,src/part.jett,1,1,changed,0,0,0,unavailable,1,none,"
                        "none,9,5,-4,0.5556,0.42395,noise,shrank,100,100,0\n") &&
            strstr(out, "    part,g,project,src/part.jett,6,unavailable,not_comparable,6,"
                        "unavailable,unavailable,unavailable,unavailable,not_comparable,"
                        "unavailable,6,unavailable,unavailable,unavailable,unavailable,"
                        "not_comparable,unavailable,66.67,unavailable,unavailable\n"),
        "%s", out);
    ck_assert_ptr_null(strstr(out, "disappeared"));
    free(out);
}
END_TEST

/* mem-buckets-full against diff-mem-part-new: mem-buckets-full's buckets
 * alone filled its retention budget before main's site bucket was made,
 * so it lacks main (30 bytes in its collapsed export) and its freed,
 * peak, retained and live-at-peak bytes are unavailable.  make, which it holds: allocated 170 ->
 * 340, +170, x2, significant; retained and live-at-peak unavailable -> 340. main: not comparable.
 * Totals: 4 -> 2 allocations, 200 -> 370 bytes (x1.85), freed, peak and retained unavailable -> 0,
 * 370, 370. */
START_TEST(partial_memory_by_hand)
{
    assert_collapsed("mem-buckets-full", "app.main 30\napp.main;app.make 170\n");
    char *out =
        run_diff("fixtures/mem-buckets-full.jcap", "fixtures/diff-mem-part-new.jcap", true, 0);
    ck_assert_msg(
        strstr(out, "  base:\n    status: partial\n    partial_reason: retention_metadata_limit\n"
                    "    attributed_allocated_bytes: 200\n") &&
            strstr(out, "    allocation_count,4,2,-2,0.5,significant\n"
                        "    allocated_bytes,200,370,170,1.85,significant\n"
                        "    freed_bytes,unavailable,0,unavailable,unavailable,untested\n"
                        "    peak_live_bytes,unavailable,370,unavailable,unavailable,untested\n"
                        "    retained_bytes,unavailable,370,unavailable,unavailable,untested\n") &&
            strstr(out, "}:\n"
                        "    app,make,project,src/m.jett,4,4,changed,170,340,170,2,unavailable,340,"
                        "unavailable,unavailable,340,unavailable,significant\n"
                        "    app,main,project,src/m.jett,unavailable,1,not_comparable,unavailable,"
                        "30,unavailable,unavailable,unavailable,30,unavailable,unavailable,30,"
                        "unavailable,not_comparable\n"),
        "%s", out);
    assert_canonical(out);
    free(out);
    out = squeeze(
        run_diff("fixtures/mem-buckets-full.jcap", "fixtures/diff-mem-part-new.jcap", false, 0));
    ck_assert_msg(strstr(out, "BASE is partial (retention_metadata_limit): a function missing from "
                              "it is not comparable.\n") &&
                      strstr(out,
                             " 2. app.main src/m.jett:1 not comparable\n"
                             " allocated bytes unavailable -> 30 unavailable - not comparable\n"),
                  "%s", out);
    free(out);
}
END_TEST

/* A side partial for a reason that may count any function short (here
 * interrupted) makes every row not comparable, and the table says so. */
START_TEST(untrusted_side_compares_nothing)
{
    char *out =
        squeeze(run_diff("fixtures/cpu-interrupted.jcap", "fixtures/cpu-simple.jcap", false, 0));
    ck_assert_msg(strstr(out, "\nBASE is partial (interrupted): its counts may miss events; no "
                              "function is comparable.\n"),
                  "%s", out);
    const char *rows = strstr(out, "\nFunctions, by change in self samples:\n");
    ck_assert_ptr_nonnull(rows);
    ck_assert_ptr_null(strstr(rows, "appeared"));
    ck_assert_ptr_null(strstr(rows, "significant"));
    ck_assert_ptr_null(strstr(rows, "noise"));
    ck_assert_ptr_nonnull(strstr(rows, " not comparable\n"));
    free(out);
    out = run_diff("fixtures/cpu-simple.jcap", "fixtures/cpu-interrupted.jcap", true, 0);
    ck_assert_ptr_nonnull(
        strstr(out, "  new:\n    status: partial\n    partial_reason: interrupted\n"));
    rows = strstr(strstr(out, "  functions["), "}:\n") + 3;
    int n = 0;
    for (const char *l = rows; *l && !strncmp(l, "    ", 4); l = strchr(l, '\n') + 1, n++)
        ck_assert_msg(memmem(l, strcspn(l, "\n"), ",not_comparable,", 16) != NULL, "%s", out);
    ck_assert_int_gt(n, 0);
    free(out);
}
END_TEST

/* Profiles `prog` into DIR/NAME.jcap with `var` (a budget test variable,
 * or NULL) set to `value`; the capture's path. */
static char *budget_run(const char *prog, const char *mode, const char *name, const char *var,
                        const char *value)
{
    char *cap = tu_tmp_path(name);
    if (var)
        setenv(var, value, 1);
    struct tu_output o;
    int status = tu_run_jett(&o, "run", prog, mode, "--profile-capture", cap, NULL);
    if (var)
        unsetenv(var);
    ck_assert_msg(status == 0, "%s", o.err);
    tu_output_free(&o);
    return cap;
}

/* Checks a diff of real runs where one side (`partial`: BASE when false
 * is `neu_partial`) ran out of its budget: the document names the side's
 * status and reason; every function of that side's collapsed export (its
 * stacks, which the budget does not limit) has a row that is never
 * "appeared" (BASE partial) or "disappeared" (NEW partial); and at least
 * one of them is missing from the side's functions, so not comparable,
 * or the check would prove nothing. */
static void check_partial_side(const char *base, const char *neu, bool neu_partial,
                               const char *reason)
{
    const char *side = neu_partial ? neu : base;
    struct tu_output o;
    ck_assert_int_eq(tu_run_jett(&o, "profile", "export", side, "--format", "collapsed", NULL), 0);
    char *folded = o.out;
    o.out = NULL;
    tu_output_free(&o);
    ck_assert_int_eq(tu_run_jett(&o, "profile", "diff", base, neu, "--agent", NULL), 0);
    char want[200];
    snprintf(want, sizeof want, "  %s:\n    status: partial\n    partial_reason: %s\n",
             neu_partial ? "new" : "base", reason);
    ck_assert_msg(strstr(o.out, want) != NULL, "%s", o.out);
    int frames = 0, missing = 0;
    for (char *line = strtok(folded, "\n"); line; line = strtok(NULL, "\n")) {
        *strrchr(line, ' ') = '\0';
        for (char *f = line, *next; f; f = next) {
            next = strchr(f, ';');
            if (next)
                *next++ = '\0';
            char *dot = strrchr(f, '.');
            ck_assert_ptr_nonnull(dot);
            *dot = '\0';
            /* a leaf has its weight, so a row; a caller has one in CPU
             * mode (its inclusive samples), not always in memory mode */
            const char *row = row_in(o.out, f, dot + 1);
            ck_assert_msg(row != NULL || next, "%s.%s: no row in %s", f, dot + 1, o.out);
            *dot = '.';
            if (!row)
                continue;
            char change[32], self[32];
            column(row, 6, change, sizeof change);
            column(row, neu_partial ? 8 : 7, self, sizeof self);
            ck_assert_msg(strcmp(change, neu_partial ? "disappeared" : "appeared") != 0, "%s: %s",
                          f, row);
            if (strcmp(self, "unavailable") == 0) {
                ck_assert_str_eq(change, "not_comparable");
                missing++;
            }
            frames++;
        }
    }
    ck_assert_msg(missing > 0, "no function is missing from the partial side: %s", o.out);
    ck_assert_int_gt(frames, missing);
    assert_canonical(o.out);
    tu_output_free(&o);
    /* the table and the flame graph's heading say so too */
    char line[120];
    snprintf(line, sizeof line, "%s is partial (%s): a function missing from it is not comparable.",
             neu_partial ? "NEW" : "BASE", reason);
    ck_assert_int_eq(tu_run_jett(&o, "profile", "diff", base, neu, NULL), 0);
    ck_assert_msg(strstr(o.out, line) != NULL, "%s", o.out);
    tu_output_free(&o);
    snprintf(line, sizeof line, ">status: BASE %s%s%s, NEW %s%s%s<",
             neu_partial ? "complete" : "partial (", neu_partial ? "" : reason,
             neu_partial ? "" : ")", neu_partial ? "partial (" : "complete",
             neu_partial ? reason : "", neu_partial ? ")" : "");
    ck_assert_int_eq(tu_run_jett(&o, "profile", "diff", base, neu, "--format", "svg", NULL), 0);
    ck_assert_msg(strstr(o.out, line) != NULL, "%s", line);
    tu_output_free(&o);
    free(folded);
}

/* Real runs, the partial side's CPU budget shrunk by the test variable
 * to 288 bytes: the first function buckets fit, and the functions that
 * run later (b, c, d, each 120 ms by its own clock) get none. */
START_TEST(partial_cpu_runs)
{
    static const char prog[] = "namespace bud\n"
                               "fn spin(ms: int) -> int {\n"
                               "    let t0 = now_ms()\n"
                               "    let x = 0\n"
                               "    while now_ms() - t0 < ms {\n"
                               "        x += 1\n"
                               "    }\n"
                               "    return x\n"
                               "}\n"
                               "fn a() -> int { return spin(120) }\n"
                               "fn b() -> int { return spin(120) }\n"
                               "fn c() -> int { return spin(120) }\n"
                               "fn d() -> int { return spin(120) }\n"
                               "fn main() {\n"
                               "    print(a() + b() + c() + d() > 0)\n"
                               "}\n";
    char *p = tu_program("bud.jett", prog);
    char *small = budget_run(p, "--profile", "small.jcap", "JETT_TEST_CPU_BUDGET", "288");
    char *whole = budget_run(p, "--profile", "whole.jcap", NULL, NULL);
    check_partial_side(small, whole, false, "cpu_metadata_limit");
    check_partial_side(whole, small, true, "cpu_metadata_limit");
    free(p), free(small), free(whole);
}
END_TEST

/* Real runs, the partial side's retention budget shrunk to 300 bytes,
 * which the buckets alone fill (jett-profile(7), Budgets): hold()'s
 * site, chain and two allocation lines with their index take 56 + 8 +
 * 2 x 32 + 128 = 256 bytes, so later() and after(), which allocate
 * afterwards, get no site bucket (56 more).  (With a budget the live
 * records fill, every function keeps its bucket.) */
START_TEST(partial_memory_runs)
{
    char *p = tu_program("mem.jett", keeper_program);
    char *small =
        budget_run(p, "--profile-memory", "small.jcap", "JETT_TEST_RETENTION_BUDGET", "300");
    char *whole = budget_run(p, "--profile-memory", "whole.jcap", NULL, NULL);
    check_partial_side(small, whole, false, "retention_metadata_limit");
    check_partial_side(whole, small, true, "retention_metadata_limit");
    free(p), free(small), free(whole);
}
END_TEST

Suite *diff_suite(void)
{
    Suite *s = suite_create("diff");
    TCase *t = tcase_create("diff");
    tcase_add_checked_fixture(t, tu_e2e_setup, tu_e2e_teardown);
    tcase_add_test(t, points_are_exact);
    tcase_add_test(t, cpu_pair_by_hand);
    tcase_add_test(t, optimization_pair_by_hand);
    tcase_add_test(t, real_program_before_after);
    tcase_add_test(t, memory_pair_by_hand);
    tcase_add_test(t, binomial_matches_exact);
    tcase_add_test(t, same_name_pairs_in_declaration_order);
    tcase_add_test(t, self_diff_is_all_zeros);
    tcase_add_test(t, waiting_sites_by_hand);
    tcase_add_test(t, waiting_sites_partial_by_hand);
    tcase_add_test(t, command_errors);
    tcase_add_test(t, diff_colour_by_hand);
    tcase_add_test(t, differential_svg_by_hand);
    tcase_add_test(t, differential_svg_memory);
    tcase_add_test(t, differential_svg_usage);
    tcase_add_test(t, one_cpu_reads_in_turn);
    tcase_add_test(t, pace_waits_when_tables_keep_growing);
    tcase_add_test(t, paced_feed_is_the_plain_feed);
    tcase_add_test(t, rate_pair_by_hand);
    tcase_add_test(t, partial_base_by_hand);
    tcase_add_test(t, partial_memory_by_hand);
    tcase_add_test(t, untrusted_side_compares_nothing);
    tcase_add_test(t, partial_cpu_runs);
    tcase_add_test(t, partial_memory_runs);
    suite_add_tcase(s, t);
    return s;
}
