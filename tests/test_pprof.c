/* Tests of daemon/export/pprof: our output inflated with zlib and decoded
 * with protobuf-c's own unpack, its samples against numbers computed by
 * hand from fixture captures, and its structure over every fixture. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/export/pprof.h"
#include "profile.pb-c.h"
#include "testutil.h"

typedef Perftools__Profiles__Profile pp_profile;

/* Exports a capture (with --weight wall when `wall`) and decodes the
 * result; *rc is the writer's. */
static pp_profile *export_weighted(const char *cap, size_t len, bool wall, int *rc, char *err,
                                   size_t errlen)
{
    char *gz = NULL;
    size_t gz_len = 0;
    FILE *f = open_memstream(&gz, &gz_len);
    struct capture_reader *r = capture_reader_mem(cap, len);
    *rc = (wall ? pprof_write_wall : pprof_write)(r, f, NULL, err, errlen);
    capture_reader_free(r);
    fclose(f);
    pp_profile *p = NULL;
    size_t n;
    unsigned char *raw = *rc >= 0 ? tu_gunzip(gz, gz_len, &n) : NULL;
    if (raw)
        p = perftools__profiles__profile__unpack(NULL, n, raw);
    free(raw), free(gz);
    return p;
}

static pp_profile *export_mem(const char *cap, size_t len, int *rc, char *err, size_t errlen)
{
    return export_weighted(cap, len, false, rc, err, errlen);
}

static pp_profile *export_fixture_weighted(const char *name, bool wall, int want_rc)
{
    char err[300] = "";
    char *path = tu_capture_path(name);
    size_t len;
    char *cap = tu_read_file(path, &len);
    ck_assert_ptr_nonnull(cap);
    int rc;
    pp_profile *p = export_weighted(cap, len, wall, &rc, err, sizeof err);
    ck_assert_msg(rc == want_rc, "%s: rc %d: %s", name, rc, err);
    ck_assert_msg(p != NULL, "%s: not a gzipped Profile", name);
    free(cap), free(path);
    return p;
}

static pp_profile *export_fixture(const char *name, int want_rc)
{
    return export_fixture_weighted(name, false, want_rc);
}

static const char *str(const pp_profile *p, int64_t i)
{
    ck_assert(i >= 0 && (size_t)i < p->n_string_table);
    return p->string_table[i];
}

static const Perftools__Profiles__Location *loc(const pp_profile *p, uint64_t id)
{
    for (size_t i = 0; i < p->n_location; i++)
        if (p->location[i]->id == id)
            return p->location[i];
    ck_abort_msg("no location %llu", (unsigned long long)id);
    return NULL;
}

static const Perftools__Profiles__Function *fn(const pp_profile *p, uint64_t id)
{
    for (size_t i = 0; i < p->n_function; i++)
        if (p->function[i]->id == id)
            return p->function[i];
    ck_abort_msg("no function %llu", (unsigned long long)id);
    return NULL;
}

/* A sample's stack as "leaf:line<caller:line<..." */
static void stack_text(const pp_profile *p, const Perftools__Profiles__Sample *s, char *buf,
                       size_t cap)
{
    size_t n = 0;
    buf[0] = 0;
    for (size_t i = 0; i < s->n_location_id; i++) {
        const Perftools__Profiles__Location *l = loc(p, s->location_id[i]);
        ck_assert_uint_eq(l->n_line, 1);
        n += (size_t)snprintf(buf + n, cap - n, "%s%s:%lld", i ? "<" : "",
                              str(p, fn(p, l->line[0]->function_id)->name),
                              (long long)l->line[0]->line);
        ck_assert_uint_lt(n, cap);
    }
    /* a numeric label, as " key=N" (only a task's: the others have none) */
    for (size_t i = 0; i < s->n_label; i++) {
        const Perftools__Profiles__Label *l = s->label[i];
        ck_assert_int_eq(l->str, 0);
        ck_assert_int_eq(l->num_unit, 0);
        n += (size_t)snprintf(buf + n, cap - n, " %s=%lld", str(p, l->key), (long long)l->num);
        ck_assert_uint_lt(n, cap);
    }
}

