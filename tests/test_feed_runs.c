/* A memory profile's ALLOC entries are aggregated in runs read where they
 * lie in the frame (feed_record); fed one decoded entry at a time
 * instead, the same random streams must give the same document, byte
 * for byte: with every kind of collector error, stacks defined between
 * allocations, gaps in ids that slide the window, and retention and
 * stack budgets that run out; in the 58-byte entries of version 2 and in
 * the compact entries of version 3, with folds, and sites named again
 * (which the compact runs sum without the tables). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/agg.h"
#include "daemon/attrib.h"
#include "daemon/rank.h"
#include "daemon/render.h"
#include "proto/wire.h"
#include "proto/wire_compact.h"
#include "tests/feed_entries.h"

Suite *feed_runs_suite(void);

#define NFUNCS 6
#define MAX_LIVE 4096

static const char text[] = "fn a() {}\nfn b() {}\nfn c() {}\n";

struct gen {
    unsigned seed;
    msgpack_sbuffer sb;
    uint8_t bin[1600 * WIRE_COMPACT_MAX];
    size_t len;
    uint32_t count, n_stacks;
    uint64_t seq, next_id;
    uint64_t live_id[MAX_LIVE], live_size[MAX_LIVE];
    size_t n_live;
    bool dirty;   /* collector errors now and then */
    bool spans;   /* leaf spans on the allocations (else none) */
    bool compact; /* version 3: compact entries, folds */
    struct wire_compact_enc enc;
    struct wire_alloc last; /* the last entry's site, to name it again */
    bool resized;           /* a resize came: */
    uint64_t last_resized;  /* the allocation it resized */
};

static unsigned rnd(struct gen *g, unsigned n)
{
    return (unsigned)rand_r(&g->seed) % n;
}

/* HELLO, the source and the functions f0..f5, with these budgets and
 * threshold. */
static void header_with(struct gen *g, uint64_t retention, uint64_t stacks, uint32_t threshold)
{
    struct wire_hello h = {0};
    h.version = g->compact ? WIRE_COMPACT_VERSION : 2;
    h.mode = WIRE_MODE_MEMORY;
    h.config = (struct wire_config){0, threshold, 100, 32u << 20, retention, stacks};
    h.backend = (struct wire_str){"interpreter_alloc_hooks", 23};
    h.capabilities = WIRE_CAP_HEAP_ALLOCATION_HOOKS | WIRE_CAP_FREE_AND_RESIZE_EVENTS |
                     (g->spans ? WIRE_CAP_SOURCE_SPANS : 0);
    ck_assert_int_eq(wire_encode_hello(&g->sb, &h), 0);
    uint32_t lines[4];
    uint32_t nl = wire_line_starts(text, sizeof text - 1, lines, 4);
    struct wire_source s = {
        0, WIRE_ORIGIN_PROJECT, {"src/a.jett", 10}, {text, sizeof text - 1}, NULL, 0, lines, nl};
    ck_assert_int_eq(wire_encode_source(&g->sb, &s), 0);
    for (uint32_t i = 0; i < NFUNCS; i++) {
        char name[8];
        int len = snprintf(name, sizeof name, "f%u", i);
        struct wire_func f = {i, {"app", 3}, {name, (uint32_t)len}, 0, {0, 9}};
        ck_assert_int_eq(wire_encode_func(&g->sb, &f), 0);
    }
}

static void header(struct gen *g)
{
    /* budgets small enough to run out now and then */
    uint64_t retention = rnd(g, 3) ? AGG_RETENTION_BUDGET_MAX : 2048 + rnd(g, 16384);
    uint64_t stacks = rnd(g, 4) ? AGG_STACK_BUDGET_MAX : 2048 + rnd(g, 8192);
    header_with(g, retention, stacks, rnd(g, 2) ? 0 : 500);
}

static void flush(struct gen *g)
{
    if (g->count)
        ck_assert_int_eq(wire_encode_events(&g->sb, g->count, g->bin, g->len), 0);
    g->len = 0, g->count = 0;
}

