#!/bin/sh
# edgert bench --suite in its short forms: the table's and the JSON's
# structure, the per-level peak loops (ERT_CPU_ISA), the temporary models
# removed afterwards, and bad options refused with one clear line. It checks
# that the benchmark runs and reports, not how fast anything is: the figures
# of a shared test machine mean nothing (docs/performance.md).
# Prints "N passed, N failed[, N skipped]" last; exits non-zero on a failure.
set -u
: "${ERT_BUILD:=build}"
E="$ERT_BUILD/edgert"
T=$(mktemp -d "${TMPDIR:-/tmp}/ert-bench.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT INT TERM
export ERT_NO_PROGRESS=1
pass=0 fail=0 skip=0

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# expect_ok NAME CMD...: exit 0 and nothing on stderr; stdout in $T/out
expect_ok() {
	name=$1; shift
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
	if [ $rc -ne 0 ]; then
		bad "$name: exit $rc: $(head -n 3 "$T/err")"
	elif [ -s "$T/err" ]; then
		bad "$name: stderr: $(head -n 3 "$T/err")"
	else
		ok
	fi
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

# expect_line NAME ERE: some line of the last stdout matches the extended regex
expect_line() {
	if grep -Eq -- "$2" "$T/out"; then ok; else bad "$1: no line matches '$2'"; fi
}

if [ ! -x "$E" ]; then
	echo "bench: $E not built"
	echo "0 passed, 1 failed"
	exit 1
fi

NUM='[0-9]+\.[0-9]+'
mkdir -p "$T/tmp"

# --- help and bad options ---------------------------------------------------
expect_ok "bench --suite --help" "$E" bench --suite --help
expect_line "bench --suite --help" '^USAGE: edgert bench --suite'
expect_line "bench --suite --help lists --models" '^  -m, --models LIST'
expect_ok "bench --help" "$E" bench --help
expect_line "bench --help mentions --suite" 'edgert bench --suite'

expect_fail "--loops 0" "--loops must be 1..100000, got '0'" "$E" bench --suite --loops 0
expect_fail "--loops abc" "--loops must be 1..100000, got 'abc'" "$E" bench --suite --loops abc
expect_fail "--loops without value" "option '--loops' needs a value" "$E" bench --suite --loops
expect_fail "--warmup -1" "--warmup must be 0..10000" "$E" bench --suite --warmup -1
expect_fail "--threads 0" "--threads must be 1..32, got '0'" "$E" bench --suite --threads 0
expect_fail "--threads 33" "--threads must be 1..32, got '33'" "$E" bench --suite --threads 1,33
expect_fail "--threads x" "--threads must be 1..32, got 'x'" "$E" bench --suite --threads 1,x
expect_fail "--threads empty item" "--threads has an empty item in '1,,2'" \
	"$E" bench --suite --threads 1,,2
expect_fail "--threads trailing comma" "--threads has an empty item" "$E" bench --suite --threads 1,
expect_fail "--threads empty" "--threads has an empty item" "$E" bench --suite --threads ''
expect_fail "--threads twice" "--threads lists 2 twice" "$E" bench --suite --threads 1,2,2
expect_fail "--threads 9 items" "--threads takes at most 8 items" \
	"$E" bench --suite --threads 1,2,3,4,5,6,7,8,9
expect_fail "--models unknown" "--models: unknown model 'resnet51' (see 'edgert zoo --list')" \
	"$E" bench --suite --models mobilenet_v2,resnet51
expect_fail "--models twice" "--models lists 'resnet18' twice" \
	"$E" bench --suite --models resnet18,resnet18
expect_fail "--models empty item" "--models has an empty item" "$E" bench --suite --models ,resnet18
expect_fail "--max-time 0" "--max-time must be 1..3600, got '0'" "$E" bench --suite --max-time 0
expect_fail "--clock bogus" "--clock must be wall or cpu, got 'bogus'" "$E" bench --suite --clock bogus
expect_fail "--calib 0" "--calib must be 1..1000, got '0'" "$E" bench --suite --calib 0
expect_fail "unknown option" "unknown option '--frobnicate'" "$E" bench --suite --frobnicate
expect_fail "a model operand" "unexpected argument 'x.ert' (--suite builds its own models)" \
	"$E" bench --suite x.ert
expect_fail "bad ERT_CPU_ISA" "ERT_CPU_ISA='bogus' is not one of" \
	env ERT_CPU_ISA=bogus "$E" bench --suite --models mobilenet_v2 --loops 1

# --- the table: one small model, 1 loop, 1 and 2 threads ---------------------
expect_ok "suite text" env TMPDIR="$T/tmp" "$E" bench --suite --models mobilenet_v2 \
	--threads 1,2 --loops 1 --warmup 0 --no-int8
# (a cpuset or taskset around the suite leaves fewer CPUs than are online)
expect_line "suite text: header" \
	'^edgert bench --suite: kernel level [a-z0-9]+, ([0-9]+ online CPUs?|[0-9]+ of [0-9]+ online CPUs \(affinity\)), threads 1,2$'
expect_line "suite text: cpu" '^cpu +[^ ].*best level'
expect_line "suite text: clock" '^clock +wall: every time is wall-clock time$'
expect_line "suite text: load" '^load +[0-9.]+ at start, [0-9.]+ at end'
expect_line "suite text: peak" "^fp32 peak +1 +$NUM GFLOP/s +[0-9]+ +$NUM GFLOP/s +[0-9]+ [a-z]+ (FMA|mulps)"
expect_line "suite text: memory" "^memory +1 +$NUM GB/s +[0-9]+ +$NUM GB/s +b\\[i\\] = s \\* a\\[i\\] over 2 x [0-9]+ MiB"
expect_line "suite text: model header" '^model +GMACs +thr +runs +min ms +median ms +GFLOP/s +% peak +speed-up +target$'
expect_line "suite text: 1 thread" "^mobilenet_v2 +0\\.301 +1 +1 +$NUM +$NUM +$NUM +$NUM% +- +>= 65%: (met|MISSED by $NUM pts \\(needs ${NUM}x faster\\))$"
expect_line "suite text: 2 threads" "^mobilenet_v2 +0\\.301 +2 +1 +$NUM +$NUM +$NUM +$NUM% +${NUM}x +-$"
expect_line "suite text: targets" '^targets \(issue 8\)$'
expect_line "suite text: mobilenet target" "^  mobilenet_v2 +% of 1-core peak, 1 thread +$NUM% +>= 65%: (met|MISSED)"
expect_line "suite text: unmeasured target" '^  resnet50 +% of 1-core peak, 1 thread +- +not measured in this run$'
# issue 8 sets an int8 target only from the avx512vnni level up: one more row not measured there
case $(sed -n 's/^edgert bench --suite: kernel level \([a-z0-9]*\),.*/\1/p' "$T/out") in
avx512vnni | amx) unmeasured=6 ;;
*) unmeasured=5 ;;
esac
expect_line "suite text: summary" "^targets: [0-9]+ met, [0-9]+ missed, $unmeasured not measured; [0-9.]+ s in all\$"
if grep -q 'by conv layer class\|^int8 ' "$T/out"; then
	bad "suite text: resnet50 tables without resnet50"
