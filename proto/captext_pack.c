/*
 * captext_pack: text lines -> capture frames.
 *
 * Fields must appear in the order dump writes them.  Every frame is pushed
 * through a wire decoder as soon as it is built, so an invalid record is
 * reported with the line that wrote it.
 */
#include <stdlib.h>

#include "proto/captext-internal.h"
#include "proto/captext.h"
#include "proto/wire_rules.h"

/* The largest entry a batch takes. */
#define ENTRY_MAX (WIRE_COMPACT_MAX > WIRE_ALLOC_SIZE ? WIRE_COMPACT_MAX : WIRE_ALLOC_SIZE)

/* Pushes the frame just appended (at `at`) through the checking decoder;
 * `lines` maps an EVENTS frame's entries to their text lines. */
static int check_frame(struct packer *p, size_t at, const uint32_t *lines)
{
    struct wire_decoder *d = p->check;
    struct wire_record rec;
    size_t len = p->out->size - at;
    const char *data = p->out->data + at;
    while (len > 0) {
        size_t n = wire_decoder_push(d, data, len);
        data += n, len -= n;
        if (wire_decoder_next(d, &rec) < 0)
            return pack_err(p, "%s", wire_decoder_error(d)->msg);
    }
    if (rec.type != WIRE_EVENTS)
        return 0;
    struct wire_events_iter it;
    struct wire_event ev;
    int rc;
    uint32_t i = 0;
    wire_events_begin(&it, &rec.u.events);
    while ((rc = wire_events_next(d, &it, &ev)) > 0)
        i++;
    if (rc < 0) {
        p->line = lines[i];
        return pack_err(p, "%s", wire_decoder_error(d)->msg);
    }
    return 0;
}

static int emit(struct packer *p, int rc, size_t at)
{
    if (rc != 0)
        return pack_err(p, "record does not fit in a 4 MiB frame");
    return check_frame(p, at, NULL);
}

static int flush_batch(struct packer *p)
{
    if (p->batch == BATCH_NONE)
        return 0;
    size_t at = p->out->size;
    uint32_t line = p->line;
    p->batch = BATCH_NONE;
    if (wire_encode_events(p->out, p->b.count, p->b.buf, p->b.len) != 0)
        return pack_err(p, "EVENTS does not fit in a 4 MiB frame");
    p->b.len = 0, p->b.count = 0;
    int rc = check_frame(p, at, p->entry_lines);
    if (rc == 0)
        p->line = line;
    return rc;
}

static int caps_of(struct packer *p, int i, uint32_t *caps)
{
    const struct pack_field *f = pack_field(p, i, "capabilities");
    if (!f)
        return -1;
    *caps = 0;
    if (!f->quoted && f->val_len == 1 && f->val[0] == '-')
        return 0;
    const char *s = f->val, *end = f->val + f->val_len;
    for (;;) {
        const char *comma = memchr(s, ',', (size_t)(end - s));
        size_t n = (size_t)((comma ? comma : end) - s);
        int k = 0;
        while (k < WIRE_CAP_COUNT && (strlen(wire_capability_names[k]) != n ||
                                      memcmp(wire_capability_names[k], s, n) != 0))
            k++;
        if (k == WIRE_CAP_COUNT)
            return pack_err(p, "capabilities: unknown capability '%.*s'", (int)n, s);
        *caps |= 1u << k;
        if (!comma)
            return 0;
        s = comma + 1;
    }
}

static int rec_hello(struct packer *p)
{
    struct wire_hello h = {0};
    struct wire_config *c = &h.config;
    if (pack_num32(p, 0, "version", false, &h.version) ||
        pack_enum(p, 1, "mode", captext_modes, 2, &h.mode) ||
        pack_num32(p, 2, "rate_hz", false, &c->rate_hz) ||
        pack_num32(p, 3, "threshold_bp", false, &c->threshold_bp) ||
        pack_num32(p, 4, "limit", false, &c->limit) ||
        pack_num64(p, 5, "cpu_budget", false, &c->cpu_budget) ||
        pack_num64(p, 6, "retention_budget", false, &c->retention_budget) ||
        pack_num64(p, 7, "stack_budget", false, &c->stack_budget) ||
        pack_str(p, 8, "backend", &h.backend) || caps_of(p, 9, &h.capabilities) ||
        pack_bool(p, 10, "colour", &h.colour) || pack_no_more(p, 11))
        return -1;
    p->version = h.version;
    size_t at = p->out->size;
    return emit(p, wire_encode_hello(p->out, &h), at);
}

