/* profiler: timer thread, safe-point sampler, heap observer, stacks. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>

#include "agent/interp_frame.h"
#include "agent/memblock.h"
#include "agent/memwire.h"
#include "agent/profiler.h"
#include "agent/run.h"
#include "agent/stacktab.h"
#include "proto/util/mix64.h"

#define PROFILER_MAX_FRAMES WIRE_MAX_STACK_DEPTH

/* What the timer and the profiler keep of worker K (with tasks). */
struct profiler_worker {
    atomic_bool registered; /* it may run tasks from now on */
    atomic_bool pending;    /* a request for it is not acknowledged yet */
    _Atomic uint64_t tick;  /* that request's tick */
};

/* Memory mode with several workers: a worker's events not yet in the
 * stream (memblock.h). */
struct worker_events {
    struct memblock block;
};

/* The calling worker's events, set as it starts (NULL on any other
 * thread), and the state whose context its block's events carry (NULL:
 * read it again at the next event), with that state's frames and depth.
 * Initial-exec: each is one load at a fixed offset, where the block's
 * copies of the three made a chain of loads that every event waited on. */
#define OWN_TLS static _Thread_local __attribute__((tls_model("initial-exec")))
OWN_TLS struct worker_events *own_events;
OWN_TLS struct interp_state *own_state;
OWN_TLS struct interp_frame *own_frames;
OWN_TLS const uint32_t *own_depth;

struct profiler {
    struct collector *c;
    struct interp_state *s;
    /* The state whose events are recorded (s; with tasks, the task's
     * being recorded, under `lock`), and its frames and depth, read in
     * place per event; what its events carry of the task and thread. */
    struct interp_state *at;
    struct interp_frame *frames;
    const uint32_t *depth;
    struct wire_exec exec;
    /* With tasks: every event goes in under the lock, which puts the
     * run's one sequence of events, allocation ids and stack nodes in
     * one order. */
    bool tasks;
    atomic_bool lock; /* tasks: the writers' lock (plock) */
    uint32_t n_workers;
    struct profiler_worker *workers; /* [1..n_workers] */
    struct worker_events *events;    /* [1..n_workers]: memory mode, several workers */
    _Atomic uint64_t requested;      /* ticks requested of busy workers or waiting tasks */
    uint64_t next_id;                /* the run's allocation ids */
    /* The collector's ring and failed flag, for entries built in place. */
    struct evring *ring;
    const atomic_bool *failed;
    uint8_t mode;
    uint32_t rate_hz, trunc_func;
    /* Timer -> runtime thread. */
    _Atomic uint64_t ticks;     /* requested ticks so far */
    _Atomic uint64_t coalesced; /* ticks that found the pending bit set */
    _Atomic uint64_t waiting;   /* waiting ticks not yet recorded */
    atomic_bool pending;
    _Atomic uint64_t pending_tick;
    /* The clock of ticks: the deadline of tick ticks + 1, and the state of
     * the gaps' sequence, advanced under clock_lock by the timer or, with
     * tasks, by a worker whose task parks or resumes after a deadline the
     * timer has not reached yet (advance_ticks). */
    _Atomic uint64_t next_deadline;
    uint64_t period, rng;
    atomic_bool clock_lock;
    bool timer_asleep; /* test-only: the timer thread never ticks */
    atomic_bool stop;
    pthread_t timer;
    bool timer_started;
    uint64_t timer_cpu_ns; /* the timer thread's own CPU, set as it ends */
    /* Runtime thread only. */
    uint64_t dropped, sample_seq, alloc_seq, last_tick;
    bool stack_limit;
    struct stacktab tab;
    /* The <truncated-stack> node last interned, its parent and its site. */
    uint32_t trunc_parent, trunc_node;
    struct wire_span trunc_site;
    uint64_t wall_start, cpu_start;
    struct profiler_heap_totals heap;
    profiler_event_hook hook;
    void *hook_ctx;
    /* profiler_calls' entries */
    struct wire_fn_calls *fn_calls;
    struct wire_site_calls *site_calls;
    struct memwire mw; /* memory mode: the entries, and folds */
};

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct profiler *profiler_new(struct collector *c, struct interp_state *s, uint8_t mode,
                              uint32_t rate_hz, size_t stack_budget, uint32_t trunc_func)
{
    struct profiler *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->c = c, p->s = s, p->mode = mode, p->rate_hz = rate_hz, p->trunc_func = trunc_func;
    p->at = s, p->frames = interp_frames(s), p->depth = interp_depth_at(s);
    p->exec = (struct wire_exec){WIRE_NONE32, WIRE_NONE32, 0};
    p->ring = collector_ring(c), p->failed = collector_failed_flag(c);
    p->trunc_parent = p->trunc_node = WIRE_NONE32;
    p->trunc_site = WIRE_SPAN_NONE;
    p->tasks = interp_has_tasks(s);
    if (p->tasks) {
        p->n_workers = interp_worker_count(s);
        p->workers = calloc(p->n_workers + 1, sizeof *p->workers);
        if (!p->workers) {
            free(p);
            return NULL;
        }
    }
    stacktab_init(&p->tab, stack_budget);
    memwire_init(&p->mw, c, true);
    return p;
}

void profiler_free(struct profiler *p)
{
    if (!p)
        return;
    stacktab_destroy(&p->tab);
    if (p->tasks)
        free(p->workers);
    free(p->events);
    free(p->fn_calls), free(p->site_calls);
    free(p);
}

/* ---- stacks ---- */

/* A sample or event records at most 128 levels: the frames root first,
 * the deepest level replaced by <truncated-stack> when the real stack is
 * deeper.  Level i's node is (level i-1's node, its function, the call in
 * frame i-1 that made frame i); the <truncated-stack> level's site is the
 * call its parent frame was making, which is known, so that the line of
 * that frame is too.  A frame's node is kept with the frame
 * (interp_stack_node), so an event costs the nodes of frames entered
 * since the last event, not a walk of the whole stack.  Nodes are still
 * created only when an event first needs them, root first, so their ids
 * and STACK entries come in the order a full walk per event gives. */

