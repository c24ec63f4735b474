/* cgexport: the aggregation's per-node and per-line costs -> Callgrind. */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/attrib.h"
#include "daemon/escape.h"
#include "daemon/export/diskpath.h"
#include "daemon/export/cgexport-internal.h"
#include "daemon/export/cgexport.h"
#include "daemon/export/export_run.h"
#include "proto/util/decimal.h"
#include "proto/util/radix.h"
#include "proto/wire-internal.h"

/* A function identity: its namespace, name and display text `ns.name`
 * as escape.h shows them, and the display text's id (identities of one
 * display text share it: a recursion level counts frames of one text). */
struct cg_func {
    char *ns, *name, *disp;
    uint32_t source, line, disp_id;
    uint32_t levels; /* the deepest level (capped) of its frames, 1.. */
    uint32_t deep;   /* the entry of its level 2, when levels > 1 */
};

/* A function of the output: an identity at one recursion level, named
 * `ns.name` at level 1 and `ns.name'L` below. */
struct cg_entry {
    uint32_t ident, level;
    uint32_t rank; /* position in output order */
    char *name;
};

/* A source's line starts (the aggregation's), and for every 64-byte
 * block of its text up to the last line start the line holding the
 * block's first byte: a line is then a short scan away, not a binary
 * search.  The path as escape.h shows it. */
#define CG_BLOCK_SHIFT 6
struct cg_source {
    char *path;
    const uint32_t *lines;
    uint32_t n_lines;
    uint32_t *block, n_blocks;
};

/* Per-edge costs, `stride` values each: the weight (samples, or bytes),
 * in memory captures the allocation count, and the number of
 * observations that crossed the call (calls=).  A node the aggregation
 * holds invalid has func CG_NONE and no edge. */
#define CG_STRIDE_CPU 2
#define CG_STRIDE_MEMORY 3

/* A self cost of a recursive identity's frames, while they are sorted
 * by entry rank and line. */
struct cg_self {
    uint64_t key; /* entry rank << 32 | line */
    uint64_t w[2];
};

struct cg {
    uint8_t mode;
    unsigned stride;
    const struct agg *agg; /* the self costs by function and leaf span */
    struct cg_source *src;
    uint32_t n_src;
    struct cg_func *fn;
    uint32_t n_fn;
    struct cg_entry *entry;
    uint32_t n_entry;
    struct cgexport_node *node;
    uint32_t n_node;
    uint64_t *edge; /* charged to the edge into this node */
    /* the nodes that carry an edge cost, by caller rank: those of rank r
     * are edges[edge_start[r] .. edge_start[r + 1]), by line and callee */
    uint32_t *edges, *edge_start;
    uint64_t *edge_calls; /* an edge's calls=, at the first of its nodes in edges */
    struct cgcalls calls;
    struct cg_self *self; /* recursive identities' self costs, sorted */
    size_t n_self;
    uint64_t total[2];
};

#define CG_NONE UINT32_MAX

static void *grow(void *p, uint32_t *cap, uint32_t need, size_t elem)
{
    if (need <= *cap)
        return p;
    uint32_t c = *cap ? *cap * 2 : 64;
    while (c < need)
        c *= 2;
    void *q = realloc(p, (size_t)c * elem);
    if (q)
        *cap = c;
    return q;
}

/* 1-based line of an offset in a source (0 when unknown), as
 * wire_line_index finds it. */
static uint32_t line_of(const struct cg *g, uint32_t source, uint32_t off)
{
    if (source == CG_NONE || source >= g->n_src || off == WIRE_NONE32)
        return 0;
    const struct cg_source *s = &g->src[source];
    if ((off >> CG_BLOCK_SHIFT) >= s->n_blocks)
        return wire_line_index(s->lines, s->n_lines, off) + 1;
    uint32_t i = s->block[off >> CG_BLOCK_SHIFT];
    while (i + 1 < s->n_lines && s->lines[i + 1] <= off)
        i++;
    return i + 1;
}