struct want_sample {
    const char *stack;
    int64_t v[3];
};

/* Every sample's stack and values, summed by stack, are `want` exactly. */
static void expect_samples(const pp_profile *p, const struct want_sample *want, size_t n_want)
{
    int64_t got[16][3] = {{0}};
    for (size_t i = 0; i < p->n_sample; i++) {
        char buf[512];
        stack_text(p, p->sample[i], buf, sizeof buf);
        size_t k = 0;
        while (k < n_want && strcmp(want[k].stack, buf) != 0)
            k++;
        ck_assert_msg(k < n_want, "unexpected sample stack %s", buf);
        ck_assert_uint_eq(p->sample[i]->n_value, p->n_sample_type);
        for (size_t v = 0; v < p->sample[i]->n_value; v++)
            got[k][v] += p->sample[i]->value[v];
    }
    for (size_t k = 0; k < n_want; k++)
        for (size_t v = 0; v < p->n_sample_type; v++)
            ck_assert_msg(got[k][v] == want[k].v[v], "%s value %zu: %lld, want %lld", want[k].stack,
                          v, (long long)got[k][v], (long long)want[k].v[v]);
}

static void expect_type(const pp_profile *p, size_t i, const char *type, const char *unit)
{
    ck_assert_uint_gt(p->n_sample_type, i);
    ck_assert_str_eq(str(p, p->sample_type[i]->type), type);
    ck_assert_str_eq(str(p, p->sample_type[i]->unit), unit);
}

/* cpu-simple (its header has the line starts): main 2, parse 6, split 9,
 * render 12 declared; calls main>parse at line 3, parse>split at 7,
 * main>render at 4; leaf statements split 10, render 13, and main's and
 * parse's own samples on their call lines 3 and 7.  1000 Hz: 1 ms each. */
START_TEST(cpu_fixture_by_hand)
{
    pp_profile *p = export_fixture("cpu-simple", 0);
    ck_assert_uint_eq(p->n_sample_type, 2);
    expect_type(p, 0, "samples", "count");
    expect_type(p, 1, "cpu", "nanoseconds");
    ck_assert_ptr_nonnull(p->period_type);
    ck_assert_str_eq(str(p, p->period_type->type), "cpu");
    ck_assert_str_eq(str(p, p->period_type->unit), "nanoseconds");
    ck_assert_int_eq(p->period, 1000000);
    ck_assert_str_eq(str(p, p->default_sample_type), "cpu");
    ck_assert_int_eq(p->duration_nanos, 10000000);
    static const struct want_sample want[] = {
        {"app.split:10<app.parse:7<app.main:3", {5, 5000000}},
        {"app.parse:7<app.main:3", {2, 2000000}},
        {"app.render:13<app.main:4", {2, 2000000}},
        {"app.main:3", {1, 1000000}},
    };
    expect_samples(p, want, 4);
    static const struct {
        const char *name;
        int64_t start;
    } decl[] = {{"app.main", 2}, {"app.parse", 6}, {"app.split", 9}, {"app.render", 12}};
    ck_assert_uint_eq(p->n_function, 4);
    for (size_t i = 0; i < 4; i++) {
        const Perftools__Profiles__Function *f = p->function[i];
        ck_assert_str_eq(str(p, f->name), decl[i].name);
        ck_assert_str_eq(str(p, f->system_name), decl[i].name);
        ck_assert_str_eq(str(p, f->filename), "src/main.jett");
        ck_assert_int_eq(f->start_line, decl[i].start);
    }
    perftools__profiles__profile__free_unpacked(p, NULL);
}
END_TEST

/* cpu-states: of 9 samples only the 3 jett ones have a Jett stack
 * (main's own 2 on line 3; 1 in the native symbol called from line 3,
 * which has no source: line 0); runtime 3, waiting 2 and unavailable 1
 * are named in a comment only. */
