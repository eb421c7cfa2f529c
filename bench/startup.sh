#!/usr/bin/env bash
# What cabbpf adds to a short run: R runs each of sqlite3 answering one
# query (280 functions of libsqlite3 traced, ~3,100 events, so the trace
# itself is ~50 ms), untraced and traced, in one run of this script:
#   cold: CABBPF_RECALIBRATE=1, the probe cost measured again (the first
#         run of a boot, or 30 minutes after the last measurement);
#   warm: the measurement kept in /run/cabbpf reused (every later run).
# Prints min / median / max wall seconds of each, the median start-up that
# cabbpf adds (traced - untraced), and the median of each start-up stage
# that -v prints (user/modes/ftrace.c, ftrace__startup_mark).
#   bench/startup.sh [R]
set -euo pipefail
cd "$(dirname "$0")/.."
R=${1:-10}
O=.output/bench
mkdir -p "$O"
make -s cabbpf
command -v sqlite3 >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q sqlite3 >/dev/null
CMD=(sqlite3 :memory: 'select 1')
wall() { # wall ns of "$@", output discarded
	local t0 t1
	t0=$(date +%s%N)
	"$@" >/dev/null 2>>"$O/startup.log" || true
	t1=$(date +%s%N)
	echo $((t1 - t0))
}
: >"$O/startup.log"
plain=() cold=() warm=()
for r in $(seq "$R"); do
	plain+=("$(wall "${CMD[@]}")")
	cold+=("$(CABBPF_RECALIBRATE=1 wall ./cabbpf -q -v -f 'libsqlite3:sqlite3_*' -- "${CMD[@]}")")
	warm+=("$(wall ./cabbpf -q -v -f 'libsqlite3:sqlite3_*' -- "${CMD[@]}")")
done
python3 - "$O/startup.log" "${plain[*]}" "${cold[*]}" "${warm[*]}" <<'EOF'
import re, statistics as st, sys
log, plain, cold, warm = sys.argv[1], *[[float(x) / 1e9 for x in a.split()] for a in sys.argv[2:]]
def row(name, v):
    v = sorted(v)
    print("%-9s min %.3f  median %.3f  max %.3f s" % (name, v[0], st.median(v), v[-1]))
row("untraced", plain); row("cold", cold); row("warm", warm)
print("cabbpf adds (median): cold %.3f s, warm %.3f s" %
      (st.median(cold) - st.median(plain), st.median(warm) - st.median(plain)))
stages = {}
for line in open(log):
    m = re.search(r"start-up: (.*) in ([0-9.]+) ms", line)
    if m:
        stages.setdefault(m.group(1), []).append(float(m.group(2)))
print("stages, median ms over cold and warm runs:")
for k, v in stages.items():
    print("  %-28s %7.1f" % (k, st.median(v)))
EOF
