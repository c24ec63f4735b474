/*
 * run: what the tasks of one run share (the launcher's handle is task 1's
 * state, or the only state of a run without tasks).
 *
 * A program that never names `spawn` cannot have tasks: it runs as it
 * always did, on one thread named jett-runtime, with no fiber, no locks
 * and events that carry no task.  A program that names it runs on the
 * workers of agent/sched.h.
 */
#ifndef JETT_AGENT_RUN_H
#define JETT_AGENT_RUN_H

#include <pthread.h>
#include <stdatomic.h>

#include "agent/interp-internal.h"
#include "agent/scheduler.h"

/* Hooks the profiler sets on a run with tasks (all called on the task's
 * own thread, never from the timer). */
struct interp_task_hooks {
    /* A worker thread starts, before it runs any task. */
    void (*worker)(void *ctx, uint32_t index);
    /* Task `number` was spawned by `s` at `site` (in s's leaf function),
     * to run function `fn`; called before the task can run. */
    void (*spawned)(void *ctx, struct interp_state *s, uint32_t number, uint32_t fn,
                    struct interp_span site);
    /* `s` gives its worker up (blocks, sleeps) or, new, waits for one;
     * and `s` runs again. */
    void (*suspend)(void *ctx, struct interp_state *s);
    void (*resume)(void *ctx, struct interp_state *s);
    /* What `s` did so far may be seen by other threads from now on: it
     * sends a message, or ends; its worker dropped what an ended task
     * left (s is the worker's own state then), or stops. */
    void (*publish)(void *ctx, struct interp_state *s);
};

struct interp_run {
    const struct interp_program *prog;
    struct interp_host host; /* the launcher's */
    bool tasks;              /* the program may spawn tasks */
    uint32_t n_workers;
    char **args;
    size_t n_args;
    uint64_t fail_alloc_at;
    _Atomic uint64_t attempts;  /* with tasks: the run's allocation attempts */
    pthread_mutex_t host_lock;  /* with tasks: one host call at a time */
    pthread_mutex_t spawn_lock; /* task numbers and the profiler's TASK records in one order */
    uint32_t n_tasks;           /* tasks numbered so far (under spawn_lock) */
    int wake[2];                /* self-pipe: interrupts, new sleep deadlines, the end */
    _Atomic int signo;          /* the interrupting signal, 0 while none came */
    interp_sampler_fn sampler;
    void *sampler_ctx;
    /* The heap observer: with tasks each task's heap calls `observer`
     * with its state as ctx (interp_heap_observer_ctx finds this one). */
    const struct heap_observer *observer;
    void *observer_ctx;
    struct interp_task_hooks hooks;
    void *hooks_ctx;
    struct interp_state *main; /* task 1, or the only state */
    struct sched_worker solo;  /* the jett-runtime thread of a run without tasks */
    struct sched sched;        /* with tasks */
    /* Shared objects (tasks and channels) alive, for the stop sweep and
     * the teardown. */
    pthread_mutex_t reg_lock;
    struct rt_shared *reg;
    /* What a state needs to report running out of memory, set aside
     * once: the first task that runs out takes it (under reg_lock). */
    char *oom_line, *oom_trace;
    /* interp_count_calls with tasks: the run's call counts, the sums of
     * the workers' once they ended (runtime_calls_sum) */
    uint64_t *fn_calls, *site_calls;
};

/* Shared runtime objects start with this: a heap header (konst =
 * HEAP_SHARED_OBJ, an atomic count) and the registry links. */
enum rt_kind { RT_TASK = 1, RT_CHANNEL = 2 };
struct rt_shared {
    struct heap_obj h;
    uint32_t kind; /* enum rt_kind */
    struct rt_shared *reg_prev, *reg_next;
};

void rt_register(struct interp_run *run, struct rt_shared *o, enum rt_kind kind);
void rt_unregister(struct interp_run *run, struct rt_shared *o);

/* A new task state (heap, bindings, frames where given) of a run with
 * tasks; NULL when memory runs out. */
struct interp_state *run_state_new(struct interp_run *run, struct interp_frame *frames);
/* Frees a task's state: its bindings were released already; what its
 * heap still holds is the caller's (heap_detach). */
void run_state_free(struct interp_state *s);

/* The heap's hook for shared objects whose last reference went. */
void rt_shared_drop(void *ctx, struct heap *h, struct heap_obj *o, struct heap_obj **pending);

/* Writes data through the host (locked, one writer at a time) to
 * standard output or, when `err`, standard error: a SAFEPOINT_CHUNK at a
 * time with a poll between, so that the host's work on long output (a
 * copy, a write) is bounded too; it always finishes. */
void run_host_write(struct interp_state *s, bool err, const char *data, size_t len);

/* Task 1's program (the namespace initializers, then main) and the
 * result it gives (runtime.c). */
int runtime_program(struct interp_state *s, struct value *ret);
void runtime_finish(struct interp_state *s, int rc, struct value ret, struct interp_result *r);
/* With tasks and call counting: the workers' counts summed into the run's,
 * once the workers ended. */
void runtime_calls_sum(struct interp_run *run);

#endif
