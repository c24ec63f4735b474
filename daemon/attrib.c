/* attrib: the aggregation's quantities through functions (attrib.h). */
#include "daemon/attrib.h"
#include "daemon/agg-internal.h"
#include "daemon/redact.h"

uint32_t attrib_ident_count(const struct agg *a)
{
    return a->idents.len;
}

void attrib_ident(const struct agg *a, uint32_t ident, struct attrib_ident *out)
{
    const struct agg_ident *d = agg_ident_at(a, ident);
    *out = (struct attrib_ident){agg_str(a, d->ns), agg_str(a, d->name), d->ns_len,
                                 d->name_len,       d->source,           d->decl};
}

uint32_t attrib_ident_line(const struct agg *a, uint32_t ident)
{
    const struct agg_ident *d = agg_ident_at(a, ident);
    if (d->source == AGG_NONE || !wire_span_present(d->decl))
        return 0;
    const struct agg_source *s = agg_vec_at(&a->sources, d->source);
    struct redact_source v = {s->text, s->text_len, s->spans, s->n_spans, s->lines, s->n_lines};
    return redact_line_of(&v, d->decl.start) + 1;
}

uint32_t attrib_source_count(const struct agg *a)
{
    return a->sources.len;
}

void attrib_source(const struct agg *a, uint32_t source, struct attrib_source *out)
{
    const struct agg_source *s = agg_vec_at(&a->sources, source);
    *out = (struct attrib_source){s->origin,   s->spans_ok, s->path,    s->path_len, s->text,
                                  s->text_len, s->spans,    s->n_spans, s->lines,    s->n_lines};
}

bool attrib_has_quantities(const struct agg *a, uint32_t ident)
{
    return agg_ident_at(a, ident)->bucket != AGG_NONE;
}

/* The identity's bucket (function or site, by the mode), or NULL. */
static const void *bucket_of(const struct agg *a, uint32_t ident)
{
    uint32_t off = agg_ident_at(a, ident)->bucket;
    return off == AGG_NONE ? NULL : agg_bucket_at(a, off);
}

uint32_t attrib_site_key(const struct agg *a, uint32_t ident)
{
    uint32_t off = agg_ident_at(a, ident)->bucket;
    if (a->mode != WIRE_MODE_MEMORY || off == AGG_NONE)
        return ATTRIB_NONE;
    return off >> AGG_MEM_SITE_SHIFT;
}

bool attrib_fn(const struct agg *a, uint32_t ident, struct attrib_fn *out)
{
    const struct agg_fnb *f = a->mode == WIRE_MODE_CPU ? bucket_of(a, ident) : NULL;
    if (f)
        *out = (struct attrib_fn){f->inclusive, f->self, f->calls};
    return f != NULL;
}

bool attrib_site(const struct agg *a, uint32_t ident, struct attrib_site *out)
{
    const struct agg_siteb *s = a->mode == WIRE_MODE_MEMORY ? bucket_of(a, ident) : NULL;
    if (s)
        *out = (struct attrib_site){s->allocation_count, s->allocated_bytes,
                                    s->resize_count,     s->freed_bytes,
                                    s->held.live,        agg_mem_at_peak(a, &s->held)};
    return s != NULL;
}

void attrib_hot_begin(const struct agg *a, uint32_t ident, struct attrib_hot_iter *it)
{
    const struct agg_fnb *f = a->mode == WIRE_MODE_CPU ? bucket_of(a, ident) : NULL;
    it->next = f ? f->hot_head : AGG_NONE;
}

bool attrib_hot_next(const struct agg *a, struct attrib_hot_iter *it, struct attrib_hot *out)
{
    if (it->next == AGG_NONE)
        return false;
    const struct agg_hotb *h = agg_bucket_at(a, it->next);
    *out = (struct attrib_hot){h->self, h->start, h->end};
    it->next = h->next;
    return true;
}

void attrib_wait_begin(const struct agg *a, struct attrib_hot_iter *it)
{
    it->next = a->mode == WIRE_MODE_CPU ? a->wait_head : AGG_NONE;
}

bool attrib_wait_next(const struct agg *a, struct attrib_hot_iter *it, struct attrib_wait *out)
{
    if (it->next == AGG_NONE)
        return false;
    const struct agg_hotb *h = agg_bucket_at(a, it->next);
    *out = (struct attrib_wait){h->ident & ~AGG_HOT_KIND, {h->self, h->start, h->end}, it->next};
    it->next = h->next;
    return true;
}

