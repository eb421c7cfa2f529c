#!/usr/bin/env bash
# tests/vm/boot.sh: boot a Debian kernel package under QEMU and run ONE
# command in it, as root, against this machine's own root filesystem.
#
#   tests/vm/boot.sh [OPTIONS] KERNEL -- COMMAND [ARGS...]
#   tests/vm/boot.sh --prepare KERNEL     fetch and unpack only; print its release
#   tests/vm/boot.sh --which-accel        print kvm or tcg, and why
#   tests/vm/boot.sh --check              exit 0 if this machine can boot guests
#
# KERNEL is a Debian package name (linux-image-amd64, linux-image-6.12-amd64,
# linux-image-6.1.0-57-amd64, ...: a metapackage is followed to the image
# package it depends on), a linux-image-*.deb file, or a directory holding an
# unpacked one. Packages are fetched with `apt-get download` (run
# `apt-get update` first on a fresh machine) and unpacked with dpkg-deb -x
# under the work folder, never installed.
#
# The guest sees the host's / read-only (virtio-9p) under an overlayfs whose
# upper layer is a tmpfs: everything built on the host is there, and what
# the guest writes vanishes at power-off. Its /proc, /sys, /dev, /dev/shm,
# /run are its own; /sys/fs/bpf, /sys/kernel/tracing, /sys/kernel/debug and
# the host's cgroup layout (as the host's /proc/self/mounts shows it under
# /sys/fs/cgroup) are mounted. $VMTEST_OUT in the guest is a writable
# directory of the host (--out DIR, default RUN.out next to the log): files
# put there come back. COMMAND runs in the host's current directory, with
# stdin from /dev/null and its output on the serial console, which is copied
# to stdout and to the log. No network.
#
# boot.sh exits with COMMAND's exit status, or 125 when the guest never
# reported one (boot failure, panic, hang, timeout): then it prints the last
# lines of the console.
#
# Options:
#   --timeout SEC   power the guest off after SEC seconds (default 1800):
#                   a failure (125)
#   --mem MIB       guest memory (default 2048)
#   --cpus N        vCPUs (default 2)
#   --accel A       kvm or tcg (default: kvm when kvm_intel or kvm_amd is
#                   loaded and /dev/kvm opens, else tcg: single-threaded,
#                   VMTEST_TCG_THREAD=multi for QEMU's multi-threaded TCG,
#                   which breaks the guest kernel's code patching: below)
#   --log FILE      the console log (default WORK/runs/boot-STAMP.log; the
#                   last 20 of those are kept)
#   --out DIR       the host directory the guest sees as $VMTEST_OUT
#   -q              the console to the log only, not to stdout
#
# Environment: VMTEST_DIR, the work folder (default /var/tmp/cabbpf-vmtest):
# debs/ (the packages, kept), k/ (each unpacked, with its initramfs), runs/
# (logs). VMTEST_ACCEL, VMTEST_MEM, VMTEST_CPUS: the defaults of --accel,
# --mem, --cpus. VMTEST_TCG_THREAD: single (default) or multi.
#
# Why TCG is single-threaded (QEMU 7.2, Debian 12's): with
# -accel tcg,thread=multi and 2 vCPUs, the guest kernel's live code patching
# (text_poke_bp: a static key flipped, as when a tracepoint is enabled, e.g.
# sched_switch by cabbpf's BPF programs) goes wrong: a vCPU runs the
# breakpoint after it was taken out. Toggling
# /sys/kernel/tracing/events/sched/sched_switch/enable while both vCPUs
# schedule oopsed 6.12 at once ("Oops: int3" in __schedule, then a panic)
# and hung 6.1 (a soft lockup of CPU#0); test_integration's bad-input case
# panicked 6.12 the same way. Single-threaded TCG (both vCPUs on one host
# thread) ran 400 toggles on both kernels cleanly, and was no slower here
# (test_io_integration exact: 15 s against 20 s multi-threaded).
#
# Needs (Debian packages): qemu-system-x86, busybox-static, cpio (and apt,
# dpkg, gzip, coreutils, util-linux); scripts/install-deps.sh installs them.
#
# Examples:
#   sudo tests/vm/boot.sh linux-image-amd64 -- uname -r
#   sudo tests/vm/boot.sh linux-image-6.12-amd64 -- ./cabbpf --features
#   sudo tests/vm/boot.sh linux-image-amd64 -- sh -c 'CK_RUN_CASE=exact .output/tests/test_integration'
set -euo pipefail
# The whole script is read before it runs: editing it meanwhile cannot
# change a run under way.
{

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
W=${VMTEST_DIR:-/var/tmp/cabbpf-vmtest}
TIMEOUT=1800 MEM=${VMTEST_MEM:-2048} CPUS=${VMTEST_CPUS:-2} ACCEL=${VMTEST_ACCEL:-}
LOG="" OUTDIR="" QUIET=0 PREPARE=0 CHECK=0 TCG_THREAD=${VMTEST_TCG_THREAD:-single}
die() {
	echo "boot.sh: $*" >&2
	exit 125
}
usage() {
	sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
}

# KVM only with hardware virtualisation: a /dev/kvm of kvm_pvm alone (PVM,
# as on Firecracker-style hosts) runs only PVM guest kernels, and a stock
# kernel hangs at boot there. Sets ACCEL (kvm or tcg) and why.
which_accel() {
	if [ -n "$ACCEL" ]; then
		why="asked for"
	elif { [ -d /sys/module/kvm_intel ] || [ -d /sys/module/kvm_amd ]; } && { : <>/dev/kvm; } 2>/dev/null; then
		ACCEL=kvm
		why="kvm_$([ -d /sys/module/kvm_intel ] && echo intel || echo amd) loaded, /dev/kvm usable"
	else
		ACCEL=tcg
		why="no kvm_intel or kvm_amd loaded$([ -d /sys/module/kvm_pvm ] && echo ' (kvm_pvm only: PVM cannot boot a stock kernel)')"
		[ -e /dev/kvm ] || why="no /dev/kvm"
	fi
	if [ "$ACCEL" = tcg ]; then why="$TCG_THREAD-threaded; $why"; fi
}

while [ $# -gt 0 ]; do
	case "$1" in
	--timeout) TIMEOUT=$2; shift 2 ;;
	--mem) MEM=$2; shift 2 ;;
	--cpus) CPUS=$2; shift 2 ;;
	--accel) ACCEL=$2; shift 2 ;;
	--log) LOG=$2; shift 2 ;;
	--out) OUTDIR=$2; shift 2 ;;
	--prepare) PREPARE=1; shift ;;
	--check) CHECK=1; shift ;;
	--which-accel) which_accel; echo "$ACCEL ($why)"; exit 0 ;;
	-q) QUIET=1; shift ;;
	-h | --help) usage; exit 0 ;;
	--) die "no KERNEL before -- (--help)" ;;
	-*) die "unknown option $1 (--help)" ;;
	*) break ;;
	esac
