#!/bin/sh
# Runs inside the enpu test VM (tests/suites/60-kernel-vm.sh packs it with a
# static edgert and int8 models quantized on the host): the models run on
# /dev/accel/accel0 and their outputs' SHA-256 go to the console, where the
# host compares them with the CPU backend's. "models.sh gone" runs after the
# module is unloaded: the NPU must be reported missing, not crashed on.
m=/tests/models
edgert=/tests/edgert
export ERT_NO_PROGRESS=1

if [ "${1:-}" = gone ]; then
	ERT_NPU_DEVICE=/dev/accel/accel0 $edgert run $m/mobilenet_v2-int8.ert --backend npu \
		>/tmp/gone.log 2>&1
	echo "ENPU-VM-GONE: exit=$?"
	sed 's/^/ENPU-VM-GONE: /' /tmp/gone.log
	exit 0
fi

export ERT_NPU_DEVICE=/dev/accel/accel0
for name in $(cat $m/list); do
	start=$(date +%s)
	if $edgert run $m/$name-int8.ert --backend npu --seed 1 -o /tmp/$name \
		>/tmp/$name.log 2>&1; then
		echo "ENPU-VM-MODEL: $name $(sha256sum /tmp/$name/logits.npy | cut -d' ' -f1) $(( $(date +%s) - start ))s"
	else
		sed 's/^/ENPU-VM-MODEL-LOG: /' /tmp/$name.log
		echo "ENPU-VM-MODEL: $name failed"
	fi
	grep -q simulator /tmp/$name.log && echo "ENPU-VM-MODEL: $name ran on the simulator"
done

# the NPU backend's cases that need the driver's pinned user pages (an input
# buffer shrunk, its tail pages given back, and grown again at the same
# address), on /dev/accel/accel0 instead of the simulator
if [ -x /tests/npu-backend-unit ]; then
	/tests/npu-backend-unit resize_input >/tmp/npu-unit.log 2>&1
	echo "ENPU-VM-NPU-UNIT: exit=$?"
	sed 's/^/ENPU-VM-NPU-UNIT: /' /tmp/npu-unit.log
	# an arena's BO exported as a dma-buf (what a GPU backend imports)
	/tests/npu-backend-unit arena_export >/tmp/npu-export.log 2>&1
	echo "ENPU-VM-NPU-EXPORT: exit=$?"
	sed 's/^/ENPU-VM-NPU-EXPORT: /' /tmp/npu-export.log
fi

# issue 12: edgert trace (BPF: the runtime's USDT probes, the enpu, dma_fence
# and drm_sched tracepoints) on the int8 mobilenet_v2; the trace goes to the
# console gzipped and base64-encoded, and the host validates it
$edgert trace $m/mobilenet_v2-int8.ert --backend npu --warmup 0 -o /tmp/trace.json \
	>/tmp/trace.log 2>&1
echo "ENPU-VM-TRACE: exit=$?"
sed 's/^/ENPU-VM-TRACE-LOG: /' /tmp/trace.log
if [ -s /tmp/trace.json ]; then
	echo "ENPU-VM-TRACE-JSON-BEGIN"
	gzip -9c /tmp/trace.json | base64
	echo "ENPU-VM-TRACE-JSON-END"
fi

# the driver's hang hook kills the first job of the first run; the second
# run of the same session must succeed
ERT_NPU_TEST_HANG=1 $edgert run $m/mobilenet_v2-int8.ert --backend npu --repeat 2 \
	>/tmp/hang.log 2>&1
echo "ENPU-VM-HANG: exit=$?"
sed 's/^/ENPU-VM-HANG: /' /tmp/hang.log
