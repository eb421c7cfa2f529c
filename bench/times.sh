#!/usr/bin/env bash
# The sampled times (--times sampled, docs/times.md) against perf's
# sampled self times of an untraced run of the same command, and against
# the truth where a target knows it.
#
# For each workload, REPEATS times:
#  - perf record -F HZ --call-graph dwarf of the command (Debian's
#    libraries keep no frame pointers) (HZ=4000 unless set; cabbpf
#    samples at --times-hz HZ), untraced (cpu-clock: this VM has
#    no hardware counters); each perf sample is given to the innermost
#    frame of its call chain that is a traced function (as cabbpf charges
#    an untraced callee's time, memcmp's say, to its traced caller), and
#    samples with no traced frame are left out;
#  - cabbpf -a count,cct on the command: each traced function's sampled
#    self time (est_self_ns), its traced wall self time (self_ns, what
#    --times raw shows), and two compensations of the traced wall time
#    summed over the calling-context tree: COMP% (the tree's COMP_SELF,
#    self_ns_comp: each traced call's whole probe cost off its caller) and
#    FIX% (each call's probe cost split where it lands: C_IN off its own
#    self time, C_OUT off its caller's, issue 46 item 2's "correct
#    compensation"). C_IN and C_OUT are measured first, on
#    tests/targets/shares: tiny's traced self time a call less its
#    untraced cost a call (C_IN), outer's traced self time less its
#    untraced self time, a tiny call (C_OUT); both are emulated-class
#    probes, the commonest (the plan line on stderr says each run's mix);
#  - the same cabbpf run under perf (perf record -e cpu-clock:u -F HZ
#    --call-graph dwarf of cabbpf, the command its child): perf's shares
#    of the *traced* process's user-mode time, each sample given to its
#    innermost traced frame as above, those in the probes' own code
#    ([uprobes]) left out: TRACED%. User mode only: perf's unwinding of a
#    kernel-mode sample's user stack stops short in traced runs (a read()
#    in shares' sys came back with libc's frame alone), and its kernel
#    stacks do not tell the probes' system calls from the program's. So a
#    function whose time is the kernel's (shares' sys and touch) shows
#    less there. Against cabbpf's sampled shares before the aftermath is
#    taken out (SAMP+AFT%), it measures cabbpf's attribution on the very
#    execution it sampled (on sqlite3 and python3, whose kernel time is
#    small); against PERF%, how far tracing moved the program's own time
#    (what no attribution can take back);
#  - the 10 functions with the largest perf shares (shares of the traced
#    functions' sum, on each side): PERF%, SAMPLED%, RAW%, COMP%, FIX%,
#    TRACED%, SAMP+AFT%, and the largest gap of each method to perf in
#    percentage points, and of SAMP+AFT% to TRACED%.
# Workloads: tests/targets/shares (functions of known cost; it prints
# them: TRUE%), sqlite3 (a GROUP BY/JOIN over a 200,000-row table,
# -f 'libsqlite3:sqlite3*'), python3 (a pure-Python loop, -f
# '_PyEval_*' -f 'PyObject_*' -f 'PyNumber_*').
#   bench/times.sh [REPEATS] [WORKLOAD...]
set -euo pipefail
cd "$(dirname "$0")/.."
R=${1:-3}
# Samples a second, on both sides: short programs need more than 1,000
HZ=${HZ:-4000}
shift || true
W=("$@")
[ ${#W[@]} -gt 0 ] || W=(shares sqlite3 python3)
command -v perf >/dev/null || { echo "bench/times.sh: needs perf (linux-perf)" >&2; exit 1; }
make -s cabbpf
tests/targets/build.sh .output/targets >/dev/null
B=.output/bench/times
mkdir -p "$B"

# The workloads' commands and cabbpf's function selection.
setup() {
	case $1 in
	shares)
		CMD=(.output/targets/shares-O2)
		SEL=(-f big -f mid -f tiny -f outer -f sys -f touch)
		;;
	sqlite3)
		if [ ! -s "$B/t.db" ]; then
			sqlite3 "$B/t.db" "create table a(id integer primary key, g integer, v text);
				create table b(g integer primary key, name text);
				with recursive c(x) as (select 1 union all select x+1 from c where x<200000)
				insert into a select x, x%1000, hex(randomblob(8)) from c;
				with recursive c(x) as (select 0 union all select x+1 from c where x<999)
				insert into b select x, 'n'||x from c;"
		fi
		echo "select b.name, count(*), max(a.v) from a join b on a.g = b.g group by b.name order by 2 desc limit 5;" >"$B/q.sql"
		CMD=(sqlite3 "$B/t.db")
		IN=$B/q.sql
		SEL=(-f 'libsqlite3:sqlite3*')
		;;
	python3)
		CMD=(/usr/bin/python3 -c 's = 0
for i in range(3000000):
    s += i % 7
print(s)')
		SEL=(-f '_PyEval_*' -f 'PyObject_*' -f 'PyNumber_*')
		;;
	*)
		echo "bench/times.sh: unknown workload $1" >&2
		exit 2
		;;
	esac
}

