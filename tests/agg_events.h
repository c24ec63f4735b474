/*
 * Event builders for the aggregation tests: build wire records in place and feed
 * them to an agg, numbering sample sequences and ticks automatically.
 */
#ifndef JETT_TESTS_AGG_EVENTS_H
#define JETT_TESTS_AGG_EVENTS_H

#include <check.h>
#include <string.h>

#include "daemon/agg.h"

struct ev {
    struct agg *a;
    uint64_t seq;
};

static inline struct wire_str ev_str(const char *s)
{
    return (struct wire_str){s, (uint32_t)strlen(s)};
}

static inline struct wire_hello ev_hello_rec(uint64_t cpu_budget, uint64_t stack_budget)
{
    struct wire_hello h = {0};
    h.version = WIRE_PROTOCOL_VERSION;
    h.mode = WIRE_MODE_CPU;
    h.config =
        (struct wire_config){1000, 500, 10, cpu_budget, AGG_RETENTION_BUDGET_MAX, stack_budget};
    h.backend = ev_str("interpreter_safe_point");
    h.capabilities = WIRE_CAP_ALL & ~(unsigned)WIRE_CAP_HEAP_ALLOCATION_HOOKS &
                     ~(unsigned)WIRE_CAP_FREE_AND_RESIZE_EVENTS;
    return h;
}

/* A CPU aggregation after a valid HELLO with the given budgets. */
static inline struct ev ev_start(uint64_t cpu_budget, uint64_t stack_budget)
{
    struct ev e = {agg_new(), 0};
    ck_assert_ptr_nonnull(e.a);
    struct wire_hello h = ev_hello_rec(cpu_budget, stack_budget);
    ck_assert_int_eq(agg_hello(e.a, &h), 0);
    return e;
}

static inline struct ev ev_default(void)
{
    return ev_start(AGG_CPU_BUDGET_MAX, AGG_STACK_BUDGET_MAX);
}

/* SOURCE with optional spans; line starts are computed by the daemon. */
static inline int ev_source_spans(struct ev *e, uint32_t id, uint8_t origin, const char *path,
                                  const char *text, const struct wire_source_span *spans,
                                  uint32_t n)
{
    struct wire_source s = {0};
    s.source_id = id;
    s.origin = origin;
    s.path = ev_str(path);
    s.text = ev_str(text);
    s.spans = spans;
    s.n_spans = n;
    return agg_source(e->a, &s);
}

static inline int ev_source(struct ev *e, uint32_t id, const char *path, const char *text)
{
    return ev_source_spans(e, id, WIRE_ORIGIN_PROJECT, path, text, NULL, 0);
}

/* FUNC; source WIRE_NONE32 for none, start WIRE_NONE32 for no span. */
static inline int ev_func(struct ev *e, uint32_t id, const char *ns, const char *name,
                          uint32_t source, uint32_t start, uint32_t end)
{
    struct wire_func f = {id, ev_str(ns), ev_str(name), source, {start, end}};
    return agg_func(e->a, &f);
}

static inline int ev_stack(struct ev *e, uint32_t id, uint32_t parent, uint32_t func)
{
    struct wire_stack s = {id, parent, func, WIRE_SPAN_NONE};
    return agg_stack(e->a, &s);
}

/* STACK with the call site [start, end) in the parent's function. */
static inline int ev_stack_at(struct ev *e, uint32_t id, uint32_t parent, uint32_t func,
                              uint32_t start, uint32_t end)
{
    struct wire_stack s = {id, parent, func, {start, end}};
    return agg_stack(e->a, &s);
}

/* A CALLS record of n function and m call-site entries, laid out as the
 * wire lays them out. */
static inline int ev_calls(struct ev *e, const struct wire_fn_calls *fn, uint32_t n,
                           const struct wire_site_calls *site, uint32_t m)
{
    uint8_t fb[WIRE_CALLS_FN_SIZE * (size_t)n + 1], sb[WIRE_CALLS_SITE_SIZE * (size_t)m + 1];
    for (uint32_t i = 0; i < n; i++)
        wire_le64(wire_le32(fb + WIRE_CALLS_FN_SIZE * (size_t)i, fn[i].func_id), fn[i].calls);
    for (uint32_t i = 0; i < m; i++) {
        uint8_t *p = sb + WIRE_CALLS_SITE_SIZE * (size_t)i;
        wire_le64(wire_le32(wire_le32(wire_le32(p, site[i].func_id), site[i].site.start),
                            site[i].site.end),
                  site[i].calls);
    }
    struct wire_calls c = {fb, sb, n, m};
    return agg_calls(e->a, &c);
}

static inline int ev_sample(struct ev *e, uint8_t state, uint32_t stack, uint32_t start,
                            uint32_t end)
{
    e->seq++;
    struct wire_sample s = {e->seq, e->seq, {WIRE_NONE32, WIRE_NONE32, 0},
                            state,  stack,  {start, end}};
    return agg_sample(e->a, &s);
}

static inline int ev_jett(struct ev *e, uint32_t stack, uint32_t start, uint32_t end)
{
    return ev_sample(e, WIRE_STATE_JETT, stack, start, end);
}

/* FINISH whose requested ticks are recorded + coalesced + dropped. */
static inline int ev_finish(struct ev *e, uint8_t term, uint64_t coalesced, uint64_t dropped)
{
    struct wire_finish f = {term,      4000000, WIRE_NONE64, e->seq + coalesced + dropped,
                            coalesced, dropped, false,       false};
    return agg_finish(e->a, &f);
}

/* A memory aggregation after a valid HELLO with the given budgets. */
static inline struct ev ev_mem_start2(uint64_t retention_budget, uint64_t stack_budget)
{
    struct ev e = {agg_new(), 0};
    ck_assert_ptr_nonnull(e.a);
    struct wire_hello h = ev_hello_rec(AGG_CPU_BUDGET_MAX, stack_budget);
    h.mode = WIRE_MODE_MEMORY;
    h.config.rate_hz = 0;
    h.config.retention_budget = retention_budget;
    h.backend = ev_str("interpreter_alloc_hooks");
    h.capabilities = WIRE_CAP_RUNTIME_THREAD_REGISTRATION | WIRE_CAP_SOURCE_SPANS |
                     WIRE_CAP_HEAP_ALLOCATION_HOOKS | WIRE_CAP_FREE_AND_RESIZE_EVENTS;
    ck_assert_int_eq(agg_hello(e.a, &h), 0);
    return e;
}

static inline struct ev ev_mem_start(uint64_t retention_budget)
{
    return ev_mem_start2(retention_budget, AGG_STACK_BUDGET_MAX);
}

#define EV_NA WIRE_NONE64

/* ALLOC on a worker thread; sizes EV_NA where the operation has none. */
static inline int ev_alloc_on(struct ev *e, uint32_t thread, uint8_t op, uint64_t id, uint64_t old,
                              uint64_t new_size, uint32_t stack)
{
    e->seq++;
    struct wire_alloc x = {
        e->seq, op, id, old, new_size, {WIRE_NONE32, WIRE_NONE32, thread}, stack, WIRE_SPAN_NONE};
    return agg_alloc(e->a, &x);
}

static inline int ev_alloc(struct ev *e, uint8_t op, uint64_t id, uint64_t old, uint64_t new_size,
                           uint32_t stack)
{
    return ev_alloc_on(e, 0, op, id, old, new_size, stack);
}

static inline int ev_mem_finish(struct ev *e)
{
    struct wire_finish f = {WIRE_TERM_RETURNED, 1000000, WIRE_NONE64, 0, 0, 0, false, false};
    return agg_finish(e->a, &f);
}

#endif
