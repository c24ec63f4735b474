/* Tests of proto/flame: the SVG of each fixture capture parses as XML and
 * keeps its geometry (checked by tests/flame_check.py), and the numbers,
 * escapes and labels that matter are pinned by hand. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/captext.h"
#include "daemon/export/flame.h"
#include "daemon/export/flame_assets.h"
#include "testutil.h"

#define CPU_HELLO                                                                                  \
    "HELLO version=1 mode=cpu rate_hz=1000 threshold_bp=500 limit=10 cpu_budget=33554432 "         \
    "retention_budget=67108864 stack_budget=16777216 backend=\"interpreter_safe_point\" "          \
    "capabilities=cpu_tick_source colour=false\n"
#define FINISH                                                                                     \
    "FINISH termination=returned wall_ns=1 cpu_ns=1 requested=0 coalesced=0 dropped=0 "            \
    "collector_failure=false stack_limit=false\n"

static char *svg_of_bytes(const void *data, size_t len, enum fold_weight w)
{
    struct capture_reader *r = capture_reader_mem(data, len);
    struct fold *f = NULL;
    char err[400];
    ck_assert_msg(fold_read(r, w, FOLD_NAMES_EXACT, &f, err, sizeof err) == FOLD_OK, "fold: %s",
                  err);
    capture_reader_free(r);
    char *buf = NULL;
    size_t n = 0;
    FILE *m = open_memstream(&buf, &n);
    ck_assert_int_eq(flame_write_svg(f, m), 0);
    fclose(m);
    fold_free(f);
    return buf;
}

static char *svg_of(const char *fixture, enum fold_weight w)
{
    char *path = tu_capture_path(fixture);
    size_t len;
    char *data = tu_read_file(path, &len);
    ck_assert_msg(data != NULL, "cannot read %s", path);
    char *svg = svg_of_bytes(data, len, w);
    free(data), free(path);
    return svg;
}

static char *svg_of_text(const char *text)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    char err[320];
    ck_assert_msg(captext_pack(text, strlen(text), &sb, err, sizeof err) == 0, "%s", err);
    char *svg = svg_of_bytes(sb.data, sb.size, FOLD_WEIGHT_DEFAULT);
    msgpack_sbuffer_destroy(&sb);
    return svg;
}

/* The SVG of a capture's text with its last frame, FINISH, cut off
 * (frames are a 4-byte big-endian length and the payload, after the
 * 8-byte magic). */
static char *svg_without_finish(const char *text)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    char err[320];
    ck_assert_msg(captext_pack(text, strlen(text), &sb, err, sizeof err) == 0, "%s", err);
    const unsigned char *p = (const unsigned char *)sb.data;
    size_t at = 8, last = at;
    while (at < sb.size) {
        last = at;
        at += 4 +
              ((size_t)p[at] << 24 | (size_t)p[at + 1] << 16 | (size_t)p[at + 2] << 8 | p[at + 3]);
    }
    char *svg = svg_of_bytes(sb.data, last, FOLD_WEIGHT_DEFAULT);
    msgpack_sbuffer_destroy(&sb);
    return svg;
}

/* Runs tests/flame_check.py on the SVG; asserts it prints `want`. */
static void check_svg(const char *svg, const char *want)
{
    char *script = tu_source_path("tests/flame_check.py");
    const char *argv[] = {"/usr/bin/env", "python3", script, NULL};
    struct tu_output o;
    ck_assert_int_eq(tu_run(argv, svg, strlen(svg), &o), 0);
    ck_assert_msg(o.status == 0 && strcmp(o.out, want) == 0, "flame_check: %d %s%s", o.status,
                  o.out, o.err);
    tu_output_free(&o);
    free(script);
}

static void has(const char *svg, const char *needle)
{
    ck_assert_msg(strstr(svg, needle) != NULL, "missing: %s", needle);
}

/* The only script is the built-in one, byte for byte, after the frames:
 * nothing of the capture is ever script code. */
