/* Heap boundary tests: exact allocate/resize/free sequences and sizes,
 * ids never reused, no events for constants or teardown, the stack at
 * each event, and the failing-allocation switch. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/heap.h"
#include "tests/interp_harness.h"

struct recorder {
    char log[8192];
    struct interp_state *s; /* when set, each event names the leaf function */
};

static void record(void *ctx, enum heap_op op, struct heap_obj *o, uint64_t old, uint64_t neu)
{
    struct recorder *r = ctx;
    static const char ops[] = "ARF";
    char line[256];
    const char *fn = "-";
    if (r->s != NULL && interp_stack_depth(r->s) > 0) {
        struct interp_frame_info f = interp_stack_frame(r->s, interp_stack_depth(r->s) - 1);
        fn = interp_func_get(interp_state_program(r->s), f.func_id)->name;
    }
    snprintf(line, sizeof line, "%c%llu %llu>%llu %s\n", ops[op], (unsigned long long)o->id,
             (unsigned long long)old, (unsigned long long)neu, fn);
    strncat(r->log, line, sizeof r->log - strlen(r->log) - 1);
}

HEAP_OBSERVER_OF(recording, record);

START_TEST(list_growth_by_doubling)
{
    struct heap h;
    struct recorder r = {{0}, NULL};
    heap_init(&h, 0);
    heap_set_observer(&h, &recording, &r);
    struct heap_list *l = heap_list_new(&h, 0);
    for (int i = 0; i < 9; i++)
        ck_assert_int_eq(heap_list_push(&h, l, val_int(i)), 0);
    heap_release(&h, val_list(l));
    /* 32; cap 4 = 96; cap 8 = 160; cap 16 = 288 */
    ck_assert_str_eq(r.log, "A1 0>32 -\nR1 32>96 -\nR1 96>160 -\nR1 160>288 -\nF1 288>0 -\n");
    heap_destroy(&h);
}
END_TEST

START_TEST(map_growth_and_reuse)
{
    struct heap h;
    struct recorder r = {{0}, NULL};
    heap_init(&h, 0);
    heap_set_observer(&h, &recording, &r);
    struct heap_map *m = heap_map_new(&h, 0);
    char name[8];
    struct heap_str *keys[9];
    for (int i = 0; i < 9; i++) {
        snprintf(name, sizeof name, "k%d", i);
        keys[i] = heap_str_const(name, strlen(name));
        ck_assert_int_eq(heap_map_set(&h, m, keys[i], val_int(i)), 0);
    }
    ck_assert_uint_eq(m->len, 9);
    struct value out;
    ck_assert_int_eq(heap_map_remove(&h, m, keys[0], &out), 0);
    ck_assert_int_eq(out.u.i, 0);
    ck_assert_int_eq(heap_map_remove(&h, m, keys[0], &out), -1);
    ck_assert_ptr_null(heap_map_get(&safepoint_idle, m, keys[0]));
    ck_assert_int_eq(heap_map_get(&safepoint_idle, m, keys[8])->u.i, 8);
    heap_release(&h, val_map(m));
    /* 48 + 40*0; first insert: cap 8 = 368; ninth: cap 16 = 688; constants emit nothing */
    ck_assert_str_eq(r.log, "A1 0>48 -\nR1 48>368 -\nR1 368>688 -\nF1 688>0 -\n");
    for (int i = 0; i < 9; i++)
        heap_str_const_free(keys[i]);
    heap_destroy(&h);
}
END_TEST

