/* Tests of agent/numparse: int() and float() read a chunk at a time give
 * what strtoll and strtod, reading the whole text, gave before (the C
 * library is the oracle here: these tests compare, they paste no
 * number), on hand-picked edges, on random short texts, and on long
 * mantissas whose rounding is decided past the 800 digits the reduced
 * text keeps; an interrupt stops a long read. */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agent/numparse.h"

/* float() as it was: strtod over the text up to its first NUL. */
static enum numparse_status old_float(const char *p, size_t len, double *out)
{
    char *end;
    errno = 0;
    double f = strtod(p, &end);
    if (len == 0 || *end != '\0' || errno == ERANGE)
        return NUMPARSE_BAD;
    *out = f;
    return NUMPARSE_OK;
}

/* int() as it was: a sign and digits checked, then strtoll. */
static enum numparse_status old_int(const char *p, size_t len, int64_t *out)
{
    size_t i = len > 0 && (p[0] == '-' || p[0] == '+') ? 1 : 0;
    bool digits = i < len;
    for (size_t j = i; j < len; j++)
        digits &= p[j] >= '0' && p[j] <= '9';
    errno = 0;
    long long v = digits ? strtoll(p, NULL, 10) : 0;
    if (!digits || errno == ERANGE)
        return NUMPARSE_BAD;
    *out = v;
    return NUMPARSE_OK;
}

/* Same status, and the same bits for a number (a NaN: NaN, same sign). */
static void expect_float(const char *p, size_t len)
{
    double a = 0, b = 0;
    enum numparse_status want = old_float(p, len, &a);
    enum numparse_status got = numparse_float(&safepoint_idle, p, len, &b);
    ck_assert_msg(got == want, "\"%.60s\" (%zu bytes): status %d, strtod's %d", p, len, got, want);
    if (want != NUMPARSE_OK)
        return;
    if (isnan(a)) {
        ck_assert_msg(isnan(b) && signbit(a) == signbit(b), "\"%.60s\": %g, strtod's %g", p, b, a);
        return;
    }
    ck_assert_msg(memcmp(&a, &b, sizeof a) == 0, "\"%.60s\" (%zu bytes): %.17g, strtod's %.17g", p,
                  len, b, a);
}

static void expect_int(const char *p, size_t len)
{
    int64_t a = 0, b = 0;
    enum numparse_status want = old_int(p, len, &a);
    enum numparse_status got = numparse_int(&safepoint_idle, p, len, &b);
    ck_assert_msg(got == want, "\"%.60s\": status %d, strtoll's %d", p, got, want);
    ck_assert_msg(want != NUMPARSE_OK || a == b, "\"%.60s\": %lld, strtoll's %lld", p, (long long)b,
                  (long long)a);
}

static void expect_both(const char *p, size_t len)
{
    expect_float(p, len);
    expect_int(p, len);
}

START_TEST(edges_as_before)
{
    static const char *const texts[] = {"",
                                        "0",
                                        "-0",
                                        "+0",
                                        "1",
                                        " 1",
                                        "1 ",
                                        "\t\n\v\f\r-2.5",
                                        "1e",
                                        "1e+",
                                        "1e-5",
                                        "1E5",
                                        ".5",
                                        "5.",
                                        ".",
                                        "+.",
                                        "-.e1",
                                        "+-1",
                                        "0x",
                                        "0x1",
                                        "0x.8",
                                        "0x1.8p3",
                                        "0X1P-2",
                                        "0x1p",
                                        "0x1p+",
                                        "0xg",
                                        "0x.",
                                        "0x.p1",
                                        "inf",
                                        "INF",
                                        "infinity",
                                        "Infinity",
                                        "infin",
                                        "-inf",
                                        "+iNfInItY",
                                        "nan",
                                        "NaN",
                                        "-nan",
                                        "nan()",
                                        "nan(abc_123)",
                                        "nan(",
                                        "nan(a-b)",
                                        "nan)",
                                        "1e400",
                                        "-1e400",
                                        "1e-400",
                                        "4.9e-324",
                                        "2.2250738585072011e-308",
                                        "2.2250738585072014e-308",
                                        "1.7976931348623157e308",
                                        "1.7976931348623158e308",
                                        "1.7976931348623159e308",
                                        "0e99999999999999999999",
                                        "1e-99999999999999999999",
                                        "1e99999999999999999999",
                                        "0x1p-1074",
                                        "0x1p-1075",
                                        "0x1.fffffffffffff8p1023",
                                        "0x1p1024",
                                        "00012",
                                        "-0012",
                                        "+",
                                        "-",
                                        "9223372036854775807",
                                        "9223372036854775808",
                                        "-9223372036854775808",
                                        "-9223372036854775809",
                                        "00000000000000000000009223372036854775807",
                                        "12a",
                                        "1.5.2",
                                        "1e5e5",
                                        "1_000",
                                        "0.000001e6",
                                        "123456789012345678901234567890"};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        expect_both(texts[i], strlen(texts[i]));
    /* a NUL ends the text as strtod reads it; float() took what came
     * before it (nothing at all reads as 0) */
    static const char nul[][8] = {"\0", "1\0x", " \0", "0x1\0", "1.5e3\0z", "\0\0", "-\0"};
    static const size_t nul_len[] = {1, 3, 2, 4, 7, 2, 2};
    for (size_t i = 0; i < sizeof nul_len / sizeof nul_len[0]; i++)
        expect_both(nul[i], nul_len[i]);
}
END_TEST

