/* The memory timeline (`jett profile export --format timeline`): the SVG
 * is well-formed XML whose series sum to the total at every point (checked
 * by tests/timeline_check.py), and its numbers are the hand-computed ones
 * of the fixtures' comments: the peak and where it was (the profile's
 * peak_live_bytes), the last value (retained_bytes), every point. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <msgpack.h>

#include "daemon/export/timeline.h"
#include "proto/captext.h"
#include "testutil.h"

/* tu_capture_path in a buffer that lives until the next call. */
static const char *fixture_path_static(const char *name)
{
    static char *last;
    free(last);
    return last = tu_capture_path(name);
}

/* Runs tests/timeline_check.py on the SVG; returns what it printed
 * (asserting it passed). */
static char *check_svg(const char *svg, size_t len)
{
    char *script = tu_source_path("tests/timeline_check.py");
    const char *argv[] = {"/usr/bin/env", "python3", script, NULL};
    struct tu_output o;
    ck_assert_int_eq(tu_run(argv, svg, len, &o), 0);
    ck_assert_msg(o.status == 0, "timeline_check: %d %s%s", o.status, o.out, o.err);
    char *out = strdup(o.out);
    tu_output_free(&o);
    free(script);
    return out;
}

/* Exports CAPTURE (a path, or - for `input`); asserts success, the
 * checker's report and the summary on standard error. */
static void expect_export(const char *capture, const char *input, size_t len, const char *report,
                          const char *summary)
{
    const char *argv[] = {tu_jett, "profile", "export", capture, "--format", "timeline", NULL};
    struct tu_output o;
    ck_assert_int_eq(tu_run(argv, input, len, &o), 0);
    ck_assert_msg(o.status == 0, "%s: %d %s", capture, o.status, o.err);
    ck_assert_str_eq(o.err, summary);
    char *got = check_svg(o.out, o.out_len);
    ck_assert_str_eq(got, report);
    free(got);
    tu_output_free(&o);
}

/* Exports a fixture, as expect_export. */
static void expect_timeline(const char *fixture, const char *report, const char *summary)
{
    char *cap = tu_capture_path(fixture);
    expect_export(cap, NULL, 0, report, summary);
    free(cap);
}

/* mem-peak (live after each event 100, 200, 100, 250, 150, 270, 120 at
 * 100, 200, 200, 350, 350, 470, 470 allocated): one point per column of
 * allocated bytes (its last state); grow's most, 250 after event 4 (at
 * 350), which its column's end (150 after event 5) would hide; the peak
 * 270 at 470 (make 120, grow 150), also make's most and the last
 * allocation; and the exit, after event 7's free at the same 470 bytes
 * (120, all make's, grow's 150 gone). */
START_TEST(mem_peak)
{
    expect_timeline("mem-peak",
                    "ok peak=270 at=470 retained=120 allocated=470\n"
                    "x: 0 100 200 350 350 470 470\n"
                    "total: 0 100 100 250 150 270 120\n"
                    "app.grow: 0 0 100 250 150 150 0\n"
                    "app.make: 0 100 0 0 0 120 120\n"
                    "other: 0 0 0 0 0 0 0\n",
                    "jett: timeline: peak 270 bytes live at 470 bytes allocated; retained at "
                    "exit 120 bytes of 470 allocated\n"
                    "jett: timeline: largest growing site: app.make (src/m.jett:4), 120 bytes "
                    "retained at exit (at most 120 live)\n");
}
END_TEST

/* mem-churn: allocated 100, 100, 150, 350, 350, 350, 750, 750, 760 after
 * each event, live 100, 100, 150, 350, 320, 20, 420, 20, 30.  make created
 * id1 (100, grown to 300 by grow: still make's), id2 and id4; main id3.
 * Columns end at 100 (100: make 100), 150 (150: make 100, main 50), 350
 * (20: main 20); the peak 420 at 750 (make 400, main 20); the column 750
 * ends at 20 (main 20); the last allocation, event 9's growth, 30 (make
 * 10, main 20), and the exit, the same: nothing changed after it.  make
 * held at most 400 (at the peak), main 50 (at the column 150); main
 * retains the most (20). */
