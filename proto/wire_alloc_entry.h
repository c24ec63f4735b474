/*
 * wire_alloc_entry: the fields of an ALLOC entry read where it lies in an
 * EVENTS frame (layout in wire.h), for the decoder and for consumers of
 * runs of entries checked as they are read (wire_events_alloc_open,
 * wire_alloc_entry_take), which read them in place instead of copying
 * each into a struct wire_event.
 * The little-endian readers and the execution tail serve the decoder's
 * other entries too.
 */
#ifndef JETT_PROTO_WIRE_ALLOC_ENTRY_H
#define JETT_PROTO_WIRE_ALLOC_ENTRY_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

#include "proto/wire.h"

static inline uint32_t wire_get32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return le32toh(v);
}

static inline uint64_t wire_get64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return le64toh(v);
}

static inline uint8_t wire_alloc_entry_op(const uint8_t *p)
{
    return p[1];
}

static inline uint64_t wire_alloc_entry_sequence(const uint8_t *p)
{
    return wire_get64(p + 2);
}

static inline uint64_t wire_alloc_entry_id(const uint8_t *p)
{
    return wire_get64(p + 10);
}

static inline uint64_t wire_alloc_entry_old_size(const uint8_t *p)
{
    return wire_get64(p + 18);
}

static inline uint64_t wire_alloc_entry_new_size(const uint8_t *p)
{
    return wire_get64(p + 26);
}

static inline uint32_t wire_alloc_entry_stack(const uint8_t *p)
{
    return wire_get32(p + 46);
}

/* The leaf statement span of the ALLOC entry at p. */
static inline struct wire_span wire_alloc_entry_span(const uint8_t *p)
{
    return (struct wire_span){wire_get32(p + 50), wire_get32(p + 54)};
}

/* The execution context, stack and span that end SAMPLE and ALLOC
 * entries, from their first byte. */
static inline void wire_get_tail(const uint8_t *p, struct wire_exec *e, uint32_t *stack,
                                 struct wire_span *span)
{
    e->task = wire_get32(p);
    e->actor = wire_get32(p + 4);
    e->thread = wire_get32(p + 8);
    *stack = wire_get32(p + 12);
    span->start = wire_get32(p + 16);
    span->end = wire_get32(p + 20);
}

/* Every field of the entry at p but the execution context (which the
 * aggregation does not read): what the acceptance rule checks. */
static inline void wire_alloc_entry_read_checked(const uint8_t *p, struct wire_alloc *a)
{
    a->op = wire_alloc_entry_op(p);
    a->sequence = wire_alloc_entry_sequence(p);
    a->allocation_id = wire_alloc_entry_id(p);
    a->old_size = wire_alloc_entry_old_size(p);
    a->new_size = wire_alloc_entry_new_size(p);
    a->stack_id = wire_alloc_entry_stack(p);
    a->span = wire_alloc_entry_span(p);
}

/* Every field of the entry at p. */
static inline void wire_alloc_entry_read(const uint8_t *p, struct wire_alloc *a)
{
    wire_alloc_entry_read_checked(p, a);
    a->exec.task = wire_get32(p + 34);
    a->exec.actor = wire_get32(p + 38);
    a->exec.thread = wire_get32(p + 42);
}

/* The one acceptance rule of an ALLOC entry (kind byte `kind`, fields
 * in a, read by wire_alloc_entry_read_checked at least) under the
 * decoder's state r: one expression, which a run of good entries passes
 * with branches that never mispredict there.  The decoder's single
 * entries (wire_events_next) and runs (wire_events_alloc_open) take an entry
 * exactly when it holds, and then move the state with
 * wire_alloc_rule_pass; the decoder's alloc_rejection only says why it
 * did not. */
static inline bool wire_alloc_entry_ok(uint8_t kind, const struct wire_alloc *a,
                                       const struct wire_alloc_rule *r)
{
    /* what holds of every entry of a good stream first, each a branch
     * always taken there; what depends on the operation (which no branch
     * predicts) by selection: an allocate's id is at least the floor and
     * it has no old size, a free has no new size */
    bool allocate = a->op == WIRE_OP_ALLOCATE;
    uint64_t floor = allocate ? r->next_id : 0;
    uint64_t absent = allocate ? a->old_size : a->op == WIRE_OP_FREE ? a->new_size : WIRE_NONE64;
    return kind == WIRE_ENTRY_ALLOC && a->op <= WIRE_OP_FREE &&
           (a->sequence > r->last || !r->have) && a->allocation_id != WIRE_NONE64 &&
           /* defined or absent: WIRE_NONE32 + 1 wraps to 0 */
           a->stack_id + 1 <= r->n_stacks &&
           /* a span is absent, or ordered and under a stack (start <=
            * end leaves an absent start only with an absent end) */
           a->span.start <= a->span.end &&
           ((a->span.start == WIRE_NONE32) |
            ((a->span.end != WIRE_NONE32) & (a->stack_id != WIRE_NONE32))) &&
           (a->allocation_id >= floor) & (absent == WIRE_NONE64);
}

/* The state after a taken entry: its sequence is the last, and the
 * allocate id floor moves past an allocate's id (no branch). */
static inline void wire_alloc_rule_pass(struct wire_alloc_rule *r, const struct wire_alloc *a)
{
    r->have = true;
    r->last = a->sequence;
    r->next_id = (a->op == WIRE_OP_ALLOCATE) ? a->allocation_id + 1 : r->next_id;
}

/* Reads the entry at p of a run (wire_events_alloc_open) into a and
 * takes it when the rule holds, moving the state past it; false (the run
 * ends before p) when it does not. */
static inline bool wire_alloc_entry_take(const uint8_t *p, struct wire_alloc *a,
                                         struct wire_alloc_rule *r)
{
    wire_alloc_entry_read_checked(p, a);
    if (!wire_alloc_entry_ok(p[0], a, r))
        return false;
    wire_alloc_rule_pass(r, a);
    return true;
}

#endif