/* Frames whose nodes a stack of `depth` frames records. */
static uint32_t real_levels(uint32_t depth)
{
    return depth > PROFILER_MAX_FRAMES ? PROFILER_MAX_FRAMES - 1 : depth;
}

/* Known nodes form a prefix (a node is computed from its parent's): how
 * many of the first `real` frames have theirs. */
static uint32_t known_levels(const struct profiler *p, uint32_t real)
{
    uint32_t k = real;
    while (k > 0 && p->frames[k - 1].stack_node == INTERP_NODE_UNKNOWN)
        k--;
    return k;
}

static uint32_t level_func(const struct profiler *p, uint32_t i)
{
    return p->frames[i].func_id;
}

/* The call in frame i-1 that made frame i (frame i-1 is not the leaf). */
static struct wire_span level_site(const struct profiler *p, uint32_t i)
{
    if (i == 0)
        return WIRE_SPAN_NONE;
    const struct interp_frame *f = &p->frames[i - 1];
    return (struct wire_span){f->call_start, f->call_end};
}

/* Whether the <truncated-stack> node last interned is the one under
 * `parent` at `site`. */
static bool trunc_known(const struct profiler *p, uint32_t parent, struct wire_span site)
{
    return p->trunc_node != WIRE_NONE32 && parent == p->trunc_parent &&
           site.start == p->trunc_site.start && site.end == p->trunc_site.end;
}

/* Nodes the stack would add to the table (for the CPU space check). */
static uint32_t missing_nodes(const struct profiler *p, uint32_t depth)
{
    bool truncated = depth > PROFILER_MAX_FRAMES;
    uint32_t real = real_levels(depth), k = known_levels(p, real);
    uint32_t parent = k ? p->frames[k - 1].stack_node : WIRE_NONE32;
    for (uint32_t i = k; i < real; i++) {
        parent = stacktab_find(&p->tab, parent, level_func(p, i), level_site(p, i));
        if (parent == WIRE_NONE32)
            return real - i + truncated;
    }
    if (!truncated || trunc_known(p, parent, level_site(p, real)))
        return 0;
    return stacktab_find(&p->tab, parent, p->trunc_func, level_site(p, real)) == WIRE_NONE32;
}

/* Room for an entry of n bytes built in place in the ring, or NULL (the
 * collector failed, or the ring has no room in one piece: collector_put
 * copies it then, waiting or dropping as asked). */
static inline uint8_t *claim(struct profiler *p, size_t n)
{
    if (atomic_load_explicit(p->failed, memory_order_relaxed))
        return NULL;
    return evring_claim(p->ring, n);
}

/* Appends the STACK entry of a node just created: in memory mode (wait)
 * held with the events (memwire.h), else published at once. */
static void put_stack(struct profiler *p, const struct wire_stack *st, bool wait)
{
    if (wait) {
        if (!atomic_load_explicit(p->failed, memory_order_relaxed))
            memwire_stack(&p->mw, st);
        return;
    }
    uint8_t *dst = claim(p, WIRE_STACK_SIZE);
    if (dst) {
        evring_commit(p->ring, wire_put_stack(dst, st));
        return;
    }
    uint8_t e[WIRE_STACK_SIZE];
    collector_put(p->c, e, wire_put_stack(e, st), wait);
}

/* One level's node, appending its STACK entry when it is new; WIRE_NONE32
 * (and the stack limit noted) when the table is full. */
static inline uint32_t intern_level(struct profiler *p, uint32_t parent, uint32_t func,
                                    struct wire_span site, bool wait)
{
    bool created;
    uint32_t id = stacktab_intern(&p->tab, parent, func, site, &created);
    if (id == WIRE_NONE32) {
        p->stack_limit = true;
        return WIRE_NONE32;
    }
    if (created)
        put_stack(p, &(struct wire_stack){id, parent, func, site}, wait);
    return id;
}

/* The leaf node of a stack of `depth` > 0 frames, interning the levels
 * not known yet; WIRE_NONE32 when the table is full (the frames that got
 * no node are tried again at the next event). */
static __attribute__((noinline)) uint32_t stack_node(struct profiler *p, uint32_t depth, bool wait)
{
    uint32_t real = real_levels(depth), k = known_levels(p, real);
    uint32_t parent = k ? p->frames[k - 1].stack_node : WIRE_NONE32;
    for (uint32_t i = k; i < real; i++) {
        parent = intern_level(p, parent, level_func(p, i), level_site(p, i), wait);
        if (parent == WIRE_NONE32)
            return WIRE_NONE32;
        p->frames[i].stack_node = parent;
    }
    if (depth <= PROFILER_MAX_FRAMES)
        return parent;
    struct wire_span site = level_site(p, real);
    if (!trunc_known(p, parent, site)) {
        uint32_t id = intern_level(p, parent, p->trunc_func, site, wait);
        if (id == WIRE_NONE32)
            return WIRE_NONE32;
        p->trunc_parent = parent, p->trunc_node = id, p->trunc_site = site;
    }
    return p->trunc_node;
}

/* The leaf statement a stack of `depth` > 0 frames records (none when
 * truncated). */
static struct wire_span leaf_span(const struct profiler *p, uint32_t depth)
{
    if (depth > PROFILER_MAX_FRAMES)
        return WIRE_SPAN_NONE;
    const struct interp_frame *f = &p->frames[depth - 1];
    return (struct wire_span){f->stmt_start, f->stmt_end};
}

/* ---- CPU ---- */

