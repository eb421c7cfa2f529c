#!/usr/bin/env bash
# The floors of docs/architecture.md, checked: every #include "DIR/FILE.h"
# of the C sources (common cab pipeline analyzers user) names a header of
# the including file's floor or of one below it, and no headers include
# each other in a circle. Prints each violation and exits 1; prints one
# line and exits 0 when there is none. `make check` runs it first.
#   scripts/layers.sh
set -euo pipefail
cd "$(dirname "$0")/.."

# Floors, lowest first: a folder's files may include headers of their own
# folder and of the folders listed before theirs (the floors below), never
# after (so no two folders include each other). include/ (shared with BPF)
# and common/ share the ground floor. docs/architecture.md draws the same.
floors=(
	"include common"
	"cab"
	"analyzers"
	"pipeline"
	"user/kernel"
	"user/elf"
	"user/probe"
	"user/proc"
	"user/iomode"
	"user/trace"
	"user/report"
	"user/cli"
	"user/record"
	"user/modes"
	"user"
)

declare -A floor_of
for i in "${!floors[@]}"; do
	for d in ${floors[$i]}; do
		floor_of[$d]=$i
	done
done

# The floor of a folder: its own, or its nearest declared parent's.
floor() {
	local d=$1
	while [ -n "$d" ] && [ "$d" != . ]; do
		if [ -n "${floor_of[$d]+x}" ]; then
			echo "${floor_of[$d]}"
			return
		fi
		d=$(dirname "$d")
	done
	echo -1
}

bad=0
edges=$(mktemp)
trap 'rm -f "$edges"' EXIT
while IFS= read -r f; do
	src=$(dirname "$f")
	fs=$(floor "$src")
	if [ "$fs" -lt 0 ]; then
		echo "layers: $f: its folder $src is on no floor (scripts/layers.sh)"
		bad=1
		continue
	fi
	while IFS=: read -r line inc; do
		[ -n "$inc" ] || continue
		# headers found through -I (the skeletons, include/) sit beside
		hd=$(dirname "$inc")
		[ "$hd" = . ] && continue
		[ -e "$inc" ] || continue
		echo "$f $inc" >>"$edges"
		ft=$(floor "$hd")
		if [ "$ft" -gt "$fs" ]; then
			echo "layers: $f:$line includes $inc: $hd is above $src"
			bad=1
		fi
	done < <(grep -n '^#include "' "$f" | sed 's/^\([0-9]*\):#include "\([^"]*\)".*/\1:\2/')
done < <(find common cab pipeline analyzers user -name '*.[ch]' | sort)

# Circles among headers (a .h that, through others, includes itself):
# within a folder, where the floors allow both directions.
if cycles=$(awk '
	$1 ~ /\.h$/ { n[$1] = n[$1] " " $2 }
	function visit(h, path,   k, a, i) {
		if (state[h] == 1) { print "layers: headers include each other: " path " " h; found = 1; return }
		if (state[h] == 2) return
		state[h] = 1
		k = split(n[h], a, " ")
		for (i = 1; i <= k; i++) visit(a[i], path " " h " ->")
		state[h] = 2
	}
	END { for (h in n) visit(h, ""); exit found ? 1 : 0 }' "$edges"); then
	:
else
	echo "$cycles"
	bad=1
fi
if [ "$bad" = 0 ]; then
	echo "layers: $(wc -l <"$edges") includes, every one down or level, no circle"
fi
exit "$bad"
