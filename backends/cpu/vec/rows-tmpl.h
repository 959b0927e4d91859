/* SPDX-License-Identifier: MIT */
/*
 * rows-tmpl.h — kernels over one contiguous row, compiled once per level by
 * vec-<level>.c: Softmax, LayerNormalization, and the float sums behind
 * ReduceSum/ReduceMean. Sums are kept in double, as the reference kernels
 * (norm.c, norm-stats.c, reduce.c) keep them, in VW lanes instead of their
 * few partial sums.
 */
#ifndef ERT_CPU_ROWS_TMPL_H
#define ERT_CPU_ROWS_TMPL_H

#include <math.h>

#include "cpu/vec/vmath.h"
#include "cpu/vec/vec.h"

/* Running double sums of the lanes of @v into (s0, s1). */
SIMD_INLINE void sum_acc(vd *s0, vd *s1, vf v)
{
	*s0 = vd_add(*s0, vd_lo(v));
	*s1 = vd_add(*s1, vd_hi(v));
}

static double row_sum(const float *x, int64_t n, bool squares)
{
	vd s0 = vd_zero(), s1 = vd_zero(), t0 = vd_zero(), t1 = vd_zero();
	int64_t i = 0;

	/* a float's square is exact in double */
	if (squares) {
		for (; i + VW <= n; i += VW) {
			vf v = vf_ld(x + i);
			vd l = vd_lo(v), h = vd_hi(v);

			s0 = vd_add(s0, vd_mul(l, l));
			s1 = vd_add(s1, vd_mul(h, h));
		}
		if (i < n) {
			vf v = vf_ldm(x + i, vm_first(n - i));
			vd l = vd_lo(v), h = vd_hi(v);

			s0 = vd_add(s0, vd_mul(l, l));
			s1 = vd_add(s1, vd_mul(h, h));
		}
		return vd_hsum(vd_add(s0, s1));
	}
	/* two vectors a step: four independent add chains */
	for (; i + 2 * VW <= n; i += 2 * VW) {
		sum_acc(&s0, &s1, vf_ld(x + i));
		sum_acc(&t0, &t1, vf_ld(x + i + VW));
	}
	for (; i + VW <= n; i += VW)
		sum_acc(&s0, &s1, vf_ld(x + i));
	if (i < n)
		sum_acc(&s0, &s1, vf_ldm(x + i, vm_first(n - i)));
	return vd_hsum(vd_add(vd_add(s0, t0), vd_add(s1, t1)));
}

/*
 * As norm.c's softmax_f32_row: the maximum (a NaN never wins, as there),
 * e^(x - max) stored and summed in double, then scaled by 1/sum rounded to
 * float. Each output is within 5 ulp of the exact softmax of the inputs.
 * Four maximum and four double-sum chains: at one or two of each, their
 * latency (4 cycles an add) bounds a row of 197 (vit_s16's attention).
 */
static void row_softmax(const float *x, float *y, int64_t n)
{
	vf m0 = vf_set1(-INFINITY), m1 = m0, m2 = m0, m3 = m0, vmax;
	vd s0 = vd_zero(), s1 = vd_zero(), t0 = vd_zero(), t1 = vd_zero();
	int64_t i = 0;
	vm tail = vm_first(n % VW);
	int64_t full = n - n % VW;
	vf inv;

	for (; i + 4 * VW <= full; i += 4 * VW) {
		m0 = vf_max(vf_ld(x + i), m0);
		m1 = vf_max(vf_ld(x + i + VW), m1);
		m2 = vf_max(vf_ld(x + i + 2 * VW), m2);
		m3 = vf_max(vf_ld(x + i + 3 * VW), m3);
	}
	for (; i < full; i += VW)
		m0 = vf_max(vf_ld(x + i), m0);
	if (i < n)
		m1 = vf_sel(tail, vf_max(vf_ldm(x + i, tail), m1), m1);
	vmax = vf_set1(vf_hmax(vf_max(vf_max(m0, m1), vf_max(m2, m3))));
	for (i = 0; i + 2 * VW <= full; i += 2 * VW) {
		vf e = vexp_nonpos(vf_sub(vf_ld(x + i), vmax));
		vf f = vexp_nonpos(vf_sub(vf_ld(x + i + VW), vmax));

		vf_st(y + i, e);
		vf_st(y + i + VW, f);
		sum_acc(&s0, &s1, e);
		sum_acc(&t0, &t1, f);
	}
	for (; i < full; i += VW) {
		vf e = vexp_nonpos(vf_sub(vf_ld(x + i), vmax));

		vf_st(y + i, e);
		sum_acc(&s0, &s1, e);
	}
	if (i < n) {
		vf e = vf_sel(tail, vexp_nonpos(vf_sub(vf_ldm(x + i, tail), vmax)), vf_zero());

		vf_stm(y + i, tail, e);
		sum_acc(&t0, &t1, e);
	}
	inv = vf_set1((float)(1.0 / vd_hsum(vd_add(vd_add(s0, t0), vd_add(s1, t1)))));
	for (i = 0; i < full; i += VW)
		vf_st(y + i, vf_mul(vf_ld(y + i), inv));
	if (i < n)
		vf_stm(y + i, tail, vf_mul(vf_ldm(y + i, tail), inv));
}

