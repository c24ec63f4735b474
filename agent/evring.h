/*
 * evring: the bounded single-producer single-consumer ring between the
 * runtime thread (which appends fixed-layout event entries) and the
 * writer thread (which ships them in EVENTS frames).
 *
 * The producer never allocates, locks or makes a system call: an append
 * is a relaxed load of its own head, a copy and a release store (x86: a
 * plain store) publishing it; the consumer's tail is loaded (acquire)
 * only when the room last seen is not enough.  The consumer
 * takes whole entries only and sends them from where they lie before
 * releasing their space.
 *
 * Head and tail are positions that count entries as well as bytes, so
 * that the consumer knows how many whole entries wait without reading
 * them: walking the entries' kind bytes was a cache miss per entry on a
 * line the producer had just written, half of the writer's time.
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
#define EVRING_MAX_CAP ((size_t)1 << 28)

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
    char pad0[EVRING_LINE];
    _Atomic uint64_t head; /* position of what was ever appended (producer) */
    uint64_t tail_seen;    /* producer only: tail when it last looked */
    char pad1[EVRING_LINE];
    _Atomic uint64_t tail; /* position of what was ever consumed (consumer) */
    char pad2[EVRING_LINE];
};

/* 0, or -1 when memory runs out or cap is over EVRING_MAX_CAP; cap is
 * rounded up to a power of two. */
int evring_init(struct evring *r, size_t cap);
void evring_destroy(struct evring *r);

/* Producer: bytes free at `head`, looking at the consumer's tail again
 * only when fewer than n were free at the last look. */
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
    return evring_room(r, atomic_load_explicit(&r->head, memory_order_relaxed), r->cap);
}

/* Appends one entry of n bytes; false (nothing written) when it does not
 * fit. */
static inline bool evring_put(struct evring *r, const uint8_t *entry, size_t n)
{
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    if (evring_room(r, head, n) < n)
        return false;
    size_t at = evring_pos_bytes(head) & (r->cap - 1), first = r->cap - at;
    if (first >= n) {
        memcpy(r->buf + at, entry, n);
    } else {
        memcpy(r->buf + at, entry, first);
        memcpy(r->buf, entry + first, n - first);
    }
    atomic_store_explicit(&r->head, evring_pos_add(head, n, 1), memory_order_release);
    return true;
}

/* Producer: where the next n bytes go when they fit in one piece (the
 * entry is then written in place and published by evring_commit); NULL
 * when the ring is full or the entry would wrap past its end. */
static inline uint8_t *evring_claim(struct evring *r, size_t n)
{
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    size_t at = evring_pos_bytes(head) & (r->cap - 1);
    if (r->cap - at < n || evring_room(r, head, n) < n)
        return NULL;
    return r->buf + at;
}

/* Producer: publishes the entry of n bytes written where evring_claim
 * pointed (release: the consumer that sees the new head sees the bytes). */
static inline void evring_commit(struct evring *r, size_t n)
{
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    atomic_store_explicit(&r->head, evring_pos_add(head, n, 1), memory_order_release);
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
};

/* Consumer: the longest run of whole entries waiting, at most `max`
 * bytes.  Returns its bytes (0 when none fits); they stay in place, and
 * the producer cannot overwrite them, until evring_release.  Only a run
 * cut short by `max` reads the entries (their kind bytes, for their
 * sizes). */
size_t evring_peek(struct evring *r, size_t max, struct evring_run *run);

/* Consumer: gives a run that was peeked back to the producer. */
static inline void evring_release(struct evring *r, const struct evring_run *run)
{
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    atomic_store_explicit(&r->tail, evring_pos_add(tail, run->len[0] + run->len[1], run->count),
                          memory_order_release);
}

#endif
