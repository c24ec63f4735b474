/* task: spawn, join, the end of a task and the registry of shared
 * objects (see task.h). */
#include "agent/task.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/channel.h"
#include "agent/copy.h"
#include "agent/eval.h"

/* How much of a stack a call uses, about: a stack given back to the pool
 * after a deeper recursion returns its lower pages. */
#define TASK_BYTES_PER_CALL 4096u

void rt_register(struct interp_run *run, struct rt_shared *o, enum rt_kind kind)
{
    o->h.konst = HEAP_SHARED_OBJ;
    o->kind = kind;
    pthread_mutex_lock(&run->reg_lock);
    o->reg_prev = NULL;
    o->reg_next = run->reg;
    if (run->reg)
        run->reg->reg_prev = o;
    run->reg = o;
    pthread_mutex_unlock(&run->reg_lock);
}

void rt_unregister(struct interp_run *run, struct rt_shared *o)
{
    pthread_mutex_lock(&run->reg_lock);
    if (o->reg_prev)
        o->reg_prev->reg_next = o->reg_next;
    else
        run->reg = o->reg_next;
    if (o->reg_next)
        o->reg_next->reg_prev = o->reg_prev;
    pthread_mutex_unlock(&run->reg_lock);
}

void rt_shared_drop(void *ctx, struct heap *h, struct heap_obj *o, struct heap_obj **pending)
{
    (void)ctx;
    struct rt_shared *r = (struct rt_shared *)o;
    if (r->kind == RT_TASK)
        task_drop(h, (struct interp_task *)r, pending);
    else
        channel_drop(h, (struct interp_channel *)r, pending);
}

static struct interp_task *task_alloc(void)
{
    struct interp_task *t = calloc(1, sizeof *t);
    if (t == NULL)
        return NULL;
    pthread_mutex_init(&t->lock, NULL);
    atomic_init(&t->wait_lock, NULL);
    atomic_init(&t->switching, 0);
    t->spawn_fn = UINT32_MAX;
    t->spawn_site = (struct interp_span){UINT32_MAX, UINT32_MAX};
    return t;
}