START_TEST(random_short_texts_as_before)
{
    static const char alphabet[] = "0123456789.eE+-xXpPabcdfABCDinftyINFTYn()_ \t";
    unsigned seed = 12345;
    char text[16];
    for (int round = 0; round < 200000; round++) {
        size_t len = (size_t)(rand_r(&seed) % 12);
        for (size_t i = 0; i < len; i++)
            text[i] = alphabet[rand_r(&seed) % (sizeof alphabet - 1)];
        text[len] = '\0';
        expect_both(text, len);
    }
}
END_TEST

/* The exact decimal text of the point halfway between x (> 0, finite)
 * and the next double up: (2m + 1) * 2^(e - 1), a finite decimal. */
static char *midpoint_text(double x)
{
    int e;
    double f = frexp(x, &e); /* x = f * 2^e, f in [0.5, 1) */
    uint64_t m = (uint64_t)ldexp(f, 53);
    e -= 53; /* x = m * 2^e */
    uint64_t odd = 2 * m + 1;
    int p2 = e - 1; /* midpoint = odd * 2^p2 */
    /* digits of odd * 5^-p2 (least significant first), then the point
     * -p2 digits from the right, or odd * 2^p2 for p2 >= 0 */
    size_t cap = 2000, n = 0;
    unsigned char *d = calloc(cap, 1);
    for (uint64_t v = odd; v; v /= 10)
        d[n++] = (unsigned char)(v % 10);
    int mul = p2 < 0 ? 5 : 2;
    for (int k = 0; k < (p2 < 0 ? -p2 : p2); k++) {
        unsigned carry = 0;
        for (size_t i = 0; i < n; i++) {
            unsigned v = d[i] * (unsigned)mul + carry;
            d[i] = (unsigned char)(v % 10), carry = v / 10;
        }
        while (carry)
            d[n++] = (unsigned char)(carry % 10), carry /= 10;
    }
    size_t point = p2 < 0 ? (size_t)-p2 : 0; /* digits after the point */
    char *out = malloc(n + point + 8), *w = out;
    if (n <= point) {
        *w++ = '0', *w++ = '.';
        for (size_t i = n; i < point; i++)
            *w++ = '0';
    }
    for (size_t i = n; i-- > 0;) {
        *w++ = (char)('0' + d[i]);
        if (i == point && point > 0 && n > point)
            *w++ = '.';
    }
    *w = '\0';
    free(d);
    return out;
}

/* Halfway points read exactly tie to even; a 1 any number of zeros later
 * rounds them up, a 0 with nothing after leaves them: the digit that
 * decides lies past the 800 kept, so only the sticky digit carries it. */
START_TEST(rounding_past_the_kept_digits)
{
    const double xs[] = {1.0, 3.0, 1e300, 123.456, 0x1p-1000, 0x1.fffffffffffffp-1022, 1e-300};
    for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) {
        char *mid = midpoint_text(xs[i]);
        size_t len = strlen(mid), zeros = 3000;
        char *text = malloc(len + zeros + 16);
        const char *tails[] = {"", "1", "0"};
        for (size_t t = 0; t < 3; t++) {
            memcpy(text, mid, len);
            memset(text + len, '0', zeros);
            strcpy(text + len + zeros, tails[t]);
            expect_float(text, strlen(text));
            strcpy(text + len + zeros, "1e-5"); /* and with an exponent */
            expect_float(text, strlen(text));
        }
        free(text), free(mid);
    }
}
END_TEST

/* Long mantissas of random digits with leading zeros, in both bases,
 * with and without exponents, against strtod reading them whole. */
START_TEST(random_long_mantissas_as_before)
{
    unsigned seed = 777;
    size_t cap = 20000;
    char *text = malloc(cap + 64);
    for (int round = 0; round < 300; round++) {
        bool hex = round % 3 == 0;
        char *w = text;
        w += sprintf(w, "%s%s", round % 2 ? "-" : "", hex ? "0x" : "");
        size_t lead = (size_t)(rand_r(&seed) % 3000), digits = (size_t)(rand_r(&seed) % 10000);
        size_t point = (size_t)(rand_r(&seed) % (lead + digits + 1));
        for (size_t i = 0; i < lead + digits; i++) {
            if (i == point)
                *w++ = '.';
            int v = i < lead ? 0 : rand_r(&seed) % (hex ? 16 : 10);
            *w++ = "0123456789abcdef"[v];
        }
        if (round % 4 == 1)
            w += sprintf(w, "%c%d", hex ? 'p' : 'e', rand_r(&seed) % 4000 - 2000);
        *w = '\0';
        expect_float(text, (size_t)(w - text));
        /* the same digits read by int() */
        expect_int(text + (round % 2) + (hex ? 2 : 0), strlen(text + (round % 2) + (hex ? 2 : 0)));
    }
    free(text);
}
END_TEST

static int stop_slow(struct safepoint *sp)
{
    (void)sp;
    return -1;
}

/* An interrupt stops a long read at a poll, in either function. */
START_TEST(an_interrupt_stops_the_read)
{
    size_t n = 4u << 20;
    char *text = malloc(n + 1);
    memset(text, '1', n);
    text[n] = '\0';
    struct safepoint sp = {PENDING_INTERRUPT, stop_slow};
    double f;
    int64_t v;
    ck_assert_int_eq(numparse_float(&sp, text, n, &f), NUMPARSE_STOPPED);
    ck_assert_int_eq(numparse_int(&sp, text, n, &v), NUMPARSE_STOPPED);
    free(text);
}
END_TEST

Suite *numparse_suite(void)
{
    Suite *s = suite_create("numparse");
    TCase *t = tcase_create("numparse");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, edges_as_before);
    tcase_add_test(t, random_short_texts_as_before);
    tcase_add_test(t, rounding_past_the_kept_digits);
    tcase_add_test(t, random_long_mantissas_as_before);
    tcase_add_test(t, an_interrupt_stops_the_read);
    suite_add_tcase(s, t);
    return s;
}
