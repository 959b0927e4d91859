#!/bin/sh
# Real PyTorch exports (Debian's python3-torch / torchvision, random weights,
# opsets 13-17): each model is exported, converted to .ert, run on the exported
# input, and must match PyTorch: top-1 equal, max abs error <= 1e-3 of the
# largest output magnitude. Then an int8 QDQ model (tests/pytorch/qdq.py), see
# below.
: "${ERT_BUILD:=build}"
here=$(cd "$(dirname "$0")/../pytorch" && pwd)
out="$ERT_BUILD/pytorch"
edgert="$ERT_BUILD/edgert"
py=/usr/bin/python3
p=0 f=0

# passed LABEL WHAT / failed LABEL WHY: one check, counted
passed() { echo "ok   $1: $2"; p=$((p + 1)); }
failed() { echo "FAIL $1: $2"; f=$((f + 1)); }
# export_failed NAME LOG: the export of NAME failed (LOG's end shown)
export_failed() { tail -n 5 "$2"; failed "$1" export; }
# convert_model NAME DIR: DIR/model.onnx to DIR/model.ert; false (counted) if it fails
convert_model() {
	"$edgert" convert "$2/model.onnx" -o "$2/model.ert" >"$2/convert.log" 2>&1 && return 0
	failed "$1" "convert: $(tail -n 1 "$2/convert.log")"
	return 1
}
# run_model LABEL MODEL RESULT ARG...: edgert run MODEL ARG... -o RESULT (its log
# run.log beside RESULT); false (counted) if it fails
run_model() {
	run_label=$1 run_ert=$2 run_out=$3
	shift 3
	rm -rf "$run_out"
	"$edgert" run "$run_ert" "$@" -o "$run_out" --threads 2 \
		>"${run_out%/*}/run.log" 2>&1 && return 0
	failed "$run_label" "run: $(tail -n 1 "${run_out%/*}/run.log")"
	return 1
}
# compare_with LABEL CMD...: CMD compares (and says how); passed when it succeeds
compare_with() {
	cmp_label=$1
	shift
	if cmp_res=$("$@"); then
		passed "$cmp_label" "$cmp_res"
	else
		failed "$cmp_label" "$cmp_res"
	fi
}

if ! "$py" -c 'import torch, torchvision' 2>/dev/null; then
	echo "pytorch: python3-torch/python3-torchvision are not installed (scripts/install-deps.sh installs them)"
	echo "pytorch: 0 passed, 1 failed"
	exit 1
fi
mkdir -p "$out"
models=$("$py" -c "import sys; sys.path.insert(0, '$here'); import importlib; print(' '.join(importlib.import_module('export').MODELS))" 2>/dev/null)
for m in $models; do
	d="$out/$m"
	if [ ! -f "$d/expected.npy" ] || [ "$here/export.py" -nt "$d/expected.npy" ]; then
		if ! "$py" "$here/export.py" "$out" "$m" >"$out/$m.export.log" 2>&1; then
			export_failed "$m" "$out/$m.export.log"
			continue
		fi
	fi
	convert_model "$m" "$d" &&
		run_model "$m" "$d/model.ert" "$d/result" -i input="$d/input.npy" &&
		compare_with "$m" "$py" "$here/compare.py" "$d/result/logits.npy" "$d/expected.npy"
done

# A QDQ model (PyTorch fake quantisation, tests/pytorch/qdq.py): convert must
# fuse it into int8 ops, leaving QuantizeLinear / DequantizeLinear only at the
# float input and output, and the int8 result must follow PyTorch's
# fake-quant output (cosine >= 0.99, top-1 equal; fixed-point rounding is not
# PyTorch's float rounding, so not bit for bit).
m=qdq_cnn
d="$out/$m"
if { [ -f "$d/expected.npy" ] && [ ! "$here/qdq.py" -nt "$d/expected.npy" ]; } ||
	"$py" "$here/qdq.py" export "$d" >"$out/$m.export.log" 2>&1; then
	if ! convert_model "$m" "$d"; then
		:
	elif ! "$edgert" info "$d/model.ert" --json >"$d/info.json" 2>&1 ||
		! ops=$("$py" "$here/qdq.py" info "$d/info.json"); then
		failed "$m" "not fused: $ops"
	elif run_model "$m" "$d/model.ert" "$d/result" -i input="$d/input.npy"; then
		compare_with "$m" "$py" "$here/qdq.py" compare "$d/result/logits.npy" "$d/expected.npy"
	fi
else
	export_failed "$m" "$out/$m.export.log"
fi

# A torch.jit.script model with an If and a Loop on tensor values
# (tests/pytorch/control.py, docs/control-flow.md): converted once, run on
# inputs that take each branch with different trip counts, matched against
# PyTorch.
m=control_flow
d="$out/$m"
if { [ -f "$d/else/expected.npy" ] && [ ! "$here/control.py" -nt "$d/else/expected.npy" ]; } ||
	"$py" "$here/control.py" export "$d" >"$out/$m.export.log" 2>&1; then
	if convert_model "$m" "$d"; then
		for c in then else; do
			run_model "$m ($c branch)" "$d/model.ert" "$d/$c/result" \
				-i x="$d/$c/x.npy" -i n="$d/$c/n.npy" &&
				compare_with "$m ($c branch)" "$py" "$here/control.py" compare \
					"$d/$c/result/y.npy" "$d/$c/expected.npy"
		done
	fi
else
	export_failed "$m" "$out/$m.export.log"
fi
# Sequence models (tests/pytorch/rnn.py): LSTM and GRU, bidirectional,
# multi-layer and with initial states given, and a transformer encoder
# exported with a dynamic sequence length and run at two lengths. Each case
# must match every PyTorch output: max abs error <= 1e-5 + 1e-4 of its
# largest magnitude (a classifier's top-1 equal too). `edgert info` must know
# every shape (dynamic axes as 1) and count the MACs rnn.py expects. One
# python3 exports all that are stale (importing torch once).
if ! rnn_models=$("$py" "$here/rnn.py" list); then
	echo "FAIL rnn.py list"
	f=$((f + 1))
fi
stale=
for m in $rnn_models; do
	if [ ! -f "$out/$m/exported" ] || [ "$here/rnn.py" -nt "$out/$m/exported" ]; then
		stale="$stale $m"
	fi
done
# shellcheck disable=SC2086 # one name per word
if [ -n "$stale" ] && ! "$py" "$here/rnn.py" export "$out" $stale >"$out/rnn.export.log" 2>&1; then
	tail -n 5 "$out/rnn.export.log"
fi
for m in $rnn_models; do
	d="$out/$m"
	if [ ! -f "$d/exported" ] || [ "$here/rnn.py" -nt "$d/exported" ]; then
		echo "FAIL $m: export"
		f=$((f + 1))
		continue
	fi
	convert_model "$m" "$d" || continue
	if ! "$edgert" info "$d/model.ert" --json >"$d/info.json" 2>&1; then
		failed "$m (info)" "$(tail -n 1 "$d/info.json")"
	else
		compare_with "$m (info)" "$py" "$here/rnn.py" info "$m" "$d/info.json"
	fi
	for c in "$d"/*/in; do
		c=${c%/in}
		set --
		for i in "$c"/in/*.npy; do
			set -- "$@" -i "$(basename "$i" .npy)=$i"
		done
		run_model "$m (${c##*/})" "$d/model.ert" "$c/result" "$@" &&
			compare_with "$m (${c##*/})" "$py" "$here/rnn.py" compare "$c"
	done
