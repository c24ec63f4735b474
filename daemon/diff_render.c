/* diff_render: jett.profile-diff.v2 as canonical TOON. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/diff.h"
#include "daemon/render.h"
#include "proto/toon.h"

const char *const diff_change_names[] = {"unchanged", "changed", "appeared", "disappeared",
                                         "not_comparable"};
const char *const diff_verdict_names[] = {"significant", "noise", "none", "untested",
                                          "not_comparable"};
const char *const diff_direction_names[] = {"grew", "shrank", "none", "unavailable"};

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

static struct toon_value *origin(int o)
{
    static const char *const names[] = {"project", "dependency", "stdlib"};
    return toon_cstr(o >= 0 && o <= 2 ? names[o] : "unavailable");
}

/* A hundredths value as a canonical TOON number (34.1, 50, -2.5). */
static struct toon_value *hundredths(int64_t v)
{
    return toon_double((double)v / 100.0);
}

/* A signed difference of two counts, unavailable if either is. */
static struct toon_value *delta_or_na(uint64_t a, uint64_t b)
{
    if (a == RANK_NA || b == RANK_NA)
        return toon_cstr("unavailable");
    return toon_int((int64_t)b - (int64_t)a);
}

/* b / a to four decimals; unavailable when a is 0 (nothing to compare). */
static struct toon_value *ratio(uint64_t a, uint64_t b)
{
    int64_t r;
    return diff_ratio(a, b, &r) ? toon_double((double)r / 10000.0) : toon_cstr("unavailable");
}

/* A p-value to six decimals (0 below 0.0000005); unavailable for a
 * verdict that is not a test's. */
static struct toon_value *p_value(double p, enum diff_verdict v)
{
    if (v == DIFF_UNTESTED || v == DIFF_INCOMPARABLE)
        return toon_cstr("unavailable");
    return toon_double(round(p * 1e6) / 1e6);
}

static void side(struct toon_value *o, const struct diff *d, const struct rank_report *r)
{
    toon_set(o, "status", toon_cstr(agg_status_name(r->status)));
    if (r->status != AGG_COMPLETE)
        toon_set(o, "partial_reason", toon_cstr(agg_reason_name(r->reason)));
    if (is_cpu(d)) {
        toon_set(o, "requested_rate_hz", toon_uint(r->rate_hz));
        toon_set(o, "attributed_samples", toon_uint(r->cpu.attributed_samples));
    } else {
        toon_set(o, "attributed_allocated_bytes", toon_uint(r->mem.attributed_allocated_bytes));
    }
}

/* A side's share in hundredths of a percent; 0 when nothing was
 * attributed, unavailable with its count. */
static struct toon_value *share(uint64_t n, uint64_t d)
{
    if (n == RANK_NA)
        return toon_cstr("unavailable");
    return hundredths(d ? (int64_t)rank_percent_hundredths(n, d) : 0);
}

uint64_t diff_value(const struct diff_side *e, bool present, int which)
{
    if (!present)
        return 0;
    return which == 0   ? e->primary
           : which == 1 ? e->retained_bytes
           : which == 2 ? e->live_at_peak_bytes
                        : e->secondary;
}

uint64_t diff_row_value(const struct diff_row *r, bool neu, int which)
{
    bool present = neu ? r->has_neu : r->has_base;
    if (!present && r->change == DIFF_NOT_COMPARABLE)
        return RANK_NA;
    return diff_value(neu ? &r->neu : &r->base, present, which);
}

/* before, after, change and ratio of one count, under the given names;
 * no change or ratio for a row that is not comparable. */
static void compared(struct toon_value *o, const char *const names[4], uint64_t a, uint64_t b,
                     bool comparable)
{
    toon_set_literal(o, names[0], num_or_na(a));
    toon_set_literal(o, names[1], num_or_na(b));
    toon_set_literal(o, names[2], comparable ? delta_or_na(a, b) : toon_cstr("unavailable"));
    toon_set_literal(o, names[3], comparable ? ratio(a, b) : toon_cstr("unavailable"));
}

static void cpu_row(struct toon_value *o, const struct diff *d, const struct diff_row *r)
{
    static const char *const self_names[] = {"base_self_samples", "new_self_samples",
                                             "delta_self_samples", "self_ratio"};
    static const char *const incl_names[] = {"base_samples", "new_samples", "delta_samples",
                                             "ratio"};
    bool cmp = r->change != DIFF_NOT_COMPARABLE;
    uint64_t s0 = diff_row_value(r, false, 3), s1 = diff_row_value(r, true, 3);
    uint64_t p0 = diff_row_value(r, false, 0), p1 = diff_row_value(r, true, 0);
    uint64_t d0 = d->base->cpu.attributed_samples, d1 = d->neu->cpu.attributed_samples;
    compared(o, self_names, s0, s1, cmp);
    toon_set_literal(o, "self_p_value", p_value(r->self_p, r->self_verdict));
    toon_set_literal(o, "self_significance", toon_cstr(diff_verdict_names[r->self_verdict]));
    toon_set_literal(o, "self_direction", toon_cstr(diff_direction_names[r->self_direction]));
    compared(o, incl_names, p0, p1, cmp);
    toon_set_literal(o, "p_value", p_value(r->p, r->verdict));
    toon_set_literal(o, "significance", toon_cstr(diff_verdict_names[r->verdict]));
    toon_set_literal(o, "direction", toon_cstr(diff_direction_names[r->direction]));
    toon_set_literal(o, "base_percent", share(p0, d0));
    toon_set_literal(o, "new_percent", share(p1, d1));
    toon_set_literal(o, "delta_points",
                     cmp ? hundredths(diff_points_hundredths(p0, d0, p1, d1))
                         : toon_cstr("unavailable"));
}