static void put_stack(struct gen *g)
{
    uint32_t parent = g->n_stacks && rnd(g, 3) ? rnd(g, g->n_stacks) : WIRE_NONE32;
    struct wire_span site = parent == WIRE_NONE32 ? WIRE_SPAN_NONE : (struct wire_span){1, 4};
    struct wire_stack st = {g->n_stacks++, parent, rnd(g, NFUNCS), site};
    g->len += wire_put_stack(g->bin + g->len, &st);
    g->count++;
}

/* A size, now and then 0, at or past what a packed live record holds
 * (2^40 - 1 up), or, in a dirty stream, near 2^64 (whose total then
 * passes 2^64 - 1: refused events). */
static uint64_t size(struct gen *g)
{
    unsigned r = rnd(g, 64);
    if (r == 0)
        return 0;
    if (r == 1)
        return (UINT64_C(1) << 40) - 1 + rnd(g, 9);
    if (r == 2 && g->dirty)
        return UINT64_MAX - rnd(g, 2);
    return 1 + rnd(g, 5000);
}

static void put_alloc(struct gen *g)
{
    struct wire_alloc a = {++g->seq,    0,
                           0,           WIRE_NONE64,
                           WIRE_NONE64, {rnd(g, 3), WIRE_NONE32, rnd(g, 4)},
                           WIRE_NONE32, WIRE_SPAN_NONE};
    if (rnd(g, 10))
        a.stack_id = rnd(g, g->n_stacks);
    if (g->spans && a.stack_id != WIRE_NONE32 && rnd(g, 4)) { /* a span needs a stack */
        uint32_t at = rnd(g, 3) * 10;
        a.span = (struct wire_span){at, at + 5};
    }
    if (g->compact && g->seq > 1 && rnd(g, 3)) /* the last site again, as loops do */
        a.stack_id = g->last.stack_id, a.span = g->last.span;
    unsigned what = rnd(g, 100);
    if (g->n_live == 0 || g->n_live == MAX_LIVE || what < 40) {
        a.op = WIRE_OP_ALLOCATE;
        /* mostly the next id; gaps slide the window (a reused id is a
         * decoder error now, in runs as in single entries: test_wire_rules) */
        unsigned r = rnd(g, 50);
        g->next_id += r == 0 ? 300 + rnd(g, 5000) : r == 1 ? 1u << 20 : 1;
        a.allocation_id = g->next_id;
        a.new_size = size(g);
        if (g->n_live < MAX_LIVE) {
            g->live_id[g->n_live] = a.allocation_id;
            g->live_size[g->n_live++] = a.new_size;
        }
    } else {
        size_t k = rnd(g, (unsigned)g->n_live);
        a.op = what < 70 ? WIRE_OP_RESIZE : WIRE_OP_FREE;
        /* the last resized allocation resized again, as a string built
         * by appending is, with other events between (a RESIZE_AGAIN
         * entry, whose live record the other events may move) */
        for (size_t j = 0; g->compact && a.op == WIRE_OP_RESIZE && rnd(g, 3) && j < g->n_live; j++)
            if (g->resized && g->live_id[j] == g->last_resized)
                k = j;
        a.allocation_id = g->live_id[k];
        bool wrong = g->dirty && rnd(g, 40) == 0;
        a.old_size = g->live_size[k] + wrong;
        if (g->dirty && rnd(g, 60) == 0)
            a.allocation_id = g->next_id + 10 + rnd(g, 100); /* unknown */
        if (a.op == WIRE_OP_RESIZE) {
            a.new_size = size(g);
            g->live_size[k] = a.new_size;
            g->resized = true, g->last_resized = a.allocation_id;
        } else if (!g->dirty || rnd(g, 30)) { /* else freed twice */
            g->live_id[k] = g->live_id[--g->n_live];
            g->live_size[k] = g->live_size[g->n_live];
        }
    }
    if (g->compact && a.op == WIRE_OP_ALLOCATE && rnd(g, 3) == 0) {
        /* a fold: its free comes 1 to 4 sequences on, and takes one */
        a.op = WIRE_OP_FOLD;
        a.old_size = a.sequence + 1 + rnd(g, 4);
        if (g->n_live > 0 && g->live_id[g->n_live - 1] == a.allocation_id)
            g->n_live--;
        g->seq++;
    }
    g->last = a;
    g->len += g->compact ? wire_compact_put(&g->enc, g->bin + g->len, &a)
                         : wire_put_alloc(g->bin + g->len, &a);
    g->count++;
}

