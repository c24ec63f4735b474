/*
 * Stack identity in memory mode, end to end: every STACK entry and the
 * stack and span of every ALLOC in a capture are what a full walk of the
 * frames at each event gives, interned by this test's own model of the
 * agent's table (ids dense in creation order, root first, at most 128
 * levels with <truncated-stack> as the last, at the call of the frame
 * below it, nodes refused once the table's budget is spent).  The
 * frames come from JETT_TEST_STACK_WALK, written before the profiler
 * looks at the event; the profiler's own per-frame nodes never enter the
 * expectation.  A free that folded into its allocate (a FOLD entry,
 * jett-capture(5)) has no entry and needs no stack: its walk line is
 * passed over, and must be one a FOLD named.
 */
#include <check.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define NONE UINT32_MAX
#define MAX_LEVELS 128

/* ck_assert_msg for the checks made at every event: Check reports each
 * passed ck_assert to the test's parent process (a write), millions of
 * writes for one program here; this calls into Check on failure only. */
#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond))                                                                               \
            ck_abort_msg(__VA_ARGS__);                                                             \
    } while (0)

/* ---- the model: (parent, func, site) -> id, open addressing ---- */

struct node {
    uint32_t parent, func, start, end;
};

struct model {
    struct node *nodes; /* by id */
    uint32_t *slots;    /* ids; NONE when empty */
    uint32_t count, limit, mask;
};

static void model_init(struct model *m, uint32_t limit)
{
    m->count = 0, m->limit = limit;
    m->mask = (1u << 21) - 1; /* far more than any program here creates */
    m->slots = malloc((size_t)(m->mask + 1) * sizeof *m->slots);
    m->nodes = malloc((size_t)(m->mask + 1) / 2 * sizeof *m->nodes);
    memset(m->slots, 0xff, (size_t)(m->mask + 1) * sizeof *m->slots);
}

static void model_free(struct model *m)
{
    free(m->slots), free(m->nodes);
}

/* The node's id, created (and written to *made) when new; NONE when the
 * table is full. */
static uint32_t model_intern(struct model *m, struct node k, struct node *made, uint32_t *n_made)
{
    uint32_t h = (k.parent * 31u + k.func) * 1000003u ^ (k.start * 7919u + k.end);
    for (uint32_t i = h & m->mask;; i = (i + 1) & m->mask) {
        uint32_t id = m->slots[i];
        if (id == NONE) {
            if (m->count == m->limit)
                return NONE;
            m->nodes[m->count] = k;
            made[(*n_made)++] = k;
            m->slots[i] = m->count;
            return m->count++;
        }
        struct node *n = &m->nodes[id];
        if (n->parent == k.parent && n->func == k.func && n->start == k.start && n->end == k.end)
            return id;
    }
}

/* ---- reading the walk and the dump ---- */

/* One walk line, "KEPT DEPTH FUNC:START:END...", onto the frames of the
 * line before (at most the first MAX_LEVELS are written); the depth. */
static uint32_t parse_frames(const char *line, struct node *f)
{
    char *end;
    uint32_t n = (uint32_t)strtoul(line, &end, 10);
    uint32_t depth = (uint32_t)strtoul(end + 1, &end, 10);
    for (; *end == ' '; n++) {
        EXPECT(n < MAX_LEVELS, "walk line past %d frames: %.80s", MAX_LEVELS, line);
        f[n].func = (uint32_t)strtoul(end + 1, &end, 10);
        f[n].start = (uint32_t)strtoul(end + 1, &end, 10);
        f[n].end = (uint32_t)strtoul(end + 1, &end, 10);
    }
    EXPECT(n == (depth < MAX_LEVELS ? depth : MAX_LEVELS), "walk line of depth %u has %u frames",
           depth, n);
    return depth;
}

/* What follows `key` in the dump line at `line` (asserting it is there):
 * searched within the line, for strstr on the rest of the dump costs its
 * whole length under the sanitizers (they measure the haystack). */
static const char *in_line(const char *line, const char *key)
{
    const char *p = memmem(line, (size_t)(strchrnul(line, '\n') - line), key, strlen(key));
    EXPECT(p != NULL, "no %s in %.80s", key, line);
    return p + strlen(key);
}

/* "key=" value in a dump line; NONE for "-". */
static uint32_t field(const char *line, const char *key)
{
    const char *p = in_line(line, key);
    return *p == '-' ? NONE : (uint32_t)strtoul(p, NULL, 10);
}

/* "key=A-B" in a dump line; both NONE for "-". */
static void span_field(const char *line, const char *key, uint32_t *a, uint32_t *b)
{
    const char *p = in_line(line, key);
    if (*p == '-') {
        *a = *b = NONE;
        return;
    }
    char *end;
    *a = (uint32_t)strtoul(p, &end, 10);
    *b = (uint32_t)strtoul(end + 1, NULL, 10);
}