/* spans=-  or  KIND:START-END,KIND:START-END,... */
static int spans_of(struct packer *p, int i, struct wire_source *s)
{
    const struct pack_field *f = pack_field(p, i, "spans");
    if (!f)
        return -1;
    s->n_spans = 0;
    if (!f->quoted && f->val_len == 1 && f->val[0] == '-')
        return 0;
    const char *q = f->val, *end = f->val + f->val_len;
    for (;;) {
        const char *comma = memchr(q, ',', (size_t)(end - q));
        const char *stop = comma ? comma : end, *colon = memchr(q, ':', (size_t)(stop - q));
        if (!colon)
            return pack_err(p, "spans: expected KIND:START-END, found '%.*s'", (int)(stop - q), q);
        int k = 0;
        while (k < 3 && (strlen(captext_span_kinds[k]) != (size_t)(colon - q) ||
                         memcmp(captext_span_kinds[k], q, (size_t)(colon - q)) != 0))
            k++;
        if (k == 3)
            return pack_err(p, "spans: unknown kind '%.*s'", (int)(colon - q), q);
        struct wire_span sp;
        if (pack_span_text(p, "spans", colon + 1, (size_t)(stop - colon - 1), &sp) != 0)
            return -1;
        if (s->n_spans == p->spans_cap) {
            size_t cap = p->spans_cap ? p->spans_cap * 2 : 64;
            void *np = realloc(p->spans, cap * sizeof *p->spans);
            if (!np)
                return pack_err(p, "out of memory");
            p->spans = np, p->spans_cap = cap;
        }
        p->spans[s->n_spans++] = (struct wire_source_span){(uint8_t)k, sp.start, sp.end};
        if (!comma)
            break;
        q = comma + 1;
    }
    wire_spans_order_ties(p->spans, s->n_spans);
    s->spans = p->spans;
    return 0;
}

static int rec_source(struct packer *p)
{
    struct wire_source s = {0};
    if (pack_num32(p, 0, "id", false, &s.source_id) ||
        pack_enum(p, 1, "origin", captext_origins, 3, &s.origin) ||
        pack_str(p, 2, "path", &s.path) || spans_of(p, 3, &s) || pack_str(p, 4, "text", &s.text) ||
        pack_no_more(p, 5))
        return -1;
    uint32_t n = wire_line_starts(s.text.ptr, s.text.len, NULL, 0);
    uint32_t *lines = malloc((size_t)n * sizeof *lines);
    if (!lines)
        return pack_err(p, "out of memory");
    wire_line_starts(s.text.ptr, s.text.len, lines, n);
    s.line_starts = lines, s.n_lines = n;
    size_t at = p->out->size;
    int rc = emit(p, wire_encode_source(p->out, &s), at);
    free(lines);
    return rc;
}

static int rec_func(struct packer *p)
{
    struct wire_func f = {0};
    if (pack_num32(p, 0, "id", false, &f.func_id) || pack_str(p, 1, "namespace", &f.ns) ||
        pack_str(p, 2, "function", &f.name) || pack_num32(p, 3, "source", true, &f.source_id) ||
        pack_span(p, 4, "decl", &f.decl) || pack_no_more(p, 5))
        return -1;
    size_t at = p->out->size;
    return emit(p, wire_encode_func(p->out, &f), at);
}

static int rec_finish(struct packer *p)
{
    struct wire_finish f = {0};
    if (pack_enum(p, 0, "termination", captext_terminations, 3, &f.termination) ||
        pack_num64(p, 1, "wall_ns", false, &f.wall_ns) ||
        pack_num64(p, 2, "cpu_ns", true, &f.cpu_ns) ||
        pack_num64(p, 3, "requested", false, &f.requested_ticks) ||
        pack_num64(p, 4, "coalesced", false, &f.coalesced_ticks) ||
        pack_num64(p, 5, "dropped", false, &f.dropped_ticks) ||
        pack_bool(p, 6, "collector_failure", &f.collector_failure) ||
        pack_bool(p, 7, "stack_limit", &f.stack_limit) || pack_no_more(p, 8))
        return -1;
    size_t at = p->out->size;
    return emit(p, wire_encode_finish(p->out, &f), at);
}

static int rec_calls(struct packer *p)
{
    uint32_t n, m;
    if (captext_calls_of(p, &n, &m) != 0)
        return -1;
    size_t at = p->out->size;
    return emit(p, wire_encode_calls(p->out, p->fn_calls, n, p->site_calls, m), at);
}

