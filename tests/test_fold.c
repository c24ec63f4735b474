/* Tests of proto/fold: folded stacks and memory weights of the fixture
 * captures and of small captures written here, every number computed by
 * hand from the captures' event lines (the comments show the sums). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/captext.h"
#include "daemon/export/fold.h"
#include "daemon/feed.h"
#include "deep_capture.h"
#include "one_frame_stacks.h"
#include "testutil.h"

#define MEM_HELLO                                                                                  \
    "HELLO version=1 mode=memory rate_hz=0 threshold_bp=500 limit=10 cpu_budget=33554432 "         \
    "retention_budget=67108864 stack_budget=16777216 backend=\"interpreter_alloc_hooks\" "         \
    "capabilities=jett_heap_allocation_hooks,free_and_resize_events colour=false\n"
#define CPU_HELLO                                                                                  \
    "HELLO version=1 mode=cpu rate_hz=1000 threshold_bp=500 limit=10 cpu_budget=33554432 "         \
    "retention_budget=67108864 stack_budget=16777216 backend=\"interpreter_safe_point\" "          \
    "capabilities=cpu_tick_source colour=false\n"
#define FINISH                                                                                     \
    "FINISH termination=returned wall_ns=1 cpu_ns=1 requested=0 coalesced=0 dropped=0 "            \
    "collector_failure=false stack_limit=false\n"

/* A capture's bytes: a built fixture or packed text. */
struct bytes {
    char *data;
    size_t len;
};

static struct bytes fixture(const char *name)
{
    char *path = tu_capture_path(name);
    struct bytes b;
    b.data = tu_read_file(path, &b.len);
    ck_assert_msg(b.data != NULL, "cannot read %s", path);
    free(path);
    return b;
}

static struct bytes pack(const char *text)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    char err[320];
    int rc = captext_pack(text, strlen(text), &sb, err, sizeof err);
    ck_assert_msg(rc == 0, "pack: %s", err);
    return (struct bytes){sb.data, sb.size};
}

/* Folds b; returns the status with the message in err. */
static enum fold_status fold_names(struct bytes b, enum fold_weight w, enum fold_names names,
                                   struct fold **f, char *err, size_t errlen)
{
    struct capture_reader *r = capture_reader_mem(b.data, b.len);
    enum fold_status st = fold_read(r, w, names, f, err, errlen);
    capture_reader_free(r);
    return st;
}

static enum fold_status fold_bytes(struct bytes b, enum fold_weight w, struct fold **f, char *err,
                                   size_t errlen)
{
    return fold_names(b, w, FOLD_NAMES_EXACT, f, err, errlen);
}

static struct fold *fold_ok_names(struct bytes b, enum fold_weight w, enum fold_names names)
{
    struct fold *f = NULL;
    char err[400];
    enum fold_status st = fold_names(b, w, names, &f, err, sizeof err);
    ck_assert_msg(st == FOLD_OK, "fold: %s", err);
    return f;
}

static struct fold *fold_ok(struct bytes b, enum fold_weight w)
{
    return fold_ok_names(b, w, FOLD_NAMES_EXACT);
}

static char *collapsed(const struct fold *f)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    ck_assert_int_eq(fold_write_collapsed(f, m), 0);
    fclose(m);
    return buf;
}

static void expect_collapsed(struct bytes b, enum fold_weight w, const char *want)
{
    struct fold *f = fold_ok_names(b, w, FOLD_NAMES_COLLAPSED);
    char *got = collapsed(f);
    ck_assert_str_eq(got, want);
    free(got);
    fold_free(f);
}

/* The collapsed lines of b folded by task. */
static void expect_by_task(struct bytes b, enum fold_weight w, const char *want)
{
    struct capture_reader *r = capture_reader_mem(b.data, b.len);
    struct fold *f = NULL;
    char err[400];
    enum fold_status st = fold_read_by_task(r, w, FOLD_NAMES_COLLAPSED, &f, err, sizeof err);
    capture_reader_free(r);
    ck_assert_msg(st == FOLD_OK, "fold: %s", err);
    ck_assert(fold_by_task(f));
    char *got = collapsed(f);
    ck_assert_str_eq(got, want);
    free(got);
    fold_free(f);
}

/* The child of node `n` named `name`, or NULL. */
static const struct fold_node *child(const struct fold *f, const struct fold_node *n,
                                     const char *name)
{
    for (uint32_t i = 0; i < n->n_children; i++) {
        const struct fold_node *c = fold_node(f, fold_child(f, n, i));
        size_t len;
        const char *s = fold_node_name(f, c, &len);
        if (len == strlen(name) && memcmp(s, name, len) == 0)
            return c;
    }
    return NULL;
}

/* tiny-cpu: seq 1 at stack 0 (app.main); seq 2 and 3 at stack 1
 * (app.main -> app.work).  So main 1, main;work 2, three jett samples. */
START_TEST(tiny_cpu)
{
    struct bytes b = fixture("tiny-cpu");
    expect_collapsed(b, FOLD_WEIGHT_DEFAULT, "app.main 1\napp.main;app.work 2\n");
    struct fold *f = fold_ok(b, FOLD_WEIGHT_SAMPLES);
    const struct fold_totals *t = fold_totals(f);
    ck_assert_uint_eq(t->samples, 3);
    ck_assert_uint_eq(t->jett_samples, 3);
    ck_assert_uint_eq(t->weight_total, 3);
    ck_assert_uint_eq(t->weight_attributed, 3);
    ck_assert_ptr_null(fold_partial_reason(f));
    ck_assert_int_eq(fold_weight(f), FOLD_WEIGHT_SAMPLES);
    const struct fold_node *root = fold_node(f, FOLD_ROOT);
    ck_assert_uint_eq(root->total, 3);
    ck_assert_uint_eq(root->n_children, 1);
    const struct fold_node *main_ = child(f, root, "app.main");
    ck_assert_ptr_nonnull(main_);
    ck_assert_uint_eq(main_->self, 1);
    ck_assert_uint_eq(main_->total, 3);
    const struct fold_node *work = child(f, main_, "app.work");
    ck_assert_ptr_nonnull(work);
    ck_assert_uint_eq(work->self, 2);
    ck_assert_uint_eq(work->total, 2);
    ck_assert_uint_eq(fold_max_depth(f), 2);
    fold_free(f);
    free(b.data);
}
END_TEST

