/* SPDX-License-Identifier: MIT */
/*
 * The small-plane convolutions' micro-kernel at avx512 (conv-smallplane.h):
 * the GEMM's 8 x 48 kernel (sgemm-ukernel-avx512.c: the same FMAs in the same
 * order, the same epilogue) with software prefetches of the weights the next
 * calls read spread through its K loop, one line every other K step.
 */
#include <immintrin.h>

#include "cpu/conv/conv-smallplane.h"
#include "cpu/gemm/sgemm-epi-avx512.h"

#define MR 8

static inline __attribute__((always_inline)) void
sp_kernel(const int NV, const int ROWS, int64_t kc, const float *restrict a,
	  const float *restrict b, int64_t ldb, float *restrict c, int64_t ldc, int64_t mr,
	  int64_t nr, const struct ert_sgemm_epi *e, const char *pf, int64_t pf_lines)
{
	__m512 acc[MR][3];

#pragma GCC unroll 8
	for (int i = 0; i < MR; i++)
#pragma GCC unroll 3
		for (int v = 0; v < NV; v++)
			acc[i][v] = _mm512_setzero_ps();
	for (int64_t p = 0; p < kc; p++) {
		__m512 bv[3];

		if (!(p & 1) && p < 2 * pf_lines) {
			_mm_prefetch(pf, _MM_HINT_T1);
			pf += 64;
		}
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
sp_kernel_rows(const int NV, int64_t kc, const float *restrict a, const float *restrict b,
	       int64_t ldb, float *restrict c, int64_t ldc, int64_t mr, int64_t nr,
	       const struct ert_sgemm_epi *e, const char *pf, int64_t pf_lines)
{
	if (mr > 1)
		sp_kernel(NV, 8, kc, a, b, ldb, c, ldc, mr, nr, e, pf, pf_lines);
	else
		sp_kernel(NV, 1, kc, a, b, ldb, c, ldc, mr, nr, e, pf, pf_lines);
}

void ert_conv_sp_ukernel_8x48__avx512(int64_t kc, const float *a, const float *b, int64_t ldb,
				      float *c, int64_t ldc, int64_t mr, int64_t nr,
				      const struct ert_sgemm_epi *e, const void *pf,
				      int64_t pf_lines)
{
	if (nr > 32)
		sp_kernel_rows(3, kc, a, b, ldb, c, ldc, mr, nr, e, pf, pf_lines);
	else if (nr > 16)
		sp_kernel_rows(2, kc, a, b, ldb, c, ldc, mr, nr, e, pf, pf_lines);
	else
		sp_kernel_rows(1, kc, a, b, ldb, c, ldc, mr, nr, e, pf, pf_lines);
}

void ert_conv_sp_gather_8__avx512(const float *x, int64_t in_sp, int64_t c_in, int64_t kk,
				  const int32_t *idx, float *dst)
{
	for (int64_t ci = 0; ci < c_in; ci++) {
		const float *plane = x + ci * in_sp;

		for (int64_t t = 0; t < kk; t++, dst += 8) {
			__m256i vi = _mm256_loadu_si256((const __m256i *)(const void *)(idx + t * 8));
			__mmask8 in = _mm256_cmpge_epi32_mask(vi, _mm256_setzero_si256());

			_mm256_storeu_ps(dst, _mm256_mmask_i32gather_ps(_mm256_setzero_ps(), in, vi,
									 plane, 4));
		}
	}
}
