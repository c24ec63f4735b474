/* profiler: timer thread, safe-point sampler, heap observer, stacks. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>

#include "agent/profiler.h"
#include "agent/stacktab.h"

#define PROFILER_MAX_FRAMES WIRE_MAX_STACK_DEPTH

struct profiler {
    struct collector *c;
    struct interp_state *s;
    uint8_t mode;
    uint32_t rate_hz, trunc_func;
    /* Timer -> runtime thread. */
    _Atomic uint64_t ticks;     /* requested ticks so far */
    _Atomic uint64_t coalesced; /* ticks that found the pending bit set */
    _Atomic uint64_t waiting;   /* waiting ticks not yet recorded */
    atomic_bool pending;
    _Atomic uint64_t pending_tick;
    atomic_bool stop;
    pthread_t timer;
    bool timer_started;
    /* Runtime thread only. */
    uint64_t dropped, sample_seq, alloc_seq, last_tick;
    bool stack_limit;
    struct stacktab tab;
    uint32_t path_func[PROFILER_MAX_FRAMES]; /* the last stack interned, as a cache */
    struct wire_span path_site[PROFILER_MAX_FRAMES];
    uint32_t path_node[PROFILER_MAX_FRAMES];
    uint32_t path_len;
    uint64_t wall_start, cpu_start;
    /* Memory mode: the leaf node of the stack last interned, valid while
     * the interpreter's stack generation is unchanged. */
    uint64_t leaf_gen;
    uint32_t leaf_node;
    bool leaf_valid;
    struct profiler_heap_totals heap;
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
    stacktab_init(&p->tab, stack_budget);
    return p;
}

void profiler_free(struct profiler *p)
{
    if (!p)
        return;
    stacktab_destroy(&p->tab);
    free(p);
}

/* ---- stacks ---- */

/* The frames a sample records: at most 128, the deepest replaced by
 * <truncated-stack> when the real stack is deeper. */
struct captured {
    uint32_t n;
    uint32_t func[PROFILER_MAX_FRAMES];
    struct wire_span site[PROFILER_MAX_FRAMES];
    struct wire_span leaf;
};

static void capture(struct profiler *p, struct captured *cap)
{
    uint32_t depth = interp_stack_depth(p->s);
    bool truncated = depth > PROFILER_MAX_FRAMES;
    cap->n = truncated ? PROFILER_MAX_FRAMES : depth;
    uint32_t real = truncated ? PROFILER_MAX_FRAMES - 1 : depth;
    struct wire_span prev = WIRE_SPAN_NONE;
    for (uint32_t i = 0; i < real; i++) {
        struct interp_frame_info f = interp_stack_frame(p->s, i);
        cap->func[i] = f.func_id;
        cap->site[i] = prev; /* the call in the parent that made this frame */
        prev = (struct wire_span){f.span.start, f.span.end};
    }
    cap->leaf = truncated ? WIRE_SPAN_NONE : prev;
    if (truncated) {
        cap->func[real] = p->trunc_func;
        cap->site[real] = WIRE_SPAN_NONE;
    }
}

/* How many leading levels match the cached path. */
static uint32_t cached_prefix(const struct profiler *p, const struct captured *cap)
{
    uint32_t i = 0;
    while (i < cap->n && i < p->path_len && p->path_func[i] == cap->func[i] &&
           p->path_site[i].start == cap->site[i].start && p->path_site[i].end == cap->site[i].end)
        i++;
    return i;
}

/* Nodes the stack would add to the table (for the CPU space check). */
static uint32_t missing_nodes(const struct profiler *p, const struct captured *cap, uint32_t from)
{
    uint32_t parent = from ? p->path_node[from - 1] : WIRE_NONE32;
    for (uint32_t i = from; i < cap->n; i++) {
        uint32_t id = stacktab_find(&p->tab, parent, cap->func[i], cap->site[i]);
        if (id == WIRE_NONE32)
            return cap->n - i;
        parent = id;
    }
    return 0;
}

/* Interns the stack, appending a STACK entry per new node; the leaf node,
 * or WIRE_NONE32 when the table is full. */
