#!/usr/bin/env bash
# What the exec hold adds (issue 65 item 2): under --follow-forks a program
# the tree execs is stopped at its exec until its probes (and guard, and
# arming) are in, so that it is traced from its first instruction. A shell
# runs tests/targets/treeexec "abc" (main -> a -> b -> c, a few ms) N times;
# in one run of this script, R times each:
#   untraced:  sh -c 'for ...; do treeexec abc; done'
#   traced:    cabbpf --follow-forks -f a -f b -f c -- the same
#   traced --entry-only (no return probes: a program needs no guard, so only
#              its first exec is held)
# Prints the wall seconds (median), the execs held and the time each was
# held (the JSON's target.exec_holds: mean and max, median over the runs),
# and checks every run counted a, b and c exactly N times.
#   bench/exec_hold.sh [N] [R]
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-25}
R=${2:-3}
O=.output/bench
mkdir -p "$O"
make -s cabbpf
tests/targets/build.sh .output/targets >/dev/null
T=$(readlink -f .output/targets/treeexec-O2)
CMD=(/bin/sh -c "for i in \$(seq $N); do $T abc >/dev/null; done")
wall() { # wall seconds of "$@"
	local t0 t1
	t0=$(date +%s%N)
	"$@" >/dev/null 2>>"$O/exec_hold.log" || true
	t1=$(date +%s%N)
	echo "scale=3; ($t1 - $t0) / 1000000000" | bc
}
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
: >"$O/exec_hold.log"
printf '%-22s %9s %6s %12s %12s %s\n' run wall_s held mean_ms max_ms counts
for mode in untraced traced entry-only; do
	walls=() helds=() means=() maxs=() counts=ok
	for r in $(seq "$R"); do
		case $mode in
		untraced) walls+=("$(wall "${CMD[@]}")") ;;
		*)
			opts=(--follow-forks -q -f a -f b -f c --json "$O/exec_hold.json")
			[ "$mode" = entry-only ] && opts+=(--entry-only)
			walls+=("$(wall ./cabbpf "${opts[@]}" -- "${CMD[@]}")")
			read -r held mean max c <<<"$(python3 - "$O/exec_hold.json" "$N" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1])); n = int(sys.argv[2])
h = d['target']['exec_holds']
calls = {f['name'].split(':')[-1]: f['calls'] for f in d.get('functions', [])}
ok = all(calls.get(x) == n for x in 'abc')
print(h['count'], round(h['mean_ms'], 1), round(h['max_ms'], 1), 'ok' if ok else 'WRONG:%s' % calls)
EOF
)"
			helds+=("$held") means+=("$mean") maxs+=("$max")
			[ "$c" = ok ] || counts=$c
			;;
		esac
	done
	if [ "$mode" = untraced ]; then
		printf '%-22s %9s %6s %12s %12s %s\n' "$mode" "$(median "${walls[@]}")" - - - -
	else
		printf '%-22s %9s %6s %12s %12s %s\n' "$mode" "$(median "${walls[@]}")" \
			"$(median "${helds[@]}")" "$(median "${means[@]}")" "$(median "${maxs[@]}")" "$counts"
	fi
done