/* Fills a source's block table from its line starts. */
static int index_blocks(struct cg_source *d)
{
    d->n_blocks = d->n_lines ? (d->lines[d->n_lines - 1] >> CG_BLOCK_SHIFT) + 1 : 0;
    d->block = malloc(((size_t)d->n_blocks + 1) * sizeof *d->block);
    if (!d->block)
        return -1;
    for (uint32_t b = 0, i = 0; b < d->n_blocks; b++) {
        uint32_t off = b << CG_BLOCK_SHIFT;
        while (i + 1 < d->n_lines && d->lines[i + 1] <= off)
            i++;
        d->block[b] = i;
    }
    return 0;
}

/* The nearest frame above node i of its display text, CG_NONE when
 * there is none. */
static uint32_t same_text_above(const struct cg *g, uint32_t i)
{
    uint32_t want = g->fn[g->node[i].func].disp_id, at = g->node[i].parent;
    while (at != CG_NONE && g->fn[g->node[at].func].disp_id != want)
        at = g->node[at].parent;
    return at;
}

/* Charges every call edge with what was observed below it: the edge
 * into node k carries the observations of k's subtree (attrib.h), the
 * inclusive cost of that call as Callgrind records one, and calls= their
 * number.  A call into a frame past the last level carries nothing but
 * its count: the call into the last level's outermost frame above it
 * already holds everything observed there, and callgrind_annotate adds
 * up a called function's inclusive cost from the calls into it. */
static int charge_edges(struct cg *g)
{
    g->edge = calloc((size_t)g->n_node * g->stride + 1, sizeof *g->edge);
    if (!g->edge)
        return -1;
    for (uint32_t i = 0; i < g->n_node; i++) {
        if (g->node[i].func == CG_NONE)
            continue;
        struct attrib_node_quantities q;
        attrib_node_below(g->agg, i, &q);
        uint64_t *e = &g->edge[(size_t)i * g->stride];
        bool folded = g->node[i].level > CGEXPORT_LEVELS;
        e[0] = folded ? 0 : q.self;
        if (g->stride == CG_STRIDE_MEMORY)
            e[1] = folded ? 0 : q.count, e[2] = q.events;
        else
            e[1] = q.self;
    }
    return 0;
}

static bool has_edge(const struct cg *g, uint32_t node)
{
    return g->node[node].parent != CG_NONE && g->edge[(size_t)node * g->stride + g->stride - 1];
}

static uint32_t caller_rank(const struct cg *g, uint32_t node)
{
    return g->entry[g->node[g->node[node].parent].entry].rank;
}

/* An edge while its caller's edges are sorted: call line << 32 | callee
 * rank, and the node. */
struct cg_edge_key {
    uint64_t key;
    uint64_t node;
};

/* Sorts one caller's edges by call line, callee rank and node, on keys
 * copied out once: the edges come in node order and the radix sort is
 * stable, so equal keys stay in node order. */
static int sort_caller_edges(const struct cg *g, uint32_t *edges, uint32_t n,
                             struct cg_edge_key **tmp, uint32_t *tmp_cap)
{
    if (n < 2)
        return 0;
    struct cg_edge_key *t = grow(*tmp, tmp_cap, 2 * n, sizeof *t);
    if (!t)
        return -1;
    *tmp = t;
    for (uint32_t i = 0; i < n; i++) {
        const struct cgexport_node *k = &g->node[edges[i]];
        t[i] =
            (struct cg_edge_key){(uint64_t)k->site_line << 32 | g->entry[k->entry].rank, edges[i]};
    }
    void *base = t, *scratch = t + n;
    radix_sort(&base, &scratch, n, sizeof *t, offsetof(struct cg_edge_key, key));
    const struct cg_edge_key *sorted = base;
    for (uint32_t i = 0; i < n; i++)
        edges[i] = (uint32_t)sorted[i].node;
    return 0;
}

/* Charges every edge, then lists the nodes that carry an edge cost in
 * output order (caller rank, call line, callee rank): a counting sort by
 * caller, then each caller's few edges sorted.  Needs the ranks. */