START_TEST(cpu_states_leave_out_stackless_samples)
{
    pp_profile *p = export_fixture("cpu-states", 0);
    static const struct want_sample want[] = {
        {"st.main:3", {2, 2000000}},
        {"<runtime>.<unavailable-symbol>:0<st.main:3", {1, 1000000}},
    };
    expect_samples(p, want, 2);
    ck_assert_uint_eq(p->n_comment, 2);
    ck_assert_str_eq(str(p, p->comment[0]),
                     "jett: of the 9 samples recorded, this profile holds the 3 on Jett stacks "
                     "and leaves out the runtime (3), waiting (2) and unavailable (1) ones.");
    ck_assert_str_eq(str(p, p->comment[1]),
                     "jett: of the 12 ticks requested, the samples took 9; 2 were coalesced (the "
                     "program was running Jett code and took no stack) and 1 dropped, and are in "
                     "no sample.");
    perftools__profiles__profile__free_unpacked(p, NULL);
    /* --weight wall: all 12 requested ticks.  The waiting sample 4 above
     * main at an unknown line; at the root the waiting sample 5 (no
     * stack), the 3 runtime and 1 unavailable samples, the 2 coalesced
     * and 1 dropped ticks, each the only Location of its sample, of a
     * function after the identities, with no file. */
    p = export_fixture_weighted("cpu-states", true, 0);
    static const struct want_sample wall[] = {
        {"st.main:3", {2, 2000000}},
        {"<runtime>.<unavailable-symbol>:0<st.main:3", {1, 1000000}},
        {"<runtime>.<waiting>:0<st.main:0", {1, 1000000}},
        {"<runtime>.<waiting>:0", {1, 1000000}},
        {"<runtime>.<coalesced>:0", {2, 2000000}},
        {"<runtime>.<runtime>:0", {3, 3000000}},
        {"<runtime>.<unavailable>:0", {1, 1000000}},
        {"<runtime>.<dropped>:0", {1, 1000000}},
    };
    expect_samples(p, wall, 8);
    ck_assert_uint_eq(p->n_sample, 8);
    ck_assert_uint_eq(p->n_function, 2 + 5);
    for (size_t i = 2; i < 7; i++)
        ck_assert_int_eq(p->function[i]->filename, 0);
    ck_assert_uint_eq(p->n_comment, 2);
    ck_assert_str_eq(str(p, p->comment[0]),
                     "jett: every one of the 9 samples recorded is in this profile: at their "
                     "stacks the jett samples (3) and the waiting ones that have a stack (1, under "
                     "<runtime>.<waiting>); at the root the waiting samples without a stack (1, "
                     "<runtime>.<waiting>), the runtime samples (3, <runtime>.<runtime>) and the "
                     "unavailable ones (1, <runtime>.<unavailable>).");
    ck_assert_str_eq(str(p, p->comment[1]),
                     "jett: every one of the 12 ticks requested is in this profile: the samples "
                     "(9), the coalesced ticks (2, <runtime>.<coalesced>: the program was running "
                     "Jett code and took no stack) and the dropped ones (1, <runtime>.<dropped>).");
    perftools__profiles__profile__free_unpacked(p, NULL);
}
END_TEST

/* --weight wall on cpu-calls (its header has the lines): the 12 jett
 * samples as without it, and the 13 waiting ones with a stack under the
 * <runtime>.<waiting> function (no file, line 0) above wait at its
 * sleep(5), line 33: 8 called from retry's line 30 (called from main's
 * 8), 5 from main's line 9.  At the root the waiting sample without a
 * stack, the runtime one, 2 coalesced and 1 dropped ticks: 30 in all,
 * the requested ticks.  Sample types samples/count and wall/nanoseconds,
 * the period type wall. */
