/* diff_render: jett.profile-diff.v1 as canonical TOON and as a table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/diff.h"
#include "daemon/render.h"
#include "proto/toon.h"

static const char *const change_names[] = {"unchanged", "changed", "appeared", "disappeared"};

static bool is_cpu(const struct diff *d)
{
    return d->base->mode == WIRE_MODE_CPU;
}

static struct toon_value *str_or_na(struct rank_str s)
{
    return s.ptr ? toon_string(s.ptr, s.len) : toon_cstr("unavailable");
}

static struct toon_value *num_or_na(uint64_t v)
{
    return v == RANK_NA ? toon_cstr("unavailable") : toon_uint(v);
}

/* A hundredths value as a canonical TOON number (34.1, 50, -2.5). */
static struct toon_value *hundredths(int64_t v)
{
    return toon_double((double)v / 100.0);
}

/* A signed difference of two byte counts, unavailable if either is. */
static struct toon_value *delta_or_na(uint64_t a, uint64_t b)
{
    if (a == RANK_NA || b == RANK_NA)
        return toon_cstr("unavailable");
    return toon_int((int64_t)b - (int64_t)a);
}

static void side(struct toon_value *o, const struct diff *d, const struct rank_report *r)
{
    toon_set(o, "status", toon_cstr(agg_status_name(r->status)));
    if (is_cpu(d))
        toon_set(o, "attributed_samples", toon_uint(r->cpu.attributed_samples));
    else
        toon_set(o, "attributed_allocated_bytes", toon_uint(r->mem.attributed_allocated_bytes));
}

/* A side's share in hundredths of a percent; 0 when nothing was attributed. */
static int64_t share(uint64_t n, uint64_t d)
{
    return d ? (int64_t)rank_percent_hundredths(n, d) : 0;
}

/* A side's primary (0), retained (1) or live-at-peak (2) value; 0 for
 * the side a function is missing from. */
static uint64_t val(const struct diff_side *e, bool present, int which)
{
    if (!present)
        return 0;
    return which == 0 ? e->primary : which == 1 ? e->retained_bytes : e->live_at_peak_bytes;
}

static void cpu_row(struct toon_value *o, const struct diff *d, const struct diff_row *r)
{
    uint64_t p0 = val(&r->base, r->has_base, 0), p1 = val(&r->neu, r->has_neu, 0);
    uint64_t d0 = d->base->cpu.attributed_samples, d1 = d->neu->cpu.attributed_samples;
    toon_set_literal(o, "base_samples", toon_uint(p0));
    toon_set_literal(o, "new_samples", toon_uint(p1));
    toon_set_literal(o, "base_percent", hundredths(share(p0, d0)));
    toon_set_literal(o, "new_percent", hundredths(share(p1, d1)));
    toon_set_literal(o, "delta_points", hundredths(diff_points_hundredths(p0, d0, p1, d1)));
}

static void mem_row(struct toon_value *o, const struct diff_row *r)
{
    static const char *const names[3][3] = {
        {"base_allocated_bytes", "new_allocated_bytes", "delta_allocated_bytes"},
        {"base_retained_bytes", "new_retained_bytes", "delta_retained_bytes"},
        {"base_live_at_peak_bytes", "new_live_at_peak_bytes", "delta_live_at_peak_bytes"}};
    for (int w = 0; w < 3; w++) {
        uint64_t a = val(&r->base, r->has_base, w), b = val(&r->neu, r->has_neu, w);
        toon_set_literal(o, names[w][0], num_or_na(a));
        toon_set_literal(o, names[w][1], num_or_na(b));
        toon_set_literal(o, names[w][2], delta_or_na(a, b));
    }
}

/* Rows use their keys without copies: 50,000 rows would copy 700,000. */
static struct toon_value *rows(const struct diff *d)
{
    struct toon_value *a = toon_array();
    for (size_t i = 0; i < d->n; i++) {
        const struct diff_row *r = &d->rows[i];
        const struct diff_side *e = r->has_neu ? &r->neu : &r->base;
        struct toon_value *o = toon_object();
        toon_set_literal(o, "namespace", str_or_na(e->ns));
        toon_set_literal(o, "function", str_or_na(e->fn));
        toon_set_literal(o, "path", str_or_na(e->path));
        toon_set_literal(o, "line", num_or_na(e->line));
        toon_set_literal(o, "change", toon_cstr(change_names[r->change]));
        if (is_cpu(d))
            cpu_row(o, d, r);
        else
            mem_row(o, r);
        toon_push(a, o);
    }
    return a;
}

