/* agg_mem: allocation events into site buckets and live-allocation
 * records (live_track.h), all under the retention budget. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/agg-internal.h"
#include "proto/wire_alloc_entry.h"
#include "proto/wire_compact.h"

#define SIZE_MASK AGG_MEM_WIDE

/* The per-event path is inlined whole into its two callers (a run's
 * entries and single events): calls and their spills were a fifth of an
 * event's instructions.  What is rare (creating buckets, errors) stays
 * out of line. */
#define HOT static inline __attribute__((always_inline))

_Static_assert((AGG_RETENTION_BUDGET_MAX >> AGG_MEM_SITE_SHIFT) < AGG_MEM_NO_SITE,
               "a site bucket offset fits the live record");

_Static_assert(AGG_STACK_BUDGET_MAX / sizeof(struct agg_node) < AGG_MEM_NO_SITE,
               "a stack node index fits the live record");

_Static_assert(sizeof(uint64_t) == AGG_COST_WINDOW && sizeof(struct live_slot) == AGG_COST_LIVE,
               "the documented costs are the real slot sizes");

size_t agg_mem_bytes(const struct agg *a)
{
    return a->arena_used + live_track_bytes(&a->mem.track) + agg_index_bytes(&a->hot_index);
}

/* Growth of the live records is charged against the retention budget. */
static bool track_fits(void *ctx, size_t more)
{
    const struct agg *a = ctx;
    return agg_mem_bytes(a) + more <= a->cfg.retention_budget;
}

void agg_mem_start(struct agg *a)
{
    a->mem.limit = (struct live_limit){track_fits, a, a->cfg.retention_budget};
}

/* The budget refused room (jett-profile(7), Budgets): no allocation is
 * tracked from now on, so freed, peak and retained bytes are unknown
 * whatever the records hold, and the records, which served nothing
 * else, are released for the buckets.  Frees and resizes are then taken
 * as their events say (lookup_missed). */
static void mem_untrack(struct agg *a)
{
    a->mem.limited = true;
    live_track_free(&a->mem.track);
}

/* Whether `n` more bytes of buckets, lines or their index fit: the
 * buckets come first, so the first time they do not, the live records
 * make room for them; past that, the first refusal stops every later
 * bucket (a->mem.full), as in CPU mode. */
static bool mem_room(struct agg *a, size_t n)
{
    if (a->mem.full)
        return false;
    if (agg_mem_bytes(a) + n > a->cfg.retention_budget)
        mem_untrack(a);
    a->mem.full = agg_mem_bytes(a) + n > a->cfg.retention_budget;
    return !a->mem.full;
}

/* Arena bytes for a bucket, or AGG_NONE past the budget. */
static uint32_t mem_take(struct agg *a, size_t n)
{
    if (!mem_room(a, n))
        return AGG_NONE;
    return agg_arena_take(a, a->cfg.retention_budget, n, "ALLOC");
}

/* The site bucket of an identity (created on first use), or NULL. */
static struct agg_siteb *site_bucket(struct agg *a, uint32_t ident)
{
    struct agg_ident *d = agg_ident_at(a, ident);
    if (d->bucket == AGG_NONE && !a->mem.full)
        d->bucket = mem_take(a, sizeof(struct agg_siteb));
    return d->bucket == AGG_NONE ? NULL : agg_bucket_at(a, d->bucket);
}

/* Finds (or creates) the site bucket of a node's leaf identity for a
 * node that has none remembered; NULL when there is none. */
static struct agg_siteb *new_leaf_site(struct agg *a, struct agg_node *n)
{
    if (site_bucket(a, n->ident) == NULL)
        return NULL;
    n->leaf_bucket = agg_ident_at(a, n->ident)->bucket;
    return agg_bucket_at(a, n->leaf_bucket);
}

/* The site bucket of a node's leaf identity, or NULL; remembered in the
 * node once it exists. */
HOT struct agg_siteb *leaf_site(struct agg *a, struct agg_node *n)
{
    if (n->leaf_bucket == AGG_NONE)
        return new_leaf_site(a, n);
    return agg_bucket_at(a, n->leaf_bucket);
}

/* The node of the outermost occurrence of a node's leaf identity on its
 * path (the node itself when it is outermost): a function's call chain
 * runs from the root to there (DESIGN section 6), also under recursion. */
static const struct agg_node *outermost_of(const struct agg *a, const struct agg_node *n)
{
    const struct agg_node *outer = n;
    for (uint32_t p = n->parent; !(outer->flags & AGG_NODE_OUTERMOST) && p != AGG_NONE;) {
        const struct agg_node *q = agg_node_at(a, p);
        if (q->ident == n->ident)
            outer = q;
        p = q->parent;
    }
    return outer;
}

/* Finds (or creates) the chain bucket of a node that has none
 * remembered: that of the chain to its leaf function's outermost
 * occurrence; false when there is none. */
static bool new_chain_bucket(struct agg *a, struct agg_node *n)
{
    struct agg_chain *c = agg_vec_at(&a->chains, outermost_of(a, n)->chain);
    if (c->bucket == AGG_NONE && !a->mem.full)
        c->bucket = mem_take(a, sizeof(struct agg_mchainb));
    n->chain_bucket = c->bucket;
    return n->chain_bucket != AGG_NONE;
}

/* Adds bytes to the chain bucket of a stack node's leaf function. */
HOT void chain_bytes(struct agg *a, struct agg_node *n, uint64_t bytes)
{
    if (n->chain_bucket != AGG_NONE || new_chain_bucket(a, n))
        ((struct agg_mchainb *)agg_bucket_at(a, n->chain_bucket))->bytes += bytes;
}

/* A live record names its creation site by the bucket's arena offset in
 * 8-byte units, so a free reaches the bucket without the identity table. */
HOT uint32_t site_ref(const struct agg *a, const struct agg_siteb *s)
{
    return s == NULL ? AGG_MEM_NO_SITE
                     : (uint32_t)(((const unsigned char *)s - a->arena) >> AGG_MEM_SITE_SHIFT);
}

HOT struct agg_siteb *site_at(const struct agg *a, uint32_t ref)
{
    return ref == AGG_MEM_NO_SITE
               ? NULL
               : (struct agg_siteb *)agg_bucket_at(a, (uint32_t)ref << AGG_MEM_SITE_SHIFT);
}

/* x when c, else y, by arithmetic: the compiler would otherwise branch
 * on c, and where c follows the events' operations (random in a real
 * stream) such a branch mostly mispredicts. */
static inline uint64_t pick(bool c, uint64_t x, uint64_t y)
{
    uint64_t m = -(uint64_t)c;
    return (x & m) | (y & ~m);
}

/* Changes a creation site's live bytes by `delta` modulo 2^64 (a
 * decrease is its two's complement: sizes go to 2^64 - 1, past any signed
 * type), first capturing its value at the latest global peak if this is
 * its first change since that peak. */
HOT void held_change(struct agg *a, struct agg_live *h, uint64_t delta)
{
    if (h->last_change <= a->mem.peak_event)
        h->at_peak = h->live;
    h->live += delta;
    h->last_change = a->mem.events;
}

uint64_t agg_mem_at_peak(const struct agg *a, const struct agg_live *h)
{
    return h->last_change <= a->mem.peak_event ? h->live : h->at_peak;
}

/* The creation site a live record names: its site bucket (NULL: none)
 * and, with detail kept, its stack node's detail (else NULL). */
struct creator {
    struct agg_siteb *site;
    struct agg_node_detail *node;
};

/* The reference a live record keeps of its creator. */
HOT uint32_t creator_ref(const struct agg *a, const struct agg_siteb *s, const struct agg_node *n,
                         bool detail)
{
    if (!detail)
        return site_ref(a, s);
    return n == NULL ? AGG_MEM_NO_SITE : (uint32_t)(n - (const struct agg_node *)a->nodes.p);
}

HOT struct creator creator_at(const struct agg *a, uint32_t ref, bool detail)
{
    if (!detail)
        return (struct creator){site_at(a, ref), NULL};
    if (ref == AGG_MEM_NO_SITE)
        return (struct creator){NULL, NULL};
    const struct agg_node *n = agg_node_at(a, ref);
    struct agg_siteb *s = n->leaf_bucket == AGG_NONE ? NULL : agg_bucket_at(a, n->leaf_bucket);
    return (struct creator){s, &a->node_detail[ref]};
}

/* A creator's live bytes change by delta (of one tracked allocation). */
HOT void creator_live(struct agg *a, struct creator c, uint64_t delta, bool detail)
{
    if (c.site)
        held_change(a, &c.site->held, delta);
    if (detail && c.node)
        held_change(a, &c.node->held, delta);
}

/* The prefetch helpers are HOT too: a static function whose only effect
 * is a prefetch looks pure to the compiler, which then drops its calls. */