static void put_sample(struct profiler *p, uint8_t state, uint32_t stack, struct wire_span span,
                       uint64_t tick)
{
    if (tick < p->last_tick)
        tick = p->last_tick;
    p->last_tick = tick;
    struct wire_sample sm = {++p->sample_seq, tick,  p->exec,
                             state,           stack, stack == WIRE_NONE32 ? WIRE_SPAN_NONE : span};
    uint8_t e[WIRE_SAMPLE_SIZE];
    if (!collector_put(p->c, e, wire_put_sample(e, &sm), false))
        p->dropped++;
}

/* Records one tick's sample in `state` (jett or waiting), or drops it when
 * the ring lacks room for it and its new stack nodes. */
static void record_tick(struct profiler *p, uint8_t state, uint64_t tick)
{
    uint32_t depth = *p->depth;
    if (depth == 0) {
        put_sample(p, state == WIRE_STATE_WAITING ? state : WIRE_STATE_RUNTIME, WIRE_NONE32,
                   WIRE_SPAN_NONE, tick);
        return;
    }
    size_t need = (size_t)missing_nodes(p, depth) * WIRE_STACK_SIZE + WIRE_SAMPLE_SIZE;
    if (!collector_reserve(p->c, need)) {
        p->dropped++;
        return;
    }
    uint32_t leaf = stack_node(p, depth, false);
    if (leaf == WIRE_NONE32) /* the stack table is full: the stack is lost */
        put_sample(p, WIRE_STATE_UNAVAILABLE, WIRE_NONE32, WIRE_SPAN_NONE, tick);
    else
        put_sample(p, state, leaf, leaf_span(p, depth), tick);
}

/* Safe point on the runtime thread: the pending tick first, then one
 * waiting sample per tick spent blocked. */
static void on_safe_point(void *ctx, struct interp_state *s)
{
    struct profiler *p = ctx;
    (void)s;
    uint64_t waiting = atomic_exchange(&p->waiting, 0);
    uint64_t now = atomic_load(&p->ticks);
    if (atomic_load(&p->pending)) {
        uint64_t tick = atomic_load(&p->pending_tick);
        record_tick(p, WIRE_STATE_JETT, tick);
        atomic_store(&p->pending, false);
    }
    for (uint64_t i = 0; i < waiting; i++)
        record_tick(p, WIRE_STATE_WAITING, now - waiting + 1 + i);
}

static void timer_tick_tasks(struct profiler *p, uint64_t tick, uint32_t skip);

/* One tick: no allocation, no lock, no system call. */
static void timer_tick(struct profiler *p, uint64_t tick, uint32_t skip)
{
    if (p->tasks) {
        timer_tick_tasks(p, tick, skip);
    } else if (interp_is_blocked(p->s)) {
        atomic_fetch_add(&p->waiting, 1);
        interp_request_sample(p->s);
    } else if (atomic_exchange(&p->pending, true)) {
        atomic_fetch_add(&p->coalesced, 1);
    } else {
        atomic_store(&p->pending_tick, tick);
        interp_request_sample(p->s);
    }
}

/* SIGRTMIN only interrupts the timer's sleep so that stopping never waits
 * for the next deadline (a full second at 1 Hz). */
static void timer_wake(int sig)
{
    (void)sig;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Takes spin lock `l` once its holder lets go, yielding when the holder
 * lost its core (more threads than cores) rather than spinning. */
static void spin_wait(atomic_bool *l)
{
    for (unsigned spins = 0;; spins++) {
        while (atomic_load_explicit(l, memory_order_relaxed)) {
            if (spins++ < 128)
                cpu_relax();
            else
                sched_yield();
        }
        if (!atomic_exchange_explicit(l, true, memory_order_acquire))
            return;
    }
}

/* Takes spin lock `l`: one exchange when it is free. */
static inline void spin_lock(atomic_bool *l)
{
    if (atomic_exchange_explicit(l, true, memory_order_acquire))
        spin_wait(l);
}

static inline void spin_unlock(atomic_bool *l)
{
    atomic_store_explicit(l, false, memory_order_release);
}

/* The time to the next tick: uniform in [period / 2, 3 period / 2), the
 * period on average.  Ticks a fixed period apart lock onto a program whose
 * own period is a multiple of it, such as a loop that computes for a
 * millisecond and then sleeps to a whole millisecond: every tick then falls
 * in the same phase of the loop, and that phase takes all the samples
 * (measured: 2% of the samples running where the program's own clock said
 * 25%).  A gap drawn anew each time samples every phase alike. */
static uint64_t next_gap(uint64_t period, uint64_t *rng)
{
    *rng += 0x9e3779b97f4a7c15ull; /* splitmix64's sequence */
    return period / 2 + mix64(*rng) % period;
}

/* Ticks every deadline up to `now` not ticked yet, in order; worker
 * `skip` (0: none) is asked for none of them: its task is resuming, and
 * they fell while it waited.
 *
 * The timer thread is one thread among the workers: on a busy machine the
 * scheduler may run it only once a worker gives up its core, which is
 * when a task parks.  A tick whose deadline fell while that task ran
 * would then find it parked and count as its waiting (measured: a task
 * computing in bursts between recv calls showed a third of its running
 * samples).  So the task that parks, and the one that resumes, tick the
 * deadlines already due themselves, before their state changes.
 * Called with clock_lock taken. */
static void advance_locked(struct profiler *p, uint64_t now, uint32_t skip)
{
    uint64_t next = atomic_load_explicit(&p->next_deadline, memory_order_relaxed);
    while (next <= now) {
        timer_tick(p, atomic_fetch_add(&p->ticks, 1) + 1, skip);
        next += next_gap(p->period, &p->rng);
    }
    atomic_store_explicit(&p->next_deadline, next, memory_order_relaxed);
}

/* The timer's way to the clock's lock: it never waits for it (see
 * timer_priority). */
static bool clock_trylock(struct profiler *p)
{
    return !atomic_load_explicit(&p->clock_lock, memory_order_relaxed) &&
           !atomic_exchange_explicit(&p->clock_lock, true, memory_order_acquire);
}

/* A worker waits for the one that ticks (a few microseconds). */
static void advance_ticks(struct profiler *p, uint64_t now, uint32_t skip)
{
    spin_lock(&p->clock_lock);
    advance_locked(p, now, skip);
    spin_unlock(&p->clock_lock);
}

/* The timer asks for the lowest real-time priority where the system
 * grants it, so that a deadline finds it on a core at once rather than
 * when a worker parks; elsewhere the workers' catching up covers it.  It
 * never waits for the clock's lock: whoever holds it ticks the same
 * deadlines, and a real-time thread spinning on a lock whose holder
 * cannot run would hold the core. */
static void timer_priority(void)
{
    struct sched_param sp = {.sched_priority = sched_get_priority_min(SCHED_FIFO)};
    (void)pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
}

/* Whether a deadline has passed that no one ticked yet. */
static bool ticks_due(struct profiler *p, uint64_t *now)
{
    *now = clock_ns(CLOCK_MONOTONIC);
    return atomic_load_explicit(&p->next_deadline, memory_order_relaxed) <= *now;
}

static void *timer_main(void *arg)
{
    struct profiler *p = arg;
    /* Named from inside, so the name covers exactly this loop. */
    pthread_setname_np(pthread_self(), "jett-timer");
    timer_priority();
    uint64_t retry = 0; /* not before this: a worker held the clock's lock */
    while (!atomic_load(&p->stop)) {
        uint64_t next = p->timer_asleep
                            ? UINT64_MAX / 2
                            : atomic_load_explicit(&p->next_deadline, memory_order_relaxed);
        if (next < retry)
            next = retry;
        struct timespec ts = {(time_t)(next / 1000000000ull), (long)(next % 1000000000ull)};
        if (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0)
            continue;
        if (atomic_load(&p->stop))
            break;
        /* Deadlines missed while descheduled are ticks too.  When a worker
         * ticks them (it holds the lock), sleep a quarter period before
         * looking again: the deadline it has not moved yet is past, and a
         * real-time thread that kept waking for it could keep that worker
         * off its core. */
        uint64_t now = clock_ns(CLOCK_MONOTONIC);
        if (clock_trylock(p)) {
            advance_locked(p, now, 0);
            spin_unlock(&p->clock_lock);
            retry = 0;
        } else {
            retry = now + p->period / 4;
        }
    }
    p->timer_cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID); /* read by the join's caller */
    return NULL;
}