static int list_edges(struct cg *g)
{
    if (charge_edges(g) != 0)
        return -1;
    uint32_t n = 0;
    g->edge_start = calloc((size_t)g->n_entry + 2, sizeof *g->edge_start);
    if (!g->edge_start)
        return -1;
    for (uint32_t i = 0; i < g->n_node; i++)
        if (has_edge(g, i))
            g->edge_start[caller_rank(g, i) + 2]++, n++;
    for (uint32_t r = 0; r < g->n_entry; r++)
        g->edge_start[r + 2] += g->edge_start[r + 1];
    g->edges = malloc(((size_t)n + 1) * sizeof *g->edges);
    if (!g->edges)
        return -1;
    for (uint32_t i = 0; i < g->n_node; i++)
        if (has_edge(g, i))
            g->edges[g->edge_start[caller_rank(g, i) + 1]++] = i;
    struct cg_edge_key *tmp = NULL;
    uint32_t tmp_cap = 0;
    int rc = 0;
    for (uint32_t r = 0; rc == 0 && r < g->n_entry; r++)
        rc = sort_caller_edges(g, g->edges + g->edge_start[r],
                               g->edge_start[r + 1] - g->edge_start[r], &tmp, &tmp_cap);
    free(tmp);
    return rc;
}

/* Whether node k belongs to the same edge as `first`: the caller is
 * the same (edges are listed by caller), so the same call line and
 * callee entry. */
static bool same_edge(const struct cgexport_node *first, const struct cgexport_node *k)
{
    return k->site_line == first->site_line && k->entry == first->entry;
}

/* Gives every edge its calls= (cgcalls_edge), kept at the first of its
 * nodes in edges[], and counts the edges of each kind for the header:
 * 0, or -1 when out of memory. */
static int count_calls(struct cg *g)
{
    uint32_t n = g->edge_start[g->n_entry];
    g->edge_calls = malloc(((size_t)n + 1) * sizeof *g->edge_calls);
    if (!g->edge_calls || cgcalls_take(&g->calls, g->agg, g->node, g->n_node) != 0)
        return -1;
    for (uint32_t r = 0; r < g->n_entry; r++) {
        uint32_t end = g->edge_start[r + 1];
        for (uint32_t i = g->edge_start[r], j; i < end; i = j) {
            const struct cgexport_node *first = &g->node[g->edges[i]];
            uint64_t crossed = 0;
            for (j = i; j < end && same_edge(first, &g->node[g->edges[j]]); j++) {
                uint64_t c = g->edge[(size_t)g->edges[j] * g->stride + g->stride - 1];
                crossed = crossed + c < crossed ? UINT64_MAX : crossed + c;
            }
            g->edge_calls[i] = cgcalls_edge(&g->calls, g->node, g->edges + i, j - i, crossed);
        }
    }
    return 0;
}

/* "ns.name": the display text, whose frames recursion levels count. */
static char *display(const char *ns, const char *name)
{
    size_t n = strlen(ns) + strlen(name) + 2;
    char *d = malloc(n);
    if (d)
        snprintf(d, n, "%s.%s", ns, name);
    return d;
}

static int disp_cmp(const void *a, const void *b, void *ctx)
{
    const struct cg *g = ctx;
    return strcmp(g->fn[*(const uint32_t *)a].disp, g->fn[*(const uint32_t *)b].disp);
}

/* Gives identities of one display text one id: 0, or -1. */
static int number_texts(struct cg *g)
{
    uint32_t *by = malloc(((size_t)g->n_fn + 1) * sizeof *by);
    if (!by)
        return -1;
    for (uint32_t i = 0; i < g->n_fn; i++)
        by[i] = i;
    qsort_r(by, g->n_fn, sizeof *by, disp_cmp, g);
    for (uint32_t i = 0, id = 0; i < g->n_fn; i++) {
        if (i && disp_cmp(&by[i - 1], &by[i], g) != 0)
            id++;
        g->fn[by[i]].disp_id = id;
    }
    free(by);
    return 0;
}

/* A source's file as the profile names it: where it lies on disk
 * (diskpath.h), so that callgrind_annotate run from the project's root
 * finds it, as escape.h shows text; NULL when out of memory. */
static char *file_name(const struct attrib_source *s)
{
    struct diskpath d = diskpath_of(s->origin, s->path, s->path_len);
    size_t pn = strlen(d.prefix), len = pn + escape_len(s->path + d.skip, s->path_len - d.skip);
    char *f = malloc(len + 1);
    if (f) {
        memcpy(f, d.prefix, pn);
        escape_copy(f + pn, s->path + d.skip, s->path_len - d.skip);
        f[len] = 0;
    }
    return f;
}

/* The sources and identities, their names and files as escape.h shows
 * them: 0, or -1 when out of memory. */
