#!/usr/bin/env bash
# tests/vm/guest.sh: what tests/vm/vmtest.sh runs in each guest, from the top
# of the tree. It runs each case of $VMTEST_OUT/cases ("SUITE [TCASE]" a
# line) through tests/run.sh, one suite binary $OUT/tests/SUITE at a time
# ($OUT: .output unless set)
# (CK_RUN_CASE=TCASE when a test case is named), and writes for the host, in
# $VMTEST_OUT (a host directory):
#   release          the guest kernel's release (uname -r)
#   results          one line a case, tab-separated: SUITE, TCASE (or -),
#                    passed, failed, skipped, seconds, what went wrong (or -)
#   case-N.log       case N's whole output (run.sh's and the suite's)
#   case-N.tests     libcheck's log of it (CK_LOG_FILE_NAME): a line a
#                    test, written as each test ends
#   kept-N/          the scratch directories a failed case's harness kept
#                    (they are on the guest's tmpfs, which vanishes)
# and prints one line a case on the console. A case fails when its binary or
# its source is missing (never skipped), when run.sh fails, prints no
# totals, or when it ran no test at all (a TCASE the suite does not have).
# Exits 0 when every case passed.
set -euo pipefail
# The whole script is read before it runs: editing it meanwhile cannot
# change a run under way.
{
out=${VMTEST_OUT:?guest.sh runs in a guest of tests/vm/vmtest.sh}
bins=${OUT:-.output}/tests
rel=$(uname -r)
echo "$rel" >"$out/release"
: >"$out/results"
say() { echo "vmtest[$rel]: $*"; }

# The host built the targets; a guest that builds them (slowly, and into its
# tmpfs) means they were stale there: said, not hidden.
if ! built=$(tests/targets/build.sh .output/targets 2>&1); then
	say "tests/targets/build.sh failed in the guest:"
	printf '%s\n' "$built" | tail -n 20
elif [ -n "$built" ]; then
	say "WARNING: the guest rebuilt targets the host had not built:"
	printf '%s\n' "$built" | head -n 10
fi

n=0 bad=0
while read -r suite tcase rest; do
	case "$suite" in "" | "#"*) continue ;; esac
	n=$((n + 1))
	log=$out/case-$n.log
	name="$suite${tcase:+ $tcase}"
	p=0 f=0 s=0 why=-
	start=$(date +%s%N)
	if [ -n "${rest:-}" ]; then
		why="bad line: '$suite $tcase $rest' (SUITE [TCASE])"
	elif [ ! -f "tests/$suite.c" ]; then
		why="no tests/$suite.c in this tree"
	elif [ ! -x "$bins/$suite" ]; then
		why="no suite binary $bins/$suite (make vmtest builds it)"
	else
		rc=0
		# run.sh shows a suite's output when it ends; libcheck's log has
		# each test's result as it ends, on the host at once: a case that
		# hangs shows there which test it was in.
		export CK_LOG_FILE_NAME=$out/case-$n.tests
		if [ -n "$tcase" ]; then
			CK_RUN_CASE=$tcase tests/run.sh "$bins/$suite" >"$log" 2>&1 || rc=$?
		else
			env -u CK_RUN_CASE tests/run.sh "$bins/$suite" >"$log" 2>&1 || rc=$?
		fi
		line=$(grep -E '^check: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' "$log" | tail -n 1 || true)
		if grep -q 'Checks: 0,' "$log"; then
			why="ran no test${tcase:+: $suite has no test case \"$tcase\"?}"
		elif [ -z "$line" ]; then
			why="run.sh printed no totals (exit $rc)"
		else
			read -r p f s < <(sed -E 's/^check: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped.*/\1 \2 \3/' <<<"$line")
			if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
				why="run.sh exit $rc"
			fi
		fi
	fi
	secs=$((($(date +%s%N) - start) / 1000000000))
	[ "$why" = - ] && [ "$f" != 0 ] && why="$f failed"
	if [ "$why" != - ] && [ "$f" = 0 ]; then f=1; fi
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$suite" "${tcase:--}" "$p" "$f" "$s" "$secs" "$why" >>"$out/results"
	if [ "$why" = - ]; then
		say "$name: check: $p passed, $f failed, $s skipped ($secs s)"
	else
		bad=$((bad + 1))
		say "$name: FAILED: $why: check: $p passed, $f failed, $s skipped ($secs s)"
		if [ -f "$log" ]; then
			# libcheck's failure lines (FILE:LINE:F|E:TCASE:TEST:...)
			grep -E '^[^ :]+:[0-9]+:[FE]:' "$log" | head -n 20 | sed 's/^/    /' || true
			k=0
			while read -r dir; do
				[ -d "$dir" ] || continue
				if [ "$(du -sm "$dir" | cut -f1)" -le 64 ]; then
					mkdir -p "$out/kept-$n"
					cp -a "$dir" "$out/kept-$n/" && k=$((k + 1))
				fi
			done < <(sed -n 's/.*its files are kept in \(.*\)$/\1/p' "$log")
			[ $k = 0 ] || say "$name: the $k scratch folder(s) its harness kept are copied to the host (kept-$n)"
		fi
	fi
done <"$out/cases"
[ $n -gt 0 ] || { say "no case to run"; exit 1; }
[ $bad = 0 ]
exit
}