/* A random memory stream in g->sb. */
static void generate(struct gen *g, unsigned seed, bool spans)
{
    memset(g, 0, sizeof *g);
    g->seed = seed;
    g->spans = spans;
    g->compact = seed % 2;
    wire_compact_enc_init(&g->enc);
    msgpack_sbuffer_init(&g->sb);
    g->dirty = rnd(g, 2);
    g->next_id = 1;
    header(g);
    put_stack(g);
    unsigned frames = 1 + rnd(g, 6);
    for (unsigned f = 0; f < frames; f++) {
        unsigned n = rnd(g, 3) ? 1 + rnd(g, 200) : 500 + rnd(g, 1100); /* past a 512-entry piece */
        for (unsigned i = 0; i < n; i++)
            if (rnd(g, 25) == 0)
                put_stack(g);
            else
                put_alloc(g);
        flush(g);
    }
    struct wire_finish fin = {WIRE_TERM_RETURNED, 1000, WIRE_NONE64, 0, 0, 0, false, false};
    ck_assert_int_eq(wire_encode_finish(&g->sb, &fin), 0);
}

/* Feeds the stream by feed_record (runs) or one decoded entry at a time,
 * and ends it. */
static void feed_all(const msgpack_sbuffer *sb, bool runs, struct wire_decoder *d, struct agg *g)
{
    size_t off = 0;
    int rc = 0;
    while (rc >= 0) {
        struct wire_record rec;
        while ((rc = wire_decoder_next(d, &rec)) == 0 && off < sb->size)
            off += wire_decoder_push(d, sb->data + off, sb->size - off);
        if (rc <= 0)
            break;
        rc = runs ? feed_record(g, d, &rec) : feed_record_entries(g, d, &rec);
        rc = rc < 0 ? -1 : 0;
    }
    ck_assert_int_eq(rc, 0); /* the generator writes valid streams */
    agg_end(g);
}

/* The agent document of an ended aggregation. */
static char *agent_document(struct agg *g)
{
    struct rank_options opt = {0};
    struct rank_report rep;
    ck_assert_int_eq(rank_build(g, &opt, &rep), 0);
    char *out, err[128];
    size_t len;
    ck_assert_int_eq(render_toon(&rep, &out, &len, err, sizeof err), 0);
    rank_free(&rep);
    return out;
}

/* Runs prefetch past this many bytes of tables (agg_prefetch_above):
 * always, never, and as the daemon does. */
static const size_t prefetch_ways[3] = {0, SIZE_MAX, 16u << 20};

/* The agent document of the stream, fed by feed_record (runs, which
 * prefetch past `prefetch` bytes) or one decoded entry at a time. */
static char *profile(const msgpack_sbuffer *sb, bool runs, size_t prefetch)
{
    struct wire_decoder *d = wire_decoder_new(WIRE_TO_DAEMON);
    struct agg *g = agg_new();
    ck_assert_ptr_nonnull(d);
    ck_assert_ptr_nonnull(g);
    agg_prefetch_above(g, prefetch);
    feed_all(sb, runs, d, g);
    char *out = agent_document(g);
    agg_free(g);
    wire_decoder_free(d);
    return out;
}

/* What an export reads of the stream's aggregation, in words: per node
 * its quantities, subtree sums and self costs by leaf span, per identity
 * its self costs by leaf span.  `keep`: 0 agg_keep_detail, 1
 * agg_keep_node_lines, 2 agg_keep_node_lines_only; runs prefetch past
 * `prefetch` bytes. */
