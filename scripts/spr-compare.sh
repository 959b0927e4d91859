#!/bin/sh
# SPDX-License-Identifier: MIT
#
# spr-compare.sh — check and time a CPU-kernel change on a machine with the
# levels the AVX2-only build hosts cannot run (Sapphire Rapids: avx512,
# avx512vnni, amx), BEFORE against AFTER:
#
#   build  static builds of both revisions (git worktrees under /tmp), AFTER's
#          test programs and, with SAN=1, the same under ASan+UBSan;
#   tests  AFTER's level tests (TESTS) at every level, forced one by one with
#          ERT_CPU_ISA (scalar .. the best the CPU has), and under ASan+UBSan
#          at the best level;
#   bytes  the zoo models converted by each side (ENV_B / ENV_A in the
#          environment of each side's conversion, e.g. ENV_A=ERT_FUSE_IRBLOCK=1
#          to compare a fused form with the same binary) and int8 resnet50
#          (edgert quantize, 2 random calibration samples, in the same
#          environment: ENV_A=ERT_FUSE_Q8_RESIDUAL=1): the int8 logits
#          byte for byte at every level and on both sides, at 1 and 2 threads;
#          the fp32 logits of both sides byte for byte too with SAME_FP32=1
#          (a change that must not alter a bit, such as a fused form);
#   time   `edgert bench --loops 10` of every model, BEFORE and AFTER
#          alternated ROUNDS times at 1 thread (taskset -c CPU) and 2
#          (CPU,CPU+1), at the best level: the minimum and median of each;
#   ops    `edgert profile --threads 1` of both sides, alternated: time per
#          op type and kernel, the minimum over the rounds of each op;
#   split  the bench programs of AFTER (bench/gemm-bench.c, qconv-split.c,
#          q8add-bench.c) linked against each side's library.
#
#   sh scripts/spr-compare.sh [BEFORE [AFTER]]     (defaults: main~1, main)
#   SECTIONS="tests bytes" sh scripts/spr-compare.sh ff08c0d main
#   ENV_A=ERT_FUSE_IRBLOCK=1 SAME_FP32=1 SECTIONS="bytes time ops" \
#       sh scripts/spr-compare.sh main main
#   ENV_A=ERT_FUSE_Q8_RESIDUAL=1 MODELS=resnet50 SAME_FP32=1 sh scripts/spr-compare.sh main main
#
# Knobs (environment): SECTIONS (default "tests bytes time ops split"),
# MODELS (zoo models, default "mobilenet_v2 resnet18 resnet50 vit_s16"),
# TESTS (test programs under build/tests), ROUNDS (default 4), CPU (default 2),
# SAN (1: also the tests under ASan+UBSan; default 1). Run from the repository
# root and keep the output: sh scripts/spr-compare.sh | tee /tmp/spr.txt. The
# last line says whether every check passed. The .devrun scripts of the lead's
# device runs do the same from prebuilt binaries where the machine has no
# build dependencies.
set -eu

B=$(git rev-parse --short "${1:-main~1}")
A=$(git rev-parse --short "${2:-main}")
SECTIONS=${SECTIONS:-tests bytes time ops split}
MODELS=${MODELS:-mobilenet_v2 resnet18 resnet50 vit_s16}
TESTS=${TESTS:-test-cpu-levels test-int8-levels test-int8-pool-levels test-vec-levels test-ops-pool test-ops-linalg test-ops-qlinalg test-ops-qfixed-npu test-npu-backend test-dq test-qdq test-cpu-bf16 test-irblock test-attention test-passes}
ROUNDS=${ROUNDS:-4}
CPU=${CPU:-2}
SAN=${SAN:-1}
ENV_B=${ENV_B:-}
ENV_A=${ENV_A:-}
J=$(nproc)
T=/tmp/sprc
LIBS="-lprotobuf-c -ljpeg -lpng16 -lz -lm -lpthread -ldrm -lOpenCL -lvulkan"
fail=0

has() { case " $SECTIONS " in *" $1 "*) return 0 ;; esac; return 1; }
ok() { case "$1" in *" 0 failed"*) ;; *) fail=1 ;; esac; }
tree() { echo "$T-$1"; }
edgert() { echo "$T-$1/build/edgert-static"; }
# side: B or A -> revision; envs of its conversions
rev() { if [ "$1" = B ]; then echo "$B"; else echo "$A"; fi; }
convenv() { if [ "$1" = B ]; then echo "$ENV_B"; else echo "$ENV_A"; fi; }

mkdir -p "$T"
for c in "$B" "$A"; do
	[ -d "$(tree "$c")" ] || git worktree add --detach "$(tree "$c")" "$c"
	make -C "$(tree "$c")" -j"$J" build/edgert-static build/libedgert.a >/dev/null
done
"$(edgert "$A")" info --cpu
best=$("$(edgert "$A")" info --cpu | sed -n 's/.*best level \([a-z0-9]*\).*/\1/p')
LEVELS=
for l in scalar avx2 avx512 avx512vnni amx; do
	LEVELS="$LEVELS $l"
	[ "$l" != "$best" ] || break
done
echo "levels: $LEVELS"

if has tests; then
	echo "== tests of $A at every level"
	for t in $TESTS; do
		make -C "$(tree "$A")" -j"$J" "build/tests/$t" >/dev/null
		for isa in $LEVELS; do
			r=$(cd "$(tree "$A")" && ERT_CPU_ISA=$isa "build/tests/$t" 2>&1 | tail -1)
			echo "$isa $t: $r"
			ok "$r"
		done
		[ "$SAN" = 1 ] || continue
		make -C "$(tree "$A")" -j"$J" SAN=1 "build-san/tests/$t" >/dev/null
		r=$(cd "$(tree "$A")" && "build-san/tests/$t" 2>&1 | tail -1)
		echo "ASan+UBSan $t: $r"
		ok "$r"
	done