static int take_names(struct cg *g, const struct agg *a)
{
    for (uint32_t i = 0; i < g->n_src; i++) {
        struct attrib_source s;
        attrib_source(a, i, &s);
        g->src[i] = (struct cg_source){file_name(&s), s.lines, s.n_lines, NULL, 0};
        if (!g->src[i].path || index_blocks(&g->src[i]) != 0)
            return -1;
    }
    for (uint32_t i = 0; i < g->n_fn; i++) {
        struct attrib_ident d;
        attrib_ident(a, i, &d);
        uint32_t src = d.source == ATTRIB_NONE ? CG_NONE : d.source;
        struct cg_func *f = &g->fn[i];
        *f = (struct cg_func){escape_dup(d.ns, d.ns_len, NULL),
                              escape_dup(d.name, d.name_len, NULL),
                              NULL,
                              src,
                              line_of(g, src, d.decl.start),
                              0,
                              1,
                              CG_NONE};
        if (!f->ns || !f->name || !(f->disp = display(f->ns, f->name)))
            return -1;
    }
    return number_texts(g);
}

/* The stack nodes: each node's caller, identity, call line and
 * recursion level (one more than the nearest frame above it of its
 * display text, 1 without one), and the totals. */
static void take_nodes(struct cg *g, const struct agg *a)
{
    for (uint32_t i = 0; i < g->n_node; i++) {
        uint32_t parent, ident;
        g->node[i] = (struct cgexport_node){CG_NONE, CG_NONE, CG_NONE, 0, 0, CG_NONE};
        if (!attrib_node(a, i, &parent, &ident) || ident >= g->n_fn ||
            (parent != ATTRIB_NONE && (parent >= i || g->node[parent].func == CG_NONE)))
            continue;
        struct attrib_node_quantities q;
        attrib_node_quantities(a, i, &q);
        uint32_t caller_src = parent == ATTRIB_NONE ? CG_NONE : g->fn[g->node[parent].func].source;
        g->node[i] =
            (struct cgexport_node){parent == ATTRIB_NONE ? CG_NONE : parent, ident, CG_NONE, 1,
                                   line_of(g, caller_src, q.site),           q.site};
        uint32_t above = same_text_above(g, i);
        if (above != CG_NONE)
            g->node[i].level = g->node[above].level + 1;
        struct cg_func *f = &g->fn[ident];
        uint32_t level = g->node[i].level < CGEXPORT_LEVELS ? g->node[i].level : CGEXPORT_LEVELS;
        if (level > f->levels)
            f->levels = level;
        if (parent != ATTRIB_NONE)
            continue;
        attrib_node_below(a, i, &q); /* the totals: every root's subtree */
        g->total[0] += q.self;
        g->total[1] += q.count;
    }
}

/* The entries: an identity's level 1 is entry `ident`, its levels 2..
 * follow all of those; each node's entry.  0, or -1. */
static int take_entries(struct cg *g)
{
    uint32_t n = g->n_fn;
    for (uint32_t i = 0; i < g->n_fn; i++)
        if (g->fn[i].levels > 1)
            g->fn[i].deep = n, n += g->fn[i].levels - 1;
    g->n_entry = n;
    g->entry = calloc((size_t)n + 1, sizeof *g->entry);
    if (!g->entry)
        return -1;
    for (uint32_t i = 0; i < g->n_fn; i++) {
        const struct cg_func *f = &g->fn[i];
        for (uint32_t level = 1; level <= f->levels; level++) {
            struct cg_entry *e = &g->entry[level == 1 ? i : f->deep + level - 2];
            size_t len = strlen(f->disp) + 12;
            *e = (struct cg_entry){i, level, 0, malloc(len)};
            if (!e->name)
                return -1;
            snprintf(e->name, len, level == 1 ? "%s" : "%s'%" PRIu32, f->disp, level);
        }
    }
    for (uint32_t i = 0; i < g->n_node; i++) {
        struct cgexport_node *k = &g->node[i];
        if (k->func == CG_NONE)
            continue;
        uint32_t level = k->level < CGEXPORT_LEVELS ? k->level : CGEXPORT_LEVELS;
        k->entry = level == 1 ? k->func : g->fn[k->func].deep + level - 2;
    }
    return 0;
}

/* The sources, functions, entries and stack nodes of the aggregation:
 * 0, or -1 when out of memory. */
