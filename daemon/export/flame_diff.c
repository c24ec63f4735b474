/* flame_diff: a differential flame graph (see flame_diff.h). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/export/flame.h"
#include "daemon/export/flame_diff.h"

/* The diff's rows of functions present in NEW, in identity order; those
 * of functions missing from NEW, by their match keys (a memory frame's
 * function that allocated in BASE may call others in NEW without
 * allocating itself); and the largest change among the drawn functions
 * that are coloured. */
struct flame_diff {
    const struct diff *d;
    const struct diff_row **by_neu, **gone;
    size_t n, n_gone;
    double max_size;
};

static int by_neu_cmp(const void *a, const void *b)
{
    const struct diff_row *x = *(const struct diff_row *const *)a;
    const struct diff_row *y = *(const struct diff_row *const *)b;
    return diff_side_cmp(&x->neu, &y->neu);
}

/* Rows missing from NEW by their BASE match keys; the key searched for
 * (a) is a probe holding a frame's identity as its NEW side. */
static int gone_cmp(const void *a, const void *b)
{
    const struct diff_row *x = *(const struct diff_row *const *)a;
    const struct diff_row *y = *(const struct diff_row *const *)b;
    return diff_side_match_cmp(x->has_neu ? &x->neu : &x->base, &y->base);
}

static bool is_cpu(const struct diff *d)
{
    return d->base->mode == WIRE_MODE_CPU;
}

/* The requested rates as the test weighs them: equal when either is not
 * stated. */
static void rates(const struct diff *d, uint64_t *r0, uint64_t *r1)
{
    *r0 = d->base->rate_hz, *r1 = d->neu->rate_hz;
    if (!*r0 || !*r1)
        *r0 = *r1 = 1;
}

/* The count a frame's colour follows, on one side: self samples (CPU)
 * or allocated bytes (memory); RANK_NA where it is not known. */
static uint64_t side_count(const struct diff *d, const struct diff_row *r, bool neu)
{
    return diff_row_value(r, neu, is_cpu(d) ? 3 : 0);
}

/* Whether the row's change is coloured: a comparable change beyond
 * sampling noise (CPU), any comparable change of the exact byte counts
 * (memory). */
static bool row_coloured(const struct diff *d, const struct diff_row *r)
{
    if (r->change == DIFF_NOT_COMPARABLE)
        return false;
    if (is_cpu(d))
        return r->self_verdict == DIFF_SIGNIFICANT;
    return r->self_direction == DIFF_GREW || r->self_direction == DIFF_SHRANK;
}

/* The size of the row's change as the test weighs it: |x1 r0 - x0 r1|
 * for samples (proportional to the change in BASE's samples), |x1 - x0|
 * for bytes. */
static double row_size(const struct diff *d, const struct diff_row *r)
{
    uint64_t x0 = side_count(d, r, false), x1 = side_count(d, r, true), r0 = 1, r1 = 1;
    if (is_cpu(d))
        rates(d, &r0, &r1);
    unsigned __int128 a = (unsigned __int128)x1 * r0, b = (unsigned __int128)x0 * r1;
    return (double)(a > b ? a - b : b - a);
}

void flame_diff_colour(bool grew, double t, char out[32])
{
    t = t > 1 ? 1 : t < 0 ? 0 : t;
    unsigned strong = (unsigned)(215 - 175 * t + 0.5), mid = (unsigned)(215 - 145 * t + 0.5),
             weak = (unsigned)(250 - 35 * t + 0.5);
    if (grew)
        snprintf(out, 32, "rgb(%u,%u,%u)", weak, strong, strong); /* red */
    else
        snprintf(out, 32, "rgb(%u,%u,%u)", strong, mid, weak); /* blue */
}

/* The row of a frame's function: the one of its NEW identity, else a
 * row of a function missing from NEW with the same match keys when only
 * one has them; NULL when there is none. */
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
    if (hit)
        return *hit;
    hit = bsearch(&p, x->gone, x->n_gone, sizeof *x->gone, gone_cmp);
    if (!hit || (hit > x->gone && gone_cmp(&p, hit - 1) == 0) ||
        (hit + 1 < x->gone + x->n_gone && gone_cmp(&p, hit + 1) == 0))
        return NULL;
    return *hit;
}

/* The row of a drawn node's function (NULL: none, or several functions);
 * *one says whether the node is a single function. */
