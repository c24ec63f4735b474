/* A memory profile's ALLOC entries are aggregated in runs read where they
 * lie in the frame (feed_record); fed one decoded entry at a time
 * instead, the same random streams must give the same document, byte
 * for byte: with every kind of collector error, stacks defined between
 * allocations, gaps in ids that slide the window, and retention and
 * stack budgets that run out. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/agg.h"
#include "daemon/rank.h"
#include "daemon/render.h"
#include "proto/wire.h"
#include "tests/feed_entries.h"

Suite *feed_runs_suite(void);

#define NFUNCS 6
#define MAX_LIVE 4096

static const char text[] = "fn a() {}\nfn b() {}\nfn c() {}\n";

struct gen {
    unsigned seed;
    msgpack_sbuffer sb;
    uint8_t bin[1600 * WIRE_ALLOC_SIZE];
    size_t len;
    uint32_t count, n_stacks;
    uint64_t seq, next_id;
    uint64_t live_id[MAX_LIVE], live_size[MAX_LIVE];
    size_t n_live;
    bool dirty; /* collector errors now and then */
};

static unsigned rnd(struct gen *g, unsigned n)
{
    return (unsigned)rand_r(&g->seed) % n;
}

static void header(struct gen *g)
{
    struct wire_hello h = {0};
    h.version = WIRE_PROTOCOL_VERSION;
    h.mode = WIRE_MODE_MEMORY;
    /* budgets small enough to run out now and then */
    uint64_t retention = rnd(g, 3) ? AGG_RETENTION_BUDGET_MAX : 2048 + rnd(g, 16384);
    uint64_t stacks = rnd(g, 4) ? AGG_STACK_BUDGET_MAX : 2048 + rnd(g, 8192);
    h.config = (struct wire_config){0, rnd(g, 2) ? 0 : 500, 100, 32u << 20, retention, stacks};
    h.backend = (struct wire_str){"interpreter_alloc_hooks", 23};
    h.capabilities = WIRE_CAP_HEAP_ALLOCATION_HOOKS | WIRE_CAP_FREE_AND_RESIZE_EVENTS;
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

/* A size, now and then 0 or too large to track. */
static uint64_t size(struct gen *g)
{
    unsigned r = rnd(g, 64);
    return r == 0 ? 0 : r == 1 && g->dirty ? (UINT64_C(1) << 40) + rnd(g, 9) : 1 + rnd(g, 5000);
}

static void put_alloc(struct gen *g)
{
    struct wire_alloc a = {++g->seq,    0,
                           0,           WIRE_NONE64,
                           WIRE_NONE64, {rnd(g, 3), WIRE_NONE32, rnd(g, 4)},
                           WIRE_NONE32, WIRE_SPAN_NONE};
    if (rnd(g, 10))
        a.stack_id = rnd(g, g->n_stacks);
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
        a.allocation_id = g->live_id[k];
        bool wrong = g->dirty && rnd(g, 40) == 0;
        a.old_size = g->live_size[k] + wrong;
        if (g->dirty && rnd(g, 60) == 0)
            a.allocation_id = g->next_id + 10 + rnd(g, 100); /* unknown */
        if (a.op == WIRE_OP_RESIZE) {
            a.new_size = size(g);
            g->live_size[k] = a.new_size;
        } else if (!g->dirty || rnd(g, 30)) { /* else freed twice */
            g->live_id[k] = g->live_id[--g->n_live];
            g->live_size[k] = g->live_size[g->n_live];
        }
    }
    g->len += wire_put_alloc(g->bin + g->len, &a);
    g->count++;
}

/* A random memory stream in g->sb. */
static void generate(struct gen *g, unsigned seed)
{
    memset(g, 0, sizeof *g);
    g->seed = seed;
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

/* The agent document of the stream, fed by feed_record (runs) or one
 * decoded entry at a time. */
static char *profile(const msgpack_sbuffer *sb, bool runs)
{
    struct wire_decoder *d = wire_decoder_new(WIRE_TO_DAEMON);
    struct agg *g = agg_new();
    ck_assert_ptr_nonnull(d);
    ck_assert_ptr_nonnull(g);
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
    struct rank_options opt = {0};
    struct rank_report rep;
    ck_assert_int_eq(rank_build(g, &opt, &rep), 0);
    char *out, err[128];
    size_t len;
    ck_assert_int_eq(render_toon(&rep, &out, &len, err, sizeof err), 0);
    rank_free(&rep);
    agg_free(g);
    wire_decoder_free(d);
    return out;
}

START_TEST(runs_give_the_profile_of_single_entries)
{
    unsigned reasons[4] = {0};
    static const char *const reason[4] = {"status: complete", "reason: collector_failure",
                                          "reason: retention_metadata_limit",
                                          "reason: stack_capture_limit"};
    for (unsigned seed = 1; seed <= 1000; seed++) {
        struct gen *g = malloc(sizeof *g);
        ck_assert_ptr_nonnull(g);
        generate(g, seed);
        char *one = profile(&g->sb, false), *run = profile(&g->sb, true);
        size_t at = 0;
        while (one[at] && one[at] == run[at])
            at++;
        size_t from = at > 120 ? at - 120 : 0;
        ck_assert_msg(one[at] == run[at], "seed %u, byte %zu:\n%.200s\n-- by runs --\n%.200s", seed,
                      at, one + from, run + from);
        for (int i = 0; i < 4; i++)
            reasons[i] += strstr(one, reason[i]) != NULL;
        free(one);
        free(run);
        msgpack_sbuffer_destroy(&g->sb);
        free(g);
    }
    /* the streams reach the cases they are there for */
    for (int i = 0; i < 4; i++)
        ck_assert_msg(reasons[i] >= 10, "%u streams with %s", reasons[i], reason[i]);
}
END_TEST

Suite *feed_runs_suite(void)
{
    Suite *s = suite_create("feed_runs");
    TCase *t = tcase_create("equivalence");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, runs_give_the_profile_of_single_entries);
    suite_add_tcase(s, t);
    return s;
}
