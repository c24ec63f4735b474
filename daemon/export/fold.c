/* fold: a capture's stacks folded into a tree of frames (see fold.h). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>

#include "daemon/export/fold.h"
#include "daemon/export/fold_live.h"
#include "proto/util/mix64.h"
#include "proto/wire-internal.h"

/* A display name, `namespace.function`, stored in the name arena. */
struct fold_name {
    size_t off;
    uint32_t len;
};

/* What a memory capture keeps per creation site (a stack node, or the
 * site of events without a stack).  live_at_peak is captured lazily, as
 * DESIGN section 6 describes: `at_peak` is valid for peak `epoch`; a
 * site whose epoch is older still holds its value at the latest peak in
 * `live`, since it has not changed since. */
struct fold_site {
    uint64_t live, at_peak;
    uint64_t epoch;
};

/* Makes room for element `n` of a doubling array; 0 or -1 (out of memory). */
#define GROW(f, arr, n, cap)                                                                       \
    ((n) < (cap) ? 0 : fold_grow((f), (void **)&(arr), &(cap), sizeof *(arr)))

/* The folder's state.  Reading fills the name, FUNC and STACK tables, the
 * tree (nodes are created when a STACK names a new (parent, name) pair,
 * so a child's id is always above its parent's) and, for every event, the
 * per-stack values and the live allocations.  At FINISH the chosen weight
 * is moved to the tree's self values, summed into totals and the children
 * are listed in name order.  Everything is owned here and freed by
 * fold_free. */
struct fold {
    uint8_t mode;
    enum fold_weight weight;
    enum fold_names name_form;
    const char *partial;
    struct fold_totals t;
    bool nomem;
    /* Names: the arena, the table and an open-addressing index (id + 1). */
    char *arena;
    size_t arena_len, arena_cap;
    struct fold_name *names;
    uint32_t n_names, names_cap;
    uint32_t *name_index;
    uint32_t name_index_cap; /* a power of two, at least twice n_names */
    /* FUNC id -> name. */
    uint32_t *func_name;
    uint32_t n_funcs, funcs_cap;
    /* STACK id -> tree node and, for the retained and live-at-peak
     * weights, its site (NULL otherwise: other weights go straight to the
     * node's self value). */
    uint32_t *stack_node;
    struct fold_site *sites;
    uint32_t n_stacks, stacks_cap;
    struct fold_site no_site;
    /* The tree and its (parent, name) -> node index (id + 1). */
    struct fold_node *nodes;
    uint32_t n_nodes, nodes_cap;
    uint32_t *node_index;
    uint32_t node_index_cap;
    uint32_t *children; /* filled by link_children(): children, sorted */
    uint32_t max_depth;
    struct fold_lives lives;
    uint64_t live_total, peak_epoch;
};

static int fold_grow(struct fold *f, void **arr, uint32_t *cap, size_t size)
{
    uint32_t ncap = *cap ? *cap * 2 : 16;
    if (ncap <= *cap) {
        f->nomem = true;
        return -1;
    }
    void *p = realloc(*arr, (size_t)ncap * size);
    if (!p) {
        f->nomem = true;
        return -1;
    }
    *arr = p, *cap = ncap;
    return 0;
}

static uint64_t hash_bytes(const char *s, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
    return h;
}

/* ---- names ---- */

static const char *name_ptr(const struct fold *f, uint32_t name)
{
    return f->arena + f->names[name].off;
}

static bool name_eq(const struct fold *f, uint32_t name, const char *s, size_t len)
{
    return f->names[name].len == len && memcmp(name_ptr(f, name), s, len) == 0;
}

/* Adds entry n - 1 to an open-addressing index of entries 0..n-1 (slot
 * value id + 1), rebuilding it at twice the size when it is half full. */
