/* agg_cpu: CPU samples into function, hot-line, call-line and
 * call-chain buckets carved from an arena of exactly the CPU budget, and
 * the CALLS record's exact counts into the buckets there are. */
#include <stdlib.h>
#include <string.h>

#include "daemon/agg-internal.h"

/* Hands out `n` arena bytes, or AGG_NONE (and the limit flag) when they
 * and `index_after` bytes of hot-line index would pass the budget. */
static uint32_t cpu_take(struct agg *a, size_t n, size_t index_after)
{
    if (a->arena_used + n + index_after > a->cfg.cpu_budget) {
        a->cpu_limited = true;
        return AGG_NONE;
    }
    return agg_arena_take(a, a->cfg.cpu_budget, n, "CPU buckets");
}

/* The function bucket of an identity, created on first use. */
static struct agg_fnb *fn_bucket(struct agg *a, uint32_t ident)
{
    struct agg_ident *d = agg_ident_at(a, ident);
    if (d->bucket == AGG_NONE) {
        if (a->cpu_limited)
            return NULL;
        d->bucket = cpu_take(a, AGG_COST_FN, agg_index_bytes(&a->hot_index));
        if (d->bucket == AGG_NONE)
            return NULL;
        ((struct agg_fnb *)agg_bucket_at(a, d->bucket))->hot_head = AGG_NONE;
    }
    return agg_bucket_at(a, d->bucket);
}

/* The chain bucket of a node's chain, created on first use and then
 * remembered in the node. */
static struct agg_chainb *chain_bucket(struct agg *a, struct agg_node *n)
{
    if (n->chain_bucket != AGG_NONE)
        return agg_bucket_at(a, n->chain_bucket);
    struct agg_chain *c = agg_vec_at(&a->chains, n->chain);
    if (c->bucket == AGG_NONE) {
        if (a->cpu_limited)
            return NULL;
        c->bucket = cpu_take(a, AGG_COST_CHAIN, agg_index_bytes(&a->hot_index));
        if (c->bucket == AGG_NONE)
            return NULL;
    }
    n->chain_bucket = c->bucket;
    return agg_bucket_at(a, c->bucket);
}

struct hot_key {
    uint32_t ident, start;
};

static bool hot_eq(const void *ctx, uint32_t entry, const void *key)
{
    const struct hot_key *k = key;
    const struct agg_hotb *h = agg_bucket_at(ctx, entry);
    return h->ident == k->ident && h->start == k->start;
}

static uint32_t hot_hash(uint32_t key, uint32_t start)
{
    return agg_hash_u32(agg_hash_u32(0x9747b28cu, key), start);
}

/* The bucket of `cost` bytes that hot_index knows by (key, span.start),
 * made when new (*made) with its hot-line fields set, the rest zero, and
 * put at the head of the list at `head`; AGG_NONE when it does not fit.
 * Every bucket so found is laid out as a hot line up to its `next`. */
static uint32_t hot_find(struct agg *a, uint32_t key, struct wire_span span, uint32_t *head,
                         size_t cost, bool *made)
{
    struct hot_key k = {key, span.start};
    uint32_t h = hot_hash(key, span.start);
    uint32_t off = agg_index_find(&a->hot_index, h, hot_eq, a, &k);
    *made = false;
    if (off != AGG_NONE || a->cpu_limited)
        return off;
    off = cpu_take(a, cost, agg_index_peak_after_insert(&a->hot_index));
    if (off == AGG_NONE)
        return AGG_NONE;
    if (agg_index_insert(&a->hot_index, h, off) < 0) {
        agg_errorf(a, "hot lines: out of memory");
        return AGG_NONE;
    }
    struct agg_hotb *b = agg_bucket_at(a, off);
    *b = (struct agg_hotb){0, key, span.start, span.end, *head};
    *head = off;
    *made = true;
    return off;
}

/* Counts one sample at the leaf statement `span` of `key` (an identity,
 * with AGG_HOT_WAITING for a waiting call site), in the list at `head`;
 * the bucket, or AGG_NONE when it has none. */
static uint32_t hot_count(struct agg *a, uint32_t key, uint32_t *head, struct wire_span span)
{
    bool made;
    uint32_t off = hot_find(a, key, span, head, AGG_COST_HOT, &made);
    if (off != AGG_NONE)
        ((struct agg_hotb *)agg_bucket_at(a, off))->self++;
    return off;
}

/* The callee bucket of the call that made node n: the caller's call
 * line at n's call site, then that line's bucket for n's function; made
 * on first use (call line first) and then remembered in the node.  NULL
 * when either does not fit. */
