#!/usr/bin/env bash
# SIGKILL of cabbpf at a random instant while its guard holds a target
# (issue 44 item 2; user/trace/guardian.h): a throwing C++ target, a
# ucontext coroutine target and a Go target, RUNS times each. A run is
# harmed when the target is seen stopped for 10 s on end (nobody
# continues it) or writes other than it writes untraced (a target that
# dies of std::terminate does: its last lines are missing; the target is
# an orphan once cabbpf is killed, so its exit status is the suite's to
# check). Kills fall within half the target's untraced run time after
# the tracing line (and MAX_DELAY_MS); a run that ended before its kill
# is counted "late", not in runs. Prints per target: runs, harmed, late,
# and the instants tried.
# The suite runs the same thing twice a target
# (tests/test_guard_integration.c, killed_while_guarding).
#   bench/guard_kill.sh [RUNS] [MAX_DELAY_MS]     (GK_ONLY=exc|coro|go: one target)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-50}
MAXD=${2:-1200}
make -s cabbpf targets
T=.output/targets
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

# target label, its command, its selection
targets=(
	"exc|$T/exc-gxx-O2 basic 600000|-f catcher -f thrower_*"
	"coro|$T/coro-O2 3000000|-f consume -f produce -f step"
	"go|$T/gohello 100000|-f main.mix -f main.leaf"
)

# One run: prints "ok" or why it was harmed.
one() {
	local cmd=$1 sel=$2 want=$3 delay_ms=$4 cab tpid i st stopped=0
	rm -f "$W/glog"
	# shellcheck disable=SC2086
	CABBPF_GUARDIAN_LOG="$W/glog" setsid ./cabbpf $sel -o "$W/report" -- $cmd \
		>"$W/out" 2>"$W/err" &
	cab=$!
	for i in $(seq 1 1000); do
		grep -q '^cabbpf: tracing ' "$W/err" 2>/dev/null && break
		sleep 0.01
	done
	# cabbpf's child running the target (not the probe-cost measurement's);
	# the tracing line comes just before its exec: until then it runs
	# cabbpf's image
	for i in $(seq 1 100); do
		tpid=$(pgrep -P "$cab" -f "^${cmd%% *}" | head -n1 || true)
		[ -z "$tpid" ] || break
		sleep 0.005
	done
	sleep "$(awk -v d="$delay_ms" 'BEGIN { printf "%.3f", d / 1000 }')"
	# the run over before the kill: not a kill while guarding
	if grep -q '^cabbpf: .* stopped: ' "$W/err" 2>/dev/null; then
		wait "$cab" 2>/dev/null || true
		echo late
		return
	fi
	kill -9 "$cab" 2>/dev/null || true
	wait "$cab" 2>/dev/null || true
	[ -n "$tpid" ] || { echo "no target"; return; }
	# the target is not our child: watch it until it is gone
	while [ -e "/proc/$tpid" ]; do
		st=$(awk '{ sub(/.*\) /, ""); print $1 }' "/proc/$tpid/stat" 2>/dev/null || echo X)
		if [ "$st" = T ]; then
			stopped=$((stopped + 1))
			if [ $stopped -ge 1000 ]; then
				kill -CONT "$tpid"
				echo "left stopped"
				return
			fi
		else
			stopped=0
		fi
		sleep 0.01
	done
	if ! cmp -s "$W/out" "$want"; then
		echo "output differs: $(grep -v '^cabbpf' "$W/out" "$W/err" | tail -n2 | tr '\n' ' ')" \
			"$(cat "$W/glog" 2>/dev/null)"
		return
	fi
	echo ok
}

printf '%-6s %5s %7s %5s  %s\n' target runs harmed late "kill instants (ms after tracing began)"
for t in "${targets[@]}"; do
	IFS='|' read -r label cmd sel <<<"$t"
	# GK_ONLY=LABEL: one target only
	[ -z "${GK_ONLY:-}" ] || [ "$GK_ONLY" = "$label" ] || continue
	t0=$(date +%s%N)
	# shellcheck disable=SC2086
	$cmd >"$W/want"
	# kills within half the untraced run time after the tracing line
	# (traced, the target runs longer): a kill after its end tests nothing
	half=$((($(date +%s%N) - t0) / 2000000))
	maxd=$((half < MAXD ? half + 1 : MAXD))
	harmed=0
	late=0
	delays=()
	for r in $(seq "$RUNS"); do
		d=$((RANDOM % maxd))
		delays+=("$d")
		res=$(one "$cmd" "$sel" "$W/want" "$d")
		if [ "$res" = late ]; then
			late=$((late + 1))
		elif [ "$res" != ok ]; then
			harmed=$((harmed + 1))
			echo "  $label run $r (killed at $d ms): $res" >&2
		fi
	done
	printf '%-6s %5d %7d %5d  min %d, max %d\n' "$label" "$((RUNS - late))" "$harmed" "$late" \
		"$(printf '%s\n' "${delays[@]}" | sort -n | head -n1)" \
		"$(printf '%s\n' "${delays[@]}" | sort -n | tail -n1)"
done
