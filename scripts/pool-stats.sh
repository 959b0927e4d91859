#!/bin/sh
# Names the job functions in a thread pool's counters and sorts them.
#
#   make POOL_STATS=1 build-poolstats/edgert-static
#   build-poolstats/edgert-static bench model.ert --threads 2 2> stats.txt
#   sh scripts/pool-stats.sh build-poolstats/edgert-static stats.txt
#
# The counters (backends/cpu/threadpool.c, ERT_POOL_STATS) are printed to
# stderr when a pool is destroyed, one "pool-stat" line per job function,
# with the function's address; this maps each address to its symbol (the
# static binary is not position-independent, so nm's addresses are the
# run's) and prints, per function, its time in ms: wall (parallel jobs),
# serial (calls too small to split, or one thread), the threads' time
# inside it, the caller's wait for the last worker (join), how late the
# first worker started, and in us its fastest call (min_us: of the parallel
# calls if any, else of the serial ones; on a shared machine the sums carry
# other processes' time, the fastest call much less). See
# docs/performance.md, "Where two threads lose".
set -eu
[ $# -eq 2 ] || { echo "usage: $0 BINARY STATS-FILE" >&2; exit 2; }
[ -r "$1" ] || { echo "pool-stats: cannot read binary '$1'" >&2; exit 2; }
[ -r "$2" ] || { echo "pool-stats: cannot read counters '$2'" >&2; exit 2; }
nm "$1" | awk '$2 ~ /^[tT]$/ { print $1, $3 }' | sort > "${TMPDIR:-/tmp}/pool-stats-syms.$$"
trap 'rm -f "${TMPDIR:-/tmp}/pool-stats-syms.$$"' EXIT
awk -v syms="${TMPDIR:-/tmp}/pool-stats-syms.$$" '
function hex(s,   i, c, v) {
	v = 0; s = tolower(s); sub(/^0x/, "", s)
	for (i = 1; i <= length(s); i++) {
		c = index("0123456789abcdef", substr(s, i, 1)) - 1
		v = v * 16 + c
	}
	return v
}
function name_of(a,   lo, hi, mid) {
	lo = 1; hi = ns
	if (ns == 0 || a < addr[1]) return sprintf("0x%x", a)
	while (lo < hi) {
		mid = int((lo + hi + 1) / 2)
		if (addr[mid] <= a) lo = mid; else hi = mid - 1
	}
	return sym[lo]
}
BEGIN {
	while ((getline line < syms) > 0) {
		split(line, f, " "); ns++; addr[ns] = hex(f[1]); sym[ns] = f[2]
	}
	printf "%-28s %7s %9s %9s %9s %9s %8s %8s %9s\n", "function", "calls", "wall", "serial",
	       "busy0", "busy1+", "join", "late", "min_us"
}
/^pool-stat / {
	delete kv; busy1 = 0
	for (i = 2; i <= NF; i++) { split($i, p, "="); kv[p[1]] = p[2] }
	for (k in kv) if (k ~ /^busy[1-9]/) busy1 += kv[k]
	n = name_of(hex(kv["fn"]))
	printf "%-28s %7d %9.2f %9.2f %9.2f %9.2f %8.2f %8.2f %9.2f\n", substr(n, 1, 28),
	       kv["calls"] + kv["serial"], kv["wall_us"] / 1e3, kv["serial_us"] / 1e3,
	       kv["busy0_us"] / 1e3, busy1 / 1e3, kv["join_us"] / 1e3, kv["late_us"] / 1e3,
	       (kv["calls"] > 0 ? kv["min_wall_us"] : kv["min_serial_us"]) | "sort -k3,3nr -k4,4nr"
}' "$2"