START_TEST(map_reclaims_removed_entries_without_event)
{
    struct heap h;
    struct recorder r = {{0}, NULL};
    heap_init(&h, 0);
    heap_set_observer(&h, &recording, &r);
    struct heap_map *m = heap_map_new(&h, 8);
    struct heap_str *keys[9];
    char name[8];
    for (int i = 0; i < 9; i++) {
        snprintf(name, sizeof name, "k%d", i);
        keys[i] = heap_str_const(name, strlen(name));
    }
    for (int i = 0; i < 8; i++)
        heap_map_set(&h, m, keys[i], val_int(i));
    struct value out;
    for (int i = 0; i < 5; i++)
        heap_map_remove(&h, m, keys[i], &out);
    /* 8 slots used, 3 live: the ninth insert reclaims instead of growing */
    ck_assert_int_eq(heap_map_set(&h, m, keys[8], val_int(8)), 0);
    ck_assert_uint_eq(m->cap, 8);
    ck_assert_uint_eq(m->used, 4);
    ck_assert_str_eq(m->entries[0].key->data, "k5");
    ck_assert_str_eq(m->entries[3].key->data, "k8");
    ck_assert_int_eq(heap_map_get(&safepoint_idle, m, keys[6])->u.i, 6);
    ck_assert_ptr_null(heap_map_get(&safepoint_idle, m, keys[1]));
    ck_assert_str_eq(r.log, "A1 0>368 -\n");
    heap_release(&h, val_map(m));
    for (int i = 0; i < 9; i++)
        heap_str_const_free(keys[i]);
    heap_destroy(&h);
}
END_TEST

START_TEST(ids_never_reused)
{
    struct heap h;
    struct recorder r = {{0}, NULL};
    heap_init(&h, 0);
    heap_set_observer(&h, &recording, &r);
    struct heap_str *a = heap_str_new(&h, "abc", 3);
    heap_release(&h, val_str(a));
    struct heap_str *b = heap_str_new(&h, "", 0);
    heap_release(&h, val_str(b));
    ck_assert_str_eq(r.log, "A1 0>27 -\nF1 27>0 -\nA2 0>24 -\nF2 24>0 -\n");
    heap_destroy(&h);
}
END_TEST

START_TEST(fail_nth_allocation)
{
    struct heap h;
    struct recorder r = {{0}, NULL};
    heap_init(&h, 2);
    heap_set_observer(&h, &recording, &r);
    struct heap_list *l = heap_list_new(&h, 0);
    ck_assert_ptr_nonnull(l);
    ck_assert_int_eq(heap_list_push(&h, l, val_int(1)), -1); /* attempt 2: the growth */
    ck_assert_uint_eq(l->cap, 0);
    ck_assert_int_eq(heap_list_push(&h, l, val_int(1)), 0); /* attempt 3 succeeds */
    ck_assert_str_eq(r.log, "A1 0>32 -\nR1 32>96 -\n");
    heap_destroy(&h); /* frees the live list without events */
    ck_assert_str_eq(r.log, "A1 0>32 -\nR1 32>96 -\n");
}
END_TEST

/* Runs a program with a recording observer attached to its state. */
static void run_recorded(const char *text, unsigned long fail_at, struct recorder *rec,
                         struct interp_result *res)
{
    char *dir = tu_tmpdir();
    harness_write(dir, "main.jett", text);
    char path[4096];
    snprintf(path, sizeof path, "%s/main.jett", dir);
    struct interp_diags d;
    struct interp_program *p = interp_load(path, NULL, &d);
    ck_assert_msg(p != NULL, "%s", d.len ? d.items[0].message : "");
    struct interp_options opts = {NULL, 0, fail_at, 0};
    struct interp_host host = {0};
    host.write_stdout = NULL;
    struct interp_state *s = interp_new(p, &host, &opts);
    rec->s = s;
    interp_set_heap_observer(s, &recording, rec);
    interp_run(s, res);
    interp_free(s);
    interp_program_free(p);
    harness_rmtree(dir);
    free(dir);
}

static const char *program = "namespace t.main\n"
                             "let keep = []\n"
                             "fn build() {\n"
                             "    let l = [1, 2]\n"
                             "    push(l, 3)\n"
                             "    return l\n"
                             "}\n"
                             "fn main() {\n"
                             "    let x = build()\n"
                             "    push(keep, \"k\")\n"
                             "    let m = {\"a\": 1}\n"
                             "    m[\"b\"] = 2\n"
                             "    let s = \"ab\" + \"cd\"\n"
                             "}\n";

START_TEST(program_sequence_and_stacks)
{
    struct recorder rec = {{0}, NULL};
    struct interp_result res;
    run_recorded(program, 0, &rec, &res);
    ck_assert_int_eq(res.termination, INTERP_RETURNED);
    /* globals still held at the end are retained: no free for id 1; main's
     * locals are freed as it returns, in its frame */
    ck_assert_str_eq(rec.log, "A1 0>32 <init>\n"
                              "A2 0>64 build\n"
                              "R2 64>96 build\n"
                              "R1 32>96 main\n"
                              "A3 0>368 main\n"
                              "A4 0>28 main\n"
                              "F2 96>0 main\n"
                              "F3 368>0 main\n"
                              "F4 28>0 main\n");
    interp_result_free(&res);
}
END_TEST

