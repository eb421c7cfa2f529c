#!/usr/bin/env bash
# Cost of a C++ throw/catch through 10 traced frames under cabbpf, next to
# the same program untraced and traced without exceptions (every frame
# returns), in one run. Each figure is the target's own loop time per
# round (catcher -> f10 -> ... -> f1), best of REPEATS runs, so start-up
# and attach are not in it. The guard (docs/guard.md) makes each throw
# cost two ptrace stops: one to put the 11 return addresses back before
# the unwinder reads them, one to give the catcher its return probe back.
#   bench/exceptions.sh [ROUNDS] [REPEATS]
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-20000}
R=${2:-5}
make -s cabbpf
mkdir -p .output/bench
g++ -O2 -g -o .output/bench/throw10 bench/targets/throw10.cc
W=.output/bench/throw10
ns() { sed -n 's/.*ns_per_round=\([0-9.]*\).*/\1/p'; }
best() { sort -n | head -n1; }
sel=(-f catcher -f 'f[0-9]*')
run() { # label, then the command
	local label=$1 r v=()
	shift
	for r in $(seq "$R"); do v+=("$("$@" | ns)"); done
	printf '%s %s\n' "$label" "$(printf '%s\n' "${v[@]}" | best)"
}
{
	run untraced_throw $W throw "$N"
	run untraced_return $W return "$N"
	run traced_return ./cabbpf -q "${sel[@]}" -- $W return "$N"
	run traced_throw ./cabbpf -q "${sel[@]}" -- $W throw "$N"
	run traced_throw_entry_only ./cabbpf -q --entry-only "${sel[@]}" -- $W throw "$N"
} 2>/dev/null >.output/bench/exceptions.txt
./cabbpf -q --json .output/bench/exceptions.json "${sel[@]}" -- $W throw "$N" >/dev/null 2>&1
awk '{v[$1] = $2} END {
	printf "workload: %d rounds of catcher -> f10 -> ... -> f1, best of %d; ns per round\n", N, R
	printf "  %-44s %10.0f\n", "untraced, f1 throws", v["untraced_throw"]
	printf "  %-44s %10.0f\n", "untraced, f1 returns", v["untraced_return"]
	printf "  %-44s %10.0f\n", "traced (11 functions), f1 returns", v["traced_return"]
	printf "  %-44s %10.0f\n", "traced (11 functions), f1 throws (guarded)", v["traced_throw"]
	printf "  %-44s %10.0f\n", "traced --entry-only, f1 throws", v["traced_throw_entry_only"]
	printf "  a guarded throw costs %.1f us more than an untraced one, %.1f us more than\n", (v["traced_throw"] - v["untraced_throw"]) / 1000, (v["traced_throw"] - v["traced_return"]) / 1000
	printf "  the same traced calls returning normally\n"
}' N="$N" R="$R" .output/bench/exceptions.txt
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); g=j["guard"]; r=j["returns"]
print("  one traced run: guard stops %d, restored %d, re-armed %d; returns matched %d, unwound %d, missing %d; lost %d" % (g["stops"], g["restored"], g["rearmed"], r["matched"], r["unwound"], r["missing"], j["lost"]))' .output/bench/exceptions.json