static uint32_t truncated_func(const char *dump)
{
    const char *p = strstr(dump, "function=\"<truncated-stack>\"");
    ck_assert_ptr_nonnull(p);
    while (p > dump && p[-1] != '\n')
        p--;
    return field(p, "FUNC id=");
}

/* The levels a walk of frames records, as nodes without parents. */
static uint32_t levels(const struct node *f, uint32_t depth, uint32_t trunc, struct node *lv)
{
    uint32_t n = depth > MAX_LEVELS ? MAX_LEVELS : depth;
    uint32_t real = depth > MAX_LEVELS ? MAX_LEVELS - 1 : depth;
    for (uint32_t i = 0; i < real; i++)
        lv[i] = (struct node){0, f[i].func, i ? f[i - 1].start : NONE, i ? f[i - 1].end : NONE};
    if (real < n) /* made by the call the last real frame was making */
        lv[real] = (struct node){0, trunc, f[real - 1].start, f[real - 1].end};
    return n;
}

struct tally {
    uint64_t allocs, stacks, unavailable, truncated, deepest, folds;
};

/* The sequence of the first ALLOC or FOLD line at or after `line`. */
static uint64_t next_entry_seq(const char *line)
{
    for (; *line; line = strchr(line, '\n') + 1)
        if (strncmp(line, "  ALLOC ", 8) == 0 || strncmp(line, "  FOLD ", 7) == 0)
            return strtoull(in_line(line, "seq="), NULL, 10);
    return UINT64_MAX;
}

/* The free sequences of the FOLD entries read so far whose frees the
 * walk has not passed yet (at most WIRE_FOLD_MAX, 255, wait). */
struct folded {
    uint64_t seq[256];
    unsigned n;
};

/* Passes over the walk line of event `seq` when a FOLD folded its free;
 * false when none did. */
static bool pass_folded(struct folded *f, uint64_t seq)
{
    for (unsigned i = 0; i < f->n; i++)
        if (f->seq[i] == seq) {
            f->seq[i] = f->seq[--f->n];
            return true;
        }
    return false;
}

/* Checks every entry of the dump against the walk; counts what it saw. */
static void check_capture(const char *dump, const char *walk, uint32_t limit, struct tally *t)
{
    uint32_t trunc = truncated_func(dump);
    struct model m;
    model_init(&m, limit);
    static struct node frames[MAX_LEVELS], lv[MAX_LEVELS], made[MAX_LEVELS];
    uint32_t n_made = 0, next_made = 0; /* STACK entries expected before the next ALLOC */
    bool pending = false;               /* the walk line of the next ALLOC is interned */
    uint32_t want_stack = NONE, want_start = NONE, want_end = NONE;
    const char *w = walk;
    uint64_t walked = 0; /* walk lines read: events walk line n is sequence n */
    static struct folded folded;
    folded.n = 0;
    memset(t, 0, sizeof *t);
    for (const char *line = dump; *line; line = strchr(line, '\n') + 1) {
        bool is_stack = strncmp(line, "  STACK ", 8) == 0,
             is_fold = strncmp(line, "  FOLD ", 7) == 0,
             is_alloc = is_fold || strncmp(line, "  ALLOC ", 8) == 0;
        if ((is_stack || is_alloc) && !pending) {
            /* The next event's expected entries, from its walk line;
             * the walk lines of folded frees before it are passed (read
             * still: each line says only what changed since the last). */
            for (uint64_t seq = next_entry_seq(line); walked + 1 < seq; walked++) {
                EXPECT(*w, "more ALLOC entries than walked events");
                EXPECT(pass_folded(&folded, walked + 1),
                       "event %" PRIu64 " has no entry, and no FOLD folded it", walked + 1);
                parse_frames(w, frames);
                w = strchr(w, '\n') + 1;
            }
            EXPECT(*w, "more ALLOC entries than walked events");
            uint32_t depth = parse_frames(w, frames);
            w = strchr(w, '\n') + 1;
            walked++;
            uint32_t n = levels(frames, depth, trunc, lv), parent = NONE;
            n_made = next_made = 0;
            for (uint32_t i = 0; i < n && (i == 0 || parent != NONE); i++) {
                lv[i].parent = parent;
                parent = model_intern(&m, lv[i], made, &n_made);
            }
            want_stack = n ? parent : NONE;
            want_start = want_end = NONE;
            if (want_stack != NONE && depth <= MAX_LEVELS)
                want_start = frames[depth - 1].start, want_end = frames[depth - 1].end;
            t->unavailable += n && want_stack == NONE;
            t->truncated += depth > MAX_LEVELS;
            t->deepest = depth > t->deepest ? depth : t->deepest;
            pending = true;
        }
        if (is_stack) {
            EXPECT(next_made < n_made, "unexpected %.60s", line);
            struct node *k = &made[next_made];
            uint32_t id = m.count - n_made + next_made, a, b;
            span_field(line, "site=", &a, &b);
            EXPECT(field(line, "id=") == id && field(line, "parent=") == k->parent &&
                       field(line, "func=") == k->func && a == k->start && b == k->end,
                   "allocation %" PRIu64 ": %.80s, want id=%u parent=%u func=%u", t->allocs, line,
                   id, k->parent, k->func);
            next_made++;
            t->stacks++;
        } else if (is_alloc) {
            EXPECT(next_made == n_made, "allocation %" PRIu64 ": %u STACK entries missing",
                   t->allocs, n_made - next_made);
            uint32_t a, b;
            span_field(line, "span=", &a, &b);
            EXPECT(field(line, "stack=") == want_stack && a == want_start && b == want_end,
                   "%.120s: want stack %u span %u-%u", line, want_stack, want_start, want_end);
            if (is_fold) {
                EXPECT(folded.n < 256, "more than 255 folds wait for their frees");
                folded.seq[folded.n++] = strtoull(in_line(line, "free_seq="), NULL, 10);
                t->folds++;
            }
            pending = false;
            t->allocs++;
        }
    }
    for (; *w; w = strchr(w, '\n') + 1, walked++)
        EXPECT(pass_folded(&folded, walked + 1), "walked event %" PRIu64 " without an ALLOC entry",
               walked + 1);
    EXPECT(folded.n == 0, "%u folds name frees that were never walked", folded.n);
    model_free(&m);
}

