/* wire_encode: records -> length-prefixed msgpack frames (msgpack-c packer). */
#include <stdlib.h>
#include <string.h>

#include "proto/wire.h"

/* Reserves the 4-byte length prefix; returns its offset. */
static size_t frame_begin(msgpack_sbuffer *buf)
{
    static const char zero[WIRE_FRAME_HEADER] = {0};
    size_t at = buf->size;
    msgpack_sbuffer_write(buf, zero, sizeof zero);
    return at;
}

/* Patches the length prefix, or drops the frame when it is too large. */
static int frame_end(msgpack_sbuffer *buf, size_t at)
{
    if (buf->size < at + WIRE_FRAME_HEADER) {
        buf->size = at; /* the sbuffer could not grow */
        return -1;
    }
    size_t len = buf->size - at - WIRE_FRAME_HEADER;
    if (len > WIRE_MAX_FRAME) {
        buf->size = at;
        return -1;
    }
    unsigned char *p = (unsigned char *)buf->data + at;
    p[0] = (unsigned char)(len >> 24);
    p[1] = (unsigned char)(len >> 16);
    p[2] = (unsigned char)(len >> 8);
    p[3] = (unsigned char)len;
    return 0;
}

/* Starts a frame holding the array [type, ...] of `fields` elements
 * (type included); returns the offset for frame_end. */
static size_t frame_open(msgpack_sbuffer *buf, msgpack_packer *pk, uint8_t type, uint32_t fields)
{
    msgpack_packer_init(pk, buf, msgpack_sbuffer_write);
    size_t at = frame_begin(buf);
    msgpack_pack_array(pk, fields);
    msgpack_pack_uint8(pk, type);
    return at;
}

static void pack_bool(msgpack_packer *pk, bool v)
{
    if (v)
        msgpack_pack_true(pk);
    else
        msgpack_pack_false(pk);
}

static void pack_str(msgpack_packer *pk, struct wire_str s)
{
    msgpack_pack_str(pk, s.len);
    msgpack_pack_str_body(pk, s.ptr, s.len);
}

static void pack_opt_u32(msgpack_packer *pk, uint32_t v)
{
    if (v == WIRE_NONE32)
        msgpack_pack_nil(pk);
    else
        msgpack_pack_uint32(pk, v);
}

static void pack_span(msgpack_packer *pk, struct wire_span s)
{
    if (!wire_span_present(s)) {
        msgpack_pack_nil(pk);
        return;
    }
    msgpack_pack_array(pk, 2);
    msgpack_pack_uint32(pk, s.start);
    msgpack_pack_uint32(pk, s.end);
}

int wire_encode_hello(msgpack_sbuffer *buf, const struct wire_hello *r)
{
    msgpack_packer pk;
    size_t at = frame_open(buf, &pk, WIRE_HELLO, 7);
    msgpack_pack_uint32(&pk, r->version);
    msgpack_pack_uint8(&pk, r->mode);
    msgpack_pack_array(&pk, 6);
    msgpack_pack_uint32(&pk, r->config.rate_hz);
    msgpack_pack_uint32(&pk, r->config.threshold_bp);
    msgpack_pack_uint32(&pk, r->config.limit);
    msgpack_pack_uint64(&pk, r->config.cpu_budget);
    msgpack_pack_uint64(&pk, r->config.retention_budget);
    msgpack_pack_uint64(&pk, r->config.stack_budget);
    pack_str(&pk, r->backend);
    msgpack_pack_uint32(&pk, r->capabilities);
    pack_bool(&pk, r->colour);
    return frame_end(buf, at);
}

int wire_encode_ready(msgpack_sbuffer *buf, const struct wire_ready *r)
{
    msgpack_packer pk;
    size_t at = frame_open(buf, &pk, WIRE_READY, 2);
    msgpack_pack_uint32(&pk, r->version);
    return frame_end(buf, at);
}

int wire_encode_unsupported(msgpack_sbuffer *buf, const struct wire_unsupported *r)
{
    msgpack_packer pk;
    size_t at = frame_open(buf, &pk, WIRE_UNSUPPORTED, 2);
    pack_str(&pk, r->capability);
    return frame_end(buf, at);
}

/* Spans travel as a bin of 9-byte entries (kind u8, start u32, end u32) and
 * line starts as a bin of u32, so that a source costs the decoder a handful
 * of msgpack objects however many spans it has. */
