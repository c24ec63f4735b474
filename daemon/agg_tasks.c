/* agg_tasks: what each task of a run spent (DESIGN section 12), beside
 * the functions' figures, which add every task's events together. */
#include <stdlib.h>

#include "daemon/agg-internal.h"

/* A task's live allocations: the size field of a live record is the
 * task's row (its number - 1), the site field unused. */
#define TASK_ROW_MASK AGG_MEM_WIDE

void agg_tasks_hello(struct agg *a)
{
    a->tasks.elem = sizeof(struct agg_task);
    a->tasks_on = (a->capabilities & WIRE_CAP_TASK_ATTRIBUTION) != 0;
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

/* The row of an event's task, NULL when it has none. */
static struct agg_task *task_row(struct agg *a, uint32_t task)
{
    if (task == WIRE_NONE32 || task == 0 || task > a->tasks.len)
        return NULL;
    return agg_vec_at(&a->tasks, task - 1);
}

void agg_tasks_sample(struct agg *a, const struct wire_sample *s)
{
    struct agg_task *row = task_row(a, s->exec.task);
    if (row == NULL)
        return;
    if (s->state == WIRE_STATE_JETT || s->state == WIRE_STATE_RUNTIME)
        row->samples++;
    else if (s->state == WIRE_STATE_WAITING)
        row->waiting++;
}

/* The live records of the tasks share the retention budget. */
static bool task_track_fits(void *ctx, size_t more)
{
    const struct agg *a = ctx;
    return agg_mem_bytes(a) + more <= a->cfg.retention_budget;
}

/* The creator of a live id: its row, or NULL (untracked, or none). */
static struct agg_task *creator_row(struct agg *a, uint64_t id, uint64_t **rec)
{
    *rec = a->tasks_untracked ? NULL : live_track_find(&a->task_track, id);
    return *rec ? agg_vec_at(&a->tasks, (uint32_t)(**rec & TASK_ROW_MASK)) : NULL;
}

void agg_tasks_alloc(struct agg *a, const struct wire_alloc *e)
{
    struct agg_task *row = task_row(a, e->exec.task);
    uint64_t *rec;
    if (e->op == WIRE_OP_ALLOCATE) {
        if (row == NULL)
            return;
        row->allocated += e->new_size;
        if (a->tasks_untracked)
            return;
        struct live_limit lim = {task_track_fits, a, a->cfg.retention_budget};
        uint64_t index = (uint64_t)(row - (struct agg_task *)a->tasks.p);
        if (!live_track_add(&a->task_track, e->allocation_id, index, &lim)) {
            /* without room, no task's retained bytes are exact */
            a->tasks_untracked = true;
            a->mem.limited = true;
            return;
        }
        row->live += e->new_size;
        return;
    }
    struct agg_task *creator = creator_row(a, e->allocation_id, &rec);
    if (e->op == WIRE_OP_RESIZE) {
        if (row && e->new_size > e->old_size)
            row->allocated += e->new_size - e->old_size;
        if (creator)
            creator->live += e->new_size - e->old_size; /* modulo 2^64 */
        return;
    }
    if (creator) {
        creator->live -= e->old_size;
        live_track_remove(&a->task_track, e->allocation_id, rec);
    }
}

void agg_tasks_free(struct agg *a)
{
    agg_vec_free(&a->tasks);
    live_track_free(&a->task_track);
}
