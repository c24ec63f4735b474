/* Callgrind integer tokens: the checked parser, the fast scanners and the
 * decimal formatter, at their edges (UINT64_MAX, one past it, digit limits). */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "proto/util/decimal.h"
#include "proto/callgrind/callgrind-internal.h"

#define U64_MAX_DEC "18446744073709551615"

/* cg_u64 on a NUL-terminated token: 0 with *v, or the error kind. */
static int u64(const char *s, uint64_t *v)
{
    struct cg_error err = {0};
    return cg_u64(s, strlen(s), v, &err) == 0 ? 0 : (int)err.kind;
}

START_TEST(checked_parse)
{
    uint64_t v = 1;
    ck_assert_int_eq(u64("0", &v), 0);
    ck_assert_uint_eq(v, 0);
    ck_assert_int_eq(u64("9999999999999999999", &v), 0); /* 19 digits: fast path */
    ck_assert_uint_eq(v, 9999999999999999999ull);
    ck_assert_int_eq(u64("10000000000000000000", &v), 0); /* 20 digits: checked */
    ck_assert_uint_eq(v, 10000000000000000000ull);
    ck_assert_int_eq(u64(U64_MAX_DEC, &v), 0);
    ck_assert_uint_eq(v, UINT64_MAX);
    ck_assert_int_eq(u64("18446744073709551616", &v), CG_RESOURCE); /* UINT64_MAX + 1 */
    ck_assert_int_eq(u64("99999999999999999999", &v), CG_RESOURCE);
    ck_assert_int_eq(u64("00000000000000000001", &v), 0); /* 20 digits, small */
    ck_assert_uint_eq(v, 1);
    ck_assert_int_eq(u64("000000000000000000001", &v), CG_RESOURCE); /* 21 digits */
    ck_assert_int_eq(u64("0xffffffffffffffff", &v), 0);
    ck_assert_uint_eq(v, UINT64_MAX);
    ck_assert_int_eq(u64("0x0000ffffffffffffffff", &v), 0); /* 20 hex digits */
    ck_assert_uint_eq(v, UINT64_MAX);
    ck_assert_int_eq(u64("0x10000000000000000", &v), CG_RESOURCE);     /* 2^64 */
    ck_assert_int_eq(u64("0x000000000000000000001", &v), CG_RESOURCE); /* 21 hex digits */
    ck_assert_int_eq(u64("0xABCdef", &v), 0);
    ck_assert_uint_eq(v, 0xabcdefu);
    ck_assert_int_eq(u64("", &v), CG_SYNTAX);
    ck_assert_int_eq(u64("0x", &v), CG_SYNTAX);
    ck_assert_int_eq(u64("0X1", &v), CG_SYNTAX);
    ck_assert_int_eq(u64("12a", &v), CG_SYNTAX);
    ck_assert_int_eq(u64("0xg", &v), CG_SYNTAX);
    ck_assert_int_eq(u64("-1", &v), CG_SYNTAX);
    ck_assert_int_eq(u64("1 2", &v), CG_SYNTAX);
}
END_TEST

/* One token at a time: blanks skipped, 0 at the end, -1 at a token that
 * needs the checked path (the cursor then stays at it). */
START_TEST(scan_one)
{
    const char *s = " \t42 0x1f 12a 18446744073709551615", *end = s + strlen(s), *p = s;
    uint64_t v = 0;
    ck_assert_int_eq(cg_u64_scan(&p, end, &v), 1);
    ck_assert_uint_eq(v, 42);
    ck_assert_ptr_eq(p, s + 4);
    ck_assert_int_eq(cg_u64_scan(&p, end, &v), 1);
    ck_assert_uint_eq(v, 31);
    ck_assert_int_eq(cg_u64_scan(&p, end, &v), -1);
    ck_assert_ptr_eq(p, s + 10);
    p += 3;
    ck_assert_int_eq(cg_u64_scan(&p, end, &v), -1); /* 20 digits */
    ck_assert_ptr_eq(p, s + 14);
    p = end;
    ck_assert_int_eq(cg_u64_scan(&p, end, &v), 0);
    /* the token ends at `end` even when a digit follows in memory */
    const char *t = "123";
    p = t;
    ck_assert_int_eq(cg_u64_scan(&p, t + 2, &v), 1);
    ck_assert_uint_eq(v, 12);
    p = "0x";
    ck_assert_int_eq(cg_u64_scan(&p, p + 2, &v), -1);
}
END_TEST

/* cg_u64_scan_line over [s, end) that must stop at `end`. */
static size_t scan_all(const char *s, const char *end, uint64_t *v, size_t max)
{
    const char *at = s;
    size_t n = cg_u64_scan_line(&at, end, v, max);
    if (n != SIZE_MAX)
        ck_assert_ptr_eq(at, end);
    return n;
}

