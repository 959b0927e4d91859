/* SPDX-License-Identifier: MIT */
/*
 * lrn-tmpl.h — LRN (local response normalisation across channels) of one
 * level, for vec-tmpl.h:
 *
 *   y[c] = x[c] / (bias + alpha / size * sum of x[k]^2 over the window)^beta
 *
 * NCHW, so VW pixels of one image are a vector: a block of pixels walks down
 * the channels, each window's squares summed by FMA in float from the lines
 * just read, and the power taken as e^(-beta ln d): ln by the exponent and
 * an atanh series of the mantissa, the exponential by vexp(). The scalar
 * reference (ops/norm.c) sums in double and calls pow(); here, for the
 * windows of the classifiers that use LRN (d of order 1 to 100), the
 * result is within a few units in the last place of it (test-vec-levels
 * holds 2e-6 of each value): the error grows with |beta ln d|, about
 * (2 + |beta ln d|) 2^-23 relative. A vector whose d is not a positive
 * normal float in some lane (zero, subnormal, inf, NaN: a zero bias, an
 * infinity or NaN in the window) is done by the reference's own arithmetic,
 * so those lanes get its bits.
 */
#ifndef ERT_CPU_LRN_TMPL_H
#define ERT_CPU_LRN_TMPL_H

#include <float.h>
#include <math.h>

#include "cpu/vec/vmath.h"

typedef int32_t lrn_vi __attribute__((vector_size(sizeof(vf))));

/*
 * ln d for positive normal finite d: d = 2^e m with m in [sqrt 1/2, sqrt 2),
 * ln m = 2 atanh s = 2 (s + s^3/3 + ... + s^11/11), s = (m - 1) / (m + 1)
 * in [-0.172, 0.172] (truncation below 1e-10 relative); m - 1 is exact, s
 * carries two roundings; e ln 2 in two parts, the first exact.
 */
SIMD_INLINE vf lrn_log(vf d)
{
	lrn_vi b = (lrn_vi)d;
	lrn_vi e = (b >> 23) - 127;
	vf m = (vf)((b & 0x7fffff) | 0x3f800000);
	lrn_vi big = (lrn_vi)(m > vf_set1(1.41421356f));
	vf f, s, s2, p, t;

	/* m / 2 and e + 1 where m >= sqrt 2 (big is -1 there) */
	m = (vf)((lrn_vi)m - (big & 0x800000));
	e -= big;
	f = vf_sub(m, vf_set1(1.0f));
	s = vf_div(f, vf_add(vf_set1(2.0f), f));
	s2 = vf_mul(s, s);
	p = vf_fma(vf_set1(1.0f / 11), s2, vf_set1(1.0f / 9));
	p = vf_fma(p, s2, vf_set1(1.0f / 7));
	p = vf_fma(p, s2, vf_set1(1.0f / 5));
	p = vf_fma(p, s2, vf_set1(1.0f / 3));
	t = vf_add(s, s);
	t = vf_fma(vf_mul(t, s2), p, t);
	vf ef = __builtin_convertvector(e, vf);

	/* ln 2 = 0x1.62e4p-1 (exact times |e| < 2^8) + 1.4286068e-6 */
	return vf_fma(ef, vf_set1(0.693145751953125f), vf_fma(ef, vf_set1(1.42860682e-6f), t));
}

/* Are the first @nl lanes of @ok all set? */
SIMD_INLINE bool lrn_all(vm ok, int64_t nl)
{
#if VW == 16
	return ((uint32_t)ok & ((1u << nl) - 1)) == ((1u << nl) - 1);
#else
	uint32_t want = (1u << nl) - 1;

	return ((uint32_t)_mm256_movemask_ps(ok) & want) == want;
#endif
}

/* Output (c, s) by the reference's arithmetic (ops/norm.c's lrn_range()). */
static float lrn_one(const struct ert_lrn_desc *p, const float *x, int64_t c, int64_t s)
{
	int64_t lo = c - p->lo_off < 0 ? 0 : c - p->lo_off;
	int64_t hi = c + p->hi_off > p->c - 1 ? p->c - 1 : c + p->hi_off;
	double sq = 0.0;

	for (int64_t k = lo; k <= hi; k++) {
		double v = x[k * p->sp + s];

		sq += v * v;
	}
	return (float)(x[c * p->sp + s] / pow(p->bias + p->alpha / (double)p->size * sq, p->beta));
}

static void lrn_pixels(const struct ert_lrn_desc *p, const float *x, float *y, int64_t s0,
		       int64_t s1)
{
	const int64_t sp = p->sp;
	const vf an = vf_set1((float)(p->alpha / (double)p->size)), vb = vf_set1((float)p->bias);
	const vf nbeta = vf_set1(-(float)p->beta), lo_ok = vf_set1(FLT_MIN);
	const vf hi_ok = vf_set1(FLT_MAX);

	for (int64_t s = s0; s < s1; s += VW) {
		int64_t nl = s1 - s < VW ? s1 - s : VW;
		vm m = vm_first(nl);

		for (int64_t c = 0; c < p->c; c++) {
			int64_t lo = c - p->lo_off < 0 ? 0 : c - p->lo_off;
			int64_t hi = c + p->hi_off > p->c - 1 ? p->c - 1 : c + p->hi_off;
			const float *xs = x + s;
			vf sq = vf_zero(), d, xv;

			for (int64_t k = lo; k <= hi; k++) {
				vf v = nl == VW ? vf_ld(xs + k * sp) : vf_ldm(xs + k * sp, m);

				sq = vf_fma(v, v, sq);
			}
			d = vf_fma(an, sq, vb);
			if (!lrn_all(vm_and(vf_ge(d, lo_ok), vf_le(d, hi_ok)), nl)) {
				for (int64_t j = 0; j < nl; j++)
					y[c * sp + s + j] = lrn_one(p, x, c, s + j);
				continue;
			}
			xv = nl == VW ? vf_ld(xs + c * sp) : vf_ldm(xs + c * sp, m);
			xv = vf_mul(xv, vexp(vf_mul(nbeta, lrn_log(d))));
			if (nl == VW)
				vf_st(y + c * sp + s, xv);
			else
				vf_stm(y + c * sp + s, m, xv);
		}
	}
}

#endif /* ERT_CPU_LRN_TMPL_H */
