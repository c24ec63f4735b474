/*
 * decimal: an unsigned integer as decimal digits, for writers of millions
 * of numbers where printf's parsing of the format would dominate.
 */
#ifndef JETT_PROTO_DECIMAL_H
#define JETT_PROTO_DECIMAL_H

#include <stddef.h>
#include <stdint.h>

/* Writes v's digits at d (at most 20, no NUL); returns how many. */
static inline size_t decimal_u64(char *d, uint64_t v)
{
    char tmp[20];
    size_t n = 0;
    do
        tmp[n++] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    for (size_t i = 0; i < n; i++)
        d[i] = tmp[n - 1 - i];
    return n;
}

#endif
