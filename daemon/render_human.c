/* render_human: the stderr report, same numbers and order as the TOON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/render.h"
#include "proto/wire.h"

/* Length of a valid UTF-8 character at p (n bytes left), 0 if invalid. */
static size_t utf8_char(const unsigned char *p, size_t n)
{
    size_t len = p[0] < 0xc2 ? 0 : p[0] < 0xe0 ? 2 : p[0] < 0xf0 ? 3 : p[0] < 0xf5 ? 4 : 0;
    if (len == 0 || n < len)
        return 0;
    if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] > 0x9f) ||
        (p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] > 0x8f))
        return 0;
    for (size_t k = 1; k < len; k++)
        if ((p[k] & 0xc0) != 0x80)
            return 0;
    return len;
}

void render_escaped(FILE *f, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t len = p[i] < 0x80 ? 1 : utf8_char(p + i, n - i);
        bool ctl = len == 0 || p[i] < 0x20 || p[i] == 0x7f ||
                   (len == 2 && p[i] == 0xc2 && p[i + 1] < 0xa0);
        if (!ctl) {
            fwrite(p + i, 1, len, f);
            i += len;
            continue;
        }
        for (size_t k = 0; k < (len ? len : 1); k++)
            fprintf(f, "\\x%02x", p[i + k]);
        i += len ? len : 1;
    }
}

static void put_str(FILE *f, struct rank_str s)
{
    if (s.ptr == NULL)
        fputs("unavailable", f);
    else
        render_escaped(f, s.ptr, s.len);
}

static void put_num(FILE *f, uint64_t v)
{
    if (v == RANK_NA)
        fputs("unavailable", f);
    else
        fprintf(f, "%llu", (unsigned long long)v);
}

/* Hundredths padded to two decimals: 34.10. */
static void put_hundredths(FILE *f, uint64_t h)
{
    if (h == RANK_NA)
        fputs("unavailable", f);
    else
        fprintf(f, "%llu.%02llu", (unsigned long long)(h / 100), (unsigned long long)(h % 100));
}

static void put_line(FILE *f, const char *label, uint64_t v, const char *unit)
{
    fprintf(f, "  %-22s", label);
    put_num(f, v);
    if (v != RANK_NA && unit)
        fputs(unit, f);
    fputc('\n', f);
}

static void header(FILE *f, const struct rank_report *r)
{
    const char *title = r->mode == WIRE_MODE_CPU ? "CPU profile" : "Memory profile";
    fprintf(f, r->colour ? "\033[1m%s\033[0m\n" : "%s\n", title);
    fprintf(f, "status: %s", agg_status_name(r->status));
    if (r->status != AGG_COMPLETE)
        fprintf(f, " (%s)", agg_reason_name(r->reason));
    fprintf(f, ", termination: %s\n", r->termination);
    fputs("backend: ", f);
    render_escaped(f, r->backend, strlen(r->backend));
    fprintf(f, ", coverage: %s\n", r->coverage);
    if (r->collector_errors > 0) {
        fprintf(f, "collector errors: %llu, first: ", (unsigned long long)r->collector_errors);
        render_escaped(f, r->collector_error, strlen(r->collector_error));
        fputc('\n', f);
    }
}

static void cpu_config_totals(FILE *f, const struct rank_report *r)
{
    const struct rank_cpu_totals *t = &r->cpu;
    fprintf(f, "config: rate %u Hz, threshold ", r->rate_hz);
    put_hundredths(f, r->threshold_bp);
    fprintf(f, "%%, limit %u, CPU metadata budget %llu bytes\n", r->limit,
            (unsigned long long)r->cpu_budget);
    fputs("totals:\n", f);
    put_line(f, "requested ticks", t->requested_ticks, NULL);
    put_line(f, "recorded samples", t->recorded_samples, NULL);
    put_line(f, "attributed samples", t->attributed_samples, NULL);
    put_line(f, "runtime samples", t->runtime_samples, NULL);
    put_line(f, "waiting samples", t->waiting_samples, NULL);
    put_line(f, "unavailable samples", t->unavailable_samples, NULL);
    put_line(f, "coalesced ticks", t->coalesced_ticks, NULL);
    put_line(f, "dropped ticks", t->dropped_ticks, NULL);
    put_line(f, "truncated stacks", t->truncated_stacks, NULL);
    fprintf(f, "  %-22s", "observed rate");
    put_hundredths(f, t->observed_rate_hundredths);
    fputs(t->observed_rate_hundredths == RANK_NA ? "\n" : " Hz\n", f);
    put_line(f, "wall time", t->wall_ms, " ms");
    put_line(f, "process CPU time", t->process_cpu_ms, " ms");
}