START_TEST(wall_weight_by_hand)
{
    pp_profile *p = export_fixture_weighted("cpu-calls", true, 0);
    expect_type(p, 0, "samples", "count");
    expect_type(p, 1, "wall", "nanoseconds");
    ck_assert_str_eq(str(p, p->period_type->type), "wall");
    ck_assert_str_eq(str(p, p->default_sample_type), "wall");
    static const struct want_sample want[] = {
        {"idx.by:27<idx.rank:24<idx.main:6", {4, 4000000}},
        {"idx.rank:24<idx.main:6", {2, 2000000}},
        {"idx.add:18<idx.main:5", {2, 2000000}},
        {"idx.skip:21<idx.main:5", {1, 1000000}},
        {"idx.pick:15<idx.main:4", {1, 1000000}},
        {"idx.docs:12<idx.main:3", {1, 1000000}},
        {"idx.main:5", {1, 1000000}},
        {"<runtime>.<waiting>:0<idx.wait:33<idx.retry:30<idx.main:8", {8, 8000000}},
        {"<runtime>.<waiting>:0<idx.wait:33<idx.main:9", {5, 5000000}},
        {"<runtime>.<waiting>:0", {1, 1000000}},
        {"<runtime>.<coalesced>:0", {2, 2000000}},
        {"<runtime>.<runtime>:0", {1, 1000000}},
        {"<runtime>.<dropped>:0", {1, 1000000}},
    };
    expect_samples(p, want, 13);
    ck_assert_uint_eq(p->n_function, 9 + 5);
    static const char *const pseudo[] = {"<runtime>.<waiting>", "<runtime>.<coalesced>",
                                         "<runtime>.<runtime>", "<runtime>.<unavailable>",
                                         "<runtime>.<dropped>"};
    for (size_t i = 0; i < 5; i++) {
        ck_assert_str_eq(str(p, p->function[9 + i]->name), pseudo[i]);
        ck_assert_int_eq(p->function[9 + i]->filename, 0);
    }
    ck_assert_str_eq(str(p, p->comment[0]),
                     "jett: every one of the 27 samples recorded is in this profile: at their "
                     "stacks the jett samples (12) and the waiting ones that have a stack (13, "
                     "under <runtime>.<waiting>); at the root the waiting samples without a stack "
                     "(1, <runtime>.<waiting>), the runtime samples (1, <runtime>.<runtime>) and "
                     "the unavailable ones (0, <runtime>.<unavailable>).");
    perftools__profiles__profile__free_unpacked(p, NULL);
    /* the default leaves the waiting samples out */
    p = export_fixture("cpu-calls", 0);
    ck_assert_uint_eq(p->n_function, 9);
    ck_assert_str_eq(str(p, p->default_sample_type), "cpu");
    perftools__profiles__profile__free_unpacked(p, NULL);
    /* a memory capture has no waiting samples: -2, nothing written */
    char err[300] = "", *path = tu_capture_path("mem-churn");
    size_t len;
    char *cap = tu_read_file(path, &len);
    int rc;
    ck_assert_ptr_null(export_weighted(cap, len, true, &rc, err, sizeof err));
    ck_assert_int_eq(rc, -2);
    ck_assert_str_eq(err, "--weight wall does not apply to a memory capture");
    free(cap), free(path);
}
END_TEST

/* tiny-memory (offsets in its header; lines: store 3, put's body 6, main
 * 10-13).  <init> allocates 64 at line 3 (id1, grown to 128 by put at
 * line 6, called from main's line 12: 64 bytes there); main allocates 80
 * at 10 (id2, grown by 32 at 11), 25 at 12 (id3) and 31 at 13 (id4,
 * freed).  Live at exit: id1 128 (created at <init>, one line: on it),
 * id2 112 + id3 25 = 137 created by main on several lines: line 0. */
START_TEST(memory_fixture_by_hand)
{
    pp_profile *p = export_fixture("tiny-memory", 0);
    ck_assert_uint_eq(p->n_sample_type, 3);
    expect_type(p, 0, "alloc_objects", "count");
    expect_type(p, 1, "alloc_space", "bytes");
    expect_type(p, 2, "inuse_space", "bytes");
    ck_assert_str_eq(str(p, p->default_sample_type), "inuse_space");
    ck_assert_ptr_null(p->period_type);
    static const struct want_sample want[] = {
        {"cache.<init>:3", {1, 64, 128}},
        {"cache.main:10", {1, 80, 0}},
        {"cache.main:11", {0, 32, 0}},
        {"cache.main:12", {1, 25, 0}},
        {"cache.main:13", {1, 31, 0}},
        {"cache.main:0", {0, 0, 137}},
        {"cache.put:6<cache.main:12", {0, 64, 0}},
    };
    expect_samples(p, want, 7);
    perftools__profiles__profile__free_unpacked(p, NULL);
}
END_TEST