/* every-record: four samples, one of each state; only seq 1 (jett, stack
 * 2 = main -> split -> upper) is folded; the waiting sample at stack 1 is
 * not.  Its ALLOC events (allocate 0 bytes, resize 0 -> 4096, free) are
 * collector errors in a CPU profile, which counts none of them, and the
 * fold's numbers are the profile's (they were 1 allocation, 1 resize, 1
 * free and 4096 bytes while the export decoded the capture itself).
 * FINISH has both failure flags; collector_failure wins. */
START_TEST(every_record)
{
    struct bytes b = fixture("every-record");
    expect_collapsed(b, FOLD_WEIGHT_DEFAULT,
                     "app.main;textkit.split \"quoted\", with: colon;std.text.upper 1\n");
    struct fold *f = fold_ok(b, FOLD_WEIGHT_DEFAULT);
    const struct fold_totals *t = fold_totals(f);
    ck_assert_uint_eq(t->samples, 4);
    ck_assert_uint_eq(t->jett_samples, 1);
    ck_assert_uint_eq(t->runtime_samples, 1);
    ck_assert_uint_eq(t->waiting_samples, 1);
    ck_assert_uint_eq(t->unavailable_samples, 1);
    ck_assert_uint_eq(t->weight_total, 4);
    ck_assert_uint_eq(t->weight_attributed, 1);
    ck_assert_uint_eq(t->allocations, 0);
    ck_assert_uint_eq(t->resizes, 0);
    ck_assert_uint_eq(t->frees, 0);
    ck_assert_uint_eq(t->allocated_bytes, 0);
    ck_assert_uint_eq(t->freed_bytes, 0);
    ck_assert_uint_eq(t->peak_live_bytes, 0);
    ck_assert_uint_eq(t->retained_bytes, 0);
    ck_assert_str_eq(fold_partial_reason(f), "collector_failure");
    fold_free(f);
    free(b.data);
}
END_TEST

/* tiny-memory, event by event (stacks: 0 = <init>, 1 = main,
 * 2 = main -> put; sites are creation stacks):
 *   1 allocate id1 64 @0      live <init> 64            total  64
 *   2 allocate id2 80 @1      live main 80              total 144
 *   3 resize id2 80->112 @1   growth 32 at main; main 112  total 176
 *   4 allocate id3 25 @1      main 137                  total 201
 *   5 resize id1 64->128 @2   growth 64 at main;put; <init> 128  total 265
 *   6 allocate id4 31 @1      main 168                  total 296 (peak)
 *   7 free id4 31             main 137                  total 265
 * allocated: <init> 64; main 80 + 32 + 25 + 31 = 168; main;put 64; 296.
 * count: <init> 1 (id1); main 3 (id2, id3, id4).
 * retained: <init> 128 (id1); main 112 + 25 = 137 (id2, id3); 265.
 * live-at-peak (after event 6): <init> 128; main 168; 296. */
START_TEST(tiny_memory_weights)
{
    struct bytes b = fixture("tiny-memory");
    expect_collapsed(b, FOLD_WEIGHT_DEFAULT,
                     "cache.<init> 64\ncache.main 168\ncache.main;cache.put 64\n");
    expect_collapsed(b, FOLD_WEIGHT_ALLOCATED,
                     "cache.<init> 64\ncache.main 168\ncache.main;cache.put 64\n");
    expect_collapsed(b, FOLD_WEIGHT_COUNT, "cache.<init> 1\ncache.main 3\n");
    expect_collapsed(b, FOLD_WEIGHT_RETAINED, "cache.<init> 128\ncache.main 137\n");
    expect_collapsed(b, FOLD_WEIGHT_LIVE_AT_PEAK, "cache.<init> 128\ncache.main 168\n");
    struct fold *f = fold_ok(b, FOLD_WEIGHT_RETAINED);
    const struct fold_totals *t = fold_totals(f);
    ck_assert_uint_eq(t->allocations, 4);
    ck_assert_uint_eq(t->resizes, 2);
    ck_assert_uint_eq(t->frees, 1);
    ck_assert_uint_eq(t->allocated_bytes, 296);
    ck_assert_uint_eq(t->freed_bytes, 31);
    ck_assert_uint_eq(t->peak_live_bytes, 296);
    ck_assert_uint_eq(t->retained_bytes, 265);
    ck_assert_uint_eq(t->weight_total, 265);
    ck_assert_uint_eq(t->weight_attributed, 265);
    fold_free(f);
    free(b.data);
}
END_TEST

/* hostile-names by the default weight (see hostile_names). */
static const char hostile_collapsed[] =
    "app.main 1\n"
    "app.main;app.work 2\n"
    "app.main;app.work;app.a_very_long_function_name_that_will_not_fit_in_a_narrow_frame 1\n"
    "app.main;ctl.tab\\x09here\\x01\\x7fend 1\n"
    "app.main;evil.<script>alert('x')</script> 1\n"
    "app.main;evil.<script>alert('x')</script>;q\"uote.a&b:c 2\n"
    "app.main;\xe6\x97\xa5\xe6\x9c\xac.\xe9\x96\xa2\xe6\x95\xb0 1\n";

/* hostile-names: samples at stacks 2, 2, 1, 3, 4, 5, 6, 7, 0 (jett), one
 * runtime, one waiting.  Stacks 4 and 5 are two FUNCs both shown as
 * app.work, so one frame: main;work 1 + 1 = 2.  ';' in "a&b;c" becomes
 * ':' and the control bytes of "tab\there\x01\x7fend" are shown as
 * \x09, \x01 and \x7f (jett-profile(7), Escaped text).
 * Sorted bytewise: after "app.main;" come 'a' < 'c' < 'e' < 0xe6 (日). */
