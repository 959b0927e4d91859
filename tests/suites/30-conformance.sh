#!/bin/sh
# ONNX backend conformance: node tests (every test using only the required ops
# passes, and at least 80% of all), the light real-model tests (all pass), and
# the PyTorch-converted / PyTorch-operator tests (at least 90% each).
: "${ERT_BUILD:=build}"
: "${ERT_CONFORMANCE:=../shared/conformance/onnx-backend}"
edgert="$ERT_BUILD/edgert"
here=$(dirname "$0")

if [ ! -d "$ERT_CONFORMANCE/node" ]; then
	echo "conformance: ONNX backend test data not found at '$ERT_CONFORMANCE'"
	echo "conformance: set CONFORMANCE=/path/to/onnx-backend on the make command line"
	echo "conformance: 0 passed, 0 failed, 1 skipped"
	exit 0
fi

p=0 f=0 s=0 rc=0
run() {
	name=$1
	shift
	echo "-- $name"
	out=$("$edgert" conform "$@" 2>&1)
	r=$?
	printf '%s\n' "$out" | grep -vE '^ok ' | tail -n 40
	line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -n 1)
	[ -n "$line" ] || { f=$((f + 1)); rc=1; echo "$name: conform produced no summary (exit $r)"; return; }
	set -- $(echo "$line" | sed -E 's/^([0-9]+) passed, ([0-9]+) failed(, ([0-9]+) skipped)?.*/\1 \2 \4/')
	p=$((p + $1)); s=$((s + ${3:-0}))
	if [ "$r" -eq 0 ]; then
		# the rules (gate, minimum pass rate) allow these: say so, count them
		# with the skipped so that make check's total stays green
		if [ "$2" -gt 0 ]; then
			echo "$name: $2 failure(s) above are allowed by the suite's rules"
			s=$((s + $2))
		fi
	else
		rc=1
		f=$((f + ($2 > 0 ? $2 : 1)))
	fi
}

run node --gate "$here/../conformance/node-gate.txt" --errata "$here/../conformance/node-errata.txt" \
	--tolerances "$here/../conformance/node-tolerances.txt" --min-rate 0.80 "$ERT_CONFORMANCE/node"
run light --threads 2 "$ERT_CONFORMANCE/light"
run pytorch-converted --min-rate 0.90 "$ERT_CONFORMANCE/pytorch-converted"
run pytorch-operator --min-rate 0.90 "$ERT_CONFORMANCE/pytorch-operator"
echo "conformance: $p passed, $f failed, $s skipped"
exit $rc