static char *detail(const msgpack_sbuffer *sb, bool runs, int keep, size_t prefetch)
{
    struct wire_decoder *d = wire_decoder_new(WIRE_TO_DAEMON);
    struct agg *g = agg_new();
    ck_assert_ptr_nonnull(d);
    ck_assert_ptr_nonnull(g);
    agg_prefetch_above(g, prefetch);
    if (keep == 0)
        agg_keep_detail(g);
    else if (keep == 1)
        agg_keep_node_lines(g);
    else
        agg_keep_node_lines_only(g);
    feed_all(sb, runs, d, g);
    char *out;
    size_t len;
    FILE *f = open_memstream(&out, &len);
    ck_assert_ptr_nonnull(f);
    uint32_t start;
    uint64_t w[2];
    for (uint32_t i = 0; i < attrib_node_count(g); i++) {
        struct attrib_node_quantities q, b;
        attrib_node_quantities(g, i, &q);
        attrib_node_below(g, i, &b);
        fprintf(f, "node %u: %llu %llu %llu %llu %llu %u; below %llu %llu %llu %llu %llu; lines", i,
                (unsigned long long)q.self, (unsigned long long)q.count,
                (unsigned long long)q.retained, (unsigned long long)q.live_at_peak,
                (unsigned long long)q.events, q.site, (unsigned long long)b.self,
                (unsigned long long)b.count, (unsigned long long)b.retained,
                (unsigned long long)b.live_at_peak, (unsigned long long)b.events);
        struct attrib_node_self_iter it;
        if (attrib_node_self_begin(g, i, &it))
            while (attrib_node_self_next(g, &it, &start, w))
                fprintf(f, " %u:%llu,%llu", start, (unsigned long long)w[0],
                        (unsigned long long)w[1]);
        fputc('\n', f);
    }
    for (uint32_t i = 0; i < attrib_ident_count(g); i++) {
        fprintf(f, "ident %u:", i);
        struct attrib_self_iter it;
        if (attrib_self_begin(g, i, &it))
            while (attrib_self_next(g, &it, &start, w))
                fprintf(f, " %u:%llu,%llu", start, (unsigned long long)w[0],
                        (unsigned long long)w[1]);
        fputc('\n', f);
    }
    fclose(f);
    agg_free(g);
    wire_decoder_free(d);
    return out;
}

/* Runs give an export what single entries give it; with node lines
 * only, the node quantities and lines are those of agg_keep_node_lines,
 * and nothing else is kept.  The streams' leaf spans differ within a
 * node, so nodes of one and of several spans both occur. */
START_TEST(runs_give_the_export_detail_of_single_entries)
{
    unsigned several = 0; /* nodes with costs at several leaf spans */
    for (unsigned seed = 1; seed <= 300; seed++) {
        struct gen *g = malloc(sizeof *g);
        ck_assert_ptr_nonnull(g);
        generate(g, seed, true);
        for (int keep = 0; keep < 3; keep++) {
            char *one = detail(&g->sb, false, keep, 0);
            for (int way = 0; way < 2; way++) {
                char *run = detail(&g->sb, true, keep, prefetch_ways[way]);
                ck_assert_msg(strcmp(one, run) == 0,
                              "seed %u, keep %d, prefetch %d:\n%.300s\n-- by runs --\n%.300s", seed,
                              keep, way, one, run);
                free(run);
            }
            free(one);
        }
        char *all = detail(&g->sb, true, 1, 0), *only = detail(&g->sb, true, 2, SIZE_MAX);
        /* the same nodes and lines; no subtree sums and no function lines */
        char *a = all, *o = only;
        while (*a && *o) {
            char *ae = strchr(a, '\n'), *oe = strchr(o, '\n');
            ck_assert_ptr_nonnull(ae);
            ck_assert_ptr_nonnull(oe);
            if (strncmp(a, "node ", 5) == 0) {
                const char *ab = strstr(a, "; below "), *ol = strstr(o, "; below ");
                ck_assert_ptr_nonnull(ab);
                ck_assert_ptr_nonnull(ol);
                ck_assert_int_eq(ab - a, ol - o);
                ck_assert(strncmp(a, o, (size_t)(ab - a)) == 0);
                ck_assert(strncmp(ol, "; below 0 0 0 0 0; lines", 24) == 0);
                ck_assert_int_eq(ae - strstr(ab, "; lines"), oe - strstr(ol, "; lines"));
                ck_assert(strncmp(strstr(ab, "; lines"), strstr(ol, "; lines"),
                                  (size_t)(ae - strstr(ab, "; lines"))) == 0);
                const char *l = strstr(ab, "; lines"), *second = strchr(strchr(l, ':') + 1, ':');
                several += second != NULL && second < ae;
            } else {
                ck_assert(strncmp(o, "ident ", 6) == 0);
                ck_assert_ptr_eq(strchr(o, ':') + 1, oe); /* no lines */
            }
            a = ae + 1, o = oe + 1;
        }
        ck_assert(!*a && !*o);
        free(all);
        free(only);
        msgpack_sbuffer_destroy(&g->sb);
        free(g);
    }
    ck_assert_msg(several >= 100, "%u nodes of several spans", several);
}
END_TEST

