/* End-to-end tests of `jett profile export` and `jett profile dump
 * --follow`, and of the following capture reader under them: outputs,
 * exit statuses and messages of the real binaries. */
#include <check.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "profile.pb-c.h"
#include "proto/captext.h"
#include "testutil.h"

static char *read_fixture(const char *name, size_t *len)
{
    char *path = tu_capture_path(name);
    char *data = tu_read_file(path, len);
    ck_assert_msg(data != NULL, "cannot read %s", path);
    free(path);
    return data;
}

static int run(const char *const argv[], struct tu_output *o)
{
    ck_assert_int_eq(tu_run(argv, NULL, 0, o), 0);
    return o->status;
}

/* Runs export on a fixture with the given options; asserts success and
 * the exact standard output and error. */
static void expect_export_err(const char *fixture, const char *weight, const char *want,
                              const char *want_err)
{
    char *cap = tu_capture_path(fixture);
    const char *argv[] = {tu_jett,     "profile", "export", cap, "--format",
                          "collapsed", weight,    weight,   NULL};
    if (weight)
        argv[6] = "--weight", argv[7] = weight;
    struct tu_output o;
    ck_assert_int_eq(run(argv, &o), 0);
    ck_assert_str_eq(o.out, want);
    ck_assert_str_eq(o.err, want_err);
    tu_output_free(&o);
    free(cap);
}

/* The same with nothing on standard error. */
static void expect_export(const char *fixture, const char *weight, const char *want)
{
    expect_export_err(fixture, weight, want, "");
}

/* The folded lines of every fixture; the sums are in tests/test_fold.c. */
START_TEST(collapsed_each_fixture)
{
    /* tiny-cpu: 1 of its 4 requested ticks coalesced, every-record 1 and
     * 1 dropped of 6: a share of at least 5% is noted */
    expect_export_err("tiny-cpu", NULL, "app.main 1\napp.main;app.work 2\n",
                      "jett: 1 of 4 requested ticks (25.00%) have no stack, 1 coalesced and 0 "
                      "dropped: no function's share counts them, while the report counts the "
                      "coalesced ones as running Jett code (--weight wall draws them)\n");
    expect_export_err("every-record", NULL,
                      "app.main;textkit.split \"quoted\", with: colon;std.text.upper 1\n",
                      "jett: 2 of 6 requested ticks (33.33%) have no stack, 1 coalesced and 1 "
                      "dropped: no function's share counts them, while the report counts the "
                      "coalesced ones as running Jett code (--weight wall draws them)\n");
    expect_export("tiny-memory", NULL,
                  "cache.<init> 64\ncache.main 168\ncache.main;cache.put 64\n");
    expect_export(
        "hostile-names", NULL,
        "app.main 1\n"
        "app.main;app.work 2\n"
        "app.main;app.work;app.a_very_long_function_name_that_will_not_fit_in_a_narrow_frame 1\n"
        "app.main;ctl.tab\\x09here\\x01\\x7fend 1\n"
        "app.main;evil.<script>alert('x')</script> 1\n"
        "app.main;evil.<script>alert('x')</script>;q\"uote.a&b:c 2\n"
        "app.main;\xe6\x97\xa5\xe6\x9c\xac.\xe9\x96\xa2\xe6\x95\xb0 1\n");
}
END_TEST

/* cpu-waiting through the command: --weight samples is the default
 * (main 1, main;poll 1); --weight wall adds the 9 waiting samples that
 * have a stack, 4 above main (3 at 3:3, 1 without a span) and 5 above
 * main;poll (3 + 2), and the one without a stack at the root: its 12
 * requested ticks are its 12 samples.  cpu-calls (its header): 30
 * requested ticks, 12 jett and 13 waiting samples on stacks, 1 waiting
 * without one, 1 runtime, 2 coalesced and 1 dropped at the root, the
 * note saying where the 3 without a stack went (10.00%). */
START_TEST(collapsed_cpu_weights)
{
    expect_export("cpu-waiting", NULL, "w.main 1\nw.main;w.poll 1\n");
    expect_export("cpu-waiting", "samples", "w.main 1\nw.main;w.poll 1\n");
    expect_export("cpu-waiting", "wall",
                  "<runtime>.<waiting> 1\nw.main 1\nw.main;<runtime>.<waiting> 4\nw.main;w.poll 1\n"
                  "w.main;w.poll;<runtime>.<waiting> 5\n");
    expect_export_err("cpu-calls", "wall",
                      "<runtime>.<coalesced> 2\n<runtime>.<dropped> 1\n<runtime>.<runtime> 1\n"
                      "<runtime>.<waiting> 1\nidx.main 1\nidx.main;idx.add 2\nidx.main;idx.docs 1\n"
                      "idx.main;idx.pick 1\nidx.main;idx.rank 2\nidx.main;idx.rank;idx.by 4\n"
                      "idx.main;idx.retry;idx.wait;<runtime>.<waiting> 8\nidx.main;idx.skip 1\n"
                      "idx.main;idx.wait;<runtime>.<waiting> 5\n",
                      "jett: 3 of 30 requested ticks (10.00%) have no stack, 2 coalesced and 1 "
                      "dropped: they are drawn at the root as <runtime>.<coalesced> and "
                      "<runtime>.<dropped>, in no function\n");
}
END_TEST

/* tiny-memory: allocated <init> 64, main 80 + 32 + 25 + 31, main;put 64;
 * count 1 and 3; retained 128 and 112 + 25; live at peak 128 and 168. */