/* One FUNC:BYTES:OBJECTS row (FUNC '-': unknown) into the row buffer. */
static int row_of(struct packer *p, const char *s, size_t n, uint32_t k)
{
    const char *c1 = memchr(s, ':', n),
               *c2 = c1 ? memchr(c1 + 1, ':', n - (size_t)(c1 + 1 - s)) : NULL;
    uint64_t func = WIRE_NONE32, bytes, objects;
    if (!c2 ||
        (!(c1 - s == 1 && s[0] == '-') &&
         (!pack_parse_u64(s, (size_t)(c1 - s), &func) || func >= WIRE_NONE32)) ||
        !pack_parse_u64(c1 + 1, (size_t)(c2 - c1 - 1), &bytes) ||
        !pack_parse_u64(c2 + 1, n - (size_t)(c2 + 1 - s), &objects))
        return pack_err(p, "rows: expected FUNCTION:BYTES:OBJECTS, found '%.*s'", (int)n, s);
    if ((size_t)(k + 1) * WIRE_RETAINED_ROW_SIZE > p->rows_cap) {
        size_t cap = p->rows_cap ? p->rows_cap * 2 : 64 * WIRE_RETAINED_ROW_SIZE;
        uint8_t *nr = realloc(p->rows, cap);
        if (!nr)
            return pack_err(p, "out of memory");
        p->rows = nr, p->rows_cap = cap;
    }
    struct wire_retained_row row = {(uint32_t)func, bytes, objects};
    wire_put_retained_row(p->rows + (size_t)k * WIRE_RETAINED_ROW_SIZE, &row);
    return 0;
}

/* rows=-  or  FUNC:BYTES:OBJECTS,... */
static int rows_of(struct packer *p, int i, struct wire_retained *r)
{
    const struct pack_field *f = pack_field(p, i, "rows");
    if (!f)
        return -1;
    r->n_rows = 0;
    r->rows = p->rows;
    if (!f->quoted && f->val_len == 1 && f->val[0] == '-')
        return 0;
    for (const char *q = f->val, *end = f->val + f->val_len;;) {
        const char *comma = memchr(q, ',', (size_t)(end - q)), *stop = comma ? comma : end;
        if (r->n_rows > WIRE_MAX_FRAME / WIRE_RETAINED_ROW_SIZE)
            return pack_err(p, "rows: more than a frame holds");
        if (row_of(p, q, (size_t)(stop - q), r->n_rows) != 0)
            return -1;
        r->n_rows++;
        if (!comma)
            break;
        q = comma + 1;
    }
    r->rows = p->rows;
    return 0;
}

static int rec_retained(struct packer *p)
{
    struct wire_retained r = {0};
    if (pack_opt_str(p, 0, "namespace", &r.ns) || pack_opt_str(p, 1, "name", &r.name) ||
        pack_num32(p, 2, "source", true, &r.source_id) || pack_span(p, 3, "decl", &r.decl) ||
        rows_of(p, 4, &r) || pack_bool(p, 5, "complete", &r.complete) || pack_no_more(p, 6))
        return -1;
    size_t at = p->out->size;
    return emit(p, wire_encode_retained(p->out, &r), at);
}

static int exec_of(struct packer *p, int i, struct wire_exec *e)
{
    return pack_num32(p, i, "task", true, &e->task) ||
                   pack_num32(p, i + 1, "actor", true, &e->actor) ||
                   pack_num32(p, i + 2, "thread", true, &e->thread)
               ? -1
               : 0;
}

/* Appends one entry to the batch, remembering its line. */
static int batch_put(struct packer *p, const struct wire_event *ev)
{
    if (p->b.count == p->entry_cap) {
        size_t cap = p->entry_cap ? p->entry_cap * 2 : 256;
        void *nl = realloc(p->entry_lines, cap * sizeof *p->entry_lines);
        if (!nl)
            return pack_err(p, "out of memory");
        p->entry_lines = nl, p->entry_cap = cap;
    }
    if (p->b.cap - p->b.len < ENTRY_MAX) {
        if (p->batch == BATCH_IMPLICIT && p->b.len + ENTRY_MAX > WIRE_MAX_FRAME - 16) {
            if (flush_batch(p) != 0)
                return -1;
            p->batch = BATCH_IMPLICIT;
        } else if (p->b.len + ENTRY_MAX > WIRE_MAX_FRAME - 16)
            return pack_err(p, "EVENTS block is larger than a 4 MiB frame");
        else {
            size_t cap = p->b.cap ? p->b.cap * 2 : 65536;
            uint8_t *nb = realloc(p->b.buf, cap);
            if (!nb)
                return pack_err(p, "out of memory");
            p->b.buf = nb, p->b.cap = cap;
        }
    }
    p->entry_lines[p->b.count] = p->line;
    if (ev->kind == WIRE_ENTRY_STACK)
        wire_batch_stack(&p->b, &ev->u.stack);
    else if (ev->kind == WIRE_ENTRY_TASK)
        wire_batch_task(&p->b, &ev->u.task);
    else if (ev->kind == WIRE_ENTRY_SAMPLE)
        wire_batch_sample(&p->b, &ev->u.sample);
    else if (p->version < WIRE_COMPACT_VERSION)
        wire_batch_alloc(&p->b, &ev->u.alloc);
    else {
        p->b.len += wire_compact_put(&p->enc, p->b.buf + p->b.len, &ev->u.alloc);
        p->b.count++;
    }
    return 0;
}