/* ---- memory ---- */

/* Exact totals of the contract's counters, whatever happens downstream;
 * true when the event makes a new peak of live bytes. */
static inline __attribute__((always_inline)) bool
count_heap(struct profiler_heap_totals *t, enum heap_op op, uint64_t old, uint64_t neu)
{
    if (op == HEAP_OP_ALLOCATE) {
        t->allocation_count++;
        t->allocated_bytes += neu;
        t->live_bytes += neu;
    } else if (op == HEAP_OP_RESIZE) {
        t->resize_count++;
        if (neu >= old)
            t->allocated_bytes += neu - old, t->live_bytes += neu - old;
        else
            t->freed_bytes += old - neu, t->live_bytes -= old - neu;
    } else {
        t->freed_bytes += old;
        t->live_bytes -= old;
    }
    if (t->live_bytes <= t->peak_live_bytes)
        return false;
    t->peak_live_bytes = t->live_bytes;
    return true;
}

void profiler_heap_totals(const struct profiler *p, struct profiler_heap_totals *out)
{
    *out = p->heap;
}

/* The node of leaf frame f (depth <= PROFILER_MAX_FRAMES) that has none
 * yet: when its caller has one (a frame entered since the last event,
 * the common case), one level interned from it; else stack_node.  In
 * line in an allocate's path: recursive code enters a frame at nearly
 * every allocation, and a call of its own saved and restored six
 * registers that path has saved already. */
static inline __attribute__((always_inline)) uint32_t
leaf_node(struct profiler *p, struct interp_frame *f, uint32_t depth)
{
    if (depth > 1 && f[-1].stack_node == WIRE_NONE32)
        return stack_node(p, depth, true);
    uint32_t parent = depth > 1 ? f[-1].stack_node : WIRE_NONE32;
    struct wire_span site =
        depth > 1 ? (struct wire_span){f[-1].call_start, f[-1].call_end} : WIRE_SPAN_NONE;
    uint32_t id = intern_level(p, parent, f->func_id, site, true);
    if (id != WIRE_NONE32)
        f->stack_node = id;
    return id;
}

/* leaf_node as a call, for the events that seldom come first in a frame:
 * in line there it cost a resize's path more registers than it saved. */
static __attribute__((noinline)) uint32_t leaf_node_call(struct profiler *p, struct interp_frame *f,
                                                         uint32_t depth)
{
    return leaf_node(p, f, depth);
}

/* The entry of a heap event that did not fold, with its leaf stack and
 * statement; an allocate's interns its frame's node in line. */
static inline __attribute__((always_inline)) uint32_t
event_leaf(struct profiler *p, enum heap_op op, struct wire_span *span)
{
    uint32_t leaf = WIRE_NONE32, depth = *p->depth;
    *span = WIRE_SPAN_NONE;
    if (depth > PROFILER_MAX_FRAMES) {
        leaf = stack_node(p, depth, true); /* truncated: no leaf statement */
    } else if (depth > 0) {
        /* The leaf frame's own node when it has one: the common case. */
        struct interp_frame *f = &p->frames[depth - 1];
        leaf = f->stack_node;
        if (leaf == WIRE_NONE32)
            leaf = op == HEAP_OP_ALLOCATE ? leaf_node(p, f, depth) : leaf_node_call(p, f, depth);
        if (leaf != WIRE_NONE32)
            *span = (struct wire_span){f->stmt_start, f->stmt_end};
    }
    return leaf;
}