else
	ok
fi
# --- under an affinity mask of one CPU: the peak, the bandwidth and the default
# thread counts stop at the CPUs the process may run on
# (the first CPU this shell may run on: CPU 0 may lie outside a cpuset)
cpu0=$(taskset -pc $$ 2>/dev/null | sed -n 's/.*: *\([0-9][0-9]*\).*/\1/p')
if command -v taskset >/dev/null 2>&1 && [ -n "$cpu0" ] && [ "$(nproc)" -ge 2 ]; then
	cp "$T/out" "$T/out-2"
	expect_ok "suite under taskset -c $cpu0" env TMPDIR="$T/tmp" taskset -c "$cpu0" "$E" \
		bench --suite --models mobilenet_v2 --loops 1 --warmup 0 --no-int8
	expect_line "suite under taskset: header" \
		'^edgert bench --suite: kernel level [a-z0-9]+, 1 of [0-9]+ online CPUs \(affinity\), threads 1$'
	expect_line "suite under taskset: one peak thread" \
		"^fp32 peak +1 +$NUM GFLOP/s +1 +$NUM GFLOP/s +[0-9]+ [a-z]+ (FMA|mulps)"
	cp "$T/out-2" "$T/out"
else
	skip=$((skip + 1))
	echo "SKIP: suite under an affinity mask: no taskset or a single CPU"
fi
# every figure of the model rows is positive: min, median, GFLOP/s, % of peak
if awk '/^mobilenet_v2 / && !($5 > 0 && $6 >= $5 && $7 > 0 && $8 + 0 > 0) { bad = 1 }
	END { exit bad }' "$T/out"; then
	ok
else
	bad "suite text: a figure is not positive: $(grep '^mobilenet_v2' "$T/out")"
fi
if [ -z "$(ls -A "$T/tmp")" ]; then ok; else bad "suite text: left behind in TMPDIR: $(ls -A "$T/tmp")"; fi

# --- JSON: resnet50 with its conv classes and int8, 1 loop ------------------
expect_ok "suite json" env TMPDIR="$T/tmp" "$E" bench --suite --models resnet50 --threads 1 \
	--loops 1 --warmup 0 --calib 1 --json
if command -v python3 >/dev/null 2>&1; then
	if python3 - "$T/out" <<'EOF' >"$T/py" 2>&1; then