done
if [ $CHECK = 1 ]; then
	set -- none
elif [ $PREPARE = 1 ]; then
	[ $# -eq 1 ] || die "usage: boot.sh --prepare KERNEL"
else
	if [ $# -lt 3 ] || [ "$2" != "--" ]; then
		die "usage: boot.sh [OPTIONS] KERNEL -- COMMAND [ARGS...] (--help)"
	fi
fi
KSPEC=$1
shift
[ $# -gt 0 ] && shift
[ "$(id -u)" = 0 ] || die "run as root (QEMU reads the whole of / for the guest)"
case "$TIMEOUT$MEM$CPUS" in *[!0-9]*) die "--timeout, --mem and --cpus take numbers" ;; esac
case "$ACCEL" in "" | kvm | tcg) ;; *) die "--accel kvm or tcg, not $ACCEL" ;; esac
case "$TCG_THREAD" in single | multi) ;; *) die "VMTEST_TCG_THREAD is single or multi, not $TCG_THREAD" ;; esac

# ---- what it needs -------------------------------------------------------
missing=()
for t in qemu-system-x86_64:qemu-system-x86 cpio:cpio gzip:gzip dpkg-deb:dpkg \
	apt-get:apt timeout:coreutils flock:util-linux; do
	command -v "${t%%:*}" >/dev/null || missing+=("${t#*:}")
