/* SPDX-License-Identifier: MIT */
/*
 * q8-avx512.h — the int8 output stages of docs/int8.md in AVX-512 lanes,
 * bit-identical to ert_requant_fixed() and ert_qout_float(). Include only
 * from files built for the avx512 level or above (*-avx512*.c).
 */
#ifndef ERT_CPU_Q8_AVX512_H
#define ERT_CPU_Q8_AVX512_H

#include <immintrin.h>
#include <stdbool.h>
#include <stdint.h>

#include "cpu/ops/qlinear-kernels.h"

/*
 * ert_requant_fixed() in 16 lanes: x << max(s, 0) (wrapping), the rounding
 * doubling high multiply round((x * m) / 2^31) (m >= 0, so it cannot
 * saturate), then the division by 2^max(-s, 0) rounding half away from zero,
 * on magnitudes in uint32 (|INT32_MIN| + 2^30 still fits).
 */
static inline __m512i ert_q8_requant_fixed_avx512(__m512i v, __m512i mult, __m512i shift)
{
	const __m512i zero = _mm512_setzero_si512(), rnd = _mm512_set1_epi64(1LL << 30);
	__m512i ls = _mm512_max_epi32(shift, zero);
	__m512i rs = _mm512_max_epi32(_mm512_sub_epi32(zero, shift), zero);
	__m512i x = _mm512_sllv_epi32(v, ls);
	__m512i ev = _mm512_add_epi64(_mm512_mul_epi32(x, mult), rnd);
	__m512i od = _mm512_add_epi64(
		_mm512_mul_epi32(_mm512_srli_epi64(x, 32), _mm512_srli_epi64(mult, 32)), rnd);
	/* bits 31..62 of each product: low halves from the even, high from the odd */
	__m512i h = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(ev, 31),
					    _mm512_slli_epi64(od, 1));
	__m512i half = _mm512_srli_epi32(_mm512_sllv_epi32(_mm512_set1_epi32(1), rs), 1);
	__m512i r = _mm512_srlv_epi32(_mm512_add_epi32(_mm512_abs_epi32(h), half), rs);

	return _mm512_mask_sub_epi32(r, _mm512_cmplt_epi32_mask(h, zero), zero, r);
}

/* The fixed rule's Add of ert_q8_add_fixed_avx2() in 16 lanes. */
static inline __m512i ert_q8_add_fixed_avx512(__m512i da, __m512i db, int32_t am, int32_t as,
					      int32_t bm, int32_t bs, int32_t m, int32_t s)
{
	__m512i ta = ert_q8_requant_fixed_avx512(_mm512_slli_epi32(da, 20), _mm512_set1_epi32(am),
						 _mm512_set1_epi32(as));
	__m512i tb = ert_q8_requant_fixed_avx512(_mm512_slli_epi32(db, 20), _mm512_set1_epi32(bm),
						 _mm512_set1_epi32(bs));

	return ert_q8_requant_fixed_avx512(_mm512_add_epi32(ta, tb), _mm512_set1_epi32(m),
					   _mm512_set1_epi32(s));
}

/*
 * The fixed-rule Add in the exact 32-bit form (struct ert_q8_addf) in 16
 * lanes, as q8-avx2.h's: QLinearAdd's runs (qlinear-ew-avx512.c) and a
 * QLinearConv's fused residual in the GEMM's block epilogue
 * (qgemm-ukernel-avx512.c, which the VNNI and AMX kernels share) compute it
 * with these.
 *
 * g's lanes from input values @w: w * A + ((w * f + (w < zg ? cneg : cpos)) >> K).
 * The shifts here take their counts (0 to 31) per lane: vpsravd and vpsllvd
 * are one uop, the forms with the count in an xmm register two (one on
 * port 5, which the epilogue's compares, broadcasts and byte stores load).
 */
static inline __m512i ert_q8_addf_gen_avx512(const struct ert_q8_addf *p, __m512i w)
{
	__m512i c = _mm512_mask_blend_epi32(_mm512_cmplt_epi32_mask(w, _mm512_set1_epi32(p->zg)),
					    _mm512_set1_epi32(p->cpos), _mm512_set1_epi32(p->cneg));
	__m512i t = _mm512_add_epi32(_mm512_mullo_epi32(w, _mm512_set1_epi32(p->f)), c);

	return _mm512_add_epi32(_mm512_mullo_epi32(w, _mm512_set1_epi32(p->A)),
				_mm512_srav_epi32(t, _mm512_set1_epi32(p->K)));
}

/* (s * m + q) >> 31, less 1 where adj and s < negc, then >> n (see the AVX2 version). */
static inline __m512i ert_q8_addf_requant_avx512(const struct ert_q8_addf *p, __m512i s, bool adj)
{
	const __m512i m = _mm512_set1_epi32(p->m);
	__m512i ev = _mm512_add_epi64(_mm512_mul_epi32(s, m), _mm512_set1_epi64(p->q));
	__m512i od = _mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(s, 31), m),
				      _mm512_set1_epi64(2 * p->q));
	__m512i h = _mm512_mask_blend_epi32(0xaaaa, _mm512_srli_epi64(ev, 31), od);

	if (adj)
		h = _mm512_mask_sub_epi32(h, _mm512_cmplt_epi32_mask(s, _mm512_set1_epi32(p->negc)),
					  h, _mm512_set1_epi32(1));
	return _mm512_srav_epi32(h, _mm512_set1_epi32(p->n));
}

/*
 * 16 sums of the values @ws of the power-of-two input (when @two) and @wg
 * of the other, requantised, before the clamp and the zero point.
 */
static inline __m512i ert_q8_addf_lanes_avx512(const struct ert_q8_addf *p, __m512i ws,
					       __m512i wg, bool two, bool adj, bool s8)
{
	__m512i sum = ert_q8_addf_gen_avx512(p, wg);

	if (two)
		sum = _mm512_add_epi32(sum, _mm512_sllv_epi32(ws, _mm512_set1_epi32(p->ks)));
	if (s8)
		sum = _mm512_add_epi32(sum, _mm512_set1_epi32(p->bias));
	return ert_q8_addf_requant_avx512(p, sum, adj);
}

/* ert_qout_float(): rint(v * f) + zp, NaN or below lo gives lo, above hi gives hi. */
static inline __m256i ert_q8_requant_float8_avx512(__m256i v, __m512d f, int32_t zp, int32_t lo,
						    int32_t hi)
{
	__m512d q = _mm512_mul_pd(_mm512_cvtepi32_pd(v), f);

	q = _mm512_add_pd(_mm512_roundscale_pd(q, _MM_FROUND_CUR_DIRECTION),
			  _mm512_set1_pd((double)zp));
	/* vmaxpd returns its second operand when either is NaN */
	q = _mm512_max_pd(q, _mm512_set1_pd((double)lo));
	q = _mm512_min_pd(q, _mm512_set1_pd((double)hi));
	return _mm512_cvtpd_epi32(q);
}

#endif /* ERT_CPU_Q8_AVX512_H */
