/*
 * wire_compact: the compact ALLOC entries of protocol version 3, and
 * folds (layouts and rules in jett-capture(5)).
 *
 * A compact entry says what the entries before it do not: a sequence as
 * its distance from the last ALLOC entry's, an id from the allocate floor
 * (one past the last allocate's id), sizes as varints, and a site (leaf
 * stack and statement) or execution context only when it differs from
 * the last one (two sites are remembered, so that code alternating
 * between two statements names each in two bits).  The encoding is one
 * function of the logical records and what came before them, so `jett
 * profile pack` writes exactly the bytes the agent wrote.
 *
 *   kind 4 ALLOCATE: kind, free distance d, header, [sequence], [id], size,
 *                    [site], [execution]; d > 0 makes it a FOLD freed at
 *                    sequence + d
 *   kind 5 RESIZE:   kind, header, [sequence], id, old size, new size as
 *                    its zigzag distance from the old, [site], [execution]
 *   kind 6 FREE:     kind, header, [sequence], id, old size, [site],
 *                    [execution]
 *   kind 7 RESIZE_AGAIN: kind, header, [sequence], new size as its zigzag
 *                    distance from the old, [site], [execution]: a resize
 *                    of what the last resize resized, from the size it
 *                    left (a string built by appending, mostly)
 *
 * Header bits: 0-1 the sequence (0..2: the last + 1..3; 3: the last + 4
 * + a varint), 2-3 the site (0: the last; 1: the one before, which
 * becomes the last; 2: a new one follows), 4 a new execution context
 * follows, 5 (ALLOCATE) the id is floor + 1 + a varint instead of the
 * floor; 6-7 zero.  A resize's or free's id is floor - 1 - a varint,
 * modulo 2^64.  A site is stack + 1 (0: none) and span start + 1 (0:
 * none) then, with a span, its length; an execution context is task + 1,
 * actor + 1 and thread + 1 (0: none).  Varints are unsigned LEB128, at
 * most 10 bytes.
 *
 * The free distance is one byte at offset 1 of an ALLOCATE, so that the
 * agent writes an allocate and, when its free comes in time, turns it
 * into a fold by writing that byte.
 */
#ifndef JETT_PROTO_WIRE_COMPACT_H
#define JETT_PROTO_WIRE_COMPACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "proto/wire.h"

#define WIRE_COMPACT_MIN 3  /* the smallest compact entry (a RESIZE_AGAIN) */
#define WIRE_COMPACT_MAX 72 /* the largest: a resize with every field */

#define WIRE_CH_SEQ 0x03u
#define WIRE_CH_SEQ_VARINT 0x03u
#define WIRE_CH_SITE_SHIFT 2
#define WIRE_CH_SITE (0x03u << WIRE_CH_SITE_SHIFT)
#define WIRE_CH_EXEC 0x10u
#define WIRE_CH_ID 0x20u
#define WIRE_CH_RESERVED 0xc0u

/* How an entry names its site. */
enum { WIRE_SITE_LAST = 0, WIRE_SITE_OTHER = 1, WIRE_SITE_NEW = 2 };

struct wire_site {
    uint32_t stack;
    struct wire_span span;
};

/* The sites, execution context and last resize the next compact entry
 * refers to. */
struct wire_compact_state {
    struct wire_site site[2]; /* the last first */
    struct wire_exec exec;
    bool resized;                      /* a compact resize came before */
    uint64_t resized_id, resized_size; /* its id, and the size it left */
};

static inline void wire_compact_state_init(struct wire_compact_state *s)
{
    s->site[0] = s->site[1] = (struct wire_site){WIRE_NONE32, WIRE_SPAN_NONE};
    s->exec = (struct wire_exec){WIRE_NONE32, WIRE_NONE32, WIRE_NONE32};
    s->resized = false;
    s->resized_id = s->resized_size = 0;
}

