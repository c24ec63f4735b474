/* rank_retained: the retained section of a memory report: the walk's rows
 * grouped by holder and creation-site function, the largest ten, and the
 * remainder row (jett-profile(7), "Retained holders"). */
#include <stdlib.h>

#include "daemon/attrib.h"
#include "daemon/rank-internal.h"

typedef unsigned __int128 u128;

static int u32_cmp(uint32_t x, uint32_t y)
{
    return x < y ? -1 : x > y; /* WIRE_NONE32 is the largest: unavailable last */
}

/* Holders by namespace, name, source, declaration start and end; no
 * holder after every one. */
static int holder_cmp(const struct agg *a, const struct attrib_holder *x,
                      const struct attrib_holder *y)
{
    if (x->ns == NULL || y->ns == NULL)
        return (x->ns == NULL) - (y->ns == NULL);
    int c = rank_bytes_cmp(x->ns, x->ns_len, y->ns, y->ns_len);
    if (c == 0)
        c = rank_bytes_cmp(x->name, x->name_len, y->name, y->name_len);
    if (c == 0)
        c = rank_source_cmp(a, x->source, y->source);
    if (c == 0)
        c = u32_cmp(x->decl.start, y->decl.start);
    return c != 0 ? c : u32_cmp(x->decl.end, y->decl.end);
}

/* Function identities as the bottlenecks order them, unknown last. */
static int func_cmp(const struct agg *a, uint32_t x, uint32_t y)
{
    if (x == y)
        return 0;
    if (x == ATTRIB_NONE || y == ATTRIB_NONE)
        return x == ATTRIB_NONE ? 1 : -1;
    return rank_ident_cmp(a, x, y);
}

static int key_cmp(const void *p, const void *q, void *ctx)
{
    const struct attrib_retained_row *x = p, *y = q;
    int c = holder_cmp(ctx, &x->holder, &y->holder);
    return c != 0 ? c : func_cmp(ctx, x->ident, y->ident);
}

/* The section's order: bytes descending, then the group's identity. */
static int row_cmp(const void *p, const void *q, void *ctx)
{
    const struct attrib_retained_row *x = p, *y = q;
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes ? -1 : 1;
    return key_cmp(p, q, ctx);
}

/* Every kept row, those of one holder and function added up (sums of a
 * valid stream fit: they are at most the live bytes); *n of them. */
static struct attrib_retained_row *groups(const struct agg *a, size_t *n)
{
    struct attrib_retained_iter it;
    struct attrib_retained_row row;
    size_t count = 0;
    for (attrib_retained_begin(a, &it); attrib_retained_next(a, &it, &row);)
        count++;
    struct attrib_retained_row *g = malloc((count + 1) * sizeof *g);
    if (g == NULL)
        return NULL;
    count = 0;
    for (attrib_retained_begin(a, &it); attrib_retained_next(a, &it, &g[count]);)
        count++;
    qsort_r(g, count, sizeof *g, key_cmp, (void *)a);
    size_t k = 0;
    for (size_t i = 0; i < count; i++) {
        if (k > 0 && key_cmp(&g[k - 1], &g[i], (void *)a) == 0) {
            g[k - 1].bytes += g[i].bytes, g[k - 1].objects += g[i].objects;
            continue;
        }
        g[k++] = g[i];
    }
    qsort_r(g, k, sizeof *g, row_cmp, (void *)a);
    *n = k;
    return g;
}

/* The row's holder and function as the report names them. */
static void fill(const struct agg *a, const struct attrib_retained_row *g, struct rank_retained *o)
{
    const struct attrib_holder *h = &g->holder;
    *o = (struct rank_retained){.holder_line = RANK_NA, .line = RANK_NA};
    o->holder_ns = (struct rank_str){h->ns, h->ns_len};
    o->holder_name = (struct rank_str){h->name, h->name_len};
    struct attrib_source s;
    if (h->ns && h->source != ATTRIB_NONE) {
        attrib_source(a, h->source, &s);
        o->holder_path = (struct rank_str){s.path, s.path_len};
        if (wire_span_present(h->decl))
            o->holder_line = (uint64_t)wire_line_index(s.lines, s.n_lines, h->decl.start) + 1;
    }
    if (g->ident != ATTRIB_NONE) {
        struct attrib_ident d;
        attrib_ident(a, g->ident, &d);
        o->ns = (struct rank_str){d.ns, d.ns_len};
        o->fn = (struct rank_str){d.name, d.name_len};
        if (d.source != ATTRIB_NONE) {
            attrib_source(a, d.source, &s);
            o->path = (struct rank_str){s.path, s.path_len};
        }
        uint32_t line = attrib_ident_line(a, g->ident);
        o->line = line ? line : RANK_NA;
    }
    o->bytes = g->bytes, o->objects = g->objects;
}

/* What the listed rows leave out of the live allocations, when anything. */
static void remainder_row(const struct agg *a, u128 bytes, u128 objects, struct rank_report *r)
{
    struct attrib_mem_totals t;
    attrib_mem_totals(a, &t);
    u128 live_objects = (u128)t.allocation_count - t.free_count;
    struct rank_retained *o = &r->retained[r->n_retained];
    *o = (struct rank_retained){.remainder = true, .holder_line = RANK_NA, .line = RANK_NA};
    if (!attrib_retained_exact(a) || bytes > t.live || objects > live_objects) {
        o->numbers_unavailable = true; /* (more than live: a collector error) */
        r->n_retained++;
        return;
    }
    o->bytes = (uint64_t)(t.live - bytes), o->objects = (uint64_t)(live_objects - objects);
    if (o->bytes > 0 || o->objects > 0)
        r->n_retained++;
}

/* The holder whose groups hold the most bytes in all (ties in holder
 * order), over every group, listed or not; none without a holder. */
static void top_holder(const struct agg *a, struct attrib_retained_row *g, size_t n,
                       struct rank_report *r)
{
    qsort_r(g, n, sizeof *g, key_cmp, (void *)a); /* a holder's groups side by side */
    u128 best = 0;
    for (size_t i = 0, j; i < n; i = j) {
        u128 sum = 0;
        for (j = i; j < n && holder_cmp(a, &g[i].holder, &g[j].holder) == 0; j++)
            sum += g[j].bytes;
        if (g[i].holder.ns == NULL || sum <= best)
            continue;
        best = sum;
        fill(a, &g[i], &r->top_holder);
        r->top_holder.bytes = sum > UINT64_MAX ? UINT64_MAX : (uint64_t)sum;
        r->has_top_holder = true;
    }
}

int rank_retained(const struct agg *a, struct rank_report *r)
{
    enum attrib_walk walk = attrib_retained_walk(a);
    r->n_retained = 0;
    r->walk = walk == ATTRIB_WALK_NONE       ? RANK_WALK_UNAVAILABLE
              : walk == ATTRIB_WALK_COMPLETE ? RANK_WALK_COMPLETE
                                             : RANK_WALK_PARTIAL;
    if (walk == ATTRIB_WALK_NONE)
        return 0;
    size_t n;
    struct attrib_retained_row *g = groups(a, &n);
    if (g == NULL)
        return -1;
    u128 bytes = 0, objects = 0;
    for (size_t i = 0; i < n && i < RANK_RETAINED; i++) {
        fill(a, &g[i], &r->retained[r->n_retained++]);
        bytes += g[i].bytes, objects += g[i].objects;
    }
    top_holder(a, g, n, r);
    free(g);
    remainder_row(a, bytes, objects, r);
    return 0;
}
