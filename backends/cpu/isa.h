/* SPDX-License-Identifier: MIT */
/*
 * isa.h — which x86-64 kernel level the CPU backend runs.
 *
 * One build runs on any x86-64: kernels of each level live in files of their
 * own (name-<level>.c), compiled with that level's -m flags (see the Makefile),
 * and only called when the level is chosen. The level is chosen when the
 * backend is created: the best the CPU and the OS support, lowered by
 * ert_config.cpu_level and the ERT_CPU_ISA environment variable.
 */
#ifndef ERT_CPU_ISA_H
#define ERT_CPU_ISA_H

#include <stdbool.h>

#include "ert-backend-impl.h"

/* Ordered: each level implies every one below it. */
enum ert_cpu_isa {
	ERT_ISA_SCALAR = 0,   /* baseline x86-64 (SSE2): the reference kernels */
	ERT_ISA_AVX2,         /* AVX2 + FMA + F16C */
	ERT_ISA_AVX512,       /* AVX-512 F, BW, VL, DQ */
	ERT_ISA_AVX512VNNI,   /* + AVX512_VNNI */
	ERT_ISA_AMX,          /* + AMX-TILE, AMX-INT8, AMX-BF16, tile data permitted */
	ERT_ISA_COUNT
};

struct ert_cpu_features {
	bool sse41, avx, avx2, fma, f16c;
	bool avx512f, avx512bw, avx512vl, avx512dq, avx512cd;
	bool avx512vnni, avx512bf16, avx512fp16, avxvnni;
	bool amx_tile, amx_int8, amx_bf16;
	bool os_ymm, os_zmm, os_tile;   /* state the OS saves (XCR0), tile data permitted */
	char vendor[13];
	char brand[49];
	long l2_bytes;                  /* one core's L2 cache (sysconf); 0: unknown */
};

/* Detected once (thread-safe); never NULL. */
const struct ert_cpu_features *ert_cpu_features(void);

/* The best level this CPU and OS support. */
enum ert_cpu_isa ert_cpu_isa_best(void);

/* "scalar", "avx2", ...; and back (-1 when @name is none of them). */
const char *ert_cpu_isa_name(enum ert_cpu_isa isa);
int ert_cpu_isa_from_name(const char *name);

/*
 * The level a backend created with @cfg_level (an ert_cpu_level) runs: the
 * best supported, lowered to @cfg_level and to $ERT_CPU_ISA when set.
 * A level above what the CPU supports, or an unknown ERT_CPU_ISA, fails with
 * ERT_STATUS_UNSUPPORTED / ERT_STATUS_INVALID_ARGUMENT and a message.
 */
ert_status ert_cpu_isa_choose(int cfg_level, enum ert_cpu_isa *out, struct ert_err *err);

#endif /* ERT_CPU_ISA_H */
