/* SPDX-License-Identifier: MIT */
/*
 * QuantizeLinear of float32 to int8/uint8 with one scale and zero point in
 * 16 lanes (level "avx512" and up): as quant-avx2.c, the same bytes as
 * quant.c's quantize_bytes(). Whole groups of 16; the caller does the rest.
 */
#include <immintrin.h>

#include "cpu/ops/qlinear-kernels.h"

int64_t ert_q8_quantize_avx512(const struct ert_q8_quant *p, const float *x, void *y, int64_t n)
{
	const __m512 s = _mm512_set1_ps(p->s), lo = _mm512_set1_ps(p->lo);
	const __m512 hi = _mm512_set1_ps(p->hi), magic = _mm512_set1_ps(0x1.8p23f);
	const __m512i zp = _mm512_set1_epi32(p->zp);
	int64_t i = 0;

	for (; i + 16 <= n; i += 16) {
		__m512 q = _mm512_div_ps(_mm512_loadu_ps(x + i), s);

		/* NaN: +0 */
		q = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(q, q, _CMP_ORD_Q), q);
		q = _mm512_min_ps(_mm512_max_ps(q, lo), hi);
		__m512i r = _mm512_add_epi32(
			_mm512_cvttps_epi32(_mm512_sub_ps(_mm512_add_ps(q, magic), magic)), zp);

		/* in range of the type: truncating to bytes keeps the value */
		_mm_storeu_si128((__m128i *)((uint8_t *)y + i), _mm512_cvtepi32_epi8(r));
	}
	return i;
}

/*
 * DequantizeLinear of int8/uint8 to float32 in 16 lanes: as quant-avx2.c,
 * quant.c's dequantize_range() step for step, so the same bits. Whole
 * groups of 16; the caller does the rest.
 */
int64_t ert_q8_dequantize_avx512(const struct ert_q8_dequant *p, const void *x, float *y,
				 int64_t n)
{
	const __m512 s = _mm512_set1_ps(p->s), zp = _mm512_set1_ps(p->zp);
	const uint8_t *b = x;
	int64_t i = 0;

	for (; i + 16 <= n; i += 16) {
		__m128i q = _mm_loadu_si128((const __m128i *)(b + i));
		__m512i w = p->u8 ? _mm512_cvtepu8_epi32(q) : _mm512_cvtepi8_epi32(q);

		_mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_sub_ps(_mm512_cvtepi32_ps(w), zp), s));
	}
	return i;
}
