#!/bin/sh
# Builds every tests/targets/*.c at -O0 and -O2 into OUTDIR as NAME-O0 and
# NAME-O2, with -g -pthread and otherwise Debian gcc's defaults (PIE).
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
for src in "$here"/*.c; do
	name=$(basename "$src" .c)
	for opt in O0 O2; do
		bin=$out/$name-$opt
		if [ -x "$bin" ] && [ "$bin" -nt "$src" ] && [ "$bin" -nt "$here/build.sh" ]; then
			continue
		fi
		echo "  TARGET   $bin"
		# Build to a temporary name so an interrupted build leaves no
		# half-written binary that looks up to date.
		$cc -$opt -g -pthread -Wall -Wextra $extra -o "$bin.tmp" "$src"
		mv -f "$bin.tmp" "$bin"
	done
done