/* Runs `prog` with a memory capture and the walk (and an agent stack
 * budget of `budget` bytes, 0 for the real one) and checks the capture;
 * `limit` is the node count that budget holds. */
static void run_checked(const char *prog, const char *budget, uint32_t limit, int status,
                        struct tally *t)
{
    char cap[600], walkp[600];
    snprintf(cap, sizeof cap, "%s/run.jcap", tu_dir);
    snprintf(walkp, sizeof walkp, "%s/walk.txt", tu_dir);
    setenv("JETT_TEST_STACK_WALK", walkp, 1);
    if (budget)
        setenv("JETT_TEST_AGENT_STACK_BUDGET", budget, 1);
    struct tu_output o;
    const char *argv[] = {tu_jett, "run",     prog, "--profile-memory", "--profile-capture",
                          cap,     "--agent", NULL};
    ck_assert_int_eq(tu_run(argv, NULL, 0, &o), 0);
    unsetenv("JETT_TEST_STACK_WALK");
    unsetenv("JETT_TEST_AGENT_STACK_BUDGET");
    ck_assert_msg(o.status == status, "%s: status %d\n%s", prog, o.status, o.err);
    tu_output_free(&o);
    const char *dump_argv[] = {tu_jett, "profile", "dump", cap, NULL};
    ck_assert_int_eq(tu_run(dump_argv, NULL, 0, &o), 0);
    ck_assert_int_eq(o.status, 0);
    size_t len;
    char *walk = tu_read_file(walkp, &len);
    ck_assert_ptr_nonnull(walk);
    check_capture(o.out, walk, limit, t);
    ck_assert_uint_gt(t->allocs, 0);
    free(walk);
    tu_output_free(&o);
}

/* Deep recursion past 128 frames with allocations at every level, two
 * call sites of the same function (as in binary trees), errors raised
 * deep and caught shallower (the frames between unwind), a user function
 * called from a builtin (sort), and standard library frames. */
static const char shapes[] = "namespace shapes\n"
                             "import std.math\n"
                             "fn tree(d: int) -> list {\n"
                             "    if d == 0 {\n"
                             "        return [d]\n"
                             "    }\n"
                             "    return [tree(d - 1), tree(d - 1), str(d)]\n"
                             "}\n"
                             "fn deep(n: int, acc: list) -> int {\n"
                             "    push(acc, str(n))\n"
                             "    if n == 0 {\n"
                             "        return len(acc)\n"
                             "    }\n"
                             "    return deep(n - 1, acc)\n"
                             "}\n"
                             "fn boom(n: int) -> int {\n"
                             "    let s = str(n) + \"!\"\n"
                             "    if n == 0 {\n"
                             "        fail(\"deep \" + s)\n"
                             "    }\n"
                             "    return boom(n - 1) + len(s)\n"
                             "}\n"
                             "fn caught(n: int) -> string {\n"
                             "    try {\n"
                             "        boom(n)\n"
                             "    } catch e {\n"
                             "        return e + str(n)\n"
                             "    }\n"
                             "    return \"\"\n"
                             "}\n"
                             "fn by_len(a: string, b: string) -> int {\n"
                             "    let x = a + b\n"
                             "    return len(a) - len(b)\n"
                             "}\n"
                             "fn main() {\n"
                             "    let t = tree(6)\n"
                             "    for d in [10, 127, 128, 129, 300, 129] {\n"
                             "        print(deep(d, []))\n"
                             "        print(caught(d))\n"
                             "    }\n"
                             "    let words = []\n"
                             "    for i in 0..40 {\n"
                             "        push(words, str(math.pow(3, i % 7)))\n"
                             "    }\n"
                             "    print(len(sort(words, by_len)))\n"
                             "    print(caught(5), len(t))\n"
                             "}\n";

