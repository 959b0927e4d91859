#!/bin/sh
# The Vulkan backend (issue 10), on lavapipe in CI (scripts/deps.d/vulkan.list),
# with the Khronos validation layer on (ERT_VULKAN_VALIDATION=1: every error
# it reports fails the session that hit it, and is printed):
# - the cross-backend op test on Vulkan: every op it claims against the CPU's
#   scalar kernels, the GEMM cases on both GEMM shaders (tiled, direct), the
#   row reductions with and without subgroup operations; then again in
#   precision LOW (float16 storage: lavapipe has storageBuffer16BitAccess;
#   cosine >= 0.999, max abs error <= 1e-2 x max |ref|; the elementwise ops
#   in half arithmetic, lavapipe having shaderFloat16, and in float), with
#   the fp16 guard's check on its overflow model;
# - the zoo through edgert run --backend vulkan: every op in one Vulkan split
#   (--explain, which also names the paths chosen from the device's
#   features), outputs within 1e-3 x max |ref| of the CPU backend, no NaN;
#   mobilenet_v2 by default, ERT_VULKAN_ZOO="mobilenet_v2 resnet18 resnet50
#   vit_s16" for all four (lavapipe runs our shaders slowly: docs/vulkan.md);
# - precision LOW (tests/backend-ops/low-checks.sh, as 37-opencl.sh): mobilenet_v2
#   with every op in float16, cosine >= 0.999 and no inf/NaN against the
#   CPU; the overflow model gives inf/NaN with --fp16-guard off, and with it
#   on --explain names the two ops kept in fp32 and the output is the CPU's;
# - the input and the logits copied once each per run (edgert bench);
#   a second session in the process (edgert bench --sessions 2) takes the
#   first's device and queue, builds and loads no pipeline (all of the
#   first's shared) and uploads only its plan's own constants, the
#   first's weights shared (docs/vulkan.md, "Pipelines and weights shared
#   between sessions");
# - the cache file (build/test-vk-cache, layer on: the pipeline cache and
#   the tuned launches written cold and taken warm with nothing timed; tune
#   none; a wider mode; a refused and an out-of-range tuning entry; damaged,
#   truncated, foreign device id and UUID, other version, unrelated files
#   ignored with a warning and rewritten; an unwritable path; a device
#   without timestamps; the device timer; tune fast timing nothing on a CPU
#   device; sessions sharing the instance, device and queue, also on
#   several threads at once, keyed by ERT_VULKAN_VALIDATION and
#   ERT_VULKAN_DEVICE, closed with the last), and through edgert bench
#   (--cache): written, read, a damaged file ignored with a warning and
#   rewritten;
# - dma-buf import (build/test-vk-import, layer on: the decision from the
#   device's extensions, every failing import clean, the NPU-side arena
#   shared where the driver imports and copied with the reason on stderr
#   where it does not; docs/vulkan.md, "Zero copy with the NPU"); the op
#   test's NPU/Vulkan split on the NPU simulator (copied and counted);
# - --backend auto keeps to the CPU when no Vulkan device is a GPU;
# - edgert profile --backend vulkan times each op on the device (timestamp
#   queries): device times for every op that runs commands, positive, none
#   over the op's host time, their sum within a run's wall time, and a
#   device span per such op in the --trace file;
# - no validation error printed by any of the above;
# - edgert conform --backend vulkan on the ONNX node tests (layer off: it
#   loads once per session, and there is one session per case): every case
#   whose ops all run on Vulkan passes with ONNX's tolerances.
# With no Vulkan device every check is counted as skipped.
: "${ERT_BUILD:=build}"
: "${ERT_CONFORMANCE:=../shared/conformance/onnx-backend}"
: "${ERT_VULKAN_ZOO:=mobilenet_v2}"
edgert=$ERT_BUILD/edgert
out=$ERT_BUILD/vulkan
export ERT_NO_PROGRESS=1
mkdir -p "$out"
p=0 f=0 s=0
ok() { p=$((p + 1)); echo "ok - $*"; }
bad() { f=$((f + 1)); echo "not ok - $*"; }
skip() { s=$((s + 1)); echo "skip - $*"; }
. tests/backend-ops/gpu-suite.sh