fi

# the models, converted by each side with its environment
# (ENV_A / ENV_B may set several variables: their words split on purpose)
# shellcheck disable=SC2046
for s in B A; do
	for m in $MODELS; do
		env $(convenv $s) "$(edgert "$(rev $s)")" zoo "$m" -o "$T/$s-$m.ert" >/dev/null
	done
	env $(convenv $s) "$(edgert "$(rev $s)")" zoo resnet50 -o "$T/$s-r50.ert" >/dev/null
	env $(convenv $s) "$(edgert "$(rev $s)")" quantize "$T/$s-r50.ert" \
		-o "$T/$s-resnet50-int8.ert" --calib-random 2 >/dev/null
done

if has bytes; then
	echo "== logits: int8 at every level and on both sides; fp32 of both sides (SAME_FP32=${SAME_FP32:-0})"
	for isa in $LEVELS; do
		for th in 1 2; do
			for s in B A; do
				for m in resnet50-int8 $MODELS; do
					o="$T/out-$s-$m-$isa-$th"
					rm -rf "$o" && mkdir -p "$o"
					ERT_CPU_ISA=$isa "$(edgert "$(rev $s)")" run "$T/$s-$m.ert" \
						--seed 3 --threads "$th" -o "$o" >/dev/null
				done
			done
			ref="$T/out-B-resnet50-int8-scalar-1/logits.npy"
			if cmp -s "$ref" "$T/out-B-resnet50-int8-$isa-$th/logits.npy" &&
			   cmp -s "$ref" "$T/out-A-resnet50-int8-$isa-$th/logits.npy"; then
				echo "$isa, $th threads: int8 logits identical to scalar on both sides"
			else
				echo "$isa, $th threads: int8 logits DIFFER"
				fail=1
			fi
			[ "${SAME_FP32:-0}" = 1 ] || continue
			for m in $MODELS; do
				if cmp -s "$T/out-B-$m-$isa-$th/logits.npy" "$T/out-A-$m-$isa-$th/logits.npy"; then
					echo "$isa, $th threads: $m fp32 logits identical"
				else
					echo "$isa, $th threads: $m fp32 logits DIFFER"
					fail=1
				fi
			done
		done
	done
fi

if has time; then
	echo "== bench (ms), $B (B) and $A (A) alternated $ROUNDS times, best level"
	for m in $MODELS resnet50-int8; do
		for th in 1 2; do
			cpus=$CPU
			[ "$th" = 1 ] || cpus=$CPU,$((CPU + 1))
			for r in $(seq "$ROUNDS"); do
				for s in B A; do
					taskset -c "$cpus" "$(edgert "$(rev $s)")" bench "$T/$s-$m.ert" \
						--threads "$th" --loops 10 |
						awk -v k="$m $th $s" '$1 == "min" { mn = $2 } $1 == "median" { md = $2 }
						     END { print k, mn, md }'
				done
			done
		done
	done | awk '{ k = $1 " " $2 " threads " $3; if (!(k in mn) || $4 < mn[k]) mn[k] = $4; md[k] = md[k] " " $5 }
		END { for (k in mn) printf "%-32s min %8.3f  medians%s\n", k, mn[k], md[k] }' | sort
fi

if has ops; then
	echo "== profile, 1 thread, per op type and kernel (sum of each op's minimum over $ROUNDS rounds)"
	for m in $MODELS resnet50-int8; do
		for r in $(seq "$ROUNDS"); do
			for s in B A; do
				taskset -c "$CPU" "$(edgert "$(rev $s)")" profile "$T/$s-$m.ert" --threads 1 \
					--loops 10 | awk -v s="$s" -v m="$m" 'NF == 6 && $1 != "name" { print m, s, $1, $2, $4, $5 }'
			done
		done
	done | awk '{ k = $1 " " $2 " " $3; if (!(k in t) || $6 < t[k]) t[k] = $6; ty[k] = $1 " " $4 " " $5 " " $2 }
		END { for (k in t) s[ty[k]] += t[k]; for (x in s) printf "%s %.3f\n", x, s[x] }' |
		sort | awk '{ printf "%-14s %-18s %-36s %s %8.3f ms\n", $1, $2, $3, $4, $5 }'
fi

if has split; then
	echo "== bench programs of $A against both libraries (1 thread, taskset -c $CPU)"
	for p in gemm-bench qconv-split q8add-bench; do
		[ -f "$(tree "$A")/bench/$p.c" ] || continue
		for c in "$B" "$A"; do
			(cd "$(tree "$c")" && cc -O2 -Wno-unused-parameter -D_GNU_SOURCE \
				-Ilibruntime/include -Ilibruntime -Ibackends -I. \
				"$(tree "$A")/bench/$p.c" build/libedgert.a $LIBS -o "build/$p") ||
				{ echo "$p does not build against $c"; continue; }
			echo "-- $p, $c"
			# gemm-bench's argument is its thread count; the others' their repetitions
			if [ "$p" = gemm-bench ]; then
				taskset -c "$CPU" "$(tree "$c")/build/$p" 1 || fail=1
			else
				taskset -c "$CPU" "$(tree "$c")/build/$p" || fail=1
			fi
		done
	done
fi

[ "$fail" = 0 ] && echo "ALL CHECKS PASSED" || echo "SOME CHECK FAILED"
