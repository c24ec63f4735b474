/* The speedscope export (`jett profile export --format speedscope`), read
 * back with jansson: the samples come in the capture's order (the ticks'
 * for CPU, the events' for memory), each frame's self and total weight
 * (as speedscope sums them: total once per sample that holds the frame)
 * are the profile's numbers computed by hand in the fixtures' comments,
 * and frames carry their file's path on disk and declaration line.  The
 * published schema's check is the meson test 'speedscope-schema'. */
#include <check.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "one_frame_stacks.h"
#include "testutil.h"

/* Exports a fixture (with `--weight W` when weight is not NULL). */
static json_t *export_json_weighted(const char *fixture, const char *weight)
{
    char *cap = tu_capture_path(fixture);
    const char *argv[] = {tu_jett,      "profile",  "export", cap, "--format",
                          "speedscope", "--weight", weight,   NULL};
    if (!weight)
        argv[6] = NULL;
    struct tu_output o;
    ck_assert_int_eq(tu_run(argv, NULL, 0, &o), 0);
    ck_assert_msg(o.status == 0, "%s: %d %s", fixture, o.status, o.err);
    /* at most the note on the ticks without a stack (test_export_cli) */
    ck_assert_msg(o.err_len == 0 ||
                      (strncmp(o.err, "jett: ", 6) == 0 && strstr(o.err, " requested ticks (") &&
                       strchr(o.err, '\n') == o.err + o.err_len - 1),
                  "%s", o.err);
    json_error_t e;
    json_t *doc = json_loadb(o.out, o.out_len, 0, &e);
    ck_assert_msg(doc != NULL, "%s: line %d: %s", fixture, e.line, e.text);
    tu_output_free(&o);
    free(cap);
    return doc;
}

/* The capture text t packed into a capture in the test's folder, then
 * exported: the parsed document, the output's size in *out_len. */
static json_t *export_text(const char *t, size_t len, size_t *out_len)
{
    char *txt = tu_tmp_path("r.txt"), *capf = tu_tmp_path("r.jcap");
    ck_assert_int_eq(tu_write_file(txt, t, len), 0);
    const char *pack[] = {tu_jett, "profile", "pack", txt, "-o", capf, NULL};
    struct tu_output o;
    ck_assert_int_eq(tu_run(pack, NULL, 0, &o), 0);
    ck_assert_msg(o.status == 0, "%s", o.err);
    tu_output_free(&o);
    const char *argv[] = {tu_jett, "profile", "export", capf, "--format", "speedscope", NULL};
    ck_assert_int_eq(tu_run(argv, NULL, 0, &o), 0);
    ck_assert_msg(o.status == 0, "%d %s", o.status, o.err);
    *out_len = o.out_len;
    json_t *doc = json_loadb(o.out, o.out_len, 0, NULL);
    ck_assert_ptr_nonnull(doc);
    tu_output_free(&o);
    free(txt), free(capf);
    return doc;
}

static const char *frame_name(json_t *frames, json_int_t i)
{
    json_t *f = json_array_get(frames, (size_t)i);
    ck_assert_ptr_nonnull(f);
    return json_string_value(json_object_get(f, "name"));
}

/* What a reader of the file sees of profile `which`, as text: the
 * profile's unit, the leaf frame of each sample in order with its
 * weight, then each frame's name, file, line, self and total. */