static int index_add(struct fold *f, uint32_t **index, uint32_t *cap, uint32_t n,
                     uint64_t (*hash)(const struct fold *, uint32_t))
{
    uint32_t first = n - 1;
    if ((uint64_t)*cap < 2 * (uint64_t)n + 2) {
        uint64_t ncap = *cap ? *cap : 32;
        while (ncap < 2 * (uint64_t)n + 2)
            ncap *= 2;
        if (ncap > UINT32_MAX)
            return f->nomem = true, -1;
        uint32_t *idx = calloc(ncap, sizeof *idx);
        if (!idx) {
            f->nomem = true;
            return -1;
        }
        free(*index);
        *index = idx, *cap = (uint32_t)ncap, first = 0;
    }
    for (uint32_t i = first; i < n; i++) {
        uint64_t h = hash(f, i);
        while ((*index)[h & (*cap - 1)])
            h++;
        (*index)[h & (*cap - 1)] = i + 1;
    }
    return 0;
}

static uint64_t name_hash(const struct fold *f, uint32_t name)
{
    return hash_bytes(name_ptr(f, name), f->names[name].len);
}

/* Appends len bytes; in the collapsed name form a frame's text is made
 * safe for a folded line (the format has no escapes). */
static int arena_put(struct fold *f, const char *s, size_t len)
{
    if (f->arena_cap - f->arena_len < len) {
        size_t ncap = f->arena_cap ? f->arena_cap : 4096;
        while (ncap - f->arena_len < len)
            ncap *= 2;
        char *p = realloc(f->arena, ncap);
        if (!p) {
            f->nomem = true;
            return -1;
        }
        f->arena = p, f->arena_cap = ncap;
    }
    char *d = f->arena + f->arena_len;
    if (f->name_form == FOLD_NAMES_COLLAPSED) {
        for (size_t i = 0; i < len; i++) {
            unsigned char c = (unsigned char)s[i];
            d[i] = (char)(c == ';' ? ':' : c < 0x20 || c == 0x7f ? '?' : c);
        }
    } else {
        memcpy(d, s, len);
    }
    f->arena_len += len;
    return 0;
}

/* Interns `ns.fn`; returns its name id or UINT32_MAX when out of memory. */
static uint32_t intern(struct fold *f, struct wire_str ns, struct wire_str fn)
{
    size_t len = (size_t)ns.len + 1 + fn.len;
    size_t off = f->arena_len;
    if (arena_put(f, ns.ptr, ns.len) || arena_put(f, ".", 1) || arena_put(f, fn.ptr, fn.len))
        return UINT32_MAX;
    uint64_t h = hash_bytes(f->arena + off, len);
    for (uint32_t *idx = f->name_index; idx; h++) {
        uint32_t slot = idx[h & (f->name_index_cap - 1)];
        if (slot == 0)
            break;
        if (name_eq(f, slot - 1, f->arena + off, len)) {
            f->arena_len = off; /* already known: drop the copy */
            return slot - 1;
        }
    }
    if (GROW(f, f->names, f->n_names, f->names_cap) != 0)
        return UINT32_MAX;
    f->names[f->n_names++] = (struct fold_name){off, (uint32_t)len};
    if (index_add(f, &f->name_index, &f->name_index_cap, f->n_names, name_hash) != 0)
        return UINT32_MAX;
    return f->n_names - 1;
}

/* ---- the tree ---- */

static uint64_t node_key_hash(uint32_t parent, uint32_t name)
{
    return mix64((uint64_t)parent << 32 | name);
}

static uint64_t node_hash(const struct fold *f, uint32_t node)
{
    return node_key_hash(f->nodes[node].parent, f->nodes[node].name);
}

static uint32_t add_node(struct fold *f, uint32_t parent, uint32_t name)
{
    if (GROW(f, f->nodes, f->n_nodes, f->nodes_cap) != 0)
        return FOLD_NO_NODE;
    uint32_t depth = parent == FOLD_NO_NODE ? 0 : f->nodes[parent].depth + 1;
    f->nodes[f->n_nodes] = (struct fold_node){name, parent, depth, FOLD_NO_NODE, 0, 0, 0};
    if (depth > f->max_depth)
        f->max_depth = depth;
    return f->n_nodes++;
}

