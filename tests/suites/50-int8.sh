#!/bin/sh
# The int8 yardstick: zoo models quantised with seeded random calibration
# inputs keep an output cosine of at least 0.99 against their float model on
# 100 other random inputs (edgert quantize --verify 100 --min-cosine 0.99).
# Each architecture uses another calibration method, so all three run at
# full scale. Prints "quantize: N passed, N failed" last; exits non-zero on a failure.
set -u
: "${ERT_BUILD:=build}"
: "${ERT_INT8_THREADS:=2}"
E="$ERT_BUILD/edgert"
T=$(mktemp -d "${TMPDIR:-/tmp}/ert-int8.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT INT TERM
export ERT_NO_PROGRESS=1
pass=0 fail=0

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

if [ ! -x "$E" ]; then
	echo "quantize: $E not built"
	echo "quantize: 0 passed, 1 failed"
	exit 1
fi

# ARCH CALIBRATION-SAMPLES METHOD
for spec in "mobilenet_v2 8 minmax" "resnet18 8 ema" "resnet50 8 kl"; do
	# shellcheck disable=SC2086
	set -- $spec
	arch=$1 n=$2 method=$3
	t0=$(date +%s)
	if ! "$E" zoo "$arch" -o "$T/$arch.ert" >/dev/null 2>"$T/err"; then
		bad "zoo $arch: $(head -n 3 "$T/err")"
		continue
	fi
	"$E" quantize "$T/$arch.ert" -o "$T/$arch-int8.ert" --calib-random "$n" --method "$method" \
		--verify 100 --min-cosine 0.99 --threads "$ERT_INT8_THREADS" >"$T/out" 2>"$T/err"
	rc=$?
	secs=$(($(date +%s) - t0))
	verify=$(grep '^verify:' "$T/out")
	# the lowest per-layer cosine, for the log: rows end in a cosine or '-'
	worst=$(sed -n '/^per-layer cosine/,/^output cosine/p' "$T/out" |
		awk '$NF ~ /^[0-9.]+$/ { if (min == "" || $NF < min) { min = $NF; row = $1 " " $2 } }
		     END { print min " (" row ")" }')
	echo "$arch ($method, $n samples, ${secs}s): $verify; lowest layer cosine $worst"
	if [ $rc -ne 0 ]; then
		bad "$arch: quantize exited $rc: $(head -n 3 "$T/err")"
	elif ! grep -Eq '^verify: 100 inputs .*output cosine min (0\.99|1\.000)' "$T/out"; then
		bad "$arch: no verification line with min cosine >= 0.99"
	else
		ok
	fi
	# the quantised model is a model: it runs on its own and names its output
	if "$E" run "$T/$arch-int8.ert" --threads "$ERT_INT8_THREADS" >"$T/out" 2>"$T/err" &&
	   grep -q "output 'logits': float32 \[1,1000\]" "$T/out"; then
		ok
	else
		bad "run $arch-int8.ert: $(head -n 3 "$T/err")"
	fi
	# the int8 residual fusion (ERT_FUSE_Q8_RESIDUAL=1, docs/int8.md) changes no byte:
	# quantised with and without it, the same logits, and no QLinearAdd left fused
	if [ "$arch" = resnet18 ]; then
		: >"$T/err"
		for f in 0 1; do
			rm -rf "$T/o$f" && mkdir "$T/o$f" &&
			ERT_FUSE_Q8_RESIDUAL=$f "$E" quantize "$T/$arch.ert" -o "$T/$arch-q$f.ert" \
				--calib-random 2 --threads "$ERT_INT8_THREADS" >/dev/null 2>>"$T/err" &&
			"$E" run "$T/$arch-q$f.ert" -o "$T/o$f" --seed 5 >/dev/null 2>>"$T/err" ||
				echo "quantize/run ERT_FUSE_Q8_RESIDUAL=$f failed" >>"$T/err"
		done
		adds0=$("$E" info "$T/$arch-q0.ert" | awk '$1 == "QLinearAdd" { print $2 }')
		adds1=$("$E" info "$T/$arch-q1.ert" | awk '$1 == "QLinearAdd" { print $2 }')
		if [ -s "$T/err" ]; then
			bad "$arch fused residual: $(head -n 3 "$T/err")"
		elif [ "${adds0:-0}" -eq 0 ] || [ -n "$adds1" ]; then
			bad "$arch fused residual: QLinearAdds ${adds0:-none} unfused, ${adds1:-none} fused"
		elif ! cmp -s "$T/o0/logits.npy" "$T/o1/logits.npy"; then
			bad "$arch fused residual: logits differ from the unfused model's"
		else
			echo "$arch: $adds0 QLinearAdds fused into their QLinearConvs, the same logits"
			ok
		fi
		rm -rf "$T/o0" "$T/o1" "$T/$arch-q0.ert" "$T/$arch-q1.ert"
	fi
	rm -f "$T/$arch.ert" "$T/$arch-int8.ert"
done

echo "quantize: $pass passed, $fail failed"
[ $fail -eq 0 ]