static char *describe_profile(json_t *doc, size_t which)
{
    char *buf;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_str_eq(json_string_value(json_object_get(doc, "$schema")),
                     "https://www.speedscope.app/file-format-schema.json");
    json_t *frames = json_object_get(json_object_get(doc, "shared"), "frames");
    json_t *p = json_array_get(json_object_get(doc, "profiles"), which);
    ck_assert_ptr_nonnull(p);
    ck_assert_str_eq(json_string_value(json_object_get(p, "type")), "sampled");
    json_t *samples = json_object_get(p, "samples"), *weights = json_object_get(p, "weights");
    size_t n = json_array_size(samples), nf = json_array_size(frames);
    ck_assert_uint_eq(json_array_size(weights), n);
    json_int_t *self = calloc(nf + 1, sizeof *self), *total = calloc(nf + 1, sizeof *total);
    json_int_t sum = 0;
    fprintf(f, "unit %s\n", json_string_value(json_object_get(p, "unit")));
    for (size_t i = 0; i < n; i++) {
        json_t *st = json_array_get(samples, i);
        json_int_t w = json_integer_value(json_array_get(weights, i));
        size_t depth = json_array_size(st);
        ck_assert_uint_gt(depth, 0);
        json_int_t leaf = json_integer_value(json_array_get(st, depth - 1));
        fprintf(f, "%s %lld\n", frame_name(frames, leaf), (long long)w);
        self[leaf] += w;
        sum += w;
        for (size_t k = 0; k < depth; k++) {
            json_int_t fr = json_integer_value(json_array_get(st, k));
            ck_assert(fr >= 0 && (size_t)fr < nf);
            bool seen = false; /* recursion: once per sample */
            for (size_t j = 0; j < k; j++)
                seen |= json_integer_value(json_array_get(st, j)) == fr;
            if (!seen)
                total[fr] += w;
        }
    }
    ck_assert_int_eq(json_integer_value(json_object_get(p, "endValue")), sum);
    for (size_t i = 0; i < nf; i++) {
        json_t *fr = json_array_get(frames, i);
        json_t *file = json_object_get(fr, "file"), *line = json_object_get(fr, "line");
        fprintf(f, "frame %s %s:%lld self %lld total %lld\n", frame_name(frames, (json_int_t)i),
                file ? json_string_value(file) : "-",
                line ? (long long)json_integer_value(line) : 0, (long long)self[i],
                (long long)total[i]);
    }
    fclose(f);
    free(self), free(total);
    return buf;
}

static char *describe(json_t *doc)
{
    ck_assert_uint_eq(json_array_size(json_object_get(doc, "profiles")), 1);
    return describe_profile(doc, 0);
}

/* Profile `which` of a document: its name, then describe_profile's text. */
static void expect_profile(json_t *doc, size_t which, const char *name, const char *want)
{
    json_t *p = json_array_get(json_object_get(doc, "profiles"), which);
    ck_assert_ptr_nonnull(p);
    ck_assert_str_eq(json_string_value(json_object_get(p, "name")), name);
    char *got = describe_profile(doc, which);
    ck_assert_str_eq(got, want);
    free(got);
}

static json_t *export_json(const char *fixture)
{
    return export_json_weighted(fixture, NULL);
}

static void expect_weighted(const char *fixture, const char *weight, const char *want)
{
    json_t *doc = export_json_weighted(fixture, weight);
    char *got = describe(doc);
    ck_assert_str_eq(got, want);
    free(got);
    json_decref(doc);
}

static void expect(const char *fixture, const char *want)
{
    json_t *doc = export_json(fixture);
    char *got = describe(doc);
    ck_assert_str_eq(got, want);
    free(got);
    json_decref(doc);
}

/* cpu-simple: ticks 1, 2, 3, 5, 6, 7, 8, 9, 11, 12 on stacks 2, 2, 1, 2,
 * 3, 0, 2, 1, 3, 2 (0 main, 1 main>parse, 2 main>parse>split, 3
 * main>render): main self 1 total 10, parse 2/7, split 5/5, render 2/2;
 * declared on lines 2, 6, 9, 12. */
START_TEST(cpu_in_tick_order)
{
    expect("cpu-simple", "unit none\n"
                         "app.split 1\napp.split 1\napp.parse 1\napp.split 1\napp.render 1\n"
                         "app.main 1\napp.split 1\napp.parse 1\napp.render 1\napp.split 1\n"
                         "frame app.main src/main.jett:2 self 1 total 10\n"
                         "frame app.parse src/main.jett:6 self 2 total 7\n"
                         "frame app.split src/main.jett:9 self 5 total 5\n"
                         "frame app.render src/main.jett:12 self 2 total 2\n");
}
END_TEST

