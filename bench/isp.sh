#!/usr/bin/env bash
# The input-sensitive profiler (-a isp) under load, in one run:
#  0. the analyzer's own cost per event without the kernel (cct_bench's
#     isp column): how many points/s one analyzer thread can take;
#  1. overhead per traced call next to -a count on the same target (one
#     thread calling leaf() N times, bench/targets/calls.c, emulated entry
#     probe): untraced, -a count, -a isp (cost wall), -a isp --cost calls,
#     and -a isp --size 'leaf:arg0' (the entry probe reads the argument and
#     writes a SIZE event: the per-event cost of a designated size);
#  2. points per second the analyzer sustains with nothing lost: two
#     threads calling leaf() flat out, every activation a point; the point
#     count must equal the calls and lost must be 0.
# Each row is the best of R runs (the loop's own ns per call, start-up and
# attach excluded), all rows alternated within each repetition.
#   bench/isp.sh [CALLS] [REPEATS]
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-500000}
R=${2:-3}
# A kernel ring that holds a whole run: on a loaded machine the loader may
# be starved for longer than a 16 MiB ring lasts, and a lost event fails
# the run (the figures are for a lossless trace).
RING=${RING:-128}
O=.output/bench
mkdir -p "$O"
make -s cabbpf
gcc -O2 -g -DENTRY_PUSH -fno-omit-frame-pointer -pthread -o "$O/calls-push" bench/targets/calls.c
T=$O/calls-push
J=$O/isp.json

ns() { sed -n 's/.*ns_per_call=\([0-9.]*\).*/\1/p'; }
best() { sort -n | head -n1; }
# run LABEL OPTS...: one traced run of 1 thread x N calls; checks lost = 0
# and the exact call count (count: functions; isp: points).
declare -A res
run() {
	local label=$1
	shift
	local out
	out=$(./cabbpf -q -f leaf --ring-size "$RING" "$@" --json "$J" -- "$T" 1 "$N" 2>"$O/isp.err")
	python3 - "$J" "$N" "$label" <<'PY' || { cat "$O/isp.err" >&2; exit 1; }
import json, sys
j = json.load(open(sys.argv[1])); n = int(sys.argv[2])
got = j["isp_info"]["points"] if "isp_info" in j else \
      sum(f["calls"] for f in j["functions"] if f["name"] == "leaf")
if j["lost"] != 0 or got != n:
    print(f"{sys.argv[3]}: lost={j['lost']} counted={got} expected {n}", file=sys.stderr)
    sys.exit(1)
PY
	res[$label]+="$(ns <<<"$out") "
}

make -s .output/bench/cct_bench
echo "== 0. the analyzer alone (no kernel: synthetic calls through a shadow stack)"
.output/bench/cct_bench 2000000 5 | grep -v '^cct_bench'

echo "== 1. per-call overhead, 1 thread x $N calls of leaf(), best of $R"
for r in $(seq "$R"); do
	res[bare]+="$("$T" 1 "$N" | ns) "
	run count -a count
	run isp -a isp
	run isp_calls -a isp --cost calls
	run isp_size -a isp --size 'leaf:arg0'
done
b=$(tr ' ' '\n' <<<"${res[bare]}" | grep . | best)
printf "   %-34s %8s ns/call\n" "untraced" "$b"
declare -A lab=([count]="-a count" [isp]="-a isp" [isp_calls]="-a isp --cost calls"
	[isp_size]="-a isp --size leaf:arg0")
for k in count isp isp_calls isp_size; do
	v=$(tr ' ' '\n' <<<"${res[$k]}" | grep . | best)
	printf "   %-34s %8s ns/call  (+%s over untraced)\n" "${lab[$k]}" "$v" \
		"$(python3 -c "print(f'{$v - $b:.0f}')")"
done
c=$(tr ' ' '\n' <<<"${res[count]}" | grep . | best)
i=$(tr ' ' '\n' <<<"${res[isp]}" | grep . | best)
s=$(tr ' ' '\n' <<<"${res[isp_size]}" | grep . | best)
python3 -c "print(f'   isp / count: {($i - $b) / ($c - $b):.2f}x the overhead; --size adds {$s - $i:.0f} ns per designated call (entry: register read + SIZE event)')"

echo "== 2. points/s sustained: 2 threads x $N calls, -a isp"
for r in $(seq "$R"); do
	./cabbpf -q -f leaf --ring-size "$RING" -a isp --json "$J" -- "$T" 2 "$N" >/dev/null 2>"$O/isp.err"
	python3 - "$J" "$N" "$r" "$(grep -o '[0-9]* events in [0-9.]* s.*event)' "$O/isp.err" || true)" <<'PY'
import json, re, sys
j = json.load(open(sys.argv[1])); n = int(sys.argv[2]); line = sys.argv[4]
pts = j["isp_info"]["points"]
m = re.match(r"(\d+) events in ([0-9.]+) s", line)
ok = j["lost"] == 0 and pts == 2 * n
rate = pts / float(m.group(2)) if m else 0
print(f"   run {sys.argv[3]}: {pts} points (expected {2 * n}), lost {j['lost']}, "
      f"{rate:,.0f} points/s over the whole trace {'OK' if ok else 'FAIL'}; {line}")
if not ok:
    sys.exit(1)
PY
done

echo "== 3. the entry probe's own time per event (kernel.bpf_stats_enabled), -a isp with and without --size"
# The loop times above carry the machine's noise; the kernel's per-program
# run time does not. Read while the target runs, for cabbpf's own programs
# (found through its fds' prog_id), then let the target finish.
old=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -q kernel.bpf_stats_enabled=1
trap 'sysctl -q kernel.bpf_stats_enabled=$old' EXIT
for mode in plain size; do
	opt=()
	[ $mode = size ] && opt=(--size 'leaf:arg0')
	./cabbpf -q -f leaf --ring-size "$RING" -a isp "${opt[@]}" -- "$T" 1 $((N * 4)) \
		>/dev/null 2>"$O/isp-stats.err" &
	cab=$!
	for _ in $(seq 200); do
		grep -q tracing "$O/isp-stats.err" && break
		sleep 0.05
	done
	sleep 1
	ids=$(cat /proc/$cab/fdinfo/* 2>/dev/null | sed -n 's/^prog_id:\s*//p' | sort -u)
	for id in $ids; do
		bpftool prog show id "$id" -j 2>/dev/null
		echo
	done | python3 -c '
import json, sys
mode = sys.argv[1]
for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    p = json.loads(line)
    if p.get("name") in ("on_entry", "on_return") and p.get("run_cnt"):
        print("   %-5s %-9s %6.0f ns/event over %d runs"
              % (mode, p["name"], p["run_time_ns"] / p["run_cnt"], p["run_cnt"]))
' "$mode"
	wait "$cab"
done
