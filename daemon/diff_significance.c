/* diff_significance: whether a change of sample counts is beyond
 * sampling noise (the exact binomial test of two counts). */
#include <math.h>

#include "daemon/diff.h"

/* log P(X = k), X ~ Binomial(n, pi), 0 < pi < 1. */
static double log_pmf(double n, double k, double pi)
{
    return lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1) + k * log(pi) + (n - k) * log1p(-pi);
}

/* P(X <= k) for k at or below the mean, or P(X >= k) at or above it:
 * summed from k away from the mean, where the terms only shrink, until
 * they no longer change the sum.  *at gets P(X = k). */
static double tail(uint64_t n, uint64_t k, double pi, bool lower, double *at)
{
    double term = exp(log_pmf((double)n, (double)k, pi)), sum = term;
    *at = term;
    for (uint64_t j = k; term > 0 && term > sum * 1e-17;) {
        if (lower) {
            if (j == 0)
                break;
            term *= (double)j * (1 - pi) / ((double)(n - j + 1) * pi);
            j--;
        } else {
            if (j == n)
                break;
            term *= (double)(n - j) * pi / ((double)(j + 1) * (1 - pi));
            j++;
        }
        sum += term;
    }
    return sum;
}

double diff_binomial_p(uint64_t x0, uint64_t x1, uint32_t rate0, uint32_t rate1)
{
    uint64_t n = x0 + x1;
    if (n == 0)
        return 1;
    /* a rate the capture does not state counts as the other's */
    double pi = rate0 && rate1 ? (double)rate1 / ((double)rate0 + (double)rate1) : 0.5, at;
    bool lower = (double)x1 <= (double)n * pi;
    double t = tail(n, x1, pi, lower, &at);
    /* The two tails overlap in P(X = x1) and sum to 1 + P(X = x1): when
     * the computed one is not the smaller, the other follows exactly
     * enough (neither is small). */
    if (t >= 0.5 && 1 + at - t < t)
        t = 1 + at - t;
    return t * 2 < 1 ? t * 2 : 1;
}

/* NEW's and BASE's counts at the ratio of the rates: x1 r0 and x0 r1. */
static void at_rates(uint64_t x0, uint64_t x1, uint32_t rate0, uint32_t rate1, unsigned __int128 *a,
                     unsigned __int128 *b)
{
    if (!rate0 || !rate1)
        rate0 = rate1 = 1;
    *a = (unsigned __int128)x1 * rate0, *b = (unsigned __int128)x0 * rate1;
}

enum diff_direction diff_samples_direction(uint64_t x0, uint64_t x1, uint32_t rate0, uint32_t rate1)
{
    unsigned __int128 a, b;
    at_rates(x0, x1, rate0, rate1, &a, &b);
    return a > b ? DIFF_GREW : a < b ? DIFF_SHRANK : DIFF_SAME;
}

unsigned __int128 diff_samples_change(uint64_t x0, uint64_t x1, uint32_t rate0, uint32_t rate1)
{
    unsigned __int128 a, b;
    at_rates(x0, x1, rate0, rate1, &a, &b);
    return a > b ? a - b : b - a;
}

enum diff_verdict diff_samples_verdict(uint64_t x0, uint64_t x1, uint32_t rate0, uint32_t rate1,
                                       double *p)
{
    /* x1 is the mean of its binomial: each tail holds at least half, p = 1 */
    if (diff_samples_direction(x0, x1, rate0, rate1) == DIFF_SAME)
        return *p = 1, DIFF_NONE;
    *p = diff_binomial_p(x0, x1, rate0, rate1);
    return *p < DIFF_LEVEL ? DIFF_SIGNIFICANT : DIFF_NOISE;
}