START_TEST(runs_give_the_profile_of_single_entries)
{
    unsigned reasons[4] = {0};
    static const char *const reason[4] = {"status: complete", "reason: collector_failure",
                                          "reason: retention_metadata_limit",
                                          "reason: stack_capture_limit"};
    for (unsigned seed = 1; seed <= 1000; seed++) {
        struct gen *g = malloc(sizeof *g);
        ck_assert_ptr_nonnull(g);
        generate(g, seed, false);
        char *one = profile(&g->sb, false, 0);
        for (int way = 0; way < 3; way++) {
            char *run = profile(&g->sb, true, prefetch_ways[way]);
            size_t at = 0;
            while (one[at] && one[at] == run[at])
                at++;
            size_t from = at > 120 ? at - 120 : 0;
            ck_assert_msg(one[at] == run[at],
                          "seed %u, prefetch %d, byte %zu:\n%.200s\n-- by runs --\n%.200s", seed,
                          way, at, one + from, run + from);
            free(run);
        }
        for (int i = 0; i < 4; i++)
            reasons[i] += strstr(one, reason[i]) != NULL;
        free(one);
        msgpack_sbuffer_destroy(&g->sb);
        free(g);
    }
    /* the streams reach the cases they are there for */
    for (int i = 0; i < 4; i++)
        ck_assert_msg(reasons[i] >= 10, "%u streams with %s", reasons[i], reason[i]);
}
END_TEST

/* A string built by appending at one statement (RESIZE_AGAIN entries)
 * while allocations at the same statement come and go between its
 * resizes: a run keeps the string's live record from one resize to the
 * next while only folds come between, and the others move it (the
 * window of recent ids slides past it, into the table of older ids,
 * and the table grows): the profile is the one of single entries, and
 * the string's free finds the size its last resize left. */
