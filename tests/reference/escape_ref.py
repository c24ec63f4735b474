#!/usr/bin/env python3
"""escape_ref: "Escaped text" of jett-profile(7), written from its words.

Text is read as UTF-8; each unit (a well-formed character, or a byte that
is not part of one) is shown as \\xNN for every one of its bytes when it
is a byte that is not UTF-8, a control character (U+0000 to U+001F,
U+007F, U+0080 to U+009F), U+FFFE or U+FFFF, or a format character of the
page's list (Unicode 14.0's category Cf); everything else as it is.

    escape_ref.py --check   compares the page's list with this Python's
                            unicodedata (equal for Unicode 14.0; for a
                            later Unicode the list must be a subset)."""
import sys

# the page's list, range by range
FORMAT = [(0x00AD, 0x00AD), (0x0600, 0x0605), (0x061C, 0x061C), (0x06DD, 0x06DD),
          (0x070F, 0x070F), (0x0890, 0x0891), (0x08E2, 0x08E2), (0x180E, 0x180E),
          (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x2064), (0x2066, 0x206F),
          (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB), (0x110BD, 0x110BD), (0x110CD, 0x110CD),
          (0x13430, 0x13438), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0001, 0xE0001),
          (0xE0020, 0xE007F)]


def shown_escaped(cp):
    return (cp <= 0x1F or 0x7F <= cp <= 0x9F or cp in (0xFFFE, 0xFFFF)
            or any(lo <= cp <= hi for lo, hi in FORMAT))


def unit(b, i, limit=None):
    """(length, escaped) of the unit at b[i], within b[:limit]."""
    limit = len(b) if limit is None else limit
    if b[i] < 0x80:
        return 1, shown_escaped(b[i])
    for n in (2, 3, 4):
        if i + n <= limit:
            try:
                ch = b[i:i + n].decode("utf-8")
            except UnicodeDecodeError:
                continue
            return n, shown_escaped(ord(ch))
    return 1, True


def escape(b):
    """bytes -> the bytes shown."""
    out, i = [], 0
    while i < len(b):
        n, esc = unit(b, i)
        out.append(b"".join(b"\\x%02x" % c for c in b[i:i + n]) if esc else b[i:i + n])
        i += n
    return b"".join(out)


def check():
    import unicodedata
    cf = {cp for cp in range(0x110000) if unicodedata.category(chr(cp)) == "Cf"}
    listed = {cp for lo, hi in FORMAT for cp in range(lo, hi + 1)}
    if unicodedata.unidata_version == "14.0.0" and listed != cf:
        print("the list differs from Unicode 14.0's Cf: %s" % sorted(listed ^ cf))
        return 1
    if not listed <= cf:
        print("listed but not Cf in Unicode %s: %s" % (unicodedata.unidata_version,
                                                       sorted(listed - cf)))
        return 1
    print("%d format characters, Unicode %s" % (len(listed), unicodedata.unidata_version))
    return 0


if __name__ == "__main__":
    sys.exit(check() if sys.argv[1:] == ["--check"] else 2)
