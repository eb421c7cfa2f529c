#!/usr/bin/env bash
# What the time sampler (--times sampled, docs/times.md) costs the target
# at 99, 999 and 4999 samples a second (issue 46 item 6: under 1% at the
# default rate, 1000).
#
# The target is tests/targets/shares-O2 (a CPU-bound program of ~1 s that
# prints each phase's thread CPU time), traced with -f big only (20 calls:
# its probes cost nothing that matters), REPEATS times each way, the ways
# alternating so that a load change on this shared machine hits all of
# them:
#  - raw:  --times raw (no sampler: the baseline);
#  - HZ:   --times-hz HZ (the sampler on every CPU, in user and kernel
#          mode: a timer interrupt and a BPF program each period).
# Printed per way: the median of the target's own CPU time (the sum of its
# phases, its thread's clock: user and system time) and of the traced run's
# wall time (the JSON's duration_s), each as a ratio to raw's median; and
# the sampler's BPF program's own time a tick (--bpf-stats, one run).
#   bench/sampler_cost.sh [REPEATS]
set -euo pipefail
cd "$(dirname "$0")/.."
R=${1:-7}
make -s cabbpf
tests/targets/build.sh .output/targets >/dev/null
B=.output/bench/sampler
mkdir -p "$B"
WAYS=(raw 99 999 4999)

run() { # WAY REP: one traced run, "cpu_ns wall_s" appended to $B/WAY
	local times=(--times-hz "$1")
	[ "$1" = raw ] && times=(--times raw)
	./cabbpf -q -a count "${times[@]}" -f big --json "$B/run.json" \
		-- .output/targets/shares-O2 >"$B/out" 2>"$B/err" || { cat "$B/err" >&2; exit 1; }
	python3 - "$B/run.json" "$(tail -1 "$B/out")" >>"$B/$1" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
o = dict(kv.split("=") for kv in sys.argv[2].split())
cpu = sum(float(o[k]) for k in ("big_ns", "mid_ns", "tiny_ns", "outer_self_ns", "sys_ns"))
cpu += 0.5 * float(o["tiny_ns"])  # outer's tiny calls (outer_self_ns is net of them)
print(f"{cpu:.0f} {j['duration_s']}")
PY
}

for w in "${WAYS[@]}"; do : >"$B/$w"; done
for r in $(seq "$R"); do
	for w in "${WAYS[@]}"; do run "$w"; done
done
for hz in 99 999 4999; do
	./cabbpf -q --bpf-stats --times-hz "$hz" -a count -f big -- .output/targets/shares-O2 \
		>/dev/null 2>"$B/stats-$hz"
done
python3 - "$B" "$R" "${WAYS[@]}" <<'PY'
import re, statistics, sys
b, reps, ways = sys.argv[1], sys.argv[2], sys.argv[3:]
med = {}
for w in ways:
    rows = [tuple(map(float, l.split())) for l in open(f"{b}/{w}") if l.strip()]
    med[w] = (statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows),
              min(r[0] for r in rows), max(r[0] for r in rows))
print(f"time sampler's cost: shares-O2, -f big, {reps} runs each way (medians)")
print(f"  {'WAY':8} {'CPU_MS':>9} {'RATIO':>7} {'WALL_S':>8} {'RATIO':>7}  CPU_MS RANGE   BPF NS/TICK")
for w in ways:
    c, s, lo, hi = med[w]
    tick = ""
    if w != "raw":
        m = re.search(r"on_cpu_sample ([0-9.]+) ns x (\d+)", open(f"{b}/stats-{w}").read())
        tick = f"{float(m.group(1)):.0f} (x {m.group(2)})" if m else "?"
    print(f"  {w:8} {c / 1e6:9.1f} {c / med['raw'][0]:7.3f} {s:8.3f} {s / med['raw'][1]:7.3f}"
          f"  {lo / 1e6:6.1f}-{hi / 1e6:<6.1f} {tick}")
PY
