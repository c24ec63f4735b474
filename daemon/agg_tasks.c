/* agg_tasks: what each task of a run spent (DESIGN section 12), beside
 * the functions' figures, which add every task's events together. */
#include <stdlib.h>

#include "daemon/export/costrun.h"

#include "daemon/agg-internal.h"

_Static_assert(AGG_STACK_BUDGET_MAX / sizeof(struct agg_task) < AGG_TASK_ROW_MASK,
               "a task row fits a creator's word");

void agg_tasks_hello(struct agg *a)
{
    a->tasks.elem = sizeof(struct agg_task);
    a->task_nodes.elem = sizeof(struct agg_task_node);
    a->tasks_on = (a->capabilities & WIRE_CAP_TASK_ATTRIBUTION) != 0;
    a->cur_task = WIRE_NONE32;
    if (a->tasks_on && a->mode == WIRE_MODE_MEMORY)
        live_track_use_creators(&a->mem.track);
    /* the values of the node lines: CPU samples (and waiting samples
     * with keep_waiting), or bytes and allocations */
    if (a->keep_task_nodes && a->tasks_on &&
        !(a->task_lines = costrun_new_dense(a->mode == WIRE_MODE_CPU && !a->keep_waiting ? 1 : 2)))
        agg_errorf(a, "HELLO: out of memory");
}

void agg_keep_task_nodes(struct agg *a)
{
    a->keep_task_nodes = true;
}

struct pair_key {
    uint32_t node, task;
};

static bool pair_eq(const void *ctx, uint32_t entry, const void *key)
{
    const struct agg_task_node *p = agg_vec_at(&((const struct agg *)ctx)->task_nodes, entry);
    const struct pair_key *k = key;
    return p->node == k->node && p->task == k->task;
}

/* The pair of (node, task row), created on first use; AGG_NONE when
 * memory runs out (an error). */
static uint32_t pair_of(struct agg *a, uint32_t node, uint32_t task)
{
    struct pair_key k = {node, task};
    uint32_t h = agg_hash_u32(agg_hash_u32(0x27d4eb2du, node), task);
    uint32_t at = agg_index_find(&a->task_node_index, h, pair_eq, a, &k);
    if (at != AGG_NONE)
        return at;
    size_t unused = 0; /* an export's detail: charged to no budget */
    struct agg_task_node *p = agg_vec_push(&a->task_nodes, &unused);
    if (p == NULL || agg_index_insert(&a->task_node_index, h, a->task_nodes.len - 1) < 0) {
        agg_errorf(a, "task detail: out of memory");
        return AGG_NONE;
    }
    *p = (struct agg_task_node){.node = node, .task = task};
    return a->task_nodes.len - 1;
}

/* The row of the event being aggregated, AGG_NONE: none. */
static uint32_t cur_row(const struct agg *a)
{
    uint32_t t = a->cur_task;
    return t != WIRE_NONE32 && t >= 1 && t <= a->tasks.len ? t - 1 : AGG_NONE;
}

void agg_tasks_node_self(struct agg *a, uint32_t node, uint32_t key, const uint64_t *w)
{
    if (!a->task_lines)
        return;
    uint32_t at = pair_of(a, node, cur_row(a));
    if (at == AGG_NONE)
        return;
    struct agg_task_node *p = agg_vec_at(&a->task_nodes, at);
    bool cpu = a->mode == WIRE_MODE_CPU;
    p->self += w[0];
    p->count += cpu ? 0 : w[1];
    p->events += !cpu || w[0] != 0; /* not a waiting sample's {0, 1} (keep_waiting) */
    if (costrun_add(a->task_lines, at, key, w) != 0)
        agg_errorf(a, "task detail: out of memory");
}

void agg_tasks_node_waiting(struct agg *a, uint32_t node)
{
    if (!a->task_lines)
        return;
    uint32_t at = pair_of(a, node, cur_row(a));
    if (at != AGG_NONE)
        ((struct agg_task_node *)agg_vec_at(&a->task_nodes, at))->waiting++;
}

static int pair_cmp(const void *x, const void *y, void *ctx)
{
    const struct agg *a = ctx;
    const struct agg_task_node *p = agg_vec_at(&a->task_nodes, *(const uint32_t *)x),
                               *q = agg_vec_at(&a->task_nodes, *(const uint32_t *)y);
    if (p->node != q->node)
        return p->node < q->node ? -1 : 1;
    return p->task < q->task ? -1 : p->task > q->task;
}

