#!/usr/bin/env bash
# The calling-context tree analyzer (cct) under load:
#  1. its own cost per event and memory per node, without the kernel
#     (.output/bench/cct_bench: synthetic sequences through a real shadow
#     stack, next to count and callgraph);
#  2. two target threads calling leaf() flat out (bench/targets/calls.c,
#     emulated entry), traced with -a count,callgraph,cct: nothing may be
#     lost and the tree's count must be exact;
#  3. a real target with 1,111,110 distinct contexts (bench/targets/fan.c,
#     D = 6): nodes, bytes and bytes per node as cabbpf reports them, with a
#     cap that holds them all and with the default cap (folded calls
#     counted, never dropped).
#   bench/cct.sh [CALLS_PER_THREAD] [REPEATS]
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000000}
R=${2:-3}
make -s cabbpf .output/bench/cct_bench
mkdir -p .output/bench
gcc -O2 -g -DENTRY_PUSH -fno-omit-frame-pointer -pthread \
	-o .output/bench/calls-push bench/targets/calls.c
gcc -O2 -g -o .output/bench/fan bench/targets/fan.c
J=.output/bench/cct.json

echo "== 1. analyzer cost without the kernel"
.output/bench/cct_bench

echo "== 2. two threads x $N calls of leaf(), -a count,callgraph,cct"
for r in $(seq "$R"); do
	./cabbpf -q -f leaf -a count,callgraph,cct --json "$J" -- .output/bench/calls-push 2 "$N" \
		>/dev/null 2>.output/bench/cct.err
	python3 - "$J" "$N" "$r" "$(grep -o '[0-9]* events/s.*event)' .output/bench/cct.err || true)" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
n, r, line = int(sys.argv[2]), sys.argv[3], sys.argv[4]
calls = sum(f["calls"] for f in j["functions"] if f["name"] == "leaf")
tree = sum(c["calls"] for c in j["cct"]["children"] if c["name"] == "leaf")
ok = j["lost"] == 0 and calls == 2 * n and tree == 2 * n
print(f"   run {r}: lost={j['lost']} leaf calls={calls} cct leaf calls={tree} "
      f"(expected {2 * n}) {'OK' if ok else 'FAIL'}; {line}")
if not ok:
    sys.exit(1)
PY
done

echo "== 3. 1,111,110 distinct contexts (fan 6), -a cct"
for cap in 2000000 default; do
	opt=()
	[ "$cap" != default ] && opt=(--cct-max-nodes "$cap")
	/usr/bin/time -f "%e s, cabbpf max RSS %M KiB" ./cabbpf -q -f 'f[0-9]' -a cct "${opt[@]}" \
		--json "$J" -- .output/bench/fan 6 2>.output/bench/cct.err >/dev/null
	python3 - "$J" "$cap" "$(tail -n1 .output/bench/cct.err)" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
i = j["cct_info"]
print(f"   cap {sys.argv[2]}: {i['nodes']} nodes, {i['bytes']} bytes "
      f"({i['bytes'] / i['nodes']:.1f} bytes/node), {i['folded_calls']} calls folded, "
      f"lost {j['lost']}; {sys.argv[3]}")
PY
done
