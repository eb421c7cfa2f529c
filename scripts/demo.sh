#!/usr/bin/env bash
# Set up a fresh Debian 12 machine, build cabbpf, and run it on the bundled
# demo workload: prints the report on stdout and writes its JSON.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
make -s -j2 cabbpf
mkdir -p .output/demo
gcc -O2 -g -pthread -o .output/demo/demo tests/targets/demo.c
echo "+ sudo ./cabbpf --json .output/demo/report.json -- .output/demo/demo" >&2
./cabbpf --json .output/demo/report.json -- .output/demo/demo
echo "(JSON report: .output/demo/report.json)" >&2