static int pack_source_tables(msgpack_packer *pk, const struct wire_source *r)
{
    size_t span_bytes = (size_t)r->n_spans * 9, line_bytes = (size_t)r->n_lines * 4;
    if (span_bytes > WIRE_MAX_FRAME || line_bytes > WIRE_MAX_FRAME)
        return -1;
    uint8_t *tmp = malloc(span_bytes > line_bytes ? span_bytes : line_bytes);
    if (!tmp && (span_bytes || line_bytes))
        return -1;
    for (uint32_t i = 0; i < r->n_spans; i++) {
        uint8_t *p = tmp + (size_t)i * 9;
        p[0] = r->spans[i].kind;
        wire_le32(wire_le32(p + 1, r->spans[i].start), r->spans[i].end);
    }
    msgpack_pack_bin(pk, span_bytes);
    msgpack_pack_bin_body(pk, tmp, span_bytes);
    for (uint32_t i = 0; i < r->n_lines; i++)
        wire_le32(tmp + (size_t)i * 4, r->line_starts[i]);
    msgpack_pack_bin(pk, line_bytes);
    msgpack_pack_bin_body(pk, tmp, line_bytes);
    free(tmp);
    return 0;
}

int wire_encode_source(msgpack_sbuffer *buf, const struct wire_source *r)
{
    msgpack_packer pk;
    size_t at = frame_open(buf, &pk, WIRE_SOURCE, 7);
    msgpack_pack_uint32(&pk, r->source_id);
    msgpack_pack_uint8(&pk, r->origin);
    pack_str(&pk, r->path);
    pack_str(&pk, r->text);
    if (pack_source_tables(&pk, r) != 0) {
        buf->size = at;
        return -1;
    }
    return frame_end(buf, at);
}

int wire_encode_func(msgpack_sbuffer *buf, const struct wire_func *r)
{
    msgpack_packer pk;
    size_t at = frame_open(buf, &pk, WIRE_FUNC, 6);
    msgpack_pack_uint32(&pk, r->func_id);
    pack_str(&pk, r->ns);
    pack_str(&pk, r->name);
    pack_opt_u32(&pk, r->source_id);
    pack_span(&pk, r->decl);
    return frame_end(buf, at);
}

/* A packer's output into a fixed buffer (the EVENTS header). */
struct fixed_out {
    uint8_t *p;
    size_t len, cap;
};

static int fixed_write(void *data, const char *buf, size_t len)
{
    struct fixed_out *o = data;
    if (len > o->cap - o->len)
        return -1;
    memcpy(o->p + o->len, buf, len);
    o->len += len;
    return 0;
}

size_t wire_encode_events_header(uint8_t out[WIRE_EVENTS_HEADER_MAX], uint32_t count,
                                 size_t bin_len)
{
    struct fixed_out o = {out, WIRE_FRAME_HEADER, WIRE_EVENTS_HEADER_MAX};
    msgpack_packer pk;
    msgpack_packer_init(&pk, &o, fixed_write);
    msgpack_pack_array(&pk, 3);
    msgpack_pack_uint8(&pk, WIRE_EVENTS);
    msgpack_pack_uint32(&pk, count);
    msgpack_pack_bin(&pk, bin_len);
    size_t len = o.len - WIRE_FRAME_HEADER + bin_len;
    if (bin_len > WIRE_MAX_FRAME || len > WIRE_MAX_FRAME)
        return 0;
    out[0] = (uint8_t)(len >> 24);
    out[1] = (uint8_t)(len >> 16);
    out[2] = (uint8_t)(len >> 8);
    out[3] = (uint8_t)len;
    return o.len;
}

int wire_encode_events(msgpack_sbuffer *buf, uint32_t count, const uint8_t *bin, size_t bin_len)
{
    uint8_t head[WIRE_EVENTS_HEADER_MAX];
    size_t n = wire_encode_events_header(head, count, bin_len);
    if (n == 0)
        return -1;
    size_t at = buf->size;
    msgpack_sbuffer_write(buf, (const char *)head, n);
    msgpack_sbuffer_write(buf, (const char *)bin, bin_len);
    if (buf->size != at + n + bin_len) {
        buf->size = at; /* the sbuffer could not grow */
        return -1;
    }
    return 0;
}

int wire_encode_finish(msgpack_sbuffer *buf, const struct wire_finish *r)
{
    msgpack_packer pk;
    size_t at = frame_open(buf, &pk, WIRE_FINISH, 9);
    msgpack_pack_uint8(&pk, r->termination);
    msgpack_pack_uint64(&pk, r->wall_ns);
    if (r->cpu_ns == WIRE_NONE64)
        msgpack_pack_nil(&pk);
    else
        msgpack_pack_uint64(&pk, r->cpu_ns);
    msgpack_pack_uint64(&pk, r->requested_ticks);
    msgpack_pack_uint64(&pk, r->coalesced_ticks);
    msgpack_pack_uint64(&pk, r->dropped_ticks);
    pack_bool(&pk, r->collector_failure);
    pack_bool(&pk, r->stack_limit);
    return frame_end(buf, at);
}

