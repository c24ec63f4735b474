/*
 * memwire: the memory event path on the producer's side: heap events as
 * compact ALLOC entries in the event ring, and folds (wire_compact.h,
 * jett-capture(5)).
 *
 * The fold rule: an allocation freed before the next new peak of live
 * bytes can never be live at a peak, nor at the end, so its allocate and
 * its free change nothing but the counts and byte sums, which one entry
 * carries.  The producer sees every event in order and knows the live
 * total and its peak: it writes each allocate as it happens and keeps it
 * unpublished (evring.h) while it may still fold; when the object's
 * free comes first, it writes the free's distance into the allocate
 * (making it a FOLD) and writes nothing for the free.  A new peak
 * publishes everything written, so that nothing allocated before it can
 * fold; so does a ring lap (the entry would wrap) or waiting for room.
 * Otherwise entries are published once MEMWIRE_HOLD bytes wait, which
 * bounds what an object's allocate may be behind its free and keeps the
 * writer's frames (64 KiB) cut at marks (at most EVRING_MARK_CHUNK
 * bytes between two publishes).
 *
 * The allocates that may still fold are found by id in a direct-mapped
 * table of MEMWIRE_PENDING slots: a newer id takes an older one's slot,
 * which then frees unfolded.  A resize keeps its object's allocate as
 * it is (the resize needs the live record the daemon keeps for it).
 *
 * The entries are the bytes wire_compact_put writes for the same events
 * (so `jett profile pack` of the dump gives them back), by a path made
 * for the producer: the execution context is written only when it
 * changes (memwire_set_exec), the write position is counted here and
 * given to the ring when it publishes, and one limit says when an entry
 * needs the slow way: the ring's end or the consumer's tail ahead, or
 * MEMWIRE_HOLD bytes held.
 *
 * With several workers there is still one memwire, under the writers'
 * lock; the workers' events come to it a block at a time (memblock.h).
 */
#ifndef JETT_AGENT_MEMWIRE_H
#define JETT_AGENT_MEMWIRE_H

#include <stdbool.h>
#include <stdint.h>

#include "agent/collector.h"
#include "agent/evring.h"
#include "proto/wire_compact.h"

/* The per-event path is inlined whole: its calls and spills were most
 * of its instructions. */
#define MEMWIRE_HOT static inline __attribute__((always_inline))

#define MEMWIRE_PENDING 1024u
#define MEMWIRE_HOLD ((size_t)12 << 10)

_Static_assert(MEMWIRE_HOLD + 128 * WIRE_STACK_SIZE + WIRE_COMPACT_MAX <= EVRING_MARK_CHUNK,
               "the entries of one event and what waits before them publish within a chunk");

/* An allocate that may still fold: its id, the ring byte position
 * (modulo 2^32) of its entry, and its sequence (modulo 2^32). */
struct memwire_pending {
    uint64_t id;
    uint32_t at, seq;
};

struct memwire {
    uint8_t *buf;
    uint64_t mask; /* the ring's capacity - 1 */
    /* bytes and entries written and bytes published, as the ring's
     * positions count them but without their modulus (the ring's
     * `written` is set from them at each publish, memwire_sync) */
    uint64_t wbytes, wcount, pbytes;
    uint64_t limit; /* wbytes may reach this before the slow way */
    struct evring *ring;
    struct wire_compact_enc enc;
    struct wire_exec exec; /* of the events; enc.s.exec is the last written */
    bool exec_new;         /* they differ: the next entry writes exec */
    bool fold;             /* folds are on (JETT_TEST_NO_FOLD turns them off) */
    uint64_t folds;
    struct collector *c;
    struct memwire_pending pending[MEMWIRE_PENDING];
};

void memwire_init(struct memwire *w, struct collector *c, bool fold);

/* The execution context of the events from now on. */
void memwire_set_exec(struct memwire *w, struct wire_exec exec);

/* Whether there is room for one entry at the write position now;
 * otherwise the entry goes through memwire_put_slow. */
bool memwire_refill(struct memwire *w);
/* An entry that does not fit in one piece (memwire_room said no),
 * written by wire_compact_put (a STACK entry as it is): collector_put
 * publishes it with everything before it, so none of them folds any
 * more.  The arguments are memwire_allocate's and memwire_change's (an
 * allocate has old size WIRE_NONE64, a free new size WIRE_NONE64), so
 * that the per-event path takes no address of a local. */
void memwire_put_slow(struct memwire *w, uint64_t seq, uint64_t id, uint64_t old, uint64_t neu,
                      uint32_t stack, struct wire_span span);