START_TEST(collapsed_memory_weights)
{
    expect_export("tiny-memory", "allocated",
                  "cache.<init> 64\ncache.main 168\ncache.main;cache.put 64\n");
    expect_export("tiny-memory", "count", "cache.<init> 1\ncache.main 3\n");
    expect_export("tiny-memory", "retained", "cache.<init> 128\ncache.main 137\n");
    expect_export("tiny-memory", "live-at-peak", "cache.<init> 128\ncache.main 168\n");
}
END_TEST

/* The standard error of exporting a fixture with `format` (and
 * `weight`, NULL: the default) to a file; asserts success. */
static char *export_err(const char *fixture, const char *format, const char *weight)
{
    char *cap = tu_capture_path(fixture), *out = tu_tmp_path("out.x");
    const char *argv[] = {tu_jett, "profile", "export", cap,    "--format", format,
                          "-o",    out,       weight,   weight, NULL};
    if (weight)
        argv[8] = "--weight";
    struct tu_output o;
    ck_assert_int_eq(run(argv, &o), 0);
    char *err = o.err;
    o.err = NULL;
    tu_output_free(&o);
    unlink(out);
    free(cap), free(out);
    return err;
}

/* Every CPU format notes the ticks without a stack when they are a
 * noticeable share (tiny-cpu: 1 coalesced of 4, 25.00%), says which
 * weight draws them where the format takes --weight wall, and where
 * they went with it; none does for a share below 5% (cpu-waiting: none
 * of 12). */
START_TEST(every_cpu_format_notes_the_ticks)
{
    static const char left_out[] =
        "jett: 1 of 4 requested ticks (25.00%) have no stack, 1 coalesced and 0 dropped: no "
        "function's share counts them, while the report counts the coalesced ones as running "
        "Jett code";
    static const char drawn[] =
        "jett: 1 of 4 requested ticks (25.00%) have no stack, 1 coalesced and 0 dropped: they "
        "are drawn at the root as <runtime>.<coalesced> and <runtime>.<dropped>, in no "
        "function\n";
    static const char *const formats[] = {"collapsed", "svg", "pprof", "callgrind", "speedscope"};
    char want[512];
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
        bool wall = strcmp(formats[i], "callgrind") != 0;
        snprintf(want, sizeof want, "%s%s\n", left_out, wall ? " (--weight wall draws them)" : "");
        char *err = export_err("tiny-cpu", formats[i], NULL);
        ck_assert_msg(strcmp(err, want) == 0, "%s: %s", formats[i], err);
        free(err);
        if (wall) {
            err = export_err("tiny-cpu", formats[i], "wall");
            ck_assert_msg(strcmp(err, drawn) == 0, "%s --weight wall: %s", formats[i], err);
            free(err);
        }
        err = export_err("cpu-waiting", formats[i], NULL);
        ck_assert_msg(strcmp(err, "") == 0, "%s: %s", formats[i], err);
        free(err);
    }
}
END_TEST

/* --weight samples, the default of a CPU capture, names what a Callgrind
 * profile holds: the same bytes as without it. */
START_TEST(callgrind_takes_the_default_weight)
{
    char *cap = tu_capture_path("cpu-simple");
    const char *plain[] = {tu_jett, "profile", "export", cap, "--format", "callgrind", NULL};
    const char *named[] = {tu_jett,     "profile",  "export",  cap, "--format",
                           "callgrind", "--weight", "samples", NULL};
    struct tu_output a, b;
    ck_assert_int_eq(run(plain, &a), 0);
    ck_assert_int_eq(run(named, &b), 0);
    ck_assert_ptr_nonnull(strstr(a.out, "\nevents: Samples\n"));
    ck_assert_str_eq(a.out, b.out);
    tu_output_free(&a), tu_output_free(&b);
    free(cap);
}
END_TEST

/* -o writes the file and nothing on stdout; options in any order. */
START_TEST(output_file)
{
    char *cap = tu_capture_path("tiny-cpu"), *out = tu_tmp_path("out.folded");
    const char *argv[] = {tu_jett,    "profile",   "export", "-o", out,
                          "--format", "collapsed", cap,      NULL};
    struct tu_output o;
    ck_assert_int_eq(run(argv, &o), 0);
    ck_assert_str_eq(o.out, "");
    tu_output_free(&o);
    size_t len;
    char *got = tu_read_file(out, &len);
    ck_assert_str_eq(got, "app.main 1\napp.main;app.work 2\n");
    free(got), free(cap), free(out);
}
END_TEST

/* -o naming a FIFO (like a device such as /dev/null) writes into it; it
 * is not replaced by a file renamed over it. */
START_TEST(output_to_a_fifo)
{
    char *cap = tu_capture_path("tiny-cpu"), *out = tu_tmp_path("out.fifo");
    ck_assert_int_eq(mkfifo(out, 0600), 0);
    int rd = open(out, O_RDONLY | O_NONBLOCK); /* so that the writer's open returns */
    ck_assert_int_ge(rd, 0);
    const char *argv[] = {tu_jett,    "profile",   "export", "-o", out,
                          "--format", "collapsed", cap,      NULL};
    struct tu_output o;
    ck_assert_msg(run(argv, &o) == 0, "%s", o.err);
    tu_output_free(&o);
    char got[256];
    ssize_t n = read(rd, got, sizeof got - 1);
    ck_assert_int_gt(n, 0);
    got[n] = 0;
    ck_assert_str_eq(got, "app.main 1\napp.main;app.work 2\n");
    struct stat st;
    ck_assert_int_eq(stat(out, &st), 0);
    ck_assert(S_ISFIFO(st.st_mode));
    close(rd), unlink(out);
    free(cap), free(out);
}
END_TEST