static void task_free(struct interp_task *t)
{
    free(t->error);
    free(t->slots);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

/* "path:line:column" of an offset in function fid's source. */
static void task_location(const struct interp_program *p, uint32_t fid, uint32_t offset, char *buf,
                          size_t size)
{
    const struct interp_source *src = p->sources[p->infos[fid].source_id];
    uint32_t line, column;
    interp_source_position(src, offset, &line, &column);
    snprintf(buf, size, "%s:%u:%u", src->path, line, column);
}

/* Where a task's trace ends: its number, and where it was spawned. */
static void task_trace_line(const struct interp_task *t, const struct interp_program *p, char *buf,
                            size_t size)
{
    if (t->number == 1 || t->spawn_fn == UINT32_MAX) {
        snprintf(buf, size, "  in task %u (main)\n", t->number);
        return;
    }
    char where[PATH_MAX + 32];
    task_location(p, t->spawn_fn, t->spawn_site.start, where, sizeof where);
    snprintf(buf, size, "  in task %u, spawned at %s\n", t->number, where);
}

/* Prints a task's unhandled runtime error as the launcher prints main's:
 * the message line and the trace, which ends with the task. */
static void task_report(struct interp_state *s)
{
    char tail[PATH_MAX + 96];
    task_trace_line(s->task, s->prog, tail, sizeof tail);
    struct strbuf b = {.sp = s->sp}; /* a long message is copied a chunk at a time */
    sb_error_line(&b, s);
    sb_puts(&b, "\n");
    sb_puts(&b, s->err_trace ? s->err_trace : "");
    sb_puts(&b, tail);
    run_host_write(s, true, b.data, b.len);
    sb_free(&b);
}

/* The last part of every task: the outcome is published, joiners wake
 * and the fiber ends for good (the worker reaps it). */
static void task_end(struct interp_task *t, enum task_outcome outcome)
{
    struct interp_run *run = t->s->run;
    struct sched *sc = &run->sched;
    if (run->hooks.publish) /* before a joiner or the worker touches what it left */
        run->hooks.publish(run->hooks_ctx, t->s);
    pthread_mutex_lock(&t->lock);
    t->outcome = outcome;
    for (struct interp_task *j; (j = sched_queue_pop(&t->joiners)) != NULL;) {
        task_unwait(j);
        sched_ready(sc, j, SCHED_OK);
    }
    pthread_mutex_unlock(&t->lock);
    t->ended = true;
    fiber_exit(&t->fiber, &t->worker->self);
}

/* As the task's function returns, in its frame at the return statement:
 * the copy of the result that crosses to the first joiner, made by the
 * task as a send is by its sender, its objects kept apart from the
 * task's heap. */
static int task_send_result(struct interp_state *s, const struct value *result, void *ctx)
{
    struct interp_task *t = ctx;
    struct copy_ctx cc;
    copy_begin(&cc, &s->heap, s->sp);
    struct heap_obj *mark = heap_mark(&s->heap);
    struct value copy;
    int rc = copy_value(&cc, *result, &copy);
    bool oom = cc.oom;
    copy_end(&cc);
    if (rc < 0)
        return oom ? interp_oom(s, NULL) : -1;
    t->sent = copy;
    t->sent_chain = heap_detach(&s->heap, mark);
    return 0;
}

/* The copy of a task that did not return after all (an interrupt at the
 * end of its call) is freed by the task. */
static void task_unsend(struct interp_state *s, struct interp_task *t)
{
    heap_adopt(&s->heap, &t->sent_chain);
    val_release(s, t->sent);
    t->sent = VAL_NIL;
}

/* The fiber of a spawned task. */
static void task_entry(void *arg)
{
    struct interp_task *t = arg;
    struct interp_state *s = t->s;
    struct interp_run *run = s->run;
    if (run->hooks.resume)
        run->hooks.resume(run->hooks_ctx, s);
    const struct interp_fn *fn = &s->prog->fns[t->fn];
    struct value ret = VAL_NIL;
    int rc = -1;
    if (!sched_stopping(&run->sched) && interp_safe_point(s) == 0) {
        rc = eval_call_entry(s, t->fn, t->slots, task_send_result, t, &ret);
        if (rc < 0)
            task_unsend(s, t);
    } else {
        for (uint32_t i = 0; i < fn->n_slots; i++)
            val_release(s, t->slots[i]);
        s->interrupted = true;
    }
    enum task_outcome outcome = rc == 0          ? TASK_RETURNED
                                : s->interrupted ? TASK_STOPPED
                                                 : TASK_FAILED;
    if (outcome == TASK_FAILED) {
        if (!sched_stopping(&run->sched))
            task_report(s);
        t->error = s->err_msg ? s->err_msg : strdup("error"); /* taken, not copied */
        t->error_len = s->err_msg ? s->err_len : 5;
        s->err_msg = NULL;
    }
    /* Its own namespace bindings end with it. */
    for (uint32_t i = 0; i < s->prog->n_globals; i++) {
        struct value g = s->globals[i];
        s->globals[i] = VAL_NIL;
        val_release(s, g);
    }
    if (outcome == TASK_RETURNED)
        t->result = ret;
    t->left = heap_detach(&s->heap, &s->heap.live);
    task_end(t, outcome);
}

/* The fiber of task 1: the program, then the end of the run. */
struct main_job {
    struct interp_task *t;
    struct interp_result *result;
};

static void task_main_entry(void *arg)
{
    struct main_job *job = arg;
    struct interp_task *t = job->t;
    struct interp_state *s = t->s;
    struct interp_run *run = s->run;
    if (run->hooks.resume)
        run->hooks.resume(run->hooks_ctx, s);
    struct interp_result *r = job->result;
    free(job);
    struct value ret = VAL_NIL;
    int rc = runtime_program(s, &ret);
    runtime_finish(s, rc, ret, r);
    if (r->termination == INTERP_RUNTIME_ERROR && r->trace) {
        char tail[64];
        task_trace_line(t, s->prog, tail, sizeof tail);
        size_t len = strlen(r->trace);
        char *longer = realloc(r->trace, len + strlen(tail) + 1);
        if (longer) /* else (memory ran out) the trace goes without it */
            memcpy(longer + len, tail, strlen(tail) + 1), r->trace = longer;
    }
    sched_stop(&run->sched); /* main's end is the run's */
    task_end(t, TASK_RETURNED);
}

struct interp_task *task_main(struct interp_run *run, struct interp_result *result)
{
    struct interp_task *t = task_alloc();
    struct main_job *job = malloc(sizeof *job);
    if (t == NULL || job == NULL || sched_stack_get(&run->sched, &t->stack) != 0) {
        free(job);
        if (t)
            task_free(t);
        return NULL;
    }
    struct interp_state *s = run->main;
    *job = (struct main_job){t, result};
    t->number = 1;
    t->fn = run->prog->main_fn;
    t->s = s;
    s->task = t;
    s->stack_limit = (uintptr_t)t->stack.lo + INTERP_STACK_MARGIN;
    fiber_make(&t->fiber, &t->stack, task_main_entry, job);
    /* One reference for the scheduler, one for the run (interp_free). */
    t->base.h.rc = 2;
    rt_register(run, &t->base, RT_TASK);
    run->n_tasks = 1;
    if (run->hooks.spawned)
        run->hooks.spawned(run->hooks_ctx, NULL, 1, t->fn, t->spawn_site);
    return t;
}

/* Whether the arguments fit the function's annotations (as a call checks
 * them, but in the spawner, at the spawn). */
static int task_check_args(struct interp_state *s, const struct interp_fn *fn, struct value *args,
                           const struct ast *call)
{
    for (uint32_t i = 0; i < fn->n_params; i++) {
        struct ast_type t = fn->decl->params[i].type;
        if (t.base != T_NONE && !val_matches(args[i], t))
            return interp_raise(s, call, "spawn: argument '%s' of %s must be %s%s, got %s%s",
                                fn->decl->params[i].name, fn->decl->name, t.secret ? "secret " : "",
                                ast_type_name(t), args[i].secret ? "secret " : "",
                                val_type_name(args[i]));
    }
    return 0;
}

/* Copies the arguments into the new task's slots and the spawner's
 * namespace bindings into its own, as the spawner's allocations at the
 * spawn; the copies then move to the new task's heap. */
static int task_copy_in(struct interp_state *s, struct interp_state *ts, struct value *slots,
                        struct value *args, uint32_t n, const struct ast *call)
{
    struct copy_ctx cc;
    copy_begin(&cc, &s->heap, s->sp);
    struct heap_obj *mark = heap_mark(&s->heap);
    uint32_t done_args = 0, done_globals = 0;
    int rc = 0;
    for (; rc == 0 && done_args < n; done_args++)
        rc = copy_value(&cc, args[done_args], &slots[done_args]);
    if (rc != 0)
        done_args--;
    for (; rc == 0 && done_globals < s->prog->n_globals; done_globals++)
        rc = copy_value(&cc, s->globals[done_globals], &ts->globals[done_globals]);
    if (rc != 0 && done_globals > 0)
        done_globals--;
    bool oom = cc.oom;
    copy_end(&cc);
    if (rc == 0) {
        struct heap_chain chain = heap_detach(&s->heap, mark);
        heap_adopt(&ts->heap, &chain);
        return 0;
    }
    for (uint32_t i = 0; i < done_args; i++)
        val_release(s, slots[i]), slots[i] = VAL_NIL;
    for (uint32_t i = 0; i < done_globals; i++)
        val_release(s, ts->globals[i]), ts->globals[i] = VAL_NIL;
    return oom ? interp_oom(s, call) : -1;
}

int task_spawn(struct interp_state *s, struct value fnv, struct value *args, uint32_t n,
               const struct ast *call, struct value *out)
{
    struct interp_run *run = s->run;
    if (fnv.tag != V_FUNC || fnv.secret)
        return interp_raise(s, call,
                            "spawn: argument 1 must be a function declared with fn, got %s%s",
                            fnv.secret ? "secret " : "", val_type_name(fnv));
    const struct interp_fn *fn = &s->prog->fns[fnv.u.fn];
    if (n != fn->n_params)
        return interp_raise(s, call, "spawn: %s expects %u argument%s, got %u", fn->decl->name,
                            fn->n_params, fn->n_params == 1 ? "" : "s", n);
    if (task_check_args(s, fn, args, call) < 0)
        return -1;
    if (!run->tasks || sched_stopping(&run->sched)) {
        s->interrupted = true;
        return -1;
    }
    struct interp_task *t = task_alloc();
    struct interp_state *ts = t ? run_state_new(run, NULL) : NULL;
    struct value *slots = calloc(fn->n_slots ? fn->n_slots : 1, sizeof *slots);
    if (ts == NULL || slots == NULL || sched_stack_get(&run->sched, &t->stack) != 0) {
        free(slots);
        run_state_free(ts);
        if (t)
            task_free(t);
        return interp_raise(s, call, "spawn: cannot start a task: out of memory");
    }
    if (task_copy_in(s, ts, slots, args, n, call) < 0) {
        sched_stack_put(&run->sched, &t->stack, 0);
        free(slots);
        run_state_free(ts);
        task_free(t);
        return -1;
    }
    ts->frames = t->stack.extra;
    ts->task = t;
    ts->stack_limit = (uintptr_t)t->stack.lo + INTERP_STACK_MARGIN;
    t->s = ts;
    t->slots = slots;
    t->fn = fnv.u.fn;
    t->spawn_fn = s->frames[s->depth - 1].func_id;
    t->spawn_site = (struct interp_span){call->start, call->end};
    fiber_make(&t->fiber, &t->stack, task_entry, t);
    t->base.h.rc = 2; /* the handle returned, and the scheduler's */
    rt_register(run, &t->base, RT_TASK);
    pthread_mutex_lock(&run->spawn_lock);
    t->number = ++run->n_tasks;
    if (run->hooks.spawned)
        run->hooks.spawned(run->hooks_ctx, s, t->number, t->fn, t->spawn_site);
    pthread_mutex_unlock(&run->spawn_lock);
    sched_add(&run->sched, t);
    *out = (struct value){.tag = V_TASK};
    out->u.o = &t->base.h;
    return 0;
}

int task_join(struct interp_state *s, struct interp_task *t, const struct ast *call,
              struct value *out)
{
    if (t == s->task)
        return interp_raise(s, call, "join: a task cannot join itself");
    struct sched *sc = &s->run->sched;
    pthread_mutex_lock(&t->lock);
    while (t->outcome == TASK_PENDING) {
        if (sched_stopping(sc)) {
            pthread_mutex_unlock(&t->lock);
            s->interrupted = true;
            return -1;
        }
        task_wait_on(s->task, &t->lock, &t->joiners);
        enum sched_wake why = sched_park(s, &t->lock);
        if (why == SCHED_STOP) {
            s->interrupted = true;
            return -1;
        }
        if (why == SCHED_DEADLOCK)
            return interp_raise(s, call, "deadlock: every task is blocked");
        pthread_mutex_lock(&t->lock);
    }
    enum task_outcome outcome = t->outcome;
    /* The first join takes the task's copy; the objects move to its heap. */
    bool take = outcome == TASK_RETURNED && !t->sent_taken;
    struct value sent = t->sent;
    struct heap_chain chain = t->sent_chain;
    if (take) {
        t->sent_taken = true;
        t->sent = VAL_NIL;
        t->sent_chain = (struct heap_chain){NULL, NULL, 0};
    }
    pthread_mutex_unlock(&t->lock);
    if (outcome == TASK_FAILED) {
        char head[48];
        snprintf(head, sizeof head, "task %u failed: ", t->number);
        return interp_raise_quoted(s, call, head, t->error ? t->error : "",
                                   t->error ? t->error_len : 0, "");
    }
    if (outcome == TASK_STOPPED) {
        s->interrupted = true;
        return -1;
    }
    if (take) {
        heap_adopt(&s->heap, &chain);
        *out = sent;
        return 0;
    }
    struct copy_ctx cc;
    copy_begin(&cc, &s->heap, s->sp);
    int rc = copy_value(&cc, t->result, out);
    bool oom = cc.oom;
    copy_end(&cc);
    if (rc < 0)
        return oom ? interp_oom(s, call) : -1;
    return 0;
}

void task_reap(struct sched_worker *w, struct interp_task *t)
{
    struct interp_state *s = t->s;
    fiber_destroy(&t->fiber);
    sched_stack_put(w->sched, &t->stack, (size_t)s->deepest * TASK_BYTES_PER_CALL);
    if (t->number != 1)
        run_state_free(s);
    free(t->slots);
    t->slots = NULL;
    t->s = NULL;
    /* The scheduler's reference: the last one when no handle is left. */
    struct value v = {.tag = V_TASK};
    v.u.o = &t->base.h;
    heap_release(&w->idle->heap, v);
}

void task_drop(struct heap *h, struct interp_task *t, struct heap_obj **pending)
{
    rt_unregister(h->shared_ctx, &t->base);
    heap_adopt(h, &t->left);
    heap_adopt(h, &t->sent_chain);
    heap_drop_value(pending, t->result);
    heap_drop_value(pending, t->sent);
    task_free(t);
}

void task_teardown(struct interp_task *t)
{
    heap_chain_destroy(&t->left);
    heap_chain_destroy(&t->sent_chain);
    if (t->stack.map)
        fiber_stack_free(&t->stack);
    task_free(t);
}
