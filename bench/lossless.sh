#!/usr/bin/env bash
# --lossless against the default when cabbpf is starved (issue 13 item 7):
# cabbpf is moved, once attached, into a cgroup v1 cpu group with a quota
# of Q% of one CPU (cpu.cfs_quota_us over a 100 ms period); the target,
# launched before, stays outside it: tests/targets/threads at -O0, two
# threads calling work() (emulated entry) flat out, K and 2K calls. Per
# quota, with and without --lossless: events lost, the target's waits and
# their total, and the run's wall time.
#   bench/lossless.sh [K] [QUOTA%...]     (defaults: 300000, 2 5 20 100)
set -euo pipefail
cd "$(dirname "$0")/.."
K=${1:-300000}
shift || true
QS=${*:-"2 5 20 100"}
make -s cabbpf
tests/targets/build.sh .output/targets >/dev/null
CG=/sys/fs/cgroup/cpu/cabbpf-bench-lossless-$$
mkdir -p "$CG"
trap 'rmdir "$CG" 2>/dev/null || true' EXIT
echo 100000 >"$CG/cpu.cfs_period_us"
out=.output/bench/lossless
mkdir -p "$out"
printf '%-6s %-10s %10s %10s %7s %10s %8s\n' quota mode events lost waits waited_s wall_s
for q in $QS; do
	echo $((q * 1000)) >"$CG/cpu.cfs_quota_us"
	for mode in default --lossless; do
		opt=()
		[ "$mode" = --lossless ] && opt=(--lossless)
		rm -f "$out/err" "$out/r.json"
		t0=$(date +%s.%N)
		./cabbpf -q --json "$out/r.json" --ring-size 1 -a count,callgraph "${opt[@]}" \
			-- .output/targets/threads-O0 2 "$K" 2>"$out/err" &
		pid=$!
		for _ in $(seq 2000); do grep -q tracing "$out/err" && break; sleep 0.005; done
		echo "$pid" >"$CG/cgroup.procs"
		wait "$pid"
		t1=$(date +%s.%N)
		python3 - "$out/r.json" "$q%" "$mode" "$(echo "$t1 - $t0" | bc)" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
l = j.get("lossless", {})
print(f"{sys.argv[2]:<6} {sys.argv[3]:<10} {j['events']:>10} {j['lost']:>10} "
      f"{l.get('waits', 0):>7} {l.get('waited_ns', 0) / 1e9:>10.3f} {float(sys.argv[4]):>8.2f}")
PY
	done
done
