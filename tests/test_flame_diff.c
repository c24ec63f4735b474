/* Tests of the differential flame graph (daemon/export/flame_diff.c):
 * each frame's fill, read from the SVG, against the direction of the
 * diff's table for the same pair, and the colours, tooltips, heading and
 * legend of pairs computed by hand. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/export/flame_diff.h"
#include "testutil.h"

/* What the SVG says of one frame: its name (the title up to ": "), fill
 * and the tooltip's change. */
struct frame {
    char name[64], fill[32], before[96], after[96], change[160];
};

/* The value of attribute `attr` (`data-change="`) between g and end, or
 * "" when the frame has none. */
static void attr(const char *g, const char *end, const char *key, char *out, size_t n)
{
    const char *at = strstr(g, key);
    out[0] = '\0';
    if (!at || at > end)
        return;
    at += strlen(key);
    snprintf(out, n, "%.*s", (int)strcspn(at, "\""), at);
}

/* The frames of a flame graph, in document order; how many. */
static size_t read_frames(const char *svg, struct frame *out, size_t cap)
{
    size_t n = 0;
    for (const char *g = strstr(svg, "<g class=\"f\""); g && n < cap;
         g = strstr(g + 1, "<g class=\"f\"")) {
        const char *end = strstr(g, "</g>");
        const char *title = strstr(g, "<title>") + 7;
        struct frame *f = &out[n++];
        snprintf(f->name, sizeof f->name, "%.*s", (int)(strstr(title, ": ") - title), title);
        attr(g, end, " fill=\"", f->fill, sizeof f->fill);
        attr(g, end, " data-before=\"", f->before, sizeof f->before);
        attr(g, end, " data-after=\"", f->after, sizeof f->after);
        attr(g, end, " data-change=\"", f->change, sizeof f->change);
    }
    return n;
}

static const struct frame *frame_named(const struct frame *v, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i].name, name) == 0)
            return &v[i];
    ck_abort_msg("no frame %s", name);
    return NULL;
}

enum hue { GREY, RED, BLUE };

/* A fill's hue: grey when r = g = b, else red or blue, whichever of the
 * two is the stronger. */
static enum hue hue_of(const char *fill)
{
    unsigned r, g, b;
    ck_assert_int_eq(sscanf(fill, "rgb(%u,%u,%u)", &r, &g, &b), 3);
    if (r == g && g == b)
        return GREY;
    ck_assert_uint_ne(r, b);
    return r > b ? RED : BLUE;
}

/* `jett profile diff BASE NEW` with one more option (NULL: none) from
 * the built fixtures; its standard output. */
static char *diff_out(const char *base, const char *neu, const char *opt)
{
    char *a = tu_capture_path(base), *b = tu_capture_path(neu);
    struct tu_output o;
    int status = opt && strcmp(opt, "svg") == 0
                     ? tu_run_jett(&o, "profile", "diff", a, b, "--format", "svg", NULL)
                     : tu_run_jett(&o, "profile", "diff", a, b, opt, NULL);
    ck_assert_msg(status == 0, "%s", o.err);
    char *out = o.out;
    o.out = NULL;
    tu_output_free(&o);
    free(a), free(b);
    return out;
}

/* The comma-separated fields of the functions row of `name` (ns.fn) in
 * a diff document (no field of these rows is quoted); how many, 0 when
 * it has no row. */
static int row_fields(const char *doc, const char *name, char fields[][32], int max)
{
    char key[80];
    const char *dot = strrchr(name, '.');
    snprintf(key, sizeof key, "\n    %.*s,%s,", (int)(dot - name), name, dot + 1);
    const char *row = strstr(strstr(doc, "  functions["), key);
    if (!row)
        return 0;
    row += 5;
    int n = 0;
    for (; n < max; n++) {
        size_t len = strcspn(row, ",\n");
        snprintf(fields[n], 32, "%.*s", (int)len, row);
        row += len;
        if (*row != ',')
            return n + 1;
        row++;
    }
    return n;
}

/* Which colour the table's row asks for.  CPU: significant self samples
 * (field 12) red when they grew, blue when they shrank (field 13, the
 * direction), else grey; at equal rates the direction is the sign of
 * the delta (field 9).  Memory: the sign of the allocated bytes' delta
 * (field 9), grey when 0 or not comparable, and for a caller without
 * a row (it allocated nothing itself on either side). */