START_TEST(a_string_resized_while_records_move)
{
    for (unsigned shape = 0; shape < 4; shape++) {
        struct gen *g = calloc(1, sizeof *g);
        ck_assert_ptr_nonnull(g);
        g->seed = 6, g->compact = true, g->next_id = 1;
        wire_compact_enc_init(&g->enc);
        msgpack_sbuffer_init(&g->sb);
        header(g);
        struct wire_stack st = {0, WIRE_NONE32, 0, WIRE_SPAN_NONE};
        g->len += wire_put_stack(g->bin + g->len, &st);
        g->count++, g->n_stacks = 1;
        uint64_t size = 10, next = 1, seq = 0;
        struct wire_alloc e = {++seq, WIRE_OP_ALLOCATE, 0, WIRE_NONE64,
                               size,  {0, 0, 0},        0, WIRE_SPAN_NONE};
        g->len += wire_compact_put(&g->enc, g->bin + g->len, &e), g->count++;
        for (unsigned i = 0; i < 1200; i++) {
            /* the string grows (kind 5 once, then 7) */
            e = (struct wire_alloc){++seq, WIRE_OP_RESIZE, 0, size, size + 1 + i % 7, {0, 0, 0},
                                    0,     WIRE_SPAN_NONE};
            size = e.new_size;
            g->len += wire_compact_put(&g->enc, g->bin + g->len, &e), g->count++;
            /* between its resizes: a fold, an allocate (far on now and
             * then: the window slides), a free of an older one */
            bool far = shape & 1 ? i % 50 == 0 : i % 300 == 0;
            uint64_t id = next + (far ? 5000 : 1);
            next = id;
            seq++; /* before the initializer, which reads it twice */
            e = (struct wire_alloc){seq,       shape & 2 && i % 3 ? WIRE_OP_FOLD : WIRE_OP_ALLOCATE,
                                    id,        shape & 2 && i % 3 ? seq + 1 : WIRE_NONE64,
                                    8 + i % 5, {0, 0, 0},
                                    0,         WIRE_SPAN_NONE};
            if (e.op == WIRE_OP_FOLD)
                seq++;
            g->len += wire_compact_put(&g->enc, g->bin + g->len, &e), g->count++;
            if (e.op == WIRE_OP_ALLOCATE && i % 4 == 3) {
                e = (struct wire_alloc){++seq,       WIRE_OP_FREE, id, 8 + i % 5,
                                        WIRE_NONE64, {0, 0, 0},    0,  WIRE_SPAN_NONE};
                g->len += wire_compact_put(&g->enc, g->bin + g->len, &e), g->count++;
            }
            if (g->count >= 1500)
                flush(g);
        }
        e = (struct wire_alloc){++seq,       WIRE_OP_FREE, 0, size,
                                WIRE_NONE64, {0, 0, 0},    0, WIRE_SPAN_NONE};
        g->len += wire_compact_put(&g->enc, g->bin + g->len, &e), g->count++;
        flush(g);
        struct wire_finish fin = {WIRE_TERM_RETURNED, 1000, WIRE_NONE64, 0, 0, 0, false, false};
        ck_assert_int_eq(wire_encode_finish(&g->sb, &fin), 0);
        char *one = profile(&g->sb, false, 0);
        ck_assert_msg(strstr(one, "status: complete"), "%.400s", one);
        for (int way = 0; way < 3; way++) {
            char *run = profile(&g->sb, true, prefetch_ways[way]);
            ck_assert_msg(strcmp(one, run) == 0, "shape %u, prefetch %d:\n%s\n-- by runs --\n%s",
                          shape, way, one, run);
            free(run);
        }
        free(one);
        msgpack_sbuffer_destroy(&g->sb);
        free(g);
    }
}
END_TEST

/* A resize at a site the run has not seen, whose growth needs a site
 * bucket while the live records fill the retention budget (2112 bytes):
 * the records make room for it (jett-profile(7), Budgets), so the
 * record the resize found is gone before the run would write its new
 * size.  Events, by hand (f0 at stack 0, f1 at stack 1):
 *   allocate id1 8 at f0: site 56 + chain 8 + window 2048 = 2112;
 *   allocate id2 16 at f0;
 *   resize id1 8 -> 20 at f1: f1's site does not fit: the records are
 *     released, f1's site and chain taken (128 held); growth 12 at f1;
 *   resize id1 20 -> 30 at f1 (RESIZE_AGAIN): untracked, growth 10;
 *   free id2, free id1, free id1 again: taken as they say, no error.
 * Allocated 8 + 16 + 12 + 10 = 46: f0 24 bytes in 2 allocations
 * (52.17%), f1 22 in 2 resizes (47.83%); partial, live values
 * unavailable.  Runs and single entries give the same document. */
