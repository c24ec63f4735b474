/*
 * Folds end to end: the same run of a program, its allocations folded
 * (the default) and unfolded (JETT_TEST_NO_FOLD=1), gives the same bytes
 * everywhere a profile or an export is read: the run's own output, a
 * replay of its capture and every memory export, the timeline's summary
 * included.  The two captures hold the same logical events (a FOLD is an
 * allocate and a free), and each packs back from its dump to the bytes
 * the agent wrote.  (The runs' FINISH records, which hold their wall and
 * CPU times, are made the same before the captures are read.)
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

/* What reads a capture, and the bytes it wrote (stdout, then stderr). */
struct reading {
    int status;
    char *bytes;
    size_t len;
};

/* The output, stdout then stderr without LeakSanitizer's false alarm
 * (tu_drop_sanitizer_noise); a sanitizer error changes the exit status,
 * which is compared too. */
static struct reading read_with(const char **argv)
{
    struct tu_output o;
    ck_assert_int_eq(tu_run(argv, NULL, 0, &o), 0);
    tu_drop_sanitizer_noise(&o);
    struct reading r = {o.status, malloc(o.out_len + o.err_len + 1), o.out_len + o.err_len};
    memcpy(r.bytes, o.out, o.out_len);
    memcpy(r.bytes + o.out_len, o.err, o.err_len);
    r.bytes[r.len] = '\0';
    tu_output_free(&o);
    return r;
}

/* Runs prog with a capture (named cap.jcap in `dir`, so that messages
 * naming it read the same), folded or not; returns the run's output. */
static struct reading run_captured(const char *prog, const char *dir, bool fold)
{
    char cap[700];
    snprintf(cap, sizeof cap, "%s/cap.jcap", dir);
    if (!fold)
        setenv("JETT_TEST_NO_FOLD", "1", 1);
    /* one worker: the examples include a concurrent pipeline, whose tasks
     * on several workers interleave (and peak) differently from run to
     * run; on one the events come in the program's own order */
    const char *argv[] = {
        tu_jett,     "run", prog, "--profile-memory", "--profile-capture", cap, "--agent",
        "--workers", "1",   NULL};
    struct reading r = read_with(argv);
    unsetenv("JETT_TEST_NO_FOLD");
    ck_assert_msg(r.status == 0, "%s: status %d", prog, r.status);
    return r;
}

/* Lines of `text` starting with `prefix`. */
static size_t count_lines(const char *text, const char *prefix)
{
    size_t n = 0, k = strlen(prefix);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        n += strncmp(p, prefix, k) == 0;
    return n;
}

/* The capture's dump; asserts that packing it gives the capture's bytes
 * (but for a large capture: see check_same). */
static char *dump_and_repack(const char *dir, bool large)
{
    char cap[700], txt[700], back[700];
    snprintf(cap, sizeof cap, "%s/cap.jcap", dir);
    snprintf(txt, sizeof txt, "%s/cap.txt", dir);
    snprintf(back, sizeof back, "%s/back.jcap", dir);
    const char *dump[] = {tu_jett, "profile", "dump", cap, NULL};
    struct reading d = read_with(dump);
    ck_assert_int_eq(d.status, 0);
    ck_assert_int_eq(tu_write_file(txt, d.bytes, d.len), 0);
    if (large)
        return d.bytes;
    const char *pack[] = {tu_jett, "profile", "pack", txt, "-o", back, NULL};
    struct reading p = read_with(pack);
    ck_assert_msg(p.status == 0, "pack: %s", p.bytes);
    free(p.bytes);
    size_t a, b;
    char *x = tu_read_file(cap, &a), *y = tu_read_file(back, &b);
    ck_assert_msg(a == b && memcmp(x, y, a) == 0, "%s: the dump packs to other bytes", cap);
    free(x), free(y);
    return d.bytes;
}

/* FINISH holds the run's wall and CPU time, which two runs never share
 * (and pprof writes): the unfolded capture in `dir` gets the folded run's
 * FINISH, packed from its dump `text` with the line of `other`. */
static void same_finish(const char *dir, const char *text, const char *other)
{
    const char *f = strstr(text, "\nFINISH "), *g = strstr(other, "\nFINISH ");
    ck_assert(f && g);
    char txt[700], cap[700];
    snprintf(txt, sizeof txt, "%s/cap.txt", dir);
    snprintf(cap, sizeof cap, "%s/cap.jcap", dir);
    size_t head = (size_t)(f - text), tail = strlen(g);
    char *t = malloc(head + tail + 1);
    memcpy(t, text, head);
    memcpy(t + head, g, tail + 1);
    ck_assert_int_eq(tu_write_file(txt, t, head + tail), 0);
    free(t);
    const char *pack[] = {tu_jett, "profile", "pack", txt, "-o", cap, NULL};
    struct reading p = read_with(pack);
    ck_assert_msg(p.status == 0, "pack: %s", p.bytes);
    free(p.bytes);
}

/* Every reader of a capture, as argv tails after the capture's path. */
static const char *const readers[][5] = {
    {"replay", "--agent", NULL},
    {"replay", NULL},
    {"export", "--format", "collapsed", NULL},
    {"export", "--format", "collapsed", "--weight", "count"},
    {"export", "--format", "collapsed", "--weight", "retained"},
    {"export", "--format", "collapsed", "--weight", "live-at-peak"},
    {"export", "--format", "svg", NULL},
    {"export", "--format", "callgrind", NULL},
    {"export", "--format", "pprof", NULL},
    {"export", "--format", "speedscope", NULL},
    {"export", "--format", "timeline", NULL},
};
/* The readers above that treat a fold apart from its two events. */
static const bool readers_of_folds[sizeof readers / sizeof readers[0]] = {
    [0] = true, [5] = true, [10] = true};

