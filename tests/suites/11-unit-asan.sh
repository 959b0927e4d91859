#!/bin/sh
# The unit tests again, built with ASan+UBSan (LeakSanitizer on): any invalid
# access, undefined behaviour or leak fails the test binary.
: "${ERT_BUILD:=build}"
echo "building unit tests with ASan+UBSan into build-san/"
mkdir -p build-san
# (unit-tests: the programs 10-unit.sh runs, not the backend-ops ones)
if ! make -s SAN=1 -j2 unit-tests >build-san/build.log 2>&1; then
	tail -n 30 build-san/build.log
	echo "unit-asan: 0 passed, 1 failed"
	exit 1
fi
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ERT_BUILD=build-san sh "$(dirname "$0")/10-unit.sh" | sed 's/^unit: /unit-asan: /'
