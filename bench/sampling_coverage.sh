#!/usr/bin/env bash
# The sampled estimates' error and their 95% intervals' coverage (issue 47
# items 5 and 6), run after run: tests/targets/steady (T threads each
# calling mid() N times, mid() calling leaf() twice, leaf() spinning K
# iterations; "phased": a() for the first half, b() for the second) under
# `--sample P`, R times, with HOGS busy loops beside it. Per function and
# per call edge: the mean and the largest |error| of calls_est against
# the program's own count (an edge X->leaf is 2 calls a call of X), the
# mean interval half-width, and how many of the R intervals held the
# truth, over the runs that estimated ("lower": runs whose windows were
# too few or too small to estimate from, so gave what they saw as a lower
# bound: not counted in the error columns). Also the
# windows, the fraction of the progress they saw, and the target's
# slowdown: the traced run's length (JSON sampling.run_ns: from tracing's
# start to the target's exit, so not cabbpf's start-up) over the median
# of 3 untraced runs' wall time, timed here beside the same hogs.
#   [HOGS=0] [PHASED=] [SUMMARY=FILE] bench/sampling_coverage.sh [R] [P] [T] [N] [K] [-- MORE cabbpf OPTIONS]
# SUMMARY=FILE appends one tab-separated line per function and edge
# (workload, P, name, mean err%, max |err|%, mean half-width%, covered,
# estimated runs, lower bounds, slowdown, mean progress seen%):
# bench/sampling_fractions.sh collects them.
set -euo pipefail
cd "$(dirname "$0")/.."
R=${1:-20}
P=${2:-10}
T=${3:-2}
N=${4:-400000}
K=${5:-2500}
shift $(($# < 5 ? $# : 5))
[ "${1:-}" = "--" ] && shift
HOGS=${HOGS:-0}
O=.output/bench/sampling_coverage
mkdir -p "$O"
make -s cabbpf
gcc -O2 -g -pthread -o "$O/steady" tests/targets/steady.c
. bench/hogs.sh
hogs__start "$HOGS"
fns=(-f mid -f leaf)
[ -n "${PHASED:-}" ] && fns=(-f a -f b -f leaf)
rm -f "$O"/run-*.json "$O"/run-*.out "$O"/untraced-ns
for ((i = 1; i <= 3; i++)); do
	t0=$(date +%s%N)
	"$O/steady" "$T" "$N" "$K" ${PHASED:+phased} > /dev/null
	echo $(($(date +%s%N) - t0)) >> "$O/untraced-ns"
done
for ((i = 1; i <= R; i++)); do
	./cabbpf -q -j "$O/run-$i.json" --sample "$P" "${fns[@]}" "$@" -- \
		"$O/steady" "$T" "$N" "$K" ${PHASED:+phased} > "$O/run-$i.out" 2> "$O/run-$i.err" ||
		{ echo "run $i failed:" >&2; cat "$O/run-$i.err" >&2; exit 1; }
done
hogs__stop
/usr/bin/python3 - "$O" "$R" "$P" "$HOGS" "${SUMMARY:-}" "${PHASED:+phased}" <<'PY'
import json, re, statistics, sys
d, r, p, hogs, summary, phased = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6]
untraced = statistics.median(int(x) for x in open(f"{d}/untraced-ns").read().split())
res, wins, frac, run = {}, [], [], []

def add(name, truth, x):
    e = x["calls_est"] if "calls_est" in x else x["calls"]
    w = x.get("calls_est_err95")
    v = res.setdefault(name, {"err": [], "hw": [], "cov": 0, "lower": 0})
    if x.get("estimate") != "estimated" or w is None:
        v["lower"] += 1  # what the windows saw: not an estimate, no error
    else:
        v["err"].append(100 * (e - truth) / truth)
        v["hw"].append(100 * w / truth)
        v["cov"] += abs(e - truth) <= w

for i in range(1, r + 1):
    j = json.load(open(f"{d}/run-{i}.json"))
    own = dict((k, int(v)) for k, v in re.findall(r"(\w+)=(\d+)", open(f"{d}/run-{i}.out").read()))
    s = j["sampling"]
    wins.append(len(s["windows"])); frac.append(s.get("fraction") or 0); run.append(s["run_ns"])
    for f in j["functions"]:
        if f["name"] in own:
            add(f["name"], own[f["name"]], f)
    for x in j["callgraph"]:
        if x["callee"] == "leaf" and x["caller"] in own:
            add(f"{x['caller']}->leaf", 2 * own[x["caller"]], x)
slow = statistics.median(run) / untraced
print(f"--sample {p}%, {r} runs, {hogs} CPU hogs; windows {min(wins)}-{max(wins)}, "
      f"progress seen {100 * min(frac):.2f}-{100 * max(frac):.2f}%, run {min(run) / 1e9:.1f}-{max(run) / 1e9:.1f} s, "
      f"slowdown {slow:.2f}x (untraced {untraced / 1e9:.2f} s)")
print(f"{'estimate':<10} {'mean err%':>9} {'max |err|%':>10} {'mean hw%':>9} {'covered':>8} {'lower':>6}")
lines = []
for k, x in res.items():
    n = len(x["err"])  # the runs that estimated (the others: lower bounds)
    if n:
        mean, worst = f"{sum(x['err']) / n:.2f}", f"{max(abs(v) for v in x['err']):.2f}"
        hw = f"{sum(x['hw']) / n:.1f}"
    else:
        mean = worst = hw = "-"
    print(f"{k:<10} {mean:>9} {worst:>10} {hw:>9} {x['cov']:>5}/{n:<2} {x['lower']:>6}")
    lines.append(f"{phased or 'steady'}\t{p}\t{k}\t{mean}\t{worst}\t{hw}\t{x['cov']}\t"
                 f"{n}\t{x['lower']}\t{slow:.3f}\t{100 * sum(frac) / len(frac):.2f}\n")
if summary:
    with open(summary, "a") as f:
        f.writelines(lines)
PY
