#!/bin/sh
# Tracing from the CLI (issue 12, docs/tracing.md): edgert profile --trace
# and --svg on the zoo's mobilenet_v2 (CPU) and its int8 version on the NPU
# simulator. The trace must parse as JSON, hold one op span per executed node
# inside each run span, with time never going back and spans nested
# (tests/trace/check-trace.py); the SVG must parse as XML and name the
# slowest op that the same run's --json puts first; a path that cannot be
# written fails with one clear line and writes nothing else. Then edgert
# trace's errors (no BTF, no privileges) and, where this machine allows BPF,
# a traced CPU run validated the same way (the VM suite traces the NPU).
set -u
: "${ERT_BUILD:=build}"
E="$ERT_BUILD/edgert"
CHECK="python3 tests/trace/check-trace.py"
T=$(mktemp -d "${TMPDIR:-/tmp}/ert-trace.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT INT TERM
export ERT_NO_PROGRESS=1
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); echo "ok - $*"; }
bad() { fail=$((fail + 1)); echo "not ok - $*"; }
finish() {
	if [ "$skip" -ne 0 ]; then
		echo "trace: $pass passed, $fail failed, $skip skipped"
	else
		echo "trace: $pass passed, $fail failed"
	fi
	[ "$fail" -eq 0 ]
	exit $?
}

if [ ! -x "$E" ] || ! command -v python3 >/dev/null 2>&1; then
	bad "$E built and python3 installed"
	finish
fi
if ! "$E" zoo mobilenet_v2 -o "$T/mnv2.ert" >/dev/null 2>&1; then
	bad "zoo mobilenet_v2 builds"
	finish
fi

# json_ops FILE: the number of ops in a profile --json output
json_ops() { python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["ops"]))' "$1"; }
# json_slowest FILE: the name of the first (slowest) op
json_slowest() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ops"][0]["name"])' "$1"; }

# check_svg NAME SVG JSON: well-formed XML, its "slowest" text names JSON's slowest op
check_svg() {
	want=$(json_slowest "$3")
	got=$(python3 - "$2" <<'PY'
import sys
import xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
assert root.tag == ns + "svg", root.tag
bars = root.findall(ns + "g")
assert bars and all(b.find(ns + "rect") is not None for b in bars), "no bars"
print("".join(t.text for t in root.iter(ns + "text") if t.get("id") == "slowest"))
PY
	) 2>"$T/svg.err"
	case "$got" in
	"slowest op: $want ("*) ok "$1: SVG parses as XML and names the slowest op '$want'" ;;
	*) bad "$1: SVG: '$got' does not name the slowest op '$want': $(tail -n 1 "$T/svg.err")" ;;
	esac
}

# --- CPU: two timed runs, trace + chart + JSON from one run ------------------
if "$E" profile "$T/mnv2.ert" --loops 2 --threads 2 --json --trace "$T/cpu.json" \
	--svg "$T/cpu.svg" >"$T/cpu-prof.json" 2>"$T/err"; then
	ok "profile --trace --svg --json runs"
	n=$(json_ops "$T/cpu-prof.json")
	if $CHECK "$T/cpu.json" --ops "$n" --runs 2 >"$T/check.out"; then
		ok "CPU trace: $(cat "$T/check.out")"
	else
		sed 's/^/# /' "$T/check.out" | head -n 10
		bad "CPU trace valid"
	fi
	check_svg "CPU" "$T/cpu.svg" "$T/cpu-prof.json"
	# the op spans carry what the table shows
	if python3 - "$T/cpu.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
ops = [e for e in ev if e.get("cat") == "op"]
assert all(e["args"]["backend"] == "cpu" and e["args"]["name"] for e in ops)
assert any(e["name"] == "Conv" for e in ops)
names = [e for e in ev if e.get("ph") == "M" and e["name"] == "thread_name"]
assert len(names) == 1 and {e["tid"] for e in ops} == {names[0]["tid"]}
PY
	then ok "op spans: type as name, node name and backend in args, on the named thread track"
	else bad "op spans carry type, name, backend on a named track"; fi
else
	bad "profile --trace --svg --json runs: $(head -n 3 "$T/err")"
fi