int wire_encode_result(msgpack_sbuffer *buf, const struct wire_result *r)
{
    msgpack_packer pk;
    size_t at = frame_open(buf, &pk, WIRE_RESULT, 3);
    pack_str(&pk, r->profile);
    pack_str(&pk, r->human);
    return frame_end(buf, at);
}

/* CALLS entries as the record lays them out (wire.h). */
static void pack_fn_calls(msgpack_packer *pk, const struct wire_fn_calls *e)
{
    uint8_t b[WIRE_CALLS_FN_SIZE];
    wire_le64(wire_le32(b, e->func_id), e->calls);
    msgpack_pack_bin_body(pk, b, sizeof b);
}

static void pack_site_calls(msgpack_packer *pk, const struct wire_site_calls *e)
{
    uint8_t b[WIRE_CALLS_SITE_SIZE];
    wire_le64(wire_le32(wire_le32(wire_le32(b, e->func_id), e->site.start), e->site.end), e->calls);
    msgpack_pack_bin_body(pk, b, sizeof b);
}

int wire_encode_calls(msgpack_sbuffer *buf, const struct wire_fn_calls *fn, uint32_t n,
                      const struct wire_site_calls *site, uint32_t m)
{
    if ((uint64_t)n + m > WIRE_CALLS_MAX_ENTRIES)
        return -1;
    msgpack_packer pk;
    size_t at = frame_open(buf, &pk, WIRE_CALLS, 3);
    msgpack_pack_bin(&pk, n * WIRE_CALLS_FN_SIZE);
    for (uint32_t i = 0; i < n; i++)
        pack_fn_calls(&pk, &fn[i]);
    msgpack_pack_bin(&pk, m * WIRE_CALLS_SITE_SIZE);
    for (uint32_t i = 0; i < m; i++)
        pack_site_calls(&pk, &site[i]);
    return frame_end(buf, at);
}

/* A decoded CALLS record again, its bins as they are. */
static int encode_calls_record(msgpack_sbuffer *buf, const struct wire_calls *c)
{
    msgpack_packer pk;
    size_t at = frame_open(buf, &pk, WIRE_CALLS, 3);
    msgpack_pack_bin(&pk, c->n_functions * WIRE_CALLS_FN_SIZE);
    msgpack_pack_bin_body(&pk, c->functions, c->n_functions * WIRE_CALLS_FN_SIZE);
    msgpack_pack_bin(&pk, c->n_sites * WIRE_CALLS_SITE_SIZE);
    msgpack_pack_bin_body(&pk, c->sites, c->n_sites * WIRE_CALLS_SITE_SIZE);
    return frame_end(buf, at);
}

static void pack_opt_str(msgpack_packer *pk, struct wire_str s)
{
    if (s.ptr == NULL)
        msgpack_pack_nil(pk);
    else
        pack_str(pk, s);
}

int wire_encode_retained(msgpack_sbuffer *buf, const struct wire_retained *r)
{
    if ((size_t)r->n_rows * WIRE_RETAINED_ROW_SIZE > WIRE_MAX_FRAME)
        return -1;
    msgpack_packer pk;
    size_t at = frame_open(buf, &pk, WIRE_RETAINED, 7);
    pack_opt_str(&pk, r->ns);
    pack_opt_str(&pk, r->name);
    pack_opt_u32(&pk, r->source_id);
    pack_span(&pk, r->decl);
    msgpack_pack_bin(&pk, (size_t)r->n_rows * WIRE_RETAINED_ROW_SIZE);
    if (r->n_rows > 0)
        msgpack_pack_bin_body(&pk, r->rows, (size_t)r->n_rows * WIRE_RETAINED_ROW_SIZE);
    pack_bool(&pk, r->complete);
    return frame_end(buf, at);
}

int wire_encode_record(msgpack_sbuffer *buf, const struct wire_record *r)
{
    switch (r->type) {
    case WIRE_HELLO:
        return wire_encode_hello(buf, &r->u.hello);
    case WIRE_READY:
        return wire_encode_ready(buf, &r->u.ready);
    case WIRE_UNSUPPORTED:
        return wire_encode_unsupported(buf, &r->u.unsupported);
    case WIRE_SOURCE:
        return wire_encode_source(buf, &r->u.source);
    case WIRE_FUNC:
        return wire_encode_func(buf, &r->u.func);
    case WIRE_EVENTS:
        return wire_encode_events(buf, r->u.events.count, r->u.events.bin, r->u.events.bin_len);
    case WIRE_FINISH:
        return wire_encode_finish(buf, &r->u.finish);
    case WIRE_RESULT:
        return wire_encode_result(buf, &r->u.result);
    case WIRE_CALLS:
        return encode_calls_record(buf, &r->u.calls);
    case WIRE_RETAINED:
        return wire_encode_retained(buf, &r->u.retained);
    }
    return -1;
}
