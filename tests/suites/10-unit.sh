#!/bin/sh
# Unit tests: every build/tests/test-* binary; counts are added up. They run
# two at a time (ERT_UNIT_JOBS=N for another number): most are one thread,
# and the long ones (test-npu-backend is half the ASan run) overlap with the
# rest on a 2-core machine. Each one's output goes to a file, and the results
# are printed in name order afterwards, as when they ran one by one.
: "${ERT_BUILD:=build}"
: "${ERT_UNIT_JOBS:=2}"
p=0 f=0
res="$ERT_BUILD/unit-results"
rm -rf "$res" && mkdir -p "$res" || exit 1
for t in "$ERT_BUILD"/tests/test-*; do
	[ -x "$t" ] && printf '%s\n' "$t"
done | xargs -r -P "$ERT_UNIT_JOBS" -I{} \
	sh -c 'n=$(basename "$1"); "$1" >"$2/$n.out" 2>&1; echo $? >"$2/$n.rc"' sh {} "$res"
for t in "$ERT_BUILD"/tests/test-*; do
	[ -x "$t" ] || continue
	n=$(basename "$t")
	out=$(cat "$res/$n.out" 2>/dev/null)
	rc=$(cat "$res/$n.rc" 2>/dev/null)
	: "${rc:=127}"
	line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -n 1)
	tp=$(echo "$line" | sed -nE 's/^([0-9]+) passed.*/\1/p')
	tf=$(echo "$line" | sed -nE 's/.* ([0-9]+) failed.*/\1/p')
	: "${tp:=0}" "${tf:=0}"
	if [ -z "$line" ] || { [ "$rc" -ne 0 ] && [ "$tf" -eq 0 ]; }; then
		tf=$((tf + 1))
		echo "$n: crashed or exited $rc without a summary"
	fi
	if [ "$tf" -ne 0 ]; then
		printf '%s\n' "$out" | grep -vE '^[0-9]+ passed' | sed "s|^|$n: |"
	fi
	echo "$n: $tp passed, $tf failed"
	p=$((p + tp)); f=$((f + tf))
done
echo "unit: $p passed, $f failed"
[ "$f" -eq 0 ]