# --- int8 on the NPU simulator -------------------------------------------------
if "$E" quantize "$T/mnv2.ert" -o "$T/mnv2-int8.ert" --calib-random 2 >"$T/q.log" 2>&1 &&
   ERT_NPU_DEVICE=sim ERT_QUIET=1 "$E" profile "$T/mnv2-int8.ert" --backend npu --loops 1 \
	--json --trace "$T/npu.json" --svg "$T/npu.svg" >"$T/npu-prof.json" 2>"$T/err"; then
	n=$(json_ops "$T/npu-prof.json")
	if $CHECK "$T/npu.json" --ops "$n" --runs 1 >"$T/check.out" &&
	   grep -q '"backend": "npu"' "$T/npu.json"; then
		ok "NPU simulator trace: $(cat "$T/check.out")"
	else
		sed 's/^/# /' "$T/check.out" | head -n 10
		bad "NPU simulator trace valid with npu ops"
	fi
	check_svg "NPU simulator" "$T/npu.svg" "$T/npu-prof.json"
	grep -q '>QLinearConv on npu (' "$T/npu.svg" && ok "chart has a QLinearConv on npu bar" ||
		bad "chart has a QLinearConv on npu bar"
else
	bad "int8 mobilenet_v2 profiled on the NPU simulator: $(tail -n 3 "$T/err" "$T/q.log")"
fi

# --- the checker itself fails on broken traces ---------------------------------
if [ -s "$T/cpu.json" ]; then
	python3 - "$T/cpu.json" "$T" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
ops = [i for i, e in enumerate(ev) if e.get("cat") == "op"]
def dump(name, events):
    json.dump({"traceEvents": events}, open(f"{sys.argv[2]}/{name}.json", "w"))
dump("bad-missing", [e for i, e in enumerate(ev) if i != ops[3]])
back = [dict(e) for e in ev]
back[ops[5]]["ts"] = 0.0
dump("bad-backwards", back)
part = [dict(e) for e in ev]
part[ops[7]]["dur"] = part[ops[7]]["dur"] + part[ops[8]]["dur"] / 2 + 1
dump("bad-overlap", part)
PY
	printf '{"traceEvents": [' >"$T/bad-json.json"
	for b in missing backwards overlap json; do
		if $CHECK "$T/bad-$b.json" --ops "$(json_ops "$T/cpu-prof.json")" --runs 2 >/dev/null; then
			bad "check-trace.py accepts a broken trace ($b)"
		else
			ok "check-trace.py rejects a broken trace ($b)"
		fi
	done
fi

