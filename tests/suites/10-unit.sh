#!/bin/sh
# Unit tests: every build/tests/test-* binary; counts are added up.
: "${ERT_BUILD:=build}"
p=0 f=0
for t in "$ERT_BUILD"/tests/test-*; do
	[ -x "$t" ] || continue
	out=$("$t" 2>&1)
	rc=$?
	line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -n 1)
	tp=$(echo "$line" | sed -nE 's/^([0-9]+) passed.*/\1/p')
	tf=$(echo "$line" | sed -nE 's/.* ([0-9]+) failed.*/\1/p')
	: "${tp:=0}" "${tf:=0}"
	if [ -z "$line" ] || { [ $rc -ne 0 ] && [ "$tf" -eq 0 ]; }; then
		tf=$((tf + 1))
		echo "$(basename "$t"): crashed or exited $rc without a summary"
	fi
	if [ "$tf" -ne 0 ]; then
		printf '%s\n' "$out" | grep -vE '^[0-9]+ passed' | sed "s|^|$(basename "$t"): |"
	fi
	echo "$(basename "$t"): $tp passed, $tf failed"
	p=$((p + tp)); f=$((f + tf))
done
echo "unit: $p passed, $f failed"
[ "$f" -eq 0 ]