/* The entry of an event with its leaf node and statement; `quick`: what
 * memwire_quick gave (MEMWIRE_GENERAL: the general way). */
static inline __attribute__((always_inline)) void
put_heap_entry(struct profiler *p, enum heap_op op, uint64_t id, uint64_t old, uint64_t neu,
               uint64_t seq, uint32_t leaf, struct wire_span span, unsigned quick)
{
    if (op == HEAP_OP_ALLOCATE)
        memwire_allocate(&p->mw, seq, id, neu, leaf, span, quick);
    else
        memwire_change(&p->mw, seq, id, old, neu, op == HEAP_OP_RESIZE, leaf, span, quick);
}

/* One heap event of object `o` whose run-wide id is `id`: a free may fold
 * into its allocate (memwire.h), and needs no stack then.  `hooked`: the
 * test hook may be set (the observer of a run without tasks is chosen
 * with or without it, so that its events do not test it). */
static inline __attribute__((always_inline)) void heap_event(struct profiler *p, enum heap_op op,
                                                             struct heap_obj *o, uint64_t id,
                                                             uint64_t old, uint64_t neu,
                                                             bool hooked)
{
    bool peak = count_heap(&p->heap, op, old, neu);
    if (atomic_load_explicit(p->failed, memory_order_relaxed))
        return;
    if (hooked && p->hook)
        p->hook(p->hook_ctx, p->at);
    uint64_t seq = ++p->alloc_seq;
    if (op == HEAP_OP_FREE && memwire_fold(&p->mw, id, seq))
        return; /* a free never makes a peak */
    struct wire_span span;
    uint32_t leaf = event_leaf(p, op, &span);
    if (op == HEAP_OP_ALLOCATE)
        o->site = leaf == WIRE_NONE32 ? HEAP_SITE_NONE : leaf; /* for the retained walk */
    put_heap_entry(p, op, id, old, neu, seq, leaf, span, MEMWIRE_GENERAL);
    memwire_settle(&p->mw, peak);
}

/* heap_event in the common case of a run without tasks, where nothing it
 * does calls out (but the publish of a new peak, its last step): the
 * leaf frame has its node, and the entry takes the short way
 * (memwire_quick).  A free that folds needs neither.  False, with
 * nothing changed, otherwise.  Without a call the path keeps what it
 * needs in the registers a call would clobber, and saves none. */
static inline __attribute__((always_inline)) bool heap_event_quick(struct profiler *p,
                                                                   enum heap_op op,
                                                                   struct heap_obj *o, uint64_t old,
                                                                   uint64_t neu)
{
    if (atomic_load_explicit(p->failed, memory_order_relaxed))
        return false;
    uint64_t id = o->id, seq = p->alloc_seq + 1;
    if (op == HEAP_OP_FREE && memwire_fold(&p->mw, id, seq)) {
        count_heap(&p->heap, op, old, neu); /* a free never makes a peak */
        p->alloc_seq = seq;
        return true;
    }
    uint32_t depth = *p->depth;
    if (depth - 1u >= PROFILER_MAX_FRAMES) /* none, or truncated */
        return false;
    const struct interp_frame *f = &p->frames[depth - 1];
    uint32_t leaf = f->stack_node;
    struct wire_span span = {f->stmt_start, f->stmt_end};
    unsigned site = leaf == WIRE_NONE32 ? MEMWIRE_GENERAL : memwire_quick(&p->mw, leaf, span);
    if (site == MEMWIRE_GENERAL)
        return false;
    p->alloc_seq = seq;
    if (op == HEAP_OP_ALLOCATE)
        o->site = leaf; /* for the retained walk */
    put_heap_entry(p, op, id, old, neu, seq, leaf, span, site);
    /* the totals last: their peak is not kept across the entry's writing */
    memwire_settle(&p->mw, count_heap(&p->heap, op, old, neu));
    return true;
}

/* The observer of a run without tasks: a copy of the per-event path for
 * each operation, its short way in line and the general one a call.
 * One copy for all three saved and restored the registers of the
 * longest at every event, a fold's free too, and tested the operation
 * at each step: a sixth of its instructions. */
static __attribute__((noinline)) void heap_allocate_event(void *ctx, struct heap_obj *o,
                                                          uint64_t neu)
{
    heap_event(ctx, HEAP_OP_ALLOCATE, o, o->id, 0, neu, false);
}

static __attribute__((noinline)) void heap_resize_event(void *ctx, struct heap_obj *o, uint64_t old,
                                                        uint64_t neu)
{
    heap_event(ctx, HEAP_OP_RESIZE, o, o->id, old, neu, false);
}

static __attribute__((noinline)) void heap_free_event(void *ctx, struct heap_obj *o, uint64_t old)
{
    heap_event(ctx, HEAP_OP_FREE, o, o->id, old, 0, false);
}

static void on_heap_allocate(void *ctx, struct heap_obj *o, uint64_t neu)
{
    if (!heap_event_quick(ctx, HEAP_OP_ALLOCATE, o, 0, neu))
        heap_allocate_event(ctx, o, neu);
}

static void on_heap_resize(void *ctx, struct heap_obj *o, uint64_t old, uint64_t neu)
{
    if (!heap_event_quick(ctx, HEAP_OP_RESIZE, o, old, neu))
        heap_resize_event(ctx, o, old, neu);
}

static void on_heap_free(void *ctx, struct heap_obj *o, uint64_t old)
{
    if (!heap_event_quick(ctx, HEAP_OP_FREE, o, old, 0))
        heap_free_event(ctx, o, old);
}

static const struct heap_observer plain_heap_observer = {on_heap_allocate, on_heap_resize,
                                                         on_heap_free};

/* The same with the test hook. */
static void on_hooked_heap_event(void *ctx, enum heap_op op, struct heap_obj *o, uint64_t old,
                                 uint64_t neu)
{
    heap_event(ctx, op, o, o->id, old, neu, true);
}

