/* callgrind_num: integer tokens (UInt64, decimal or lowercase 0x hex). */
#include <string.h>

#include "proto/callgrind-internal.h"

/* Digit values for bases 10 and 16; 0xff for anything else. */
static const unsigned char digit_value[256] = {
    ['0'] = 0,  ['1'] = 1,  ['2'] = 2,  ['3'] = 3,  ['4'] = 4,  ['5'] = 5,  ['6'] = 6,  ['7'] = 7,
    ['8'] = 8,  ['9'] = 9,  ['a'] = 10, ['b'] = 11, ['c'] = 12, ['d'] = 13, ['e'] = 14, ['f'] = 15,
    ['A'] = 10, ['B'] = 11, ['C'] = 12, ['D'] = 13, ['E'] = 14, ['F'] = 15,
};

/* digit value of c in base 16 (0..15) or -1 */
static int hex_digit(char c)
{
    unsigned char u = (unsigned char)c;
    if (digit_value[u] == 0 && u != '0')
        return -1;
    return digit_value[u];
}

/* Fast path: up to 19 decimal or 16 hex digits cannot overflow; -1 when
 * the token needs the checked path (or is malformed). */
static int u64_short(const char *s, size_t len, uint64_t *v)
{
    uint64_t x = 0;
    if (len > 2 && s[0] == '0' && s[1] == 'x') {
        if (len - 2 > 16)
            return -1;
        for (size_t i = 2; i < len; i++) {
            int d = hex_digit(s[i]);
            if (d < 0)
                return -1;
            x = x << 4 | (uint64_t)d;
        }
    } else {
        if (len == 0 || len > 19)
            return -1;
        for (size_t i = 0; i < len; i++) {
            unsigned d = (unsigned)(unsigned char)s[i] - '0';
            if (d > 9)
                return -1;
            x = x * 10 + d;
        }
    }
    *v = x;
    return 0;
}

/* number -> "0x" hexdigit{1,20} | digit{1,20}; checked before each step */
int cg_u64(const char *s, size_t len, uint64_t *v, struct cg_error *err)
{
    if (u64_short(s, len, v) == 0)
        return 0;
    unsigned base = 10;
    if (len > 2 && s[0] == '0' && s[1] == 'x')
        base = 16, s += 2, len -= 2;
    if (len == 0)
        return cg_fail(err, CG_SYNTAX, 0, "expected a number");
    uint64_t x = 0;
    for (size_t i = 0; i < len; i++) {
        int d = base == 16 ? hex_digit(s[i]) : (s[i] >= '0' && s[i] <= '9' ? s[i] - '0' : -1);
        if (d < 0)
            return cg_fail(err, CG_SYNTAX, 0, "malformed number '%.*s'", (int)(len < 40 ? len : 40),
                           s);
        if (i >= CG_MAX_DIGITS)
            return cg_fail(err, CG_RESOURCE, 0, "number has more than %u digits", CG_MAX_DIGITS);
        if (x > (UINT64_MAX - (uint64_t)d) / base)
            return cg_fail(err, CG_RESOURCE, 0, "number exceeds 64 bits");
        x = x * base + (uint64_t)d;
    }
    *v = x;
    return 0;
}

/* Number of decimal digits of v. */
static size_t decimal_digits(uint64_t v)
{
    static const uint64_t pow10[19] = {10ull,
                                       100ull,
                                       1000ull,
                                       10000ull,
                                       100000ull,
                                       1000000ull,
                                       10000000ull,
                                       100000000ull,
                                       1000000000ull,
                                       10000000000ull,
                                       100000000000ull,
                                       1000000000000ull,
                                       10000000000000ull,
                                       100000000000000ull,
                                       1000000000000000ull,
                                       10000000000000000ull,
                                       100000000000000000ull,
                                       1000000000000000000ull,
                                       10000000000000000000ull};
    size_t n = 1;
    while (n < 20 && v >= pow10[n - 1])
        n++;
    return n;
}

size_t cg_fmt_u64(char *buf, uint64_t v)
{
    static const char pairs[] = "00010203040506070809101112131415161718192021222324"
                                "25262728293031323334353637383940414243444546474849"
                                "50515253545556575859606162636465666768697071727374"
                                "75767778798081828384858687888990919293949596979899";
    size_t n = decimal_digits(v), at = n;
    /* two digits per division, from the right */
    while (v >= 100) {
        unsigned r = (unsigned)(v % 100);
        v /= 100;
        memcpy(buf + at - 2, pairs + 2 * r, 2);
        at -= 2;
    }
    if (v >= 10)
        memcpy(buf + at - 2, pairs + 2 * v, 2);
    else
        buf[at - 1] = (char)('0' + v);
    return n;
}

int cg_u64_scan(const char **cur, const char *end, uint64_t *v)
{
    const char *p = *cur;
    while (p < end && cg_is_space(*p))
        p++;
    *cur = p;
    if (p == end)
        return 0;
    const char *t = p;
    uint64_t x = 0;
    if (end - p > 2 && p[0] == '0' && p[1] == 'x') {
        for (p += 2; p < end; p++) {
            unsigned d = digit_value[(unsigned char)*p];
            if (d == 0 && *p != '0')
                break;
            x = x << 4 | d;
        }
        if (p - t == 2 || p - t > 18)
            return -1;
    } else {
        for (unsigned d; p < end && (d = (unsigned)(unsigned char)*p - '0') <= 9; p++)
            x = x * 10 + d;
        if (p == t || p - t > 19)
            return -1;
    }
    if (p < end && !cg_is_space(*p))
        return -1;
    *cur = p, *v = x;
    return 1;
}
