/* evring: allocation and the consumer side of the event ring. */
#include <stdlib.h>

#include "agent/evring.h"
#include "proto/wire.h"

int evring_init(struct evring *r, size_t cap)
{
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
           : kind == WIRE_ENTRY_SAMPLE ? WIRE_SAMPLE_SIZE
                                       : WIRE_ALLOC_SIZE;
}

size_t evring_peek(struct evring *r, size_t max, struct evring_run *run)
{
    size_t head = atomic_load_explicit(&r->head, memory_order_acquire);
    size_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    size_t mask = r->cap - 1, n = 0;
    /* Whole entries only: find the boundary by the kind bytes. */
    run->count = 0;
    while (tail + n < head) {
        size_t size = entry_size(r->buf[(tail + n) & mask]);
        if (n + size > max)
            break;
        n += size;
        run->count++;
    }
    size_t at = tail & mask, first = r->cap - at;
    run->piece[0] = r->buf + at, run->piece[1] = r->buf;
    run->len[0] = first >= n ? n : first;
    run->len[1] = n - run->len[0];
    return n;
}