/* Reading "-" from a pipe gives the same bytes as reading the file. */
START_TEST(pipe_equals_file)
{
    static const char *const formats[] = {"collapsed", "svg"};
    static const char *const fixtures[] = {"tiny-cpu", "tiny-memory", "hostile-names"};
    for (size_t i = 0; i < 2; i++)
        for (size_t k = 0; k < 3; k++) {
            size_t len;
            char *data = read_fixture(fixtures[k], &len), *cap = tu_capture_path(fixtures[k]);
            const char *from_file[] = {tu_jett,    "profile",  "export", cap,
                                       "--format", formats[i], NULL};
            const char *from_pipe[] = {tu_jett,    "profile",  "export", "-",
                                       "--format", formats[i], NULL};
            struct tu_output a, b;
            ck_assert_int_eq(run(from_file, &a), 0);
            ck_assert_int_eq(tu_run(from_pipe, data, len, &b), 0);
            ck_assert_int_eq(b.status, 0);
            ck_assert_uint_gt(a.out_len, 0);
            ck_assert_uint_eq(a.out_len, b.out_len);
            ck_assert_int_eq(memcmp(a.out, b.out, a.out_len), 0);
            tu_output_free(&a), tu_output_free(&b);
            free(data), free(cap);
        }
}
END_TEST

/* The example kept in fixtures/flame/ is what export writes today. */
START_TEST(example_svg_is_current)
{
    char *cap = tu_capture_path("hostile-names");
    char *kept = tu_source_path("fixtures/flame/hostile-names.svg");
    const char *argv[] = {tu_jett, "profile", "export", cap, "--format", "svg", NULL};
    struct tu_output o;
    ck_assert_int_eq(run(argv, &o), 0);
    size_t len;
    char *want = tu_read_file(kept, &len);
    ck_assert_ptr_nonnull(want);
    ck_assert_msg(o.out_len == len && memcmp(o.out, want, len) == 0,
                  "fixtures/flame/hostile-names.svg differs from the export; regenerate it with "
                  "jett profile export build/fixtures/hostile-names.jcap --format svg -o "
                  "fixtures/flame/hostile-names.svg");
    tu_output_free(&o);
    free(want), free(kept), free(cap);
}
END_TEST

/* A usage error: exit 2, nothing on stdout, exactly `line` on stderr. */
static void expect_usage(const char *const argv[], const char *line)
{
    struct tu_output o;
    ck_assert_int_eq(run(argv, &o), 2);
    ck_assert_str_eq(o.out, "");
    ck_assert_str_eq(o.err, line);
    tu_output_free(&o);
}

