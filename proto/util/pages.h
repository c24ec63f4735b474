/*
 * pages: memory for large tables read at random (the aggregation's
 * live-allocation table and bucket arenas, the exports' live table).
 * Blocks of 2 MiB or more are aligned to 2 MiB and advised as transparent
 * huge pages: on the memory benchmark a 4 KiB-page TLB miss on every
 * live-table access cost as much as the cache miss itself.  Pages are
 * still touched lazily, so the process holds only what is used.
 */
#ifndef JETT_PROTO_PAGES_H
#define JETT_PROTO_PAGES_H

#include <stddef.h>

/* `n` bytes (n > 0), or NULL when memory runs out; contents are zero. */
void *pages_alloc(size_t n);
/* Frees a block of pages_alloc (NULL is ignored); `n` as allocated. */
void pages_free(void *p, size_t n);

#endif
