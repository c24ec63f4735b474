/*
 * The walk of retained holders (agent/retain.c) on programs run by the
 * interpreter: two bindings reaching one object, namespaces in load
 * order, cycles through a binding and through nothing, the budget cuts,
 * and a walk that changes nothing.  A test observer gives each object the
 * creation site of its leaf function (one stack node per function).
 * Sizes are jett(1)'s: a string 24 + length, a list 32 + 16 a slot
 * (pushing into a full one grows it to twice, at least 4), a map 48 + 40
 * a slot ({} has none, a first insert makes 8).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/interp-internal.h"
#include "agent/retain.h"
#include "agent/stacktab.h"
#include "tests/testutil.h"

Suite *retain_suite(void);

struct run {
    struct interp_program *p;
    struct interp_state *s;
    struct stacktab tab;
    uint64_t events;
    char out[4096]; /* the records, one a line */
    size_t len;
    int stop_after; /* emit fails after this many records (0: never) */
    int records;
    char *dir;
};

/* The creation site: a node per leaf function, as the profiler's leaf. */
static void observe(void *ctx, enum heap_op op, struct heap_obj *o, uint64_t old, uint64_t neu)
{
    struct run *r = ctx;
    r->events++;
    uint32_t depth = interp_stack_depth(r->s);
    (void)old, (void)neu;
    if (op != HEAP_OP_ALLOCATE || depth == 0)
        return;
    bool created;
    uint32_t func = interp_stack_frame(r->s, depth - 1).func_id;
    uint32_t node = stacktab_intern(&r->tab, WIRE_NONE32, func, WIRE_SPAN_NONE, &created);
    o->site = node;
}

HEAP_OBSERVER_OF(observer, observe);

/* "ns.name rows complete": rows as FUNCTION:BYTES:OBJECTS by name. */
static int emit(void *ctx, const struct wire_retained *rec)
{
    struct run *r = ctx;
    if (r->stop_after && r->records == r->stop_after)
        return -1;
    r->records++;
    char *at = r->out + r->len;
    size_t room = sizeof r->out - r->len;
    int n = rec->ns.ptr ? snprintf(at, room, "%.*s.%.*s", (int)rec->ns.len, rec->ns.ptr,
                                   (int)rec->name.len, rec->name.ptr)
                        : snprintf(at, room, "-");
    for (uint32_t i = 0; i < rec->n_rows; i++) {
        struct wire_retained_row row = wire_retained_row_at(rec, i);
        const char *fn =
            row.func_id == WIRE_NONE32 ? "?" : interp_func_get(r->p, row.func_id)->name;
        n += snprintf(at + n, room - (size_t)n, "%s%s:%llu:%llu", i ? "," : " ", fn,
                      (unsigned long long)row.bytes, (unsigned long long)row.objects);
    }
    n += snprintf(at + n, room - (size_t)n, "%s%s\n", rec->n_rows ? "" : " -",
                  rec->complete ? "" : " (incomplete)");
    r->len += (size_t)n;
    return 0;
}

/* Loads main.jett (and lib.jett when given) and runs it, observed. */
static void start(struct run *r, const char *main_text, const char *lib_text)
{
    memset(r, 0, sizeof *r);
    r->dir = tu_tmpdir();
    char *path = tu_write_program(r->dir, "main.jett", main_text);
    if (lib_text)
        free(tu_write_program(r->dir, "lib.jett", lib_text));
    struct interp_diags d = {0};
    r->p = interp_load(path, NULL, &d);
    ck_assert_msg(r->p != NULL, "%s", d.len ? d.items[0].message : "");
    free(path);
    r->s = interp_new(r->p, NULL, NULL);
    ck_assert_ptr_nonnull(r->s);
    stacktab_init(&r->tab, 1u << 20);
    interp_set_heap_observer(r->s, &observer, r);
    struct interp_result res;
    ck_assert_int_eq(interp_run(r->s, &res), 0);
    ck_assert_int_eq(res.termination, INTERP_RETURNED);
    interp_result_free(&res);
}

/* Sum of reference counts over the live objects, those that read as
 * reached, and their number (which the heap counts too). */
static void heap_state(struct interp_state *s, uint64_t *rc, uint64_t *marks, uint64_t *n)
{
    *rc = *marks = *n = 0;
    for (struct heap_obj *o = s->heap.live.next; o != &s->heap.live; o = o->next)
        *rc += o->rc, *marks += o->mark != s->heap.unmarked, (*n)++;
    ck_assert_uint_eq(*n, s->heap.n_live);
}

/* Walks with `budget` and checks that the walk changed nothing. */
static int walk(struct run *r, size_t budget)
{
    uint64_t rc0, marks0, n0, rc1, marks1, n1, events = r->events, ids = r->s->heap.next_id,
                                               tries = r->s->heap.attempts;
    heap_state(r->s, &rc0, &marks0, &n0);
    int rc = retain_walk(r->s, &r->tab, budget, emit, r);
    heap_state(r->s, &rc1, &marks1, &n1);
    ck_assert_uint_eq(marks0, 0);
    ck_assert_uint_eq(marks1, 0);
    ck_assert_uint_eq(rc1, rc0);
    ck_assert_uint_eq(n1, n0);
    ck_assert_uint_eq(r->events, events);
    ck_assert_uint_eq(r->s->heap.next_id, ids);
    ck_assert_uint_eq(r->s->heap.attempts, tries);
    return rc;
}