static void script_is_builtin(const char *svg)
{
    const char *open = "<script type=\"text/javascript\"><![CDATA[\n";
    const char *at = strstr(svg, "<script");
    ck_assert_ptr_nonnull(at);
    ck_assert_ptr_null(strstr(at + 1, "<script"));
    ck_assert_int_eq(strncmp(at, open, strlen(open)), 0);
    at += strlen(open);
    ck_assert_int_eq(strncmp(at, flame_script, strlen(flame_script)), 0);
    ck_assert_str_eq(at + strlen(flame_script), "]]></script>\n</svg>\n");
    ck_assert_ptr_nonnull(strstr(svg, "<style><![CDATA[\n"));
}

/* tiny-cpu: all 3, app.main 3, app.work 2 = 2/3 of 1180 px = 786.67 px,
 * 66.67%.  1 of its 4 requested ticks was coalesced (25.00%, at least
 * 5%): a legend line says so, under "drawn" (y 74 + 16 = 90), and the
 * frames start 16 px lower.  Depths 0..2: work at the top (y 88 + 16 =
 * 104), main 121, root 138; height 104 + 3 * 17 + 24 = 179. */
START_TEST(tiny_cpu_geometry)
{
    char *svg = svg_of("tiny-cpu", FOLD_WEIGHT_DEFAULT);
    check_svg(svg, "ok 3\n");
    has(svg, "width=\"1200\" height=\"179\"");
    has(svg, "<title>all: 3 samples (100.00%)</title><rect x=\"10.00\" y=\"138\" "
             "width=\"1180.00\"");
    has(svg, "<title>app.main: 3 samples (100.00%)</title><rect x=\"10.00\" y=\"121\" "
             "width=\"1180.00\"");
    has(svg, "<title>app.work: 2 samples (66.67%)</title><rect x=\"10.00\" y=\"104\" "
             "width=\"786.67\"");
    has(svg, ">status: complete<");
    has(svg, ">samples: 3 recorded, 3 jett, 0 runtime, 0 waiting, 0 unavailable; ticks: 4 "
             "requested, 1 coalesced, 0 dropped<");
    has(svg, "<text class=\"h lg\" x=\"10\" y=\"90\">not drawn: 1 of 4 requested ticks "
             "(25.00%) have no stack, 1 coalesced and 0 dropped; the report counts the coalesced "
             "ones as running Jett code</text>");
    script_is_builtin(svg);
    free(svg);
}
END_TEST

/* The ticks without a stack are noted from 5% of the requested ticks
 * on: 1 coalesced of 21 (4.76%; 20 samples) is not, 1 of 20 (5.00%; 19
 * samples) is; without FINISH they are unknown, and not noted. */
START_TEST(ticks_noted_from_five_percent)
{
    char text[8192];
    for (int requested = 20; requested <= 22; requested++) {
        size_t len = (size_t)snprintf(text, sizeof text,
                                      CPU_HELLO "FUNC id=0 namespace=\"m\" function=\"main\" "
                                                "source=- decl=-\nSTACK id=0 parent=- func=0 "
                                                "site=-\n");
        for (int i = 1; i < requested; i++)
            len += (size_t)snprintf(text + len, sizeof text - len,
                                    "CPU_SAMPLE seq=%d tick=%d task=- actor=- thread=0 "
                                    "state=jett stack=0 span=-\n",
                                    i, i);
        snprintf(text + len, sizeof text - len,
                 "FINISH termination=returned wall_ns=1 cpu_ns=1 requested=%d coalesced=1 "
                 "dropped=0 collector_failure=false stack_limit=false\n",
                 requested);
        char *svg = requested <= 21 ? svg_of_text(text) : svg_without_finish(text);
        char want[200];
        if (requested <= 21)
            snprintf(want, sizeof want,
                     ">samples: %d recorded, %d jett, 0 runtime, 0 waiting, 0 unavailable; "
                     "ticks: %d requested, 1 coalesced, 0 dropped<",
                     requested - 1, requested - 1, requested);
        else
            snprintf(want, sizeof want,
                     ">samples: 21 recorded, 21 jett, 0 runtime, 0 waiting, 0 unavailable; "
                     "coalesced and dropped ticks: unknown (no FINISH)<");
        has(svg, want);
        ck_assert_int_eq(strstr(svg, ">not drawn: 1 of 20 requested ticks (5.00%) have no stack, "
                                     "1 coalesced and 0 dropped; the report counts the coalesced "
                                     "ones as running Jett code</text>") != NULL,
                         requested == 20);
        ck_assert_int_eq(strstr(svg, "not drawn") != NULL, requested == 20);
        free(svg);
    }
}
END_TEST

