#!/usr/bin/env bash
# Flake hunt: run every test suite RUNS times (default 50) while two CPU
# hogs compete for this 2-core machine, and stop at the first failing run
# (its log is kept). A test that fails sometimes is a defect: this is how
# to find it. Needs root, like the suites. Usage:
#   make stress            (or: STRESS_RUNS=N HOGS=K scripts/stress.sh)
# STRESS_SUITES="guard_integration cct_integration ..." runs only those
# suites (tests/test_NAME.c): after a change, the tests whose count
# restarts get their runs sooner than with every suite.
set -uo pipefail
cd "$(dirname "$0")/.."
RUNS=${STRESS_RUNS:-50}
HOGS=${HOGS:-2}
all=$(ls tests/test_*.c | sed 's|tests/test_\(.*\)\.c|\1|')
suites=()
for s in ${STRESS_SUITES:-$all}; do
	s=${s#test_}
	if [ ! -f "tests/test_$s.c" ]; then
		echo "stress: no suite '$s' (tests/test_$s.c); the suites are:" $all >&2
		exit 2
	fi
	suites+=(".output/tests/test_$s")
done
make -s -j2 cabbpf "${suites[@]}" || exit 1
hogs=()
for _ in $(seq "$HOGS"); do
	(while :; do :; done) &
	hogs+=($!)
done
trap 'kill "${hogs[@]}" 2>/dev/null' EXIT
log=$(mktemp /tmp/cabbpf-stress.XXXXXX)
for i in $(seq "$RUNS"); do
	start=$(date +%s)
	if ! OUT=.output tests/run.sh "${suites[@]}" >"$log" 2>&1; then
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
echo "stress: $RUNS of $RUNS runs clean under $HOGS CPU hogs (${STRESS_SUITES:-every suite})"
