/* run_fallback: a full unavailable profile from what the launcher knows. */
#include <stdlib.h>
#include <string.h>

#include "cli/run_fallback.h"
#include "daemon/render.h"

/* Nanoseconds to milliseconds, rounded half away from zero. */
static uint64_t ms(uint64_t ns)
{
    return ns == WIRE_NONE64 ? RANK_NA : ns / 1000000 + (ns % 1000000 >= 500000);
}

static void cpu_totals(struct rank_cpu_totals *t, const struct wire_finish *fin, uint32_t caps)
{
    memset(t, 0xff, sizeof *t); /* every field RANK_NA */
    if (!fin)
        return;
    t->requested_ticks = fin->requested_ticks;
    t->coalesced_ticks = fin->coalesced_ticks;
    t->wall_ms = ms(fin->wall_ns);
    if (caps & WIRE_CAP_PROCESS_CPU_TIME)
        t->process_cpu_ms = ms(fin->cpu_ns);
}

static void report_of(const struct run_fallback *f, struct rank_report *r)
{
    memset(r, 0, sizeof *r);
    bool cpu = f->mode == WIRE_MODE_CPU;
    r->mode = f->mode;
    r->status = AGG_UNAVAILABLE;
    r->reason = AGG_REASON_COLLECTOR_FAILURE;
    r->termination = f->termination;
    r->backend = f->backend;
    r->coverage = cpu ? "jett_runtime_threads" : "jett_heap";
    r->colour = f->colour;
    r->capabilities = f->capabilities;
    r->rate_hz = f->config.rate_hz;
    r->threshold_bp = f->config.threshold_bp;
    r->limit = f->config.limit;
    r->cpu_budget = f->config.cpu_budget;
    r->retention_budget = f->config.retention_budget;
    cpu_totals(&r->cpu, cpu ? f->fin : NULL, f->capabilities);
    memset(&r->mem, 0xff, sizeof r->mem);
    /* byte counts say unavailable by flags (any u64 is a byte count) */
    r->mem.live_unavailable = r->mem.retained_unavailable = r->mem.allocated_unavailable = true;
    /* none emitted; how many were eligible is unknown */
    r->eligible = RANK_NA, r->emitted = 0, r->truncated = RANK_NA;
    /* with task attribution the tasks field is there, unknown */
    r->has_tasks = (f->capabilities & WIRE_CAP_TASK_ATTRIBUTION) != 0;
    r->task_count = RANK_NA;
    r->leads_unavailable = true;
    r->collector_errors = f->why && *f->why ? 1 : 0;
    r->collector_error = f->why ? f->why : "";
}

int run_fallback_render(const struct run_fallback *f, char **toon, size_t *toon_len, char **human,
                        size_t *human_len)
{
    struct rank_report r;
    char err[128];
    report_of(f, &r);
    *toon = *human = NULL;
    if (render_toon(&r, toon, toon_len, err, sizeof err) == 0 &&
        render_human(&r, human, human_len) == 0)
        return 0;
    free(*toon), free(*human);
    *toon = *human = NULL;
    return -1;
}