/* mem-churn: pressure 100 at make, (0 at make: none), 50 at main, growth
 * 200 at grow, 400 at make, growth 10 at make; frees and the shrink carry
 * none.  make 510, grow 200, main 50 self; main's total is all 760. */
START_TEST(memory_in_event_order)
{
    expect("mem-churn", "unit bytes\n"
                        "app.make 100\napp.main 50\napp.grow 200\napp.make 400\napp.make 10\n"
                        "frame app.main src/m.jett:1 self 50 total 760\n"
                        "frame app.make src/m.jett:4 self 510 total 510\n"
                        "frame app.grow src/m.jett:7 self 200 total 200\n");
}
END_TEST

/* cpu-recursion: stacks 3, 3, 2, 0, 4 (3 main>f>g>f, 2 main>f>g, 4
 * main>f>g>f>g): a function twice on a stack counts once in its total, as
 * in the profile's inclusive (f and g 4 of 5). */
START_TEST(recursion_counts_once)
{
    expect("cpu-recursion", "unit none\n"
                            "rec.f 1\nrec.f 1\nrec.g 1\nrec.main 1\nrec.g 1\n"
                            "frame rec.main src/rec.jett:1 self 1 total 5\n"
                            "frame rec.f src/rec.jett:4 self 2 total 4\n"
                            "frame rec.g src/rec.jett:7 self 2 total 4\n");
}
END_TEST

/* cpu-states: of 9 samples only the jett ones (1, 3, 6) have a Jett
 * stack; sample 4 waits on a stack and is not charged, as in the
 * profile. */
START_TEST(only_jett_samples)
{
    expect("cpu-states", "unit none\n"
                         "st.main 1\n<runtime>.<unavailable-symbol> 1\nst.main 1\n"
                         "frame st.main src/st.jett:2 self 2 total 3\n"
                         "frame <runtime>.<unavailable-symbol> -:0 self 1 total 1\n");
}
END_TEST

/* cpu-tasks (its header): first the profile of all tasks, in tick
 * order, whose totals are the profile's (crunch self 5, work self 2 of
 * 7, main 1), so that speedscope (activeProfileIndex 0) opens on the
 * whole run; then one per task, in task order, each with that task's
 * jett samples in tick order (task 2: ticks 2, 4, 9, 11; task 3: 3, 5,
 * 10); the runtime and waiting samples have no Jett stack. */
