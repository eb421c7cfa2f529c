#!/usr/bin/env bash
# One name, one place (docs/architecture.md): every function a production
# file exports (its object's global text symbols, as the compiler made
# them) is named FILE__verb or MODULE__verb, where FILE is the file's
# basename and MODULE a prefix of it before an underscore (cct_report.c
# may export cct__ or cct_report__ functions; iostat_groups.c iostat__);
# and no two production files share a basename. Prints each violation and
# exits 1; prints one line and exits 0 when there is none.
#   scripts/names.sh OUT   (OUT: the build's output folder, objects built)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.output}

# Symbols that are not functions of the C API, with why.
allowed() {
	case "$1:$2" in
	user/main.c:main) return 0 ;;        # the program's entry
	user/trace/calibrate.c:cabbpf_calib_*) return 0 ;; # asm labels: the probed instructions
	esac
	return 1
}

bad=0
nsyms=0
while read -r src; do
	obj="$out/obj/${src%.c}.o"
	base=$(basename "$src" .c)
	if [ ! -f "$obj" ]; then
		echo "names: $src: no object $obj (build first)" >&2
		bad=1
		continue
	fi
	while read -r _ type sym; do
		[ "$type" = T ] || continue
		nsyms=$((nsyms + 1))
		allowed "$src" "$sym" && continue
		if [[ "$sym" != *__* ]]; then
			echo "names: $src exports $sym: no MODULE__ prefix"
			bad=1
			continue
		fi
		pfx=${sym%%__*}
		if [ "$pfx" != "$base" ] && [[ "$base" != "${pfx}_"* ]]; then
			echo "names: $src exports $sym: its prefix $pfx is not the file's ($base)"
			bad=1
		fi
	done < <(nm --defined-only -g "$obj")
done < <(find common cab pipeline analyzers user -name '*.c' | sort)

for ext in c h; do
	dups=$(find common cab pipeline analyzers user include -name "*.$ext" -printf '%f\n' |
	       sort | uniq -d)
	for d in $dups; do
		echo "names: two files named $d:" $(find common cab pipeline analyzers user include -name "$d")
		bad=1
	done
done

if [ "$bad" -ne 0 ]; then
	exit 1
fi
echo "names: $nsyms exported functions, each prefixed by its file's name; no basename twice"
