#!/usr/bin/env bash
# Per-call overhead of cabbpf (entry + return probes, count and call-graph
# analyzers on) next to the kernel floor (empty BPF programs on the same
# uprobe + uretprobe sites), measured in one run on a call-heavy workload of
# two threads calling as fast as they can. Also checks that nothing was lost
# and that the count is exact.
#   bench/overhead.sh [CALLS_PER_THREAD] [REPEATS]
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000000}
R=${2:-3}
T=2
make -s cabbpf
mkdir -p .output/bench
gcc -O2 -g -fno-omit-frame-pointer -pthread -o .output/bench/calls bench/targets/calls.c
W=.output/bench/calls
objdump -d --no-show-raw-insn "$W" | awk '/<leaf>:/{getline; print "leaf() first instruction:" $0; exit}'

ns() { sed -n 's/.*ns_per_call=\([0-9.]*\).*/\1/p'; }
best() { sort -n | head -n1; }

bare=() floor=() cab=()
for r in $(seq "$R"); do
	bare+=("$($W $T "$N" | ns)")
	floor+=("$(./cabbpf --floor -q -f leaf -- $W $T "$N" 2>/dev/null | ns)")
	out=$(./cabbpf -q -f leaf --json .output/bench/overhead.json -- $W $T "$N" 2>.output/bench/overhead.err)
	cab+=("$(ns <<<"$out")")
	read -r lost calls < <(python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))
print(j["lost"], sum(f["calls"] for f in j["functions"] if f["name"]=="leaf"))' .output/bench/overhead.json)
	echo "run $r: lost=$lost leaf calls=${calls:-?} (expected $((T * N)))"
done
b=$(printf '%s\n' "${bare[@]}" | best)
f=$(printf '%s\n' "${floor[@]}" | best)
c=$(printf '%s\n' "${cab[@]}" | best)
awk -v b="$b" -v f="$f" -v c="$c" -v t="$T" -v n="$N" 'BEGIN {
	printf "\nworkload: %d threads x %d calls of leaf(); best of runs, ns per call (loop time)\n", t, n
	printf "  %-34s %8.1f ns\n", "bare (no tracing)", b
	printf "  %-34s %8.1f ns  (+%.1f ns/call)\n", "kernel floor (empty programs)", f, f - b
	printf "  %-34s %8.1f ns  (+%.1f ns/call)\n", "cabbpf (count + callgraph)", c, c - b
	printf "  cabbpf / floor overhead ratio: %.3fx (goal <= 1.15x)\n", (c - b) / (f - b)
}'
