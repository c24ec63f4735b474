/* render_toon: the jett.profile.v1 object in DESIGN section 7's order. */
#include <stdlib.h>
#include <string.h>

#include "daemon/render.h"
#include "proto/wire.h"

static struct toon_value *num(uint64_t v)
{
    return v == RANK_NA ? toon_cstr("unavailable") : toon_uint(v);
}

/* A byte count: exact whatever its value, or unavailable. */
static struct toon_value *bytes(uint64_t v, bool unavailable)
{
    return unavailable ? toon_cstr("unavailable") : toon_uint(v);
}

static struct toon_value *str(struct rank_str s)
{
    return s.ptr ? toon_string(s.ptr, s.len) : toon_cstr("unavailable");
}

/* Hundredths as a canonical number: 34.19, 34.1, 50. */
static struct toon_value *hundredths(uint64_t h)
{
    if (h == RANK_NA)
        return toon_cstr("unavailable");
    if (h % 100 == 0)
        return toon_uint(h / 100);
    return toon_double((double)h / 100.0);
}

static struct toon_value *origin(int o)
{
    static const char *const names[] = {"project", "dependency", "stdlib"};
    return o >= 0 && o <= 2 ? toon_cstr(names[o]) : toon_cstr("unavailable");
}

static struct toon_value *config(const struct rank_report *r)
{
    struct toon_value *c = toon_object();
    if (r->mode == WIRE_MODE_CPU)
        toon_set(c, "requested_rate_hz", toon_uint(r->rate_hz));
    toon_set(c, "threshold_basis_points", toon_uint(r->threshold_bp));
    toon_set(c, "limit", toon_uint(r->limit));
    if (r->mode == WIRE_MODE_CPU)
        toon_set(c, "cpu_metadata_budget_bytes", toon_uint(r->cpu_budget));
    else
        toon_set(c, "retention_metadata_budget_bytes", toon_uint(r->retention_budget));
    return c;
}

static struct toon_value *cpu_totals(const struct rank_cpu_totals *t)
{
    struct toon_value *o = toon_object();
    toon_set(o, "requested_ticks", num(t->requested_ticks));
    toon_set(o, "recorded_samples", num(t->recorded_samples));
    toon_set(o, "attributed_samples", num(t->attributed_samples));
    toon_set(o, "runtime_samples", num(t->runtime_samples));
    toon_set(o, "waiting_samples", num(t->waiting_samples));
    toon_set(o, "unavailable_samples", num(t->unavailable_samples));
    toon_set(o, "coalesced_ticks", num(t->coalesced_ticks));
    toon_set(o, "dropped_ticks", num(t->dropped_ticks));
    toon_set(o, "truncated_stacks", num(t->truncated_stacks));
    toon_set(o, "observed_rate_hz", hundredths(t->observed_rate_hundredths));
    toon_set(o, "wall_ms", num(t->wall_ms));
    toon_set(o, "process_cpu_ms", num(t->process_cpu_ms));
    return o;
}

static struct toon_value *mem_totals(const struct rank_mem_totals *t)
{
    struct toon_value *o = toon_object();
    toon_set(o, "allocation_count", num(t->allocation_count));
    toon_set(o, "resize_count", num(t->resize_count));
    toon_set(o, "allocated_bytes", bytes(t->allocated_bytes, t->allocated_unavailable));
    toon_set(o, "freed_bytes", bytes(t->freed_bytes, t->live_unavailable));
    toon_set(o, "peak_live_bytes", bytes(t->peak_live_bytes, t->live_unavailable));
    toon_set(o, "retained_bytes", bytes(t->retained_bytes, t->retained_unavailable));
    toon_set(o, "attributed_allocated_bytes",
             bytes(t->attributed_allocated_bytes, t->allocated_unavailable));
    return o;
}

/* CPU hot lines (self samples) or memory allocation lines (count and
 * bytes). */