static int take_model(struct cg *g, const struct agg *a)
{
    g->agg = a;
    g->mode = agg_mode(a);
    g->stride = g->mode == WIRE_MODE_CPU ? CG_STRIDE_CPU : CG_STRIDE_MEMORY;
    g->n_src = attrib_source_count(a);
    g->n_fn = attrib_ident_count(a);
    g->n_node = attrib_node_count(a);
    g->src = calloc((size_t)g->n_src + 1, sizeof *g->src);
    g->fn = calloc((size_t)g->n_fn + 1, sizeof *g->fn);
    g->node = calloc((size_t)g->n_node + 1, sizeof *g->node);
    if (!g->src || !g->fn || !g->node || take_names(g, a) != 0)
        return -1;
    take_nodes(g, a);
    return take_entries(g);
}

/* The self costs of the identities with frames at more than one level,
 * by entry rank and line, from each frame's own costs by leaf span: the
 * others' come from the aggregation's costs by function.  0, or -1. */
static int take_deep_selves(struct cg *g)
{
    size_t cap = 0;
    for (uint32_t i = 0; i < g->n_node; i++) {
        const struct cgexport_node *k = &g->node[i];
        if (k->func == CG_NONE || g->fn[k->func].levels == 1)
            continue;
        struct attrib_node_self_iter it;
        uint32_t start;
        uint64_t w[2] = {0, 0};
        bool more = attrib_node_self_begin(g->agg, i, &it);
        while (more && attrib_node_self_next(g->agg, &it, &start, w)) {
            if (g->n_self == cap) {
                cap = cap ? 2 * cap : 256;
                struct cg_self *p = realloc(g->self, 2 * cap * sizeof *p); /* and the scratch */
                if (!p)
                    return -1;
                g->self = p;
            }
            uint64_t line = line_of(g, g->fn[k->func].source, start);
            g->self[g->n_self++] =
                (struct cg_self){(uint64_t)g->entry[k->entry].rank << 32 | line, {w[0], w[1]}};
        }
    }
    if (g->n_self < 2)
        return 0;
    void *base = g->self, *scratch = g->self + g->n_self;
    radix_sort(&base, &scratch, g->n_self, sizeof *g->self, offsetof(struct cg_self, key));
    if (base != g->self)
        memcpy(g->self, base, g->n_self * sizeof *g->self);
    return 0;
}

static const char *file_of(const struct cg *g, uint32_t f)
{
    uint32_t s = g->fn[f].source;
    return s == CG_NONE || s >= g->n_src ? "???" : g->src[s].path;
}

/* Identity order: file, namespace, function, declaration line. */
static int func_cmp(const void *a, const void *b, void *ctx)
{
    const struct cg *g = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    int c = strcmp(file_of(g, x), file_of(g, y));
    if (!c)
        c = strcmp(g->fn[x].ns, g->fn[y].ns);
    if (!c)
        c = strcmp(g->fn[x].name, g->fn[y].name);
    if (!c)
        c = (g->fn[x].line > g->fn[y].line) - (g->fn[x].line < g->fn[y].line);
    return c ? c : (x > y) - (x < y);
}

/* "fl=(N) path" the first time a file is named, "fl=(N)" later. */
struct cg_names {
    uint32_t *file_id, *fn_id, next_file, next_fn;
};

static void name_ref(FILE *out, const char *key, uint32_t *ids, uint32_t *next, uint32_t slot,
                     const char *text)
{
    /* without printf: a million call edges name their callee each */
    char buf[40];
    size_t n = strlen(key);
    memcpy(buf, key, n);
    buf[n++] = '=', buf[n++] = '(';
    bool first = ids[slot] == 0;
    if (first)
        ids[slot] = ++*next;
    n += decimal_u64(buf + n, ids[slot]);
    buf[n++] = ')';
    if (first)
        buf[n++] = ' ';
    fwrite_unlocked(buf, 1, n, out);
    if (first)
        fputs_unlocked(text, out);
    fputc_unlocked('\n', out);
}

/* A cost line: the line and one or two values, in one write (there can
 * be millions). */
