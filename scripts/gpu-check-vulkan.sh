#!/bin/sh
# gpu-check-vulkan.sh BUILD_DIR: the Vulkan backend on a GPU (the NVIDIA
# machine; docs/vulkan.md "What is left", item 1). Carry libvulkan.so.1 with
# the build and set LD_LIBRARY_PATH as for OpenCL's loader (docs/opencl.md
# "On the NVIDIA machine"); if the loader finds no NVIDIA ICD, point
# VK_ICD_FILENAMES at NVIDIA's nvidia_icd.json. Checks, against the CPU backend:
#   1. the op test on Vulkan (ERT_TEST_BACKENDS=vulkan; with the validation
#      layer when ERT_VULKAN_VALIDATION=1 and the layer is carried too);
#   2. the zoo: every op in one Vulkan split, max abs error <= 1e-3 x max
#      |ref|, no inf/NaN;
#   3. edgert bench of the zoo on vulkan, opencl and cpu in the same run
#      (printed, not asserted);
#   4. the cache file (test-vk-cache: tuned launches written cold, taken
#      warm, damaged files ignored), and cold vs warm session creation of
#      the zoo (scripts/vk-cold-warm.sh; printed), with NVIDIA's own shader
#      cache off (__GL_SHADER_DISK_CACHE=0) and then on.
#   5. precision LOW on Vulkan: scripts/gpu-check-low.sh --backend vulkan
#      (the op test in LOW, the zoo in LOW, the overflow model and the guard).
# Prints PASS/FAIL lines; exits 1 when anything failed. Needs numpy in $PYTHON (default python3).
check=vulkan
. "$(dirname "$0")/gpu-check-common.sh"

if ERT_TEST_BACKENDS=vulkan "$b/test-backend-ops" >"$out/ops.log" 2>&1; then
	pass "op test on Vulkan ($(sed -n 's/^# vulkan: //p' "$out/ops.log" | head -n 1)): $(tail -n 1 "$out/ops.log")"
else
	grep -E '^(not ok|# vulkan)' "$out/ops.log" | head -n 10
	fail "op test on Vulkan: $(tail -n 1 "$out/ops.log")"
fi

for m in mobilenet_v2 resnet18 resnet50 vit_s16; do
	"$edgert" zoo "$m" -o "$out/$m.ert" >/dev/null 2>&1 || { fail "$m: edgert zoo"; continue; }
	"$edgert" run "$out/$m.ert" --backend cpu --seed 5 -o "$out/$m-cpu" >/dev/null 2>&1
	if ! "$edgert" run "$out/$m.ert" --backend vulkan --seed 5 --explain -o "$out/$m-vk" \
		>"$out/$m-vk.log" 2>&1; then
		tail -n 3 "$out/$m-vk.log"; fail "$m: run on Vulkan"; continue
	fi
	grep -E '^vulkan (device|paths)|^[0-9]+ ops in' "$out/$m-vk.log"
	if [ "$(grep -c '^split ' "$out/$m-vk.log")" -eq 1 ] && grep -q '^split 1: vulkan' "$out/$m-vk.log" &&
	   npy_cmp abs "$out/$m-cpu" "$out/$m-vk"; then
		pass "$m: one Vulkan split, within 1e-3 x max |ref| of the CPU, no inf/NaN"
	else
		fail "$m: one Vulkan split, within 1e-3 x max |ref| of the CPU, no inf/NaN"
	fi
	for be in vulkan opencl cpu; do
		printf '%s %s: ' "$m" "$be"
		"$edgert" bench "$out/$m.ert" --backend "$be" --loops 20 --warmup 3 2>/dev/null |
			sed -n 's/^min *//p'
	done
done
if "$b/test-vk-cache" >"$out/vk-cache.log" 2>&1 && ! grep -q '^# vulkan: skipped' "$out/vk-cache.log"; then
	pass "cache file and tuning (test-vk-cache): $(tail -n 1 "$out/vk-cache.log")"
else
	grep -E '^(not ok|#)' "$out/vk-cache.log" | head -n 10
	fail "cache file and tuning (test-vk-cache): $(tail -n 1 "$out/vk-cache.log")"
fi
echo "cold vs warm session creation, NVIDIA's shader cache off:"
__GL_SHADER_DISK_CACHE=0 sh "$(dirname "$0")/vk-cold-warm.sh" "$b" "mobilenet_v2 resnet18 resnet50 vit_s16"
echo "the same, NVIDIA's shader cache on:"
sh "$(dirname "$0")/vk-cold-warm.sh" "$b" "mobilenet_v2 resnet18 resnet50 vit_s16"
rm -rf "$out"
sh "$(dirname "$0")/gpu-check-low.sh" --backend vulkan "$b" || fails=$((fails + 1))
[ "$fails" -eq 0 ]
