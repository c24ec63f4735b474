/* Aggregation of runs with tasks (DESIGN section 12, jett-profile(7)
 * "Tasks"): TASK records, each task's samples, allocated and retained
 * bytes, frees by another task than the creator's, the stack budget, and
 * the same profile for every interleaving of the same events.  Every
 * expected number is computed by hand in the comments. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/agg.h"
#include "daemon/rank.h"
#include "daemon/render.h"
#include "tests/agg_events.h"

Suite *agg_tasks_suite(void);

/* Lines start at 0, 12, 18, 20, 29, 35, 37, 46, 52: main (0-20) is line
 * 1, make (20-37) line 4, grow (37-54) line 7; offset 14 is on line 2,
 * offset 31 on line 5. */
static const char text[] = "fn main() {\n  f()\n}\nfn f() {\n  g()\n}\nfn g() {\n  f()\n}\n";

/* Sources, functions and stacks 0 main, 1 main>make, 2 main>grow, then
 * the tasks: 1 main, 2 make spawned at 14-17 (in main), 3 grow spawned
 * at 31-34 (in make). */
static void setup(struct ev *e)
{
    ck_assert_int_eq(ev_source(e, 0, "src/m.jett", text), 0);
    ck_assert_int_eq(ev_func(e, 0, "app", "main", 0, 0, 20), 0);
    ck_assert_int_eq(ev_func(e, 1, "app", "make", 0, 20, 37), 0);
    ck_assert_int_eq(ev_func(e, 2, "app", "grow", 0, 37, 54), 0);
    ck_assert_int_eq(ev_stack(e, 0, WIRE_NONE32, 0), 0);
    ck_assert_int_eq(ev_stack(e, 1, 0, 1), 0);
    ck_assert_int_eq(ev_stack(e, 2, 0, 2), 0);
    struct wire_task t1 = {1, 0, WIRE_NONE32, WIRE_SPAN_NONE}, t2 = {2, 1, 0, {14, 17}},
                     t3 = {3, 2, 1, {31, 34}};
    ck_assert_int_eq(agg_task(e->a, &t1), 0);
    ck_assert_int_eq(agg_task(e->a, &t2), 0);
    ck_assert_int_eq(agg_task(e->a, &t3), 0);
}

static struct ev cpu_setup(uint32_t limit)
{
    struct ev e = {agg_new(), 0};
    struct wire_hello h = ev_hello_rec(AGG_CPU_BUDGET_MAX, AGG_STACK_BUDGET_MAX);
    h.config.limit = limit;
    ck_assert_int_eq(agg_hello(e.a, &h), 0); /* declares task attribution */
    setup(&e);
    return e;
}

static struct ev mem_setup(void)
{
    struct ev e = {agg_new(), 0};
    struct wire_hello h = ev_hello_rec(AGG_CPU_BUDGET_MAX, AGG_STACK_BUDGET_MAX);
    h.mode = WIRE_MODE_MEMORY;
    h.config.rate_hz = 0;
    h.backend = ev_str("interpreter_alloc_hooks");
    h.capabilities = WIRE_CAP_TASK_ATTRIBUTION | WIRE_CAP_SOURCE_SPANS |
                     WIRE_CAP_HEAP_ALLOCATION_HOOKS | WIRE_CAP_FREE_AND_RESIZE_EVENTS;
    ck_assert_int_eq(agg_hello(e.a, &h), 0);
    setup(&e);
    return e;
}

/* A sample of `task` on worker `thread`. */
static int sample_of(struct ev *e, uint32_t task, uint32_t thread, uint8_t state, uint32_t stack)
{
    e->seq++;
    struct wire_sample s = {e->seq, e->seq, {task, WIRE_NONE32, thread},
                            state,  stack,  WIRE_SPAN_NONE};
    return agg_sample(e->a, &s);
}

