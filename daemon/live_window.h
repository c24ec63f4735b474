/*
 * live_window: the live records of the most recent allocation ids, one
 * 8-byte slot per id (the packed size and creation site), found
 * by the id alone.  Ids increase at each allocation, so the window covers
 * [base, base + cap) and slides forward; records of older ids that are
 * still live move to the live table (live_table.h), which the caller
 * manages.  A slot that holds no live record is LIVE_EMPTY, which no
 * packed record equals.
 */
#ifndef JETT_PROTO_LIVE_WINDOW_H
#define JETT_PROTO_LIVE_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/live_table.h"

#define LIVE_WINDOW_MIN_CAP 256u

struct live_window {
    uint64_t *slots; /* slot of id: slots[id & (cap - 1)] */
    uint64_t *cre;   /* with creators: a word beside each slot (its
                      * creator, as the caller writes it), else NULL */
    bool creators;   /* set before the first resize */
    uint64_t cap;    /* 0 or a power of two */
    uint64_t base;   /* the oldest id the window covers */
    uint64_t n;      /* live records in it */
    uint64_t first;  /* no live record is below this id (the first id
                      * placed since the window was last empty) */
    size_t reserved; /* address space behind slots, touched only up to cap */
};

static inline size_t live_window_bytes(uint64_t cap)
{
    return (size_t)cap * sizeof(uint64_t);
}

/* What `cap` slots cost, the creators' words included. */
static inline size_t live_window_cost(const struct live_window *w, uint64_t cap)
{
    return live_window_bytes(cap) * (w->creators ? 2 : 1);
}

/* The slot of id when the window covers it, else NULL. */
static inline uint64_t *live_window_slot(const struct live_window *w, uint64_t id)
{
    return id - w->base < w->cap ? &w->slots[id & (w->cap - 1)] : NULL;
}

/* Places the record of a new id the window covers. */
static inline void live_window_put(struct live_window *w, uint64_t id, uint64_t rec)
{
    if (w->n++ == 0)
        w->first = id;
    w->slots[id & (w->cap - 1)] = rec;
}

/* Sets up the window with `cap` slots (a power of two) from `base`,
 * reserving `reserve` bytes of address space for its growth, or doubles
 * it in place (only the new half's pages are new); -1 when memory runs
 * out or the reservation is too small, leaving it as it was. */
int live_window_resize(struct live_window *w, uint64_t cap, uint64_t base, size_t reserve);
void live_window_free(struct live_window *w);

#endif
