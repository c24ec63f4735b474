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

size_t evring_take(struct evring *r, uint8_t *dst, size_t max, uint32_t *count)
{
    size_t head = atomic_load_explicit(&r->head, memory_order_acquire);
    size_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    size_t mask = r->cap - 1, n = 0;
    /* Whole entries only: find the boundary by the kind bytes, then copy
     * the run in one or two pieces. */
    *count = 0;
    while (tail + n < head) {
        size_t size = entry_size(r->buf[(tail + n) & mask]);
        if (n + size > max)
            break;
        n += size;
        (*count)++;
    }
    size_t at = tail & mask, first = r->cap - at;
    if (first >= n) {
        memcpy(dst, r->buf + at, n);
    } else {
        memcpy(dst, r->buf + at, first);
        memcpy(dst + first, r->buf, n - first);
    }
    atomic_store_explicit(&r->tail, tail + n, memory_order_release);
    return n;
}
