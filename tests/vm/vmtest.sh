#!/usr/bin/env bash
# tests/vm/vmtest.sh (`make vmtest`): the kernel matrix. Boots each kernel of
# VMTEST_KERNELS under QEMU (tests/vm/boot.sh: the host's / read-only under a
# tmpfs overlay) and runs the cases of tests/vm/cases in it
# (tests/vm/guest.sh, through tests/run.sh); prints each case's result line,
# each kernel's totals and time, a summary table, and then every failed case
# again with its first failed check (a CI log's tail shows them). Exits 1 when a kernel
# failed a case, booted badly, never reported (panic, hang) or timed out.
#
# Run it from `make vmtest`, which builds ./cabbpf, the suites of the cases
# and tests/targets first: the guest builds nothing (it would do it slowly,
# into its tmpfs). Run directly, it uses what is built.
#
# Environment:
#   VMTEST_KERNELS   Debian kernel packages (default: linux-image-amd64
#                    linux-image-6.12-amd64, Debian 12's 6.1 and its 6.12);
#                    a name, a .deb or an unpacked directory (boot.sh)
#   VMTEST_CASES     the cases instead of tests/vm/cases: "SUITE [TCASE]"
#                    each, separated by newlines, ',' or ';'
#   VMTEST_TIMEOUT   seconds a kernel's whole boot may take (default 1800)
#   VMTEST_DIR       work folder (default /var/tmp/cabbpf-vmtest): the
#                    kernels, kept between runs, and runs/vmtest-STAMP/ with
#                    each kernel's console log and files (the last 10 kept)
#   VMTEST_ACCEL     kvm or tcg (default: kvm where kvm_intel or kvm_amd is
#                    loaded and /dev/kvm opens, else tcg)
#   VMTEST_TCG_THREAD  single (default) or multi: QEMU's multi-threaded TCG
#                    breaks the guest kernel's live code patching (boot.sh)
#   VMTEST_MEM, VMTEST_CPUS   guest memory in MiB (2048) and vCPUs (2)
#   OUT              the build folder of the suites (default .output)
#   CK_TIMEOUT_MULTIPLIER     for the suites in the guest (default 20 under
#                    TCG, which runs code several times slower; run.sh's 6
#                    under KVM)
#
#   tests/vm/vmtest.sh --suites   the suites of the case list (for make)
set -euo pipefail
# The whole script is read before it runs: editing it meanwhile cannot
# change a run under way.
{
cd "$(dirname "$0")/../.."
W=${VMTEST_DIR:-/var/tmp/cabbpf-vmtest}
KERNELS=${VMTEST_KERNELS:-linux-image-amd64 linux-image-6.12-amd64}
TIMEOUT=${VMTEST_TIMEOUT:-1800}
OUT=${OUT:-.output}
die() {
	echo "vmtest: $*" >&2
	exit 1
}

# ---- the cases ------------------------------------------------------------
if [ -n "${VMTEST_CASES:-}" ]; then
	cases=$(tr ',;' '\n' <<<"$VMTEST_CASES")
	from=VMTEST_CASES
else
	[ -f tests/vm/cases ] || die "no tests/vm/cases"
	cases=$(cat tests/vm/cases)
	from=tests/vm/cases
fi
# one "SUITE [TCASE]" a line, no comments or blank lines
cases=$(sed -e 's/#.*//' -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' -e 's/[[:space:]]\{1,\}/ /g' <<<"$cases" | grep -v '^$' || true)
[ -n "$cases" ] || die "$from lists no case"
while read -r suite tcase rest; do
	if ! [[ $suite =~ ^test_[A-Za-z0-9_]+$ && ${tcase:-x} =~ ^[A-Za-z0-9_.-]+$ && -z ${rest:-} ]]; then
		die "$from: '$suite${tcase:+ $tcase}${rest:+ $rest}' is not 'SUITE [TCASE]' (e.g. test_integration exact)"
	fi
done <<<"$cases"
if [ "${1:-}" = --suites ]; then
	cut -d' ' -f1 <<<"$cases" | sort -u
	exit 0
fi
[ $# -eq 0 ] || die "usage: tests/vm/vmtest.sh [--suites] (settings: the header of this script)"
case "$TIMEOUT" in "" | *[!0-9]*) die "VMTEST_TIMEOUT takes seconds, not '$TIMEOUT'" ;; esac
[ "$(id -u)" = 0 ] || die "run as root (make vmtest as root): QEMU reads the whole of / for the guests, and the suites need root"
read -ra klist <<<"$KERNELS"
[ ${#klist[@]} -gt 0 ] || die "VMTEST_KERNELS is empty"

# ---- what the guests need: QEMU and co., and what is built on the host -------
tests/vm/boot.sh --check || die "this machine cannot boot the guests (above)"
[ -x cabbpf ] || die "no ./cabbpf: make vmtest builds it (or make cabbpf)"
missing=0
while read -r suite _; do
	if [ ! -f "tests/$suite.c" ] || [ ! -x "$OUT/tests/$suite" ]; then
		echo "vmtest: $suite: $( [ -f "tests/$suite.c" ] && echo "no suite binary $OUT/tests/$suite (make vmtest builds it)" || echo "no tests/$suite.c in this tree") (listed in $from): its cases will fail" >&2
		missing=1
	fi
done <<<"$cases"
tests/targets/build.sh .output/targets >&2 || die "tests/targets/build.sh failed on the host"
# What a suite builds for itself at its start (the probe suite's gcc and
# clang flavours of the targets), built here: CABBPF_TEST_SETUP_ONLY makes
# a suite set up and stop (tests/harness.c).
while read -r suite _; do
	[ -x "$OUT/tests/$suite" ] || continue
	CABBPF_TEST_SETUP_ONLY=1 "$OUT/tests/$suite" >/dev/null ||
		die "$suite: its setup failed on the host"
done <<<"$(printf '%s\n' "$cases" | awk '!seen[$1]++')"

# ---- the kernels, fetched before any boots ---------------------------------
mkdir -p "$W/runs"
W=$(cd "$W" && pwd)
releases=()
for k in "${klist[@]}"; do
	rel=$(tests/vm/boot.sh --prepare "$k") || die "kernel $k: could not be fetched or unpacked (above)"
	releases+=("$rel")
done
accel=$(tests/vm/boot.sh --which-accel)
mult=${CK_TIMEOUT_MULTIPLIER:-}
if [ -z "$mult" ]; then
	case "$accel" in tcg*) mult=20 ;; *) mult=6 ;; esac
fi
RUN=$W/runs/vmtest-$(date +%Y%m%d-%H%M%S)-$$
mkdir -p "$RUN"
# The last 10 runs are kept.
find "$W/runs" -maxdepth 1 -name 'vmtest-*' -type d | sort | head -n -10 | xargs -r rm -rf
ncases=$(wc -l <<<"$cases")
echo "vmtest: ${#klist[@]} kernel(s) (${releases[*]}), $ncases case(s) from $from, accel $accel, CK_TIMEOUT_MULTIPLIER=$mult, timeout $TIMEOUT s a kernel; logs in $RUN"

# ---- one boot a kernel -------------------------------------------------------
rows=() bad=0 failed_cases=()
for i in "${!klist[@]}"; do
	k=${klist[$i]} rel=${releases[$i]}
	dir=$RUN/$rel
	[ ! -e "$dir" ] || dir=$RUN/$rel-$((i + 1)) # a kernel listed twice
	mkdir -p "$dir/out"
	printf '%s\n' "$cases" >"$dir/out/cases"
	echo "vmtest: === $rel ($k) ==="
	t0=$(date +%s)
	rc=0
	# In the background, so that a signal to this script stops the guest
	# too (boot.sh stops QEMU on TERM).
	tests/vm/boot.sh --timeout "$TIMEOUT" --log "$dir/console.log" --out "$dir/out" "$k" -- \
		env CK_TIMEOUT_MULTIPLIER="$mult" OUT="$OUT" tests/vm/guest.sh &
	bpid=$!
	trap 'kill "$bpid" 2>/dev/null; wait; echo "vmtest: interrupted; logs in $RUN" >&2; exit 130' INT TERM HUP
	wait "$bpid" || rc=$?
	trap - INT TERM HUP
	secs=$(($(date +%s) - t0))
	o=$dir/out
	[ -s "$o/release" ] && rel=$(cat "$o/release")
	p=0 f=0 s=0 ran=0 csecs=0
	if [ -f "$o/results" ]; then
		while IFS=$'\t' read -r suite tcase cp cf cs cse why; do
			ran=$((ran + 1)) p=$((p + cp)) f=$((f + cf)) s=$((s + cs)) csecs=$((csecs + cse))
			[ "$tcase" = - ] && tcase=""
			line="check: $cp passed, $cf failed, $cs skipped"
			if [ "$why" = - ]; then
				echo "vmtest: $rel: $suite${tcase:+ $tcase}: $line, $cse s"
			else
				echo "vmtest: $rel: $suite${tcase:+ $tcase}: FAILED ($why): $line, $cse s$([ -f "$o/case-$ran.log" ] && echo "; log $o/case-$ran.log")"
				# again after the summary, which is what a CI log's tail shows
				failed_cases+=("$rel: $suite${tcase:+ $tcase}: $why")
				first=$(grep -m1 -E ':[FE]:' "$o/case-$ran.log" 2>/dev/null || true)
				[ -z "$first" ] || failed_cases+=("    ${first:0:400}")
			fi
		done <"$o/results"
	fi
	up=$(cat "$o/boot-uptime" 2>/dev/null || echo "?")
	result=ok
	if [ ! -f "$o/status" ]; then
		result="no status"
		[ "$secs" -ge "$TIMEOUT" ] && result="timed out"
		echo "vmtest: $rel: the guest never reported a status ($result after $secs s: a panic, a hang or the timeout); console: $dir/console.log"
		# the case it was in, if any
		c=$((ran + 1))
		if [ -f "$o/case-$c.log" ]; then
			echo "vmtest: $rel: it was running case $c ($(sed -n "${c}p" "$o/cases")); the last tests it ended ($o/case-$c.tests):"
			tail -n 5 "$o/case-$c.tests" 2>/dev/null | sed 's/^/  | /'
		fi
	elif [ "$ran" -lt "$ncases" ]; then
		result="$((ncases - ran)) not run"
	elif [ "$f" -gt 0 ]; then
		result=FAILED
	elif [ "$rc" != 0 ]; then
		result="exit $rc"
	fi
	[ "$ran" -lt "$ncases" ] && [ "$result" != ok ] && f=$((f + ncases - ran))
	# What the guest kernel said that it should not have.
	if [ -f "$o/dmesg.log" ]; then
		warn=$(grep -E 'BUG:|Oops|WARNING:|Call Trace:|soft lockup|hard LOCKUP|blocked for more than|rcu_.*stall|general protection' "$o/dmesg.log" || true)
		if [ -n "$warn" ]; then
			echo "vmtest: $rel: NOTE: the guest kernel logged $(wc -l <<<"$warn") warning line(s) ($o/dmesg.log):"
			head -n 10 <<<"$warn" | sed 's/^/  | /'
		fi
	fi
	echo "vmtest: $rel: $ran of $ncases case(s) run: $p passed, $f failed, $s skipped; $secs s (the guest was up $up s when it started them; the cases took $csecs s); $result"
	[ "$result" = ok ] || bad=$((bad + 1))
	rows+=("$(printf '%-24s %5s %6s %6s %7s %7s  %s' "$rel" "$ran/$ncases" "$p" "$f" "$s" "$secs" "$result")")
done

echo "vmtest: summary (accel $accel; logs in $RUN):"
printf '  %-24s %5s %6s %6s %7s %7s  %s\n' kernel cases passed failed skipped seconds result
printf '  %s\n' "${rows[@]}"
if [ ${#failed_cases[@]} -gt 0 ]; then
	echo "vmtest: failed cases (kernel: suite case: why; the first failed check):"
	printf '  %s\n' "${failed_cases[@]}"
fi
[ $missing = 0 ] || echo "vmtest: suites listed in $from are missing from this tree or unbuilt (above): their cases failed"
if [ $bad -gt 0 ]; then
	echo "vmtest: FAILED on $bad of ${#klist[@]} kernel(s)"
	exit 1
fi
echo "vmtest: passed on ${#klist[@]} kernel(s)"
exit
}
