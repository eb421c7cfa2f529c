#!/usr/bin/env bash
# Installs everything cabbpf needs to build, test and benchmark on Debian 12,
# from Debian's archive only. Idempotent; needs root.
set -euo pipefail
pkgs=(make gcc clang llvm libbpf-dev libelf-dev zlib1g-dev bpftool pkg-config
      check libcapstone-dev libck-dev libjson-c-dev binutils g++ golang-go rustc
      strace libiberty-dev libpng-dev libxml2-utils chromium
      protobuf-c-compiler libprotobuf-c-dev golang-github-google-pprof-dev
      libzstd-dev podman runc busybox-static libdw-dev libc6-dbg nodejs
      openjdk-17-jdk-headless fp-compiler ocaml-nox qemu-system-x86 cpio)
# libzstd-dev: cabbpf record's compression.
# libdw-dev (elfutils): functions' source files and lines from DWARF
# (user/elf/dwarf.c: -l, the JSON, --pprof).
# libc6-dbg: Debian's libc has no .symtab; its debug file (by build id
# under /usr/lib/debug) has the full symbol table (the AVX/EVEX variants
# the IFUNC and plan tests name, libc's static functions) and its DWARF.
# nodejs: a V8 program, which cabbpf must trace with entry probes only
# (tests/test_lang_integration.c).
# openjdk-17-jdk-headless: the JVM, likewise when -f names libjvm.so
# (tests/test_lang_integration.c); javac builds tests/targets/JvmWork.java.
# fp-compiler: Free Pascal, whose runtime keeps and walks return addresses
# for its exceptions (tests/targets/fpcexc.pas).
# ocaml-nox: ocamlopt, whose programs' garbage collector reads return
# addresses: entry probes only (tests/targets/ocamlwork.ml).
# podman, runc, busybox-static: the container suite runs real containers
# (runc: crun refuses the hybrid cgroup layout; an image imported from a
# rootfs of busybox-static and the static test programs: no registry).
# qemu-system-x86, cpio, busybox-static: make vmtest boots Debian's other
# kernels (fetched with apt-get download, never installed) under QEMU, with
# an initramfs of busybox and the kernel package's own modules (6.1's are
# not compressed, 6.12's are xz, which busybox decompresses): tests/vm/.
# Benchmarks compare against peers; they are optional for building and testing.
[ "${CABBPF_BENCH_DEPS:-0}" = 1 ] && pkgs+=(bpftrace strace linux-perf)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "install-deps: need root to install: ${missing[*]}" >&2
		exit 1
	fi
	echo "install-deps: installing ${missing[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# uprobes through perf_event_open need no tracefs, but mount it if it is
# absent so that `perf probe`-style peers and debugging work too.
if [ -d /sys/kernel/tracing ] && ! mountpoint -q /sys/kernel/tracing; then
	mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null || true
fi