/* mem-frees: frees credit the creating stack; 100 bytes stay at grow. */
START_TEST(memory_frees_by_hand)
{
    pp_profile *p = export_fixture("mem-frees", 0);
    static const struct want_sample want[] = {
        {"app.make:0<app.main:2", {2, 1200, 0}},
        {"app.grow:0<app.main:2", {1, 300, 100}},
    };
    expect_samples(p, want, 2);
    perftools__profiles__profile__free_unpacked(p, NULL);
}
END_TEST

/* cpu-tasks (its header): each sample carries its task as the numeric
 * label `task`, so that `go tool pprof -tagfocus task=3` shows one
 * task; main's own sample on line 3, work's on the call line 9 (called
 * from no frame: a task's root), crunch's on line 12. */
START_TEST(cpu_tasks_labelled)
{
    pp_profile *p = export_fixture("cpu-tasks", 0);
    static const struct want_sample want[] = {
        {"app.main:3 task=1", {1, 1000000}},
        {"app.work:9 task=2", {1, 1000000}},
        {"app.work:9 task=3", {1, 1000000}},
        {"app.crunch:12<app.work:9 task=2", {3, 3000000}},
        {"app.crunch:12<app.work:9 task=3", {2, 2000000}},
    };
    expect_samples(p, want, 5);
    ck_assert_uint_eq(p->n_sample, 5); /* one per (stack, line, task) */
    perftools__profiles__profile__free_unpacked(p, NULL);
    /* --weight wall: task 1's two waiting samples at its join(a), line 5;
     * the two runtime samples at the root */
    p = export_fixture_weighted("cpu-tasks", true, 0);
    static const struct want_sample wall[] = {
        {"app.main:3 task=1", {1, 1000000}},
        {"<runtime>.<waiting>:0<app.main:5 task=1", {2, 2000000}},
        {"app.work:9 task=2", {1, 1000000}},
        {"app.work:9 task=3", {1, 1000000}},
        {"app.crunch:12<app.work:9 task=2", {3, 3000000}},
        {"app.crunch:12<app.work:9 task=3", {2, 2000000}},
        {"<runtime>.<runtime>:0", {2, 2000000}}, /* task 2's and none's, no label */
    };
    expect_samples(p, wall, 7);
    perftools__profiles__profile__free_unpacked(p, NULL);
}
END_TEST

/* mem-tasks (its header): task 3 freed task 2's crunch allocation, so
 * task 2's crunch has no bytes in use; each task's live bytes stay on
 * the line that created them. */
START_TEST(memory_tasks_labelled)
{
    pp_profile *p = export_fixture("mem-tasks", 0);
    static const struct want_sample want[] = {
        {"app.main:3 task=1", {1, 32, 32}},
        {"app.work:9 task=2", {1, 16, 16}},
        {"app.crunch:12<app.work:9 task=2", {1, 64, 0}},
        {"app.crunch:12<app.work:9 task=3", {1, 48, 48}},
    };
    expect_samples(p, want, 4);
    perftools__profiles__profile__free_unpacked(p, NULL);
}
END_TEST

/* mem-budget stops tracking live allocations: no inuse_space then, and
 * a comment says why. */
/* A comment says what of the allocations and in-use bytes the profile
 * leaves out, having no Jett stack (mem-retained: 100 bytes created at
 * make, then 300 without a stack, all of them live at the end); with
 * the live bytes unknown (mem-budget) it gives the allocated bytes
 * alone. */
