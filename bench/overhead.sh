#!/usr/bin/env bash
# Per-call overhead of cabbpf (entry + return probes, the default analyzers,
# timestamps on; and --no-times) next to the kernel floor (empty BPF programs
# on the same uprobe + uretprobe sites), measured in one run on a call-heavy
# workload (bench/targets/calls.c: T threads calling leaf() as fast as they
# can), for each class of probed entry instruction:
#   push  leaf() starts with push %rbp: the kernel emulates it (int3 trap)
#   nop5  leaf() starts with a 5-byte nop (gcc -pg -mfentry -mnop-mcount
#         -fno-pie -no-pie): the kernel's optimized uprobe path
#   mov   leaf() starts with a mov: single-stepped out of line (not by
#         default: ~20x dearer, where the probe's own work is noise)
# and for 1 and 2 target threads (with 1 the loader and analyzers have the
# second core of this 2-core machine; with 2 they compete with the target).
#
# Every traced run is checked: 0 lost, leaf()'s call count exact (T x N).
#
# Two figures per configuration, because the loop time of a shared, loaded
# machine is noisy (other jobs take the CPU from the target in between its
# calls) while a program's own run time is not:
#  - loop: the target's own ns per call minus the untraced loop's, best of
#    R runs each; ratio = cabbpf / floor. Also from the medians.
#  - BPF: the kernel's per-program statistics (cabbpf --bpf-stats: run time
#    and count of on_entry and on_return, from separate runs, since the
#    statistics cost ~20-40 ns per program run themselves), ns per event;
#    "net" subtracts the empty programs' figure (what cabbpf's programs add
#    to an event; the statistics' own cost cancels out).
# and cabbpf's own CPU per event (loader + analyzers, from its summary line).
# The load average is printed with every run and every summary row.
#   bench/overhead.sh [CALLS_PER_THREAD] [REPEATS] [THREAD_COUNTS] [ENTRIES]
#   e.g. bench/overhead.sh 500000 5 "1 2" "push nop5"
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-500000}
R=${2:-5}
TS=${3:-"1 2"}
ENTRIES=${4:-"push nop5"}
# The kernel ring per CPU, MiB: the product's default (4), which is what
# users run. A loaded machine may starve the loader for longer than it
# lasts, and a lost event fails the run (the figures are for a lossless
# trace): RING=128 then. That is not free: on a PVM guest (nop5, 1 thread,
# best of 5) the probes cost 141-153 ns/event net of the empty programs
# at 1-4 MiB, 197 at 16 and 323 at 128, and the loader 73-87 ns/event at
# 1-4 MiB, 134 at 16 and 296 at 128 (each event's slot is a cache line
# the CPU last saw a lap ago: the bigger the lap, the farther it is;
# docs/bench/overhead-2026-11-27-ring.txt).
RING=${RING:-4}
O=.output/bench
mkdir -p "$O"
make -s cabbpf
gcc -O2 -g -DENTRY_PUSH -fno-omit-frame-pointer -pthread -o "$O/calls-push" bench/targets/calls.c
gcc -O2 -g -pg -mfentry -mnop-mcount -fno-pie -no-pie -pthread -o "$O/calls-nop5" bench/targets/calls.c
gcc -O2 -g -pthread -o "$O/calls-mov" bench/targets/calls.c
DATA=$O/overhead.tsv
: >"$DATA"

load() { cut -d' ' -f1 /proc/loadavg; }
ns() { sed -n 's/.*ns_per_call=\([0-9.]*\).*/\1/p' | head -n1; }

# traced LABEL OPTS...: one traced run; checks lost = 0 and the exact count;
# appends "T entry label r load loop cpu_ns entry_ns return_ns" to DATA.
traced() {
	local label=$1
	shift
	local out err=$O/overhead.err json=$O/overhead.json
	out=$(./cabbpf -q -f leaf --ring-size "$RING" "$@" --json "$json" -- "$W" "$T" "$N" 2>"$err")
	python3 - "$json" "$err" "$((T * N))" "$label" "$out" "$T" "$entry" "$r" "$(load)" >>"$DATA" <<'PY' || { cat "$err" >&2; exit 1; }
import json, re, sys
jf, ef, n, label, out, t, entry, r, load = sys.argv[1:]
j = json.load(open(jf)); err = open(ef).read()
calls = sum(f["calls"] for f in j["functions"] if f["name"] == "leaf")
if j["lost"] != 0 or calls != int(n):
    print(f"{label}: lost={j['lost']} leaf calls={calls}, expected {n}" + (" (a loaded machine: RING=128)" if j['lost'] else ""), file=sys.stderr)
    sys.exit(1)
loop = re.search(r"ns_per_call=([0-9.]+)", out).group(1)
cpu = re.search(r"cabbpf CPU [0-9.]+ s \(([0-9]+) ns/event\)", err).group(1)
bs = j.get("bpf_stats", {})
pe = lambda k: "%.1f" % (bs[k]["run_ns"] / bs[k]["runs"]) if k in bs else "-"
print("\t".join([t, entry, label, r, load, loop, cpu, pe("on_entry"), pe("on_return")]))
PY
}

