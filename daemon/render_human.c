/* render_human: the stderr report, same numbers and order as the TOON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/render-internal.h"
#include "daemon/render.h"
#include "proto/wire.h"

/* Where the time went, first of all: the run's wall and CPU time, then
 * the shares of the recorded samples and the coalesced ticks that ran
 * Jett code (a coalesced tick found the program running: on a loaded
 * machine it is what computing loses to the scheduler, while sleeping
 * loses no tick), waited and were the runtime's (and unavailable
 * samples, when there were any).  With tasks each task has a sample a
 * period, so the shares are of the tasks' time, which the line says. */
static void time_split(FILE *f, const struct rank_report *r)
{
    const struct rank_cpu_totals *t = &r->cpu;
    if (t->recorded_samples == RANK_NA || t->attributed_samples == RANK_NA) {
        fputs("time: unavailable\n", f);
        return;
    }
    uint64_t coalesced = t->coalesced_ticks == RANK_NA ? 0 : t->coalesced_ticks;
    uint64_t n = t->recorded_samples + coalesced;
    fputs("time: ", f);
    if (t->wall_ms != RANK_NA) {
        fprintf(f, "%llu ms wall", (unsigned long long)t->wall_ms);
        if (t->process_cpu_ms != RANK_NA)
            fprintf(f, ", %llu ms CPU", (unsigned long long)t->process_cpu_ms);
        fputs(n ? ": " : ", ", f);
    }
    if (n == 0) {
        fputs("no samples\n", f);
        return;
    }
    render_put_share(f, t->attributed_samples + coalesced, n);
    fputs(" running Jett code, ", f);
    render_put_share(f, t->waiting_samples, n);
    fputs(" waiting, ", f);
    render_put_share(f, t->runtime_samples, n);
    fputs(" runtime", f);
    if (t->unavailable_samples > 0) {
        fputs(", ", f);
        render_put_share(f, t->unavailable_samples, n);
        fputs(" unavailable", f);
    }
    fputs(" (", f);
    render_put_count(f, t->recorded_samples, "sample");
    if (r->has_tasks && r->task_count != RANK_NA && r->task_count > 1)
        fprintf(f, " of %llu tasks", (unsigned long long)r->task_count);
    if (coalesced > 0) {
        fputs(", ", f);
        render_put_count(f, coalesced, "coalesced tick");
    }
    fputs(")\n", f);
}

/* The heading, where the time or the memory went, the status and any
 * collector error: what a reader must know before the leads. */
static void header(FILE *f, const struct rank_report *r)
{
    const char *title = r->mode == WIRE_MODE_CPU ? "CPU profile" : "Memory profile";
    fprintf(f, r->colour ? "\033[1m%s\033[0m\n" : "%s\n", title);
    if (r->mode == WIRE_MODE_CPU)
        time_split(f, r);
    else
        render_mem_summary(f, r);
    fprintf(f, "status: %s", agg_status_name(r->status));
    if (r->status != AGG_COMPLETE)
        fprintf(f, " (%s)", agg_reason_name(r->reason));
    fprintf(f, ", termination: %s\n", r->termination);
    if (r->collector_errors > 0) {
        fprintf(f, "collector errors: %llu, first: ", (unsigned long long)r->collector_errors);
        render_escaped(f, r->collector_error, strlen(r->collector_error));
        fputc('\n', f);
    }
}

/* How the profile was taken, last: backend and coverage, then the
 * configuration and the totals. */
static void footer(FILE *f, const struct rank_report *r)
{
    fputs("backend: ", f);
    render_escaped(f, r->backend, strlen(r->backend));
    fprintf(f, ", coverage: %s\n", r->coverage);
}

static void cpu_config_totals(FILE *f, const struct rank_report *r)
{
    const struct rank_cpu_totals *t = &r->cpu;
    fprintf(f, "config: rate %u Hz, threshold ", r->rate_hz);
    render_put_hundredths(f, r->threshold_bp);
    fprintf(f, "%%, limit %u, CPU metadata budget ", r->limit);
    render_put_size(f, r->cpu_budget, true);
    fputc('\n', f);
    fputs("totals:\n", f);
    render_put_line(f, "requested ticks", t->requested_ticks, NULL);
    render_put_line(f, "recorded samples", t->recorded_samples, NULL);
    render_put_line(f, "attributed samples", t->attributed_samples, NULL);
    render_put_line(f, "runtime samples", t->runtime_samples, NULL);
    render_put_line(f, "waiting samples", t->waiting_samples, NULL);
    render_put_line(f, "unavailable samples", t->unavailable_samples, NULL);
    render_put_line(f, "coalesced ticks", t->coalesced_ticks, NULL);
    render_put_line(f, "dropped ticks", t->dropped_ticks, NULL);
    render_put_line(f, "truncated stacks", t->truncated_stacks, NULL);
    fprintf(f, "  %-22s", "observed rate");
    render_put_hundredths(f, t->observed_rate_hundredths);
    fputs(t->observed_rate_hundredths == RANK_NA ? "\n" : " Hz\n", f);
    render_put_line(f, "wall time", t->wall_ms, " ms");
    render_put_line(f, "process CPU time", t->process_cpu_ms, " ms");
}