/* The child of `parent` named `name`, created when new. */
static uint32_t child_node(struct fold *f, uint32_t parent, uint32_t name)
{
    uint64_t h = node_key_hash(parent, name);
    for (; f->node_index_cap; h++) {
        uint32_t slot = f->node_index[h & (f->node_index_cap - 1)];
        if (slot == 0)
            break;
        const struct fold_node *n = &f->nodes[slot - 1];
        if (n->parent == parent && n->name == name)
            return slot - 1;
    }
    uint32_t id = add_node(f, parent, name);
    if (id == FOLD_NO_NODE ||
        index_add(f, &f->node_index, &f->node_index_cap, f->n_nodes, node_hash) != 0)
        return FOLD_NO_NODE;
    return id;
}

/* ---- records ---- */

/* Fails the decoder with a message about the current frame, so that the
 * error carries the frame's byte offset like the decoder's own. */
__attribute__((format(printf, 2, 3))) static int bad_event(struct capture_reader *r,
                                                           const char *fmt, ...)
{
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    wire_fail(capture_reader_decoder(r), WIRE_E_RANGE, "%s", msg);
    return -1;
}

static int on_hello(struct fold *f, const struct wire_hello *h)
{
    f->mode = h->mode;
    if (f->weight == FOLD_WEIGHT_DEFAULT)
        f->weight = h->mode == WIRE_MODE_CPU ? FOLD_WEIGHT_SAMPLES : FOLD_WEIGHT_ALLOCATED;
    bool cpu_weight = f->weight == FOLD_WEIGHT_SAMPLES;
    return cpu_weight == (h->mode == WIRE_MODE_CPU) ? 0 : -1;
}

static int on_func(struct fold *f, const struct wire_func *fn)
{
    if (GROW(f, f->func_name, f->n_funcs, f->funcs_cap) != 0)
        return -1;
    uint32_t name = intern(f, fn->ns, fn->name);
    if (name == UINT32_MAX)
        return -1;
    f->func_name[f->n_funcs++] = name;
    return 0;
}

static bool per_site(enum fold_weight w)
{
    return w == FOLD_WEIGHT_RETAINED || w == FOLD_WEIGHT_LIVE_AT_PEAK;
}

/* Grows the per-stack arrays together. */
static int grow_stacks(struct fold *f)
{
    uint32_t cap = f->stacks_cap ? f->stacks_cap * 2 : 64;
    if (cap <= f->stacks_cap)
        return f->nomem = true, -1;
    uint32_t *n = realloc(f->stack_node, (size_t)cap * sizeof *n);
    if (!n)
        return f->nomem = true, -1;
    f->stack_node = n;
    if (per_site(f->weight)) {
        struct fold_site *st = realloc(f->sites, (size_t)cap * sizeof *st);
        if (!st)
            return f->nomem = true, -1;
        f->sites = st;
    }
    f->stacks_cap = cap;
    return 0;
}

/* The self value of a stack's tree node. */
static uint64_t *stack_self(struct fold *f, uint32_t stack)
{
    return &f->nodes[f->stack_node[stack]].self;
}

static int on_stack(struct fold *f, struct capture_reader *r, const struct wire_stack *s)
{
    if (f->n_stacks == f->stacks_cap && grow_stacks(f) != 0)
        return -1;
    /* the decoder checked that parent and func are defined */
    uint32_t parent = s->parent == WIRE_NONE32 ? FOLD_ROOT : f->stack_node[s->parent];
    if (f->nodes[parent].depth >= WIRE_MAX_STACK_DEPTH) /* as the daemon refuses it */
        return bad_event(r, "STACK record %u: deeper than %d frames", s->stack_id + 1,
                         WIRE_MAX_STACK_DEPTH);
    uint32_t node = child_node(f, parent, f->func_name[s->func_id]);
    if (node == FOLD_NO_NODE)
        return -1;
    f->stack_node[f->n_stacks] = node;
    if (f->sites)
        f->sites[f->n_stacks] = (struct fold_site){0, 0, 0};
    f->n_stacks++;
    return 0;
}