START_TEST(hostile_names)
{
    struct bytes b = fixture("hostile-names");
    expect_collapsed(b, FOLD_WEIGHT_DEFAULT, hostile_collapsed);
    struct fold *f = fold_ok(b, FOLD_WEIGHT_DEFAULT);
    const struct fold_totals *t = fold_totals(f);
    ck_assert_uint_eq(t->samples, 11);
    ck_assert_uint_eq(t->jett_samples, 9);
    ck_assert_uint_eq(t->weight_attributed, 9);
    ck_assert_str_eq(fold_partial_reason(f), "stack_capture_limit");
    /* the tree keeps the real names; main's children sorted by name */
    const struct fold_node *main_ = child(f, fold_node(f, FOLD_ROOT), "app.main");
    ck_assert_uint_eq(main_->n_children, 4);
    size_t len;
    const char *first = fold_node_name(f, fold_node(f, fold_child(f, main_, 0)), &len);
    ck_assert_int_eq((int)len, 8);
    ck_assert_int_eq(memcmp(first, "app.work", 8), 0);
    const struct fold_node *ctl = child(f, main_,
                                        "ctl.tab\there\x01\x7f"
                                        "end");
    ck_assert_ptr_nonnull(ctl);
    ck_assert_uint_eq(ctl->total, 1);
    const struct fold_node *evil = child(f, main_, "evil.<script>alert('x')</script>");
    ck_assert_uint_eq(evil->total, 3);
    ck_assert_ptr_nonnull(child(f, evil, "q\"uote.a&b;c"));
    fold_free(f);
    free(b.data);
}
END_TEST

/* Live at peak is the value at the first moment of the global maximum,
 * even when sites change afterwards; events without a stack count in the
 * totals only.  Stacks 0 = m.a, 1 = m.b.
 *   1 allocate id1 100 @a        a 100            total 100
 *   2 allocate id2 50 @b         b 50             total 150 (peak 1)
 *   3 free id1                   a 0              total  50
 *   4 allocate id3 70 @b         b 120            total 120
 *   5 resize id2 50->10 @a       b 80 (shrink)    total  80
 *   6 allocate id4 200, no stack                  total 280 (peak 2: a 0, b 80)
 *   7 free id3 70                b 10             total 210
 * allocated: a 100, b 50 + 70 = 120; total 100 + 50 + 70 + 200 = 420.
 * count: a 1, b 2; total 4.  retained: b 10 (id2); total 10 + 200 = 210.
 * live-at-peak: b 80; total 280.  freed: 100 + 40 + 70 = 210. */
static const char peak_text[] = MEM_HELLO
    "FUNC id=0 namespace=\"m\" function=\"a\" source=- decl=-\n"
    "FUNC id=1 namespace=\"m\" function=\"b\" source=- decl=-\n"
    "STACK id=0 parent=- func=0 site=-\n"
    "STACK id=1 parent=- func=1 site=-\n"
    "ALLOC seq=1 op=allocate id=1 old=- new=100 task=- actor=- thread=0 stack=0 span=-\n"
    "ALLOC seq=2 op=allocate id=2 old=- new=50 task=- actor=- thread=0 stack=1 span=-\n"
    "ALLOC seq=3 op=free id=1 old=100 new=- task=- actor=- thread=0 stack=- span=-\n"
    "ALLOC seq=4 op=allocate id=3 old=- new=70 task=- actor=- thread=0 stack=1 span=-\n"
    "ALLOC seq=5 op=resize id=2 old=50 new=10 task=- actor=- thread=0 stack=0 span=-\n"
    "ALLOC seq=6 op=allocate id=4 old=- new=200 task=- actor=- thread=0 stack=- span=-\n"
    "ALLOC seq=7 op=free id=3 old=70 new=- task=- actor=- thread=0 stack=1 span=-\n" FINISH;

START_TEST(live_at_peak_is_lazy_and_exact)
{
    struct bytes b = pack(peak_text);
    expect_collapsed(b, FOLD_WEIGHT_ALLOCATED, "m.a 100\nm.b 120\n");
    expect_collapsed(b, FOLD_WEIGHT_COUNT, "m.a 1\nm.b 2\n");
    expect_collapsed(b, FOLD_WEIGHT_RETAINED, "m.b 10\n");
    expect_collapsed(b, FOLD_WEIGHT_LIVE_AT_PEAK, "m.b 80\n");
    static const struct {
        enum fold_weight w;
        uint64_t total, attributed;
    } want[] = {{FOLD_WEIGHT_ALLOCATED, 420, 220},
                {FOLD_WEIGHT_COUNT, 4, 3},
                {FOLD_WEIGHT_RETAINED, 210, 10},
                {FOLD_WEIGHT_LIVE_AT_PEAK, 280, 80}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        struct fold *f = fold_ok(b, want[i].w);
        ck_assert_uint_eq(fold_totals(f)->weight_total, want[i].total);
        ck_assert_uint_eq(fold_totals(f)->weight_attributed, want[i].attributed);
        ck_assert_uint_eq(fold_totals(f)->freed_bytes, 210);
        ck_assert_uint_eq(fold_totals(f)->peak_live_bytes, 280);
        fold_free(f);
    }
    free(b.data);
}
END_TEST

/* Many live allocations force the live table to grow and frees to shift
 * probe runs: 1000 allocations of 1..1000 bytes at m.a, then every odd id
 * freed.  Retained = the even sizes 2 + 4 + ... + 1000 = 2 * (500 * 501 / 2)
 * = 250500; live at peak = 1 + ... + 1000 = 500500. */
