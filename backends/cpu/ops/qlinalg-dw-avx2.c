/* SPDX-License-Identifier: MIT */
/*
 * Depthwise int8 convolution rows in 8 lanes (level "avx2"):
 * acc[j] = sum over taps t of w[t] * rows[t][j], the rows being int16
 * (x - x_zero_point) of a padded, stride-phased input plane and w[t] the
 * tap's (w - w_zero_point) as the int16 pair (w, 0): vpmaddwd of the
 * sign-extended input against it is the exact product. Three vectors of outputs per pass over the
 * taps; the rows have room for whole vectors past @n.
 */
#include <immintrin.h>

#include "cpu/ops/qlinalg.h"

static inline __attribute__((always_inline)) void
dw_block(const int NV, const int16_t *const *rows, const int32_t *w, int kk, int64_t j,
	 int32_t *acc)
{
	__m256i s[3];

#pragma GCC unroll 3
	for (int v = 0; v < NV; v++)
		s[v] = _mm256_setzero_si256();
	for (int t = 0; t < kk; t++) {
		const __m256i wt = _mm256_set1_epi32(w[t]);
		const int16_t *r = rows[t] + j;

#pragma GCC unroll 3
		for (int v = 0; v < NV; v++) {
			__m256i x = _mm256_cvtepi16_epi32(_mm_loadu_si128((const __m128i *)(r + 8 * v)));

			s[v] = _mm256_add_epi32(s[v], _mm256_madd_epi16(x, wt));
		}
	}
#pragma GCC unroll 3
	for (int v = 0; v < NV; v++)
		_mm256_storeu_si256((__m256i *)(acc + j + 8 * v), s[v]);
}

void ert_q8_dw_row_avx2(const int16_t *const *rows, const int32_t *w, int kk, int32_t *acc,
			int64_t n)
{
	int64_t j = 0;

	for (; j + 24 <= n; j += 24)
		dw_block(3, rows, w, kk, j, acc);
	for (; j < n; j += 8)
		dw_block(1, rows, w, kk, j, acc);
}
