/* diff_wait: a CPU diff's waiting call sites, matched across the sides
 * by function (namespace, function, origin, path) and position. */
#include <stdlib.h>
#include <string.h>

#include "daemon/diff.h"

static int u64_cmp(uint64_t a, uint64_t b)
{
    return (a > b) - (a < b); /* RANK_NA is the largest: unknown last */
}

/* What identifies a site: its function as the functions' rows match it
 * (diff_side_match_cmp), and its position. */
struct site_key {
    struct diff_side fn;
    uint64_t line, column;
};

static struct site_key key_of(const struct rank_wait *w)
{
    return (struct site_key){
        {w->ns, w->fn, w->where.path, 0, w->origin, 0, 0, 0, 0}, w->where.line, w->where.column};
}

/* The identity order of sites: namespace, function, origin, path, line,
 * column. */
static int key_cmp(const struct site_key *x, const struct site_key *y)
{
    int c = diff_side_match_cmp(&x->fn, &y->fn);
    if (!c)
        c = u64_cmp(x->line, y->line);
    return c ? c : u64_cmp(x->column, y->column);
}

static int site_cmp(const struct rank_wait *x, const struct rank_wait *y)
{
    struct site_key p = key_of(x), q = key_of(y);
    return key_cmp(&p, &q);
}

static int by_site(const void *a, const void *b)
{
    return site_cmp(a, b);
}

static bool comparable(const struct diff_wait *w)
{
    return w->verdict != DIFF_INCOMPARABLE;
}

/* The ordering key: |change|, or the larger side's samples for a site
 * that is not comparable (its missing side is RANK_NA). */
static uint64_t key(const struct diff_wait *w)
{
    if (!comparable(w))
        return w->base == RANK_NA                      ? w->neu
               : w->neu == RANK_NA || w->base > w->neu ? w->base
                                                       : w->neu;
    return w->base > w->neu ? w->base - w->neu : w->neu - w->base;
}

/* Compared sites first, by key desc, then identity and position. */
static int row_cmp(const void *a, const void *b)
{
    const struct diff_wait *x = a, *y = b;
    if (comparable(x) != comparable(y))
        return comparable(x) ? -1 : 1;
    if (key(x) != key(y))
        return key(x) > key(y) ? -1 : 1;
    struct site_key p = {{x->ns, x->fn, x->path, 0, x->origin, 0, 0, 0, 0}, x->line, x->column},
                    q = {{y->ns, y->fn, y->path, 0, y->origin, 0, 0, 0, 0}, y->line, y->column};
    return key_cmp(&p, &q);
}

/* A copy of a report's sites, sorted by identity; NULL when out of memory. */
static struct rank_wait *sorted(const struct rank_report *r)
{
    struct rank_wait *v = malloc((r->n_all_waits + 1) * sizeof *v);
    if (v && r->n_all_waits) {
        memcpy(v, r->all_waits, r->n_all_waits * sizeof *v);
        qsort(v, r->n_all_waits, sizeof *v, by_site);
    }
    return v;
}

int diff_waits_build(struct diff *d)
{
    if (d->base->mode != WIRE_MODE_CPU)
        return 0;
    size_t nb = d->base->n_all_waits, nn = d->neu->n_all_waits, i = 0, k = 0;
    struct rank_wait *b = sorted(d->base), *n = sorted(d->neu);
    d->waits = calloc(nb + nn + 1, sizeof *d->waits);
    if (!b || !n || !d->waits) {
        free(b), free(n);
        return -1;
    }
    while (i < nb || k < nn) {
        int c = i == nb ? 1 : k == nn ? -1 : site_cmp(&b[i], &n[k]);
        const struct rank_wait *e = c <= 0 ? &b[i] : &n[k];
        struct diff_wait *w = &d->waits[d->n_waits++];
        *w = (struct diff_wait){e->ns,
                                e->fn,
                                e->where.path,
                                e->origin,
                                e->where.line,
                                e->where.column,
                                c <= 0 ? b[i].where.self_samples : 0,
                                c >= 0 ? n[k].where.self_samples : 0,
                                DIFF_INCOMPARABLE,
                                DIFF_NO_DIRECTION,
                                1};
        if (diff_comparable(d, c <= 0, c >= 0)) {
            uint32_t r0 = d->base->rate_hz, r1 = d->neu->rate_hz;
            w->verdict = diff_samples_verdict(w->base, w->neu, r0, r1, &w->p);
            w->direction = diff_samples_direction(w->base, w->neu, r0, r1);
        } else {
            w->base = c <= 0 ? w->base : RANK_NA;
            w->neu = c >= 0 ? w->neu : RANK_NA;
        }
        i += c <= 0, k += c >= 0;
    }
    qsort(d->waits, d->n_waits, sizeof *d->waits, row_cmp);
    free(b), free(n);
    return 0;
}
