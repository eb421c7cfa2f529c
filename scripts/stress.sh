#!/usr/bin/env bash
# Flake hunt: run every test suite RUNS times (default 50) while two CPU
# hogs compete for this 2-core machine, and stop at the first failing run
# (its log is kept). A test that fails sometimes is a defect: this is how
# to find it. Needs root, like the suites. Usage:
#   make stress            (or: STRESS_RUNS=N HOGS=K scripts/stress.sh)
set -uo pipefail
cd "$(dirname "$0")/.."
RUNS=${STRESS_RUNS:-50}
HOGS=${HOGS:-2}
make -s -j2 cabbpf $(ls tests/test_*.c | sed 's|tests/\(.*\)\.c|.output/tests/\1|') || exit 1
hogs=()
for _ in $(seq "$HOGS"); do
	(while :; do :; done) &
	hogs+=($!)
done
trap 'kill "${hogs[@]}" 2>/dev/null' EXIT
log=$(mktemp /tmp/cabbpf-stress.XXXXXX)
for i in $(seq "$RUNS"); do
	start=$(date +%s)
	if ! OUT=.output tests/run.sh .output/tests/test_* >"$log" 2>&1; then
		echo "stress: run $i of $RUNS FAILED under $HOGS CPU hogs (load average" \
			"$(cut -d' ' -f1-3 /proc/loadavg)); log: $log"
		grep -E ':F:|:E:|printed no check summary' "$log" | head -20
		exit 1
	fi
	echo "stress: run $i of $RUNS clean ($(tail -n 1 "$log"), $(( $(date +%s) - start )) s," \
		"load average $(cut -d' ' -f1-3 /proc/loadavg); slowest:" \
		"$(sed -n 's/^run.sh: \(.*\) took \([0-9]*\) ms$/\2 \1/p' "$log" | sort -rn | head -n 3 |
			awk '{printf "%s%s %d s", (NR > 1 ? ", " : ""), $2, $1 / 1000}'))"
done
rm -f "$log"
echo "stress: $RUNS of $RUNS runs clean under $HOGS CPU hogs"
