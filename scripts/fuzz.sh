#!/usr/bin/env bash
# The recording reader's fuzz harness (tests/fuzz/fuzz_record.c, built by
# `make fuzz` under ASan + UBSan) on real recordings: one of a
# multi-threaded target, one of a recursive one with I/O (the dynamic
# loader's reads). FUZZ_SECONDS of CPU time per seed (default 60). Needs root (the
# seeds are recorded with the real kernel). Fails on a crash, a sanitizer
# report or a hang.
#   FUZZ_SECONDS=480 scripts/fuzz.sh
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${FUZZ_SECONDS:-60}
out=.output/fuzz
mkdir -p "$out"
make -s cabbpf
tests/targets/build.sh .output/targets >/dev/null
./cabbpf record -o "$out/seed-threads.cbr" -- .output/targets/threads-O2 3 100 >/dev/null 2>&1
./cabbpf record -o "$out/seed-recurse.cbr" -- .output/targets/recurse-O0 10 >/dev/null 2>&1
for s in threads recurse; do
	# a hang is a failure too: at most 20x the CPU budget in wall time
	timeout -k 10 $((secs * 20 + 120)) .output/asan/fuzz/fuzz_record "$out/seed-$s.cbr" "$secs"
done