static enum hue table_hue(const char *doc, const char *name, bool cpu, bool equal_rates)
{
    char f[32][32];
    int n = row_fields(doc, name, f, 32);
    if (n == 0 && !cpu)
        return GREY;
    ck_assert_msg(n >= (cpu ? 24 : 18), "%s: %d fields", name, n);
    if (strcmp(f[6], "not_comparable") == 0)
        return GREY;
    long delta = strtol(f[9], NULL, 10);
    if (!cpu)
        return delta > 0 ? RED : delta < 0 ? BLUE : GREY;
    if (equal_rates)
        ck_assert_str_eq(f[13], delta > 0 ? "grew" : delta < 0 ? "shrank" : "none");
    if (strcmp(f[12], "significant") != 0)
        return GREY;
    return strcmp(f[13], "grew") == 0 ? RED : BLUE;
}

/* The SVG is well-formed XML with the geometry of a flame graph
 * (tests/flame_check.py): "ok N" for its N frames. */
static void check_svg(const char *svg, size_t frames)
{
    char *script = tu_source_path("tests/flame_check.py"), want[32];
    const char *argv[] = {"/usr/bin/env", "python3", script, NULL};
    struct tu_output o;
    ck_assert_int_eq(tu_run(argv, svg, strlen(svg), &o), 0);
    snprintf(want, sizeof want, "ok %zu\n", frames);
    ck_assert_msg(o.status == 0 && strcmp(o.out, want) == 0, "flame_check: %d %s%s", o.status,
                  o.out, o.err);
    tu_output_free(&o);
    free(script);
}

/* Every frame of the pair's differential SVG against its table: the
 * frame's hue is the row's, and its tooltip's change starts with the
 * same direction ("grew", "shrank") or with neither when grey.  Returns
 * the frames read (the root, all, is grey and has no row). */
static size_t check_agreement(const char *base, const char *neu, bool cpu, bool equal_rates,
                              struct frame *v, size_t cap)
{
    char *svg = diff_out(base, neu, "svg"), *doc = diff_out(base, neu, "--agent");
    size_t n = read_frames(svg, v, cap);
    ck_assert_uint_gt(n, 1);
    check_svg(svg, n);
    for (size_t i = 0; i < n; i++) {
        enum hue h = hue_of(v[i].fill);
        if (strcmp(v[i].name, "all") == 0) {
            ck_assert_int_eq(h, GREY);
            continue;
        }
        enum hue want = table_hue(doc, v[i].name, cpu, equal_rates);
        ck_assert_msg(h == want, "%s: %s, the table says %d", v[i].name, v[i].fill, want);
        bool grew = strncmp(v[i].change, "grew", 4) == 0;
        bool shrank = strncmp(v[i].change, "shrank", 6) == 0;
        ck_assert_msg(grew == (h == RED) && shrank == (h == BLUE), "%s: %s", v[i].name,
                      v[i].change);
    }
    free(svg), free(doc);
    return n;
}

/* The case of the issue: diff-grow, slow twice as slow (40 -> 80 self
 * samples) while grow grew far more (20 -> 300) and same stayed (60):
 * slow's share of the profile falls from 40/120 = 33.33% to 80/440 =
 * 18.18% (-15.15 points) although its count doubled, so a graph coloured
 * by share drew it blue.  By counts it is red, at t = 40 / 280 = 1/7 of
 * grow's change: (250 - 35/7, 215 - 175/7, ...) = rgb(245,190,190).
 * 40 vs 80 at equal rates: p = 2 P(X >= 80 | n = 120, 1/2) = 0.00033040
 * (tests/reference/binomial_p.py), shown to four decimals. */