static const char churn_report[] = "ok peak=420 at=750 retained=30 allocated=760\n"
                                   "x: 0 100 150 350 750 750 760 760\n"
                                   "total: 0 100 150 20 420 20 30 30\n"
                                   "app.make: 0 100 100 0 400 0 10 10\n"
                                   "app.main: 0 0 50 20 20 20 20 20\n"
                                   "other: 0 0 0 0 0 0 0 0\n";
static const char churn_summary[] =
    "jett: timeline: peak 420 bytes live at 750 bytes allocated; retained at "
    "exit 30 bytes of 760 allocated\n"
    "jett: timeline: largest growing site: app.main (src/m.jett:1), 20 bytes "
    "retained at exit (at most 50 live)\n";

START_TEST(mem_churn)
{
    expect_timeline("mem-churn", churn_report, churn_summary);
}
END_TEST

/* mem-folds, and mem-unfolded (its events with the folds written as an
 * allocate and a free): allocated 100, 200, 200, 270, 300, 300, 360, 410,
 * 410, 430, 430, 430, 435 after each event, live 100, 200, 100, 170, 200,
 * 130, 190, 240, 210, 230, 210, 160, 165, the fold of 70 at make live
 * from event 4 to 6 and that of 20 at grow from 10 to 11, as the unfolded
 * events have them.  Columns end at 100 (make 100), 200 (grow 100), 270
 * (make 70, grow 100), 300 (grow 130), 360 (grow 190, its most), the peak
 * 240 at 410 (make 50, grow 190), the column 410 at 210, 430 at 160, the
 * last allocation 165 (grow, resized again) and the exit, the same.
 * grow held at most 190, make 100 (at the column 100). */
static const char folds_report[] = "ok peak=240 at=410 retained=165 allocated=435\n"
                                   "x: 0 100 200 270 300 360 410 410 430 435 435\n"
                                   "total: 0 100 100 170 130 190 240 210 160 165 165\n"
                                   "app.grow: 0 0 100 100 130 190 190 160 160 165 165\n"
                                   "app.make: 0 100 0 70 0 0 50 50 0 0 0\n"
                                   "other: 0 0 0 0 0 0 0 0 0 0 0\n";
static const char folds_summary[] =
    "jett: timeline: peak 240 bytes live at 410 bytes allocated; retained at "
    "exit 165 bytes of 435 allocated\n"
    "jett: timeline: largest growing site: app.grow (src/m.jett:7), 165 bytes "
    "retained at exit (at most 190 live)\n";

START_TEST(a_fold_is_live_until_its_free)
{
    expect_timeline("mem-folds", folds_report, folds_summary);
    expect_timeline("mem-unfolded", folds_report, folds_summary);
}
END_TEST

/* The capture is read once (its changes kept in a temporary file for the
 * second pass): standard input may be a pipe, with the same result. */
START_TEST(pipe_read_once)
{
    size_t len;
    char *data = tu_read_file(fixture_path_static("mem-churn"), &len);
    ck_assert_ptr_nonnull(data);
    expect_export("-", data, len, churn_report, churn_summary);
    free(data);
}
END_TEST

/* Without a usable temporary folder: a usage error saying so, naming
 * the folder TMPDIR gave, no output file. */
START_TEST(no_temporary_file)
{
    size_t n = strlen(tu_dir) + 16;
    char *missing = malloc(n), *out = malloc(n);
    snprintf(missing, n, "%s/missing", tu_dir);
    snprintf(out, n, "%s/t.svg", tu_dir);
    char *cap = tu_capture_path("mem-churn");
    const char *argv[] = {tu_jett,    "profile", "export", cap, "--format",
                          "timeline", "-o",      out,      NULL};
    const char *was = getenv("TMPDIR");
    char *saved = was ? strdup(was) : NULL;
    ck_assert_int_eq(setenv("TMPDIR", missing, 1), 0);
    struct tu_output o;
    int rc = tu_run(argv, NULL, 0, &o);
    if (saved)
        setenv("TMPDIR", saved, 1);
    else
        unsetenv("TMPDIR");
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(o.status, 2);
    char want[600];
    snprintf(want, sizeof want,
             "jett: profile export: cannot make a temporary file for the changes in %s "
             "(TMPDIR): No such file or directory\n",
             missing);
    ck_assert_str_eq(o.err, want);
    ck_assert_int_ne(access(out, F_OK), 0);
    tu_output_free(&o);
    free(saved), free(cap), free(missing), free(out);
}
END_TEST

