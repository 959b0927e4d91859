#!/bin/sh
# The NPU backend on the userspace simulator (the VM suite runs the same
# models on /dev/accel/accel0):
# - the zoo's mobilenet_v2 and resnet18, quantized by edgert quantize, give
#   bit-identical outputs on the NPU and on the CPU backend;
# - a model with ops the NPU lacks (a Resize in the middle, a float Softmax
#   head) runs split between NPU and CPU, bit-identical to the CPU backend,
#   with copied_bytes 0 at every crossing;
# - a QDQ-form ONNX model exported by PyTorch converts and runs on the NPU;
# - HardSwish/Sigmoid/Tanh/LeakyRelu become table lookups, run by the NPU;
# - the hang test hook fails a run and the next run of the session succeeds;
# - placement is printed (info --placement, run --explain).
: "${ERT_BUILD:=build}"
edgert=$ERT_BUILD/edgert
out=$ERT_BUILD/npu
export ERT_NO_PROGRESS=1 ERT_NPU_DEVICE=sim
mkdir -p "$out"
p=0 f=0
ok() { p=$((p + 1)); echo "ok - $*"; }
bad() { f=$((f + 1)); echo "not ok - $*"; }

same_outputs() { # dir1 dir2: every .npy byte-identical
	[ -n "$(ls "$1"/*.npy 2>/dev/null)" ] || return 1
	for a in "$1"/*.npy; do
		cmp -s "$a" "$2/$(basename "$a")" || return 1
	done
}

for m in mobilenet_v2 resnet18; do
	if [ ! -f "$out/$m-int8.ert" ] || [ "$edgert" -nt "$out/$m-int8.ert" ]; then
		"$edgert" zoo "$m" -o "$out/$m.ert" >/dev/null &&
		"$edgert" quantize "$out/$m.ert" -o "$out/$m-int8.ert" --calib-random 4 \
			>"$out/$m-quantize.log" 2>&1 || {
			tail -n 3 "$out/$m-quantize.log"; bad "$m quantized"; continue; }
	fi
	# the int8 model does the float one's multiply-accumulates
	fm=$("$edgert" info "$out/$m.ert" | sed -n 's/^MACs *\([0-9]*\).*/\1/p')
	qm=$("$edgert" info "$out/$m-int8.ert" | sed -n 's/^MACs *\([0-9]*\).*/\1/p')
	if [ -n "$fm" ] && [ "$fm" = "$qm" ]; then
		ok "$m int8: edgert info counts the float model's MACs ($qm)"
	else
		bad "$m int8: edgert info counts the float model's MACs ($fm vs $qm)"
	fi
	rm -rf "$out/$m-cpu" "$out/$m-npu"
	"$edgert" run "$out/$m-int8.ert" --backend cpu --seed 1 -o "$out/$m-cpu" >/dev/null 2>&1
	if "$edgert" run "$out/$m-int8.ert" --backend npu --seed 1 -o "$out/$m-npu" --explain \
		>"$out/$m-npu.log" 2>&1 && same_outputs "$out/$m-cpu" "$out/$m-npu"; then
		ok "$m int8: NPU (simulator) output bit-identical to the CPU backend"
	else
		tail -n 3 "$out/$m-npu.log"
		bad "$m int8: NPU (simulator) output bit-identical to the CPU backend"
	fi
	n=$(grep -c '^  [0-9].*QLinearConv' "$out/$m-npu.log")
	if grep -q '^split [0-9]*: npu' "$out/$m-npu.log" && [ "$n" -gt 10 ]; then
		ok "$m int8: --explain shows the convolutions in NPU splits ($n)"
	else
		bad "$m int8: --explain shows the convolutions in NPU splits"
	fi
done

# a split model: NPU / CPU (Resize) / NPU / CPU (Softmax)
s=$out/split
mkdir -p "$s"
if /usr/bin/python3 tests/npu/split_model.py "$s/model.onnx" >"$s/export.log" 2>&1 &&
   "$edgert" quantize "$s/model.onnx" -o "$s/int8.ert" --calib-random 8 >"$s/quantize.log" 2>&1; then
	"$edgert" info "$s/int8.ert" --placement >"$s/placement.txt" 2>&1
	nsplit=$(grep -c '^split ' "$s/placement.txt")
	if grep -q '^split .*: npu' "$s/placement.txt" && grep -q '^split .*: cpu' "$s/placement.txt" &&
	   [ "$nsplit" -ge 4 ] && grep -q 'Resize' "$s/placement.txt" && grep -q 'Softmax' "$s/placement.txt"; then
		ok "split model: placed in $nsplit splits over npu and cpu"
	else
		sed 's/^/# /' "$s/placement.txt" | tail -n 30
		bad "split model: placed in splits over npu and cpu"
	fi
	rm -rf "$s/cpu" "$s/npu"
	"$edgert" run "$s/int8.ert" --backend cpu --seed 2 -o "$s/cpu" >/dev/null 2>&1
	"$edgert" run "$s/int8.ert" --backend npu --seed 2 -o "$s/npu" >"$s/run.log" 2>&1
	if same_outputs "$s/cpu" "$s/npu"; then
		ok "split model: NPU+CPU output bit-identical to the CPU backend"
	else
		tail -n 3 "$s/run.log"
		bad "split model: NPU+CPU output bit-identical to the CPU backend"
	fi
	"$edgert" bench "$s/int8.ert" --backend npu --loops 3 --warmup 1 --json >"$s/bench.json" 2>"$s/bench.log"
	if grep -Eq '"copied_bytes": 0[,}]' "$s/bench.json"; then
		ok "split model: copied_bytes 0 across the CPU/NPU crossings"
	else
		cat "$s/bench.json" "$s/bench.log" | tail -n 3
		bad "split model: copied_bytes 0 across the CPU/NPU crossings"
	fi
else
	tail -n 5 "$s/export.log" "$s/quantize.log" 2>/dev/null
	bad "split model exported and quantized"
fi

# a QDQ-form ONNX model (PyTorch fake quantisation, tests/pytorch/qdq.py):
# edgert convert fuses it into int8 ops, which run on the NPU
q=$out/qdq
mkdir -p "$q"
if /usr/bin/python3 tests/pytorch/qdq.py export "$q" >"$q/export.log" 2>&1 &&
   "$edgert" convert "$q/model.onnx" -o "$q/model.ert" >"$q/convert.log" 2>&1; then
	rm -rf "$q/cpu" "$q/npu"
	"$edgert" run "$q/model.ert" --backend cpu -i "$q/input.npy" -o "$q/cpu" >/dev/null 2>&1
	"$edgert" run "$q/model.ert" --backend npu -i "$q/input.npy" -o "$q/npu" --explain \
		>"$q/run.log" 2>&1
	n=$(grep -cE '^  [0-9]+ +(QLinearConv|QGemm|QLinearAdd)' "$q/run.log")
	if grep -q '^split [0-9]*: npu' "$q/run.log" && [ "$n" -ge 4 ] && same_outputs "$q/cpu" "$q/npu"; then
		ok "QDQ ONNX model converts and runs on the NPU ($n int8 ops), bit-identical to the CPU"
	else
		tail -n 20 "$q/run.log" | sed 's/^/# /'
		bad "QDQ ONNX model converts and runs on the NPU, bit-identical to the CPU"
	fi
else
	tail -n 5 "$q/export.log" "$q/convert.log" 2>/dev/null
	bad "QDQ ONNX model exported and converted"
fi

# activations int8 ops cannot clamp to (HardSwish, Sigmoid, Tanh, LeakyRelu):
# table lookups, on the NPU as LUT commands
a=$out/acts
mkdir -p "$a"
if /usr/bin/python3 tests/npu/act_model.py "$a/model.onnx" >"$a/export.log" 2>&1 &&
   "$edgert" quantize "$a/model.onnx" -o "$a/int8.ert" --calib-random 8 --verify 20 \
	--min-cosine 0.99 >"$a/quantize.log" 2>&1; then
	rm -rf "$a/cpu" "$a/npu"
	"$edgert" run "$a/int8.ert" --backend cpu --seed 3 -o "$a/cpu" >/dev/null 2>&1
	"$edgert" run "$a/int8.ert" --backend npu --seed 3 -o "$a/npu" --explain >"$a/run.log" 2>&1
	n=$(grep -cE '^  [0-9]+ +QLinearLookup' "$a/run.log")
	if [ "$n" -eq 4 ] && [ "$(grep -c '^split ' "$a/run.log")" -eq 2 ] &&
	   same_outputs "$a/cpu" "$a/npu"; then
		ok "activations as table lookups: 4 on the NPU, one NPU split, bit-identical to the CPU"
	else
		grep -E '^split|Lookup' "$a/run.log" | sed 's/^/# /'
		bad "activations as table lookups: 4 on the NPU, one NPU split, bit-identical to the CPU"
	fi
else
	tail -n 5 "$a/export.log" "$a/quantize.log" 2>/dev/null
	bad "activation model exported and quantized (cosine >= 0.99)"
fi

# the hang hook on the simulator
ERT_NPU_TEST_HANG=1 "$edgert" run "$out/mobilenet_v2-int8.ert" --backend npu --repeat 2 \
	>"$out/hang.log" 2>&1
rc=$?
if [ "$rc" -eq 1 ] && grep -q 'failed to run .*(this run):.*ETIMEDOUT' "$out/hang.log" &&
   grep -q '^ran ' "$out/hang.log" && grep -q '1 of 2 runs failed' "$out/hang.log"; then
	ok "hang hook: the run fails with a timeout, the next run succeeds"
else
	sed 's/^/# /' "$out/hang.log" | tail -n 5
	bad "hang hook: the run fails with a timeout, the next run succeeds"
fi

echo "$p passed, $f failed"
[ "$f" -eq 0 ]