/* --weight wall on cpu-calls: every one of its 30 requested ticks, the
 * unit of the frames.  At the root by name: <runtime>.<coalesced> 2,
 * <runtime>.<dropped> 1, <runtime>.<runtime> 1, <runtime>.<waiting> 1
 * (the waiting sample without a stack), idx.main 25 from tick 5; main's
 * children by name: add 2, docs 1, pick 1, rank 6 (by 4), retry 8 (wait
 * 8, its <runtime>.<waiting> 8), skip 1, wait 5 (<runtime>.<waiting>
 * 5): 17 frames with the root.  retry starts after 5 + 2 + 1 + 1 + 6 =
 * 15 ticks: x = 10 + 1180 * 15 / 30 = 600; its waiting frame, 4 deep,
 * the top (y 88 + 3 legend lines of 16 = 136), 1180 * 8 / 30 = 314.67
 * px, 26.67%; main's wait after 24: x = 954.00, width 196.67, 3 deep (y
 * 136 + 17 = 153).  The coalesced frame, 1 deep (y 136 + 3 * 17 = 187),
 * at x 10, 78.67 px, 6.67%.  The waiting frames are blue, the coalesced
 * one beige, the runtime and dropped ones grey, each says what it is,
 * and the heading's legend, under "drawn" (y 74), says what the colours
 * mean. */
START_TEST(wall_waiting_frames_blue)
{
    char *svg = svg_of("cpu-calls", FOLD_WEIGHT_WALL);
    check_svg(svg, "ok 17\n");
    has(svg, ">CPU flame graph: wall time (every requested tick)<");
    has(svg, ">drawn: 30 of 30 ticks (every sample and the coalesced and dropped ticks)<");
    has(svg, "<text class=\"h lg\" x=\"10\" y=\"90\">blue frames: &lt;runtime&gt;.&lt;"
             "waiting&gt;, the program was waiting (at the root: without a stack)</text>");
    has(svg, "<text class=\"h lg\" x=\"10\" y=\"106\">beige frame: &lt;runtime&gt;.&lt;"
             "coalesced&gt;, ticks that found Jett code running and took no stack</text>");
    has(svg, "<text class=\"h lg\" x=\"10\" y=\"122\">grey frames: &lt;runtime&gt;.&lt;"
             "runtime&gt; (the interpreter), &lt;runtime&gt;.&lt;unavailable&gt; (no stack "
             "kept), &lt;runtime&gt;.&lt;dropped&gt; (state unknown)</text>");
    has(svg, "<g class=\"f\" data-o=\"waiting: blocked, not running\"><title>&lt;runtime&gt;.&lt;"
             "waiting&gt;: 8 ticks (26.67%)</title><rect x=\"600.00\" y=\"136\" "
             "width=\"314.67\" height=\"16\" rx=\"2\" fill=\"rgb(140,180,235)\"/>");
    has(svg, "<title>&lt;runtime&gt;.&lt;waiting&gt;: 5 ticks (16.67%)</title><rect "
             "x=\"954.00\" y=\"153\" width=\"196.67\" height=\"16\" rx=\"2\" "
             "fill=\"rgb(140,180,235)\"/>");
    has(svg, "<g class=\"f\" data-o=\"coalesced ticks: running Jett code, no stack taken\">"
             "<title>&lt;runtime&gt;.&lt;coalesced&gt;: 2 ticks (6.67%)</title><rect x=\"10.00\" "
             "y=\"187\" width=\"78.67\" height=\"16\" rx=\"2\" fill=\"rgb(236,214,170)\"/>");
    has(svg, "<g class=\"f\" data-o=\"dropped ticks: state unknown\"><title>&lt;runtime&gt;.&lt;"
             "dropped&gt;: 1 tick (3.33%)</title><rect x=\"88.67\" y=\"187\" width=\"39.33\" "
             "height=\"16\" rx=\"2\" fill=\"rgb(190,190,190)\"/>");
    has(svg, "<g class=\"f\" data-o=\"runtime samples: the interpreter, no Jett frame\"><title>"
             "&lt;runtime&gt;.&lt;runtime&gt;: 1 tick (3.33%)</title><rect x=\"128.00\" "
             "y=\"187\" width=\"39.33\" height=\"16\" rx=\"2\" fill=\"rgb(190,190,190)\"/>");
    has(svg, "<g class=\"f\" data-o=\"waiting: blocked, not running\"><title>&lt;runtime&gt;.&lt;"
             "waiting&gt;: 1 tick (3.33%)</title><rect x=\"167.33\" y=\"187\" "
             "width=\"39.33\" height=\"16\" rx=\"2\" fill=\"rgb(140,180,235)\"/>");
    /* running frames keep their warm colours */
    const char *retry = strstr(svg, "<title>idx.retry: 8 ticks (26.67%)</title>");
    ck_assert_ptr_nonnull(retry);
    const char *fill = strstr(retry, "fill=\"");
    ck_assert_ptr_nonnull(fill);
    ck_assert_int_ne(strncmp(fill, "fill=\"rgb(140,180,235)\"", 23), 0);
    script_is_builtin(svg);
    free(svg);
    /* the default weight draws no waiting frame and no legend of them */
    svg = svg_of("cpu-calls", FOLD_WEIGHT_DEFAULT);
    ck_assert_ptr_null(strstr(svg, "waiting&gt;"));
    ck_assert_ptr_null(strstr(svg, "blue frames"));
    free(svg);
}
END_TEST