/* mem-retained: 100 at make, then 300 without a stack (other): the peak
 * is the last allocation (400 at 400), and the exit the same. */
START_TEST(mem_retained)
{
    expect_timeline("mem-retained",
                    "ok peak=400 at=400 retained=400 allocated=400\n"
                    "x: 0 100 400 400\n"
                    "total: 0 100 400 400\n"
                    "app.make: 0 100 100 100\n"
                    "other: 0 0 300 300\n",
                    "jett: timeline: peak 400 bytes live at 400 bytes allocated; retained at "
                    "exit 400 bytes of 400 allocated\n"
                    "jett: timeline: largest growing site: app.make (src/m.jett:4), 100 bytes "
                    "retained at exit (at most 100 live)\n");
}
END_TEST

/* mem-empty: nothing allocated; a flat line at 0 and no site. */
START_TEST(mem_empty)
{
    expect_timeline("mem-empty",
                    "ok peak=0 at=0 retained=0 allocated=0\n"
                    "x: 0 0\n"
                    "total: 0 0\n"
                    "other: 0 0\n",
                    "jett: timeline: peak 0 bytes live at 0 bytes allocated; retained at exit 0 "
                    "bytes of 0 allocated\n"
                    "jett: timeline: no site holds memory at exit\n");
}
END_TEST

#define MANY_SITES 7
#define ROUNDS 1000

/* A capture of ROUNDS rounds in which site k (1..7, function fk) creates
 * 8k bytes, then frees of everything sites 1-3 created. */
static char *many_sites_text(void)
{
    size_t cap = 4u << 20, len = 0;
    char *t = malloc(cap);
    len += (size_t)snprintf(
        t + len, cap - len,
        "HELLO version=1 mode=memory rate_hz=0 threshold_bp=500 limit=10 cpu_budget=33554432 "
        "retention_budget=67108864 stack_budget=16777216 backend=\"interpreter_alloc_hooks\" "
        "capabilities=jett_runtime_thread_registration,source_spans,jett_heap_allocation_hooks,"
        "free_and_resize_events colour=false\n"
        "FUNC id=0 namespace=\"app\" function=\"main\" source=- decl=-\n");
    for (int k = 1; k <= MANY_SITES; k++)
        len += (size_t)snprintf(t + len, cap - len,
                                "FUNC id=%d namespace=\"app\" function=\"f%d\" source=- decl=-\n",
                                k, k);
    len += (size_t)snprintf(t + len, cap - len, "EVENTS\n  STACK id=0 parent=- func=0 site=-\n");
    for (int k = 1; k <= MANY_SITES; k++)
        len +=
            (size_t)snprintf(t + len, cap - len, "  STACK id=%d parent=0 func=%d site=-\n", k, k);
    unsigned long seq = 0, id = 0;
    for (int r = 0; r < ROUNDS; r++)
        for (int k = 1; k <= MANY_SITES; k++)
            len += (size_t)snprintf(t + len, cap - len,
                                    "  ALLOC seq=%lu op=allocate id=%lu old=- new=%d task=- "
                                    "actor=- thread=0 stack=%d span=-\n",
                                    ++seq, ++id, 8 * k, k);
    for (unsigned long i = 1; i <= id; i++) {
        int k = (int)((i - 1) % MANY_SITES) + 1;
        if (k <= 3)
            len += (size_t)snprintf(t + len, cap - len,
                                    "  ALLOC seq=%lu op=free id=%lu old=%d new=- task=- actor=- "
                                    "thread=0 stack=0 span=-\n",
                                    ++seq, i, 8 * k);
    }
    len += (size_t)snprintf(t + len, cap - len,
                            "END\nFINISH termination=returned wall_ns=1 cpu_ns=- requested=0 "
                            "coalesced=0 dropped=0 collector_failure=false stack_limit=false\n");
    ck_assert_uint_lt(len, cap - 1);
    return t;
}