static const struct diff_row *node_row(const struct flame_diff *x, const struct fold *f,
                                       const struct fold_node *n, bool *one)
{
    struct fold_func fn;
    *one = fold_node_func(f, n, &fn);
    return *one ? find_row(x, &fn) : NULL;
}

/* "BASE is partial (cpu_metadata_limit)" for each side that is not
 * complete, joined by ", ". */
static void put_partial_sides(FILE *out, const struct diff *d)
{
    const struct rank_report *r[2] = {d->base, d->neu};
    bool any = false;
    for (int k = 0; k < 2; k++) {
        char status[DIFF_STATUS_LEN];
        if (r[k]->status == AGG_COMPLETE)
            continue;
        fprintf(out, "%s%s is %s", any ? ", " : "", k ? "NEW" : "BASE",
                diff_status_text(r[k], status));
        any = true;
    }
}

/* "170 self samples", "3000000 bytes allocated", "0 self samples (not in
 * BASE)" or "unavailable (BASE is partial)". */
static void put_side(FILE *out, const struct diff *d, const struct diff_row *r, bool neu)
{
    uint64_t v = side_count(d, r, neu);
    const char *name = neu ? "NEW" : "BASE";
    if (v == RANK_NA) {
        fprintf(out, "unavailable (%s is %s)", name,
                agg_status_name((neu ? d->neu : d->base)->status));
        return;
    }
    if (is_cpu(d))
        fprintf(out, "%" PRIu64 " self %s", v, v == 1 ? "sample" : "samples");
    else
        fprintf(out, "%" PRIu64 " %s allocated", v, v == 1 ? "byte" : "bytes");
    if (!(neu ? r->has_neu : r->has_base))
        fprintf(out, " (not in %s)", name);
}

/* ", x2.0471": NEW's count over BASE's at equal rates (x1 r0 / (x0 r1))
 * to four decimals, rounded half away from zero; nothing when BASE's is
 * 0.  In 128 bits: 2^64 - 1 bytes over 1 is a ratio too. */
static void put_ratio(FILE *out, const struct diff *d, uint64_t x0, uint64_t x1)
{
    uint64_t r0 = 1, r1 = 1;
    if (is_cpu(d))
        rates(d, &r0, &r1);
    if (x0 == 0)
        return;
    unsigned __int128 num = (unsigned __int128)x1 * r0 * 10000, den = (unsigned __int128)x0 * r1;
    unsigned __int128 q = (num * 2 + den) / (den * 2);
    fprintf(out, ", x%" PRIu64 ".%04u", (uint64_t)(q / 10000), (unsigned)(q % 10000));
}

/* The change in the table's words, as attribute text: "grew: +178 self
 * samples, x2.0471; significant (p &lt; 0.0001)", "no change", "not
 * comparable: ..." (see jett-export(1)). */
static void put_change(FILE *out, const struct diff *d, const struct diff_row *r)
{
    if (r->change == DIFF_NOT_COMPARABLE) {
        fputs("not comparable: ", out);
        put_partial_sides(out, d);
        return;
    }
    if (is_cpu(d) ? r->self_verdict == DIFF_NONE : r->self_direction == DIFF_SAME) {
        fputs("no change", out);
        return;
    }
    uint64_t x0 = side_count(d, r, false), x1 = side_count(d, r, true);
    const char *head = row_coloured(d, r) ? diff_direction_names[r->self_direction] : NULL;
    if (head)
        fprintf(out, "%s%s: ", head, r->has_base ? "" : " (appeared)");
    else if (!r->has_base)
        fputs("appeared: ", out);
    uint64_t by = x1 >= x0 ? x1 - x0 : x0 - x1;
    fprintf(out, "%c%" PRIu64 " %s", x1 >= x0 ? '+' : '-', by,
            is_cpu(d) ? (by == 1 ? "self sample" : "self samples") : (by == 1 ? "byte" : "bytes"));
    bool at_rates =
        is_cpu(d) && d->base->rate_hz && d->neu->rate_hz && d->base->rate_hz != d->neu->rate_hz;
    if (at_rates)
        fprintf(out, " at %" PRIu32 " -> %" PRIu32 " Hz", d->base->rate_hz, d->neu->rate_hz);
    put_ratio(out, d, x0, x1);
    if (at_rates && x0)
        fputs(" at equal rates", out);
    if (!is_cpu(d))
        return;
    fputs(r->self_verdict == DIFF_SIGNIFICANT ? "; significant" : "; within noise", out);
    if (r->self_p < 0.0001)
        fputs(" (p &lt; 0.0001)", out); /* an attribute's text */
    else
        fprintf(out, " (p = %.4f)", r->self_p);
}

