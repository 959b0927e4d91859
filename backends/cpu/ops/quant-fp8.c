/* SPDX-License-Identifier: MIT */
/* Float8 decoding and round-to-nearest-even encoding. */
#include <math.h>

#include "cpu/ops/quant-fp8.h"

struct fp8_fmt {
	int man_bits, bias;
	bool fnuz;      /* no -0, no inf; 0x80 is the only NaN */
	bool has_inf;   /* E5M2: IEEE-style inf and NaN at the top exponent */
	double max;
};

static struct fp8_fmt fmt_of(ert_dtype dt)
{
	switch (dt) {
	case ERT_DTYPE_FLOAT8E4M3FNUZ: return (struct fp8_fmt){ 3, 8, true, false, 240.0 };
	case ERT_DTYPE_FLOAT8E5M2: return (struct fp8_fmt){ 2, 15, false, true, 57344.0 };
	case ERT_DTYPE_FLOAT8E5M2FNUZ: return (struct fp8_fmt){ 2, 16, true, false, 57344.0 };
	default: return (struct fp8_fmt){ 3, 7, false, false, 448.0 }; /* E4M3FN */
	}
}

float ert_q_fp8_to_f32(uint8_t b, ert_dtype dt)
{
	struct fp8_fmt f = fmt_of(dt);
	int exp_bits = 7 - f.man_bits, sign = b >> 7;
	int e = (b >> f.man_bits) & ((1 << exp_bits) - 1), m = b & ((1 << f.man_bits) - 1);
	double v;

	if (f.fnuz && b == 0x80)
		return NAN;
	if (!f.fnuz && !f.has_inf && (b & 0x7f) == 0x7f)
		return NAN;
	if (f.has_inf && e == (1 << exp_bits) - 1)
		return m ? NAN : (sign ? -INFINITY : INFINITY);
	if (e == 0)
		v = ldexp((double)m, 1 - f.bias - f.man_bits);
	else
		v = ldexp((double)((1 << f.man_bits) | m), e - f.bias - f.man_bits);
	return (float)(sign ? -v : v);
}

static uint8_t nan_code(const struct fp8_fmt *f, int sign)
{
	if (f->fnuz)
		return 0x80;
	return (uint8_t)((sign << 7) | 0x7f);
}

uint8_t ert_q_f32_to_fp8(float in, ert_dtype dt, bool saturate)
{
	struct fp8_fmt f = fmt_of(dt);
	int sign = signbit(in) ? 1 : 0, emin = 1 - f.bias, e;
	double a = fabs((double)in), q, spacing;
	uint8_t code;

	if (isnan(in))
		return nan_code(&f, sign);
	if (isinf(in)) {
		if (saturate)
			return (uint8_t)((sign << 7) | ert_q_f32_to_fp8((float)f.max, dt, true));
		return f.has_inf ? (uint8_t)((sign << 7) | 0x7c) : nan_code(&f, sign);
	}
	if (a == 0.0)
		return f.fnuz ? 0 : (uint8_t)(sign << 7);
	frexp(a, &e);
	e -= 1; /* a = 1.x * 2^e */
	if (e < emin)
		e = emin;
	spacing = ldexp(1.0, e - f.man_bits);
	q = nearbyint(a / spacing) * spacing;
	if (q > f.max) {
		if (saturate)
			q = f.max;
		else
			return f.has_inf ? (uint8_t)((sign << 7) | 0x7c) : nan_code(&f, sign);
	}
	if (q == 0.0)
		return f.fnuz ? 0 : (uint8_t)(sign << 7);
	if (q < ldexp(1.0, emin)) {
		code = (uint8_t)(q / ldexp(1.0, emin - f.man_bits));
	} else {
		frexp(q, &e);
		e -= 1;
		code = (uint8_t)(((e + f.bias) << f.man_bits) |
				 ((int)(q / ldexp(1.0, e - f.man_bits)) - (1 << f.man_bits)));
	}
	return (uint8_t)((sign << 7) | code);
}