static void on_sample(struct fold *f, const struct wire_sample *s)
{
    f->t.samples++;
    switch (s->state) {
    case WIRE_STATE_JETT:
        f->t.jett_samples++;
        (*stack_self(f, s->stack_id))++; /* a jett sample always has a stack */
        break;
    case WIRE_STATE_RUNTIME:
        f->t.runtime_samples++;
        break;
    case WIRE_STATE_WAITING:
        f->t.waiting_samples++;
        break;
    default:
        f->t.unavailable_samples++;
    }
}

/* ---- memory events ---- */

static struct fold_site *site_of(struct fold *f, uint32_t site)
{
    return site == FOLD_NO_SITE || !f->sites ? &f->no_site : &f->sites[site];
}

/* A site's live bytes go from `old` to `neu` (of one allocation); the
 * global peak is recorded.  The caller checked the total cannot overflow. */
static void site_change(struct fold *f, uint32_t site, uint64_t old, uint64_t neu)
{
    struct fold_site *s = site_of(f, site);
    if (s->epoch != f->peak_epoch) {
        s->at_peak = s->live;
        s->epoch = f->peak_epoch;
    }
    s->live = s->live - old + neu;
    f->live_total = f->live_total - old + neu;
    if (f->live_total > f->t.peak_live_bytes) {
        f->t.peak_live_bytes = f->live_total;
        f->peak_epoch++;
    }
}

static bool weighs(const struct fold *f, enum fold_weight w, uint32_t stack)
{
    return f->weight == w && stack != WIRE_NONE32;
}

static int on_allocate(struct fold *f, struct capture_reader *r, const struct wire_alloc *a)
{
    struct fold_live_ref ref;
    if (fold_lives_find(&f->lives, a->allocation_id, &ref))
        return bad_event(r, "ALLOC.allocation_id: allocation %" PRIu64 " is already live",
                         a->allocation_id);
    if (a->new_size > UINT64_MAX - f->t.allocated_bytes || a->new_size > UINT64_MAX - f->live_total)
        return bad_event(r, "ALLOC.new_size: %" PRIu64 " bytes overflow the totals", a->new_size);
    uint32_t site = a->stack_id == WIRE_NONE32 ? FOLD_NO_SITE : a->stack_id;
    if (fold_lives_add(&f->lives, a->allocation_id, a->new_size, site) != 0)
        return f->nomem = true, -1;
    f->t.allocations++;
    f->t.allocated_bytes += a->new_size;
    if (weighs(f, FOLD_WEIGHT_ALLOCATED, a->stack_id))
        *stack_self(f, a->stack_id) += a->new_size;
    if (weighs(f, FOLD_WEIGHT_COUNT, a->stack_id))
        (*stack_self(f, a->stack_id))++;
    site_change(f, site, 0, a->new_size);
    return 0;
}

/* The live allocation a resize or free names, its old size checked. */
static bool live_for(struct fold *f, struct capture_reader *r, const struct wire_alloc *a,
                     struct fold_live_ref *ref)
{
    if (!fold_lives_find(&f->lives, a->allocation_id, ref))
        bad_event(r, "ALLOC.allocation_id: allocation %" PRIu64 " is not live", a->allocation_id);
    else if (fold_live_size(ref) != a->old_size)
        bad_event(r, "ALLOC.old_size: %" PRIu64 " is not the live size %" PRIu64, a->old_size,
                  fold_live_size(ref));
    else
        return true;
    return false;
}