/* The run folded and unfolded: the same bytes everywhere; the folded
 * capture has folds (at least `min_folds`), the unfolded none, and both
 * hold the same number of heap events. */
static void check_same(const char *prog, size_t min_folds)
{
    char da[600], db[600];
    snprintf(da, sizeof da, "%s/folded", tu_dir);
    snprintf(db, sizeof db, "%s/unfolded", tu_dir);
    ck_assert(mkdir(da, 0755) == 0 || errno == EEXIST);
    ck_assert(mkdir(db, 0755) == 0 || errno == EEXIST);
    struct reading ra = run_captured(prog, da, true), rb = run_captured(prog, db, false);
    size_t at = 0;
    while (at < ra.len && at < rb.len && ra.bytes[at] == rb.bytes[at])
        at++;
    ck_assert_msg(ra.len == rb.len && at == ra.len,
                  "%s: the run's output differs folded and unfolded from byte %zu: %.80s | %.80s",
                  prog, at, ra.bytes + at, rb.bytes + at);
    free(ra.bytes), free(rb.bytes);
    /* Every reader, and the dump's round trip, on a capture of up to 2 MB;
     * on a larger one (its dump is a hundred times as large) the three
     * readers that read folds their own way (the profile, live bytes at
     * the peak, the timeline's live series): the others sum what the
     * profile's aggregation gives, fold-equivalence runs every reader on
     * random captures, and the captext tests the round trip.  Each reading
     * costs sanitizer builds seconds a megabyte. */
    char cap[700];
    snprintf(cap, sizeof cap, "%s/cap.jcap", da);
    struct stat st;
    ck_assert_int_eq(stat(cap, &st), 0);
    bool large = st.st_size > (2 << 20);
    char *ta = dump_and_repack(da, large), *tb = dump_and_repack(db, large);
    size_t folds = count_lines(ta, "  FOLD ");
    ck_assert_msg(folds >= min_folds, "%s: %zu folds", prog, folds);
    ck_assert_uint_eq(count_lines(tb, "  FOLD "), 0);
    ck_assert_uint_eq(count_lines(ta, "  ALLOC ") + 2 * folds, count_lines(tb, "  ALLOC "));
    same_finish(db, tb, ta);
    free(ta), free(tb);
    for (size_t i = 0; i < sizeof readers / sizeof readers[0]; i++) {
        if (large && !readers_of_folds[i])
            continue;
        struct reading got[2];
        const char *dirs[2] = {da, db};
        for (int k = 0; k < 2; k++) {
            const char *argv[10] = {tu_jett, "profile", readers[i][0], "cap.jcap"};
            for (int j = 1; j < 5 && readers[i][j]; j++)
                argv[3 + j] = readers[i][j];
            char cwd[4096];
            ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
            ck_assert_int_eq(chdir(dirs[k]), 0);
            got[k] = read_with(argv);
            ck_assert_int_eq(chdir(cwd), 0);
        }
        ck_assert_msg(got[0].status == got[1].status && got[0].len == got[1].len &&
                          memcmp(got[0].bytes, got[1].bytes, got[0].len) == 0,
                      "%s: %s %s %s differs folded and unfolded", prog, readers[i][0],
                      readers[i][1], readers[i][2] ? readers[i][2] : "");
        ck_assert_msg(got[0].status == 0, "%s: %s %s: status %d", prog, readers[i][0],
                      readers[i][2] ? readers[i][2] : "", got[0].status);
        free(got[0].bytes), free(got[1].bytes);
    }
}

/* String building and temporaries, as the benchmark's strbuild: most
 * allocations fold once the first round has set the peak. */
static const char strbuild[] =
    "namespace sb\n"
    "fn line(i: int) -> string {\n"
    "    return \"item \" + str(i) + \": \" + str(i * 7 % 1000) + \";\"\n"
    "}\n"
    "fn main() {\n"
    "    let total = 0\n"
    "    for round in 0..5 {\n"
    "        let s = \"\"\n"
    "        for i in 0..2000 {\n"
    "            s += line(i)\n"
    "        }\n"
    "        total += len(s)\n"
    "    }\n"
    "    print(total)\n"
    "}\n";

START_TEST(string_building_reads_the_same_folded)
{
    char *p = tu_program("sb.jett", strbuild);
    check_same(p, 20000);
    free(p);
}
END_TEST

/* Every example project. */
START_TEST(examples_read_the_same_folded)
{
    char *examples = tu_source_path("fixtures/programs");
    DIR *d = opendir(examples);
    int seen = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char main_file[1200];
        snprintf(main_file, sizeof main_file, "%s/%s/main.jett", examples, e->d_name);
        if (e->d_name[0] == '.' || access(main_file, R_OK) != 0)
            continue;
        check_same(main_file, 0);
        seen++;
    }
    if (d)
        closedir(d);
    free(examples);
    ck_assert_int_ge(seen, 5);
}
END_TEST

Suite *folds_e2e_suite(void);

Suite *folds_e2e_suite(void)
{
    Suite *s = suite_create("folds_e2e");
    TCase *t = tcase_create("folds_e2e");
    tcase_add_checked_fixture(t, tu_e2e_setup, tu_e2e_teardown);
    tcase_set_timeout(t, 300);
    tcase_add_test(t, string_building_reads_the_same_folded);
    tcase_add_test(t, examples_read_the_same_folded);
    suite_add_tcase(s, t);
    return s;
}