/* 7000 allocations: the points stay within 2000 while the peak (224000
 * = 1000 * 8 * 28 bytes, at the end of the allocations) and the end
 * (176000 = 1000 * 8 * (4 + 5 + 6 + 7)) stay exact; the top five sites by
 * their own maximum (8000 k) are f7..f3, and f1, f2 are "other". */
START_TEST(many_points_keep_peak_and_end)
{
    char *text = many_sites_text();
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    char err[320];
    ck_assert_msg(captext_pack(text, strlen(text), &sb, err, sizeof err) == 0, "%s", err);
    struct capture_reader *cr = capture_reader_mem(sb.data, sb.size);
    ck_assert_ptr_nonnull(cr);
    struct timeline *t = NULL;
    ck_assert_int_eq(timeline_read(cr, &t, err, sizeof err), TIMELINE_OK);
    capture_reader_free(cr);
    ck_assert_uint_le(t->n_points, TIMELINE_POINTS);
    ck_assert_uint_gt(t->n_points, TIMELINE_POINTS / 4); /* downsampled, not flattened */
    ck_assert_uint_eq(t->peak, 224000);
    ck_assert_uint_eq(t->peak_at, 224000);
    ck_assert_uint_eq(t->retained, 176000);
    ck_assert_uint_eq(t->n_sites, 5);
    for (uint32_t k = 0; k < 5; k++) {
        char want[8];
        snprintf(want, sizeof want, "app.f%u", 7 - k);
        ck_assert_str_eq(t->sites[k].name, want);
        ck_assert_uint_eq(t->sites[k].max_live, 8000u * (7 - k));
        ck_assert_uint_eq(t->sites[k].retained, 7 - k >= 4 ? 8000u * (7 - k) : 0);
        /* the peak's point holds each site's whole creation */
        ck_assert_uint_eq(t->values[(size_t)k * t->n_points + t->peak_point], 8000u * (7 - k));
    }
    ck_assert(t->has_grower);
    ck_assert_str_eq(t->grower.name, "app.f7");
    char *svg;
    size_t svg_len;
    FILE *f = open_memstream(&svg, &svg_len);
    ck_assert_int_eq(timeline_write_svg(t, f), 0);
    fclose(f);
    char *got = check_svg(svg, svg_len);
    ck_assert_msg(strncmp(got, "ok peak=224000 at=224000 retained=176000 allocated=224000\n",
                          strlen("ok peak=224000 at=224000 retained=176000 allocated=224000\n")) ==
                      0,
                  "%s", got);
    ck_assert_ptr_nonnull(strstr(got, "\nother: "));
    free(got), free(svg);
    timeline_free(t);
    msgpack_sbuffer_destroy(&sb);
    free(text);
}
END_TEST

/* The audit's two blind spots, in a capture of many columns: a site f
 * allocates 10 bytes 5000 times and keeps them, a site s allocates 10000
 * bytes after f's 2500th and s's allocation is freed right after, inside
 * its column; at exit all of f's are freed, after the last allocation.
 * s's most, 10000, is a point of its own (at 25000 + 10000 = 35000
 * allocated: 25000 of f and 10000 of s live); the peak, 50000 at 60000,
 * is the last allocation; the exit, every byte freed, is the last point,
 * at the same 60000 but drawn apart: the total's line runs from the
 * peak's y at the axis' end (1110) to the exit step (1130) and drops
 * there to 0 until 1170. */
