/* diff_render_human: the diff as a table in the TOON document's order,
 * every number with its unit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/diff.h"
#include "daemon/render.h"

static bool is_cpu(const struct diff *d)
{
    return d->base->mode == WIRE_MODE_CPU;
}

/* Whether both rates are stated and differ: the sign of a delta need
 * not be the direction then. */
static bool rates_differ(const struct diff *d)
{
    uint32_t r0 = d->base->rate_hz, r1 = d->neu->rate_hz;
    return is_cpu(d) && r0 && r1 && r0 != r1;
}

static void put_str(FILE *f, struct rank_str s)
{
    render_escaped(f, s.ptr ? s.ptr : "unavailable", s.ptr ? s.len : 11);
}

static void put_num(FILE *f, const char *fmt, uint64_t v)
{
    char buf[32];
    if (v == RANK_NA)
        snprintf(buf, sizeof buf, "unavailable");
    else
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
    fprintf(f, fmt, buf);
}

/* "before -> after  change  ratio": the change signed, the ratio to four
 * decimals or "-" when there is none (or the figures are not comparable). */
static void put_compared(FILE *f, uint64_t a, uint64_t b, bool comparable)
{
    char delta[32] = "unavailable", ratio[32] = "-";
    int64_t r;
    if (comparable && a != RANK_NA && b != RANK_NA)
        snprintf(delta, sizeof delta, "%+lld", (long long)b - (long long)a);
    if (comparable && diff_ratio(a, b, &r))
        snprintf(ratio, sizeof ratio, "x%lld.%04lld", (long long)(r / 10000),
                 (long long)(r % 10000));
    put_num(f, "%10s", a);
    put_num(f, " -> %-10s", b);
    fprintf(f, " %10s  %-9s  ", delta, ratio);
}

/* The verdict, with the p-value of a tested sample count. */
static void put_verdict(FILE *f, const struct diff *d, enum diff_verdict v, double p)
{
    fputs(v == DIFF_INCOMPARABLE ? "not comparable" : diff_verdict_names[v], f);
    if (is_cpu(d) && (v == DIFF_SIGNIFICANT || v == DIFF_NOISE)) {
        if (p < 0.0001)
            fputs(" (p < 0.0001)", f);
        else
            fprintf(f, " (p = %.4f)", p);
    }
}

/* A function's tested count: its verdict and, where the rates differ, its
 * direction. */
static void put_tested(FILE *f, const struct diff *d, enum diff_verdict v, double p,
                       enum diff_direction dir)
{
    put_verdict(f, d, v, p);
    if (rates_differ(d) && (dir == DIFF_GREW || dir == DIFF_SHRANK))
        fprintf(f, ", %s", diff_direction_names[dir]);
}

static void totals(FILE *f, const struct diff *d)
{
    static const struct {
        const char *name, *label;
    } labels[] = {
        {"wall_ms", "wall time (ms)"},
        {"process_cpu_ms", "process CPU time (ms)"},
        {"recorded_samples", "recorded samples"},
        {"attributed_samples", "attributed samples"},
        {"runtime_samples", "runtime samples"},
        {"waiting_samples", "waiting samples"},
        {"unavailable_samples", "unavailable samples"},
        {"allocation_count", "allocations"},
        {"allocated_bytes", "allocated bytes"},
        {"freed_bytes", "freed bytes"},
        {"peak_live_bytes", "peak live bytes"},
        {"retained_bytes", "retained bytes"},
    };
    struct diff_total t[DIFF_MAX_TOTALS];
    size_t n = diff_totals(d, t);
    fputs("Totals:\n", f);
    for (size_t i = 0; i < n; i++) {
        const char *label = t[i].name;
        for (size_t k = 0; k < sizeof labels / sizeof labels[0]; k++)
            if (strcmp(labels[k].name, t[i].name) == 0)
                label = labels[k].label;
        fprintf(f, "  %-23s", label);
        put_compared(f, t[i].base, t[i].neu, true);
        put_verdict(f, d, t[i].verdict, t[i].p);
        fputc('\n', f);
    }
}

/* "N. ns.fn  path:line" with both lines when the function moved. */
static void row_head(FILE *f, size_t rank, const struct diff_row *r)
{
    const struct diff_side *e = r->has_neu ? &r->neu : &r->base;
    fprintf(f, "%3zu. ", rank);
    put_str(f, e->ns);
    fputc('.', f);
    put_str(f, e->fn);
    fputs("  ", f);
    put_str(f, e->path);
    if (r->has_base && r->base.line != RANK_NA)
        fprintf(f, ":%llu", (unsigned long long)r->base.line);
    if (r->has_base && r->has_neu && r->neu.line != r->base.line)
        put_num(f, " -> %s", r->neu.line);
    else if (!r->has_base && r->neu.line != RANK_NA)
        fprintf(f, ":%llu", (unsigned long long)r->neu.line);
    fprintf(f, "  %s\n",
            r->change == DIFF_NOT_COMPARABLE ? "not comparable" : diff_change_names[r->change]);
}

static void cpu_row(FILE *f, const struct diff *d, const struct diff_row *r)
{
    bool cmp = r->change != DIFF_NOT_COMPARABLE;
    fprintf(f, "       %-18s", "self samples");
    put_compared(f, diff_row_value(r, false, 3), diff_row_value(r, true, 3), cmp);
    put_tested(f, d, r->self_verdict, r->self_p, r->self_direction);
    fprintf(f, "\n       %-18s", "inclusive samples");
    put_compared(f, diff_row_value(r, false, 0), diff_row_value(r, true, 0), cmp);
    put_tested(f, d, r->verdict, r->p, r->direction);
    fputc('\n', f);
}

