/* diff: matching, ordering and rendering two profiles' functions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/diff.h"
#include "proto/toon.h"

typedef __int128 i128;

struct rank_options diff_rank_options(void)
{
    struct rank_options o = {true, true, 0, UINT32_MAX, true, true};
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

/* What matches a function across the captures: namespace, function,
 * origin, path; not the declaration line, which moves with any edit
 * above it. */
static int match_cmp(const struct diff_side *x, const struct diff_side *y)
{
    int c = str_cmp(x->ns, y->ns);
    if (!c)
        c = str_cmp(x->fn, y->fn);
    if (!c)
        c = (x->origin < 0 ? 3 : x->origin) - (y->origin < 0 ? 3 : y->origin);
    if (!c)
        c = str_cmp(x->path, y->path);
    return c;
}

/* Identity order: the match keys, then the line (declaration order
 * among functions of one name in one file). */
static int ident_cmp(const struct diff_side *x, const struct diff_side *y)
{
    int c = match_cmp(x, y);
    return c ? c : (x->line > y->line) - (x->line < y->line);
}

int diff_side_cmp(const struct diff_side *x, const struct diff_side *y)
{
    return ident_cmp(x, y);
}

int diff_side_match_cmp(const struct diff_side *x, const struct diff_side *y)
{
    return match_cmp(x, y);
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

static i128 abs128(i128 v)
{
    return v < 0 ? -v : v;
}

/* A count, an unavailable one counting as 0. */
static uint64_t known(uint64_t v)
{
    return v == RANK_NA ? 0 : v;
}

/* |b - a| of two counts, an unavailable one counting as 0. */
static uint64_t abs_change(uint64_t a, uint64_t b)
{
    a = known(a), b = known(b);
    return a > b ? a - b : b - a;
}

enum diff_trust diff_side_trust(const struct rank_report *r)
{
    if (r->status == AGG_COMPLETE)
        return DIFF_TRUST_ALL;
    if (r->status == AGG_PARTIAL && (r->reason == AGG_REASON_CPU_METADATA_LIMIT ||
                                     r->reason == AGG_REASON_RETENTION_METADATA_LIMIT))
        return DIFF_TRUST_HELD;
    return DIFF_TRUST_NONE;
}

const char *diff_status_text(const struct rank_report *r, char buf[DIFF_STATUS_LEN])
{
    snprintf(buf, DIFF_STATUS_LEN, "%s", agg_status_name(r->status));
    if (r->status == AGG_PARTIAL)
        snprintf(buf, DIFF_STATUS_LEN, "partial (%s)", agg_reason_name(r->reason));
    return buf;
}

bool diff_comparable(const struct diff *d, bool has_base, bool has_neu)
{
    enum diff_trust tb = diff_side_trust(d->base), tn = diff_side_trust(d->neu);
    return tb != DIFF_TRUST_NONE && tn != DIFF_TRUST_NONE && (has_base || tb == DIFF_TRUST_ALL) &&
           (has_neu || tn == DIFF_TRUST_ALL);
}

static uint64_t larger(uint64_t a, uint64_t b)
{
    return known(a) > known(b) ? known(a) : known(b);
}

static enum diff_direction bytes_direction(uint64_t a, uint64_t b)
{
    return b > a ? DIFF_GREW : b < a ? DIFF_SHRANK : DIFF_SAME;
}

/* A row that is not comparable: no change, verdict or direction; it is
 * ordered after the others by its larger side's self samples then
 * inclusive samples (allocated then retained bytes). */
static void incomparable(const struct diff *d, struct diff_row *row, const struct diff_side *b,
                         const struct diff_side *n)
{
    bool cpu = d->base->mode == WIRE_MODE_CPU;
    row->change = DIFF_NOT_COMPARABLE;
    row->key = cpu ? larger(b->secondary, n->secondary) : larger(b->primary, n->primary);
    row->key2 = cpu ? larger(b->primary, n->primary) : larger(b->retained_bytes, n->retained_bytes);
    row->verdict = row->self_verdict = DIFF_INCOMPARABLE;
    row->direction = row->self_direction = DIFF_NO_DIRECTION;
    row->p = row->self_p = 1;
}

/* The row's change, verdicts, directions and ordering keys: CPU
 * |change| of self then inclusive samples, memory of allocated then
 * retained bytes. */
static void row_key(const struct diff *d, struct diff_row *row)
{
    static const struct diff_side none = {{NULL, 0}, {NULL, 0}, {NULL, 0}, 0, 0, 0, 0, 0, 0};
    const struct diff_side *b = row->has_base ? &row->base : &none;
    const struct diff_side *n = row->has_neu ? &row->neu : &none;
    if (!diff_comparable(d, row->has_base, row->has_neu)) {
        incomparable(d, row, b, n);
        return;
    }
    uint64_t p0 = b->primary, p1 = n->primary;
    if (d->base->mode == WIRE_MODE_CPU) {
        uint32_t r0 = d->base->rate_hz, r1 = d->neu->rate_hz;
        row->key = diff_samples_change(known(b->secondary), known(n->secondary), r0, r1);
        row->key2 = diff_samples_change(known(p0), known(p1), r0, r1);
    } else {
        row->key = abs_change(p0, p1);
        row->key2 = abs_change(b->retained_bytes, n->retained_bytes);
    }
    bool same;
    if (d->base->mode == WIRE_MODE_CPU) {
        /* sample counts are compared at the ratio of the rates */
        uint32_t r0 = d->base->rate_hz, r1 = d->neu->rate_hz;
        row->verdict = diff_samples_verdict(p0, p1, r0, r1, &row->p);
        row->self_verdict = diff_samples_verdict(b->secondary, n->secondary, r0, r1, &row->self_p);
        row->direction = diff_samples_direction(p0, p1, r0, r1);
        row->self_direction = diff_samples_direction(b->secondary, n->secondary, r0, r1);
        same = row->direction == DIFF_SAME && row->self_direction == DIFF_SAME;
    } else {
        /* allocation counts are exact: any change is real */
        same = p0 == p1 && b->secondary == n->secondary && b->retained_bytes == n->retained_bytes &&
               b->live_at_peak_bytes == n->live_at_peak_bytes;
        row->verdict = same ? DIFF_NONE : DIFF_SIGNIFICANT;
        row->p = row->self_p = 1, row->self_verdict = row->verdict;
        row->direction = row->self_direction = bytes_direction(p0, p1);
    }
    row->change = !row->has_base  ? DIFF_APPEARED
                  : !row->has_neu ? DIFF_DISAPPEARED
                  : same          ? DIFF_UNCHANGED
                                  : DIFF_CHANGED;
}

static const struct diff_side *either(const struct diff_row *r)
{
    return r->has_neu ? &r->neu : &r->base;
}

/* Compared rows first; absolute changes desc, then secondary (self
 * samples or allocation count, the larger side) desc, then identity. */
static int row_cmp(const void *a, const void *b)
{
    const struct diff_row *x = a, *y = b;
    bool xn = x->change == DIFF_NOT_COMPARABLE, yn = y->change == DIFF_NOT_COMPARABLE;
    if (xn != yn)
        return xn ? 1 : -1;
    if (x->key != y->key)
        return x->key > y->key ? -1 : 1;
    if (x->key2 != y->key2)
        return x->key2 > y->key2 ? -1 : 1;
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
    /* Both lists are in identity order, so functions that match (same
     * keys but the line) are runs of neighbours on each side; their
     * members pair in declaration order and the rest of the longer run
     * appeared or disappeared. */
    size_t i = 0, k = 0;
    while (i < bs->n || k < ns->n) {
        int c = i == bs->n ? 1 : k == ns->n ? -1 : match_cmp(&b[i], &n[k]);
        struct diff_row *row = &out->rows[out->n++];
        if ((row->has_base = c <= 0))
            row->base = b[i++];
        if ((row->has_neu = c >= 0))
            row->neu = n[k++];
        row_key(out, row);
    }
    qsort(out->rows, out->n, sizeof *out->rows, row_cmp);
    if (diff_waits_build(out) != 0) {
        diff_free(out);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

/* A total's verdict: sample counts are tested, milliseconds are one
 * measurement each (untested), byte and allocation counts are exact. */
static struct diff_total total(const struct diff *d, const char *name, uint64_t a, uint64_t b,
                               int kind)
{
    struct diff_total t = {name, a, b, DIFF_UNTESTED, 1};
    if (a == RANK_NA || b == RANK_NA)
        return t;
    if (kind == 1)
        t.verdict = diff_samples_verdict(a, b, d->base->rate_hz, d->neu->rate_hz, &t.p);
    else if (kind == 2)
        t.verdict = a == b ? DIFF_NONE : DIFF_SIGNIFICANT;
    return t;
}

size_t diff_totals(const struct diff *d, struct diff_total out[DIFF_MAX_TOTALS])
{
    size_t n = 0;
    if (d->base->mode == WIRE_MODE_CPU) {
        const struct rank_cpu_totals *a = &d->base->cpu, *b = &d->neu->cpu;
        out[n++] = total(d, "wall_ms", a->wall_ms, b->wall_ms, 0);
        out[n++] = total(d, "process_cpu_ms", a->process_cpu_ms, b->process_cpu_ms, 0);
        out[n++] = total(d, "recorded_samples", a->recorded_samples, b->recorded_samples, 1);
        out[n++] = total(d, "attributed_samples", a->attributed_samples, b->attributed_samples, 1);
        out[n++] = total(d, "runtime_samples", a->runtime_samples, b->runtime_samples, 1);
        out[n++] = total(d, "waiting_samples", a->waiting_samples, b->waiting_samples, 1);
        out[n++] =
            total(d, "unavailable_samples", a->unavailable_samples, b->unavailable_samples, 1);
    } else {
        const struct rank_mem_totals *a = &d->base->mem, *b = &d->neu->mem;
        out[n++] = total(d, "allocation_count", a->allocation_count, b->allocation_count, 2);
        out[n++] = total(d, "allocated_bytes", a->allocated_bytes, b->allocated_bytes, 2);
        out[n++] = total(d, "freed_bytes", a->freed_bytes, b->freed_bytes, 2);
        out[n++] = total(d, "peak_live_bytes", a->peak_live_bytes, b->peak_live_bytes, 2);
        out[n++] = total(d, "retained_bytes", a->retained_bytes, b->retained_bytes, 2);
    }
    return n;
}

void diff_free(struct diff *d)
{
    free(d->rows);
    free(d->waits);
    d->rows = NULL;
    d->waits = NULL;
    d->n_waits = 0;
}

/* Rounds num / den half away from zero (den > 0). */
static int64_t round_div(i128 num, i128 den)
{
    i128 q = (abs128(num) * 2 + den) / (den * 2);
    return (int64_t)(num < 0 ? -q : q);
}

bool diff_ratio(uint64_t a, uint64_t b, int64_t *ten_thousandths)
{
    if (a == 0 || a == RANK_NA || b == RANK_NA)
        return false;
    *ten_thousandths = round_div((i128)b * 10000, a);
    return true;
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
