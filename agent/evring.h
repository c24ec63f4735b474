/*
 * evring: the bounded single-producer single-consumer ring between the
 * runtime thread (which appends fixed-layout event entries) and the
 * writer thread (which ships them in EVENTS frames).
 *
 * The producer never allocates, locks or makes a system call: an append
 * is a relaxed load of its own head, a copy and a release store (x86: a
 * plain store) publishing it; the consumer's tail is loaded (acquire)
 * only when the room last seen is not enough.  The consumer
 * takes whole entries only, reading each entry's kind byte for its size,
 * and sends them from where they lie before releasing their space.
 */
#ifndef JETT_AGENT_EVRING_H
#define JETT_AGENT_EVRING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define EVRING_LINE 64

/* The producer's and the consumer's words lie on different cache lines
 * (padding, not alignment: the ring lives in malloc'd memory), and the
 * producer reads the consumer's `tail` only when the space it saw last
 * is used up, so an append normally touches no line the consumer
 * writes. */
struct evring {
    uint8_t *buf;
    size_t cap; /* a power of two */
    char pad0[EVRING_LINE];
    _Atomic size_t head; /* bytes ever appended (producer) */
    size_t tail_seen;    /* producer only: tail when it last looked */
    char pad1[EVRING_LINE];
    _Atomic size_t tail; /* bytes ever consumed (consumer) */
    char pad2[EVRING_LINE];
};

/* 0, or -1 when memory runs out; cap is rounded up to a power of two. */
int evring_init(struct evring *r, size_t cap);
void evring_destroy(struct evring *r);

/* Producer: bytes free at `head`, looking at the consumer's tail again
 * only when fewer than n were free at the last look. */
static inline size_t evring_room(struct evring *r, size_t head, size_t n)
{
    size_t room = r->cap - (head - r->tail_seen);
    if (room >= n)
        return room;
    r->tail_seen = atomic_load_explicit(&r->tail, memory_order_acquire);
    return r->cap - (head - r->tail_seen);
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
    size_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    if (evring_room(r, head, n) < n)
        return false;
    size_t at = head & (r->cap - 1), first = r->cap - at;
    if (first >= n) {
        memcpy(r->buf + at, entry, n);
    } else {
        memcpy(r->buf + at, entry, first);
        memcpy(r->buf, entry + first, n - first);
    }
    atomic_store_explicit(&r->head, head + n, memory_order_release);
    return true;
}

/* Producer: where the next n bytes go when they fit in one piece (the
 * entry is then written in place and published by evring_commit); NULL
 * when the ring is full or the entry would wrap past its end. */
static inline uint8_t *evring_claim(struct evring *r, size_t n)
{
    size_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    size_t at = head & (r->cap - 1);
    if (r->cap - at < n || evring_room(r, head, n) < n)
        return NULL;
    return r->buf + at;
}

/* Producer: publishes the n bytes written where evring_claim pointed
 * (release: the consumer that sees the new head sees the bytes). */
static inline void evring_commit(struct evring *r, size_t n)
{
    size_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    atomic_store_explicit(&r->head, head + n, memory_order_release);
}

/* Bytes waiting for the consumer. */
static inline size_t evring_used(struct evring *r)
{
    size_t head = atomic_load_explicit(&r->head, memory_order_acquire);
    size_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    return head - tail;
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
 * the producer cannot overwrite them, until evring_release. */
size_t evring_peek(struct evring *r, size_t max, struct evring_run *run);

/* Consumer: gives the first n bytes waiting (a run that was peeked) back
 * to the producer. */
static inline void evring_release(struct evring *r, size_t n)
{
    size_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    atomic_store_explicit(&r->tail, tail + n, memory_order_release);
}

#endif
