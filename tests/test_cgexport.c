/* Tests of proto/cgexport: hand-computed Callgrind text for fixture
 * captures, and callgrind_annotate's per-function totals on a real run
 * equal to the profile's self and inclusive samples. */
#include <check.h>
#include <dirent.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "proto/captext.h"
#include "daemon/export/cgexport.h"
#include "deep_capture.h"
#include "testutil.h"

/* Exports a capture file to a string, *rc the writer's status (1 for a
 * damaged capture, whose text is written as far as it was read). */
static char *export_file_rc(const char *path, int *rc, char *err, size_t errlen);

/* Exports a built fixture capture to a string; NULL with err set. */
static char *export_file(const char *path, char *err, size_t errlen)
{
    int rc;
    char *text = export_file_rc(path, &rc, err, errlen);
    if (rc != 0)
        free(text), text = NULL;
    return text;
}

static char *export_file_rc(const char *path, int *out_rc, char *err, size_t errlen)
{
    size_t len;
    char *cap = tu_read_file(path, &len);
    ck_assert_ptr_nonnull(cap);
    char *text = NULL;
    size_t tlen = 0;
    FILE *f = open_memstream(&text, &tlen);
    struct capture_reader *r = capture_reader_mem(cap, len);
    *out_rc = cgexport_write(r, f, NULL, err, errlen);
    capture_reader_free(r);
    fclose(f);
    free(cap);
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
 * declarations are on lines 2 and 3.  The desc: lines: complete, no
 * call counts (a capture of protocol 1: calls= counts the samples), its
 * 4 samples all jett, 4 requested ticks, none coalesced or dropped. */
START_TEST(cpu_fixture_by_hand)
{
    char *text = export_fixture("diff-base");
    ck_assert_str_eq(text, "# jett profile export: a CPU sampling profile\n"
                           "version: 1\n"
                           "creator: jett\n"
                           "desc: Status: complete\n"
                           "desc: Calls: unknown (the capture has no call counts): calls= "
                           "counts the samples that crossed each call\n"
                           "desc: Samples: 4 recorded: 4 jett, the costs; 0 runtime, 0 waiting "
                           "and 0 unavailable, in no cost\n"
                           "desc: Ticks: 4 requested, 4 samples, 0 coalesced, 0 dropped; the "
                           "coalesced and dropped ticks have no stack and are in no cost\n"
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
                           "desc: Status: complete\n"
                           "desc: Calls: unknown (a memory capture has no call counts): calls= "
                           "counts the allocation events that crossed each call\n"
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
    int rc;
    char *text = export_file_rc(cut, &rc, err, sizeof err);
    ck_assert_int_eq(rc, 1);
    ck_assert_msg(strncmp(err, "byte ", 5) == 0 && strstr(err, "cut short"), "%s", err);
    /* what was read is written, and says it is not whole: its FINISH was
     * cut, so the profile is partial and its ticks unknown */
    ck_assert_msg(strstr(text, "\ndesc: Status: partial (collector_failure)\n"
                               "desc: Calls: unknown (the capture has no call counts): calls= "
                               "counts the samples that crossed each call\n"
                               "desc: Samples: 4 recorded: 4 jett, the costs; 0 runtime, 0 "
                               "waiting and 0 unavailable, in no cost\n"
                               "desc: Ticks: 4 samples, coalesced and dropped unknown (no "
                               "FINISH)\npositions: line\n"),
                  "%s", text);
    ck_assert_ptr_nonnull(strstr(text, "\ntotals: 4\n"));
    free(text);
    unlink(cut), rmdir(dir);
    free(cap), free(path), free(dir);
}
END_TEST

/* cpu-recursion (main > f > g > f > g): every call edge carries the
 * samples below that call, as Callgrind records a call's inclusive cost,
 * and recursion levels are named apart (jett-export(1)): the inner f is
 * rec.f'2, the inner g rec.g'2.
 *   seq 1, 2: main>f>g>f'2, leaf f'2 at line 5
 *   seq 3: main>f>g, leaf g at line 8
 *   seq 4: main, at line 2: self only
 *   seq 5: main>f>g>f'2>g'2, leaf g'2 at line 8
 * Self: f'2 5:2, g 8:1, g'2 8:1, main 2:1.  Edges: main->f at line 2
 * 4 (seq 1 2 3 5); f->g at line 5 4 (seq 1 2 3 5); g->f'2 at line 8 3
 * (seq 1 2 5); f'2->g'2 at line 5 1 (seq 5).  Calls (its CALLS record):
 * main's f() made 1 call, all main->f: exact; g's f() 1, all g->f'2:
 * exact; f's g() 2, shared by f->g and f'2->g'2, each at most the
 * smaller of 2 and g's 2 calls: 2 (the run made 1 on each).
 * Inclusive in callgrind_annotate (the calls into a function; main,
 * called by none, self + calls): main 1 + 4 = 5, f 4 and g 4 as the
 * profile; f'2 3 (the samples with two f frames), g'2 1.
 * Order: f, f'2, g, g'2, main (identities by name, each with its deeper
 * levels); declarations at lines 4, 7, 1. */
START_TEST(recursion_fixture_by_hand)
{
    char *text = export_fixture("cpu-recursion");
    ck_assert_str_eq(text, "# jett profile export: a CPU sampling profile\n"
                           "version: 1\n"
                           "creator: jett\n"
                           "desc: Status: complete\n"
                           "desc: Calls: 2 edges exact; 2 at most (call sites shared with other "
                           "edges, by recursion levels or callees, or of unknown count: the "
                           "smaller of their calls and the callee's); 0 unknown (the samples "
                           "that crossed them)\n"
                           "desc: Samples: 5 recorded: 5 jett, the costs; 0 runtime, 0 waiting "
                           "and 0 unavailable, in no cost\n"
                           "desc: Ticks: 5 requested, 5 samples, 0 coalesced, 0 dropped; the "
                           "coalesced and dropped ticks have no stack and are in no cost\n"
                           "positions: line\n"
                           "events: Samples\n"
                           "\n"
                           "fl=(1) src/rec.jett\n"
                           "fn=(1) rec.f\n"
                           "cfn=(2) rec.g\n"
                           "calls=2 7\n"
                           "5 4\n"
                           "\n"
                           "fn=(3) rec.f'2\n"
                           "5 2\n"
                           "cfn=(4) rec.g'2\n"
                           "calls=2 7\n"
                           "5 1\n"
                           "\n"
                           "fn=(2)\n"
                           "8 1\n"
                           "cfn=(3)\n"
                           "calls=1 4\n"
                           "8 3\n"
                           "\n"
                           "fn=(4)\n"
                           "8 1\n"
                           "\n"
                           "fn=(5) rec.main\n"
                           "2 1\n"
                           "cfn=(1)\n"
                           "calls=1 4\n"
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
    ck_assert_msg(cgexport_write(r, m, NULL, err, sizeof err) == 1, "%s", err);
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

/* callgrind_annotate's listing of `file` with or without --inclusive. */
static char *annotate(const char *file, bool inclusive)
{
    struct tu_output a;
    const char *argv[] = {"/usr/bin/callgrind_annotate",
                          inclusive ? "--inclusive=yes" : "--inclusive=no", "--threshold=100", file,
                          NULL};
    ck_assert_int_eq(tu_run(argv, NULL, 0, &a), 0);
    ck_assert_msg(a.status == 0, "%s", a.err);
    free(a.err);
    return a.out;
}

/* Every function's value in an annotate listing: none above `total`. */
static void none_above(const char *out, long total)
{
    const char *p = strstr(out, "file:function\n");
    ck_assert_ptr_nonnull(p);
    for (p = strstr(p, "\n") + 1; (p = strchr(p, '\n')) && p[1] != '\n' && p[1]; p++) {
        long v = 0;
        const char *q = p + 1;
        for (; *q == ' ' || *q == ',' || (*q >= '0' && *q <= '9'); q++)
            if (*q != ' ' && *q != ',')
                v = v * 10 + (*q - '0');
        ck_assert_msg(v <= total, "%ld above the total %ld:\n%s", v, total, out);
    }
}

/* A recursive program: for every function of the profile, the export's
 * self samples in callgrind_annotate, summed over the function's
 * recursion levels (r.fib, r.fib'2 .. r.fib'4), equal the profile's, and
 * the inclusive samples of each function's first level equal the
 * profile's inclusive samples: fib's recursion no longer counts a sample
 * once per frame.  No function's inclusive exceeds the total. */
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
    const char *at = strstr(o.out, "attributed_samples: ");
    ck_assert_ptr_nonnull(at);
    long total = atol(at + 20);
    static const char *const fns[] = {"fib", "spin", "main"};
    for (int incl = 0; incl < 2; incl++) {
        char *a = annotate(cg, incl);
        for (int k = 0; k < 3; k++) {
            char key[64];
            snprintf(key, sizeof key, "      function: %s\n", fns[k]);
            const char *e = strstr(o.out, key);
            ck_assert_msg(e != NULL, "%s not in the profile", fns[k]);
            const char *v = strstr(e, incl ? "inclusive_samples: " : "self_samples: ");
            long want = atol(strchr(v, ':') + 2), got = 0;
            /* self over every level; a level without self samples is
             * absent from the exclusive table */
            for (int level = 1; level <= (incl ? 1 : 4); level++) {
                char name[64];
                snprintf(name, sizeof name, level == 1 ? "r.%s" : "r.%s'%d", fns[k], level);
                long n = annotate_value(a, name);
                got += n > 0 ? n : 0;
            }
            ck_assert_msg(got == want, "r.%s %s: annotate %ld, profile %ld", fns[k],
                          incl ? "inclusive" : "self", got, want);
        }
        if (incl)
            none_above(a, total);
        free(a);
    }
    /* fib(24) recurses 24 deep: its last level holds frames 4 and below */
    char *a = annotate(cg, true);
    ck_assert_int_gt(annotate_value(a, "r.fib'4"), 0);
    free(a);
    free(text), free(jett);
    tu_output_free(&o);
    unlink(prog), unlink(cap), unlink(cg), rmdir(dir);
    free(dir);
}
END_TEST

/* Mutual (to_json > kind > to_json > quote) and self (fact > fact >
 * fact) recursion through the real callgrind_annotate.  Stacks: 0 main,
 * 1 main>to_json, 2 ..>kind, 3 ..>kind>to_json (to_json'2), 4
 * ..>to_json'2>quote, 5 main>fact, 6 main>fact>fact (fact'2), 7
 * main>fact>fact'2>fact (fact'3).  Samples: 3 on 4, 1 on 2, 2 on 3, 2 on
 * 7, 1 on 6, 1 on 0 (10 in all).
 * Subtrees (the edge into each node): 4: 3, 3: 2 + 3 = 5, 2: 1 + 5 = 6,
 * 1: 6, 7: 2, 6: 1 + 2 = 3, 5: 3.
 * Self: main 1, kind 1, to_json'2 2, quote 3, fact'2 1, fact'3 2.
 * Inclusive (the calls into a function; main, called by none, self +
 * calls): main 1 + 6 + 3 = 10, to_json 6, kind 6, quote 3 and fact 3, as
 * the profile; to_json'2 5 (the samples with two to_json frames),
 * fact'2 3, fact'3 2.  Callers: to_json <- main; kind <- to_json;
 * to_json'2 <- kind; quote <- to_json'2; fact <- main; fact'2 <- fact;
 * fact'3 <- fact'2. */
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
static bool annotate_has_caller(const char *out, const char *file, const char *fn,
                                const char *caller)
{
    char star[200], from[200];
    snprintf(star, sizeof star, "*  %s:%s\n", file, fn);
    snprintf(from, sizeof from, "< %s:%s (", file, caller);
    const char *end = strstr(out, star);
    if (!end)
        return false;
    const char *start = end;
    while (start > out && !(start[-1] == '\n' && start - 1 > out && start[-2] == '\n'))
        start--;
    const char *hit = strstr(start, from);
    return hit != NULL && hit < end;
}

static char *annotate_tree(const char *file)
{
    struct tu_output t;
    const char *argv[] = {"/usr/bin/callgrind_annotate", "--tree=caller", "--threshold=100", file,
                          NULL};
    ck_assert_int_eq(tu_run(argv, NULL, 0, &t), 0);
    ck_assert_msg(t.status == 0, "%s", t.err);
    free(t.err);
    return t.out;
}

/* A function's self and inclusive samples, computed by hand. */
struct annotated {
    const char *fn;
    long self, inclusive;
};

/* callgrind_annotate, with and without --inclusive=yes, prints exactly
 * the hand-computed values (a function without self samples is absent
 * from the exclusive table), and none above the total. */
static void expect_annotated(const char *cg, const struct annotated *want, size_t n, long total)
{
    for (int incl = 0; incl < 2; incl++) {
        char *a = annotate(cg, incl);
        for (size_t k = 0; k < n; k++) {
            long got = annotate_value(a, want[k].fn);
            long w = incl ? want[k].inclusive : want[k].self;
            ck_assert_msg(got == w || (w == 0 && got == -1), "%s %s: annotate %ld, expected %ld",
                          want[k].fn, incl ? "inclusive" : "self", got, w);
        }
        none_above(a, total);
        free(a);
    }
}

static void expect_callers(const char *cg, const char *file, const char *const (*callers)[2],
                           size_t n)
{
    char *t = annotate_tree(cg);
    for (size_t k = 0; k < n; k++)
        ck_assert_msg(annotate_has_caller(t, file, callers[k][0], callers[k][1]),
                      "%s has no caller %s:\n%s", callers[k][0], callers[k][1], t);
    free(t);
}

/* The calls callgrind_annotate --tree=caller shows on the line of
 * `caller` among the callers of `fn` ("< file:caller (Nx)"), or -1. */
static long annotate_calls(const char *out, const char *file, const char *fn, const char *caller)
{
    char star[200], from[200];
    snprintf(star, sizeof star, "*  %s:%s\n", file, fn);
    snprintf(from, sizeof from, "< %s:%s (", file, caller);
    const char *end = strstr(out, star);
    if (!end)
        return -1;
    const char *start = end;
    while (start > out && !(start[-1] == '\n' && start - 1 > out && start[-2] == '\n'))
        start--;
    const char *hit = strstr(start, from);
    return hit && hit < end ? atol(hit + strlen(from)) : -1;
}

/* Writes text to a Callgrind file in a fresh folder; its path. */
static char *write_cg(const char *text, char **dir)
{
    *dir = tu_tmpdir();
    size_t n = strlen(*dir) + 16;
    char *cg = malloc(n);
    snprintf(cg, n, "%s/x.callgrind", *dir);
    ck_assert_int_eq(tu_write_file(cg, text, strlen(text)), 0);
    return cg;
}

/* cpu-calls (its header): calls= is the run's count wherever the capture
 * knows it for the edge.  main's docs(), pick(d) and rank() and rank's
 * sort(...) (which called by through a builtin) each led to one callee:
 * exactly 1, 3, 3 and 9.  main's f(d) made 3 calls, to add and to skip:
 * shared, each edge has the most it can have made, the smaller of 3
 * and its callee's calls (add 2, skip 1).  callgrind_annotate
 * --tree=caller shows them as each callee's callers. */
START_TEST(calls_exact_where_known)
{
    char *text = export_fixture("cpu-calls"), *dir;
    ck_assert_ptr_nonnull(strstr(
        text, "\ndesc: Calls: 4 edges exact; 2 at most (call sites shared with other edges, by "
              "recursion levels or callees, or of unknown count: the smaller of their calls and "
              "the callee's); 0 unknown (the samples that crossed them)\n"));
    char *cg = write_cg(text, &dir), *t = annotate_tree(cg);
    static const struct {
        const char *fn, *caller;
        long calls;
    } want[] = {{"idx.docs", "idx.main", 1}, {"idx.pick", "idx.main", 3},
                {"idx.rank", "idx.main", 3}, {"idx.by", "idx.rank", 9},
                {"idx.add", "idx.main", 2},  {"idx.skip", "idx.main", 1}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        ck_assert_msg(
            annotate_calls(t, "src/idx.jett", want[i].fn, want[i].caller) == want[i].calls,
            "%s from %s: %ld calls, want %ld:\n%s", want[i].fn, want[i].caller,
            annotate_calls(t, "src/idx.jett", want[i].fn, want[i].caller), want[i].calls, t);
    free(t);
    unlink(cg), rmdir(dir);
    free(cg), free(dir), free(text);
}
END_TEST

/* Where the capture has counts but not the edge's: a call site the
 * STACK record does not give (site=-) has the callee's calls, the most
 * it can have made (m.f 7); when a budget refused the call line and the
 * callee's bucket too (cpu_budget 32 holds main's only), calls= is the
 * samples that crossed the call (3), and the header says how many of
 * each there are. */
START_TEST(calls_unknown_counts)
{
    static const char text[] =
        "HELLO version=2 mode=cpu rate_hz=1000 threshold_bp=0 limit=10 cpu_budget=%s "
        "retention_budget=67108864 stack_budget=16777216 backend=\"interpreter_safe_point\" "
        "capabilities=cpu_tick_source colour=false\n"
        "SOURCE id=0 origin=project path=\"m.jett\" spans=- text=\"fn main() {\\n  f()\\n}\\n"
        "fn f() {\\n  let x = 1\\n}\\n\"\n"
        "FUNC id=0 namespace=\"m\" function=\"main\" source=0 decl=0-19\n"
        "FUNC id=1 namespace=\"m\" function=\"f\" source=0 decl=20-43\n"
        "EVENTS\n"
        "  STACK id=0 parent=- func=0 site=-\n"
        "  STACK id=1 parent=0 func=1 site=%s\n"
        "  CPU_SAMPLE seq=1 tick=1 task=- actor=- thread=0 state=jett stack=0 span=14-17\n"
        "  CPU_SAMPLE seq=2 tick=2 task=- actor=- thread=0 state=jett stack=1 span=31-40\n"
        "  CPU_SAMPLE seq=3 tick=3 task=- actor=- thread=0 state=jett stack=1 span=31-40\n"
        "  CPU_SAMPLE seq=4 tick=4 task=- actor=- thread=0 state=jett stack=1 span=31-40\n"
        "END\n"
        "CALLS functions=0:1,1:7 sites=0:14-17:7\n"
        "FINISH termination=returned wall_ns=4000000 cpu_ns=- requested=4 coalesced=0 "
        "dropped=0 collector_failure=false stack_limit=false\n";
    static const struct {
        const char *budget, *site, *calls, *desc;
    } cases[] = {
        {"33554432", "-", "calls=7 4\n0 3\n", "0 edges exact; 1 at most"},
        {"32", "14-17", "calls=3 4\n2 3\n", "0 edges exact; 0 at most"},
    };
    for (size_t i = 0; i < 2; i++) {
        char cap[2048];
        snprintf(cap, sizeof cap, text, cases[i].budget, cases[i].site);
        msgpack_sbuffer sb;
        msgpack_sbuffer_init(&sb);
        char err[320];
        ck_assert_msg(captext_pack(cap, strlen(cap), &sb, err, sizeof err) == 0, "%s", err);
        char *out = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&out, &len);
        struct capture_reader *r = capture_reader_mem(sb.data, sb.size);
        ck_assert_msg(cgexport_write(r, m, NULL, err, sizeof err) == 0, "%s", err);
        capture_reader_free(r);
        fclose(m);
        ck_assert_msg(strstr(out, cases[i].calls), "%s", out);
        char desc[200];
        snprintf(desc, sizeof desc, "\ndesc: Calls: %s (", cases[i].desc);
        ck_assert_msg(strstr(out, desc), "%s", out);
        ck_assert_msg(strstr(out, i ? "); 1 unknown (the samples that crossed them)\n"
                                    : "); 0 unknown (the samples that crossed them)\n"),
                      "%s", out);
        free(out);
        msgpack_sbuffer_destroy(&sb);
    }
}
END_TEST

/* A project with a dependency and a standard library call, run for
 * real, each part busy for 100 ms: its files are named where they lie,
 * main.jett, src/work.jett, deps/busy/spin.jett (the dependency's
 * logical path is busy/spin.jett) and stdlib/std/math.jett (logically
 * stdlib/math.jett), so that callgrind_annotate --auto=yes run from the
 * project's root annotates each, the standard library's with --include
 * naming the source tree's agent/, its data folder, and shows the files'
 * own lines. */
START_TEST(annotate_finds_files_from_the_root)
{
    static const char *const files[][2] = {
        {"main.jett", "namespace listed.main\n\nimport listed.work\nimport busy.spin\n"
                      "import std.math\n\nfn main() -> int {\n    let t0 = now_ms()\n"
                      "    let x = 0\n    while now_ms() - t0 < 100 {\n"
                      "        x = (x + math.pow(3, 20)) % 1000\n    }\n"
                      "    return (x + work.churn(100) + spin.spin(100)) * 0\n}\n"},
        {"src/work.jett", "namespace listed.work\n\nfn churn(ms: int) -> int {\n"
                          "    let t0 = now_ms()\n    let x = 0\n"
                          "    while now_ms() - t0 < ms {\n        x = (x * 31 + 7) % 1000003\n"
                          "    }\n    return x\n}\n"},
        {"deps/busy/spin.jett", "namespace busy.spin\n\nfn spin(ms: int) -> int {\n"
                                "    let t0 = now_ms()\n    let y = 1\n"
                                "    while now_ms() - t0 < ms {\n"
                                "        y = (y * 17 + 3) % 65521\n    }\n    return y\n}\n"},
        {"jett.toml", "name = \"listed\"\n"},
    };
    char *dir = tu_tmpdir(), path[700], cap[600], cg[600];
    snprintf(path, sizeof path, "%s/src", dir);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/deps", dir);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/deps/busy", dir);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i][0]);
        ck_assert_int_eq(tu_write_file(path, files[i][1], strlen(files[i][1])), 0);
    }
    snprintf(path, sizeof path, "%s/main.jett", dir);
    snprintf(cap, sizeof cap, "%s/r.jcap", dir);
    snprintf(cg, sizeof cg, "%s/callgrind.out", dir);
    char *jett = tu_build_path("cli/jett"), *agent = tu_source_path("agent");
    struct tu_output o;
    const char *run[] = {jett, "run", path, "--profile", "--profile-capture", cap, NULL};
    ck_assert_int_eq(tu_run(run, NULL, 0, &o), 0);
    ck_assert_msg(o.status == 0, "%d %s", o.status, o.err);
    tu_output_free(&o);
    char err[300];
    char *text = export_file(cap, err, sizeof err);
    ck_assert_msg(text != NULL, "%s", err);
    ck_assert_int_eq(tu_write_file(cg, text, strlen(text)), 0);
    static const char *const named[] = {" main.jett\n", " src/work.jett\n",
                                        " deps/busy/spin.jett\n", " stdlib/std/math.jett\n"};
    for (size_t i = 0; i < 4; i++)
        ck_assert_msg(strstr(text, named[i]), "%s not named:\n%s", named[i], text);
    char cmd[2000];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && exec /usr/bin/callgrind_annotate --auto=yes --threshold=100 "
             "--include='%s' callgrind.out",
             dir, agent);
    const char *sh[] = {"/bin/sh", "-c", cmd, NULL};
    ck_assert_int_eq(tu_run(sh, NULL, 0, &o), 0);
    ck_assert_msg(o.status == 0, "%s", o.err);
    ck_assert_msg(!strstr(o.out, "could not be found"), "%s", o.out);
    char want[800];
    static const char *const sources[] = {"main.jett", "src/work.jett", "deps/busy/spin.jett"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(want, sizeof want, "-- Auto-annotated source: %s\n", sources[i]);
        ck_assert_msg(strstr(o.out, want), "%s not annotated:\n%s", sources[i], o.out);
    }
    snprintf(want, sizeof want, "-- Auto-annotated source: %s/ + stdlib/std/math.jett\n", agent);
    ck_assert_msg(strstr(o.out, want), "stdlib/std/math.jett not annotated:\n%s", o.out);
    /* the lines shown are the files' own */
    ck_assert_ptr_nonnull(strstr(o.out, "  while now_ms() - t0 < ms {\n"));
    ck_assert_ptr_nonnull(strstr(o.out, "fn pow("));
    tu_output_free(&o);
    free(text), free(jett), free(agent);
    ck_assert_int_eq(tu_rmtree(dir), 0);
    free(dir);
}
END_TEST

