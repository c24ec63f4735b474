/*
 * pages: memory for large tables read at random (the aggregation's
 * live-allocation table and bucket arenas, the exports' live table).
 * Blocks of 2 MiB or more are aligned to 2 MiB and advised as transparent
 * huge pages once 2 MiB of them are in use (pages_in_use): on the memory
 * benchmark a 4 KiB-page TLB miss on every live-table access cost as
 * much as the cache miss itself, but advised from the start the first
 * touch of a block made a whole 2 MiB page resident, 4 MiB of a small
 * profile's peak RSS for the arena and the live window.  Pages are
 * touched lazily, so the process holds only what is used.
 */
#ifndef JETT_PROTO_PAGES_H
#define JETT_PROTO_PAGES_H

#include <stddef.h>

/* `n` bytes (n > 0), or NULL when memory runs out; contents are zero. */
void *pages_alloc(size_t n);
/* The first `before` bytes of block p (`n` bytes as allocated) were in
 * use and now the first `after` are: once they reach 2 MiB the block is
 * advised as huge pages. */
void pages_in_use(void *p, size_t n, size_t before, size_t after);
/* Frees a block of pages_alloc (NULL is ignored); `n` as allocated. */
void pages_free(void *p, size_t n);

#endif
