/* scheduler: workers, the run queue, parking, sleep, stop and deadlock (see
 * scheduler.h). */
#include "agent/scheduler.h"

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/channel.h"
#include "agent/task.h"

/* Spare stacks kept for new tasks, and how much of a stack's top a
 * spare keeps committed (the rest is given back when it went deeper). */
#define SCHED_POOL_MAX 64
#define SCHED_POOL_KEEP ((size_t)256 << 10)
/* The worker thread's own stack: the scheduler loop and the frees it
 * makes for tasks that ended. */
#define SCHED_WORKER_STACK ((size_t)8 << 20)

void sched_queue_push(struct sched_queue *q, struct interp_task *t)
{
    t->next = NULL;
    if (q->tail)
        q->tail->next = t;
    else
        q->head = t;
    q->tail = t;
}

struct interp_task *sched_queue_pop(struct sched_queue *q)
{
    struct interp_task *t = q->head;
    if (t) {
        q->head = t->next;
        if (q->head == NULL)
            q->tail = NULL;
        t->next = NULL;
    }
    return t;
}

bool sched_queue_remove(struct sched_queue *q, struct interp_task *t)
{
    struct interp_task *prev = NULL;
    for (struct interp_task *x = q->head; x; prev = x, x = x->next) {
        if (x != t)
            continue;
        if (prev)
            prev->next = x->next;
        else
            q->head = x->next;
        if (q->tail == x)
            q->tail = prev;
        x->next = NULL;
        return true;
    }
    return false;
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wakes the supervisor (a new deadline, the end). */
static void poke(struct sched *sc)
{
    ssize_t n = write(sc->run->wake[1], "s", 1);
    (void)n;
}

int sched_init(struct sched *sc, struct interp_run *run, uint32_t n_workers)
{
    memset(sc, 0, sizeof *sc);
    sc->run = run;
    sc->n_workers = n_workers;
    sc->workers = calloc(n_workers, sizeof *sc->workers);
    if (sc->workers == NULL)
        return -1;
    for (uint32_t i = 0; i < n_workers; i++) {
        struct sched_worker *w = &sc->workers[i];
        w->index = i + 1;
        w->sched = sc;
        w->sp.slow = run->solo.sp.slow;
        atomic_init(&w->current, NULL);
    }
    pthread_mutex_init(&sc->lock, NULL);
    pthread_cond_init(&sc->work, NULL);
    pthread_mutex_init(&sc->pool_lock, NULL);
    atomic_init(&sc->stopping, 0);
    return 0;
}

void sched_destroy(struct sched *sc)
{
    for (uint32_t i = 0; i < sc->n_pool; i++)
        fiber_stack_free(&sc->pool[i]);
    free(sc->pool);
    free(sc->sleepers);
    if (sc->workers) {
        for (uint32_t i = 0; i < sc->n_workers; i++) {
            if (sc->workers[i].idle)
                run_state_free(sc->workers[i].idle);
            free(sc->workers[i].fn_calls), free(sc->workers[i].site_calls);
        }
        pthread_mutex_destroy(&sc->lock);
        pthread_cond_destroy(&sc->work);
        pthread_mutex_destroy(&sc->pool_lock);
    }
    free(sc->workers);
    memset(sc, 0, sizeof *sc);
}

int sched_stack_get(struct sched *sc, struct fiber_stack *st)
{
    pthread_mutex_lock(&sc->pool_lock);
    if (sc->n_pool > 0) {
        *st = sc->pool[--sc->n_pool];
        pthread_mutex_unlock(&sc->pool_lock);
        return 0;
    }
    pthread_mutex_unlock(&sc->pool_lock);
    size_t frames = (size_t)(INTERP_MAX_DEPTH + 1) * sizeof(struct interp_frame);
    return fiber_stack_new(st, TASK_STACK_BYTES, frames);
}

void sched_stack_put(struct sched *sc, struct fiber_stack *st, size_t used)
{
    if (used > SCHED_POOL_KEEP)
        fiber_stack_trim(st, SCHED_POOL_KEEP);
    pthread_mutex_lock(&sc->pool_lock);
    if (sc->n_pool < SCHED_POOL_MAX) {
        if (sc->pool == NULL)
            sc->pool = calloc(SCHED_POOL_MAX, sizeof *sc->pool);
        if (sc->pool) {
            sc->pool[sc->n_pool++] = *st;
            pthread_mutex_unlock(&sc->pool_lock);
            memset(st, 0, sizeof *st);
            return;
        }
    }
    pthread_mutex_unlock(&sc->pool_lock);
    fiber_stack_free(st);
}

/* ---- sleepers: a binary heap by wake time ---- */

static void sleepers_swap(struct sched *sc, uint32_t i, uint32_t j)
{
    struct interp_task *t = sc->sleepers[i];
    sc->sleepers[i] = sc->sleepers[j];
    sc->sleepers[j] = t;
    sc->sleepers[i]->sleep_slot = i;
    sc->sleepers[j]->sleep_slot = j;
}

static void sleepers_up(struct sched *sc, uint32_t i)
{
    while (i > 0 && sc->sleepers[(i - 1) / 2]->wake_at_ms > sc->sleepers[i]->wake_at_ms) {
        sleepers_swap(sc, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

static void sleepers_down(struct sched *sc, uint32_t i)
{
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < sc->n_sleepers && sc->sleepers[l]->wake_at_ms < sc->sleepers[m]->wake_at_ms)
            m = l;
        if (r < sc->n_sleepers && sc->sleepers[r]->wake_at_ms < sc->sleepers[m]->wake_at_ms)
            m = r;
        if (m == i)
            return;
        sleepers_swap(sc, i, m);
        i = m;
    }
}

static int sleepers_push(struct sched *sc, struct interp_task *t)
{
    if (sc->n_sleepers == sc->cap_sleepers) {
        uint32_t cap = sc->cap_sleepers ? sc->cap_sleepers * 2 : 16;
        struct interp_task **p = realloc(sc->sleepers, cap * sizeof *p);
        if (p == NULL)
            return -1;
        sc->sleepers = p, sc->cap_sleepers = cap;
    }
    t->sleep_slot = sc->n_sleepers;
    sc->sleepers[sc->n_sleepers++] = t;
    sleepers_up(sc, t->sleep_slot);
    return 0;
}

static struct interp_task *sleepers_pop(struct sched *sc)
{
    struct interp_task *t = sc->sleepers[0];
    if (--sc->n_sleepers > 0) {
        sc->sleepers[0] = sc->sleepers[sc->n_sleepers];
        sc->sleepers[0]->sleep_slot = 0;
        sleepers_down(sc, 0);
    }
    return t;
}

/* ---- readiness ---- */

void sched_ready_locked(struct sched *sc, struct interp_task *t, enum sched_wake why)
{
    t->wake = why;
    sched_queue_push(&sc->ready, t);
    pthread_cond_signal(&sc->work);
}

void sched_ready(struct sched *sc, struct interp_task *t, enum sched_wake why)
{
    pthread_mutex_lock(&sc->lock);
    sched_ready_locked(sc, t, why);
    pthread_mutex_unlock(&sc->lock);
}

void sched_add(struct sched *sc, struct interp_task *t)
{
    struct interp_run *run = sc->run;
    if (run->hooks.suspend)
        run->hooks.suspend(run->hooks_ctx, t->s); /* waits for a worker from now */
    pthread_mutex_lock(&sc->lock);
    sc->n_live++;
    sched_ready_locked(sc, t, SCHED_OK);
    pthread_mutex_unlock(&sc->lock);
}

enum sched_wake sched_park(struct interp_state *s, pthread_mutex_t *held)
{
    struct interp_task *t = s->task;
    struct interp_run *run = s->run;
    if (run->hooks.suspend)
        run->hooks.suspend(run->hooks_ctx, s);
    /* A waker may queue the task as soon as `held` is released; the
     * worker that takes it waits for `switching` to clear, which the old
     * worker does once the context is saved. */
    atomic_store(&t->switching, 1);
    pthread_mutex_unlock(held);
    fiber_switch(&t->fiber, &t->worker->self);
    if (run->hooks.resume)
        run->hooks.resume(run->hooks_ctx, s);
    return t->wake;
}

enum sched_wake sched_sleep(struct interp_state *s, int64_t ms)
{
    struct sched *sc = &s->run->sched;
    struct interp_task *t = s->task;
    pthread_mutex_lock(&sc->lock);
    if (sched_stopping(sc)) {
        pthread_mutex_unlock(&sc->lock);
        return SCHED_STOP;
    }
    /* the clock rounded up and the sum saturated: a task sleeps at least
     * ms milliseconds, as the runtime thread's sleep does */
    int64_t from = mono_ms() + 1;
    t->wake_at_ms = ms > INT64_MAX - from ? INT64_MAX : from + ms;
    if (sleepers_push(sc, t) < 0) { /* no room to wait: the time passes running */
        pthread_mutex_unlock(&sc->lock);
        return SCHED_OK;
    }
    sc->n_sleeping++;
    if (t->sleep_slot == 0)
        poke(sc); /* the supervisor's next deadline moved */
    return sched_park(s, &sc->lock);
}

/* Under the lock: the sleepers whose time is up become runnable; the
 * milliseconds until the next one (-1: none). */
static int wake_sleepers(struct sched *sc)
{
    int64_t now = mono_ms();
    while (sc->n_sleepers > 0 && sc->sleepers[0]->wake_at_ms <= now) {
        struct interp_task *t = sleepers_pop(sc);
        sc->n_sleeping--;
        sched_ready_locked(sc, t, SCHED_OK);
    }
    if (sc->n_sleepers == 0)
        return -1;
    int64_t left = sc->sleepers[0]->wake_at_ms - now;
    return left > 1000 ? 1000 : (int)left;
}

/* ---- stopping and deadlock ---- */

void sched_stop(struct sched *sc)
{
    struct interp_run *run = sc->run;
    pthread_mutex_lock(&sc->lock);
    bool first = !sc->stop_swept;
    sc->stop_swept = true;
    atomic_store(&sc->stopping, 1);
    pthread_mutex_unlock(&sc->lock);
    if (!first)
        return;
    /* Running tasks stop at their next safe point... */
    for (uint32_t i = 0; i < sc->n_workers; i++)
        atomic_fetch_or(&sc->workers[i].sp.pending, PENDING_INTERRUPT);
    /* ...blocked ones wake now: every wait queue is a channel's or a
     * task's, and both are in the registry. */
    pthread_mutex_lock(&run->reg_lock);
    for (struct rt_shared *o = run->reg; o; o = o->reg_next) {
        if (o->kind == RT_CHANNEL) {
            channel_wake_all(sc, (struct interp_channel *)o, SCHED_STOP);
            continue;
        }
        struct interp_task *t = (struct interp_task *)o;
        pthread_mutex_lock(&t->lock);
        for (struct interp_task *j; (j = sched_queue_pop(&t->joiners)) != NULL;) {
            task_unwait(j);
            sched_ready(sc, j, SCHED_STOP);
        }
        pthread_mutex_unlock(&t->lock);
    }
    pthread_mutex_unlock(&run->reg_lock);
    pthread_mutex_lock(&sc->lock);
    while (sc->n_sleepers > 0) {
        struct interp_task *t = sleepers_pop(sc);
        sc->n_sleeping--;
        sched_ready_locked(sc, t, SCHED_STOP);
    }
    pthread_mutex_unlock(&sc->lock);
}

/* Every task is blocked: main (task 1, blocked too) wakes with
 * SCHED_DEADLOCK, unless something woke it meanwhile. */
static void wake_main_deadlocked(struct sched *sc)
{
    struct interp_task *m = sc->run->main->task;
    pthread_mutex_t *lock = atomic_load(&m->wait_lock);
    if (lock == NULL)
        return;
    pthread_mutex_lock(lock);
    bool was =
        m->waiting && atomic_load(&m->wait_lock) == lock && sched_queue_remove(m->wait_queue, m);
    if (was)
        task_unwait(m);
    pthread_mutex_unlock(lock);
    if (was)
        sched_ready(sc, m, SCHED_DEADLOCK);
}

/* ---- workers ---- */

/* Runs t until it parks or ends (true); the scheduler's lock is not
 * held.  Once `switching` clears, another worker may run t: nothing of t
 * is read here after that. */
static bool run_task(struct sched_worker *w, struct interp_task *t)
{
    struct interp_state *s = t->s;
    for (unsigned spins = 0; atomic_load_explicit(&t->switching, memory_order_acquire); spins++)
        if (spins > 64)
            sched_yield(); /* its old worker was descheduled mid-switch */
    t->worker = w;
    s->worker = w;
    s->sp = &w->sp;
    s->heap.sp = &w->sp;
    s->fn_calls = w->fn_calls, s->site_calls = w->site_calls; /* the worker counts its calls */
    w->task = t;
    atomic_store(&w->current, s);
    fiber_switch(&w->self, &t->fiber);
    atomic_store(&w->current, NULL);
    w->task = NULL;
    if (t->ended)
        return true; /* no one else can run it now */
    atomic_store_explicit(&t->switching, 0, memory_order_release);
    return false;
}

/* A request that reached the worker while it was between tasks is a
 * sample of the worker's own work. */
static void ack_between(struct sched_worker *w)
{
    struct interp_run *run = w->sched->run;
    uint32_t p = atomic_load_explicit(&w->sp.pending, memory_order_relaxed);
    if (!(p & PENDING_SAMPLE))
        return;
    atomic_fetch_and(&w->sp.pending, ~(uint32_t)PENDING_SAMPLE);
    if (run->sampler)
        run->sampler(run->sampler_ctx, w->idle);
}

static void *worker_main(void *arg)
{
    struct sched_worker *w = arg;
    struct sched *sc = w->sched;
    struct interp_run *run = sc->run;
    char name[16];
    snprintf(name, sizeof name, "jett-worker-%u", w->index);
    pthread_setname_np(pthread_self(), name);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL); /* signals go to the supervisor */
    fiber_thread(&w->self);
    if (run->hooks.worker)
        run->hooks.worker(run->hooks_ctx, w->index);
    pthread_mutex_lock(&sc->lock);
    for (;;) {
        struct interp_task *t;
        while ((t = sched_queue_pop(&sc->ready)) == NULL && !sc->done) {
            pthread_mutex_unlock(&sc->lock);
            ack_between(w);
            pthread_mutex_lock(&sc->lock);
            if (sc->ready.head || sc->done)
                continue;
            pthread_cond_wait(&sc->work, &sc->lock);
        }
        if (t == NULL)
            break;
        sc->n_running++;
        pthread_mutex_unlock(&sc->lock);
        bool ended = run_task(w, t);
        if (ended) {
            task_reap(w, t);
            if (run->hooks.publish)
                run->hooks.publish(run->hooks_ctx, w->idle);
        }
        ack_between(w);
        pthread_mutex_lock(&sc->lock);
        sc->n_running--;
        if (ended && --sc->n_live == 0) {
            sc->done = true;
            pthread_cond_broadcast(&sc->work);
            poke(sc);
            continue;
        }
        if (sc->n_running == 0 && sc->ready.head == NULL && sc->n_sleeping == 0 && sc->n_live > 0 &&
            !sched_stopping(sc)) {
            pthread_mutex_unlock(&sc->lock);
            wake_main_deadlocked(sc);
            pthread_mutex_lock(&sc->lock);
        }
    }
    pthread_mutex_unlock(&sc->lock);
    if (run->hooks.publish)
        run->hooks.publish(run->hooks_ctx, w->idle);
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
        w->cpu_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    return NULL;
}

/* Drains the self-pipe; whether an interrupt is waiting to be handled. */
static void drain(int fd)
{
    char buf[64];
    while (read(fd, buf, sizeof buf) > 0)
        ;
}

int sched_run(struct sched *sc, struct interp_task *main_task)
{
    struct interp_run *run = sc->run;
    for (uint32_t i = 0; i < sc->n_workers; i++) {
        struct sched_worker *w = &sc->workers[i];
        w->idle = run_state_new(run, NULL);
        if (w->idle == NULL)
            return -1;
        w->idle->sp = &w->sp;
        w->idle->heap.sp = &w->sp;
        w->idle->worker = w;
    }
    sched_add(sc, main_task);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, SCHED_WORKER_STACK);
    uint32_t started = 0;
    for (; started < sc->n_workers; started++) {
        struct sched_worker *w = &sc->workers[started];
        if (pthread_create(&w->thread, &attr, worker_main, w) != 0)
            break;
        w->started = true;
    }
    pthread_attr_destroy(&attr);
    if (started == 0) {
        pthread_mutex_lock(&sc->lock);
        sched_queue_pop(&sc->ready);
        sc->n_live--;
        pthread_mutex_unlock(&sc->lock);
        return -1;
    }
    bool interrupted = false;
    for (;;) {
        pthread_mutex_lock(&sc->lock);
        int timeout = wake_sleepers(sc);
        bool done = sc->done;
        pthread_mutex_unlock(&sc->lock);
        if (done)
            break;
        if (!interrupted && atomic_load(&run->signo) != 0) {
            interrupted = true;
            sched_stop(sc);
            continue;
        }
        struct pollfd p = {run->wake[0], POLLIN, 0};
        if (poll(&p, 1, timeout) > 0)
            drain(run->wake[0]);
    }
    for (uint32_t i = 0; i < sc->n_workers; i++)
        if (sc->workers[i].started)
            pthread_join(sc->workers[i].thread, NULL);
    return 0;
}
