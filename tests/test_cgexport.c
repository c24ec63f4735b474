/* Tests of proto/cgexport: hand-computed Callgrind text for fixture
 * captures, and callgrind_annotate's per-function totals on a real run
 * equal to the profile's self and inclusive samples. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "proto/captext.h"
#include "daemon/export/cgexport.h"
#include "deep_capture.h"
#include "testutil.h"

/* Exports a built fixture capture to a string; NULL with err set. */
static char *export_file(const char *path, char *err, size_t errlen)
{
    size_t len;
    char *cap = tu_read_file(path, &len);
    ck_assert_ptr_nonnull(cap);
    char *text = NULL;
    size_t tlen = 0;
    FILE *f = open_memstream(&text, &tlen);
    struct capture_reader *r = capture_reader_mem(cap, len);
    int rc = cgexport_write(r, f, err, errlen);
    capture_reader_free(r);
    fclose(f);
    free(cap);
    if (rc != 0) {
        free(text);
        return NULL;
    }
    return text;
}

static char *export_fixture(const char *name)
{
    char rel[200], err[300];
    snprintf(rel, sizeof rel, "fixtures/%s.jcap", name);
    char *path = tu_build_path(rel);
    char *text = export_file(path, err, sizeof err);
    ck_assert_msg(text != NULL, "%s", err);
    free(path);
    return text;
}

/* diff-base: main > f three times, main > g once, leaf spans unknown
 * (line 0).  f and g: self 3 and 1 at line 0; main: no self, one edge to
 * each callee at the call's line 1, carrying 3 and 1 samples; callees'
 * declarations are on lines 2 and 3. */
START_TEST(cpu_fixture_by_hand)
{
    char *text = export_fixture("diff-base");
    ck_assert_str_eq(text, "# jett profile export: a CPU sampling profile\n"
                           "version: 1\n"
                           "creator: jett\n"
                           "positions: line\n"
                           "events: Samples\n"
                           "\n"
                           "fl=(1) src/a.jett\n"
                           "fn=(1) a.f\n"
                           "0 3\n"
                           "\n"
                           "fn=(2) a.g\n"
                           "0 1\n"
                           "\n"
                           "fn=(3) a.main\n"
                           "cfn=(1)\n"
                           "calls=3 2\n"
                           "1 3\n"
                           "cfn=(2)\n"
                           "calls=1 3\n"
                           "1 1\n"
                           "\n"
                           "totals: 4\n");
    free(text);
}
END_TEST

/* diff-mem-new: f allocates 100, g allocates 50, f's block is freed (a
 * free carries no cost). */
START_TEST(memory_fixture_by_hand)
{
    char *text = export_fixture("diff-mem-new");
    ck_assert_str_eq(text, "# jett profile export: a Jett heap allocation profile\n"
                           "version: 1\n"
                           "creator: jett\n"
                           "positions: line\n"
                           "events: AllocBytes AllocCount\n"
                           "\n"
                           "fl=(1) src/m.jett\n"
                           "fn=(1) m.f\n"
                           "0 100 1\n"
                           "\n"
                           "fn=(2) m.g\n"
                           "0 50 1\n"
                           "\n"
                           "totals: 150 2\n");
    free(text);
}
END_TEST

/* tiny-memory: the map's growth (64 bytes) is charged to put at line 6,
 * the list's growth (32) to main at line 11; put is reached from main's
 * line 12, so main's edge to put carries put's 64 bytes and no count. */
START_TEST(memory_growth_and_edges)
{
    char *text = export_fixture("tiny-memory");
    /* put was named first by main's cfn=, so its own block reuses the id. */
    ck_assert_ptr_nonnull(strstr(text, "cfn=(3) cache.put\n"));
    ck_assert_ptr_nonnull(strstr(text, "\nfn=(3)\n6 64 0\n"));
    ck_assert_ptr_nonnull(strstr(text, "\n10 80 1\n11 32 0\n12 25 1\n"));
    ck_assert_ptr_nonnull(strstr(text, "calls=1 5\n12 64 0\n"));
    /* 64 + 80 + 32 + 25 + 64 + 31 bytes, 4 allocations. */
    ck_assert_ptr_nonnull(strstr(text, "\ntotals: 296 4\n"));
    free(text);
}
END_TEST