void memwire_stack_slow(struct memwire *w, const struct wire_stack *st);
/* Any other entry (a TASK entry), by collector_put: it publishes it with
 * everything before it, copying it in two pieces or waiting for room. */
void memwire_put_entry(struct memwire *w, const uint8_t *e, size_t n);

/* The ring's `written` from the counts: before anything else touches
 * the ring. */
void memwire_sync(struct memwire *w);
/* Publishes everything written. */
void memwire_publish(struct memwire *w);

/* Whether the next entry (at most WIRE_COMPACT_MAX bytes) fits before
 * the limit, as it stands. */
MEMWIRE_HOT bool memwire_fits(const struct memwire *w)
{
    return w->limit - w->wbytes >= WIRE_COMPACT_MAX;
}

/* Whether the next entry goes at memwire_at; otherwise memwire_put_slow
 * publishes what waits or copies. */
MEMWIRE_HOT bool memwire_room(struct memwire *w)
{
    return __builtin_expect(memwire_fits(w), 1) || memwire_refill(w);
}

/* The write position. */
MEMWIRE_HOT uint8_t *memwire_at(const struct memwire *w)
{
    return w->buf + (w->wbytes & w->mask);
}

/* Appends the n bytes just written at memwire_at, held. */
MEMWIRE_HOT void memwire_wrote(struct memwire *w, size_t n)
{
    w->wbytes += n;
    w->wcount++;
}

/* The header's sequence bits, and the varint after it if any. */
MEMWIRE_HOT uint8_t *memwire_seq(struct memwire *w, uint8_t *p, uint64_t seq, unsigned *hv)
{
    uint64_t delta = seq - w->enc.last;
    w->enc.last = seq;
    if (delta <= 3) {
        *hv = (unsigned)(delta - 1);
        return p;
    }
    *hv = WIRE_CH_SEQ_VARINT;
    return wire_varint_put(p, delta - 4);
}

/* What memwire_quick gives when the entry takes the general way: the
 * field of a new site, which the short way never writes. */
#define MEMWIRE_GENERAL ((unsigned)WIRE_SITE_NEW)

/* Whether the next entry, at (stack, span), may take the short way:
 * there is room for it, its site is one of the last two and the
 * execution context is unchanged.  Nothing it writes then calls out, so
 * that the event's path needs no register saved across a call (a sixth
 * of its instructions were those saves and restores).  Returns the
 * site's field, or MEMWIRE_GENERAL for no. */
MEMWIRE_HOT unsigned memwire_quick(const struct memwire *w, uint32_t stack, struct wire_span span)
{
    const struct wire_compact_state *s = &w->enc.s;
    if (!memwire_fits(w) || w->exec_new)
        return MEMWIRE_GENERAL;
    if (wire_site_eq(s->site[0], stack, span))
        return WIRE_SITE_LAST;
    return wire_site_eq(s->site[1], stack, span) ? WIRE_SITE_OTHER : MEMWIRE_GENERAL;
}

/* The site and execution fields that end an entry.  `quick`: the site
 * field memwire_quick gave (one of the last two), else MEMWIRE_GENERAL. */
MEMWIRE_HOT uint8_t *memwire_tail(struct memwire *w, uint8_t *p, uint32_t stack,
                                  struct wire_span span, unsigned *hv, unsigned quick)
{
    if (quick != MEMWIRE_GENERAL) {
        if (quick == WIRE_SITE_OTHER) {
            struct wire_site other = w->enc.s.site[1];
            w->enc.s.site[1] = w->enc.s.site[0], w->enc.s.site[0] = other;
        }
        *hv |= quick << WIRE_CH_SITE_SHIFT;
        return p;
    }
    unsigned site = wire_compact_site(&w->enc.s, stack, span);
    *hv |= site << WIRE_CH_SITE_SHIFT;
    if (__builtin_expect(site == WIRE_SITE_NEW, 0))
        p = wire_compact_put_site(p, stack, span);
    if (__builtin_expect(w->exec_new, 0)) {
        const struct wire_exec *x = &w->exec;
        *hv |= WIRE_CH_EXEC;
        p = wire_varint_put(p, wire_compact_opt32(x->task));
        p = wire_varint_put(p, wire_compact_opt32(x->actor));
        p = wire_varint_put(p, wire_compact_opt32(x->thread));
        w->enc.s.exec = *x;
        w->exec_new = false;
    }
    return p;
}

/* An allocate, held so that its free may fold it; `quick`: what
 * memwire_quick gave (MEMWIRE_GENERAL: the general way). */