static void write_cost(FILE *out, const struct cg *g, uint32_t line, const uint64_t *w)
{
    char buf[64]; /* each decimal_u64 may store 20 bytes: 3 fit */
    size_t n = decimal_u64(buf, line);
    buf[n++] = ' ';
    n += decimal_u64(buf + n, w[0]);
    if (g->mode != WIRE_MODE_CPU) {
        buf[n++] = ' ';
        n += decimal_u64(buf + n, w[1]);
    }
    buf[n++] = '\n';
    fwrite_unlocked(buf, 1, n, out);
}

/* File slot of a function: its source id, or n_src for "???". */
static uint32_t file_slot(const struct cg *g, uint32_t f)
{
    uint32_t s = g->fn[f].source;
    return s == CG_NONE || s >= g->n_src ? g->n_src : s;
}

/* The state of the body being written. */
struct cg_writer {
    FILE *out;
    const struct cg *g;
    struct cg_names nm;
    uint32_t cur_file;
    size_t self_at; /* the next of g->self */
};

/* Whether adding c to sum would pass 2^64 - 1 in some column. */
static bool sums_overflow(const uint64_t *sum, const uint64_t *c, unsigned n)
{
    for (unsigned v = 0; v < n; v++)
        if (sum[v] + c[v] < sum[v])
            return true;
    return false;
}

/* Writes the edges of the caller at `rank`, consecutive nodes with the
 * same call line and callee summed into one edge with its calls= (from
 * count_calls); a sum that would pass 2^64 - 1 is split over several
 * call lines, which readers add up, the first with the calls. */
static void write_edges(struct cg_writer *w, uint32_t rank)
{
    const struct cg *g = w->g;
    uint32_t i = g->edge_start[rank], end = g->edge_start[rank + 1];
    uint64_t calls = 0;
    const struct cgexport_node *edge = NULL; /* the edge being written */
    while (i < end) {
        const struct cgexport_node *first = &g->node[g->edges[i]];
        if (!edge || !same_edge(edge, first))
            edge = first, calls = g->edge_calls[i];
        uint64_t sum[CG_STRIDE_MEMORY] = {0, 0, 0};
        for (; i < end; i++) {
            if (i + 8 < end) { /* the nodes are in no order */
                __builtin_prefetch(&g->node[g->edges[i + 8]]);
                __builtin_prefetch(&g->edge[(size_t)g->edges[i + 8] * g->stride]);
            }
            const struct cgexport_node *k = &g->node[g->edges[i]];
            if (!same_edge(first, k))
                break;
            const uint64_t *c = &g->edge[(size_t)g->edges[i] * g->stride];
            if (k != first && sums_overflow(sum, c, g->stride))
                break; /* not one sum: another line, which readers add up */
            for (unsigned v = 0; v < g->stride; v++)
                sum[v] += c[v];
        }
        const struct cg_entry *callee = &g->entry[first->entry];
        uint32_t cs = file_slot(g, callee->ident);
        if (cs != w->cur_file)
            name_ref(w->out, "cfl", w->nm.file_id, &w->nm.next_file, cs, file_of(g, callee->ident));
        name_ref(w->out, "cfn", w->nm.fn_id, &w->nm.next_fn, first->entry, callee->name);
        char buf[48] = "calls=";
        size_t n = 6 + decimal_u64(buf + 6, calls);
        calls = 0; /* a split edge's further lines */
        buf[n++] = ' ';
        n += decimal_u64(buf + n, g->fn[callee->ident].line);
        buf[n++] = '\n';
        fwrite_unlocked(buf, 1, n, w->out);
        write_cost(w->out, g, first->site_line, sum);
    }
}

/* An entry's fl= (when its file changes) and fn= lines. */
static void write_head(struct cg_writer *w, const struct cg_entry *e)
{
    const struct cg *g = w->g;
    uint32_t fs = file_slot(g, e->ident);
    fputc('\n', w->out);
    if (fs != w->cur_file)
        name_ref(w->out, "fl", w->nm.file_id, &w->nm.next_file, fs, file_of(g, e->ident));
    name_ref(w->out, "fn", w->nm.fn_id, &w->nm.next_fn, (uint32_t)(e - g->entry), e->name);
    w->cur_file = fs;
}

/* Sums costs into one cost line per line: the lines come ascending. */
struct cg_lines {
    uint32_t line;
    uint64_t sum[2];
    bool open;
};

