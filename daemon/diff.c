/* diff: matching, ordering and rendering two profiles' functions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/diff.h"
#include "proto/toon.h"

typedef __int128 i128;

struct rank_options diff_rank_options(void)
{
    struct rank_options o = {true, true, 0, UINT32_MAX, true};
    return o;
}

static int str_cmp(struct rank_str a, struct rank_str b)
{
    if (!a.ptr || !b.ptr)
        return (a.ptr == NULL) - (b.ptr == NULL); /* unavailable sorts last */
    size_t n = a.len < b.len ? a.len : b.len;
    int c = memcmp(a.ptr, b.ptr, n);
    return c ? c : (a.len > b.len) - (a.len < b.len);
}

/* Identity order: namespace, function, origin, path, line. */
static int ident_cmp(const struct diff_side *x, const struct diff_side *y)
{
    int c = str_cmp(x->ns, y->ns);
    if (!c)
        c = str_cmp(x->fn, y->fn);
    if (!c)
        c = (x->origin < 0 ? 3 : x->origin) - (y->origin < 0 ? 3 : y->origin);
    if (!c)
        c = str_cmp(x->path, y->path);
    if (!c)
        c = (x->line > y->line) - (x->line < y->line);
    return c;
}

static int side_cmp(const void *a, const void *b)
{
    return ident_cmp(a, b);
}

int diff_sides_take(struct rank_report *r, struct diff_sides *out)
{
    struct diff_side *v = malloc((r->n_entries + 1) * sizeof *v);
    for (size_t i = 0; v && i < r->n_entries; i++) {
        const struct rank_entry *e = &r->entries[i];
        v[i] = (struct diff_side){e->ns,
                                  e->fn,
                                  e->path,
                                  e->line,
                                  e->origin,
                                  e->primary,
                                  e->secondary,
                                  e->retained_bytes,
                                  e->live_at_peak_bytes};
    }
    out->v = v, out->n = r->n_entries;
    if (!v)
        return -1;
    qsort(v, r->n_entries, sizeof *v, side_cmp);
    rank_free_entries(r);
    return 0;
}

void diff_sides_free(struct diff_sides *s)
{
    free(s->v);
    s->v = NULL, s->n = 0;
}

static uint64_t denom(const struct rank_report *r)
{
    return r->mode == WIRE_MODE_CPU ? r->cpu.attributed_samples : r->mem.attributed_allocated_bytes;
}

static i128 abs128(i128 v)
{
    return v < 0 ? -v : v;
}

/* The row's |change| numerator: CPU i1*d0 - i0*d1 (one denominator d0*d1
 * for every row), memory the allocated-bytes difference. */
static void row_key(const struct diff *d, struct diff_row *row)
{
    uint64_t p0 = row->has_base ? row->base.primary : 0, p1 = row->has_neu ? row->neu.primary : 0;
    if (d->base->mode == WIRE_MODE_CPU)
        row->key = abs128((i128)p1 * denom(d->base) - (i128)p0 * denom(d->neu));
    else
        row->key = abs128((i128)p1 - (i128)p0);
    bool same = row->has_base && row->has_neu && row->key == 0 && p0 == p1 &&
                row->base.secondary == row->neu.secondary &&
                row->base.retained_bytes == row->neu.retained_bytes &&
                row->base.live_at_peak_bytes == row->neu.live_at_peak_bytes;
    row->change = !row->has_base  ? DIFF_APPEARED
                  : !row->has_neu ? DIFF_DISAPPEARED
                  : same          ? DIFF_UNCHANGED
                                  : DIFF_CHANGED;
}

static const struct diff_side *either(const struct diff_row *r)
{
    return r->has_neu ? &r->neu : &r->base;
}

/* Absolute change desc, then secondary (self samples or allocation count,
 * the larger side) desc, then identity. */
static int row_cmp(const void *a, const void *b)
{
    const struct diff_row *x = a, *y = b;
    if (x->key != y->key)
        return x->key > y->key ? -1 : 1;
    uint64_t sx = x->has_neu ? x->neu.secondary : 0, sy = y->has_neu ? y->neu.secondary : 0;
    if (x->has_base && x->base.secondary > sx)
        sx = x->base.secondary;
    if (y->has_base && y->base.secondary > sy)
        sy = y->base.secondary;
    if (sx != sy)
        return sx > sy ? -1 : 1;
    return ident_cmp(either(x), either(y));
}

int diff_build(const struct rank_report *base, const struct diff_sides *bs,
               const struct rank_report *neu, const struct diff_sides *ns, struct diff *out,
               char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (base->mode != neu->mode) {
        snprintf(err, errlen, "BASE is a %s profile and NEW a %s profile",
                 base->mode == WIRE_MODE_CPU ? "cpu" : "memory",
                 neu->mode == WIRE_MODE_CPU ? "cpu" : "memory");
        return -1;
    }
    out->base = base, out->neu = neu;
    const struct diff_side *b = bs->v, *n = ns->v;
    out->rows = calloc(bs->n + ns->n + 1, sizeof *out->rows);
    if (!out->rows) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    size_t i = 0, k = 0;
    while (i < bs->n || k < ns->n) {
        int c = i == bs->n ? 1 : k == ns->n ? -1 : ident_cmp(&b[i], &n[k]);
        struct diff_row *row = &out->rows[out->n++];
        if ((row->has_base = c <= 0))
            row->base = b[i++];
        if ((row->has_neu = c >= 0))
            row->neu = n[k++];
        row_key(out, row);
    }
    qsort(out->rows, out->n, sizeof *out->rows, row_cmp);
    return 0;
}

void diff_free(struct diff *d)
{
    free(d->rows);
    d->rows = NULL;
}

/* Rounds num / den half away from zero (den > 0). */
static int64_t round_div(i128 num, i128 den)
{
    i128 q = (abs128(num) * 2 + den) / (den * 2);
    return (int64_t)(num < 0 ? -q : q);
}

int64_t diff_points_hundredths(uint64_t n0, uint64_t d0, uint64_t n1, uint64_t d1)
{
    /* n1/d1 - n0/d0 in hundredths of a percent: x 10000. */
    if (d0 == 0 && d1 == 0)
        return 0;
    if (d0 == 0)
        return round_div((i128)n1 * 10000, d1);
    if (d1 == 0)
        return -round_div((i128)n0 * 10000, d0);
    return round_div(((i128)n1 * d0 - (i128)n0 * d1) * 10000, (i128)d0 * d1);
}