done
BB=""
for b in /bin/busybox /usr/bin/busybox; do [ -x "$b" ] && BB=$b && break; done
# A dynamic busybox (package busybox) cannot run alone in the initramfs.
if [ -z "$BB" ] || ldd "$BB" >/dev/null 2>&1; then missing+=(busybox-static); fi
if [ ${#missing[@]} -gt 0 ]; then
	die "missing: ${missing[*]} (Debian packages; sudo scripts/install-deps.sh, or apt-get install ${missing[*]})"
fi
case "$W" in *,*) die "VMTEST_DIR must not contain a comma (QEMU's option syntax): $W" ;; esac
[ $CHECK = 0 ] || exit 0
mkdir -p "$W/debs" "$W/k" "$W/runs"
W=$(cd "$W" && pwd)

# ---- 1. the kernel: package name, .deb or directory ------------------------
# Unpacking and downloads are serialised between runs (two may share W).
exec 9>"$W/.lock"
flock 9

# fetch PKG VERSION: the .deb of PKG=VERSION under debs/, downloaded if not
# there (as _apt, apt's sandbox user, into a folder of its own).
fetch() {
	local pkg=$1 ver=$2 deb tmp
	deb=$(find "$W/debs" -maxdepth 1 -name "${pkg}_${ver//:/%3a}_*.deb" | head -1)
	if [ -z "$deb" ]; then
		echo "boot.sh: apt-get download $pkg=$ver" >&2
		tmp=$(mktemp -d "$W/debs/.dl.XXXXXX")
		id _apt >/dev/null 2>&1 && chown _apt "$tmp"
		(cd "$tmp" && apt-get download -q "$pkg=$ver" >&2) ||
			{ rm -rf "$tmp"; die "apt-get download $pkg=$ver failed"; }
		deb=$(find "$tmp" -name '*.deb' | head -1)
		[ -n "$deb" ] || die "apt-get download $pkg=$ver gave no .deb"
		mv "$deb" "$W/debs/"
		rm -rf "$tmp"
		deb=$W/debs/${deb##*/}
	fi
	echo "$deb"
}

# resolve PKG: the .deb of the kernel image package PKG is or depends on.
# apt's lists say which version is current (after apt-get update, the newest
# one); without them, the last package resolved for PKG here is used.
resolve() {
	local pkg=$1 info ver next deb updated=""
	# What was resolved since apt's lists last changed holds (and saves
	# apt-cache's second or two).
	if [ "$W/debs/$1.resolved" -nt /var/lib/apt/lists ] &&
		deb=$W/debs/$(cat "$W/debs/$1.resolved") && [ -f "$deb" ]; then
		echo "$deb"
		return
	fi
	for _ in 1 2 3 4; do
		info=$(apt-cache show --no-all-versions "$pkg" 2>/dev/null || true)
		ver=$(sed -n 's/^Version: //p' <<<"$info" | head -1)
		if [ -z "$ver" ] && [ ! -s "$W/debs/$1.resolved" ] && [ -z "${updated:-}" ]; then
			# a fresh machine, or one whose lists were cleaned
			echo "boot.sh: apt knows no $pkg: apt-get update" >&2
			updated=1
			apt-get update -qq >&2 || true
			info=$(apt-cache show --no-all-versions "$pkg" 2>/dev/null || true)
			ver=$(sed -n 's/^Version: //p' <<<"$info" | head -1)
		fi
		if [ -z "$ver" ]; then
			[ -s "$W/debs/$1.resolved" ] ||
				die "apt knows no package $pkg and none was fetched here before (apt-get update first?)"
			deb=$W/debs/$(cat "$W/debs/$1.resolved")
			[ -f "$deb" ] || die "apt knows no package $pkg and $deb is gone (apt-get update first?)"
			echo "boot.sh: apt knows no $pkg: using $deb, fetched before" >&2
			echo "$deb"
			return
		fi
		# A metapackage depends on the image package of the current version.
		next=$(sed -n 's/^Depends: //p' <<<"$info" | head -1 |
			tr ',|' '\n' | sed -n 's/^ *\(linux-image-[^ ]*\).*/\1/p' | head -1)
		if [ -n "$next" ]; then
			echo "boot.sh: $pkg $ver -> $next" >&2
			pkg=$next
			continue
		fi
		deb=$(fetch "$pkg" "$ver")
		echo "${deb##*/}" >"$W/debs/$1.resolved"
		echo "$deb"
		return
	done
	die "$1: no kernel image package within 4 dependency hops"
}

if [ -d "$KSPEC" ]; then
	KDIR=$(cd "$KSPEC" && pwd)
else
	if [ -f "$KSPEC" ]; then
		DEB=$(realpath "$KSPEC")
	else
		DEB=$(resolve "$KSPEC")
	fi
	KDIR=$W/k/$(basename "$DEB" .deb)
	if [ ! -e "$KDIR/.unpacked" ]; then
		echo "boot.sh: unpacking $DEB" >&2
		rm -rf "$KDIR" "$KDIR.tmp"
		mkdir -p "$KDIR.tmp"
		dpkg-deb -x "$DEB" "$KDIR.tmp"
		touch "$KDIR.tmp/.unpacked"
		mv "$KDIR.tmp" "$KDIR"
	fi
fi
VMLINUZ=$(find "$KDIR/boot" -maxdepth 1 -name 'vmlinuz-*' 2>/dev/null | head -1)
[ -n "$VMLINUZ" ] || die "no boot/vmlinuz-* in $KDIR: not a kernel image package"
KVER=${VMLINUZ##*/vmlinuz-}
MODDIR=$KDIR/lib/modules/$KVER
[ -d "$MODDIR" ] || MODDIR=$KDIR/usr/lib/modules/$KVER
[ -d "$MODDIR" ] || die "no lib/modules/$KVER in $KDIR"

# ---- 2. the base initramfs: busybox, the modules, tests/vm/init (cached) ---
# Modules the guest needs, in dependency order (read from each module's
# .modinfo: no depmod or kmod needed). Built-in ones are skipped.
MODS="virtio virtio_ring virtio_pci 9pnet 9pnet_virtio 9p overlay"
key=$( { cat "$here/init"; echo "$MODS"; cksum <"$BB"; } | cksum | cut -d' ' -f1)
BASE=$KDIR/.initrd-$key.cpio.gz
if [ ! -s "$BASE" ]; then
	T=$(mktemp -d "$W/.initrd.XXXXXX")
	mkdir -p "$T"/{bin,dev,proc,sys,lower,upper,newroot,mods,vmtest}
	cp "$BB" "$T/bin/busybox"
	cp "$here/init" "$T/init"
	chmod 0755 "$T/init"
	: >"$T/mods/order"
	declare -A seen=()
	modcat() {
		case "$1" in
		*.xz) "$BB" xzcat "$1" ;;
		*.gz) gzip -dc "$1" ;;
		*.zst) command -v zstd >/dev/null || die "$1 is zstd-compressed: apt-get install zstd"
			zstd -qdc "$1" ;;
		*) cat "$1" ;;
		esac
	}
	addmod() {
		local m=$1 alt p d
		alt=$(tr _ - <<<"$m")
		[ -n "${seen[$m]:-}" ] && return 0
		seen[$m]=1
		p=$(find "$MODDIR/kernel" \( -name "$m.ko*" -o -name "$alt.ko*" \) | head -1)
		if [ -z "$p" ]; then
			grep -Eq "/($m|$alt)\.ko\$" "$MODDIR/modules.builtin" 2>/dev/null && return 0
			die "$KVER: module $m is neither in the package nor built in"
		fi
		modcat "$p" >"$T/mods/$m.ko"
		for d in $(tr '\0' '\n' <"$T/mods/$m.ko" | sed -n 's/^depends=//p' | head -1 | tr ',' ' '); do
			addmod "$d"
		done
		echo "$m" >>"$T/mods/order"
	}
	for m in $MODS; do addmod "$m"; done
	(cd "$T" && find . | cpio -o -H newc --quiet | gzip -1) >"$BASE.tmp"
	rm -f "$KDIR"/.initrd-*.cpio.gz
	mv "$BASE.tmp" "$BASE"
	rm -rf "$T"
