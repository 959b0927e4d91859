/* SPDX-License-Identifier: MIT */
/*
 * The byte pools' inner loops in 64-byte lanes (level "avx512" and up; see
 * struct ert_q8_pool_kernels): as qpool-avx2.c, tails under byte masks, so
 * no byte past the last tap is read. Exact, so the same bytes as the
 * portable loops of pool.c and qlinear-pool.c. MaxPool runs the avx2
 * max_rows().
 */
#include <immintrin.h>

#include "cpu/ops/qlinear-kernels.h"

/* Bytes [0, n) of a vector, n <= 64. */
static inline __mmask64 first(int64_t n)
{
	return n >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << n) - 1;
}

/*
 * psadbw against 0 sums 8 unsigned bytes into each 64-bit lane; int8 is
 * summed as x ^ 0x80 = x + 128 and 128 a value taken off at the end.
 */
static void plane_sums_avx512(const uint8_t *x, int64_t planes, int64_t sp, bool s8,
			      int64_t *sums)
{
	const __m512i bias = _mm512_set1_epi8(s8 ? (char)0x80 : 0), zero = _mm512_setzero_si512();

	for (int64_t p = 0; p < planes; p++) {
		const uint8_t *q = x + p * sp;
		__m512i acc = zero;

		for (int64_t i = 0; i < sp; i += 64) {
			__mmask64 m = first(sp - i);
			__m512i v = _mm512_maskz_mov_epi8(
				m, _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, q + i), bias));

			acc = _mm512_add_epi64(acc, _mm512_sad_epu8(v, zero));
		}
		sums[p] = _mm512_reduce_add_epi64(acc) - (s8 ? 128 * sp : 0);
	}
}

const struct ert_q8_pool_kernels ert_q8_pool_avx512 = {
	.name = "q8-pool-avx512",
	.max_rows = ert_q8_max_rows_avx2,
	.plane_sums = plane_sums_avx512,
};