START_TEST(cpu_profile_per_task)
{
    json_t *doc = export_json("cpu-tasks");
    ck_assert_uint_eq(json_array_size(json_object_get(doc, "profiles")), 4);
    ck_assert_int_eq(json_integer_value(json_object_get(doc, "activeProfileIndex")), 0);
    expect_profile(doc, 0, "all tasks: jett samples, in tick order",
                   "unit none\napp.main 1\napp.crunch 1\napp.crunch 1\napp.work 1\napp.work 1\n"
                   "app.crunch 1\napp.crunch 1\napp.crunch 1\n"
                   "frame app.main src/main.jett:2 self 1 total 1\n"
                   "frame app.work src/main.jett:8 self 2 total 7\n"
                   "frame app.crunch src/main.jett:11 self 5 total 5\n");
    expect_profile(doc, 1, "task 1 (app.main): jett samples, in tick order",
                   "unit none\napp.main 1\n"
                   "frame app.main src/main.jett:2 self 1 total 1\n"
                   "frame app.work src/main.jett:8 self 0 total 0\n"
                   "frame app.crunch src/main.jett:11 self 0 total 0\n");
    expect_profile(doc, 2, "task 2 (app.work): jett samples, in tick order",
                   "unit none\napp.crunch 1\napp.work 1\napp.crunch 1\napp.crunch 1\n"
                   "frame app.main src/main.jett:2 self 0 total 0\n"
                   "frame app.work src/main.jett:8 self 1 total 4\n"
                   "frame app.crunch src/main.jett:11 self 3 total 3\n");
    expect_profile(doc, 3, "task 3 (app.work): jett samples, in tick order",
                   "unit none\napp.crunch 1\napp.work 1\napp.crunch 1\n"
                   "frame app.main src/main.jett:2 self 0 total 0\n"
                   "frame app.work src/main.jett:8 self 1 total 3\n"
                   "frame app.crunch src/main.jett:11 self 2 total 2\n");
    json_decref(doc);
    /* --weight wall: every requested tick in the profile of all tasks,
     * the runtime samples (ticks 6 and 12) at their pseudo-frame; task
     * 1's waiting samples at ticks 7 and 8, under the <runtime>.<waiting>
     * frame above main, in its own profile of every sample */
    doc = export_json_weighted("cpu-tasks", "wall");
    ck_assert_uint_eq(json_array_size(json_object_get(doc, "profiles")), 5);
    static const char pseudo[] = "frame <runtime>.<coalesced> -:0 self 0 total 0\n"
                                 "frame <runtime>.<runtime> -:0 self %d total %d\n"
                                 "frame <runtime>.<unavailable> -:0 self 0 total 0\n"
                                 "frame <runtime>.<dropped> -:0 self 0 total 0\n";
    char want[2048], frames[512];
    snprintf(frames, sizeof frames, pseudo, 2, 2);
    snprintf(want, sizeof want,
             "unit none\napp.main 1\napp.crunch 1\napp.crunch 1\napp.work 1\napp.work 1\n"
             "<runtime>.<runtime> 1\n<runtime>.<waiting> 1\n<runtime>.<waiting> 1\n"
             "app.crunch 1\napp.crunch 1\napp.crunch 1\n<runtime>.<runtime> 1\n"
             "frame app.main src/main.jett:2 self 1 total 3\n"
             "frame app.work src/main.jett:8 self 2 total 7\n"
             "frame app.crunch src/main.jett:11 self 5 total 5\n"
             "frame <runtime>.<waiting> -:0 self 2 total 2\n%s",
             frames);
    expect_profile(doc, 0, "all tasks: every requested tick, in tick order", want);
    snprintf(frames, sizeof frames, pseudo, 0, 0);
    snprintf(want, sizeof want,
             "unit none\napp.main 1\n<runtime>.<waiting> 1\n<runtime>.<waiting> 1\n"
             "frame app.main src/main.jett:2 self 1 total 3\n"
             "frame app.work src/main.jett:8 self 0 total 0\n"
             "frame app.crunch src/main.jett:11 self 0 total 0\n"
             "frame <runtime>.<waiting> -:0 self 2 total 2\n%s",
             frames);
    expect_profile(doc, 1, "task 1 (app.main): every sample, in tick order", want);
    json_decref(doc);
}
END_TEST

/* mem-tasks (its header): all tasks' allocations in event order (main
 * 32, crunch 64, work 16, crunch 48: the profile's crunch 112, work 16
 * self of 128), then each task's; the free carries no pressure. */
START_TEST(memory_profile_per_task)
{
    json_t *doc = export_json("mem-tasks");
    ck_assert_uint_eq(json_array_size(json_object_get(doc, "profiles")), 4);
    expect_profile(doc, 0, "all tasks: allocated bytes, in event order",
                   "unit bytes\napp.main 32\napp.crunch 64\napp.work 16\napp.crunch 48\n"
                   "frame app.main src/main.jett:2 self 32 total 32\n"
                   "frame app.work src/main.jett:8 self 16 total 128\n"
                   "frame app.crunch src/main.jett:11 self 112 total 112\n");
    expect_profile(doc, 2, "task 2 (app.work): allocated bytes, in event order",
                   "unit bytes\napp.crunch 64\napp.work 16\n"
                   "frame app.main src/main.jett:2 self 0 total 0\n"
                   "frame app.work src/main.jett:8 self 16 total 80\n"
                   "frame app.crunch src/main.jett:11 self 64 total 64\n");
    expect_profile(doc, 3, "task 3 (app.work): allocated bytes, in event order",
                   "unit bytes\napp.crunch 48\n"
                   "frame app.main src/main.jett:2 self 0 total 0\n"
                   "frame app.work src/main.jett:8 self 0 total 48\n"
                   "frame app.crunch src/main.jett:11 self 48 total 48\n");
    json_decref(doc);
}
END_TEST

