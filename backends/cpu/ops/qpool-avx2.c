/* SPDX-License-Identifier: MIT */
/*
 * The byte pools' inner loops in 32-byte lanes (level "avx2"; see struct
 * ert_q8_pool_kernels): max of bytes and sums of bytes, exact, so the same
 * bytes as the portable loops of pool.c and qlinear-pool.c.
 */
#include <immintrin.h>
#include <string.h>

#include "cpu/ops/qlinear-kernels.h"

static inline __m256i max8(__m256i a, __m256i b, bool s8)
{
	return s8 ? _mm256_max_epi8(a, b) : _mm256_max_epu8(a, b);
}

static inline uint8_t max1(uint8_t a, uint8_t b, bool s8)
{
	if (s8)
		return (int8_t)a > (int8_t)b ? a : b;
	return a > b ? a : b;
}

/* The max over @nr rows of the 32 bytes at offset @o. */
static inline __m256i rows32(const uint8_t *const *rows, int nr, int64_t o, bool s8)
{
	__m256i v = _mm256_loadu_si256((const __m256i *)(rows[0] + o));

	for (int r = 1; r < nr; r++)
		v = max8(v, _mm256_loadu_si256((const __m256i *)(rows[r] + o)), s8);
	return v;
}

/*
 * Outputs i .. i + 31. Stride 2: of the 63 bytes from a tap's first, the
 * even ones are the low bytes of the 16-bit lanes of the first 32 and the
 * high bytes of those of the 32 from byte 31, so nothing past byte 62 is
 * read; the max is taken on bytes before they are picked out (the same).
 */
static inline __m256i block32(const uint8_t *const *rows, int nr, int64_t i, int64_t k,
			      int64_t s, int64_t d, bool s8)
{
	const __m256i lo = _mm256_set1_epi16(0xff);
	__m256i v = _mm256_setzero_si256();

	if (s == 1) {
		v = rows32(rows, nr, i, s8);
		for (int64_t c = 1; c < k; c++)
			v = max8(v, rows32(rows, nr, i + c * d, s8), s8);
		return v;
	}
	for (int64_t c = 0; c < k; c++) {
		int64_t o = 2 * i + c * d;
		__m256i a = _mm256_and_si256(rows32(rows, nr, o, s8), lo);
		__m256i b = _mm256_srli_epi16(rows32(rows, nr, o + 31, s8), 8);
		/* packus works per 128-bit half: a0 b0 a1 b1 */
		__m256i t = _mm256_packus_epi16(a, b);

		v = c ? max8(v, t, s8) : t;
	}
	/* the max is lane by lane, so the packs' order is fixed once */
	return _mm256_permute4x64_epi64(v, 0xd8);
}

/* The body of max_rows(), inlined with constant arguments where they are common. */
static inline __attribute__((always_inline)) void
rows_body(const uint8_t *const *rows, int nr, uint8_t *y, int64_t n, int64_t k, int64_t s,
	  int64_t d, bool s8)
{
	int64_t i = 0;

	for (; i + 32 <= n; i += 32)
		_mm256_storeu_si256((__m256i *)(y + i), block32(rows, nr, i, k, s, d, s8));
	/* the last 32 outputs again (y is not an input): the same values */
	if (i < n && n >= 32) {
		_mm256_storeu_si256((__m256i *)(y + n - 32), block32(rows, nr, n - 32, k, s, d, s8));
		return;
	}
	for (; i < n; i++) {
		uint8_t v = rows[0][i * s];

		for (int r = 0; r < nr; r++)
			for (int64_t c = 0; c < k; c++)
				v = max1(v, rows[r][i * s + c * d], s8);
		y[i] = v;
	}
}

/*
 * 3 x 3 windows of 3 rows (every inside row of resnet's stem pool) get the
 * loops unrolled, the row pointers in registers; the type is a constant.
 */
static void max_rows_avx2(const uint8_t *const *rows, int nr, uint8_t *y, int64_t n, int64_t k,
			  int64_t s, int64_t d, bool s8)
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

static inline int64_t hsum64(__m256i v)
{
	__m128i h = _mm_add_epi64(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));

	return _mm_cvtsi128_si64(h) + _mm_extract_epi64(h, 1);
}

/*
 * psadbw against 0 sums 8 unsigned bytes into each 64-bit lane; int8 is
 * summed as x ^ 0x80 = x + 128 and 128 a value taken off at the end.
 */
static void plane_sums_avx2(const uint8_t *x, int64_t planes, int64_t sp, bool s8,
			    int64_t *sums)
{
	const __m256i bias = _mm256_set1_epi8(s8 ? (char)0x80 : 0), zero = _mm256_setzero_si256();
	const __m256i idx = _mm256_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
					     16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28,
					     29, 30, 31);
	const uint8_t *end = x + planes * sp;
	const int64_t t = sp % 32;
	/* the last vector of a plane: its bytes [32 - t, 32) when sp >= 32, else [0, t) */
	const __m256i keep = sp >= 32 ? _mm256_cmpgt_epi8(idx, _mm256_set1_epi8((char)(31 - t)))
				       : _mm256_cmpgt_epi8(_mm256_set1_epi8((char)t), idx);

	for (int64_t p = 0; p < planes; p++) {
		const uint8_t *q = x + p * sp;
		__m256i acc = zero, v;
		int64_t i = 0;

		for (; i + 32 <= sp; i += 32) {
			v = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(q + i)), bias);
			acc = _mm256_add_epi64(acc, _mm256_sad_epu8(v, zero));
		}
		if (t) {
			const uint8_t *l = sp >= 32 ? q + sp - 32 : q;
			uint8_t tmp[32];

			/* no load past the tensor: the last planes' short tails go by a copy */
			if (l + 32 > end) {
				memset(tmp, 0, sizeof(tmp));
				memcpy(tmp, l, (size_t)(end - l));
				l = tmp;
			}
			v = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)l), bias);
			acc = _mm256_add_epi64(acc, _mm256_sad_epu8(_mm256_and_si256(v, keep), zero));
		}
		sums[p] = hsum64(acc) - (s8 ? 128 * sp : 0);
	}
}

const struct ert_q8_pool_kernels ert_q8_pool_avx2 = {
	.name = "q8-pool-avx2",
	.max_rows = max_rows_avx2,
	.plane_sums = plane_sums_avx2,
};