if ! make -s --no-print-directory -j2 BUILD="$ERT_BUILD" "$ERT_BUILD/test-backend-ops" \
	"$ERT_BUILD/test-vk-cache" "$ERT_BUILD/test-vk-import" >"$out/build.log" 2>&1; then
	tail -n 20 "$out/build.log"
	echo "0 passed, 1 failed"
	exit 1
fi

# op_test LOG [VAR=VALUE...]: the op test on Vulkan with the layer on, its counts added to ours
op_test() {
	log=$1
	shift
	env ERT_VULKAN_VALIDATION=1 ERT_TEST_BACKENDS=vulkan "$@" "$ERT_BUILD/test-backend-ops" \
		>"$log" 2>&1
	rc=$?
	grep -E '^(not ok|#)' "$log"
	tally "$log" "test-backend-ops $*" $rc
}
op_test "$out/ops.log"

ERT_VULKAN_VALIDATION=1 "$ERT_BUILD/test-vk-cache" >"$out/vk-cache.log" 2>"$out/vk-cache.err"
rc=$?
grep -E '^(not ok|#)' "$out/vk-cache.log"
tally "$out/vk-cache.log" test-vk-cache $rc "$out/vk-cache.err"

ERT_VULKAN_VALIDATION=1 "$ERT_BUILD/test-vk-import" >"$out/vk-import.log" 2>"$out/vk-import.err"
rc=$?
grep -E '^(not ok|#)' "$out/vk-import.log"
tally "$out/vk-import.log" test-vk-import $rc "$out/vk-import.err"
# the import itself needs a lavapipe with VK_EXT_external_memory_dma_buf:
# bookworm-backports' (scripts/lavapipe-backports.sh DIR, then ERT_LVP_BACKPORTS=DIR)
if [ -n "${ERT_LVP_BACKPORTS:-}" ]; then
	VK_ICD_FILENAMES=$ERT_LVP_BACKPORTS/lvp_icd.json ERT_VULKAN_VALIDATION=1 \
		"$ERT_BUILD/test-vk-import" >"$out/vk-import-25.log" 2>"$out/vk-import-25.err"
	rc=$?
	grep -E '^(not ok|#)' "$out/vk-import-25.log"
	tally "$out/vk-import-25.log" "test-vk-import on $ERT_LVP_BACKPORTS" $rc \
		"$out/vk-import-25.err"
	if grep -q '^ok - a memfd arena shared with Vulkan' "$out/vk-import-25.log"; then
		ok "lavapipe of $ERT_LVP_BACKPORTS imports: a session reads a shared arena in place"
	else
		bad "lavapipe of $ERT_LVP_BACKPORTS imports: a session reads a shared arena in place"
	fi
fi

if grep -q '^# vulkan: skipped' "$out/ops.log"; then
	for m in $ERT_VULKAN_ZOO; do
		skip "$m on Vulkan (no Vulkan device)"
	done
	skip "mobilenet_v2 and the overflow model in precision LOW (no Vulkan device)"
	skip "--backend auto without a GPU (no Vulkan device)"
	skip "edgert profile with device times (no Vulkan device)"
	skip "ONNX node tests on Vulkan (no Vulkan device)"
	echo "$p passed, $f failed, $s skipped"
	[ "$f" -eq 0 ]
	exit
fi

export ERT_VULKAN_VALIDATION=1
# vk_paths MODEL LOG: Vulkan's own line in --explain, the paths it chose
vk_paths() {
	if grep -q '^vulkan paths: reductions ' "$2"; then
		ok "$1: --explain names the Vulkan paths ($(sed -n 's/^vulkan paths: //p' "$2"))"
	else
		bad "$1: --explain names the Vulkan paths (vulkan paths: ...)"
	fi
}
zoo vulkan Vulkan vk vk_paths $ERT_VULKAN_ZOO

# precision LOW: float16 storage where the device has storageBuffer16BitAccess
# (lavapipe does); the op test again, one small model (lavapipe is slow) and
# the overflow model
. tests/backend-ops/low-checks.sh
low_opts="--tune none"   # as fast does on a CPU device (lavapipe): nothing timed
op_test "$out/ops-low.log" ERT_TEST_PRECISION=low
m=mobilenet_v2
[ -f "$out/$m.ert" ] || "$edgert" zoo "$m" -o "$out/$m.ert" >"$out/$m-zoo.log" 2>&1
[ -d "$out/$m-cpu" ] || "$edgert" run "$out/$m.ert" --backend cpu --seed 5 -o "$out/$m-cpu" \
	>"$out/$m-cpu.log" 2>&1