static int on_resize(struct fold *f, struct capture_reader *r, const struct wire_alloc *a)
{
    struct fold_live_ref ref;
    if (!live_for(f, r, a, &ref))
        return -1;
    uint64_t growth = a->new_size > a->old_size ? a->new_size - a->old_size : 0;
    if (growth > UINT64_MAX - f->t.allocated_bytes || growth > UINT64_MAX - f->live_total)
        return bad_event(r, "ALLOC.new_size: %" PRIu64 " bytes overflow the totals", a->new_size);
    uint32_t site = fold_live_site(&ref);
    if (fold_lives_resize(&f->lives, &ref, a->new_size) != 0)
        return f->nomem = true, -1;
    f->t.resizes++;
    if (growth) {
        f->t.allocated_bytes += growth;
        if (weighs(f, FOLD_WEIGHT_ALLOCATED, a->stack_id))
            *stack_self(f, a->stack_id) += growth;
    } else {
        f->t.freed_bytes += a->old_size - a->new_size;
    }
    site_change(f, site, a->old_size, a->new_size);
    return 0;
}

static int on_free(struct fold *f, struct capture_reader *r, const struct wire_alloc *a)
{
    struct fold_live_ref ref;
    if (!live_for(f, r, a, &ref))
        return -1;
    f->t.frees++;
    f->t.freed_bytes += a->old_size;
    site_change(f, fold_live_site(&ref), a->old_size, 0);
    fold_lives_remove(&f->lives, &ref);
    return 0;
}

static int on_alloc(struct fold *f, struct capture_reader *r, const struct wire_alloc *a)
{
    if (a->op == WIRE_OP_ALLOCATE)
        return on_allocate(f, r, a);
    if (a->op == WIRE_OP_RESIZE)
        return on_resize(f, r, a);
    return on_free(f, r, a);
}

/* ---- reading ---- */

static int on_event(struct fold *f, struct capture_reader *r, const struct wire_event *ev)
{
    if (ev->kind == WIRE_ENTRY_STACK)
        return on_stack(f, r, &ev->u.stack);
    if (ev->kind == WIRE_ENTRY_SAMPLE)
        return on_sample(f, &ev->u.sample), 0;
    return on_alloc(f, r, &ev->u.alloc);
}

/* The events of one frame, decoded a few at a time so that what they
 * touch in no order (live-table slots, stack entries, then tree nodes)
 * is fetched while earlier ones are handled.  Errors name the frame, so
 * decoding ahead within it changes no message. */
static int on_events(struct fold *f, struct capture_reader *r, const struct wire_events *evs)
{
    enum { BATCH = 16 };
    struct wire_events_iter it;
    struct wire_event ev[BATCH];
    int rc = 1;
    wire_events_begin(&it, evs);
    while (rc > 0) {
        unsigned n;
        rc = wire_events_batch(capture_reader_decoder(r), &it, ev, BATCH, &n);
        for (unsigned i = 0; i < n; i++) {
            uint32_t stack = wire_event_stack(&ev[i]);
            if (stack < f->n_stacks)
                __builtin_prefetch(&f->stack_node[stack]);
            if (ev[i].kind == WIRE_ENTRY_ALLOC)
                fold_lives_prefetch(&f->lives, ev[i].u.alloc.allocation_id);
        }
        for (unsigned i = 0; i < n; i++) {
            uint32_t stack = wire_event_stack(&ev[i]);
            if (stack < f->n_stacks)
                __builtin_prefetch(&f->nodes[f->stack_node[stack]], 1);
        }
        for (unsigned i = 0; i < n; i++)
            if (on_event(f, r, &ev[i]) != 0)
                return -1;
    }
    return rc;
}

static void on_finish(struct fold *f, const struct wire_finish *fin)
{
    if (fin->collector_failure)
        f->partial = "collector_failure";
    else if (fin->stack_limit)
        f->partial = "stack_capture_limit";
}

/* Handles one record: 0, or -1 (decoder failed, weight mismatch or out of
 * memory, told apart by the caller). */
