/* SPDX-License-Identifier: MIT */
/*
 * vmath.h — exp, expm1, sigmoid, tanh, erf, erfc and GELU on a whole vector
 * (cpu/vec/simd.h), for the AVX2 and AVX-512 kernel files.
 *
 * Error bounds, against double-precision libm rounded to float, over every
 * float whose mantissa is a multiple of 2^-12 between 2^-40 and the range's
 * ends, both signs (held by test-vec-levels at every level; ulp = the spacing
 * of floats at the exact result, subnormal spacing below FLT_MIN):
 *
 *   vexp        <= 1 ulp for every x (measured 0.93), subnormal results
 *               included; 0 below -104, +inf above 88.73; NaN stays NaN
 *   vexp_nonpos <= 1 ulp for x <= 0 (measured 0.88 over every 16th float
 *               in [-110, -2^-40], subnormal results included); 0 below
 *               -104, NaN stays NaN (Softmax; test-vec-levels sweeps it
 *               through the row kernel)
 *   vsigmoid    <= 3 ulp for every x (measured 2.13)
 *   vtanh       <= 3 ulp for every x (measured 2.16); +-0 and +-inf exact
 *   verf        <= 3 ulp for every x (measured 1.90)
 *   vgelu       <= 5 ulp for x >= -10 (measured 4.18 at avx2 and avx512;
 *               over every 16th float, test-vec-levels' gelu_dense_sweep,
 *               4.36, worst near x = 0.0077 and 0.0039); below -10 within
 *               1e-22 (-0 below -10, NaN at -inf as the reference's)
 *   vgelu_tanh  <= 3 ulp for x >= -1, 12 for x >= -3, 70 for x >= -8
 *               (measured 2.41, 9.77, 63.79): the float rounding of u =
 *               0.798 (x + 0.0447 x^3), which the reference's own float
 *               evaluation shares, is multiplied by 2|u| in e^2u; below -8,
 *               |error| < 1e-20
 *
 * Range reduction: x = n ln2 + r with |r| <= ln2/2; ln2 is split so that
 * n ln2_hi is exact and x - n ln2_hi is exact (Sterbenz), then e^r - 1 by its
 * Taylor polynomial to r^8 (truncation below 2^-30 relative) in Horner form
 * with FMA, and 2^n applied exactly (scalef / two exponent factors). erfc is
 * the Chebyshev-fitted t exp(-a^2 + P(t)), t = 1 / (1 + a/2) of Numerical
 * Recipes (erfcc, relative error below 1.2e-7), t by vf_recip(): the 12-bit
 * estimate at avx2, 14-bit at avx512, and a Newton step (below 2^-22.5 and
 * 2^-28): no division in the loop. avx2 measured no change in the bounds
 * above; avx512's, emulated at avx2 (a reciprocal cut to 13 bits and the
 * same step), 5.72 ulp on the grid for GELU and 6.70 every 16th float. a^2
 * is carried as an exact pair (hi + lo, by FMA) into the exponential's
 * reduction so that its rounding (up to 4e-6 at a = 10) does not reach the
 * result.
 *
 * GELU has its own single path (no series beside the erfc, no select
 * between them): x Phi(x) with Phi(-a) = t S(u) e^(-a^2/2), a = min(|x|,
 * 10), t = 1 / (1 + 0.26 a) (estimate and Newton step, avx2 third order:
 * below 2^-26 at both levels), u = 0.26 a t; S a degree-8 minimax fit in
 * u - 0.375 (relative error 5.6e-9 over a in [0, 10] with the coefficients
 * rounded to float one by one, the rest refitted). u is formed from 0.26 a
 * times t, not 1 - t: near 0 that keeps t's rounding out of S's argument
 * (1 - t measured 6.8 ulp). e^(-a^2/2) as above from the exact pair, with a
 * degree-6 polynomial whose first two coefficients are 1 (3.2e-9; the
 * degree-5 fit's constant rounds to 1 + 2^-23, 2 ulp at x = 0), folded so
 * that Phi(-a) rounds once, and 2^n by scalef at avx512 and an exponent add
 * at avx2 (n >= -73 here). The tanh form is x / (1 + e^-2u) with that
 * exponential (argument clamped to [-86, 86], -2u past 86 giving 0) and the
 * same reciprocal: no division and no select, unlike vsigmoid().
 */
#ifndef ERT_CPU_VMATH_H
#define ERT_CPU_VMATH_H