static int alloc_of(struct ev *e, uint32_t task, uint32_t thread, uint8_t op, uint64_t id,
                    uint64_t old, uint64_t neu, uint32_t stack)
{
    e->seq++;
    struct wire_alloc x = {e->seq,        op, id, old, neu, {task, WIRE_NONE32, thread}, stack,
                           WIRE_SPAN_NONE};
    return agg_alloc(e->a, &x);
}

static char *toon_of(struct agg *a)
{
    struct rank_report r;
    ck_assert_int_eq(rank_build(a, NULL, &r), 0);
    char *out, err[128];
    size_t len;
    ck_assert_int_eq(render_toon(&r, &out, &len, err, sizeof err), 0);
    rank_free(&r);
    return out;
}

static char *human_of(struct agg *a)
{
    struct rank_report r;
    ck_assert_int_eq(rank_build(a, NULL, &r), 0);
    char *out;
    size_t len;
    ck_assert_int_eq(render_human(&r, &out, &len), 0);
    rank_free(&r);
    return out;
}

/* Task 2 (make): 3 jett samples on main>make and 1 runtime sample; task
 * 3 (grow): 3 jett on main>grow and 2 waiting there; task 1: 1 waiting
 * on main; a jett sample of task 9, which no TASK describes, and a
 * runtime sample of no task (a worker between tasks) count in the totals
 * and the functions only.  Rows: task 2 has 4 samples, task 3 3 (and 2
 * waiting), task 1 0 (1 waiting); of the tasks' 7 running samples task 2
 * has 57.14%, task 3 42.86%. */
START_TEST(cpu_rows)
{
    struct ev e = cpu_setup(10);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(sample_of(&e, 2, 1, WIRE_STATE_JETT, 1), 0);
        ck_assert_int_eq(sample_of(&e, 3, 2, WIRE_STATE_JETT, 2), 0);
    }
    ck_assert_int_eq(sample_of(&e, 2, 2, WIRE_STATE_RUNTIME, WIRE_NONE32), 0);
    ck_assert_int_eq(sample_of(&e, 3, 1, WIRE_STATE_WAITING, 2), 0);
    ck_assert_int_eq(sample_of(&e, 3, 1, WIRE_STATE_WAITING, 2), 0);
    ck_assert_int_eq(sample_of(&e, 1, 1, WIRE_STATE_WAITING, 0), 0);
    ck_assert_int_eq(sample_of(&e, 9, 1, WIRE_STATE_JETT, 0), 0);
    ck_assert_int_eq(sample_of(&e, WIRE_NONE32, 2, WIRE_STATE_RUNTIME, WIRE_NONE32), 0);
    ck_assert_int_eq(ev_finish(&e, WIRE_TERM_RETURNED, 0, 0), 0);
    char *toon = toon_of(e.a);
    ck_assert_msg(strstr(toon, "  tasks[3]{task,namespace,function,path,line,spawn_path,spawn_line,"
                               "samples,waiting_samples}:\n"
                               "    2,app,make,src/m.jett,4,src/m.jett,2,4,0\n"
                               "    3,app,grow,src/m.jett,7,src/m.jett,5,3,2\n"
                               "    1,app,main,src/m.jett,1,unavailable,unavailable,0,1\n"
                               "  capabilities:\n"),
                  "%s", toon);
    /* the functions add every task's samples: 7 jett samples in all */
    ck_assert_ptr_nonnull(strstr(toon, "    attributed_samples: 7\n"));
    char *human = human_of(e.a);
    ck_assert_msg(strstr(human, "tasks: 3 tasks by samples\n"
                                "  task 2  57.14%  4 samples running, 0 waiting  app.make  "
                                "src/m.jett:4  spawned at src/m.jett:2\n"
                                "  task 3  42.86%  3 samples running, 2 waiting  app.grow  "
                                "src/m.jett:7  spawned at src/m.jett:5\n"
                                "  task 1  0.00%  0 samples running, 1 waiting  app.main  "
                                "src/m.jett:1\n"),
                  "%s", human);
    free(toon), free(human);
    agg_free(e.a);
}
END_TEST

/* At most `limit` rows; ties by number: tasks 2 and 3 one sample each,
 * limit 2 keeps 2 and 3 (1 has none). */
