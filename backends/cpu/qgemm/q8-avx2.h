/* SPDX-License-Identifier: MIT */
/*
 * q8-avx2.h — the int8 output stages of docs/int8.md in AVX2 lanes,
 * bit-identical to ert_requant_fixed() and ert_qout_float(). Include only
 * from files built for the avx2 level or above (*-avx2.c, ...).
 */
#ifndef ERT_CPU_Q8_AVX2_H
#define ERT_CPU_Q8_AVX2_H

#include <immintrin.h>
#include <stdbool.h>
#include <stdint.h>

#include "cpu/ops/qlinear-kernels.h"

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

/*
 * The fixed-rule Add in the exact 32-bit form (struct ert_q8_addf; docs/int8.md,
 * "The fixed-rule Add in 32-bit lanes") in 8 lanes: QLinearAdd's runs
 * (qlinear-ew-avx2.c) and a QLinearConv's fused residual in the GEMM's
 * block epilogue (qgemm-ukernel-avx2.c) compute it with these.
 *
 * g's lanes from input values @w: w * A + ((w * f + (w < zg ? cneg : cpos)) >> K).
 */
static inline __m256i ert_q8_addf_gen_avx2(const struct ert_q8_addf *p, __m256i w)
{
	__m256i c = _mm256_blendv_epi8(_mm256_set1_epi32(p->cpos), _mm256_set1_epi32(p->cneg),
				       _mm256_cmpgt_epi32(_mm256_set1_epi32(p->zg), w));
	__m256i t = _mm256_add_epi32(_mm256_mullo_epi32(w, _mm256_set1_epi32(p->f)), c);

	return _mm256_add_epi32(_mm256_mullo_epi32(w, _mm256_set1_epi32(p->A)),
				_mm256_sra_epi32(t, _mm_cvtsi32_si128(p->K)));
}

/*
 * (s * m + q) >> 31 (less 1 where adj and s < negc), then >> n: the even
 * lanes' products from s, the odd lanes' from 2s (s >= 0, its top bit 0,
 * so a 64-bit shift by 31 brings 2s down), whose bits 31..62 land in the
 * high half, where they belong.
 */
static inline __m256i ert_q8_addf_requant_avx2(const struct ert_q8_addf *p, __m256i s, bool adj)
{
	const __m256i m = _mm256_set1_epi32(p->m);
	__m256i ev = _mm256_add_epi64(_mm256_mul_epi32(s, m), _mm256_set1_epi64x(p->q));
	__m256i od = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(s, 31), m),
				      _mm256_set1_epi64x(2 * p->q));
	__m256i h = _mm256_blend_epi32(_mm256_srli_epi64(ev, 31), od, 0xaa);

	if (adj)
		h = _mm256_add_epi32(h, _mm256_cmpgt_epi32(_mm256_set1_epi32(p->negc), s));
	return _mm256_sra_epi32(h, _mm_cvtsi32_si128(p->n));
}

/*
 * 8 sums of the values @ws of the power-of-two input (when @two; else its
 * value is folded into q) and @wg of the other, requantised, before the
 * clamp and the zero point. @s8: int8 values (the bias makes the lanes >= 0).
 */
static inline __m256i ert_q8_addf_lanes_avx2(const struct ert_q8_addf *p, __m256i ws, __m256i wg,
					     bool two, bool adj, bool s8)
{
	__m256i sum = ert_q8_addf_gen_avx2(p, wg);

	if (two)
		sum = _mm256_add_epi32(sum, _mm256_sll_epi32(ws, _mm_cvtsi32_si128(p->ks)));
	if (s8)
		sum = _mm256_add_epi32(sum, _mm256_set1_epi32(p->bias));
	return ert_q8_addf_requant_avx2(p, sum, adj);
}

/*
 * Two groups' results as 16 int16 (packs order: per 128-bit half, four of
 * @r0 then four of @r1), clamped and the zero point added; the packs to
 * bytes that follow saturate nothing (every value is inside the type).
 */
static inline __m256i ert_q8_addf_out16_avx2(const struct ert_q8_addf *p, __m256i r0, __m256i r1)
{
	__m256i w = _mm256_packs_epi32(r0, r1);

	w = _mm256_min_epi16(_mm256_max_epi16(w, _mm256_set1_epi16(p->lo)), _mm256_set1_epi16(p->hi));
	return _mm256_add_epi16(w, _mm256_set1_epi16(p->zp));
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