if grep -q '^# vulkan: fp16 guard skipped' "$out/ops-low.log"; then
	skip "$m and the overflow model in precision LOW (no float16 storage on this device)"
else
	low_model vulkan "$m"
	low_overflow vulkan
fi

# bench: per run, the input goes to the device and the logits come back
# (--tune none: on a GPU the default fast would time candidates; test-vk-cache
# tests tuning, under normal, which times on lavapipe too)
# A second session in the process (--sessions 2) takes the first's device,
# pipelines and weights: it opens no device, builds or loads no pipeline,
# and uploads only the plan's own constants (folded values, never shared),
# the rest of what the first uploaded counted as shared.
m=mobilenet_v2
[ -f "$out/$m.ert" ] || "$edgert" zoo "$m" -o "$out/$m.ert" >"$out/$m-zoo.log" 2>&1
"$edgert" bench "$out/$m.ert" --backend vulkan --tune none --loops 1 --warmup 1 --sessions 2 --json \
	>"$out/bench.json" 2>"$out/bench.log"
bench_rc=$?
if [ $bench_rc -eq 0 ] && grep -Eq "\"copied_bytes\": $((3 * 224 * 224 * 4 + 1000 * 4))[,}]" "$out/bench.json"; then
	ok "$m: edgert bench --backend vulkan copies the input and the logits once per run"
else
	cat "$out/bench.json" "$out/bench.log" | tail -n 3 | sed 's/^/# /'
	bad "$m: edgert bench --backend vulkan copies the input and the logits once per run"
fi
if [ $bench_rc -eq 0 ] && shared=$(/usr/bin/python3 - "$out/bench.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
a, b = d["create_phases"], d["create_next_phases"][0]
ok = (not a["device_shared"] and b["device_shared"] and a["programs_built"] > 0 and
      b["programs_built"] == 0 and b["programs_loaded"] == 0 and
      b["programs_shared"] == a["programs_built"] and b["upload_shared_bytes"] > 0 and
      b["upload_bytes"] + b["upload_shared_bytes"] == a["upload_bytes"] and
      b["upload_bytes"] < b["upload_shared_bytes"])
print("%d pipelines and %.2f MiB of weights from the first, %d bytes of its own; created in %.0f ms, the first %.0f ms"
      % (b["programs_shared"], b["upload_shared_bytes"] / 1048576.0, b["upload_bytes"],
         b["total_ms"], a["total_ms"]))
sys.exit(0 if ok else 1)
EOF
); then
	ok "$m: a second session in the process shares the first's device, pipelines and weights (edgert bench --sessions 2: $shared)"
else
	sed 's/^/# /' "$out/bench.json" | cut -c1-600
	bad "$m: a second session in the process shares the first's device, pipelines and weights (edgert bench --sessions 2)"
fi

# the pipeline cache in the cache file: written cold, read warm without a
# word, a damaged file ignored with a warning and rewritten (read warm again)
rm -f "$out/pipelines.cache"
cache_run() { # NAME
	"$edgert" bench "$out/$m.ert" --backend vulkan --cache "$out/pipelines.cache" --loops 1 \
		--warmup 0 >"$out/cache-$1.log" 2>&1
}
if cache_run cold && [ -s "$out/pipelines.cache" ] && cache_run warm &&
   ! grep -q 'ignoring the cache file' "$out/cache-warm.log"; then
	printf 'damage' | dd of="$out/pipelines.cache" bs=1 seek=40 conv=notrunc 2>/dev/null
	if cache_run damaged && grep -q "ignoring the cache file .*: damaged (checksum); it will be rewritten" \
		"$out/cache-damaged.log" && cache_run rewritten &&
	   ! grep -q 'ignoring the cache file' "$out/cache-rewritten.log"; then
		ok "$m: the pipeline cache file written, read warm, a damaged one ignored with a warning and rewritten"
	else
		cat "$out/cache-damaged.log" "$out/cache-rewritten.log" 2>/dev/null | tail -n 3 | sed 's/^/# /'
		bad "$m: a damaged pipeline cache file ignored with a warning and rewritten"
	fi