START_TEST(program_failed_allocation)
{
    struct recorder rec = {{0}, NULL};
    struct interp_result res;
    run_recorded(program, 3, &rec, &res);
    ck_assert_int_eq(res.termination, INTERP_RUNTIME_ERROR);
    ck_assert_str_eq(res.message, "main.jett:5:5: runtime error: out of memory");
    /* build's list is freed as the error leaves build, in its frame */
    ck_assert_str_eq(rec.log, "A1 0>32 <init>\nA2 0>64 build\nF2 64>0 build\n");
    interp_result_free(&res);
}
END_TEST

START_TEST(string_append_in_place)
{
    struct recorder rec = {{0}, NULL};
    struct interp_result res;
    run_recorded("namespace t.main\nfn main() {\n  let s = str(1)\n  s += \"x\"\n  let t = s\n"
                 "  s += \"y\"\n}\n",
                 0, &rec, &res);
    ck_assert_int_eq(res.termination, INTERP_RETURNED);
    /* one reference: resized in place; two: a new string, the old kept by t */
    ck_assert_str_eq(rec.log,
                     "A1 0>25 main\nR1 25>26 main\nA2 0>27 main\nF2 27>0 main\nF1 26>0 main\n");
    interp_result_free(&res);
}
END_TEST

START_TEST(no_events_for_literals_or_numbers)
{
    struct recorder rec = {{0}, NULL};
    struct interp_result res;
    run_recorded("namespace t.main\nfn main() {\n  let s = \"constant\"\n  let n = 1 + 2.5\n"
                 "  for i in 0..100 {\n    n += 1\n  }\n}\n",
                 0, &rec, &res);
    ck_assert_int_eq(res.termination, INTERP_RETURNED);
    ck_assert_str_eq(rec.log, "");
    interp_result_free(&res);
}
END_TEST

START_TEST(nested_free_order_and_depth)
{
    struct recorder rec = {{0}, NULL};
    struct interp_result res;
    run_recorded("namespace t.main\nfn main() {\n  let l = [[1], \"x\" + \"y\"]\n}\n", 0, &rec,
                 &res);
    /* the outer list (created first) is freed before what it held */
    ck_assert_str_eq(rec.log, "A1 0>64 main\nA2 0>48 main\nA3 0>26 main\n"
                              "F1 64>0 main\nF3 26>0 main\nF2 48>0 main\n");
    interp_result_free(&res);
}
END_TEST

START_TEST(deep_nesting_freed_without_recursion)
{
    struct harness_run r;
    harness_run(&r, "namespace t.main\nlet keep = []\nfn main() {\n  let l = []\n"
                    "  for i in 0..1000000 {\n    l = [l]\n  }\n  l = nil\n"
                    "  for i in 0..1000000 {\n    keep = [keep]\n  }\n  print(\"done\")\n}\n");
    ck_assert_int_eq(r.result.termination, INTERP_RETURNED);
    ck_assert_str_eq(r.out, "done\n");
    harness_free(&r);
}
END_TEST

Suite *heap_suite(void);
Suite *heap_suite(void)
{
    Suite *s = suite_create("heap");
    TCase *tc = tcase_create("heap");
    tcase_add_test(tc, list_growth_by_doubling);
    tcase_add_test(tc, map_growth_and_reuse);
    tcase_add_test(tc, ids_never_reused);
    tcase_add_test(tc, map_reclaims_removed_entries_without_event);
    tcase_add_test(tc, fail_nth_allocation);
    tcase_add_test(tc, program_sequence_and_stacks);
    tcase_add_test(tc, program_failed_allocation);
    tcase_add_test(tc, string_append_in_place);
    tcase_add_test(tc, no_events_for_literals_or_numbers);
    tcase_add_test(tc, nested_free_order_and_depth);
    tcase_add_test(tc, deep_nesting_freed_without_recursion);
    suite_add_tcase(s, tc);
    return s;
}