START_TEST(spike_and_exit_drawn)
{
    size_t cap = 2u << 20, len = 0;
    char *t = malloc(cap);
    len += (size_t)snprintf(
        t + len, cap - len,
        "HELLO version=1 mode=memory rate_hz=0 threshold_bp=500 limit=10 cpu_budget=33554432 "
        "retention_budget=67108864 stack_budget=16777216 backend=\"interpreter_alloc_hooks\" "
        "capabilities=jett_runtime_thread_registration,source_spans,jett_heap_allocation_hooks,"
        "free_and_resize_events colour=false\n"
        "FUNC id=0 namespace=\"app\" function=\"f\" source=- decl=-\n"
        "FUNC id=1 namespace=\"app\" function=\"s\" source=- decl=-\n"
        "EVENTS\n  STACK id=0 parent=- func=0 site=-\n  STACK id=1 parent=- func=1 site=-\n");
    unsigned long seq = 0;
    for (int i = 1; i <= 5000; i++) {
        len += (size_t)snprintf(t + len, cap - len,
                                "  ALLOC seq=%lu op=allocate id=%d old=- new=10 task=- actor=- "
                                "thread=0 stack=0 span=-\n",
                                ++seq, i + (i > 2500));
        if (i == 2500) /* s's allocation is id 2501 */
            len += (size_t)snprintf(t + len, cap - len,
                                    "  ALLOC seq=%lu op=allocate id=2501 old=- new=10000 task=- "
                                    "actor=- thread=0 stack=1 span=-\n"
                                    "  ALLOC seq=%lu op=free id=2501 old=10000 new=- task=- "
                                    "actor=- thread=0 stack=1 span=-\n",
                                    seq + 1, seq + 2),
                seq += 2;
    }
    for (int i = 1; i <= 5000; i++)
        len += (size_t)snprintf(t + len, cap - len,
                                "  ALLOC seq=%lu op=free id=%d old=10 new=- task=- actor=- "
                                "thread=0 stack=0 span=-\n",
                                ++seq, i + (i > 2500));
    snprintf(t + len, cap - len,
             "END\nFINISH termination=returned wall_ns=1 cpu_ns=- requested=0 coalesced=0 "
             "dropped=0 collector_failure=false stack_limit=false\n");
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    char err[320];
    ck_assert_msg(captext_pack(t, strlen(t), &sb, err, sizeof err) == 0, "%s", err);
    struct capture_reader *cr = capture_reader_mem(sb.data, sb.size);
    struct timeline *tl = NULL;
    ck_assert_int_eq(timeline_read(cr, &tl, err, sizeof err), TIMELINE_OK);
    capture_reader_free(cr);
    ck_assert_uint_eq(tl->n_sites, 2);
    ck_assert_str_eq(tl->sites[1].name, "app.s");
    ck_assert_uint_eq(tl->sites[1].max_live, 10000);
    uint32_t n = tl->n_points, spike = 0;
    ck_assert_uint_lt(n, 2000);
    for (uint32_t i = 0; i < n; i++) {
        if (tl->values[n + i] != 10000)
            continue;
        spike++;
        ck_assert_uint_eq(tl->x[i], 35000);
        ck_assert_uint_eq(tl->total[i], 35000);
        ck_assert_uint_eq(tl->values[i], 25000);
    }
    ck_assert_uint_eq(spike, 1);
    ck_assert_uint_eq(tl->peak, 50000);
    ck_assert_uint_eq(tl->peak_at, 60000);
    ck_assert_uint_eq(tl->x[n - 2], 60000);
    ck_assert_uint_eq(tl->total[n - 2], 50000);
    ck_assert_uint_eq(tl->x[n - 1], 60000);
    ck_assert_uint_eq(tl->total[n - 1], 0);
    ck_assert_uint_eq(tl->retained, 0);
    char *svg;
    size_t svg_len;
    FILE *f = open_memstream(&svg, &svg_len);
    ck_assert_int_eq(timeline_write_svg(tl, f), 0);
    fclose(f);
    free(check_svg(svg, svg_len));
    ck_assert_ptr_nonnull(strstr(svg, " 1110.00,104.00 1130.00,104.00 1130.00,454.00 "
                                      "1170.00,454.00\"/>"));
    ck_assert_ptr_nonnull(strstr(svg, "data-max=\"10000\" data-retained=\"0\""));
    ck_assert_ptr_nonnull(strstr(svg, ">exit</text>"));
    free(svg);
    timeline_free(tl);
    msgpack_sbuffer_destroy(&sb);
    free(t);
}
END_TEST

/* A CPU capture has no live bytes: a usage error naming the capture and
 * no output file. */
