/* render_human_leads: the human report's opening, under its heading and
 * status: a memory report's one-line summary and, in both modes, the
 * leads ("look first:"), so that the first lines name what to change. */
#include "daemon/render-internal.h"
#include "daemon/render.h"

/* "248.00 KiB allocated (812 allocations), 204.03 KiB live at peak,
 * 340 bytes retained at exit": the totals a reader asks first. */
void render_mem_summary(FILE *f, const struct rank_report *r)
{
    const struct rank_mem_totals *t = &r->mem;
    fputs("memory: ", f);
    if (t->allocated_unavailable) {
        fputs("unavailable\n", f);
        return;
    }
    render_put_short_size(f, t->allocated_bytes);
    fputs(" allocated (", f);
    render_put_count(f, t->allocation_count, "allocation");
    fputs("), ", f);
    if (t->live_unavailable) {
        fputs("live bytes unavailable\n", f);
        return;
    }
    render_put_short_size(f, t->peak_live_bytes);
    fputs(" live at peak, ", f);
    if (t->retained_unavailable)
        fputs("retained bytes unavailable\n", f);
    else {
        render_put_short_size(f, t->retained_bytes);
        fputs(" retained at exit\n", f);
    }
}

/* What a lead's percentage is of, in words. */
static const char *whole_words(enum rank_lead_kind k)
{
    static const char *const words[] = {
        "every task's samples", "waiting samples", "samples in Jett code",
        "retained bytes",       "peak live bytes", "attributed bytes",
    };
    return words[k];
}

static void lead_label(FILE *f, const struct rank_lead *l)
{
    static const char *const labels[] = {"busiest task",   "most waiting",      "most self time",
                                         "largest holder", "most live at peak", "most allocated"};
    fputs(labels[l->kind], f);
    if (l->kind == RANK_LEAD_TASK)
        fprintf(f, " %llu", (unsigned long long)l->task);
}

/* One lead: what, where, how much and of what; a task lead adds what
 * the others waited, a self lead its calls. */
static void lead_row(FILE *f, const struct rank_lead *l)
{
    fputs("  ", f);
    lead_label(f, l);
    fputs("  ", f);
    render_put_str(f, l->ns);
    fputc('.', f);
    render_put_str(f, l->name);
    fputs("  ", f);
    render_put_location(f, l->path, l->line, l->column);
    fputs("  ", f);
    if (l->kind <= RANK_LEAD_SELF)
        render_put_count(f, l->value, "sample");
    else
        render_put_size(f, l->value, true);
    fputs(", ", f);
    render_put_hundredths(f, l->percent_hundredths);
    fprintf(f, "%% of %s", whole_words(l->kind));
    if (l->kind == RANK_LEAD_SELF && l->calls != RANK_NA) {
        fputs(", ", f);
        render_put_count(f, l->calls, "call");
    }
    if (l->kind == RANK_LEAD_TASK && l->others_waiting > 0) {
        fputs("; the other tasks waited ", f);
        render_put_count(f, l->others_waiting, "sample");
    }
    fputc('\n', f);
}

void render_leads(FILE *f, const struct rank_report *r)
{
    if (r->leads_unavailable) {
        fputs("look first: unavailable\n", f);
        return;
    }
    if (r->n_leads == 0)
        return;
    fputs("look first:\n", f);
    for (unsigned k = 0; k < r->n_leads; k++)
        lead_row(f, &r->leads[k]);
}