static int on_record(struct fold *f, struct capture_reader *r, const struct wire_record *rec)
{
    switch (rec->type) {
    case WIRE_HELLO:
        return on_hello(f, &rec->u.hello);
    case WIRE_FUNC:
        return on_func(f, &rec->u.func);
    case WIRE_EVENTS:
        return on_events(f, r, &rec->u.events);
    case WIRE_FINISH:
        on_finish(f, &rec->u.finish);
        return 0;
    default:
        return 0; /* SOURCE: spans are not part of a folded stack */
    }
}

/* Moves the chosen memory weight of each site to its stack. */
static void settle_sites(struct fold *f)
{
    if (f->weight == FOLD_WEIGHT_RETAINED) {
        for (uint32_t s = 0; s < f->n_stacks; s++)
            *stack_self(f, s) += f->sites[s].live;
        f->t.weight_total = f->live_total;
    } else if (f->weight == FOLD_WEIGHT_LIVE_AT_PEAK) {
        for (uint32_t s = 0; s < f->n_stacks; s++) {
            const struct fold_site *st = &f->sites[s];
            *stack_self(f, s) += st->epoch == f->peak_epoch ? st->at_peak : st->live;
        }
        f->t.weight_total = f->t.peak_live_bytes;
    } else if (f->weight == FOLD_WEIGHT_COUNT) {
        f->t.weight_total = f->t.allocations;
    } else if (f->weight == FOLD_WEIGHT_ALLOCATED) {
        f->t.weight_total = f->t.allocated_bytes;
    } else {
        f->t.weight_total = f->t.samples;
    }
    f->t.retained_bytes = f->live_total;
}

/* Sums self values up the tree.  A child is created after its parent, so
 * walking the nodes backwards visits every child before its parent. */
static void sum_tree(struct fold *f)
{
    for (uint32_t i = 0; i < f->n_nodes; i++)
        f->nodes[i].total = f->nodes[i].self;
    for (uint32_t i = f->n_nodes; i-- > 1;)
        f->nodes[f->nodes[i].parent].total += f->nodes[i].total;
    f->t.weight_attributed = f->nodes[FOLD_ROOT].total;
}

