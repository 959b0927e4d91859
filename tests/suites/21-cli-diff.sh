#!/bin/sh
# edgert diff: a backend against the CPU, op by op.
# - user errors (no --backend, bad tolerances) are refused with one line;
# - CPU against CPU with zero tolerance: every op compared, none differs;
# - the NPU (userspace simulator) on an int8 mobilenet_v2: the ops on the
#   NPU (all but the input's QuantizeLinear) bit-identical to the CPU (zero
#   tolerance), exit 0;
# - OpenCL (skipped without a platform): resnet18 within the default
#   tolerance, every op on OpenCL; with zero tolerance the rounding of the
#   device's GEMM shows: exit 1, and the op named first is the first output
#   whose max abs error is not 0 (--json read back with python);
# - asking for a device with no platform is an error, not a pass.
# Prints "N passed, N failed[, N skipped]" last; exits non-zero on a failure.
set -u
: "${ERT_BUILD:=build}"
E="$ERT_BUILD/edgert"
T=$(mktemp -d "${TMPDIR:-/tmp}/ert-diff.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT INT TERM
export ERT_NO_PROGRESS=1
pass=0 fail=0 skip=0

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# expect NAME RC CMD...: exit status RC; stdout in $T/out, stderr in $T/err
expect() {
	name=$1 want=$2; shift 2
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
	if [ $rc -eq "$want" ]; then ok; else
		bad "$name: exit $rc, expected $want: $(head -n 3 "$T/err")"; return 1; fi
}
expect_out() { # NAME PATTERN: in the last command's stdout
	if grep -q -- "$2" "$T/out"; then ok; else bad "$1: output lacks '$2'"; fi
}
expect_err1() { # NAME PATTERN: exactly one line on stderr, matching
	if [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q -- "$2" "$T/err"; then ok; else
		bad "$1: stderr '$(head -n 3 "$T/err")' is not one line with '$2'"; fi
}

# JSON checks: outputs compared on BACKEND (all of them with BACKEND!), and the
# first difference is the first output whose max abs error passes ATOL+RTOL*max|ref|
check_json() { # FILE BACKEND EXPECT_DIFFERS(0|1)
	/usr/bin/python3 - "$@" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
backend, want = sys.argv[2], sys.argv[3] == "1"
outs = d["outputs"]
if not outs:
    sys.exit("no outputs compared")
others = [o for o in outs if o["backend"] != backend.rstrip("!")]
if len(others) == len(outs) or (backend.endswith("!") and others):
    sys.exit("%d outputs not on %s, e.g. %s" % (len(others), backend, others[0]["node"]))
bad = [i for i, o in enumerate(outs)
       if "problem" in o or o["max_abs"] is None or o["nan"] != o["ref_nan"]
       or o["max_abs"] > d["atol"] + d["rtol"] * o["max_ref"]]
flagged = [i for i, o in enumerate(outs) if o["differs"]]
for i in bad:
    if i not in flagged:
        sys.exit("output %d (%s) is over tolerance but not flagged" % (i, outs[i]["node"]))
for i in flagged:
    if i not in bad and not outs[i]["cosine"] < d["min_cosine"]:
        sys.exit("output %d (%s) is flagged within tolerance" % (i, outs[i]["node"]))
if want != bool(flagged) or d["differing"] != len(flagged):
    sys.exit("differing %d, expected %s" % (d["differing"], "some" if want else "none"))
f = d["first_difference"]
if want and (f is None or f["node"] != outs[flagged[0]]["node"]):
    sys.exit("first_difference %s is not %s" % (f, outs[flagged[0]]["node"]))
print("%d outputs (%d on %s), %d differ%s" % (len(outs), len(outs) - len(others), backend.rstrip("!"), len(flagged),
      ", first %s '%s'" % (f["op"], f["node"]) if f else ""))
EOF
}

"$E" zoo mobilenet_v2 -o "$T/mnv2.ert" >/dev/null 2>&1 || bad "zoo mobilenet_v2"
ops=$("$E" info "$T/mnv2.ert" | sed -n 's/^ops *\([0-9]*\) nodes.*/\1/p')

# --- user errors -------------------------------------------------------------------
expect "diff without --backend" 1 "$E" diff "$T/mnv2.ert" &&
	expect_err1 "diff without --backend" "--backend is required"
expect "diff --rtol -1" 1 "$E" diff "$T/mnv2.ert" --backend cpu --rtol -1 &&
	expect_err1 "diff --rtol -1" "--rtol must be"
expect "diff --min-cosine 2" 1 "$E" diff "$T/mnv2.ert" --backend cpu --min-cosine 2 &&
	expect_err1 "diff --min-cosine 2" "--min-cosine must be"
expect "diff without a model" 1 "$E" diff --backend cpu
expect "diff --help" 0 "$E" diff --help && expect_out "diff --help" "EXAMPLES"

# --- CPU against CPU: same kernels, same bits -----------------------------------------
if expect "diff --backend cpu, zero tolerance" 0 "$E" diff "$T/mnv2.ert" --backend cpu --rtol 0 --atol 0; then
	expect_out "diff cpu: summary" "^no op differs: $ops outputs compared"
fi

# --- the NPU on its simulator: int8 mobilenet_v2, bit-identical -----------------------
if "$E" quantize "$T/mnv2.ert" -o "$T/mnv2-int8.ert" --calib-random 2 >"$T/q.log" 2>&1; then
	ok
	if ERT_NPU_DEVICE=sim expect "diff --backend npu (simulator), zero tolerance" 0 \
		"$E" diff "$T/mnv2-int8.ert" --backend npu --rtol 0 --atol 0 --json; then
		cp "$T/out" "$T/npu.json"
		if check_json "$T/npu.json" npu 0 >"$T/chk" 2>&1; then
			ok; echo "# npu: $(cat "$T/chk")"
		else
			bad "diff --backend npu: $(cat "$T/chk")"; fi
	fi
else
	bad "quantize mobilenet_v2: $(tail -n 2 "$T/q.log")"
fi

# --- OpenCL ----------------------------------------------------------------------------
if ! "$E" run "$T/mnv2.ert" --backend opencl --explain 2>/dev/null | grep -q '^split 1: opencl'; then
	skip=$((skip + 4))
	echo "skip: no OpenCL device (4 checks)"
else
	"$E" zoo resnet18 -o "$T/r18.ert" >/dev/null 2>&1 || bad "zoo resnet18"
	r18=$("$E" info "$T/r18.ert" | sed -n 's/^ops *\([0-9]*\) nodes.*/\1/p')
	if expect "diff resnet18 --backend opencl" 0 "$E" diff "$T/r18.ert" --backend opencl; then
		expect_out "diff opencl: summary" "^no op differs: $r18 outputs compared"
	fi
	if expect "diff resnet18 --backend opencl, zero tolerance" 1 \
		"$E" diff "$T/r18.ert" --backend opencl --rtol 0 --atol 0 --json; then
		cp "$T/out" "$T/ocl.json"
		if check_json "$T/ocl.json" opencl! 1 >"$T/chk" 2>&1; then
			ok; echo "# opencl, zero tolerance: $(cat "$T/chk")"
		else
			bad "diff --backend opencl --json: $(cat "$T/chk")"
		fi
	fi
fi

# --- a device that is not there: an error ------------------------------------------------
if expect "diff --backend opencl without a platform" 1 env OCL_ICD_VENDORS="$T/none" \
	"$E" diff "$T/mnv2.ert" --backend opencl; then
	expect_err1 "diff --backend opencl without a platform" "no op ran on opencl"
fi

if [ $skip -ne 0 ]; then
	echo "cli-diff: $pass passed, $fail failed, $skip skipped"
else
	echo "cli-diff: $pass passed, $fail failed"
fi
[ $fail -eq 0 ]
