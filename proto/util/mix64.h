/* mix64: a 64-bit finalizer (splitmix64's) that spreads keys over a
 * power-of-two table, for the exports' hash tables. */
#ifndef JETT_PROTO_MIX64_H
#define JETT_PROTO_MIX64_H

#include <stdint.h>

static inline uint64_t mix64(uint64_t x)
{
    x ^= x >> 30, x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27, x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

#endif
