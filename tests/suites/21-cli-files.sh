#!/bin/sh
# The edgert CLI against odd paths and outputs (issue 15): -o onto a FIFO, a
# symbolic link, a device node or a directory; FIFOs named as inputs; a full
# or closed standard output; sloppy --backend lists and .npy headers;
# conform on a directory without test cases. Every hang is caught by a
# timeout and counts as a failure.
# Prints "N passed, N failed[, N skipped]" last; exits non-zero on a failure.
set -u
: "${ERT_BUILD:=build}"
E="$ERT_BUILD/edgert"
T=$(mktemp -d "${TMPDIR:-/tmp}/ert-files.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT INT TERM
export ERT_NO_PROGRESS=1
pass=0 fail=0 skip=0
# long enough for a cold run under load, short next to a hang
LIMIT=60

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# run_limited CMD...: run with a time limit; rc 124 means it hung
run_limited() {
	timeout -k 5 "$LIMIT" "$@" >"$T/out" 2>"$T/err"
}

# expect_ok NAME CMD...
expect_ok() {
	name=$1; shift
	run_limited "$@"
	rc=$?
	if [ $rc -eq 0 ]; then ok; else bad "$name: exit $rc: $(head -n 3 "$T/err")"; fi
}

# expect_fail NAME PATTERN CMD...: exit 1, one stderr line matching PATTERN
expect_fail() {
	name=$1 pat=$2; shift 2
	run_limited "$@"
	rc=$?
	lines=$(wc -l <"$T/err")
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		bad "$name: hung (killed after ${LIMIT}s)"
	elif [ $rc -ne 1 ]; then
		bad "$name: exit $rc, expected 1: $(head -n 3 "$T/err")"
	elif [ "$lines" -ne 1 ]; then
		bad "$name: $lines lines on stderr, expected 1: $(head -n 3 "$T/err")"
	elif ! grep -q -- "$pat" "$T/err"; then
		bad "$name: message '$(cat "$T/err")' lacks '$pat'"
	else
		ok
	fi
}

# check NAME CONDITION...: a shell test
check() {
	name=$1; shift
	if "$@"; then ok; else bad "$name"; fi
}

if [ ! -x "$E" ]; then
	echo "cli-files: $E not built"
	echo "0 passed, 1 failed"
	exit 1
fi
M="$T/m.ert"
if ! "$E" zoo mobilenet_v2 -o "$M" >/dev/null 2>&1; then
	echo "cli-files: cannot build the zoo model"
	echo "0 passed, 1 failed"
	exit 1
fi

# --- -o onto things that are not regular files (item 4) ----------------------
mkfifo "$T/fifo.ert"
for cmd in zoo quantize; do
	if [ $cmd = zoo ]; then set -- zoo mobilenet_v2; else set -- quantize "$M" --calib-random 1; fi
	expect_fail "$cmd -o FIFO refused" "refusing to write '$T/fifo.ert': it is a FIFO" \
		"$E" "$@" -o "$T/fifo.ert"
	check "$cmd -o FIFO: still a FIFO" test -p "$T/fifo.ert"
done
expect_fail "zoo -o directory refused" "it is a directory" "$E" zoo mobilenet_v2 -o "$T"
check "no temporary file left beside the FIFO" \
	test -z "$(find "$T" -maxdepth 1 -name 'fifo.ert.tmp.*' -print)"

# a symbolic link is written through: the file it names is replaced, the link stays
cp "$M" "$T/target.ert"
chmod 600 "$T/target.ert"
ln -s target.ert "$T/link.ert"
expect_ok "zoo -o symlink" "$E" zoo resnet18 -o "$T/link.ert"
check "symlink kept" test -L "$T/link.ert"
check "symlink target replaced" sh -c "'$E' info '$T/target.ert' | grep -q 'MACs *1814073344 '"
check "symlink target keeps its mode" test "$(stat -c %a "$T/target.ert")" = 600
ln -s nowhere.ert "$T/dangling.ert"
expect_fail "zoo -o dangling symlink refused" "symbolic link that leads nowhere" \
	"$E" zoo mobilenet_v2 -o "$T/dangling.ert"
check "dangling symlink untouched" test -L "$T/dangling.ert"

# device nodes made in the scratch directory (never under /dev): written in place
if [ "$(id -u)" -eq 0 ] && mknod "$T/null" c 1 3 2>/dev/null && mknod "$T/full" c 1 7 2>/dev/null; then
	expect_ok "convert-like write to a null device node" "$E" zoo mobilenet_v2 -o "$T/null"
	check "null device node still a device" test -c "$T/null"
	expect_fail "write to a full device node" "No space left on device" \
		"$E" zoo mobilenet_v2 -o "$T/full"
	check "full device node still a device" test -c "$T/full"
else
	echo "skip: device nodes need root (mknod)"
	skip=$((skip + 4))
fi

# run -o DIR where an output's .npy is a FIFO
mkdir -p "$T/outdir"
mkfifo "$T/outdir/logits.npy"
expect_fail "run -o with a FIFO output refused" "refusing to write '$T/outdir/logits.npy': it is a FIFO" \
	"$E" run "$M" -o "$T/outdir"

# --- FIFOs as inputs (item 6) -------------------------------------------------
for cmd in info run bench profile; do
	expect_fail "$cmd FIFO model" "cannot open '$T/fifo.ert': it is a FIFO, not a regular file" \
		"$E" $cmd "$T/fifo.ert"
done
mkfifo "$T/fifo.onnx" "$T/fifo.npy"
expect_fail "convert FIFO input" "cannot open '$T/fifo.onnx': it is a FIFO" \
	"$E" convert "$T/fifo.onnx" -o "$T/x.ert"
expect_fail "run -i FIFO" "cannot open '$T/fifo.npy': it is a FIFO" \
	"$E" run "$M" -i "input=$T/fifo.npy"
mkdir -p "$T/cal"
mkfifo "$T/cal/a.npy"
# a calibration directory lists regular .npy files only: the FIFO is not a sample
expect_fail "quantize --calib with a FIFO sample" "no calibration samples in '$T/cal'" \
	"$E" quantize "$M" -o "$T/q.ert" --calib "$T/cal"

# --- standard output that cannot be written (item 8) --------------------------
for c in "info" "info --json" "bench --loops 1 --warmup 0 --json"; do
	# shellcheck disable=SC2086
	timeout -k 5 "$LIMIT" "$E" $c "$M" >/dev/full 2>"$T/err"
	rc=$?
	if [ $rc -eq 1 ] && grep -q "failed to write to standard output: No space left on device" "$T/err"; then
		ok
	else
		bad "$c >/dev/full: exit $rc: $(head -n 2 "$T/err")"
	fi
done
timeout -k 5 "$LIMIT" "$E" info "$M" >&- 2>"$T/err"
rc=$?
if [ $rc -eq 1 ] && grep -q "failed to write to standard output" "$T/err"; then ok; else
	bad "info with stdout closed: exit $rc: $(head -n 2 "$T/err")"; fi

# --- --backend lists ------------------------------------------------------------
expect_fail "--backend trailing comma" "empty backend name in --backend 'cpu,'" \
	"$E" run "$M" --backend cpu,
expect_fail "--backend double comma" "empty backend name in --backend 'cpu,,npu'" \
	"$E" run "$M" --backend cpu,,npu
expect_fail "--backend leading comma" "empty backend name" "$E" run "$M" --backend ,cpu
expect_fail "--backend empty" "empty backend name" "$E" run "$M" --backend ""

# --- .npy headers -----------------------------------------------------------------
# mkrawnpy FILE HEADER BYTES: a version 1.0 .npy whose header is HEADER exactly
mkrawnpy() {
	hdr=$2
	hlen=$(printf '%s' "$hdr" | wc -c)
	{
		printf '\223NUMPY\001\000'
		printf "\\$(printf %03o $((hlen % 256)))\\$(printf %03o $((hlen / 256)))"
		printf '%s' "$hdr"
		head -c "$3" /dev/zero
	} >"$1"
}
dict="{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }"
mkrawnpy "$T/nonl.npy" "$dict" 8
expect_fail ".npy header without its newline" "header does not end with a newline" \
	"$E" run "$M" -i "$T/nonl.npy"
# a NUL inside descr: must not read as '<f4'
printf '\223NUMPY\001\000\100\000%s' "{'descr': '<f4" >"$T/nul.npy"
printf '\000' >>"$T/nul.npy"
printf "%s" "x', 'fortran_order': False, 'shape': (2,), }" >>"$T/nul.npy"
size=$(($(wc -c <"$T/nul.npy") - 10))
printf "%$((64 - size - 1))s\n" "" >>"$T/nul.npy"
head -c 8 /dev/zero >>"$T/nul.npy"
expect_fail ".npy descr with a NUL and junk" "malformed 'descr'" "$E" run "$M" -i "$T/nul.npy"
mkrawnpy "$T/junk.npy" "$dict x
" 8
expect_fail ".npy junk after the dict" "trailing bytes after the header dict" \
	"$E" run "$M" -i "$T/junk.npy"

# --- conform on a directory without test cases ----------------------------------------
mkdir -p "$T/empty"
expect_fail "conform on an empty directory" "no test cases" "$E" conform "$T/empty"

if [ $skip -ne 0 ]; then
	echo "cli-files: $pass passed, $fail failed, $skip skipped"
else
	echo "cli-files: $pass passed, $fail failed"
fi
[ $fail -eq 0 ]