static struct toon_value *hot_lines(const struct rank_entry *e, bool mem)
{
    struct toon_value *a = toon_array();
    for (unsigned k = 0; k < e->n_hot; k++) {
        const struct rank_hot *h = &e->hot[k];
        struct toon_value *o = toon_object();
        toon_set(o, "path", str(h->path));
        toon_set(o, "line", num(h->line));
        toon_set(o, "column", num(h->column));
        if (mem) {
            toon_set(o, "allocation_count", num(h->allocation_count));
            toon_set(o, "allocated_bytes", toon_uint(h->allocated_bytes));
        } else {
            toon_set(o, "self_samples", num(h->self_samples));
        }
        toon_set(o, "code", h->code ? toon_string(h->code, h->code_len) : toon_cstr("unavailable"));
        toon_set(o, "source_redacted", toon_bool(h->source_redacted));
        toon_push(a, o);
    }
    return a;
}

/* "ns.fn", or unavailable. */
static struct toon_value *qualified(struct rank_str ns, struct rank_str fn)
{
    if (!ns.ptr || !fn.ptr)
        return toon_cstr("unavailable");
    char *s = malloc(ns.len + fn.len + 2);
    if (!s)
        return NULL;
    memcpy(s, ns.ptr, ns.len);
    s[ns.len] = '.';
    memcpy(s + ns.len + 1, fn.ptr, fn.len);
    struct toon_value *v = toon_string(s, ns.len + fn.len + 1);
    free(s);
    return v;
}

/* A CPU entry's call lines: where, inclusive samples, calls, code, and
 * the callee in most of their samples. */
static struct toon_value *call_lines(const struct rank_entry *e)
{
    struct toon_value *a = toon_array();
    for (unsigned k = 0; k < e->n_calls; k++) {
        const struct rank_call *c = &e->call_lines[k];
        struct toon_value *o = toon_object();
        toon_set(o, "path", str(c->where.path));
        toon_set(o, "line", num(c->where.line));
        toon_set(o, "column", num(c->where.column));
        toon_set(o, "inclusive_samples", num(c->where.self_samples));
        toon_set(o, "calls", num(c->calls));
        toon_set(o, "code",
                 c->where.code ? toon_string(c->where.code, c->where.code_len)
                               : toon_cstr("unavailable"));
        toon_set(o, "source_redacted", toon_bool(c->where.source_redacted));
        toon_set(o, "callee", qualified(c->callee_ns, c->callee_fn));
        toon_push(a, o);
    }
    return a;
}

static struct toon_value *chains(const struct rank_entry *e, const char *weight)
{
    struct toon_value *a = toon_array();
    for (unsigned k = 0; k < e->n_chains; k++) {
        struct toon_value *o = toon_object();
        toon_set(o, weight, toon_uint(e->chains[k].weight));
        toon_set(o, "chain", toon_string(e->chains[k].chain, e->chains[k].len));
        toon_push(a, o);
    }
    return a;
}

static struct toon_value *suggestions(const struct rank_entry *e)
{
    if (e->suggestions_unavailable)
        return toon_cstr("unavailable");
    struct toon_value *a = toon_array();
    for (unsigned k = 0; k < e->n_suggestions; k++) {
        struct toon_value *o = toon_object();
        toon_set(o, "rule", toon_cstr(e->suggestions[k].rule));
        toon_set(o, "text", toon_cstr(e->suggestions[k].text));
        toon_push(a, o);
    }
    return a;
}

/* rank, namespace, function, path, line: the head of every entry. */
static struct toon_value *entry_head(const struct rank_entry *e)
{
    struct toon_value *o = toon_object();
    toon_set(o, "rank", toon_uint(e->rank));
    toon_set(o, "namespace", str(e->ns));
    toon_set(o, "function", str(e->fn));
    toon_set(o, "path", str(e->path));
    toon_set(o, "line", num(e->line));
    return o;
}

static struct toon_value *cpu_entry(const struct rank_entry *e)
{
    struct toon_value *o = entry_head(e);
    toon_set(o, "inclusive_samples", num(e->primary));
    toon_set(o, "self_samples", num(e->secondary));
    toon_set(o, "cpu_percent", hundredths(e->percent_hundredths));
    toon_set(o, "self_percent", hundredths(e->self_percent_hundredths));
    toon_set(o, "calls", num(e->calls));
    toon_set(o, "origin", origin(e->origin));
    toon_set(o, "hot_lines", hot_lines(e, false));
    toon_set(o, "call_lines", call_lines(e));
    toon_set(o, "call_chains", chains(e, "samples"));
    toon_set(o, "suggestions", suggestions(e));
    return o;
}