static int by_name(const void *a, const void *b, void *ctx)
{
    const struct fold *f = ctx;
    const struct fold_name *x = &f->names[f->nodes[*(const uint32_t *)a].name];
    const struct fold_name *y = &f->names[f->nodes[*(const uint32_t *)b].name];
    int c = memcmp(f->arena + x->off, f->arena + y->off, x->len < y->len ? x->len : y->len);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* Lists each node's children with a non-zero total, sorted by name. */
static int link_children(struct fold *f)
{
    f->children = malloc(((size_t)f->n_nodes + 1) * sizeof *f->children);
    if (!f->children)
        return f->nomem = true, -1;
    uint32_t next = 0;
    f->max_depth = 0;
    for (uint32_t i = 0; i < f->n_nodes; i++)
        f->nodes[i].n_children = 0;
    for (uint32_t i = 1; i < f->n_nodes; i++)
        if (f->nodes[i].total > 0)
            f->nodes[f->nodes[i].parent].n_children++;
    for (uint32_t i = 0; i < f->n_nodes; i++) {
        f->nodes[i].first_child = next;
        next += f->nodes[i].n_children;
        f->nodes[i].n_children = 0;
    }
    for (uint32_t i = 1; i < f->n_nodes; i++) {
        struct fold_node *n = &f->nodes[i];
        if (n->total == 0)
            continue;
        struct fold_node *p = &f->nodes[n->parent];
        f->children[p->first_child + p->n_children++] = i;
        if (n->depth > f->max_depth)
            f->max_depth = n->depth;
    }
    for (uint32_t i = 0; i < f->n_nodes; i++)
        qsort_r(f->children + f->nodes[i].first_child, f->nodes[i].n_children, sizeof *f->children,
                by_name, f);
    return 0;
}

static struct fold *fold_new(enum fold_weight w, enum fold_names names)
{
    struct fold *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->weight = w;
    f->name_form = names;
    if (add_node(f, FOLD_NO_NODE, UINT32_MAX) != FOLD_ROOT ||
        index_add(f, &f->node_index, &f->node_index_cap, 1, node_hash) != 0) {
        fold_free(f);
        return NULL;
    }
    return f;
}

static enum fold_status read_all(struct fold *f, struct capture_reader *r, char *err, size_t errlen)
{
    struct wire_record rec;
    int rc;
    while ((rc = capture_reader_next(r, &rec)) > 0) {
        if (on_record(f, r, &rec) == 0)
            continue;
        if (f->nomem)
            return snprintf(err, errlen, "out of memory"), FOLD_E_NOMEM;
        const struct wire_error *e = wire_decoder_error(capture_reader_decoder(r));
        if (e->code == WIRE_OK)
            return snprintf(err, errlen, "--weight %s does not apply to a %s capture",
                            fold_weight_name(f->weight),
                            f->mode == WIRE_MODE_CPU ? "CPU" : "memory"),
                   FOLD_E_WEIGHT;
        capture_reader_decode_error(r, err, errlen);
        return FOLD_E_CAPTURE;
    }
    if (rc < 0)
        return snprintf(err, errlen, "%s", capture_reader_error(r)), FOLD_E_CAPTURE;
    return FOLD_OK;
}

enum fold_status fold_read(struct capture_reader *r, enum fold_weight w, enum fold_names names,
                           struct fold **out, char *err, size_t errlen)
{
    struct fold *f = fold_new(w, names);
    if (!f)
        return snprintf(err, errlen, "out of memory"), FOLD_E_NOMEM;
    enum fold_status st = read_all(f, r, err, errlen);
    /* the indexes only serve reading: their memory goes to the output */
    free(f->node_index), free(f->name_index);
    f->node_index = f->name_index = NULL;
    if (st == FOLD_OK) {
        settle_sites(f);
        sum_tree(f);
        if (link_children(f) != 0)
            st = FOLD_E_NOMEM, snprintf(err, errlen, "out of memory");
    }
    if (st != FOLD_OK) {
        fold_free(f);
        return st;
    }
    *out = f;
    return FOLD_OK;
}

void fold_free(struct fold *f)
{
    if (!f)
        return;
    free(f->arena), free(f->names), free(f->name_index), free(f->func_name);
    free(f->stack_node), free(f->sites);
    free(f->nodes), free(f->node_index), free(f->children);
    fold_lives_free(&f->lives);
    free(f);
}

/* ---- accessors ---- */

uint8_t fold_mode(const struct fold *f)
{
    return f->mode;
}

enum fold_weight fold_weight(const struct fold *f)
{
    return f->weight;
}

const char *fold_weight_name(enum fold_weight w)
{
    static const char *const names[] = {"default", "samples",  "allocated",
                                        "count",   "retained", "live-at-peak"};
    return (unsigned)w < sizeof names / sizeof names[0] ? names[w] : "?";
}

enum fold_names fold_name_form(const struct fold *f)
{
    return f->name_form;
}

const char *fold_partial_reason(const struct fold *f)
{
    return f->partial;
}

const struct fold_totals *fold_totals(const struct fold *f)
{
    return &f->t;
}

uint32_t fold_node_count(const struct fold *f)
{
    return f->n_nodes;
}

const struct fold_node *fold_node(const struct fold *f, uint32_t id)
{
    return &f->nodes[id];
}

uint32_t fold_child(const struct fold *f, const struct fold_node *n, uint32_t i)
{
    return f->children[n->first_child + i];
}

const char *fold_node_name(const struct fold *f, const struct fold_node *n, size_t *len)
{
    if (n->name == UINT32_MAX) {
        *len = 3;
        return "all";
    }
    *len = f->names[n->name].len;
    return name_ptr(f, n->name);
}

uint32_t fold_max_depth(const struct fold *f)
{
    return f->max_depth;
}
