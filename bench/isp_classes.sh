#!/usr/bin/env bash
# The input-sensitive fits, run after run (issue 47's check): N runs of
# tests/targets/classes (six routines of known growth by wall time: O(n),
# O(n log n), O(n^2) twice, O(log n), O(2^n); 7 sizes, 3 repetitions) under
# `-a isp`, with HOGS CPU hogs (busy shell loops) beside it. Per routine,
# over the N runs:
#   right   the true class alone;
#   ambig   several candidates, the true class among them (the report says
#           "A or B" instead of choosing);
#   wrong   the true class not among the candidates;
#   superlin  runs where the growth was significantly superlinear (due:
#           N for the superlinear routines; a claim for the others is a
#           fault);
#   flagged runs also marked a likely bottleneck (superlinear and at least
#           1% of the costliest routine's total);
# and the median relative residual (rel_sd) of the fit.
#   [COST=wall|cpu] [REPS=3] bench/isp_classes.sh [N] [HOGS] [OPT]
# (OPT: -O2 or -O0; REPS: the target's repetitions of each size)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-20}
HOGS=${2:-2}
OPT=${3:--O2}
REPS=${REPS:-3}
make -s cabbpf
tests/targets/build.sh .output/targets >/dev/null
O=.output/bench/isp_classes
mkdir -p "$O"
rm -f "$O"/run-*.json
. bench/hogs.sh
hogs__start "$HOGS"
for ((i = 1; i <= N; i++)); do
	./cabbpf -q -j "$O/run-$i.json" -a isp ${COST:+--cost "$COST"} \
		-f lin_chunk -f nlogn_chunk -f quad_chunk -f sq_arg -f log_arg -f exp_arg \
		--size sq_arg:arg0 --size log_arg:arg0 --size exp_arg:arg0 \
		-- ".output/targets/classes$OPT" -r "$REPS" 2>"$O/run-$i.err" ||
		{ echo "run $i failed:" >&2; cat "$O/run-$i.err" >&2; exit 1; }
done
hogs__stop
python3 - "$O" "$N" "$HOGS" "$OPT" "$REPS" <<'PY'
import json, statistics, sys
d, n, hogs, opt, reps = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
truth = {"lin_chunk": "O(n)", "nlogn_chunk": "O(n log n)", "quad_chunk": "O(n^2)",
         "sq_arg": "O(n^2)", "log_arg": "O(log n)", "exp_arg": "O(2^n)"}
superlinear = {"O(n log n)", "O(n^2)", "O(n^3)", "O(2^n)"}
res = {k: {"right": 0, "ambig": 0, "wrong": 0, "flagged": 0, "sig": 0, "sd": [], "seen": []} for k in truth}
for i in range(1, n + 1):
    j = json.load(open(f"{d}/run-{i}.json"))
    for r in j["isp"]:
        if r["name"] not in truth:
            continue
        s, f = res[r["name"]], r["fit"]
        cands = [m["class"] for m in f["class_candidates"]]
        t = truth[r["name"]]
        if t not in cands:
            s["wrong"] += 1
        elif len(cands) == 1:
            s["right"] += 1
        else:
            s["ambig"] += 1
        s["flagged"] += r["bottleneck"]
        s["sig"] += f["superlinear_significant"]
        s["sd"].append(f["rel_sd"])
        if f["classes"] != t:
            s["seen"].append(f["classes"])
print(f"classes{opt} -r {reps}, cost {j['isp_info']['cost']}, {n} runs, {hogs} CPU hogs beside it")
print(f"{'routine':<12} {'true':<11} {'right':>5} {'ambig':>5} {'wrong':>5} {'superlin':>8} "
      f"{'flagged':>7} {'rel_sd':>7}  other answers")
bad = 0
for k, t in truth.items():
    s = res[k]
    want = n if t in superlinear else 0
    bad += s["wrong"] + (t not in superlinear and s["sig"] > 0)
    other = ", ".join(sorted(set(s["seen"])))
    print(f"{k:<12} {t:<11} {s['right']:>5} {s['ambig']:>5} {s['wrong']:>5} "
          f"{s['sig']:>5}/{want:<2} {s['flagged']:>7} {statistics.median(s['sd']) if s['sd'] else 0:>7.3f}"
          f"  {other}")
print("every true class a candidate, no superlinear claim where there is none: " +
      ("yes" if not bad else "NO"))
PY