START_TEST(scan_line)
{
    uint64_t v[4] = {0};
    const char *s = "0x10 20\t 9999999999999999999";
    ck_assert_uint_eq(scan_all(s, s + strlen(s), v, 4), 3);
    ck_assert_uint_eq(v[0], 16);
    ck_assert_uint_eq(v[1], 20);
    ck_assert_uint_eq(v[2], 9999999999999999999ull);
    ck_assert_uint_eq(scan_all(s, s + strlen(s), v, 2), SIZE_MAX); /* too many */
    ck_assert_uint_eq(scan_all(s, s, v, 4), 0);
    s = "  ";
    ck_assert_uint_eq(scan_all(s, s + 2, v, 4), 0);
    s = "1 +2";
    ck_assert_uint_eq(scan_all(s, s + strlen(s), v, 4), SIZE_MAX);
    s = "1 *";
    ck_assert_uint_eq(scan_all(s, s + strlen(s), v, 4), SIZE_MAX);
    s = "1 10000000000000000000"; /* 20 digits: the checked path's */
    ck_assert_uint_eq(scan_all(s, s + strlen(s), v, 4), SIZE_MAX);
    s = "0xffffffffffffffff 0x10000000000000000"; /* 16 hex digits, then 17 */
    ck_assert_uint_eq(scan_all(s, s + 18, v, 4), 1);
    ck_assert_uint_eq(v[0], UINT64_MAX);
    ck_assert_uint_eq(scan_all(s, s + strlen(s), v, 4), SIZE_MAX);
    s = "7 8x";
    ck_assert_uint_eq(scan_all(s, s + strlen(s), v, 4), SIZE_MAX);
    /* a newline ends the line; the cursor is left on it */
    s = "1 0x2 \t\n3";
    const char *at = s;
    ck_assert_uint_eq(cg_u64_scan_line(&at, s + strlen(s), v, 4), 2);
    ck_assert_ptr_eq(at, s + 7);
    ck_assert_uint_eq(v[1], 2);
    s = "\n1";
    at = s;
    ck_assert_uint_eq(cg_u64_scan_line(&at, s + 2, v, 4), 0);
    ck_assert_ptr_eq(at, s);
    s = "5\r\n";
    at = s;
    ck_assert_uint_eq(cg_u64_scan_line(&at, s + 3, v, 4), SIZE_MAX);
    s = "0x\n";
    at = s;
    ck_assert_uint_eq(cg_u64_scan_line(&at, s + 3, v, 4), SIZE_MAX);
}
END_TEST

/* What cg_u64_scan_line must do, written plainly: tokens split at blanks
 * up to a newline or `end`, each "0x" and 1-16 hex digits or 1-19 decimal
 * digits; the count, or SIZE_MAX. */
static size_t scan_ref(const char *s, const char *end, uint64_t *out, size_t max, const char **stop)
{
    size_t n = 0;
    for (const char *p = s;;) {
        while (p < end && (*p == ' ' || *p == '\t'))
            p++;
        if (p == end || *p == '\n') {
            *stop = p;
            return n;
        }
        const char *t = p;
        while (p < end && *p != ' ' && *p != '\t' && *p != '\n')
            p++;
        size_t len = (size_t)(p - t), base = 10, skip = 0;
        if (len > 2 && t[0] == '0' && t[1] == 'x')
            base = 16, skip = 2;
        if (n == max || len - skip == 0 || len - skip > (base == 16 ? 16u : 19u))
            return SIZE_MAX;
        uint64_t x = 0;
        for (size_t i = skip; i < len; i++) {
            const char *digits = "0123456789abcdef",
                       *d = strchr(digits, t[i] | (base == 16) * 0x20);
            if (t[i] == '\0' || d == NULL || (size_t)(d - digits) >= base)
                return SIZE_MAX;
            x = x * base + (uint64_t)(d - digits);
        }
        out[n++] = x;
    }
}

/* Random lines of digits, hex letters, prefixes, blanks and stray bytes
 * agree with the plain reading, at every length (word and byte paths). */
START_TEST(scan_line_matches_reference)
{
    static const char *const pieces[] = {"0",  "7",    "9", "0x",       "a",       "F",
                                         "f",  "x",    " ", "\t",       "\n",      "g",
                                         "\r", "\xc3", "+", "12345678", "0x4b0c03"};
    uint64_t seed = 42, got[8], want[8];
    for (int iter = 0; iter < 200000; iter++) {
        char line[64];
        size_t len = 0;
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        for (unsigned k = 0, np = (unsigned)(seed >> 59); k < np; k++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            const char *piece = pieces[(seed >> 33) % (sizeof pieces / sizeof pieces[0])];
            if (len + strlen(piece) >= sizeof line)
                break;
            memcpy(line + len, piece, strlen(piece));
            len += strlen(piece);
        }
        const char *stop_ref = NULL, *stop = line;
        size_t a = scan_ref(line, line + len, want, 8, &stop_ref);
        size_t b = cg_u64_scan_line(&stop, line + len, got, 8);
        ck_assert_uint_eq(a, b);
        if (a == SIZE_MAX)
            continue;
        ck_assert_ptr_eq(stop, stop_ref);
        for (size_t i = 0; i < a; i++)
            ck_assert_uint_eq(got[i], want[i]);
    }
}
END_TEST