/* hostile-names, 9 jett samples.  main's children by name: app.work 3
 * (2 + its child 1), ctl 1, evil 3, 日本 1.  evil starts after 3 + 1 = 4
 * samples: x = 10 + 1180 * 4 / 9 = 534.44, width 1180 * 3 / 9 = 393.33,
 * 33.33%; its child q"uote.a&b;c has 2: width 262.22, 22.22%.  The long
 * name's frame is 1180 / 9 = 131.11 px: (131.11 - 6) / 7.3 = 17 characters,
 * so an ellipsis and the name's last 16. */
START_TEST(hostile_names_escaped)
{
    char *svg = svg_of("hostile-names", FOLD_WEIGHT_DEFAULT);
    check_svg(svg, "ok 8\n");
    has(svg, "<title>evil.&lt;script&gt;alert(&apos;x&apos;)&lt;/script&gt;: 3 samples "
             "(33.33%)</title><rect x=\"534.44\" y=\"105\" width=\"393.33\"");
    has(svg, "<title>q&quot;uote.a&amp;b;c: 2 samples (22.22%)</title><rect x=\"534.44\" "
             "y=\"88\" width=\"262.22\"");
    has(svg, "<title>ctl.tab\\x09here\\x01\\x7fend: 1 sample (11.11%)</title>");
    has(svg, "<title>app.work: 3 samples (33.33%)</title>");
    has(svg, ">\xe2\x80\xa6n_a_narrow_frame</text>");
    ck_assert_ptr_null(strstr(svg, "app.a_very_long.."));
    has(svg, "<title>\xe6\x97\xa5\xe6\x9c\xac.\xe9\x96\xa2\xe6\x95\xb0: 1 sample (11.11%)</title>");
    has(svg, ">status: partial (stack_capture_limit)<");
    has(svg, ">samples: 11 recorded, 9 jett, 1 runtime, 1 waiting, 0 unavailable; ticks: 11 "
             "requested, 0 coalesced, 0 dropped<");
    has(svg, ">drawn: 9 of 11 samples (the jett samples)<");
    script_is_builtin(svg);
    ck_assert_ptr_null(strstr(svg, "'x'"));
    ck_assert_ptr_null(strchr(svg, '\x01'));
    ck_assert_ptr_null(strchr(svg, '\x7f'));
    ck_assert_ptr_null(strchr(svg, '\t'));
    free(svg);
}
END_TEST