/* Packs capture text and exports it to a Callgrind file in a fresh
 * folder (its path, malloc'd; the folder is *dir). */
static char *export_text(const char *text, char **dir)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    char err[320] = "";
    ck_assert_msg(captext_pack(text, strlen(text), &sb, err, sizeof err) == 0, "%s", err);
    *dir = tu_tmpdir();
    size_t n = strlen(*dir) + 16;
    char *cg = malloc(n);
    snprintf(cg, n, "%s/x.callgrind", *dir);
    FILE *out = fopen(cg, "w");
    ck_assert_ptr_nonnull(out);
    struct capture_reader *r = capture_reader_mem(sb.data, sb.size);
    ck_assert_msg(cgexport_write(r, out, NULL, err, sizeof err) == 0, "%s", err);
    capture_reader_free(r);
    fclose(out);
    msgpack_sbuffer_destroy(&sb);
    return cg;
}

START_TEST(recursion_annotated_by_hand)
{
    char *dir, *cg = export_text(recursion_capture, &dir);
    static const struct annotated want[] = {
        {"j.main", 1, 10}, {"j.to_json", 0, 6}, {"j.kind", 1, 6},   {"j.to_json'2", 2, 5},
        {"j.quote", 3, 3}, {"j.fact", 0, 3},    {"j.fact'2", 1, 3}, {"j.fact'3", 2, 2}};
    expect_annotated(cg, want, sizeof want / sizeof want[0], 10);
    static const char *const callers[][2] = {{"j.to_json", "j.main"},   {"j.kind", "j.to_json"},
                                             {"j.to_json'2", "j.kind"}, {"j.quote", "j.to_json'2"},
                                             {"j.fact", "j.main"},      {"j.fact'2", "j.fact"},
                                             {"j.fact'3", "j.fact'2"}};
    expect_callers(cg, "src/j.jett", callers, sizeof callers / sizeof callers[0]);
    char *t = annotate_tree(cg);
    ck_assert(!annotate_has_caller(t, "src/j.jett", "j.main", "j.fact"));
    ck_assert(!annotate_has_caller(t, "src/j.jett", "j.to_json", "j.kind"));
    free(t);
    unlink(cg), rmdir(dir);
    free(cg), free(dir);
}
END_TEST