/* What the compact layout cannot say, refused with the decoder's words
 * (its own checks follow once the frame is built). */
static int compact_sayable(struct packer *p, const struct wire_alloc *a)
{
    if (a->sequence <= p->enc.last)
        return pack_err(p, "ALLOC.sequence: does not increase");
    if ((a->op == WIRE_OP_ALLOCATE || a->op == WIRE_OP_FOLD) && a->allocation_id < p->enc.floor)
        return pack_err(p, "ALLOC.allocation_id: an allocate's id does not increase (ids are "
                           "never reused)");
    return 0;
}

/* FOLD seq=S id=I size=N free_seq=F task actor thread stack span */
static int rec_fold(struct packer *p, struct wire_alloc *a)
{
    a->op = WIRE_OP_FOLD;
    if (pack_u64(p, 0, "seq", &a->sequence) || pack_num64(p, 1, "id", false, &a->allocation_id) ||
        pack_u64(p, 2, "size", &a->new_size) || pack_u64(p, 3, "free_seq", &a->old_size) ||
        exec_of(p, 4, &a->exec) || pack_num32(p, 7, "stack", true, &a->stack_id) ||
        pack_span(p, 8, "span", &a->span) || pack_no_more(p, 9))
        return -1;
    if (p->version < WIRE_COMPACT_VERSION)
        return pack_err(p, "FOLD: protocol %u has no folds (version %d and later do)", p->version,
                        WIRE_COMPACT_VERSION);
    if (a->old_size <= a->sequence || a->old_size - a->sequence > WIRE_FOLD_MAX)
        return pack_err(p, "FOLD.free_seq: %llu is not 1 to %d past the sequence %llu",
                        (unsigned long long)a->old_size, WIRE_FOLD_MAX,
                        (unsigned long long)a->sequence);
    return 0;
}

static int rec_entry(struct packer *p)
{
    struct wire_event ev = {0};
    if (pack_kw_is(p, "STACK")) {
        struct wire_stack *s = &ev.u.stack;
        ev.kind = WIRE_ENTRY_STACK;
        if (pack_num32(p, 0, "id", false, &s->stack_id) ||
            pack_num32(p, 1, "parent", true, &s->parent) ||
            pack_num32(p, 2, "func", false, &s->func_id) || pack_span(p, 3, "site", &s->site) ||
            pack_no_more(p, 4))
            return -1;
    } else if (pack_kw_is(p, "TASK")) {
        struct wire_task *t = &ev.u.task;
        ev.kind = WIRE_ENTRY_TASK;
        if (pack_num32(p, 0, "task", false, &t->task) ||
            pack_num32(p, 1, "func", false, &t->func_id) ||
            pack_num32(p, 2, "spawn_func", true, &t->spawn_func) ||
            pack_span(p, 3, "site", &t->site) || pack_no_more(p, 4))
            return -1;
    } else if (pack_kw_is(p, "CPU_SAMPLE")) {
        struct wire_sample *s = &ev.u.sample;
        ev.kind = WIRE_ENTRY_SAMPLE;
        if (pack_u64(p, 0, "seq", &s->sequence) || pack_u64(p, 1, "tick", &s->requested_tick) ||
            exec_of(p, 2, &s->exec) || pack_enum(p, 5, "state", captext_states, 4, &s->state) ||
            pack_num32(p, 6, "stack", true, &s->stack_id) || pack_span(p, 7, "span", &s->span) ||
            pack_no_more(p, 8))
            return -1;
    } else if (pack_kw_is(p, "FOLD")) {
        ev.kind = WIRE_ENTRY_ALLOC;
        if (rec_fold(p, &ev.u.alloc) != 0 || compact_sayable(p, &ev.u.alloc) != 0)
            return -1;
    } else {
        struct wire_alloc *a = &ev.u.alloc;
        ev.kind = WIRE_ENTRY_ALLOC;
        if (pack_u64(p, 0, "seq", &a->sequence) || pack_enum(p, 1, "op", captext_ops, 3, &a->op) ||
            pack_num64(p, 2, "id", false, &a->allocation_id) ||
            pack_size(p, 3, "old", a->op != WIRE_OP_ALLOCATE, "an allocate has no old size",
                      &a->old_size) ||
            pack_size(p, 4, "new", a->op != WIRE_OP_FREE, "a free has no new size", &a->new_size) ||
            exec_of(p, 5, &a->exec) || pack_num32(p, 8, "stack", true, &a->stack_id) ||
            pack_span(p, 9, "span", &a->span) || pack_no_more(p, 10))
            return -1;
        if (p->version >= WIRE_COMPACT_VERSION && compact_sayable(p, a) != 0)
            return -1;
    }
    if (p->batch == BATCH_NONE)
        p->batch = BATCH_IMPLICIT;
    return batch_put(p, &ev);
}