/* Each count with its own verdict: exact, so significant unless equal. */
static void mem_row(FILE *f, const struct diff *d, const struct diff_row *r)
{
    static const char *const labels[] = {"allocated bytes", "retained bytes", "live-at-peak bytes"};
    bool cmp = r->change != DIFF_NOT_COMPARABLE;
    for (int w = 0; w < 3; w++) {
        fprintf(f, "       %-18s", labels[w]);
        uint64_t a = diff_row_value(r, false, w), b = diff_row_value(r, true, w);
        put_compared(f, a, b, cmp);
        put_verdict(f, d,
                    !cmp                           ? DIFF_INCOMPARABLE
                    : a == RANK_NA || b == RANK_NA ? DIFF_UNTESTED
                    : a == b                       ? DIFF_NONE
                                                   : DIFF_SIGNIFICANT,
                    1);
        fputc('\n', f);
    }
}

/* A line for each side that is not complete, saying what of it is not
 * comparable, and one for rates that differ. */
static void sides(FILE *f, const struct diff *d)
{
    const struct rank_report *r[2] = {d->base, d->neu};
    bool any = false;
    for (int k = 0; k < 2; k++) {
        char status[DIFF_STATUS_LEN];
        if (r[k]->status == AGG_COMPLETE)
            continue;
        fprintf(f, "%s is %s", k ? "NEW" : "BASE", diff_status_text(r[k], status));
        fputs(diff_side_trust(r[k]) == DIFF_TRUST_HELD
                  ? ": a function missing from it is not comparable.\n"
                  : ": its counts may miss events; no function is comparable.\n",
              f);
        any = true;
    }
    if (rates_differ(d)) {
        fprintf(f,
                "BASE was sampled at %u Hz and NEW at %u Hz: a count grew when NEW's count\n"
                "x %u / %u is above BASE's, whatever the sign of its delta.\n",
                d->base->rate_hz, d->neu->rate_hz, d->base->rate_hz, d->neu->rate_hz);
        any = true;
    }
    if (any)
        fputc('\n', f);
}

/* "ns.fn  path:line:column", or "(no source)" without a path, and
 * "not comparable" when it is not. */
static void wait_head(FILE *f, size_t rank, const struct diff_wait *w)
{
    fprintf(f, "%3zu. ", rank);
    put_str(f, w->ns);
    fputc('.', f);
    put_str(f, w->fn);
    fputs("  ", f);
    if (!w->path.ptr)
        fputs("(no source)", f);
    else
        put_str(f, w->path);
    if (w->path.ptr && w->line != RANK_NA)
        fprintf(f, ":%llu", (unsigned long long)w->line);
    if (w->path.ptr && w->line != RANK_NA && w->column != RANK_NA)
        fprintf(f, ":%llu", (unsigned long long)w->column);
    fputs(w->verdict == DIFF_INCOMPARABLE ? "  not comparable\n" : "\n", f);
}

static void diff_waits_human(FILE *f, const struct diff *d)
{
    fputs("\nWaiting call sites, by change in samples:\n", f);
    if (d->n_waits == 0)
        fputs("  no waiting call sites in either profile\n", f);
    for (size_t i = 0; i < d->n_waits; i++) {
        const struct diff_wait *w = &d->waits[i];
        wait_head(f, i + 1, w);
        fprintf(f, "       %-18s", "waiting samples");
        put_compared(f, w->base, w->neu, w->verdict != DIFF_INCOMPARABLE);
        put_tested(f, d, w->verdict, w->p, w->direction);
        fputc('\n', f);
    }
}

int diff_render_human(const struct diff *d, char **out, size_t *len)
{
    FILE *f = open_memstream(out, len);
    if (!f)
        return -1;
    if (is_cpu(d))
        fprintf(f,
                "CPU profile diff: %llu -> %llu attributed samples\n"
                "A change is significant when the exact two-sided binomial test of its\n"
                "sample counts gives p < 0.01; otherwise it is within sampling noise.\n\n",
                (unsigned long long)d->base->cpu.attributed_samples,
                (unsigned long long)d->neu->cpu.attributed_samples);
    else
        fprintf(f,
                "Memory profile diff: %llu -> %llu attributed allocated bytes\n"
                "Allocations are counted, not sampled: every change is real.\n\n",
                (unsigned long long)d->base->mem.attributed_allocated_bytes,
                (unsigned long long)d->neu->mem.attributed_allocated_bytes);
    sides(f, d);
    totals(f, d);
    fprintf(f, "\nFunctions, by change in %s:\n", is_cpu(d) ? "self samples" : "allocated bytes");
    if (d->n == 0)
        fputs("  no functions in either profile\n", f);
    for (size_t i = 0; i < d->n; i++) {
        row_head(f, i + 1, &d->rows[i]);
        if (is_cpu(d))
            cpu_row(f, d, &d->rows[i]);
        else
            mem_row(f, d, &d->rows[i]);
    }
    if (is_cpu(d))
        diff_waits_human(f, d);
    return fclose(f) == 0 ? 0 : -1;
}
