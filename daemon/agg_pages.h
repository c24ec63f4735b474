/*
 * agg_pages: memory for the large tables the aggregation reads at random
 * (the live-allocation table, the bucket arenas).  Blocks of 2 MiB or
 * more are aligned to 2 MiB and advised as transparent huge pages: on the
 * memory benchmark a 4 KiB-page TLB miss on every live-table access cost
 * as much as the cache miss itself.  Pages are still touched lazily, so
 * the process holds only what is used.
 */
#ifndef JETT_DAEMON_AGG_PAGES_H
#define JETT_DAEMON_AGG_PAGES_H

#include <stddef.h>

/* `n` bytes (n > 0), or NULL when memory runs out; contents are zero. */
void *agg_pages_alloc(size_t n);
/* Frees a block of agg_pages_alloc (NULL is ignored); `n` as allocated. */
void agg_pages_free(void *p, size_t n);

#endif
