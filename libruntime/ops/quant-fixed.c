/* SPDX-License-Identifier: MIT */
/* Fixed-point multipliers and requantisation (docs/int8.md, quant-fixed.h). */
#include <math.h>

#include "ops/quant-fixed.h"

bool ert_quant_multiplier(double real, int32_t *mult, int32_t *shift)
{
	int e = 0;
	double q;
	long long m;

	if (!(real >= 0.0) || !isfinite(real))
		return false;
	if (real == 0.0) {
		*mult = 0;
		*shift = 0;
		return true;
	}
	q = frexp(real, &e);
	/* q * 2^31 is exact (a power-of-two scaling); llround ties away from zero */
	m = llround(ldexp(q, 31));
	if (m == (1ll << 31)) {
		m = 1ll << 30;
		e++;
	}
	if (e > ERT_QUANT_SHIFT_MAX)
		return false;
	if (e < ERT_QUANT_SHIFT_MIN) {
		m = 0;
		e = 0;
	}
	*mult = (int32_t)m;
	*shift = e;
	return true;
}

bool ert_quant_product_multiplier(double a_scale, double b_scale, double y_scale,
				  int32_t *mult, int32_t *shift)
{
	if (!(y_scale > 0.0))
		return false;
	return ert_quant_multiplier(a_scale * b_scale / y_scale, mult, shift);
}

bool ert_quant_add_params(double a_scale, double b_scale, double c_scale,
			  struct ert_quant_add *p)
{
	struct ert_quant_add r;
	double t;

	if (!(a_scale > 0.0) || !(b_scale > 0.0) || !(c_scale > 0.0) || !isfinite(a_scale) ||
	    !isfinite(b_scale) || !isfinite(c_scale))
		return false;
	t = 2.0 * (a_scale > b_scale ? a_scale : b_scale);
	/* a_scale / t <= 1/2: these two always fit, with shifts <= 0 */
	if (!ert_quant_multiplier(a_scale / t, &r.a_mult, &r.a_shift) ||
	    !ert_quant_multiplier(b_scale / t, &r.b_mult, &r.b_shift) ||
	    !ert_quant_multiplier(t / ((double)(1 << ERT_QUANT_ADD_LEFT_SHIFT) * c_scale),
				  &r.out_mult, &r.out_shift))
		return false;
	*p = r;
	return true;
}

/* floor(v / 2^n) without relying on how >> treats negative numbers */
static int64_t floor_shift(int64_t v, int n)
{
	if (v >= 0)
		return v >> n;
	return -((-(v + 1)) >> n) - 1;
}

int32_t ert_quant_srdhm(int32_t a, int32_t b)
{
	int64_t p;

	if (a == INT32_MIN && b == INT32_MIN)
		return INT32_MAX;
	/* |a * b| < 2^62 here, and floor(p / 2^31 + 1/2) fits in int32 */
	p = (int64_t)a * b;
	return (int32_t)floor_shift(p + ((int64_t)1 << 30), 31);
}

int32_t ert_quant_rdivpot(int32_t x, int32_t exponent)
{
	int64_t half, v = x;

	if (exponent <= 0)
		return x;
	if (exponent > 31)
		exponent = 31;
	half = (int64_t)1 << (exponent - 1);
	if (v >= 0)
		return (int32_t)((v + half) >> exponent);
	return (int32_t)-((-v + half) >> exponent);
}

int32_t ert_requant_fixed(int32_t x, int32_t mult, int32_t shift)
{
	if (shift > ERT_QUANT_SHIFT_MAX)
		shift = ERT_QUANT_SHIFT_MAX;
	if (shift < ERT_QUANT_SHIFT_MIN)
		shift = ERT_QUANT_SHIFT_MIN;
	if (mult < 0)
		mult = 0;
	if (shift > 0)
		x = (int32_t)((uint32_t)x << shift);
	return ert_quant_rdivpot(ert_quant_srdhm(x, mult), shift > 0 ? 0 : -shift);
}

int32_t ert_quant_avg_round(int64_t sum, int64_t count)
{
	if (count <= 0)
		return 0;
	if (sum >= 0)
		return (int32_t)((sum + count / 2) / count);
	return (int32_t)-((-sum + count / 2) / count);
}
