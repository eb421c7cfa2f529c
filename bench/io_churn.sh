#!/usr/bin/env bash
# System-wide `cabbpf --io` on a machine busy starting short processes: the
# kernel keeps --io's figures per process and the loader frees an exited
# process's keys when it reads the maps, so a high enough process rate fills
# the maps between two reads and calls are lost (counted in `lost`). This
# measures, in the same run, best and worst of R:
#   untraced      processes started per second by W loops (bench/targets/churn.c:
#                 each process is a fresh exec that reads /dev/zero READS times)
#   cabbpf --io   the same rate while traced, the ratio to untraced, the calls
#                 lost to full maps, and the children's reads counted against
#                 the exact number they made (short by no more than `lost`),
#                 with the kernel's keys created and the records of ended
#                 processes sent whole (no key) through the ring
# Before the ring (344e294, keys freed by the loader only): 1,821 processes
# a second lost 5,569 calls in 4 s. Before --io-keep folded ended processes
# into their commands' rows: peak RSS 1 GB and 70 MB of JSON for 10 s.
#   bench/io_churn.sh [SECONDS] [WORKERS] [READS] [REPEATS]
set -euo pipefail
cd "$(dirname "$0")/.."
T=${1:-4}
W=${2:-6}
READS=${3:-4}
R=${4:-3}
O=.output/bench
mkdir -p "$O"
make -s cabbpf
gcc -O2 -o "$O/churn" bench/targets/churn.c
BG=
cleanup() { [ -n "$BG" ] && pkill -P "$BG" 2>/dev/null || true; }
trap cleanup EXIT

field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p"; }
for r in $(seq "$R"); do
	plain=$("$O/churn" "$T" "$W" "$READS" | field per_s)
	/usr/bin/time -f "%M" -o "$O/churn-rss.txt" ./cabbpf --io -q --json "$O/churn.json" \
		>"$O/churn-cab.log" 2>&1 &
	BG=$!
	for _ in $(seq 200); do
		grep -q watching "$O/churn-cab.log" && break
		sleep 0.05
	done
	grep -q watching "$O/churn-cab.log" || { echo "cabbpf --io did not start" >&2; cat "$O/churn-cab.log" >&2; exit 1; }
	out=$("$O/churn" "$T" "$W" "$READS")
	# SIGINT to cabbpf itself: time(1) does not pass it on.
	pkill -INT -P "$BG"
	wait "$BG" || { echo "cabbpf --io failed" >&2; cat "$O/churn-cab.log" >&2; exit 1; }
	BG=
	traced=$(field per_s <<<"$out")
	expect=$(field reads <<<"$out")
	python3 - "$O/churn.json" "$expect" "$plain" "$traced" "$r" "$(cat "$O/churn-rss.txt")" <<'PY'
import json, os, sys
j = json.load(open(sys.argv[1]))
expect, plain, traced, run = int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
rss_mb, json_mb = int(sys.argv[6]) / 1024, os.path.getsize(sys.argv[1]) / 1e6
lost = j["lost"]["process_map_full"] + j["lost"]["file_map_full"]
cmd = [c for c in j["commands"] if c["command"] == "churn"]
got = sum(s["calls"] for c in cmd for s in c["syscalls"]
          if s["syscall"] == "read" and s["fd_kind"] == "other")
procs = sum(c["processes"] for c in cmd)
short = expect - got
verdict = "exact" if short == 0 else ("short by %d, within lost" % short if 0 < short <= lost
                                     else "WRONG: short by %d, lost only %d" % (short, lost))
print("run %s: %.0f processes/s untraced, %.0f traced (%.2fx); lost %d (process map %d, file map %d); "
      "children's /dev/zero reads %d of %d: %s; %d churn processes (%d folded); kernel keys created %d, "
      "ended processes' records %d (ring full %d); cabbpf peak RSS %.0f MB, JSON %.1f MB"
      % (run, plain, traced, traced / plain if plain else 0, lost, j["lost"]["process_map_full"],
         j["lost"]["file_map_full"], got, expect, verdict, procs, j["processes_folded"],
         j["kernel"]["process_keys_created"],
         j["kernel"]["exit_records"], j["kernel"]["exit_ring_full"], rss_mb, json_mb))
if verdict.startswith("WRONG"):
    sys.exit(1)
PY
done
