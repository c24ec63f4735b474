/* callgrind_num: integer tokens (UInt64, decimal or lowercase 0x hex). */
#include "proto/callgrind-internal.h"

/* digit value of c in base 16 (0..15) or -1 */
static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* number -> "0x" hexdigit{1,20} | digit{1,20}; checked before each step */
int cg_u64(const char *s, size_t len, uint64_t *v, struct cg_error *err)
{
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

size_t cg_fmt_u64(char *buf, uint64_t v)
{
    char tmp[20];
    size_t n = 0;
    do
        tmp[n++] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    for (size_t i = 0; i < n; i++)
        buf[i] = tmp[n - 1 - i];
    return n;
}
