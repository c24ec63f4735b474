/*
 * evring: the bounded single-producer single-consumer ring between the
 * runtime thread (which appends event entries) and the writer thread
 * (which ships them in EVENTS frames).
 *
 * The producer never allocates, locks or makes a system call.  What it
 * has written and what it has published are two positions: entries
 * between them are still the producer's (the memory event path turns an
 * allocate written there into a fold, memwire.h), and the consumer sees
 * only what was published (a release store, on x86 a plain store).  An
 * append either publishes at once (evring_put, evring_commit) or holds
 * the entry until the next evring_publish (evring_put_held,
 * evring_hold).  The consumer's tail is loaded (acquire) only when the
 * room last seen is not enough.  The consumer takes whole entries only
 * and sends them from where they lie before releasing their space.
 *
 * Positions count entries as well as bytes, so that the consumer knows
 * how many whole entries wait without reading them: walking the
 * entries' kind bytes was a cache miss per entry on a line the producer
 * had just written, half of the writer's time.  Where the consumer must
 * cut what waits (a frame holds less than the ring), the producer has
 * left it a mark: each publish records its position in the slot of its
 * 16 KiB chunk of the ring, so that a producer that publishes at least
 * once per EVRING_MARK_CHUNK bytes leaves an entry boundary in every
 * chunk (a producer that does not makes the consumer read entry sizes).
 */
#ifndef JETT_AGENT_EVRING_H
#define JETT_AGENT_EVRING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define EVRING_LINE 64

/* A position: bytes in the high 40 bits and entries in the low 24, each
 * modulo its width (differences are taken field by field).  A ring holds
 * at most EVRING_MAX_CAP bytes, fewer than 2^24 entries of the smallest
 * size, so a difference of counts never wraps. */
#define EVRING_COUNT_BITS 24
#define EVRING_COUNT_MASK ((UINT64_C(1) << EVRING_COUNT_BITS) - 1)
#define EVRING_BYTES_MASK ((UINT64_C(1) << (64 - EVRING_COUNT_BITS)) - 1)
#define EVRING_MAX_CAP ((size_t)1 << 25)
/* A mark per chunk of this many bytes, in a ring of at least two. */
#define EVRING_MARK_SHIFT 14
#define EVRING_MARK_CHUNK ((size_t)1 << EVRING_MARK_SHIFT)

static inline uint64_t evring_pos_bytes(uint64_t pos)
{
    return pos >> EVRING_COUNT_BITS;
}

/* The position `entries` entries of `n` bytes in all past pos. */
static inline uint64_t evring_pos_add(uint64_t pos, size_t n, uint64_t entries)
{
    return ((evring_pos_bytes(pos) + n) << EVRING_COUNT_BITS) |
           ((pos + entries) & EVRING_COUNT_MASK);
}

/* Bytes and entries from position `from` to the later position `to`. */
static inline size_t evring_bytes_between(uint64_t from, uint64_t to)
{
    return (size_t)((evring_pos_bytes(to) - evring_pos_bytes(from)) & EVRING_BYTES_MASK);
}

static inline uint32_t evring_entries_between(uint64_t from, uint64_t to)
{
    return (uint32_t)((to - from) & EVRING_COUNT_MASK);
}

/* The producer's and the consumer's words lie on different cache lines
 * (padding, not alignment: the ring lives in malloc'd memory), and the
 * producer reads the consumer's `tail` only when the space it saw last
 * is used up, so an append normally touches no line the consumer
 * writes. */
struct evring {
    uint8_t *buf;
    size_t cap; /* a power of two */
    /* the latest published position of each chunk, by chunk number
     * modulo n_marks (0 marks in a ring of fewer than two chunks) */
    _Atomic uint64_t *marks;
    size_t n_marks;
    char pad0[EVRING_LINE];
    _Atomic uint64_t head; /* position of what was ever published (producer) */
    uint64_t written;      /* producer only: position of what was ever written */
    uint64_t published;    /* producer only: the head it last stored */
    uint64_t tail_seen;    /* producer only: tail when it last looked */
    char pad1[EVRING_LINE];
    _Atomic uint64_t tail; /* position of what was ever consumed (consumer) */
    char pad2[EVRING_LINE];
};

/* 0, or -1 when memory runs out or cap is over EVRING_MAX_CAP; cap is
 * rounded up to a power of two. */