START_TEST(many_live_allocations)
{
    size_t cap = 200000, len = 0;
    char *text = malloc(cap);
    len += (size_t)snprintf(text + len, cap - len, "%s",
                            MEM_HELLO "FUNC id=0 namespace=\"m\" function=\"a\" source=- decl=-\n"
                                      "STACK id=0 parent=- func=0 site=-\n");
    for (int i = 1; i <= 1000; i++)
        len += (size_t)snprintf(text + len, cap - len,
                                "ALLOC seq=%d op=allocate id=%d old=- new=%d task=- actor=- "
                                "thread=0 stack=0 span=-\n",
                                i, i, i);
    for (int i = 1; i <= 1000; i += 2)
        len += (size_t)snprintf(text + len, cap - len,
                                "ALLOC seq=%d op=free id=%d old=%d new=- task=- actor=- "
                                "thread=0 stack=- span=-\n",
                                1000 + i, i, i);
    snprintf(text + len, cap - len, "%s", FINISH);
    struct bytes b = pack(text);
    expect_collapsed(b, FOLD_WEIGHT_RETAINED, "m.a 250500\n");
    expect_collapsed(b, FOLD_WEIGHT_LIVE_AT_PEAK, "m.a 500500\n");
    expect_collapsed(b, FOLD_WEIGHT_COUNT, "m.a 1000\n");
    free(b.data), free(text);
}
END_TEST

/* Folds a memory capture whose first frame allocates 8 bytes (id 1) at
 * m.a and whose second holds `events`: partial, collector_failure, and
 * the collapsed lines `want` (by weight allocated). */
static void expect_collector_error(const char *events, const char *want)
{
    char text[2048];
    snprintf(text, sizeof text,
             MEM_HELLO "FUNC id=0 namespace=\"m\" function=\"a\" source=- decl=-\n"
                       "EVENTS\n"
                       "STACK id=0 parent=- func=0 site=-\n"
                       "ALLOC seq=1 op=allocate id=1 old=- new=8 task=- actor=- thread=0 "
                       "stack=0 span=-\n"
                       "END\n"
                       "EVENTS\n%sEND\n" FINISH,
             events);
    struct bytes b = pack(text);
    struct fold *f = fold_ok_names(b, FOLD_WEIGHT_DEFAULT, FOLD_NAMES_COLLAPSED);
    ck_assert_str_eq(fold_partial_reason(f), "collector_failure");
    ck_assert_ptr_null(fold_damage(f));
    char *got = collapsed(f);
    ck_assert_str_eq(got, want);
    free(got);
    fold_free(f);
    free(b.data);
}

/* Inconsistent allocation events are the profile's collector errors:
 * the capture is exported with the numbers the profile reports (they
 * were refused before, one consumer refusing what the other accepted).
 *   free of id 9, never allocated: ignored; m.a keeps its 8 bytes
 *   resize id1 7 -> 9 while it holds 8: the tracked 8 is kept, growth
 *     9 - 8 = 1 at m.a: 9
 *   allocate id 1 again: ignored: 8 */