static void mem_config_totals(FILE *f, const struct rank_report *r)
{
    const struct rank_mem_totals *t = &r->mem;
    fputs("config: threshold ", f);
    render_put_hundredths(f, r->threshold_bp);
    fprintf(f, "%%, limit %u, retention metadata budget ", r->limit);
    render_put_size(f, r->retention_budget, true);
    fputc('\n', f);
    fputs("totals:\n", f);
    render_put_line(f, "allocations", t->allocation_count, NULL);
    render_put_line(f, "resizes", t->resize_count, NULL);
    render_put_byte_line(f, "allocated bytes", t->allocated_bytes, t->allocated_unavailable);
    render_put_byte_line(f, "freed bytes", t->freed_bytes, t->live_unavailable);
    render_put_byte_line(f, "peak live bytes", t->peak_live_bytes, t->live_unavailable);
    render_put_byte_line(f, "retained bytes", t->retained_bytes, t->retained_unavailable);
    render_put_byte_line(f, "attributed bytes", t->attributed_allocated_bytes,
                         t->allocated_unavailable);
}

/* One retained row: bytes, holder, objects, creation-site function. */
static void retained_row(FILE *f, const struct rank_retained *t)
{
    if (t->remainder) {
        if (t->numbers_unavailable) {
            fputs("the rest unavailable\n", f);
            return;
        }
        render_put_short_size(f, t->bytes);
        fputs(" in ", f);
        render_put_count(f, t->objects, "more object");
        fputc('\n', f);
        return;
    }
    render_put_short_size(f, t->bytes);
    fputs(" held by ", f);
    if (t->holder_ns.ptr == NULL) {
        fputs("no binding", f);
    } else {
        render_put_str(f, t->holder_ns);
        fputc('.', f);
        render_put_str(f, t->holder_name);
        render_put_paren_location(f, t->holder_path, t->holder_line);
    }
    fputs(": ", f);
    render_put_count(f, t->objects, "object");
    fputs(" created in ", f);
    if (t->fn.ptr == NULL) {
        fputs("an unknown function\n", f);
        return;
    }
    render_put_str(f, t->ns);
    fputc('.', f);
    render_put_str(f, t->fn);
    render_put_paren_location(f, t->path, t->line);
    fputc('\n', f);
}

/* What holds the memory at exit, before the bottlenecks: the first row
 * after "retained at exit:", the others indented under it. */
static void retained_lines(FILE *f, const struct rank_report *r)
{
    if (r->walk == RANK_WALK_UNAVAILABLE) {
        if (!r->mem.retained_unavailable && r->mem.retained_bytes > 0) {
            fputs("retained at exit: ", f);
            render_put_short_size(f, r->mem.retained_bytes);
            fputs("; holders unavailable\n", f);
        }
        return;
    }
    fputs(r->walk == RANK_WALK_PARTIAL ? "retained at exit (partial): " : "retained at exit: ", f);
    if (r->n_retained == 0)
        fputs("nothing\n", f);
    for (unsigned k = 0; k < r->n_retained; k++) {
        fputs(k ? "  " : "", f);
        retained_row(f, &r->retained[k]);
    }
}

/* The entry head shared by both modes: name, location, origin. */
static void entry_name(FILE *f, const struct rank_entry *e)
{
    static const char *const origins[] = {"project", "dependency", "stdlib"};
    render_put_str(f, e->ns);
    fputc('.', f);
    render_put_str(f, e->fn);
    fputs("  ", f);
    render_put_location(f, e->path, e->line, RANK_NA);
    if (e->path.ptr)
        fprintf(f, " (%s)", e->origin >= 0 ? origins[e->origin] : "unavailable");
    fputc('\n', f);
}

