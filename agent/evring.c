/* evring: allocation and the consumer side of the event ring. */
#include <stdlib.h>

#include "agent/evring.h"
#include "proto/wire.h"

_Static_assert(EVRING_MAX_CAP / WIRE_STACK_SIZE < EVRING_COUNT_MASK &&
                   WIRE_STACK_SIZE <= WIRE_SAMPLE_SIZE && WIRE_STACK_SIZE <= WIRE_ALLOC_SIZE,
               "a full ring's entries must be countable in a position's count field");
_Static_assert(WIRE_ALLOC_SIZE > WIRE_STACK_SIZE && WIRE_ALLOC_SIZE > WIRE_SAMPLE_SIZE &&
                   WIRE_ALLOC_SIZE > WIRE_TASK_SIZE && WIRE_TASK_SIZE >= WIRE_STACK_SIZE,
               "a run of ALLOC entries must be told by its size and count alone");

int evring_init(struct evring *r, size_t cap)
{
    if (cap > EVRING_MAX_CAP)
        return -1;
    size_t c = 1024;
    while (c < cap)
        c *= 2;
    r->buf = malloc(c);
    if (!r->buf)
        return -1;
    r->cap = c;
    atomic_init(&r->head, 0);
    atomic_init(&r->tail, 0);
    r->tail_seen = 0;
    return 0;
}

void evring_destroy(struct evring *r)
{
    free(r->buf);
    r->buf = NULL;
}

static size_t entry_size(uint8_t kind)
{
    return kind == WIRE_ENTRY_STACK    ? WIRE_STACK_SIZE
           : kind == WIRE_ENTRY_TASK   ? WIRE_TASK_SIZE
           : kind == WIRE_ENTRY_SAMPLE ? WIRE_SAMPLE_SIZE
                                       : WIRE_ALLOC_SIZE;
}

size_t evring_peek(struct evring *r, size_t max, struct evring_run *run)
{
    uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    size_t mask = r->cap - 1, at = evring_pos_bytes(tail) & mask;
    size_t n = evring_bytes_between(tail, head);
    run->count = evring_entries_between(tail, head);
    if (n > max && n == (size_t)run->count * WIRE_ALLOC_SIZE) {
        /* Only entries of the largest size add up to that: the frame
         * takes as many as fit. */
        run->count = (uint32_t)(max / WIRE_ALLOC_SIZE);
        n = (size_t)run->count * WIRE_ALLOC_SIZE;
    } else if (n > max) {
        /* Whole entries only: find the last boundary by the kind bytes. */
        size_t waiting = n;
        n = 0, run->count = 0;
        while (n < waiting) {
            size_t size = entry_size(r->buf[(at + n) & mask]);
            if (n + size > max)
                break;
            n += size;
            run->count++;
        }
    }
    size_t first = r->cap - at;
    run->piece[0] = r->buf + at, run->piece[1] = r->buf;
    run->len[0] = first >= n ? n : first;
    run->len[1] = n - run->len[0];
    return n;
}
