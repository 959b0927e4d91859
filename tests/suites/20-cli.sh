#!/bin/sh
# End-to-end tests of the edgert CLI: help, user errors, damaged files, zoo
# models that build and run, bench/profile output, ONNX convert, .npy round trip.
# Prints "N passed, N failed[, N skipped]" last; exits non-zero on a failure.
set -u
: "${ERT_BUILD:=build}"
: "${ERT_CONFORMANCE:=../shared/conformance/onnx-backend}"
E="$ERT_BUILD/edgert"
T=$(mktemp -d "${TMPDIR:-/tmp}/ert-cli.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT INT TERM
export ERT_NO_PROGRESS=1
pass=0 fail=0 skip=0

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# expect_ok NAME CMD...: exit 0; stdout kept in $T/out, stderr in $T/err
expect_ok() {
	name=$1; shift
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
	if [ $rc -eq 0 ]; then ok; else bad "$name: exit $rc: $(head -n 3 "$T/err")"; fi
}

# expect_fail NAME PATTERN CMD...: exit 1 with exactly one stderr line matching PATTERN
expect_fail() {
	name=$1 pat=$2; shift 2
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
	lines=$(wc -l <"$T/err")
	if [ $rc -ne 1 ]; then
		bad "$name: exit $rc, expected 1: $(head -n 3 "$T/err")"
	elif [ "$lines" -ne 1 ]; then
		bad "$name: $lines lines on stderr, expected 1: $(head -n 3 "$T/err")"
	elif ! grep -q -- "$pat" "$T/err"; then
		bad "$name: message '$(cat "$T/err")' lacks '$pat'"
	else
		ok
	fi
}

# expect_out NAME PATTERN: the last command's stdout contains PATTERN
expect_out() {
	if grep -q -- "$2" "$T/out"; then ok; else bad "$1: output lacks '$2'"; fi
}

# mknpy FILE DESCR SHAPE BYTES: an .npy of zeros (SHAPE as Python writes it)
mknpy() {
	mkrawnpy "$1" "{'descr': '$2', 'fortran_order': False, 'shape': $3, }" "$4"
}

# mkrawnpy FILE DICT BYTES: a version 1.0 .npy with any header dict
mkrawnpy() {
	dict=$2
	len=${#dict}
	pad=$(( (64 - (10 + len + 1) % 64) % 64 ))
	hlen=$((len + pad + 1))
	{
		printf '\223NUMPY\001\000'
		printf "\\$(printf %03o $((hlen % 256)))\\$(printf %03o $((hlen / 256)))"
		printf '%s' "$dict"
		printf "%${pad}s\n" ""
		head -c "$3" /dev/zero
	} >"$1"
}

if [ ! -x "$E" ]; then
	echo "cli: $E not built"
	echo "0 passed, 1 failed"
	exit 1
fi

# --- help and version ------------------------------------------------------
expect_ok "edgert --help" "$E" --help
expect_out "edgert --help" "USAGE"
expect_ok "edgert --version" "$E" --version
expect_out "edgert --version" "edgert [0-9]"
expect_fail "edgert (no command)" "missing command" "$E"
expect_fail "unknown command" "unknown command 'frobnicate'" "$E" frobnicate
for cmd in convert info run bench profile zoo conform quantize ops; do
	expect_ok "$cmd --help" "$E" "$cmd" --help
	if grep -qi "usage" "$T/out" && grep -qi "examples" "$T/out"; then ok; else
		bad "$cmd --help lacks USAGE or EXAMPLES"; fi
done

# --- bad flags and numbers -------------------------------------------------
expect_fail "run unknown flag" "unknown option '--bogus'" "$E" run --bogus x.ert
expect_fail "bench --loops abc" "--loops must be 1..100000, got 'abc'" "$E" bench x.ert --loops abc
expect_fail "bench --loops 0" "--loops must be 1..100000, got '0'" "$E" bench x.ert --loops 0
expect_fail "bench --loops 5x" "got '5x'" "$E" bench x.ert --loops 5x
expect_fail "bench --warmup -1" "--warmup must be" "$E" bench x.ert --warmup -1
expect_fail "run --threads 99" "--threads must be 1..32, got '99'" "$E" run x.ert --threads 99
expect_fail "run --threads ' 4'" "got ' 4'" "$E" run x.ert --threads " 4"
expect_fail "profile --loops huge" "--loops must be" "$E" profile x.ert --loops 99999999999999999999
expect_fail "run -o without value" "needs a value" "$E" run x.ert -o
expect_fail "bench --loops without value" "option '--loops' needs a value" "$E" bench x.ert --loops
expect_fail "run unknown short flag" "unknown option '-q'" "$E" run -q x.ert
expect_fail "run --backend gpu" "unknown backend 'gpu'" "$E" run x.ert --backend gpu
expect_fail "run bad -i" "NAME=FILE" "$E" run x.ert -i input=
expect_fail "run two models" "unexpected argument" "$E" run a.ert b.ert
expect_fail "zoo --seed -1" "--seed must be" "$E" zoo mobilenet_v2 -o "$T/x.ert" --seed -1
expect_fail "zoo unknown" "unknown architecture 'alexnet'" "$E" zoo alexnet -o "$T/x.ert"
expect_fail "zoo without -o" "missing -o" "$E" zoo resnet18
expect_fail "convert without -o" "missing -o" "$E" convert in.onnx
expect_fail "convert --weight-bits 3" "--weight-bits must be 8 or 4, got '3'" \
	"$E" convert in.onnx -o out.ert --weight-bits 3
expect_fail "info without model" "missing model" "$E" info
expect_fail "info --backend without --placement" "--backend goes with --placement" "$E" info x.ert --backend npu
expect_fail "info --json --placement" "do not go together" "$E" info x.ert --json --placement
expect_fail "run --repeat 0" "--repeat must be 1..100000, got '0'" "$E" run x.ert --repeat 0
expect_fail "info --placement bad backend" "unknown backend 'tpu'" "$E" info x.ert --placement --backend tpu
expect_fail "quantize without -o" "missing -o" "$E" quantize x.ert --calib-random 2
expect_fail "quantize without calibration" "missing calibration data: give --calib DIR or --calib-random N" \
	"$E" quantize x.ert -o y.ert
expect_fail "quantize two calibrations" "exclude each other" \
	"$E" quantize x.ert -o y.ert --calib d --calib-random 2
expect_fail "quantize --method" "--method must be minmax, kl or ema, got 'max'" \
	"$E" quantize x.ert -o y.ert --calib-random 2 --method max
expect_fail "quantize --calib-random 0" "--calib-random must be 1..100000, got '0'" \
	"$E" quantize x.ert -o y.ert --calib-random 0
expect_fail "quantize --min-cosine 2" "--min-cosine must be a number in -1..1, got '2'" \
	"$E" quantize x.ert -o y.ert --calib-random 2 --verify 1 --min-cosine 2
expect_fail "quantize --min-cosine nan" "got 'nan'" \
	"$E" quantize x.ert -o y.ert --calib-random 2 --verify 1 --min-cosine nan
expect_fail "quantize --min-cosine alone" "--min-cosine needs --verify N" \
	"$E" quantize x.ert -o y.ert --calib-random 2 --min-cosine 0.9
expect_fail "quantize missing model" "cannot open '$T/none.ert'" \
	"$E" quantize "$T/none.ert" -o "$T/q.ert" --calib-random 1

# --- missing files ----------------------------------------------------------
for cmd in info run bench profile; do
	expect_fail "$cmd missing file" \
		"cannot open '$T/none.ert': No such file or directory" "$E" "$cmd" "$T/none.ert"
done
expect_fail "convert missing file" "cannot open '$T/none.onnx'" \
	"$E" convert "$T/none.onnx" -o "$T/none.ert"
expect_fail "run on a directory" "cannot open '$T'" "$E" run "$T"
: >"$T/empty.ert"
expect_fail "run empty file" "the file is empty" "$E" run "$T/empty.ert"
expect_fail "info empty file" "the file is empty" "$E" info "$T/empty.ert"

# --- zoo: build, describe, run, bench, profile --------------------------------
expect_ok "zoo --list" "$E" zoo --list
for a in mobilenet_v2 resnet18 resnet50 vit_s16; do expect_out "zoo --list" "$a"; done

expect_ok "zoo mobilenet_v2" "$E" zoo mobilenet_v2 -o "$T/mnv2.ert"
have_mnv2=0
[ -s "$T/mnv2.ert" ] && have_mnv2=1
# a written model gets 0666 less the umask, like any new file (not mkstemp's 0600)
mode=$(umask 022; rm -f "$T/mode.ert"; "$E" zoo mobilenet_v2 -o "$T/mode.ert" >/dev/null 2>&1 &&
	stat -c %a "$T/mode.ert")
if [ "$mode" = 644 ]; then ok; else bad "zoo output mode with umask 022: '$mode', want 644"; fi
if [ $have_mnv2 -eq 1 ]; then
	expect_ok "info mnv2" "$E" info "$T/mnv2.ert"
	expect_out "info mnv2 input" "input .*float32 .*\[1,3,224,224\] *NCHW"
	expect_out "info mnv2 Conv" "Conv"
	expect_out "info mnv2 version" "format *\.ert version [0-9]"
	expect_out "info mnv2 parameters" "parameters *3[45][0-9][0-9][0-9][0-9][0-9]"
	# MobileNetV2 1.0 at 224x224 is 300.8 M multiply-accumulates
	expect_out "info mnv2 MACs" "MACs *300774272 "
	expect_ok "info --json mnv2" "$E" info --json "$T/mnv2.ert"
	for f in '"macs"' '"parameters"' '"inputs"' '"format_version"'; do
		expect_out "info --json $f" "$f"
	done

	expect_ok "run mnv2" "$E" run "$T/mnv2.ert" -o "$T/o1" --threads 2
	expect_out "run mnv2 output" "output 'logits': float32 \[1,1000\]"
	expect_out "run mnv2 top-5" "top-5"
	[ -s "$T/o1/logits.npy" ] && ok || bad "run -o did not write logits.npy"
	expect_ok "run mnv2 seeded again" "$E" run "$T/mnv2.ert" -o "$T/o2" --threads 2
	cmp -s "$T/o1/logits.npy" "$T/o2/logits.npy" && ok || bad "same seed, different outputs"

	# placement: a float model stays on the CPU even with the NPU listed first
	expect_ok "info --placement" env ERT_NPU_DEVICE=sim ERT_QUIET=1 "$E" info "$T/mnv2.ert" --placement
	expect_out "info --placement split" "^split 1: cpu"
	expect_out "info --placement summary" "ops in 1 split; 0 crossings"
	expect_fail "npu device missing" "ERT_NPU_DEVICE=/nonexistent/accel9: cannot open" \
		env ERT_NPU_DEVICE=/nonexistent/accel9 "$E" info "$T/mnv2.ert" --placement
	expect_ok "run --explain --repeat 2" env ERT_NPU_DEVICE=sim ERT_QUIET=1 "$E" run "$T/mnv2.ert" \
		--backend npu --explain --repeat 2 --threads 2
	expect_out "run --explain placement" "^placement"
	[ "$(grep -c '^ran .*0 bytes copied between backends' "$T/out")" -eq 2 ] && ok ||
		bad "run --repeat 2 did not report two runs"

	expect_ok "bench --json" "$E" bench "$T/mnv2.ert" --json --loops 3 --warmup 1
	for f in min_ms median_ms max_ms peak_bytes copied_bytes; do
		expect_out "bench --json $f" "\"$f\": [0-9]"
	done
	if command -v python3 >/dev/null 2>&1; then
		for c in "info --json" "bench --json --loops 1 --warmup 0" "profile --json --loops 1"; do
			# shellcheck disable=SC2086
			"$E" $c "$T/mnv2.ert" >"$T/json" 2>"$T/err" &&
				python3 -m json.tool "$T/json" >/dev/null 2>&1 && ok ||
				bad "$c: output is not valid JSON"
		done
	fi
	expect_ok "bench text" "$E" bench "$T/mnv2.ert" --loops 2 --warmup 0 --threads 1
	expect_out "bench text" "median"

	expect_ok "profile" "$E" profile "$T/mnv2.ert" --loops 2
	expect_out "profile lists Conv" " Conv "
	expect_out "profile share" "%"
	expect_ok "profile --json" "$E" profile "$T/mnv2.ert" --loops 1 --json --top 5
	# the five slowest: the fused blocks and Convs lead, but which Conv or
	# whether the Gemm comes fifth varies from run to run
	expect_out "profile --json" '"type": "\(Conv\|InvertedResidual\)"'
	n=$(grep -c '"name": ' "$T/out")
	if [ "$n" = 5 ]; then ok; else bad "profile --json --top 5 listed $n ops"; fi

	# .npy input: zeros in, written outputs read back
	mknpy "$T/zeros.npy" '<f4' '(1, 3, 224, 224)' 602112
	expect_ok "run -i zeros.npy" "$E" run "$T/mnv2.ert" -i "input=$T/zeros.npy" -o "$T/z1"
	expect_ok "run -i FILE (one input)" "$E" run "$T/mnv2.ert" -i "$T/zeros.npy" -o "$T/z2"
	cmp -s "$T/z1/logits.npy" "$T/z2/logits.npy" && ok || bad "same .npy input, different outputs"
	expect_fail "run -i written .npy, wrong rank" "has shape \[1,1000\]" \
		"$E" run "$T/mnv2.ert" -i "input=$T/z1/logits.npy"
	mknpy "$T/int.npy" '<i8' '(1, 3, 224, 224)' 1204224
	expect_fail "run -i wrong dtype" "input 'input' is float32, but .* holds int64" \
		"$E" run "$T/mnv2.ert" -i "input=$T/int.npy"
	mknpy "$T/short.npy" '<f4' '(1, 3, 224, 224)' 1000
	expect_fail "run -i truncated .npy" "data is 1000 bytes" \
		"$E" run "$T/mnv2.ert" -i "input=$T/short.npy"
	mknpy "$T/fortran.npy" '<f4' '(2,)' 8
	sed -i 's/False/True /' "$T/fortran.npy"
	expect_fail "run -i Fortran .npy" "Fortran" "$E" run "$T/mnv2.ert" -i "input=$T/fortran.npy"
	expect_fail "run -i unknown input" "no input 'nope'" \
		"$E" run "$T/mnv2.ert" -i "nope=$T/zeros.npy"
	# malformed .npy headers: each refused with a reason, never guessed at
	mkrawnpy "$T/h.npy" "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }" 8
	expect_fail ".npy big-endian" "unsupported element type '>f4'" "$E" run "$T/mnv2.ert" -i "$T/h.npy"
	mkrawnpy "$T/h.npy" "{'descr': '<f4', 'shape': (2,), }" 8
	expect_fail ".npy without fortran_order" "lacks 'fortran_order'" "$E" run "$T/mnv2.ert" -i "$T/h.npy"
	mkrawnpy "$T/h.npy" "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,), }" 8
	expect_fail ".npy repeated key" "repeated key 'descr'" "$E" run "$T/mnv2.ert" -i "$T/h.npy"
	mkrawnpy "$T/h.npy" "{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }" 4
	expect_fail ".npy rank 9" "malformed 'shape'" "$E" run "$T/mnv2.ert" -i "$T/h.npy"
	mkrawnpy "$T/h.npy" "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}" 8
	expect_fail ".npy unknown key" "key 'x'" "$E" run "$T/mnv2.ert" -i "$T/h.npy"
	mkrawnpy "$T/h.npy" "['descr']" 0
	expect_fail ".npy not a dict" "not a dict" "$E" run "$T/mnv2.ert" -i "$T/h.npy"
	head -c 40 "$T/zeros.npy" >"$T/h.npy"
	expect_fail ".npy truncated header" "truncated header" "$E" run "$T/mnv2.ert" -i "$T/h.npy"
	printf '\223NUMPY\011\000\010\000{}      ' >"$T/h.npy"
	expect_fail ".npy version 9" "unsupported .npy version 9" "$E" run "$T/mnv2.ert" -i "$T/h.npy"

	# quantize: errors that need a model, then real runs
	expect_fail "quantize --keep-float unknown" "no node named 'nope'" \
		"$E" quantize "$T/mnv2.ert" -o "$T/q.ert" --calib-random 1 --keep-float conv_0,nope
	expect_fail "quantize onto its input" "is the input file" \
		"$E" quantize "$T/mnv2.ert" -o "$T/mnv2.ert" --calib-random 1
	expect_fail "quantize --calib missing dir" "cannot open calibration directory '$T/nodir'" \
		"$E" quantize "$T/mnv2.ert" -o "$T/q.ert" --calib "$T/nodir"
	mkdir -p "$T/cal-empty" "$T/cal-int" "$T/cal-shape" "$T/cal-short" "$T/cal"
	expect_fail "quantize --calib empty dir" "no calibration samples in '$T/cal-empty'" \
		"$E" quantize "$T/mnv2.ert" -o "$T/q.ert" --calib "$T/cal-empty"
	cp "$T/int.npy" "$T/cal-int/a.npy"
	expect_fail "quantize --calib wrong dtype" "calibration file '$T/cal-int/a.npy' holds int64, input 'input' is float32" \
		"$E" quantize "$T/mnv2.ert" -o "$T/q.ert" --calib "$T/cal-int"
	mknpy "$T/cal-shape/a.npy" '<f4' '(1, 3, 8, 8)' 768
	expect_fail "quantize --calib wrong shape" "has shape \[1,3,8,8\], input 'input' is \[1,3,224,224\]" \
		"$E" quantize "$T/mnv2.ert" -o "$T/q.ert" --calib "$T/cal-shape"
	cp "$T/short.npy" "$T/cal-short/a.npy"
	expect_fail "quantize --calib truncated .npy" "data is 1000 bytes" \
		"$E" quantize "$T/mnv2.ert" -o "$T/q.ert" --calib "$T/cal-short"
	[ -e "$T/q.ert" ] && bad "a failed quantize left '$T/q.ert'" || ok

	expect_ok "quantize mnv2" "$E" quantize "$T/mnv2.ert" -o "$T/q.ert" --calib-random 2 --threads 2
	expect_out "quantize summary" "mnv2.ert -> .*q.ert: [0-9]* of 65 nodes quantised (minmax, 2 random samples)"
	expect_out "quantize table header" "per-layer cosine, float vs int8, mean over 2 calibration inputs"
	expect_out "quantize table columns" "node  *op  *tensor  *scale  *zp  *cosine"
	expect_out "quantize table input row" "^  -  *input  *input  *0.00392"
	expect_out "quantize table Conv row" "conv_0  *Conv  .* -128  *0\.99"
	expect_out "quantize table Gemm row" " Gemm  *logits "
	expect_out "quantize output cosine" "^  logits  *mean 0\.99[0-9]*  min 0\.99"
	expect_ok "run quantized mnv2" "$E" run "$T/q.ert" --threads 2
	expect_out "run quantized output" "output 'logits': float32 \[1,1000\]"
	expect_ok "info quantized mnv2" "$E" info "$T/q.ert"
	expect_out "info quantized: QuantizeLinear" "QuantizeLinear"
	expect_out "info quantized: DequantizeLinear" "DequantizeLinear"
	cp "$T/zeros.npy" "$T/cal/a.npy"
	cp "$T/zeros.npy" "$T/cal/b.npy"
	: >"$T/cal/notes.txt"
	expect_ok "quantize --calib DIR" "$E" quantize "$T/mnv2.ert" -o "$T/q2.ert" --calib "$T/cal" \
		--method ema --threads 2
	expect_out "quantize --calib DIR count" "(ema, 2 calibration samples)"
	expect_ok "quantize kl + keep + verify" "$E" quantize "$T/mnv2.ert" -o "$T/q3.ert" \
		--calib-random 2 --method kl --keep-float conv_2 --keep-first --keep-last \
		--verify 2 --min-cosine 0.9 --threads 2
	expect_out "quantize kept in float" "3 kept in float (kl, 2 random samples)"
	expect_out "quantize --verify table" "mean over 2 verification inputs"
	expect_out "quantize --verify line" "^verify: 2 inputs (seeds 4294967296+k), output cosine min 0\.9[0-9]* mean 0\.9"
	# no quantised model matches its float model exactly
	expect_fail "quantize --min-cosine 1" "below --min-cosine 1" \
		"$E" quantize "$T/mnv2.ert" -o "$T/q4.ert" --calib-random 1 --verify 1 --min-cosine 1 --threads 2
	expect_out "quantize --min-cosine 1 still reports" "^verify: 1 input "
	rm -rf "$T/q.ert" "$T/q2.ert" "$T/q3.ert" "$T/q4.ert" "$T"/cal*

	# damaged model files
	head -c 3000 "$T/mnv2.ert" >"$T/trunc.ert"
	for cmd in info run bench; do
		expect_fail "$cmd truncated .ert" "failed to load" "$E" "$cmd" "$T/trunc.ert"
	done
	expect_ok "zoo mobilenet_v2 again" "$E" zoo mobilenet_v2 -o "$T/mnv2b.ert"
	cmp -s "$T/mnv2.ert" "$T/mnv2b.ert" && ok || bad "zoo is not deterministic"
	expect_ok "zoo other seed" "$E" zoo mobilenet_v2 -o "$T/mnv2c.ert" --seed 1
	cmp -s "$T/mnv2.ert" "$T/mnv2c.ert" && bad "--seed changes nothing" || ok
	rm -f "$T/mnv2b.ert" "$T/mnv2c.ert"
	# the same model as ONNX (the graph as built, same weights): read back, it
	# optimises to the same graph and gives the .ert's logits byte for byte
	expect_ok "zoo mobilenet_v2 -o .onnx" "$E" zoo mobilenet_v2 -o "$T/mnv2.onnx"
	expect_ok "info zoo .onnx" "$E" info "$T/mnv2.onnx"
	expect_out "info zoo .onnx MACs" "MACs *300774272 "
	expect_ok "run zoo .onnx" "$E" run "$T/mnv2.onnx" -t 1 -o "$T/onnx-out"
	expect_ok "run zoo .ert" "$E" run "$T/mnv2.ert" -t 1 -o "$T/ert-out"
	cmp -s "$T/onnx-out/logits.npy" "$T/ert-out/logits.npy" && ok ||
		bad "zoo .onnx and .ert give different logits"
	expect_fail "zoo -o .onnx into a missing directory" "$T/nodir/m.onnx" \
		"$E" zoo mobilenet_v2 -o "$T/nodir/m.onnx"
	rm -rf "$T/mnv2.onnx" "$T/onnx-out" "$T/ert-out"
fi
head -c 4096 /dev/urandom >"$T/garbage.onnx"
for cmd in info run; do
	expect_fail "$cmd garbage .onnx" "failed to load" "$E" "$cmd" "$T/garbage.onnx"
done
expect_fail "convert garbage .onnx" "failed to import" "$E" convert "$T/garbage.onnx" -o "$T/g.ert"

# ViT-S/16 with its attention fused counts the MACs of the MatMuls it replaces
expect_ok "zoo vit_s16 fused attention" env ERT_FUSE_ATTENTION=1 "$E" zoo vit_s16 -o "$T/vfa.ert"
expect_ok "info vit fused attention" "$E" info "$T/vfa.ert"
expect_out "info vit FusedAttention" "FusedAttention *12"
expect_out "info vit fused attention MACs" "MACs *4598882304 "
rm -f "$T/vfa.ert"
expect_ok "zoo resnet18" "$E" zoo resnet18 -o "$T/r18.ert"
expect_ok "info resnet18" "$E" info "$T/r18.ert"
expect_out "info resnet18 MACs" "MACs *1814073344 "
# torchvision's 11689512 less one of BatchNorm's two vectors per channel (folded)
expect_out "info resnet18 parameters" "parameters *11684712 "
expect_ok "run resnet18" "$E" run "$T/r18.ert"
expect_out "run resnet18 output" "output 'logits': float32 \[1,1000\]"
expect_out "run resnet18 top-5" "top-5"
rm -f "$T/r18.ert"

# --- ONNX conformance model: convert, then run on its test data ---------------
relu="$ERT_CONFORMANCE/node/test_relu"
if [ -f "$relu/model.onnx" ]; then
	expect_ok "convert test_relu" "$E" convert "$relu/model.onnx" -o "$T/relu.ert"
	expect_ok "run test_relu .pb" "$E" run "$T/relu.ert" -i "$relu/test_data_set_0/input_0.pb" -o "$T/r1"
	expect_out "run test_relu output" "output 'y': float32 \[3,4,5\]"
	# Relu is idempotent: its output fed back in must come out unchanged
	expect_ok "run test_relu .npy" "$E" run "$T/relu.ert" -i "x=$T/r1/y.npy" -o "$T/r2"
	cmp -s "$T/r1/y.npy" "$T/r2/y.npy" && ok || bad ".npy round trip changed values"
	expect_ok "info test_relu.onnx" "$E" info "$relu/model.onnx"
	expect_out "info .onnx" "ONNX"
	expect_ok "convert --fp16" "$E" convert "$relu/model.onnx" -o "$T/relu16.ert" --fp16
	# quantize a two-input ONNX model: DIR/<sample>/<input>.npy
	add="$ERT_CONFORMANCE/node/test_add"
	mkdir -p "$T/cal2/s0" "$T/cal2/s1"
	for s in s0 s1; do for i in x y; do mknpy "$T/cal2/$s/$i.npy" '<f4' '(3, 4, 5)' 240; done; done
	expect_ok "quantize two inputs" "$E" quantize "$add/model.onnx" -o "$T/add8.ert" --calib "$T/cal2"
	expect_out "quantize two inputs: Add" "  *Add  *sum "
	rm "$T/cal2/s1/y.npy"
	expect_fail "quantize two inputs, file missing" "sample '$T/cal2/s1' has no file for input 'y'" \
		"$E" quantize "$add/model.onnx" -o "$T/add8.ert" --calib "$T/cal2"
	# an erratum for a case that passes is stale: the run fails and says so
	echo "test_relu  pretend its data were wrong" >"$T/errata.txt"
	"$E" conform --errata "$T/errata.txt" "$relu" >"$T/out" 2>"$T/err"
	[ $? -eq 1 ] && ok || bad "conform with a stale erratum did not exit 1"
	expect_out "conform stale erratum" "FAIL test_relu: passes, but is listed as having bad reference data"
else
	echo "skip: no ONNX conformance data at '$ERT_CONFORMANCE' (make check CONFORMANCE=DIR, or ERT_CONFORMANCE=DIR for this script)"
	skip=$((skip + 13))
fi
# a real architecture: the same MACs as torchvision's ResNet-50, and quantised weights run
# edgert ops: the op table (no model, no device needed)
expect_ok "ops" "$E" ops
expect_out "ops header" "^OP  *DOMAIN  *OPSETS  *BACKENDS"
expect_out "ops Conv" "^Conv  *ai.onnx  *1-[0-9]*  *cpu opencl vulkan$"
expect_out "ops Softmax" "^Softmax  *ai.onnx  *1-[0-9]*  *cpu opencl vulkan$"
expect_out "ops DFT" "^DFT  *ai.onnx  *17-[0-9]*  *cpu$"
expect_out "ops Upsample deprecated after 9" "^Upsample  *ai.onnx  *7-9  *cpu$"
expect_out "ops QGemm com.microsoft" "^QGemm  *com.microsoft  *1-1  *cpu npu$"
expect_out "ops TreeEnsemble ai.onnx.ml" "^TreeEnsemble  *ai.onnx.ml  *5-5  *cpu$"
expect_out "ops Adam ai.onnx.preview.training" "^Adam  *ai.onnx.preview.training  *1-1  *cpu$"
expect_out "ops SequenceMap" "^SequenceMap  *ai.onnx  *17-[0-9]*  *cpu$"
expect_out "ops summary" "^[0-9]* ops (cpu [0-9]*, opencl [0-9]*, vulkan [0-9]*, npu [0-9]*)"
if grep -q "QLinearLookup" "$T/out"; then bad "ops lists edgert's own QLinearLookup"; else ok; fi
expect_ok "ops --backend npu" "$E" ops --backend npu
if grep -v "^OP " "$T/out" | grep -v " ops (" | grep -qv " npu$"; then
	bad "ops --backend npu lists an op the NPU does not claim"
else
	ok
fi
expect_ok "ops --json" "$E" ops --json
expect_out "ops --json DFT" '"op": "DFT", "domain": "ai.onnx", "since": 17, "until": [0-9]*, "backends": \["cpu"\]'
if command -v python3 >/dev/null 2>&1; then
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
ops = {o["op"]: o for o in d["ops"]}
assert d["count"] == len(d["ops"]) > 100, d["count"]
assert ops["Relu"]["backends"][0] == "cpu" and ops["Relu"]["since"] == 1
pb = d["per_backend"]
assert pb["vulkan"] == pb["opencl"] > 0, pb
assert all(("vulkan" in o["backends"]) == ("opencl" in o["backends"]) for o in d["ops"])
assert ops["Reshape"]["since"] == 5 and ops["Scatter"]["until"] == 10
assert all(o["until"] <= d["opset_max"] for o in d["ops"])
' "$T/out" 2>"$T/err" && ok || bad "ops --json does not parse or lacks rows: $(head -n 3 "$T/err")"
else
	echo "skip: no python3 to parse ops --json"
	skip=$((skip + 1))
fi
expect_fail "ops bad flag" "unknown option '--bogus'" "$E" ops --bogus
expect_fail "ops bad backend" "must be cpu, opencl, vulkan or npu" "$E" ops --backend gpu
expect_fail "ops extra argument" "unexpected argument 'x'" "$E" ops x

r50="$ERT_CONFORMANCE/light/test_resnet50"
sq="$ERT_CONFORMANCE/light/test_squeezenet"
if [ -f "$r50/model.onnx" ] && [ -f "$sq/model.onnx" ]; then
	expect_ok "info resnet50.onnx" "$E" info "$r50/model.onnx"
	expect_out "info resnet50.onnx MACs" "MACs *4089184256 "
	expect_ok "convert squeezenet --weight-bits 8" \
		"$E" convert "$sq/model.onnx" -o "$T/sq8.ert" --weight-bits 8 --weight-block 64
	expect_ok "run squeezenet q8" "$E" run "$T/sq8.ert" -i "$sq/test_data_set_0/input_0.pb"
	expect_out "run squeezenet q8 top-5" "top-5"
else
	echo "skip: no light models under '$ERT_CONFORMANCE'"
	skip=$((skip + 5))
fi

if [ $skip -ne 0 ]; then
	echo "cli: $pass passed, $fail failed, $skip skipped"
else
	echo "cli: $pass passed, $fail failed"
fi
[ $fail -eq 0 ]
