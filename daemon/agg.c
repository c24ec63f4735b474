/* agg: the aggregation's lifecycle, HELLO/FINISH checks and status. */
#include <stdlib.h>
#include <string.h>

#include "daemon/agg-internal.h"

struct agg *agg_new(void)
{
    struct agg *a = calloc(1, sizeof *a);
    if (a == NULL)
        return NULL;
    a->sources.elem = sizeof(struct agg_source);
    a->strings.elem = 1;
    a->idents.elem = sizeof(struct agg_ident);
    a->funcs.elem = sizeof(uint32_t);
    a->nodes.elem = sizeof(struct agg_node);
    a->chains.elem = sizeof(struct agg_chain);
    a->cfg = (struct wire_config){
        1000, 500, 10, AGG_CPU_BUDGET_MAX, AGG_RETENTION_BUDGET_MAX, AGG_STACK_BUDGET_MAX};
    a->mem.line_head = AGG_NONE;
    a->mem.warm_bytes = AGG_MEM_WARM_BYTES;
    for (size_t i = 0; i < AGG_LINE_SEEN; i++)
        a->mem.line_seen[i].key = agg_line_key(AGG_NONE, 0);
    a->wait_head = a->wait_chain_head = a->call_head = AGG_NONE;
    a->retained.head = a->retained.tail = AGG_NONE;
    return a;
}

void agg_free(struct agg *a)
{
    if (a == NULL)
        return;
    agg_tables_free(a);
    agg_cpu_free(a);
    agg_mem_free(a);
    agg_tasks_free(a);
    costrun_free(a->self_lines);
    costrun_free(a->node_lines);
    free(a->node_below);
    free(a->node_self_below);
    free(a->backend);
    free(a);
}

/* A budget must be 1..max; a larger one is refused (the daemon's maximum
 * applies), as is zero. */
static uint64_t budget_ok(struct agg *a, const char *name, uint64_t v, uint64_t max)
{
    if (v >= 1 && v <= max)
        return v;
    agg_errorf(a, "HELLO.config.%s: %llu outside 1..%llu", name, (unsigned long long)v,
               (unsigned long long)max);
    return max;
}

/* Validates the configuration; bad values fall back to the defaults. */
static void hello_config(struct agg *a, const struct wire_config *c)
{
    a->cfg = *c;
    bool cpu = a->mode == WIRE_MODE_CPU;
    if (cpu ? (c->rate_hz < 1 || c->rate_hz > 1000) : c->rate_hz != 0) {
        agg_errorf(a, "HELLO.config.rate_hz: %u out of range", c->rate_hz);
        a->cfg.rate_hz = cpu ? 1000 : 0;
    }
    if (c->threshold_bp > 10000) {
        agg_errorf(a, "HELLO.config.threshold_bp: %u over 10000", c->threshold_bp);
        a->cfg.threshold_bp = 500;
    }
    if (c->limit < 1 || c->limit > 100) {
        agg_errorf(a, "HELLO.config.limit: %u outside 1..100", c->limit);
        a->cfg.limit = 10;
    }
    a->cfg.cpu_budget = budget_ok(a, "cpu_budget", c->cpu_budget, AGG_CPU_BUDGET_MAX);
    a->cfg.retention_budget =
        budget_ok(a, "retention_budget", c->retention_budget, AGG_RETENTION_BUDGET_MAX);
    a->cfg.stack_budget = budget_ok(a, "stack_budget", c->stack_budget, AGG_STACK_BUDGET_MAX);
    agg_mem_start(a);
}

int agg_hello(struct agg *a, const struct wire_hello *h)
{
    uint64_t before = a->errors;
    if (a->have_hello) {
        agg_errorf(a, "HELLO: repeated");
        return -1;
    }
    a->have_hello = true;
    if (h->version < WIRE_PROTOCOL_MIN_VERSION || h->version > WIRE_PROTOCOL_VERSION)
        agg_errorf(a, "HELLO.version: %u, expected %d to %d", h->version, WIRE_PROTOCOL_MIN_VERSION,
                   WIRE_PROTOCOL_VERSION);
    a->mode = h->mode;
    if (h->mode > WIRE_MODE_MEMORY) {
        agg_errorf(a, "HELLO.mode: %u out of range", h->mode);
        a->mode = WIRE_MODE_CPU;
    }
    hello_config(a, &h->config);
    uint32_t n = h->backend.len > WIRE_MAX_NAME ? 0 : h->backend.len;
    if (n == 0 || memchr(h->backend.ptr, '\0', n))
        agg_errorf(a, "HELLO.backend: empty, oversize or NUL-bearing");
    a->backend = strndup(n && !memchr(h->backend.ptr, '\0', n) ? h->backend.ptr : "unavailable",
                         n && !memchr(h->backend.ptr, '\0', n) ? n : 11);
    a->capabilities = h->capabilities & WIRE_CAP_ALL;
    a->colour = h->colour;
    agg_tasks_hello(a);
    unsigned n_values = a->mode == WIRE_MODE_CPU && !a->keep_waiting ? 1 : 2;
    if (a->detail && !a->node_lines_only && !(a->self_lines = costrun_new(n_values)))
        agg_errorf(a, "HELLO: out of memory");
    if (a->keep_node_lines && !(a->node_lines = costrun_new_dense(n_values)))
        agg_errorf(a, "HELLO: out of memory");
    return a->errors > before ? -1 : 0;
}

