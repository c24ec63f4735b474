#!/usr/bin/env python3
"""Checks a memory timeline SVG read from standard input.

It must parse as XML, hold no script or external reference, have at most
2000 points with non-decreasing x, the last (the exit) at the x of the one
before it, and its area series (each <path> with data-site and
data-values under <g id="series">) must sum to the total at every point.
A site's data-max, the most it held as the legend gives it, must be its
largest value, so that the chart draws it, and its data-retained its last.
The root's data-peak-bytes must be the largest total, first reached at
data-peak-at, its data-retained-bytes the last total, and the peak marker
must say the same.  Prints

    ok peak=P at=A retained=R allocated=X
    x: X0 X1 ...
    total: T0 T1 ...
    SITE: V0 V1 ...        (one line per series, bottom first)

or the problems, one a line, and exits 1.
"""
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"


def nums(s):
    return [int(v) for v in s.split()] if s else []


def main():
    root = ET.fromstring(sys.stdin.buffer.read())
    bad = []
    if root.tag != NS + "svg":
        bad.append("root element is not svg")
    for el in root.iter():
        if el.tag == NS + "script" or any(k.endswith("href") for k in el.attrib):
            bad.append("the SVG holds a script or an external reference")
    peak, at = int(root.get("data-peak-bytes")), int(root.get("data-peak-at"))
    retained, allocated = int(root.get("data-retained-bytes")), int(root.get("data-allocated-bytes"))
    series = root.find(NS + "g[@id='series']")
    xs, total = nums(series.get("data-x")), nums(series.get("data-total"))
    n = len(xs)
    if n == 0 or n != len(total) or n > 2000:
        bad.append("%d points, %d totals" % (n, len(total)))
    if any(b < a for a, b in zip(xs, xs[1:])):
        bad.append("x goes back")
    if n >= 2 and xs[-1] != xs[-2]:
        bad.append("the exit is at %d, not at the last allocation's %d" % (xs[-1], xs[-2]))
    sites = []
    for p in series.iter(NS + "path"):
        v = nums(p.get("data-values"))
        if len(v) != n:
            bad.append("series %r has %d values" % (p.get("data-site"), len(v)))
        sites.append((p.get("data-site"), v))
        if p.get("data-max") is not None and (not v or max(v) != int(p.get("data-max"))):
            bad.append("series %r holds at most %s, its data-max %s"
                       % (p.get("data-site"), max(v) if v else None, p.get("data-max")))
        if p.get("data-retained") is not None and (not v or v[-1] != int(p.get("data-retained"))):
            bad.append("series %r ends at %s, its data-retained %s"
                       % (p.get("data-site"), v[-1] if v else None, p.get("data-retained")))
    for i in range(n):
        s = sum(v[i] for _, v in sites if i < len(v))
        if s != total[i]:
            bad.append("point %d: the series sum to %d, the total is %d" % (i, s, total[i]))
    if total and max(total) != peak:
        bad.append("largest total %d, peak %d" % (max(total), peak))
    if total and xs[total.index(max(total))] != at:
        bad.append("the peak is at %d, not %d" % (xs[total.index(max(total))], at))
    if total and total[-1] != retained:
        bad.append("last total %d, retained %d" % (total[-1], retained))
    mark = root.find(NS + "g[@id='peak']")
    if peak > 0 and (mark is None or int(mark.get("data-bytes")) != peak
                     or int(mark.get("data-at")) != at):
        bad.append("the peak marker disagrees")
    if bad:
        print("\n".join(bad))
        return 1
    print("ok peak=%d at=%d retained=%d allocated=%d" % (peak, at, retained, allocated))
    print("x: " + " ".join(map(str, xs)))
    print("total: " + " ".join(map(str, total)))
    for name, v in sites:
        print("%s: %s" % (name, " ".join(map(str, v))))
    return 0


sys.exit(main())