int evring_init(struct evring *r, size_t cap);
void evring_destroy(struct evring *r);

/* Producer: bytes free at `head` (what it has written), looking at the
 * consumer's tail again only when fewer than n were free at the last
 * look. */
static inline size_t evring_room(struct evring *r, uint64_t head, size_t n)
{
    size_t room = r->cap - evring_bytes_between(r->tail_seen, head);
    if (room >= n)
        return room;
    r->tail_seen = atomic_load_explicit(&r->tail, memory_order_acquire);
    return r->cap - evring_bytes_between(r->tail_seen, head);
}

/* Bytes the producer can append now. */
static inline size_t evring_space(struct evring *r)
{
    return evring_room(r, r->written, r->cap);
}

/* Producer: publishes everything written (release: a consumer that
 * sees the new head, or the mark, sees the bytes before it). */
static inline void evring_publish(struct evring *r)
{
    uint64_t w = r->written;
    if (w == r->published)
        return;
    if (r->n_marks)
        atomic_store_explicit(
            &r->marks[(evring_pos_bytes(w) >> EVRING_MARK_SHIFT) & (r->n_marks - 1)], w,
            memory_order_release);
    atomic_store_explicit(&r->head, w, memory_order_release);
    r->published = w;
}

/* Appends one entry of n bytes without publishing it; false (nothing
 * written) when it does not fit. */
static inline bool evring_put_held(struct evring *r, const uint8_t *entry, size_t n)
{
    uint64_t head = r->written;
    if (evring_room(r, head, n) < n)
        return false;
    size_t at = evring_pos_bytes(head) & (r->cap - 1), first = r->cap - at;
    if (first >= n) {
        memcpy(r->buf + at, entry, n);
    } else {
        memcpy(r->buf + at, entry, first);
        memcpy(r->buf, entry + first, n - first);
    }
    r->written = evring_pos_add(head, n, 1);
    return true;
}

/* The same, published at once. */
static inline bool evring_put(struct evring *r, const uint8_t *entry, size_t n)
{
    if (!evring_put_held(r, entry, n))
        return false;
    evring_publish(r);
    return true;
}

/* Producer: where the next n bytes go when they fit in one piece (the
 * entry is then written in place and appended by evring_hold or
 * evring_commit); NULL when the ring is full or the entry would wrap
 * past its end. */
static inline uint8_t *evring_claim(struct evring *r, size_t n)
{
    uint64_t head = r->written;
    size_t at = evring_pos_bytes(head) & (r->cap - 1);
    if (r->cap - at < n || evring_room(r, head, n) < n)
        return NULL;
    return r->buf + at;
}

/* Producer: appends the entry of n bytes written where evring_claim
 * pointed, without publishing it. */
static inline void evring_hold(struct evring *r, size_t n)
{
    r->written = evring_pos_add(r->written, n, 1);
}

/* The same, published at once. */
static inline void evring_commit(struct evring *r, size_t n)
{
    evring_hold(r, n);
    evring_publish(r);
}

/* Bytes waiting for the consumer. */
static inline size_t evring_used(struct evring *r)
{
    uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    return evring_bytes_between(tail, head);
}

/* A run of whole entries where it lies in the ring: one piece, or two
 * when it wraps past the end of the buffer. */
struct evring_run {
    const uint8_t *piece[2];
    size_t len[2];
    uint32_t count; /* entries */
    uint64_t end;   /* the position after it */
};

/* Consumer: the longest run of whole entries published, at most `max`
 * bytes (at least 2 * EVRING_MARK_CHUNK when the ring has marks).
 * Returns its bytes (0 when none fits); they stay in place, and the
 * producer cannot overwrite them, until evring_release.  A run cut short
 * by `max` ends at a mark; only without one does the consumer read the
 * entries (their sizes). */
size_t evring_peek(struct evring *r, size_t max, struct evring_run *run);
/* The same for the run that starts at position `from`, where an earlier
 * run not yet released ended (so that several frames go out at once). */
size_t evring_peek_at(struct evring *r, uint64_t from, size_t max, struct evring_run *run);

/* Consumer: gives a run that was peeked back to the producer, with every
 * run peeked before it. */
static inline void evring_release(struct evring *r, const struct evring_run *run)
{
    atomic_store_explicit(&r->tail, run->end, memory_order_release);
}

#endif
