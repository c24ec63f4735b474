/* captext_dump: records -> text lines. */
#include <inttypes.h>

#include "proto/captext.h"
#include "proto/captext-internal.h"

static void put_str(FILE *out, const char *key, struct wire_str s)
{
    fprintf(out, " %s=\"", key);
    for (uint32_t i = 0; i < s.len; i++) {
        unsigned char c = (unsigned char)s.ptr[i];
        switch (c) {
        case '"':
            fputs("\\\"", out);
            break;
        case '\\':
            fputs("\\\\", out);
            break;
        case '\n':
            fputs("\\n", out);
            break;
        case '\t':
            fputs("\\t", out);
            break;
        case '\r':
            fputs("\\r", out);
            break;
        default:
            if (c < 0x20 || c == 0x7f)
                fprintf(out, "\\x%02x", c);
            else
                fputc(c, out);
        }
    }
    fputc('"', out);
}

static void put_u32(FILE *out, const char *key, uint32_t v)
{
    if (v == WIRE_NONE32)
        fprintf(out, " %s=-", key);
    else
        fprintf(out, " %s=%" PRIu32, key, v);
}

static void put_u64(FILE *out, const char *key, uint64_t v)
{
    if (v == WIRE_NONE64)
        fprintf(out, " %s=-", key);
    else
        fprintf(out, " %s=%" PRIu64, key, v);
}

/* An ALLOC size: a number wherever the operation has one, whatever its
 * value (2^64 - 1 is a size there, not the absent marker). */
static void put_size(FILE *out, const char *key, uint64_t v, bool present)
{
    if (present)
        fprintf(out, " %s=%" PRIu64, key, v);
    else
        put_u64(out, key, v);
}

static void put_span(FILE *out, const char *key, struct wire_span s)
{
    if (!wire_span_present(s))
        fprintf(out, " %s=-", key);
    else
        fprintf(out, " %s=%" PRIu32 "-%" PRIu32, key, s.start, s.end);
}

static void put_bool(FILE *out, const char *key, bool v)
{
    fprintf(out, " %s=%s", key, v ? "true" : "false");
}

static void dump_hello(FILE *out, const struct wire_hello *h)
{
    fprintf(out, "HELLO version=%" PRIu32 " mode=%s", h->version, captext_modes[h->mode]);
    put_u32(out, "rate_hz", h->config.rate_hz);
    put_u32(out, "threshold_bp", h->config.threshold_bp);
    put_u32(out, "limit", h->config.limit);
    put_u64(out, "cpu_budget", h->config.cpu_budget);
    put_u64(out, "retention_budget", h->config.retention_budget);
    put_u64(out, "stack_budget", h->config.stack_budget);
    put_str(out, "backend", h->backend);
    fputs(" capabilities=", out);
    if (h->capabilities == 0)
        fputc('-', out);
    for (int i = 0, first = 1; i < WIRE_CAP_COUNT; i++)
        if (h->capabilities & (1u << i)) {
            fprintf(out, "%s%s", first ? "" : ",", wire_capability_names[i]);
            first = 0;
        }
    put_bool(out, "colour", h->colour);
    fputc('\n', out);
}

static void dump_source(FILE *out, const struct wire_source *s)
{
    fprintf(out, "SOURCE id=%" PRIu32 " origin=%s", s->source_id, captext_origins[s->origin]);
    put_str(out, "path", s->path);
    fputs(" spans=", out);
    if (s->n_spans == 0)
        fputc('-', out);
    for (uint32_t i = 0; i < s->n_spans; i++)
        fprintf(out, "%s%s:%" PRIu32 "-%" PRIu32, i ? "," : "",
                captext_span_kinds[s->spans[i].kind], s->spans[i].start, s->spans[i].end);
    put_str(out, "text", s->text);
    fputc('\n', out);
}

static void dump_func(FILE *out, const struct wire_func *f)
{
    fprintf(out, "FUNC id=%" PRIu32, f->func_id);
    put_str(out, "namespace", f->ns);
    put_str(out, "function", f->name);
    put_u32(out, "source", f->source_id);
    put_span(out, "decl", f->decl);
    fputc('\n', out);
}

static void dump_exec(FILE *out, const struct wire_exec *e)
{
    put_u32(out, "task", e->task);
    put_u32(out, "actor", e->actor);
    put_u32(out, "thread", e->thread);
}

