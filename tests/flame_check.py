#!/usr/bin/env python3
"""Checks an SVG flame graph read from standard input.

It must parse as XML and hold no external reference (an href, a script
with a src; its one inline script is allowed); every frame (a <g
class="f"> holding a <title> and a <rect>)
must have a title "NAME: VALUE UNIT (PCT%)" whose percentage is VALUE's
share of the root rounded to two decimals, a width equal to that share of
the root's width (within the SVG's two-decimal rounding), and lie inside a
frame one level below it (a child is never wider than its parent).
Prints "ok FRAMES" or the problems, one a line, and exits 1.
"""
import re
import sys
import xml.etree.ElementTree as ET
from decimal import Decimal, ROUND_HALF_UP

NS = "{http://www.w3.org/2000/svg}"
TITLE = re.compile(r"^(.*): (\d+) (\w+) \((\d+\.\d\d)%\)$", re.S)


def main():
    root = ET.fromstring(sys.stdin.buffer.read())
    if root.tag != NS + "svg":
        print("root element is not svg")
        return 1
    scripts = 0
    for el in root.iter():
        scripts += el.tag == NS + "script"
        if any(k.endswith("href") or k == "src" for k in el.attrib):
            print("the SVG holds an external reference")
            return 1
    if scripts > 1:
        print("the SVG holds %d scripts" % scripts)
        return 1
    frames = []
    for g in root.iter(NS + "g"):
        if "f" not in g.get("class", "").split():
            continue
        title, rect = g.find(NS + "title"), g.find(NS + "rect")
        if title is None or rect is None:
            print("a frame without title or rect")
            return 1
        m = TITLE.match(title.text)
        if not m:
            print("bad title %r" % title.text)
            return 1
        frames.append((m.group(1), int(m.group(2)), m.group(4),
                       float(rect.get("x")), float(rect.get("y")),
                       float(rect.get("width"))))
    problems = []
    if frames:
        name, total, pct, x0, y0, w0 = frames[0]
        if name != "all" or pct != "100.00" or w0 != float(root.get("width")) - 20:
            problems.append("the first frame is not a full-width root")
        for name, value, pct, x, y, w in frames:
            want = (Decimal(value) * 100 / Decimal(total)).quantize(
                Decimal("0.01"), rounding=ROUND_HALF_UP)
            if Decimal(pct) != want:
                problems.append("%s: %s%%, want %s%%" % (name, pct, want))
            if abs(w - w0 * value / total) > 0.006:
                problems.append("%s: width %.2f, want %.4f" % (name, w, w0 * value / total))
            if y == y0:
                continue
            parents = [p for p in frames if p[4] == y + 17]
            if not any(p[3] - 0.006 <= x and x + w <= p[3] + p[5] + 0.011 for p in parents):
                problems.append("%s: not inside a frame below it" % name)
    for p in problems:
        print(p)
    if not problems:
        print("ok %d" % len(frames))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