HEAP_OBSERVER_OF(hooked_heap_observer, on_hooked_heap_event);

/* ---- tasks ---- */

/* The lock that makes the workers' events one stream (the ring has one
 * producer at a time, and sequences and allocation ids are given in the
 * ring's order).  A spin lock: taken for a few hundred nanoseconds, it
 * costs one exchange and a store, where a mutex's unlock is a second
 * atomic operation on every heap event; a waiter whose holder lost its
 * core (more workers than cores) yields rather than spin.  One worker
 * needs none: every event of a run with tasks comes from a worker (the
 * timer only sets bits, and nothing is recorded once the workers ended). */
static inline void plock(struct profiler *p)
{
    if (p->n_workers > 1)
        spin_lock(&p->lock);
}

static inline void punlock(struct profiler *p)
{
    if (p->n_workers > 1)
        spin_unlock(&p->lock);
}

/* What the events of `s` carry of its task and thread. */
static struct wire_exec exec_of(const struct interp_state *s)
{
    uint32_t task = interp_task_number(s);
    return (struct wire_exec){task ? task : WIRE_NONE32, WIRE_NONE32, interp_thread_id(s)};
}

/* Makes `s` the state whose events are recorded, under the lock. */
static void set_state(struct profiler *p, struct interp_state *s)
{
    p->at = s;
    p->frames = interp_frames(s);
    p->depth = interp_depth_at(s);
    p->exec = exec_of(s);
    if (p->mode == WIRE_MODE_MEMORY)
        memwire_set_exec(&p->mw, p->exec);
}

static void attach(struct profiler *p, struct interp_state *s)
{
    plock(p);
    set_state(p, s);
}

static void detach(struct profiler *p)
{
    punlock(p);
}

/* ---- several workers' heap events (memblock.h) ---- */

/* Appends a worker's block to the stream, under the lock: sequences,
 * ids, counts and folds as for one thread's events. */
static void events_flush(struct profiler *p, struct worker_events *w)
{
    struct memblock *b = &w->block;
    if (w == own_events)
        own_state = NULL; /* the next event reads its state's context again */
    if (b->n == 0)
        return;
    plock(p);
    p->exec = b->exec;
    memwire_set_exec(&p->mw, b->exec);
    for (uint32_t i = 0; i < b->n; i++) {
        struct memblock_event *e = &b->ev[i];
        enum heap_op op = (enum heap_op)e->op;
        uint64_t id, old = 0;
        if (op == HEAP_OP_ALLOCATE)
            memblock_set_run_id(e, id = ++p->next_id);
        else
            id = memblock_run_id(b, e), old = e->old_size;
        bool peak = count_heap(&p->heap, op, old, e->new_size);
        if (atomic_load_explicit(p->failed, memory_order_relaxed))
            continue;
        uint64_t seq = ++p->alloc_seq;
        if (op == HEAP_OP_FREE && memwire_fold(&p->mw, id, seq))
            continue;
        put_heap_entry(p, op, id, old, e->new_size, seq, e->leaf, e->span, MEMWIRE_GENERAL);
        memwire_settle(&p->mw, peak);
    }
    punlock(p);
    b->n = 0;
}

/* The calling worker's block appended (a task gives the worker up, sends,
 * spawns or ends; the worker dropped what an ended task left). */
static void flush_own(struct profiler *p)
{
    if (own_events)
        events_flush(p, own_events);
}

/* A heap event on a worker: into its block, with its leaf node and
 * statement as they are now. */
static void block_heap_event(struct worker_events *w, struct interp_state *s, enum heap_op op,
                             struct heap_obj *o, uint64_t old, uint64_t neu)
{
    struct memblock *b = &w->block;
    if (own_state != s || b->n == MEMBLOCK_EVENTS) {
        /* may give the object of a resize or free its id */
        events_flush(interp_heap_observer_ctx(s), w);
        own_state = s, own_frames = interp_frames(s), own_depth = interp_depth_at(s);
        b->exec = exec_of(s);
    }
    uint32_t leaf = WIRE_NONE32, depth = *own_depth;
    struct wire_span span = WIRE_SPAN_NONE;
    struct interp_frame *f = depth ? &own_frames[depth - 1] : NULL;
    if (f && depth <= PROFILER_MAX_FRAMES && f->stack_node != WIRE_NONE32) {
        leaf = f->stack_node;
        span = (struct wire_span){f->stmt_start, f->stmt_end};
    } else if (f) { /* nodes to intern: the stack table is the run's */
        struct profiler *p = interp_heap_observer_ctx(s);
        attach(p, s);
        leaf = event_leaf(p, op, &span);
        detach(p);
    }
    if (op == HEAP_OP_ALLOCATE)
        o->site = leaf == WIRE_NONE32 ? HEAP_SITE_NONE : leaf; /* for the retained walk */
    memblock_add(b, op, o, old, neu, leaf, span);
}

/* A worker's acknowledgment at a safe point of the task it runs (or of
 * its own work between tasks): that worker's pending request becomes a
 * jett or runtime sample of the task. */
static void on_task_safe_point(void *ctx, struct interp_state *s)
{
    struct profiler *p = ctx;
    uint32_t k = interp_thread_id(s);
    if (k == 0 || k > p->n_workers || !atomic_load(&p->workers[k].pending))
        return;
    attach(p, s);
    record_tick(p, WIRE_STATE_JETT, atomic_load(&p->workers[k].tick));
    atomic_store(&p->workers[k].pending, false);
    detach(p);
}

/* One period: each worker that runs a task is asked for a sample, or the
 * tick is coalesced when its last request is still pending.  Tasks that
 * wait count their periods themselves (on_task_resume). */