/* Recursion deeper than the last level named apart (4), direct and
 * mutual.  Source lines: main 1-4 (calls walk() at 2, ping() at 3),
 * walk 5-7 (walk() at 6), ping 8-10 (pong() at 9), pong 11-13 (ping() at
 * 12).  Stacks: 0 main; 1..6 walk six deep (w1..w6); 7..16 ping and pong
 * alternating five deep each (p1 q1 p2 q2 .. p5 q5).  Samples: main 1;
 * w2 1, w4 1, w5 2, w6 3; q2 1, p5 2, q5 1: 12 in all.
 * Levels: w1 walk, w2 walk'2, w3 walk'3, w4..w6 walk'4; pk ping'k and qk
 * pong'k, p5 ping'4 and q5 pong'4.
 * Subtrees: w6 3, w5 5, w4 6, w3 6, w2 7, w1 7; q5 1, p5 3, q4 3, p4 3,
 * q3 3, p3 3, q2 4, p2 4, q1 4, p1 4.
 * A call into a frame past the last level carries nothing but its
 * count: walk'4 (w4) -> w5 and (w5) -> w6, one edge walk'4 -> walk'4 of
 * 0 (calls 5 + 3 = 8); pong'4 (q4) -> p5 0 (calls 3); ping'4 -> pong'4
 * (p4) -> q4 3 and (p5) -> q5 0 (calls 1), one edge of 3 (calls 4).
 * Self: main 1, walk'2 1, walk'4 1 + 2 + 3 = 6, pong'2 1, ping'4 2,
 * pong'4 1.
 * callgrind_annotate --inclusive=yes gives a called function the sum of
 * the calls into it, main (called by none) self + calls: the samples
 * with at least k frames of the name.  main 1 + 7 + 4 = 12; walk 7,
 * walk'2 7, walk'3 6, walk'4 6 + 0 = 6; ping 4, pong 4, ping'2 4, pong'2
 * 4, ping'3 3, pong'3 3, ping'4 3 + 0 = 3, pong'4 3 + 0 = 3.  Once per
 * frame, as before levels, walk alone had 2 + 4 + 10 + 18 = 34 of 12. */