# floor [--bpf-stats]: the empty programs on the same sites.
floor() {
	local out label=floor
	[ $# -gt 0 ] && label=floor-bpf
	out=$(./cabbpf --floor -q -f leaf "$@" -- "$W" "$T" "$N" 2>&1)
	local e x
	e=$(sed -n 's/.* empty_entry \([0-9.]*\) ns.*/\1/p' <<<"$out")
	x=$(sed -n 's/.* empty_return \([0-9.]*\) ns.*/\1/p' <<<"$out")
	printf '%s\t%s\t%s\t%s\t%s\t%s\t-\t%s\t%s\n' "$T" "$entry" "$label" "$r" "$(load)" \
		"$(ns <<<"$out")" "${e:--}" "${x:--}" >>"$DATA"
}

for T in $TS; do
	for entry in $ENTRIES; do
		W=$O/calls-$entry
		# awk reads to the end: an early exit would kill objdump with
		# SIGPIPE, which pipefail makes fatal (seen: exit 141)
		first=$(objdump -d --no-show-raw-insn "$W" |
			awk '!f && /<leaf>:/ { getline; sub(/^[ \t]*[0-9a-f]+:[ \t]*/, ""); print; f = 1 }')
		echo "== $T thread(s) x $N calls of leaf(), $entry entry ($first), $R runs, load $(load)"
		for r in $(seq "$R"); do
			# Loop figures, then the statistics runs, alternated in
			# every repetition so a change of load hits all rows.
			printf '%s\t%s\t%s\t%s\t%s\t%s\t-\t-\t-\n' "$T" "$entry" bare "$r" "$(load)" \
				"$("$W" "$T" "$N" | ns)" >>"$DATA"
			floor
			traced cabbpf
			traced no-times --no-times
			floor --bpf-stats
			traced cabbpf-bpf --bpf-stats
			traced no-times-bpf --no-times --bpf-stats
			awk -F'\t' -v r="$r" -v T="$T" -v e="$entry" '$4 == r && $1 == T && $2 == e {
				printf "   run %s: %-13s loop %8s ns/call  cpu %4s ns/event  BPF entry %6s return %6s ns  (load %s)\n",
					r, $3, $6, $7, $8, $9, $5 }' "$DATA"
		done
	done
done

python3 - "$DATA" "$N" "$RING" <<'PY'
import statistics as st, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
def col(t, e, lab, i):
    return [float(x[i]) for x in rows if x[0] == t and x[1] == e and x[2] == lab and x[i] != "-"]
print(f"\nsummary (ns; kernel ring {sys.argv[3]} MiB per CPU; loop figures are over the untraced loop; BPF figures per event, both programs averaged)")
for t in dict.fromkeys(x[0] for x in rows):
    for e in dict.fromkeys(x[1] for x in rows if x[0] == t):
        loads = [float(x[4]) for x in rows if x[0] == t and x[1] == e]
        bare = col(t, e, "bare", 5)
        fl, cb, nt = col(t, e, "floor", 5), col(t, e, "cabbpf", 5), col(t, e, "no-times", 5)
        b, bm = min(bare), st.median(bare)
        print(f"== {t} thread(s), {e} entry; load average {min(loads):.1f}-{max(loads):.1f}")
        print(f"   loop, best of {len(bare)}: bare {b:.1f}; floor +{min(fl) - b:.1f}, cabbpf +{min(cb) - b:.1f}, "
              f"--no-times +{min(nt) - b:.1f} ns/call")
        print(f"   loop ratio / floor, best:   cabbpf {(min(cb) - b) / (min(fl) - b):.3f}x (goal <= 1.10), "
              f"--no-times {(min(nt) - b) / (min(fl) - b):.3f}x (goal <= 1.05)")
        print(f"   loop ratio / floor, median: cabbpf {(st.median(cb) - bm) / (st.median(fl) - bm):.3f}x, "
              f"--no-times {(st.median(nt) - bm) / (st.median(fl) - bm):.3f}x")
        def bpf(lab):
            en, rt = col(t, e, lab, 7), col(t, e, lab, 8)
            return min(en), min(rt), st.median(en), st.median(rt)
        fe, fr, fem, frm = bpf("floor-bpf")
        for lab, name in (("cabbpf-bpf", "cabbpf"), ("no-times-bpf", "--no-times")):
            ce, cr, cem, crm = bpf(lab)
            print(f"   BPF {name:<10} entry {ce:6.1f} return {cr:6.1f} ns (median {cem:.1f} {crm:.1f}); "
                  f"empty {fe:.1f} {fr:.1f}; net {(ce - fe + cr - fr) / 2:.1f} ns/event "
                  f"(median {(cem - fem + crm - frm) / 2:.1f})")
        for lab, name in (("cabbpf", "cabbpf"), ("no-times", "--no-times")):
            c = col(t, e, lab, 6)
            print(f"   cabbpf CPU per event ({name}): best {min(c):.0f}, median {st.median(c):.0f} ns")
PY