static bool is_entry(const struct packer *p)
{
    return pack_kw_is(p, "STACK") || pack_kw_is(p, "CPU_SAMPLE") || pack_kw_is(p, "ALLOC") ||
           pack_kw_is(p, "TASK") || pack_kw_is(p, "FOLD");
}

/* Dispatches one tokenised line. */
static int pack_line(struct packer *p)
{
    if (is_entry(p))
        return rec_entry(p);
    if (p->batch == BATCH_IMPLICIT && flush_batch(p) != 0)
        return -1;
    if (pack_kw_is(p, "END")) {
        if (p->batch != BATCH_EXPLICIT)
            return pack_err(p, "END without EVENTS");
        if (p->b.count == 0)
            return pack_err(p, "EVENTS block without entries");
        return pack_no_more(p, 0) || flush_batch(p) ? -1 : 0;
    }
    if (p->batch == BATCH_EXPLICIT)
        return pack_err(p, "%.*s inside an EVENTS block (missing END?)", (int)p->kw_len, p->kw);
    if (pack_kw_is(p, "EVENTS")) {
        p->batch = BATCH_EXPLICIT;
        return pack_no_more(p, 0);
    }
    if (pack_kw_is(p, "HELLO"))
        return rec_hello(p);
    if (pack_kw_is(p, "SOURCE"))
        return rec_source(p);
    if (pack_kw_is(p, "FUNC"))
        return rec_func(p);
    if (pack_kw_is(p, "FINISH"))
        return rec_finish(p);
    if (pack_kw_is(p, "CALLS"))
        return rec_calls(p);
    if (pack_kw_is(p, "RETAINED"))
        return rec_retained(p);
    return pack_err(p, "unknown record '%.*s'", (int)p->kw_len, p->kw);
}

static void packer_free(struct packer *p)
{
    wire_decoder_free(p->check);
    free(p->strbuf);
    free(p->b.buf);
    free(p->entry_lines);
    free(p->spans);
    free(p->fn_calls);
    free(p->site_calls);
    free(p->rows);
}

static int pack_lines(struct packer *p, const char *text, size_t len)
{
    const char *s = text, *end = text + len;
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        const char *eol = nl ? nl : end;
        p->line++;
        const char *a = s, *b = eol;
        while (a < b && (*a == ' ' || *a == '\t'))
            a++;
        if (b > a && b[-1] == '\r')
            b--;
        s = nl ? nl + 1 : end;
        if (a == b || *a == '#')
            continue;
        if (pack_tokenize(p, a, b) != 0 || pack_line(p) != 0)
            return -1;
    }
    if (p->batch == BATCH_EXPLICIT)
        return pack_err(p, "EVENTS block not closed by END");
    if (flush_batch(p) != 0)
        return -1;
    if (!wire_decoder_finished(p->check))
        return pack_err(p, "text ends without FINISH");
    return 0;
}

int captext_pack(const char *text, size_t len, msgpack_sbuffer *out, char *err, size_t errlen)
{
    struct packer p = {.out = out, .err = err, .errlen = errlen};
    wire_compact_enc_init(&p.enc);
    p.check = wire_decoder_new(WIRE_TO_DAEMON);
    if (!p.check) {
        snprintf(err, errlen, "0: out of memory");
        return -1;
    }
    msgpack_sbuffer_write(out, CAPTURE_MAGIC, CAPTURE_MAGIC_LEN);
    int rc = pack_lines(&p, text, len);
    packer_free(&p);
    return rc;
}