void attrib_wait_chain_begin(const struct agg *a, struct attrib_hot_iter *it)
{
    it->next = a->mode == WIRE_MODE_CPU ? a->wait_chain_head : AGG_NONE;
}

bool attrib_wait_chain_next(const struct agg *a, struct attrib_hot_iter *it,
                            struct attrib_wait_chain *out)
{
    if (it->next == AGG_NONE)
        return false;
    const struct agg_hotb *h = agg_bucket_at(a, it->next);
    *out = (struct attrib_wait_chain){h->start, h->ident & ~AGG_HOT_KIND, h->self};
    it->next = h->next;
    return true;
}

bool attrib_calls_known(const struct agg *a)
{
    return a->have_calls;
}

void attrib_call_begin(const struct agg *a, struct attrib_hot_iter *it)
{
    it->next = a->mode == WIRE_MODE_CPU ? a->call_head : AGG_NONE;
}

bool attrib_call_next(const struct agg *a, struct attrib_hot_iter *it, struct attrib_call *out)
{
    if (it->next == AGG_NONE)
        return false;
    const struct agg_callb *c = agg_bucket_at(a, it->next);
    *out = (struct attrib_call){c->ident & ~AGG_HOT_KIND, c->start, it->next, 0, c->calls};
    for (uint32_t k = c->callees; k != AGG_NONE;) {
        const struct agg_hotb *h = agg_bucket_at(a, k);
        out->samples += h->self;
        k = h->next;
    }
    it->next = c->next;
    return true;
}

void attrib_callee_begin(const struct agg *a, uint32_t key, struct attrib_hot_iter *it)
{
    it->next = ((const struct agg_callb *)agg_bucket_at(a, key))->callees;
}

bool attrib_callee_next(const struct agg *a, struct attrib_hot_iter *it, struct attrib_callee *out)
{
    if (it->next == AGG_NONE)
        return false;
    const struct agg_hotb *h = agg_bucket_at(a, it->next);
    *out = (struct attrib_callee){h->ident & ~AGG_HOT_KIND, h->self};
    it->next = h->next;
    return true;
}

void attrib_line_begin(const struct agg *a, struct attrib_line_iter *it)
{
    it->next = a->mode == WIRE_MODE_MEMORY ? a->mem.line_head : AGG_NONE;
}

bool attrib_line_next(const struct agg *a, struct attrib_line_iter *it, struct attrib_line *out)
{
    if (it->next == AGG_NONE)
        return false;
    const struct agg_lineb *l = agg_bucket_at(a, it->next);
    *out = (struct attrib_line){l->ident, l->start, l->end, l->bytes, l->count};
    it->next = l->next;
    return true;
}

uint32_t attrib_chain_count(const struct agg *a)
{
    return a->chains.len;
}

static const struct agg_chain *chain_at(const struct agg *a, uint32_t chain)
{
    return agg_vec_at(&a->chains, chain);
}

uint32_t attrib_chain_ident(const struct agg *a, uint32_t chain)
{
    return chain_at(a, chain)->ident;
}

uint32_t attrib_chain_parent(const struct agg *a, uint32_t chain)
{
    return chain_at(a, chain)->parent;
}

_Static_assert(sizeof(struct agg_chainb) == sizeof(struct agg_mchainb),
               "both modes' chain buckets are one count");

bool attrib_chain_weight(const struct agg *a, uint32_t chain, uint64_t *weight)
{
    uint32_t off = chain_at(a, chain)->bucket;
    if (off == AGG_NONE)
        return false;
    *weight = a->mode == WIRE_MODE_CPU ? ((const struct agg_chainb *)agg_bucket_at(a, off))->samples
                                       : ((const struct agg_mchainb *)agg_bucket_at(a, off))->bytes;
    return true;
}

void attrib_cpu_totals(const struct agg *a, struct attrib_cpu_totals *out)
{
    const struct agg_cpu_totals *c = &a->cpu;
    *out = (struct attrib_cpu_totals){c->recorded, c->attributed,  c->runtime,
                                      c->waiting,  c->unavailable, c->truncated};
}

