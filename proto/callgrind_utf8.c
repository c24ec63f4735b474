/* callgrind_utf8: incremental UTF-8 validation and UTF-16 unit counting. */
#include <string.h>

#include "proto/callgrind-internal.h"

void cg_utf8_init(struct cg_utf8 *u)
{
    *u = (struct cg_utf8){.line = 1};
}

/* Starts a sequence at lead byte c; returns -1 for a byte that cannot lead. */
static int utf8_lead(struct cg_utf8 *u, unsigned char c)
{
    if (c < 0x80) {
        u->units++;
        if (c == '\n')
            u->line++;
        return 0;
    }
    if (c >= 0xc2 && c <= 0xdf)
        u->need = 1, u->cp = c & 0x1f, u->min = 0x80;
    else if (c >= 0xe0 && c <= 0xef)
        u->need = 2, u->cp = c & 0x0f, u->min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4)
        u->need = 3, u->cp = c & 0x07, u->min = 0x10000;
    else
        return -1;
    return 0;
}

/* Adds a continuation byte; rejects overlong forms, surrogates, > U+10FFFF. */
static int utf8_cont(struct cg_utf8 *u, unsigned char c)
{
    if ((c & 0xc0) != 0x80)
        return -1;
    u->cp = (u->cp << 6) | (c & 0x3f);
    /* Check the range as early as the second byte allows. */
    if (--u->need == 0) {
        if (u->cp < u->min || u->cp > 0x10ffff || (u->cp >= 0xd800 && u->cp <= 0xdfff))
            return -1;
        u->units += u->cp >= 0x10000 ? 2 : 1;
    }
    return 0;
}

/* Newline bytes in an ASCII word (exact, no false positives). */
static unsigned word_newlines(uint64_t w)
{
    const uint64_t low7 = 0x7f7f7f7f7f7f7f7full;
    uint64_t t = w ^ 0x0a0a0a0a0a0a0a0aull;
    uint64_t zero = ~(((t & low7) + low7) | t | low7);
    /* one high bit per newline byte: sum the bytes with a multiply */
    return (unsigned)(((zero >> 7) * 0x0101010101010101ull) >> 56);
}

int cg_utf8_feed(struct cg_utf8 *u, const char *p, size_t n, struct cg_error *err)
{
    const unsigned char *s = (const unsigned char *)p;
    for (size_t i = 0; i < n; i++) {
        /* Fast path: whole words of ASCII between sequences. */
        while (u->need == 0 && n - i >= 8) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            if (w & 0x8080808080808080ull)
                break;
            u->units += 8, u->line += word_newlines(w), i += 8;
        }
        if (i == n)
            break;
        int rc = u->need ? utf8_cont(u, s[i]) : utf8_lead(u, s[i]);
        if (rc < 0)
            return cg_fail(err, CG_SYNTAX, u->line, "malformed UTF-8 (byte 0x%02x)", s[i]);
    }
    return 0;
}

int cg_utf8_finish(const struct cg_utf8 *u, struct cg_error *err)
{
    if (u->need)
        return cg_fail(err, CG_SYNTAX, u->line, "truncated UTF-8 sequence at end of input");
    return 0;
}

size_t cg_utf16_len(const char *s, size_t len)
{
    size_t units = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        units += (c & 0xc0) != 0x80;
        units += c >= 0xf0;
    }
    return units;
}

int cg_check_text(const char *s, size_t len, struct cg_error *err)
{
    if (memchr(s, '\0', len) || memchr(s, '\n', len))
        return cg_fail(err, CG_SYNTAX, 0, "text contains a NUL or newline character");
    struct cg_utf8 u;
    cg_utf8_init(&u);
    if (cg_utf8_feed(&u, s, len, err) < 0 || cg_utf8_finish(&u, err) < 0) {
        if (err)
            err->line = 0;
        return -1;
    }
    return 0;
}