/* Samples of a task no TASK describes, and of none, go to a last
 * profile "no task", after all tasks' and task 1's. */
START_TEST(samples_of_no_task)
{
    static const char t[] =
        "HELLO version=2 mode=cpu rate_hz=1000 threshold_bp=500 limit=10 cpu_budget=33554432 "
        "retention_budget=67108864 stack_budget=16777216 backend=\"interpreter_safe_point\" "
        "capabilities=cpu_tick_source,safe_stack_capture,jett_runtime_thread_registration,"
        "task_attribution colour=false\n"
        "FUNC id=0 namespace=\"app\" function=\"main\" source=- decl=-\n"
        "EVENTS\n"
        "  TASK task=1 func=0 spawn_func=- site=-\n"
        "  STACK id=0 parent=- func=0 site=-\n"
        "  CPU_SAMPLE seq=1 tick=1 task=1 actor=- thread=1 state=jett stack=0 span=-\n"
        "  CPU_SAMPLE seq=2 tick=2 task=7 actor=- thread=1 state=jett stack=0 span=-\n"
        "  CPU_SAMPLE seq=3 tick=3 task=- actor=- thread=1 state=jett stack=0 span=-\n"
        "END\n"
        "FINISH termination=returned wall_ns=3000000 cpu_ns=- requested=3 coalesced=0 dropped=0 "
        "collector_failure=false stack_limit=false\n";
    size_t n;
    json_t *doc = export_text(t, sizeof t - 1, &n);
    ck_assert_uint_eq(json_array_size(json_object_get(doc, "profiles")), 3);
    expect_profile(doc, 0, "all tasks: jett samples, in tick order",
                   "unit none\napp.main 1\napp.main 1\napp.main 1\n"
                   "frame app.main -:0 self 3 total 3\n");
    expect_profile(doc, 1, "task 1 (app.main): jett samples, in tick order",
                   "unit none\napp.main 1\nframe app.main -:0 self 1 total 1\n");
    expect_profile(doc, 2, "no task: jett samples, in tick order",
                   "unit none\napp.main 1\napp.main 1\nframe app.main -:0 self 2 total 2\n");
    json_decref(doc);
}
END_TEST

/* --weight wall on cpu-states: every one of its 12 requested ticks, in
 * tick order what has a place in it: the jett samples 1, 3 and 6,
 * waiting sample 4 on main's stack, with the <runtime>.<waiting> frame
 * above main, and at their pseudo-frames the runtime samples 2, 7 and 9,
 * the waiting sample 5 (no stack) and the unavailable one 8; then what
 * has none, the 2 coalesced and 1 dropped ticks, one sample each of
 * their weight.  The pseudo-frames come after the two functions', in
 * the order waiting, coalesced, runtime, unavailable, dropped.
 * --weight samples is the default. */