static uint32_t intern(struct profiler *p, const struct captured *cap, uint32_t from, bool wait)
{
    uint32_t parent = from ? p->path_node[from - 1] : WIRE_NONE32;
    for (uint32_t i = from; i < cap->n; i++) {
        uint32_t id = stacktab_find(&p->tab, parent, cap->func[i], cap->site[i]);
        if (id == WIRE_NONE32) {
            id = stacktab_add(&p->tab, parent, cap->func[i], cap->site[i]);
            if (id == WIRE_NONE32) {
                p->stack_limit = true;
                p->path_len = i;
                return WIRE_NONE32;
            }
            uint8_t e[WIRE_STACK_SIZE];
            struct wire_stack st = {id, parent, cap->func[i], cap->site[i]};
            collector_put(p->c, e, wire_put_stack(e, &st), wait);
        }
        p->path_func[i] = cap->func[i], p->path_site[i] = cap->site[i], p->path_node[i] = id;
        parent = id;
    }
    p->path_len = cap->n;
    return cap->n ? parent : WIRE_NONE32;
}

/* ---- CPU ---- */

static void put_sample(struct profiler *p, uint8_t state, uint32_t stack, struct wire_span span,
                       uint64_t tick)
{
    if (tick < p->last_tick)
        tick = p->last_tick;
    p->last_tick = tick;
    struct wire_sample sm = {++p->sample_seq, tick,  {WIRE_NONE32, WIRE_NONE32, 0},
                             state,           stack, stack == WIRE_NONE32 ? WIRE_SPAN_NONE : span};
    uint8_t e[WIRE_SAMPLE_SIZE];
    if (!collector_put(p->c, e, wire_put_sample(e, &sm), false))
        p->dropped++;
}

/* Records one tick's sample in `state` (jett or waiting), or drops it when
 * the ring lacks room for it and its new stack nodes. */
