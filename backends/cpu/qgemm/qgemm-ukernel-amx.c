/* SPDX-License-Identifier: MIT */
/*
 * int8 GEMM micro-kernel, AMX (level "amx"): 16 rows x 48 columns as three
 * 16 x 16 int32 accumulator tiles, one A tile (16 rows x 64 signed bytes:
 * 16 K4 steps) and three B tiles (16 K4 steps x 16 column quads, unsigned)
 * per step of 16 K4 steps, multiplied by TDPBSUD (signed A, unsigned B).
 * The products are exact and the int32 sums wrap, as the reference's do.
 *
 * Packed A for this kernel (ERT_QGEMM_A_AMX) is a block of 16 rows laid out
 * as [K4 / 16][16 rows][64 bytes], K4 rounded up to 16 with zeros, so a
 * tile load takes a chunk with a stride of 64 bytes, and K4 step q0 (a
 * multiple of 16) starts at q0 * 16 * 4 bytes as in the other formats.
 * Packed B is the common [K4][w][4] panel: a tile of 16 columns at step q0
 * is 16 rows of 64 bytes, w * 4 bytes apart. A last chunk of fewer than 16
 * steps reads B through a copy (the rows past K are not in the panel); the
 * zeros of A there make whatever those rows hold count for nothing.
 *
 * The tile configuration, shared with the bf16 tile kernel, is loaded once
 * per thread (cpu/amx-tiles.h). The epilogue is the AVX-512 one.
 */
#include <immintrin.h>
#include <stdalign.h>
#include <string.h>

#include "cpu/amx-tiles.h"
#include "cpu/qgemm/qgemm.h"

#define MR 16
#define CHUNK 16	/* K4 steps per tile multiply */
#define PF_CHUNKS 2	/* A prefetched this many tile steps ahead */

/* One step of 16 K4 steps: A at @a (stride 64), B rows @bs bytes apart. */
#define STEP(NV, a, b, bs)                                                \
	do {                                                              \
		_tile_loadd(3, (a), 64);                                  \
		_tile_loadd(4, (b), (bs));                                \
		_tile_dpbsud(0, 3, 4);                                    \
		if ((NV) > 1) {                                           \
			_tile_loadd(5, (b) + 64, (bs));                   \
			_tile_dpbsud(1, 3, 5);                            \
		}                                                         \
		if ((NV) > 2) {                                           \
			_tile_loadd(6, (b) + 128, (bs));                  \
			_tile_dpbsud(2, 3, 6);                            \
		}                                                         \
	} while (0)

static inline __attribute__((always_inline)) void
kernel_nv(const int NV, int64_t k4, const void *a, const uint8_t *b, int64_t bw, int32_t *c,
	  int64_t ldc, bool add)
{
	const uint8_t *ap = a;
	const int64_t bs = 4 * bw, cs = 4 * ldc;
	int64_t q = 0;

	ert_amx_ensure_configured();
	if (add) {
		_tile_loadd(0, c, cs);
		if (NV > 1)
			_tile_loadd(1, c + 16, cs);
		if (NV > 2)
			_tile_loadd(2, c + 32, cs);
	} else {
		_tile_zero(0);
		if (NV > 1)
			_tile_zero(1);
		if (NV > 2)
			_tile_zero(2);
	}
	for (; q + CHUNK <= k4; q += CHUNK) {
		/*
		 * A's tile PF_CHUNKS steps ahead: a tile load waits for the
		 * multiplies that read its tile before, so the A loads do
		 * not overlap each other, and where A comes from memory (the
		 * weights of resnet50's last stage, 2.4 MB a layer) each step
		 * would wait a full miss
		 */
		if (q + PF_CHUNKS * CHUNK < k4)
			for (int l = 0; l < 16; l++)
				_mm_prefetch((const char *)ap + (q + PF_CHUNKS * CHUNK) * MR * 4 + 64 * l,
					     _MM_HINT_T0);
		STEP(NV, ap + q * MR * 4, b + q * bs, bs);
	}
	if (q < k4) {
		/* the last rows of the panel, copied into 16 rows */
		alignas(64) uint8_t tail[CHUNK][3 * 64];
		const int64_t rem = k4 - q;

		memset(tail, 0, sizeof(tail));
		for (int64_t r = 0; r < rem; r++)
			memcpy(tail[r], b + (q + r) * bs, (size_t)NV * 64);
		ERT_AMX_MEMORY_BARRIER();
		STEP(NV, ap + q * MR * 4, &tail[0][0], (int64_t)sizeof(tail[0]));
	}
	_tile_stored(0, c, cs);
	if (NV > 1)
		_tile_stored(1, c + 16, cs);
	if (NV > 2)
		_tile_stored(2, c + 32, cs);
	/* and what the tiles stored is memory the caller reads */
	ERT_AMX_MEMORY_BARRIER();
}

ERT_QGEMM_UKERNEL(1)
ERT_QGEMM_UKERNEL(2)
ERT_QGEMM_UKERNEL(3)

const struct ert_qgemm_kernel ert_qgemm_kernel_amx = {
	.name = "q8-gemm-16x48-amx",
	.mr = MR, .vc = 16, .nv = 3,
	.kc4 = 128,	/* a multiple of CHUNK: only K's last block has a short chunk */
	.afmt = ERT_QGEMM_A_AMX,
	.ukernel = { ukernel_1, ukernel_2, ukernel_3 },
	.epi = ert_qgemm_epi_avx512,
	.epi_rows = ert_qgemm_epi_rows_avx512,
};
