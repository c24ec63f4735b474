#!/bin/sh
# CPU aggregation benchmark: writes a synthetic capture (default 5 million
# samples over 1 million distinct chains, deep stacks), replays it with
# jett-profd and reports samples per second and the peak RSS, which must
# stay under 32 MiB + 16 MiB (the CPU and stack-table budgets; the
# capture exhausts both).
#
#   tests/bench/agg-bench.sh BUILD_DIR [NSAMPLES [NSTACKS]]
set -eu
build=${1:-build}
samples=${2:-5000000}
stacks=${3:-1000000}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$build/tests/bench/agg-bench-gen" "$dir/bench.jcap" "$samples" "$stacks"
python3 - "$build/daemon/jett-profd" "$dir/bench.jcap" "$samples" <<'PY'
import os, subprocess, sys, time
profd, cap, samples = sys.argv[1], sys.argv[2], int(sys.argv[3])
start = time.monotonic()
d = subprocess.Popen([profd, "replay", cap, "--agent"], stdout=subprocess.PIPE)
out = d.stdout.read().decode()
_, status, ru = os.wait4(d.pid, 0)
wall = time.monotonic() - start
cpu = ru.ru_utime + ru.ru_stime
st = [l.strip() for l in out.splitlines() if l.startswith("  status:") or "partial_reason" in l]
print("replay exit %d, %s" % (os.waitstatus_to_exitcode(status), ", ".join(st)))
print("samples: %d in %.2f s of daemon CPU (%.2f s wall): %.0f samples/s"
      % (samples, cpu, wall, samples / cpu))
limit_kib = (32 + 16) * 1024
print("peak RSS: %.1f MiB (limit %d MiB)" % (ru.ru_maxrss / 1024, limit_kib // 1024))
sys.exit(0 if os.waitstatus_to_exitcode(status) == 0 and ru.ru_maxrss < limit_kib else 1)
PY
