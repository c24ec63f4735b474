/* Callgrind corpus: files valgrind writes, files other tools wrote, and the
 * jett callgrind commands.  callgrind_annotate is the independent oracle. */
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/callgrind_util.h"

/* Runs argv in dir (NULL: here) with stdout/stderr sent to files (NULL:
 * /dev/null); returns the exit status. */
static int run_in(const char *dir, char *const argv[], const char *out, const char *err)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        if (dir && chdir(dir) != 0)
            _exit(126);
        int o = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(err ? err : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(o, 1), dup2(e, 2);
        execvp(argv[0], argv);
        _exit(127);
    }
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int run(char *const argv[], const char *out, const char *err)
{
    return run_in(NULL, argv, out, err);
}

/* The function table of a callgrind_annotate report: the lines after the
 * "file:function" heading up to the next rule. */
static char *function_table(const char *report)
{
    const char *h = strstr(report, "file:function\n");
    ck_assert_msg(h != NULL, "no function table in the report");
    h = strchr(strchr(h, '\n') + 1, '\n') + 1; /* skip the heading's rule */
    const char *end = strstr(h, "\n----");
    size_t n = end ? (size_t)(end - h) : strlen(h);
    return strndup(h, n);
}

/* callgrind_annotate's function table for a file (inclusive or not). */
static char *annotate_table(const char *file, bool inclusive)
{
    char out[CGT_PATH];
    cgt_build(out, "tests/cg-annotate.txt");
    char *argv_self[] = {"callgrind_annotate", (char *)file, NULL};
    char *argv_incl[] = {"callgrind_annotate", "--inclusive=yes", "--threshold=100",
                         "--auto=no",          (char *)file,      NULL};
    ck_assert_int_eq(run(inclusive ? argv_incl : argv_self, out, NULL), 0);
    size_t len;
    char *report = cgt_slurp(out, &len);
    char *t = function_table(report);
    free(report);
    return t;
}

/* Normalizes a model into a file; returns its path (in path). */
static const char *normalize_to_file(const struct cg_model *m, char path[CGT_PATH])
{
    char *text;
    size_t len;
    struct cg_error err;
    ck_assert_int_eq(cg_normalize(m, &text, &len, &err), 0);
    cgt_build(path, "tests/cg-normalized.out");
    FILE *f = fopen(path, "wb");
    fwrite(text, 1, len, f);
    fclose(f);
    free(text);
    return path;
}

/* The jump directives the reader does not support (jett-callgrind(1));
 * valgrind may write any of them first (jfi= before jump= with
 * --collect-jumps), so the first of any is where reading must stop. */
static const char *const jump_keys[] = {"jump=", "jcnd=", "jfi=", "jfn=", NULL};

/* Line of the first line starting with one of the prefixes, or 0. */
static uint64_t first_line_with(const char *text, const char *const *prefixes)
{
    uint64_t line = 1;
    for (const char *p = text; *p; line++) {
        for (const char *const *k = prefixes; *k; k++)
            if (strncmp(p, *k, strlen(*k)) == 0)
                return line;
        const char *nl = strchr(p, '\n');
        if (nl == NULL)
            break;
        p = nl + 1;
    }
    return 0;
}

/* Independent counts: cost lines (start with a digit, +, - or *) and calls= lines. */
static void count_lines(const char *text, size_t *costs, size_t *calls)
{
    *costs = *calls = 0;
    for (const char *p = text; *p;) {
        *costs += (*p >= '0' && *p <= '9') || *p == '+' || *p == '-' || *p == '*';
        *calls += strncmp(p, "calls=", 6) == 0;
        const char *nl = strchr(p, '\n');
        if (nl == NULL)
            break;
        p = nl + 1;
    }
}

/* Accepted file: record counts by an independent scan, round trip, and the
 * same callgrind_annotate function tables for the file and its normal form. */
