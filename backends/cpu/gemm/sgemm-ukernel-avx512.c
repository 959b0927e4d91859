/* SPDX-License-Identifier: MIT */
/*
 * fp32 GEMM micro-kernel, AVX-512 (level "avx512" and up): 8 rows x 48
 * columns, 24 zmm accumulators, three B vectors and a broadcast of A per K
 * step. Narrow edge panels (nr <= 32, nr <= 16) run a 2- or 1-vector variant
 * instead of computing zero columns; the last vector's columns are masked.
 * A one-row panel (the last of M = 49 pixels in the small-plane
 * convolutions, every panel of an M = 1 product) runs a 1-row variant
 * instead of multiplying the panel's seven zero rows; its sums are the same
 * FMAs in the same order. (Variants for 2 and 4 rows too made this file
 * five times slower to build under the sanitizers, for rare shapes.)
 */
#include <immintrin.h>

#include "cpu/gemm/sgemm.h"
#include "cpu/gemm/sgemm-epi-avx512.h"

#define MR 8
#define NR 48

static inline __attribute__((always_inline)) void
kernel_nv(const int NV, const int ROWS, int64_t kc, const float *restrict a, const float *restrict b,
	  int64_t ldb, float *restrict c, int64_t ldc, int64_t mr, int64_t nr,
	  const struct ert_sgemm_epi *e)
{
	__m512 acc[MR][3];

#pragma GCC unroll 8
	for (int i = 0; i < MR; i++)
#pragma GCC unroll 3
		for (int v = 0; v < NV; v++)
			acc[i][v] = _mm512_setzero_ps();
	for (int64_t p = 0; p < kc; p++) {
		__m512 bv[3];

#pragma GCC unroll 3
		for (int v = 0; v < NV; v++)
			bv[v] = _mm512_loadu_ps(b + 16 * v);
#pragma GCC unroll 8
		for (int i = 0; i < ROWS; i++) {
			__m512 av = _mm512_set1_ps(a[i]);

#pragma GCC unroll 3
			for (int v = 0; v < NV; v++)
				acc[i][v] = _mm512_fmadd_ps(av, bv[v], acc[i][v]);
		}
		a += MR;
		b += ldb;
	}
	ert_sgemm_epi_store_avx512(NV, ROWS, acc, c, ldc, mr, nr, e);
}

static inline __attribute__((always_inline)) void
kernel_rows(const int NV, int64_t kc, const float *restrict a, const float *restrict b,
	    int64_t ldb, float *restrict c, int64_t ldc, int64_t mr, int64_t nr,
	    const struct ert_sgemm_epi *e)
{
	if (mr > 1)
		kernel_nv(NV, 8, kc, a, b, ldb, c, ldc, mr, nr, e);
	else
		kernel_nv(NV, 1, kc, a, b, ldb, c, ldc, mr, nr, e);
}

void ert_f32_gemm_ukernel_8x48__avx512(int64_t kc, const float *a, const float *b, int64_t ldb,
				       float *c, int64_t ldc, int64_t mr, int64_t nr,
				       const struct ert_sgemm_epi *e)
{
	if (nr > 32)
		kernel_rows(3, kc, a, b, ldb, c, ldc, mr, nr, e);
	else if (nr > 16)
		kernel_rows(2, kc, a, b, ldb, c, ldc, mr, nr, e);
	else
		kernel_rows(1, kc, a, b, ldb, c, ldc, mr, nr, e);
}