# The split of a traced call's probe cost (see above), ns: "C_IN C_OUT".
split_cost() {
	local own
	own=$(.output/targets/shares-O2)
	./cabbpf --lossless --times raw -a count -f tiny -f outer --json "$B/split.json" \
		-- .output/targets/shares-O2 >/dev/null 2>"$B/split.err" || { cat "$B/split.err" >&2; exit 1; }
	python3 - "$B/split.json" "$own" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
o = dict(kv.split("=") for kv in sys.argv[2].split())
f = {x["name"]: x for x in j["functions"]}
# tiny: 400,000 calls in its own phase, 200,000 under outer; the untraced
# tiny_ns is its own phase's
c_in = (f["tiny"]["self_ns"] - 1.5 * float(o["tiny_ns"])) / f["tiny"]["calls"]
c_out = (f["outer"]["self_ns"] - float(o["outer_self_ns"])) / 200000
print(f"{max(c_in, 0):.0f} {max(c_out, 0):.0f}")
PY
}
read -r C_IN C_OUT < <(split_cost)
echo "probe cost split, measured on shares' tiny and outer: C_IN $C_IN ns, C_OUT $C_OUT ns a traced call"

for w in "${W[@]}"; do
	IN=/dev/null
	setup "$w"
	for r in $(seq "$R"); do
		own=
		[ "$w" = shares ] && own=$("${CMD[@]}")
		perf record -q -F "$HZ" --call-graph dwarf -o "$B/perf.data" -- "${CMD[@]}" <"$IN" >/dev/null 2>&1
		perf script -i "$B/perf.data" -F ip,sym 2>/dev/null >"$B/perf.txt" || true
		perf record -q -e cpu-clock:u -F "$HZ" --call-graph dwarf -o "$B/perft.data" -- \
			./cabbpf --lossless --times-hz "$HZ" -a count,cct "${SEL[@]}" --json "$B/cabbpf.json" -- "${CMD[@]}" \
			<"$IN" >/dev/null 2>"$B/cabbpf.err" || { cat "$B/cabbpf.err" >&2; exit 1; }
		# the kernel's name of the process: cabbpf runs the file a
		# link names (python3 is python3.11)
		comm=$(basename "$(readlink -f "$(command -v "${CMD[0]}")")")
		perf script -i "$B/perft.data" --comm "${comm:0:15}" -F ip,sym,dso 2>/dev/null >"$B/perft.txt" || true
		python3 - "$w" "$r" "$B/cabbpf.json" "$B/perf.txt" "$own" "$C_IN" "$C_OUT" "$B/perft.txt" <<'PY'
import json, sys
w, r, jpath, ppath, own = sys.argv[1:6]
c_in, c_out = float(sys.argv[6]), float(sys.argv[7])
tpath = sys.argv[8]
j = json.load(open(jpath))
fns = {}
for f in j["count"]["functions"] if "count" in j else j["functions"]:
    name = f["name"].split(":", 1)[-1]  # LIB:name -> name
    if f.get("calls"):
        fns[name] = f
