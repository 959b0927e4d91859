/* SPDX-License-Identifier: MIT */
/*
 * fp32 GEMM micro-kernel, AVX-512 (level "avx512" and up): 8 rows x 48
 * columns, 24 zmm accumulators, three B vectors and a broadcast of A per K
 * step. Narrow edge panels (nr <= 32, nr <= 16) run a 2- or 1-vector variant
 * instead of computing zero columns; the last vector's columns are masked.
 */
#include <immintrin.h>

#include "cpu/gemm/sgemm.h"

#define MR 8
#define NR 48

static inline __attribute__((always_inline)) __m512 epi_act(__m512 v,
							   const struct ert_sgemm_epi *e)
{
	if (e->act == ERT_EPI_RELU)   /* max(v, 0) is v > 0 ? v : 0, as the reference */
		return _mm512_max_ps(v, _mm512_setzero_ps());
	if (e->act == ERT_EPI_CLIP)   /* lo > min(hi, v) ... keeps a NaN */
		return _mm512_max_ps(_mm512_set1_ps(e->lo),
				     _mm512_min_ps(_mm512_set1_ps(e->hi), v));
	return v;
}

static inline __attribute__((always_inline)) void
kernel_nv(const int NV, int64_t kc, const float *restrict a, const float *restrict b,
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
		for (int i = 0; i < MR; i++) {
			__m512 av = _mm512_set1_ps(a[i]);

#pragma GCC unroll 3
			for (int v = 0; v < NV; v++)
				acc[i][v] = _mm512_fmadd_ps(av, bv[v], acc[i][v]);
		}
		a += MR;
		b += ldb;
	}

	__mmask16 mask[3];
	const __m512 alpha = _mm512_set1_ps(e->alpha);

#pragma GCC unroll 3
	for (int v = 0; v < NV; v++) {
		int64_t left = nr - 16 * v;

		mask[v] = left >= 16 ? 0xffff : left <= 0 ? 0 : (__mmask16)((1u << left) - 1);
	}
#pragma GCC unroll 8
	for (int i = 0; i < MR; i++) {
		if (i >= mr)
			break;
		float *ci = c + i * ldc;
		__m512 base = e->load_c || !e->bias ? _mm512_setzero_ps() : _mm512_set1_ps(e->bias[i]);

#pragma GCC unroll 3
		for (int v = 0; v < NV; v++) {
			__m512 x = acc[i][v];

			if (e->load_c)
				base = _mm512_maskz_loadu_ps(mask[v], ci + 16 * v);
			x = _mm512_add_ps(base, _mm512_mul_ps(alpha, x));
			if (e->res)
				x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(mask[v],
									   e->res + i * ldc + 16 * v));
			_mm512_mask_storeu_ps(ci + 16 * v, mask[v], epi_act(x, e));
		}
	}
}

void ert_f32_gemm_ukernel_8x48__avx512(int64_t kc, const float *a, const float *b, int64_t ldb,
				       float *c, int64_t ldc, int64_t mr, int64_t nr,
				       const struct ert_sgemm_epi *e)
{
	if (nr > 32)
		kernel_nv(3, kc, a, b, ldb, c, ldc, mr, nr, e);
	else if (nr > 16)
		kernel_nv(2, kc, a, b, ldb, c, ldc, mr, nr, e);
	else
		kernel_nv(1, kc, a, b, ldb, c, ldc, mr, nr, e);
}
