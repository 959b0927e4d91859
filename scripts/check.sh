#!/bin/sh
# Run every test suite in tests/suites/ (in name order) and add up their counts.
# A suite is an executable script whose last line of output is
# "N passed, N failed[, N skipped]"; a suite that exits non-zero without
# failing a test counts as one failure.
set -u

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here" || exit 1
: "${ERT_BUILD:=build}"
export ERT_BUILD ERT_CONFORMANCE
logdir="$ERT_BUILD/check-logs"
mkdir -p "$logdir"

total_p=0 total_f=0 total_s=0
failed_suites=""
times=""
check_start=$(date +%s)
for suite in tests/suites/*.sh; do
	name=$(basename "$suite" .sh)
	echo "== $name"
	suite_start=$(date +%s)
	log="$logdir/$name.log"
	{ sh "$suite" 2>&1; echo $? >"$logdir/.rc"; } | tee "$log"
	rc=$(cat "$logdir/.rc" 2>/dev/null || echo 0)
	rm -f "$logdir/.rc"
	line=$(grep -E '^([A-Za-z-]+: )?[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
	p=$(echo "$line" | sed -nE 's/.*\b([0-9]+) passed.*/\1/p')
	f=$(echo "$line" | sed -nE 's/.*\b([0-9]+) failed.*/\1/p')
	s=$(echo "$line" | sed -nE 's/.*\b([0-9]+) skipped.*/\1/p')
	: "${p:=0}" "${f:=0}" "${s:=0}"
	if [ -z "$line" ] || [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "$name: suite did not complete (see $log)"
		f=$((f + 1))
	fi
	[ "$f" -ne 0 ] && failed_suites="$failed_suites $name"
	times="$times $name $(( $(date +%s) - suite_start ))s"
	total_p=$((total_p + p)); total_f=$((total_f + f)); total_s=$((total_s + s))
done

echo "suite times:$times; $(( $(date +%s) - check_start )) s in all"
[ -n "$failed_suites" ] && echo "failing suites:$failed_suites"
if [ "$total_s" -ne 0 ]; then
	echo "$total_p passed, $total_f failed, $total_s skipped"
else
	echo "$total_p passed, $total_f failed"
fi
[ "$total_f" -eq 0 ]