done

# torchvision detection models with their full post-processing
# (tests/pytorch/detect.py): Faster R-CNN (MobileNetV3 FPN, RoiAlign) and
# RetinaNet (ResNet-50 FPN), seeded random weights calibrated to give some 70
# detections whose decisions do not hang on float32 rounding. Each must give
# PyTorch's number of detections, and each box, score and label (matched
# one to one). Their NonZero, TopK and NonMaxSuppression (in an If) have
# data-dependent outputs: the run goes through continuations
# (docs/dynamic-shapes.md).
for m in fasterrcnn_mobilenet_v3_large_320_fpn retinanet_resnet50_fpn; do
	d="$out/$m"
	if { [ -f "$d/expected/labels.npy" ] && [ ! "$here/detect.py" -nt "$d/expected/labels.npy" ]; } ||
		"$py" "$here/detect.py" export "$m" "$d" >"$out/$m.export.log" 2>&1; then
		convert_model "$m" "$d" && run_model "$m" "$d/model.ert" "$d/result" -i images="$d/input.npy" &&
			compare_with "$m" "$py" "$here/detect.py" compare "$m" "$d/result" "$d/expected"
	else
		export_failed "$m" "$out/$m.export.log"
	fi
done
echo "pytorch: $p passed, $f failed"
[ "$f" -eq 0 ]