# --- files that cannot be written ------------------------------------------------
for case in "trace:$T/no/such/dir/t.json" "trace:$T" "svg:$T/no/such/dir/c.svg"; do
	opt=${case%%:*} path=${case#*:}
	rm -f "$T/other.svg" "$T/other.json"
	if [ "$opt" = trace ]; then other="--svg $T/other.svg"; else other="--trace $T/other.json"; fi
	# shellcheck disable=SC2086
	"$E" profile "$T/mnv2.ert" --loops 1 --"$opt" "$path" $other >"$T/out" 2>"$T/err"
	rc=$?
	if [ $rc -eq 1 ] && [ "$(wc -l <"$T/err")" -eq 1 ] &&
	   grep -q "^edgert profile: failed to write '$path': " "$T/err" && [ ! -s "$T/out" ] &&
	   [ ! -e "$T/other.svg" ] && [ ! -e "$T/other.json" ]; then
		ok "--$opt $path: exit 1, '$(cat "$T/err")', nothing else written"
	else
		bad "--$opt $path: exit $rc, stderr '$(head -n 2 "$T/err")', stdout $(wc -c <"$T/out") bytes"
	fi
done
"$E" profile "$T/mnv2.ert" --trace >"$T/out" 2>"$T/err"
if [ $? -eq 1 ] && grep -q "needs a value" "$T/err"; then
	ok "--trace without a file is refused"
else
	bad "--trace without a file: $(cat "$T/err")"
fi

# --- edgert trace (BPF) outside the VM ----------------------------------------------
# Errors first: each is one line naming the problem and pointing to profile --trace.
expect_trace_error() {
	name=$1 pat=$2; shift 2
	rm -f "$T/tr.json"
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
	if [ $rc -eq 1 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q -- "$pat" "$T/err" &&
	   grep -q "edgert profile --trace FILE" "$T/err" && [ ! -e "$T/tr.json" ] && [ ! -s "$T/out" ]; then
		ok "trace $name: exit 1, '$(cat "$T/err")'"
	else
		bad "trace $name: exit $rc, '$(head -n 2 "$T/err")'"
	fi
}
"$E" trace "$T/mnv2.ert" >"$T/out" 2>"$T/err"
if [ $? -eq 1 ] && grep -q "missing -o FILE" "$T/err"; then ok "trace without -o refused"; else
	bad "trace without -o: $(cat "$T/err")"; fi
if "$E" trace --help | grep -q "CAP_BPF" && "$E" trace --help | grep -q "^EXAMPLES"; then
	ok "trace --help"; else bad "trace --help"; fi
"$E" trace "$T/mnv2.ert" -o "$T/tr.json" --loops 0 >"$T/out" 2>"$T/err"
if [ $? -eq 1 ] && grep -q -- "--loops must be 1..1000, got '0'" "$T/err" && [ ! -e "$T/tr.json" ]; then
	ok "trace --loops 0 refused"; else bad "trace --loops 0: $(cat "$T/err")"; fi
if "$E" trace "$T/mnv2.ert" -o "$T/tr.json" --warmup 0 2>&1 | grep -q "built without the BPF tracer"; then
	# a build without clang/bpftool/libbpf/BTF (mk/bpf.mk): the one message, nothing traced
	expect_trace_error "not built" "built without the BPF tracer" "$E" trace "$T/mnv2.ert" -o "$T/tr.json"
	skip=$((skip + 1)); echo "ok - trace on this machine # SKIP this edgert has no BPF tracer"
else
	expect_trace_error "without BTF" "no kernel BTF at /nonexistent/vmlinux" \
		env ERT_TRACE_BTF=/nonexistent/vmlinux "$E" trace "$T/mnv2.ert" -o "$T/tr.json"
	if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1; then
		# nobody may write the trace here: only the privileges are missing
		chmod 1777 "$T"
		expect_trace_error "as an unprivileged user" "needs root, or CAP_BPF and CAP_PERFMON" \
			setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
			"$E" trace "$T/mnv2.ert" -o "$T/tr.json"
		chmod 700 "$T"
	fi
	# a model that is not there: the session's error, after the tracer loaded
	if [ "$(id -u)" -eq 0 ]; then
		"$E" trace "$T/none.ert" -o "$T/tr.json" >"$T/out" 2>"$T/err"
		if [ $? -eq 1 ] && grep -q "cannot open '$T/none.ert'\|needs root\|failed to load" "$T/err" &&
		   [ ! -e "$T/tr.json" ]; then
			ok "trace of a missing model: '$(cat "$T/err")'"
		else
			bad "trace of a missing model: $(cat "$T/err")"
		fi
	fi
	# the real thing, where this machine lets us load BPF (root, BTF)
	rm -f "$T/tr.json"
	if "$E" trace "$T/mnv2.ert" -o "$T/tr.json" --loops 2 --threads 2 >"$T/out" 2>"$T/err"; then
		n=$(json_ops "$T/cpu-prof.json")
		if $CHECK "$T/tr.json" --ops "$n" --runs 2 >"$T/check.out"; then
			ok "edgert trace (USDT) on the CPU: $(cat "$T/check.out")"
		else
			sed 's/^/# /' "$T/check.out" | head -n 10
			bad "edgert trace (USDT) on the CPU: trace valid"
		fi
		if grep -q "^traced 2 runs of .*14 USDT probes" "$T/out" && grep -q "^Conv  *cpu " "$T/out" &&
		   grep -q "^idle: " "$T/out" && grep -q "^copies between backends: " "$T/out"; then
			ok "trace summary: per op type, copies, idle gaps"
		else
			sed 's/^/# /' "$T/out"
			bad "trace summary lines"
		fi
	elif grep -q "needs root\|failed to load\|failed to attach\|no kernel BTF" "$T/err"; then
		skip=$((skip + 1)); echo "ok - trace on this machine # SKIP $(cat "$T/err")"
	else
		bad "edgert trace: $(head -n 3 "$T/err")"
	fi
fi

finish
