/* SPDX-License-Identifier: MIT */
/*
 * The AVX-512 GEMM micro-kernels' epilogue (struct ert_sgemm_epi): alpha,
 * bias or the previous partial sum, the column bias, the residual, then
 * ReLU or Clip, stored through lane masks. Shared by the fp32 and bf16
 * kernels, so that both finish a block of C with the same operations;
 * include only from files built with AVX-512 flags.
 */
#ifndef ERT_CPU_SGEMM_EPI_AVX512_H
#define ERT_CPU_SGEMM_EPI_AVX512_H

#include <immintrin.h>

#include "cpu/gemm/sgemm.h"

static inline __attribute__((always_inline)) __m512 ert_sgemm_epi_act_avx512(
	__m512 v, const struct ert_sgemm_epi *e)
{
	if (e->act == ERT_EPI_RELU)   /* max(v, 0) is v > 0 ? v : 0, as the reference */
		return _mm512_max_ps(v, _mm512_setzero_ps());
	if (e->act == ERT_EPI_CLIP)   /* lo > min(hi, v) ... keeps a NaN */
		return _mm512_max_ps(_mm512_set1_ps(e->lo),
				     _mm512_min_ps(_mm512_set1_ps(e->hi), v));
	return v;
}

/*
 * Under AddressSanitizer (make SAN=1, the fuzz build) one out-of-line copy
 * of the store below serves every NV and ROWS of a file: inlined for each,
 * with every masked load and store checked lane by lane, it made the kernel
 * files the slowest of those builds. The optimised build inlines it.
 */
#if defined(__SANITIZE_ADDRESS__)
#define ERT_SGEMM_EPI_INLINE static __attribute__((noinline, unused))
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ERT_SGEMM_EPI_INLINE static __attribute__((noinline, unused))
#endif
#endif
#ifndef ERT_SGEMM_EPI_INLINE
#define ERT_SGEMM_EPI_INLINE static inline __attribute__((always_inline))
#endif

/*
 * Finish rows [0, mr) and columns [0, nr) of C from NV vectors per row of
 * @acc; mr is at most ROWS (a constant where inlined: the rows the caller
 * computed).
 */
ERT_SGEMM_EPI_INLINE void
ert_sgemm_epi_store_avx512(const int NV, const int ROWS, __m512 acc[][3], float *restrict c,
			   int64_t ldc, int64_t mr, int64_t nr, const struct ert_sgemm_epi *e)
{
	__mmask16 mask[3];
	const __m512 alpha = _mm512_set1_ps(e->alpha);

#pragma GCC unroll 3
	for (int v = 0; v < NV; v++) {
		int64_t left = nr - 16 * v;

		mask[v] = left >= 16 ? 0xffff : left <= 0 ? 0 : (__mmask16)((1u << left) - 1);
	}
#pragma GCC unroll 8
	for (int i = 0; i < ROWS; i++) {
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
			if (e->cbias)
				x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(mask[v], e->cbias + 16 * v));
			if (e->res)
				x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(mask[v],
									   e->res + i * ldc + 16 * v));
			_mm512_mask_storeu_ps(ci + 16 * v, mask[v], ert_sgemm_epi_act_avx512(x, e));
		}
	}
}

#endif /* ERT_CPU_SGEMM_EPI_AVX512_H */
