#!/bin/sh
# SPDX-License-Identifier: MIT
#
# spr-irblock.sh — the fused inverted-residual block (docs/cpu-kernels.md,
# "Fused inverted-residual block") on Sapphire Rapids (AVX-512 / AMX), which
# the AVX2-only build hosts cannot run:
#
#   1. a static build of REV (a git worktree under /tmp) and its
#      test-irblock (fused vs the three Conv ops, identical bits, at every
#      level the CPU has, 1 and 2 threads), also under ASan+UBSan;
#   2. the zoo mobilenet_v2 converted without and with the pass
#      (ERT_FUSE_IRBLOCK=0 / 1: the same binary, 55 and 30 nodes): logits
#      byte-identical at scalar, avx2, avx512, avx512vnni and amx, 1 and 2
#      threads;
#   3. `edgert bench --loops 20`, unfused and fused alternated 3 rounds, at
#      1 thread (taskset -c CPU) and 2 (taskset -c CPU,CPU+1), at the best level;
#   4. `edgert profile --threads 1` of both, alternated: the time of the 13
#      fused blocks against their 38 Convs.
#
#   sh scripts/spr-irblock.sh [REV]        (REV defaults to main)
#
# Run from the repository root; keep the output:
#   sh scripts/spr-irblock.sh | tee /tmp/irb.txt
# Make the fusion the default (ERT_OPT_IRBLOCK_DEFAULT in
# libruntime/opt/opt-private.h) only if step 3 shows it faster at 1 and 2
# threads.
set -eu

R=$(git rev-parse --short "${1:-main}")
W=/tmp/irb-$R
J=$(nproc)
CPU=${CPU:-2}
CPU2=$CPU,$((CPU + 1))

[ -d "$W" ] || git worktree add --detach "$W" "$R"
make -C "$W" -j"$J" build/edgert-static build/tests/test-irblock >/dev/null
E=$W/build/edgert-static
"$E" info --cpu || "$E" --version

fail=0
echo "== test-irblock of $R (every level the CPU has)"
r=$(cd "$W" && build/tests/test-irblock 2>&1 | tail -3)
echo "$r"
case "$r" in *" 0 failed"*) ;; *) fail=1 ;; esac
make -C "$W" -j"$J" SAN=1 build-san/tests/test-irblock >/dev/null
r=$(cd "$W" && build-san/tests/test-irblock 2>&1 | tail -1)
echo "ASan+UBSan test-irblock: $r"
case "$r" in *" 0 failed"*) ;; *) fail=1 ;; esac

echo "== mobilenet_v2 unfused / fused: identical logits at every level"
ERT_FUSE_IRBLOCK=0 "$E" zoo mobilenet_v2 -o /tmp/irb-u.ert
ERT_FUSE_IRBLOCK=1 "$E" zoo mobilenet_v2 -o /tmp/irb-f.ert
for isa in scalar avx2 avx512 avx512vnni amx; do
	for t in 1 2; do
		for m in u f; do
			rm -rf "/tmp/irb-out-$m"
			mkdir -p "/tmp/irb-out-$m"
			ERT_CPU_ISA=$isa "$E" run "/tmp/irb-$m.ert" --seed 3 --threads "$t" \
				-o "/tmp/irb-out-$m" >/dev/null
		done
		if cmp "/tmp/irb-out-u/logits.npy" "/tmp/irb-out-f/logits.npy"; then
			echo "$isa, $t threads: logits identical"
		else
			fail=1
		fi
	done
done

echo "== bench, unfused (u) and fused (f) alternated (best level)"
for r in 1 2 3; do
	for m in u f; do
		printf 'round %s %s 1 thread:  ' "$r" "$m"
		taskset -c "$CPU" "$E" bench "/tmp/irb-$m.ert" --threads 1 --loops 20 |
			awk '$1 == "min" || $1 == "median" { printf "%s %s ms  ", $1, $2 } END { print "" }'
		printf 'round %s %s 2 threads: ' "$r" "$m"
		taskset -c "$CPU2" "$E" bench "/tmp/irb-$m.ert" --threads 2 --loops 20 |
			awk '$1 == "min" || $1 == "median" { printf "%s %s ms  ", $1, $2 } END { print "" }'
	done
done

echo "== profile, 1 thread: fused blocks against the Convs they replace"
for r in 1 2; do
	taskset -c "$CPU" "$E" profile /tmp/irb-u.ert --threads 1 --loops 10 > /tmp/irb-pu.txt
	taskset -c "$CPU" "$E" profile /tmp/irb-f.ert --threads 1 --loops 10 > /tmp/irb-pf.txt
	# the fused model keeps the other ops under their names: what it lacks, it fused
	awk 'NR == FNR { if ($2 != "InvertedResidual") keep[$1] = 1; else fb += $5; next }
	     $2 == "Conv" && !($1 in keep) { uc += $5; n++ }
	     END { printf "round %d: 13 fused blocks %.3f ms; their %d Convs %.3f ms\n", r, fb, n, uc }' \
		r="$r" /tmp/irb-pf.txt /tmp/irb-pu.txt
	grep '^total' /tmp/irb-pu.txt /tmp/irb-pf.txt
done
ERT_CPU_ISA=avx512 taskset -c "$CPU" "$E" profile /tmp/irb-f.ert --threads 1 --loops 10 | head -16

[ "$fail" = 0 ] && echo "ALL CHECKS PASSED" || echo "SOME CHECK FAILED"
