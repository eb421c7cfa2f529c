#!/usr/bin/env bash
# The sampled estimates' error and their 95% intervals' coverage (issue 47
# items 5 and 6), run after run: tests/targets/steady (T threads each
# calling mid() N times, mid() calling leaf() twice, leaf() spinning K
# iterations; "phased": a() for the first half, b() for the second) under
# `--sample P`, R times, with HOGS busy loops beside it. Per function: the
# mean and the largest |error| of calls_est against the program's own
# count, the mean interval half-width, and how many of the R intervals
# held the truth. Also the windows and the fraction of the progress they
# saw, the run's length.
#   [HOGS=0] [PHASED=] bench/sampling_coverage.sh [R] [P] [T] [N] [K] [-- MORE cabbpf OPTIONS]
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
rm -f "$O"/run-*.json "$O"/run-*.out
for ((i = 1; i <= R; i++)); do
	./cabbpf -q -j "$O/run-$i.json" --sample "$P" "${fns[@]}" "$@" -- \
		"$O/steady" "$T" "$N" "$K" ${PHASED:+phased} > "$O/run-$i.out" 2> "$O/run-$i.err" ||
		{ echo "run $i failed:" >&2; cat "$O/run-$i.err" >&2; exit 1; }
done
hogs__stop
python3 - "$O" "$R" "$P" "$HOGS" <<'PY'
import json, re, sys
d, r, p, hogs = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
res, wins, frac, run = {}, [], [], []
for i in range(1, r + 1):
    j = json.load(open(f"{d}/run-{i}.json"))
    own = dict((k, int(v)) for k, v in re.findall(r"(\w+)=(\d+)", open(f"{d}/run-{i}.out").read()))
    s = j["sampling"]
    wins.append(len(s["windows"])); frac.append(s.get("fraction") or 0); run.append(s["run_ns"] / 1e9)
    for f in j["functions"]:
        if f["name"] not in own or "calls_est" not in f:
            continue
        t, e = own[f["name"]], f["calls_est"]
        w = f.get("calls_est_err95")
        x = res.setdefault(f["name"], {"err": [], "hw": [], "cov": 0, "lower": 0})
        x["err"].append(100 * (e - t) / t)
        if w is None:
            x["lower"] += 1
        else:
            x["hw"].append(100 * w / t)
            x["cov"] += abs(e - t) <= w
print(f"--sample {p}%, {r} runs, {hogs} CPU hogs; windows {min(wins)}-{max(wins)}, "
      f"progress seen {100 * min(frac):.2f}-{100 * max(frac):.2f}%, run {min(run):.1f}-{max(run):.1f} s")
print(f"{'function':<8} {'mean err%':>9} {'max |err|%':>10} {'mean hw%':>9} {'covered':>8} {'lower':>6}")
for k, x in res.items():
    n = len(x["err"])
    print(f"{k:<8} {sum(x['err']) / n:>9.2f} {max(abs(v) for v in x['err']):>10.2f} "
          f"{(sum(x['hw']) / len(x['hw']) if x['hw'] else 0):>9.1f} "
          f"{x['cov']:>5}/{n - x['lower']:<2} {x['lower']:>6}")
PY
