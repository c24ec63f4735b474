/*
 * live_table: live allocations by id, allocation id -> a packed 64-bit
 * record (its size and creation site), with open addressing and linear
 * probing; memory mode's aggregation and the memory exports keep the
 * records of older ids here, those of recent ids in a live_window.
 *
 * The home slot of an id is the top bits of its Fibonacci hash, so a
 * doubling sends home h to 2h or 2h + 1: a rehash walks the old table
 * front to back and writes the new one almost in order instead of at
 * random.  A removal shifts the later members of its run back, so there
 * are no tombstones and lookups stop at the first empty slot.  The caller
 * decides when to grow (and charges the bytes): an insert needs a free
 * slot and an id that is not in the table.
 */
#ifndef JETT_PROTO_LIVE_TABLE_H
#define JETT_PROTO_LIVE_TABLE_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

struct live_slot {
    uint64_t id; /* LIVE_EMPTY: free slot */
    uint64_t size_site;
};
#define LIVE_EMPTY UINT64_MAX
#define LIVE_TABLE_MIN_CAP 256u

struct live_table {
    struct live_slot *slots;
    uint64_t *cre;   /* with creators: a word beside each slot, moving
                      * with it, else NULL */
    uint64_t cap, n; /* cap: 0 or a power of two */
    unsigned shift;  /* 64 - log2(cap) */
    bool creators;   /* set before the first resize */
};

static inline size_t live_table_bytes(uint64_t cap)
{
    return (size_t)cap * sizeof(struct live_slot);
}

/* What `cap` slots cost, the creators' words included. */
static inline size_t live_table_cost(const struct live_table *t, uint64_t cap)
{
    return live_table_bytes(cap) + (t->creators ? (size_t)cap * sizeof(uint64_t) : 0);
}

/* The first slot an id's probe looks at; the table must have slots. */
static inline uint64_t live_table_home(const struct live_table *t, uint64_t id)
{
    return (id * UINT64_C(0x9e3779b97f4a7c15)) >> t->shift;
}

/* The slot holding id, or NULL. */
struct live_slot *live_table_find(const struct live_table *t, uint64_t id);
/* Adds an id that is not in the table (with its creator's word, when
 * the table keeps them); a free slot must exist. */
void live_table_insert(struct live_table *t, uint64_t id, uint64_t size_site, uint64_t cre);
/* Empties a slot found by live_table_find. */
void live_table_remove(struct live_table *t, struct live_slot *slot);
/* Rehashes into `cap` slots (a power of two above n); -1 when memory
 * runs out, leaving the table as it was. */
int live_table_resize(struct live_table *t, uint64_t cap);
void live_table_free(struct live_table *t);

#endif