/* Between HELLO and FINISH, before the end of the stream. */
static bool stream_open(const struct agg *a)
{
    return a->have_hello && !a->have_finish && !a->ended;
}

bool agg_in_stream(struct agg *a, const char *what)
{
    if (stream_open(a))
        return true;
    agg_errorf(a, "%s %s", what,
               !a->have_hello   ? "before HELLO"
               : a->have_finish ? "after FINISH"
                                : "after the end of the stream");
    return false;
}

/* Checks order and sequence shared by every hot event. */
static bool event_ok(struct agg *a, const char *what, uint8_t mode, uint64_t sequence)
{
    if (!agg_in_stream(a, what))
        return false;
    if (a->mode != mode) {
        agg_errorf(a, "%s in a %s profile", what, a->mode == WIRE_MODE_CPU ? "cpu" : "memory");
        return false;
    }
    if (a->have_sequence && sequence <= a->last_sequence) {
        agg_errorf(a, "%s sequence %llu: not increasing", what, (unsigned long long)sequence);
        return false;
    }
    a->have_sequence = true;
    a->last_sequence = sequence;
    return true;
}

int agg_sample(struct agg *a, const struct wire_sample *s)
{
    if (!event_ok(a, "CPU_SAMPLE", WIRE_MODE_CPU, s->sequence))
        return -1;
    a->cur_task = s->exec.task;
    int rc = agg_cpu_sample(a, s);
    if (rc == 0 && a->tasks_on)
        agg_tasks_sample(a, s);
    return rc;
}

int agg_alloc(struct agg *a, const struct wire_alloc *e)
{
    if (!event_ok(a, "ALLOC", WIRE_MODE_MEMORY, e->sequence))
        return -1;
    a->cur_task = e->exec.task;
    uint64_t creator = a->tasks_on ? agg_tasks_creator(a, e->op, e->allocation_id) : 0;
    int rc = agg_mem_event(a, e);
    if (rc == 0 && a->tasks_on)
        agg_tasks_alloc(a, e, creator);
    return rc;
}

int agg_calls(struct agg *a, const struct wire_calls *c)
{
    if (!agg_in_stream(a, "CALLS"))
        return -1;
    if (a->mode != WIRE_MODE_CPU) {
        agg_errorf(a, "CALLS in a memory profile");
        return -1;
    }
    return agg_cpu_calls(a, c);
}

int agg_event(struct agg *a, const struct wire_event *ev)
{
    switch (ev->kind) {
    case WIRE_ENTRY_STACK:
        return agg_stack(a, &ev->u.stack);
    case WIRE_ENTRY_SAMPLE:
        return agg_sample(a, &ev->u.sample);
    case WIRE_ENTRY_ALLOC:
        return agg_alloc(a, &ev->u.alloc);
    case WIRE_ENTRY_TASK:
        return agg_task(a, &ev->u.task);
    }
    agg_errorf(a, "EVENTS: entry kind %u unknown", ev->kind);
    return -1;
}

bool agg_takes_alloc_runs(const struct agg *a)
{
    return a->mode == WIRE_MODE_MEMORY && stream_open(a);
}

/* agg_events with an optional watcher: fn is a constant where it is
 * inlined, so that replay's copy tests nothing. */
static inline __attribute__((always_inline)) size_t
events_each(struct agg *a, const struct wire_event *ev, size_t n, agg_event_fn fn, void *ctx)
{
    enum { AHEAD = 8 };
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        if (i + AHEAD < n && ev[i + AHEAD].kind == WIRE_ENTRY_SAMPLE &&
            ev[i + AHEAD].u.sample.stack_id < a->nodes.len)
            __builtin_prefetch(agg_vec_at(&a->nodes, ev[i + AHEAD].u.sample.stack_id));
        bool ok = agg_event(a, &ev[i]) == 0;
        bad += !ok;
        if (fn)
            fn(ctx, &ev[i], ok);
    }
    return bad;
}