START_TEST(wall_adds_waiting_samples)
{
    expect_weighted("cpu-states", "wall",
                    "unit none\n"
                    "st.main 1\n<runtime>.<runtime> 1\n<runtime>.<unavailable-symbol> 1\n"
                    "<runtime>.<waiting> 1\n<runtime>.<waiting> 1\nst.main 1\n"
                    "<runtime>.<runtime> 1\n<runtime>.<unavailable> 1\n<runtime>.<runtime> 1\n"
                    "<runtime>.<coalesced> 2\n<runtime>.<dropped> 1\n"
                    "frame st.main src/st.jett:2 self 2 total 4\n"
                    "frame <runtime>.<unavailable-symbol> -:0 self 1 total 1\n"
                    "frame <runtime>.<waiting> -:0 self 2 total 2\n"
                    "frame <runtime>.<coalesced> -:0 self 2 total 2\n"
                    "frame <runtime>.<runtime> -:0 self 3 total 3\n"
                    "frame <runtime>.<unavailable> -:0 self 1 total 1\n"
                    "frame <runtime>.<dropped> -:0 self 1 total 1\n");
    expect_weighted("cpu-states", "samples",
                    "unit none\n"
                    "st.main 1\n<runtime>.<unavailable-symbol> 1\nst.main 1\n"
                    "frame st.main src/st.jett:2 self 2 total 3\n"
                    "frame <runtime>.<unavailable-symbol> -:0 self 1 total 1\n");
    /* a memory capture: a usage error */
    char *cap = tu_capture_path("mem-churn");
    const char *argv[] = {tu_jett,      "profile",  "export", cap, "--format",
                          "speedscope", "--weight", "wall",   NULL};
    struct tu_output o;
    ck_assert_int_eq(tu_run(argv, NULL, 0, &o), 0);
    ck_assert_int_eq(o.status, 2);
    ck_assert_str_eq(o.err, "jett: profile export: --weight wall does not apply to a memory "
                            "capture\n");
    ck_assert_uint_eq(o.out_len, 0);
    tu_output_free(&o);
    free(cap);
}
END_TEST

/* The file's name, speedscope's window title, gives the status and the
 * ticks (cpu-simple: 12 requested, 10 samples, 1 coalesced, 1 dropped);
 * a damaged capture says it is partial there and in its profile's name,
 * and that its ticks are unknown without FINISH. */
START_TEST(file_name_status_and_ticks)
{
    json_t *doc = export_json("cpu-simple");
    ck_assert_str_eq(json_string_value(json_object_get(doc, "name")),
                     "jett CPU profile: complete; ticks: 12 requested, 10 samples, 1 coalesced, "
                     "1 dropped");
    ck_assert_str_eq(json_string_value(json_object_get(doc, "exporter")), "jett profile export");
    json_decref(doc);
    doc = export_json("mem-churn");
    ck_assert_str_eq(json_string_value(json_object_get(doc, "name")),
                     "jett memory profile: complete");
    json_decref(doc);
    /* cpu-simple cut inside its FINISH */
    char *path = tu_capture_path("cpu-simple"), *cut = tu_tmp_path("cut.jcap");
    size_t len;
    char *cap = tu_read_file(path, &len);
    ck_assert_int_eq(tu_write_file(cut, cap, len - 5), 0);
    const char *argv[] = {tu_jett, "profile", "export", cut, "--format", "speedscope", NULL};
    struct tu_output o;
    ck_assert_int_eq(tu_run(argv, NULL, 0, &o), 0);
    ck_assert_int_eq(o.status, 1);
    doc = json_loadb(o.out, o.out_len, 0, NULL);
    ck_assert_ptr_nonnull(doc);
    ck_assert_str_eq(json_string_value(json_object_get(doc, "name")),
                     "jett CPU profile: partial (collector_failure); ticks: 10 samples, coalesced "
                     "and dropped unknown (no FINISH)");
    json_t *p = json_array_get(json_object_get(doc, "profiles"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(p, "name")),
                     "jett samples, in tick order; partial (collector_failure)");
    json_decref(doc);
    tu_output_free(&o);
    free(cap), free(path), free(cut);
}
END_TEST

/* A frame's file is where its source lies below the project's root
 * (every-record: a project file at its logical path src/app.jett, the
 * dependency's textkit/split.jett under deps/, the standard library's
 * stdlib/text.jett as stdlib/std/text.jett, below jett's data folder),
 * as pprof's and Callgrind's are; a frame without a source has none. */
