#!/usr/bin/env bash
# cabbpf replay streams: recordings of fib(N) for growing N (every call a
# line, 2 events each: about 1, 3 and 14 million events by default)
# replayed in full to /dev/null, with their peak RSS (getrusage) and time;
# the RSS must not grow with the recording (the replay holds a thread's
# open calls only), the time per event says what a replay costs. Prints a
# table; exits 1 when the largest recording's peak RSS is more than 8 MiB
# above the smallest's.
#   bench/replay.sh [N...]     (default: 27 29 32)
set -euo pipefail
cd "$(dirname "$0")/.."
make -s cabbpf targets
ns=("$@")
[ ${#ns[@]} -gt 0 ] || ns=(27 29 32)
out=.output/bench
mkdir -p "$out"
printf '%4s %12s %10s %10s %10s %12s\n' N EVENTS REC_MIB RSS_KIB SECONDS NS/EVENT
first=
last=
for n in "${ns[@]}"; do
	rec=$out/replay-fib$n.cbr
	./cabbpf record --lossless -o "$rec" -f fib -f main -- .output/targets/recurse-O2 "$n" \
		>/dev/null 2>"$out/replay-record.err"
	events=$(sed -n 's/.* \([0-9]*\) events in .*/\1/p' "$out/replay-record.err" | tail -1)
	read -r rss secs < <(python3 - "$rec" <<'EOF'
import os, subprocess, sys, time
t = time.time()
p = subprocess.Popen(["./cabbpf", "replay", sys.argv[1]], stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL)
_, st, ru = os.wait4(p.pid, 0)
if st:
    sys.exit("replay failed: status %d" % st)
print(ru.ru_maxrss, "%.2f" % (time.time() - t))
EOF
)
	mib=$(awk -v b="$(stat -c %s "$rec")" 'BEGIN { printf "%.1f", b / 1048576 }')
	printf '%4s %12s %10s %10s %10s %12.0f\n' "$n" "$events" "$mib" "$rss" "$secs" \
		"$(awk -v s="$secs" -v e="$events" 'BEGIN { print e ? s * 1e9 / e : 0 }')"
	[ -n "$first" ] || first=$rss
	last=$rss
	rm -f "$rec"
done
if [ "$last" -gt $((first + 8192)) ]; then
	echo "replay: peak RSS grew from $first to $last KiB: not bounded" >&2
	exit 1
fi
echo "replay: peak RSS $first -> $last KiB: bounded"