static void dump_entry(FILE *out, const struct wire_event *ev)
{
    if (ev->kind == WIRE_ENTRY_STACK) {
        const struct wire_stack *s = &ev->u.stack;
        fprintf(out, "  STACK id=%" PRIu32, s->stack_id);
        put_u32(out, "parent", s->parent);
        put_u32(out, "func", s->func_id);
        put_span(out, "site", s->site);
    } else if (ev->kind == WIRE_ENTRY_TASK) {
        const struct wire_task *t = &ev->u.task;
        fprintf(out, "  TASK task=%" PRIu32, t->task);
        put_u32(out, "func", t->func_id);
        put_u32(out, "spawn_func", t->spawn_func);
        put_span(out, "site", t->site);
    } else if (ev->kind == WIRE_ENTRY_SAMPLE) {
        const struct wire_sample *s = &ev->u.sample;
        fprintf(out, "  CPU_SAMPLE seq=%" PRIu64 " tick=%" PRIu64, s->sequence, s->requested_tick);
        dump_exec(out, &s->exec);
        fprintf(out, " state=%s", captext_states[s->state]);
        put_u32(out, "stack", s->stack_id);
        put_span(out, "span", s->span);
    } else if (ev->u.alloc.op == WIRE_OP_FOLD) {
        const struct wire_alloc *a = &ev->u.alloc;
        fprintf(out, "  FOLD seq=%" PRIu64 " id=%" PRIu64 " size=%" PRIu64 " free_seq=%" PRIu64,
                a->sequence, a->allocation_id, a->new_size, wire_fold_free_seq(a));
        dump_exec(out, &a->exec);
        put_u32(out, "stack", a->stack_id);
        put_span(out, "span", a->span);
    } else {
        const struct wire_alloc *a = &ev->u.alloc;
        fprintf(out, "  ALLOC seq=%" PRIu64 " op=%s id=%" PRIu64, a->sequence, captext_ops[a->op],
                a->allocation_id);
        put_size(out, "old", a->old_size, a->op != WIRE_OP_ALLOCATE);
        put_size(out, "new", a->new_size, a->op != WIRE_OP_FREE);
        dump_exec(out, &a->exec);
        put_u32(out, "stack", a->stack_id);
        put_span(out, "span", a->span);
    }
    fputc('\n', out);
}

static int dump_events(FILE *out, struct wire_decoder *d, const struct wire_events *ev)
{
    struct wire_events_iter it;
    struct wire_event e;
    int rc;
    fputs("EVENTS\n", out);
    wire_events_begin(&it, ev);
    while ((rc = wire_events_next(d, &it, &e)) > 0)
        dump_entry(out, &e);
    if (rc < 0)
        return -1;
    fputs("END\n", out);
    return 0;
}

static void dump_finish(FILE *out, const struct wire_finish *f)
{
    fprintf(out, "FINISH termination=%s", captext_terminations[f->termination]);
    put_u64(out, "wall_ns", f->wall_ns);
    put_u64(out, "cpu_ns", f->cpu_ns);
    put_u64(out, "requested", f->requested_ticks);
    put_u64(out, "coalesced", f->coalesced_ticks);
    put_u64(out, "dropped", f->dropped_ticks);
    put_bool(out, "collector_failure", f->collector_failure);
    put_bool(out, "stack_limit", f->stack_limit);
    fputc('\n', out);
}

static void put_opt_str(FILE *out, const char *key, struct wire_str s)
{
    if (s.ptr == NULL)
        fprintf(out, " %s=-", key);
    else
        put_str(out, key, s);
}

static void dump_retained(FILE *out, const struct wire_retained *r)
{
    fputs("RETAINED", out);
    put_opt_str(out, "namespace", r->ns);
    put_opt_str(out, "name", r->name);
    put_u32(out, "source", r->source_id);
    put_span(out, "decl", r->decl);
    fputs(" rows=", out);
    if (r->n_rows == 0)
        fputc('-', out);
    for (uint32_t i = 0; i < r->n_rows; i++) {
        struct wire_retained_row row = wire_retained_row_at(r, i);
        fputs(i ? "," : "", out);
        if (row.func_id == WIRE_NONE32)
            fputc('-', out);
        else
            fprintf(out, "%" PRIu32, row.func_id);
        fprintf(out, ":%" PRIu64 ":%" PRIu64, row.bytes, row.objects);
    }
    put_bool(out, "complete", r->complete);
    fputc('\n', out);
}

int captext_dump_record(FILE *out, struct wire_decoder *d, const struct wire_record *rec)
{
    switch (rec->type) {
    case WIRE_HELLO:
        dump_hello(out, &rec->u.hello);
        break;
    case WIRE_READY:
        fprintf(out, "READY version=%" PRIu32 "\n", rec->u.ready.version);
        break;
    case WIRE_UNSUPPORTED:
        fputs("UNSUPPORTED", out);
        put_str(out, "capability", rec->u.unsupported.capability);
        fputc('\n', out);
        break;
    case WIRE_SOURCE:
        dump_source(out, &rec->u.source);
        break;
    case WIRE_FUNC:
        dump_func(out, &rec->u.func);
        break;
    case WIRE_EVENTS:
        return dump_events(out, d, &rec->u.events);
    case WIRE_FINISH:
        dump_finish(out, &rec->u.finish);
        break;
    case WIRE_CALLS:
        captext_dump_calls(out, &rec->u.calls);
        break;
    case WIRE_RETAINED:
        dump_retained(out, &rec->u.retained);
        break;
    case WIRE_RESULT:
        fputs("RESULT", out);
        put_str(out, "profile", rec->u.result.profile);
        put_str(out, "human", rec->u.result.human);
        fputc('\n', out);
        break;
    }
    return 0;
}

int captext_dump(FILE *out, struct capture_reader *r, char *err, size_t errlen)
{
    struct wire_record rec;
    int rc;
    while ((rc = capture_reader_next(r, &rec)) > 0) {
        if (captext_dump_record(out, capture_reader_decoder(r), &rec) != 0) {
            capture_reader_decode_error(r, err, errlen);
            return -1;
        }
    }
    if (rc < 0) {
        snprintf(err, errlen, "%s", capture_reader_error(r));
        return -1;
    }
    return 0;
}
