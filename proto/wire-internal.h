/* wire-internal: the decoder's state, shared by the wire_*.c files. */
#ifndef JETT_PROTO_WIRE_INTERNAL_H
#define JETT_PROTO_WIRE_INTERNAL_H

#include "proto/wire.h"
#include "proto/wire_compact.h"
#include "proto/wire_rules.h"

#define WIRE_MAX_SOURCES 100000u
#define WIRE_MAX_FUNCS (1u << 24)
#define WIRE_MAX_STACKS (1u << 24)
#define WIRE_MAX_BACKEND 64
#define WIRE_MAX_RESULT (WIRE_MAX_FRAME)

struct wire_decoder {
    enum wire_direction dir;
    /* Framing. */
    uint8_t hdr[WIRE_FRAME_HEADER];
    uint32_t hdr_have;
    uint8_t *frame;     /* owned copy of a frame that arrived in pieces */
    const uint8_t *cur; /* the ready frame: `frame` or borrowed input */
    uint32_t frame_cap, need, have;
    bool in_payload, ready;
    uint64_t base, consumed, frame_off;
    /* Errors: once failed, always failed. */
    bool failed;
    struct wire_error err;
    /* Protocol order and id density. */
    bool opened, finished;
    bool calls_seen; /* a CALLS record: no EVENTS may follow */
    uint32_t n_sources, n_funcs, n_stacks, n_tasks;
    uint32_t *source_len; /* text length of each source, for FUNC spans */
    uint32_t source_cap;
    struct wire_path_set paths; /* (origin, path) of every SOURCE */
    uint8_t *stack_depth;       /* frames of each stack, root 1, at most 128 */
    uint32_t depth_cap;
    uint32_t version; /* HELLO's protocol version, 0 before it */
    /* Sequences must increase per event kind. */
    bool have_sample, have_alloc;
    uint64_t last_sample_seq, last_tick, last_alloc_seq;
    uint64_t next_alloc_id;            /* an allocate's id is at least this (ids increase) */
    struct wire_compact_state compact; /* what compact ALLOC entries refer to */
    /* The walk's RETAINED records: one seen, the closing one seen, the
     * last one incomplete. */
    bool retained_seen, retained_closed, retained_cut;
    /* Decoding scratch, owned by the decoder, valid until the next push. */
    msgpack_unpacked unp;
    struct wire_source_span *spans;
    uint32_t spans_cap;
    uint32_t *lines;
    uint32_t lines_cap;
};

/* A record's fields while they are decoded. */
struct wire_fields {
    struct wire_decoder *d;
    const char *rec;
    const msgpack_object *f;
    uint32_t n;
};

void wire_fail(struct wire_decoder *d, enum wire_errcode code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int wire_decode_fields(struct wire_fields *f, struct wire_record *rec);
int wire_check_events(struct wire_decoder *d, const struct wire_events *ev);

#endif
