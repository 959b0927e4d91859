#!/bin/sh
# gcc builds the tree for the other suites; this one proves clang builds the
# userspace part too with the same -Wall -Wextra -Werror flags.
if ! command -v clang >/dev/null 2>&1; then
	echo "clang: not installed (scripts/install-deps.sh installs it)"
	echo "clang: 0 passed, 1 failed"
	exit 1
fi
mkdir -p build-clang
if make -s CC=clang BUILD=build-clang -j2 lib tools tests >build-clang/build.log 2>&1; then
	echo "clang: library, CLI and unit tests build warning-free"
	echo "clang: 1 passed, 0 failed"
else
	grep -E 'error|warning' build-clang/build.log | head -n 30
	echo "clang: 0 passed, 1 failed"
	exit 1
fi