/* The span's two fields compared as one word: field by field, the
 * compilers moved them through vector registers at every event. */
_Static_assert(sizeof(struct wire_span) == sizeof(uint64_t), "a span is one word, no padding");
static inline __attribute__((always_inline)) bool wire_site_eq(struct wire_site a, uint32_t stack,
                                                               struct wire_span span)
{
    uint64_t x, y;
    memcpy(&x, &a.span, sizeof x);
    memcpy(&y, &span, sizeof y);
    return a.stack == stack && x == y;
}

/* A resize's new size as its distance from the old (modulo 2^64, read
 * as signed), zigzagged so that a small growth or shrink is one byte. */
static inline uint64_t wire_zigzag(uint64_t old, uint64_t neu)
{
    uint64_t d = neu - old;
    return (d << 1) ^ (uint64_t) - (int64_t)(d >> 63);
}

static inline uint64_t wire_unzigzag(uint64_t old, uint64_t z)
{
    return old + ((z >> 1) ^ (uint64_t) - (int64_t)(z & 1));
}

/* Writes v as a varint at p; past it.  One to three bytes without the
 * loop, as wire_varint_get reads them. */
static inline uint8_t *wire_varint_put(uint8_t *p, uint64_t v)
{
    if (__builtin_expect(v < 0x80, 1)) {
        p[0] = (uint8_t)v;
        return p + 1;
    }
    if (v < 0x4000) {
        p[0] = (uint8_t)(v | 0x80), p[1] = (uint8_t)(v >> 7);
        return p + 2;
    }
    if (v < 0x200000) {
        p[0] = (uint8_t)(v | 0x80), p[1] = (uint8_t)(v >> 7 | 0x80), p[2] = (uint8_t)(v >> 14);
        return p + 3;
    }
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

/* The varint at p (before end): past it, or NULL when it is cut short,
 * longer than 10 bytes or past 2^64 - 1.  Sizes and distances are mostly
 * one to three bytes: those are read without the loop. */
static inline const uint8_t *wire_varint_get(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
    if (__builtin_expect(end - p >= 3, 1)) {
        if (p[0] < 0x80) {
            *v = p[0];
            return p + 1;
        }
        if (p[1] < 0x80) {
            *v = (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
            return p + 2;
        }
        if (p[2] < 0x80) {
            *v = (uint64_t)(p[0] & 0x7f) | (uint64_t)(p[1] & 0x7f) << 7 | (uint64_t)p[2] << 14;
            return p + 3;
        }
    }
    uint64_t x = 0;
    for (unsigned shift = 0; shift < 70; shift += 7) {
        if (p >= end)
            return NULL;
        uint8_t b = *p++;
        if (shift == 63 && b > 1)
            return NULL;
        x |= (uint64_t)(b & 0x7f) << shift;
        if (b < 0x80) {
            *v = x;
            return p;
        }
    }
    return NULL;
}

/* ---- encoding ---- */

/* What the next entry is written against; zeroed, then
 * wire_compact_state_init. */
struct wire_compact_enc {
    uint64_t last;  /* the last ALLOC entry's sequence, 0 before any */
    uint64_t floor; /* one past the last allocate's id, 0 before any */
    struct wire_compact_state s;
};

static inline void wire_compact_enc_init(struct wire_compact_enc *e)
{
    e->last = e->floor = 0;
    wire_compact_state_init(&e->s);
}

/* The site field: how the site is named, moving the two remembered. */
static inline __attribute__((always_inline)) unsigned
wire_compact_site(struct wire_compact_state *s, uint32_t stack, struct wire_span span)
{
    if (wire_site_eq(s->site[0], stack, span))
        return WIRE_SITE_LAST;
    struct wire_site other = s->site[1];
    s->site[1] = s->site[0];
    if (wire_site_eq(other, stack, span)) {
        s->site[0] = other;
        return WIRE_SITE_OTHER;
    }
    s->site[0] = (struct wire_site){stack, span};
    return WIRE_SITE_NEW;
}

/* An optional u32 (stack, task, actor, thread) as a varint: 0 for none. */
static inline uint64_t wire_compact_opt32(uint32_t v)
{
    return v == WIRE_NONE32 ? 0 : (uint64_t)v + 1;
}

static inline uint8_t *wire_compact_put_site(uint8_t *p, uint32_t stack, struct wire_span span)
{
    p = wire_varint_put(p, wire_compact_opt32(stack));
    if (!wire_span_present(span))
        return wire_varint_put(p, 0);
    p = wire_varint_put(p, (uint64_t)span.start + 1);
    return wire_varint_put(p, span.end - span.start);
}

/* Writes the compact entry of `a` at dst (room for WIRE_COMPACT_MAX
 * bytes) and moves the encoder past it; returns its size.  The caller
 * checked what the layout cannot say: the sequence is past the last, an
 * allocate's or fold's id is at least the floor, a fold's free is 1 to
 * WIRE_FOLD_MAX past its sequence, a span has a stack. */
static inline size_t wire_compact_put(struct wire_compact_enc *e, uint8_t *dst,
                                      const struct wire_alloc *a)
{
    uint8_t *p = dst;
    bool create = a->op == WIRE_OP_ALLOCATE || a->op == WIRE_OP_FOLD;
    bool again = a->op == WIRE_OP_RESIZE && e->s.resized && a->allocation_id == e->s.resized_id &&
                 a->old_size == e->s.resized_size;
    *p++ = create                    ? WIRE_ENTRY_ALLOCATE
           : again                   ? WIRE_ENTRY_RESIZE_AGAIN
           : a->op == WIRE_OP_RESIZE ? WIRE_ENTRY_RESIZE
                                     : WIRE_ENTRY_FREE;
    if (create)
        *p++ = a->op == WIRE_OP_FOLD ? (uint8_t)(wire_fold_free_seq(a) - a->sequence) : 0;
    uint8_t *h = p++;
    uint64_t delta = a->sequence - e->last;
    unsigned hv = delta <= 3 ? (unsigned)(delta - 1) : WIRE_CH_SEQ_VARINT;
    if (delta > 3)
        p = wire_varint_put(p, delta - 4);
    e->last = a->sequence;
    if (create) {
        if (a->allocation_id != e->floor) {
            hv |= WIRE_CH_ID;
            p = wire_varint_put(p, a->allocation_id - e->floor - 1);
        }
        e->floor = a->allocation_id + 1;
        p = wire_varint_put(p, a->new_size);
    } else if (again) {
        p = wire_varint_put(p, wire_zigzag(a->old_size, a->new_size));
    } else {
        p = wire_varint_put(p, e->floor - 1 - a->allocation_id);
        p = wire_varint_put(p, a->old_size);
        if (a->op == WIRE_OP_RESIZE)
            p = wire_varint_put(p, wire_zigzag(a->old_size, a->new_size));
    }
    if (a->op == WIRE_OP_RESIZE)
        e->s.resized = true, e->s.resized_id = a->allocation_id, e->s.resized_size = a->new_size;
    unsigned site = wire_compact_site(&e->s, a->stack_id, a->span);
    hv |= site << WIRE_CH_SITE_SHIFT;
    if (site == WIRE_SITE_NEW)
        p = wire_compact_put_site(p, a->stack_id, a->span);
    const struct wire_exec *x = &a->exec, *was = &e->s.exec;
    if (x->task != was->task || x->actor != was->actor || x->thread != was->thread) {
        hv |= WIRE_CH_EXEC;
        p = wire_varint_put(p, wire_compact_opt32(x->task));
        p = wire_varint_put(p, wire_compact_opt32(x->actor));
        p = wire_varint_put(p, wire_compact_opt32(x->thread));
        e->s.exec = *x;
    }
    *h = (uint8_t)hv;
    return (size_t)(p - dst);
}

/* ---- decoding ---- */

/* What a compact entry's acceptance depends on: the ALLOC rule of every
 * ALLOC entry (wire_alloc_entry.h) and the remembered sites and
 * execution context. */
struct wire_compact_rule {
    struct wire_alloc_rule r;
    struct wire_compact_state s;
};

/* Why wire_compact_take refused an entry (jett-capture(5) names each). */
enum wire_compact_why {
    WIRE_CW_KIND = 0,   /* not a compact ALLOC entry */
    WIRE_CW_CUT,        /* the entry runs past the frame */
    WIRE_CW_HEADER,     /* reserved header bits, or site field 3 */
    WIRE_CW_VARINT,     /* a varint longer than 10 bytes or past 2^64 - 1 */
    WIRE_CW_SEQUENCE,   /* the sequence does not increase (passes 2^64 - 1) */
    WIRE_CW_ID,         /* the id is absent or passes 2^64 - 1 */
    WIRE_CW_FREE_SEQ,   /* a fold's free sequence passes 2^64 - 1 */
    WIRE_CW_STACK,      /* the stack is not defined */
    WIRE_CW_SPAN,       /* a span start or end out of range */
    WIRE_CW_SPAN_STACK, /* a span without a stack */
    WIRE_CW_EXEC,       /* an execution id past 2^32 - 2 */
    WIRE_CW_AGAIN,      /* a RESIZE_AGAIN with no compact resize before it */
};

static inline const uint8_t *wire_compact_get32(const uint8_t *p, const uint8_t *end, uint32_t *v,
                                                unsigned *why)
{
    uint64_t x;
    p = wire_varint_get(p, end, &x);
    if (!p)
        return *why = WIRE_CW_VARINT, NULL;
    if (x > WIRE_NONE32)
        return *why = WIRE_CW_EXEC, NULL;
    *v = x == 0 ? WIRE_NONE32 : (uint32_t)(x - 1);
    return p;
}

/* A new site field at p. */
static inline const uint8_t *wire_compact_get_site(const uint8_t *p, const uint8_t *end,
                                                   uint32_t n_stacks, struct wire_site *out,
                                                   unsigned *why)
{
    uint64_t stack, start, len;
    if (!(p = wire_varint_get(p, end, &stack)) || !(p = wire_varint_get(p, end, &start)))
        return *why = WIRE_CW_VARINT, NULL;
    if (stack > n_stacks)
        return *why = WIRE_CW_STACK, NULL;
    out->stack = stack == 0 ? WIRE_NONE32 : (uint32_t)(stack - 1);
    if (start == 0) {
        out->span = WIRE_SPAN_NONE;
        return p;
    }
    if (!(p = wire_varint_get(p, end, &len)))
        return *why = WIRE_CW_VARINT, NULL;
    if (start >= WIRE_NONE32 || len >= WIRE_NONE32 - (start - 1))
        return *why = WIRE_CW_SPAN, NULL;
    if (stack == 0)
        return *why = WIRE_CW_SPAN_STACK, NULL;
    out->span = (struct wire_span){(uint32_t)(start - 1), (uint32_t)(start - 1 + len)};
    return p;
}

/* Reads the compact entry at p (before end) into a and takes it when the
 * rule holds: its size, with the rule moved past it and *how saying how
 * it named its site; or 0 (the rule unchanged) and *why.  One function
 * for the decoder's single entries and the aggregation's runs, out of
 * line: a copy in each was 4 KiB more of the daemon's resident code, and
 * inlined it measured no faster. */
size_t wire_compact_take(const uint8_t *p0, const uint8_t *end, struct wire_compact_rule *cr,
                         struct wire_alloc *a, unsigned *how, unsigned *why);

/* The size of the compact entry at p (before end) by its layout alone,
 * without the rule; 0 when it is not one or runs past end. */
size_t wire_compact_size(const uint8_t *p, const uint8_t *end);

#endif