/* Memory weights: tiny-memory's live-at-peak frames are <init> 128 and
 * main 168 of 296 (43.24% and 56.76%); allocated has main;put 64 too. */
START_TEST(memory_weights)
{
    char *svg = svg_of("tiny-memory", FOLD_WEIGHT_LIVE_AT_PEAK);
    check_svg(svg, "ok 3\n");
    has(svg, ">Memory flame graph: bytes live at peak<");
    has(svg, "<title>cache.&lt;init&gt;: 128 bytes (43.24%)</title>");
    has(svg, "<title>cache.main: 168 bytes (56.76%)</title>");
    has(svg, ">drawn: 296 of 296 bytes (events with a Jett stack)<");
    has(svg, ">allocations: 4, resizes: 2, allocated: 296 bytes, freed: 31 bytes, peak live: 296 "
             "bytes, retained: 265 bytes<");
    free(svg);
    svg = svg_of("tiny-memory", FOLD_WEIGHT_ALLOCATED);
    check_svg(svg, "ok 4\n");
    has(svg, "<title>cache.put: 64 bytes (21.62%)</title>");
    free(svg);
    svg = svg_of("tiny-memory", FOLD_WEIGHT_COUNT);
    check_svg(svg, "ok 3\n");
    has(svg, "<title>cache.main: 3 allocations (75.00%)</title>");
    has(svg, "<title>cache.&lt;init&gt;: 1 allocation (25.00%)</title>");
    free(svg);
}
END_TEST

/* every-record: one jett sample, three frames deep; collector_failure. */
START_TEST(every_record_partial)
{
    char *svg = svg_of("every-record", FOLD_WEIGHT_DEFAULT);
    check_svg(svg, "ok 4\n");
    has(svg, ">status: partial (collector_failure)<");
    has(svg, "<title>textkit.split &quot;quoted&quot;, with: colon: 1 sample (100.00%)</title>");
    free(svg);
}
END_TEST

START_TEST(same_input_same_bytes)
{
    char *a = svg_of("hostile-names", FOLD_WEIGHT_DEFAULT);
    char *b = svg_of("hostile-names", FOLD_WEIGHT_DEFAULT);
    ck_assert_str_eq(a, b);
    free(a), free(b);
}
END_TEST

START_TEST(empty_profile_is_valid)
{
    char *svg = svg_of_text(CPU_HELLO "CPU_SAMPLE seq=1 tick=1 task=- actor=- thread=0 "
                                      "state=runtime stack=- span=-\n" FINISH);
    check_svg(svg, "ok 0\n");
    has(svg, ">no samples</text>");
    has(svg, "height=\"160\"");
    has(svg, ">samples: 1 recorded, 0 jett, 1 runtime, 0 waiting, 0 unavailable; ticks: 0 "
             "requested, 0 coalesced, 0 dropped<");
    free(svg);
}
END_TEST

/* A frame of 1 sample among 11801 is 1180 / 11801 = 0.09999 px: not
 * drawn, its sample stays in main's width.  Among 11001 it is 0.107 px. */
static char *narrow(int main_samples)
{
    size_t cap = 1u << 21, len = 0;
    char *text = malloc(cap);
    len += (size_t)snprintf(text + len, cap - len, "%s",
                            CPU_HELLO "FUNC id=0 namespace=\"m\" function=\"main\" source=- "
                                      "decl=-\nFUNC id=1 namespace=\"m\" function=\"tiny\" "
                                      "source=- decl=-\nSTACK id=0 parent=- func=0 site=-\n"
                                      "STACK id=1 parent=0 func=1 site=-\n");
    for (int i = 1; i <= main_samples + 1; i++)
        len += (size_t)snprintf(text + len, cap - len,
                                "CPU_SAMPLE seq=%d tick=%d task=- actor=- thread=0 state=jett "
                                "stack=%d span=-\n",
                                i, i, i == 1 ? 1 : 0);
    snprintf(text + len, cap - len, "%s", FINISH);
    char *svg = svg_of_text(text);
    free(text);
    return svg;
}