START_TEST(usage_errors)
{
    char *cpu = tu_capture_path("tiny-cpu"), *mem = tu_capture_path("tiny-memory");
    const char *none[] = {tu_jett, "profile", "export", NULL};
    expect_usage(none, "jett: profile export: expected a CAPTURE argument\n");
    const char *nofmt[] = {tu_jett, "profile", "export", cpu, NULL};
    expect_usage(nofmt, "jett: profile export: --format "
                        "collapsed|svg|callgrind|pprof|timeline|speedscope is required\n");
    const char *badfmt[] = {tu_jett, "profile", "export", cpu, "--format", "pdf", NULL};
    expect_usage(badfmt, "jett: profile export: --format must be collapsed, svg, callgrind, "
                         "pprof, timeline or speedscope, not 'pdf'\n");
    const char *cgweight[] = {tu_jett,     "profile",  "export", mem, "--format",
                              "callgrind", "--weight", "count",  NULL};
    expect_usage(cgweight, "jett: profile export: --format callgrind takes --weight samples "
                           "only (CPU captures, the default); a Callgrind profile carries a "
                           "memory capture's allocated bytes and count both, as events\n");
    const char *cgwall[] = {tu_jett,     "profile",  "export", cpu, "--format",
                            "callgrind", "--weight", "wall",   NULL};
    expect_usage(cgwall, "jett: profile export: --format callgrind takes --weight samples "
                         "only (CPU captures, the default); a Callgrind profile carries a "
                         "memory capture's allocated bytes and count both, as events\n");
    /* samples, the default, is what a CPU capture's profile holds, and
     * no weight of a memory capture */
    const char *cgmem[] = {tu_jett,     "profile",  "export",  mem, "--format",
                           "callgrind", "--weight", "samples", NULL};
    expect_usage(cgmem, "jett: profile export: --weight samples does not apply to a memory "
                        "capture\n");
    const char *ppweight[] = {tu_jett, "profile",  "export", mem, "--format",
                              "pprof", "--weight", "count",  NULL};
    expect_usage(ppweight, "jett: profile export: --format pprof takes --weight samples or wall "
                           "(CPU captures); a pprof profile carries every memory weight as a "
                           "sample type\n");
    const char *ssweight[] = {tu_jett,      "profile",  "export", mem, "--format",
                              "speedscope", "--weight", "count",  NULL};
    expect_usage(ssweight, "jett: profile export: --format speedscope takes --weight samples or "
                           "wall (CPU captures); a memory capture's samples are its allocated "
                           "bytes\n");
    const char *tlweight[] = {tu_jett,    "profile",  "export", mem, "--format",
                              "timeline", "--weight", "wall",   NULL};
    expect_usage(tlweight, "jett: profile export: --format timeline takes no --weight: it "
                           "draws the live bytes of a memory capture\n");
    const char *memwall[] = {tu_jett,     "profile",  "export", mem, "--format",
                             "collapsed", "--weight", "wall",   NULL};
    expect_usage(memwall, "jett: profile export: --weight wall does not apply to a memory "
                          "capture\n");
    const char *ppmemwall[] = {tu_jett, "profile",  "export", mem, "--format",
                               "pprof", "--weight", "wall",   NULL};
    expect_usage(ppmemwall, "jett: profile export: --weight wall does not apply to a memory "
                            "capture\n");
    const char *unknown[] = {tu_jett, "profile", "export", cpu, "--format", "svg", "--zoom", NULL};
    expect_usage(unknown, "jett: profile export: unknown option '--zoom'\n");
    const char *twice[] = {tu_jett, "profile",  "export", cpu, "--format",
                           "svg",   "--format", "svg",    NULL};
    expect_usage(twice, "jett: profile export: --format given twice\n");
    const char *otwice[] = {tu_jett, "profile", "export", cpu, "--format", "svg",
                            "-o",    "a",       "-o",     "b", NULL};
    expect_usage(otwice, "jett: profile export: -o given twice\n");
    const char *wtwice[] = {tu_jett,    "profile", "export",   mem,     "--format", "svg",
                            "--weight", "count",   "--weight", "count", NULL};
    expect_usage(wtwice, "jett: profile export: --weight given twice\n");
    const char *novalue[] = {tu_jett,    "profile", "export",   mem,
                             "--format", "svg",     "--weight", NULL};
    expect_usage(novalue, "jett: profile export: --weight needs a value\n");
    const char *noout[] = {tu_jett, "profile", "export", mem, "--format", "svg", "-o", NULL};
    expect_usage(noout, "jett: profile export: -o needs a value\n");
    const char *badw[] = {tu_jett, "profile",  "export", mem, "--format",
                          "svg",   "--weight", "bytes",  NULL};
    expect_usage(badw, "jett: profile export: --weight must be samples or wall (CPU), or "
                       "allocated, count, retained or live-at-peak (memory), not 'bytes'\n");
    const char *cpuw[] = {tu_jett,     "profile",  "export",   cpu, "--format",
                          "collapsed", "--weight", "retained", NULL};
    expect_usage(cpuw, "jett: profile export: --weight retained does not apply to a CPU "
                       "capture\n");
    const char *bytask[] = {tu_jett,    "profile",   "export",    cpu,
                            "--format", "collapsed", "--by-task", NULL};
    expect_usage(bytask, "jett: profile export: --by-task needs a capture of a run with tasks "
                         "(capability task_attribution)\n");
    const char *bytwice[] = {tu_jett,     "profile",   "export",    cpu, "--format",
                             "collapsed", "--by-task", "--by-task", NULL};
    expect_usage(bytwice, "jett: profile export: --by-task given twice\n");
    const char *ppbytask[] = {tu_jett,    "profile", "export",    cpu,
                              "--format", "pprof",   "--by-task", NULL};
    expect_usage(ppbytask, "jett: profile export: --by-task applies to collapsed and svg; a pprof "
                           "profile labels each sample with its task (-tagfocus task=N)\n");
    const char *ssbytask[] = {tu_jett,    "profile",    "export",    cpu,
                              "--format", "speedscope", "--by-task", NULL};
    expect_usage(ssbytask, "jett: profile export: --by-task applies to collapsed and svg; a "
                           "speedscope file has a profile per task\n");
    const char *cgbytask[] = {tu_jett,    "profile",   "export",    cpu,
                              "--format", "callgrind", "--by-task", NULL};
    expect_usage(cgbytask, "jett: profile export: --by-task applies to collapsed and svg, not to "
                           "--format callgrind\n");
    const char *two[] = {tu_jett, "profile", "export", cpu, mem, "--format", "svg", NULL};
    expect_usage(two, "jett: profile export: expected one CAPTURE argument\n");
    const char *missing[] = {tu_jett,    "profile", "export", "/nonexistent/x.jcap",
                             "--format", "svg",     NULL};
    expect_usage(missing, "jett: /nonexistent/x.jcap: cannot open: No such file or directory\n");
    free(cpu), free(mem);
}
END_TEST

START_TEST(help)
{
    const char *argv[] = {tu_jett, "profile", "export", "--help", NULL};
    struct tu_output o;
    ck_assert_int_eq(run(argv, &o), 0);
    ck_assert_ptr_nonnull(strstr(o.out, "usage: jett profile export CAPTURE|- --format"));
    tu_output_free(&o);
    const char *group[] = {tu_jett, "profile", "--help", NULL};
    ck_assert_int_eq(run(group, &o), 0);
    ck_assert_ptr_nonnull(strstr(o.out, "jett profile export"));
    tu_output_free(&o);
}
END_TEST

/* tiny-cpu's frames start at bytes 8 (HELLO), 64 (SOURCE), 264 and 284
 * (FUNC), 304 (EVENTS) and 481 (FINISH, 22 bytes, to 503).  Cut 3 bytes
 * short, FINISH is damaged: exit 1 with its offset, and what was read is
 * exported as the profile reports it (partial, collector_failure: the
 * profile of a damaged capture; there was no output before). */
START_TEST(bad_capture_exits_1)
{
    size_t len;
    char *data = read_fixture("tiny-cpu", &len);
    ck_assert_uint_eq(len, 503);
    char *cut = tu_tmp_path("cut.jcap"), *out = tu_tmp_path("cut.svg");
    ck_assert_int_eq(tu_write_file(cut, data, len - 3), 0);
    const char *argv[] = {tu_jett, "profile", "export", cut, "--format", "svg", "-o", out, NULL};
    struct tu_output o;
    ck_assert_int_eq(run(argv, &o), 1);
    char want[512];
    snprintf(want, sizeof want,
             "jett: %s: byte 481: frame cut short: its header says 18 bytes, 15 present\n", cut);
    ck_assert_str_eq(o.err, want);
    size_t svg_len;
    char *svg = tu_read_file(out, &svg_len);
    ck_assert_ptr_nonnull(svg);
    ck_assert_ptr_nonnull(strstr(svg, ">status: partial (collector_failure)<"));
    free(svg);
    unlink(out);
    tu_output_free(&o);
    free(data), free(cut), free(out);
}
END_TEST