static size_t check_accepted(const char *path)
{
    size_t len, costs, calls;
    char *text = cgt_slurp(path, &len);
    ck_assert_ptr_nonnull(text);
    struct cg_error err;
    cgt_same_in_one_pass(text, len);
    struct cg_model *m = cg_parse(text, len, NULL, &err);
    ck_assert_msg(m != NULL, "%s:%llu: %s: %s", path, (unsigned long long)err.line,
                  cg_status_name(err.kind), err.message);
    count_lines(text, &costs, &calls);
    size_t ncalls = 0;
    for (size_t i = 0; i < m->nrecords; i++)
        ncalls += m->records[i].call != CG_NONE;
    ck_assert_uint_eq(m->nrecords, costs);
    ck_assert_uint_eq(ncalls, calls);
    cgt_round_trip(m);
    char norm_path[CGT_PATH];
    const char *norm = normalize_to_file(m, norm_path);
    for (int incl = 0; incl < 2; incl++) {
        char *want = annotate_table(path, incl), *got = annotate_table(norm, incl);
        ck_assert_msg(want[0] != '\0', "%s: empty function table", path);
        ck_assert_msg(strcmp(want, got) == 0, "%s: function tables differ (inclusive=%d)", path,
                      incl);
        free(want);
        free(got);
    }
    size_t parts = m->nparts;
    cg_model_free(m);
    free(text);
    return parts;
}

/* A file that must be rejected with this kind at this line. */
static void check_rejected(const char *path, enum cg_status kind, uint64_t line)
{
    size_t len;
    char *text = cgt_slurp(path, &len);
    ck_assert_ptr_nonnull(text);
    cgt_parse_err(text, len, kind, line, NULL);
    free(text);
}

/* valgrind configurations of the corpus; jumps must be Unsupported. */
static const struct {
    const char *name;
    const char *opts[8];
    bool jumps;
    int min_files, min_parts; /* what the options must produce */
} configs[] = {
    {"instr", {"--dump-instr=yes"}, false, 1, 1},
    {"instr-noline", {"--dump-instr=yes", "--dump-line=no"}, false, 1, 1},
    {"noline", {"--dump-line=no"}, false, 1, 1},
    {"nocompress-strings", {"--compress-strings=no"}, false, 1, 1},
    {"nocompress-pos", {"--compress-pos=no", "--dump-instr=yes"}, false, 1, 1},
    {"threads", {"--separate-threads=yes"}, false, 2, 1},
    {"callers", {"--separate-callers=3"}, false, 1, 1},
    {"callers-recs",
     {"--separate-callers=2", "--separate-recs=3", "--compress-strings=no"},
     false,
     1,
     1},
    {"combined-dumps",
     {"--separate-threads=yes", "--combine-dumps=yes", "--dump-every-bb=40000"},
     false,
     1,
     3},
    {"cache-sim", {"--cache-sim=yes"}, false, 1, 1},
    {"branch-sim", {"--branch-sim=yes"}, false, 1, 1},
    {"everything",
     {"--dump-instr=yes", "--compress-strings=no", "--compress-pos=no", "--cache-sim=yes",
      "--branch-sim=yes", "--separate-threads=yes", "--combine-dumps=yes", "--dump-every-bb=60000"},
     false,
     1,
     3},
    {"jumps", {"--collect-jumps=yes"}, true, 1, 1},
    {"jumps-instr", {"--collect-jumps=yes", "--dump-instr=yes", "--compress-pos=no"}, true, 1, 1},
};

/* Compiles fixtures/callgrind/corpus.c once into the build tree. */
static const char *corpus_program(void)
{
    static char prog[CGT_PATH];
    char dir[CGT_PATH], src[CGT_PATH];
    cgt_build(prog, "tests/cg-corpus/prog");
    mkdir(cgt_build(dir, "tests/cg-corpus"), 0755);
    if (access(prog, X_OK) == 0)
        return prog;
    cgt_src(src, "fixtures/callgrind/corpus.c");
    char *argv[] = {"cc", "-g", "-O1", "-pthread", src, "-o", prog, NULL};
    ck_assert_int_eq(run(argv, NULL, NULL), 0);
    return prog;
}

