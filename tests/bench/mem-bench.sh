#!/bin/sh
# Memory aggregation benchmark: the generator writes a synthetic capture
# (default 20 million ALLOC events, 1.2 million live ids at the peak, frees
# in random order, 50,000 sites) to a file, and `jett-profd replay FILE`
# aggregates it; reported are events per second of the daemon's own CPU
# time (user + system, one core; the file is read once beforehand so the
# page cache holds it) and its peak RSS, the median of five runs with the
# fastest beside it (a shared machine's speed drifts by tens of percent).
# The same capture is also piped into `jett-profd replay -`, for comparison.
# A second capture holds 4 million live ids, more than the 64 MiB
# retention budget tracks (2 million fit since live records of recent ids
# take 8 bytes): its peak RSS must stay under 64 + 16 MiB.
# Each capture is written twice, when the generator can: in the 58-byte
# ALLOC entries every version reads (so that builds compare on the same
# bytes), and as the same events in version 3's compact entries, which
# the agent writes (to compare with the 58-byte figures of an older
# build).  The second's size is printed beside it.
#
#   tests/bench/mem-bench.sh BUILD_DIR [NEVENTS]
set -eu
build=${1:-build}
events=${2:-20000000}
python3 - "$build" "$events" <<'PY'
import os, statistics, subprocess, sys, tempfile
build, events = sys.argv[1], int(sys.argv[2])
gen, profd = build + "/tests/bench/mem-bench-gen", build + "/daemon/jett-profd"


def replay(source):
    """One replay of a file, or of a pipe from the generator when source
    is a generator command: (exit status, status lines, CPU s, RSS KiB)."""
    g = None
    if isinstance(source, list):
        g = subprocess.Popen(source, stdout=subprocess.PIPE)
        d = subprocess.Popen([profd, "replay", "-", "--agent"], stdin=g.stdout,
                             stdout=subprocess.PIPE)
        g.stdout.close()
    else:
        d = subprocess.Popen([profd, "replay", source, "--agent"], stdout=subprocess.PIPE)
    out = d.stdout.read().decode()
    _, status, ru = os.wait4(d.pid, 0)
    if g:
        g.wait()
    st = [l.strip() for l in out.splitlines() if l.startswith("  status:") or "partial_reason" in l]
    return os.waitstatus_to_exitcode(status), st, ru.ru_utime + ru.ru_stime, ru.ru_maxrss


ok = True
with tempfile.TemporaryDirectory() as tmp:
    # an older generator takes --compact for its output path: it writes
    # that file (here, in tmp) and nothing to the second
    probe = os.path.join(tmp, "probe.jcap")
    subprocess.run([gen, "--compact", probe, "1"], stderr=subprocess.DEVNULL, cwd=tmp)
    compact = os.path.exists(probe)
    if os.path.exists(probe):
        os.remove(probe)
    for live, label, form in ((1200000, "1.2M live", []), (1200000, "1.2M live, compact", ["--compact"]),
                              (4000000, "4M live, budget exhausted", []),
                              (4000000, "4M live, budget exhausted, compact", ["--compact"])):
        if form and not compact:
            continue
        cap = os.path.join(tmp, "mem.jcap")
        subprocess.run([gen] + form + [cap, str(events), str(live)], check=True)
        size = os.path.getsize(cap)
        with open(cap, "rb") as f:
            while f.read(1 << 24):
                pass
        runs = [replay(cap) for _ in range(5)]
        code, st, _, _ = runs[0]
        cpu = statistics.median(r[2] for r in runs)
        rss = max(r[3] for r in runs)
        print("%s: exit %d, %s; capture %.1f MB (%.2f bytes per event)"
              % (label, code, ", ".join(st), size / 1e6, size / events))
        best = min(r[2] for r in runs)
        print("  file: %d events in %.2f s of daemon CPU (median of 5, runs %s): "
              "%.2f million events/s (fastest %.2f); peak RSS %.1f MiB"
              % (events, cpu, " ".join("%.2f" % r[2] for r in runs), events / cpu / 1e6,
                 events / best / 1e6, rss / 1024))
        code2, _, pcpu, prss = replay([gen] + form + ["-", str(events), str(live)])
        print("  pipe: %.2f s of daemon CPU: %.2f million events/s; peak RSS %.1f MiB"
              % (pcpu, events / pcpu / 1e6, prss / 1024))
        ok = ok and all(r[0] == 0 for r in runs) and code2 == 0
        ok = ok and rss < 80 * 1024 and prss < 80 * 1024
        os.unlink(cap)
sys.exit(0 if ok else 1)
PY
