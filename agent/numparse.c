/* numparse: int() and float() text read a chunk at a time (see
 * numparse.h). */
#include "agent/numparse.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Significant digits a reduced float keeps (numparse.h). */
#define NP_KEEP_DEC 800
#define NP_KEEP_HEX 40
/* An exponent's magnitude stops growing here, far past any double's. */
#define NP_EXP_CAP ((int64_t)1000000000000)
/* A nan's chars kept for strtod. */
#define NP_NAN_CHARS 4096

/* The text as strtod reads it: it ends at the first NUL byte. */
struct np_text {
    struct safepoint *sp;
    const char *p;
    size_t len, at;
    bool stopped;
};

/* The byte at `at` + k, or -1 at the end or a NUL (a caller looks at k
 * only once the bytes before it were others). */
static int np_peek(const struct np_text *t, size_t k)
{
    if (t->at + k >= t->len || t->p[t->at + k] == '\0')
        return -1;
    return (unsigned char)t->p[t->at + k];
}

/* Moves past one byte: a poll at each SAFEPOINT_CHUNK-th. */
static void np_next(struct np_text *t)
{
    if ((++t->at & (SAFEPOINT_CHUNK - 1)) == 0 && safepoint_poll(t->sp) < 0)
        t->stopped = true;
}

static int np_hex_value(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

enum np_class { NP_SPACE, NP_DEC, NP_HEX };

/* Whether c is of class k: 0 not, 1 the digit 0, 2 another. */
static inline unsigned np_in(enum np_class k, unsigned char c)
{
    if (k == NP_SPACE)
        return c == ' ' || (c >= '\t' && c <= '\r') ? 2 : 0;
    if (c == '0')
        return 1;
    return (k == NP_DEC ? (unsigned)(c - '0') < 10 : np_hex_value(c) >= 0) ? 2 : 0;
}

/* Reads the run of bytes of class k (only 0 digits when `zeros`) from
 * `at`, in tight loops to each SAFEPOINT_CHUNK-th byte and a poll there:
 * how many, with *other set when one was not a 0. */
static inline __attribute__((always_inline)) size_t np_span(struct np_text *t, enum np_class k,
                                                            bool zeros, bool *other)
{
    const unsigned char *p = (const unsigned char *)t->p;
    size_t i = t->at;
    unsigned seen = 0;
    for (;;) {
        size_t stop = (i | (SAFEPOINT_CHUNK - 1)) + 1;
        if (stop > t->len)
            stop = t->len;
        if (zeros)
            while (i < stop && p[i] == '0')
                i++;
        else
            for (unsigned v; i < stop && (v = np_in(k, p[i])) != 0; i++)
                seen |= v;
        if (i < stop || i == t->len)
            break;
        if (safepoint_poll(t->sp) < 0) {
            t->stopped = true;
            break;
        }
    }
    size_t n = i - t->at;
    t->at = i;
    if (other)
        *other = seen & 2;
    return n;
}

/* ---- int ---- */

enum numparse_status numparse_int(struct safepoint *sp, const char *p, size_t len, int64_t *out)
{
    size_t i = len > 0 && (p[0] == '-' || p[0] == '+') ? 1 : 0;
    bool neg = len > 0 && p[0] == '-';
    struct np_text t = {sp, p, len, i, false};
    size_t zeros = np_span(&t, NP_DEC, true, NULL), from = t.at;
    size_t sig = t.stopped ? 0 : np_span(&t, NP_DEC, false, NULL);
    if (t.stopped)
        return NUMPARSE_STOPPED;
    /* digits to the end (a NUL is none), and at most 19 after the zeros */
    if (t.at != len || zeros + sig == 0 || sig > 19)
        return NUMPARSE_BAD;
    uint64_t v = 0;
    for (size_t j = from; j < from + sig; j++)
        v = v * 10 + (uint64_t)(p[j] - '0');
    if (v > (neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX))
        return NUMPARSE_BAD;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return NUMPARSE_OK;
}

/* ---- float ---- */

/* The significant digits of a mantissa: the first `keep`, a sticky flag
 * for any later one that is not 0, and where the point stands. */
struct np_digits {
    char kept[NP_KEEP_DEC];
    unsigned n, keep;
    bool any, sig, sticky;
    /* digits of the integer part from the first significant one, or minus
     * the zeros between the point and the first significant one */
    int64_t lead;
};

static void np_digit(struct np_digits *d, char c, bool frac)
{
    d->any = true;
    if (!d->sig) {
        if (c == '0') {
            d->lead -= frac;
            return;
        }
        d->sig = true;
    }
    d->lead += !frac;
    if (d->n < d->keep)
        d->kept[d->n++] = c;
    else if (c != '0')
        d->sticky = true;
}

/* The runs that only count: leading zeros, and the digits past the kept
 * ones (of which only whether one is not 0 matters). */
static void np_runs(struct np_text *t, struct np_digits *d, enum np_class k, bool frac)
{
    if (!d->sig) {
        size_t z = np_span(t, k, true, NULL);
        d->any |= z > 0;
        d->lead -= frac ? (int64_t)z : 0;
    } else if (d->n == d->keep) {
        bool other; /* the class a constant: each loop compiled for its own */
        size_t r =
            k == NP_DEC ? np_span(t, NP_DEC, false, &other) : np_span(t, NP_HEX, false, &other);
        d->any |= r > 0;
        d->sticky |= other;
        d->lead += frac ? 0 : (int64_t)r;
    }
}

/* Digits (hexadecimal when `hex`) with at most one point; false when
 * there was none. */
static bool np_mantissa(struct np_text *t, struct np_digits *d, bool hex)
{
    enum np_class k = hex ? NP_HEX : NP_DEC;
    bool frac = false;
    while (!t->stopped) {
        np_runs(t, d, k, frac);
        int c = np_peek(t, 0);
        if (c == '.' && !frac)
            frac = true;
        else if (c >= 0 && np_in(k, (unsigned char)c))
            np_digit(d, (char)c, frac);
        else
            break;
        np_next(t);
    }
    return d->any;
}

/* An exponent after `marker` (e or p, either case): a sign and at least
 * one digit, else nothing is read; its value, saturated. */
static int64_t np_exponent(struct np_text *t, char marker)
{
    int c = np_peek(t, 0);
    if (c != marker && c != marker - 32)
        return 0;
    int s = np_peek(t, 1), k = s == '+' || s == '-' ? 2 : 1, d = np_peek(t, (size_t)k);
    if (d < '0' || d > '9')
        return 0;
    for (int i = 0; i < k; i++)
        np_next(t);
    np_span(t, NP_DEC, true, NULL);
    int64_t e = 0;
    for (; !t->stopped && e < NP_EXP_CAP && (c = np_peek(t, 0)) >= '0' && c <= '9'; np_next(t))
        e = e * 10 + (c - '0');
    if (!t->stopped && np_span(t, NP_DEC, false, NULL) > 0)
        e = NP_EXP_CAP; /* more digits yet */
    return s == '-' ? -e : e;
}

/* Whether the text goes on with `word` (any case), which is then read. */
static bool np_word(struct np_text *t, const char *word)
{
    size_t n = strlen(word);
    for (size_t i = 0; i < n; i++) {
        int c = np_peek(t, i);
        if (c < 0 || (c | 32) != word[i])
            return false;
    }
    for (size_t i = 0; i < n; i++)
        np_next(t);
    return true;
}

/* inf, infinity, nan or nan(chars) after the sign, into `out` (which
 * holds the sign); false when none is there. */
static bool np_special(struct np_text *t, char *out, size_t cap)
{
    size_t n = strlen(out);
    if (np_word(t, "inf")) {
        np_word(t, "inity");
        snprintf(out + n, cap - n, "inf");
        return true;
    }
    if (!np_word(t, "nan"))
        return false;
    snprintf(out + n, cap - n, "nan");
    if (np_peek(t, 0) != '(')
        return true;
    size_t k = 1; /* the chars: letters, digits and _, then ")" */
    for (int c; (c = np_peek(t, k)) >= 0 &&
                (c == '_' || np_hex_value(c) >= 0 || ((c | 32) >= 'a' && (c | 32) <= 'z'));
         k++)
        if ((k & (SAFEPOINT_CHUNK - 1)) == 0 && safepoint_poll(t->sp) < 0) {
            t->stopped = true;
            return true;
        }
    if (np_peek(t, k) != ')')
        return true; /* "nan", then "(" is left over */
    if (k - 1 <= NP_NAN_CHARS)
        snprintf(out + n + 3, cap - n - 3, "%.*s)", (int)k, t->p + t->at);
    for (size_t i = 0; i <= k; i++)
        np_next(t);
    return true;
}

/* The short text of a mantissa read: its kept digits and an exponent
 * that gives them the long one's value. */
static void np_reduced(const struct np_digits *d, int64_t exp, bool hex, char *out, size_t cap)
{
    size_t n = strlen(out);
    if (!d->sig) {
        snprintf(out + n, cap - n, hex ? "0x0p0" : "0");
        return;
    }
    int64_t scale = hex ? 4 : 1; /* a hexadecimal digit is 4 binary places */
    snprintf(out + n, cap - n, "%s0.%.*s%s%c%lld", hex ? "0x" : "", (int)d->n, d->kept,
             d->sticky ? "1" : "", hex ? 'p' : 'e', (long long)(exp + scale * d->lead));
}

/* White space and a sign, then a number: its short text in `out`.
 * NUMPARSE_BAD when no number starts there. */
static enum numparse_status np_number(struct np_text *t, char *out, size_t cap)
{
    np_span(t, NP_SPACE, false, NULL);
    int sign = np_peek(t, 0);
    out[0] = '\0';
    if (sign == '+' || sign == '-') {
        out[0] = (char)sign, out[1] = '\0';
        np_next(t);
    }
    if (np_special(t, out, cap))
        return t->stopped ? NUMPARSE_STOPPED : NUMPARSE_OK;
    bool hex = np_peek(t, 0) == '0' && (np_peek(t, 1) | 32) == 'x' &&
               (np_hex_value(np_peek(t, 2)) >= 0 ||
                (np_peek(t, 2) == '.' && np_hex_value(np_peek(t, 3)) >= 0));
    if (hex)
        np_next(t), np_next(t);
    struct np_digits d = {.keep = hex ? NP_KEEP_HEX : NP_KEEP_DEC};
    if (!np_mantissa(t, &d, hex))
        return t->stopped ? NUMPARSE_STOPPED : NUMPARSE_BAD;
    int64_t exp = np_exponent(t, hex ? 'p' : 'e');
    np_reduced(&d, exp, hex, out, cap);
    return t->stopped ? NUMPARSE_STOPPED : NUMPARSE_OK;
}

enum numparse_status numparse_float(struct safepoint *sp, const char *p, size_t len, double *out)
{
    if (len == 0)
        return NUMPARSE_BAD;
    struct np_text t = {sp, p, len, 0, false};
    char text[NP_KEEP_DEC + NP_NAN_CHARS + 64];
    enum numparse_status st = np_number(&t, text, sizeof text);
    if (st == NUMPARSE_STOPPED)
        return st;
    if (st == NUMPARSE_BAD) { /* strtod read nothing: accepted only when empty before a NUL */
        *out = 0.0;
        return p[0] == '\0' ? NUMPARSE_OK : NUMPARSE_BAD;
    }
    if (np_peek(&t, 0) >= 0)
        return NUMPARSE_BAD; /* something after the number */
    errno = 0;
    *out = strtod(text, NULL);
    return errno == ERANGE ? NUMPARSE_BAD : NUMPARSE_OK;
}
