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
# in fp32 and the output is the CPU's (cosine >= 0.999); edgert profile names
# the -f16 kernels of the others in LOW (-f16a for Mul and Relu where the
# device computes in half), every op's -f32 kernel in NORMAL
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
	# the kernel names edgert profile reports say the variant each step ran:
	# in LOW, -f16 but for the two ops the guard kept in fp32 (-f32) and, where
	# --explain says the device computes in half, -f16a for the elementwise
	# Mul and Relu; in NORMAL, -f32
	half=f16
	grep -q '^vulkan paths: .*half arithmetic' "$out/$m-on.log" && half=f16a
	env "$@" "$edgert" profile "$out/$m.ert" --backend "$be" --precision low --loops 1 --json \
		${low_opts:-} >"$out/$m-low-profile.json" 2>"$out/$m-low-profile.log"
	"$edgert" profile "$out/$m.ert" --backend "$be" --loops 1 --json ${low_opts:-} \
		>"$out/$m-normal-profile.json" 2>>"$out/$m-low-profile.log"
	if /usr/bin/python3 - "$out/$m-low-profile.json" "$out/$m-normal-profile.json" "$half" \
		>"$out/$m-kernels.log" 2>&1 <<'PY'
import json, re, sys
low, normal = (json.load(open(f))["ops"] for f in sys.argv[1:3])
kept, half = {"square", "scale_down"}, sys.argv[3]
def want_low(o):
    return "f32" if o["name"] in kept else half if o["type"] in ("Mul", "Relu") else "f16"
bad = []
for what, ops, want in (("low", low, want_low), ("normal", normal, lambda o: "f32")):
    if len(ops) != 5:
        bad.append("%s: %d ops, expected 5" % (what, len(ops)))
    for o in ops:
        tags = re.findall(r"-(f16a|f16|f32)(?=-|$)", o["kernel"] or "")
        if tags != [want(o)]:
            bad.append("%s: %s runs '%s', expected -%s" % (what, o["name"], o["kernel"], want(o)))
if bad:
    sys.exit("; ".join(bad))
print(", ".join("%s %s" % (o["name"], o["kernel"]) for o in low))
PY
	then
		ok "overflow model on $be: edgert profile names the variant each op ran, in LOW $(cat "$out/$m-kernels.log"), all -f32 in NORMAL"
	else
		cat "$out/$m-low-profile.log" "$out/$m-kernels.log" 2>/dev/null | tail -n 3 | sed 's/^/# /'
		bad "overflow model on $be: edgert profile names -f16 kernels in LOW (-$half for Mul and Relu, -f32 for the kept ops), -f32 in NORMAL"
	fi
}
