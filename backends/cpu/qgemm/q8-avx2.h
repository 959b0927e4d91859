/* SPDX-License-Identifier: MIT */
/*
 * q8-avx2.h — the int8 output stages of docs/int8.md in AVX2 lanes,
 * bit-identical to ert_requant_fixed() and ert_qout_float(). Include only
 * from files built for the avx2 level or above (*-avx2.c, ...).
 */
#ifndef ERT_CPU_Q8_AVX2_H
#define ERT_CPU_Q8_AVX2_H

#include <immintrin.h>
#include <stdint.h>

/*
 * ert_requant_fixed() in 8 lanes: x << max(s, 0) (wrapping), the rounding
 * doubling high multiply (m >= 0: no saturation), then the division by
 * 2^max(-s, 0) rounding half away from zero, on magnitudes in uint32.
 */
static inline __m256i ert_q8_requant_fixed_avx2(__m256i v, __m256i mult, __m256i shift)
{
	const __m256i zero = _mm256_setzero_si256(), rnd = _mm256_set1_epi64x(1LL << 30);
	__m256i ls = _mm256_max_epi32(shift, zero);
	__m256i rs = _mm256_max_epi32(_mm256_sub_epi32(zero, shift), zero);
	__m256i x = _mm256_sllv_epi32(v, ls);
	__m256i ev = _mm256_add_epi64(_mm256_mul_epi32(x, mult), rnd);
	__m256i od = _mm256_add_epi64(
		_mm256_mul_epi32(_mm256_srli_epi64(x, 32), _mm256_srli_epi64(mult, 32)), rnd);
	__m256i h = _mm256_blend_epi32(_mm256_srli_epi64(ev, 31), _mm256_slli_epi64(od, 1), 0xaa);
	__m256i half = _mm256_srli_epi32(_mm256_sllv_epi32(_mm256_set1_epi32(1), rs), 1);
	__m256i r = _mm256_srlv_epi32(_mm256_add_epi32(_mm256_abs_epi32(h), half), rs);

	return _mm256_blendv_epi8(r, _mm256_sub_epi32(zero, r), _mm256_cmpgt_epi32(zero, h));
}

/*
 * The fixed rule's Add (TFLite's ADD, docs/int8.md) of input values @da and
 * @db in 8 lanes (zero points taken off): requant(requant(da << 20, am, as)
 * + requant(db << 20, bm, bs), m, s), before the output zero point and clamp.
 */
static inline __m256i ert_q8_add_fixed_avx2(__m256i da, __m256i db, int32_t am, int32_t as,
					    int32_t bm, int32_t bs, int32_t m, int32_t s)
{
	__m256i ta = ert_q8_requant_fixed_avx2(_mm256_slli_epi32(da, 20), _mm256_set1_epi32(am),
					       _mm256_set1_epi32(as));
	__m256i tb = ert_q8_requant_fixed_avx2(_mm256_slli_epi32(db, 20), _mm256_set1_epi32(bm),
					       _mm256_set1_epi32(bs));

	return ert_q8_requant_fixed_avx2(_mm256_add_epi32(ta, tb), _mm256_set1_epi32(m),
					 _mm256_set1_epi32(s));
}

/* ert_qout_float() in 4 lanes; vmaxpd returns its second operand when either is NaN. */
static inline __m128i ert_q8_requant_float4_avx2(__m128i v, __m256d f, int32_t zp, int32_t lo,
						  int32_t hi)
{
	__m256d q = _mm256_mul_pd(_mm256_cvtepi32_pd(v), f);

	q = _mm256_add_pd(_mm256_round_pd(q, _MM_FROUND_CUR_DIRECTION),
			  _mm256_set1_pd((double)zp));
	q = _mm256_max_pd(q, _mm256_set1_pd((double)lo));
	q = _mm256_min_pd(q, _mm256_set1_pd((double)hi));
	return _mm256_cvtpd_epi32(q);
}

#endif /* ERT_CPU_Q8_AVX2_H */
