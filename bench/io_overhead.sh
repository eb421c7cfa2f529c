#!/usr/bin/env bash
# Per-syscall overhead of `cabbpf --io` (system-wide, in-kernel aggregation)
# on a read-heavy workload: one process doing read(2) of SIZE bytes from
# /dev/zero N times as fast as it can. Measured in the same run, best of R:
#   bare         no tracing
#   floor        an empty BPF program on the same tracepoint (cabbpf --io --floor)
#   cabbpf --io  the real program (every process on the machine)
#   strace -c    counting the same syscalls (N/10 calls: it is ~100x slower)
#   bpftrace     counting read exits per command (tracepoint:syscalls:sys_exit_read)
# and checks that cabbpf lost nothing and counted every call of the workload.
#   bench/io_overhead.sh [N] [SIZE] [REPEATS]
# Set-up: installs strace and bpftrace with apt-get if missing, and mounts
# tracefs for bpftrace if it is not mounted (unmounted again at the end).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-2000000}
SIZE=${2:-64}
R=${3:-3}
O=.output/bench
mkdir -p "$O"
make -s cabbpf
gcc -O2 -o "$O/readloop" bench/targets/readloop.c
W=$O/readloop

need=()
command -v strace >/dev/null || need+=(strace)
command -v bpftrace >/dev/null || need+=(bpftrace)
if [ ${#need[@]} -gt 0 ]; then
	apt-get update -qq && apt-get install -y -qq "${need[@]}"
fi
mounted_tracefs=0
if [ ! -e /sys/kernel/tracing/events ]; then
	mount -t tracefs tracefs /sys/kernel/tracing
	mounted_tracefs=1
fi
cleanup() {
	[ -n "${BG:-}" ] && kill "$BG" 2>/dev/null || true
	[ $mounted_tracefs = 1 ] && umount /sys/kernel/tracing || true
}
trap cleanup EXIT

ns() { sed -n 's/.*ns_per_call=\([0-9.]*\).*/\1/p'; }
best() { sort -n | head -n1; }
# Start a tracer in the background, wait until its stderr/stdout says it is
# attached ($2), run the workload, stop the tracer with SIGINT.
with_tracer() {
	local log=$1 ready=$2
	shift 2
	"$@" >"$log" 2>&1 &
	BG=$!
	for _ in $(seq 200); do
		grep -q "$ready" "$log" 2>/dev/null && break
		sleep 0.05
	done
	grep -q "$ready" "$log" || { echo "tracer did not start: $*" >&2; cat "$log" >&2; exit 1; }
	$W "$N" "$SIZE"
	kill -INT "$BG"
	wait "$BG" || true
	BG=
}

bare=() floor=() cab=() st=() bt=()
for r in $(seq "$R"); do
	bare+=("$($W "$N" "$SIZE" | ns)")
	floor+=("$(with_tracer "$O/io-floor.log" watching ./cabbpf --io --floor -q | ns)")
	out=$(with_tracer "$O/io-cab.log" watching ./cabbpf --io -q --json "$O/io.json")
	cab+=("$(ns <<<"$out")")
	pid=$(sed -n 's/.*pid=\([0-9]*\).*/\1/p' <<<"$out")
	read -r lost calls < <(python3 -c 'import json,sys
j=json.load(open(sys.argv[1])); pid=int(sys.argv[2])
lost=sum(j["lost"][k] for k in ("process_map_full","file_map_full"))
c=sum(s["calls"] for p in j["processes"] if p["pid"]==pid for s in p["syscalls"] if s["syscall"]=="read" and s["fd_kind"]=="other")
print(lost, c)' "$O/io.json" "$pid")
	echo "run $r: cabbpf lost=$lost, workload reads of /dev/zero counted=$calls (expected $N)"
	echo "       $(grep 'I/O calls in' "$O/io-cab.log")"
	# strace costs ~30 us per call here: a tenth of the calls tells the
	# same per-call figure in a tenth of the time.
	st+=("$(strace -c -f -e trace=read -o "$O/strace.txt" $W "$((N / 10))" "$SIZE" | ns)")
	bt+=("$(with_tracer "$O/bpftrace.log" Attaching bpftrace -e \
		'tracepoint:syscalls:sys_exit_read { @[comm] = count(); }' | ns)")
done
b=$(printf '%s\n' "${bare[@]}" | best)
f=$(printf '%s\n' "${floor[@]}" | best)
c=$(printf '%s\n' "${cab[@]}" | best)
s=$(printf '%s\n' "${st[@]}" | best)
t=$(printf '%s\n' "${bt[@]}" | best)
awk -v b="$b" -v f="$f" -v c="$c" -v s="$s" -v t="$t" -v n="$N" -v z="$SIZE" 'BEGIN {
	printf "\nworkload: %d x read(/dev/zero, %d bytes); best of runs, ns per call (loop time)\n", n, z
	printf "  %-40s %9.1f ns\n", "bare (no tracing)", b
	printf "  %-40s %9.1f ns  (+%.1f ns/call)\n", "floor: empty program on sys_exit", f, f - b
	printf "  %-40s %9.1f ns  (+%.1f ns/call)\n", "cabbpf --io (system-wide)", c, c - b
	printf "  %-40s %9.1f ns  (+%.1f ns/call)\n", "bpftrace count sys_exit_read", t, t - b
	printf "  %-40s %9.1f ns  (+%.1f ns/call)\n", "strace -c -e trace=read", s, s - b
	printf "  cabbpf --io / floor, per call: %.3fx (goal <= 1.2x)\n", c / f
	printf "  cabbpf --io / floor, added cost: %.2fx\n", (c - b) / (f - b)
}'
