/* SPDX-License-Identifier: MIT */
/*
 * amx-tiles.h — the AMX tile state the tile kernels share (the int8 GEMM's
 * qgemm-ukernel-amx.c and the bf16 GEMM's sbgemm-amx.c). Include only from
 * files built for the amx level (*-amx.c).
 *
 * Both kernels use one configuration: tiles 0-2 hold C, 3 holds A, 4-6 hold
 * B, each 16 rows of 64 bytes. It is loaded once per thread (the state
 * stays until the thread exits; nothing else here uses tiles), so either
 * kernel may run after the other.
 */
#ifndef ERT_CPU_AMX_TILES_H
#define ERT_CPU_AMX_TILES_H

#include <stdbool.h>

/*
 * GCC's tile intrinsics are asm statements that do not tell the compiler
 * what memory they touch (tileloadd and tilestored take addresses in
 * registers; ldtilecfg names only the first 8 bytes of its operand): plain
 * stores to a buffer right before a tile load, or loads right after a tile
 * store, could be dropped or moved across them. Put this between them.
 */
#define ERT_AMX_MEMORY_BARRIER() __asm__ volatile("" ::: "memory")

extern __thread bool ert_amx_configured;
/* Load the tile configuration on this thread (amx-tiles-amx.c). */
void ert_amx_configure(void);

static inline void ert_amx_ensure_configured(void)
{
	if (!ert_amx_configured)
		ert_amx_configure();
}

#endif /* ERT_CPU_AMX_TILES_H */
