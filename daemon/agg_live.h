/*
 * agg_live: memory mode's live-allocation table, allocation id -> packed
 * size and creation site, with open addressing and linear probing.
 *
 * The home slot of an id is the top bits of its Fibonacci hash, so a
 * doubling sends home h to 2h or 2h + 1: a rehash walks the old table
 * front to back and writes the new one almost in order instead of at
 * random.  A removal shifts the later members of its run back, so there
 * are no tombstones and lookups stop at the first empty slot.  The caller
 * decides when to grow (and charges the bytes): an insert needs a free
 * slot and an id that is not in the table.
 */
#ifndef JETT_DAEMON_AGG_LIVE_H
#define JETT_DAEMON_AGG_LIVE_H

#include <stdint.h>
#include <stddef.h>

struct agg_live {
    uint64_t id; /* AGG_LIVE_EMPTY: free slot */
    uint64_t size_site;
};
#define AGG_LIVE_EMPTY UINT64_MAX
#define AGG_LIVE_MIN_CAP 256u

struct agg_live_table {
    struct agg_live *slots;
    uint64_t cap, n; /* cap: 0 or a power of two */
    unsigned shift;  /* 64 - log2(cap) */
};

static inline size_t agg_live_bytes(uint64_t cap)
{
    return (size_t)cap * sizeof(struct agg_live);
}

/* The first slot an id's probe looks at; the table must have slots. */
static inline uint64_t agg_live_home(const struct agg_live_table *t, uint64_t id)
{
    return (id * UINT64_C(0x9e3779b97f4a7c15)) >> t->shift;
}

/* The slot holding id, or NULL. */
struct agg_live *agg_live_find(const struct agg_live_table *t, uint64_t id);
/* Adds an id that is not in the table; a free slot must exist. */
void agg_live_insert(struct agg_live_table *t, uint64_t id, uint64_t size_site);
/* Empties a slot found by agg_live_find. */
void agg_live_remove(struct agg_live_table *t, struct agg_live *slot);
/* Rehashes into `cap` slots (a power of two above n); -1 when memory
 * runs out, leaving the table as it was. */
int agg_live_resize(struct agg_live_table *t, uint64_t cap);
void agg_live_free(struct agg_live_table *t);

#endif
