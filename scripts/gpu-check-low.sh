#!/bin/sh
# gpu-check-low.sh [--backend opencl|vulkan] BUILD_DIR: precision LOW on a GPU
# (the NVIDIA machine; OpenCL, the default: docs/opencl.md "On the NVIDIA
# machine", set OCL_ICD_VENDORS and LD_LIBRARY_PATH first; Vulkan:
# scripts/gpu-check-vulkan.sh runs it, docs/vulkan.md). Checks, against the CPU backend:
#   1. the op test in LOW (ERT_TEST_PRECISION=low: cosine >= 0.999, max abs
#      error <= 1e-2 x max |ref|), with the fp16 guard check among its cases;
#   2. the zoo in LOW: every op on the GPU, cosine >= 0.999, no inf/NaN;
#   3. the overflow model: inf/NaN with --fp16-guard off, the CPU's answer
#      (cosine >= 0.999) with it on, and --explain naming the two ops kept.
# Prints PASS/FAIL lines; exits 1 when anything failed. Needs numpy in $PYTHON (default python3).
# NVIDIA's OpenCL has no cl_khr_fp16 (checked on an H200, driver 580.159.04):
# a GPU stores float16 under LOW all the same (vload_half/vstore_half,
# float32 arithmetic); half arithmetic needs cl_khr_fp16. On a CPU device
# (PoCL) LOW is float32 unless ERT_OPENCL_F16=storage asks for float16.
# Vulkan stores float16 where the device has storageBuffer16BitAccess.
be=opencl
if [ "${1:-}" = --backend ]; then
	be=${2:-}
	shift 2
fi
case $be in
opencl | vulkan) ;;
*) echo "gpu-check-low.sh: --backend opencl or vulkan, not '$be'" >&2; exit 2 ;;
esac
check=low
. "$(dirname "$0")/gpu-check-common.sh"

if [ "$be" = opencl ]; then
	clinfo 2>/dev/null | grep -q cl_khr_fp16 ||
		echo "note: no device lists cl_khr_fp16: float16 storage on a GPU, float arithmetic"
else
	vulkaninfo 2>/dev/null | grep -q 'storageBuffer16BitAccess *= *true' ||
		echo "note: vulkaninfo lists no storageBuffer16BitAccess: LOW runs in float32"
fi

if ERT_TEST_BACKENDS=$be ERT_TEST_PRECISION=low "$b/test-backend-ops" >"$out/ops.log" 2>&1; then
	pass "op test in LOW: $(tail -n 1 "$out/ops.log")"
else
	grep '^not ok' "$out/ops.log" | head -n 10
	fail "op test in LOW: $(tail -n 1 "$out/ops.log")"
fi

for m in mobilenet_v2 resnet18 resnet50 vit_s16; do
	"$edgert" zoo "$m" -o "$out/$m.ert" >/dev/null 2>&1 || { fail "$m: edgert zoo"; continue; }
	"$edgert" run "$out/$m.ert" --backend cpu --seed 5 -o "$out/$m-cpu" >/dev/null 2>&1
	if ! "$edgert" run "$out/$m.ert" --backend "$be" --precision low --seed 5 --explain \
		-o "$out/$m-low" >"$out/$m-low.log" 2>&1; then
		tail -n 3 "$out/$m-low.log"; fail "$m: run in LOW"; continue
	fi
	grep -E '^precision low|^[0-9]+ ops in' "$out/$m-low.log"
	if [ "$(grep -c '^split ' "$out/$m-low.log")" -eq 1 ] &&
	   npy_cmp cosine "$out/$m-cpu" "$out/$m-low"; then
		pass "$m in LOW: one $be split, cosine >= 0.999, no inf/NaN"
	else
		fail "$m in LOW: one $be split, cosine >= 0.999, no inf/NaN"
	fi
done

m=$out/overflow.ert
"$b/test-backend-ops" --write-overflow-model "$m" || fail "writing the overflow model"
"$edgert" run "$m" --backend cpu --seed 5 -o "$out/of-cpu" >/dev/null 2>&1
"$edgert" run "$m" --backend "$be" --precision low --fp16-guard off --seed 5 -o "$out/of-off" \
	>/dev/null 2>&1
if npy_cmp cosine "$out/of-cpu" "$out/of-off" >"$out/of-off.log" 2>&1; then
	cat "$out/of-off.log"; fail "overflow model, guard off: expected inf/NaN"
else
	pass "overflow model, guard off: $(head -n 1 "$out/of-off.log")"
fi
"$edgert" run "$m" --backend "$be" --precision low --seed 5 --explain -o "$out/of-on" \
	>"$out/of-on.log" 2>&1
grep -E 'kept in fp32|^precision low' "$out/of-on.log"
if [ "$(grep -c 'kept in fp32 by the fp16 guard:' "$out/of-on.log")" -eq 2 ] &&
   npy_cmp cosine "$out/of-cpu" "$out/of-on" >"$out/of-on.cmp" 2>&1; then
	pass "overflow model, guard on: 2 ops kept in fp32, $(head -n 1 "$out/of-on.cmp")"
else
	cat "$out/of-on.cmp" 2>/dev/null; fail "overflow model, guard on"
fi

rm -rf "$out"
echo "$fails failed"
[ "$fails" -eq 0 ]