static void lines_add(struct cg_writer *w, struct cg_lines *l, uint32_t line, const uint64_t *v)
{
    if (l->open && line != l->line)
        write_cost(w->out, w->g, l->line, l->sum), l->sum[0] = l->sum[1] = 0;
    l->line = line, l->open = true;
    l->sum[0] += v[0], l->sum[1] += v[1];
}

/* One entry's block: its self lines ascending, then its call edges by
 * line and callee; nothing when it has neither.  An identity of one
 * level has the aggregation's costs by function and leaf span (spans on
 * one line are consecutive), a recursive one's levels the sorted costs
 * of their frames. */
static void write_func(struct cg_writer *w, const struct cg_entry *e)
{
    const struct cg *g = w->g;
    const struct cg_func *f = &g->fn[e->ident];
    struct attrib_self_iter it;
    bool one_level = f->levels == 1;
    bool has_self = one_level ? attrib_self_begin(g->agg, e->ident, &it)
                              : w->self_at < g->n_self && g->self[w->self_at].key >> 32 == e->rank;
    bool has_edges = g->edge_start[e->rank] < g->edge_start[e->rank + 1];
    if (!has_self && !has_edges)
        return;
    write_head(w, e);
    struct cg_lines l = {0, {0, 0}, false};
    uint32_t start;
    uint64_t v[2] = {0, 0};
    while (one_level && has_self && attrib_self_next(g->agg, &it, &start, v))
        lines_add(w, &l, line_of(g, f->source, start), v);
    for (; !one_level && w->self_at < g->n_self && g->self[w->self_at].key >> 32 == e->rank;
         w->self_at++)
        lines_add(w, &l, (uint32_t)g->self[w->self_at].key, g->self[w->self_at].w);
    if (l.open)
        write_cost(w->out, g, l.line, l.sum);
    write_edges(w, e->rank);
}

/* The header's desc: line of what calls= counts (count_calls). */
static void write_calls_desc(FILE *out, const struct cg *g)
{
    const struct cgcalls *c = &g->calls;
    if (!c->known) {
        fprintf(out, "desc: Calls: unknown (%s): calls= counts the %s that crossed each call\n",
                g->mode == WIRE_MODE_CPU ? "the capture has no call counts"
                                         : "a memory capture has no call counts",
                g->mode == WIRE_MODE_CPU ? "samples" : "allocation events");
        return;
    }
    fprintf(out,
            "desc: Calls: %" PRIu64 " edges exact; %" PRIu64
            " at most (call sites shared with other edges, by recursion levels or callees, or "
            "of unknown count: the smaller of their calls and the callee's); %" PRIu64
            " unknown (the samples that crossed them)\n",
            c->exact, c->at_most, c->crossed);
}

/* The header's desc: lines, which callgrind_annotate prints and
 * KCachegrind shows: the profile's status, so that a partial or damaged
 * capture does not read as whole, and for a CPU capture which samples
 * the costs hold and the ticks that are in none (ticks.h). */
static void write_desc(FILE *out, const struct cg *g)
{
    enum agg_reason reason;
    enum agg_status st = agg_status(g->agg, &reason);
    fprintf(out, "desc: Status: %s", agg_status_name(st));
    if (st != AGG_COMPLETE)
        fprintf(out, " (%s)", agg_reason_name(reason));
    fputc('\n', out);
    write_calls_desc(out, g);
    if (g->mode != WIRE_MODE_CPU)
        return;
    struct ticks t;
    char buf[200];
    ticks_read(g->agg, &t);
    const struct attrib_cpu_totals *s = &t.samples;
    fprintf(out,
            "desc: Samples: %" PRIu64 " recorded: %" PRIu64 " jett, the costs; %" PRIu64
            " runtime, %" PRIu64 " waiting and %" PRIu64 " unavailable, in no cost\n",
            s->recorded, s->attributed, s->runtime, s->waiting, s->unavailable);
    ticks_describe(&t, buf, sizeof buf);
    fprintf(out, "desc: Ticks: %s%s\n", buf,
            t.finished ? "; the coalesced and dropped ticks have no stack and are in no cost" : "");
}

