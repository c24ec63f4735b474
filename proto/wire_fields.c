/* wire_fields: decodes and validates each record's msgpack fields. */
#include <endian.h>
#include <stdlib.h>

#include "proto/util/utf8.h"
#include "proto/wire-internal.h"
#include "proto/wire_alloc_entry.h"
#include "proto/wire_rules.h"

static const char *kind_name(msgpack_object_type t)
{
    switch (t) {
    case MSGPACK_OBJECT_NIL:
        return "nil";
    case MSGPACK_OBJECT_BOOLEAN:
        return "a boolean";
    case MSGPACK_OBJECT_POSITIVE_INTEGER:
        return "an unsigned integer";
    case MSGPACK_OBJECT_NEGATIVE_INTEGER:
        return "a negative integer";
    case MSGPACK_OBJECT_FLOAT32:
    case MSGPACK_OBJECT_FLOAT64:
        return "a float";
    case MSGPACK_OBJECT_STR:
        return "a string";
    case MSGPACK_OBJECT_ARRAY:
        return "an array";
    case MSGPACK_OBJECT_MAP:
        return "a map";
    case MSGPACK_OBJECT_BIN:
        return "a bin";
    case MSGPACK_OBJECT_EXT:
        return "an ext";
    }
    return "unknown";
}

static int type_error(struct wire_fields *f, const char *field, const char *want,
                      const msgpack_object *o)
{
    wire_fail(f->d, WIRE_E_FIELD_TYPE, "%s.%s: expected %s, got %s", f->rec, field, want,
              kind_name(o->type));
    return -1;
}

static int arity(struct wire_fields *f, uint32_t n)
{
    if (f->n == n)
        return 0;
    wire_fail(f->d, WIRE_E_ARITY, "%s: expected %u fields, got %u", f->rec, n - 1, f->n - 1);
    return -1;
}