MEMWIRE_HOT void memwire_allocate(struct memwire *w, uint64_t seq, uint64_t id, uint64_t size,
                                  uint32_t stack, struct wire_span span, unsigned quick)
{
    struct memwire_pending *k = &w->pending[id & (MEMWIRE_PENDING - 1)];
    if (quick == MEMWIRE_GENERAL && __builtin_expect(!memwire_room(w), 0)) {
        k->id = 0; /* the older one's allocate is published with it */
        memwire_put_slow(w, seq, id, WIRE_NONE64, size, stack, span);
        return;
    }
    uint8_t *p = memwire_at(w);
    uint64_t at = w->wbytes;
    unsigned hv;
    p[0] = WIRE_ENTRY_ALLOCATE, p[1] = 0;
    uint8_t *q = memwire_seq(w, p + 3, seq, &hv);
    if (__builtin_expect(id != w->enc.floor, 0)) {
        hv |= WIRE_CH_ID;
        q = wire_varint_put(q, id - w->enc.floor - 1);
    }
    w->enc.floor = id + 1;
    q = wire_varint_put(q, size);
    q = memwire_tail(w, q, stack, span, &hv, quick);
    p[2] = (uint8_t)hv;
    memwire_wrote(w, (size_t)(q - p));
    *k = (struct memwire_pending){id, (uint32_t)at, (uint32_t)seq};
}

/* A resize (both sizes) or a free (`neu` unused): the operation comes
 * apart from the sizes so that each caller's copy tests neither;
 * `quick`: as memwire_allocate's. */
MEMWIRE_HOT void memwire_change(struct memwire *w, uint64_t seq, uint64_t id, uint64_t old,
                                uint64_t neu, bool resize, uint32_t stack, struct wire_span span,
                                unsigned quick)
{
    struct memwire_pending *k = &w->pending[id & (MEMWIRE_PENDING - 1)];
    if (resize && k->id == id)
        k->id = 0; /* resized: its allocate stays one */
    if (quick == MEMWIRE_GENERAL && __builtin_expect(!memwire_room(w), 0)) {
        memwire_put_slow(w, seq, id, old, resize ? neu : WIRE_NONE64, stack, span);
        return;
    }
    uint8_t *p = memwire_at(w);
    unsigned hv;
    struct wire_compact_state *st = &w->enc.s;
    /* a resize of what the last resize resized, from the size it left */
    bool again = resize && st->resized && id == st->resized_id && old == st->resized_size;
    p[0] = again ? WIRE_ENTRY_RESIZE_AGAIN : resize ? WIRE_ENTRY_RESIZE : WIRE_ENTRY_FREE;
    uint8_t *q = memwire_seq(w, p + 2, seq, &hv);
    if (!again) {
        q = wire_varint_put(q, w->enc.floor - 1 - id);
        q = wire_varint_put(q, old);
    }
    if (resize) {
        q = wire_varint_put(q, wire_zigzag(old, neu));
        st->resized = true, st->resized_id = id, st->resized_size = neu;
    }
    q = memwire_tail(w, q, stack, span, &hv, quick);
    p[1] = (uint8_t)hv;
    memwire_wrote(w, (size_t)(q - p));
}

/* A STACK entry, held with the events. */
MEMWIRE_HOT void memwire_stack(struct memwire *w, const struct wire_stack *st)
{
    if (__builtin_expect(!memwire_room(w), 0))
        memwire_stack_slow(w, st);
    else
        memwire_wrote(w, wire_put_stack(memwire_at(w), st));
}

/* The free of `id` at `sequence` as a fold of its allocate: true when
 * the allocate is still held, no new peak came since, and the free is at
 * most WIRE_FOLD_MAX sequences after it (then nothing is written). */
MEMWIRE_HOT bool memwire_fold(struct memwire *w, uint64_t id, uint64_t sequence)
{
    struct memwire_pending *q = &w->pending[id & (MEMWIRE_PENDING - 1)];
    uint32_t written = (uint32_t)w->wbytes, held = (uint32_t)(w->wbytes - w->pbytes);
    uint32_t distance = (uint32_t)sequence - q->seq;
    if (q->id != id || written - q->at > held || distance - 1 >= WIRE_FOLD_MAX || !w->fold)
        return false;
    w->buf[(q->at + 1) & w->mask] = (uint8_t)distance;
    q->id = 0;
    w->folds++;
    return true;
}

/* After an event's entries: a new peak publishes them all (otherwise
 * they wait until MEMWIRE_HOLD bytes do, memwire_room). */
MEMWIRE_HOT void memwire_settle(struct memwire *w, bool peak)
{
    if (__builtin_expect(peak, 0))
        memwire_publish(w);
}

#endif
