/* cgexport: capture -> per-line self costs and call edges -> Callgrind. */
#include <stdlib.h>
#include <string.h>

#include "proto/cgexport.h"

struct cg_func {
    char *ns, *name;
    uint32_t ns_len, name_len, source, line;
    uint32_t rank; /* position in identity order, for output */
};

struct cg_source {
    char *path;
    uint32_t *lines, n_lines;
};

struct cg_node {
    uint32_t parent, func, site_line; /* site_line: in the parent's source */
    uint64_t weight[2], count;        /* observations with this leaf node */
};

/* A cost bucket: self cost at (func, line, NONE) or call-edge cost at
 * (caller, line, callee). */
struct cg_cost {
    uint32_t func, line, callee;
    uint64_t cost[2], calls;
    bool used;
};

struct cg {
    uint8_t mode;
    struct cg_source *src;
    uint32_t n_src;
    struct cg_func *fn;
    uint32_t n_fn, cap_fn;
    struct cg_node *node;
    uint32_t n_node, cap_node;
    struct cg_cost *tab;
    uint32_t cap_tab, n_tab;
    uint64_t *mark; /* per function: the sample that last saw it */
    uint32_t cap_mark;
    uint64_t mark_gen;
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

/* 1-based line of an offset in a source (0 when unknown). */
static uint32_t line_of(const struct cg *g, uint32_t source, uint32_t off)
{
    if (source == CG_NONE || source >= g->n_src || off == WIRE_NONE32)
        return 0;
    const struct cg_source *s = &g->src[source];
    return wire_line_index(s->lines, s->n_lines, off) + 1;
}

static struct cg_cost *cost_at(struct cg *g, uint32_t func, uint32_t line, uint32_t callee)
{
    if ((g->n_tab + 1) * 2 > g->cap_tab) {
        uint32_t cap = g->cap_tab ? g->cap_tab * 2 : 1024;
        struct cg_cost *t = calloc(cap, sizeof *t), *old = g->tab;
        if (!t)
            return NULL;
        uint32_t old_cap = g->cap_tab;
        g->tab = t, g->cap_tab = cap, g->n_tab = 0;
        for (uint32_t i = 0; i < old_cap; i++)
            if (old[i].used)
                *cost_at(g, old[i].func, old[i].line, old[i].callee) = old[i];
        free(old);
    }
    uint64_t h = ((uint64_t)func * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)line << 32 | callee);
    h *= 0xC2B2AE3D27D4EB4Full;
    for (uint32_t i = (uint32_t)(h >> 32) & (g->cap_tab - 1);; i = (i + 1) & (g->cap_tab - 1)) {
        struct cg_cost *c = &g->tab[i];
        if (!c->used) {
            *c = (struct cg_cost){func, line, callee, {0, 0}, 0, true};
            g->n_tab++;
            return c;
        }
        if (c->func == func && c->line == line && c->callee == callee)
            return c;
    }
}

/* Self cost at the leaf now; the call edges are charged once per leaf
 * node at the end (charge_edges), with everything observed there. */
static int charge(struct cg *g, uint32_t leaf, uint32_t leaf_line, const uint64_t w[2])
{
    struct cg_cost *self = cost_at(g, g->node[leaf].func, leaf_line, CG_NONE);
    if (!self)
        return -1;
    self->cost[0] += w[0], self->cost[1] += w[1];
    struct cg_node *n = &g->node[leaf];
    n->weight[0] += w[0], n->weight[1] += w[1], n->count++;
    g->total[0] += w[0], g->total[1] += w[1];
    return 0;
}

/* One unit of a leaf node's weight on the edge out of every other
 * function's outermost frame, found with per-function marks (O(depth)). */