/* Starts loading both cache lines a site bucket may straddle. */
HOT void prefetch_site(const struct agg *a, uint32_t off)
{
    /* In integers: before the first site the arena is NULL, and a
     * prefetch of any address is harmless. */
    uintptr_t p = (uintptr_t)a->arena + off;
    __builtin_prefetch((const void *)p, 1);
    __builtin_prefetch((const void *)(p + sizeof(struct agg_siteb) - 1), 1);
}

/* Starts loading what an export keeps of node i (both lines it may
 * straddle); nothing without detail. */
HOT void prefetch_detail(const struct agg *a, uint32_t i, bool detail)
{
    if (detail && i < a->nodes.len) {
        __builtin_prefetch(&a->node_detail[i], 1);
        __builtin_prefetch((const char *)(&a->node_detail[i] + 1) - 1, 1);
    }
}

/* Step 0: the id's window slot or live-table line, and the stack node. */
HOT void warm_far(const struct agg *a, const struct wire_alloc *e, bool detail)
{
    live_track_prefetch(&a->mem.track, e->allocation_id, e->op == WIRE_OP_FREE);
    if (e->stack_id < a->nodes.len) {
        /* a node may straddle two lines: the fields read are at its end */
        const struct agg_node *n = agg_node_at(a, e->stack_id);
        __builtin_prefetch(&n->chain_bucket, 1);
        __builtin_prefetch((const char *)(n + 1) - 1, 1);
    }
    prefetch_detail(a, e->stack_id, detail);
}

/* Step 1: the buckets the (now loaded) node and live record name: the
 * leaf's site and chain, and the creation site of a live record.  Which
 * of them the entry needs depends on its operation; testing it would
 * branch on something random in a real stream (mispredicted more often
 * than not), so a free's leaf buckets are loaded too, and an allocate's
 * new id, which has no record, loads the start of the arena. */
HOT void warm_near_at(const struct agg *a, uint32_t stack, uint64_t id, bool detail)
{
    const struct agg_node *n = stack < a->nodes.len ? agg_node_at(a, stack) : NULL;
    if (n) {
        if (n->leaf_bucket != AGG_NONE)
            prefetch_site(a, n->leaf_bucket);
        if (n->chain_bucket != AGG_NONE)
            __builtin_prefetch(a->arena + n->chain_bucket, 1);
    }
    uint64_t rec = live_track_peek(&a->mem.track, id);
    uint32_t ref = (uint32_t)(rec >> AGG_MEM_SIZE_BITS);
    /* LIVE_EMPTY gives a ref above AGG_MEM_NO_SITE; with detail kept the
     * ref is a node, not a bucket */
    if (!detail) {
        prefetch_site(a, (uint32_t)pick(ref < AGG_MEM_NO_SITE, ref << AGG_MEM_SITE_SHIFT, 0));
        return;
    }
    /* with detail the record names its creation node: its detail, and
     * the node itself, whose leaf bucket is the creation site */
    if (ref < a->nodes.len)
        __builtin_prefetch((const char *)agg_node_at(a, ref) +
                           offsetof(struct agg_node, leaf_bucket));
    prefetch_detail(a, ref, detail);
}

HOT void warm_near(const struct agg *a, const uint8_t *p, bool detail)
{
    warm_near_at(a, wire_alloc_entry_stack(p), wire_alloc_entry_id(p), detail);
}

/* Step 2, with detail kept: the creation site of a live record, named
 * by the (now loaded) creation node's leaf bucket. */
HOT void warm_creator(const struct agg *a, const uint8_t *p)
{
    uint64_t rec = live_track_peek(&a->mem.track, wire_alloc_entry_id(p));
    uint32_t ref = (uint32_t)(rec >> AGG_MEM_SIZE_BITS);
    if (ref >= a->nodes.len)
        return;
    const struct agg_node *n = agg_node_at(a, ref);
    if (n->leaf_bucket != AGG_NONE)
        prefetch_site(a, n->leaf_bucket);
}

/* The event's stack node, NULL when it has none or the stack budget
 * refused it (unattributed); false (a collector error) when the stack is
 * undefined. */
HOT bool event_node(struct agg *a, const struct wire_alloc *e, struct agg_node **node)
{
    /* stored nodes are defined stacks, and WIRE_NONE32 is past them */
    if (__builtin_expect(e->stack_id < a->nodes.len, 1)) {
        struct agg_node *n = agg_node_at(a, e->stack_id);
        *node = n->flags & AGG_NODE_INVALID ? NULL : n;
        return true;
    }
    *node = NULL;
    if (e->stack_id != WIRE_NONE32 && e->stack_id >= a->n_stacks) {
        agg_errorf(a, "ALLOC sequence %llu: undefined stack", (unsigned long long)e->sequence);
        return false;
    }
    return true;
}

/* An export's detail of allocation pressure at a node: its bytes,
 * allocations and events, and the self cost at the leaf span (where the
 * leaf function has a source).  Growth of 0 is no event. */
static void detail_pressure(struct agg *a, struct agg_node *n, uint64_t bytes, bool create,
                            struct wire_span span)
{
    if (!create && bytes == 0)
        return;
    struct agg_node_detail *d = agg_detail_at(a, n);
    d->self += bytes;
    d->count += create;
    d->events++;
    bool sourced = n->flags & AGG_NODE_SOURCED;
    const uint64_t w[2] = {bytes, create};
    agg_detail_self(a, n, sourced ? span.start : WIRE_NONE32, w);
}

struct line_key {
    uint32_t ident, start;
};

static bool line_eq(const void *ctx, uint32_t entry, const void *key)
{
    const struct line_key *k = key;
    const struct agg_lineb *l = agg_bucket_at(ctx, entry);
    return l->ident == k->ident && l->start == k->start;
}

/* Finds or creates the allocation line of (ident, span.start); AGG_NONE
 * when the retention budget refuses a new one, as for a site bucket. */
static uint32_t find_line(struct agg *a, uint32_t ident, struct wire_span span)
{
    struct line_key k = {ident, span.start};
    uint32_t h = agg_hash_u32(agg_hash_u32(0x5bd1e995u, ident), span.start);
    uint32_t off = agg_index_find(&a->hot_index, h, line_eq, a, &k);
    if (off != AGG_NONE || a->mem.full)
        return off;
    size_t more =
        AGG_COST_LINE + agg_index_peak_after_insert(&a->hot_index) - agg_index_bytes(&a->hot_index);
    if (!mem_room(a, more))
        return AGG_NONE;
    off = agg_arena_take(a, a->cfg.retention_budget, AGG_COST_LINE, "ALLOC");
    if (off == AGG_NONE)
        return AGG_NONE;
    if (agg_index_insert(&a->hot_index, h, off) < 0) {
        agg_errorf(a, "allocation lines: out of memory");
        return AGG_NONE;
    }
    struct agg_lineb *l = agg_bucket_at(a, off);
    *l = (struct agg_lineb){0, 0, ident, span.start, span.end, a->mem.line_head};
    a->mem.line_head = off;
    return off;
}

/* Charges allocation pressure to the line of the leaf statement, when the
 * leaf function has a source and the span lies in it.  A span seen
 * lately finds its line in line_seen, without the index. */
HOT void line_pressure(struct agg *a, uint32_t ident, struct wire_span span, uint64_t bytes,
                       bool create)
{
    struct agg_mem *m = &a->mem;
    if (!wire_span_present(span))
        return;
    /* the end mostly follows from the start */
    uint32_t h = ((span.start ^ ident << 16) * 0x9e3779b1u) >> 26;
    struct agg_line_seen *seen = &m->line_seen[h % AGG_LINE_SEEN];
    uint64_t key = agg_line_key(ident, span.start);
    if (seen->key != key || seen->end != span.end) {
        const struct agg_ident *d = agg_ident_at(a, ident);
        if (d->source == AGG_NONE || span.start > span.end ||
            span.end > ((const struct agg_source *)agg_vec_at(&a->sources, d->source))->text_len)
            return;
        uint32_t off = find_line(a, ident, span);
        if (off == AGG_NONE)
            return;
        *seen = (struct agg_line_seen){key, span.end, off};
    }
    struct agg_lineb *l = agg_bucket_at(a, seen->line);
    l->bytes += bytes;
    l->count += create;
}

/* Allocation pressure at the event's leaf: an allocation's initial bytes
 * or a resize's growth (0 when it does not grow: only counted, and the
 * chain gets no bucket for it); returns the leaf's site bucket (NULL:
 * none).  Growth and shrinking are not told apart by a branch, which
 * would fail to predict half the resizes. */