#include "cpu/vec/simd.h"

/* e^(z + w) - 1 parts: returns n and sets *q = e^r - 1, z + w = n ln2 + r. */
SIMD_INLINE vf vm_reduce(vf z, vf w, vf *q)
{
	vf n = vf_round(vf_mul(vf_add(z, w), vf_set1(1.44269504088896341f)));
	/* ln2 = 0.693359375 - 2.12194440e-4 (+ 1.5e-13): the high part has 9 bits */
	vf r = vf_fma(n, vf_set1(-0.693359375f), z);
	vf p;

	r = vf_add(r, w);
	r = vf_fma(n, vf_set1(2.12194440e-4f), r);
	p = vf_set1(1.0f / 40320);
	p = vf_fma(p, r, vf_set1(1.0f / 5040));
	p = vf_fma(p, r, vf_set1(1.0f / 720));
	p = vf_fma(p, r, vf_set1(1.0f / 120));
	p = vf_fma(p, r, vf_set1(1.0f / 24));
	p = vf_fma(p, r, vf_set1(1.0f / 6));
	p = vf_fma(p, r, vf_set1(0.5f));
	*q = vf_fma(p, vf_mul(r, r), r);
	return n;
}

/* Clamp keeping NaN: lo > x ? lo : x, then hi < x ? hi : x. */
SIMD_INLINE vf vm_clamp(vf x, float lo, float hi)
{
	return vf_min(vf_set1(hi), vf_max(vf_set1(lo), x));
}

/*
 * e^(z + w) for a pair whose sum is the argument: z may be large and exact,
 * w of modest size. Arguments below -104 give 0, above 89 +inf.
 */
SIMD_INLINE vf vexp_pair(vf z, vf w)
{
	vf q, n;

	z = vm_clamp(z, -104.0f, 89.0f);
	n = vm_reduce(z, w, &q);
	return vf_scale2(vf_add(vf_set1(1.0f), q), n);
}

SIMD_INLINE vf vexp(vf x)
{
	return vexp_pair(x, vf_zero());
}

/* e^x - 1 for x in [0, 19] (tanh's range), accurate relative to the result. */
SIMD_INLINE vf vexpm1_pos(vf x)
{
	vf q, n = vm_reduce(x, vf_zero(), &q);
	vf s = vf_scale2(vf_set1(1.0f), n);

	return vf_fma(s, q, vf_sub(s, vf_set1(1.0f)));
}

/* 1 / (1 + e^-x) for x >= 0, e^x / (1 + e^x) below: e^-|x| never overflows. */
SIMD_INLINE vf vsigmoid(vf x)
{
	vf e = vexp(vf_sub(vf_zero(), vf_abs(x)));

	return vf_div(vf_sel(vf_lt(x, vf_zero()), e, vf_set1(1.0f)), vf_add(vf_set1(1.0f), e));
}

/* tanh|x| = m / (m + 2), m = e^(2|x|) - 1: no cancellation near 0. */
SIMD_INLINE vf vtanh(vf x)
{
	/* past 9.1 tanh rounds to 1; min(9.1, NaN) keeps the NaN */
	vf a = vf_min(vf_set1(9.1f), vf_abs(x));
	vf m = vexpm1_pos(vf_add(a, a));

	return vf_copysign(vf_div(m, vf_add(m, vf_set1(2.0f))), x);
}

/*
 * erfc(a) for a >= 0, given a^2 as the exact pair (a2hi + a2lo): t exp(-a^2
 * + P(t)). @ta is a for t only (it may carry a rounding).
 */
SIMD_INLINE vf verfc_core(vf ta, vf a2hi, vf a2lo)
{
	vf t = vf_recip(vf_fma(vf_set1(0.5f), ta, vf_set1(1.0f))), p;

	p = vf_set1(0.17087277f);
	p = vf_fma(p, t, vf_set1(-0.82215223f));
	p = vf_fma(p, t, vf_set1(1.48851587f));
	p = vf_fma(p, t, vf_set1(-1.13520398f));
	p = vf_fma(p, t, vf_set1(0.27886807f));
	p = vf_fma(p, t, vf_set1(-0.18628806f));
	p = vf_fma(p, t, vf_set1(0.09678418f));
	p = vf_fma(p, t, vf_set1(0.37409196f));
	p = vf_fma(p, t, vf_set1(1.00002368f));
	p = vf_fma(p, t, vf_set1(-1.26551223f));
	return vf_mul(t, vexp_pair(vf_sub(vf_zero(), a2hi), vf_sub(p, a2lo)));
}

