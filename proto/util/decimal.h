/* decimal: unsigned integers as decimal digits, inline for writers of
 * millions of numbers (the Callgrind normalizer and export, folded stack
 * lines) where printf's parsing of a format would dominate. */
#ifndef JETT_PROTO_DECIMAL_H
#define JETT_PROTO_DECIMAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Number of decimal digits of 100 <= v < 10^8: log10 from the bit length
 * (1233/4096 is just above log10 2), corrected by one compare. */
static inline unsigned decimal_width(uint32_t v)
{
    static const uint32_t pow10[9] = {1,      10,      100,      1000,     10000,
                                      100000, 1000000, 10000000, 100000000};
    unsigned t = (unsigned)(32 - __builtin_clz(v)) * 1233u >> 12;
    return t + (v >= pow10[t]);
}

/*
 * The 8 decimal digits of v < 10^8, leading zeros included, as ASCII in a
 * word whose lowest byte is the first digit: the divisions by 10^4, 100
 * and 10 run on all lanes at once, with no dependency from one digit pair
 * to the next (x * 10486 >> 20 is x / 100 for x < 10^4, x * 103 >> 10 is
 * x / 10 for x < 100, and no lane's product reaches the next).
 */
static inline uint64_t decimal_digits8(uint32_t v)
{
    uint64_t x = v / 10000 | (uint64_t)(v % 10000) << 32;
    uint64_t q = (x * 10486 >> 20) & 0x0000007f0000007full;
    x = q | (x - q * 100) << 16;
    q = (x * 103 >> 10) & 0x000f000f000f000full;
    x = q | (x - q * 10) << 8;
    return x + 0x3030303030303030ull;
}

/* Stores a word of decimal_digits8, first digit first. */
static inline void decimal_store8(char *buf, uint64_t w)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    memcpy(buf, &w, 8);
}

/* Writes v in decimal (no NUL); returns its length (at most 20).  Up to 7
 * bytes past it may be overwritten (a whole word is stored): buf needs
 * room for 20. */
static inline size_t decimal_u64(char *buf, uint64_t v)
{
    if (v < 100) { /* most costs and line numbers */
        buf[0] = (char)('0' + (v < 10 ? v : v / 10));
        buf[1] = (char)('0' + v % 10);
        return 1 + (v >= 10);
    }
    if (v < 100000000) {
        unsigned n = decimal_width((uint32_t)v);
        decimal_store8(buf, decimal_digits8((uint32_t)v) >> (64 - 8 * n));
        return n;
    }
    uint64_t hi = v / 100000000;
    size_t n = decimal_u64(buf, hi);
    decimal_store8(buf + n, decimal_digits8((uint32_t)(v - hi * 100000000)));
    return n + 8;
}

/* Writes n numbers in decimal separated by single spaces (no NUL); returns
 * the length (at most 21 * n).  buf needs room for 21 * n + 7 bytes. */
static inline size_t decimal_u64s(char *buf, const uint64_t *v, size_t n)
{
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        if (i)
            buf[at++] = ' ';
        at += decimal_u64(buf + at, v[i]);
    }
    return at;
}

#endif
