/* radix: LSD radix sort of records by a 64-bit key (see radix.h). */
#include <stdint.h>
#include <string.h>

#include "proto/util/radix.h"

static uint64_t key_at(const unsigned char *rec, size_t key_off)
{
    uint64_t k;
    memcpy(&k, rec + key_off, sizeof k);
    return k;
}

static inline __attribute__((always_inline)) void scatter(const unsigned char *from,
                                                          unsigned char *to, size_t n, size_t size,
                                                          size_t key_off, unsigned shift,
                                                          size_t *start)
{
    for (size_t i = 0; i < n; i++) {
        const unsigned char *rec = from + i * size;
        memcpy(to + start[(key_at(rec, key_off) >> shift) & 0xff]++ * size, rec, size);
    }
}

void radix_sort(void **base, void **scratch, size_t n, size_t size, size_t key_off)
{
    unsigned char *from = *base, *to = *scratch;
    uint64_t all_or = 0, all_and = ~0ull;
    for (size_t i = 0; i < n; i++) {
        uint64_t k = key_at(from + i * size, key_off);
        all_or |= k, all_and &= k;
    }
    uint64_t varies = all_or ^ all_and;
    for (unsigned shift = 0; shift < 64; shift += 8) {
        if (((varies >> shift) & 0xff) == 0)
            continue;
        size_t start[257] = {0};
        for (size_t i = 0; i < n; i++)
            start[((key_at(from + i * size, key_off) >> shift) & 0xff) + 1]++;
        for (unsigned b = 0; b < 256; b++)
            start[b + 1] += start[b];
        /* a constant size lets the copy be a few moves, not a call */
        if (size == 24)
            scatter(from, to, n, 24, key_off, shift, start);
        else if (size == 16)
            scatter(from, to, n, 16, key_off, shift, start);
        else
            scatter(from, to, n, size, key_off, shift, start);
        unsigned char *t = from;
        from = to, to = t;
    }
    *base = from, *scratch = to;
}