START_TEST(narrow_frames_merge_into_parent)
{
    char *svg = narrow(11800);
    check_svg(svg, "ok 2\n");
    has(svg, "<title>m.main: 11801 samples (100.00%)</title><rect x=\"10.00\" y=\"105\" "
             "width=\"1180.00\"");
    ck_assert_ptr_null(strstr(svg, "m.tiny"));
    free(svg);
    svg = narrow(11000);
    check_svg(svg, "ok 3\n");
    has(svg, "<title>m.tiny: 1 sample (0.01%)</title><rect x=\"10.00\" y=\"88\" width=\"0.11\"");
    free(svg);
}
END_TEST

/* main with 1980 samples of its own and 20 callees of one sample each:
 * each is 1180 / 2000 = 0.59 px, so the run of 20 is one frame of 20
 * samples, 11.80 px, 1.00%, at main's left edge; with c10 of 40 samples
 * (23.6 px) between c09 and c11, two runs of 10 (5.90 px each). */
static size_t sample(char *text, size_t len, size_t cap, int seq, int stack)
{
    return len + (size_t)snprintf(text + len, cap - len,
                                  "CPU_SAMPLE seq=%d tick=%d task=- actor=- thread=0 state=jett "
                                  "stack=%d span=-\n",
                                  seq, seq, stack);
}

static char *siblings(bool wide_between)
{
    size_t cap = 1u << 20, len = 0;
    char *text = malloc(cap);
    len += (size_t)snprintf(text + len, cap - len, "%s",
                            CPU_HELLO "FUNC id=0 namespace=\"m\" function=\"main\" source=- "
                                      "decl=-\nSTACK id=0 parent=- func=0 site=-\n");
    /* stacks 1..20 call c00..c09 and c11..c20, stack 21 calls c10 */
    for (int k = 1; k <= 21; k++)
        len += (size_t)snprintf(text + len, cap - len,
                                "FUNC id=%d namespace=\"m\" function=\"c%02d\" source=- "
                                "decl=-\nSTACK id=%d parent=0 func=%d site=-\n",
                                k,
                                k == 21   ? 10
                                : k <= 10 ? k - 1
                                          : k,
                                k, k);
    int seq = 0;
    for (int k = 1; k <= 20; k++)
        len = sample(text, len, cap, ++seq, k);
    for (int i = 0; i < (wide_between ? 40 : 0); i++)
        len = sample(text, len, cap, ++seq, 21);
    while (seq < 2000)
        len = sample(text, len, cap, ++seq, 0);
    snprintf(text + len, cap - len, "%s", FINISH);
    char *svg = svg_of_text(text);
    free(text);
    return svg;
}

START_TEST(narrow_neighbours_drawn_as_one)
{
    char *svg = siblings(false);
    check_svg(svg, "ok 3\n");
    has(svg, "<g class=\"f m\"><title>[20 narrow frames]: 20 samples (1.00%)</title><rect "
             "x=\"10.00\" y=\"88\" width=\"11.80\"");
    ck_assert_ptr_null(strstr(svg, "m.c0"));
    free(svg);
    /* 2000 samples again: main has 1940 of its own */
    svg = siblings(true);
    check_svg(svg, "ok 5\n");
    has(svg, "<title>[10 narrow frames]: 10 samples (0.50%)</title><rect x=\"10.00\" y=\"88\" "
             "width=\"5.90\"");
    has(svg, "<title>m.c10: 40 samples (2.00%)</title><rect x=\"15.90\" y=\"88\" "
             "width=\"23.60\"");
    has(svg, "<title>[10 narrow frames]: 10 samples (0.50%)</title><rect x=\"39.50\" y=\"88\" "
             "width=\"5.90\"");
    free(svg);
}
END_TEST

/* Each frame names its function's origin and path:line for the tooltip:
 * diff-opt-base declares main on line 1 and hot on line 2 of
 * src/opt.jett, a project source. */
