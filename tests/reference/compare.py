#!/usr/bin/env python3
"""compare: checks jett-profd against the reference model.

    compare.py BUILD_ROOT TOON_MODULES CAPTURE...

For each packed capture: `jett profile dump` feeds profile_ref.py, and
`jett-profd replay --agent` gives the daemon's TOON, decoded with the
reference TOON library; the two profiles must be equal field for field
(and in the same key order).  Exit 0 when all agree."""
import json, os, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import profile_ref  # noqa: E402

# The library reads numbers as doubles, exact only up to 2^53; byte counts
# go to 2^64 - 1.  Its number tokens pass through Number.parseFloat, so an
# integer token beyond that is handed back as {"__int": digits} instead,
# and read as an exact integer below.
DECODE = ("import {decode} from '%s/@toon-format/toon/dist/index.mjs';"
          "const pf=Number.parseFloat;Number.parseFloat=t=>/^[0-9]+$/.test(t)&&"
          "!Number.isSafeInteger(pf(t))?{__int:t}:pf(t);"
          "let s='';process.stdin.on('data',d=>s+=d);process.stdin.on('end',()=>"
          "process.stdout.write(JSON.stringify(JSON.parse(s).map(t=>decode(t)))));")


def run(argv):
    return subprocess.run(argv, stdout=subprocess.PIPE, check=True).stdout.decode("utf-8")


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
            toons.append(run([profd, "replay", cap, "--agent"]).rstrip("\n"))
            with open(dump, "w", encoding="utf-8") as f:
                f.write(run([jett, "profile", "dump", cap]))
            refs.append(profile_ref.profile(profile_ref.Model(profile_ref.parse(dump))))
    out = subprocess.run(["node", "--input-type=module", "-e", DECODE % modules],
                         input=json.dumps(toons).encode(), stdout=subprocess.PIPE, check=True)
    bad = 0
    exact = lambda o: int(o["__int"]) if list(o) == ["__int"] else o
    for cap, got, want in zip(caps, json.loads(out.stdout, object_hook=exact), refs):
        d = first_difference(want["profile"], got["profile"])
        if d:
            bad += 1
            print("MISMATCH %s: %s (reference vs daemon)" % (cap, d))
    print("%d captures, %d agree, %d differ" % (len(caps), len(caps) - bad, bad))
    return 1 if bad else 0


sys.exit(main())