void agg_tasks_end(struct agg *a)
{
    if (!a->task_lines)
        return;
    if (costrun_finish(a->task_lines, a->task_nodes.len) != 0)
        agg_errorf(a, "task detail: out of memory");
    a->task_node_order = malloc(((size_t)a->task_nodes.len + 1) * sizeof *a->task_node_order);
    if (a->task_node_order == NULL) {
        agg_errorf(a, "task detail: out of memory");
        return;
    }
    for (uint32_t i = 0; i < a->task_nodes.len; i++)
        a->task_node_order[i] = i;
    qsort_r(a->task_node_order, a->task_nodes.len, sizeof *a->task_node_order, pair_cmp, a);
}

/* The identity of wire function f, AGG_NONE when it has none. */
static uint32_t func_ident(const struct agg *a, uint32_t f)
{
    return f < a->funcs.len ? *(const uint32_t *)agg_vec_at(&a->funcs, f) : AGG_NONE;
}

int agg_task(struct agg *a, const struct wire_task *t)
{
    if (!agg_in_stream(a, "TASK"))
        return -1;
    if (t->task != a->n_tasks + 1) {
        agg_errorf(a, "TASK record %u: task does not number the tasks from 1", a->n_tasks + 1);
        return -1;
    }
    if (t->func_id >= a->n_funcs || (t->spawn_func != WIRE_NONE32 && t->spawn_func >= a->n_funcs)) {
        agg_errorf(a, "TASK record %u: undefined function", a->n_tasks + 1);
        return -1;
    }
    a->n_tasks++;
    /* Rows are dense: once one does not fit, none after it does. */
    if (!a->tasks_on || a->tasks.len + 1 < a->n_tasks)
        return 0;
    size_t more = agg_vec_growth(&a->tasks, 1);
    if (more == SIZE_MAX || a->stack_bytes + more > a->cfg.stack_budget) {
        a->stack_limited = true;
        return 0;
    }
    struct agg_task *row = agg_vec_push(&a->tasks, &a->stack_bytes);
    if (row == NULL) {
        agg_errorf(a, "TASK record %u: out of memory", a->n_tasks);
        return -1;
    }
    *row = (struct agg_task){func_ident(a, t->func_id),
                             t->spawn_func == WIRE_NONE32 ? AGG_NONE : func_ident(a, t->spawn_func),
                             t->spawn_func == WIRE_NONE32 ? AGG_NONE : t->site.start,
                             0,
                             0,
                             0,
                             0,
                             0};
    return 0;
}

void agg_tasks_sample(struct agg *a, const struct wire_sample *s)
{
    struct agg_task *row = agg_task_row(a, s->exec.task);
    if (row == NULL)
        return;
    if (s->state == WIRE_STATE_JETT || s->state == WIRE_STATE_RUNTIME)
        row->samples++;
    else if (s->state == WIRE_STATE_WAITING)
        row->waiting++;
}

uint64_t agg_tasks_pair_word(struct agg *a, uint32_t stack, uint64_t index)
{
    uint32_t at = pair_of(a, stack, index == AGG_TASK_ROW_MASK ? AGG_NONE : (uint32_t)index);
    return at == AGG_NONE ? index : index | (uint64_t)(at + 1) << AGG_TASK_ROW_BITS;
}

void agg_tasks_credit(struct agg *a, uint8_t op, uint64_t id, uint64_t old, uint64_t neu,
                      uint32_t task, uint32_t stack, uint64_t creator)
{
    agg_tasks_credit_in(a, op, id, old, neu, task, stack, creator);
}

void agg_tasks_alloc(struct agg *a, const struct wire_alloc *e, uint64_t creator)
{
    agg_tasks_credit(a, e->op, e->allocation_id, e->old_size, e->new_size, e->exec.task,
                     e->stack_id, creator);
}

void agg_tasks_free(struct agg *a)
{
    agg_vec_free(&a->tasks);
    agg_vec_free(&a->task_nodes);
    agg_index_free(&a->task_node_index);
    costrun_free(a->task_lines);
    free(a->task_node_order);
}
