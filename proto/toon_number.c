/* toon: numbers printed as ECMAScript prints them, the shortest digits
 * that read back as the same double. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/toon-internal.h"

/* ------------------------------------------------------------------ */
/* Numbers                                                             */

/* Adds one unit in the last place to the decimal digit string d (ndig
 * digits, value 0.d * 10^*exp10); a carry out of the first digit becomes
 * "1" with *exp10 + 1. */
static void toon_digits_up(char *d, int ndig, int *exp10)
{
    int i = ndig - 1;
    while (i >= 0 && d[i] == '9')
        d[i--] = '0';
    if (i >= 0) {
        d[i]++;
        return;
    }
    d[0] = '1';
    (*exp10)++;
}

/* Subtracts one unit in the last place; false when the first digit would
 * become 0 (that candidate has fewer digits and was tried already). */
static bool toon_digits_down(char *d, int ndig)
{
    int i = ndig - 1;
    while (i >= 0 && d[i] == '0')
        d[i--] = '9';
    if (i < 0 || (i == 0 && d[0] == '1'))
        return false;
    d[i]--;
    return true;
}

/* Parses the decimal 0.d * 10^exp10 (ndig digits) back into a double. */
static double toon_digits_value(const char *d, int ndig, int exp10)
{
    char tmp[48];
    snprintf(tmp, sizeof tmp, "0.%.*se%d", ndig, d, exp10);
    return strtod(tmp, NULL);
}

/* Tries p significant digits: the correctly rounded p-digit decimal, or
 * failing that its neighbour on the other side of x (the rounding interval
 * of a double can be asymmetric).  Stores the digits that read back as x
 * in d with x ~ 0.d * 10^*exp10 and returns p, or returns 0.  Some p-digit
 * decimal reads back exactly when one of these two does, so the answer is
 * monotonic in p. */
static int toon_try_digits(double x, int p, char d[20], int *exp10)
{
    char tmp[40], alt[20];
    snprintf(tmp, sizeof tmp, "%.*e", p - 1, x); /* D[.DDD]e[+-]XX */
    int n = 0;
    for (const char *s = tmp; *s != 'e'; s++)
        if (*s != '.')
            d[n++] = *s;
    *exp10 = atoi(strchr(tmp, 'e') + 1) + 1;
    double back = toon_digits_value(d, n, *exp10);
    if (back == x)
        return n;
    int alt_exp = *exp10;
    memcpy(alt, d, (size_t)n);
    if (back < x)
        toon_digits_up(alt, n, &alt_exp);
    else if (!toon_digits_down(alt, n))
        return 0;
    if (toon_digits_value(alt, n, alt_exp) != x)
        return 0;
    memcpy(d, alt, (size_t)n);
    *exp10 = alt_exp;
    return n;
}

/* Finds the shortest digit string that reads back as x (x finite, > 0),
 * picking the closest such string, as ECMAScript Number::toString does:
 * a binary search over 1..17 digits (17 always read back).  Returns the
 * digit count; d and *exp10 as toon_try_digits.  Expects the C locale. */
static int toon_shortest(double x, char d[20], int *exp10)
{
    int lo = 1, hi = 17;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (toon_try_digits(x, mid, d, exp10) > 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return toon_try_digits(x, lo, d, exp10);
}

/* Lays out k significant digits d of value 0.d * 10^n as ECMAScript's
 * Number::toString does (step 6 onwards); returns the length. */
static size_t toon_layout_number(char *out, size_t cap, const char *d, int k, int n)
{
    size_t o = 0;
    if (k <= n && n <= 21) { /* integer: digits then zeros */
        memcpy(out, d, (size_t)k);
        for (o = (size_t)k; o < (size_t)n; o++)
            out[o] = '0';
    } else if (n > 0 && n <= 21) { /* point inside the digits */
        memcpy(out, d, (size_t)n);
        out[n] = '.';
        memcpy(out + n + 1, d + n, (size_t)(k - n));
        o = (size_t)k + 1;
    } else if (n > -6 && n <= 0) { /* 0.000ddd */
        out[o++] = '0';
        out[o++] = '.';
        for (int i = 0; i < -n; i++)
            out[o++] = '0';
        memcpy(out + o, d, (size_t)k);
        o += (size_t)k;
    } else { /* d.ddde+X */
        out[o++] = d[0];
        if (k > 1) {
            out[o++] = '.';
            memcpy(out + o, d + 1, (size_t)(k - 1));
            o += (size_t)(k - 1);
        }
        o += (size_t)snprintf(out + o, cap - o, "e%c%d", n - 1 >= 0 ? '+' : '-', abs(n - 1));
    }
    return o;
}

size_t toon_format_double(double x, char *out)
{
    if (isnan(x) || isinf(x)) {
        memcpy(out, "null", 5);
        return 4;
    }
    if (x == 0) {
        memcpy(out, "0", 2);
        return 1;
    }
    size_t o = 0;
    if (x < 0) {
        out[o++] = '-';
        x = -x;
    }
    char d[20];
    int n, k = toon_shortest(x, d, &n);
    while (k > 1 && d[k - 1] == '0')
        k--;
    return o + toon_layout_number(out + o, TOON_NUMBER_MAX - o, d, k, n);
}