static int charge_edges(struct cg *g, uint32_t leaf)
{
    const struct cg_node *ln = &g->node[leaf];
    uint32_t path[WIRE_MAX_STACK_DEPTH + 1], n = 0;
    for (uint32_t k = leaf; k != CG_NONE && n <= WIRE_MAX_STACK_DEPTH; k = g->node[k].parent)
        path[n++] = k;
    g->mark_gen++;
    g->mark[ln->func] = g->mark_gen; /* the leaf's own frames carry no edge */
    /* path[n-1] is the root: walk root -> leaf, first sight is outermost. */
    for (uint32_t i = n; i-- > 1;) {
        uint32_t f = g->node[path[i]].func;
        if (g->mark[f] == g->mark_gen)
            continue;
        g->mark[f] = g->mark_gen;
        const struct cg_node *callee = &g->node[path[i - 1]];
        struct cg_cost *e = cost_at(g, f, callee->site_line, callee->func);
        if (!e)
            return -1;
        e->cost[0] += ln->weight[0], e->cost[1] += ln->weight[1], e->calls += ln->count;
    }
    return 0;
}

static int charge_all_edges(struct cg *g)
{
    for (uint32_t i = 0; i < g->n_node; i++)
        if (g->node[i].count && charge_edges(g, i) != 0)
            return -1;
    return 0;
}

static char *dupn(const char *s, uint32_t n)
{
    char *p = malloc((size_t)n + 1);
    if (p)
        memcpy(p, s, n), p[n] = 0;
    return p;
}

static int on_source(struct cg *g, const struct wire_source *s)
{
    struct cg_source *v = realloc(g->src, (g->n_src + 1) * sizeof *v);
    if (!v)
        return -1;
    g->src = v;
    struct cg_source *d = &v[g->n_src++];
    d->path = dupn(s->path.ptr, s->path.len);
    d->lines = malloc(((size_t)s->n_lines + 1) * sizeof *d->lines);
    d->n_lines = s->n_lines;
    if (!d->path || !d->lines)
        return -1;
    memcpy(d->lines, s->line_starts, (size_t)s->n_lines * sizeof *d->lines);
    return 0;
}

static int on_func(struct cg *g, const struct wire_func *f)
{
    struct cg_func *v = grow(g->fn, &g->cap_fn, g->n_fn + 1, sizeof *v);
    if (!v)
        return -1;
    g->fn = v;
    uint32_t old = g->cap_mark;
    uint64_t *m = grow(g->mark, &g->cap_mark, g->n_fn + 1, sizeof *m);
    if (!m)
        return -1;
    memset(m + old, 0, (size_t)(g->cap_mark - old) * sizeof *m);
    g->mark = m;
    v[g->n_fn++] = (struct cg_func){dupn(f->ns.ptr, f->ns.len),
                                    dupn(f->name.ptr, f->name.len),
                                    f->ns.len,
                                    f->name.len,
                                    f->source_id,
                                    line_of(g, f->source_id, f->decl.start),
                                    0};
    return v[g->n_fn - 1].ns && v[g->n_fn - 1].name ? 0 : -1;
}

static int on_event(struct cg *g, const struct wire_event *ev)
{
    if (ev->kind == WIRE_ENTRY_STACK) {
        struct cg_node *v = grow(g->node, &g->cap_node, g->n_node + 1, sizeof *v);
        if (!v)
            return -1;
        g->node = v;
        const struct wire_stack *s = &ev->u.stack;
        uint32_t caller_src =
            s->parent == WIRE_NONE32 ? CG_NONE : g->fn[g->node[s->parent].func].source;
        v[g->n_node++] = (struct cg_node){
            s->parent, s->func_id, line_of(g, caller_src, s->site.start), {0, 0}, 0};
        return 0;
    }
    uint32_t stack = ev->kind == WIRE_ENTRY_SAMPLE ? ev->u.sample.stack_id : ev->u.alloc.stack_id;
    struct wire_span span = ev->kind == WIRE_ENTRY_SAMPLE ? ev->u.sample.span : ev->u.alloc.span;
    uint64_t w[2] = {1, 0};
    if (ev->kind == WIRE_ENTRY_SAMPLE && ev->u.sample.state != WIRE_STATE_JETT)
        return 0;
    if (ev->kind == WIRE_ENTRY_ALLOC) {
        const struct wire_alloc *a = &ev->u.alloc;
        if (a->op == WIRE_OP_FREE || (a->op == WIRE_OP_RESIZE && a->new_size <= a->old_size))
            return 0;
        w[0] = a->op == WIRE_OP_ALLOCATE ? a->new_size : a->new_size - a->old_size;
        w[1] = a->op == WIRE_OP_ALLOCATE;
    }
    if (stack == WIRE_NONE32)
        return 0;
    uint32_t leaf_fn = g->node[stack].func;
    return charge(g, stack, line_of(g, g->fn[leaf_fn].source, span.start), w);
}