static void paint_frame(void *ctx, const struct fold *f, const struct fold_node *n, char fill[32],
                        FILE *out)
{
    const struct flame_diff *x = ctx;
    bool one;
    const struct diff_row *r = node_row(x, f, n, &one);
    strcpy(fill, FLAME_DIFF_NEUTRAL);
    if (!r) {
        if (!one)
            fputs(" data-change=\"several functions of this name: not compared\"", out);
        else if (diff_side_trust(x->d->neu) != DIFF_TRUST_ALL) {
            /* drawn from NEW's stacks, but missing from its functions:
             * it ran after NEW's budget was spent */
            fputs(" data-change=\"not comparable: ", out);
            put_partial_sides(out, x->d);
            fputc('"', out);
        } else if (!is_cpu(x->d)) {
            /* a caller that allocated nothing itself on either side */
            fputs(" data-change=\"no change: no bytes of its own on either side\"", out);
        } else {
            fputs(" data-change=\"not compared: not in the diff\"", out);
        }
        return;
    }
    if (row_coloured(x->d, r))
        flame_diff_colour(r->self_direction == DIFF_GREW, row_size(x->d, r) / x->max_size, fill);
    fputs(" data-before=\"", out);
    put_side(out, x->d, r, false);
    fputs("\" data-after=\"", out);
    put_side(out, x->d, r, true);
    fputs("\" data-change=\"", out);
    put_change(out, x->d, r);
    fputc('"', out);
}

#define RED "<tspan font-weight=\"bold\" fill=\"rgb(215,40,40)\">red</tspan>"
#define BLUE "<tspan font-weight=\"bold\" fill=\"rgb(40,70,215)\">blue</tspan>"
#define GREY "<tspan font-weight=\"bold\" fill=\"rgb(150,150,150)\">grey</tspan>"

int flame_diff_write_svg(const struct fold *neu, const struct diff *d, FILE *out)
{
    struct flame_diff x = {d, malloc((d->n + 1) * sizeof *x.by_neu), NULL, 0, 0, 1};
    if (!x.by_neu)
        return -1;
    for (size_t i = 0; i < d->n; i++)
        if (d->rows[i].has_neu)
            x.by_neu[x.n++] = &d->rows[i];
    /* the rows missing from NEW take the array's end */
    x.gone = x.by_neu + x.n;
    for (size_t i = 0; i < d->n; i++)
        if (!d->rows[i].has_neu)
            x.gone[x.n_gone++] = &d->rows[i];
    qsort(x.by_neu, x.n, sizeof *x.by_neu, by_neu_cmp);
    qsort(x.gone, x.n_gone, sizeof *x.gone, gone_cmp);
    /* the intensity's scale: the largest coloured change of a function
     * the graph has a frame of */
    for (uint32_t i = 1; i < fold_node_count(neu); i++) {
        bool one;
        const struct diff_row *r = node_row(&x, neu, fold_node(neu, i), &one);
        if (r && row_coloured(d, r) && row_size(d, r) > x.max_size)
            x.max_size = row_size(d, r);
    }
    /* the status line: both sides' status, with a partial one's reason */
    char status[2 * DIFF_STATUS_LEN + 16], s0[DIFF_STATUS_LEN], s1[DIFF_STATUS_LEN];
    snprintf(status, sizeof status, "BASE %s, NEW %s", diff_status_text(d->base, s0),
             diff_status_text(d->neu, s1));
    struct flame_paint paint = {
        paint_frame, &x,
        is_cpu(d) ? "Differential flame graph: NEW against BASE, samples"
                  : "Differential flame graph: NEW against BASE, allocated bytes",
        is_cpu(d) ? RED ": more self samples than in BASE, " BLUE
                        ": fewer, beyond sampling noise (p &lt; 0.01; counts at the rates' ratio); "
                        "the stronger, the larger the change\n" GREY
                        ": no change, within noise, or not comparable (a side is partial)"
                  : RED ": more bytes allocated than in BASE, " BLUE
                        ": fewer; the stronger, the larger the change\n" GREY
                        ": no change, or not comparable (a side is partial)",
        /* the root holds the whole profile on both sides: its count
         * cannot change */
        FLAME_DIFF_NEUTRAL, status};
    int rc = flame_write_svg_painted(neu, &paint, out);
    free(x.by_neu);
    return rc;
}
