#!/bin/sh
# Bad input: the damaged-file corpus under ASan+UBSan (tests/bad-input/), models
# that declare huge tensors through the CLI (one test per case), then each
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

# Hostile sizes through the CLI (issue 15 item 5): models of a few hundred
# bytes (bad-input --write-hostile) that declare or infer huge tensors are
# refused by the memory budget before anything is allocated. edgert runs under
# an address-space limit, so that a regression fails here instead of
# committing gigabytes.
: "${ERT_BUILD:=build}"
hdir="$logdir/hostile-sizes"
# hostile NAME PATTERN CMD...: exit 1, one stderr line matching PATTERN
hostile() {
	name=$1 pat=$2; shift 2
	(ulimit -v 4194304 && ERT_NO_PROGRESS=1 exec timeout 60 "$@") >"$hdir/out" 2>"$hdir/err"
	rc=$?
	if [ $rc -eq 1 ] && [ "$(wc -l <"$hdir/err")" -eq 1 ] && grep -q -- "$pat" "$hdir/err"; then
		p=$((p + 1))
	else
		f=$((f + 1))
		echo "FAIL hostile sizes: $name: exit $rc, stderr: $(head -c 600 "$hdir/err")"
	fi
}
rm -rf "$hdir" && mkdir -p "$hdir"
E="$ERT_BUILD/edgert"
if [ ! -x "$E" ] || [ ! -x ./build-san/bad-input ] || ! ./build-san/bad-input --write-hostile "$hdir"; then
	echo "FAIL hostile sizes: needs $E (make) and build-san/bad-input to write the models"
	f=$((f + 1))
else
	budget="more than the memory budget of 1073741824 bytes (1.0 GiB) (ert_config.max_memory)"
	hostile "[batch, 2^32] float input" \
		"failed to create session: input 'x' \[1,4294967296\] float32 takes 17179869184 bytes (16.0 GiB), $budget" \
		"$E" run "$hdir/input-2e32.ert" --max-memory 1G
	hostile "[2^31+1] int64 input (ONNX)" "input 'x' \[2147483649\] int64 takes 17179873280 bytes .*$budget" \
		"$E" run "$hdir/int64-input.onnx" --max-memory 1G
	hostile "[2^31+1] bool input (ONNX)" "input 'x' \[2147483649\] bool takes 2147487744 bytes .*$budget" \
		"$E" run "$hdir/bool-input.onnx" --max-memory 1024M
	hostile "OneHot depth 2^31 (ONNX)" \
		"failed to plan: OneHot 'hostile': output 'y' \[1,2147483648\] float32 takes 8589934592 bytes (8.0 GiB), $budget" \
		"$E" run "$hdir/onehot.onnx" --max-memory 1G
	hostile "64 TiB input, default budget" \
		"input 'x' \[17592186044416\] float32 takes .*(half the physical memory, the default of ert_config.max_memory)" \
		"$E" run "$hdir/input-2e44.ert"
	hostile "bench --max-memory" "input 'x' .*$budget" "$E" bench "$hdir/input-2e32.ert" --max-memory 1G
	hostile "profile --max-memory" "input 'x' .*$budget" "$E" profile "$hdir/input-2e32.ert" --max-memory 1G
	# x[2^18] -> Relu takes 2 MiB: its 1 MiB input and 1 MiB for y
	if (ulimit -v 4194304 && ERT_NO_PROGRESS=1 "$E" run "$hdir/relu-2e18.ert" --max-memory 2M) \
		>"$hdir/out" 2>&1 && grep -q "output 'y': float32 \[262144\]" "$hdir/out"; then
		p=$((p + 1))
	else
		f=$((f + 1))
		echo "FAIL hostile sizes: a 2 MiB plan within --max-memory 2M: $(head -c 600 "$hdir/out")"
	fi
	hostile "a byte under the plan" \
		"the plan needs 2097152 bytes (2.0 MiB): input buffers 1048576 bytes (1.0 MiB), the steps' tensors and workspaces 1048576 bytes (1.0 MiB), .*more than the memory budget of 2097151 bytes" \
		"$E" run "$hdir/relu-2e18.ert" --max-memory 2097151
	hostile "--max-memory junk" "edgert run: --max-memory must be a byte count below 2^64 with an optional K, M, G or T suffix, got '2x'" \
		"$E" run "$hdir/relu-2e18.ert" --max-memory 2x
	hostile "--max-memory overflow" "got '16777216T'" "$E" run "$hdir/relu-2e18.ert" --max-memory 16777216T
	hostile "--precision junk" "edgert run: --precision must be low, normal or high, got 'half'" \
		"$E" run "$hdir/relu-2e18.ert" --precision half
	echo "hostile sizes (CLI): done"
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