START_TEST(cpu_limit_and_ties)
{
    struct ev e = cpu_setup(2);
    ck_assert_int_eq(sample_of(&e, 3, 1, WIRE_STATE_JETT, 2), 0);
    ck_assert_int_eq(sample_of(&e, 2, 1, WIRE_STATE_JETT, 1), 0);
    ck_assert_int_eq(ev_finish(&e, WIRE_TERM_RETURNED, 0, 0), 0);
    char *toon = toon_of(e.a), *human = human_of(e.a);
    ck_assert_msg(strstr(toon, "samples,waiting_samples}:\n"
                               "    2,app,make,src/m.jett,4,src/m.jett,2,1,0\n"
                               "    3,app,grow,src/m.jett,7,src/m.jett,5,1,0\n"
                               "  capabilities:\n"),
                  "%s", toon);
    ck_assert_ptr_nonnull(strstr(human, "tasks: 3 tasks, the top 2 by samples\n"));
    free(toon), free(human);
    agg_free(e.a);
}
END_TEST

/* Without task attribution there is no tasks field, TASK records or not,
 * and task numbers on events count for nothing. */
START_TEST(no_tasks_field_without_attribution)
{
    struct ev e = {agg_new(), 0};
    struct wire_hello h = ev_hello_rec(AGG_CPU_BUDGET_MAX, AGG_STACK_BUDGET_MAX);
    h.capabilities &= ~(unsigned)WIRE_CAP_TASK_ATTRIBUTION;
    ck_assert_int_eq(agg_hello(e.a, &h), 0);
    setup(&e);
    ck_assert_int_eq(sample_of(&e, 2, 1, WIRE_STATE_JETT, 1), 0);
    ck_assert_int_eq(ev_finish(&e, WIRE_TERM_RETURNED, 0, 0), 0);
    char *toon = toon_of(e.a), *human = human_of(e.a);
    ck_assert_ptr_null(strstr(toon, "tasks"));
    ck_assert_ptr_null(strstr(human, "tasks:"));
    ck_assert_ptr_nonnull(strstr(toon, "    task_attribution: false\n"));
    free(toon), free(human);
    agg_free(e.a);
}
END_TEST

/* A TASK out of order or naming an undefined function is a collector
 * error; a task row that does not fit the stack budget, and every later
 * one, is left out: partial / stack_capture_limit. */
START_TEST(task_records_checked_and_budgeted)
{
    struct ev e = cpu_setup(10);
    struct wire_task gap = {5, 0, WIRE_NONE32, WIRE_SPAN_NONE},
                     undef = {4, 7, WIRE_NONE32, WIRE_SPAN_NONE};
    ck_assert_int_eq(agg_task(e.a, &gap), -1);
    ck_assert_int_eq(agg_task(e.a, &undef), -1);
    ck_assert_str_eq(agg_error(e.a), "TASK record 4: task does not number the tasks from 1");
    agg_free(e.a);

    /* the rows' table takes 16 rows of 48 bytes at first: a budget that
     * holds the tables up to the third task's row but not a 16-row table */
    e = (struct ev){agg_new(), 0};
    struct wire_hello h = ev_hello_rec(AGG_CPU_BUDGET_MAX, AGG_STACK_BUDGET_MAX);
    ck_assert_int_eq(agg_hello(e.a, &h), 0);
    ck_assert_int_eq(ev_source(&e, 0, "src/m.jett", text), 0);
    ck_assert_int_eq(ev_func(&e, 0, "app", "main", 0, 0, 20), 0);
    size_t tables = agg_stack_bytes(e.a);
    agg_free(e.a);
    e = (struct ev){agg_new(), 0};
    h.config.stack_budget = tables + 16 * 48 - 1;
    ck_assert_int_eq(agg_hello(e.a, &h), 0);
    ck_assert_int_eq(ev_source(&e, 0, "src/m.jett", text), 0);
    ck_assert_int_eq(ev_func(&e, 0, "app", "main", 0, 0, 20), 0);
    struct wire_task t1 = {1, 0, WIRE_NONE32, WIRE_SPAN_NONE};
    ck_assert_int_eq(agg_task(e.a, &t1), 0);
    ck_assert_int_eq(ev_finish(&e, WIRE_TERM_RETURNED, 0, 0), 0);
    enum agg_reason why;
    ck_assert_int_eq(agg_status(e.a, &why), AGG_PARTIAL);
    ck_assert_int_eq(why, AGG_REASON_STACK_CAPTURE_LIMIT);
    char *toon = toon_of(e.a);
    ck_assert_ptr_nonnull(strstr(toon, "\n  tasks: []\n"));
    free(toon);
    agg_free(e.a);
}
END_TEST

