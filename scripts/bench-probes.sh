#!/bin/sh
# What libedgert's USDT probes cost when nothing is attached (issue 12): the
# zoo's mobilenet_v2 timed by `edgert bench` from the normal build and from a
# build without probes (-DERT_NO_PROBES, in build-noprobes/), alternating for
# ROUNDS rounds so that a machine's drift hits both alike. Prints each round's
# medians and the ratio of the medians of all rounds. A benchmark to run on a
# quiet machine, not a test.
#
#   sh scripts/bench-probes.sh [ROUNDS] [THREADS]      (default 5 rounds, 1 thread)
set -eu
: "${ERT_BUILD:=build}"
rounds=${1:-5} threads=${2:-1}
nop=build-noprobes
make -s -j2 BUILD="$ERT_BUILD" "$ERT_BUILD/edgert"
make -s -j2 BUILD="$nop" CFLAGS="-O2 -g -DERT_NO_PROBES" "$nop/edgert"
if readelf -n "$nop/edgert" | grep -q 'Provider: edgert'; then
	echo "bench-probes: $nop/edgert still has probes" >&2
	exit 1
fi
if ! readelf -n "$ERT_BUILD/edgert" | grep -q 'Provider: edgert'; then
	echo "bench-probes: $ERT_BUILD/edgert has no probes (systemtap-sdt-dev missing?)" >&2
	exit 1
fi
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
export ERT_NO_PROGRESS=1
"$ERT_BUILD/edgert" zoo mobilenet_v2 -o "$t/mnv2.ert" >/dev/null
median() {
	"$1" bench "$t/mnv2.ert" --json --loops 20 --warmup 2 --threads "$threads" |
		sed -n 's/.*"median_ms": \([0-9.]*\).*/\1/p'
}
: >"$t/with"
: >"$t/without"
for r in $(seq "$rounds"); do
	a=$(median "$ERT_BUILD/edgert")
	b=$(median "$nop/edgert")
	echo "$a" >>"$t/with"
	echo "$b" >>"$t/without"
	echo "round $r: with probes $a ms, without $b ms"
done
mid() { sort -n "$1" | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
awk -v a="$(mid "$t/with")" -v b="$(mid "$t/without")" \
	'BEGIN {printf "median of %s rounds: with probes %.3f ms, without %.3f ms, ratio %.4f\n", '"$rounds"', a, b, a / b}'
