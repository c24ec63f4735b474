/* callgrind_utf8: incremental UTF-8 validation and UTF-16 unit counting. */
#include <string.h>

#include "proto/callgrind/callgrind-internal.h"

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

#define HIGH_BITS 0x8080808080808080ull

/* One per newline byte lane of an all-ASCII word (lanes hold 0 or 1): the
 * bytes are below 0x80, so adding 0x7f never carries between lanes. */
static inline uint64_t newline_lanes(uint64_t w)
{
    uint64_t t = w ^ 0x0a0a0a0a0a0a0a0aull;
    return (~(t + 0x7f7f7f7f7f7f7f7full) & HIGH_BITS) >> 7;
}

/* Length of the all-ASCII prefix of s taken in whole words (a multiple of
 * 8); its newlines are added to *lines unless lines is NULL.  Four words
 * per step: one test for the high bits and one multiply to sum the newline
 * lanes (at most 4 each). */
static inline size_t ascii_words(const unsigned char *s, size_t n, uint64_t *lines)
{
    size_t i = 0;
    uint64_t w[4];
    for (; n - i >= sizeof w; i += sizeof w) {
        memcpy(w, s + i, sizeof w);
        if ((w[0] | w[1] | w[2] | w[3]) & HIGH_BITS)
            break;
        if (lines) {
            uint64_t lanes = newline_lanes(w[0]) + newline_lanes(w[1]) + newline_lanes(w[2]) +
                             newline_lanes(w[3]);
            *lines += (lanes * 0x0101010101010101ull) >> 56;
        }
    }
    for (; n - i >= 8; i += 8) {
        memcpy(w, s + i, 8);
        if (w[0] & HIGH_BITS)
            break;
        if (lines)
            *lines += (newline_lanes(w[0]) * 0x0101010101010101ull) >> 56;
    }
    return i;
}

/* Decodes s[0, n) from state u: the offset of the first bad byte, or n.
 * Without count_lines, u->line is not kept (whole ASCII words skip it). */
static inline size_t decode(struct cg_utf8 *u, const unsigned char *s, size_t n, bool count_lines)
{
    for (size_t i = 0; i < n; i++) {
        /* Fast path: whole words of ASCII between sequences. */
        if (u->need == 0) {
            size_t k = ascii_words(s + i, n - i, count_lines ? &u->line : NULL);
            u->units += k, i += k;
            if (i == n)
                break;
        }
        int rc = u->need ? utf8_cont(u, s[i]) : utf8_lead(u, s[i]);
        if (rc < 0)
            return i;
    }
    return n;
}

static int malformed(struct cg_error *err, uint64_t line, unsigned char c)
{
    return cg_fail(err, CG_SYNTAX, line, "malformed UTF-8 (byte 0x%02x)", c);
}

static int truncated(struct cg_error *err, uint64_t line)
{
    return cg_fail(err, CG_SYNTAX, line, "truncated UTF-8 sequence at end of input");
}

int cg_utf8_feed(struct cg_utf8 *u, const char *p, size_t n, struct cg_error *err)
{
    const unsigned char *s = (const unsigned char *)p;
    size_t i = decode(u, s, n, true);
    return i < n ? malformed(err, u->line, s[i]) : 0;
}

/* 1-based line of byte `at` of text. */
static uint64_t line_at(const char *text, size_t at)
{
    uint64_t line = 1;
    for (const char *p = text, *end = text + at; (p = memchr(p, '\n', (size_t)(end - p))); p++)
        line++;
    return line;
}

int cg_utf8_feed_text(struct cg_utf8 *u, const char *text, size_t at, size_t n,
                      struct cg_error *err)
{
    const unsigned char *s = (const unsigned char *)text + at;
    size_t i = decode(u, s, n, false);
    return i < n ? malformed(err, line_at(text, at + i), s[i]) : 0;
}

int cg_utf8_finish_text(const struct cg_utf8 *u, const char *text, size_t len, struct cg_error *err)
{
    return u->need ? truncated(err, line_at(text, len)) : 0;
}

int cg_utf8_finish(const struct cg_utf8 *u, struct cg_error *err)
{
    return u->need ? truncated(err, u->line) : 0;
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