/* tiny-memory cut just before its FINISH (jett-export(1)): every event
 * was read, but not the run's exit.  Its retained bytes are unknown, so
 * --weight retained and the timeline are refused, saying why; the live
 * bytes at the peak are of the events read, here all of them (128 and
 * 168 as in collapsed_memory_weights); the SVG heading gives freed 31
 * and the peak 64 + 80 + 32 + 25 + 64 + 31 = 296 bytes (every byte
 * allocated, live before tmp's free), retained unavailable. */
START_TEST(cut_capture_has_no_retained)
{
    size_t len;
    char *data = read_fixture("tiny-memory", &len);
    char *cut = tu_tmp_path("cut.jcap"), *svg_path = tu_tmp_path("cut.svg");
    size_t at = tu_before_last_frame(data, len);
    ck_assert_int_eq(tu_write_file(cut, data, at), 0);
    char ends[512], want[1024];
    snprintf(ends, sizeof ends, "jett: %s: byte %zu: capture ends without FINISH\n", cut, at);
    struct tu_output o;
    const char *retained[] = {tu_jett,     "profile",  "export",   cut, "--format",
                              "collapsed", "--weight", "retained", NULL};
    ck_assert_int_eq(run(retained, &o), 1);
    ck_assert_str_eq(o.out, "");
    snprintf(want, sizeof want,
             "jett: %s: --weight retained is unavailable: the capture ends before FINISH, so the "
             "bytes live at the run's exit are unknown\n",
             cut);
    ck_assert_str_eq(o.err, want);
    tu_output_free(&o);
    const char *peak[] = {tu_jett,     "profile",  "export",       cut, "--format",
                          "collapsed", "--weight", "live-at-peak", NULL};
    ck_assert_int_eq(run(peak, &o), 1);
    ck_assert_str_eq(o.out, "cache.<init> 128\ncache.main 168\n");
    ck_assert_str_eq(o.err, ends);
    tu_output_free(&o);
    const char *timeline[] = {tu_jett, "profile", "export", cut, "--format", "timeline", NULL};
    ck_assert_int_eq(run(timeline, &o), 2);
    snprintf(want, sizeof want,
             "jett: profile export: %s: --format timeline is unavailable: the capture ends before "
             "FINISH, so the bytes live at the run's exit are unknown\n",
             cut);
    ck_assert_str_eq(o.err, want);
    tu_output_free(&o);
    const char *svg[] = {tu_jett, "profile", "export", cut, "--format",
                         "svg",   "-o",      svg_path, NULL};
    ck_assert_int_eq(run(svg, &o), 1);
    size_t svg_len;
    char *doc = tu_read_file(svg_path, &svg_len);
    ck_assert_ptr_nonnull(doc);
    ck_assert_msg(strstr(doc, ">status: partial (collector_failure)<"), "%s", doc);
    ck_assert_msg(strstr(doc, "allocated: 296 bytes, freed: 31 bytes, peak live: 296 bytes, "
                              "retained: unavailable<"),
                  "%s", doc);
    free(doc);
    unlink(svg_path);
    tu_output_free(&o);
    free(data), free(cut), free(svg_path);
}
END_TEST

/* ---- following ---- */

/* Forks a writer that appends `data` to `path` in uneven pieces (1, 2, 3,
 * ... 11 bytes, then again), pausing 2 ms after each so that the reader
 * sees the file grow frame by frame and mid-frame. */
static pid_t write_slowly(const char *path, const char *data, size_t len)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid > 0)
        return pid;
    int fd = open(path, O_WRONLY | O_APPEND);
    size_t at = 0, piece = 1;
    while (fd >= 0 && at < len) {
        size_t n = piece < len - at ? piece : len - at;
        if (write(fd, data + at, n) != (ssize_t)n)
            _exit(1);
        at += n, piece = piece % 11 + 1;
        usleep(2000);
    }
    _exit(fd >= 0 ? 0 : 1);
}