static struct agg_hotb *callee_bucket(struct agg *a, struct agg_node *n)
{
    if (n->callee_bucket != AGG_NONE)
        return agg_bucket_at(a, n->callee_bucket);
    uint32_t caller = agg_node_at(a, n->parent)->ident;
    bool made;
    uint32_t line = hot_find(a, caller | AGG_HOT_CALL, (struct wire_span){n->site, n->site},
                             &a->call_head, AGG_COST_CALL, &made);
    if (line == AGG_NONE)
        return NULL;
    struct agg_callb *c = agg_bucket_at(a, line); /* the arena never moves */
    if (made)
        c->callees = AGG_NONE;
    uint32_t off = hot_find(a, n->ident | AGG_HOT_SUB, (struct wire_span){line, AGG_NONE},
                            &c->callees, AGG_COST_SUB, &made);
    if (off == AGG_NONE)
        return NULL;
    n->callee_bucket = off;
    return agg_bucket_at(a, off);
}

/* Counts one self sample at the leaf statement `span` of `ident`. */
static void hot_line(struct agg *a, uint32_t ident, struct agg_fnb *fnb, struct wire_span span)
{
    hot_count(a, ident, &fnb->hot_head, span);
}

/* Whether a present leaf span lies in the leaf function's source. */
static bool span_inside(const struct agg *a, const struct agg_ident *d, struct wire_span span)
{
    const struct agg_source *s = agg_vec_at(&a->sources, d->source);
    return span.start <= span.end && span.end <= s->text_len;
}

/* The leaf statement span if it lies in the leaf function's source
 * (NONE for a source-less frame: it has no statement to show); a span
 * outside is a collector error when `report`, and no span. */
static struct wire_span leaf_span(struct agg *a, uint32_t ident, struct wire_span span, bool report)
{
    const struct agg_ident *d = agg_ident_at(a, ident);
    if (!wire_span_present(span) || d->source == AGG_NONE)
        return WIRE_SPAN_NONE;
    if (span_inside(a, d, span))
        return span;
    if (report)
        agg_errorf(a, "CPU_SAMPLE: leaf span [%u, %u) outside its source", span.start, span.end);
    return WIRE_SPAN_NONE;
}

/* Charges one Jett-state sample to every function on its stack: self and
 * the hot line to the leaf, inclusive and the call chain once per
 * identity, at its outermost occurrence, and the call lines once per
 * (caller, call site), at the outermost frame of the caller at that call
 * (to the callee that call made).  Buckets are created leaf function
 * first, then its hot line, then frame by frame towards the root
 * (function bucket, chain bucket, then the call line of the call the
 * frame made into the one below it, and that line's callee bucket). */
static int cpu_jett(struct agg *a, const struct wire_sample *s)
{
    if (s->stack_id == WIRE_NONE32 || s->stack_id >= a->n_stacks) {
        a->cpu.unavailable++;
        agg_errorf(a, "CPU_SAMPLE sequence %llu: jett sample with %s stack",
                   (unsigned long long)s->sequence,
                   s->stack_id == WIRE_NONE32 ? "no" : "an undefined");
        return -1;
    }
    if (!agg_node_usable(a, s->stack_id)) {
        a->cpu.unavailable++;
        return 0;
    }
    a->cpu.attributed++;
    const struct agg_node *leaf = agg_vec_at(&a->nodes, s->stack_id);
    struct agg_fnb *fnb = fn_bucket(a, leaf->ident);
    if (fnb) {
        fnb->self++;
        hot_line(a, leaf->ident, fnb, leaf_span(a, leaf->ident, s->span, true));
    }
    if (a->keep_node_self)
        a->node_self[s->stack_id]++;
    if (a->detail) {
        const uint64_t one[2] = {1, 0}; /* a jett sample, no waiting one */
        agg_detail_at(a, leaf)->self++;
        agg_detail_at(a, leaf)->events++;
        agg_detail_self(a, leaf, leaf_span(a, leaf->ident, s->span, false).start, one);
    }
    struct agg_node *below = NULL; /* the frame the current one called */
    for (struct agg_node *n = agg_vec_at(&a->nodes, s->stack_id);;) {
        if (n->flags & AGG_NODE_OUTERMOST) {
            struct agg_fnb *f = fn_bucket(a, n->ident);
            struct agg_chainb *c = f ? chain_bucket(a, n) : NULL;
            if (f)
                f->inclusive++;
            if (c)
                c->samples++;
        }
        if (below && (below->flags & AGG_NODE_CALL_OUTERMOST)) {
            struct agg_hotb *callee = callee_bucket(a, below);
            if (callee)
                callee->self++;
        }
        if (n->parent == AGG_NONE)
            break;
        below = n;
        n = agg_vec_at(&a->nodes, n->parent);
    }
    return 0;
}

/* Whether the sample's stack is a kept one whose leaf is the
 * <truncated-stack> frame: counted whatever the sample's state. */
static bool truncated_stack(const struct agg *a, const struct wire_sample *s)
{
    if (s->stack_id == WIRE_NONE32 || !agg_node_usable(a, s->stack_id))
        return false;
    const struct agg_node *leaf = agg_vec_at(&a->nodes, s->stack_id);
    return agg_ident_at(a, leaf->ident)->flags & AGG_IDENT_TRUNCATED;
}