static const char levels_capture[] =
    "HELLO version=1 mode=cpu rate_hz=1000 threshold_bp=0 limit=100 cpu_budget=33554432 "
    "retention_budget=67108864 stack_budget=16777216 backend=\"interpreter_safe_point\" "
    "capabilities=cpu_tick_source,safe_stack_capture,source_spans colour=false\n"
    "SOURCE id=0 origin=project path=\"src/d.jett\" spans=- text=\"fn main() {\\n  walk()\\n  "
    "ping()\\n}\\nfn walk() {\\n  walk()\\n}\\nfn ping() {\\n  pong()\\n}\\nfn pong() "
    "{\\n  ping()\\n}\\n\"\n"
    "FUNC id=0 namespace=\"d\" function=\"main\" source=0 decl=0-32\n"
    "FUNC id=1 namespace=\"d\" function=\"walk\" source=0 decl=32-55\n"
    "FUNC id=2 namespace=\"d\" function=\"ping\" source=0 decl=55-78\n"
    "FUNC id=3 namespace=\"d\" function=\"pong\" source=0 decl=78-101\n"
    "EVENTS\n"
    "  STACK id=0 parent=- func=0 site=-\n"
    "  STACK id=1 parent=0 func=1 site=14-20\n"
    "  STACK id=2 parent=1 func=1 site=46-52\n"
    "  STACK id=3 parent=2 func=1 site=46-52\n"
    "  STACK id=4 parent=3 func=1 site=46-52\n"
    "  STACK id=5 parent=4 func=1 site=46-52\n"
    "  STACK id=6 parent=5 func=1 site=46-52\n"
    "  STACK id=7 parent=0 func=2 site=23-29\n"
    "  STACK id=8 parent=7 func=3 site=69-75\n"
    "  STACK id=9 parent=8 func=2 site=92-98\n"
    "  STACK id=10 parent=9 func=3 site=69-75\n"
    "  STACK id=11 parent=10 func=2 site=92-98\n"
    "  STACK id=12 parent=11 func=3 site=69-75\n"
    "  STACK id=13 parent=12 func=2 site=92-98\n"
    "  STACK id=14 parent=13 func=3 site=69-75\n"
    "  STACK id=15 parent=14 func=2 site=92-98\n"
    "  STACK id=16 parent=15 func=3 site=69-75\n"
    "  CPU_SAMPLE seq=1 tick=1 task=- actor=- thread=0 state=jett stack=0 span=14-20\n"
    "  CPU_SAMPLE seq=2 tick=2 task=- actor=- thread=0 state=jett stack=2 span=46-52\n"
    "  CPU_SAMPLE seq=3 tick=3 task=- actor=- thread=0 state=jett stack=4 span=46-52\n"
    "  CPU_SAMPLE seq=4 tick=4 task=- actor=- thread=0 state=jett stack=5 span=46-52\n"
    "  CPU_SAMPLE seq=5 tick=5 task=- actor=- thread=0 state=jett stack=5 span=46-52\n"
    "  CPU_SAMPLE seq=6 tick=6 task=- actor=- thread=0 state=jett stack=6 span=46-52\n"
    "  CPU_SAMPLE seq=7 tick=7 task=- actor=- thread=0 state=jett stack=6 span=46-52\n"
    "  CPU_SAMPLE seq=8 tick=8 task=- actor=- thread=0 state=jett stack=6 span=46-52\n"
    "  CPU_SAMPLE seq=9 tick=9 task=- actor=- thread=0 state=jett stack=10 span=92-98\n"
    "  CPU_SAMPLE seq=10 tick=10 task=- actor=- thread=0 state=jett stack=15 span=69-75\n"
    "  CPU_SAMPLE seq=11 tick=11 task=- actor=- thread=0 state=jett stack=15 span=69-75\n"
    "  CPU_SAMPLE seq=12 tick=12 task=- actor=- thread=0 state=jett stack=16 span=92-98\n"
    "END\n"
    "FINISH termination=returned wall_ns=12000000 cpu_ns=- requested=12 coalesced=0 "
    "dropped=0 collector_failure=false stack_limit=false\n";

