#!/bin/sh
# gcc builds the tree for the other suites; this one proves clang builds the
# userspace part too (the bench/ programs included) with the same -Wall
# -Wextra -Werror flags, and that the thread pool's optional counters build
# with both compilers.
if ! command -v clang >/dev/null 2>&1; then
	echo "clang: not installed (scripts/install-deps.sh installs it)"
	echo "clang: 0 passed, 1 failed"
	exit 1
fi
mkdir -p build-clang
p=0 f=0
if make -s CC=clang BUILD=build-clang -j2 lib tools tests bench-progs >build-clang/build.log 2>&1; then
	echo "clang: library, CLI, unit tests and bench/ programs build warning-free"
	p=$((p + 1))
else
	grep -E 'error|warning' build-clang/build.log | head -n 30
	f=$((f + 1))
fi
# The thread pool's counters (make POOL_STATS=1, scripts/pool-stats.sh) are
# compiled only on request; compile them here with both compilers so they
# do not rot. Only the one file has them.
for cc in cc clang; do
	out=build-clang/poolstats-$cc
	if make -s CC=$cc BUILD=$out POOL_STATS=1 $out/obj/backends/cpu/threadpool.o \
		>build-clang/poolstats-$cc.log 2>&1; then
		echo "clang: thread-pool counters (POOL_STATS=1) build warning-free with $cc"
		p=$((p + 1))
	else
		grep -E 'error|warning' build-clang/poolstats-$cc.log | head -n 30
		echo "FAIL thread-pool counters (POOL_STATS=1) with $cc"
		f=$((f + 1))
	fi
done
echo "clang: $p passed, $f failed"
[ "$f" -eq 0 ]