START_TEST(memory_comment_without_a_stack)
{
    pp_profile *p = export_fixture("mem-retained", 0);
    ck_assert_uint_eq(p->n_comment, 1);
    ck_assert_str_eq(str(p, p->comment[0]),
                     "jett: of the 2 allocations, 400 bytes allocated and 400 bytes in use at the "
                     "end, this profile holds those with a Jett stack; the 300 bytes allocated and "
                     "300 bytes in use without one are not in it.");
    perftools__profiles__profile__free_unpacked(p, NULL);
    p = export_fixture("mem-budget", 0);
    ck_assert_ptr_nonnull(strstr(str(p, p->comment[0]), " bytes allocated, this profile holds "
                                                        "those with a Jett stack; the "));
    ck_assert_ptr_null(strstr(str(p, p->comment[0]), "in use"));
    perftools__profiles__profile__free_unpacked(p, NULL);
}
END_TEST

START_TEST(memory_without_live_bytes)
{
    pp_profile *p = export_fixture("mem-budget", 0);
    ck_assert_uint_eq(p->n_sample_type, 2);
    expect_type(p, 1, "alloc_space", "bytes");
    ck_assert_str_eq(str(p, p->default_sample_type), "alloc_space");
    bool said = false;
    for (size_t i = 0; i < p->n_comment; i++)
        said |= strstr(str(p, p->comment[i]), "inuse_space is unavailable") != NULL;
    ck_assert(said);
    perftools__profiles__profile__free_unpacked(p, NULL);
}
END_TEST

/* tiny-memory cut just before its FINISH: its retained bytes are unknown
 * (jett-export(1)), so inuse_space is left out as for mem-budget, and the
 * comment says why; alloc_space keeps every event read. */
START_TEST(memory_cut_short_without_inuse)
{
    char *path = tu_capture_path("tiny-memory");
    size_t len;
    char *cap = tu_read_file(path, &len), err[300] = "";
    ck_assert_ptr_nonnull(cap);
    int rc;
    pp_profile *p = export_mem(cap, tu_before_last_frame(cap, len), &rc, err, sizeof err);
    ck_assert_msg(rc == 1 && p != NULL, "rc %d: %s", rc, err);
    ck_assert_uint_eq(p->n_sample_type, 2);
    expect_type(p, 1, "alloc_space", "bytes");
    ck_assert_str_eq(str(p, p->default_sample_type), "alloc_space");
    bool said = false;
    for (size_t i = 0; i < p->n_comment; i++)
        said |= strcmp(str(p, p->comment[i]),
                       "jett: inuse_space is unavailable: the capture ends before FINISH, so the "
                       "bytes live at the run's exit are unknown") == 0;
    ck_assert(said);
    perftools__profiles__profile__free_unpacked(p, NULL);
    free(cap), free(path);
}
END_TEST

/* Whether string i is referenced as a name, file, type or comment. */
static bool referenced(const pp_profile *p, int64_t i)
{
    for (size_t k = 0; k < p->n_function; k++)
        if (p->function[k]->name == i || p->function[k]->filename == i)
            return true;
    for (size_t k = 0; k < p->n_sample_type; k++)
        if (p->sample_type[k]->type == i || p->sample_type[k]->unit == i)
            return true;
    for (size_t k = 0; k < p->n_comment; k++)
        if (p->comment[k] == i)
            return true;
    for (size_t k = 0; k < p->n_mapping; k++)
        if (p->mapping[k]->filename == i)
            return true;
    for (size_t k = 0; k < p->n_sample; k++)
        for (size_t l = 0; l < p->sample[k]->n_label; l++)
            if (p->sample[k]->label[l]->key == i)
                return true;
    return false;
}

/* The structure a reader relies on: string 0 empty, ids nonzero and
 * unique, every reference resolved, one value per sample type; and only
 * names, logical paths and our own words in the string table. */