START_TEST(frames_carry_origin_and_line)
{
    char *svg = svg_of("diff-opt-base", FOLD_WEIGHT_DEFAULT);
    check_svg(svg, "ok 5\n");
    has(svg, "<g class=\"f\" data-o=\"project\" data-p=\"src/opt.jett:1\"><title>opt.main: 300 ");
    has(svg, "<g class=\"f\" data-o=\"project\" data-p=\"src/opt.jett:2\"><title>opt.hot: 200 ");
    has(svg, "<g class=\"f\"><title>all: 300 samples (100.00%)</title>");
    free(svg);
    /* no source: neither attribute; app.work is two functions of
     * src/app.jett (lines 2 and 3) drawn in one frame */
    svg = svg_of("hostile-names", FOLD_WEIGHT_DEFAULT);
    has(svg, "<g class=\"f\"><title>app.main: 9 samples");
    has(svg, "<g class=\"f\" data-o=\"several functions of this name\"><title>app.work: 3 ");
    free(svg);
}
END_TEST

static char *text_of(const char *s, size_t len, size_t max)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *m = open_memstream(&buf, &n);
    flame_write_text(m, s, len, max);
    fclose(m);
    return buf;
}

static void expect_text(const char *s, size_t max, const char *want)
{
    char *got = text_of(s, strlen(s), max);
    ck_assert_str_eq(got, want);
    free(got);
}

/* Columns: an XML escape is one, \xNN four, a wide character two; a cut
 * keeps the end after an ellipsis (one column): the function's name, not
 * its namespace, survives. */
#define ELL "\xe2\x80\xa6"
START_TEST(text_escapes_and_cuts)
{
    expect_text("abcdef", 6, "abcdef");
    expect_text("abcdef", 5, ELL "cdef");
    expect_text("jsonp.main.to_json", 13, ELL "main.to_json");
    expect_text("<&>\"'", 5, "&lt;&amp;&gt;&quot;&apos;");
    expect_text("<<<<<<", 4, ELL "&lt;&lt;&lt;");
    expect_text("a\x01"
                "b",
                6, "a\\x01b");
    /* 6 columns into 5: 4 after the ellipsis, and \x01 takes 4 more */
    expect_text("a\x01"
                "b",
                5, ELL "b");
    /* 日本語: three wide characters, six columns */
    expect_text("\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", 6, "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e");
    expect_text("\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", 5, ELL "\xe6\x9c\xac\xe8\xaa\x9e");
    expect_text("\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", 3, ELL "\xe8\xaa\x9e");
    expect_text("\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", 1, ELL);
    expect_text("abc", 0, "");
    /* é (U+00E9) is one column, two bytes */
    expect_text("caf\xc3\xa9s", 5, "caf\xc3\xa9s");
    expect_text("caf\xc3\xa9s", 4, ELL "f\xc3\xa9s");
    expect_text("x\xff", 10, "x\\xff");
    expect_text("\xef\xbf\xbe", 20, "\\xef\\xbf\\xbe");
    expect_text("\xef\xbf\xbd", 20, "\xef\xbf\xbd"); /* U+FFFD is fine */
}
END_TEST

Suite *flame_suite(void)
{
    Suite *s = suite_create("flame");
    TCase *t = tcase_create("flame");
    tcase_add_test(t, tiny_cpu_geometry);
    tcase_add_test(t, ticks_noted_from_five_percent);
    tcase_add_test(t, hostile_names_escaped);
    tcase_add_test(t, memory_weights);
    tcase_add_test(t, every_record_partial);
    tcase_add_test(t, same_input_same_bytes);
    tcase_add_test(t, empty_profile_is_valid);
    tcase_add_test(t, narrow_frames_merge_into_parent);
    tcase_add_test(t, text_escapes_and_cuts);
    tcase_add_test(t, narrow_neighbours_drawn_as_one);
    tcase_add_test(t, frames_carry_origin_and_line);
    tcase_add_test(t, wall_waiting_frames_blue);
    suite_add_tcase(s, t);
    return s;
}
