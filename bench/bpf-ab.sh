#!/usr/bin/env bash
# A/B of the probe programs' own cost: two cabbpf binaries (a change and
# its base) run alternately on the same call-heavy target with the kernel's
# per-program statistics (--bpf-stats), so a drift of the machine hits
# both alike; prints each one's on_entry and on_return ns per run (min and
# median over R runs) and the difference. This is how a change's "BPF
# ns/event before/after" is measured (issue 17): the loop figures of
# bench/overhead.sh move by more than one change saves.
#   bench/bpf-ab.sh BIN_A BIN_B [ENTRY push|nop5] [THREADS] [CALLS] [R] [-- extra cabbpf options]
set -euo pipefail
cd "$(dirname "$0")/.."
A=$1 B=$2
ENTRY=${3:-nop5} T=${4:-1} N=${5:-500000} R=${6:-10}
shift $(($# < 6 ? $# : 6))
[ "${1:-}" = "--" ] && shift
O=.output/bench
mkdir -p "$O"
case $ENTRY in
push) gcc -O2 -g -DENTRY_PUSH -fno-omit-frame-pointer -pthread -o "$O/ab-push" bench/targets/calls.c ;;
nop5) gcc -O2 -g -pg -mfentry -mnop-mcount -fno-pie -no-pie -pthread -o "$O/ab-nop5" bench/targets/calls.c ;;
*) echo "bpf-ab.sh: entry is push or nop5" >&2; exit 2 ;;
esac
W=$O/ab-$ENTRY
D=$O/ab.tsv
: >"$D"
run() { # LABEL BIN: one run, "label entry_ns return_ns lost" into D
	local label=$1 bin=$2 err
	shift 2
	err=$("$bin" -q -f leaf --bpf-stats "$@" -- "$W" "$T" "$N" 2>&1 >/dev/null) || { echo "$err" >&2; exit 1; }
	sed -n "s/.*on_entry \([0-9.]*\) ns x [0-9]*, on_return \([0-9.]*\) ns.*/$label\t\1\t\2/p" <<<"$err" >>"$D"
	grep -q ", 0 lost;" <<<"$err" || { echo "bpf-ab.sh: $label lost events: $err" >&2; exit 1; }
}
for _ in $(seq "$R"); do
	run A "$A" "$@"
	run B "$B" "$@"
done
python3 - "$D" "$A" "$B" "$ENTRY" "$T" "$R" <<'PY'
import statistics as st, sys
d, a, b, entry, t, r = sys.argv[1:]
rows = [l.split() for l in open(d)]
def f(lab, i): return [float(x[i]) for x in rows if x[0] == lab]
print(f"{entry} entry, {t} thread(s), {r} runs each; ns per program run (statistics' own cost included)")
for lab, path in (("A", a), ("B", b)):
    e, x = f(lab, 1), f(lab, 2)
    print(f"  {lab} {path}: entry min {min(e):.1f} median {st.median(e):.1f}; return min {min(x):.1f} median {st.median(x):.1f}; "
          f"per event median {(st.median(e) + st.median(x)) / 2:.1f}")
ea, xa, eb, xb = (st.median(f(l, i)) for l, i in (("A", 1), ("A", 2), ("B", 1), ("B", 2)))
print(f"  B - A per event (medians): {((eb + xb) - (ea + xa)) / 2:+.1f} ns")
PY
