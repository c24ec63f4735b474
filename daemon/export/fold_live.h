/*
 * fold_live: the memory exports' live allocations, id -> size and
 * creation site (a STACK id, or FOLD_NO_SITE).
 *
 * An allocation whose size is below 2^40 and whose site is below 2^24 - 2,
 * with an id above every such id before it (ids increase in every capture
 * the collector writes), is a packed record in a live_track: recent ids in
 * a window, older ones in a hashed table, as in the aggregation, so that
 * adding is sequential and most lookups cost one line.  Any other
 * allocation is a full entry in a small hash table of its own.
 */
#ifndef JETT_PROTO_FOLD_LIVE_H
#define JETT_PROTO_FOLD_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/live_track.h"

#define FOLD_NO_SITE UINT32_MAX

struct fold_wide;

struct fold_lives {
    struct live_track track; /* packed records */
    uint64_t top;            /* the last id the track took */
    bool any;                /* whether it took one */
    struct fold_wide *wide;  /* full entries: linear probing, backward-shift deletion */
    size_t n_wide, wide_cap;
};

/* A live allocation found: its packed record or its full entry. */
struct fold_live_ref {
    uint64_t id;
    uint64_t *rec;
    struct fold_wide *wide;
};

/* Whether `id` is live; *ref names it then. */
bool fold_lives_find(struct fold_lives *l, uint64_t id, struct fold_live_ref *ref);
/* Adds an id that is not live: 0, or -1 when memory runs out. */
int fold_lives_add(struct fold_lives *l, uint64_t id, uint64_t size, uint32_t site);
uint64_t fold_live_size(const struct fold_live_ref *ref);
uint32_t fold_live_site(const struct fold_live_ref *ref);
/* Sets a live allocation's size (ref stays valid only on success): 0, or
 * -1 when memory runs out (it is then unchanged). */
int fold_lives_resize(struct fold_lives *l, struct fold_live_ref *ref, uint64_t size);
void fold_lives_remove(struct fold_lives *l, const struct fold_live_ref *ref);
/* Starts loading what a lookup of `id` will read. */
void fold_lives_prefetch(const struct fold_lives *l, uint64_t id);
void fold_lives_free(struct fold_lives *l);

#endif
