#!/bin/sh
# Bad input: the damaged-file corpus under ASan+UBSan (tests/bad-input/), then each
# libFuzzer target (fuzz/fuzz-*.c) for a bounded time. One test per damage group
# and one per fuzzer that finishes without a crash.
: "${ERT_CONFORMANCE:=../shared/conformance/onnx-backend}"
: "${FUZZ_SECONDS:=10}"
logdir=build-san
mkdir -p "$logdir" build-fuzz
p=0 f=0

# leaks are failures too; UBSan stops at its first report
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"

if [ ! -d "$ERT_CONFORMANCE" ]; then
	echo "bad-input: no ONNX conformance data at $ERT_CONFORMANCE (make check CONFORMANCE=DIR, or ERT_CONFORMANCE=DIR for this script);" \
		"damaged ONNX files are skipped, .ert damage still runs"
fi

if make --no-print-directory SAN=1 -j2 bad-input >"$logdir/bad-input-build.log" 2>&1; then
	out=$(./build-san/bad-input --conformance "$ERT_CONFORMANCE" 2>&1)
	rc=$?
	printf '%s\n' "$out" | grep -v '^ok  ' | grep -v '^[0-9]* passed'
	line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -n 1)
	bp=$(echo "$line" | sed -nE 's/^([0-9]+) passed.*/\1/p')
	bf=$(echo "$line" | sed -nE 's/.* ([0-9]+) failed.*/\1/p')
	: "${bp:=0}" "${bf:=0}"
	if [ -z "$line" ] || { [ $rc -ne 0 ] && [ "$bf" -eq 0 ]; }; then
		echo "bad-input: crashed or stopped by a sanitizer (exit $rc); last lines:"
		printf '%s\n' "$out" | tail -n 40
		bf=$((bf + 1))
	fi
	echo "bad-input: $bp passed, $bf failed"
	p=$((p + bp)); f=$((f + bf))
else
	echo "bad-input: build failed (see $logdir/bad-input-build.log)"
	tail -n 20 "$logdir/bad-input-build.log"
	f=$((f + 1))
fi

nfuzz=$(ls fuzz/fuzz-*.c 2>/dev/null | wc -l)
if make --no-print-directory -j2 fuzz >build-fuzz/fuzz-build.log 2>&1; then
	out=$(make -s --no-print-directory fuzz-run FUZZ_SECONDS="$FUZZ_SECONDS" \
		FUZZ_SEED="${FUZZ_SEED-1}" 2>&1)
	printf '%s\n' "$out"
	ok=$(printf '%s\n' "$out" | grep -c '^fuzz-[a-z0-9_-]*: ok')
	p=$((p + ok)); f=$((f + nfuzz - ok))
else
	echo "fuzz: build failed (see build-fuzz/fuzz-build.log)"
	tail -n 20 build-fuzz/fuzz-build.log
	f=$((f + nfuzz))
fi

echo "$p passed, $f failed"
[ "$f" -eq 0 ]
