/* SPDX-License-Identifier: MIT */
/*
 * The small-plane convolutions' micro-kernel at avx512 (conv-smallplane.h):
 * the GEMM's 8 x 48 kernel body (cpu/gemm/sgemm-ukernel-avx512.h: the same
 * FMAs in the same order, the same epilogue) with software prefetches of the
 * weights the next calls read spread through its K loop, one line every
 * other K step.
 */
#include <immintrin.h>

#include "cpu/conv/conv-smallplane.h"
#include "cpu/gemm/sgemm-ukernel-avx512.h"

void ert_conv_sp_ukernel_8x48__avx512(int64_t kc, const float *a, const float *b, int64_t ldb,
				      float *c, int64_t ldc, int64_t mr, int64_t nr,
				      const struct ert_sgemm_epi *e, const void *pf,
				      int64_t pf_lines)
{
	ert_sgemm_8x48_avx512(kc, a, b, ldb, c, ldc, mr, nr, e, pf, pf_lines);
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
