#!/usr/bin/env python3
"""Exact two-sided binomial p-values, independent of daemon/diff_significance.c.

For counts x0 (BASE) and x1 (NEW) sampled at rates r0 and r1, under "the
same time was spent" x1 ~ Binomial(x0 + x1, r1 / (r0 + r1)).  The p-value
is min(1, 2 * min(P(X <= x1), P(X >= x1))), computed in exact rational
arithmetic (fractions.Fraction, math.comb).

The direction and the verdict follow jett-profile(7), "Significance": a
rate a capture does not state (0) counts as the other side's; the
direction is the sign of x1 * r0 - x0 * r1 (grew, shrank, none); the
verdict is none when the direction is (p = 1), significant when the
p-value is below 0.01, noise otherwise.

usage: binomial_p.py [--verdict] X0 X1 R0 R1 ...
    prints one p-value a line (%.17g); with --verdict, each followed by
    the verdict and the direction
"""
import sys
from fractions import Fraction
from math import comb

LEVEL = Fraction(1, 100)


def rates(r0, r1):
    return (r0, r1) if r0 and r1 else (1, 1)


def p_value(x0, x1, r0=1, r1=1):
    r0, r1 = rates(r0, r1)
    n = x0 + x1
    if n == 0:
        return Fraction(1)
    pi = Fraction(r1, r0 + r1)
    pmf = [comb(n, j) * pi**j * (1 - pi) ** (n - j) for j in range(n + 1)]
    lower, upper = sum(pmf[: x1 + 1]), sum(pmf[x1:])
    return min(Fraction(1), 2 * min(lower, upper))


def direction(x0, x1, r0=1, r1=1):
    r0, r1 = rates(r0, r1)
    d = x1 * r0 - x0 * r1
    return "grew" if d > 0 else "shrank" if d < 0 else "none"


def verdict(x0, x1, r0=1, r1=1):
    """(verdict, p-value) of a change of sample counts."""
    if direction(x0, x1, r0, r1) == "none":
        return "none", Fraction(1)
    p = p_value(x0, x1, r0, r1)
    return ("significant" if p < LEVEL else "noise"), p


if __name__ == "__main__":
    args = sys.argv[1:]
    with_verdict = bool(args) and args[0] == "--verdict"
    args = [int(a) for a in args[with_verdict:]]
    if not args or len(args) % 4:
        sys.exit("usage: binomial_p.py [--verdict] X0 X1 R0 R1 [X0 X1 R0 R1 ...]")
    for i in range(0, len(args), 4):
        case = args[i:i + 4]
        if with_verdict:
            v, p = verdict(*case)
            print("%.17g %s %s" % (float(p), v, direction(*case)))
        else:
            print("%.17g" % float(p_value(*case)))