fi
exec 9>&-
if [ $PREPARE = 1 ]; then
	echo "$KVER"
	exit 0
fi

# ---- 3. this run: the command, its directory, the host's cgroup layout -----
STAMP=$(date +%Y%m%d-%H%M%S)-$$
if [ -z "$LOG" ]; then
	LOG=$W/runs/boot-$STAMP.log
	# the last 20 of these are kept
	find "$W/runs" -maxdepth 1 -name 'boot-*' | sed 's/\.\(log\|out\|log\.raw\|log\.qemu\)$//' |
		sort -u | head -n -19 | while read -r old; do rm -rf "$old".*; done
fi
[ -n "$OUTDIR" ] || OUTDIR=${LOG%.log}.out
mkdir -p "$OUTDIR" "$(dirname "$LOG")"
OUTDIR=$(cd "$OUTDIR" && pwd)
case "$OUTDIR$LOG" in *,*) die "the log and out paths must not contain a comma: $LOG $OUTDIR" ;; esac
rm -f "$OUTDIR/status" "$OUTDIR/boot-uptime"
which_accel
T=$(mktemp -d "$W/.run.XXXXXX")
QPID=""
# shellcheck disable=SC2317 # (a trap's)
cleanup() {
	if [ -n "$QPID" ]; then
		kill "$QPID" 2>/dev/null || true
		wait 2>/dev/null || true
		{ tr -d '\r' <"$LOG.raw"; cat "$LOG.qemu"; } >"$LOG" 2>/dev/null && rm -f "$LOG.raw" "$LOG.qemu"
		echo "boot.sh: interrupted; the guest is stopped; log $LOG" >&2
	fi
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
mkdir -p "$T/vmtest"
{
	printf 'cd %q || { echo "boot.sh: the guest cannot see %q"; exit 125; }\n' "$PWD" "$PWD"
	printf 'exec'
	printf ' %q' "$@"
	printf '\n'
} >"$T/vmtest/cmd"
cgroups=$(awk '$2 ~ "^/sys/fs/cgroup" && $3 ~ "^(tmpfs|cgroup|cgroup2)$" {
	o = ""
	if ($3 == "cgroup") {
		n = split($4, a, ",")
		for (i = 1; i <= n; i++)
			if (a[i] !~ /^(rw|ro|relatime|noatime|nosuid|nodev|noexec|mode=.*|clone_children|nsdelegate|memory_recursiveprot|favordynmods)$/)
				o = o (o == "" ? "" : ",") a[i]
		o = ":" o
	}
	printf "%s:%s%s ", $3, $2, o }' /proc/self/mounts)
[ -n "$cgroups" ] || cgroups="cgroup2:/sys/fs/cgroup"
printf "VMTEST_CGROUPS='%s'\n" "$cgroups" >"$T/vmtest/env"
(cd "$T" && find vmtest | cpio -o -H newc --quiet | gzip -1) >"$T/run.cpio.gz"
cat "$BASE" "$T/run.cpio.gz" >"$T/initrd"

if [ "$ACCEL" = kvm ]; then
	QACCEL=(-accel kvm -cpu host)
else
	QACCEL=(-accel "tcg,thread=$TCG_THREAD" -cpu max)
fi
echo "boot.sh: kernel $KVER, accel $ACCEL ($why), $CPUS vCPUs, $MEM MiB, timeout $TIMEOUT s; log $LOG" >&2

t0=$(date +%s%N)
: >"$LOG.raw"
timeout -k 10 "$TIMEOUT" qemu-system-x86_64 "${QACCEL[@]}" -machine q35 -smp "$CPUS" -m "$MEM" \
	-nodefaults -no-user-config -display none -no-reboot -rtc base=utc \
	-chardev "file,id=con,path=$LOG.raw" -serial chardev:con \
	-kernel "$VMLINUZ" -initrd "$T/initrd" \
	-append "console=ttyS0,115200 rdinit=/init panic=-1 quiet loglevel=4" \
	-fsdev "local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap" \
	-device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot \
	-fsdev "local,id=vmout,path=$OUTDIR,security_model=none,multidevs=remap" \
	-device virtio-9p-pci,fsdev=vmout,mount_tag=vmout \
	</dev/null >"$LOG.qemu" 2>&1 &
QPID=$!
if [ $QUIET = 0 ]; then
	tail -n +1 -F -s 0.5 --pid=$QPID "$LOG.raw" 2>/dev/null | sed -u 's/\r$//' &
fi
qrc=0
wait $QPID || qrc=$?
QPID=""
wait
# the kernel's last line may have no newline
[ $QUIET = 1 ] || [ -z "$(tail -c 1 "$LOG.raw")" ] || echo
t1=$(date +%s%N)
{ tr -d '\r' <"$LOG.raw"; cat "$LOG.qemu"; } >"$LOG"
rm -f "$LOG.raw" "$LOG.qemu"
secs=$(((t1 - t0) / 1000000000)).$(((t1 - t0) / 100000000 % 10))
rc=$(cat "$OUTDIR/status" 2>/dev/null || true)
case "$rc" in "" | *[!0-9]*) rc="" ;; esac
why=""
[ $qrc = 124 ] && why=" (timed out after $TIMEOUT s)"
echo "boot.sh: $KVER: qemu exit $qrc after $secs s$why; command exit status ${rc:-none}; log $LOG" >&2
if [ -z "$rc" ]; then
	echo "boot.sh: $KVER: the guest never reported a status$why; the console's last lines:" >&2
	pat='Kernel panic|BUG:|Oops:|general protection|Attempted to kill init'
	if grep -qE "$pat" "$LOG"; then
		grep -m 5 -E "$pat" "$LOG" | sed 's/^/  | /' >&2
		echo "  | ..." >&2
	fi
	tail -n 25 "$LOG" | sed 's/^/  | /' >&2
	exit 125
fi
exit "$rc"
}