static void mem_row(struct toon_value *o, const struct diff_row *r)
{
    bool cmp = r->change != DIFF_NOT_COMPARABLE;
    static const char *const names[3][3] = {
        {"base_allocated_bytes", "new_allocated_bytes", "delta_allocated_bytes"},
        {"base_retained_bytes", "new_retained_bytes", "delta_retained_bytes"},
        {"base_live_at_peak_bytes", "new_live_at_peak_bytes", "delta_live_at_peak_bytes"}};
    for (int w = 0; w < 3; w++) {
        uint64_t a = diff_row_value(r, false, w), b = diff_row_value(r, true, w);
        toon_set_literal(o, names[w][0], num_or_na(a));
        toon_set_literal(o, names[w][1], num_or_na(b));
        toon_set_literal(o, names[w][2], cmp ? delta_or_na(a, b) : toon_cstr("unavailable"));
        if (w == 0)
            toon_set_literal(o, "ratio", cmp ? ratio(a, b) : toon_cstr("unavailable"));
    }
    toon_set_literal(o, "significance", toon_cstr(diff_verdict_names[r->verdict]));
}

/* Rows use their keys without copies, and go into a table, which keeps
 * their cells packed: 50,000 rows as nodes took about 100 MB. */
static struct toon_value *rows(const struct diff *d)
{
    struct toon_value *a = toon_table();
    for (size_t i = 0; i < d->n; i++) {
        const struct diff_row *r = &d->rows[i];
        const struct diff_side *e = r->has_neu ? &r->neu : &r->base;
        struct toon_value *o = toon_object();
        toon_set_literal(o, "namespace", str_or_na(e->ns));
        toon_set_literal(o, "function", str_or_na(e->fn));
        toon_set_literal(o, "origin", origin(e->origin));
        toon_set_literal(o, "path", str_or_na(e->path));
        toon_set_literal(o, "base_line",
                         r->has_base ? num_or_na(r->base.line) : num_or_na(RANK_NA));
        toon_set_literal(o, "new_line", r->has_neu ? num_or_na(r->neu.line) : num_or_na(RANK_NA));
        toon_set_literal(o, "change", toon_cstr(diff_change_names[r->change]));
        if (is_cpu(d))
            cpu_row(o, d, r);
        else
            mem_row(o, r);
        toon_table_push(a, o);
    }
    return a;
}

static struct toon_value *totals(const struct diff *d)
{
    struct diff_total t[DIFF_MAX_TOTALS];
    size_t n = diff_totals(d, t);
    struct toon_value *a = toon_array();
    for (size_t i = 0; i < n; i++) {
        struct toon_value *o = toon_object();
        toon_set_literal(o, "name", toon_cstr(t[i].name));
        toon_set_literal(o, "base", num_or_na(t[i].base));
        toon_set_literal(o, "new", num_or_na(t[i].neu));
        toon_set_literal(o, "delta", delta_or_na(t[i].base, t[i].neu));
        toon_set_literal(o, "ratio", ratio(t[i].base, t[i].neu));
        if (is_cpu(d))
            toon_set_literal(o, "p_value", p_value(t[i].p, t[i].verdict));
        toon_set_literal(o, "significance", toon_cstr(diff_verdict_names[t[i].verdict]));
        toon_push(a, o);
    }
    return a;
}

static struct toon_value *diff_waits_toon(const struct diff *d)
{
    struct toon_value *a = toon_table();
    for (size_t i = 0; i < d->n_waits; i++) {
        const struct diff_wait *w = &d->waits[i];
        struct toon_value *o = toon_object();
        toon_set_literal(o, "namespace", str_or_na(w->ns));
        toon_set_literal(o, "function", str_or_na(w->fn));
        toon_set_literal(o, "origin", origin(w->origin));
        toon_set_literal(o, "path", str_or_na(w->path));
        toon_set_literal(o, "line", num_or_na(w->line));
        toon_set_literal(o, "column", num_or_na(w->column));
        static const char *const names[] = {"base_samples", "new_samples", "delta_samples",
                                            "ratio"};
        compared(o, names, w->base, w->neu, w->verdict != DIFF_INCOMPARABLE);
        toon_set_literal(o, "p_value", p_value(w->p, w->verdict));
        toon_set_literal(o, "significance", toon_cstr(diff_verdict_names[w->verdict]));
        toon_set_literal(o, "direction", toon_cstr(diff_direction_names[w->direction]));
        toon_table_push(a, o);
    }
    return a;
}

struct toon_value *diff_toon(const struct diff *d)
{
    struct toon_value *root = toon_object(), *o = toon_object();
    struct toon_value *b = toon_object(), *n = toon_object();
    toon_set(o, "schema", toon_cstr("jett.profile-diff.v2"));
    toon_set(o, "mode", toon_cstr(is_cpu(d) ? "cpu" : "memory"));
    toon_set(o, "test", toon_cstr(is_cpu(d) ? "exact_binomial_two_sided" : "exact_counts"));
    if (is_cpu(d))
        toon_set(o, "level", toon_double(DIFF_LEVEL));
    side(b, d, d->base);
    side(n, d, d->neu);
    toon_set(o, "base", b);
    toon_set(o, "new", n);
    toon_set(o, "totals", totals(d));
    toon_set(o, "functions", rows(d));
    if (is_cpu(d))
        toon_set(o, "waiting", diff_waits_toon(d));
    toon_set(root, "diff", o);
    return root;
}
