/* escape: control, format and invalid units shown as \xNN (escape.h). */
#include <stdint.h>
#include <stdlib.h>

#include "daemon/escape.h"
#include "proto/util/utf8.h"

/* Unicode 14.0's characters of general category Cf, as ranges; the list
 * jett-profile(7) gives. */
static const struct {
    uint32_t lo, hi;
} format_chars[] = {
    {0x00ad, 0x00ad},   {0x0600, 0x0605},   {0x061c, 0x061c},   {0x06dd, 0x06dd},
    {0x070f, 0x070f},   {0x0890, 0x0891},   {0x08e2, 0x08e2},   {0x180e, 0x180e},
    {0x200b, 0x200f},   {0x202a, 0x202e},   {0x2060, 0x2064},   {0x2066, 0x206f},
    {0xfeff, 0xfeff},   {0xfff9, 0xfffb},   {0x110bd, 0x110bd}, {0x110cd, 0x110cd},
    {0x13430, 0x13438}, {0x1bca0, 0x1bca3}, {0x1d173, 0x1d17a}, {0xe0001, 0xe0001},
    {0xe0020, 0xe007f},
};

static bool is_format(uint32_t cp)
{
    for (size_t i = 0; i < sizeof format_chars / sizeof format_chars[0]; i++)
        if (cp <= format_chars[i].hi)
            return cp >= format_chars[i].lo;
    return false;
}

size_t escape_unit(const char *s, size_t n, bool *escaped)
{
    const unsigned char *p = (const unsigned char *)s;
    if (p[0] < 0x80) {
        *escaped = p[0] < 0x20 || p[0] == 0x7f;
        return 1;
    }
    uint32_t cp;
    size_t len = utf8_char(p, n, &cp);
    if (len == 0) {
        *escaped = true;
        return 1;
    }
    *escaped = cp < 0xa0 || cp == 0xfffe || cp == 0xffff || is_format(cp);
    return len;
}

bool escape_needed(const char *s, size_t n)
{
    bool esc = false;
    for (size_t i = 0; i < n && !esc;)
        i += escape_unit(s + i, n - i, &esc);
    return esc;
}

size_t escape_len(const char *s, size_t n)
{
    size_t out = 0;
    for (size_t i = 0; i < n;) {
        bool esc;
        size_t u = escape_unit(s + i, n - i, &esc);
        out += esc ? 4 * u : u;
        i += u;
    }
    return out;
}

size_t escape_copy(char *dst, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    size_t out = 0;
    for (size_t i = 0; i < n;) {
        bool esc;
        size_t u = escape_unit(s + i, n - i, &esc);
        for (size_t k = 0; k < u; k++, i++) {
            unsigned char c = (unsigned char)s[i];
            if (!esc) {
                dst[out++] = (char)c;
                continue;
            }
            dst[out++] = '\\', dst[out++] = 'x';
            dst[out++] = hex[c >> 4], dst[out++] = hex[c & 15];
        }
    }
    return out;
}

char *escape_dup(const char *s, size_t n, size_t *len)
{
    size_t m = escape_len(s, n);
    char *d = malloc(m + 1);
    if (!d)
        return NULL;
    escape_copy(d, s, n);
    d[m] = 0;
    if (len)
        *len = m;
    return d;
}

void escape_fwrite(FILE *f, const char *s, size_t n)
{
    char buf[256]; /* a unit escaped is at most 16 bytes */
    size_t used = 0;
    for (size_t i = 0; i < n;) {
        bool esc;
        size_t u = escape_unit(s + i, n - i, &esc);
        if (used + 16 > sizeof buf)
            fwrite(buf, 1, used, f), used = 0;
        used += escape_copy(buf + used, s + i, u);
        i += u;
    }
    fwrite(buf, 1, used, f);
}