/* Memory, by hand:
 *   task 2 (make, worker 1) allocates id1 64 at make; task 3 (grow,
 *     worker 2) frees it: make's 64 bytes are freed (its site), grow
 *     frees nothing;
 *   task 2 allocates id2 16 at make; task 3 resizes it to 40 at grow:
 *     growth 24 is task 3's and grow's, the 40 live bytes stay make's
 *     and task 2's;
 *   task 3 allocates id3 8 at grow, kept;
 *   task 1 allocates id4 100 at main and frees it.
 * Allocated 64 + 16 + 24 + 8 + 100 = 212, freed 64 + 100 = 164,
 * retained 48.  Tasks by allocated bytes: task 1 100 (retained 0),
 * task 2 80 (retained 40), task 3 32 (retained 8). */
static void feed_tasks_memory(struct ev *e)
{
    ck_assert_int_eq(alloc_of(e, 2, 1, WIRE_OP_ALLOCATE, 1, EV_NA, 64, 1), 0);
    ck_assert_int_eq(alloc_of(e, 3, 2, WIRE_OP_FREE, 1, 64, EV_NA, 2), 0);
    ck_assert_int_eq(alloc_of(e, 2, 1, WIRE_OP_ALLOCATE, 2, EV_NA, 16, 1), 0);
    ck_assert_int_eq(alloc_of(e, 3, 2, WIRE_OP_RESIZE, 2, 16, 40, 2), 0);
    ck_assert_int_eq(alloc_of(e, 3, 2, WIRE_OP_ALLOCATE, 3, EV_NA, 8, 2), 0);
    ck_assert_int_eq(alloc_of(e, 1, 1, WIRE_OP_ALLOCATE, 4, EV_NA, 100, 0), 0);
    ck_assert_int_eq(alloc_of(e, 1, 2, WIRE_OP_FREE, 4, 100, EV_NA, 0), 0);
}

START_TEST(memory_rows_and_frees_on_another_task)
{
    struct ev e = mem_setup();
    feed_tasks_memory(&e);
    ck_assert_int_eq(ev_mem_finish(&e), 0);
    struct rank_report r;
    ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
    ck_assert_uint_eq(r.mem.allocated_bytes, 212);
    ck_assert_uint_eq(r.mem.freed_bytes, 164);
    ck_assert_uint_eq(r.mem.retained_bytes, 48);
    /* main 100, make 80 (freed 64, retained 40), grow 32 (freed 0) */
    ck_assert_str_eq(r.entries[1].fn.ptr, "make");
    ck_assert_uint_eq(r.entries[1].primary, 80);
    ck_assert_uint_eq(r.entries[1].freed_bytes, 64);
    ck_assert_uint_eq(r.entries[1].retained_bytes, 40);
    ck_assert_str_eq(r.entries[2].fn.ptr, "grow");
    ck_assert_uint_eq(r.entries[2].freed_bytes, 0);
    ck_assert_uint_eq(r.entries[2].retained_bytes, 8);
    rank_free(&r);
    char *toon = toon_of(e.a);
    ck_assert_msg(strstr(toon, "  tasks[3]{task,namespace,function,path,line,spawn_path,spawn_line,"
                               "allocated_bytes,retained_bytes}:\n"
                               "    1,app,main,src/m.jett,1,unavailable,unavailable,100,0\n"
                               "    2,app,make,src/m.jett,4,src/m.jett,2,80,40\n"
                               "    3,app,grow,src/m.jett,7,src/m.jett,5,32,8\n"),
                  "%s", toon);
    free(toon);
    agg_free(e.a);
}
END_TEST