size_t agg_events(struct agg *a, const struct wire_event *ev, size_t n)
{
    return events_each(a, ev, n, NULL, NULL);
}

size_t agg_events_each(struct agg *a, const struct wire_event *ev, size_t n, agg_event_fn fn,
                       void *ctx)
{
    return events_each(a, ev, n, fn, ctx);
}

int agg_finish(struct agg *a, const struct wire_finish *f)
{
    if (!a->have_hello || a->have_finish) {
        agg_errorf(a, "FINISH %s", a->have_hello ? "repeated" : "before HELLO");
        return -1;
    }
    a->have_finish = true;
    a->finish = *f;
    uint64_t before = a->errors;
    if (f->termination > WIRE_TERM_INTERRUPTED)
        agg_errorf(a, "FINISH.termination: %u out of range", f->termination);
    if (a->mode == WIRE_MODE_CPU) {
        unsigned __int128 sum = (unsigned __int128)a->cpu.recorded + f->coalesced_ticks;
        sum += f->dropped_ticks;
        if (sum != f->requested_ticks)
            agg_errorf(a,
                       "FINISH: requested ticks %llu != recorded %llu + coalesced %llu + "
                       "dropped %llu",
                       (unsigned long long)f->requested_ticks, (unsigned long long)a->cpu.recorded,
                       (unsigned long long)f->coalesced_ticks,
                       (unsigned long long)f->dropped_ticks);
    }
    agg_retained_finish(a);
    return a->errors > before ? -1 : 0;
}

void agg_fail(struct agg *a, const char *msg)
{
    agg_errorf(a, "%s", msg);
}

/* A node's costs by leaf span: most nodes see one span only, kept in
 * the detail (and added to self_lines once, at the end: an event there
 * costs no append); at a node's second span, what the first span had
 * (the detail's total less this event) moves to self_lines and, when
 * kept, to the node_lines runs, and from then on every event goes there. */
static int node_line(struct agg *a, const struct agg_node *n, uint32_t key, const uint64_t *w)
{
    struct agg_node_detail *d = agg_detail_at(a, n);
    uint32_t node = (uint32_t)(n - (const struct agg_node *)a->nodes.p);
    if (d->lines == AGG_LINES_NONE || (d->lines == AGG_LINES_ONE && d->leaf_key == key)) {
        d->lines = AGG_LINES_ONE, d->leaf_key = key;
        return 0;
    }
    if (d->lines == AGG_LINES_ONE) {
        const uint64_t before[2] = {d->self - w[0], agg_detail_second(a, d) - w[1]};
        d->lines = AGG_LINES_MANY;
        if ((a->self_lines && costrun_add(a->self_lines, n->ident, d->leaf_key, before) != 0) ||
            (a->node_lines && costrun_add(a->node_lines, node, d->leaf_key, before) != 0))
            return -1;
    }
    if (a->self_lines && costrun_add(a->self_lines, n->ident, key, w) != 0)
        return -1;
    return a->node_lines ? costrun_add(a->node_lines, node, key, w) : 0;
}

void agg_detail_self(struct agg *a, const struct agg_node *n, uint32_t start, const uint64_t *w)
{
    if ((a->self_lines || a->node_lines) && node_line(a, n, start + 1, w) != 0)
        agg_errorf(a, "self costs: out of memory");
    if (a->task_lines)
        agg_tasks_node_self(a, (uint32_t)(n - (const struct agg_node *)a->nodes.p), start + 1, w);
}

void agg_detail_waiting(struct agg *a, const struct agg_node *n, uint32_t start)
{
    static const uint64_t w[2] = {0, 1};
    agg_detail_at(a, n)->waiting++;
    if (a->task_lines)
        agg_tasks_node_waiting(a, (uint32_t)(n - (const struct agg_node *)a->nodes.p));
    if (a->keep_waiting)
        agg_detail_self(a, n, start, w);
}

/* The self costs of the nodes that saw one leaf span, into self_lines. */
static int one_line_selves(struct agg *a)
{
    for (uint32_t i = 0; i < a->nodes.len; i++) {
        const struct agg_node_detail *d = &a->node_detail[i];
        const struct agg_node *n = agg_vec_at(&a->nodes, i);
        const uint64_t w[2] = {d->self, agg_detail_second(a, d)};
        if (d->lines == AGG_LINES_ONE && costrun_add(a->self_lines, n->ident, d->leaf_key, w) != 0)
            return -1;
    }
    return 0;
}

