/* SPDX-License-Identifier: MIT */
/*
 * Depthwise int8 convolution rows in 16 lanes (level "avx512" and up):
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
	__m512i s[3];

#pragma GCC unroll 3
	for (int v = 0; v < NV; v++)
		s[v] = _mm512_setzero_si512();
	for (int t = 0; t < kk; t++) {
		const __m512i wt = _mm512_set1_epi32(w[t]);
		const int16_t *r = rows[t] + j;

#pragma GCC unroll 3
		for (int v = 0; v < NV; v++) {
			__m512i x = _mm512_cvtepi16_epi32(_mm256_loadu_si256((const __m256i *)(r + 16 * v)));

			s[v] = _mm512_add_epi32(s[v], _mm512_madd_epi16(x, wt));
		}
	}
#pragma GCC unroll 3
	for (int v = 0; v < NV; v++)
		_mm512_storeu_si512(acc + j + 16 * v, s[v]);
}

void ert_q8_dw_row_avx512(const int16_t *const *rows, const int32_t *w, int kk, int32_t *acc,
			  int64_t n)
{
	int64_t j = 0;

	for (; j + 48 <= n; j += 48)
		dw_block(3, rows, w, kk, j, acc);
	for (; j < n; j += 16)
		dw_block(1, rows, w, kk, j, acc);
}