HOT struct agg_siteb *pressure(struct agg *a, struct agg_node *n, uint64_t bytes, bool create,
                               struct wire_span span, bool detail)
{
    struct agg_mem *m = &a->mem;
    m->allocated_bytes += bytes;
    if (n == NULL)
        return NULL;
    m->attributed += bytes;
    if (detail)
        detail_pressure(a, n, bytes, create, span);
    else if (a->keep_node_self)
        a->node_self[n - (const struct agg_node *)a->nodes.p] += bytes;
    struct agg_siteb *s = leaf_site(a, n);
    if (s) {
        s->allocated_bytes += bytes;
        if (create)
            s->allocation_count++;
        else
            s->resize_count++;
    }
    if (n->chain_bucket != AGG_NONE || create || bytes > 0)
        chain_bytes(a, n, bytes);
    if (create || bytes > 0)
        line_pressure(a, n->ident, span, bytes, create);
    return s;
}

/* Global live bytes after a tracked change, and the peak.  `lower` (a
 * constant where it is inlined) says the change is a free's: live bytes,
 * at most the allocated bytes, never wrap, so a free never reaches a new
 * peak.  New peaks come in stretches (while live bytes grow) or seldom
 * (a level that drifts rises past its record now and then), so the
 * branch predicts well. */
HOT void global_live(struct agg_mem *m, uint64_t delta, bool lower)
{
    m->live += delta; /* modulo 2^64, as site_live */
    if (lower)
        return;
    if (m->live > m->peak) {
        m->peak = m->live;
        m->peak_event = m->events;
    }
}

/* A tracked allocation's live bytes change by delta: its creator's, the
 * global total and, when `watched` (a constant where it is inlined, so
 * that replay's path has no test), a memory timeline's watcher; ref is
 * then the site's. */
HOT void live_change(struct agg *a, struct creator c, uint32_t ref, uint64_t delta, bool lower,
                     bool detail, bool watched)
{
    creator_live(a, c, delta, detail);
    global_live(&a->mem, delta, lower);
    if (watched)
        a->live_fn(a->live_ctx, ref == AGG_MEM_NO_SITE ? UINT32_MAX : ref, delta,
                   a->mem.allocated_bytes);
}

/* Whether allocated_bytes can take `bytes` more (every other byte sum is
 * at most it); past 2^64 - 1 the event is refused as a collector error
 * rather than wrapped. */
HOT bool bytes_fit(struct agg *a, const struct wire_alloc *e, uint64_t bytes)
{
    uint64_t sum;
    if (__builtin_expect(!__builtin_add_overflow(a->mem.allocated_bytes, bytes, &sum), 1))
        return true;
    agg_errorf(a, "ALLOC sequence %llu: allocated bytes would pass 2^64 - 1",
               (unsigned long long)e->sequence);
    return false;
}

/* The size field of a live record: the size, or AGG_MEM_WIDE when it is
 * kept whole beside the record. */
HOT uint64_t size_field(uint64_t size)
{
    return size < SIZE_MASK ? size : SIZE_MASK;
}

/* Adds the record of a new id whose size is kept whole beside it; false
 * when the limit refuses either (then every record goes: mem_untrack). */
static bool add_wide(struct agg_mem *m, uint64_t id, uint64_t size, uint64_t rec)
{
    return live_track_set_wide(&m->track, id, size, &m->limit) &&
           live_track_add(&m->track, id, rec, &m->limit);
}

/* The checks an allocate and a fold share: the id is new and its bytes
 * fit; true when the event may be counted (the id is then the last). */
HOT bool new_id(struct agg *a, const struct wire_alloc *e)
{
    struct agg_mem *m = &a->mem;
    if ((m->have_id && e->allocation_id <= m->max_id) || e->allocation_id == LIVE_EMPTY) {
        agg_errorf(a, "ALLOC sequence %llu: allocation id reused or out of order",
                   (unsigned long long)e->sequence);
        return false;
    }
    if (!bytes_fit(a, e, e->new_size))
        return false;
    m->have_id = true;
    m->max_id = e->allocation_id;
    m->allocation_count++;
    return true;
}

/* The live record of a new allocation created at site s (node, with
 * detail kept) and its live bytes. */
HOT void keep_record(struct agg *a, uint64_t id, uint64_t size, struct agg_siteb *s,
                     struct agg_node *node, bool detail, bool watched)
{
    struct agg_mem *m = &a->mem;
    uint32_t ref = creator_ref(a, s, node, detail);
    uint64_t site = (uint64_t)ref << AGG_MEM_SIZE_BITS;
    bool kept = !m->limited && (__builtin_expect(size < SIZE_MASK, 1)
                                    ? live_track_add(&m->track, id, size | site, &m->limit)
                                    : add_wide(m, id, size, SIZE_MASK | site));
    if (!kept) {
        if (!m->limited) /* the record did not fit: every record goes */
            mem_untrack(a);
        return;
    }
    struct creator c = {s, detail && node ? agg_detail_at(a, node) : NULL};
    live_change(a, c, ref, size, false, detail, watched);
}

HOT void mem_allocate(struct agg *a, const struct wire_alloc *e, struct agg_node *node, bool detail,
                      bool watched)
{
    if (!new_id(a, e))
        return;
    struct agg_siteb *s = pressure(a, node, e->new_size, true, e->span, detail);
    keep_record(a, e->allocation_id, e->new_size, s, node, detail, watched);
}

static inline bool fold_before(const struct agg_fold_pending *x, const struct agg_fold_pending *y)
{
    return x->free_seq != y->free_seq ? x->free_seq < y->free_seq : x->order < y->order;
}

void agg_mem_folds_passed(struct agg *a, uint64_t sequence)
{
    struct agg_mem *m = &a->mem;
    while (m->n_folds > 0 && m->folds[0].free_seq <= sequence) {
        struct agg_fold_pending top = m->folds[0], last = m->folds[--m->n_folds];
        uint32_t i = 0;
        for (;;) {
            uint32_t k = 2 * i + 1;
            if (k >= m->n_folds)
                break;
            if (k + 1 < m->n_folds && fold_before(&m->folds[k + 1], &m->folds[k]))
                k++;
            if (!fold_before(&m->folds[k], &last))
                break;
            m->folds[i] = m->folds[k];
            i = k;
        }
        if (m->n_folds > 0)
            m->folds[i] = last;
        a->live_fn(a->live_ctx, top.key, 0 - top.size, m->allocated_bytes);
    }
}

/* A fold, where a memory timeline watches: its bytes are live from now
 * until the stream passes its free's sequence (agg_mem_folds_passed), as
 * they were in the events it folds, so that the timeline draws what they
 * would have drawn. */
