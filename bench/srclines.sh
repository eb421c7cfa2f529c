#!/usr/bin/env bash
# What reading source lines from DWARF costs (user/elf/dwarf.c), and what
# it would add to the start of a run if it were done there: for each
# selection, R runs of `cabbpf -v -l SELECTION -- true` (the list reads the
# lines, as a run would); prints the time -v reports for the lines
# ("source lines of N of M functions from FILE in X s"), and the whole -l
# (symbols, selection, plan, lines) for scale.
#   python3.11 every function: its DWARF comes from python3.11's build-id
#     debug file when one is installed (python3.11-dbg ships it), else
#     there is none and the cost is only looking;
#   -f 'libc:*': libc's DWARF from libc6-dbg (scripts/install-deps.sh).
# Runs start their lines only after the trace, and only for --json, --pprof
# or a recording: the figures say why.
#   bench/srclines.sh [R]
set -euo pipefail
cd "$(dirname "$0")/.."
R=${1:-5}
O=.output/bench
mkdir -p "$O"
make -s cabbpf
run() {
	local what=$1
	shift
	local vals=() tot=() n="" from=""
	for r in $(seq "$R"); do
		local t0 t1
		t0=$(date +%s.%N)
		./cabbpf -v -l "$@" >/dev/null 2>"$O/srclines.log"
		t1=$(date +%s.%N)
		local line
		line=$(grep 'source lines of' "$O/srclines.log" | tail -1 || true)
		if [ -n "$line" ]; then
			vals+=("$(sed -n 's/.* in \([0-9.]*\) s$/\1/p' <<<"$line")")
			n=$(sed -n 's/.*source lines of \([0-9]* of [0-9]*\) functions.*/\1/p' <<<"$line")
			from=$(sed -n 's/.* from \(.*\) in [0-9.]* s$/\1/p' <<<"$line")
		else
			vals+=(0)
			n="none: no DWARF"
		fi
		tot+=("$(python3 -c "print($t1 - $t0)")")
	done
	python3 - "$what" "$n" "$from" "${vals[*]}" "${tot[*]}" <<-'EOF'
	import sys
	what, n, frm, v, t = sys.argv[1:6]
	v = sorted(float(x) for x in v.split()); t = sorted(float(x) for x in t.split())
	print("%s: lines %s%s; DWARF read min %.3f median %.3f max %.3f s; whole -l median %.3f s"
	      % (what, n, (" from " + frm) if frm else "", v[0], v[len(v)//2], v[-1], t[len(t)//2]))
	EOF
}
# Debian's interpreter (not a shim earlier in PATH)
py=$(readlink -f /usr/bin/python3)
run "$(basename "$py") (all functions)" -- "$py" -c pass
run "libc:* (libc6-dbg)" -f 'libc:*' -- /bin/true
