#!/bin/sh
# Memory aggregation benchmark: pipes a synthetic capture (default 20
# million ALLOC events, 1.2 million live ids at the peak, frees in random
# order, 50,000 sites) into `jett-profd replay -` and reports events per
# second of the daemon's own CPU time (user + system, one core) and its
# peak RSS.  A second run holds 4 million live ids, more than the 64 MiB
# retention budget tracks (2 million fit since live records of recent ids
# take 8 bytes): its peak RSS must stay under 64 + 16 MiB.
#
#   tests/bench/mem-bench.sh BUILD_DIR [NEVENTS]
set -eu
build=${1:-build}
events=${2:-20000000}
python3 - "$build" "$events" <<'PY'
import os, subprocess, sys
build, events = sys.argv[1], int(sys.argv[2])
gen, profd = build + "/tests/bench/mem-bench-gen", build + "/daemon/jett-profd"
ok = True
for live, label in ((1200000, "1.2M live"), (4000000, "4M live, budget exhausted")):
    g = subprocess.Popen([gen, "-", str(events), str(live)], stdout=subprocess.PIPE)
    d = subprocess.Popen([profd, "replay", "-", "--agent"], stdin=g.stdout,
                         stdout=subprocess.PIPE)
    g.stdout.close()
    out = d.stdout.read().decode()
    _, status, ru = os.wait4(d.pid, 0)
    g.wait()
    cpu = ru.ru_utime + ru.ru_stime
    st = [l.strip() for l in out.splitlines() if l.startswith("  status:") or "partial_reason" in l]
    print("%s: exit %d, %s" % (label, os.waitstatus_to_exitcode(status), ", ".join(st)))
    print("  %d events in %.2f s of daemon CPU: %.2f million events/s; peak RSS %.1f MiB"
          % (events, cpu, events / cpu / 1e6, ru.ru_maxrss / 1024))
    ok = ok and os.waitstatus_to_exitcode(status) == 0 and ru.ru_maxrss < 80 * 1024
sys.exit(0 if ok else 1)
PY
