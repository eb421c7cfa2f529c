#!/bin/sh
# Builds every tests/targets/*.c at -O0 and -O2 into OUTDIR as NAME-O0 and
# NAME-O2, with -g -pthread and otherwise Debian gcc's defaults (PIE).
# Every tests/targets/plugin/NAME.c becomes the shared library
# OUTDIR/plugins-O0/libNAME.so and OUTDIR/plugins-O2/libNAME.so, and
# dlopener-OX gets DT_RUNPATH $ORIGIN/plugins-OX (where it finds them).
# A binary newer than its source and this script is kept (repeated test
# runs stay fast). TARGET_CC and TARGET_CFLAGS pick another compiler or
# more flags. Usage: tests/targets/build.sh OUTDIR
set -eu
if [ $# -ne 1 ]; then
	echo "usage: $0 OUTDIR" >&2
	exit 2
fi
out=$1
here=$(cd "$(dirname "$0")" && pwd)
# gcc, not $CC: the targets rely on gcc's noipa attribute.
cc=${TARGET_CC:-gcc}
# Extra flags (e.g. -fcf-protection): give each flavour its own OUTDIR, the
# up-to-date check below does not look at flags.
extra=${TARGET_CFLAGS:-}
mkdir -p "$out"
# fresh FILE SRC: FILE is newer than SRC and this script.
fresh() {
	[ -e "$1" ] && [ "$1" -nt "$2" ] && [ "$1" -nt "$here/build.sh" ]
}
for src in "$here"/plugin/*.c; do
	[ -e "$src" ] || continue
	name=$(basename "$src" .c)
	for opt in O0 O2; do
		mkdir -p "$out/plugins-$opt"
		so=$out/plugins-$opt/lib$name.so
		fresh "$so" "$src" && continue
		echo "  PLUGIN   $so"
		$cc -$opt -g -fPIC -shared -Wall -Wextra $extra -o "$so.tmp" "$src"
		mv -f "$so.tmp" "$so"
	done
done
for src in "$here"/*.c; do
	name=$(basename "$src" .c)
	for opt in O0 O2; do
		bin=$out/$name-$opt
		if [ -x "$bin" ] && fresh "$bin" "$src"; then
			continue
		fi
		# dlopener finds its plugin through RUNPATH $ORIGIN (literal).
		link=
		# shellcheck disable=SC2016
		[ "$name" = dlopener ] && link='-Wl,--enable-new-dtags,-rpath,$ORIGIN/plugins-'$opt
		echo "  TARGET   $bin"
		# Build to a temporary name so an interrupted build leaves no
		# half-written binary that looks up to date.
		$cc -$opt -g -pthread -Wall -Wextra $extra -o "$bin.tmp" "$src" $link
		mv -f "$bin.tmp" "$bin"
	done
done
