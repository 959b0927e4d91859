/* SPDX-License-Identifier: MIT */
/*
 * fp32 GEMM micro-kernel, AVX2 + FMA: 6 rows x 16 columns, 12 ymm
 * accumulators, two B vectors and a broadcast of A per K step. An edge panel
 * of nr <= 8 runs the one-vector variant; partial vectors are stored through
 * a lane mask. A one-row panel runs a 1-row variant instead of multiplying
 * the panel's zero rows (the same FMAs in the same order for that row).
 */
#include <immintrin.h>

#include "cpu/gemm/sgemm.h"

#define MR 6
#define NR 16

static inline __attribute__((always_inline)) __m256 epi_act(__m256 v,
							   const struct ert_sgemm_epi *e)
{
	if (e->act == ERT_EPI_RELU)   /* max(v, 0) is v > 0 ? v : 0, as the reference */
		return _mm256_max_ps(v, _mm256_setzero_ps());
	if (e->act == ERT_EPI_CLIP)
		return _mm256_max_ps(_mm256_set1_ps(e->lo),
				     _mm256_min_ps(_mm256_set1_ps(e->hi), v));
	return v;
}

static inline __m256i lane_mask(int64_t n)
{
	const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);

	return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(n < 0 ? 0 : n > 8 ? 8 : n)), idx);
}

static inline __attribute__((always_inline)) void
kernel_nv(const int NV, const int ROWS, int64_t kc, const float *restrict a, const float *restrict b,
	  int64_t ldb, float *restrict c, int64_t ldc, int64_t mr, int64_t nr,
	  const struct ert_sgemm_epi *e)
{
	__m256 acc[MR][2];

#pragma GCC unroll 6
	for (int i = 0; i < MR; i++)
#pragma GCC unroll 2
		for (int v = 0; v < NV; v++)
			acc[i][v] = _mm256_setzero_ps();
	for (int64_t p = 0; p < kc; p++) {
		__m256 bv[2];

#pragma GCC unroll 2
		for (int v = 0; v < NV; v++)
			bv[v] = _mm256_loadu_ps(b + 8 * v);
#pragma GCC unroll 6
		for (int i = 0; i < ROWS; i++) {
			__m256 av = _mm256_broadcast_ss(a + i);

#pragma GCC unroll 2
			for (int v = 0; v < NV; v++)
				acc[i][v] = _mm256_fmadd_ps(av, bv[v], acc[i][v]);
		}
		a += MR;
		b += ldb;
	}

	const __m256 alpha = _mm256_set1_ps(e->alpha);
	const bool full = nr >= 8 * NV;
	__m256i mask[2];

#pragma GCC unroll 2
	for (int v = 0; v < NV; v++)
		mask[v] = lane_mask(nr - 8 * v);
	/* unrolled, so acc[][] is never indexed at run time (it stays in registers) */
#pragma GCC unroll 6
	for (int i = 0; i < ROWS; i++) {
		if (i >= mr)
			break;
		float *ci = c + i * ldc;
		__m256 base = e->load_c || !e->bias ? _mm256_setzero_ps()
						     : _mm256_set1_ps(e->bias[i]);

#pragma GCC unroll 2
		for (int v = 0; v < NV; v++) {
			__m256 x;

			if (e->load_c)
				base = full ? _mm256_loadu_ps(ci + 8 * v)
					    : _mm256_maskload_ps(ci + 8 * v, mask[v]);
			x = _mm256_add_ps(base, _mm256_mul_ps(alpha, acc[i][v]));
			if (e->cbias)
				x = _mm256_add_ps(x, full ? _mm256_loadu_ps(e->cbias + 8 * v)
							  : _mm256_maskload_ps(e->cbias + 8 * v,
									       mask[v]));
			if (e->res) {
				const float *r = e->res + i * ldc + 8 * v;

				x = _mm256_add_ps(x, full ? _mm256_loadu_ps(r)
							  : _mm256_maskload_ps(r, mask[v]));
			}
			x = epi_act(x, e);
			if (full)
				_mm256_storeu_ps(ci + 8 * v, x);
			else
				_mm256_maskstore_ps(ci + 8 * v, mask[v], x);
		}
	}
}

void ert_f32_gemm_ukernel_6x16__avx2(int64_t kc, const float *a, const float *b, int64_t ldb,
				     float *c, int64_t ldc, int64_t mr, int64_t nr,
				     const struct ert_sgemm_epi *e)
{
	if (nr > 8 && mr > 1)
		kernel_nv(2, 6, kc, a, b, ldb, c, ldc, mr, nr, e);
	else if (nr > 8)
		kernel_nv(2, 1, kc, a, b, ldb, c, ldc, mr, nr, e);
	else if (mr > 1)
		kernel_nv(1, 6, kc, a, b, ldb, c, ldc, mr, nr, e);
	else
		kernel_nv(1, 1, kc, a, b, ldb, c, ldc, mr, nr, e);
}