/* The same events with no FINISH after them (a stream cut short): each
 * task's allocated bytes are as above, its retained bytes unavailable,
 * as the run's exit is unknown (jett-profile(7), Status). */
START_TEST(memory_rows_cut_short)
{
    struct ev e = mem_setup();
    feed_tasks_memory(&e);
    agg_end(e.a);
    char *toon = toon_of(e.a);
    ck_assert_msg(strstr(toon,
                         "  tasks[3]{task,namespace,function,path,line,spawn_path,spawn_line,"
                         "allocated_bytes,retained_bytes}:\n"
                         "    1,app,main,src/m.jett,1,unavailable,unavailable,100,unavailable\n"
                         "    2,app,make,src/m.jett,4,src/m.jett,2,80,unavailable\n"
                         "    3,app,grow,src/m.jett,7,src/m.jett,5,32,unavailable\n"),
                  "%s", toon);
    free(toon);
    agg_free(e.a);
}
END_TEST

/* Sequences of events, one per task, merged in every order that keeps
 * each task's own: the distinct permutations of the picks (which task's
 * next event comes), from the sorted one on. */
struct merge {
    const uint8_t *len; /* events per task */
    unsigned tasks, total;
    unsigned pick[16];
};

static bool merge_next(struct merge *m, bool first)
{
    if (first) {
        unsigned k = 0;
        for (unsigned t = 0; t < m->tasks; t++)
            for (unsigned i = 0; i < m->len[t]; i++)
                m->pick[k++] = t;
        return true;
    }
    /* the next permutation in lexicographic order */
    int i = (int)m->total - 2;
    while (i >= 0 && m->pick[i] >= m->pick[i + 1])
        i--;
    if (i < 0)
        return false;
    int j = (int)m->total - 1;
    while (m->pick[j] <= m->pick[i])
        j--;
    unsigned x = m->pick[i];
    m->pick[i] = m->pick[j], m->pick[j] = x;
    for (int a = i + 1, b = (int)m->total - 1; a < b; a++, b--)
        x = m->pick[a], m->pick[a] = m->pick[b], m->pick[b] = x;
    return true;
}

/* CPU: tasks 2, 3 and 1 record 3, 3 and 2 samples on their own workers;
 * every one of the 8! / (3! 3! 2!) = 560 merges gives the same bytes. */
START_TEST(cpu_interleavings)
{
    static const uint8_t len[] = {3, 3, 2};
    static const struct {
        uint32_t task, thread, stack;
        uint8_t state;
    } seqs[3][3] = {
        {{2, 1, 1, WIRE_STATE_JETT}, {2, 1, 1, WIRE_STATE_WAITING}, {2, 1, 1, WIRE_STATE_JETT}},
        {{3, 2, 2, WIRE_STATE_JETT}, {3, 2, 0, WIRE_STATE_JETT}, {3, 1, 2, WIRE_STATE_WAITING}},
        {{1, 2, 0, WIRE_STATE_JETT}, {1, 1, WIRE_NONE32, WIRE_STATE_RUNTIME}},
    };
    struct merge m = {len, 3, 8, {0}};
    char *first = NULL;
    unsigned n = 0;
    for (bool more = merge_next(&m, true); more; more = merge_next(&m, false), n++) {
        struct ev e = cpu_setup(10);
        unsigned at[3] = {0, 0, 0};
        for (unsigned k = 0; k < m.total; k++) {
            unsigned t = m.pick[k];
            ck_assert_int_eq(sample_of(&e, seqs[t][at[t]].task, seqs[t][at[t]].thread,
                                       seqs[t][at[t]].state, seqs[t][at[t]].stack),
                             0);
            at[t]++;
        }
        ck_assert_int_eq(ev_finish(&e, WIRE_TERM_RETURNED, 0, 0), 0);
        char *toon = toon_of(e.a);
        if (first == NULL) {
            first = toon;
        } else {
            ck_assert_str_eq(toon, first);
            free(toon);
        }
        agg_free(e.a);
    }
    ck_assert_uint_eq(n, 560);
    /* and the numbers are the hand's: task 2 2 running + 1 waiting, task 3
     * 2 + 1, task 1 2 + 0; ties by number */
    ck_assert_ptr_nonnull(strstr(first, "    1,app,main,src/m.jett,1,unavailable,unavailable,2,0\n"
                                        "    2,app,make,src/m.jett,4,src/m.jett,2,2,1\n"
                                        "    3,app,grow,src/m.jett,7,src/m.jett,5,2,1\n"));
    free(first);
}
END_TEST

