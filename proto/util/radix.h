/*
 * radix: a stable sort of fixed-size records by an unsigned 64-bit key
 * inside each record, least significant byte first, in linear time.
 * Bytes that every key shares are skipped, so small keys cost few passes.
 */
#ifndef JETT_PROTO_RADIX_H
#define JETT_PROTO_RADIX_H

#include <stddef.h>

/* Sorts n records of `size` bytes at *base by the uint64_t at byte
 * key_off of each.  scratch holds n records too; the sorted records end
 * in *base, which may swap with *scratch. */
void radix_sort(void **base, void **scratch, size_t n, size_t size, size_t key_off);

#endif
