/* SPDX-License-Identifier: MIT */
/*
 * bf16 GEMM with fp32 accumulation (precision LOW) on AMX-BF16 (level "amx"):
 * 16 x 48 of C in three 16 x 16 fp32 tiles, one A tile of 16 rows x 16 K
 * pairs and three B tiles of 16 K pairs x 16 column pairs per tdpbf16ps step.
 *
 * B is the common bf16 panel ([K/2][48] pairs, read with a 192-byte stride);
 * A is packed by rows (ert_sbgemm_pack_a_rows(): each row's pairs of a K
 * block contiguous, so a tile row is 64 bytes of one row). A last chunk of
 * fewer than 16 pairs is copied into zeroed 16-row tiles. The finished tiles
 * go through a stack block into the AVX-512 epilogue the other kernels share.
 */
#include <immintrin.h>
#include <stdalign.h>
#include <string.h>

#include "cpu/amx-tiles.h"
#include "cpu/gemm/sgemm.h"
#include "cpu/gemm/sgemm-epi-avx512.h"

#define MR 16
#define NR 48

static inline __attribute__((always_inline)) void
finish(const int NV, float (*cb)[NR], float *c, int64_t ldc, int64_t mr, int64_t nr,
       const struct ert_sgemm_epi *e)
{
	for (int h = 0; h < 2 && 8 * h < mr; h++) {
		struct ert_sgemm_epi eh = *e;
		__m512 acc[8][3];

#pragma GCC unroll 8
		for (int i = 0; i < 8; i++)
#pragma GCC unroll 3
			for (int v = 0; v < NV; v++)
				acc[i][v] = _mm512_load_ps(&cb[8 * h + i][16 * v]);
		if (eh.bias)
			eh.bias += 8 * h;
		if (eh.res)
			eh.res += 8 * h * ldc;
		ert_sgemm_epi_store_avx512(NV, 8, acc, c + 8 * h * ldc, ldc, mr - 8 * h, nr, &eh);
	}
}

void ert_bf16_gemm_ukernel_16x48__amx(int64_t kq, const float *a, const float *b, int64_t ldb,
				      float *c, int64_t ldc, int64_t mr, int64_t nr,
				      const struct ert_sgemm_epi *e)
{
	const uint32_t *pa = (const uint32_t *)(const void *)a;
	const uint32_t *pb = (const uint32_t *)(const void *)b;
	const int nv = nr > 32 ? 3 : nr > 16 ? 2 : 1;
	alignas(64) float cb[MR][NR];
	int64_t q0 = 0;

	ert_amx_ensure_configured();
	_tile_zero(0);
	_tile_zero(1);
	_tile_zero(2);
	for (; q0 + 16 <= kq; q0 += 16) {
		const uint32_t *bq = pb + q0 * ldb;

		_tile_loadd(3, pa + q0, kq * 4);
		_tile_loadd(4, bq, ldb * 4);
		_tile_dpbf16ps(0, 3, 4);
		if (nv > 1) {
			_tile_loadd(5, bq + 16, ldb * 4);
			_tile_dpbf16ps(1, 3, 5);
		}
		if (nv > 2) {
			_tile_loadd(6, bq + 32, ldb * 4);
			_tile_dpbf16ps(2, 3, 6);
		}
	}
	if (q0 < kq) {
		alignas(64) uint32_t at[MR][16], bt[16][NR];
		int64_t r = kq - q0;

		memset(at, 0, sizeof(at));
		memset(bt, 0, sizeof(bt));
		for (int i = 0; i < MR; i++)
			memcpy(at[i], pa + i * kq + q0, (size_t)r * 4);
		for (int64_t q = 0; q < r; q++)
			memcpy(bt[q], pb + (q0 + q) * ldb, (size_t)nv * 64);
		ERT_AMX_MEMORY_BARRIER();
		_tile_loadd(3, at, 64);
		_tile_loadd(4, bt, NR * 4);
		_tile_dpbf16ps(0, 3, 4);
		if (nv > 1) {
			_tile_loadd(5, &bt[0][16], NR * 4);
			_tile_dpbf16ps(1, 3, 5);
		}
		if (nv > 2) {
			_tile_loadd(6, &bt[0][32], NR * 4);
			_tile_dpbf16ps(2, 3, 6);
		}
	}
	_tile_stored(0, cb, NR * 4);
	if (nv > 1)
		_tile_stored(1, &cb[0][16], NR * 4);
	if (nv > 2)
		_tile_stored(2, &cb[0][32], NR * 4);
	ERT_AMX_MEMORY_BARRIER();
	if (nv == 3)
		finish(3, cb, c, ldc, mr, nr, e);
	else if (nv == 2)
		finish(2, cb, c, ldc, mr, nr, e);
	else
		finish(1, cb, c, ldc, mr, nr, e);
}
