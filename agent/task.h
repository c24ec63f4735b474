/*
 * task: spawn, join and the end of a task (JETT.md, "Tasks and
 * channels").
 *
 * A task object is shared (a `task` value points at it, with an atomic
 * count; the scheduler holds one more reference until the task has
 * ended).  While it runs it has a state of its own (agent/run.h) on a
 * fiber stack.  As its function returns, in its frame at the return
 * statement, the task copies the value returned (its allocations, as a
 * sender's): the copy's objects move into a chain that belongs to no
 * heap, which the first join takes into the joiner's heap, as recv
 * takes a message.  Once it ends the result itself stays with the
 * object: its objects, with whatever else the task's heap still held
 * (reference cycles), move into another such chain, from which a later
 * join copies the result again, in the joiner's heap at its join
 * (objects of a finished task are never changed again, so joiners may
 * read them at once).
 */
#ifndef JETT_AGENT_TASK_H
#define JETT_AGENT_TASK_H

#include "agent/run.h"

enum task_outcome {
    TASK_PENDING = 0, /* not ended */
    TASK_RETURNED,
    TASK_FAILED,
    TASK_STOPPED, /* stopped by the end of the run or an interrupt */
};

struct interp_task {
    struct rt_shared base;
    uint32_t number;            /* 1 for main, then in spawn order */
    uint32_t fn;                /* the function it runs */
    pthread_mutex_t lock;       /* outcome and joiners */
    struct sched_queue joiners; /* tasks blocked in join */
    enum task_outcome outcome;  /* under lock */
    struct value result;        /* TASK_RETURNED */
    struct heap_chain left;     /* the objects the ended task still held */
    /* TASK_RETURNED: the task's copy of its result and the chain of its
     * objects, until the first join takes them (under lock; nil and
     * empty once taken) */
    struct value sent;
    struct heap_chain sent_chain;
    bool sent_taken;
    char *error; /* TASK_FAILED: the message */
    size_t error_len;
    /* Running: */
    struct interp_state *s;
    struct value *slots; /* the entry function's, filled by spawn */
    struct fiber fiber;
    struct fiber_stack stack;
    struct sched_worker *worker; /* the worker it runs on */
    _Atomic int switching;       /* 1 from parking until its context is saved */
    bool ended;                  /* its fiber has finished */
    bool waiting;                /* in a wait queue (under that queue's lock) */
    _Atomic(pthread_mutex_t *)
        wait_lock;                  /* that lock, while waiting (read by the deadlock check) */
    struct sched_queue *wait_queue; /* that queue, while waiting */
    enum sched_wake wake;           /* why it woke */
    void *wait_msg;                 /* a channel's message being sent or received */
    int64_t wake_at_ms;             /* sleep deadline (monotonic) */
    uint32_t sleep_slot;            /* place in the sleepers' heap */
    uint64_t prof_mark;             /* the profiler's, from suspend to resume */
    uint32_t spawn_fn;              /* where it was spawned: the spawner's function */
    struct interp_span spawn_site;  /*   and the spawn call, in that function's source */
    struct interp_task *next;       /* queue link */
};

/* The stack every task has (main included), as the jett-runtime
 * thread's: INTERP_MAX_DEPTH nested calls fit. */
#define TASK_STACK_BYTES ((size_t)64 << 20)

/* Task 1 of a run with tasks: its state is run->main, which runs the
 * namespace initializers then main; result is filled when main ends.
 * NULL when memory runs out. */
struct interp_task *task_main(struct interp_run *run, struct interp_result *result);

/* spawn(f, args...): the new task's handle in *out, or -1 (raised). */
int task_spawn(struct interp_state *s, struct value fn, struct value *args, uint32_t n,
               const struct ast *call, struct value *out);
/* join(t): t's copy of its result (the first join), or a copy of the
 * result made now (a later one) in *out; -1 when raised or stopped. */
int task_join(struct interp_state *s, struct interp_task *t, const struct ast *call,
              struct value *out);

/* The worker's part once a task's fiber has ended for good. */
void task_reap(struct sched_worker *w, struct interp_task *t);

/* Frees an ended task whose last reference went (rt_shared_drop). */
void task_drop(struct heap *h, struct interp_task *t, struct heap_obj **pending);
/* Frees what a task still holds at teardown, without events. */
void task_teardown(struct interp_task *t);

/* Under `lock`: t waits in q until a waker (under the same lock) takes
 * it out with task_unwait. */
static inline void task_wait_on(struct interp_task *t, pthread_mutex_t *lock, struct sched_queue *q)
{
    t->waiting = true;
    t->wait_queue = q;
    atomic_store(&t->wait_lock, lock);
    sched_queue_push(q, t);
}

static inline void task_unwait(struct interp_task *t)
{
    t->waiting = false;
    t->wait_queue = NULL;
    atomic_store(&t->wait_lock, NULL);
}

/* The task a state runs, and its number (0 in a run without tasks). */
static inline uint32_t task_number_of(const struct interp_state *s)
{
    return s->task ? s->task->number : 0;
}

#endif
