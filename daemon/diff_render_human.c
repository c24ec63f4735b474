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
 * decimals or "-" when there is none. */
static void put_compared(FILE *f, uint64_t a, uint64_t b)
{
    char delta[32] = "unavailable", ratio[32] = "-";
    int64_t r;
    if (a != RANK_NA && b != RANK_NA)
        snprintf(delta, sizeof delta, "%+lld", (long long)b - (long long)a);
    if (diff_ratio(a, b, &r))
        snprintf(ratio, sizeof ratio, "x%lld.%04lld", (long long)(r / 10000),
                 (long long)(r % 10000));
    put_num(f, "%10s", a);
    put_num(f, " -> %-10s", b);
    fprintf(f, " %10s  %-9s  ", delta, ratio);
}

/* The verdict, with the p-value of a tested sample count. */
static void put_verdict(FILE *f, const struct diff *d, enum diff_verdict v, double p)
{
    fputs(diff_verdict_names[v], f);
    if (is_cpu(d) && (v == DIFF_SIGNIFICANT || v == DIFF_NOISE)) {
        if (p < 0.0001)
            fputs(" (p < 0.0001)", f);
        else
            fprintf(f, " (p = %.4f)", p);
    }
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
        put_compared(f, t[i].base, t[i].neu);
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
    fprintf(f, "  %s\n", diff_change_names[r->change]);
}

static void cpu_row(FILE *f, const struct diff *d, const struct diff_row *r)
{
    fprintf(f, "       %-18s", "self samples");
    put_compared(f, diff_value(&r->base, r->has_base, 3), diff_value(&r->neu, r->has_neu, 3));
    put_verdict(f, d, r->self_verdict, r->self_p);
    fprintf(f, "\n       %-18s", "inclusive samples");
    put_compared(f, diff_value(&r->base, r->has_base, 0), diff_value(&r->neu, r->has_neu, 0));
    put_verdict(f, d, r->verdict, r->p);
    fputc('\n', f);
}

/* Each count with its own verdict: exact, so significant unless equal. */
static void mem_row(FILE *f, const struct diff *d, const struct diff_row *r)
{
    static const char *const labels[] = {"allocated bytes", "retained bytes", "live-at-peak bytes"};
    for (int w = 0; w < 3; w++) {
        fprintf(f, "       %-18s", labels[w]);
        uint64_t a = diff_value(&r->base, r->has_base, w), b = diff_value(&r->neu, r->has_neu, w);
        put_compared(f, a, b);
        put_verdict(f, d,
                    a == RANK_NA || b == RANK_NA ? DIFF_UNTESTED
                    : a == b                     ? DIFF_NONE
                                                 : DIFF_SIGNIFICANT,
                    1);
        fputc('\n', f);
    }
}

/* "ns.fn  path:line:column", or "(no source)" without a path. */
static void wait_head(FILE *f, size_t rank, const struct diff_wait *w)
{
    fprintf(f, "%3zu. ", rank);
    put_str(f, w->ns);
    fputc('.', f);
    put_str(f, w->fn);
    fputs("  ", f);
    if (!w->path.ptr) {
        fputs("(no source)\n", f);
        return;
    }
    put_str(f, w->path);
    if (w->line != RANK_NA)
        fprintf(f, ":%llu", (unsigned long long)w->line);
    if (w->line != RANK_NA && w->column != RANK_NA)
        fprintf(f, ":%llu", (unsigned long long)w->column);
    fputc('\n', f);
}

void diff_waits_human(FILE *f, const struct diff *d)
{
    fputs("\nWaiting call sites, by change in samples:\n", f);
    if (d->n_waits == 0)
        fputs("  no waiting call sites in either profile\n", f);
    for (size_t i = 0; i < d->n_waits; i++) {
        const struct diff_wait *w = &d->waits[i];
        wait_head(f, i + 1, w);
        fprintf(f, "       %-18s", "waiting samples");
        put_compared(f, w->base, w->neu);
        put_verdict(f, d, w->verdict, w->p);
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