# perf: one stack per sample (frames leaf first, blank line between);
# charge it to its innermost traced frame
perf = {}
stack = []
def flush():
    for s in stack:
        if s in fns:
            perf[s] = perf.get(s, 0) + 1
            break
for line in open(ppath):
    line = line.strip()
    if not line:
        flush()
        stack = []
    else:
        parts = line.split(None, 1)
        if len(parts) == 2:
            stack.append(parts[1].split("+")[0])
flush()
# perf on the traced run (user mode): leave out the samples in the
# probes' own code, as cabbpf does
traced = {}
stack, probe = [], False
def flush_t():
    if probe:
        return
    for s in stack:
        if s in fns:
            traced[s] = traced.get(s, 0) + 1
            break
for line in open(tpath):
    line = line.strip()
    if not line:
        flush_t()
        stack, probe = [], False
        continue
    parts = line.split(None, 1)
    if len(parts) != 2:
        continue
    sym, dso = parts[1].rsplit(" (", 1) if " (" in parts[1] else (parts[1], "")
    if not stack and "[uprobes]" in dso:
        probe = True
    stack.append(sym.split("+")[0])
flush_t()
def shares(d):
    t = sum(d.values()) or 1
    return {k: 100.0 * v / t for k, v in d.items()}
ps = shares({k: perf.get(k, 0) for k in fns})
ss = shares({k: float(f.get("est_self_ns", 0)) for k, f in fns.items()})
sa = shares({k: float(f.get("est_self_ns", 0)) + float(f.get("aft_self_ns", 0))
             for k, f in fns.items()})
ts = shares({k: traced.get(k, 0) for k in fns})
rs = shares({k: float(f["self_ns"]) for k, f in fns.items()})
# the two compensations, per context of the tree, summed by function
comp, fix = {k: 0.0 for k in fns}, {k: 0.0 for k in fns}
def walk(n):
    k = n["name"].split(":", 1)[-1]
    kids = n.get("children", [])
    if k in fns:
        comp[k] += n.get("self_ns_comp", n["self_ns"])
        fix[k] += max(0.0, n["self_ns"] - n["calls"] * c_in
                      - sum(c["calls"] for c in kids) * c_out)
    for c in kids:
        walk(c)
walk(j["cct"])
cs, fs = shares(comp), shares(fix)
truth = {}
if own:
    o = dict(kv.split("=") for kv in own.split())
    truth = shares({"big": float(o["big_ns"]), "mid": float(o["mid_ns"]),
                    "tiny": 1.5 * float(o["tiny_ns"]), "outer": float(o["outer_self_ns"]),
                    "sys": float(o["sys_ns"]), "touch": float(o["touch_ns"])})
top = sorted(fns, key=lambda k: -ps[k])[:10]
print(f"{w} run {r}: {sum(perf.values())} perf samples untraced, {sum(traced.values())} traced, "
      f"{j.get('times', {}).get('samples', 0)} cabbpf samples")
print(f"  {'FUNCTION':32} {'CALLS':>10} {'PERF%':>6} {'SAMPLED%':>9} {'RAW%':>6} {'COMP%':>6} {'FIX%':>6}"
      f" {'TRACED%':>8} {'SAMP+AFT%':>9}" + (f" {'TRUE%':>6}" if truth else ""))
for k in top:
    print(f"  {k[:32]:32} {fns[k]['calls']:>10} {ps[k]:>6.1f} {ss[k]:>9.1f} {rs[k]:>6.1f} {cs[k]:>6.1f} {fs[k]:>6.1f}"
          f" {ts[k]:>8.1f} {sa[k]:>9.1f}" + (f" {truth[k]:>6.1f}" if truth else ""))
def gap(m, ref=ps):
    return max(abs(m[k] - ref[k]) for k in top)
print(f"  largest gap to perf over these: sampled {gap(ss):.1f} pp, raw {gap(rs):.1f} pp, "
      f"comp {gap(cs):.1f} pp, fix {gap(fs):.1f} pp; perf traced to perf untraced {gap(ts):.1f} pp; "
      f"cabbpf's attribution (SAMP+AFT% to TRACED%) {gap(sa, ts):.1f} pp")
PY
	done
done