START_TEST(inconsistent_allocations_are_collector_errors)
{
    expect_collector_error(
        "ALLOC seq=2 op=free id=9 old=8 new=- task=- actor=- thread=0 stack=- span=-\n", "m.a 8\n");
    expect_collector_error(
        "ALLOC seq=2 op=resize id=1 old=7 new=9 task=- actor=- thread=0 stack=0 span=-\n",
        "m.a 9\n");
    /* a reused id (allocate id 1 again) is a wire rule now: pack refuses
     * it (line 8, the second EVENTS' entry) as the daemon does */
    char text[2048], perr[320];
    snprintf(text, sizeof text,
             MEM_HELLO "FUNC id=0 namespace=\"m\" function=\"a\" source=- decl=-\n"
                       "EVENTS\nSTACK id=0 parent=- func=0 site=-\n"
                       "ALLOC seq=1 op=allocate id=1 old=- new=8 task=- actor=- thread=0 "
                       "stack=0 span=-\nEND\nEVENTS\n"
                       "ALLOC seq=2 op=allocate id=1 old=- new=8 task=- actor=- thread=0 "
                       "stack=0 span=-\nEND\n" FINISH);
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    ck_assert_int_eq(captext_pack(text, strlen(text), &sb, perr, sizeof perr), -1);
    ck_assert_str_eq(perr, "8: ALLOC.allocation_id: an allocate's id does not increase (ids are "
                           "never reused)");
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

/* A damaged capture reports what the reader reports, offset included. */
START_TEST(damaged_capture_uses_reader_message)
{
    struct bytes b = fixture("tiny-cpu");
    struct bytes cut = {b.data, b.len - 3};
    struct capture_reader *r = capture_reader_mem(cut.data, cut.len);
    char want[400], err[400];
    FILE *null = fopen("/dev/null", "w");
    ck_assert_int_eq(captext_dump(null, r, want, sizeof want), -1);
    fclose(null);
    capture_reader_free(r);
    /* cut inside FINISH: folded as far as it was read, the damage kept */
    struct fold *f = fold_ok(cut, FOLD_WEIGHT_DEFAULT);
    ck_assert_str_eq(fold_damage(f), want);
    ck_assert_int_eq(strncmp(want, "byte ", 5), 0);
    ck_assert_str_eq(fold_partial_reason(f), "collector_failure");
    fold_free(f);
    f = NULL;
    /* not a capture at all: nothing to fold */
    struct bytes magic = {"JETTCAP2", 8};
    ck_assert_int_eq(fold_bytes(magic, FOLD_WEIGHT_DEFAULT, &f, err, sizeof err), FOLD_E_CAPTURE);
    ck_assert_str_eq(err, "byte 0: not a capture: bad magic (expected JETTCAP1)");
    free(b.data);
}
END_TEST

/* --weight wall on cpu-calls (its comment has the samples): the jett
 * samples fold as with the default weight, and the 13 waiting samples
 * that have a stack under <runtime>.<waiting>: 8 above main;retry;wait,
 * 5 above main;wait.  What has no Jett stack is at the root: the
 * fourteenth waiting sample, the runtime one, and FINISH's 2 coalesced
 * and 1 dropped ticks.  Totals: every requested tick, 27 recorded + 2 +
 * 1 = 30, all drawn; the root's parts are the report's time split, 12 +
 * 2 running, 14 waiting, 1 runtime.  The pseudo-frames are no function
 * (FOLD_PSEUDO); wait's own frame has no self value. */
START_TEST(wall_weight)
{
    struct bytes b = fixture("cpu-calls");
    static const char jett[] = "idx.main 1\nidx.main;idx.add 2\nidx.main;idx.docs 1\n"
                               "idx.main;idx.pick 1\nidx.main;idx.rank 2\n"
                               "idx.main;idx.rank;idx.by 4\n";
    expect_collapsed(b, FOLD_WEIGHT_SAMPLES,
                     "idx.main 1\nidx.main;idx.add 2\nidx.main;idx.docs 1\n"
                     "idx.main;idx.pick 1\nidx.main;idx.rank 2\n"
                     "idx.main;idx.rank;idx.by 4\nidx.main;idx.skip 1\n");
    char want[1024];
    snprintf(want, sizeof want,
             "<runtime>.<coalesced> 2\n<runtime>.<dropped> 1\n<runtime>.<runtime> 1\n"
             "<runtime>.<waiting> 1\n"
             "%sidx.main;idx.retry;idx.wait;<runtime>.<waiting> 8\nidx.main;idx.skip 1\n"
             "idx.main;idx.wait;<runtime>.<waiting> 5\n",
             jett);
    expect_collapsed(b, FOLD_WEIGHT_WALL, want);
    struct fold *f = fold_ok(b, FOLD_WEIGHT_WALL);
    ck_assert_int_eq(fold_weight(f), FOLD_WEIGHT_WALL);
    const struct fold_totals *t = fold_totals(f);
    ck_assert_uint_eq(t->weight_total, 30);
    ck_assert_uint_eq(t->weight_attributed, 30);
    const struct fold_node *root = fold_node(f, FOLD_ROOT);
    const struct fold_node *main_ = child(f, root, "idx.main");
    ck_assert_uint_eq(main_->total, 25);
    const struct fold_node *wait = child(f, main_, "idx.wait");
    ck_assert_uint_eq(wait->self, 0);
    ck_assert_uint_eq(wait->total, 5);
    const struct fold_node *w = child(f, wait, "<runtime>.<waiting>");
    ck_assert_uint_eq(w->self, 5);
    ck_assert_uint_eq(w->func, FOLD_WAITING);
    struct fold_func fn;
    ck_assert(!fold_node_func(f, w, &fn));
    static const struct {
        const char *name;
        uint64_t value;
        enum ticks_frame k;
    } top[] = {{"<runtime>.<coalesced>", 2, TICKS_COALESCED},
               {"<runtime>.<dropped>", 1, TICKS_DROPPED},
               {"<runtime>.<runtime>", 1, TICKS_RUNTIME},
               {"<runtime>.<waiting>", 1, TICKS_WAITING}};
    for (size_t i = 0; i < sizeof top / sizeof top[0]; i++) {
        const struct fold_node *n = child(f, root, top[i].name);
        ck_assert_ptr_nonnull(n);
        ck_assert_uint_eq(n->self, top[i].value);
        ck_assert_uint_eq(n->total, top[i].value);
        ck_assert_uint_eq(n->func, FOLD_PSEUDO(top[i].k));
        ck_assert(!fold_node_func(f, n, &fn));
    }
    ck_assert_ptr_null(child(f, root, "<runtime>.<unavailable>")); /* none: no frame */
    ck_assert_str_eq(fold_weight_name(FOLD_WEIGHT_WALL), "wall");
    fold_free(f);
    free(b.data);
}
END_TEST

/* --weight wall counts every unavailable sample at the root: one of the
 * unavailable state, and the jett samples on the stacks a budget too
 * small refused (2000 stacks of one frame, sample i on stack i; the
 * budget keeps the first few).  The root holds all 2001 requested ticks:
 * m.main's drawn samples and <runtime>.<unavailable> the rest, the
 * profile's unavailable samples. */
START_TEST(wall_weight_unavailable)
{
    size_t cap = 1u << 20;
    char *t = malloc(cap);
    size_t len = one_frame_stacks(t, cap, "m", "main", 2000);
    len += (size_t)snprintf(t + len, cap - len,
                            "  CPU_SAMPLE seq=2001 tick=2001 task=- actor=- thread=0 "
                            "state=unavailable stack=- span=-\n"
                            "END\nFINISH termination=returned wall_ns=1 cpu_ns=- requested=2001 "
                            "coalesced=0 dropped=0 collector_failure=false stack_limit=false\n");
    struct bytes b = pack(t);
    struct fold *f = fold_ok(b, FOLD_WEIGHT_WALL);
    const struct fold_node *root = fold_node(f, FOLD_ROOT);
    const struct fold_node *main_ = child(f, root, "m.main");
    const struct fold_node *u = child(f, root, "<runtime>.<unavailable>");
    ck_assert_ptr_nonnull(main_);
    ck_assert_ptr_nonnull(u);
    ck_assert_uint_gt(main_->total, 0);
    ck_assert_uint_gt(u->total, 1);
    ck_assert_uint_eq(main_->total + u->total, 2001);
    ck_assert_uint_eq(u->total, fold_totals(f)->unavailable_samples);
    ck_assert_uint_eq(root->total, 2001);
    ck_assert_uint_eq(root->n_children, 2);
    fold_free(f);
    free(b.data), free(t);
}
END_TEST

START_TEST(weight_must_fit_the_mode)
{
    struct fold *f = NULL;
    char err[400];
    struct bytes cpu = fixture("tiny-cpu"), mem = fixture("tiny-memory");
    ck_assert_int_eq(fold_bytes(cpu, FOLD_WEIGHT_COUNT, &f, err, sizeof err), FOLD_E_WEIGHT);
    ck_assert_str_eq(err, "--weight count does not apply to a CPU capture");
    ck_assert_int_eq(fold_bytes(mem, FOLD_WEIGHT_SAMPLES, &f, err, sizeof err), FOLD_E_WEIGHT);
    ck_assert_str_eq(err, "--weight samples does not apply to a memory capture");
    ck_assert_int_eq(fold_bytes(mem, FOLD_WEIGHT_WALL, &f, err, sizeof err), FOLD_E_WEIGHT);
    ck_assert_str_eq(err, "--weight wall does not apply to a memory capture");
    free(cpu.data), free(mem.data);
}
END_TEST

/* Lines come out in byte order straight from the tree: a frame whose name
 * extends a sibling's with a byte below ';' sorts between the sibling's
 * own line and the lines below it ("m.f1" < "m.f1!" < "m.f10" <
 * "m.f10;m.y" < "m.f1;m.x"), and frames whose names become equal once
 * cleaned ("m.a;b", "m.a:b") are one frame with their subtrees merged.
 * Stacks: main 0; f1 1, f10 2, f1;x 3, f10;y 4, f1! 5, a;b 6, a:b 7,
 * a;b;z 8, a:b;z 9.  Samples: 1, 2, 3, 4, 5 at stacks 1-5; 1 at 6, 1 at
 * 7 (a:b = 2); 1 at 8, 2 at 9 (a:b;z = 3). */
static const char order_text[] = CPU_HELLO
    "FUNC id=0 namespace=\"m\" function=\"main\" source=- decl=-\n"
    "FUNC id=1 namespace=\"m\" function=\"f1\" source=- decl=-\n"
    "FUNC id=2 namespace=\"m\" function=\"f10\" source=- decl=-\n"
    "FUNC id=3 namespace=\"m\" function=\"x\" source=- decl=-\n"
    "FUNC id=4 namespace=\"m\" function=\"y\" source=- decl=-\n"
    "FUNC id=5 namespace=\"m\" function=\"f1!\" source=- decl=-\n"
    "FUNC id=6 namespace=\"m\" function=\"a;b\" source=- decl=-\n"
    "FUNC id=7 namespace=\"m\" function=\"a:b\" source=- decl=-\n"
    "FUNC id=8 namespace=\"m\" function=\"z\" source=- decl=-\n"
    "STACK id=0 parent=- func=0 site=-\n"
    "STACK id=1 parent=0 func=1 site=-\n"
    "STACK id=2 parent=0 func=2 site=-\n"
    "STACK id=3 parent=1 func=3 site=-\n"
    "STACK id=4 parent=2 func=4 site=-\n"
    "STACK id=5 parent=0 func=5 site=-\n"
    "STACK id=6 parent=0 func=6 site=-\n"
    "STACK id=7 parent=0 func=7 site=-\n"
    "STACK id=8 parent=6 func=8 site=-\n"
    "STACK id=9 parent=7 func=8 site=-\n"
    "CPU_SAMPLE seq=1 tick=1 task=- actor=- thread=0 state=jett stack=1 span=-\n"
    "CPU_SAMPLE seq=2 tick=2 task=- actor=- thread=0 state=jett stack=2 span=-\n"
    "CPU_SAMPLE seq=3 tick=3 task=- actor=- thread=0 state=jett stack=2 span=-\n"
    "CPU_SAMPLE seq=4 tick=4 task=- actor=- thread=0 state=jett stack=3 span=-\n"
    "CPU_SAMPLE seq=5 tick=5 task=- actor=- thread=0 state=jett stack=3 span=-\n"
    "CPU_SAMPLE seq=6 tick=6 task=- actor=- thread=0 state=jett stack=3 span=-\n"
    "CPU_SAMPLE seq=7 tick=7 task=- actor=- thread=0 state=jett stack=4 span=-\n"
    "CPU_SAMPLE seq=8 tick=8 task=- actor=- thread=0 state=jett stack=4 span=-\n"
    "CPU_SAMPLE seq=9 tick=9 task=- actor=- thread=0 state=jett stack=4 span=-\n"
    "CPU_SAMPLE seq=10 tick=10 task=- actor=- thread=0 state=jett stack=4 span=-\n"
    "CPU_SAMPLE seq=11 tick=11 task=- actor=- thread=0 state=jett stack=5 span=-\n"
    "CPU_SAMPLE seq=12 tick=12 task=- actor=- thread=0 state=jett stack=5 span=-\n"
    "CPU_SAMPLE seq=13 tick=13 task=- actor=- thread=0 state=jett stack=5 span=-\n"
    "CPU_SAMPLE seq=14 tick=14 task=- actor=- thread=0 state=jett stack=5 span=-\n"
    "CPU_SAMPLE seq=15 tick=15 task=- actor=- thread=0 state=jett stack=5 span=-\n"
    "CPU_SAMPLE seq=16 tick=16 task=- actor=- thread=0 state=jett stack=8 span=-\n"
    "CPU_SAMPLE seq=17 tick=17 task=- actor=- thread=0 state=jett stack=9 span=-\n"
    "CPU_SAMPLE seq=18 tick=18 task=- actor=- thread=0 state=jett stack=9 span=-\n"
    "CPU_SAMPLE seq=19 tick=19 task=- actor=- thread=0 state=jett stack=6 span=-\n"
    "CPU_SAMPLE seq=20 tick=20 task=- actor=- thread=0 state=jett stack=7 span=-\n" FINISH;

START_TEST(collapsed_byte_order_and_merged_names)
{
    struct bytes b = pack(order_text);
    expect_collapsed(b, FOLD_WEIGHT_DEFAULT,
                     "m.main;m.a:b 2\n"
                     "m.main;m.a:b;m.z 3\n"
                     "m.main;m.f1 1\n"
                     "m.main;m.f1! 5\n"
                     "m.main;m.f10 2\n"
                     "m.main;m.f10;m.y 4\n"
                     "m.main;m.f1;m.x 3\n");
    /* the tree of exact names keeps both frames, and is not written as
     * folded lines */
    struct fold *f = fold_ok(b, FOLD_WEIGHT_DEFAULT);
    const struct fold_node *main_ = child(f, fold_node(f, FOLD_ROOT), "m.main");
    ck_assert_uint_eq(main_->n_children, 5);
    FILE *devnull = fopen("/dev/null", "w");
    ck_assert_int_eq(fold_write_collapsed(f, devnull), -1);
    fclose(devnull);
    fold_free(f);
    free(b.data);
}
END_TEST

/* A stack deeper than the wire's 128 frames: pack refuses its text (line
 * 131: HELLO, FUNC, then the 129th STACK); built from records, decoding
 * stops at it, for the profile as for the fold, which keeps what was read
 * (it was refused whole before), never a deeper frame (the walk that
 * writes folded lines is as deep as the deepest stack). */
START_TEST(too_deep_stack_is_refused)
{
    char text[16384], perr[320];
    size_t n = (size_t)snprintf(text, sizeof text, "%s%s", CPU_HELLO,
                                "FUNC id=0 namespace=\"m\" function=\"f\" source=- decl=-\n");
    n += tu_stack_chain(text + n, sizeof text - n, 129);
    snprintf(text + n, sizeof text - n, "%s", FINISH);
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    ck_assert_int_eq(captext_pack(text, strlen(text), &sb, perr, sizeof perr), -1);
    ck_assert_str_eq(perr, "131: STACK record 129: deeper than 128 frames");
    msgpack_sbuffer_clear(&sb);
    deep_capture(&sb, 129);
    struct bytes b = {sb.data, sb.size};
    struct fold *f = fold_ok(b, FOLD_WEIGHT_DEFAULT);
    ck_assert_str_eq(fold_partial_reason(f), "collector_failure");
    ck_assert_msg(strncmp(fold_damage(f), "byte ", 5) == 0 &&
                      strstr(fold_damage(f), "STACK record 129: deeper than 128 frames"),
                  "%s", fold_damage(f));
    /* the root and STACK 0..127 (m.f in m.f ...); STACK 128 is not one */
    ck_assert_uint_eq(fold_node_count(f), 129);
    fold_free(f);
    free(b.data);
}
END_TEST

/* No jett sample: no lines, a root of 0; the runtime sample is counted. */
START_TEST(empty_profile)
{
    struct bytes b = pack(CPU_HELLO "CPU_SAMPLE seq=1 tick=1 task=- actor=- thread=0 "
                                    "state=runtime stack=- span=-\n" FINISH);
    struct fold *f = fold_ok_names(b, FOLD_WEIGHT_DEFAULT, FOLD_NAMES_COLLAPSED);
    char *got = collapsed(f);
    ck_assert_str_eq(got, "");
    ck_assert_uint_eq(fold_totals(f)->samples, 1);
    ck_assert_uint_eq(fold_totals(f)->weight_attributed, 0);
    ck_assert_uint_eq(fold_node(f, FOLD_ROOT)->n_children, 0);
    free(got), fold_free(f), free(b.data);
}
END_TEST

/* A fold of an aggregation that kept each node's self cost only
 * (agg_keep_node_self, what a differential flame graph reads), with
 * `names`. */
static struct fold *fold_of_node_self(struct bytes b, enum fold_names names)
{
    struct capture_reader *r = capture_reader_mem(b.data, b.len);
    struct agg *g = agg_new();
    ck_assert_ptr_nonnull(g);
    agg_keep_node_self(g);
    char err[400];
    ck_assert_int_eq(feed_capture(g, r, err, sizeof err), 0);
    capture_reader_free(r);
    agg_end(g);
    struct fold *f = NULL;
    ck_assert_int_eq(fold_of_agg(g, FOLD_WEIGHT_DEFAULT, names, &f, err, sizeof err), FOLD_OK);
    agg_free(g);
    return f;
}

static void expect_node_self_collapsed(const char *fixture_name, const char *want)
{
    struct bytes b = fixture(fixture_name);
    struct fold *f = fold_of_node_self(b, FOLD_NAMES_COLLAPSED);
    char *got = collapsed(f);
    ck_assert_str_eq(got, want);
    free(got);
    fold_free(f);
    free(b.data);
}

/* The self costs alone give the default weight's tree: the sums of
 * tiny_cpu, tiny_memory_weights and hostile_names above (self 1 at main
 * and 2 at main;work, a total of 3; allocated 64 + 168 + 64 = 296). */
/* cpu-tasks and mem-tasks (their headers): a frame per task at the top,
 * each task's own stacks below it; task 2's crunch allocation, freed by
 * task 3, is not among task 2's retained bytes, nor task 3's. */
START_TEST(by_task)
{
    struct bytes cpu = fixture("cpu-tasks"), mem = fixture("mem-tasks");
    expect_by_task(cpu, FOLD_WEIGHT_DEFAULT,
                   "task 1;app.main 1\n"
                   "task 2;app.work 1\n"
                   "task 2;app.work;app.crunch 3\n"
                   "task 3;app.work 1\n"
                   "task 3;app.work;app.crunch 2\n");
    /* --weight wall: task 1's waiting samples above its main; the
     * runtime samples (task 2's and one of no task) at the root, beside
     * the tasks */
    expect_by_task(cpu, FOLD_WEIGHT_WALL,
                   "<runtime>.<runtime> 2\n"
                   "task 1;app.main 1\n"
                   "task 1;app.main;<runtime>.<waiting> 2\n"
                   "task 2;app.work 1\n"
                   "task 2;app.work;app.crunch 3\n"
                   "task 3;app.work 1\n"
                   "task 3;app.work;app.crunch 2\n");
    expect_by_task(mem, FOLD_WEIGHT_ALLOCATED,
                   "task 1;app.main 32\n"
                   "task 2;app.work 16\n"
                   "task 2;app.work;app.crunch 64\n"
                   "task 3;app.work;app.crunch 48\n");
    expect_by_task(mem, FOLD_WEIGHT_COUNT,
                   "task 1;app.main 1\n"
                   "task 2;app.work 1\n"
                   "task 2;app.work;app.crunch 1\n"
                   "task 3;app.work;app.crunch 1\n");
    expect_by_task(mem, FOLD_WEIGHT_RETAINED,
                   "task 1;app.main 32\n"
                   "task 2;app.work 16\n"
                   "task 3;app.work;app.crunch 48\n");
    /* the totals are the capture's, the tree's root all of them */
    struct capture_reader *r = capture_reader_mem(cpu.data, cpu.len);
    struct fold *f = NULL;
    char err[400];
    ck_assert_int_eq(
        fold_read_by_task(r, FOLD_WEIGHT_DEFAULT, FOLD_NAMES_EXACT, &f, err, sizeof err), FOLD_OK);
    capture_reader_free(r);
    ck_assert_uint_eq(fold_totals(f)->weight_total, 12);
    ck_assert_uint_eq(fold_totals(f)->weight_attributed, 8);
    const struct fold_node *t2 = child(f, fold_node(f, FOLD_ROOT), "task 2");
    ck_assert_ptr_nonnull(t2);
    ck_assert_uint_eq(t2->total, 4);
    ck_assert_uint_eq(t2->self, 0);
    struct fold_func fn;
    ck_assert(!fold_node_func(f, t2, &fn)); /* a task is no function */
    fold_free(f);
    free(cpu.data), free(mem.data);
}
END_TEST

/* Events of no task (and of a task no TASK describes) fold under "no
 * task", after the tasks. */
START_TEST(by_task_events_of_no_task)
{
    struct bytes b =
        pack("HELLO version=2 mode=cpu rate_hz=1000 threshold_bp=500 limit=10 cpu_budget=33554432 "
             "retention_budget=67108864 stack_budget=16777216 backend=\"interpreter_safe_point\" "
             "capabilities=cpu_tick_source,safe_stack_capture,jett_runtime_thread_registration,"
             "task_attribution colour=false\n"
             "FUNC id=0 namespace=\"app\" function=\"main\" source=- decl=-\n"
             "FUNC id=1 namespace=\"app\" function=\"f\" source=- decl=-\n"
             "EVENTS\n"
             "  TASK task=1 func=0 spawn_func=- site=-\n"
             "  STACK id=0 parent=- func=0 site=-\n"
             "  STACK id=1 parent=0 func=1 site=-\n"
             "  CPU_SAMPLE seq=1 tick=1 task=- actor=- thread=1 state=jett stack=1 span=-\n"
             "  CPU_SAMPLE seq=2 tick=2 task=1 actor=- thread=1 state=jett stack=1 span=-\n"
             "  CPU_SAMPLE seq=3 tick=3 task=4 actor=- thread=1 state=jett stack=0 span=-\n"
             "END\n" FINISH);
    expect_by_task(b, FOLD_WEIGHT_DEFAULT,
                   "no task;app.main 1\n"
                   "no task;app.main;app.f 1\n"
                   "task 1;app.main;app.f 1\n");
    free(b.data);
}
END_TEST

/* --by-task needs a run with tasks, and a weight kept by task. */
START_TEST(by_task_refused)
{
    struct bytes cpu = fixture("cpu-simple"), mem = fixture("mem-tasks");
    char err[400];
    struct fold *f = NULL;
    struct capture_reader *r = capture_reader_mem(cpu.data, cpu.len);
    ck_assert_int_eq(
        fold_read_by_task(r, FOLD_WEIGHT_DEFAULT, FOLD_NAMES_EXACT, &f, err, sizeof err),
        FOLD_E_TASKS);
    ck_assert_str_eq(err, "--by-task needs a capture of a run with tasks (capability "
                          "task_attribution)");
    capture_reader_free(r);
    r = capture_reader_mem(mem.data, mem.len);
    ck_assert_int_eq(
        fold_read_by_task(r, FOLD_WEIGHT_LIVE_AT_PEAK, FOLD_NAMES_EXACT, &f, err, sizeof err),
        FOLD_E_TASKS);
    capture_reader_free(r);
    ck_assert_ptr_null(f);
    free(cpu.data), free(mem.data);
}
END_TEST

START_TEST(node_self_only_folds_the_default_weight)
{
    expect_node_self_collapsed("tiny-cpu", "app.main 1\napp.main;app.work 2\n");
    expect_node_self_collapsed("tiny-memory",
                               "cache.<init> 64\ncache.main 168\ncache.main;cache.put 64\n");
    expect_node_self_collapsed("hostile-names", hostile_collapsed);
    struct bytes b = fixture("tiny-cpu");
    struct fold *f = fold_of_node_self(b, FOLD_NAMES_EXACT);
    const struct fold_node *root = fold_node(f, FOLD_ROOT);
    ck_assert_uint_eq(root->total, 3);
    const struct fold_node *main_ = child(f, root, "app.main");
    ck_assert_uint_eq(main_->self, 1);
    ck_assert_uint_eq(main_->total, 3);
    ck_assert_uint_eq(child(f, main_, "app.work")->total, 2);
    ck_assert_uint_eq(fold_totals(f)->weight_attributed, 3);
    fold_free(f);
    free(b.data);
    b = fixture("tiny-memory");
    f = fold_of_node_self(b, FOLD_NAMES_EXACT);
    root = fold_node(f, FOLD_ROOT);
    ck_assert_uint_eq(root->total, 296);
    main_ = child(f, root, "cache.main");
    ck_assert_uint_eq(main_->self, 168);
    ck_assert_uint_eq(main_->total, 168 + 64);
    ck_assert_uint_eq(fold_totals(f)->retained_bytes, 265); /* totals are the profile's */
    fold_free(f);
    free(b.data);
}
END_TEST

Suite *fold_suite(void)
{
    Suite *s = suite_create("fold");
    TCase *t = tcase_create("fold");
    tcase_add_test(t, tiny_cpu);
    tcase_add_test(t, node_self_only_folds_the_default_weight);
    tcase_add_test(t, by_task);
    tcase_add_test(t, by_task_events_of_no_task);
    tcase_add_test(t, by_task_refused);
    tcase_add_test(t, every_record);
    tcase_add_test(t, tiny_memory_weights);
    tcase_add_test(t, hostile_names);
    tcase_add_test(t, live_at_peak_is_lazy_and_exact);
    tcase_add_test(t, many_live_allocations);
    tcase_add_test(t, inconsistent_allocations_are_collector_errors);
    tcase_add_test(t, damaged_capture_uses_reader_message);
    tcase_add_test(t, weight_must_fit_the_mode);
    tcase_add_test(t, wall_weight);
    tcase_add_test(t, wall_weight_unavailable);
    tcase_add_test(t, empty_profile);
    tcase_add_test(t, collapsed_byte_order_and_merged_names);
    tcase_add_test(t, too_deep_stack_is_refused);
    suite_add_tcase(s, t);
    return s;
}