static void wait_ok(pid_t pid)
{
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static char *dump_text(struct capture_reader *r, int want_rc)
{
    char *buf = NULL, err[400];
    size_t n = 0;
    FILE *m = open_memstream(&buf, &n);
    ck_assert_int_eq(captext_dump(m, r, err, sizeof err), want_rc);
    fclose(m);
    return buf;
}

/* The reader itself: following a file written in pieces by another
 * process yields the same records as reading the finished capture. */
START_TEST(follow_reader_equals_finished)
{
    size_t len;
    char *data = read_fixture("tiny-memory", &len);
    char *path = tu_tmp_path("growing.jcap");
    ck_assert_int_eq(tu_write_file(path, "", 0), 0);
    pid_t writer = write_slowly(path, data, len);
    int fd = open(path, O_RDONLY);
    struct capture_reader *r = capture_reader_follow(fd, path, 10000);
    char *followed = dump_text(r, 0);
    capture_reader_free(r);
    close(fd);
    wait_ok(writer);
    r = capture_reader_mem(data, len);
    char *finished = dump_text(r, 0);
    capture_reader_free(r);
    ck_assert_str_eq(followed, finished);
    ck_assert_ptr_nonnull(strstr(finished, "FINISH termination=returned"));
    free(followed), free(finished), free(data), free(path);
}
END_TEST

/* The same through `jett profile dump --follow`. */
START_TEST(dump_follow_equals_dump)
{
    size_t len;
    char *data = read_fixture("hostile-names", &len);
    char *path = tu_tmp_path("growing.jcap"), *cap = tu_capture_path("hostile-names");
    ck_assert_int_eq(tu_write_file(path, "", 0), 0);
    pid_t writer = write_slowly(path, data, len);
    const char *follow[] = {tu_jett, "profile", "dump", "--follow", path, NULL};
    struct tu_output a, b;
    ck_assert_int_eq(run(follow, &a), 0);
    wait_ok(writer);
    const char *dump[] = {tu_jett, "profile", "dump", cap, NULL};
    ck_assert_int_eq(run(dump, &b), 0);
    ck_assert_str_eq(a.out, b.out);
    ck_assert_str_eq(a.err, "");
    tu_output_free(&a), tu_output_free(&b);
    free(data), free(path), free(cap);
}
END_TEST

/* A capture that stops growing before FINISH: after --timeout seconds,
 * exit 1 naming the byte reached, with the complete records printed.
 * 300 bytes of tiny-cpu hold HELLO, SOURCE and the first FUNC (to 284);
 * the second FUNC (284..304) is cut. */
START_TEST(follow_times_out)
{
    size_t len;
    char *data = read_fixture("tiny-cpu", &len);
    char *path = tu_tmp_path("stalled.jcap");
    ck_assert_int_eq(tu_write_file(path, data, 300), 0);
    const char *argv[] = {tu_jett, "profile", "dump", path, "--follow", "--timeout", "1", NULL};
    struct tu_output o;
    ck_assert_int_eq(run(argv, &o), 1);
    char want[512];
    snprintf(want, sizeof want,
             "jett: %s: byte 300: no new data for 1 s: the capture is incomplete, followed up "
             "to byte 300 without FINISH (what was read is a partial result)\n",
             path);
    ck_assert_str_eq(o.err, want);
    ck_assert_int_eq(strncmp(o.out, "HELLO version=1 mode=cpu", 24), 0);
    const char *last = strstr(o.out, "FUNC id=0 ");
    ck_assert_ptr_nonnull(last);
    ck_assert_ptr_null(strstr(o.out, "FUNC id=1 "));
    ck_assert_ptr_eq(strchr(last, '\n') + 1, o.out + o.out_len);
    tu_output_free(&o);
    free(data), free(path);
}
END_TEST

/* The position of pid's descriptor open on `path`, -1 while there is none. */
static long fd_position(pid_t pid, const char *path)
{
    char link[PATH_MAX], target[PATH_MAX];
    for (int fd = 3; fd < 64; fd++) {
        snprintf(link, sizeof link, "/proc/%d/fd/%d", (int)pid, fd);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n < 0)
            continue;
        target[n] = 0;
        if (strcmp(target, path) != 0)
            continue;
        snprintf(link, sizeof link, "/proc/%d/fdinfo/%d", (int)pid, fd);
        FILE *f = fopen(link, "r");
        long pos = -1;
        if (f && fscanf(f, "pos: %ld", &pos) != 1)
            pos = -1;
        if (f)
            fclose(f);
        return pos;
    }
    return -1;
}

enum disturbance { CUT_BELOW_READ, RENAMED_OVER, REMOVED };

/* A followed capture that is truncated below what was read, replaced by
 * another file or removed never brings FINISH: dump says so at its next
 * check (within 50 ms, long before --timeout) and exits 1 after the
 * records it printed.  The dumper is disturbed once it has read all 300
 * bytes (its descriptor's position, from /proc). */
START_TEST(follow_notices_truncation_and_replacement)
{
    size_t len;
    char *data = read_fixture("tiny-cpu", &len);
    char *path = tu_tmp_path("followed.jcap"), *other = tu_tmp_path("other.jcap");
    char *out = tu_tmp_path("dump.out"), *errp = tu_tmp_path("dump.err");
    char real[PATH_MAX];
    ck_assert_int_eq(tu_write_file(path, data, 300), 0);
    ck_assert_ptr_nonnull(realpath(path, real));
    pid_t pid = fork();
    if (pid == 0) {
        if (!freopen(out, "w", stdout) || !freopen(errp, "w", stderr))
            _exit(126);
        execl(tu_jett, tu_jett, "profile", "dump", "--follow", "--timeout", "60", path,
              (char *)NULL);
        _exit(127);
    }
    for (int i = 0; fd_position(pid, real) != 300; i++) {
        ck_assert_msg(i < 30000, "the dumper never read the 300 bytes");
        usleep(1000);
    }
    if (_i == CUT_BELOW_READ) {
        ck_assert_int_eq(truncate(path, 100), 0);
    } else if (_i == RENAMED_OVER) {
        ck_assert_int_eq(tu_write_file(other, data, len), 0);
        ck_assert_int_eq(rename(other, path), 0);
    } else {
        ck_assert_int_eq(unlink(path), 0);
    }
    ck_assert_int_eq(tu_wait(pid), 1);
    char want[512];
    snprintf(want, sizeof want, "jett: %s: byte 300: %s\n", path,
             _i == CUT_BELOW_READ
                 ? "the file was truncated while it was being read"
                 : "the file was replaced or removed while it was being followed: its name no "
                   "longer leads to the file being read (what was read is a partial result)");
    char *got = tu_read_file(errp, &len);
    ck_assert_str_eq(got, want);
    free(got);
    got = tu_read_file(out, &len);
    ck_assert_int_eq(strncmp(got, "HELLO version=1 mode=cpu", 24), 0);
    ck_assert_ptr_nonnull(strstr(got, "FUNC id=0 "));
    free(got);
    free(data), free(path), free(other), free(out), free(errp);
}
END_TEST