static void entry_tail(FILE *f, const struct rank_entry *e, bool mem)
{
    for (unsigned k = 0; k < e->n_chains; k++) {
        fputs("    chain     ", f);
        if (mem)
            render_put_size(f, e->chains[k].weight, true);
        else
            render_put_count(f, e->chains[k].weight, "sample");
        fputs("  ", f);
        render_escaped(f, e->chains[k].folded, e->chains[k].folded_len);
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

/* An entry's hot lines: self samples (cpu) or allocations and bytes
 * (memory), then the redacted excerpt. */
static void hot_rows(FILE *f, const struct rank_entry *e, bool mem)
{
    for (unsigned k = 0; k < e->n_hot; k++) {
        const struct rank_hot *h = &e->hot[k];
        fputs("    hot line  ", f);
        render_put_location(f, h->path, h->line, h->column);
        fputs("  ", f);
        if (mem) {
            render_put_size(f, h->allocated_bytes, true);
            fputs(" / ", f);
            render_put_count(f, h->allocation_count, "allocation");
        } else {
            render_put_count(f, h->self_samples, "sample");
        }
        if (h->code)
            fprintf(f, "  | %s%s\n", h->code, h->source_redacted ? "  (redacted)" : "");
        else
            fputs("  code unavailable\n", f);
    }
}

/* An entry's call lines: samples, their share, calls, the callee and
 * the redacted excerpt. */
static void call_rows(FILE *f, const struct rank_entry *e)
{
    for (unsigned k = 0; k < e->n_calls; k++) {
        const struct rank_call *c = &e->call_lines[k];
        fputs("    call line ", f);
        render_put_location(f, c->where.path, c->where.line, c->where.column);
        fputs("  ", f);
        render_put_count(f, c->where.self_samples, "sample");
        fputs(" (", f);
        render_put_hundredths(f, c->percent_hundredths);
        fputs("%)", f);
        if (c->calls == RANK_NA) {
            fputs(", calls unavailable", f);
        } else {
            fputs(" in ", f);
            render_put_count(f, c->calls, "call");
        }
        if (c->callee_fn.ptr) {
            fputs(" -> ", f);
            render_put_str(f, c->callee_ns);
            fputc('.', f);
            render_put_str(f, c->callee_fn);
        }
        if (c->where.code)
            fprintf(f, "  | %s%s\n", c->where.code, c->where.source_redacted ? "  (redacted)" : "");
        else
            fputs("  code unavailable\n", f);
    }
}

/* One ranked CPU entry with its hot lines, call lines, chains and
 * suggestions. */
static void cpu_entry(FILE *f, const struct rank_entry *e)
{
    fprintf(f, "#%llu  ", (unsigned long long)e->rank);
    render_put_hundredths(f, e->percent_hundredths);
    fprintf(f, "%%  self %llu (", (unsigned long long)e->secondary);
    render_put_hundredths(f, e->self_percent_hundredths);
    fprintf(f, "%%) / inclusive %llu / ", (unsigned long long)e->primary);
    if (e->calls == RANK_NA)
        fputs("calls unavailable", f);
    else
        render_put_count(f, e->calls, "call");
    fputs("  ", f);
    entry_name(f, e);
    hot_rows(f, e, false);
    call_rows(f, e);
    entry_tail(f, e, false);
}

/* One ranked memory entry: bytes, counts, then chains and suggestions. */
static void mem_entry(FILE *f, const struct rank_entry *e)
{
    fprintf(f, "#%llu  ", (unsigned long long)e->rank);
    render_put_hundredths(f, e->percent_hundredths);
    fputs("%  ", f);
    render_put_size(f, e->primary, true);
    fputs(" / ", f);
    render_put_count(f, e->secondary, "allocation");
    fputs("  ", f);
    entry_name(f, e);
    fputs("    freed ", f);
    render_put_bytes(f, e->freed_bytes, e->live_unavailable);
    fputs(", retained ", f);
    render_put_bytes(f, e->retained_bytes, e->retained_unavailable);
    fputs(", live at peak ", f);
    render_put_bytes(f, e->live_at_peak_bytes, e->live_unavailable);
    fputs(", resizes ", f);
    render_put_num(f, e->resize_count);
    fputc('\n', f);
    hot_rows(f, e, true);
    entry_tail(f, e, true);
}

static void bottlenecks(FILE *f, const struct rank_report *r)
{
    fputs("bottlenecks: ", f);
    render_put_num(f, r->eligible);
    fputs(" eligible, ", f);
    render_put_num(f, r->emitted);
    fputs(" emitted, ", f);
    render_put_num(f, r->truncated);
    fputs(" truncated\n", f);
    for (size_t i = 0; i < r->n_entries; i++)
        (r->mode == WIRE_MODE_CPU ? cpu_entry : mem_entry)(f, &r->entries[i]);
}

#define SELF_ROWS 5

/* Self order: self samples desc, then rank (the bottleneck order). */
static int self_cmp(const void *x, const void *y)
{
    const struct rank_entry *p = *(const struct rank_entry *const *)x,
                            *q = *(const struct rank_entry *const *)y;
    if (p->secondary != q->secondary)
        return p->secondary > q->secondary ? -1 : 1;
    return p->rank < q->rank ? -1 : p->rank > q->rank;
}

/* The emitted CPU entries with self samples, by self samples: where the
 * time itself went, with each one's hottest line. */
static void top_self(FILE *f, const struct rank_report *r)
{
    const struct rank_entry **rows = malloc((r->n_entries + 1) * sizeof *rows);
    size_t n = 0;
    for (size_t i = 0; rows && i < r->n_entries; i++)
        if (r->entries[i].secondary > 0)
            rows[n++] = &r->entries[i];
    if (n > 0) {
        qsort(rows, n, sizeof *rows, self_cmp);
        fputs("top self time:\n", f);
    }
    for (size_t i = 0; i < n && i < SELF_ROWS; i++) {
        const struct rank_entry *e = rows[i];
        fputs("  ", f);
        render_put_str(f, e->ns);
        fputc('.', f);
        render_put_str(f, e->fn);
        fputs("  self ", f);
        render_put_count(f, e->secondary, "sample");
        fputs("  ", f);
        render_put_hundredths(f, e->self_percent_hundredths);
        fputs("%", f);
        if (e->n_hot > 0) {
            fputs("  at ", f);
            render_put_location(f, e->hot[0].path, e->hot[0].line, e->hot[0].column);
        }
        fputc('\n', f);
    }
    free(rows);
}

/* Where the program waited: the top call sites of waiting samples. */
static void waiting(FILE *f, const struct rank_report *r)
{
    if (r->n_waits == 0)
        return;
    fputs("waiting call sites:\n", f);
    for (unsigned k = 0; k < r->n_waits; k++) {
        const struct rank_wait *w = &r->waits[k];
        fputs("  ", f);
        render_put_str(f, w->ns);
        fputc('.', f);
        render_put_str(f, w->fn);
        fputs("  ", f);
        render_put_location(f, w->where.path, w->where.line, w->where.column);
        fputs("  ", f);
        render_put_count(f, w->where.self_samples, "sample");
        fputs("  ", f);
        render_put_hundredths(f, w->percent_hundredths);
        fputs("% of waiting\n", f);
        if (w->folded) {
            fputs("    chain     ", f);
            render_escaped(f, w->folded, w->folded_len);
            fputc('\n', f);
        }
    }
}

/* Who spent the time or the bytes: the top tasks, each with its share of
 * every task's running samples or allocated bytes. */
static void tasks(FILE *f, const struct rank_report *r)
{
    bool cpu = r->mode == WIRE_MODE_CPU;
    fputs("tasks: ", f);
    if (r->task_count == RANK_NA) {
        fputs("unavailable\n", f);
        return;
    }
    render_put_count(f, r->task_count, "task");
    if (r->n_tasks < r->task_count)
        fprintf(f, ", the top %zu", r->n_tasks);
    fputs(cpu ? " by samples\n" : " by allocated bytes\n", f);
    for (size_t k = 0; k < r->n_tasks; k++) {
        const struct rank_task *t = &r->tasks[k];
        uint64_t part = cpu ? t->samples : t->allocated_bytes;
        uint64_t whole = cpu ? r->task_samples : r->task_allocated;
        fprintf(f, "  task %llu  ", (unsigned long long)t->task);
        render_put_hundredths(f, whole ? rank_percent_hundredths(part, whole) : 0);
        fputs("%  ", f);
        if (cpu) {
            render_put_count(f, t->samples, "sample");
            fputs(" running, ", f);
            render_put_num(f, t->waiting_samples);
            fputs(" waiting  ", f);
        } else {
            render_put_size(f, t->allocated_bytes, true);
            fputs(" allocated, retained ", f);
            render_put_bytes(f, t->retained_bytes, t->retained_unavailable);
            fputs("  ", f);
        }
        render_put_str(f, t->ns);
        fputc('.', f);
        render_put_str(f, t->fn);
        fputs("  ", f);
        render_put_location(f, t->path, t->line, RANK_NA);
        if (t->spawn_path.ptr) {
            fputs("  spawned at ", f);
            render_put_location(f, t->spawn_path, t->spawn_line, RANK_NA);
        }
        fputc('\n', f);
    }
}

int render_human(const struct rank_report *r, char **out, size_t *len)
{
    *out = NULL;
    FILE *f = open_memstream(out, len);
    if (f == NULL)
        return -1;
    bool cpu = r->mode == WIRE_MODE_CPU;
    header(f, r);
    render_leads(f, r);
    if (!cpu)
        retained_lines(f, r);
    if (rank_waits_first(r))
        waiting(f, r);
    bottlenecks(f, r);
    if (cpu) {
        top_self(f, r);
        if (!rank_waits_first(r))
            waiting(f, r);
    }
    if (r->has_tasks)
        tasks(f, r);
    footer(f, r);
    (cpu ? cpu_config_totals : mem_config_totals)(f, r);
    return fclose(f) == 0 ? 0 : -1;
}
