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
import resource, subprocess, sys, time
profd, cap, samples = sys.argv[1], sys.argv[2], int(sys.argv[3])
start = time.monotonic()
run = subprocess.run([profd, "replay", cap, "--agent"], stdout=subprocess.PIPE)
elapsed = time.monotonic() - start
rss_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
status = [l.strip() for l in run.stdout.decode().splitlines() if "status:" in l or "partial_reason:" in l]
print("replay exit %d, %s" % (run.returncode, ", ".join(status)))
print("samples: %d in %.2f s: %.0f samples/s" % (samples, elapsed, samples / elapsed))
limit_kib = (32 + 16) * 1024
print("peak RSS: %.1f MiB (limit %d MiB)" % (rss_kib / 1024, limit_kib // 1024))
sys.exit(0 if run.returncode == 0 and rss_kib < limit_kib else 1)
PY
