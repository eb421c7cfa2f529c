#!/usr/bin/env bash
# Per-call overhead of cabbpf (entry + return probes, count and call-graph
# analyzers on) next to the kernel floor (empty BPF programs on the same
# uprobe + uretprobe sites), measured in one run on a call-heavy workload of
# two threads calling as fast as they can; for both classes of probed entry
# instruction (DESIGN.md): emulated (push) and single-stepped (mov). Also
# checks that nothing was lost and that the count is exact.
# With 1 target thread the loader and analyzers have the second core to
# themselves (the design's setting: analysis on other cores); with 2 target
# threads on this 2-core machine they compete with the target for CPU.
#   bench/overhead.sh [CALLS_PER_THREAD] [REPEATS] [THREAD_COUNTS]
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000000}
R=${2:-3}
TS=${3:-"1 2"}
make -s cabbpf
mkdir -p .output/bench
# -DENTRY_PUSH: leaf() starts with push %rbp (emulated);
# otherwise: it starts with a mov (single-stepped out of line).
gcc -O2 -g -DENTRY_PUSH -fno-omit-frame-pointer -pthread \
	-o .output/bench/calls-push bench/targets/calls.c
gcc -O2 -g -pthread -o .output/bench/calls-mov bench/targets/calls.c

ns() { sed -n 's/.*ns_per_call=\([0-9.]*\).*/\1/p'; }
best() { sort -n | head -n1; }

measure() {
	local W=$1 label=$2 r out lost calls
	local bare=() floor=() cab=() nt=()
	local first
	first=$(objdump -d --no-show-raw-insn "$W" | awk '/<leaf>:/{getline; sub(/^[ \t]*[0-9a-f]+:[ \t]*/, ""); print; f=1} END{}' | head -n1)
	echo "== $label: leaf() starts with: $first"
	for r in $(seq "$R"); do
		bare+=("$($W $T "$N" | ns)")
		floor+=("$(./cabbpf --floor -q -f leaf -- $W $T "$N" 2>/dev/null | ns)")
		out=$(./cabbpf -q -f leaf --json .output/bench/overhead.json -- $W $T "$N" 2>.output/bench/overhead.err)
		cab+=("$(ns <<<"$out")")
		nt+=("$(./cabbpf --no-times -q -f leaf -- $W $T "$N" 2>/dev/null | ns)")
		read -r lost calls < <(python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))
print(j["lost"], sum(f["calls"] for f in j["functions"] if f["name"]=="leaf"))' .output/bench/overhead.json)
		echo "   run $r: lost=$lost, leaf calls=$calls (expected $((T * N))); $(grep -o '[0-9]* events/s.*event)' .output/bench/overhead.err || true)"
	done
	awk -v b="$(printf '%s\n' "${bare[@]}" | best)" -v f="$(printf '%s\n' "${floor[@]}" | best)" \
	    -v c="$(printf '%s\n' "${cab[@]}" | best)" -v n="$(printf '%s\n' "${nt[@]}" | best)" 'BEGIN {
		printf "   %-32s %9.1f ns/call\n", "bare (no tracing)", b
		printf "   %-32s %9.1f ns/call (+%.1f)\n", "kernel floor (empty programs)", f, f - b
		printf "   %-32s %9.1f ns/call (+%.1f)\n", "cabbpf (count + callgraph)", c, c - b
		printf "   %-32s %9.1f ns/call (+%.1f)\n", "cabbpf --no-times", n, n - b
		printf "   overhead ratio cabbpf / floor: %.3fx, with --no-times %.3fx (goal <= 1.15x)\n", (c - b) / (f - b), (n - b) / (f - b)
	}'
}

for T in $TS; do
	echo "workload: $T thread(s) x $N calls of leaf() each, loop time, best of $R runs"
	measure .output/bench/calls-push "emulated entry, $T thread(s)"
	measure .output/bench/calls-mov "single-stepped entry, $T thread(s)"
done
