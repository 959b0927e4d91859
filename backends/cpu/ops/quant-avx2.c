/* SPDX-License-Identifier: MIT */
/*
 * QuantizeLinear of float32 to int8/uint8 with one scale and zero point in
 * 8 lanes (level "avx2"): quant.c's quantize_bytes() step for step (the
 * float32 division, NaN to 0, the clamp to [lo - zp, hi - zp] before
 * rounding, the 1.5 x 2^23 add and subtract that rounds half to even),
 * so the same bytes. Whole groups of 8; the caller does the rest.
 */
#include <immintrin.h>

#include "cpu/ops/qlinear-kernels.h"

int64_t ert_q8_quantize_avx2(const struct ert_q8_quant *p, const float *x, void *y, int64_t n)
{
	const __m256 s = _mm256_set1_ps(p->s), lo = _mm256_set1_ps(p->lo);
	const __m256 hi = _mm256_set1_ps(p->hi), magic = _mm256_set1_ps(0x1.8p23f);
	const __m256i zp = _mm256_set1_epi32(p->zp);
	int64_t i = 0;

	for (; i + 8 <= n; i += 8) {
		__m256 q = _mm256_div_ps(_mm256_loadu_ps(x + i), s);

		q = _mm256_and_ps(q, _mm256_cmp_ps(q, q, _CMP_ORD_Q)); /* NaN: +0 */
		q = _mm256_min_ps(_mm256_max_ps(q, lo), hi);
		__m256i r = _mm256_add_epi32(
			_mm256_cvttps_epi32(_mm256_sub_ps(_mm256_add_ps(q, magic), magic)), zp);
		/* in range of the type: the packs only narrow */
		__m128i w = _mm_packs_epi32(_mm256_castsi256_si128(r),
					    _mm256_extracti128_si256(r, 1));

		w = p->u8 ? _mm_packus_epi16(w, w) : _mm_packs_epi16(w, w);
		_mm_storel_epi64((__m128i *)((uint8_t *)y + i), w);
	}
	return i;
}

/*
 * DequantizeLinear of int8/uint8 to float32 in 8 lanes: quant.c's
 * dequantize_range(), (float)x - (float)zp (exact) times s, one float32
 * rounding, so the same bits. Whole groups of 8; the caller does the rest.
 */
int64_t ert_q8_dequantize_avx2(const struct ert_q8_dequant *p, const void *x, float *y,
			       int64_t n)
{
	const __m256 s = _mm256_set1_ps(p->s), zp = _mm256_set1_ps(p->zp);
	const uint8_t *b = x;
	int64_t i = 0;

	for (; i + 8 <= n; i += 8) {
		__m128i q = _mm_loadl_epi64((const __m128i *)(b + i));
		__m256i w = p->u8 ? _mm256_cvtepu8_epi32(q) : _mm256_cvtepi8_epi32(q);

		_mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_sub_ps(_mm256_cvtepi32_ps(w), zp), s));
	}
	return i;
}