START_TEST(cpu_colours_follow_counts)
{
    struct frame v[16];
    size_t n = check_agreement("diff-grow-base", "diff-grow-new", true, true, v, 16);
    ck_assert_uint_eq(n, 5);
    const struct frame *slow = frame_named(v, n, "grow.slow");
    ck_assert_str_eq(slow->fill, "rgb(245,190,190)");
    ck_assert_str_eq(slow->before, "40 self samples");
    ck_assert_str_eq(slow->after, "80 self samples");
    ck_assert_str_eq(slow->change, "grew: +40 self samples, x2.0000; significant (p = 0.0003)");
    ck_assert_str_eq(frame_named(v, n, "grow.grow")->fill, "rgb(215,40,40)");
    ck_assert_str_eq(frame_named(v, n, "grow.same")->fill, FLAME_DIFF_NEUTRAL);
    ck_assert_str_eq(frame_named(v, n, "grow.same")->change, "no change");
    /* main: 0 self samples on both sides, though its inclusive samples
     * grew: grey */
    ck_assert_str_eq(frame_named(v, n, "grow.main")->fill, FLAME_DIFF_NEUTRAL);
    ck_assert_str_eq(frame_named(v, n, "grow.main")->change, "no change");
    char *doc = diff_out("diff-grow-base", "diff-grow-new", "--agent");
    char f[32][32];
    row_fields(doc, "grow.slow", f, 32);
    ck_assert_str_eq(f[23], "-15.15"); /* the share fell */
    free(doc);
    /* diff-speed: slow 40 -> 80, fast 80 -> 40, same 60 -> 60; the two
     * changes are equally large, so both at full intensity */
    n = check_agreement("diff-speed-base", "diff-speed-new", true, true, v, 16);
    ck_assert_uint_eq(n, 5);
    ck_assert_str_eq(frame_named(v, n, "speed.slow")->fill, "rgb(215,40,40)");
    ck_assert_str_eq(frame_named(v, n, "speed.fast")->fill, "rgb(40,70,215)");
    ck_assert_str_eq(frame_named(v, n, "speed.fast")->change,
                     "shrank: -40 self samples, x0.5000; significant (p = 0.0003)");
    ck_assert_str_eq(frame_named(v, n, "speed.same")->fill, FLAME_DIFF_NEUTRAL);
    /* and the pairs of test_diff.c */
    check_agreement("diff-opt-base", "diff-opt-new", true, true, v, 16);
    check_agreement("diff-base", "diff-new", true, true, v, 16);
}
END_TEST

/* diff-heap: keep doubled, 3000000 -> 6000000 bytes, while other grew
 * tenfold (1000000 -> 10000000), so keep's share fell from 46.15% to
 * 34.29%; shrink halved (2000000 -> 1000000); same stayed (500000).  The
 * largest change is other's 9000000: keep t = 1/3, red (250 - 35/3,
 * 215 - 175/3, ...) = (238.33, 156.67, 156.67) -> rgb(238,157,157);
 * shrink t = 1/9, blue (215 - 175/9, 215 - 145/9, 250 - 35/9) = (195.56,
 * 198.89, 246.11) -> rgb(196,199,246). */
START_TEST(memory_colours_follow_counts)
{
    struct frame v[16];
    size_t n = check_agreement("diff-heap-base", "diff-heap-new", false, true, v, 16);
    ck_assert_uint_eq(n, 6); /* all, main and its four callees */
    const struct frame *keep = frame_named(v, n, "heap.keep");
    ck_assert_str_eq(keep->fill, "rgb(238,157,157)");
    ck_assert_str_eq(keep->before, "3000000 bytes allocated");
    ck_assert_str_eq(keep->after, "6000000 bytes allocated");
    ck_assert_str_eq(keep->change, "grew: +3000000 bytes, x2.0000");
    ck_assert_str_eq(frame_named(v, n, "heap.other")->fill, "rgb(215,40,40)");
    ck_assert_str_eq(frame_named(v, n, "heap.other")->change, "grew: +9000000 bytes, x10.0000");
    ck_assert_str_eq(frame_named(v, n, "heap.shrink")->fill, "rgb(196,199,246)");
    ck_assert_str_eq(frame_named(v, n, "heap.shrink")->change, "shrank: -1000000 bytes, x0.5000");
    ck_assert_str_eq(frame_named(v, n, "heap.same")->fill, FLAME_DIFF_NEUTRAL);
    ck_assert_str_eq(frame_named(v, n, "heap.same")->change, "no change");
    ck_assert_str_eq(frame_named(v, n, "heap.main")->change,
                     "no change: no bytes of its own on either side");
    check_agreement("diff-mem-base", "diff-mem-new", false, true, v, 16);
}
END_TEST

/* diff-rate: BASE at 1000 Hz, NEW at 500 Hz.  g 100 -> 100 self samples
 * is twice the time (the table: delta 0, significant, grew): red, the
 * only coloured change; its ratio at equal rates 100 x 1000 / (100 x
 * 500) = 2.  f 100 -> 50 is the same time: no change, grey; main 0 -> 0:
 * no change. */