void attrib_mem_totals(const struct agg *a, struct attrib_mem_totals *out)
{
    const struct agg_mem *m = &a->mem;
    *out = (struct attrib_mem_totals){
        m->allocation_count, m->resize_count, m->free_count, m->allocated_bytes,
        m->freed_bytes,      m->attributed,   m->live,       m->peak};
}

const char *attrib_live_gap(const struct agg *a, bool at_exit)
{
    if (a->mem.limited)
        return "the profile is partial (retention_metadata_limit) and stopped tracking live "
               "allocations";
    if (at_exit && !a->have_finish)
        return "the capture ends before FINISH, so the bytes live at the run's exit are unknown";
    return NULL;
}

bool attrib_detail_whole(const struct agg *a)
{
    return !a->stack_limited && !a->finish.stack_limit && !a->cpu_limited && !a->mem.full;
}

bool attrib_mem_exact(const struct agg *a)
{
    return attrib_live_gap(a, false) == NULL;
}

bool attrib_retained_exact(const struct agg *a)
{
    return attrib_live_gap(a, true) == NULL;
}

uint32_t attrib_node_count(const struct agg *a)
{
    return a->nodes.len;
}

bool attrib_node(const struct agg *a, uint32_t node, uint32_t *parent, uint32_t *ident)
{
    const struct agg_node *n = agg_vec_at(&a->nodes, node);
    if (n->flags & AGG_NODE_INVALID)
        return false;
    *parent = n->parent;
    *ident = n->ident;
    return true;
}

void attrib_node_quantities(const struct agg *a, uint32_t node, struct attrib_node_quantities *out)
{
    *out = (struct attrib_node_quantities){0, 0, 0, 0, 0, 0, ATTRIB_NONE};
    if (a->keep_node_self)
        out->self = a->node_self[node];
    if (!a->detail)
        return;
    const struct agg_node_detail *d = &a->node_detail[node];
    *out = (struct attrib_node_quantities){d->self,
                                           d->count,
                                           d->held.live,
                                           agg_mem_at_peak(a, &d->held),
                                           d->events,
                                           d->waiting,
                                           agg_node_at(a, node)->site};
}

/* The node that node i's subtree sums add into once the stream ended
 * (AGG_NONE: a root, or an invalid node, which adds nowhere).  Walked
 * from the last node back: a STACK's parent comes before it, so every
 * subtree is summed before its parent reads it. */
static uint32_t settle_parent(const struct agg *a, uint32_t i)
{
    const struct agg_node *node = agg_vec_at(&a->nodes, i);
    return node->flags & AGG_NODE_INVALID ? AGG_NONE : node->parent;
}

void agg_detail_settle(struct agg *a)
{
    uint32_t n = a->nodes.len;
    a->node_below = calloc((size_t)n + 1, sizeof *a->node_below);
    if (a->node_below == NULL) {
        agg_errorf(a, "call edges: out of memory");
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        const struct agg_node_detail *d = &a->node_detail[i];
        a->node_below[i] = (struct agg_node_below){
            d->self, d->count, d->events, d->held.live, agg_mem_at_peak(a, &d->held), d->waiting};
    }
    for (uint32_t i = n; i-- > 0;) {
        uint32_t parent = settle_parent(a, i);
        if (parent == AGG_NONE)
            continue;
        struct agg_node_below *p = &a->node_below[parent], *c = &a->node_below[i];
        p->self += c->self, p->count += c->count, p->events += c->events;
        p->retained += c->retained, p->live_at_peak += c->live_at_peak, p->waiting += c->waiting;
    }
}

void agg_node_self_settle(struct agg *a)
{
    uint32_t n = a->nodes.len;
    a->node_self_below = malloc(((size_t)n + 1) * sizeof *a->node_self_below);
    if (a->node_self_below == NULL) {
        agg_errorf(a, "call edges: out of memory");
        return;
    }
    if (n)
        memcpy(a->node_self_below, a->node_self, (size_t)n * sizeof *a->node_self);
    for (uint32_t i = n; i-- > 0;) {
        uint32_t parent = settle_parent(a, i);
        if (parent != AGG_NONE)
            a->node_self_below[parent] += a->node_self_below[i];
    }
}

