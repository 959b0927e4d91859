#!/bin/sh
# The suites that check numbers end to end, again at lower CPU kernel levels:
# ONNX conformance at scalar (the reference kernels) and avx2, the PyTorch
# exports and the CPU == NPU int8 bit-identity at avx2. The suites before
# this one ran at the best level this CPU has; with this one an AVX2-only
# machine and an AVX-512 machine are both covered wherever it runs. A level
# this CPU lacks is skipped (one case each, counted as skipped).
: "${ERT_BUILD:=build}"
p=0 f=0 s=0
best=$("$ERT_BUILD/edgert" --version 2>/dev/null | sed -nE 's/.*best level ([a-z0-9]+).*/\1/p')

has_level() {
	case "$1" in
	scalar) return 0 ;;
	avx2) [ -n "$best" ] && [ "$best" != scalar ] ;;
	*) return 1 ;;
	esac
}

run() { # LEVEL SUITE
	level=$1 suite=$2
	if ! has_level "$level"; then
		echo "skip $suite at $level: this CPU's best level is ${best:-unknown}"
		s=$((s + 1))
		return
	fi
	log="$ERT_BUILD/check-logs/levels-$level-$(basename "$suite" .sh).log"
	mkdir -p "$(dirname "$log")"
	ERT_CPU_ISA=$level sh "tests/suites/$suite" >"$log" 2>&1
	rc=$?
	line=$(grep -E '^([A-Za-z-]+: )?[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
	tp=$(echo "$line" | sed -nE 's/.*\b([0-9]+) passed.*/\1/p')
	tf=$(echo "$line" | sed -nE 's/.*\b([0-9]+) failed.*/\1/p')
	: "${tp:=0}" "${tf:=0}"
	if [ -z "$line" ] || { [ "$rc" -ne 0 ] && [ "$tf" -eq 0 ]; }; then
		tf=$((tf + 1))
	fi
	if [ "$tf" -ne 0 ]; then
		grep -E '^(FAIL|not ok)' "$log" | head -n 20
		echo "FAIL $suite at ERT_CPU_ISA=$level: $tp passed, $tf failed (log: $log)"
	else
		echo "ok   $suite at ERT_CPU_ISA=$level: $tp passed"
	fi
	p=$((p + tp)); f=$((f + tf))
}

run scalar 30-conformance.sh
run avx2 30-conformance.sh
run avx2 35-pytorch.sh
run avx2 55-npu.sh
if [ "$s" -ne 0 ]; then
	echo "levels: $p passed, $f failed, $s skipped"
else
	echo "levels: $p passed, $f failed"
fi
[ "$f" -eq 0 ]