static void mem_config_totals(FILE *f, const struct rank_report *r)
{
    const struct rank_mem_totals *t = &r->mem;
    fputs("config: threshold ", f);
    put_hundredths(f, r->threshold_bp);
    fprintf(f, "%%, limit %u, retention metadata budget %llu bytes\n", r->limit,
            (unsigned long long)r->retention_budget);
    fputs("totals:\n", f);
    put_line(f, "allocations", t->allocation_count, NULL);
    put_line(f, "resizes", t->resize_count, NULL);
    put_line(f, "allocated bytes", t->allocated_bytes, NULL);
    put_line(f, "freed bytes", t->freed_bytes, NULL);
    put_line(f, "peak live bytes", t->peak_live_bytes, NULL);
    put_line(f, "retained bytes", t->retained_bytes, NULL);
    put_line(f, "attributed bytes", t->attributed_allocated_bytes, NULL);
}

static void put_location(FILE *f, struct rank_str path, uint64_t line, uint64_t column)
{
    put_str(f, path);
    fputc(':', f);
    put_num(f, line);
    if (column != RANK_NA) {
        fputc(':', f);
        put_num(f, column);
    }
}

/* The entry head shared by both modes: name, location, origin. */
static void entry_name(FILE *f, const struct rank_entry *e)
{
    static const char *const origins[] = {"project", "dependency", "stdlib"};
    put_str(f, e->ns);
    fputc('.', f);
    put_str(f, e->fn);
    fputs("  ", f);
    put_location(f, e->path, e->line, RANK_NA);
    fprintf(f, " (%s)\n", e->origin >= 0 ? origins[e->origin] : "unavailable");
}

static void entry_tail(FILE *f, const struct rank_entry *e, const char *unit)
{
    for (unsigned k = 0; k < e->n_chains; k++) {
        fprintf(f, "    chain     %llu %s  ", (unsigned long long)e->chains[k].weight, unit);
        render_escaped(f, e->chains[k].chain, e->chains[k].len);
        fputc('\n', f);
    }
    if (e->suggestions_unavailable)
        fputs("    suggestions unavailable\n", f);
    for (unsigned k = 0; k < e->n_suggestions; k++) {
        fprintf(f, "    suggest   %s: ", e->suggestions[k].rule);
        render_escaped(f, e->suggestions[k].text, strlen(e->suggestions[k].text));
        fputc('\n', f);
    }
}

/* One ranked CPU entry with its hot lines, chains and suggestions. */
static void cpu_entry(FILE *f, const struct rank_entry *e)
{
    fprintf(f, "#%llu  ", (unsigned long long)e->rank);
    put_hundredths(f, e->percent_hundredths);
    fprintf(f, "%%  self %llu / inclusive %llu  ", (unsigned long long)e->secondary,
            (unsigned long long)e->primary);
    entry_name(f, e);
    for (unsigned k = 0; k < e->n_hot; k++) {
        const struct rank_hot *h = &e->hot[k];
        fputs("    hot line  ", f);
        put_location(f, h->path, h->line, h->column);
        fprintf(f, "  %llu samples  ", (unsigned long long)h->self_samples);
        if (h->code)
            fprintf(f, "| %s%s\n", h->code, h->source_redacted ? "  (redacted)" : "");
        else
            fputs("code unavailable\n", f);
    }
    entry_tail(f, e, "samples");
}

/* One ranked memory entry: bytes, counts, then chains and suggestions. */
static void mem_entry(FILE *f, const struct rank_entry *e)
{
    fprintf(f, "#%llu  ", (unsigned long long)e->rank);
    put_hundredths(f, e->percent_hundredths);
    fprintf(f, "%%  %llu bytes / %llu allocations  ", (unsigned long long)e->primary,
            (unsigned long long)e->secondary);
    entry_name(f, e);
    fputs("    freed ", f);
    put_num(f, e->freed_bytes);
    fputs(", retained ", f);
    put_num(f, e->retained_bytes);
    fputs(", live at peak ", f);
    put_num(f, e->live_at_peak_bytes);
    fputs(", resizes ", f);
    put_num(f, e->resize_count);
    fputc('\n', f);
    entry_tail(f, e, "bytes");
}

static void bottlenecks(FILE *f, const struct rank_report *r)
{
    fputs("bottlenecks: ", f);
    put_num(f, r->eligible);
    fputs(" eligible, ", f);
    put_num(f, r->emitted);
    fputs(" emitted, ", f);
    put_num(f, r->truncated);
    fputs(" truncated\n", f);
    for (size_t i = 0; i < r->n_entries; i++)
        (r->mode == WIRE_MODE_CPU ? cpu_entry : mem_entry)(f, &r->entries[i]);
}

int render_human(const struct rank_report *r, char **out, size_t *len)
{
    *out = NULL;
    FILE *f = open_memstream(out, len);
    if (f == NULL)
        return -1;
    header(f, r);
    (r->mode == WIRE_MODE_CPU ? cpu_config_totals : mem_config_totals)(f, r);
    bottlenecks(f, r);
    return fclose(f) == 0 ? 0 : -1;
}