/* Memory: task 2 allocates 10 at make and grows it to 30, task 3
 * allocates 5 at grow and grows it to 9, task 1 allocates 7 at main.
 * Nothing is freed, so live bytes only rise and the peak is the end in
 * every order: all 5! / (2! 2! 1!) = 30 merges give the same bytes (ids
 * are numbered in each merge's order, as the agent numbers them). */
START_TEST(memory_interleavings)
{
    static const uint8_t len[] = {2, 2, 1};
    struct merge m = {len, 3, 5, {0}};
    char *first = NULL;
    unsigned n = 0;
    for (bool more = merge_next(&m, true); more; more = merge_next(&m, false), n++) {
        struct ev e = mem_setup();
        unsigned at[3] = {0, 0, 0};
        uint64_t next = 0, id[3] = {0, 0, 0};
        for (unsigned k = 0; k < m.total; k++) {
            unsigned t = m.pick[k];
            uint32_t task = t == 0 ? 2 : t == 1 ? 3 : 1, stack = t == 0 ? 1 : t == 1 ? 2 : 0;
            uint64_t first_size = t == 0 ? 10 : t == 1 ? 5 : 7, grown = t == 0 ? 30 : 9;
            if (at[t]++ == 0)
                ck_assert_int_eq(alloc_of(&e, task, t + 1, WIRE_OP_ALLOCATE, id[t] = ++next, EV_NA,
                                          first_size, stack),
                                 0);
            else
                ck_assert_int_eq(
                    alloc_of(&e, task, t + 1, WIRE_OP_RESIZE, id[t], first_size, grown, stack), 0);
        }
        ck_assert_int_eq(ev_mem_finish(&e), 0);
        char *toon = toon_of(e.a);
        if (first == NULL) {
            first = toon;
        } else {
            ck_assert_str_eq(toon, first);
            free(toon);
        }
        agg_free(e.a);
    }
    ck_assert_uint_eq(n, 30);
    ck_assert_ptr_nonnull(strstr(first,
                                 "    2,app,make,src/m.jett,4,src/m.jett,2,30,30\n"
                                 "    3,app,grow,src/m.jett,7,src/m.jett,5,9,9\n"
                                 "    1,app,main,src/m.jett,1,unavailable,unavailable,7,7\n"));
    ck_assert_ptr_nonnull(strstr(first, "    peak_live_bytes: 46\n"));
    free(first);
}
END_TEST

Suite *agg_tasks_suite(void)
{
    Suite *s = suite_create("agg_tasks");
    TCase *t = tcase_create("tasks");
    tcase_add_test(t, cpu_rows);
    tcase_add_test(t, cpu_limit_and_ties);
    tcase_add_test(t, no_tasks_field_without_attribution);
    tcase_add_test(t, task_records_checked_and_budgeted);
    tcase_add_test(t, memory_rows_and_frees_on_another_task);
    tcase_add_test(t, memory_rows_cut_short);
    tcase_add_test(t, cpu_interleavings);
    tcase_add_test(t, memory_interleavings);
    suite_add_tcase(s, t);
    return s;
}