static void check_structure(const char *name, const pp_profile *p)
{
    ck_assert_msg(p->n_string_table > 0 && strcmp(p->string_table[0], "") == 0, "%s", name);
    for (size_t i = 1; i < p->n_string_table; i++) {
        const char *s = p->string_table[i];
        ck_assert_msg(s[0] != '/', "%s: absolute path %s", name, s);
        ck_assert_msg(referenced(p, (int64_t)i), "%s: string %zu '%s' is unused", name, i, s);
    }
    for (size_t i = 0; i < p->n_function; i++) {
        const Perftools__Profiles__Function *f = p->function[i];
        ck_assert_msg(f->id != 0, "%s", name);
        for (size_t k = 0; k < i; k++)
            ck_assert_msg(p->function[k]->id != f->id, "%s: function id %llu twice", name,
                          (unsigned long long)f->id);
        ck_assert_msg(strchr(str(p, f->name), '.') != NULL, "%s: name %s", name, str(p, f->name));
    }
    for (size_t i = 0; i < p->n_location; i++) {
        const Perftools__Profiles__Location *l = p->location[i];
        ck_assert_msg(l->id != 0 && l->n_line == 1 && l->line[0]->line >= 0, "%s", name);
        for (size_t k = 0; k < i; k++)
            ck_assert_msg(p->location[k]->id != l->id, "%s: location id twice", name);
        fn(p, l->line[0]->function_id);
        ck_assert_msg(l->mapping_id == 1 && p->n_mapping == 1 && p->mapping[0]->id == 1, "%s",
                      name);
    }
    for (size_t i = 0; i < p->n_sample; i++) {
        ck_assert_uint_eq(p->sample[i]->n_value, p->n_sample_type);
        ck_assert_msg(p->sample[i]->n_location_id > 0, "%s", name);
        for (size_t k = 0; k < p->sample[i]->n_location_id; k++)
            loc(p, p->sample[i]->location_id[k]);
    }
}

START_TEST(every_fixture_is_well_formed)
{
    char *dir = tu_build_path("fixtures");
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    unsigned n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".jcap") != 0)
            continue;
        char path[800], err[300] = "";
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t cap_len;
        char *cap = tu_read_file(path, &cap_len);
        int rc;
        pp_profile *p = export_mem(cap, cap_len, &rc, err, sizeof err);
        ck_assert_msg(rc == 0 && p != NULL, "%s: rc %d: %s", e->d_name, rc, err);
        check_structure(e->d_name, p);
        perftools__profiles__profile__free_unpacked(p, NULL);
        free(cap);
        n++;
    }
    closedir(d);
    free(dir);
    ck_assert_uint_ge(n, 20);
}
END_TEST

/* cpu-hostile's source holds (blanked) literals, a secret span and
 * comments: only names, the logical path and our words are in the
 * table, never a line of its text. */
START_TEST(hostile_source_stays_out)
{
    pp_profile *p = export_fixture("cpu-hostile", 0);
    check_structure("cpu-hostile", p);
    for (size_t i = 0; i < p->n_string_table; i++) {
        ck_assert_ptr_null(strstr(p->string_table[i], "let "));
        ck_assert_ptr_null(strstr(p->string_table[i], "fn "));
    }
    perftools__profiles__profile__free_unpacked(p, NULL);
}
END_TEST

/* cpu-ties has a project, a dependency and a standard library source:
 * their file names are paths from the project's root (a dependency's
 * NAME/... under deps/, a standard library file as it lies under jett's
 * data folder), so that go tool pprof -list finds them from there. */
START_TEST(file_names_resolve_from_the_root)
{
    pp_profile *p = export_fixture("cpu-ties", 0);
    static const char *const want[] = {"src/a.jett", "src/b.jett", "deps/textkit/x.jett",
                                       "stdlib/std/x.jett"};
    bool seen[4] = {false, false, false, false};
    for (size_t i = 0; i < p->n_function; i++) {
        const char *file = str(p, p->function[i]->filename);
        size_t k = 0;
        while (k < 4 && strcmp(file, want[k]) != 0)
            k++;
        ck_assert_msg(k < 4, "file name %s", file);
        seen[k] = true;
    }
    for (size_t k = 0; k < 4; k++)
        ck_assert_msg(seen[k], "no function in %s", want[k]);
    perftools__profiles__profile__free_unpacked(p, NULL);
}
END_TEST