START_TEST(damaged_capture_names_the_byte)
{
    char *path = tu_build_path("fixtures/diff-base.jcap"), *dir = tu_tmpdir(), cut[600];
    size_t len;
    char *cap = tu_read_file(path, &len);
    snprintf(cut, sizeof cut, "%s/cut.jcap", dir);
    ck_assert_int_eq(tu_write_file(cut, cap, len - 5), 0);
    char err[300] = "";
    ck_assert_ptr_null(export_file(cut, err, sizeof err));
    ck_assert_msg(strncmp(err, "byte ", 5) == 0 && strstr(err, "cut short"), "%s", err);
    unlink(cut), rmdir(dir);
    free(cap), free(path), free(dir);
}
END_TEST

/* cpu-recursion (main > f > g > f > g): every sample counts once on the
 * edge out of the outermost frame of every other function on its stack.
 *   seq 1, 2: main>f>g>f, leaf f at line 5: main->f (line 2), g->f (8)
 *   seq 3: main>f>g, leaf g at line 8: main->f, f->g (line 5)
 *   seq 4: main, at line 2: self only
 *   seq 5: main>f>g>f>g, leaf g at line 8: main->f, f->g (outermost f)
 * Self: f 5:2, g 8:2, main 2:1.  Edges: main->f 4, f->g 2, g->f 2.
 * Inclusive: main 1 + 4 = 5, f 2 + 2 = 4, g 2 + 2 = 4, as the profile.
 * Order: f, g, main (by name); declarations at lines 4, 7, 1. */
START_TEST(recursion_fixture_by_hand)
{
    char *text = export_fixture("cpu-recursion");
    ck_assert_str_eq(text, "# jett profile export: a CPU sampling profile\n"
                           "version: 1\n"
                           "creator: jett\n"
                           "positions: line\n"
                           "events: Samples\n"
                           "\n"
                           "fl=(1) src/rec.jett\n"
                           "fn=(1) rec.f\n"
                           "5 2\n"
                           "cfn=(2) rec.g\n"
                           "calls=2 7\n"
                           "5 2\n"
                           "\n"
                           "fn=(2)\n"
                           "8 2\n"
                           "cfn=(1)\n"
                           "calls=2 4\n"
                           "8 2\n"
                           "\n"
                           "fn=(3) rec.main\n"
                           "2 1\n"
                           "cfn=(1)\n"
                           "calls=4 4\n"
                           "2 4\n"
                           "\n"
                           "totals: 5\n");
    free(text);
}
END_TEST

/* A stack deeper than the wire's 128 frames is refused as the daemon
 * refuses it, with the byte of its frame. */
START_TEST(too_deep_stack_is_refused)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    deep_capture(&sb, 129); /* pack refuses this text: built from records */
    char err[320] = "";
    FILE *devnull = fopen("/dev/null", "w");
    struct capture_reader *r = capture_reader_mem(sb.data, sb.size);
    ck_assert_int_eq(cgexport_write(r, devnull, err, sizeof err), -1);
    ck_assert_msg(strncmp(err, "byte ", 5) == 0 &&
                      strstr(err, "STACK record 129: deeper than 128 frames"),
                  "%s", err);
    capture_reader_free(r);
    fclose(devnull);
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

/* The value callgrind_annotate prints for file:function, or -1. */
static long annotate_value(const char *out, const char *fn)
{
    for (const char *p = out; (p = strstr(p, fn)) != NULL; p++) {
        if (p[strlen(fn)] != '\n' || p[-1] != ':')
            continue;
        const char *line = p;
        while (line > out && line[-1] != '\n')
            line--;
        return atol(line);
    }
    return -1;
}

/* A recursive program: for every function of the profile, the export's
 * self and inclusive totals in callgrind_annotate equal the profile's. */