static void finish(struct run *r)
{
    interp_free(r->s);
    interp_program_free(r->p);
    stacktab_destroy(&r->tab);
    tu_remove_in_tmpdir(r->dir);
}

/* x (24 + 10 = 34 bytes, made in make) is reached by lib.store first in
 * time, by app.a and app.b: app's namespace loads first and a is
 * declared before b, so a holds it.  Each list: [] then one push, 32 +
 * 16 * 4 = 96 bytes, made in its namespace's <init>. */
START_TEST(first_binding_in_load_order_holds)
{
    struct run r;
    start(&r,
          "namespace app\nimport lib\nlet a = []\nlet b = []\n"
          "fn make() -> string {\n    return repeat(\"y\", 10)\n}\n"
          "fn main() {\n    let x = make()\n    lib.keep(x)\n    push(b, x)\n    push(a, x)\n}\n",
          "namespace lib\nlet store = []\nfn keep(v: string) {\n    push(store, v)\n}\n");
    ck_assert_int_eq(walk(&r, 64u << 20), 0);
    static const char want[] = "app.a make:34:1,<init>:96:1\n"
                               "app.b <init>:96:1\n"
                               "lib.store <init>:96:1\n"
                               "- -\n";
    ck_assert_str_eq(r.out, want);
    /* every object was reached: the heap's mark flipped, and a second
     * walk sees the same */
    ck_assert_uint_eq(r.s->heap.unmarked, 1);
    r.len = 0, r.out[0] = 0;
    ck_assert_int_eq(walk(&r, 64u << 20), 0);
    ck_assert_str_eq(r.out, want);
    ck_assert_uint_eq(r.s->heap.unmarked, 0);
    finish(&r);
}
END_TEST

/* g holds itself and a map that holds itself: each counted once.  g: []
 * then two pushes, 96 bytes (<init>); m: {} then one insert, 48 + 40 * 8
 * = 368 bytes (main); the key is a constant, not counted.  c = [1] (one
 * slot, 48) then a push of itself: 96 bytes, reached by no binding. */
START_TEST(cycles_count_once)
{
    struct run r;
    start(&r,
          "namespace app\nlet g = []\n"
          "fn main() {\n    push(g, g)\n    let m = {}\n    m[\"self\"] = m\n    push(g, m)\n"
          "    let c = [1]\n    push(c, c)\n}\n",
          NULL);
    ck_assert_int_eq(walk(&r, 64u << 20), 0);
    ck_assert_str_eq(r.out, "app.g main:368:1,<init>:96:1\n"
                            "- main:96:1\n");
    finish(&r);
}
END_TEST

static const char deep[] = "namespace app\nlet deep = []\n"
                           "fn main() {\n    let cur = deep\n    for i in 0..100 {\n"
                           "        let n = []\n        push(cur, n)\n        cur = n\n    }\n}\n";

/* deep holds a chain of 100 lists, each of one child (96 bytes) but the
 * last ([], 32 bytes), all made in main: 99 * 96 + 32 = 9536 bytes.
 * Slots: main, <init>, <truncated-stack>, unknown: 4 * 40 = 160 bytes;
 * the path 64 levels (1024 bytes) first, 64 + 128 levels (3072) to grow. */
START_TEST(budget_cuts_the_walk)
{
    struct run r;
    start(&r, deep, NULL);
    ck_assert_int_eq(walk(&r, 160 + 3072), 0);
    ck_assert_str_eq(r.out, "app.deep main:9536:100,<init>:96:1\n- -\n");
    /* room for 64 levels only: the root and 64 lists are credited, the
     * 65th level does not fit */
    r.len = 0, r.out[0] = 0;
    ck_assert_int_eq(walk(&r, 160 + 3071), 1);
    ck_assert_str_eq(r.out, "app.deep main:6144:64,<init>:96:1 (incomplete)\n- - (incomplete)\n");
    /* no room for the path: the root only */
    r.len = 0, r.out[0] = 0;
    ck_assert_int_eq(walk(&r, 160 + 1023), 1);
    ck_assert_str_eq(r.out, "app.deep <init>:96:1 (incomplete)\n- - (incomplete)\n");
    /* no room for the slots: nothing walked */
    r.len = 0, r.out[0] = 0;
    ck_assert_int_eq(walk(&r, 159), 1);
    ck_assert_str_eq(r.out, "- - (incomplete)\n");
    finish(&r);
}
END_TEST

/* A send that fails stops the walk; marks are still cleared (walk()). */
START_TEST(emit_failure_stops)
{
    struct run r;
    start(&r, "namespace app\nlet a = [[1]]\nlet b = [2]\nfn main() {\n}\n", NULL);
    r.stop_after = 1;
    ck_assert_int_eq(walk(&r, 64u << 20), -1);
    ck_assert_str_eq(r.out, "app.a <init>:96:2\n");
    finish(&r);
}
END_TEST

Suite *retain_suite(void)
{
    Suite *s = suite_create("retain");
    TCase *t = tcase_create("walk");
    tcase_add_test(t, first_binding_in_load_order_holds);
    tcase_add_test(t, cycles_count_once);
    tcase_add_test(t, budget_cuts_the_walk);
    tcase_add_test(t, emit_failure_stops);
    suite_add_tcase(s, t);
    return s;
}