START_TEST(rate_colours_follow_the_test)
{
    struct frame v[16];
    size_t n = check_agreement("diff-rate-base", "diff-rate-new", true, false, v, 16);
    const struct frame *g = frame_named(v, n, "rate.g");
    ck_assert_str_eq(g->fill, "rgb(215,40,40)");
    ck_assert_str_eq(g->change, "grew: +0 self samples at 1000 -> 500 Hz, x2.0000 at equal rates; "
                                "significant (p &lt; 0.0001)");
    ck_assert_str_eq(frame_named(v, n, "rate.f")->fill, FLAME_DIFF_NEUTRAL);
    ck_assert_str_eq(frame_named(v, n, "rate.f")->change, "no change");
    ck_assert_str_eq(frame_named(v, n, "rate.main")->change, "no change");
}
END_TEST

/* The heading gives both sides' status and the legend what the colours
 * mean; a partial side's functions that are not comparable are grey and
 * say why (diff-part: BASE lacks g, which ran after its CPU budget was
 * spent). */
START_TEST(heading_legend_and_partial_sides)
{
    char *svg = diff_out("diff-speed-base", "diff-speed-new", "svg");
    ck_assert_ptr_nonnull(strstr(svg, ">status: BASE complete, NEW complete<"));
    ck_assert_ptr_nonnull(strstr(svg, ">red</tspan>: more self samples than in BASE, "));
    ck_assert_ptr_nonnull(strstr(svg, ">blue</tspan>: fewer, beyond sampling noise (p &lt; 0.01; "
                                      "counts at the rates' ratio); the stronger, the larger the "
                                      "change<"));
    ck_assert_ptr_nonnull(strstr(svg, ">grey</tspan>: no change, within noise, or not comparable "
                                      "(a side is partial)<"));
    free(svg);
    svg = diff_out("diff-heap-base", "diff-heap-new", "svg");
    ck_assert_ptr_nonnull(strstr(svg, ">red</tspan>: more bytes allocated than in BASE, "));
    free(svg);
    struct frame v[16];
    svg = diff_out("diff-part-base", "diff-part-new", "svg");
    ck_assert_ptr_nonnull(strstr(svg, ">status: BASE partial (cpu_metadata_limit), NEW complete<"));
    size_t n = read_frames(svg, v, 16);
    const struct frame *g = frame_named(v, n, "part.g");
    ck_assert_str_eq(g->fill, FLAME_DIFF_NEUTRAL);
    ck_assert_str_eq(g->before, "unavailable (BASE is partial)");
    ck_assert_str_eq(g->after, "6 self samples");
    ck_assert_str_eq(g->change, "not comparable: BASE is partial (cpu_metadata_limit)");
    ck_assert_str_eq(frame_named(v, n, "part.f")->change, "no change");
    free(svg);
    /* NEW partial: its graph draws g from its stacks, but its functions
     * lack g */
    svg = diff_out("diff-part-new", "diff-part-base", "svg");
    ck_assert_ptr_nonnull(strstr(svg, ">status: BASE complete, NEW partial (cpu_metadata_limit)<"));
    n = read_frames(svg, v, 16);
    g = frame_named(v, n, "part.g");
    ck_assert_str_eq(g->fill, FLAME_DIFF_NEUTRAL);
    ck_assert_str_eq(g->change, "not comparable: NEW is partial (cpu_metadata_limit)");
    free(svg);
    svg = diff_out("mem-buckets-full", "diff-mem-part-new", "svg");
    n = read_frames(svg, v, 16);
    ck_assert_str_eq(frame_named(v, n, "app.main")->change,
                     "not comparable: BASE is partial (retention_metadata_limit)");
    ck_assert_str_eq(frame_named(v, n, "app.make")->fill, "rgb(215,40,40)");
    ck_assert_str_eq(frame_named(v, n, "app.make")->change, "grew: +170 bytes, x2.0000");
    free(svg);
}
END_TEST

/* Packs capture text into tu_dir/NAME; the capture's path. */
static char *pack(const char *name, const char *text)
{
    char txt[300];
    snprintf(txt, sizeof txt, "%s.txt", name);
    char *src = tu_program(txt, text), *cap = tu_tmp_path(name);
    struct tu_output o;
    ck_assert_int_eq(tu_run_jett(&o, "profile", "pack", src, "-o", cap, NULL), 0);
    ck_assert_msg(o.status == 0, "%s", o.err);
    tu_output_free(&o);
    free(src);
    return cap;
}

