#!/bin/sh
# SPDX-License-Identifier: MIT
#
# spr-q8add.sh — the fixed-rule QLinearAdd's 32-bit form (docs/int8.md, "The
# fixed-rule Add in 32-bit lanes") on a machine with AVX-512 / VNNI / AMX
# (Sapphire Rapids), which the AVX2-only build hosts cannot run:
#
#   1. static builds of BEFORE and AFTER (git worktrees under /tmp);
#   2. AFTER's int8 tests (test-int8-levels holds every level the CPU has to
#      the scalar one and to ert_requant_fixed() over every pair of bytes),
#      and test-int8-levels under ASan+UBSan;
#   3. bench/q8add-bench of AFTER: the 16 residual Adds of ResNet-50, the
#      32-bit form against the three requantisations' lanes, alternating in
#      one process, at avx2 and avx512 (the kernel avx512vnni and amx run),
#      pinned to one core; it exits 1 if a byte differs from the scalar's;
#   4. int8 resnet50 (edgert quantize, 2 random calibration samples): the
#      logits of both builds at scalar, avx2, avx512, avx512vnni and amx,
#      byte for byte;
#   5. `edgert profile --threads 1` of BEFORE and AFTER alternated 3 times
#      at amx: the 16 QLinearAdds' total and the whole run.
#
#   sh scripts/spr-q8add.sh [BEFORE [AFTER]]
#
# BEFORE defaults to ff08c0d (main before this work), AFTER to main. Run from
# the repository root; keep the output: sh scripts/spr-q8add.sh | tee /tmp/q8a.txt
set -eu

B=${1:-ff08c0d}
A=${2:-$(git rev-parse main)}
B=$(git rev-parse --short "$B")
A=$(git rev-parse --short "$A")
J=$(nproc)
CPU=${CPU:-2}
LIBS="-lprotobuf-c -ljpeg -lpng16 -lz -lm -lpthread -ldrm -lOpenCL -lvulkan"

for c in "$B" "$A"; do
	[ -d "/tmp/q8a-$c" ] || git worktree add --detach "/tmp/q8a-$c" "$c"
	make -C "/tmp/q8a-$c" -j"$J" build/edgert-static >/dev/null
done
make -C "/tmp/q8a-$A" -j"$J" build/libedgert.a build/tests/test-int8-levels \
	build/tests/test-ops-qlinalg build/tests/test-ops-qfixed-npu build/tests/test-npu-backend \
	>/dev/null
(cd "/tmp/q8a-$A" && cc -O2 -D_GNU_SOURCE -Ilibruntime/include -Ilibruntime -Ibackends -I. \
	bench/q8add-bench.c build/libedgert.a $LIBS -o build/q8add-bench)
EB=/tmp/q8a-$B/build/edgert-static
EA=/tmp/q8a-$A/build/edgert-static
"$EA" info --cpu || "$EA" --version

echo "== int8 tests of $A (every level the CPU has)"
fail=0
for t in test-int8-levels test-ops-qlinalg test-ops-qfixed-npu test-npu-backend; do
	r=$(cd "/tmp/q8a-$A" && "build/tests/$t" 2>&1 | tail -1)
	echo "$t: $r"
	case "$r" in *" 0 failed"*) ;; *) fail=1 ;; esac
done
make -C "/tmp/q8a-$A" -j"$J" SAN=1 build-san/tests/test-int8-levels >/dev/null
r=$(cd "/tmp/q8a-$A" && build-san/tests/test-int8-levels qlinear 2>&1 | tail -1)
echo "ASan+UBSan test-int8-levels qlinear: $r"
case "$r" in *" 0 failed"*) ;; *) fail=1 ;; esac

echo "== q8add-bench (old lanes vs 32-bit form, same process, taskset -c $CPU)"
for r in 1 2 3; do
	taskset -c "$CPU" "/tmp/q8a-$A/build/q8add-bench" 20 || fail=1
done

echo "== int8 resnet50: the same logits for both builds and every level"
"$EA" zoo resnet50 -o /tmp/q8a-r50.ert
"$EA" quantize /tmp/q8a-r50.ert -o /tmp/q8a-r50q.ert --calib-random 2 | tail -2
for isa in scalar avx2 avx512 avx512vnni amx; do
	for c in "$B" "$A"; do
		rm -rf "/tmp/q8a-out-$c-$isa"
		mkdir -p "/tmp/q8a-out-$c-$isa"
		ERT_CPU_ISA=$isa "/tmp/q8a-$c/build/edgert-static" run /tmp/q8a-r50q.ert \
			-o "/tmp/q8a-out-$c-$isa" --threads 1 >/dev/null
	done
	if cmp "/tmp/q8a-out-$B-scalar/logits.npy" "/tmp/q8a-out-$B-$isa/logits.npy" &&
	   cmp "/tmp/q8a-out-$B-scalar/logits.npy" "/tmp/q8a-out-$A-$isa/logits.npy"; then
		echo "$isa: logits identical to scalar for $B and $A"
	else
		fail=1
	fi
done

echo "== profile at amx, 1 thread, alternating (QLinearAdd total; whole run)"
for r in 1 2 3; do
	for c in "$B" "$A"; do
		printf 'round %s %s: ' "$r" "$c"
		ERT_CPU_ISA=amx taskset -c "$CPU" "/tmp/q8a-$c/build/edgert-static" profile \
			/tmp/q8a-r50q.ert --threads 1 --loops 10 |
			awk '$2 == "QLinearAdd" { s += $5; n++; k = $4 } $1 == "total" { t = $0 }
			     END { printf "QLinearAdd: %d ops, %.2f ms (%s); %s\n", n, s, k, t }'
	done
done

[ "$fail" = 0 ] && echo "ALL CHECKS PASSED" || echo "SOME CHECK FAILED"