/* decimal_u64 writes `want`, returns its length and stays within 20 bytes. */
static void fmt_is(uint64_t v, const char *want)
{
    char buf[32];
    memset(buf, '#', sizeof buf);
    size_t n = decimal_u64(buf, v);
    ck_assert_uint_eq(n, strlen(want));
    ck_assert_int_eq(memcmp(buf, want, n), 0);
    for (size_t i = 20; i < sizeof buf; i++)
        ck_assert_int_eq(buf[i], '#');
}

START_TEST(format)
{
    fmt_is(0, "0");
    fmt_is(9, "9");
    fmt_is(10, "10");
    fmt_is(99, "99");
    fmt_is(100, "100");
    fmt_is(1023, "1023");
    fmt_is(1024, "1024");
    fmt_is(78692400, "78692400");
    fmt_is(9999999999999999999ull, "9999999999999999999");
    fmt_is(10000000000000000000ull, "10000000000000000000");
    fmt_is(9223372036854775807ull, "9223372036854775807"); /* 2^63 - 1 */
    fmt_is(9223372036854775808ull, "9223372036854775808");
    fmt_is(UINT64_MAX - 1, "18446744073709551614");
    fmt_is(UINT64_MAX, U64_MAX_DEC);
    /* every digit count: 10^k - 1 is k nines, 10^k is a one and k zeros */
    char nines[21] = "", power[22] = "1";
    uint64_t p = 1;
    for (int k = 1; k <= 19; k++) {
        p *= 10;
        strcat(nines, "9");
        strcat(power, "0");
        fmt_is(p - 1, nines);
        fmt_is(p, power);
    }
}
END_TEST

/* Formatting then parsing gives the value back, at every bit length. */
START_TEST(format_parse_round_trip)
{
    for (int b = 0; b < 64; b++) {
        uint64_t edge[3] = {(1ull << b) - 1, 1ull << b, (1ull << b) + 1};
        for (int i = 0; i < 3; i++) {
            char buf[32], ref[32];
            size_t n = decimal_u64(buf, edge[i]);
            snprintf(ref, sizeof ref, "%llu", (unsigned long long)edge[i]);
            ck_assert_uint_eq(n, strlen(ref));
            ck_assert_int_eq(memcmp(buf, ref, n), 0);
            uint64_t v;
            struct cg_error err;
            ck_assert_int_eq(cg_u64(buf, n, &v, &err), 0);
            ck_assert_uint_eq(v, edge[i]);
        }
    }
}
END_TEST

/* Against printf: every value below 2 * 10^5 and a spread of larger ones
 * (a multiplicative sequence through all 64-bit lengths). */
START_TEST(format_matches_printf)
{
    char buf[32], ref[32];
    uint64_t x = 1;
    for (uint64_t i = 0; i < 400000; i++) {
        uint64_t v = i < 200000 ? i : (x = x * 6364136223846793005ull + 1442695040888963407ull);
        if (i >= 200000)
            v >>= i % 64;
        size_t n = decimal_u64(buf, v);
        snprintf(ref, sizeof ref, "%llu", (unsigned long long)v);
        ck_assert_uint_eq(n, strlen(ref));
        ck_assert_int_eq(memcmp(buf, ref, n), 0);
    }
}
END_TEST

/* A list: single spaces, nothing written past 21 * n + 7 bytes. */
START_TEST(format_list)
{
    const uint64_t v[4] = {0, UINT64_MAX, 7, 100000000};
    const char *want = "0 " U64_MAX_DEC " 7 100000000";
    char buf[21 * 4 + 7 + 8];
    memset(buf, '#', sizeof buf);
    size_t n = decimal_u64s(buf, v, 4);
    ck_assert_uint_eq(n, strlen(want));
    ck_assert_int_eq(memcmp(buf, want, n), 0);
    for (size_t i = 21 * 4 + 7; i < sizeof buf; i++)
        ck_assert_int_eq(buf[i], '#');
    ck_assert_uint_eq(decimal_u64s(buf, v, 0), 0);
}
END_TEST

Suite *callgrind_num_suite(void)
{
    Suite *s = suite_create("callgrind_num");
    TCase *t = tcase_create("num");
    tcase_add_test(t, checked_parse);
    tcase_add_test(t, scan_one);
    tcase_add_test(t, scan_line);
    tcase_add_test(t, scan_line_matches_reference);
    tcase_add_test(t, format);
    tcase_add_test(t, format_parse_round_trip);
    tcase_add_test(t, format_matches_printf);
    tcase_add_test(t, format_list);
    suite_add_tcase(s, t);
    return s;
}