static struct toon_value *mem_entry(const struct rank_entry *e)
{
    struct toon_value *o = entry_head(e);
    toon_set(o, "allocation_count", num(e->secondary));
    toon_set(o, "allocated_bytes", toon_uint(e->primary));
    toon_set(o, "allocation_percent", hundredths(e->percent_hundredths));
    toon_set(o, "freed_bytes", bytes(e->freed_bytes, e->live_unavailable));
    toon_set(o, "retained_bytes", bytes(e->retained_bytes, e->retained_unavailable));
    toon_set(o, "live_at_peak_bytes", bytes(e->live_at_peak_bytes, e->live_unavailable));
    toon_set(o, "resize_count", num(e->resize_count));
    toon_set(o, "origin", origin(e->origin));
    toon_set(o, "hot_lines", hot_lines(e, true));
    toon_set(o, "call_chains", chains(e, "bytes"));
    toon_set(o, "suggestions", suggestions(e));
    return o;
}

/* The top waiting call sites, never charged to a function. */
static struct toon_value *waiting(const struct rank_report *r)
{
    if (r->cpu.waiting_samples == RANK_NA)
        return toon_cstr("unavailable"); /* the launcher's fallback: nothing known */
    struct toon_value *a = toon_array();
    for (unsigned k = 0; k < r->n_waits; k++) {
        const struct rank_wait *w = &r->waits[k];
        struct toon_value *o = toon_object();
        toon_set(o, "namespace", str(w->ns));
        toon_set(o, "function", str(w->fn));
        toon_set(o, "path", str(w->where.path));
        toon_set(o, "line", num(w->where.line));
        toon_set(o, "column", num(w->where.column));
        toon_set(o, "samples", num(w->where.self_samples));
        toon_set(o, "waiting_percent", hundredths(w->percent_hundredths));
        toon_set(o, "chain",
                 w->chain ? toon_string(w->chain, w->chain_len) : toon_cstr("unavailable"));
        toon_push(a, o);
    }
    return a;
}

/* holder: ns.name, unavailable, or <remainder>. */
static struct toon_value *holder(const struct rank_retained *t)
{
    if (t->remainder)
        return toon_cstr("<remainder>");
    if (t->holder_ns.ptr == NULL)
        return toon_cstr("unavailable");
    size_t n = t->holder_ns.len + 1 + t->holder_name.len;
    char *s = malloc(n);
    if (s == NULL)
        return NULL;
    memcpy(s, t->holder_ns.ptr, t->holder_ns.len);
    s[t->holder_ns.len] = '.';
    memcpy(s + t->holder_ns.len + 1, t->holder_name.ptr, t->holder_name.len);
    struct toon_value *v = toon_string(s, n);
    free(s);
    return v;
}

/* What holds the memory at exit: holder and creation-site function. */
static struct toon_value *retained(const struct rank_report *r)
{
    if (r->walk == RANK_WALK_UNAVAILABLE)
        return toon_cstr("unavailable");
    struct toon_value *a = toon_array();
    for (unsigned k = 0; k < r->n_retained; k++) {
        const struct rank_retained *t = &r->retained[k];
        struct toon_value *o = toon_object();
        toon_set(o, "holder", holder(t));
        toon_set(o, "holder_path", str(t->holder_path));
        toon_set(o, "holder_line", num(t->holder_line));
        toon_set(o, "namespace", str(t->ns));
        toon_set(o, "function", str(t->fn));
        toon_set(o, "path", str(t->path));
        toon_set(o, "line", num(t->line));
        toon_set(o, "retained_bytes", bytes(t->bytes, t->numbers_unavailable));
        toon_set(o, "objects", bytes(t->objects, t->numbers_unavailable));
        toon_push(a, o);
    }
    return a;
}