/* names-escape: every name and path in the string table as
 * jett-profile(7)'s Escaped text shows it. */
START_TEST(names_escaped)
{
    pp_profile *p = export_fixture("names-escape", 0);
    static const char *const want[] = {
        "app.main",
        "esc.red\\x1b[31mtext",
        "nl.two\\x0alines\\x0dcr\\x09tab",
        "bidi.user\\xe2\\x80\\xaetxt.exe\\xe2\\x81\\xa6",
        "zw.a\\xe2\\x80\\x8bb\\xef\\xbb\\xbfc\\xc2\\xadd\\xd8\\x9ce\\xe2\\x80\\x8f",
        "c1.del\\x7fnel\\xc2\\x85tag\\xf3\\xa0\\x81\\x81non\\xef\\xbf\\xbe"};
    ck_assert_uint_eq(p->n_function, 6);
    for (size_t i = 0; i < 6; i++) {
        const Perftools__Profiles__Function *f = p->function[i];
        ck_assert_str_eq(str(p, f->name), want[i]);
        ck_assert_str_eq(str(p, f->system_name), want[i]);
        ck_assert_str_eq(str(p, f->filename), i ? "" : "src/ma\\xe2\\x80\\xaein.jett");
    }
    perftools__profiles__profile__free_unpacked(p, NULL);
}
END_TEST

/* A capture cut short: what was read is exported (a valid profile) and
 * the error names the byte where reading stopped. */
START_TEST(damaged_capture_exports_what_was_read)
{
    char *path = tu_build_path("fixtures/cpu-simple.jcap");
    size_t len;
    char *cap = tu_read_file(path, &len);
    char err[300] = "";
    int rc;
    pp_profile *p = export_mem(cap, len - 5, &rc, err, sizeof err);
    ck_assert_int_eq(rc, 1);
    ck_assert_msg(strncmp(err, "byte ", 5) == 0 && strstr(err, "cut short"), "%s", err);
    ck_assert_ptr_nonnull(p);
    check_structure("cut cpu-simple", p);
    /* its FINISH was cut: the coalesced and dropped ticks are unknown */
    ck_assert_uint_eq(p->n_comment, 3);
    ck_assert_str_eq(str(p, p->comment[0]),
                     "jett: of the 10 samples recorded, this profile holds the 10 on Jett stacks "
                     "and leaves out the runtime (0), waiting (0) and unavailable (0) ones.");
    ck_assert_str_eq(str(p, p->comment[1]),
                     "jett: the coalesced and dropped ticks are unknown (no FINISH).");
    ck_assert_str_eq(str(p, p->comment[2]), "jett: the profile is partial (collector_failure)");
    perftools__profiles__profile__free_unpacked(p, NULL);
    const char junk[] = "not a capture";
    ck_assert_ptr_null(export_mem(junk, sizeof junk, &rc, err, sizeof err));
    ck_assert_int_eq(rc, -1);
    free(cap), free(path);
}
END_TEST

Suite *pprof_suite(void)
{
    Suite *s = suite_create("pprof");
    TCase *t = tcase_create("pprof");
    tcase_add_test(t, cpu_fixture_by_hand);
    tcase_add_test(t, wall_weight_by_hand);
    tcase_add_test(t, cpu_states_leave_out_stackless_samples);
    tcase_add_test(t, memory_fixture_by_hand);
    tcase_add_test(t, memory_frees_by_hand);
    tcase_add_test(t, memory_without_live_bytes);
    tcase_add_test(t, memory_cut_short_without_inuse);
    tcase_add_test(t, memory_comment_without_a_stack);
    tcase_add_test(t, cpu_tasks_labelled);
    tcase_add_test(t, memory_tasks_labelled);
    tcase_add_test(t, every_fixture_is_well_formed);
    tcase_add_test(t, hostile_source_stays_out);
    tcase_add_test(t, file_names_resolve_from_the_root);
    tcase_add_test(t, names_escaped);
    tcase_add_test(t, damaged_capture_exports_what_was_read);
    suite_add_tcase(s, t);
    return s;
}