static void fold_watch(struct agg *a, const struct agg_siteb *s, const struct wire_alloc *e)
{
    struct agg_mem *m = &a->mem;
    uint32_t ref = site_ref(a, s);
    uint32_t key = ref == AGG_MEM_NO_SITE ? UINT32_MAX : ref;
    a->live_fn(a->live_ctx, key, e->new_size, m->allocated_bytes);
    if (m->n_folds == AGG_FOLDS_PENDING) /* only a stream that breaks the fold rule */
        agg_mem_folds_passed(a, m->folds[0].free_seq);
    /* a binary heap by free sequence, then fold order */
    struct agg_fold_pending f = {wire_fold_free_seq(e), m->fold_order++, e->new_size, key};
    uint32_t i = m->n_folds++;
    while (i > 0 && fold_before(&f, &m->folds[(i - 1) / 2])) {
        m->folds[i] = m->folds[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    m->folds[i] = f;
}

HOT void mem_fold(struct agg *a, const struct wire_alloc *e, struct agg_node *node, bool detail,
                  bool watched)
{
    struct agg_mem *m = &a->mem;
    if (!new_id(a, e))
        return;
    struct agg_siteb *s = pressure(a, node, e->new_size, true, e->span, detail);
    m->free_count++;
    m->freed_bytes += e->new_size;
    if (s)
        s->freed_bytes += e->new_size;
    if (watched)
        fold_watch(a, s, e);
}

/* mem_lookup of an id with no record: once the records are released,
 * any id an allocate gave is expected, checked against nothing
 * (jett-profile(7), Budgets); else, and for an id above every
 * allocate's, it is an error. */
static uint64_t *lookup_missed(struct agg *a, const struct wire_alloc *e, bool *untracked)
{
    struct agg_mem *m = &a->mem;
    if (m->limited && m->have_id && e->allocation_id <= m->max_id) {
        *untracked = true;
        return NULL;
    }
    agg_errorf(a, "ALLOC sequence %llu: %s of an unknown or retired allocation",
               (unsigned long long)e->sequence, e->op == WIRE_OP_FREE ? "free" : "resize");
    return NULL;
}

/* A live record for a resize or free: NULL (and maybe an error) when the
 * id is not tracked. */
HOT uint64_t *mem_lookup(struct agg *a, const struct wire_alloc *e, bool *untracked)
{
    uint64_t *r = live_track_find(&a->mem.track, e->allocation_id);
    *untracked = false;
    return r ? r : lookup_missed(a, e, untracked);
}

/* The tracked size; a record that says otherwise is a collector error
 * (the tracked size, which the daemon saw created, is kept). */
HOT uint64_t mem_size(struct agg *a, const struct wire_alloc *e, const uint64_t *r)
{
    uint64_t size = *r & SIZE_MASK;
    if (__builtin_expect(size == SIZE_MASK, 0))
        size = live_track_wide(&a->mem.track, e->allocation_id);
    if (e->old_size != size)
        agg_errorf(a, "ALLOC sequence %llu: old size %llu, but the allocation holds %llu bytes",
                   (unsigned long long)e->sequence, (unsigned long long)e->old_size,
                   (unsigned long long)size);
    return size;
}

/* A resize from or to a size kept whole: keeps the new size beside the
 * record or drops the old one.  When the limit refuses the room, no
 * allocation is tracked from then on (false; `r` is gone with the
 * records). */
static bool resize_wide(struct agg *a, uint64_t id, uint64_t neu)
{
    struct agg_mem *m = &a->mem;
    if (neu < SIZE_MASK) {
        live_track_drop_wide(&m->track, id);
        return true;
    }
    if (live_track_set_wide(&m->track, id, neu, &m->limit))
        return true;
    mem_untrack(a);
    return false;
}

HOT void mem_resize(struct agg *a, const struct wire_alloc *e, struct agg_node *node, bool detail,
                    bool watched)
{
    bool untracked;
    uint64_t *r = mem_lookup(a, e, &untracked);
    if (!r && !untracked)
        return;
    uint64_t old = r ? mem_size(a, e, r) : e->old_size, neu = e->new_size;
    uint64_t grow = pick(neu > old, neu - old, 0), shrink = pick(neu < old, old - neu, 0);
    if (!bytes_fit(a, e, grow))
        return;
    a->mem.resize_count++;
    pressure(a, node, grow, false, e->span, detail);
    /* a bucket the growth made may have taken the records' room: `r` is
     * then gone with them */
    if (!r || a->mem.limited)
        return;
    if (__builtin_expect((old >= SIZE_MASK) | (neu >= SIZE_MASK), 0) &&
        !resize_wide(a, e->allocation_id, neu))
        return;
    uint64_t site = *r & ~SIZE_MASK;
    uint32_t ref = (uint32_t)(site >> AGG_MEM_SIZE_BITS);
    struct creator c = creator_at(a, ref, detail);
    uint64_t delta = neu - old;
    a->mem.freed_bytes += shrink;
    if (c.site)
        c.site->freed_bytes += shrink;
    *r = size_field(neu) | site;
    live_change(a, c, ref, delta, false, detail, watched);
}

HOT void mem_free(struct agg *a, const struct wire_alloc *e, bool detail, bool watched)
{
    bool untracked;
    uint64_t *r = mem_lookup(a, e, &untracked);
    a->mem.free_count += r || untracked;
    if (!r)
        return;
    uint64_t size = mem_size(a, e, r);
    uint32_t ref = (uint32_t)(*r >> AGG_MEM_SIZE_BITS);
    struct creator c = creator_at(a, ref, detail);
    a->mem.freed_bytes += size;
    if (c.site)
        c.site->freed_bytes += size;
    if (__builtin_expect(size >= SIZE_MASK, 0))
        live_track_drop_wide(&a->mem.track, e->allocation_id);
    live_track_remove(&a->mem.track, e->allocation_id, r);
    live_change(a, c, ref, 0 - size, true, detail, watched);
}

/* An event whose stack was checked, counted and applied. */
HOT void mem_apply(struct agg *a, const struct wire_alloc *e, struct agg_node *node, bool detail,
                   bool watched)
{
    a->mem.events++;
    if (e->op == WIRE_OP_ALLOCATE)
        mem_allocate(a, e, node, detail, watched);
    else if (e->op == WIRE_OP_RESIZE)
        mem_resize(a, e, node, detail, watched);
    else if (e->op == WIRE_OP_FREE)
        mem_free(a, e, detail, watched);
    else
        mem_fold(a, e, node, detail, watched);
}

/* Whether an event's operation and sizes are what the wire allows. */
static inline bool event_shape_ok(const struct wire_alloc *e)
{
    if (e->op == WIRE_OP_FOLD)
        return e->old_size > e->sequence && e->old_size - e->sequence <= WIRE_FOLD_MAX;
    return (e->op <= WIRE_OP_FREE) & wire_alloc_sizes_ok(e->op, e->old_size, e->new_size);
}

/* One event whose order and sequence were checked: the one path of
 * single events and of a run's entries.  `decoded` (a constant where it
 * is inlined) says the decoder's rule took the entry, so its operation
 * and sizes need no second look; `detail` and `watched` are constants
 * in a run's loops, so that each copy tests neither. */
HOT int mem_event(struct agg *a, const struct wire_alloc *e, bool decoded, bool detail,
                  bool watched)
{
    uint64_t before = a->errors;
    struct agg_node *node;
    if (!decoded && !event_shape_ok(e)) {
        agg_errorf(a, "ALLOC sequence %llu: operation %u with the wrong sizes",
                   (unsigned long long)e->sequence, e->op);
        return -1;
    }
    if (watched && a->mem.n_folds > 0)
        agg_mem_folds_passed(a, e->sequence);
    if (!event_node(a, e, &node))
        return -1;
    mem_apply(a, e, node, detail, watched);
    return a->errors > before ? -1 : 0;
}

int agg_mem_event(struct agg *a, const struct wire_alloc *e)
{
    return mem_event(a, e, false, a->detail, a->live_fn != NULL && !a->detail);
}

/* One entry of a run, read again where it lies (in L1 by now): the
 * rule took it, and its sequence is past the aggregation's last. */
HOT void run_entry(struct agg *a, const uint8_t *p, bool detail, bool watched)
{
    struct wire_alloc e; /* what the aggregation reads of it */
    wire_alloc_entry_read_checked(p, &e);
    mem_event(a, &e, true, detail, watched);
}

/* An entry of a run whose sequence the aggregation has passed: it goes
 * the way of single events, and agg_alloc reports it. */
static void run_stale_entry(struct agg *a, const uint8_t *p)
{
    struct wire_alloc e;
    wire_alloc_entry_read(p, &e);
    agg_alloc(a, &e);
}

/* Whether the aggregation's own sequence check refuses an entry (only
 * one fed beside the decoder has any: they start its runs). */
HOT bool run_entry_stale(const struct agg *a, uint64_t sequence)
{
    return __builtin_expect(a->have_sequence && sequence <= a->last_sequence, 0);
}

/* The entries at the start of a run (at most n) that the aggregation's
 * own sequence check refuses, each gone to run_stale_entry: how many.
 * With a rule, each is first taken by it (the run is being checked as
 * it goes); without, the run was checked already.  The entries after
 * them pass the check too, as sequences increase along a run. */
static inline size_t run_stale(struct agg *a, const uint8_t *run, size_t n,
                               struct wire_alloc_rule *rule)
{
    size_t i = 0;
    struct wire_alloc e;
    for (const uint8_t *p = run; i < n && run_entry_stale(a, wire_alloc_entry_sequence(p)) &&
                                 (!rule || wire_alloc_entry_take(p, &e, rule));
         i++, p += WIRE_ALLOC_SIZE)
        run_stale_entry(a, p);
    return i;
}

/* After a run's fresh entries, the last of which had `sequence`. */
static inline void run_passed(struct agg *a, uint64_t sequence)
{
    a->have_sequence = true;
    a->last_sequence = sequence;
}

/* Prefetching runs two steps apart: the first as the rule checks the
 * piece, the second WARM entries ahead of the aggregation, so that each
 * step reads only what the one before loaded; with detail kept, a third
 * step half as far ahead loads the creation sites. */
enum { WARM = 8, WARM_CREATOR = WARM / 2 };

HOT size_t mem_run(struct agg *a, const uint8_t *run, size_t room, struct wire_alloc_rule *rule_io,
                   bool detail, bool watched)
{
    const size_t size = WIRE_ALLOC_SIZE;
    struct wire_alloc_rule r = *rule_io, *rule = &r; /* in registers */
    size_t n = 0;
    /* the decoder's check of each entry, and the first prefetch from the
     * fields it read */
    for (const uint8_t *p = run; n < room; n++, p += size) {
        __builtin_prefetch(p + 2048); /* as the decoder's runs */
        struct wire_alloc e;
        if (!wire_alloc_entry_take(p, &e, rule))
            break;
        warm_far(a, &e, detail);
    }
    *rule_io = r;
    size_t first = run_stale(a, run, n, NULL);
    if (first < n)
        run_passed(a, wire_alloc_entry_sequence(run + (n - 1) * size));
    for (size_t j = first; j < n && j < first + WARM; j++)
        warm_near(a, run + j * size, detail);
    for (size_t j = first; detail && j < n && j < first + WARM_CREATOR; j++)
        warm_creator(a, run + j * size);
    for (size_t i = first; i < n; i++) {
        if (i + WARM < n)
            warm_near(a, run + (i + WARM) * size, detail);
        if (detail && i + WARM_CREATOR < n)
            warm_creator(a, run + (i + WARM_CREATOR) * size);
        run_entry(a, run + i * size, detail, watched);
    }
    return n;
}

/* The same without prefetching, in one pass: each entry is aggregated
 * as soon as the rule takes it, from the fields the check read.  The
 * aggregation reads nothing of the decoder's state, nor the rule any of
 * the aggregation's, so the order of the two does not matter. */
HOT size_t mem_run_cached(struct agg *a, const uint8_t *run, size_t room,
                          struct wire_alloc_rule *rule_io, bool detail)
{
    struct wire_alloc_rule r = *rule_io, *rule = &r; /* in registers */
    size_t stale = run_stale(a, run, room, rule), n = stale;
    const uint8_t *p = run + n * WIRE_ALLOC_SIZE;
    struct wire_alloc e;
    for (; n < room; n++, p += WIRE_ALLOC_SIZE) {
        __builtin_prefetch(p + 2048); /* as the decoder's runs */
        if (!wire_alloc_entry_take(p, &e, rule))
            break;
        mem_event(a, &e, true, detail, false);
    }
    if (n > stale)
        run_passed(a, r.last);
    *rule_io = r;
    return n;
}

/* ---- runs of compact entries ---- */

/* What a run of compact entries knows of one of the two sites the
 * decoder remembers (wire_compact.h), so that an allocate or a fold
 * there reaches its buckets without the node, identity, chain and line
 * tables: derived at the site's first allocate or fold in the run,
 * forgotten when an event makes buckets.  `fast` when every bucket the
 * event's pressure reaches exists (or the site has none: no stack, or
 * no line).  What the short way adds there is summed here first and
 * added to the buckets and totals at once (run_site_flush): sums are
 * all it adds, and nothing reads them before the run ends or an event
 * goes the general way. */
struct run_site {
    bool known, fast;
    struct agg_node *node; /* NULL: unattributed */
    struct agg_siteb *site;
    struct agg_mchainb *chain;
    struct agg_lineb *line;                        /* NULL: no allocation line */
    uint64_t count, bytes, folds, folded, resizes; /* not yet added */
};

/* The allocation line that pressure at (node, span) charges, when it
 * exists; *none when no line applies there (as line_pressure decides). */
static struct agg_lineb *existing_line(struct agg *a, const struct agg_node *n,
                                       struct wire_span span, bool *none)
{
    *none = true;
    if (!wire_span_present(span))
        return NULL;
    const struct agg_ident *d = agg_ident_at(a, n->ident);
    if (d->source == AGG_NONE || span.start > span.end ||
        span.end > ((const struct agg_source *)agg_vec_at(&a->sources, d->source))->text_len)
        return NULL;
    *none = false;
    struct line_key k = {n->ident, span.start};
    uint32_t h = agg_hash_u32(agg_hash_u32(0x5bd1e995u, n->ident), span.start);
    uint32_t off = agg_index_find(&a->hot_index, h, line_eq, a, &k);
    return off == AGG_NONE ? NULL : agg_bucket_at(a, off);
}

static inline void run_site_flush(struct agg *a, struct run_site *rs);

static void run_site_derive(struct agg *a, struct run_site *rs, struct wire_site ws)
{
    run_site_flush(a, rs); /* what it summed for the site it knew before */
    *rs = (struct run_site){.known = true};
    if (a->keep_node_self) /* its per-node costs go the general way */
        return;
    struct agg_node *n = ws.stack < a->nodes.len ? agg_node_at(a, ws.stack) : NULL;
    rs->node = n && !(n->flags & AGG_NODE_INVALID) ? n : NULL;
    if (!rs->node) {
        rs->fast = true;
        return;
    }
    bool none;
    rs->line = existing_line(a, n, ws.span, &none);
    if (n->leaf_bucket == AGG_NONE || n->chain_bucket == AGG_NONE || (!rs->line && !none))
        return;
    rs->site = agg_bucket_at(a, n->leaf_bucket);
    rs->chain = agg_bucket_at(a, n->chain_bucket);
    rs->fast = true;
}

/* Adds what the short way summed at a site: pressure() of its allocates
 * and folds, and the folds' frees. */
static __attribute__((noinline)) void run_site_add(struct agg *a, struct run_site *rs)
{
    struct agg_mem *m = &a->mem;
    m->allocation_count += rs->count;
    m->resize_count += rs->resizes;
    m->allocated_bytes += rs->bytes;
    m->free_count += rs->folds;
    m->freed_bytes += rs->folded;
    if (rs->node) {
        m->attributed += rs->bytes;
        rs->site->allocation_count += rs->count;
        rs->site->resize_count += rs->resizes;
        rs->site->allocated_bytes += rs->bytes;
        rs->site->freed_bytes += rs->folded;
        rs->chain->bytes += rs->bytes;
        if (rs->line) {
            rs->line->bytes += rs->bytes;
            rs->line->count += rs->count;
        }
    }
    rs->count = rs->bytes = rs->folds = rs->folded = rs->resizes = 0;
}

/* run_site_add when the site summed anything: in line, as recursive code
 * names a new site at nearly every allocate and sums nothing there. */
static inline void run_site_flush(struct agg *a, struct run_site *rs)
{
    if (rs->count | rs->resizes)
        run_site_add(a, rs);
}

/* Whether the short way may read a run's entries: the stream's totals,
 * sequence and ids are below 2^62, so that its steps cannot pass 2^64 - 1
 * (a run holds fewer than 2^22 entries, each adding less than 2^40
 * bytes and a sequence or id step of at most 2^40 + 4), and the next id
 * is past the aggregation's (only events fed beside the decoder make it
 * otherwise). */
struct run_quick {
    bool on;
};

static void run_quick_check(const struct agg *a, const struct wire_compact_rule *r,
                            struct run_quick *q)
{
    const struct agg_mem *m = &a->mem;
    const uint64_t far = UINT64_C(1) << 62;
    q->on = r->r.have && r->r.last < far && r->r.next_id < far && m->allocated_bytes < far &&
            !(m->have_id && r->r.next_id <= m->max_id);
}

/* Before an event the general way reads the totals: the sums go where
 * they belong. */
static void run_flush(struct agg *a, struct run_site rs[2])
{
    run_site_flush(a, &rs[0]);
    run_site_flush(a, &rs[1]);
}

/* Forgets what the run knows of its sites, once what it summed there is
 * added: an event made buckets (the arena only grows, and nothing else
 * moves what the run points at). */
static void run_forget(struct agg *a, struct run_site rs[2])
{
    run_flush(a, rs);
    rs[0].known = rs[1].known = false;
}

/* The stored node of a quick event's stack, or NULL: stored nodes are
 * defined stacks (the run's rule checked the stack). */
static inline __attribute__((always_inline)) struct agg_node *quick_node(struct agg *a,
                                                                         uint32_t stack)
{
    if (__builtin_expect(stack >= a->nodes.len, 0))
        return NULL;
    struct agg_node *n = agg_node_at(a, stack);
    return n->flags & AGG_NODE_INVALID ? NULL : n;
}

/* A quick allocate's record and live bytes (mem_allocate after the
 * pressure, which the run sums).  This and the other quick steps are in
 * line: a call's saved registers cost more than the spills they save. */
static inline __attribute__((always_inline)) void
quick_allocate(struct agg *a, uint64_t id, uint64_t size, const struct run_site *at)
{
    a->mem.events++;
    keep_record(a, id, size, at->site, at->node, false, false);
}

/* A quick free: mem_free. */
static inline __attribute__((always_inline)) void quick_free(struct agg *a, uint64_t seq,
                                                             uint64_t id, uint64_t old)
{
    struct wire_alloc e = {seq, WIRE_OP_FREE, id, old, WIRE_NONE64, {0, 0, 0}, 0, {0, 0}};
    a->mem.events++;
    mem_free(a, &e, false, false);
}

/* A quick resize's record (mem_resize after the pressure, which the run
 * sums): false, with nothing changed, when it is not the common case (a
 * tracked record of the old size, neither size kept whole), which the
 * general way then takes.  *found is the record when the run knows it
 * (NULL: looked up, and set). */
static inline __attribute__((always_inline)) bool
quick_resize(struct agg *a, uint64_t id, uint64_t old, uint64_t neu, uint64_t **found)
{
    uint64_t *r = *found ? *found : live_track_find(&a->mem.track, id);
    *found = r;
    if (!r || (*r & SIZE_MASK) != old || old >= SIZE_MASK || neu >= SIZE_MASK)
        return false;
    a->mem.events++;
    uint64_t site = *r & ~SIZE_MASK, shrink = pick(neu < old, old - neu, 0);
    uint32_t ref = (uint32_t)(site >> AGG_MEM_SIZE_BITS);
    struct creator c = creator_at(a, ref, false);
    a->mem.freed_bytes += shrink;
    if (c.site)
        c.site->freed_bytes += shrink;
    *r = neu | site;
    live_change(a, c, ref, neu - old, false, false, false);
    return true;
}

/* An allocate, fold or resize of a quick run at a site the run does not
 * know fast: the general way (mem_event); out of line, as it is rare.
 * What the run summed may wait: in a quick run these events only add to
 * the sums (their checks of 2^64 - 1 cannot fail, run_quick_check) and
 * read the ids, which are kept as they go. */
static __attribute__((noinline)) void quick_general(struct agg *a, struct run_site rs[2],
                                                    const struct wire_alloc *e)
{
    size_t used = a->arena_used;
    mem_event(a, e, true, false, false);
    if (a->arena_used != used)
        run_forget(a, rs);
}

/* An entry of a run the general way, once what the run summed is
 * added: quick_general's copy of the per-event path, not one of its own
 * (the daemon's code is resident whole, and each copy is 4 KiB of it). */
static void general_event(struct agg *a, const struct wire_alloc *e, struct run_site rs[2])
{
    run_flush(a, rs);
    quick_general(a, rs, e);
}

/* An allocate of a quick run at a site the run does not know fast
 * (recursive code names a new site at nearly every allocation):
 * mem_allocate without what the run checked (the id is new, the bytes
 * fit: run_quick_check). */
static inline __attribute__((always_inline)) void quick_allocate_at(struct agg *a,
                                                                    struct run_site rs[2],
                                                                    uint64_t id, uint64_t size,
                                                                    struct wire_site ws)
{
    struct agg_mem *m = &a->mem;
    struct agg_node *node = quick_node(a, ws.stack);
    size_t used = a->arena_used;
    m->events++;
    m->have_id = true, m->max_id = id;
    m->allocation_count++;
    struct agg_siteb *s = pressure(a, node, size, true, ws.span, false);
    keep_record(a, id, size, s, node, false, false);
    if (a->arena_used != used)
        run_forget(a, rs);
}

/* A resize of a quick run at a site the run does not know fast, in the
 * common case quick_resize takes (else false, with nothing changed):
 * mem_resize without what the run checked. */
static inline __attribute__((always_inline)) bool quick_resize_at(struct agg *a,
                                                                  struct run_site rs[2],
                                                                  uint64_t id, uint64_t old,
                                                                  uint64_t neu, struct wire_site ws)
{
    struct agg_mem *m = &a->mem;
    uint64_t *r = live_track_find(&m->track, id);
    if (!r || (*r & SIZE_MASK) != old || old >= SIZE_MASK || neu >= SIZE_MASK)
        return false;
    struct agg_node *node = quick_node(a, ws.stack);
    size_t used = a->arena_used;
    m->events++;
    m->resize_count++;
    pressure(a, node, pick(neu > old, neu - old, 0), false, ws.span, false);
    if (__builtin_expect(m->limited, 0)) { /* the records made room for a bucket: r is gone */
        run_forget(a, rs);
        return true;
    }
    uint64_t site = *r & ~SIZE_MASK, shrink = pick(neu < old, old - neu, 0);
    uint32_t ref = (uint32_t)(site >> AGG_MEM_SIZE_BITS);
    struct creator c = creator_at(a, ref, false);
    m->freed_bytes += shrink;
    if (c.site)
        c.site->freed_bytes += shrink;
    *r = neu | site;
    live_change(a, c, ref, neu - old, false, false, false);
    if (a->arena_used != used)
        run_forget(a, rs);
    return true;
}

/* With tasks, an entry a run aggregated without an error is credited to
 * its task (as agg_alloc credits one it aggregates), `creator` being the
 * creator's word its record held before (agg_tasks_creator).  (The runs
 * that keep the tasks' pairs of stack nodes, which read the
 * aggregation's current task, go entry by entry.) */
static inline __attribute__((always_inline)) void
run_credit(struct agg *a, bool tasks, uint64_t errors_before, uint8_t op, uint64_t id, uint64_t old,
           uint64_t neu, uint32_t task, uint32_t stack, uint64_t creator)
{
    if (tasks && a->errors == errors_before)
        agg_tasks_credit_in(a, op, id, old, neu, task, stack, creator);
}

/* An entry of a run names the last site (c == *cur) or the other of the
 * two, which then becomes the last. */
static inline __attribute__((always_inline)) void
run_name_site(struct wire_compact_rule *r, struct wire_site *s0, unsigned *cur, unsigned c)
{
    if (c != *cur) {
        struct wire_site t = r->s.site[0];
        r->s.site[0] = r->s.site[1], r->s.site[1] = t;
        *s0 = r->s.site[0];
    }
    *cur = c;
}

/* Whether header h is one the run's short ways read: the sequence
 * inline and one of the two sites, no id, context or reserved bit. */
static inline __attribute__((always_inline)) bool run_short_header(uint8_t h)
{
    const unsigned read = WIRE_CH_SEQ | WIRE_SITE_OTHER << WIRE_CH_SITE_SHIFT;
    return (h & ~read & 0xffu) == 0 && (h & WIRE_CH_SEQ) != WIRE_CH_SEQ_VARINT;
}

/* The run site such a header names, the last being rs[cur]. */
static inline __attribute__((always_inline)) unsigned run_short_site(uint8_t h, unsigned cur)
{
    return h & (WIRE_SITE_OTHER << WIRE_CH_SITE_SHIFT) ? cur ^ 1 : cur;
}

/* The compact entries a run reads without wire_compact_take, while they
 * last: an allocate, fold, resize or free with the execution context
 * unchanged (an allocate's id may be anything past the floor, a site
 * new or one of the two remembered, every varint any length).  Every
 * rule of the decoder is checked here but what cannot fail in a run that
 * run_quick_check let through (sizes and steps here are below 2^40).  An
 * allocate, fold or resize at a site the run knows fast is summed there
 * (its record and live bytes at once); at any other site it goes the
 * general way.  A resize of no tracked record of its old size, or
 * anything else, stops it (the outer loop then takes the entry).
 * Returns where it stopped; *n counts the entries.  `tasks` (each entry
 * credited to its task) is a constant of each of its two copies: tested
 * at each entry, it and the error count were a twentieth of a run
 * without tasks. */
static inline __attribute__((always_inline)) const uint8_t *
quick_entries(struct agg *a, const uint8_t *p, const uint8_t *end, uint32_t room, uint32_t *n_io,
              struct wire_compact_rule *r, struct run_site rs[2], unsigned *cur_io, bool tasks)
{
    uint64_t last = r->r.last, next = r->r.next_id;
    /* the last site in a local, beside the rule's two: read back from
     * the rule, each entry's copy of a new site was eight bytes that two
     * smaller stores had written, which the processor cannot forward (a
     * stall of a dozen cycles at each allocate of recursive code) */
    struct wire_site s0 = r->s.site[0];
    uint64_t *resized = NULL; /* the live record of the last resize's allocation */
    unsigned cur = *cur_io;
    uint32_t n = *n_io;
    struct agg_mem *m = &a->mem;
    const uint64_t big = UINT64_C(1) << 40;
    while (n < room && end - p >= 2) {
        uint64_t errors = tasks ? a->errors : 0;
        uint8_t kind = p[0];
        /* the commonest entry of a string built by appending, first: a
         * RESIZE_AGAIN at one of the two sites, the sequence inline, the
         * run knowing the site fast and the allocation's record */
        uint8_t h0 = p[1];
        if (kind == WIRE_ENTRY_RESIZE_AGAIN && resized && run_short_header(h0)) {
            unsigned c = run_short_site(h0, cur);
            struct run_site *at = &rs[c];
            uint64_t z, old = r->s.resized_size, neu;
            const uint8_t *q = wire_varint_get(p + 2, end, &z);
            if (q && at->known && at->fast && (neu = wire_unzigzag(old, z)) < SIZE_MASK &&
                old < SIZE_MASK && (*resized & SIZE_MASK) == old) {
                run_name_site(r, &s0, &cur, c);
                last += (h0 & WIRE_CH_SEQ) + 1u;
                p = q, n++;
                r->s.resized_size = neu;
                uint64_t cw = tasks ? agg_tasks_creator(a, WIRE_OP_RESIZE, r->s.resized_id) : 0;
                quick_resize(a, r->s.resized_id, old, neu, &resized);
                at->resizes++, at->bytes += pick(neu > old, neu - old, 0);
                run_credit(a, tasks, errors, WIRE_OP_RESIZE, r->s.resized_id, old, neu,
                           r->s.exec.task, s0.stack, cw);
                continue;
            }
        }
        /* next, the commonest entry of string building: a FOLD at one of
         * the two sites, the sequence inline, the id the next, the run
         * knowing the site fast (its sums are the run's) */
        if (kind == WIRE_ENTRY_ALLOCATE && p[1] != 0 && end - p >= 4) {
            uint8_t h2 = p[2];
            unsigned c = run_short_site(h2, cur);
            struct run_site *at = &rs[c];
            uint64_t neu;
            const uint8_t *q;
            if (run_short_header(h2) && at->known && at->fast &&
                (q = wire_varint_get(p + 3, end, &neu)) && neu < SIZE_MASK) {
                run_name_site(r, &s0, &cur, c);
                last += (h2 & WIRE_CH_SEQ) + 1u;
                uint64_t id = next++, free_seq = last + p[1];
                p = q, n++;
                at->count++, at->bytes += neu;
                at->folds++, at->folded += neu;
                m->have_id = true, m->max_id = id;
                run_credit(a, tasks, errors, WIRE_OP_FOLD, id, free_seq, neu, r->s.exec.task,
                           s0.stack, 0);
                continue;
            }
        }
        /* next, the commonest of a structure's teardown: a FREE at one
         * of the two sites, the sequence inline */
        if (kind == WIRE_ENTRY_FREE && run_short_header(h0)) {
            uint64_t v, old;
            const uint8_t *q = wire_varint_get(p + 2, end, &v);
            if (q && v < next && (q = wire_varint_get(q, end, &old)) && old < SIZE_MASK) {
                run_name_site(r, &s0, &cur, run_short_site(h0, cur));
                last += (h0 & WIRE_CH_SEQ) + 1u;
                p = q, n++;
                uint64_t id = next - 1 - v;
                uint64_t cw = tasks ? agg_tasks_creator(a, WIRE_OP_FREE, id) : 0;
                quick_free(a, last, id, old);
                resized = NULL;
                run_credit(a, tasks, errors, WIRE_OP_FREE, id, old, WIRE_NONE64, r->s.exec.task,
                           s0.stack, cw);
                continue;
            }
        }
        if (kind < WIRE_ENTRY_ALLOCATE || kind > WIRE_ENTRY_RESIZE_AGAIN)
            break;
        bool create = kind == WIRE_ENTRY_ALLOCATE, again = kind == WIRE_ENTRY_RESIZE_AGAIN;
        if (again && !r->s.resized)
            break; /* refused: the general way reports it */
        const uint8_t *q = p + (create ? 3 : 2);
        uint8_t h = q[-1];
        unsigned site = (h & WIRE_CH_SITE) >> WIRE_CH_SITE_SHIFT;
        /* reserved bits, a new context, site field 3; an id bit is an
         * allocate's only */
        if ((h & 0xd0) || site > WIRE_SITE_NEW || (!create && (h & WIRE_CH_ID)) || q > end)
            break;
        uint64_t delta = (h & WIRE_CH_SEQ) + 1u, v, id, old = 0, neu = 0;
        if ((h & WIRE_CH_SEQ) == WIRE_CH_SEQ_VARINT) {
            if (!(q = wire_varint_get(q, end, &v)) || v > big)
                break;
            delta = v + 4;
        }
        if (create) {
            id = next;
            if ((h & WIRE_CH_ID) && (!(q = wire_varint_get(q, end, &v)) || v > big))
                break;
            id += (h & WIRE_CH_ID) ? v + 1 : 0;
            if (!(q = wire_varint_get(q, end, &neu)) || neu >= SIZE_MASK)
                break;
        } else {
            if (again) {
                id = r->s.resized_id, old = r->s.resized_size;
                if (old >= SIZE_MASK)
                    break;
            } else if (!(q = wire_varint_get(q, end, &v)) || v >= next ||
                       !(q = wire_varint_get(q, end, &old)) || old >= SIZE_MASK) {
                break;
            } else {
                id = next - 1 - v;
            }
            if (kind != WIRE_ENTRY_FREE) {
                if (!(q = wire_varint_get(q, end, &v)))
                    break;
                neu = wire_unzigzag(old, v);
                if (neu >= SIZE_MASK)
                    break;
            }
        }
        struct wire_site fresh_site = s0;
        unsigned why;
        if (site == WIRE_SITE_NEW &&
            !(q = wire_compact_get_site(q, end, r->r.n_stacks, &fresh_site, &why)))
            break;
        /* taken: the rule moves past it */
        uint8_t d = create ? p[1] : 0;
        unsigned c = site == WIRE_SITE_LAST ? cur : cur ^ 1;
        struct run_site *at = &rs[c];
        if (site == WIRE_SITE_OTHER) {
            struct wire_site t = r->s.site[0];
            r->s.site[0] = r->s.site[1], r->s.site[1] = t;
            s0 = r->s.site[0];
        } else if (site == WIRE_SITE_NEW) {
            r->s.site[1] = r->s.site[0];
            r->s.site[0] = s0 = fresh_site;
            run_site_flush(a, at);
            at->known = false;
        }
        cur = c;
        last += delta;
        p = q, n++;
        uint64_t cw =
            tasks && !create
                ? agg_tasks_creator(a, kind == WIRE_ENTRY_FREE ? WIRE_OP_FREE : WIRE_OP_RESIZE, id)
                : 0;
        if (kind == WIRE_ENTRY_FREE) {
            quick_free(a, last, id, old);
            resized = NULL;
            run_credit(a, tasks, errors, WIRE_OP_FREE, id, old, WIRE_NONE64, r->s.exec.task,
                       s0.stack, cw);
            continue;
        }
        /* a site named again is derived once; a new one goes the
         * general way (its pressure finds the buckets through the node
         * and the recent lines) */
        if (site != WIRE_SITE_NEW && !at->known)
            run_site_derive(a, at, s0);
        bool fast = at->known && at->fast;
        if (create && fast) {
            next = id + 1;
            at->count++, at->bytes += neu;
            m->have_id = true, m->max_id = id;
            if (d) {
                at->folds++, at->folded += neu;
            } else {
                quick_allocate(a, id, neu, at);
                resized = NULL;
            }
            run_credit(a, tasks, errors, d ? WIRE_OP_FOLD : WIRE_OP_ALLOCATE, id,
                       d ? last + d : WIRE_NONE64, neu, r->s.exec.task, s0.stack, cw);
            continue;
        }
        if (create && !d) {
            next = id + 1;
            quick_allocate_at(a, rs, id, neu, s0);
            resized = NULL;
            run_credit(a, tasks, errors, WIRE_OP_ALLOCATE, id, WIRE_NONE64, neu, r->s.exec.task,
                       s0.stack, cw);
            continue;
        }
        if (!create) { /* a resize: what a RESIZE_AGAIN refers to from now on */
            /* the record of the last resize's allocation while only folds
             * and resizes came since (nothing moved the records) */
            if (!again)
                resized = NULL;
            r->s.resized = true, r->s.resized_id = id, r->s.resized_size = neu;
        }
        if (!create && fast && quick_resize(a, id, old, neu, &resized)) {
            at->resizes++, at->bytes += pick(neu > old, neu - old, 0);
            run_credit(a, tasks, errors, WIRE_OP_RESIZE, id, old, neu, r->s.exec.task, s0.stack,
                       cw);
            continue;
        }
        resized = NULL;
        if (!create && !fast && quick_resize_at(a, rs, id, old, neu, s0)) {
            run_credit(a, tasks, errors, WIRE_OP_RESIZE, id, old, neu, r->s.exec.task, s0.stack,
                       cw);
            continue;
        }
        if (create)
            next = id + 1;
        struct wire_alloc e = {
            last,     create ? (d ? WIRE_OP_FOLD : WIRE_OP_ALLOCATE) : WIRE_OP_RESIZE,
            id,       create ? (d ? last + d : WIRE_NONE64) : old,
            neu,      r->s.exec,
            s0.stack, s0.span};
        quick_general(a, rs, &e);
        run_credit(a, tasks, errors, e.op, e.allocation_id, e.old_size, e.new_size, e.exec.task,
                   e.stack_id, cw);
    }
    r->r.last = last, r->r.next_id = next;
    *cur_io = cur;
    *n_io = n;
    return p;
}

static __attribute__((noinline)) const uint8_t *
quick_entries_plain(struct agg *a, const uint8_t *p, const uint8_t *end, uint32_t room, uint32_t *n,
                    struct wire_compact_rule *r, struct run_site rs[2], unsigned *cur)
{
    return quick_entries(a, p, end, room, n, r, rs, cur, false);
}

/* With tasks: the rule's context is the run's (a new one stops it). */
static __attribute__((noinline)) const uint8_t *
quick_entries_tasks(struct agg *a, const uint8_t *p, const uint8_t *end, uint32_t room, uint32_t *n,
                    struct wire_compact_rule *r, struct run_site rs[2], unsigned *cur)
{
    return quick_entries(a, p, end, room, n, r, rs, cur, true);
}

/* A run for an export (detail kept, and the tasks' pairs of stack nodes)
 * or a memory timeline (a watcher): each entry the general way, as
 * agg_mem_event takes it. */
static size_t compact_run_each(struct agg *a, const uint8_t *run, const uint8_t *end, uint32_t room,
                               struct wire_compact_rule *rule, const uint8_t **stop)
{
    struct wire_compact_rule r = *rule;
    const uint8_t *p = run;
    uint32_t n = 0;
    bool fresh = false;
    struct wire_alloc e;
    unsigned how, why;
    size_t size;
    for (; n < room && (size = wire_compact_take(p, end, &r, &e, &how, &why)) > 0; n++) {
        p += size;
        if (!fresh && run_entry_stale(a, e.sequence)) {
            agg_alloc(a, &e);
            continue;
        }
        fresh = true;
        if (!a->tasks_on) {
            agg_mem_event(a, &e);
            continue;
        }
        a->cur_task = e.exec.task; /* and its task credited, as agg_alloc does */
        uint64_t cw = agg_tasks_creator(a, e.op, e.allocation_id);
        if (agg_mem_event(a, &e) == 0)
            agg_tasks_alloc(a, &e, cw);
    }
    if (fresh)
        run_passed(a, r.r.last);
    *rule = r;
    *stop = p;
    return n;
}

static bool tables_large(const struct agg *a);

/* A run when the tables outgrow the caches: as mem_run, each entry as
 * it is taken starts the loads of its live record and stack node, and
 * the loads of the buckets they name run WARM entries ahead of the
 * aggregation.  The entries are taken AHEAD entries before they are
 * aggregated, one for one, in a ring, so that the reading (a third of
 * the time here) goes on while the aggregation waits on memory: 3%
 * faster on the memory benchmark than a chunk of 64 read first and then
 * aggregated.  Summing by site saves little here, where each event
 * waits on memory. */
enum { COMPACT_RING = 32, COMPACT_AHEAD = 16 };

_Static_assert(COMPACT_AHEAD + 1 <= COMPACT_RING && COMPACT_AHEAD > (int)WARM &&
                   (COMPACT_RING & (COMPACT_RING - 1)) == 0,
               "the ring holds the entries taken and not yet aggregated");

/* Takes the next entry of a warm run into its ring slot, starting its
 * loads; false when the run ends there. */
static inline __attribute__((always_inline)) bool warm_take(struct agg *a, const uint8_t **p,
                                                            const uint8_t *end,
                                                            struct wire_compact_rule *r,
                                                            struct wire_alloc *slot)
{
    unsigned how, why;
    __builtin_prefetch(*p + 2048); /* as the decoder's runs */
    size_t size = wire_compact_take(*p, end, r, slot, &how, &why);
    if (size == 0)
        return false;
    *p += size;
    warm_far(a, slot, false);
    return true;
}

static size_t compact_run_warm(struct agg *a, const uint8_t *run, const uint8_t *end, uint32_t room,
                               struct wire_compact_rule *rule, const uint8_t **stop)
{
    struct wire_compact_rule r = *rule;
    const uint8_t *p = run;
    uint32_t taken = 0, done = 0;
    bool fresh = false, more = true;
    struct wire_alloc e[COMPACT_RING];
    const uint32_t mask = COMPACT_RING - 1;
    const bool tasks = a->tasks_on;
    while (more && taken < room && taken < COMPACT_AHEAD)
        if ((more = warm_take(a, &p, end, &r, &e[taken])))
            taken++;
    for (uint32_t j = 0; j < taken && j < WARM; j++)
        warm_near_at(a, e[j].stack_id, e[j].allocation_id, false);
    for (; done < taken; done++) {
        if (more && taken < room && (more = warm_take(a, &p, end, &r, &e[taken & mask])))
            taken++;
        if (done + WARM < taken) {
            const struct wire_alloc *w = &e[(done + WARM) & mask];
            warm_near_at(a, w->stack_id, w->allocation_id, false);
        }
        const struct wire_alloc *x = &e[done & mask];
        if (!fresh && run_entry_stale(a, x->sequence)) {
            agg_alloc(a, x);
            continue;
        }
        fresh = true;
        uint64_t cw = tasks ? agg_tasks_creator(a, x->op, x->allocation_id) : 0;
        if (mem_event(a, x, true, false, false) == 0 && tasks)
            agg_tasks_alloc(a, x, cw);
    }
    if (fresh)
        run_passed(a, r.r.last);
    *rule = r;
    *stop = p;
    return taken;
}

size_t agg_mem_compact_run(struct agg *a, const uint8_t *run, const uint8_t *end, uint32_t room,
                           struct wire_compact_rule *rule, const uint8_t **stop)
{
    if (a->detail || a->live_fn || a->task_lines)
        return compact_run_each(a, run, end, room, rule, stop);
    if (tables_large(a))
        return compact_run_warm(a, run, end, room, rule, stop);
    struct wire_compact_rule r = *rule;
    /* rs[cur] is what the run knows of the last site, rs[cur ^ 1] of the
     * one before */
    struct run_site rs[2] = {{0}, {0}};
    unsigned cur = 0;
    struct run_quick q = {0};
    const uint8_t *p = run;
    uint32_t n = 0;
    bool fresh = false, tasks = a->tasks_on;
    struct wire_alloc e;
    while (n < room) {
        if (q.on) {
            p = tasks ? quick_entries_tasks(a, p, end, room, &n, &r, rs, &cur)
                      : quick_entries_plain(a, p, end, room, &n, &r, rs, &cur);
            if (n == room)
                break;
        }
        unsigned how, why;
        size_t size = wire_compact_take(p, end, &r, &e, &how, &why);
        if (size == 0)
            break;
        p += size, n++;
        if (how != WIRE_SITE_LAST)
            cur ^= 1;
        if (how == WIRE_SITE_NEW) {
            run_site_flush(a, &rs[cur]);
            rs[cur].known = false;
        }
        /* the aggregation's own sequence check, as run_stale */
        if (!fresh && run_entry_stale(a, e.sequence)) {
            agg_alloc(a, &e);
            continue;
        }
        fresh = true;
        uint64_t errors = tasks ? a->errors : 0;
        uint64_t cw = tasks ? agg_tasks_creator(a, e.op, e.allocation_id) : 0;
        bool create = e.op == WIRE_OP_ALLOCATE || e.op == WIRE_OP_FOLD;
        if (e.op != WIRE_OP_FREE && !rs[cur].known)
            run_site_derive(a, &rs[cur], r.s.site[0]);
        /* summed as in quick_entries, with its bounds (run_quick_check) */
        if (create && rs[cur].fast && !(a->mem.have_id && e.allocation_id <= a->mem.max_id) &&
            q.on && e.new_size < SIZE_MASK) {
            struct run_site *at = &rs[cur];
            at->count++, at->bytes += e.new_size;
            a->mem.have_id = true, a->mem.max_id = e.allocation_id;
            if (e.op == WIRE_OP_FOLD)
                at->folds++, at->folded += e.new_size;
            else
                quick_allocate(a, e.allocation_id, e.new_size, at);
        } else {
            general_event(a, &e, rs);
        }
        run_credit(a, tasks, errors, e.op, e.allocation_id, e.old_size, e.new_size, e.exec.task,
                   e.stack_id, cw);
        run_quick_check(a, &r, &q);
    }
    run_flush(a, rs);
    if (fresh)
        run_passed(a, r.r.last);
    *rule = r;
    *stop = p;
    return n;
}

/* Whether what events reach at random (live records, stack nodes and
 * their detail, buckets) outgrows what the caches keep: only then do the
 * prefetches save more than their instructions cost (about a fifth of an
 * event's). */
static bool tables_large(const struct agg *a)
{
    size_t per_node = sizeof(struct agg_node) + (a->detail ? sizeof(struct agg_node_detail) : 0);
    return agg_mem_bytes(a) + (size_t)a->nodes.len * per_node > a->mem.warm_bytes;
}

void agg_prefetch_above(struct agg *a, size_t bytes)
{
    a->mem.warm_bytes = bytes;
}

/* Five copies of the loop: the daemon's and replay's, and an export's
 * with detail kept, each with and without prefetching, and a memory
 * timeline's with its watcher (which is for aggregations without
 * detail, as in agg_mem_event: with detail a live record names a node,
 * not a site). */
size_t agg_mem_run(struct agg *a, const uint8_t *run, size_t room, struct wire_alloc_rule *rule)
{
    if (__builtin_expect(a->live_fn != NULL, 0) && !a->detail)
        return mem_run(a, run, room, rule, false, true);
    bool warm = tables_large(a);
    if (a->detail)
        return warm ? mem_run(a, run, room, rule, true, false)
                    : mem_run_cached(a, run, room, rule, true);
    return warm ? mem_run(a, run, room, rule, false, false)
                : mem_run_cached(a, run, room, rule, false);
}

void agg_mem_free(struct agg *a)
{
    live_track_free(&a->mem.track);
}