START_TEST(valgrind_corpus)
{
    const char *prog = corpus_program();
    char dir[CGT_PATH], base[CGT_PATH + 64], outopt[CGT_PATH + 128];
    cgt_build(dir, "tests/cg-corpus");
    snprintf(base, sizeof base, "%s/%s.out", dir, configs[_i].name);
    snprintf(outopt, sizeof outopt, "--callgrind-out-file=%s", base);
    char *argv[16] = {"valgrind", "--tool=callgrind", outopt};
    int n = 3;
    for (int k = 0; k < 8 && configs[_i].opts[k]; k++)
        argv[n++] = (char *)configs[_i].opts[k];
    argv[n++] = (char *)prog;
    argv[n] = NULL;
    ck_assert_int_eq(run(argv, NULL, NULL), 0);
    /* --separate-threads without --combine-dumps writes BASE-01, BASE-02 */
    DIR *d = opendir(dir);
    const char *leaf = strrchr(base, '/') + 1;
    int files = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strncmp(e->d_name, leaf, strlen(leaf)) != 0)
            continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(path, &st) != 0 || st.st_size == 0) {
            unlink(path); /* --separate-threads leaves the base file empty */
            continue;
        }
        files++;
        size_t len;
        char *text = cgt_slurp(path, &len);
        uint64_t jump = first_line_with(text, jump_keys);
        ck_assert_msg((jump != 0) == configs[_i].jumps, "%s: jump lines %s", path,
                      jump ? "present" : "absent");
        if (configs[_i].jumps)
            check_rejected(path, CG_UNSUPPORTED, jump);
        else
            ck_assert_int_ge(check_accepted(path), configs[_i].min_parts);
        free(text);
        unlink(path);
    }
    closedir(d);
    ck_assert_int_ge(files, configs[_i].min_files > 0 ? configs[_i].min_files : 1);
}
END_TEST

/* The reader's verdict on a foreign file, as fixtures/callgrind/foreign/
 * MANIFEST.tsv states it: `accept` (checked against callgrind_annotate of
 * the file itself) or `reject: KIND at line N`. */
static void foreign_verdict(const char *dir, const char *file, const char *verdict)
{
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    ck_assert_msg(access(path, R_OK) == 0, "%s missing", path);
    if (strcmp(verdict, "accept") == 0) {
        check_accepted(path);
        return;
    }
    char kind[32];
    unsigned long long line;
    ck_assert_msg(sscanf(verdict, "reject: %31s at line %llu", kind, &line) == 2,
                  "%s: verdict '%s' is neither accept nor 'reject: KIND at line N'", file, verdict);
    enum cg_status want = CG_OK;
    for (enum cg_status k = CG_SYNTAX; k <= CG_RESOURCE; k++)
        if (strcmp(kind, cg_status_name(k)) == 0)
            want = k;
    ck_assert_msg(want != CG_OK, "%s: unknown error kind '%s'", file, kind);
    check_rejected(path, want, line);
}

/* Every file other producers wrote (valgrind's own output comes from the
 * valgrind case above), as the vendored manifest says. */
