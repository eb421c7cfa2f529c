#!/usr/bin/env bash
# Set up a fresh Debian 12 machine, build cabbpf, and pass every test:
# unit and real-kernel integration suites, then cab/ and the loader's threads
# under ThreadSanitizer, then the unit suites under ASan + UBSan, then the
# kernel matrix: tests/vm/cases on Debian's 6.1 and 6.12 kernels under QEMU
# (make vmtest, tests/vm/vmtest.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
make -j2 check
make -j2 tsan-check
make -j2 asan-check
make -j2 vmtest
