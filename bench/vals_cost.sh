#!/usr/bin/env bash
# What --args and --retval add to the probes, per call of a function they
# name (issue 48, item 4: "measure and state the added ns per call"). The
# kernel's own statistics of the BPF programs (--bpf-stats: run time of
# on_entry and on_return, their cost included) on tests/targets/vals:
#   add     N calls of add(int, int), the integers read: none, both
#           arguments, both and the return value;
#   strings 6M calls of name_len(const char *) (five strings of 0 to 100
#           bytes, and two not readable), the string read: none,
#           str(arg0), str(arg0) and strlen(arg0).
# Each configuration is run RUNS times; the median of the programs' ns per
# call (entry and return together) is printed, and what the rules add to
# the baseline's. Functions no rule names pay nothing: their probes take
# the same path as without rules (the rule's flag is in their cookie).
#   bench/vals_cost.sh [RUNS] [N] [M]   (defaults 5 200000 20000)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-5}
N=${2:-200000}
M=${3:-20000}
make -s cabbpf
tests/targets/build.sh .output/targets >/dev/null
O=.output/bench/vals_cost
mkdir -p "$O"
T=.output/targets/vals-O2

# run NAME FUNC RULES...: RUNS runs; FUNC's ns per call into $O/NAME.txt
run() {
	local name=$1 fn=$2
	shift 2
	: >"$O/$name.txt"
	for ((i = 1; i <= RUNS; i++)); do
		./cabbpf -q --bpf-stats -a count,latency --slower-than 1000 -f "$fn" \
			-j "$O/$name-$i.json" "$@" -- "$T" "$N" "$M" >/dev/null 2>"$O/$name-$i.err" ||
			{ cat "$O/$name-$i.err" >&2; exit 1; }
		python3 - "$O/$name-$i.json" "$fn" >>"$O/$name.txt" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["bpf_stats"]
calls = next(f["calls"] for f in d["functions"] if f["name"] == sys.argv[2])
if d["lost"]:
    sys.exit("events lost: the figure would not be the programs' whole cost")
print((s["on_entry"]["run_ns"] + s["on_return"]["run_ns"]) / calls)
PY
	done
}

run add-none add
run add-args add --args 'add:int(arg0),int(arg1)'
run add-args-ret add --args 'add:int(arg0),int(arg1)' --retval add:int
run str-none name_len
run str-str name_len --args 'name_len:str(arg0)'
run str-str-len name_len --args 'name_len:str(arg0),strlen(arg0)'

python3 - "$O" "$RUNS" "$N" "$M" <<'PY'
import statistics, sys
o, runs, n, m = sys.argv[1:]
def med(name):
    return statistics.median(float(x) for x in open(f"{o}/{name}.txt"))
print(f"BPF programs' run time per call (on_entry + on_return), median of {runs} runs; "
      f"add x{n}, name_len x{6 * int(m)}")
print(f"{'configuration':44} {'ns/call':>8} {'added':>8}")
rows = [("add, no rule", "add-none", "add-none"),
        ("add, --args int(arg0),int(arg1)", "add-args", "add-none"),
        ("add, and --retval add:int", "add-args-ret", "add-none"),
        ("name_len, no rule", "str-none", "str-none"),
        ("name_len, --args str(arg0)", "str-str", "str-none"),
        ("name_len, --args str(arg0),strlen(arg0)", "str-str-len", "str-none")]
for label, name, base in rows:
    v, b = med(name), med(base)
    print(f"{label:44} {v:8.0f} {v - b:8.0f}")
PY
