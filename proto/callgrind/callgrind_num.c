/* callgrind_num: integer tokens (UInt64, decimal or lowercase 0x hex). */
#include <string.h>

#include "proto/callgrind/callgrind-internal.h"

/* Digit value + 1 for bases 10 and 16; 0 for anything else, so that one
 * unsigned compare after subtracting 1 tells a digit. */
static const unsigned char digit_plus1[256] = {
    ['0'] = 1,  ['1'] = 2,  ['2'] = 3,  ['3'] = 4,  ['4'] = 5,  ['5'] = 6,  ['6'] = 7,  ['7'] = 8,
    ['8'] = 9,  ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
    ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

/*
 * Hex tokens (instruction addresses, on most lines of valgrind's output)
 * are read a word at a time when the input has 8 bytes after the 0x:
 * lanes are the bytes, the first in the lowest, and no step carries from
 * one lane into the next.
 */
#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull

/* High bit of each lane whose 7-bit value lies in [lo, hi]. */
static inline uint64_t lanes_in(uint64_t low7, unsigned lo, unsigned hi)
{
    return (low7 + (0x80 - lo) * ONES) & ~(low7 + (0x7f - hi) * ONES) & HIGHS;
}

/* The token of 1 to 7 hex digits at d, ended by a blank or a newline in
 * the 8 bytes read: 1 with *v and *end set, 0 for 8 digits or more (the
 * loop takes those), -1 when it is not a plain token. */
static inline int hex_word(const char *d, uint64_t *v, const char **end)
{
    uint64_t w;
    memcpy(&w, d, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    uint64_t low7 = w & ~HIGHS;
    uint64_t other = ~(lanes_in(low7, '0', '9') | lanes_in(low7 | 0x20 * ONES, 'a', 'f')) | w;
    if ((other &= HIGHS) == 0)
        return 0;
    unsigned n = (unsigned)__builtin_ctzll(other) >> 3;
    char c = d[n];
    if (n == 0 || !(cg_is_space(c) || c == '\n'))
        return -1;
    /* digit values (letters have bit 6), shifted so that zeros lead; then
     * pairs, quads and octets: x * (16 * 2^k + 1) >> k combines lanes */
    uint64_t x = ((w & 0x0f * ONES) + ((w >> 6) & ONES) * 9) << (64 - 8 * n);
    x = (x * 4097) >> 8 & 0x00ff00ff00ff00ffull;
    x = (x * 16777217) >> 16 & 0x0000ffff0000ffffull;
    *v = (x * 281474976710657ull) >> 32;
    *end = d + n;
    return 1;
}

/* A plain token at p (p < end): up to 19 decimal or 16 hex digits, which
 * cannot overflow, then end, a blank or a newline.  Returns the end of the
 * token, or NULL when it needs the checked path of cg_u64 (or is not a
 * number).  Always inlined: in the line scanner a call per token costs
 * more than the word path saves. */
__attribute__((always_inline)) static inline const char *plain_u64(const char *p, const char *end,
                                                                   uint64_t *v)
{
    /* one digit and a separator: line 0, small costs */
    unsigned d = (unsigned)(unsigned char)p[0] - '0';
    if (d <= 9 && end - p >= 2 && (cg_is_space(p[1]) || p[1] == '\n')) {
        *v = d;
        return p + 1;
    }
    bool hex = end - p > 2 && p[0] == '0' && p[1] == 'x';
    if (hex && end - p >= 10) {
        const char *e;
        int rc = hex_word(p + 2, v, &e);
        if (rc != 0)
            return rc > 0 ? e : NULL;
    }
    const char *t = p;
    uint64_t x = 0;
    if (hex) {
        for (p += 2; p < end && (d = digit_plus1[(unsigned char)*p] - 1u) < 16; p++)
            x = x << 4 | d;
        if (p - t == 2 || p - t > 18)
            return NULL;
    } else {
        for (; p < end && (d = (unsigned)(unsigned char)*p - '0') <= 9; p++)
            x = x * 10 + d;
        if (p == t || p - t > 19)
            return NULL;
    }
    if (p < end && !cg_is_space(*p) && *p != '\n')
        return NULL;
    *v = x;
    return p;
}

/* number -> "0x" hexdigit{1,20} | digit{1,20}; checked before each step */
int cg_u64(const char *s, size_t len, uint64_t *v, struct cg_error *err)
{
    if (len && plain_u64(s, s + len, v) == s + len)
        return 0;
    unsigned base = 10;
    if (len > 2 && s[0] == '0' && s[1] == 'x')
        base = 16, s += 2, len -= 2;
    if (len == 0)
        return cg_fail(err, CG_SYNTAX, 0, "expected a number");
    uint64_t x = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned d = digit_plus1[(unsigned char)s[i]] - 1u;
        if (d >= base)
            return cg_fail(err, CG_SYNTAX, 0, "malformed number '%.*s'", (int)(len < 40 ? len : 40),
                           s);
        if (i >= CG_MAX_DIGITS)
            return cg_fail(err, CG_RESOURCE, 0, "number has more than %u digits", CG_MAX_DIGITS);
        if (x > (UINT64_MAX - d) / base)
            return cg_fail(err, CG_RESOURCE, 0, "number exceeds 64 bits");
        x = x * base + d;
    }
    *v = x;
    return 0;
}

int cg_u64_scan(const char **cur, const char *end, uint64_t *v)
{
    const char *p = *cur;
    while (p < end && cg_is_space(*p))
        p++;
    *cur = p;
    if (p == end)
        return 0;
    if ((p = plain_u64(p, end, v)) == NULL)
        return -1;
    *cur = p;
    return 1;
}

size_t cg_u64_scan_line(const char **cur, const char *end, uint64_t *out, size_t max)
{
    const char *p = *cur;
    for (size_t n = 0;; n++) {
        while (p < end && cg_is_space(*p))
            p++;
        if (p == end || *p == '\n') {
            *cur = p;
            return n;
        }
        if (n == max || (p = plain_u64(p, end, &out[n])) == NULL)
            return SIZE_MAX;
    }
}
