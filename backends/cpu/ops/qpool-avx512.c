/* SPDX-License-Identifier: MIT */
/*
 * The byte pools' inner loops in 64-byte lanes (level "avx512" and up; see
 * struct ert_q8_pool_kernels): as qpool-avx2.c, tails under byte masks, so
 * no byte past the last tap is read. Exact, so the same bytes as the
 * portable loops of pool.c and qlinear-pool.c.
 */
#include <immintrin.h>

#include "cpu/ops/qlinear-kernels.h"

/* Bytes [0, n) of a vector, n <= 64. */
static inline __mmask64 first(int64_t n)
{
	return n >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << n) - 1;
}

static inline __m512i max64(__m512i a, __m512i b, bool s8)
{
	return s8 ? _mm512_max_epi8(a, b) : _mm512_max_epu8(a, b);
}

static inline __m256i max32(__m256i a, __m256i b, bool s8)
{
	return s8 ? _mm256_max_epi8(a, b) : _mm256_max_epu8(a, b);
}

/* The max over @nr rows of the bytes at offset @o under @m. */
static inline __m512i rows64(const uint8_t *const *rows, int nr, int64_t o, __mmask64 m,
			     bool s8)
{
	__m512i v = _mm512_maskz_loadu_epi8(m, rows[0] + o);

	for (int r = 1; r < nr; r++)
		v = max64(v, _mm512_maskz_loadu_epi8(m, rows[r] + o), s8);
	return v;
}

/* The body of max_rows(), inlined with constant arguments where they are common. */
static inline __attribute__((always_inline)) void
rows_body(const uint8_t *const *rows, int nr, uint8_t *y, int64_t n, int64_t k, int64_t s,
	  int64_t d, bool s8)
{
	if (s == 1) {
		for (int64_t i = 0; i < n; i += 64) {
			__mmask64 m = first(n - i);
			__m512i v = rows64(rows, nr, i, m, s8);

			for (int64_t c = 1; c < k; c++)
				v = max64(v, rows64(rows, nr, i + c * d, m, s8), s8);
			_mm512_mask_storeu_epi8(y + i, m, v);
		}
		return;
	}
	/* stride 2: 32 outputs from the even bytes of 63 (vpmovwb keeps each word's low byte) */
	for (int64_t i = 0; i < n; i += 32) {
		int64_t nl = n - i < 32 ? n - i : 32;
		__mmask64 m = first(2 * nl - 1);
		__m256i v = _mm512_cvtepi16_epi8(rows64(rows, nr, 2 * i, m, s8));

		for (int64_t c = 1; c < k; c++)
			v = max32(v, _mm512_cvtepi16_epi8(rows64(rows, nr, 2 * i + c * d, m, s8)),
				  s8);
		_mm256_mask_storeu_epi8(y + i, (__mmask32)first(nl), v);
	}
}

/* as qpool-avx2.c: 3 x 3 windows of 3 rows at stride 2 unrolled, the type a constant */
static void max_rows_avx512(const uint8_t *const *rows, int nr, uint8_t *y, int64_t n,
			    int64_t k, int64_t s, int64_t d, bool s8)
{
	if (nr == 3 && k == 3 && s == 2 && s8)
		rows_body(rows, 3, y, n, 3, 2, d, true);
	else if (nr == 3 && k == 3 && s == 2)
		rows_body(rows, 3, y, n, 3, 2, d, false);
	else if (s8)
		rows_body(rows, nr, y, n, k, s, d, true);
	else
		rows_body(rows, nr, y, n, k, s, d, false);
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
	.max_rows = max_rows_avx512,
	.plane_sums = plane_sums_avx512,
};