static int read_capture(struct cg *g, struct capture_reader *r, char *err, size_t errlen)
{
    struct wire_record rec;
    int rc;
    while ((rc = capture_reader_next(r, &rec)) > 0) {
        int ok = 0;
        if (rec.type == WIRE_HELLO)
            g->mode = rec.u.hello.mode;
        else if (rec.type == WIRE_SOURCE)
            ok = on_source(g, &rec.u.source);
        else if (rec.type == WIRE_FUNC)
            ok = on_func(g, &rec.u.func);
        else if (rec.type == WIRE_EVENTS) {
            struct wire_events_iter it;
            struct wire_event ev;
            wire_events_begin(&it, &rec.u.events);
            while (ok == 0 && (rc = wire_events_next(capture_reader_decoder(r), &it, &ev)) > 0)
                ok = on_event(g, &ev);
            if (rc < 0) {
                const struct wire_error *e = wire_decoder_error(capture_reader_decoder(r));
                snprintf(err, errlen, "byte %llu: %s", (unsigned long long)e->offset, e->msg);
                return -1;
            }
        }
        if (ok != 0) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    if (rc < 0)
        snprintf(err, errlen, "%s", capture_reader_error(r));
    return rc < 0 ? -1 : 0;
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

/* Costs of one function: self lines first (ascending), then edges by
 * call line and callee rank. */
static int cost_cmp(const void *a, const void *b, void *ctx)
{
    const struct cg_cost *x = *(const struct cg_cost *const *)a,
                         *y = *(const struct cg_cost *const *)b;
    const struct cg *g = ctx;
    if (x->func != y->func)
        return g->fn[x->func].rank < g->fn[y->func].rank ? -1 : 1;
    bool ex = x->callee != CG_NONE, ey = y->callee != CG_NONE;
    if (ex != ey)
        return ex ? 1 : -1;
    if (x->line != y->line)
        return x->line < y->line ? -1 : 1;
    if (!ex)
        return 0;
    return g->fn[x->callee].rank < g->fn[y->callee].rank ? -1 : 1;
}

/* "fl=(N) path" the first time a file is named, "fl=(N)" later. */
static void name_ref(FILE *out, const char *key, uint32_t *ids, uint32_t *next, uint32_t slot,
                     const char *text)
{
    if (ids[slot] == 0) {
        ids[slot] = ++*next;
        fprintf(out, "%s=(%u) %s\n", key, ids[slot], text);
    } else {
        fprintf(out, "%s=(%u)\n", key, ids[slot]);
    }
}

struct cg_names {
    uint32_t *file_id, *fn_id, next_file, next_fn;
    char **display; /* "ns.name" per function */
};

static void write_cost(FILE *out, const struct cg *g, const struct cg_cost *c)
{
    if (g->mode == WIRE_MODE_CPU)
        fprintf(out, "%u %llu\n", c->line, (unsigned long long)c->cost[0]);
    else
        fprintf(out, "%u %llu %llu\n", c->line, (unsigned long long)c->cost[0],
                (unsigned long long)c->cost[1]);
}

/* File slot of a function: its source id, or n_src for "???". */
static uint32_t file_slot(const struct cg *g, uint32_t f)
{
    uint32_t s = g->fn[f].source;
    return s == CG_NONE || s >= g->n_src ? g->n_src : s;
}

static void write_body(FILE *out, const struct cg *g, struct cg_cost **costs, uint32_t n,
                       struct cg_names *nm)
{
    uint32_t cur_fn = CG_NONE, cur_file = CG_NONE;
    for (uint32_t i = 0; i < n; i++) {
        const struct cg_cost *c = costs[i];
        if (c->func != cur_fn) {
            uint32_t fs = file_slot(g, c->func);
            fputc('\n', out);
            if (fs != cur_file)
                name_ref(out, "fl", nm->file_id, &nm->next_file, fs, file_of(g, c->func));
            name_ref(out, "fn", nm->fn_id, &nm->next_fn, c->func, nm->display[c->func]);
            cur_fn = c->func, cur_file = fs;
        }
        if (c->callee != CG_NONE) {
            uint32_t cs = file_slot(g, c->callee);
            if (cs != cur_file)
                name_ref(out, "cfl", nm->file_id, &nm->next_file, cs, file_of(g, c->callee));
            name_ref(out, "cfn", nm->fn_id, &nm->next_fn, c->callee, nm->display[c->callee]);
            fprintf(out, "calls=%llu %u\n", (unsigned long long)c->calls, g->fn[c->callee].line);
        }
        write_cost(out, g, c);
    }
}

static int write_profile(FILE *out, struct cg *g)
{
    uint32_t *order = malloc(((size_t)g->n_fn + 1) * sizeof *order);
    struct cg_cost **costs = malloc(((size_t)g->n_tab + 1) * sizeof *costs);
    struct cg_names nm = {calloc((size_t)g->n_src + 1, sizeof(uint32_t)),
                          calloc((size_t)g->n_fn + 1, sizeof(uint32_t)), 0, 0,
                          calloc((size_t)g->n_fn + 1, sizeof(char *))};
    int rc = -1;
    if (!order || !costs || !nm.file_id || !nm.fn_id || !nm.display)
        goto out;
    for (uint32_t i = 0; i < g->n_fn; i++) {
        order[i] = i;
        size_t n = (size_t)g->fn[i].ns_len + g->fn[i].name_len + 2;
        if (!(nm.display[i] = malloc(n)))
            goto out;
        snprintf(nm.display[i], n, "%s.%s", g->fn[i].ns, g->fn[i].name);
    }
    qsort_r(order, g->n_fn, sizeof *order, func_cmp, g);
    for (uint32_t i = 0; i < g->n_fn; i++)
        g->fn[order[i]].rank = i;
    uint32_t n = 0;
    for (uint32_t i = 0; i < g->cap_tab; i++)
        if (g->tab[i].used)
            costs[n++] = &g->tab[i];
    qsort_r(costs, n, sizeof *costs, cost_cmp, g);
    bool cpu = g->mode == WIRE_MODE_CPU;
    fprintf(out,
            "# jett profile export: a %s profile\nversion: 1\ncreator: jett\n"
            "positions: line\nevents: %s\n",
            cpu ? "CPU sampling" : "Jett heap allocation",
            cpu ? "Samples" : "AllocBytes AllocCount");
    write_body(out, g, costs, n, &nm);
    if (cpu)
        fprintf(out, "\ntotals: %llu\n", (unsigned long long)g->total[0]);
    else
        fprintf(out, "\ntotals: %llu %llu\n", (unsigned long long)g->total[0],
                (unsigned long long)g->total[1]);
    rc = ferror(out) ? -1 : 0;
out:
    for (uint32_t i = 0; nm.display && i < g->n_fn; i++)
        free(nm.display[i]);
    free(nm.display), free(nm.file_id), free(nm.fn_id), free(order), free(costs);
    return rc;
}

static void cg_free(struct cg *g)
{
    for (uint32_t i = 0; i < g->n_src; i++)
        free(g->src[i].path), free(g->src[i].lines);
    for (uint32_t i = 0; i < g->n_fn; i++)
        free(g->fn[i].ns), free(g->fn[i].name);
    free(g->src), free(g->fn), free(g->node), free(g->tab), free(g->mark);
}

int cgexport_write(struct capture_reader *r, FILE *out, char *err, size_t errlen)
{
    struct cg g = {0};
    int rc = read_capture(&g, r, err, errlen);
    if (rc == 0 && charge_all_edges(&g) != 0) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    if (rc == 0 && write_profile(out, &g) != 0) {
        snprintf(err, errlen, "cannot write the profile");
        rc = -1;
    }
    cg_free(&g);
    return rc;
}
