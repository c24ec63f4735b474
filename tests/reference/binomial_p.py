#!/usr/bin/env python3
"""Exact two-sided binomial p-values, independent of daemon/diff_significance.c.

For counts x0 (BASE) and x1 (NEW) sampled at rates r0 and r1, under "the
same time was spent" x1 ~ Binomial(x0 + x1, r1 / (r0 + r1)).  The p-value
is min(1, 2 * min(P(X <= x1), P(X >= x1))), computed in exact rational
arithmetic (fractions.Fraction, math.comb).

usage: binomial_p.py X0 X1 R0 R1 ...   prints one p-value a line (%.17g)
"""
import sys
from fractions import Fraction
from math import comb


def p_value(x0, x1, r0=1, r1=1):
    n = x0 + x1
    if n == 0:
        return Fraction(1)
    pi = Fraction(r1, r0 + r1)
    pmf = [comb(n, j) * pi**j * (1 - pi) ** (n - j) for j in range(n + 1)]
    lower, upper = sum(pmf[: x1 + 1]), sum(pmf[x1:])
    return min(Fraction(1), 2 * min(lower, upper))


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:]]
    if not args or len(args) % 4:
        sys.exit("usage: binomial_p.py X0 X1 R0 R1 [X0 X1 R0 R1 ...]")
    for i in range(0, len(args), 4):
        print("%.17g" % float(p_value(*args[i:i + 4])))