/* Counts a waiting sample at its call site, the leaf statement of its
 * stack, and under that site at its chain (every frame of the stack),
 * when it has a kept stack; no function's figures change. */
static void waiting_site(struct agg *a, const struct wire_sample *s)
{
    if (s->stack_id == WIRE_NONE32 || !agg_node_usable(a, s->stack_id))
        return;
    struct agg_node *leaf = agg_vec_at(&a->nodes, s->stack_id);
    if (a->detail)
        agg_detail_waiting(a, leaf, leaf_span(a, leaf->ident, s->span, false).start);
    uint32_t site = hot_count(a, leaf->ident | AGG_HOT_WAITING, &a->wait_head,
                              leaf_span(a, leaf->ident, s->span, false));
    if (site != AGG_NONE)
        hot_count(a, leaf->chain | AGG_HOT_SUB, &a->wait_chain_head,
                  (struct wire_span){site, AGG_NONE});
}

int agg_cpu_calls(struct agg *a, const struct wire_calls *c)
{
    uint64_t before = a->errors;
    a->have_calls = true;
    for (uint32_t i = 0; i < c->n_functions; i++) {
        struct wire_fn_calls e = wire_calls_function(c, i);
        uint32_t ident =
            e.func_id < a->funcs.len ? *(uint32_t *)agg_vec_at(&a->funcs, e.func_id) : AGG_NONE;
        struct agg_ident *d = ident == AGG_NONE ? NULL : agg_ident_at(a, ident);
        if (!d || d->bucket == AGG_NONE)
            continue; /* refused by a budget, or never sampled: not reported */
        struct agg_fnb *f = agg_bucket_at(a, d->bucket);
        if (f->calls + e.calls < f->calls) {
            agg_errorf(a, "CALLS: the calls of %.*s.%.*s pass 2^64 - 1", (int)d->ns_len,
                       agg_str(a, d->ns), (int)d->name_len, agg_str(a, d->name));
            continue;
        }
        f->calls += e.calls;
    }
    for (uint32_t i = 0; i < c->n_sites; i++) {
        struct wire_site_calls e = wire_calls_site(c, i);
        uint32_t ident =
            e.func_id < a->funcs.len ? *(uint32_t *)agg_vec_at(&a->funcs, e.func_id) : AGG_NONE;
        if (ident == AGG_NONE)
            continue;
        const struct agg_ident *d = agg_ident_at(a, ident);
        const struct agg_source *src =
            d->source == AGG_NONE ? NULL : agg_vec_at(&a->sources, d->source);
        if (!src || e.site.end > src->text_len) {
            agg_errorf(a, "CALLS: call site [%u, %u) outside the source of %.*s.%.*s", e.site.start,
                       e.site.end, (int)d->ns_len, agg_str(a, d->ns), (int)d->name_len,
                       agg_str(a, d->name));
            continue;
        }
        struct hot_key k = {ident | AGG_HOT_CALL, e.site.start};
        uint32_t off = agg_index_find(&a->hot_index, hot_hash(k.ident, k.start), hot_eq, a, &k);
        if (off == AGG_NONE)
            continue; /* a call line without samples is not reported */
        struct agg_callb *line = agg_bucket_at(a, off);
        if (line->calls + e.calls < line->calls) {
            agg_errorf(a, "CALLS: the calls from [%u, %u) in %.*s.%.*s pass 2^64 - 1", e.site.start,
                       e.site.end, (int)d->ns_len, agg_str(a, d->ns), (int)d->name_len,
                       agg_str(a, d->name));
            continue;
        }
        line->calls += e.calls;
    }
    return a->errors > before ? -1 : 0;
}

int agg_cpu_sample(struct agg *a, const struct wire_sample *s)
{
    a->cpu.recorded++;
    a->cpu.truncated += truncated_stack(a, s);
    switch (s->state) {
    case WIRE_STATE_JETT:
        return cpu_jett(a, s);
    case WIRE_STATE_RUNTIME:
        a->cpu.runtime++;
        break;
    case WIRE_STATE_WAITING:
        a->cpu.waiting++;
        waiting_site(a, s);
        break;
    default:
        a->cpu.unavailable++;
        if (s->state != WIRE_STATE_UNAVAILABLE) {
            agg_errorf(a, "CPU_SAMPLE sequence %llu: state %u out of range",
                       (unsigned long long)s->sequence, s->state);
            return -1;
        }
    }
    if (s->stack_id != WIRE_NONE32 && s->stack_id >= a->n_stacks) {
        agg_errorf(a, "CPU_SAMPLE sequence %llu: undefined stack", (unsigned long long)s->sequence);
        return -1;
    }
    return 0;
}

void agg_cpu_free(struct agg *a)
{
    agg_arena_free(a);
    agg_index_free(&a->hot_index);
}
