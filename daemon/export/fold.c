/* fold: a capture's stacks folded into a tree of frames (see fold.h). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/attrib.h"
#include "daemon/escape.h"
#include "daemon/export/fold.h"
#include "daemon/feed.h"
#include "daemon/redact.h"
#include "proto/util/mix64.h"

/* A display name, `namespace.function`, stored in the name arena. */
struct fold_name {
    size_t off;
    uint32_t len;
};

/* A function identity of the aggregation, as frames name it. */
struct fold_ident {
    uint32_t name, ns_len;
    uint32_t source; /* ATTRIB_NONE when unknown */
    uint64_t line;   /* 0 when unknown */
};

/* A source's logical path in the name arena, and its origin. */
struct fold_source {
    size_t off;
    uint32_t len;
    uint8_t origin;
};

/* Makes room for element `n` of a doubling array; 0 or -1 (out of memory). */
#define GROW(f, arr, n, cap)                                                                       \
    ((n) < (cap) ? 0 : fold_grow((f), (void **)&(arr), &(cap), sizeof *(arr)))

/* The folder's state: the name table and the tree, built from the
 * aggregation's stack nodes (a node's tree node is created after its
 * parent's, so a child's id is always above its parent's), with each
 * node's weight as the attribution model (attrib.h) gives it.  Owned
 * here and freed by fold_free. */
struct fold {
    uint8_t mode;
    enum fold_weight weight;
    enum fold_names name_form;
    bool by_task; /* a frame per task at the top (fold_read_by_task) */
    const char *partial;
    char *damage; /* why reading stopped early, NULL when it did not */
    struct fold_totals t;
    bool nomem;
    /* Names: the arena, the table and an open-addressing index (id + 1). */
    char *arena;
    size_t arena_len, arena_cap;
    struct fold_name *names;
    uint32_t n_names, names_cap;
    uint32_t *name_index;
    uint32_t name_index_cap; /* a power of two, at least twice n_names */
    /* The tree and its (parent, name) -> node index (id + 1). */
    struct fold_node *nodes;
    uint32_t n_nodes, nodes_cap;
    uint32_t *node_index;
    uint32_t node_index_cap;
    uint32_t *children; /* filled by link_children(): children, sorted */
    uint32_t max_depth;
    /* what frames' func fields index */
    struct fold_ident *idents;
    uint32_t n_idents;
    struct fold_source *sources;
    uint32_t n_sources;
    uint64_t waiting_drawn; /* FOLD_WEIGHT_WALL: waiting samples on a stack */
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

/* Appends len bytes as they are. */
static int arena_copy(struct fold *f, const char *s, size_t len)
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
    memcpy(f->arena + f->arena_len, s, len);
    f->arena_len += len;
    return 0;
}

/* Appends len bytes; in the collapsed name form a frame's text is made
 * safe for a folded line: shown as escape.h shows text (the format has no
 * escapes of its own), and ';', the frame separator, as ':'. */
static int arena_put(struct fold *f, const char *s, size_t len)
{
    if (f->name_form != FOLD_NAMES_COLLAPSED || (!escape_needed(s, len) && !memchr(s, ';', len)))
        return arena_copy(f, s, len);
    char *e = escape_dup(s, len, &len);
    if (!e)
        return f->nomem = true, -1;
    for (size_t i = 0; i < len; i++)
        if (e[i] == ';')
            e[i] = ':';
    int rc = arena_copy(f, e, len);
    free(e);
    return rc;
}

/* Interns the text just appended at `off`; returns its name id or
 * UINT32_MAX when out of memory. */