START_TEST(a_resize_at_a_new_site_takes_the_records_room)
{
    struct gen *g = calloc(1, sizeof *g);
    ck_assert_ptr_nonnull(g);
    g->compact = true;
    wire_compact_enc_init(&g->enc);
    msgpack_sbuffer_init(&g->sb);
    header_with(g, 2112, AGG_STACK_BUDGET_MAX, 0);
    for (uint32_t i = 0; i < 2; i++) {
        struct wire_stack st = {i, WIRE_NONE32, i, WIRE_SPAN_NONE};
        g->len += wire_put_stack(g->bin + g->len, &st), g->count++;
    }
    const struct wire_exec x = {0, 0, 0};
    const struct wire_alloc ev[] = {
        {1, WIRE_OP_ALLOCATE, 1, WIRE_NONE64, 8, x, 0, WIRE_SPAN_NONE},
        {2, WIRE_OP_ALLOCATE, 2, WIRE_NONE64, 16, x, 0, WIRE_SPAN_NONE},
        {3, WIRE_OP_RESIZE, 1, 8, 20, x, 1, WIRE_SPAN_NONE},
        {4, WIRE_OP_RESIZE, 1, 20, 30, x, 1, WIRE_SPAN_NONE},
        {5, WIRE_OP_FREE, 2, 16, WIRE_NONE64, x, 0, WIRE_SPAN_NONE},
        {6, WIRE_OP_FREE, 1, 30, WIRE_NONE64, x, 0, WIRE_SPAN_NONE},
        {7, WIRE_OP_FREE, 1, 30, WIRE_NONE64, x, 0, WIRE_SPAN_NONE},
    };
    for (size_t i = 0; i < sizeof ev / sizeof *ev; i++)
        g->len += wire_compact_put(&g->enc, g->bin + g->len, &ev[i]), g->count++;
    flush(g);
    struct wire_finish fin = {WIRE_TERM_RETURNED, 1000, WIRE_NONE64, 0, 0, 0, false, false};
    ck_assert_int_eq(wire_encode_finish(&g->sb, &fin), 0);
    char *one = profile(&g->sb, false, 0);
    ck_assert_msg(strstr(one, "\n  partial_reason: retention_metadata_limit\n") &&
                      strstr(one, "\n    allocation_count: 2\n    resize_count: 2\n"
                                  "    allocated_bytes: 46\n    freed_bytes: unavailable\n") &&
                      strstr(one, "\n      function: f0\n      path: src/a.jett\n      line: 1\n"
                                  "      allocation_count: 2\n      allocated_bytes: 24\n"
                                  "      allocation_percent: 52.17\n") &&
                      strstr(one, "\n      function: f1\n      path: src/a.jett\n      line: 1\n"
                                  "      allocation_count: 0\n      allocated_bytes: 22\n"
                                  "      allocation_percent: 47.83\n") &&
                      strstr(one, "\n      resize_count: 2\n"),
                  "%s", one);
    for (int way = 0; way < 3; way++) {
        char *run = profile(&g->sb, true, prefetch_ways[way]);
        ck_assert_msg(strcmp(one, run) == 0, "prefetch %d:\n%s\n-- by runs --\n%s", way, one, run);
        free(run);
    }
    free(one);
    msgpack_sbuffer_destroy(&g->sb);
    free(g);
}
END_TEST

/* An aggregation fed an event beside the decoder (agg_alloc) has passed
 * sequences the decoder has not: the run's entries up to its sequence
 * are refused by the aggregation, as single entries are, and the rest
 * taken.  By hand: the direct allocate (sequence 10, 8 bytes) and the
 * run's allocate at sequence 11 (5 bytes, then freed) count; the run's
 * sequences 5 and 10 are two collector errors. */