static int write_profile(FILE *out, struct cg *g, const uint32_t *order)
{
    struct cg_writer w = {out,
                          g,
                          {calloc((size_t)g->n_src + 1, sizeof(uint32_t)),
                           calloc((size_t)g->n_entry + 1, sizeof(uint32_t)), 0, 0},
                          CG_NONE,
                          0};
    int rc = -1;
    if (!w.nm.file_id || !w.nm.fn_id)
        goto out;
    bool cpu = g->mode == WIRE_MODE_CPU;
    fprintf(out, "# jett profile export: a %s profile\nversion: 1\ncreator: jett\n",
            cpu ? "CPU sampling" : "Jett heap allocation");
    write_desc(out, g);
    fprintf(out, "positions: line\nevents: %s\n", cpu ? "Samples" : "AllocBytes AllocCount");
    for (uint32_t i = 0; i < g->n_entry; i++)
        write_func(&w, &g->entry[order[i]]);
    if (cpu)
        fprintf(out, "\ntotals: %llu\n", (unsigned long long)g->total[0]);
    else
        fprintf(out, "\ntotals: %llu %llu\n", (unsigned long long)g->total[0],
                (unsigned long long)g->total[1]);
    rc = ferror(out) ? -1 : 0;
out:
    free(w.nm.file_id), free(w.nm.fn_id);
    return rc;
}

/* Ranks the entries: identities in identity order, each followed by its
 * deeper levels.  The entries in output order, or NULL. */
static uint32_t *rank_entries(struct cg *g)
{
    uint32_t *by = malloc(((size_t)g->n_fn + 1) * sizeof *by);
    uint32_t *order = malloc(((size_t)g->n_entry + 1) * sizeof *order);
    if (!by || !order) {
        free(by), free(order);
        return NULL;
    }
    for (uint32_t i = 0; i < g->n_fn; i++)
        by[i] = i;
    qsort_r(by, g->n_fn, sizeof *by, func_cmp, g);
    uint32_t r = 0;
    for (uint32_t i = 0; i < g->n_fn; i++) {
        const struct cg_func *f = &g->fn[by[i]];
        for (uint32_t level = 1; level <= f->levels; level++) {
            uint32_t e = level == 1 ? by[i] : f->deep + level - 2;
            g->entry[e].rank = r;
            order[r++] = e;
        }
    }
    free(by);
    return order;
}

static void cg_free(struct cg *g)
{
    for (uint32_t i = 0; g->src && i < g->n_src; i++)
        free(g->src[i].block), free(g->src[i].path);
    for (uint32_t i = 0; g->fn && i < g->n_fn; i++)
        free(g->fn[i].ns), free(g->fn[i].name), free(g->fn[i].disp);
    for (uint32_t i = 0; g->entry && i < g->n_entry; i++)
        free(g->entry[i].name);
    free(g->src), free(g->fn), free(g->entry), free(g->node), free(g->edge), free(g->edges);
    free(g->edge_start), free(g->self), free(g->edge_calls);
    cgcalls_free(&g->calls);
}

/* Writes the profile of an aggregated capture: 0, or -1 with err. */
static int write_model(const struct agg *a, FILE *out, char *err, size_t errlen)
{
    struct cg g = {0};
    uint32_t *order = NULL;
    int rc = 0;
    if (take_model(&g, a) != 0 || !(order = rank_entries(&g)) || list_edges(&g) != 0 ||
        count_calls(&g) != 0 || take_deep_selves(&g) != 0) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    if (rc == 0 && write_profile(out, &g, order) != 0) {
        snprintf(err, errlen, "cannot write the profile");
        rc = -1;
    }
    free(order);
    cg_free(&g);
    return rc;
}

/* The profile of a CPU capture only: -2 for a memory capture. */
static int write_samples_model(const struct agg *a, FILE *out, char *err, size_t errlen)
{
    if (agg_mode(a) != WIRE_MODE_CPU)
        return snprintf(err, errlen, "--weight samples does not apply to a memory capture"), -2;
    return write_model(a, out, err, errlen);
}

int cgexport_write_samples(struct capture_reader *r, FILE *out, struct ticks *ticks, char *err,
                           size_t errlen)
{
    return export_run(r, agg_keep_node_lines, write_samples_model, out, ticks, err, errlen);
}

int cgexport_write(struct capture_reader *r, FILE *out, struct ticks *ticks, char *err,
                   size_t errlen)
{
    return export_run(r, agg_keep_node_lines, write_model, out, ticks, err, errlen);
}
