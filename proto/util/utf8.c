/* utf8: a table-free validator following RFC 3629's well-formed ranges. */
#include "proto/util/utf8.h"

#include <stdint.h>

/* Length of the sequence at p (1..4) or 0 when it is not well-formed. */
static size_t utf8_seq_len(const unsigned char *p, size_t left)
{
    unsigned char c = p[0];
    if (c < 0x80)
        return 1;
    size_t n;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0)
            lo = 0xA0;
        else if (c == 0xED)
            hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F;
    } else
        return 0;
    if (left < n || p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if ((p[i] & 0xC0) != 0x80)
            return 0;
    return n;
}

size_t utf8_char(const unsigned char *p, size_t left, uint32_t *cp)
{
    size_t n = utf8_seq_len(p, left);
    if (n == 0)
        return 0;
    uint32_t c = n == 1 ? p[0] : n == 2 ? p[0] & 0x1fu : n == 3 ? p[0] & 0x0fu : p[0] & 0x07u;
    for (size_t k = 1; k < n; k++)
        c = c << 6 | (p[k] & 0x3fu);
    *cp = c;
    return n;
}

bool utf8_valid(const char *s, size_t len, size_t *bad)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < len) {
        /* Fast path over ASCII runs. */
        if (p[i] < 0x80) {
            i++;
            continue;
        }
        size_t n = utf8_seq_len(p + i, len - i);
        if (n == 0) {
            if (bad)
                *bad = i;
            return false;
        }
        i += n;
    }
    return true;
}