static void timer_tick_tasks(struct profiler *p, uint64_t tick, uint32_t skip)
{
    for (uint32_t k = 1; k <= p->n_workers; k++) {
        struct profiler_worker *w = &p->workers[k];
        if (k == skip || !atomic_load(&w->registered) || !interp_worker_busy(p->s, k))
            continue;
        atomic_fetch_add(&p->requested, 1);
        if (atomic_exchange(&w->pending, true)) {
            atomic_fetch_add(&p->coalesced, 1);
            continue;
        }
        atomic_store(&w->tick, tick);
        interp_worker_request(p->s, k);
    }
}

static void on_worker(void *ctx, uint32_t index)
{
    struct profiler *p = ctx;
    if (index < 1 || index > p->n_workers)
        return;
    atomic_store(&p->workers[index].registered, true);
    if (p->events)
        own_events = &p->events[index], own_state = NULL;
}

/* Memory mode: the worker's events go into the stream before another
 * thread may see what they did. */
static void on_task_publish(void *ctx, struct interp_state *s)
{
    struct profiler *p = ctx;
    (void)s;
    flush_own(p);
    if (p->n_workers == 1)
        p->at = NULL; /* the state may change its task, thread or address */
}

/* A task parks (or, spawned, waits for a worker from now).  The deadlines
 * that fell while it ran are ticked first, so that its request is one of
 * them; a request still pending is its sample, at the call where it
 * parks, which is its last safe point. */
static void on_task_suspend(void *ctx, struct interp_state *s)
{
    struct profiler *p = ctx;
    uint32_t k = interp_thread_id(s);
    if (k >= 1 && k <= p->n_workers && interp_worker_runs(p->s, k, s)) {
        uint64_t now;
        if (ticks_due(p, &now))
            advance_ticks(p, now, 0);
        if (atomic_load(&p->workers[k].pending)) {
            interp_worker_take_sample(p->s, k);
            on_task_safe_point(p, s);
        }
    }
    uint64_t *mark = interp_task_mark(s);
    if (mark)
        *mark = atomic_load(&p->ticks);
}

/* A task runs again: one waiting sample per period it spent blocked or
 * waiting for a worker, at the call where it blocked (its stack as it
 * stands), recorded now. */
static void on_task_resume(void *ctx, struct interp_state *s)
{
    struct profiler *p = ctx;
    uint64_t *mark = interp_task_mark(s), at;
    if (mark && ticks_due(p, &at)) /* they fell while it waited */
        advance_ticks(p, at, interp_thread_id(s));
    uint64_t now = atomic_load(&p->ticks);
    if (!mark || now <= *mark)
        return;
    uint64_t n = now - *mark;
    atomic_fetch_add(&p->requested, n);
    attach(p, s);
    for (uint64_t i = 1; i <= n; i++)
        record_tick(p, WIRE_STATE_WAITING, *mark + i);
    detach(p);
}

/* The TASK entry of a task, before any event of it: never dropped. */
static void on_spawned(void *ctx, struct interp_state *s, uint32_t number, uint32_t fn,
                       struct interp_span site)
{
    struct profiler *p = ctx;
    uint32_t depth = s ? interp_stack_depth(s) : 0;
    struct wire_task t = {number, fn,
                          depth ? interp_stack_frame(s, depth - 1).func_id : WIRE_NONE32,
                          depth ? (struct wire_span){site.start, site.end} : WIRE_SPAN_NONE};
    uint8_t e[WIRE_TASK_SIZE];
    size_t len = wire_put_task(e, &t);
    flush_own(p); /* the spawner's events, its copies of the arguments among them */
    plock(p);
    if (p->mode == WIRE_MODE_MEMORY)
        memwire_put_entry(&p->mw, e, len); /* after the heap events it holds */
    else
        collector_put(p->c, e, len, true);
    punlock(p);
}

/* A heap event of a task (ctx is its state) with several workers: into
 * the worker's block, or (with the test hook) under the lock, where the
 * run's next allocation id is given, so that ids and sequences increase
 * in the stream's order. */
static void on_task_heap_event(void *ctx, enum heap_op op, struct heap_obj *o, uint64_t old,
                               uint64_t neu)
{
    struct interp_state *s = ctx;
    if (own_events) {
        block_heap_event(own_events, s, op, o, old, neu);
        return;
    }
    struct profiler *p = interp_heap_observer_ctx(s);
    plock(p);
    set_state(p, s);
    if (op == HEAP_OP_ALLOCATE)
        o->id = ++p->next_id;
    heap_event(p, op, o, o->id, old, neu, true);
    punlock(p);
}

HEAP_OBSERVER_OF(task_heap_observer, on_task_heap_event);

/* A heap event of a task with one worker, which needs no lock: the state
 * is read again only after a task switch, a spawn, a send or an end
 * (on_task_publish), where its context may change. */
static void on_solo_heap_event(void *ctx, enum heap_op op, struct heap_obj *o, uint64_t old,
                               uint64_t neu)
{
    struct interp_state *s = ctx;
    struct profiler *p = interp_heap_observer_ctx(s);
    if (p->at != s)
        set_state(p, s);
    if (op == HEAP_OP_ALLOCATE)
        o->id = ++p->next_id;
    heap_event(p, op, o, o->id, old, neu, true);
}

HEAP_OBSERVER_OF(solo_heap_observer, on_solo_heap_event);

static int profiler_start_tasks(struct profiler *p)
{
    struct interp_task_hooks h = {on_worker, on_spawned, NULL, NULL, NULL};
    if (p->mode == WIRE_MODE_MEMORY) {
        /* Blocks with several workers; the test hook wants each event as
         * it happens. */
        if (p->n_workers > 1 && !p->hook) {
            p->events = calloc(p->n_workers + 1, sizeof *p->events);
            if (!p->events)
                return -1;
        }
        h.suspend = h.publish = on_task_publish;
        p->at = NULL; /* no state read yet */
        interp_set_task_hooks(p->s, &h, p);
        interp_set_task_heap_observer(
            p->s, p->n_workers > 1 ? &task_heap_observer : &solo_heap_observer, p);
        return 0;
    }
    h.suspend = on_task_suspend;
    h.resume = on_task_resume;
    interp_set_task_hooks(p->s, &h, p);
    interp_set_sampler(p->s, on_task_safe_point, p);
    return 0;
}