/* A pipe's end is final even with --follow: no waiting, same output. */
START_TEST(follow_pipe_and_finished_file)
{
    size_t len;
    char *data = read_fixture("tiny-cpu", &len), *cap = tu_capture_path("tiny-cpu");
    const char *pipe_follow[] = {tu_jett, "profile", "dump", "--follow", "-", NULL};
    const char *file_follow[] = {tu_jett, "profile", "dump", "--follow", cap, NULL};
    const char *file_dump[] = {tu_jett, "profile", "dump", cap, NULL};
    struct tu_output a, b, c;
    ck_assert_int_eq(tu_run(pipe_follow, data, len, &a), 0);
    ck_assert_int_eq(a.status, 0);
    ck_assert_int_eq(run(file_follow, &b), 0);
    ck_assert_int_eq(run(file_dump, &c), 0);
    ck_assert_str_eq(a.out, c.out);
    ck_assert_str_eq(b.out, c.out);
    tu_output_free(&a), tu_output_free(&b), tu_output_free(&c);
    const char *cut_pipe[] = {tu_jett, "profile", "dump", "--follow", "-", NULL};
    ck_assert_int_eq(tu_run(cut_pipe, data, 300, &a), 0);
    ck_assert_int_eq(a.status, 1);
    ck_assert_ptr_nonnull(strstr(a.err, "byte 284: "));
    tu_output_free(&a);
    free(data), free(cap);
}
END_TEST

START_TEST(dump_usage_errors)
{
    char *cap = tu_capture_path("tiny-cpu");
    const char *no_follow[] = {tu_jett, "profile", "dump", cap, "--timeout", "5", NULL};
    expect_usage(no_follow, "jett: profile dump: --timeout needs --follow\n");
    const char *zero[] = {tu_jett, "profile", "dump", cap, "--follow", "--timeout", "0", NULL};
    expect_usage(zero, "jett: profile dump: --timeout must be a whole number of seconds, 1 to "
                       "86400, not '0'\n");
    const char *frac[] = {tu_jett, "profile", "dump", cap, "--follow", "--timeout", "1.5", NULL};
    expect_usage(frac, "jett: profile dump: --timeout must be a whole number of seconds, 1 to "
                       "86400, not '1.5'\n");
    const char *twice[] = {tu_jett, "profile", "dump", "--follow", cap, "--follow", NULL};
    expect_usage(twice, "jett: profile dump: --follow given twice\n");
    const char *novalue[] = {tu_jett, "profile", "dump", cap, "--follow", "--timeout", NULL};
    expect_usage(novalue, "jett: profile dump: --timeout takes SECONDS, once\n");
    const char *unknown[] = {tu_jett, "profile", "dump", cap, "--tail", NULL};
    expect_usage(unknown, "jett: profile dump: unknown option '--tail'\n");
    free(cap);
}
END_TEST

/* A recursion 302 frames deep that allocates at its deepest: main, then
 * 301 calls of down, each from the call `down(n - 1, keep)` on line 8.
 * A stack deeper than 128 frames keeps main, 126 frames of down and a
 * <truncated-stack> leaf, whose site is the call the 127th frame (a down)
 * was making: line 8.  By hand (jett(1)'s sizes): five strings "0" of 24
 * + 1 bytes, and keep's two growths, 0 to 4 slots and 4 to 8 slots, 64
 * bytes each: 5 * 25 + 2 * 64 = 253 bytes in 5 allocations and 7 events,
 * all at the truncated leaf; main's `[]` is 32 bytes on line 12. */
static const char deep_text[] = "namespace deep\n"
                                "\n"
                                "fn down(n: int, keep: list) {\n"
                                "    if n == 0 {\n"
                                "        push(keep, str(n))\n"
                                "        return\n"
                                "    }\n"
                                "    down(n - 1, keep)\n"
                                "}\n"
                                "\n"
                                "fn main() {\n"
                                "    let keep = []\n"
                                "    for r in 0..5 {\n"
                                "        down(300, keep)\n"
                                "    }\n"
                                "}\n";

/* The text after "key=" in the dump line at `line`. */
static const char *dump_field(const char *line, const char *key)
{
    const char *end = strchr(line, '\n'), *p = strstr(line, key);
    ck_assert_msg(p != NULL && p < end, "no %s in %.80s", key, line);
    return p + strlen(key);
}

/* The one STACK entry of <truncated-stack> in the dump carries the span of
 * the recursive call. */
static void expect_truncated_site(const char *dump)
{
    const char *f = strstr(dump, "function=\"<truncated-stack>\"");
    ck_assert_ptr_nonnull(f);
    while (f > dump && f[-1] != '\n')
        f--;
    char want[64], site[64];
    snprintf(want, sizeof want, " func=%ld ", atol(dump_field(f, "FUNC id=")));
    long call = (long)(strstr(deep_text, "down(n - 1, keep)") - deep_text);
    snprintf(site, sizeof site, "site=%ld-%ld\n", call, call + (long)strlen("down(n - 1, keep)"));
    int n = 0;
    for (const char *l = strstr(dump, "  STACK "); l; l = strstr(l + 1, "\n  STACK ")) {
        const char *end = strchr(l + 1, '\n');
        const char *k = strstr(l, want);
        if (k == NULL || k > end)
            continue;
        n++;
        ck_assert_msg(strncmp(strstr(k, "site="), site, strlen(site)) == 0, "%.80s", l);
    }
    ck_assert_int_eq(n, 1);
}

