#!/usr/bin/env bash
# Runs check suites and prints one totals line: "check: N passed, N failed, N skipped".
# A suite reports skips by printing lines that start with "SKIP:" (only where
# the kernel truly cannot do what the test needs); they are counted here.
# Integration suites (name contains "integration") are left out when
# CABBPF_UNIT_ONLY=1.
set -u
# Each test case's time limit (tcase_set_timeout) is what a quiet machine
# needs; a loaded one may need more. A test must fail only when what it
# waits for never comes, so the limits are stretched as the harness's
# waits are (H_PATIENCE in tests/harness.h).
export CK_TIMEOUT_MULTIPLIER=${CK_TIMEOUT_MULTIPLIER:-6}
pass=0 fail=0 skip=0 bad=0
# The failing checks' lines, repeated above the totals: CI keeps only the
# tail of a long run, and a failure must be read there, not guessed.
failed=()
for t in "$@"; do
	name=$(basename "$t")
	if [ "${CABBPF_UNIT_ONLY:-0}" = 1 ] && [[ $name == *integration* ]]; then continue; fi
	log=$(mktemp)
	start=$(date +%s%N)
	"$t" >"$log" 2>&1
	rc=$?
	cat "$log"
	# where a run's time goes (make stress: which suite to make faster)
	echo "run.sh: $name took $(( ($(date +%s%N) - start) / 1000000 )) ms"
	line=$(grep -E '^[0-9]+%: Checks: [0-9]+' "$log" | tail -n 1)
	if [ -z "$line" ]; then
		echo "run.sh: $name printed no check summary (exit $rc)"
		bad=$((bad + 1))
	else
		n=$(sed -E 's/.*Checks: ([0-9]+).*/\1/' <<<"$line")
		f=$(sed -E 's/.*Failures: ([0-9]+).*/\1/' <<<"$line")
		e=$(sed -E 's/.*Errors: ([0-9]+).*/\1/' <<<"$line")
		s=$(grep -c '^SKIP:' "$log")
		pass=$((pass + n - f - e - s))
		fail=$((fail + f + e))
		skip=$((skip + s))
		[ "$rc" -ne 0 ] && [ $((f + e)) -eq 0 ] && bad=$((bad + 1))
	fi
	before=${#failed[@]}
	while IFS= read -r l; do failed+=("$name: $l"); done \
		< <(grep -E '^[^:]+:[0-9]+:[EF]:' "$log")
	[ "$rc" -ne 0 ] && [ ${#failed[@]} -eq "$before" ] && failed+=("$name: exit $rc")
	rm -f "$log"
done
for l in "${failed[@]}"; do echo "run.sh: FAILED $l"; done
echo "check: $pass passed, $((fail + bad)) failed, $skip skipped"
[ $((fail + bad)) -eq 0 ]