struct toon_value *diff_toon(const struct diff *d)
{
    struct toon_value *root = toon_object(), *o = toon_object();
    struct toon_value *b = toon_object(), *n = toon_object();
    toon_set(o, "schema", toon_cstr("jett.profile-diff.v1"));
    toon_set(o, "mode", toon_cstr(is_cpu(d) ? "cpu" : "memory"));
    side(b, d, d->base);
    side(n, d, d->neu);
    toon_set(o, "base", b);
    toon_set(o, "new", n);
    toon_set(o, "functions", rows(d));
    toon_set(root, "diff", o);
    return root;
}

/* "12.34" / "-0.50" with a sign for deltas. */
static void fmt_hundredths(char *buf, size_t n, int64_t v, bool sign)
{
    uint64_t a = v < 0 ? (uint64_t)-v : (uint64_t)v;
    snprintf(buf, n, "%s%llu.%02llu",
             v < 0  ? "-"
             : sign ? "+"
                    : "",
             (unsigned long long)(a / 100), (unsigned long long)(a % 100));
}

static void human_row(FILE *f, const struct diff *d, const struct diff_row *r)
{
    const struct diff_side *e = r->has_neu ? &r->neu : &r->base;
    char delta[32], a[32], b[32];
    if (is_cpu(d)) {
        uint64_t p0 = val(&r->base, r->has_base, 0), p1 = val(&r->neu, r->has_neu, 0);
        uint64_t d0 = d->base->cpu.attributed_samples, d1 = d->neu->cpu.attributed_samples;
        fmt_hundredths(delta, sizeof delta, diff_points_hundredths(p0, d0, p1, d1), true);
        fmt_hundredths(a, sizeof a, share(p0, d0), false);
        fmt_hundredths(b, sizeof b, share(p1, d1), false);
        fprintf(f, "%-11s %8s pt  %6s%% -> %6s%%  %8llu -> %-8llu  ", change_names[r->change],
                delta, a, b, (unsigned long long)p0, (unsigned long long)p1);
    } else {
        uint64_t p0 = val(&r->base, r->has_base, 0), p1 = val(&r->neu, r->has_neu, 0);
        fprintf(f, "%-11s %+12lld B  %12llu -> %-12llu  ", change_names[r->change],
                (long long)p1 - (long long)p0, (unsigned long long)p0, (unsigned long long)p1);
    }
    render_escaped(f, e->ns.ptr ? e->ns.ptr : "unavailable", e->ns.ptr ? e->ns.len : 11);
    fputc('.', f);
    render_escaped(f, e->fn.ptr ? e->fn.ptr : "unavailable", e->fn.ptr ? e->fn.len : 11);
    fputs("  ", f);
    render_escaped(f, e->path.ptr ? e->path.ptr : "unavailable", e->path.ptr ? e->path.len : 11);
    if (e->line != RANK_NA)
        fprintf(f, ":%llu", (unsigned long long)e->line);
    fputc('\n', f);
}

int diff_render_human(const struct diff *d, char **out, size_t *len)
{
    FILE *f = open_memstream(out, len);
    if (!f)
        return -1;
    if (is_cpu(d))
        fprintf(f, "CPU profile diff: %llu -> %llu attributed samples\n",
                (unsigned long long)d->base->cpu.attributed_samples,
                (unsigned long long)d->neu->cpu.attributed_samples);
    else
        fprintf(f, "Memory profile diff: %llu -> %llu attributed allocated bytes\n",
                (unsigned long long)d->base->mem.attributed_allocated_bytes,
                (unsigned long long)d->neu->mem.attributed_allocated_bytes);
    if (d->n == 0)
        fputs("no functions in either profile\n", f);
    for (size_t i = 0; i < d->n; i++)
        human_row(f, d, &d->rows[i]);
    return fclose(f) == 0 ? 0 : -1;
}