static char *stale_profile(bool runs, size_t prefetch, uint64_t *errors)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    struct wire_hello h = {0};
    h.version = WIRE_PROTOCOL_VERSION;
    h.mode = WIRE_MODE_MEMORY;
    h.config = (struct wire_config){0, 0, 100, 32u << 20, AGG_RETENTION_BUDGET_MAX, 16u << 20};
    h.backend = (struct wire_str){"interpreter_alloc_hooks", 23};
    h.capabilities = WIRE_CAP_HEAP_ALLOCATION_HOOKS | WIRE_CAP_FREE_AND_RESIZE_EVENTS;
    ck_assert_int_eq(wire_encode_hello(&sb, &h), 0);
    uint8_t bin[4 * WIRE_ALLOC_SIZE];
    struct wire_batch b = {bin, sizeof bin, 0, 0};
    const struct wire_exec none = {WIRE_NONE32, WIRE_NONE32, WIRE_NONE32};
    const struct wire_alloc run[4] = {
        {5, WIRE_OP_ALLOCATE, 2, WIRE_NONE64, 3, none, WIRE_NONE32, WIRE_SPAN_NONE},
        {10, WIRE_OP_ALLOCATE, 3, WIRE_NONE64, 4, none, WIRE_NONE32, WIRE_SPAN_NONE},
        {11, WIRE_OP_ALLOCATE, 4, WIRE_NONE64, 5, none, WIRE_NONE32, WIRE_SPAN_NONE},
        {12, WIRE_OP_FREE, 4, 5, WIRE_NONE64, none, WIRE_NONE32, WIRE_SPAN_NONE},
    };
    for (int i = 0; i < 4; i++)
        ck_assert(wire_batch_alloc(&b, &run[i]));
    ck_assert_int_eq(wire_encode_events(&sb, b.count, bin, b.len), 0);
    struct wire_finish f = {WIRE_TERM_RETURNED, 1, WIRE_NONE64, 0, 0, 0, false, false};
    ck_assert_int_eq(wire_encode_finish(&sb, &f), 0);

    struct wire_decoder *d = wire_decoder_new(WIRE_TO_DAEMON);
    struct agg *g = agg_new();
    ck_assert_ptr_nonnull(d);
    ck_assert_ptr_nonnull(g);
    agg_prefetch_above(g, prefetch);
    size_t off = 0;
    for (;;) {
        struct wire_record rec;
        int rc;
        while ((rc = wire_decoder_next(d, &rec)) == 0 && off < sb.size)
            off += wire_decoder_push(d, sb.data + off, sb.size - off);
        ck_assert_int_ge(rc, 0);
        if (rc == 0)
            break;
        ck_assert_int_eq(runs ? feed_record(g, d, &rec) : feed_record_entries(g, d, &rec), 0);
        if (rec.type == WIRE_HELLO) {
            const struct wire_alloc beside = {
                10, WIRE_OP_ALLOCATE, 1, WIRE_NONE64, 8, none, WIRE_NONE32, WIRE_SPAN_NONE};
            ck_assert_int_eq(agg_alloc(g, &beside), 0);
        }
    }
    agg_end(g);
    *errors = agg_error_count(g);
    char *out = agent_document(g);
    agg_free(g);
    wire_decoder_free(d);
    msgpack_sbuffer_destroy(&sb);
    return out;
}

START_TEST(runs_refuse_sequences_the_aggregation_passed)
{
    uint64_t errors_one, errors_run;
    char *one = stale_profile(false, 0, &errors_one);
    ck_assert_uint_eq(errors_one, 2);
    for (int way = 0; way < 2; way++) {
        char *run = stale_profile(true, prefetch_ways[way], &errors_run);
        ck_assert_uint_eq(errors_run, 2);
        ck_assert_str_eq(run, one);
        ck_assert_ptr_nonnull(strstr(run, "\n    allocation_count: 2\n"));
        ck_assert_ptr_nonnull(strstr(run, "\n    allocated_bytes: 13\n"));
        ck_assert_ptr_nonnull(strstr(run, "\n    freed_bytes: 5\n"));
        free(run);
    }
    free(one);
}
END_TEST

Suite *feed_runs_suite(void)
{
    Suite *s = suite_create("feed_runs");
    TCase *t = tcase_create("equivalence");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, runs_give_the_profile_of_single_entries);
    tcase_add_test(t, runs_give_the_export_detail_of_single_entries);
    tcase_add_test(t, runs_refuse_sequences_the_aggregation_passed);
    tcase_add_test(t, a_string_resized_while_records_move);
    tcase_add_test(t, a_resize_at_a_new_site_takes_the_records_room);
    suite_add_tcase(s, t);
    return s;
}