static uint32_t intern_at(struct fold *f, size_t off)
{
    size_t len = f->arena_len - off;
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

/* Interns `ns.fn` as the name form keeps it, its namespace's length
 * there in *ns_len; returns its name id or UINT32_MAX when out of
 * memory. */
static uint32_t intern(struct fold *f, struct wire_str ns, struct wire_str fn, uint32_t *ns_len)
{
    size_t off = f->arena_len;
    if (arena_put(f, ns.ptr, ns.len))
        return UINT32_MAX;
    *ns_len = (uint32_t)(f->arena_len - off);
    if (arena_put(f, ".", 1) || arena_put(f, fn.ptr, fn.len))
        return UINT32_MAX;
    return intern_at(f, off);
}

/* Interns a frame text of the fold's own, such as <runtime>.<waiting>. */
static uint32_t intern_text(struct fold *f, const char *text)
{
    size_t off = f->arena_len;
    return arena_put(f, text, strlen(text)) ? UINT32_MAX : intern_at(f, off);
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
    f->nodes[f->n_nodes] =
        (struct fold_node){name, parent, depth, FOLD_NO_NODE, 0, FOLD_NO_FUNC, 0, 0};
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

/* ---- from the attribution model ---- */

static bool weight_fits(enum fold_weight w, uint8_t mode)
{
    return (w == FOLD_WEIGHT_SAMPLES || w == FOLD_WEIGHT_WALL) == (mode == WIRE_MODE_CPU);
}

static bool weight_live(enum fold_weight w)
{
    return w == FOLD_WEIGHT_RETAINED || w == FOLD_WEIGHT_LIVE_AT_PEAK;
}

/* The node's value under the fold's weight (its own: with
 * FOLD_WEIGHT_WALL its waiting samples are its <runtime>.<waiting> frame's). */
static uint64_t node_weight(const struct fold *f, const struct attrib_node_quantities *q)
{
    switch (f->weight) {
    case FOLD_WEIGHT_COUNT:
        return q->count;
    case FOLD_WEIGHT_RETAINED:
        return q->retained;
    case FOLD_WEIGHT_LIVE_AT_PEAK:
        return q->live_at_peak;
    default:
        return q->self; /* samples, or allocated bytes */
    }
}

/* The totals the profile reports, and the weight's over every event. */
static void take_totals(struct fold *f, const struct agg *g)
{
    struct fold_totals *t = &f->t;
    struct attrib_cpu_totals c;
    struct attrib_mem_totals m;
    attrib_cpu_totals(g, &c);
    attrib_mem_totals(g, &m);
    t->samples = c.recorded;
    t->jett_samples = c.attributed;
    t->runtime_samples = c.runtime;
    t->waiting_samples = c.waiting;
    t->unavailable_samples = c.unavailable;
    ticks_read(g, &t->ticks);
    t->allocations = m.allocation_count;
    t->resizes = m.resize_count;
    t->frees = m.free_count;
    t->allocated_bytes = m.allocated_bytes;
    t->live_exact = attrib_mem_exact(g);
    t->retained_exact = attrib_retained_exact(g);
    t->freed_bytes = m.freed_bytes;
    t->peak_live_bytes = m.peak;
    t->retained_bytes = m.live;
    static const size_t at[] = {
        [FOLD_WEIGHT_SAMPLES] = offsetof(struct fold_totals, samples),
        [FOLD_WEIGHT_WALL] = offsetof(struct fold_totals, samples),
        [FOLD_WEIGHT_ALLOCATED] = offsetof(struct fold_totals, allocated_bytes),
        [FOLD_WEIGHT_COUNT] = offsetof(struct fold_totals, allocations),
        [FOLD_WEIGHT_RETAINED] = offsetof(struct fold_totals, retained_bytes),
        [FOLD_WEIGHT_LIVE_AT_PEAK] = offsetof(struct fold_totals, peak_live_bytes),
    };
    memcpy(&t->weight_total, (const char *)t + at[f->weight], sizeof t->weight_total);
    if (f->weight == FOLD_WEIGHT_WALL) /* every requested tick */
        t->weight_total += t->ticks.coalesced + t->ticks.dropped;
}

/* The sources' paths and origins: 0, or -1 when out of memory. */
static int take_sources(struct fold *f, const struct agg *g)
{
    uint32_t n = attrib_source_count(g);
    f->sources = malloc(((size_t)n + 1) * sizeof *f->sources);
    if (!f->sources)
        return -1;
    for (uint32_t i = 0; i < n; i++) {
        struct attrib_source s;
        attrib_source(g, i, &s);
        f->sources[i] = (struct fold_source){f->arena_len, s.path_len, s.origin};
        if (arena_copy(f, s.path, s.path_len) != 0)
            return -1;
        f->n_sources++;
    }
    return 0;
}

/* The identities' names, sources and declaration lines: 0, or -1. */
static int take_idents(struct fold *f, const struct agg *g)
{
    uint32_t n = attrib_ident_count(g);
    f->idents = malloc(((size_t)n + 1) * sizeof *f->idents);
    if (!f->idents || take_sources(f, g) != 0)
        return -1;
    for (uint32_t i = 0; i < n; i++) {
        struct attrib_ident d;
        attrib_ident(g, i, &d);
        struct fold_ident *id = &f->idents[i];
        id->name = intern(f, (struct wire_str){d.ns, d.ns_len},
                          (struct wire_str){d.name, d.name_len}, &id->ns_len);
        if (id->name == UINT32_MAX)
            return -1;
        id->source = d.source, id->line = 0;
        if (d.source != ATTRIB_NONE && wire_span_present(d.decl)) {
            struct attrib_source s;
            attrib_source(g, d.source, &s);
            struct redact_source v = {s.text, s.text_len, s.spans, s.n_spans, s.lines, s.n_lines};
            id->line = (uint64_t)redact_line_of(&v, d.decl.start) + 1;
        }
        f->n_idents++;
    }
    return 0;
}

/* Notes the identity a stack node draws in its frame: the first, or
 * "several" once one of another source or line meets it. */
static void note_func(struct fold *f, struct fold_node *n, uint32_t ident)
{
    if (n->func == FOLD_NO_FUNC) {
        n->func = ident;
        return;
    }
    if (n->func == FOLD_MANY_FUNCS || n->func == ident)
        return;
    const struct fold_ident *a = &f->idents[n->func], *b = &f->idents[ident];
    if (a->source != b->source || a->line != b->line || a->ns_len != b->ns_len)
        n->func = FOLD_MANY_FUNCS;
}

/* With FOLD_WEIGHT_WALL, a frame's waiting samples in the <runtime>.<waiting>
 * frame above it: 0, or -1 when out of memory. */
static int take_waiting(struct fold *f, uint32_t frame, uint64_t waiting)
{
    if (f->weight != FOLD_WEIGHT_WALL || waiting == 0)
        return 0;
    uint32_t name = intern_text(f, ticks_frame_name(TICKS_WAITING));
    uint32_t node = name == UINT32_MAX ? FOLD_NO_NODE : child_node(f, frame, name);
    if (node == FOLD_NO_NODE)
        return -1;
    f->nodes[node].func = FOLD_WAITING;
    f->nodes[node].self += waiting;
    f->nodes[node].total += waiting;
    f->waiting_drawn += waiting;
    return 0;
}

/* With FOLD_WEIGHT_WALL, once the stacks are in the tree: what has no
 * Jett stack, in the pseudo-frames below the root (ticks_root), whatever
 * the task (coalesced and dropped ticks have none).  0, or -1 when out
 * of memory. */
static int take_pseudo(struct fold *f)
{
    if (f->weight != FOLD_WEIGHT_WALL)
        return 0;
    uint64_t v[TICKS_FRAMES];
    ticks_root(&f->t.ticks, f->waiting_drawn, v);
    for (int k = 0; k < TICKS_FRAMES; k++) {
        if (v[k] == 0)
            continue;
        uint32_t name = intern_text(f, ticks_frame_name((enum ticks_frame)k));
        uint32_t node = name == UINT32_MAX ? FOLD_NO_NODE : child_node(f, FOLD_ROOT, name);
        if (node == FOLD_NO_NODE)
            return -1;
        f->nodes[node].func = FOLD_PSEUDO(k);
        f->nodes[node].self += v[k];
        f->nodes[node].total += v[k];
        f->nodes[FOLD_ROOT].total += v[k];
    }
    return 0;
}

/* The tree of the aggregation's valid stack nodes, each node's weight
 * added to its frame's self value: 0, or -1 when out of memory. */
static int take_tree(struct fold *f, const struct agg *g)
{
    uint32_t n = attrib_node_count(g);
    uint32_t *frame = malloc(((size_t)n + 1) * sizeof *frame);
    int rc = frame && take_idents(f, g) == 0 ? 0 : -1;
    for (uint32_t i = 0; rc == 0 && i < n; i++) {
        uint32_t parent, ident;
        frame[i] = FOLD_NO_NODE;
        if (!attrib_node(g, i, &parent, &ident))
            continue; /* a bad STACK: its events were unavailable */
        uint32_t up = parent == ATTRIB_NONE ? FOLD_ROOT : frame[parent];
        frame[i] = child_node(f, up, f->idents[ident].name);
        if (frame[i] == FOLD_NO_NODE) {
            rc = -1;
            break;
        }
        note_func(f, &f->nodes[frame[i]], ident);
        struct attrib_node_quantities q, below;
        attrib_node_quantities(g, i, &q);
        attrib_node_below(g, i, &below);
        f->nodes[frame[i]].self += node_weight(f, &q);
        /* a frame's nodes are at one depth: their subtrees are disjoint */
        uint64_t subtree =
            node_weight(f, &below) + (f->weight == FOLD_WEIGHT_WALL ? below.waiting : 0);
        f->nodes[frame[i]].total += subtree;
        if (parent == ATTRIB_NONE)
            f->nodes[FOLD_ROOT].total += subtree;
        if (take_waiting(f, frame[i], q.waiting) != 0) {
            rc = -1;
            break;
        }
    }
    free(frame);
    if (rc != 0)
        f->nomem = true;
    return rc;
}

/* ---- by task ---- */

static int pair_by_task(const void *x, const void *y, void *ctx)
{
    const uint64_t *key = ctx;
    uint64_t a = key[*(const uint32_t *)x], b = key[*(const uint32_t *)y];
    return a < b ? -1 : a > b;
}

/* The frame of task `task` (ATTRIB_NONE: events of no task) below the
 * root: "task N", or "no task". */
static uint32_t task_frame(struct fold *f, uint32_t task)
{
    char text[32];
    int n = task == ATTRIB_NONE ? snprintf(text, sizeof text, "no task")
                                : snprintf(text, sizeof text, "task %u", (unsigned)task);
    size_t off = f->arena_len;
    if (arena_copy(f, text, (size_t)n) != 0)
        return FOLD_NO_NODE;
    uint32_t name = intern_at(f, off);
    return name == UINT32_MAX ? FOLD_NO_NODE : child_node(f, FOLD_ROOT, name);
}

/* The frame of stack node `node` below its task's frame `top`: through
 * its callers' frames (made when new), found in frame[] once made (the
 * nodes made are listed in made[]). */
static uint32_t frame_in_task(struct fold *f, const struct agg *g, uint32_t node, uint32_t top,
                              uint32_t *frame, uint32_t *made, uint32_t *n_made, uint32_t *chain)
{
    uint32_t depth = 0, parent, ident, up = top;
    for (uint32_t m = node; m != ATTRIB_NONE && frame[m] == FOLD_NO_NODE;) {
        if (!attrib_node(g, m, &parent, &ident))
            return FOLD_NO_NODE;
        chain[depth++] = m;
        m = parent;
        if (m != ATTRIB_NONE && frame[m] != FOLD_NO_NODE)
            up = frame[m];
    }
    while (depth > 0) {
        uint32_t m = chain[--depth];
        attrib_node(g, m, &parent, &ident);
        uint32_t c = child_node(f, up, f->idents[ident].name);
        if (c == FOLD_NO_NODE)
            return FOLD_NO_NODE;
        note_func(f, &f->nodes[c], ident);
        frame[m] = up = c;
        made[(*n_made)++] = m;
    }
    return frame[node];
}

/* The tree of the (stack node, task) pairs (attrib_task_node): a frame
 * per task below the root, in it the task's stacks, each pair's weight
 * added to its frame's self value; totals summed from the leaves up (a
 * child's id is above its parent's).  0, or -1 when out of memory. */
static int take_task_tree(struct fold *f, const struct agg *g)
{
    uint32_t n_nodes = attrib_node_count(g), n = attrib_task_node_count(g);
    uint32_t *frame = malloc(((size_t)n_nodes + 1) * sizeof *frame);
    uint32_t *made = malloc(((size_t)n_nodes + 1) * sizeof *made);
    uint32_t *chain = malloc(((size_t)n_nodes + 1) * sizeof *chain);
    uint32_t *order = malloc(((size_t)n + 1) * sizeof *order);
    uint64_t *key = malloc(((size_t)n + 1) * sizeof *key);
    int rc = frame && made && chain && order && key && take_idents(f, g) == 0 ? 0 : -1;
    for (uint32_t i = 0; rc == 0 && i < n; i++) {
        uint32_t node, task;
        struct attrib_node_quantities q;
        attrib_task_node(g, i, &node, &task, &q);
        order[i] = i;
        key[i] = (uint64_t)task << 32 | node; /* no task (ATTRIB_NONE) last */
    }
    if (rc == 0)
        qsort_r(order, n, sizeof *order, pair_by_task, key);
    for (uint32_t i = 0; rc == 0 && i < n_nodes; i++)
        frame[i] = FOLD_NO_NODE;
    uint32_t n_made = 0, top = FOLD_NO_NODE, cur = 0;
    for (uint32_t i = 0; rc == 0 && i < n; i++) {
        uint32_t node, task;
        struct attrib_node_quantities q;
        attrib_task_node(g, order[i], &node, &task, &q);
        uint64_t w = node_weight(f, &q);
        if (top == FOLD_NO_NODE || task != cur) {
            while (n_made)
                frame[made[--n_made]] = FOLD_NO_NODE;
            cur = task;
            if ((top = task_frame(f, task)) == FOLD_NO_NODE)
                rc = -1;
        }
        uint64_t waiting = f->weight == FOLD_WEIGHT_WALL ? q.waiting : 0;
        if (rc != 0 || (w == 0 && waiting == 0) || node >= n_nodes)
            continue;
        uint32_t at = frame_in_task(f, g, node, top, frame, made, &n_made, chain);
        if (at == FOLD_NO_NODE) {
            rc = f->nomem ? -1 : 0;
            continue;
        }
        f->nodes[at].self += w;
        if (waiting) { /* its <runtime>.<waiting> frame, as take_waiting makes it */
            uint32_t name = intern_text(f, ticks_frame_name(TICKS_WAITING));
            uint32_t wn = name == UINT32_MAX ? FOLD_NO_NODE : child_node(f, at, name);
            if (wn == FOLD_NO_NODE) {
                rc = -1;
                continue;
            }
            f->nodes[wn].func = FOLD_WAITING;
            f->nodes[wn].self += waiting;
            f->waiting_drawn += waiting;
        }
    }
    for (uint32_t i = f->n_nodes; rc == 0 && i-- > 1;) {
        f->nodes[i].total += f->nodes[i].self;
        f->nodes[f->nodes[i].parent].total += f->nodes[i].total;
    }
    free(frame), free(made), free(chain), free(order), free(key);
    if (rc != 0)
        f->nomem = true;
    return rc;
}

/* Aggregates the whole capture with per-node detail: the profile's own
 * rules, errors and budgets.  1 when reading stopped at damage (message
 * in err), -1 when out of memory, else 0. */
static int aggregate(struct agg *g, struct capture_reader *r, bool by_task, char *err,
                     size_t errlen)
{
    agg_keep_detail(g);
    if (by_task)
        agg_keep_task_nodes(g);
    int damaged = feed_capture(g, r, err, errlen);
    agg_end(g);
    agg_release_records(g);
    return damaged;
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

/* The fold of an aggregated capture, or an error status. */
static enum fold_status fold_from(struct fold *f, const struct agg *g, char *err, size_t errlen)
{
    f->mode = agg_mode(g);
    if (f->weight == FOLD_WEIGHT_DEFAULT)
        f->weight = f->mode == WIRE_MODE_CPU ? FOLD_WEIGHT_SAMPLES : FOLD_WEIGHT_ALLOCATED;
    if (!weight_fits(f->weight, f->mode))
        return snprintf(err, errlen, "--weight %s does not apply to a %s capture",
                        fold_weight_name(f->weight), f->mode == WIRE_MODE_CPU ? "CPU" : "memory"),
               FOLD_E_WEIGHT;
    const char *gap =
        weight_live(f->weight) ? attrib_live_gap(g, f->weight == FOLD_WEIGHT_RETAINED) : NULL;
    if (gap)
        return snprintf(err, errlen, "--weight %s is unavailable: %s", fold_weight_name(f->weight),
                        gap),
               FOLD_E_UNAVAILABLE;
    if (f->by_task && !attrib_tasks_on(g))
        return snprintf(err, errlen,
                        "--by-task needs a capture of a run with tasks (capability "
                        "task_attribution)"),
               FOLD_E_TASKS;
    if (f->by_task && f->weight == FOLD_WEIGHT_LIVE_AT_PEAK)
        return snprintf(err, errlen,
                        "--weight live-at-peak is not kept by task; --by-task folds "
                        "allocated, count or retained"),
               FOLD_E_TASKS;
    enum agg_reason reason;
    if (agg_status(g, &reason) != AGG_COMPLETE)
        f->partial = agg_reason_name(reason);
    take_totals(f, g);
    if ((f->by_task ? take_task_tree(f, g) : take_tree(f, g)) != 0 || take_pseudo(f) != 0)
        return snprintf(err, errlen, "out of memory"), FOLD_E_NOMEM;
    /* the indexes only serve building: their memory goes to the output */
    free(f->node_index), free(f->name_index);
    f->node_index = f->name_index = NULL;
    f->t.weight_attributed = f->nodes[FOLD_ROOT].total;
    if (link_children(f) != 0)
        return snprintf(err, errlen, "out of memory"), FOLD_E_NOMEM;
    return FOLD_OK;
}

static enum fold_status read_fold(struct capture_reader *r, enum fold_weight w,
                                  enum fold_names names, bool by_task, struct fold **out, char *err,
                                  size_t errlen)
{
    struct fold *f = fold_new(w, names);
    struct agg *g = agg_new();
    if (!f || !g) {
        fold_free(f), agg_free(g);
        return snprintf(err, errlen, "out of memory"), FOLD_E_NOMEM;
    }
    f->by_task = by_task;
    enum fold_status st = FOLD_OK;
    int damaged = aggregate(g, r, by_task, err, errlen);
    if (damaged && !agg_has_hello(g))
        st = FOLD_E_CAPTURE; /* nothing of a profile was read: err says why */
    else if (damaged && !(f->damage = strdup(err)))
        st = FOLD_E_NOMEM, snprintf(err, errlen, "out of memory");
    if (st == FOLD_OK)
        st = fold_from(f, g, err, errlen);
    agg_free(g);
    if (st != FOLD_OK) {
        fold_free(f);
        return st;
    }
    *out = f;
    return FOLD_OK;
}

enum fold_status fold_read(struct capture_reader *r, enum fold_weight w, enum fold_names names,
                           struct fold **out, char *err, size_t errlen)
{
    return read_fold(r, w, names, false, out, err, errlen);
}

enum fold_status fold_read_by_task(struct capture_reader *r, enum fold_weight w,
                                   enum fold_names names, struct fold **out, char *err,
                                   size_t errlen)
{
    return read_fold(r, w, names, true, out, err, errlen);
}

enum fold_status fold_of_agg(const struct agg *g, enum fold_weight w, enum fold_names names,
                             struct fold **out, char *err, size_t errlen)
{
    struct fold *f = fold_new(w, names);
    if (!f)
        return snprintf(err, errlen, "out of memory"), FOLD_E_NOMEM;
    enum fold_status st = fold_from(f, g, err, errlen);
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
    free(f->arena), free(f->names), free(f->name_index), free(f->damage);
    free(f->nodes), free(f->node_index), free(f->children);
    free(f->idents), free(f->sources);
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
    static const char *const names[] = {"default", "samples",  "wall",        "allocated",
                                        "count",   "retained", "live-at-peak"};
    return (unsigned)w < sizeof names / sizeof names[0] ? names[w] : "?";
}

bool fold_by_task(const struct fold *f)
{
    return f->by_task;
}

enum fold_names fold_name_form(const struct fold *f)
{
    return f->name_form;
}

const char *fold_partial_reason(const struct fold *f)
{
    return f->partial;
}

const char *fold_damage(const struct fold *f)
{
    return f->damage;
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

bool fold_node_func(const struct fold *f, const struct fold_node *n, struct fold_func *out)
{
    if (n->func >= f->n_idents)
        return false;
    const struct fold_ident *id = &f->idents[n->func];
    const char *name = name_ptr(f, id->name);
    *out = (struct fold_func){name,
                              name + id->ns_len + 1,
                              "",
                              id->ns_len,
                              f->names[id->name].len - id->ns_len - 1,
                              0,
                              -1,
                              id->line};
    if (id->source < f->n_sources) {
        const struct fold_source *s = &f->sources[id->source];
        out->path = f->arena + s->off, out->path_len = s->len, out->origin = s->origin;
    }
    return true;
}
