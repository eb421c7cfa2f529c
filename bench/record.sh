#!/usr/bin/env bash
# cabbpf record / report on the storm workload (bench/overhead.sh's
# calls.c: T threads calling leaf(), an emulated-entry function, as fast as
# they can): the recording's rate (records/s written, as the rings deliver
# them), its size (bytes per record after zstd), what was lost next to a
# live run of the same workload, and the time `cabbpf report` takes per
# million events (analyzers count, callgraph, io, cct), with -a count only,
# and `cabbpf dump`; cabbpf's own CPU per event recording and live. The
# rate written is the rate the target's probes produce (the kernel trap
# is the floor, ~1 us per call here); cabbpf's CPU per event is the
# recorder's cost. R runs.
#   bench/record.sh [CALLS_PER_THREAD] [REPEATS] [THREADS]
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-2000000}
R=${2:-3}
T=${3:-2}
make -s cabbpf
out=.output/bench
mkdir -p "$out"
gcc -O2 -g -DENTRY_PUSH -fno-omit-frame-pointer -pthread -o "$out/calls-push" bench/targets/calls.c
rec=$out/storm.cbr
now() { date +%s.%N; }
echo "workload: $T thread(s) x $N calls of leaf() each (emulated entry), $R runs"
for r in $(seq "$R"); do
	./cabbpf record -o "$rec" -f leaf -- "$out/calls-push" "$T" "$N" >/dev/null 2>"$out/record.err"
	line=$(grep 'recorded ' "$out/record.err")
	records=$(sed -n 's/.*recorded \([0-9]*\) records.*/\1/p' <<<"$line")
	sum=$(grep -o '[0-9]* events in [0-9.]* s.*lost' "$out/record.err")
	events=$(awk '{print $1}' <<<"$sum")
	secs=$(awk '{print $4}' <<<"$sum")
	lost=$(sed -n 's/.*, \([0-9]*\) lost.*/\1/p' <<<"$sum")
	bytes=$(stat -c %s "$rec")
	cpu=$(sed -n 's/.*cabbpf CPU [0-9.]* s (\([0-9]*\) ns\/event).*/\1/p' "$out/record.err")
	./cabbpf -q -f leaf --json "$out/live.json" -- "$out/calls-push" "$T" "$N" >/dev/null 2>"$out/live.err"
	live_cpu=$(sed -n 's/.*cabbpf CPU [0-9.]* s (\([0-9]*\) ns\/event).*/\1/p' "$out/live.err")
	live_lost=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["lost"])' "$out/live.json")
	t0=$(now); ./cabbpf report "$rec" -q --json "$out/report.json"; t1=$(now)
	./cabbpf report "$rec" -q -a count; t2=$(now)
	./cabbpf dump "$rec" >/dev/null; t3=$(now)
	calls=$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(sum(f["calls"] for f in j["functions"] if f["name"]=="leaf"))' "$out/report.json")
	awk -v r="$r" -v rec="$records" -v ev="$events" -v s="$secs" -v b="$bytes" -v l="$lost" -v ll="$live_lost" -v cpu="$cpu" -v lcpu="$live_cpu" \
	    -v c="$calls" -v want=$((T * N)) -v a="$t0" -v bb="$t1" -v cc="$t2" -v d="$t3" 'BEGIN {
		printf "   run %d: %d records (%d call events) in %.3f s: %.0f records/s written, %d bytes (%.2f bytes/record); lost %d (live run: %d); report: leaf calls %d (expected %d)\n",
			r, rec, ev, s, rec / s, b, b / rec, l, ll, c, want
		printf "          cabbpf CPU per call event: recording %d ns, live (4 analyzers) %d ns\n", cpu, lcpu
		printf "          report (4 analyzers) %.3f s = %.3f s per million events; -a count %.3f s = %.3f s/M; dump %.3f s = %.3f s/M\n",
			bb - a, (bb - a) * 1e6 / rec, cc - bb, (cc - bb) * 1e6 / rec, d - cc, (d - cc) * 1e6 / rec
	}'
done
