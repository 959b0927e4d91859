# Precision LOW checks both GPU suites make (tests/suites/37-opencl.sh,
# 38-vulkan.sh), sourced by them: they define ok and bad, $edgert, $out and
# $ERT_BUILD. Each check runs its commands under `env VAR=VALUE...` (the
# backend's float16 variable, ERT_OPENCL_F16=storage on PoCL), and its
# edgert runs on the backend with $low_opts (options, e.g. --tune none).

# cosine REFDIR GOTDIR: cosine >= 0.999 and no NaN or inf in got, over every output
cosine() {
	/usr/bin/python3 - "$1" "$2" <<'PY'
import glob, os, sys
import numpy as np
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.npy"))):
    r = np.load(f).astype(np.float64).ravel()
    g = np.load(os.path.join(sys.argv[2], os.path.basename(f))).astype(np.float64).ravel()
    if not np.isfinite(g).all():
        sys.exit("%s: %d values are NaN or inf" % (os.path.basename(f), (~np.isfinite(g)).sum()))
    c = g @ r / (np.linalg.norm(g) * np.linalg.norm(r))
    print("%s: cosine %.6f, max abs error %.3g, max |ref| %.3g" %
          (os.path.basename(f), c, np.abs(g - r).max(), np.abs(r).max()))
    if c < 0.999:
        sys.exit("%s: cosine under 0.999" % os.path.basename(f))
PY
}

# low_model BACKEND MODEL [VAR=VALUE...]: $out/MODEL.ert in LOW, every op in
# float16 (none kept by the guard), against the CPU's $out/MODEL-cpu
low_model() {
	be=$1 m=$2
	shift 2
	rm -rf "$out/$m-f16"
	if env "$@" "$edgert" run "$out/$m.ert" --backend "$be" --precision low --seed 5 \
		--explain ${low_opts:-} -o "$out/$m-f16" >"$out/$m-f16.log" 2>&1 &&
	   grep -q '^precision low: [1-9][0-9]* ops in fp16, 0 kept' "$out/$m-f16.log" &&
	   cosine "$out/$m-cpu" "$out/$m-f16" >"$out/$m-f16.cmp" 2>&1; then
		ok "$m on $be --precision low, float16 storage: every op in fp16, $(head -n 1 "$out/$m-f16.cmp")"
	else
		cat "$out/$m-f16.log" "$out/$m-f16.cmp" 2>/dev/null | tail -n 3 | sed 's/^/# /'
		bad "$m on $be --precision low, float16 storage: cosine >= 0.999, no inf/NaN"
	fi
}

# low_overflow BACKEND [VAR=VALUE...]: the overflow model (x * 500, squared:
# up to 250000 > 65504; * 1e-4, Relu, MatMul) gives inf/NaN with
# --fp16-guard off; with it on, --explain names square and scale_down kept
# in fp32 and the output is the CPU's (cosine >= 0.999)
low_overflow() {
	be=$1 m=overflow
	shift
	rm -rf "$out/$m-cpu" "$out/$m-on" "$out/$m-off"
	if ! "$ERT_BUILD/test-backend-ops" --write-overflow-model "$out/$m.ert" >"$out/$m.log" 2>&1; then
		bad "the overflow model written"
		return
	fi
	"$edgert" run "$out/$m.ert" --backend cpu --seed 5 -o "$out/$m-cpu" >/dev/null 2>&1
	env "$@" "$edgert" run "$out/$m.ert" --backend "$be" --precision low --fp16-guard off \
		--seed 5 ${low_opts:-} -o "$out/$m-off" >"$out/$m-off.log" 2>&1
	if cosine "$out/$m-cpu" "$out/$m-off" >"$out/$m-off.cmp" 2>&1; then
		bad "overflow model on $be, float16 storage, guard off: expected inf/NaN ($(tail -n 1 "$out/$m-off.cmp"))"
	elif grep -q 'NaN or inf' "$out/$m-off.cmp"; then
		ok "overflow model on $be, float16 storage, guard off: $(tail -n 1 "$out/$m-off.cmp")"
	else
		tail -n 3 "$out/$m-off.log" "$out/$m-off.cmp" | sed 's/^/# /'
		bad "overflow model on $be, float16 storage, guard off: ran, with inf/NaN"
	fi
	env "$@" "$edgert" run "$out/$m.ert" --backend "$be" --precision low --seed 5 --explain \
		${low_opts:-} -o "$out/$m-on" >"$out/$m-on.log" 2>&1
	if [ "$(grep -A1 -E ' (square|scale_down)$' "$out/$m-on.log" |
		grep -c "kept in fp32 by the fp16 guard: max |x| of 'sq'")" -eq 2 ] &&
	   grep -q '^precision low: 3 ops in fp16, 2 kept in fp32' "$out/$m-on.log"; then
		ok "overflow model on $be: --explain names square and scale_down kept in fp32 (max |x| of 'sq')"
	else
		grep -E 'kept|^precision|rror' "$out/$m-on.log" | sed 's/^/# /'
		bad "overflow model on $be: --explain names square and scale_down kept in fp32"
	fi
	if cosine "$out/$m-cpu" "$out/$m-on" >"$out/$m-on.cmp" 2>&1; then
		ok "overflow model on $be, float16 storage, guard on: $(head -n 1 "$out/$m-on.cmp")"
	else
		tail -n 3 "$out/$m-on.cmp" | sed 's/^/# /'
		bad "overflow model on $be, float16 storage, guard on: cosine >= 0.999, no inf/NaN"
	fi
}