/*
 * erf(x) = 2/sqrt(pi) (x - x^3 s) from its Maclaurin series, given x2 = x^2
 * and s already carried down to the x^2 / 10 term: the 1/42 and 1/3 steps.
 */
SIMD_INLINE vf verf_series(vf x, vf x2, vf s)
{
	s = vf_fma(s, x2, vf_set1(1.0f / 42));
	s = vf_fma(s, x2, vf_set1(-1.0f / 10));
	s = vf_fma(s, x2, vf_set1(1.0f / 3));
	return vf_mul(vf_fma(vf_sub(vf_zero(), vf_mul(s, x2)), x, x),
		      vf_set1(1.12837916709551257f));
}

/* The series' terms from x^15 (1/75600) down to x^11 (-1/216), Horner in x2. */
SIMD_INLINE vf verf_mid(vf x2, vf s)
{
	s = vf_fma(s, x2, vf_set1(-1.0f / 9360));
	s = vf_fma(s, x2, vf_set1(1.0f / 1320));
	return vf_fma(s, x2, vf_set1(-1.0f / 216));
}

/* erf(x) for |x| < 0.8: the series to x^19 (next term below 2e-9 relative). */
SIMD_INLINE vf verf_small(vf x)
{
	vf x2 = vf_mul(x, x), s;

	s = vf_set1(1.0f / 6894720);
	s = vf_fma(s, x2, vf_set1(-1.0f / 685440));
	s = vf_fma(s, x2, vf_set1(1.0f / 75600));
	return verf_series(x, x2, verf_mid(x2, s));
}

/*
 * Near 0 the series; elsewhere 1 - erfc(|x|), |x| clamped to 10 (erf is 1 in
 * float from 3.92 on; min(10, NaN) keeps the NaN); the sign of x on both.
 */
SIMD_INLINE vf verf(vf x)
{
	vf a = vf_min(vf_set1(10.0f), vf_abs(x)), a2 = vf_mul(a, a);
	vf lo = vf_fma(a, a, vf_sub(vf_zero(), a2));   /* a^2 - a2, exactly */
	vf big = vf_sub(vf_set1(1.0f), verfc_core(a, a2, lo));

	return vf_copysign(vf_sel(vf_lt(a, vf_set1(0.8f)), verf_small(x), big), x);
}

/* p 2^n for integral n in [-126, 0] (k = n + 1.5 * 2^23, so n sits in k's low mantissa bits) */
SIMD_INLINE vf vm_pow2n(vf p, vf k, vf n)
{
#if VW == 16
	(void)k;
	return vf_scale2(p, n);
#else
	typedef int32_t vmi __attribute__((vector_size(sizeof(vf))));

	(void)n;
	return (vf)((vmi)p + ((vmi)k << 23));
#endif
}

/* 1 / d for d in [1, 2^125]: the estimate and a Newton step (avx2: third order) */
SIMD_INLINE vf vm_recip(vf d)
{
#if VW == 16
	return vf_recip(d);
#else
	vf r = _mm256_rcp_ps(d), e = vf_fma(-d, r, vf_set1(1.0f));

	return vf_fma(r, vf_fma(e, e, e), r);
#endif
}

/*
 * x Phi(x) on one path for every x: Phi(-a) = t S(u) e^(-a^2/2), a = |x|
 * clamped to 10, t = 1 / (1 + p a), u = p a t = 1 - t; Phi(x) is that for
 * x < 0 and 1 minus it (at most 0.5, no cancellation) otherwise.
 */