START_TEST(files_where_they_lie)
{
    json_t *doc = export_json("every-record");
    json_t *frames = json_object_get(json_object_get(doc, "shared"), "frames");
    static const char *const want[][2] = {
        {"app.main", "src/app.jett"},
        {"textkit.split \"quoted\", with: colon", "deps/textkit/split.jett"},
        {"std.text.upper", "stdlib/std/text.jett"},
        {"<runtime>.<truncated-stack>", NULL}};
    ck_assert_uint_eq(json_array_size(frames), 4);
    for (size_t i = 0; i < 4; i++) {
        json_t *f = json_array_get(frames, i);
        ck_assert_str_eq(json_string_value(json_object_get(f, "name")), want[i][0]);
        json_t *file = json_object_get(f, "file");
        if (want[i][1])
            ck_assert_str_eq(json_string_value(file), want[i][1]);
        else
            ck_assert_ptr_null(file);
    }
    json_decref(doc);
}
END_TEST

/* hostile-names: markup, quotes and control bytes stay one JSON string
 * each; the control bytes are the text \xNN (jett-profile(7), Escaped
 * text), so the decoded name holds none. */
START_TEST(hostile_names)
{
    json_t *doc = export_json("hostile-names");
    json_t *frames = json_object_get(json_object_get(doc, "shared"), "frames");
    ck_assert_str_eq(frame_name(frames, 1), "evil.<script>alert('x')</script>");
    ck_assert_str_eq(frame_name(frames, 2), "q\"uote.a&b;c");
    ck_assert_str_eq(frame_name(frames, 3), "ctl.tab\\x09here\\x01\\x7fend");
    ck_assert_str_eq(frame_name(frames, 7), "日本.関数");
    json_decref(doc);
}
END_TEST

/* A stack budget too small for the capture's stacks: samples on refused
 * stacks are unattributed (left out), the others written; 2000 stacks of
 * one frame, sample i on stack i.  The budget keeps the first few only,
 * so fewer samples than stacks come out, each on a stored stack. */
START_TEST(refused_stacks_left_out)
{
    size_t cap = 1u << 20;
    char *t = malloc(cap);
    size_t len = one_frame_stacks(t, cap, "app", "f", 2000);
    len += (size_t)snprintf(t + len, cap - len,
                            "END\nFINISH termination=returned wall_ns=1 cpu_ns=- requested=2000 "
                            "coalesced=0 dropped=0 collector_failure=false stack_limit=false\n");
    size_t out_len;
    json_t *doc = export_text(t, len, &out_len);
    json_t *p = json_array_get(json_object_get(doc, "profiles"), 0);
    size_t samples = json_array_size(json_object_get(p, "samples"));
    ck_assert_uint_gt(samples, 0);
    ck_assert_uint_lt(samples, 2000);
    json_decref(doc);
    free(t);
}
END_TEST

/* Deep stacks in runs, more text than one output block: 120 nodes (a
 * chain of 60 and a branch of 60 off its 11th), functions f0..f2 by a
 * rule of the node, and 30000 samples in runs of 1 to 7 on one node.
 * Every sample's frames, root first, are those of its node's chain as
 * this test builds it, however the writer reuses a run's text. */
