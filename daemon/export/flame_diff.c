/* flame_diff: a differential flame graph (see flame_diff.h). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/export/flame.h"
#include "daemon/export/flame_diff.h"

/* The diff's rows of functions present in NEW, in identity order, and
 * the largest change among those coloured. */
struct flame_diff {
    const struct diff *d;
    const struct diff_row **by_neu;
    size_t n;
    int64_t max_points;
};

static int by_neu_cmp(const void *a, const void *b)
{
    const struct diff_row *x = *(const struct diff_row *const *)a;
    const struct diff_row *y = *(const struct diff_row *const *)b;
    return diff_side_cmp(&x->neu, &y->neu);
}

static bool is_cpu(const struct diff *d)
{
    return d->base->mode == WIRE_MODE_CPU;
}

/* A side's value and its profile's total: self samples (CPU) or
 * allocated bytes (memory). */
static uint64_t side_value(const struct diff *d, const struct diff_row *r, bool neu)
{
    bool present = neu ? r->has_neu : r->has_base;
    const struct diff_side *s = neu ? &r->neu : &r->base;
    if (!present)
        return 0;
    uint64_t v = is_cpu(d) ? s->secondary : s->primary;
    return v == RANK_NA ? 0 : v;
}

static uint64_t side_total(const struct diff *d, bool neu)
{
    const struct rank_report *r = neu ? d->neu : d->base;
    return is_cpu(d) ? r->cpu.attributed_samples : r->mem.attributed_allocated_bytes;
}

static int64_t row_points(const struct diff *d, const struct diff_row *r)
{
    return diff_points_hundredths(side_value(d, r, false), side_total(d, false),
                                  side_value(d, r, true), side_total(d, true));
}

/* Whether the row's change is coloured: beyond sampling noise (CPU), any
 * change of the exact byte counts (memory). */
static bool row_coloured(const struct diff *d, const struct diff_row *r)
{
    if (is_cpu(d))
        return r->self_verdict == DIFF_SIGNIFICANT && row_points(d, r) != 0;
    return side_value(d, r, false) != side_value(d, r, true) && row_points(d, r) != 0;
}

void flame_diff_colour(int64_t points, int64_t max_points, char out[32])
{
    double t = (double)(points < 0 ? -points : points) / (double)max_points;
    t = t > 1 ? 1 : t;
    unsigned strong = (unsigned)(215 - 175 * t + 0.5), mid = (unsigned)(215 - 145 * t + 0.5),
             weak = (unsigned)(250 - 35 * t + 0.5);
    if (points > 0)
        snprintf(out, 32, "rgb(%u,%u,%u)", weak, strong, strong); /* red: grew */
    else
        snprintf(out, 32, "rgb(%u,%u,%u)", strong, mid, weak); /* blue: shrank */
}

static const struct diff_row *find_row(const struct flame_diff *x, const struct fold_func *fn)
{
    struct diff_side key = {{fn->ns, fn->ns_len},
                            {fn->fn, fn->fn_len},
                            {fn->path_len ? fn->path : NULL, fn->path_len},
                            fn->line ? fn->line : RANK_NA,
                            fn->origin,
                            0,
                            0,
                            0,
                            0};
    struct diff_row probe = {.neu = key, .has_neu = true};
    const struct diff_row *p = &probe;
    const struct diff_row **hit = bsearch(&p, x->by_neu, x->n, sizeof *x->by_neu, by_neu_cmp);
    return hit ? *hit : NULL;
}

/* "12.34% self (56 samples)" or "12.34% of allocated (56 bytes)". */
static void put_side(FILE *out, const struct diff *d, const struct diff_row *r, bool neu)
{
    uint64_t v = side_value(d, r, neu), total = side_total(d, neu);
    uint64_t pct = total ? rank_percent_hundredths(v, total) : 0;
    if (is_cpu(d))
        fprintf(out, "%" PRIu64 ".%02" PRIu64 "%% self (%" PRIu64 " %s)", pct / 100, pct % 100, v,
                v == 1 ? "sample" : "samples");
    else
        fprintf(out, "%" PRIu64 ".%02" PRIu64 "%% of allocated (%" PRIu64 " %s)", pct / 100,
                pct % 100, v, v == 1 ? "byte" : "bytes");
}

static void put_change(FILE *out, const struct diff *d, const struct diff_row *r)
{
    int64_t pts = row_points(d, r);
    uint64_t a = pts < 0 ? (uint64_t)-pts : (uint64_t)pts;
    fprintf(out, "%c%" PRIu64 ".%02" PRIu64 " points", pts < 0 ? '-' : '+', a / 100, a % 100);
    if (!r->has_base)
        fputs(", appeared", out);
    if (is_cpu(d)) {
        const char *v = r->self_verdict == DIFF_SIGNIFICANT ? "significant"
                        : r->self_verdict == DIFF_NONE      ? "no change"
                                                            : "within noise";
        fprintf(out, ", %s (p %.6f)", v, r->self_p);
    } else if (side_value(d, r, false) == side_value(d, r, true)) {
        fputs(", no change", out);
    }
}

static void paint_frame(void *ctx, const struct fold *f, const struct fold_node *n, char fill[32],
                        FILE *out)
{
    const struct flame_diff *x = ctx;
    struct fold_func fn;
    const struct diff_row *r = fold_node_func(f, n, &fn) ? find_row(x, &fn) : NULL;
    strcpy(fill, FLAME_DIFF_NEUTRAL);
    if (!r) {
        fputs(n->func == FOLD_MANY_FUNCS
                  ? " data-change=\"several functions of this name: not compared\""
                  : " data-change=\"not compared: not in the diff\"",
              out);
        return;
    }
    if (row_coloured(x->d, r))
        flame_diff_colour(row_points(x->d, r), x->max_points, fill);
    fputs(" data-before=\"", out);
    put_side(out, x->d, r, false);
    fputs("\" data-after=\"", out);
    put_side(out, x->d, r, true);
    fputs("\" data-change=\"", out);
    put_change(out, x->d, r);
    fputc('"', out);
}

int flame_diff_write_svg(const struct fold *neu, const struct diff *d, FILE *out)
{
    struct flame_diff x = {d, malloc((d->n + 1) * sizeof *x.by_neu), 0, 1};
    if (!x.by_neu)
        return -1;
    for (size_t i = 0; i < d->n; i++) {
        const struct diff_row *r = &d->rows[i];
        if (!r->has_neu)
            continue;
        x.by_neu[x.n++] = r;
        int64_t p = row_points(d, r);
        p = p < 0 ? -p : p;
        if (row_coloured(d, r) && p > x.max_points)
            x.max_points = p;
    }
    qsort(x.by_neu, x.n, sizeof *x.by_neu, by_neu_cmp);
    struct flame_paint paint = {
        paint_frame, &x,
        is_cpu(d) ? "Differential flame graph: NEW against BASE, samples"
                  : "Differential flame graph: NEW against BASE, allocated bytes",
        is_cpu(d) ? "red grew, blue shrank: self share, beyond noise; grey: unchanged"
                  : "red grew, blue shrank: share of allocated bytes; grey: unchanged",
        /* the root holds the whole profile on both sides: its share
         * cannot change */
        FLAME_DIFF_NEUTRAL};
    int rc = flame_write_svg_painted(neu, &paint, out);
    free(x.by_neu);
    return rc;
}
