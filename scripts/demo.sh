#!/usr/bin/env bash
# Runs the bundled demo workload under cabbpf and prints its report.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .output/demo
gcc -O2 -g -pthread -o .output/demo/demo tests/targets/demo.c
echo "+ ./cabbpf --json .output/demo/report.json -- .output/demo/demo" >&2
./cabbpf --json .output/demo/report.json -- .output/demo/demo
echo "(JSON written to .output/demo/report.json)" >&2