void attrib_node_below(const struct agg *a, uint32_t node, struct attrib_node_quantities *out)
{
    *out = (struct attrib_node_quantities){0, 0, 0, 0, 0, 0, ATTRIB_NONE};
    if (a->node_self_below)
        out->self = a->node_self_below[node];
    if (a->node_below == NULL)
        return;
    const struct agg_node_below *b = &a->node_below[node];
    *out = (struct attrib_node_quantities){b->self,   b->count,   b->retained, b->live_at_peak,
                                           b->events, b->waiting, ATTRIB_NONE};
}

bool attrib_self_begin(const struct agg *a, uint32_t ident, struct attrib_self_iter *it)
{
    return a->self_lines && a->ended && costrun_func(a->self_lines, ident, &it->it);
}

bool attrib_self_next(const struct agg *a, struct attrib_self_iter *it, uint32_t *start,
                      uint64_t *w)
{
    uint32_t key;
    if (!costrun_next(a->self_lines, &it->it, &key, w))
        return false;
    *start = key == 0 ? ATTRIB_NONE : key - 1;
    return true;
}

bool attrib_node_self_begin(const struct agg *a, uint32_t node, struct attrib_node_self_iter *it)
{
    it->one = it->many = false;
    if (!a->node_lines || !a->ended || node >= a->nodes.len)
        return false;
    const struct agg_node_detail *d = &a->node_detail[node];
    if (d->lines == AGG_LINES_MANY)
        return it->many = costrun_func(a->node_lines, node, &it->it);
    it->one = d->lines == AGG_LINES_ONE;
    it->key = d->leaf_key;
    it->w[0] = d->self, it->w[1] = agg_detail_second(a, d);
    return it->one;
}

bool attrib_node_self_next(const struct agg *a, struct attrib_node_self_iter *it, uint32_t *start,
                           uint64_t *w)
{
    uint32_t key;
    if (it->one) {
        it->one = false;
        key = it->key;
        w[0] = it->w[0];
        if (a->mode != WIRE_MODE_CPU || a->keep_waiting)
            w[1] = it->w[1];
    } else if (!it->many || !costrun_next(a->node_lines, &it->it, &key, w)) {
        return false;
    }
    *start = key == 0 ? ATTRIB_NONE : key - 1;
    return true;
}

bool attrib_tasks_on(const struct agg *a)
{
    return a->tasks_on;
}

uint32_t attrib_task_count(const struct agg *a)
{
    return a->tasks.len;
}

void attrib_task(const struct agg *a, uint32_t task, struct attrib_task *out)
{
    const struct agg_task *t = agg_vec_at(&a->tasks, task - 1);
    *out = (struct attrib_task){task,
                                t->ident == AGG_NONE ? ATTRIB_NONE : t->ident,
                                t->spawn_ident == AGG_NONE ? ATTRIB_NONE : t->spawn_ident,
                                t->spawn_at == AGG_NONE ? ATTRIB_NONE : t->spawn_at,
                                t->samples,
                                t->waiting,
                                t->allocated,
                                t->live};
}

bool attrib_tasks_live_exact(const struct agg *a)
{
    return attrib_retained_exact(a);
}

uint32_t attrib_task_node_count(const struct agg *a)
{
    return a->task_node_order ? a->task_nodes.len : 0;
}

void attrib_task_node(const struct agg *a, uint32_t i, uint32_t *node, uint32_t *task,
                      struct attrib_node_quantities *q)
{
    const struct agg_task_node *p = agg_vec_at(&a->task_nodes, a->task_node_order[i]);
    *node = p->node;
    *task = p->task == AGG_NONE ? ATTRIB_NONE : p->task + 1;
    *q = (struct attrib_node_quantities){.self = p->self,
                                         .count = p->count,
                                         .retained = attrib_tasks_live_exact(a) ? p->live : 0,
                                         .events = p->events,
                                         .waiting = p->waiting,
                                         .site = ATTRIB_NONE};
}

bool attrib_task_node_self_begin(const struct agg *a, uint32_t i, struct attrib_self_iter *it)
{
    return costrun_func(a->task_lines, a->task_node_order[i], &it->it);
}

bool attrib_task_node_self_next(const struct agg *a, struct attrib_self_iter *it, uint32_t *start,
                                uint64_t *w)
{
    uint32_t key;
    if (!costrun_next(a->task_lines, &it->it, &key, w))
        return false;
    *start = key == 0 ? ATTRIB_NONE : key - 1;
    return true;
}
