/* rank_leads: the leads of a report (jett-profile(7), "Leads"): at most
 * three places to look first, each a row the report already has or the
 * function that holds the most of one quantity, in a fixed order.  Both
 * renderers print them, so a person and an agent are pointed at the same
 * places first. */
#include "daemon/attrib.h"
#include "daemon/rank-internal.h"

const char *rank_lead_kind_name(enum rank_lead_kind k)
{
    static const char *const names[] = {"task", "waiting", "self", "holder", "peak", "allocated"};
    return names[k];
}

const char *rank_lead_unit(enum rank_lead_kind k)
{
    return k <= RANK_LEAD_SELF ? "samples" : "bytes";
}

const char *rank_lead_of(enum rank_lead_kind k)
{
    static const char *const of[] = {"task_samples",       "waiting_samples",
                                     "attributed_samples", "retained_bytes",
                                     "peak_live_bytes",    "attributed_allocated_bytes"};
    return of[k];
}

static struct rank_lead *add(struct rank_report *r, enum rank_lead_kind kind)
{
    struct rank_lead *l = &r->leads[r->n_leads++];
    *l = (struct rank_lead){
        .kind = kind, .task = RANK_NA, .line = RANK_NA, .column = RANK_NA, .calls = RANK_NA};
    return l;
}

/* Where an entry points: its first hot line, else its declaration. */
static void entry_place(struct rank_lead *l, const struct rank_entry *e)
{
    l->ns = e->ns, l->name = e->fn;
    if (e->n_hot > 0) {
        l->path = e->hot[0].path, l->line = e->hot[0].line, l->column = e->hot[0].column;
        return;
    }
    l->path = e->path, l->line = e->line;
}

/* With two tasks or more, the first task row when it ran more than half
 * of every task's samples: the task the others may be waiting for. */
static bool task_lead(struct rank_report *r)
{
    if (!r->has_tasks || r->task_count == RANK_NA || r->task_count < 2 || r->n_tasks == 0)
        return false;
    const struct rank_task *t = &r->tasks[0];
    /* more than twice all the others together: tasks that take turns
     * split the samples near evenly, and none of them is the cause */
    if (t->samples == RANK_NA || t->samples == 0 || r->task_samples < t->samples ||
        r->task_samples - t->samples > (t->samples - 1) / 2)
        return false;
    struct rank_lead *l = add(r, RANK_LEAD_TASK);
    l->task = t->task;
    l->ns = t->ns, l->name = t->fn, l->path = t->path, l->line = t->line;
    l->value = t->samples;
    l->percent_hundredths = rank_percent_hundredths(t->samples, r->task_samples);
    uint64_t waited = r->cpu.waiting_samples, own = t->waiting_samples;
    l->others_waiting = waited != RANK_NA && own != RANK_NA && waited >= own ? waited - own : 0;
    return true;
}

static void waiting_lead(struct rank_report *r)
{
    if (!rank_waits_first(r))
        return;
    const struct rank_wait *w = &r->waits[0];
    struct rank_lead *l = add(r, RANK_LEAD_WAITING);
    l->ns = w->ns, l->name = w->fn;
    l->path = w->where.path, l->line = w->where.line, l->column = w->where.column;
    l->value = w->where.self_samples;
    l->percent_hundredths = w->percent_hundredths;
}

/* The emitted entry with the most self samples, the first by rank among
 * equals: the top self time table's first row. */
static void self_lead(struct rank_report *r)
{
    const struct rank_entry *best = NULL;
    for (size_t i = 0; i < r->n_entries; i++)
        if (r->entries[i].secondary > 0 &&
            (best == NULL || r->entries[i].secondary > best->secondary))
            best = &r->entries[i];
    if (best == NULL)
        return;
    struct rank_lead *l = add(r, RANK_LEAD_SELF);
    entry_place(l, best);
    l->value = best->secondary;
    l->percent_hundredths = best->self_percent_hundredths;
    l->calls = best->calls;
}

/* The binding that holds the most at exit, over all that it holds.  Not
 * when all that is retained is below the threshold's share of the peak:
 * a few bytes kept to the end are not where the memory went. */
static bool holder_lead(struct rank_report *r)
{
    const struct rank_retained *t = &r->top_holder;
    const struct rank_mem_totals *m = &r->mem;
    if (!r->has_top_holder || t->bytes == 0 || m->retained_unavailable)
        return false;
    if (!m->live_unavailable && m->peak_live_bytes > 0 &&
        !rank_meets(m->retained_bytes, m->peak_live_bytes, r->threshold_bp))
        return false;
    struct rank_lead *l = add(r, RANK_LEAD_HOLDER);
    l->ns = t->holder_ns, l->name = t->holder_name, l->path = t->holder_path;
    l->line = t->holder_line;
    l->value = t->bytes;
    l->percent_hundredths = rank_percent_hundredths(t->bytes, m->retained_bytes);
    return true;
}

/* Of every function, emitted or not, the one with the most bytes live
 * at the peak (ties in identity order): what to shrink to lower the peak.
 * After a holder lead only when the peak is above the bytes retained at
 * exit by at least the threshold's share of the peak: otherwise what
 * holds the memory at exit is what made the peak. */
static void peak_lead(const struct agg *a, struct rank_report *r, bool holder)
{
    const struct rank_mem_totals *t = &r->mem;
    if (t->live_unavailable || t->peak_live_bytes == 0 ||
        (holder &&
         !rank_meets(t->peak_live_bytes - t->retained_bytes, t->peak_live_bytes, r->threshold_bp)))
        return;
    uint32_t best = ATTRIB_NONE;
    uint64_t most = 0;
    struct attrib_site s;
    for (uint32_t i = 0, n = attrib_ident_count(a); i < n; i++)
        if (attrib_site(a, i, &s) && s.live_at_peak > 0 &&
            (best == ATTRIB_NONE || s.live_at_peak > most ||
             (s.live_at_peak == most && rank_ident_cmp(a, i, best) < 0)))
            best = i, most = s.live_at_peak;
    if (best == ATTRIB_NONE)
        return;
    struct rank_entry e = {0};
    rank_identity(a, best, &e);
    struct rank_lead *l = add(r, RANK_LEAD_PEAK);
    l->ns = e.ns, l->name = e.fn, l->path = e.path, l->line = e.line;
    l->value = most;
    l->percent_hundredths = rank_percent_hundredths(most, t->peak_live_bytes);
}

static void allocated_lead(struct rank_report *r)
{
    if (r->n_entries == 0 || r->entries[0].primary == 0)
        return;
    struct rank_lead *l = add(r, RANK_LEAD_ALLOCATED);
    entry_place(l, &r->entries[0]);
    l->value = r->entries[0].primary;
    l->percent_hundredths = r->entries[0].percent_hundredths;
}

void rank_leads(const struct agg *a, struct rank_report *r)
{
    r->n_leads = 0;
    /* a budget that refused buckets may have left out the place a lead
     * would name: then no lead rather than a wrong one */
    r->leads_unavailable = !attrib_detail_whole(a);
    if (r->leads_unavailable)
        return;
    if (r->mode == WIRE_MODE_CPU) {
        /* the tasks that wait for the busiest one would only point back at it */
        if (!task_lead(r))
            waiting_lead(r);
        self_lead(r);
        return;
    }
    bool holder = holder_lead(r);
    peak_lead(a, r, holder);
    allocated_lead(r);
}