SIMD_INLINE vf vgelu(vf x)
{
	const vf shift = vf_set1(0x1.8p23f);
	vf a = vf_min(vf_set1(10.0f), vf_abs(x)), ah = vf_mul(a, vf_set1(-0.5f));
	vf h = vf_mul(ah, a), l = vf_fma(ah, a, -h);        /* -a^2/2 = h + l exactly */
	vf t = vm_recip(vf_fma(a, vf_set1(0.26f), vf_set1(1.0f)));
	vf z = vf_fma(vf_mul(a, vf_set1(0.26f)), t, vf_set1(-0.375f));
	vf s, k, n, r, q, ts, ph;

	s = vf_set1(0.0351327658f);
	s = vf_fma(s, z, vf_set1(0.00016799767f));
	s = vf_fma(s, z, vf_set1(-0.0847034678f));
	s = vf_fma(s, z, vf_set1(0.0445159338f));
	s = vf_fma(s, z, vf_set1(0.1828302f));
	s = vf_fma(s, z, vf_set1(-0.438461244f));
	s = vf_fma(s, z, vf_set1(0.527854085f));
	s = vf_fma(s, z, vf_set1(-0.422843754f));
	s = vf_fma(s, z, vf_set1(0.241018713f));
	ts = vf_mul(t, s);

	/* e^(h + l): h = n ln2 + r by the short ln2 as vm_reduce */
	k = vf_fma(h, vf_set1(1.44269504088896341f), shift);
	n = vf_sub(k, shift);
	r = vf_add(vf_fma(n, vf_set1(-0.693359375f), h), l);
	r = vf_fma(n, vf_set1(2.12194440e-4f), r);
	q = vf_set1(0.00138388667f);
	q = vf_fma(q, r, vf_set1(0.00836919248f));
	q = vf_fma(q, r, vf_set1(0.0416681021f));
	q = vf_fma(q, r, vf_set1(0.166665167f));
	q = vf_fma(q, r, vf_set1(0.49999994f));
	q = vf_mul(vf_fma(q, r, vf_set1(1.0f)), r);          /* e^r - 1 */

	ph = vm_pow2n(vf_fma(ts, q, ts), k, n);              /* Phi(-a) */
	ph = vf_sel(vf_lt(x, vf_set1(-10.0f)), vf_zero(), ph);
	return vf_mul(x, vf_sel(vf_lt(x, vf_zero()), ph, vf_sub(vf_set1(1.0f), ph)));
}

/*
 * e^r for z = n ln2 + r, z in [-150, 86]: vgelu()'s reduction and degree-6
 * polynomial; sets *k (n + 1.5 * 2^23) and *n.
 */
SIMD_INLINE vf vm_exp_q(vf z, vf *k, vf *n)
{
	const vf shift = vf_set1(0x1.8p23f);
	vf r, q;

	*k = vf_fma(z, vf_set1(1.44269504088896341f), shift);
	*n = vf_sub(*k, shift);
	r = vf_fma(*n, vf_set1(2.12194440e-4f), vf_fma(*n, vf_set1(-0.693359375f), z));
	q = vf_set1(0.00138388667f);
	q = vf_fma(q, r, vf_set1(0.00836919248f));
	q = vf_fma(q, r, vf_set1(0.0416681021f));
	q = vf_fma(q, r, vf_set1(0.166665167f));
	q = vf_fma(q, r, vf_set1(0.49999994f));
	return vf_fma(vf_fma(q, r, vf_set1(1.0f)), r, vf_set1(1.0f));
}

/* e^z for z in [-86, 86] (2^n stays normal) */
SIMD_INLINE vf vm_exp86(vf z)
{
	vf k, n, q = vm_exp_q(z, &k, &n);

	return vm_pow2n(q, k, n);
}

/*
 * e^z for z <= 0 (Softmax's x - max), 13 operations against vexp()'s 20:
 * no upper clamp, no second reduction term, the degree-6 polynomial of
 * vm_exp_q() and 2^n by vf_scale2() (subnormal results rounded once more).
 * Below -104 it gives 0 (-inf included); NaN stays NaN.
 */
SIMD_INLINE vf vexp_nonpos(vf z)
{
	vf k, n, q = vm_exp_q(vf_max(vf_set1(-104.0f), z), &k, &n);

	(void)k;
	return vf_scale2(q, n);
}

/*
 * 0.5 x (1 + tanh u) = x / (1 + e^-2u), u = sqrt(2/pi) (x + 0.044715 x^3):
 * -2u past 86 gives 0 (x 0: -0, NaN at -inf as the reference).
 */
SIMD_INLINE vf vgelu_tanh(vf x)
{
	vf x3 = vf_mul(vf_mul(x, x), x);
	vf z = vf_mul(vf_set1(-1.5957691216057307f), vf_fma(vf_set1(0.044715f), x3, x));
	vf t = vm_recip(vf_add(vf_set1(1.0f), vm_exp86(vm_clamp(z, -86.0f, 86.0f))));

	return vf_mul(x, vf_sel(vf_gt(z, vf_set1(86.0f)), vf_zero(), t));
}

#endif /* ERT_CPU_VMATH_H */
