#!/usr/bin/env bash
# What one off -> on -> off cycle of sampling costs (issue 13), for N
# functions (default: 10, 1000 and 10000): a generated program holds N
# small functions it never calls and spins in an untraced loop, timing
# each of its iterations; cabbpf --start-disabled traces the N functions
# and is toggled CYCLES times (default 5) with SIGUSR1 / SIGUSR2. Reported
# per N: putting the probes in (attach, the loader waits), taking them out
# (the kernel releases the links in cabbpf's closer thread: the loader does
# not wait), and what the target pays: its longest iteration (a stall)
# and its iterations per second during the toggles, both vs untraced.
#   bench/sampling.sh [CYCLES] [N...]
set -euo pipefail
cd "$(dirname "$0")/.."
CYCLES=${1:-5}
shift || true
NS=("$@")
[ ${#NS[@]} -gt 0 ] || NS=(10 1000 10000)
make -s cabbpf
dir=.output/bench
mkdir -p "$dir"
printf '%7s %10s %11s %13s %16s %11s %15s\n' N attach_ms release_ms stall_max_us untraced_stall_us iter_per_s untraced_iter_s
for N in "${NS[@]}"; do
	src=$dir/toggle$N.c bin=$dir/toggle$N
	if [ ! -x "$bin" ]; then
		{
			echo '#include <signal.h>'
			echo '#include <stdio.h>'
			echo '#include <time.h>'
			echo '#include <unistd.h>'
			echo 'static volatile sig_atomic_t stop; static volatile long sink;'
			echo 'static void on_term(int s) { (void)s; stop = 1; }'
			for i in $(seq 0 $((N - 1))); do
				echo "__attribute__((noinline)) void f$i(long x) { sink += x + $i; __asm__ volatile(\"\"); }"
			done
			echo 'static long ns(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000000000L + t.tv_nsec; }'
			echo 'int main(void) {'
			echo '  long it = 0, worst = 0, t0, prev, now; signal(SIGTERM, on_term);'
			echo '  printf("ready %d\n", (int)getpid()); fflush(stdout);'
			echo '  t0 = prev = ns();'
			echo '  while (!stop) { for (int k = 0; k < 1000; k++) sink += k;'
			echo '    now = ns(); if (now - prev > worst) worst = now - prev; prev = now; it++; }'
			echo '  fprintf(stderr, "worst_us=%ld iter_per_s=%.0f\n", worst / 1000, it / ((now - t0) / 1e9));'
			echo '  return 0; }'
		} >"$src"
		gcc -O1 -o "$bin" "$src"
	fi
	# untraced baseline, 2 s
	"$bin" >"$dir/t.out" 2>"$dir/t.err" &
	tp=$!
	sleep 2
	kill -TERM "$tp"
	wait "$tp" || true
	base=$(sed -n 's/.*iter_per_s=\([0-9]*\).*/\1/p' "$dir/t.err")
	bworst=$(sed -n 's/.*worst_us=\([0-9]*\).*/\1/p' "$dir/t.err")
	# traced: start disabled, toggle CYCLES times
	"$bin" >"$dir/t.out" 2>"$dir/t.err" &
	tp=$!
	sleep 0.2
	./cabbpf -v -q --start-disabled -p "$tp" -f 'f*' 2>"$dir/c.err" &
	cp=$!
	for _ in $(seq 100); do grep -q "tracing is off" "$dir/c.err" && break; sleep 0.1; done
	for c in $(seq "$CYCLES"); do
		kill -USR1 "$cp"
		for _ in $(seq 300); do grep -q "window $c on" "$dir/c.err" && break; sleep 0.05; done
		sleep 0.5
		kill -USR2 "$cp"
		for _ in $(seq 300); do grep -q "window $c off" "$dir/c.err" && break; sleep 0.05; done
		sleep 1
	done
	kill -INT "$cp"
	wait "$cp" || true
	kill -TERM "$tp"
	wait "$tp" || true
	att=$(sed -n 's/.*window [0-9]* on at .* (attach \([0-9.]*\) ms).*/\1/p' "$dir/c.err" | awk '{s+=$1} END {printf "%.1f", NR ? s/NR : 0}')
	rel=$(sed -n 's/.*probes released in \([0-9.]*\) ms.*/\1/p' "$dir/c.err" | awk '{s+=$1} END {printf "%.1f", NR ? s/NR : 0}')
	worst=$(sed -n 's/.*worst_us=\([0-9]*\).*/\1/p' "$dir/t.err")
	ips=$(sed -n 's/.*iter_per_s=\([0-9]*\).*/\1/p' "$dir/t.err")
	printf '%7s %10s %11s %13s %16s %11s %15s\n' "$N" "$att" "$rel" "$worst" "$bworst" "$ips" "$base"
done