START_TEST(deep_recursion_annotated_by_hand)
{
    char *dir, *cg = export_text(levels_capture, &dir);
    static const struct annotated want[] = {
        {"d.main", 1, 12},  {"d.walk", 0, 7},   {"d.walk'2", 1, 7}, {"d.walk'3", 0, 6},
        {"d.walk'4", 6, 6}, {"d.ping", 0, 4},   {"d.pong", 0, 4},   {"d.ping'2", 0, 4},
        {"d.pong'2", 1, 4}, {"d.ping'3", 0, 3}, {"d.pong'3", 0, 3}, {"d.ping'4", 2, 3},
        {"d.pong'4", 1, 3}};
    expect_annotated(cg, want, sizeof want / sizeof want[0], 12);
    /* the levels call each other, and the last ones form the cycle */
    static const char *const callers[][2] = {
        {"d.walk", "d.main"},     {"d.walk'2", "d.walk"},   {"d.walk'3", "d.walk'2"},
        {"d.walk'4", "d.walk'3"}, {"d.walk'4", "d.walk'4"}, {"d.ping", "d.main"},
        {"d.pong", "d.ping"},     {"d.ping'2", "d.pong"},   {"d.pong'2", "d.ping'2"},
        {"d.ping'4", "d.pong'3"}, {"d.pong'4", "d.ping'4"}, {"d.ping'4", "d.pong'4"}};
    expect_callers(cg, "src/d.jett", callers, sizeof callers / sizeof callers[0]);
    /* our own reader accepts it */
    char *jett = tu_build_path("cli/jett");
    const char *chk[] = {jett, "callgrind", "check", cg, NULL};
    struct tu_output o;
    ck_assert_int_eq(tu_run(chk, NULL, 0, &o), 0);
    ck_assert_msg(o.status == 0, "%s%s", o.out, o.err);
    tu_output_free(&o);
    unlink(cg), rmdir(dir);
    free(cg), free(dir), free(jett);
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
    tcase_add_test(t, annotate_finds_files_from_the_root);
    tcase_add_test(t, calls_exact_where_known);
    tcase_add_test(t, calls_unknown_counts);
    tcase_add_test(t, deep_recursion_annotated_by_hand);
    tcase_add_test(t, every_fixture_reads_back);
    suite_add_tcase(s, t);
    return s;
}
