/* agg_cpu: CPU samples into function, hot-line and call-chain buckets
 * carved from an arena of exactly the CPU budget. */
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

/* Counts one sample at the leaf statement `span` of `key` (an identity,
 * with AGG_HOT_WAITING for a waiting call site), in the list at `head`. */
static void hot_count(struct agg *a, uint32_t key, uint32_t *head, struct wire_span span)
{
    struct hot_key k = {key, span.start};
    uint32_t h = agg_hash_u32(agg_hash_u32(0x9747b28cu, key), span.start);
    uint32_t off = agg_index_find(&a->hot_index, h, hot_eq, a, &k);
    if (off == AGG_NONE) {
        if (a->cpu_limited)
            return;
        off = cpu_take(a, AGG_COST_HOT, agg_index_peak_after_insert(&a->hot_index));
        if (off == AGG_NONE)
            return;
        if (agg_index_insert(&a->hot_index, h, off) < 0) {
            agg_errorf(a, "hot lines: out of memory");
            return;
        }
        struct agg_hotb *b = agg_bucket_at(a, off);
        *b = (struct agg_hotb){0, key, span.start, span.end, *head};
        *head = off;
    }
    ((struct agg_hotb *)agg_bucket_at(a, off))->self++;
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
 * identity, at its outermost occurrence.  Buckets are created leaf
 * function first, then its hot line, then frame by frame towards the
 * root (function bucket, then chain bucket). */
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
        const uint64_t one = 1;
        agg_detail_at(a, leaf)->self++;
        agg_detail_at(a, leaf)->events++;
        agg_detail_self(a, leaf, leaf_span(a, leaf->ident, s->span, false).start, &one);
    }
    for (struct agg_node *n = agg_vec_at(&a->nodes, s->stack_id);;) {
        if (n->flags & AGG_NODE_OUTERMOST) {
            struct agg_fnb *f = fn_bucket(a, n->ident);
            struct agg_chainb *c = f ? chain_bucket(a, n) : NULL;
            if (f)
                f->inclusive++;
            if (c)
                c->samples++;
        }
        if (n->parent == AGG_NONE)
            break;
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
 * stack, when it has a kept stack; no function's figures change. */
static void waiting_site(struct agg *a, const struct wire_sample *s)
{
    if (s->stack_id == WIRE_NONE32 || !agg_node_usable(a, s->stack_id))
        return;
    const struct agg_node *leaf = agg_vec_at(&a->nodes, s->stack_id);
    hot_count(a, leaf->ident | AGG_HOT_WAITING, &a->wait_head,
              leaf_span(a, leaf->ident, s->span, false));
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
