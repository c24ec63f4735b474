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
    char err[300];
    char *path = tu_capture_path(name);
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

/* cpu-recursion (main > f > g > f > g): every call edge carries the
 * samples below that call, as Callgrind records a call's inclusive cost
 * (issue 19 item 5: the edges out of inner frames used to be missing).
 *   seq 1, 2: main>f>g>f, leaf f at line 5: edges main->f (line 2),
 *             f->g (5), g->f (8)
 *   seq 3: main>f>g, leaf g at line 8: main->f, f->g
 *   seq 4: main, at line 2: self only
 *   seq 5: main>f>g>f>g, leaf g at line 8: main->f, f->g, g->f, f->g
 * Self: f 5:2, g 8:2, main 2:1.  Edges: main->f 4 (seq 1 2 3 5); f->g
 * at line 5: 4 from the outer f (seq 1 2 3 5) and 1 from the inner
 * (seq 5), one edge of 5; g->f 3 (seq 1 2 5).
 * Inclusive in callgrind_annotate: main 1 + 4 = 5 as the profile; the
 * recursive f 2 + 5 = 7 and g 2 + 3 = 5, once per frame on the stack.
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
                           "calls=5 7\n"
                           "5 5\n"
                           "\n"
                           "fn=(2)\n"
                           "8 2\n"
                           "cfn=(1)\n"
                           "calls=3 4\n"
                           "8 3\n"
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

/* A stack deeper than the wire's 128 frames stops decoding, for the
 * profile as for the export: what was read before it is exported as the
 * profile reports it (no sample: totals 0), with the byte of the damage
 * (nothing was written before). */
START_TEST(too_deep_stack_is_refused)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    deep_capture(&sb, 129); /* pack refuses this text: built from records */
    char err[320] = "";
    char *out = NULL;
    size_t out_len = 0;
    FILE *m = open_memstream(&out, &out_len);
    struct capture_reader *r = capture_reader_mem(sb.data, sb.size);
    ck_assert_msg(cgexport_write(r, m, err, sizeof err) == 1, "%s", err);
    ck_assert_msg(strncmp(err, "byte ", 5) == 0 &&
                      strstr(err, "STACK record 129: deeper than 128 frames"),
                  "%s", err);
    capture_reader_free(r);
    fclose(m);
    ck_assert_ptr_nonnull(strstr(out, "\ntotals: 0\n"));
    ck_assert_ptr_null(strstr(out, "fn="));
    free(out);
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
        /* callgrind_annotate groups digits by thousands: "5,120" */
        long v = 0;
        for (; *line == ' ' || *line == ',' || (*line >= '0' && *line <= '9'); line++)
            if (*line != ' ' && *line != ',')
                v = v * 10 + (*line - '0');
        return v;
    }
    return -1;
}