/* The pprof samples as "fn:line<fn:line..." lines, leaf first. */
static char *pprof_stacks(const char *path)
{
    size_t len, n;
    char *gz = tu_read_file(path, &len);
    ck_assert_ptr_nonnull(gz);
    unsigned char *raw = tu_gunzip(gz, len, &n);
    ck_assert_ptr_nonnull(raw);
    Perftools__Profiles__Profile *p = perftools__profiles__profile__unpack(NULL, n, raw);
    ck_assert_ptr_nonnull(p);
    char *text = NULL;
    size_t tlen = 0;
    FILE *out = open_memstream(&text, &tlen);
    for (size_t i = 0; i < p->n_sample; i++) {
        const Perftools__Profiles__Sample *s = p->sample[i];
        fprintf(out, "%lld", (long long)s->value[1]);
        for (size_t k = 0; k < s->n_location_id; k++)
            for (size_t j = 0; j < p->n_location; j++) {
                const Perftools__Profiles__Location *l = p->location[j];
                if (l->id != s->location_id[k])
                    continue;
                for (size_t f = 0; f < p->n_function; f++)
                    if (p->function[f]->id == l->line[0]->function_id)
                        fprintf(out, "%s%s:%lld", k ? "<" : " ",
                                p->string_table[p->function[f]->name], (long long)l->line[0]->line);
            }
        fputc('\n', out);
    }
    fclose(out);
    perftools__profiles__profile__free_unpacked(p, NULL);
    free(raw), free(gz);
    return text;
}

/* The frame below <truncated-stack> keeps the line of the call it was
 * making, in the capture and in the exports that name lines. */
START_TEST(truncated_stack_keeps_the_call_line)
{
    char *p = tu_program("deep.jett", deep_text), *cap = tu_tmp_path("deep.jcap");
    struct tu_output o;
    const char *argv[] = {tu_jett, "run", p, "--profile-memory", "--profile-capture", cap, NULL};
    ck_assert_int_eq(run(argv, &o), 0);
    tu_output_free(&o);
    const char *dump[] = {tu_jett, "profile", "dump", cap, NULL};
    ck_assert_int_eq(run(dump, &o), 0);
    expect_truncated_site(o.out);
    tu_output_free(&o);
    /* Callgrind: the 127th frame calls <truncated-stack> (fn 1) from line 8 */
    const char *cg[] = {tu_jett, "profile", "export", cap, "--format", "callgrind", NULL};
    ck_assert_int_eq(run(cg, &o), 0);
    ck_assert_ptr_nonnull(strstr(o.out, "fn=(1) <runtime>.<truncated-stack>\n0 253 5\n"));
    ck_assert_msg(strstr(o.out, "cfl=(1)\ncfn=(1)\ncalls=7 0\n8 253 5\n"), "%s", o.out);
    tu_output_free(&o);
    /* pprof: below the <truncated-stack> leaf, 126 frames of down, all at
     * line 8, then main at its call on line 14 */
    char *pb = tu_tmp_path("deep.pb.gz");
    const char *pp[] = {tu_jett, "profile", "export", cap, "--format", "pprof", "-o", pb, NULL};
    ck_assert_int_eq(run(pp, &o), 0);
    tu_output_free(&o);
    char *stacks = pprof_stacks(pb), want[8192];
    int n = snprintf(want, sizeof want, "253 <runtime>.<truncated-stack>:0");
    for (int i = 0; i < 126; i++)
        n += snprintf(want + n, sizeof want - (size_t)n, "<deep.down:8");
    snprintf(want + n, sizeof want - (size_t)n, "<deep.main:14\n");
    ck_assert_msg(strstr(stacks, want), "%s", stacks);
    ck_assert_ptr_nonnull(strstr(stacks, "32 deep.main:12\n"));
    free(stacks);
    unlink(pb), free(pb);
    unlink(cap), free(cap);
    unlink(p), free(p);
}
END_TEST

Suite *export_cli_suite(void)
{
    Suite *s = suite_create("export_cli");
    TCase *t = tcase_create("export");
    tcase_add_checked_fixture(t, tu_e2e_setup, tu_e2e_teardown);
    tcase_add_test(t, collapsed_each_fixture);
    tcase_add_test(t, collapsed_memory_weights);
    tcase_add_test(t, collapsed_cpu_weights);
    tcase_add_test(t, every_cpu_format_notes_the_ticks);
    tcase_add_test(t, callgrind_takes_the_default_weight);
    tcase_add_test(t, output_file);
    tcase_add_test(t, output_to_a_fifo);
    tcase_add_test(t, pipe_equals_file);
    tcase_add_test(t, example_svg_is_current);
    tcase_add_test(t, usage_errors);
    tcase_add_test(t, help);
    tcase_add_test(t, bad_capture_exits_1);
    tcase_add_test(t, cut_capture_has_no_retained);
    tcase_add_test(t, truncated_stack_keeps_the_call_line);
    suite_add_tcase(s, t);
    TCase *f = tcase_create("follow");
    tcase_add_checked_fixture(f, tu_e2e_setup, tu_e2e_teardown);
    tcase_add_test(f, follow_reader_equals_finished);
    tcase_add_test(f, dump_follow_equals_dump);
    tcase_add_test(f, follow_times_out);
    tcase_add_loop_test(f, follow_notices_truncation_and_replacement, CUT_BELOW_READ, REMOVED + 1);
    tcase_add_test(f, follow_pipe_and_finished_file);
    tcase_add_test(f, dump_usage_errors);
    suite_add_tcase(s, f);
    return s;
}