START_TEST(foreign_files)
{
    char dir[CGT_PATH];
    cgt_src(dir, "fixtures/callgrind/foreign");
    char manifest[4200];
    snprintf(manifest, sizeof manifest, "%s/MANIFEST.tsv", dir);
    FILE *f = fopen(manifest, "r");
    ck_assert_msg(f != NULL, "%s not found", manifest);
    char line[8192];
    int rows = 0, verdict_col = -1;
    while (fgets(line, sizeof line, f)) {
        char *cols[8], *rest = line, *c;
        int n = 0;
        line[strcspn(line, "\n")] = '\0';
        while (n < 8 && (c = strsep(&rest, "\t")) != NULL)
            cols[n++] = c;     /* empty columns kept */
        if (verdict_col < 0) { /* header row */
            for (int k = 0; k < n; k++)
                if (strcmp(cols[k], "verdict") == 0)
                    verdict_col = k;
            ck_assert_int_ge(verdict_col, 0);
            continue;
        }
        ck_assert_int_gt(n, verdict_col);
        foreign_verdict(dir, cols[0], cols[verdict_col]);
        rows++;
    }
    fclose(f);
    ck_assert_int_eq(rows, 8);
}
END_TEST

/* Runs `jett callgrind ARGS...` in fixtures/callgrind; output in out and err. */
static int jett(char **out, char **err, const char *a, const char *b, const char *c, const char *d)
{
    char exe[CGT_PATH], o[CGT_PATH], e[CGT_PATH], dir[CGT_PATH];
    cgt_build(exe, "cli/jett");
    char *argv[] = {exe, "callgrind", (char *)a, (char *)b, (char *)c, (char *)d, NULL};
    cgt_build(o, "tests/cg-cli.out");
    cgt_build(e, "tests/cg-cli.err");
    cgt_src(dir, "fixtures/callgrind");
    int rc = run_in(dir, argv, o, e);
    size_t len;
    *out = cgt_slurp(o, &len);
    *err = cgt_slurp(e, &len);
    return rc;
}

START_TEST(cli_check)
{
    char *out, *err;
    ck_assert_int_eq(jett(&out, &err, "check", "example.callgrind", NULL, NULL), 0);
    ck_assert_str_eq(out, "example.callgrind: 2 parts, 6 records\n"
                          "part 1: events A B; positions instr line; 5 records (4 cost, 1 call)\n"
                          "part 2: events A; positions line; 1 records (1 cost, 0 call)\n");
    ck_assert_str_eq(err, "");
    free(out), free(err);
    ck_assert_int_eq(jett(&out, &err, "check", "pending-call.callgrind", NULL, NULL), 1);
    ck_assert_str_eq(out, "");
    ck_assert_str_eq(err, "pending-call.callgrind:5: Syntax: 'fn=' after 'calls=' at line 4; "
                          "expected its cost line\n");
    free(out), free(err);
}
END_TEST

START_TEST(cli_normalize)
{
    char *out, *err, *want;
    size_t len;
    char path[CGT_PATH], dest[CGT_PATH];
    want = cgt_slurp(cgt_src(path, "fixtures/callgrind/example.normalized"), &len);
    ck_assert_int_eq(jett(&out, &err, "normalize", "example.callgrind", NULL, NULL), 0);
    ck_assert_str_eq(out, want);
    ck_assert_str_eq(err, "");
    free(out), free(err);
    cgt_build(dest, "tests/cg-cli-normalized.out");
    unlink(dest);
    ck_assert_int_eq(jett(&out, &err, "normalize", "-o", dest, "example.callgrind"), 0);
    ck_assert_str_eq(out, "");
    free(out), free(err);
    out = cgt_slurp(dest, &len);
    ck_assert_str_eq(out, want);
    free(out), free(want);
    ck_assert_int_eq(jett(&out, &err, "normalize", "pending-call.callgrind", NULL, NULL), 1);
    ck_assert_str_eq(out, "");
    ck_assert_ptr_nonnull(strstr(err, "pending-call.callgrind:5: Syntax: "));
    free(out), free(err);
}
END_TEST

/* normalize's failed write reads `cannot write PATH: REASON`, exit 2; in
 * place (-o naming FILE) the file is replaced whole. */
