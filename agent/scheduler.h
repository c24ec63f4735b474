/*
 * scheduler: the workers that run a program's tasks (JETT.md, "Tasks and
 * channels").
 *
 * N worker threads, `jett-worker-K` (K = 1..N), take runnable tasks from
 * one FIFO queue and run each on its own fiber (agent/fiber.h) until it
 * blocks, sleeps or ends; a task that blocks gives its worker up
 * (sched_park) and whoever unblocks it queues it again (sched_ready), so
 * it may resume on another worker.  The thread that called interp_run
 * supervises: it wakes sleepers when their time is up and, on an
 * interrupt, stops every task.
 *
 * Blocking, without lost wake-ups: a task holds the lock of what it
 * waits on (a channel, a task it joins) while it enqueues itself there,
 * and releases it as it switches out; a waker takes the same lock to
 * dequeue it, and the worker that resumes it first waits until its old
 * worker has saved its context (`switching`), so a task never runs on
 * two workers.  Each lock is released by the fiber that took it.  Lock
 * order: registry, then a channel's or a task's, then the scheduler's.
 *
 * Deadlock: when no task runs, none is queued and none sleeps while some
 * are unfinished, every task is blocked; task 1 (main), which is then
 * blocked too, wakes with SCHED_DEADLOCK.
 *
 * Ending: when main ends, or on an interrupt, sched_stop sets the
 * interrupt bit on every worker (running tasks stop at their next safe
 * point) and wakes every blocked and sleeping task with SCHED_STOP; a
 * task that has not started is never run.  The run is over when every
 * task has ended.
 */
#ifndef JETT_AGENT_SCHEDULER_H
#define JETT_AGENT_SCHEDULER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "agent/fiber.h"
#include "agent/safepoint.h"

struct interp_state;
struct interp_task;
struct interp_run;

/* Why a blocked task woke. */
enum sched_wake { SCHED_OK = 0, SCHED_CLOSED, SCHED_STOP, SCHED_DEADLOCK };

/* A thread that runs Jett code: a worker, or the one thread of a run
 * without tasks (index 0). */
struct sched_worker {
    struct safepoint sp; /* first: the safe point's slow path finds the worker */
    /* The state running here, NULL between tasks (the timer reads it). */
    _Atomic(struct interp_state *) current;
    uint32_t index;            /* K of jett-worker-K; 0: jett-runtime */
    struct interp_task *task;  /* the task switched to */
    struct interp_state *idle; /* frames of none: the worker's own work between tasks */
    struct fiber self;         /* the thread's own context */
    pthread_t thread;
    bool started;
    struct sched *sched;
    uint64_t cpu_ns; /* the thread's CPU time, once it ended */
    /* interp_count_calls: the calls made on this worker, by function id
     * and by call site id (only it writes them) */
    uint64_t *fn_calls, *site_calls;
};

/* A FIFO of tasks through their `next` links. */
struct sched_queue {
    struct interp_task *head, *tail;
};

void sched_queue_push(struct sched_queue *q, struct interp_task *t);
struct interp_task *sched_queue_pop(struct sched_queue *q);
/* Removes t if it is there; whether it was. */
bool sched_queue_remove(struct sched_queue *q, struct interp_task *t);

struct sched {
    struct interp_run *run;
    pthread_mutex_t lock;
    pthread_cond_t work; /* idle workers wait here */
    struct sched_queue ready;
    uint32_t n_running;   /* tasks on a worker, or being switched out of one */
    uint32_t n_sleeping;  /* tasks in sleep */
    uint64_t n_live;      /* tasks not ended */
    bool done;            /* every task ended */
    _Atomic int stopping; /* main ended or an interrupt came: read by blocking calls */
    bool stop_swept;
    struct sched_worker *workers;
    uint32_t n_workers;
    /* sleepers: a binary heap by wake time */
    struct interp_task **sleepers;
    uint32_t n_sleepers, cap_sleepers;
    /* spare fiber stacks */
    pthread_mutex_t pool_lock;
    struct fiber_stack *pool;
    uint32_t n_pool;
};

/* Workers are started by sched_run; -1 when memory runs out. */
int sched_init(struct sched *sc, struct interp_run *run, uint32_t n_workers);
void sched_destroy(struct sched *sc);

/* Starts the workers with task 1 queued, supervises (sleep deadlines,
 * interrupts) and returns once every task has ended.  -1 when a worker
 * thread cannot start (nothing ran then). */
int sched_run(struct sched *sc, struct interp_task *main_task);

/* A task becomes runnable with `why` as the result of its wait. */
void sched_ready(struct sched *sc, struct interp_task *t, enum sched_wake why);
/* The same with the scheduler's lock held. */
void sched_ready_locked(struct sched *sc, struct interp_task *t, enum sched_wake why);

/* The running task `s` gives its worker up; `held` (locked by the
 * caller, who enqueued the task where a waker will find it) is released
 * on the way out.  Returns why it woke. */
enum sched_wake sched_park(struct interp_state *s, pthread_mutex_t *held);

/* Blocks the running task for `ms` milliseconds: SCHED_OK, or SCHED_STOP
 * when the run stops first. */
enum sched_wake sched_sleep(struct interp_state *s, int64_t ms);

/* A task that will run for the first time: counted as live and queued. */
void sched_add(struct sched *sc, struct interp_task *t);

/* Stops every task (see above); once. */
void sched_stop(struct sched *sc);

/* True once sched_stop began: a task must not block or spawn any more. */
static inline bool sched_stopping(struct sched *sc)
{
    return atomic_load(&sc->stopping) != 0;
}

/* A stack for a new task: a spare one or a new mapping; -1 when none. */
int sched_stack_get(struct sched *sc, struct fiber_stack *st);
void sched_stack_put(struct sched *sc, struct fiber_stack *st, size_t used);

#endif