/* A recursive program: for every function of the profile, the export's
 * self totals in callgrind_annotate equal the profile's, and so do the
 * inclusive totals of spin and main, which do not recurse.  fib's calls
 * nest (each call's cost holds the calls below it), so its inclusive
 * counts a sample once per fib frame on the stack: at least the
 * profile's, and above it since fib(20) and fib(24) recurse. */
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
            bool nested = incl && k == 0;
            ck_assert_msg(nested ? got > want : got == want || (want == 0 && got == -1),
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

/* Mutual (to_json > kind > to_json > quote) and self (fact > fact >
 * fact) recursion through the real callgrind_annotate.  Stacks: 0 main,
 * 1 main>to_json, 2 ..>kind, 3 ..>kind>to_json, 4 ..>to_json>quote,
 * 5 main>fact, 6 main>fact>fact, 7 main>fact>fact>fact.  Samples: 3 on
 * 4, 1 on 2, 2 on 3, 2 on 7, 1 on 6, 1 on 0 (10 in all).
 * Subtrees (the edge into each node): 4: 3, 3: 2 + 3 = 5, 2: 1 + 5 = 6,
 * 1: 6, 7: 2, 6: 1 + 2 = 3, 5: 3; the two fact->fact calls share a line:
 * one edge of 5.
 * Self: main 1, to_json 2, kind 1, quote 3, fact 1 + 2 = 3.
 * Inclusive (self + outgoing edges): main 1 + 6 + 3 = 10 and kind
 * 1 + 5 = 6 and quote 3, as the profile (they do not recurse); to_json
 * 2 + 6 + 3 = 11 (its 6 samples, 5 of them with two to_json frames);
 * fact 3 + 5 = 8 (1 sample with two frames, 2 with three).  Never below
 * self.  Callers: to_json <- main, kind; kind <- to_json; quote <-
 * to_json; fact <- main, fact. */
static const char recursion_capture[] =
    "HELLO version=1 mode=cpu rate_hz=1000 threshold_bp=0 limit=100 cpu_budget=33554432 "
    "retention_budget=67108864 stack_budget=16777216 backend=\"interpreter_safe_point\" "
    "capabilities=cpu_tick_source,safe_stack_capture,source_spans colour=false\n"
    "SOURCE id=0 origin=project path=\"src/j.jett\" spans=- text=\"fn main() {\\n  to_json()\\n  "
    "fact()\\n}\\nfn to_json() {\\n  kind()\\n  quote()\\n}\\nfn kind() {\\n  to_json()\\n}\\nfn "
    "quote() {\\n  let q = 1\\n}\\nfn fact() {\\n  fact()\\n}\\n\"\n"
    "FUNC id=0 namespace=\"j\" function=\"main\" source=0 decl=0-35\n"
    "FUNC id=1 namespace=\"j\" function=\"to_json\" source=0 decl=35-71\n"
    "FUNC id=2 namespace=\"j\" function=\"kind\" source=0 decl=71-97\n"
    "FUNC id=3 namespace=\"j\" function=\"quote\" source=0 decl=97-124\n"
    "FUNC id=4 namespace=\"j\" function=\"fact\" source=0 decl=124-147\n"
    "EVENTS\n"
    "  STACK id=0 parent=- func=0 site=-\n"
    "  STACK id=1 parent=0 func=1 site=14-23\n"
    "  STACK id=2 parent=1 func=2 site=52-58\n"
    "  STACK id=3 parent=2 func=1 site=85-94\n"
    "  STACK id=4 parent=3 func=3 site=61-68\n"
    "  STACK id=5 parent=0 func=4 site=26-32\n"
    "  STACK id=6 parent=5 func=4 site=138-144\n"
    "  STACK id=7 parent=6 func=4 site=138-144\n"
    "  CPU_SAMPLE seq=1 tick=1 task=- actor=- thread=0 state=jett stack=4 span=112-121\n"
    "  CPU_SAMPLE seq=2 tick=2 task=- actor=- thread=0 state=jett stack=4 span=112-121\n"
    "  CPU_SAMPLE seq=3 tick=3 task=- actor=- thread=0 state=jett stack=4 span=112-121\n"
    "  CPU_SAMPLE seq=4 tick=4 task=- actor=- thread=0 state=jett stack=2 span=85-94\n"
    "  CPU_SAMPLE seq=5 tick=5 task=- actor=- thread=0 state=jett stack=3 span=52-58\n"
    "  CPU_SAMPLE seq=6 tick=6 task=- actor=- thread=0 state=jett stack=3 span=52-58\n"
    "  CPU_SAMPLE seq=7 tick=7 task=- actor=- thread=0 state=jett stack=7 span=138-144\n"
    "  CPU_SAMPLE seq=8 tick=8 task=- actor=- thread=0 state=jett stack=7 span=138-144\n"
    "  CPU_SAMPLE seq=9 tick=9 task=- actor=- thread=0 state=jett stack=6 span=138-144\n"
    "  CPU_SAMPLE seq=10 tick=10 task=- actor=- thread=0 state=jett stack=0 span=26-32\n"
    "END\n"
    "FINISH termination=returned wall_ns=10000000 cpu_ns=- requested=10 coalesced=0 "
    "dropped=0 collector_failure=false stack_limit=false\n";

/* Whether callgrind_annotate --tree=caller lists `caller` among the
 * callers of `fn` (its block: "< file:caller (Nx)" lines ending in
 * "*  file:fn"). */
static bool annotate_has_caller(const char *out, const char *fn, const char *caller)
{
    char star[100], from[100];
    snprintf(star, sizeof star, "*  src/j.jett:%s\n", fn);
    snprintf(from, sizeof from, "< src/j.jett:%s (", caller);
    const char *end = strstr(out, star);
    if (!end)
        return false;
    const char *start = end;
    while (start > out && !(start[-1] == '\n' && start - 1 > out && start[-2] == '\n'))
        start--;
    const char *hit = strstr(start, from);
    return hit != NULL && hit < end;
}

START_TEST(recursion_annotated_by_hand)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    char err[320] = "";
    ck_assert_msg(
        captext_pack(recursion_capture, strlen(recursion_capture), &sb, err, sizeof err) == 0, "%s",
        err);
    char *dir = tu_tmpdir(), cg[600];
    snprintf(cg, sizeof cg, "%s/j.callgrind", dir);
    FILE *out = fopen(cg, "w");
    ck_assert_ptr_nonnull(out);
    struct capture_reader *r = capture_reader_mem(sb.data, sb.size);
    ck_assert_msg(cgexport_write(r, out, err, sizeof err) == 0, "%s", err);
    capture_reader_free(r);
    fclose(out);
    static const struct {
        const char *fn;
        long self, inclusive;
    } want[] = {{"j.main", 1, 10},
                {"j.to_json", 2, 11},
                {"j.kind", 1, 6},
                {"j.quote", 3, 3},
                {"j.fact", 3, 8}};
    for (int incl = 0; incl < 2; incl++) {
        struct tu_output a;
        const char *argv[] = {"/usr/bin/callgrind_annotate",
                              incl ? "--inclusive=yes" : "--inclusive=no", "--threshold=100", cg,
                              NULL};
        ck_assert_int_eq(tu_run(argv, NULL, 0, &a), 0);
        ck_assert_msg(a.status == 0, "%s", a.err);
        for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
            long got = annotate_value(a.out, want[k].fn);
            long w = incl ? want[k].inclusive : want[k].self;
            ck_assert_msg(got == w, "%s %s: annotate %ld, expected %ld", want[k].fn,
                          incl ? "inclusive" : "self", got, w);
        }
        tu_output_free(&a);
    }
    struct tu_output t;
    const char *targv[] = {"/usr/bin/callgrind_annotate", "--tree=caller", "--threshold=100", cg,
                           NULL};
    ck_assert_int_eq(tu_run(targv, NULL, 0, &t), 0);
    ck_assert_msg(t.status == 0, "%s", t.err);
    static const char *const callers[][2] = {{"j.to_json", "j.main"}, {"j.to_json", "j.kind"},
                                             {"j.kind", "j.to_json"}, {"j.quote", "j.to_json"},
                                             {"j.fact", "j.main"},    {"j.fact", "j.fact"}};
    for (size_t k = 0; k < sizeof callers / sizeof callers[0]; k++)
        ck_assert_msg(annotate_has_caller(t.out, callers[k][0], callers[k][1]),
                      "%s has no caller %s:\n%s", callers[k][0], callers[k][1], t.out);
    ck_assert(!annotate_has_caller(t.out, "j.main", "j.fact"));
    tu_output_free(&t);
    msgpack_sbuffer_destroy(&sb);
    unlink(cg), rmdir(dir);
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
    tcase_add_test(t, recursion_annotated_by_hand);
    tcase_add_test(t, every_fixture_reads_back);
    suite_add_tcase(s, t);
    return s;
}