static void record_tick(struct profiler *p, uint8_t state, uint64_t tick)
{
    struct captured cap;
    capture(p, &cap);
    if (cap.n == 0) {
        put_sample(p, state == WIRE_STATE_WAITING ? state : WIRE_STATE_RUNTIME, WIRE_NONE32,
                   WIRE_SPAN_NONE, tick);
        return;
    }
    uint32_t from = cached_prefix(p, &cap);
    size_t need = (size_t)missing_nodes(p, &cap, from) * WIRE_STACK_SIZE + WIRE_SAMPLE_SIZE;
    if (!collector_reserve(p->c, need)) {
        p->dropped++;
        return;
    }
    uint32_t leaf = intern(p, &cap, from, false);
    if (leaf == WIRE_NONE32) /* the stack table is full: the stack is lost */
        put_sample(p, WIRE_STATE_UNAVAILABLE, WIRE_NONE32, WIRE_SPAN_NONE, tick);
    else
        put_sample(p, state, leaf, cap.leaf, tick);
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

/* One tick: no allocation, no lock, no system call. */
static void timer_tick(struct profiler *p, uint64_t tick)
{
    if (interp_is_blocked(p->s)) {
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

static void *timer_main(void *arg)
{
    struct profiler *p = arg;
    /* Named from inside, so the name covers exactly this loop. */
    pthread_setname_np(pthread_self(), "jett-timer");
    uint64_t period = 1000000000ull / p->rate_hz;
    uint64_t next = clock_ns(CLOCK_MONOTONIC) + period;
    while (!atomic_load(&p->stop)) {
        struct timespec ts = {(time_t)(next / 1000000000ull), (long)(next % 1000000000ull)};
        if (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0)
            continue;
        if (atomic_load(&p->stop))
            break;
        /* Deadlines missed while descheduled are ticks too. */
        uint64_t now = clock_ns(CLOCK_MONOTONIC);
        while (next <= now) {
            timer_tick(p, atomic_fetch_add(&p->ticks, 1) + 1);
            next += period;
        }
    }
    return NULL;
}

/* ---- memory ---- */

/* Exact totals of the contract's counters, whatever happens downstream. */
static void count_heap(struct profiler_heap_totals *t, const struct heap_event *ev)
{
    if (ev->op == HEAP_OP_ALLOCATE) {
        t->allocation_count++;
        t->allocated_bytes += ev->new_size;
        t->live_bytes += ev->new_size;
    } else if (ev->op == HEAP_OP_RESIZE) {
        t->resize_count++;
        if (ev->new_size >= ev->old_size)
            t->allocated_bytes += ev->new_size - ev->old_size,
                t->live_bytes += ev->new_size - ev->old_size;
        else
            t->freed_bytes += ev->old_size - ev->new_size,
                t->live_bytes -= ev->old_size - ev->new_size;
    } else {
        t->freed_bytes += ev->old_size;
        t->live_bytes -= ev->old_size;
    }
    if (t->live_bytes > t->peak_live_bytes)
        t->peak_live_bytes = t->live_bytes;
}

void profiler_heap_totals(const struct profiler *p, struct profiler_heap_totals *out)
{
    *out = p->heap;
}

static void on_heap_event(void *ctx, const struct heap_event *ev)
{
    struct profiler *p = ctx;
    count_heap(&p->heap, ev);
    if (collector_failed(p->c))
        return;
    uint32_t leaf = WIRE_NONE32;
    struct wire_span span = WIRE_SPAN_NONE;
    uint64_t gen = interp_stack_generation(p->s);
    uint32_t depth = interp_stack_depth(p->s);
    if (p->leaf_valid && gen == p->leaf_gen) {
        /* Same frames and call sites: only the leaf statement moved. */
        leaf = p->leaf_node;
        if (leaf != WIRE_NONE32 && depth > 0 && depth <= PROFILER_MAX_FRAMES) {
            struct interp_span sp = interp_stack_frame(p->s, depth - 1).span;
            span = (struct wire_span){sp.start, sp.end};
        }
    } else {
        struct captured cap;
        capture(p, &cap);
        if (cap.n > 0)
            leaf = intern(p, &cap, cached_prefix(p, &cap), true);
        span = cap.leaf;
        p->leaf_gen = gen, p->leaf_node = leaf, p->leaf_valid = true;
    }
    static const uint8_t ops[] = {[HEAP_OP_ALLOCATE] = WIRE_OP_ALLOCATE,
                                  [HEAP_OP_RESIZE] = WIRE_OP_RESIZE,
                                  [HEAP_OP_FREE] = WIRE_OP_FREE};
    struct wire_alloc a = {++p->alloc_seq,
                           ops[ev->op],
                           ev->id,
                           ev->op == HEAP_OP_ALLOCATE ? WIRE_NONE64 : ev->old_size,
                           ev->op == HEAP_OP_FREE ? WIRE_NONE64 : ev->new_size,
                           {WIRE_NONE32, WIRE_NONE32, 0},
                           leaf,
                           leaf == WIRE_NONE32 ? WIRE_SPAN_NONE : span};
    uint8_t e[WIRE_ALLOC_SIZE];
    collector_put(p->c, e, wire_put_alloc(e, &a), true);
}

/* ---- lifecycle ---- */

int profiler_start(struct profiler *p)
{
    p->wall_start = clock_ns(CLOCK_MONOTONIC);
    p->cpu_start = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    if (p->mode == WIRE_MODE_MEMORY) {
        interp_set_heap_observer(p->s, on_heap_event, p);
        return 0;
    }
    interp_set_sampler(p->s, on_safe_point, p);
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
    fin->wall_ns = clock_ns(CLOCK_MONOTONIC) - p->wall_start;
    fin->cpu_ns = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - p->cpu_start;
    if (p->mode == WIRE_MODE_CPU) {
        /* A request still pending at the end was never recorded. */
        uint64_t left = atomic_load(&p->waiting) + (atomic_load(&p->pending) ? 1 : 0);
        fin->requested_ticks = atomic_load(&p->ticks);
        fin->coalesced_ticks = atomic_load(&p->coalesced);
        fin->dropped_ticks = p->dropped + left;
    }
    fin->stack_limit = p->stack_limit;
}