START_TEST(shapes_match_a_full_walk)
{
    char *prog = tu_write_program(tu_dir, "shapes.jett", shapes);
    ck_assert_ptr_nonnull(prog);
    struct tally t;
    run_checked(prog, NULL, 1u << 20, 0, &t);
    /* Deeper than the wire allows, so truncated stacks were checked too. */
    ck_assert_uint_eq(t.deepest, 303); /* main > caught > boom(300), ..., boom(0) */
    ck_assert_uint_gt(t.truncated, 0);
    ck_assert_uint_eq(t.unavailable, 0);
    ck_assert_uint_gt(t.folds, 0); /* and the walk lines of folded frees were passed */
    free(prog);
}
END_TEST

/* 15,360 bytes hold a table of 512 slots (256 + 512 slots while it
 * grows: 768 * 20 bytes) but not of 1,024 (1,536 * 20 bytes): at most
 * 256 nodes (the table stays at most half full). */
START_TEST(a_table_that_fills_mid_run)
{
    char *prog = tu_write_program(tu_dir, "shapes.jett", shapes);
    ck_assert_ptr_nonnull(prog);
    struct tally t;
    run_checked(prog, "15360", 256, 0, &t);
    ck_assert_uint_eq(t.stacks, 256);
    ck_assert_uint_gt(t.unavailable, 0);
    /* Stacks made of existing nodes still resolve after it filled. */
    ck_assert_uint_gt(t.allocs - t.unavailable, t.unavailable / 100);
    free(prog);
}
END_TEST

/* The four small programs (at most 128k allocations) first, then the
 * three of 0.7 to 2.2 million. */
static const char *const fixtures[] = {
    "fixtures/programs/recursive/main.jett",      "fixtures/programs/sleeper/main.jett",
    "fixtures/programs/speedup/before/main.jett", "fixtures/programs/speedup/after/main.jett",
    "fixtures/programs/jsonish/main.jett",        "fixtures/programs/textpipe/main.jett",
    "fixtures/programs/cache/main.jett",
};
#define SMALL_FIXTURES 4

/* Unoptimized under the sanitizers the run and the dump (up to 400 MB of
 * text) of a large program take tens of seconds of CPU each, minutes on
 * a loaded machine: there the small programs, the shapes and the full
 * tables check memory safety; the optimized builds check every program. */
#ifndef __has_feature
#define __has_feature(x) 0
#endif
#if defined(__SANITIZE_ADDRESS__) || __has_feature(address_sanitizer)
#define CHECKED_FIXTURES SMALL_FIXTURES
#else
#define CHECKED_FIXTURES (int)(sizeof fixtures / sizeof *fixtures)
#endif

static int expected_status(const char *prog)
{
    char path[700];
    snprintf(path, sizeof path, "%s", prog);
    char *slash = strrchr(path, '/');
    snprintf(slash, sizeof path - (size_t)(slash - path), "/expected.status");
    size_t len;
    char *s = tu_read_file(path, &len);
    int status = s ? atoi(s) : 0;
    free(s);
    return status;
}

START_TEST(fixture_programs_match_a_full_walk)
{
    char *prog = tu_source_path(fixtures[_i]);
    struct tally t;
    run_checked(prog, NULL, 1u << 20, expected_status(prog), &t);
    free(prog);
}
END_TEST

START_TEST(fixture_programs_with_a_full_table)
{
    char *prog = tu_source_path(fixtures[_i]);
    struct tally t;
    run_checked(prog, "15360", 256, expected_status(prog), &t);
    free(prog);
}
END_TEST

Suite *stackid_e2e_suite(void)
{
    Suite *s = suite_create("stackid_e2e");
    TCase *t = tcase_create("stackid_e2e");
    tcase_set_timeout(t, 300);
    tcase_add_checked_fixture(t, tu_e2e_setup, tu_e2e_teardown);
    tcase_add_test(t, shapes_match_a_full_walk);
    tcase_add_test(t, a_table_that_fills_mid_run);
    tcase_add_loop_test(t, fixture_programs_match_a_full_walk, 0, CHECKED_FIXTURES);
    tcase_add_loop_test(t, fixture_programs_with_a_full_table, 0, 1); /* recursive */
    suite_add_tcase(s, t);
    return s;
}