/* Running sums of d = x - c (exact in double: two floats' difference) and d^2. */
SIMD_INLINE void dsq_acc(vd *a0, vd *a1, vd *q0, vd *q1, vf v, vd c)
{
	vd l = vd_sub(vd_lo(v), c), h = vd_sub(vd_hi(v), c);

	*a0 = vd_add(*a0, l);
	*a1 = vd_add(*a1, h);
	*q0 = vd_fma(l, l, *q0);
	*q1 = vd_fma(h, h, *q1);
}

/*
 * LayerNorm's mean and 1/sqrt(var + eps) in one pass: with d = x - x[0] in
 * double, mean = x[0] + sum d / n (rounded to float: the reference's mean
 * but for a double rounding near a tie) and var = sum d^2 / n - (sum d /
 * n)^2 plus (mean - float mean)^2, the reference's spread about its float
 * mean. Shifting by x[0] keeps the cancellation to (mean - x[0])^2 / var <=
 * n times the double rounding. The reference's d and d^2 are rounded to
 * float, so 1/sqrt rounds to another float now and then (a unit in the last
 * place). False, nothing set, where a sum is not finite (inf, NaN inputs):
 * the two-pass form then gives the reference's infinities and NaNs.
 */
static bool ln_stats(const float *x, int64_t n, double eps, float *mean_out, float *inv_out)
{
	vd c = vd_set1((double)x[0]);
	vd a0 = vd_zero(), a1 = vd_zero(), q0 = vd_zero(), q1 = vd_zero();
	vd b0 = vd_zero(), b1 = vd_zero(), r0 = vd_zero(), r1 = vd_zero();
	int64_t i = 0;
	double sd, sq, m, var;
	float mean;

	for (; i + 2 * VW <= n; i += 2 * VW) {
		dsq_acc(&a0, &a1, &q0, &q1, vf_ld(x + i), c);
		dsq_acc(&b0, &b1, &r0, &r1, vf_ld(x + i + VW), c);
	}
	for (; i + VW <= n; i += VW)
		dsq_acc(&a0, &a1, &q0, &q1, vf_ld(x + i), c);
	if (i < n) {
		vm t = vm_first(n - i);
		/* masked lanes read as x[0]: d = 0 */
		vf v = vf_sel(t, vf_ldm(x + i, t), vf_set1(x[0]));

		dsq_acc(&b0, &b1, &r0, &r1, v, c);
	}
	sd = vd_hsum(vd_add(vd_add(a0, b0), vd_add(a1, b1)));
	sq = vd_hsum(vd_add(vd_add(q0, r0), vd_add(q1, r1)));
	if (!isfinite(sd) || !isfinite(sq))
		return false;
	m = sd / (double)n;
	mean = (float)((double)x[0] + m);
	var = sq / (double)n - m * m;
	m = (double)x[0] + m - (double)mean;
	var = (var < 0 ? 0 : var) + m * m;
	*mean_out = mean;
	*inv_out = (float)(1.0 / sqrt(var + eps));
	return true;
}

/*
 * As norm-stats.c's ln_row_f32: mean and 1/sqrt(var + eps) rounded to float
 * (by ln_stats(), one pass; where a sum is not finite, the reference's two
 * passes: mean = sum / n, var = sum (x - mean)^2 / n in double, d = x - mean
 * and d * d in float); y = ((x - mean) * inv) * scale + bias without FMA, so
 * outputs agree with the reference whenever mean and inv do. The two passes
 * cost 16 vector operations a vector, 14 of them the widenings to double and
 * their adds; ln_stats() 11 (197 x 384 at avx512 on the Sapphire Rapids VM:
 * 0.285 -> 0.214 ns an element with the output pass).
 */
static void row_layer_norm(const float *x, const float *scale, const float *bias, float *y,
			   int64_t n, double eps, float *mean_out, float *inv_out)
{
	vd s0 = vd_zero(), s1 = vd_zero();
	vm tail = vm_first(n % VW);
	int64_t full = n - n % VW, i;
	float mean, inv;
	vf vmean, vinv;

	if (ln_stats(x, n, eps, &mean, &inv))
		goto out;
	mean = (float)(row_sum(x, n, false) / (double)n);
	vmean = vf_set1(mean);
	for (i = 0; i < full; i += VW) {
		vf d = vf_sub(vf_ld(x + i), vmean);

		sum_acc(&s0, &s1, vf_mul(d, d));
	}
	if (i < n) {
		vf d = vf_sel(tail, vf_sub(vf_ldm(x + i, tail), vmean), vf_zero());

		sum_acc(&s0, &s1, vf_mul(d, d));
	}
	inv = (float)(1.0 / sqrt(vd_hsum(vd_add(s0, s1)) / (double)n + eps));
out:
	vmean = vf_set1(mean);
	vinv = vf_set1(inv);
	for (i = 0; i < full; i += VW) {
		vf v = vf_mul(vf_mul(vf_sub(vf_ld(x + i), vmean), vinv), vf_ld(scale + i));

		vf_st(y + i, bias ? vf_add(v, vf_ld(bias + i)) : v);
	}
	if (i < n) {
		vf v = vf_mul(vf_mul(vf_sub(vf_ldm(x + i, tail), vmean), vinv),
			      vf_ldm(scale + i, tail));

		vf_stm(y + i, tail, bias ? vf_add(v, vf_ldm(bias + i, tail)) : v);
	}
	*mean_out = mean;
	*inv_out = inv;
}

#endif /* ERT_CPU_ROWS_TMPL_H */
