/*
 * wire_decode: framing, msgpack decoding and validation of every record.
 *
 * State machine: HEADER (collecting the 4-byte length) -> PAYLOAD
 * (collecting `need` bytes) -> READY (a whole frame waits for
 * wire_decoder_next) -> HEADER.  Any error moves the decoder to FAILED for
 * good; the error keeps the byte offset of the frame that caused it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "proto/util/utf8.h"
#include "proto/wire-internal.h"
#include "proto/wire_scan.h"

void wire_fail(struct wire_decoder *d, enum wire_errcode code, const char *fmt, ...)
{
    if (d->failed)
        return;
    d->failed = true;
    d->err.code = code;
    d->err.offset = d->frame_off;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->err.msg, sizeof d->err.msg, fmt, ap);
    va_end(ap);
}

struct wire_decoder *wire_decoder_new(enum wire_direction dir)
{
    struct wire_decoder *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->dir = dir;
    wire_compact_state_init(&d->compact);
    msgpack_unpacked_init(&d->unp);
    return d;
}

void wire_decoder_free(struct wire_decoder *d)
{
    if (!d)
        return;
    msgpack_unpacked_destroy(&d->unp);
    free(d->frame);
    free(d->source_len);
    free(d->stack_depth);
    wire_path_set_free(&d->paths);
    free(d->spans);
    free(d->lines);
    free(d);
}

void wire_decoder_set_base(struct wire_decoder *d, uint64_t base)
{
    d->base = base;
}

const struct wire_error *wire_decoder_error(const struct wire_decoder *d)
{
    return &d->err;
}

uint64_t wire_decoder_frame_offset(const struct wire_decoder *d)
{
    return d->frame_off;
}

bool wire_decoder_finished(const struct wire_decoder *d)
{
    return d->finished;
}

uint32_t wire_decoder_stacks(const struct wire_decoder *d)
{
    return d->n_stacks;
}

uint32_t wire_decoder_tasks(const struct wire_decoder *d)
{
    return d->n_tasks;
}

/* Validates the length prefix and makes room for the payload. */
static void begin_payload(struct wire_decoder *d)
{
    const uint8_t *h = d->hdr;
    uint32_t need = (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
    if (need == 0 || need > WIRE_MAX_FRAME) {
        wire_fail(d, WIRE_E_FRAME_SIZE, "frame length %u is %s", need,
                  need == 0 ? "zero" : "over the 4 MiB limit");
        return;
    }
    if (need > d->frame_cap) {
        uint32_t cap = d->frame_cap ? d->frame_cap : 4096;
        while (cap < need)
            cap = cap > WIRE_MAX_FRAME / 2 ? WIRE_MAX_FRAME : cap * 2;
        uint8_t *p = realloc(d->frame, cap);
        if (!p) {
            wire_fail(d, WIRE_E_NOMEM, "out of memory for a %u-byte frame", need);
            return;
        }
        d->frame = p, d->frame_cap = cap;
    }
    d->need = need, d->have = 0, d->in_payload = true;
}

/* A whole frame at the start of the input is decoded where it lies: the
 * caller's buffer must then stay as it is until its next push. */
static size_t borrow_frame(struct wire_decoder *d, const uint8_t *p, size_t len)
{
    uint32_t need = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
    if (need == 0 || need > WIRE_MAX_FRAME || len - WIRE_FRAME_HEADER < need)
        return 0;
    d->frame_off = d->base + d->consumed;
    d->cur = p + WIRE_FRAME_HEADER, d->need = need, d->ready = true;
    d->consumed += WIRE_FRAME_HEADER + (size_t)need;
    return WIRE_FRAME_HEADER + (size_t)need;
}

size_t wire_decoder_push(struct wire_decoder *d, const void *data, size_t len)
{
    const uint8_t *p = data;
    size_t used = 0;
    if (d->failed || d->ready)
        return 0;
    if (!d->in_payload && d->hdr_have == 0 && len >= WIRE_FRAME_HEADER) {
        size_t n = borrow_frame(d, p, len);
        if (n > 0)
            return n;
    }
    if (!d->in_payload) {
        if (d->hdr_have == 0)
            d->frame_off = d->base + d->consumed;
        size_t take = WIRE_FRAME_HEADER - d->hdr_have;
        if (take > len)
            take = len;
        memcpy(d->hdr + d->hdr_have, p, take);
        d->hdr_have += (uint32_t)take, used = take;
        if (d->hdr_have < WIRE_FRAME_HEADER) {
            d->consumed += used;
            return used;
        }
        begin_payload(d);
        if (d->failed) {
            d->consumed += used;
            return used;
        }
    }
    size_t take = d->need - d->have;
    if (take > len - used)
        take = len - used;
    memcpy(d->frame + d->have, p + used, take);
    d->have += (uint32_t)take, used += take;
    if (d->have == d->need)
        d->ready = true, d->in_payload = false, d->hdr_have = 0, d->cur = d->frame;
    d->consumed += used;
    return used;
}

int wire_decoder_end(struct wire_decoder *d)
{
    if (d->failed)
        return -1;
    if (d->ready || d->in_payload || d->hdr_have > 0) {
        if (d->in_payload)
            wire_fail(d, WIRE_E_TRUNCATED, "frame cut short: its header says %u bytes, %u present",
                      d->need, d->have);
        else if (d->hdr_have > 0)
            wire_fail(d, WIRE_E_TRUNCATED, "frame header cut short: %u of 4 bytes present",
                      d->hdr_have);
        else
            wire_fail(d, WIRE_E_TRUNCATED, "a complete frame was never read");
        return -1;
    }
    return 0;
}

/* The walk's records come after every EVENTS frame, and end with the
 * closing one before FINISH (jett-capture(5)). */
static int check_retained_order(struct wire_decoder *d, uint64_t type)
{
    if (type == WIRE_EVENTS && d->retained_seen)
        return wire_fail(d, WIRE_E_ORDER, "EVENTS after RETAINED"), -1;
    if (type == WIRE_FINISH && d->retained_seen && !d->retained_closed)
        return wire_fail(d, WIRE_E_ORDER, "FINISH before the walk's closing RETAINED"), -1;
    return 0;
}

/* Checks the record type against the direction and the protocol order. */
static int check_order(struct wire_decoder *d, uint64_t type)
{
    if (type == 0 || type > WIRE_TYPE_MAX || wire_type_names[type] == NULL)
        return wire_fail(d, WIRE_E_TYPE, "unknown record type %llu", (unsigned long long)type), -1;
    const char *name = wire_type_names[type];
    bool to_daemon = type == WIRE_HELLO || type == WIRE_SOURCE || type == WIRE_FUNC ||
                     type == WIRE_EVENTS || type == WIRE_CALLS || type == WIRE_FINISH ||
                     type == WIRE_RETAINED;
    if (to_daemon != (d->dir == WIRE_TO_DAEMON))
        return wire_fail(d, WIRE_E_TYPE, "%s does not travel %s", name,
                         d->dir == WIRE_TO_DAEMON ? "to the daemon" : "to the launcher"),
               -1;
    if (d->finished)
        return wire_fail(d, WIRE_E_ORDER, "%s after the stream's last record", name), -1;
    bool opener = type == WIRE_HELLO || type == WIRE_READY || type == WIRE_UNSUPPORTED;
    if (!d->opened && !opener)
        return wire_fail(d, WIRE_E_ORDER, "%s before %s", name,
                         d->dir == WIRE_TO_DAEMON ? "HELLO" : "READY"),
               -1;
    if (d->opened && opener)
        return wire_fail(d, WIRE_E_ORDER, "%s repeated or after the stream began", name), -1;
    if (type == WIRE_EVENTS && d->calls_seen)
        return wire_fail(d, WIRE_E_ORDER, "EVENTS after CALLS: CALLS follows the last EVENTS"), -1;
    return check_retained_order(d, type);
}

int wire_decoder_next(struct wire_decoder *d, struct wire_record *rec)
{
    if (d->failed)
        return -1;
    if (!d->ready)
        return 0;
    d->ready = false;
    char msg[160];
    if (wire_scan_frame(d->cur, d->need, msg, sizeof msg) != 0)
        return wire_fail(d, WIRE_E_MSGPACK, "%s", msg), -1;
    size_t off = 0;
    if (msgpack_unpack_next(&d->unp, (const char *)d->cur, d->need, &off) !=
            MSGPACK_UNPACK_SUCCESS ||
        off != d->need)
        return wire_fail(d, WIRE_E_MSGPACK, "payload is not one msgpack object"), -1;
    const msgpack_object *root = &d->unp.data;
    if (root->type != MSGPACK_OBJECT_ARRAY || root->via.array.size == 0)
        return wire_fail(d, WIRE_E_MSGPACK, "payload is not a non-empty msgpack array"), -1;
    const msgpack_object *t = &root->via.array.ptr[0];
    if (t->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
        return wire_fail(d, WIRE_E_TYPE, "record type is not an unsigned integer"), -1;
    if (check_order(d, t->via.u64) != 0)
        return -1;
    memset(rec, 0, sizeof *rec);
    rec->type = (uint8_t)t->via.u64;
    struct wire_fields f = {d, wire_type_names[rec->type], root->via.array.ptr,
                            root->via.array.size};
    if (wire_decode_fields(&f, rec) != 0)
        return -1;
    if (rec->type == WIRE_HELLO || rec->type == WIRE_READY)
        d->opened = true;
    if (rec->type == WIRE_FINISH || rec->type == WIRE_RESULT || rec->type == WIRE_UNSUPPORTED)
        d->finished = true;
    return 1;
}