else
	cat "$out/cache-cold.log" "$out/cache-warm.log" 2>/dev/null | tail -n 3 | sed 's/^/# /'
	bad "$m: the pipeline cache file written cold and read warm"
fi

# auto: NPU, then a GPU, then the CPU; lavapipe's device is a CPU
if command -v vulkaninfo >/dev/null && vulkaninfo --summary 2>/dev/null | grep -Eq 'deviceType += PHYSICAL_DEVICE_TYPE_(DISCRETE|INTEGRATED|VIRTUAL)_GPU'; then
	skip "--backend auto without a GPU (this machine has a Vulkan GPU)"
elif "$edgert" run "$out/$m.ert" --backend auto --seed 5 --explain >"$out/auto.log" 2>&1 &&
     grep -q '^split 1: cpu' "$out/auto.log" && [ "$(grep -c '^split ' "$out/auto.log")" -eq 1 ]; then
	ok "--backend auto keeps to the CPU when no Vulkan device is a GPU"
else
	grep -E '^split|rror' "$out/auto.log" | sed 's/^/# /'
	bad "--backend auto keeps to the CPU when no Vulkan device is a GPU"
fi

# profile: the device's own time for each op (timestamp queries), views
# planned in place (no command) keeping their host time
if "$edgert" profile "$out/$m.ert" --backend vulkan --loops 1 --json --trace "$out/profile-trace.json" \
	>"$out/profile.json" 2>"$out/profile.log" &&
   /usr/bin/python3 tests/trace/check-device-times.py "$out/profile.json" "$out/profile-trace.json" \
	vulkan >"$out/profile-check.log" 2>&1
then
	ok "$m: edgert profile --backend vulkan gives device times ($(cat "$out/profile-check.log"))"
else
	cat "$out/profile.log" "$out/profile-check.log" 2>/dev/null | tail -n 4 | sed 's/^/# /'
	bad "$m: edgert profile --backend vulkan gives device times"
fi

# the validation layer had nothing to say about any of it
if cat "$out"/ops.log "$out"/vk-cache.err "$out"/vk-import*.err "$out"/*-vk.log "$out"/bench.log "$out"/cache-*.log \
	"$out"/profile.log | grep -q 'vulkan validation error'; then
	cat "$out"/ops.log "$out"/vk-cache.err "$out"/vk-import*.err "$out"/*-vk.log "$out"/bench.log "$out"/cache-*.log \
		"$out"/profile.log |
		grep 'vulkan validation error' | head -n 3 | sed 's/^/# /'
	bad "no Vulkan validation error in the op test, the cache and import tests, the zoo, bench and profile"
else
	ok "no Vulkan validation error in the op test, the cache and import tests, the zoo, bench and profile"
fi
unset ERT_VULKAN_VALIDATION

# the ONNX node tests whose ops Vulkan takes, each case one check
if [ ! -d "$ERT_CONFORMANCE/node" ]; then
	skip "ONNX node tests on Vulkan (no test data at '$ERT_CONFORMANCE')"
else
	"$edgert" conform --backend vulkan "$ERT_CONFORMANCE/node" >"$out/conform.log" 2>&1
	rc=$?
	grep -E '^(FAIL|vulkan claims|not on vulkan)' "$out/conform.log" | sed 's/^not on/# not on/; s/^vulkan claims/# vulkan claims/'
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped, [0-9]+ not on vulkan$' "$out/conform.log")
	if [ -z "$line" ] || ! grep -q '^vulkan claims [1-9][0-9]* op types' "$out/conform.log" ||
	   { [ "$rc" -ne 0 ] && ! echo "$line" | grep -q ' [1-9][0-9]* failed'; }; then
		tail -n 5 "$out/conform.log" | sed 's/^/# /'
		bad "edgert conform --backend vulkan: exited $rc without a summary or a claimed op type"
	else
		set -- $(echo "$line" | sed -E 's/^([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped, ([0-9]+) .*/\1 \2 \3 \4/')
		p=$((p + $1)) f=$((f + $2))
		echo "# conform --backend vulkan: $1 passed, $2 failed; $4 cases with an op left to the CPU and $3 unsupported anywhere, not counted"
	fi
fi

echo "$p passed, $f failed, $s skipped"
[ "$f" -eq 0 ]
