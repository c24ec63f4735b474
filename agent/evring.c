/* evring: allocation and the consumer side of the event ring. */
#include <stdlib.h>

#include "agent/evring.h"
#include "proto/wire.h"
#include "proto/wire_compact.h"

_Static_assert(EVRING_MAX_CAP / WIRE_COMPACT_MIN < EVRING_COUNT_MASK &&
                   WIRE_COMPACT_MIN <= WIRE_STACK_SIZE && WIRE_COMPACT_MIN <= WIRE_TASK_SIZE,
               "a full ring's entries must be countable in a position's count field");

int evring_init(struct evring *r, size_t cap)
{
    if (cap > EVRING_MAX_CAP)
        return -1;
    size_t c = 1024;
    while (c < cap)
        c *= 2;
    size_t marks = c >= 2 * EVRING_MARK_CHUNK ? c >> EVRING_MARK_SHIFT : 0;
    r->buf = malloc(c);
    r->marks = marks ? calloc(marks, sizeof *r->marks) : NULL;
    if (!r->buf || (marks && !r->marks)) {
        free(r->buf);
        free(r->marks);
        return -1;
    }
    r->cap = c;
    r->n_marks = marks;
    atomic_init(&r->head, 0);
    atomic_init(&r->tail, 0);
    r->written = r->published = r->tail_seen = 0;
    return 0;
}

void evring_destroy(struct evring *r)
{
    free(r->buf);
    free(r->marks);
    r->buf = NULL;
    r->marks = NULL;
}

/* The size of the entry at ring offset `at`, read through a copy of its
 * first bytes (it may wrap); 0 when it is no entry. */
static size_t entry_size(const struct evring *r, size_t at, size_t avail)
{
    uint8_t e[WIRE_COMPACT_MAX];
    size_t n = avail < sizeof e ? avail : sizeof e;
    for (size_t i = 0; i < n; i++)
        e[i] = r->buf[(at + i) & (r->cap - 1)];
    switch (n ? e[0] : 0) {
    case WIRE_ENTRY_STACK:
        return WIRE_STACK_SIZE;
    case WIRE_ENTRY_TASK:
        return WIRE_TASK_SIZE;
    case WIRE_ENTRY_SAMPLE:
        return WIRE_SAMPLE_SIZE;
    case WIRE_ENTRY_ALLOC:
        return WIRE_ALLOC_SIZE;
    default:
        return wire_compact_size(e, e + n);
    }
}

/* The position of the mark that cuts what waits from tail at most `max`
 * bytes on, or tail when there is none. */
static uint64_t mark_cut(const struct evring *r, uint64_t tail, size_t max)
{
    if (!r->n_marks || max < 2 * EVRING_MARK_CHUNK)
        return tail;
    uint64_t from = evring_pos_bytes(tail);
    uint64_t chunk = ((from + max) >> EVRING_MARK_SHIFT) - 1;
    uint64_t m = atomic_load_explicit(&r->marks[chunk & (r->n_marks - 1)], memory_order_acquire);
    uint64_t at = evring_pos_bytes(m);
    /* a mark of this lap of the ring, past tail and within max */
    if ((at >> EVRING_MARK_SHIFT) != (chunk & (EVRING_BYTES_MASK >> EVRING_MARK_SHIFT)) ||
        evring_bytes_between(tail, m) == 0 || evring_bytes_between(tail, m) > max)
        return tail;
    return m;
}

size_t evring_peek(struct evring *r, size_t max, struct evring_run *run)
{
    return evring_peek_at(r, atomic_load_explicit(&r->tail, memory_order_relaxed), max, run);
}

size_t evring_peek_at(struct evring *r, uint64_t tail, size_t max, struct evring_run *run)
{
    uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
    size_t mask = r->cap - 1, at = evring_pos_bytes(tail) & mask;
    size_t n = evring_bytes_between(tail, head);
    run->count = evring_entries_between(tail, head);
    if (n > max) {
        uint64_t cut = mark_cut(r, tail, max);
        n = evring_bytes_between(tail, cut);
        run->count = evring_entries_between(tail, cut);
        if (n == 0) {
            /* no mark: whole entries by their sizes */
            size_t waiting = evring_bytes_between(tail, head);
            while (n < waiting) {
                size_t size = entry_size(r, at + n, waiting - n);
                if (size == 0 || n + size > max)
                    break;
                n += size;
                run->count++;
            }
        }
    }
    size_t first = r->cap - at;
    run->piece[0] = r->buf + at, run->piece[1] = r->buf;
    run->len[0] = first >= n ? n : first;
    run->len[1] = n - run->len[0];
    run->end = evring_pos_add(tail, n, run->count);
    return n;
}