/* ---- lifecycle ---- */

void profiler_set_event_hook(struct profiler *p, profiler_event_hook fn, void *ctx)
{
    p->hook = fn, p->hook_ctx = ctx;
}

void profiler_set_folds(struct profiler *p, bool on)
{
    p->mw.fold = on;
}

void profiler_set_timer_asleep(struct profiler *p, bool asleep)
{
    p->timer_asleep = asleep;
}

uint64_t profiler_folds(const struct profiler *p)
{
    return p->mw.folds;
}

int profiler_start(struct profiler *p)
{
    /* Frames entered before now may hold another table's nodes. */
    for (uint32_t i = 0; i < interp_stack_depth(p->s); i++)
        interp_set_stack_node(p->s, i, INTERP_NODE_UNKNOWN);
    p->wall_start = clock_ns(CLOCK_MONOTONIC);
    p->cpu_start = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    if (p->mode == WIRE_MODE_MEMORY)
        memwire_set_exec(&p->mw, p->exec); /* thread 0 until a worker attaches */
    if (p->tasks) {
        if (profiler_start_tasks(p) != 0)
            return -1;
    } else if (p->mode == WIRE_MODE_MEMORY)
        interp_set_heap_observer(p->s, p->hook ? &hooked_heap_observer : &plain_heap_observer, p);
    else
        interp_set_sampler(p->s, on_safe_point, p);
    if (p->mode == WIRE_MODE_MEMORY)
        return 0;
    if (interp_count_calls(p->s) != 0)
        return -1;
    p->period = 1000000000ull / p->rate_hz;
    p->rng = clock_ns(CLOCK_MONOTONIC);
    atomic_store(&p->next_deadline, p->rng + next_gap(p->period, &p->rng));
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = timer_wake;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGRTMIN, &sa, NULL);
    if (pthread_create(&p->timer, NULL, timer_main, p) != 0)
        return -1;
    p->timer_started = true;
    return 0;
}

void profiler_stop(struct profiler *p, struct wire_finish *fin)
{
    if (p->timer_started) {
        atomic_store(&p->stop, true);
        /* A wake-up sent just before the timer went back to sleep is
         * lost, so keep waking it until it has ended. */
        while (pthread_tryjoin_np(p->timer, NULL) == EBUSY) {
            pthread_kill(p->timer, SIGRTMIN);
            struct timespec nap = {0, 100000};
            nanosleep(&nap, NULL);
        }
        p->timer_started = false;
    }
    /* the runtime's threads have ended: what they held is the writer's */
    for (uint32_t k = 1; p->events && k <= p->n_workers; k++)
        events_flush(p, &p->events[k]);
    if (p->mode == WIRE_MODE_MEMORY)
        memwire_publish(&p->mw);
    fin->wall_ns = clock_ns(CLOCK_MONOTONIC) - p->wall_start;
    fin->cpu_ns = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - p->cpu_start;
    if (p->mode == WIRE_MODE_CPU) {
        /* A request still pending at the end was never recorded. */
        uint64_t left = atomic_load(&p->waiting) + (atomic_load(&p->pending) ? 1 : 0);
        for (uint32_t k = 1; p->tasks && k <= p->n_workers; k++)
            left += atomic_load(&p->workers[k].pending);
        fin->requested_ticks = p->tasks ? atomic_load(&p->requested) : atomic_load(&p->ticks);
        fin->coalesced_ticks = atomic_load(&p->coalesced);
        fin->dropped_ticks = p->dropped + left;
    }
    fin->stack_limit = p->stack_limit;
}

/* Call sites by function, start and end: the record's order. */
static int site_order(const void *x, const void *y)
{
    const struct wire_site_calls *a = x, *b = y;
    if (a->func_id != b->func_id)
        return a->func_id < b->func_id ? -1 : 1;
    if (a->site.start != b->site.start)
        return a->site.start < b->site.start ? -1 : 1;
    return (a->site.end > b->site.end) - (a->site.end < b->site.end);
}

int profiler_calls(struct profiler *p, const struct wire_fn_calls **fn, uint32_t *n,
                   const struct wire_site_calls **site, uint32_t *m)
{
    const struct interp_program *prog = interp_state_program(p->s);
    const uint64_t *fc = interp_fn_calls(p->s), *sc = interp_site_calls(p->s);
    uint32_t n_fns = interp_func_count(prog), n_sites = interp_call_site_count(prog);
    *n = *m = 0;
    *fn = p->fn_calls, *site = p->site_calls;
    if (!fc || !sc)
        return 0;
    free(p->fn_calls), free(p->site_calls);
    p->fn_calls = malloc(((size_t)n_fns + 1) * sizeof *p->fn_calls);
    p->site_calls = malloc(((size_t)n_sites + 1) * sizeof *p->site_calls);
    if (!p->fn_calls || !p->site_calls)
        return -1;
    for (uint32_t i = 0; i < n_fns; i++)
        if (fc[i])
            p->fn_calls[(*n)++] = (struct wire_fn_calls){i, fc[i]};
    for (uint32_t i = 0; i < n_sites; i++) {
        const struct interp_call_site *cs = interp_call_site_get(prog, i);
        if (sc[i])
            p->site_calls[(*m)++] =
                (struct wire_site_calls){cs->func_id, {cs->span.start, cs->span.end}, sc[i]};
    }
    qsort(p->site_calls, *m, sizeof *p->site_calls, site_order);
    *fn = p->fn_calls, *site = p->site_calls;
    return 0;
}

uint64_t profiler_timer_cpu_ns(const struct profiler *p)
{
    return p->timer_cpu_ns;
}

const struct stacktab *profiler_stack_table(const struct profiler *p)
{
    return &p->tab;
}