START_TEST(annotate_totals_equal_the_profile)
{
    char *dir = tu_tmpdir(), prog[600], cap[600], cg[600];
    snprintf(prog, sizeof prog, "%s/r.jett", dir);
    snprintf(cap, sizeof cap, "%s/r.jcap", dir);
    snprintf(cg, sizeof cg, "%s/r.callgrind", dir);
    const char src[] = "namespace r\n"
                       "fn fib(n: int) -> int {\n"
                       "    if n < 2 {\n"
                       "        return n\n"
                       "    }\n"
                       "    return fib(n - 1) + fib(n - 2)\n"
                       "}\n"
                       "fn spin() -> int {\n"
                       "    let t0 = now_ms()\n"
                       "    let x = 0\n"
                       "    while now_ms() - t0 < 100 {\n"
                       "        x += 1\n"
                       "    }\n"
                       "    return x + fib(20)\n"
                       "}\n"
                       "fn main() {\n"
                       "    spin()\n"
                       "    fib(24)\n"
                       "}\n";
    ck_assert_int_eq(tu_write_file(prog, src, sizeof src - 1), 0);
    char *jett = tu_build_path("cli/jett");
    struct tu_output o;
    const char *argv[] = {jett,
                          "run",
                          prog,
                          "--profile",
                          "--profile-threshold",
                          "0",
                          "--profile-limit",
                          "100",
                          "--profile-capture",
                          cap,
                          "--agent",
                          NULL};
    ck_assert_int_eq(tu_run(argv, NULL, 0, &o), 0);
    ck_assert_int_eq(o.status, 0);
    char err[300];
    char *text = export_file(cap, err, sizeof err);
    ck_assert_msg(text != NULL, "%s", err);
    ck_assert_int_eq(tu_write_file(cg, text, strlen(text)), 0);
    static const char *const fns[] = {"fib", "spin", "main"};
    for (int incl = 0; incl < 2; incl++) {
        struct tu_output a;
        const char *aargv[] = {"/usr/bin/callgrind_annotate",
                               incl ? "--inclusive=yes" : "--inclusive=no", "--threshold=100", cg,
                               NULL};
        ck_assert_int_eq(tu_run(aargv, NULL, 0, &a), 0);
        ck_assert_msg(a.status == 0, "%s", a.err);
        for (int k = 0; k < 3; k++) {
            char name[64], key[64];
            snprintf(name, sizeof name, "r.%s", fns[k]);
            snprintf(key, sizeof key, "      function: %s\n", fns[k]);
            const char *e = strstr(o.out, key);
            ck_assert_msg(e != NULL, "%s not in the profile", fns[k]);
            const char *v = strstr(e, incl ? "inclusive_samples: " : "self_samples: ");
            long want = atol(strchr(v, ':') + 2), got = annotate_value(a.out, name);
            /* A function with no self samples is absent from the
             * exclusive table. */
            ck_assert_msg(got == want || (want == 0 && got == -1),
                          "%s %s: annotate %ld, profile %ld", name, incl ? "inclusive" : "self",
                          got, want);
        }
        tu_output_free(&a);
    }
    free(text), free(jett);
    tu_output_free(&o);
    unlink(prog), unlink(cap), unlink(cg), rmdir(dir);
    free(dir);
}
END_TEST

/* Every fixture capture exported through the CLI is accepted by our own
 * Callgrind reader and by callgrind_annotate. */
START_TEST(every_fixture_reads_back)
{
    char *fixtures = tu_build_path("fixtures"), *jett = tu_build_path("cli/jett");
    char *dir = tu_tmpdir(), out[600];
    snprintf(out, sizeof out, "%s/x.callgrind", dir);
    DIR *d = opendir(fixtures);
    struct dirent *e;
    int seen = 0;
    while (d && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 6 || strcmp(e->d_name + n - 5, ".jcap") != 0)
            continue;
        char cap[1200];
        snprintf(cap, sizeof cap, "%s/%s", fixtures, e->d_name);
        struct tu_output o;
        const char *exp[] = {jett,        "profile", "export", cap, "--format",
                             "callgrind", "-o",      out,      NULL};
        ck_assert_int_eq(tu_run(exp, NULL, 0, &o), 0);
        ck_assert_msg(o.status == 0, "%s: %s", e->d_name, o.err);
        tu_output_free(&o);
        const char *chk[] = {jett, "callgrind", "check", out, NULL};
        ck_assert_int_eq(tu_run(chk, NULL, 0, &o), 0);
        ck_assert_msg(o.status == 0, "%s: %s%s", e->d_name, o.out, o.err);
        tu_output_free(&o);
        const char *ann[] = {"/usr/bin/callgrind_annotate", out, NULL};
        ck_assert_int_eq(tu_run(ann, NULL, 0, &o), 0);
        ck_assert_msg(o.status == 0, "%s: %s", e->d_name, o.err);
        tu_output_free(&o);
        seen++;
    }
    if (d)
        closedir(d);
    ck_assert_int_ge(seen, 10);
    unlink(out), rmdir(dir);
    free(dir), free(fixtures), free(jett);
}
END_TEST

Suite *cgexport_suite(void)
{
    Suite *s = suite_create("cgexport");
    TCase *t = tcase_create("cgexport");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, cpu_fixture_by_hand);
    tcase_add_test(t, recursion_fixture_by_hand);
    tcase_add_test(t, too_deep_stack_is_refused);
    tcase_add_test(t, memory_fixture_by_hand);
    tcase_add_test(t, memory_growth_and_edges);
    tcase_add_test(t, damaged_capture_names_the_byte);
    tcase_add_test(t, annotate_totals_equal_the_profile);
    tcase_add_test(t, every_fixture_reads_back);
    suite_add_tcase(s, t);
    return s;
}