static int get_u64(struct wire_fields *f, uint32_t i, const char *field, uint64_t max,
                   uint64_t *out)
{
    const msgpack_object *o = &f->f[i];
    if (o->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
        return type_error(f, field, "an unsigned integer", o);
    if (o->via.u64 > max) {
        wire_fail(f->d, WIRE_E_RANGE, "%s.%s: %llu is over the maximum %llu", f->rec, field,
                  (unsigned long long)o->via.u64, (unsigned long long)max);
        return -1;
    }
    *out = o->via.u64;
    return 0;
}

static int get_u32(struct wire_fields *f, uint32_t i, const char *field, uint32_t max,
                   uint32_t *out)
{
    uint64_t v;
    if (get_u64(f, i, field, max, &v) != 0)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

static int get_u8(struct wire_fields *f, uint32_t i, const char *field, uint8_t max, uint8_t *out)
{
    uint64_t v;
    if (get_u64(f, i, field, max, &v) != 0)
        return -1;
    *out = (uint8_t)v;
    return 0;
}

/* nil -> WIRE_NONE32 (the sentinel itself is not a valid value). */
static int get_opt_u32(struct wire_fields *f, uint32_t i, const char *field, uint32_t *out)
{
    if (f->f[i].type == MSGPACK_OBJECT_NIL) {
        *out = WIRE_NONE32;
        return 0;
    }
    return get_u32(f, i, field, WIRE_NONE32 - 1, out);
}

static int get_bool(struct wire_fields *f, uint32_t i, const char *field, bool *out)
{
    const msgpack_object *o = &f->f[i];
    if (o->type != MSGPACK_OBJECT_BOOLEAN)
        return type_error(f, field, "a boolean", o);
    *out = o->via.boolean;
    return 0;
}

static int get_str(struct wire_fields *f, uint32_t i, const char *field, uint32_t min, uint32_t max,
                   struct wire_str *out)
{
    const msgpack_object *o = &f->f[i];
    if (o->type != MSGPACK_OBJECT_STR)
        return type_error(f, field, "a string", o);
    uint32_t len = o->via.str.size;
    if (len < min || len > max) {
        wire_fail(f->d, WIRE_E_LIMIT, "%s.%s: length %u is outside %u..%u", f->rec, field, len, min,
                  max);
        return -1;
    }
    size_t bad;
    if (!utf8_valid(o->via.str.ptr, len, &bad)) {
        wire_fail(f->d, WIRE_E_UTF8, "%s.%s: malformed UTF-8 at byte %zu of the string", f->rec,
                  field, bad);
        return -1;
    }
    out->ptr = o->via.str.ptr, out->len = len;
    return 0;
}

static int get_bin(struct wire_fields *f, uint32_t i, const char *field, const uint8_t **p,
                   uint32_t *len)
{
    const msgpack_object *o = &f->f[i];
    if (o->type != MSGPACK_OBJECT_BIN)
        return type_error(f, field, "a bin", o);
    *p = (const uint8_t *)o->via.bin.ptr, *len = o->via.bin.size;
    return 0;
}

/* nil or [start, end] with start <= end. */
static int get_span(struct wire_fields *f, uint32_t i, const char *field, struct wire_span *out)
{
    const msgpack_object *o = &f->f[i];
    if (o->type == MSGPACK_OBJECT_NIL) {
        *out = WIRE_SPAN_NONE;
        return 0;
    }
    if (o->type != MSGPACK_OBJECT_ARRAY || o->via.array.size != 2)
        return type_error(f, field, "nil or a [start, end] array", o);
    struct wire_fields sub = {f->d, f->rec, o->via.array.ptr, 2};
    if (get_u32(&sub, 0, field, WIRE_NONE32 - 1, &out->start) != 0 ||
        get_u32(&sub, 1, field, WIRE_NONE32 - 1, &out->end) != 0)
        return -1;
    if (out->start > out->end) {
        wire_fail(f->d, WIRE_E_RANGE, "%s.%s: span start %u is after its end %u", f->rec, field,
                  out->start, out->end);
        return -1;
    }
    return 0;
}

static int decode_config(struct wire_fields *f, uint8_t mode, struct wire_config *c)
{
    const msgpack_object *o = &f->f[3];
    if (o->type != MSGPACK_OBJECT_ARRAY)
        return type_error(f, "config", "an array", o);
    if (o->via.array.size != 6) {
        wire_fail(f->d, WIRE_E_ARITY, "HELLO.config: expected 6 fields, got %u", o->via.array.size);
        return -1;
    }
    struct wire_fields sub = {f->d, "HELLO.config", o->via.array.ptr, 6};
    uint32_t min_rate = mode == WIRE_MODE_CPU ? 1 : 0, max_rate = mode == WIRE_MODE_CPU ? 1000 : 0;
    if (get_u32(&sub, 0, "rate_hz", max_rate, &c->rate_hz) != 0 ||
        get_u32(&sub, 1, "threshold_bp", 10000, &c->threshold_bp) != 0 ||
        get_u32(&sub, 2, "limit", 100, &c->limit) != 0 ||
        get_u64(&sub, 3, "cpu_budget", WIRE_CPU_BUDGET, &c->cpu_budget) != 0 ||
        get_u64(&sub, 4, "retention_budget", WIRE_RETENTION_BUDGET, &c->retention_budget) != 0 ||
        get_u64(&sub, 5, "stack_budget", WIRE_STACK_BUDGET, &c->stack_budget) != 0)
        return -1;
    if (c->rate_hz < min_rate || c->limit < 1) {
        wire_fail(f->d, WIRE_E_RANGE, "HELLO.config.%s: %u is below the minimum 1",
                  c->limit < 1 ? "limit" : "rate_hz", c->limit < 1 ? c->limit : c->rate_hz);
        return -1;
    }
    return 0;
}

static int decode_hello(struct wire_fields *f, struct wire_hello *h)
{
    if (arity(f, 7) != 0 || get_u32(f, 1, "version", WIRE_NONE32 - 1, &h->version) != 0)
        return -1;
    if (h->version < WIRE_PROTOCOL_MIN_VERSION || h->version > WIRE_PROTOCOL_VERSION) {
        wire_fail(f->d, WIRE_E_RANGE,
                  "HELLO.version: protocol %u is not supported (this reads %d to %d)", h->version,
                  WIRE_PROTOCOL_MIN_VERSION, WIRE_PROTOCOL_VERSION);
        return -1;
    }
    f->d->version = h->version;
    if (get_u8(f, 2, "mode", WIRE_MODE_MEMORY, &h->mode) != 0 ||
        decode_config(f, h->mode, &h->config) != 0 ||
        get_str(f, 4, "backend", 1, WIRE_MAX_BACKEND, &h->backend) != 0 ||
        get_u32(f, 5, "capabilities", WIRE_CAP_ALL, &h->capabilities) != 0 ||
        get_bool(f, 6, "colour", &h->colour) != 0)
        return -1;
    return 0;
}

static int decode_unsupported(struct wire_fields *f, struct wire_unsupported *u)
{
    if (arity(f, 2) != 0 || get_str(f, 1, "capability", 1, WIRE_MAX_NAME, &u->capability) != 0)
        return -1;
    for (int i = 0; i < WIRE_CAP_COUNT; i++)
        if (strlen(wire_capability_names[i]) == u->capability.len &&
            memcmp(wire_capability_names[i], u->capability.ptr, u->capability.len) == 0)
            return 0;
    wire_fail(f->d, WIRE_E_RANGE, "UNSUPPORTED.capability: not a known capability name");
    return -1;
}

/* Grows a decoder-owned scratch array; the frame bounds the count. */
static void *grow(struct wire_decoder *d, void *p, uint32_t *cap, uint32_t need, size_t elem)
{
    if (need <= *cap)
        return p;
    void *q = realloc(p, (size_t)need * elem);
    if (!q) {
        wire_fail(d, WIRE_E_NOMEM, "out of memory decoding a SOURCE");
        return NULL;
    }
    *cap = need;
    return q;
}

static int decode_spans(struct wire_fields *f, struct wire_source *s)
{
    const uint8_t *p = NULL;
    uint32_t len = 0;
    if (get_bin(f, 5, "spans", &p, &len) != 0)
        return -1;
    if (len % 9 != 0) {
        wire_fail(f->d, WIRE_E_LIMIT, "SOURCE.spans: %u bytes is not a whole number of spans", len);
        return -1;
    }
    uint32_t n = len / 9;
    struct wire_source_span *sp = grow(f->d, f->d->spans, &f->d->spans_cap, n, sizeof *sp);
    if (!sp && n)
        return -1;
    if (sp)
        f->d->spans = sp;
    for (uint32_t i = 0; i < n; i++, p += 9) {
        struct wire_source_span v = {p[0], 0, 0};
        memcpy(&v.start, p + 1, 4), memcpy(&v.end, p + 5, 4);
        v.start = le32toh(v.start), v.end = le32toh(v.end);
        if (i && v.start < sp[i - 1].start) {
            wire_fail(f->d, WIRE_E_RANGE, "SOURCE.spans: span %u is not sorted by start", i);
            return -1;
        }
        sp[i] = v;
    }
    uint32_t at;
    const char *why;
    if (wire_rule_spans(sp, n, s->text.len, &at, &why) != 0) {
        wire_fail(f->d, WIRE_E_RANGE, "SOURCE.spans: span %u %s", at, why);
        return -1;
    }
    s->spans = sp, s->n_spans = n;
    return 0;
}

/* Line starts must be exactly those of the text, so no consumer has to
 * trust them. */
static int decode_lines(struct wire_fields *f, struct wire_source *s)
{
    const uint8_t *p = NULL;
    uint32_t len = 0;
    if (get_bin(f, 6, "line_starts", &p, &len) != 0)
        return -1;
    uint32_t n = len / 4;
    uint32_t want = wire_line_starts(s->text.ptr, s->text.len, NULL, 0);
    if (len % 4 != 0 || n != want) {
        wire_fail(f->d, WIRE_E_RANGE, "SOURCE.line_starts: %u bytes, the text has %u lines", len,
                  want);
        return -1;
    }
    uint32_t *ls = grow(f->d, f->d->lines, &f->d->lines_cap, n, sizeof *ls);
    if (!ls)
        return -1;
    f->d->lines = ls;
    wire_line_starts(s->text.ptr, s->text.len, ls, n);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t v;
        memcpy(&v, p + 4 * (size_t)i, 4);
        if (le32toh(v) != ls[i]) {
            wire_fail(f->d, WIRE_E_RANGE, "SOURCE.line_starts: entry %u is %u, the text says %u", i,
                      le32toh(v), ls[i]);
            return -1;
        }
    }
    s->line_starts = ls, s->n_lines = n;
    return 0;
}

static int decode_source(struct wire_fields *f, struct wire_source *s)
{
    struct wire_decoder *d = f->d;
    if (arity(f, 7) != 0 || get_u32(f, 1, "source_id", WIRE_NONE32 - 1, &s->source_id) != 0)
        return -1;
    if (s->source_id != d->n_sources) {
        wire_fail(d, WIRE_E_SEQUENCE,
                  "SOURCE record %u: source_id does not number the records from 0",
                  d->n_sources + 1);
        return -1;
    }
    if (d->n_sources >= WIRE_MAX_SOURCES) {
        wire_fail(d, WIRE_E_LIMIT, "SOURCE.source_id: more than %u sources", WIRE_MAX_SOURCES);
        return -1;
    }
    const char *why;
    if (get_u8(f, 2, "origin", WIRE_ORIGIN_STDLIB, &s->origin) != 0 ||
        get_str(f, 3, "path", 1, WIRE_MAX_NAME, &s->path) != 0)
        return -1;
    if (wire_rule_path(s->origin, s->path.ptr, s->path.len, &why) != 0) {
        wire_fail(d, WIRE_E_PATH, "SOURCE.path: %s", why);
        return -1;
    }
    int fresh = wire_path_set_add(&d->paths, s->origin, s->path.ptr, s->path.len);
    if (fresh <= 0) {
        wire_fail(d, fresh < 0 ? WIRE_E_NOMEM : WIRE_E_PATH, "SOURCE.path: %s",
                  fresh < 0 ? "out of memory" : WIRE_RULE_DUPLICATE_PATH);
        return -1;
    }
    if (get_str(f, 4, "text", 0, WIRE_MAX_SOURCE, &s->text) != 0 || decode_spans(f, s) != 0 ||
        decode_lines(f, s) != 0)
        return -1;
    uint32_t *lens = d->source_len;
    if (d->n_sources == d->source_cap) {
        uint32_t cap = d->source_cap ? d->source_cap * 2 : 16;
        lens = grow(d, d->source_len, &d->source_cap, cap, sizeof *lens);
        if (!lens)
            return -1;
        d->source_len = lens;
    }
    lens[d->n_sources++] = s->text.len;
    return 0;
}

static int decode_func(struct wire_fields *f, struct wire_func *fn)
{
    struct wire_decoder *d = f->d;
    if (arity(f, 6) != 0 || get_u32(f, 1, "func_id", WIRE_NONE32 - 1, &fn->func_id) != 0)
        return -1;
    if (fn->func_id != d->n_funcs) {
        wire_fail(d, WIRE_E_SEQUENCE, "FUNC record %u: func_id does not number the records from 0",
                  d->n_funcs + 1);
        return -1;
    }
    if (d->n_funcs >= WIRE_MAX_FUNCS) {
        wire_fail(d, WIRE_E_LIMIT, "FUNC.func_id: more than %u functions", WIRE_MAX_FUNCS);
        return -1;
    }
    if (get_str(f, 2, "namespace", 1, WIRE_MAX_NAME, &fn->ns) != 0 ||
        get_str(f, 3, "function", 1, WIRE_MAX_NAME, &fn->name) != 0 ||
        get_opt_u32(f, 4, "source_id", &fn->source_id) != 0 ||
        get_span(f, 5, "decl", &fn->decl) != 0)
        return -1;
    const char *why;
    if (wire_rule_name(fn->ns.ptr, fn->ns.len, &why) != 0 ||
        wire_rule_name(fn->name.ptr, fn->name.len, &why) != 0) {
        wire_fail(d, WIRE_E_RANGE, "FUNC.%s: %s",
                  wire_rule_name(fn->ns.ptr, fn->ns.len, &why) ? "namespace" : "function", why);
        return -1;
    }
    if (fn->source_id != WIRE_NONE32 && fn->source_id >= d->n_sources) {
        wire_fail(d, WIRE_E_REF, "FUNC.source_id: the source is not defined");
        return -1;
    }
    if (wire_span_present(fn->decl) &&
        (fn->source_id == WIRE_NONE32 || fn->decl.end > d->source_len[fn->source_id])) {
        wire_fail(d, WIRE_E_RANGE, "FUNC.decl: %s",
                  fn->source_id == WIRE_NONE32 ? "a span without a source"
                                               : "span ends past its source text");
        return -1;
    }
    d->n_funcs++;
    return 0;
}

static int decode_events(struct wire_fields *f, struct wire_events *ev)
{
    if (arity(f, 3) != 0 || get_u32(f, 1, "count", WIRE_NONE32 - 1, &ev->count) != 0 ||
        get_bin(f, 2, "entries", &ev->bin, &ev->bin_len) != 0)
        return -1;
    return wire_check_events(f->d, ev);
}

static int decode_finish(struct wire_fields *f, struct wire_finish *r)
{
    if (arity(f, 9) != 0 ||
        get_u8(f, 1, "termination", WIRE_TERM_INTERRUPTED, &r->termination) != 0 ||
        get_u64(f, 2, "wall_ns", WIRE_NONE64 - 1, &r->wall_ns) != 0)
        return -1;
    r->cpu_ns = WIRE_NONE64;
    if (f->f[3].type != MSGPACK_OBJECT_NIL &&
        get_u64(f, 3, "cpu_ns", WIRE_NONE64 - 1, &r->cpu_ns) != 0)
        return -1;
    if (get_u64(f, 4, "requested_ticks", WIRE_NONE64 - 1, &r->requested_ticks) != 0 ||
        get_u64(f, 5, "coalesced_ticks", WIRE_NONE64 - 1, &r->coalesced_ticks) != 0 ||
        get_u64(f, 6, "dropped_ticks", WIRE_NONE64 - 1, &r->dropped_ticks) != 0 ||
        get_bool(f, 7, "collector_failure", &r->collector_failure) != 0 ||
        get_bool(f, 8, "stack_limit", &r->stack_limit) != 0)
        return -1;
    return 0;
}

struct wire_fn_calls wire_calls_function(const struct wire_calls *c, uint32_t i)
{
    const uint8_t *p = c->functions + (size_t)i * WIRE_CALLS_FN_SIZE;
    return (struct wire_fn_calls){wire_get32(p), wire_get64(p + 4)};
}

struct wire_site_calls wire_calls_site(const struct wire_calls *c, uint32_t i)
{
    const uint8_t *p = c->sites + (size_t)i * WIRE_CALLS_SITE_SIZE;
    return (struct wire_site_calls){
        wire_get32(p), {wire_get32(p + 4), wire_get32(p + 8)}, wire_get64(p + 12)};
}

/* A CALLS bin of whole `size`-byte entries: their count, or -1. */
static int calls_bin(struct wire_fields *f, uint32_t i, const char *field, uint32_t size,
                     const uint8_t **p, uint32_t *n)
{
    uint32_t len = 0;
    if (get_bin(f, i, field, p, &len) != 0)
        return -1;
    if (len % size != 0) {
        wire_fail(f->d, WIRE_E_LIMIT, "CALLS.%s: %u bytes is not a whole number of %u-byte entries",
                  field, len, size);
        return -1;
    }
    *n = len / size;
    return 0;
}

/* (function, start, end) of a site, compared as one key. */
static int site_cmp(const struct wire_site_calls *a, const struct wire_site_calls *b)
{
    if (a->func_id != b->func_id)
        return a->func_id < b->func_id ? -1 : 1;
    if (a->site.start != b->site.start)
        return a->site.start < b->site.start ? -1 : 1;
    return (a->site.end > b->site.end) - (a->site.end < b->site.end);
}

/* Entries name defined functions, spans are ordered, and each entry
 * comes after the one before it (so none repeats within a record). */
static int decode_calls(struct wire_fields *f, struct wire_calls *c)
{
    struct wire_decoder *d = f->d;
    if (arity(f, 3) != 0 ||
        calls_bin(f, 1, "functions", WIRE_CALLS_FN_SIZE, &c->functions, &c->n_functions) != 0 ||
        calls_bin(f, 2, "sites", WIRE_CALLS_SITE_SIZE, &c->sites, &c->n_sites) != 0)
        return -1;
    for (uint32_t i = 0; i < c->n_functions; i++) {
        struct wire_fn_calls e = wire_calls_function(c, i);
        if (e.func_id >= d->n_funcs)
            return wire_fail(d, WIRE_E_REF, "CALLS.functions: entry %u names an undefined function",
                             i),
                   -1;
        if (i && e.func_id <= wire_calls_function(c, i - 1).func_id)
            return wire_fail(d, WIRE_E_RANGE,
                             "CALLS.functions: entry %u does not come after the one before it", i),
                   -1;
    }
    for (uint32_t i = 0; i < c->n_sites; i++) {
        struct wire_site_calls e = wire_calls_site(c, i), prev;
        if (e.func_id >= d->n_funcs)
            return wire_fail(d, WIRE_E_REF, "CALLS.sites: entry %u names an undefined function", i),
                   -1;
        if (e.site.start > e.site.end)
            return wire_fail(d, WIRE_E_RANGE,
                             "CALLS.sites: entry %u: span start %u is after its end %u", i,
                             e.site.start, e.site.end),
                   -1;
        if (e.site.end == WIRE_NONE32) /* the sentinel is no offset, as in every other span */
            return wire_fail(d, WIRE_E_RANGE, "CALLS.sites: entry %u: span end %u is not an offset",
                             i, e.site.end),
                   -1;
        if (i && site_cmp(&e, (prev = wire_calls_site(c, i - 1), &prev)) <= 0)
            return wire_fail(d, WIRE_E_RANGE,
                             "CALLS.sites: entry %u does not come after the one before it", i),
                   -1;
    }
    d->calls_seen = true;
    return 0;
}

struct wire_retained_row wire_retained_row_at(const struct wire_retained *r, uint32_t i)
{
    const uint8_t *p = r->rows + (size_t)i * WIRE_RETAINED_ROW_SIZE;
    return (struct wire_retained_row){wire_get32(p), wire_get64(p + 4), wire_get64(p + 12)};
}

/* nil -> ptr NULL, else a name as FUNC's. */
static int get_opt_name(struct wire_fields *f, uint32_t i, const char *field, struct wire_str *out)
{
    const char *why;
    *out = (struct wire_str){NULL, 0};
    if (f->f[i].type == MSGPACK_OBJECT_NIL)
        return 0;
    if (get_str(f, i, field, 1, WIRE_MAX_NAME, out) != 0)
        return -1;
    if (wire_rule_name(out->ptr, out->len, &why) != 0) {
        wire_fail(f->d, WIRE_E_RANGE, "%s.%s: %s", f->rec, field, why);
        return -1;
    }
    return 0;
}

/* The holder: both names or neither; a span needs a source and lies in
 * its text; the closing record (no names) has neither. */
static int retained_holder(struct wire_fields *f, struct wire_retained *r)
{
    struct wire_decoder *d = f->d;
    if (get_opt_name(f, 1, "namespace", &r->ns) != 0 || get_opt_name(f, 2, "name", &r->name) != 0 ||
        get_opt_u32(f, 3, "source_id", &r->source_id) != 0 || get_span(f, 4, "decl", &r->decl) != 0)
        return -1;
    bool holder = r->ns.ptr != NULL;
    const char *bad = (r->name.ptr != NULL) != holder ? "a holder has both a namespace and a name"
                      : !holder && (r->source_id != WIRE_NONE32 || wire_span_present(r->decl))
                          ? "the closing record names no source and no span"
                      : wire_span_present(r->decl) && r->source_id == WIRE_NONE32
                          ? "a span without a source"
                          : NULL;
    if (bad) {
        wire_fail(d, WIRE_E_RANGE, "RETAINED: %s", bad);
        return -1;
    }
    if (r->source_id != WIRE_NONE32 && r->source_id >= d->n_sources) {
        wire_fail(d, WIRE_E_REF, "RETAINED.source_id: the source is not defined");
        return -1;
    }
    if (wire_span_present(r->decl) && r->decl.end > d->source_len[r->source_id]) {
        wire_fail(d, WIRE_E_RANGE, "RETAINED.decl: span ends past its source text");
        return -1;
    }
    return 0;
}

static int decode_retained(struct wire_fields *f, struct wire_retained *r)
{
    struct wire_decoder *d = f->d;
    uint32_t len = 0;
    if (arity(f, 7) != 0 || retained_holder(f, r) != 0 || get_bin(f, 5, "rows", &r->rows, &len) ||
        get_bool(f, 6, "complete", &r->complete) != 0)
        return -1;
    if (len % WIRE_RETAINED_ROW_SIZE != 0) {
        wire_fail(d, WIRE_E_LIMIT, "RETAINED.rows: %u bytes is not a whole number of rows", len);
        return -1;
    }
    r->n_rows = len / WIRE_RETAINED_ROW_SIZE;
    for (uint32_t i = 0; i < r->n_rows; i++) {
        struct wire_retained_row row = wire_retained_row_at(r, i);
        if (row.func_id != WIRE_NONE32 && row.func_id >= d->n_funcs) {
            wire_fail(d, WIRE_E_REF, "RETAINED.rows: row %u names a function that is not defined",
                      i + 1);
            return -1;
        }
        if (row.objects == 0) {
            wire_fail(d, WIRE_E_RANGE, "RETAINED.rows: row %u counts no object", i + 1);
            return -1;
        }
    }
    if ((d->retained_cut || d->retained_closed) && r->ns.ptr != NULL) {
        wire_fail(d, WIRE_E_ORDER, "RETAINED: a holder after %s",
                  d->retained_closed ? "the closing record" : "an incomplete record");
        return -1;
    }
    d->retained_seen = true;
    d->retained_closed = r->ns.ptr == NULL;
    d->retained_cut = !r->complete;
    return 0;
}

int wire_decode_fields(struct wire_fields *f, struct wire_record *rec)
{
    switch (rec->type) {
    case WIRE_HELLO:
        return decode_hello(f, &rec->u.hello);
    case WIRE_READY:
        if (arity(f, 2) != 0 ||
            get_u32(f, 1, "version", WIRE_NONE32 - 1, &rec->u.ready.version) != 0)
            return -1;
        return 0;
    case WIRE_UNSUPPORTED:
        return decode_unsupported(f, &rec->u.unsupported);
    case WIRE_SOURCE:
        return decode_source(f, &rec->u.source);
    case WIRE_FUNC:
        return decode_func(f, &rec->u.func);
    case WIRE_EVENTS:
        return decode_events(f, &rec->u.events);
    case WIRE_FINISH:
        return decode_finish(f, &rec->u.finish);
    case WIRE_CALLS:
        return decode_calls(f, &rec->u.calls);
    case WIRE_RESULT:
        if (arity(f, 3) != 0 ||
            get_str(f, 1, "profile", 0, WIRE_MAX_RESULT, &rec->u.result.profile) != 0 ||
            get_str(f, 2, "human", 0, WIRE_MAX_RESULT, &rec->u.result.human) != 0)
            return -1;
        return 0;
    case WIRE_RETAINED:
        return decode_retained(f, &rec->u.retained);
    }
    return -1;
}