#define RUN_NODES 120
START_TEST(runs_of_deep_stacks_across_blocks)
{
    int parent[RUN_NODES], func[RUN_NODES];
    for (int i = 0; i < RUN_NODES; i++) {
        parent[i] = i == 0 ? -1 : i == 60 ? 10 : i - 1;
        func[i] = (i * 5 + i / 7) % 3;
    }
    size_t cap = 8u << 20, len = 0;
    char *t = malloc(cap);
    len += (size_t)snprintf(
        t + len, cap - len,
        "HELLO version=1 mode=cpu rate_hz=1000 threshold_bp=500 limit=10 cpu_budget=33554432 "
        "retention_budget=67108864 stack_budget=16777216 backend=\"interpreter_safe_point\" "
        "capabilities=cpu_tick_source,safe_stack_capture colour=false\n");
    for (int f = 0; f < 3; f++)
        len += (size_t)snprintf(t + len, cap - len,
                                "FUNC id=%d namespace=\"app\" function=\"f%d\" source=- decl=-\n",
                                f, f);
    len += (size_t)snprintf(t + len, cap - len, "EVENTS\n");
    for (int i = 0; i < RUN_NODES; i++) {
        char par[16] = "-";
        if (parent[i] >= 0)
            snprintf(par, sizeof par, "%d", parent[i]);
        len += (size_t)snprintf(t + len, cap - len, "  STACK id=%d parent=%s func=%d site=-\n", i,
                                par, func[i]);
    }
    enum { N = 30000 };
    static int node_of[N];
    for (int i = 0, k = 0; i < N; k++)
        for (int r = 0; r < 1 + k % 7 && i < N; r++, i++)
            node_of[i] = (k * 37) % RUN_NODES;
    for (int i = 0; i < N; i++)
        len += (size_t)snprintf(t + len, cap - len,
                                "  CPU_SAMPLE seq=%d tick=%d task=- actor=- thread=0 state=jett "
                                "stack=%d span=-\n",
                                i + 1, i + 1, node_of[i]);
    len += (size_t)snprintf(t + len, cap - len,
                            "END\nFINISH termination=returned wall_ns=1 cpu_ns=- requested=%d "
                            "coalesced=0 dropped=0 collector_failure=false stack_limit=false\n",
                            N);
    ck_assert_uint_lt(len, cap);
    size_t out_len;
    json_t *doc = export_text(t, len, &out_len);
    ck_assert_uint_gt(out_len, 2u << 20); /* more than one block of output */
    json_t *frames = json_object_get(json_object_get(doc, "shared"), "frames");
    json_t *p = json_array_get(json_object_get(doc, "profiles"), 0);
    json_t *samples = json_object_get(p, "samples"), *weights = json_object_get(p, "weights");
    ck_assert_uint_eq(json_array_size(samples), N);
    ck_assert_uint_eq(json_array_size(weights), N);
    for (int i = 0; i < N; i++) {
        int chain[RUN_NODES], depth = 0;
        for (int m = node_of[i]; m >= 0; m = parent[m])
            chain[depth++] = func[m];
        json_t *st = json_array_get(samples, (size_t)i);
        ck_assert_msg(json_array_size(st) == (size_t)depth, "sample %d: depth %zu, not %d", i,
                      json_array_size(st), depth);
        for (int k = 0; k < depth; k++) {
            char want[8];
            snprintf(want, sizeof want, "app.f%d", chain[depth - 1 - k]);
            ck_assert_str_eq(frame_name(frames, json_integer_value(json_array_get(st, (size_t)k))),
                             want);
        }
        ck_assert_int_eq(json_integer_value(json_array_get(weights, (size_t)i)), 1);
    }
    json_decref(doc);
    free(t);
}
END_TEST

Suite *speedscope_suite(void)
{
    Suite *s = suite_create("speedscope");
    TCase *t = tcase_create("speedscope");
    tcase_add_checked_fixture(t, tu_e2e_setup, tu_e2e_teardown);
    tcase_add_test(t, cpu_in_tick_order);
    tcase_add_test(t, memory_in_event_order);
    tcase_add_test(t, recursion_counts_once);
    tcase_add_test(t, only_jett_samples);
    tcase_add_test(t, wall_adds_waiting_samples);
    tcase_add_test(t, file_name_status_and_ticks);
    tcase_add_test(t, files_where_they_lie);
    tcase_add_test(t, hostile_names);
    tcase_add_test(t, cpu_profile_per_task);
    tcase_add_test(t, memory_profile_per_task);
    tcase_add_test(t, samples_of_no_task);
    tcase_add_test(t, refused_stacks_left_out);
    tcase_add_test(t, runs_of_deep_stacks_across_blocks);
    suite_add_tcase(s, t);
    return s;
}