/* The top tasks, both modes: who spent the samples or the bytes. */
static struct toon_value *tasks(const struct rank_report *r)
{
    if (r->task_count == RANK_NA)
        return toon_cstr("unavailable"); /* the launcher's fallback: nothing known */
    bool cpu = r->mode == WIRE_MODE_CPU;
    struct toon_value *a = toon_array();
    for (size_t k = 0; k < r->n_tasks; k++) {
        const struct rank_task *t = &r->tasks[k];
        struct toon_value *o = toon_object();
        toon_set(o, "task", toon_uint(t->task));
        toon_set(o, "namespace", str(t->ns));
        toon_set(o, "function", str(t->fn));
        toon_set(o, "path", str(t->path));
        toon_set(o, "line", num(t->line));
        toon_set(o, "spawn_path", str(t->spawn_path));
        toon_set(o, "spawn_line", num(t->spawn_line));
        if (cpu) {
            toon_set(o, "samples", num(t->samples));
            toon_set(o, "waiting_samples", num(t->waiting_samples));
        } else {
            toon_set(o, "allocated_bytes", toon_uint(t->allocated_bytes));
            toon_set(o, "retained_bytes", bytes(t->retained_bytes, t->retained_unavailable));
        }
        toon_push(a, o);
    }
    return a;
}

/* Where to look first: the leads, one row each. */
static struct toon_value *leads(const struct rank_report *r)
{
    if (r->leads_unavailable)
        return toon_cstr("unavailable");
    struct toon_value *a = toon_array();
    for (unsigned k = 0; k < r->n_leads; k++) {
        const struct rank_lead *l = &r->leads[k];
        struct toon_value *o = toon_object();
        toon_set(o, "kind", toon_cstr(rank_lead_kind_name(l->kind)));
        toon_set(o, "task", num(l->task));
        toon_set(o, "namespace", str(l->ns));
        toon_set(o, "name", str(l->name));
        toon_set(o, "path", str(l->path));
        toon_set(o, "line", num(l->line));
        toon_set(o, "column", num(l->column));
        toon_set(o, "value", toon_uint(l->value));
        toon_set(o, "unit", toon_cstr(rank_lead_unit(l->kind)));
        toon_set(o, "percent", hundredths(l->percent_hundredths));
        toon_set(o, "of", toon_cstr(rank_lead_of(l->kind)));
        toon_push(a, o);
    }
    return a;
}

static struct toon_value *capabilities(uint32_t bits)
{
    struct toon_value *o = toon_object();
    for (int i = 0; i < WIRE_CAP_COUNT; i++)
        toon_set(o, wire_capability_names[i], toon_bool(bits & (1u << i)));
    return o;
}

struct toon_value *render_profile_value(const struct rank_report *r)
{
    struct toon_value *p = toon_object();
    toon_set(p, "schema", toon_cstr("jett.profile.v1"));
    toon_set(p, "mode", toon_cstr(r->mode == WIRE_MODE_CPU ? "cpu" : "memory"));
    toon_set(p, "status", toon_cstr(agg_status_name(r->status)));
    if (r->status != AGG_COMPLETE)
        toon_set(p, "partial_reason", toon_cstr(agg_reason_name(r->reason)));
    toon_set(p, "termination", toon_cstr(r->termination));
    toon_set(p, "backend", toon_cstr(r->backend));
    toon_set(p, "coverage", toon_cstr(r->coverage));
    toon_set(p, "config", config(r));
    bool cpu = r->mode == WIRE_MODE_CPU;
    toon_set(p, "totals", cpu ? cpu_totals(&r->cpu) : mem_totals(&r->mem));
    struct toon_value *list = toon_array();
    for (size_t i = 0; i < r->n_entries; i++)
        toon_push(list, cpu ? cpu_entry(&r->entries[i]) : mem_entry(&r->entries[i]));
    toon_set(p, "bottlenecks", list);
    toon_set(p, "eligible_bottlenecks", num(r->eligible));
    toon_set(p, "emitted_bottlenecks", num(r->emitted));
    toon_set(p, "truncated_bottlenecks", num(r->truncated));
    toon_set(p, "leads", leads(r));
    static const char *const walks[] = {"unavailable", "complete", "partial"};
    if (cpu) {
        toon_set(p, "waiting", waiting(r));
    } else {
        toon_set(p, "retained_status", toon_cstr(walks[r->walk]));
        toon_set(p, "retained", retained(r));
    }
    if (r->has_tasks)
        toon_set(p, "tasks", tasks(r));
    toon_set(p, "capabilities", capabilities(r->capabilities));
    return p;
}

int render_toon(const struct rank_report *r, char **out, size_t *len, char *err, size_t errlen)
{
    struct toon_value *doc = toon_object();
    toon_set(doc, "profile", render_profile_value(r));
    int rc = toon_encode(doc, NULL, out, len, err, errlen);
    toon_free(doc);
    return rc;
}