START_TEST(cpu_capture_refused)
{
    char *cap = tu_capture_path("tiny-cpu");
    size_t n = strlen(tu_dir) + 16;
    char *out = malloc(n);
    snprintf(out, n, "%s/t.svg", tu_dir);
    const char *argv[] = {tu_jett,    "profile", "export", cap, "--format",
                          "timeline", "-o",      out,      NULL};
    struct tu_output o;
    ck_assert_int_eq(tu_run(argv, NULL, 0, &o), 0);
    ck_assert_int_eq(o.status, 2);
    ck_assert_ptr_nonnull(strstr(o.err, "--format timeline needs a memory capture, not a CPU "
                                        "capture"));
    ck_assert_ptr_nonnull(strstr(o.err, "tiny-cpu.jcap"));
    ck_assert_int_ne(access(out, F_OK), 0);
    tu_output_free(&o);
    const char *weighted[] = {tu_jett,    "profile",  "export", cap, "--format",
                              "timeline", "--weight", "count",  NULL};
    ck_assert_int_eq(tu_run(weighted, NULL, 0, &o), 0);
    ck_assert_int_eq(o.status, 2);
    ck_assert_str_eq(o.err, "jett: profile export: --format timeline takes no --weight: it "
                            "draws the live bytes of a memory capture\n");
    tu_output_free(&o);
    free(cap), free(out);
}
END_TEST

/* Names are escaped for XML (markup, quotes, ampersands) and control
 * bytes shown as \xNN text, in the SVG and in the summary. */
START_TEST(names_escaped)
{
    const char *text =
        "HELLO version=1 mode=memory rate_hz=0 threshold_bp=500 limit=10 cpu_budget=33554432 "
        "retention_budget=67108864 stack_budget=16777216 backend=\"interpreter_alloc_hooks\" "
        "capabilities=jett_runtime_thread_registration,source_spans,jett_heap_allocation_hooks,"
        "free_and_resize_events colour=false\n"
        "FUNC id=0 namespace=\"evil\" function=\"<b>&\\\"x'\\tend\" source=- decl=-\n"
        "EVENTS\n  STACK id=0 parent=- func=0 site=-\n"
        "  ALLOC seq=1 op=allocate id=1 old=- new=10 task=- actor=- thread=0 stack=0 span=-\n"
        "END\nFINISH termination=returned wall_ns=1 cpu_ns=- requested=0 coalesced=0 dropped=0 "
        "collector_failure=false stack_limit=false\n";
    size_t n = strlen(tu_dir) + 16;
    char *txt = malloc(n), *cap = malloc(n);
    snprintf(txt, n, "%s/h.txt", tu_dir);
    snprintf(cap, n, "%s/h.jcap", tu_dir);
    ck_assert_int_eq(tu_write_file(txt, text, strlen(text)), 0);
    const char *pack[] = {tu_jett, "profile", "pack", txt, "-o", cap, NULL};
    struct tu_output o;
    ck_assert_int_eq(tu_run(pack, NULL, 0, &o), 0);
    ck_assert_msg(o.status == 0, "%s", o.err);
    tu_output_free(&o);
    const char *argv[] = {tu_jett, "profile", "export", cap, "--format", "timeline", NULL};
    ck_assert_int_eq(tu_run(argv, NULL, 0, &o), 0);
    ck_assert_int_eq(o.status, 0);
    ck_assert_ptr_nonnull(strstr(o.err, "largest growing site: evil.<b>&\"x'\\x09end, 10 bytes"));
    char *got = check_svg(o.out, o.out_len);
    ck_assert_str_eq(got, "ok peak=10 at=10 retained=10 allocated=10\n"
                          "x: 0 10 10\n"
                          "total: 0 10 10\n"
                          "evil.<b>&\"x'\\x09end: 0 10 10\n"
                          "other: 0 0 0\n");
    free(got);
    tu_output_free(&o);
    free(txt), free(cap);
}
END_TEST

Suite *timeline_suite(void)
{
    Suite *s = suite_create("timeline");
    TCase *t = tcase_create("timeline");
    tcase_add_checked_fixture(t, tu_e2e_setup, tu_e2e_teardown);
    tcase_add_test(t, mem_peak);
    tcase_add_test(t, mem_churn);
    tcase_add_test(t, a_fold_is_live_until_its_free);
    tcase_add_test(t, pipe_read_once);
    tcase_add_test(t, no_temporary_file);
    tcase_add_test(t, mem_retained);
    tcase_add_test(t, mem_empty);
    tcase_add_test(t, many_points_keep_peak_and_end);
    tcase_add_test(t, spike_and_exit_drawn);
    tcase_add_test(t, cpu_capture_refused);
    tcase_add_test(t, names_escaped);
    suite_add_tcase(s, t);
    return s;
}