START_TEST(cli_normalize_write_failures)
{
    char *out, *err;
    ck_assert_int_eq(jett(&out, &err, "normalize", "example.callgrind", "-o", "/dev/full"), 2);
    ck_assert_str_eq(out, "");
    ck_assert_str_eq(err, "jett: cannot write /dev/full: No space left on device\n");
    free(out), free(err);
    char src[CGT_PATH], copy[CGT_PATH], want_path[CGT_PATH];
    size_t len;
    char *text = cgt_slurp(cgt_src(src, "fixtures/callgrind/example.callgrind"), &len);
    cgt_build(copy, "tests/cg-in-place.callgrind");
    FILE *f = fopen(copy, "wb");
    ck_assert_ptr_nonnull(f);
    fwrite(text, 1, len, f);
    fclose(f);
    ck_assert_int_eq(jett(&out, &err, "normalize", copy, "-o", copy), 0);
    free(out), free(err);
    char *got = cgt_slurp(copy, &len),
         *want = cgt_slurp(cgt_src(want_path, "fixtures/callgrind/example.normalized"), &len);
    ck_assert_str_eq(got, want);
    free(got), free(want), free(text);
    unlink(copy);
}
END_TEST

START_TEST(cli_usage_and_unreadable)
{
    static const char *const cases[][4] = {
        {NULL},
        {"frobnicate"},
        {"check"},
        {"check", "a", "b"},
        {"normalize"},
        {"normalize", "example.callgrind", "-o"},
        {"normalize", "example.callgrind", "example.callgrind"},
        {"normalize", "--fast", "example.callgrind"},
        {"check", "no-such-file"},
        {"check", "."},
        {"check", "/dev/null"},
        {"normalize", "example.callgrind", "-o", "no-such-dir/out"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *out, *err;
        int rc = jett(&out, &err, cases[i][0], cases[i][1], cases[i][2], NULL);
        ck_assert_msg(rc == 2, "case %zu: exit %d", i, rc);
        ck_assert_msg(err[0] != '\0', "case %zu: nothing on stderr", i);
        free(out), free(err);
    }
    /* a FIFO is refused, not waited on */
    char fifo[CGT_PATH];
    cgt_build(fifo, "tests/cg-cli-fifo");
    unlink(fifo);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    char *out, *err;
    ck_assert_int_eq(jett(&out, &err, "check", fifo, NULL, NULL), 2);
    ck_assert_ptr_nonnull(strstr(err, "not a regular file"));
    free(out), free(err);
    unlink(fifo);
}
END_TEST

START_TEST(cli_oversize_file)
{
    char big[CGT_PATH];
    cgt_build(big, "tests/cg-cli-big.txt");
    FILE *f = fopen(big, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(ftruncate(fileno(f), (off_t)CG_FILE_MAX_BYTES + 1), 0);
    fclose(f);
    char *out, *err, want[8192];
    ck_assert_int_eq(jett(&out, &err, "check", big, NULL, NULL), 1);
    snprintf(want, sizeof want, "%s:0: Resource: file exceeds %zu bytes\n", big, CG_FILE_MAX_BYTES);
    ck_assert_str_eq(err, want);
    free(out), free(err);
    unlink(big);
}
END_TEST

Suite *callgrind_corpus_suite(void)
{
    Suite *s = suite_create("callgrind_corpus");
    TCase *t = tcase_create("valgrind");
    tcase_set_timeout(t, 600);
    tcase_add_loop_test(t, valgrind_corpus, 0, (int)(sizeof configs / sizeof configs[0]));
    suite_add_tcase(s, t);
    t = tcase_create("foreign");
    tcase_set_timeout(t, 600);
    tcase_add_test(t, foreign_files);
    suite_add_tcase(s, t);
    t = tcase_create("cli");
    tcase_add_test(t, cli_check);
    tcase_add_test(t, cli_normalize);
    tcase_add_test(t, cli_normalize_write_failures);
    tcase_add_test(t, cli_usage_and_unreadable);
    tcase_add_test(t, cli_oversize_file);
    suite_add_tcase(s, t);
    return s;
}
