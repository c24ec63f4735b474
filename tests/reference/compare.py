#!/usr/bin/env python3
"""compare: checks jett-profd against the reference model.

    compare.py BUILD_ROOT TOON_MODULES CAPTURE...

For each packed capture: `jett profile dump` feeds profile_ref.py, and
`jett-profd replay --agent` gives the daemon's TOON, decoded with the
reference TOON library; the two profiles must be equal field for field
(and in the same key order).  A capture named *.cut.jcap was cut short
(run-random): both read it as far as it goes and exit with status 1.
Exit 0 when all agree."""
import json, os, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import profile_ref  # noqa: E402

from toon_exact import decode_all  # noqa: E402


def run(argv, cut=False):
    """The command's output; its status must be 0, or 1 for a capture cut
    short (jett-capture(5): what was read is printed, and the damage
    reported)."""
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != (1 if cut else 0):
        raise SystemExit("%s: exit status %d: %s" % (" ".join(argv), p.returncode,
                                                     p.stderr.decode("utf-8", "replace")))
    return p.stdout.decode("utf-8")


def first_difference(a, b, path="profile"):
    if type(a) != type(b):
        return "%s: %r != %r" % (path, a, b)
    if isinstance(a, dict):
        if list(a) != list(b):
            return "%s: keys %s != %s" % (path, list(a), list(b))
        for k in a:
            d = first_difference(a[k], b[k], path + "." + k)
            if d:
                return d
    elif isinstance(a, list):
        if len(a) != len(b):
            return "%s: %d items != %d" % (path, len(a), len(b))
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, "%s[%d]" % (path, i))
            if d:
                return d
    elif a != b:
        return "%s: %r != %r" % (path, a, b)
    return None


def main():
    build, modules, caps = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3:]
    jett, profd = build + "/cli/jett", build + "/daemon/jett-profd"
    toons, refs = [], []
    with tempfile.TemporaryDirectory() as tmp:
        dump = os.path.join(tmp, "dump.txt")
        for cap in caps:
            cut = cap.endswith(".cut.jcap")
            toons.append(run([profd, "replay", cap, "--agent"], cut).rstrip("\n"))
            with open(dump, "w", encoding="utf-8") as f:
                f.write(run([jett, "profile", "dump", cap], cut))
            refs.append(profile_ref.profile(profile_ref.Model(profile_ref.parse(dump))))
    bad = 0
    for cap, got, want in zip(caps, decode_all(toons, modules), refs):
        d = first_difference(want["profile"], got["profile"])
        if d:
            bad += 1
            print("MISMATCH %s: %s (reference vs daemon)" % (cap, d))
    print("%d captures, %d agree, %d differ" % (len(caps), len(caps) - bad, bad))
    return 1 if bad else 0


sys.exit(main())