void agg_end(struct agg *a)
{
    if (a->ended)
        return;
    a->ended = true;
    if (!a->have_hello)
        agg_errorf(a, "stream ended without HELLO");
    else if (!a->have_finish)
        agg_errorf(a, "stream ended without FINISH");
    if (a->live_fn && !a->detail)
        agg_mem_folds_passed(a, UINT64_MAX);
    if (a->self_lines &&
        (one_line_selves(a) != 0 || costrun_finish(a->self_lines, a->idents.len) != 0))
        agg_errorf(a, "self costs: out of memory");
    if (a->node_lines && costrun_finish(a->node_lines, a->nodes.len) != 0)
        agg_errorf(a, "self costs: out of memory");
    if (a->detail && !a->node_lines_only)
        agg_detail_settle(a);
    if (a->keep_node_self)
        agg_node_self_settle(a);
    agg_tasks_end(a);
}

void agg_release_records(struct agg *a)
{
    if (!a->ended)
        return;
    live_track_free(&a->mem.track);
}

enum agg_status agg_status(const struct agg *a, enum agg_reason *reason)
{
    enum agg_reason r = AGG_REASON_NONE;
    if (a->errors > 0 || (a->have_finish && a->finish.collector_failure))
        r = AGG_REASON_COLLECTOR_FAILURE;
    else if (a->finish.termination == WIRE_TERM_INTERRUPTED)
        r = AGG_REASON_INTERRUPTED;
    else if (a->stack_limited || a->finish.stack_limit)
        r = AGG_REASON_STACK_CAPTURE_LIMIT;
    else if (a->cpu_limited)
        r = AGG_REASON_CPU_METADATA_LIMIT;
    else if (a->mem.limited)
        r = AGG_REASON_RETENTION_METADATA_LIMIT;
    *reason = r;
    if (!a->have_hello)
        return AGG_UNAVAILABLE;
    return r == AGG_REASON_NONE ? AGG_COMPLETE : AGG_PARTIAL;
}

void agg_keep_detail(struct agg *a)
{
    a->detail = true;
}

void agg_keep_node_lines(struct agg *a)
{
    a->detail = a->keep_node_lines = true;
}

void agg_keep_node_lines_only(struct agg *a)
{
    a->detail = a->keep_node_lines = a->node_lines_only = true;
}

void agg_keep_waiting(struct agg *a)
{
    a->keep_waiting = true;
}

void agg_keep_node_self(struct agg *a)
{
    a->keep_node_self = true;
}

void agg_watch_live(struct agg *a, agg_live_fn fn, void *ctx)
{
    a->live_fn = fn;
    a->live_ctx = ctx;
}

uint8_t agg_mode(const struct agg *a)
{
    return a->mode;
}

const struct wire_config *agg_config(const struct agg *a)
{
    return &a->cfg;
}

const char *agg_backend(const struct agg *a)
{
    return a->backend;
}

uint32_t agg_capabilities(const struct agg *a)
{
    return a->capabilities;
}

bool agg_colour(const struct agg *a)
{
    return a->colour;
}

bool agg_has_hello(const struct agg *a)
{
    return a->have_hello;
}

const struct wire_finish *agg_finish_record(const struct agg *a)
{
    return a->have_finish ? &a->finish : NULL;
}

uint64_t agg_error_count(const struct agg *a)
{
    return a->errors;
}

const char *agg_error(const struct agg *a)
{
    return a->first_error;
}

size_t agg_cpu_bytes(const struct agg *a)
{
    if (a->mode != WIRE_MODE_CPU)
        return 0;
    return a->arena_used + agg_index_bytes(&a->hot_index);
}

size_t agg_retention_bytes(const struct agg *a)
{
    return a->mode == WIRE_MODE_MEMORY ? agg_mem_bytes(a) : 0;
}

size_t agg_stack_bytes(const struct agg *a)
{
    return a->stack_bytes;
}

const char *agg_reason_name(enum agg_reason r)
{
    static const char *const names[] = {
        "none",
        "collector_failure",
        "interrupted",
        "stack_capture_limit",
        "cpu_metadata_limit",
        "retention_metadata_limit",
        "backend_unsupported",
    };
    return (unsigned)r < sizeof names / sizeof names[0] ? names[r] : "unavailable";
}

const char *agg_status_name(enum agg_status s)
{
    static const char *const names[] = {"complete", "partial", "unavailable"};
    return (unsigned)s < 3 ? names[s] : "unavailable";
}