#define MEM_HEAD                                                                                   \
    "HELLO version=1 mode=memory rate_hz=0 threshold_bp=500 limit=10 cpu_budget=33554432 "         \
    "retention_budget=67108864 stack_budget=16777216 backend=\"interpreter_alloc_hooks\" "         \
    "capabilities=source_spans,jett_heap_allocation_hooks,free_and_resize_events colour=false\n"   \
    "SOURCE id=0 origin=project path=\"src/c.jett\" spans=- text=\"fn main() {}\\nfn f() "         \
    "{}\\nfn g() {}\\n\"\n"                                                                        \
    "FUNC id=0 namespace=\"c\" function=\"main\" source=0 decl=0-12\n"                             \
    "FUNC id=1 namespace=\"c\" function=\"f\" source=0 decl=13-22\n"                               \
    "FUNC id=2 namespace=\"c\" function=\"g\" source=0 decl=23-32\n"                               \
    "STACK id=0 parent=- func=0 site=-\n"                                                          \
    "STACK id=1 parent=0 func=1 site=-\n"
#define MEM_TAIL                                                                                   \
    "FINISH termination=returned wall_ns=1000000 cpu_ns=1000000 requested=0 coalesced=0 "          \
    "dropped=0 collector_failure=false stack_limit=false\n"

/* Memory: in BASE f allocates 100 bytes; in NEW f only calls g, which
 * allocates them.  NEW draws f as a caller, with no bytes of its own:
 * the diff's row of f is "disappeared" (-100), so f is blue, at full
 * intensity (the largest change, as g's +100); main allocated nothing
 * on either side and has no row: grey. */
START_TEST(memory_caller_that_stopped_allocating)
{
    char *base = pack("base.jcap", MEM_HEAD "ALLOC seq=1 op=allocate id=1 old=- new=100 task=- "
                                            "actor=- thread=0 stack=1 span=-\n" MEM_TAIL);
    char *neu = pack("new.jcap", MEM_HEAD "STACK id=2 parent=1 func=2 site=-\n"
                                          "ALLOC seq=1 op=allocate id=1 old=- new=100 task=- "
                                          "actor=- thread=0 stack=2 span=-\n" MEM_TAIL);
    struct tu_output o;
    ck_assert_int_eq(tu_run_jett(&o, "profile", "diff", base, neu, "--agent", NULL), 0);
    ck_assert_ptr_nonnull(strstr(o.out, "\n    c,f,project,src/c.jett,2,unavailable,disappeared,"
                                        "100,0,-100,0,"));
    tu_output_free(&o);
    ck_assert_int_eq(tu_run_jett(&o, "profile", "diff", base, neu, "--format", "svg", NULL), 0);
    struct frame v[8];
    size_t n = read_frames(o.out, v, 8);
    const struct frame *f = frame_named(v, n, "c.f");
    ck_assert_str_eq(f->fill, "rgb(40,70,215)");
    ck_assert_str_eq(f->after, "0 bytes allocated (not in NEW)");
    ck_assert_str_eq(f->change, "shrank: -100 bytes, x0.0000");
    ck_assert_str_eq(frame_named(v, n, "c.g")->fill, "rgb(215,40,40)");
    ck_assert_str_eq(frame_named(v, n, "c.g")->change, "grew (appeared): +100 bytes");
    ck_assert_str_eq(frame_named(v, n, "c.main")->fill, FLAME_DIFF_NEUTRAL);
    tu_output_free(&o);
    free(base), free(neu);
}
END_TEST

Suite *flame_diff_suite(void)
{
    Suite *s = suite_create("flame_diff");
    TCase *t = tcase_create("flame_diff");
    tcase_add_checked_fixture(t, tu_e2e_setup, tu_e2e_teardown);
    tcase_add_test(t, cpu_colours_follow_counts);
    tcase_add_test(t, memory_colours_follow_counts);
    tcase_add_test(t, rate_colours_follow_the_test);
    tcase_add_test(t, heading_legend_and_partial_sides);
    tcase_add_test(t, memory_caller_that_stopped_allocating);
    suite_add_tcase(s, t);
    return s;
}