import json, sys
r = json.load(open(sys.argv[1]))
assert r["threads"] == [1] and r["loops"] == 1 and r["clock"] == "wall", r["threads"]
assert r["peak"]["gflops_1"] > 0 and r["peak"]["gflops_all"] > 0
assert r["memory"]["gbs_1"] > 0 and r["memory"]["buffer_bytes"] >= 256 << 20
(m,) = r["models"]
assert m["name"] == "resnet50" and m["macs"] == 4089184256, m["macs"]
(t,) = m["runs"]
assert t["threads"] == 1 and t["runs"] == 1 and 0 < t["min_ms"] <= t["median_ms"]
assert abs(t["gflops"] - 2 * m["macs"] / t["min_ms"] * 1e-6) < 1e-2 * t["gflops"]
assert abs(t["pct_of_peak"] - 100 * t["gflops"] / r["peak"]["gflops_1"]) < 0.01
cc = r["conv_classes"]
assert cc["model"] == "resnet50"
cls = {c["class"]: c for c in cc["classes"]}
assert [c["class"] for c in cc["classes"]] == ["first conv", "1x1", "3x3", "depthwise", "other conv", "other ops"]
assert cls["first conv"]["layers"] == 1 and cls["1x1"]["layers"] == 36 and cls["3x3"]["layers"] == 16
assert cls["depthwise"]["layers"] == 0 and cls["depthwise"]["runs"] == []
# the classes' MACs add up to the model's
assert sum(c["macs"] for c in cc["classes"]) == m["macs"]
assert all(c["runs"][0]["min_ms"] > 0 for c in cc["classes"] if c["layers"])
q = r["int8"]
assert q["model"] == "resnet50" and q["method"] == "kl" and q["calib"] == 1
assert q["quantized_nodes"] > 50 and q["int8"]["runs"] == 1 and q["int8"]["min_ms"] > 0
assert abs(q["speedup"] - q["fp32"]["min_ms"] / q["int8"]["min_ms"]) < 1e-3 * q["speedup"] + 1e-4
tg = {(x["model"], x["figure"]): x for x in r["targets"]}
x = tg[("resnet50", "pct_of_peak_1t")]
assert x["measured"] and x["goal"] == 100 and x["met"] == (x["value"] >= 100)
assert not tg[("resnet18", "pct_of_peak_1t")]["measured"]
assert not tg[("resnet50", "speedup_2t")]["measured"]
if r["level"] in ("avx512vnni", "amx"):
    x = tg[("resnet50", "int8_speedup_1t")]
    assert x["measured"] and x["goal"] == (4 if r["level"] == "amx" else 2)
else:
    assert ("resnet50", "int8_speedup_1t") not in tg
EOF
		ok
	else
		bad "suite json: $(tail -n 3 "$T/py")"
	fi
else
	for k in '"peak"' '"memory"' '"models"' '"conv_classes"' '"int8"' '"targets"'; do
		if grep -q "$k" "$T/out"; then ok; else bad "suite json: no $k"; fi
	done
fi
if [ -z "$(ls -A "$T/tmp")" ]; then ok; else bad "suite json: left behind in TMPDIR: $(ls -A "$T/tmp")"; fi

# --- the peak loop of each lower level (ERT_CPU_ISA) --------------------------
levels=$("$E" info --cpu | sed -n 's/^cpu .*best level \([a-z0-9]*\);.*/\1/p')
for spec in "scalar:12 SSE mulps+addps chains" "avx2:12 ymm FMA chains (AVX2)" \
	"avx512:16 zmm FMA chains (AVX-512)"; do
	lvl=${spec%%:*} what=${spec#*:}
	case "$lvl:$levels" in
	scalar:*) ;;
	avx2:avx2 | avx2:avx512*) ;;
	avx2:amx | avx512:amx | avx512:avx512*) ;;
	*) skip=$((skip + 1)); echo "SKIP: peak at $lvl: the CPU's best level is $levels"; continue ;;
	esac
	expect_ok "suite at $lvl" env ERT_CPU_ISA="$lvl" "$E" bench --suite --models mobilenet_v2 \
		--threads 1 --loops 1 --warmup 0 --no-int8 --clock cpu
	expect_line "suite at $lvl: level" "^edgert bench --suite: kernel level $lvl,"
	expect_line "suite at $lvl: clock" '^clock +cpu: '
	expect_line "suite at $lvl: row" "^mobilenet_v2 +0\\.301 +1 +1 +$NUM +$NUM +$NUM +$NUM% +- +>= 65%"
	if grep -F -q "$what" "$T/out"; then ok; else bad "suite at $lvl: peak not measured with '$what'"; fi
done

if [ "$skip" -ne 0 ]; then
	echo "$pass passed, $fail failed, $skip skipped"
else
	echo "$pass passed, $fail failed"
fi
[ "$fail" -eq 0 ]
