/* SPDX-License-Identifier: MIT */
/*
 * quant-fixed.h — the fixed-point requantisation of docs/int8.md (TFLite's
 * int8 reference arithmetic, also the enpu command stream's). The CPU
 * kernels of int8 ops carrying "ert.requant = 1" and the NPU lowering both
 * compute their multipliers here, so the two agree bit for bit.
 *
 * A real multiplier r > 0 is represented as (m, s) with m in [2^30, 2^31)
 * and r ~= m * 2^(s - 31); requantising an int32 x then computes
 * round(x * r) with the rounding of TFLite's MultiplyByQuantizedMultiplier:
 *
 *	int32_t m, s;
 *	if (!ert_quant_multiplier((double)x_s * w_s / y_s, &m, &s))
 *		refuse the op: r cannot be represented (s > 30)
 *	y = ert_requant_fixed(acc, m, s) + y_zero_point, then clamp
 *
 * Nothing here allocates or depends on the rest of libedgert.
 */
#ifndef ERT_QUANT_FIXED_H
#define ERT_QUANT_FIXED_H

#include <stdbool.h>
#include <stdint.h>

/* Largest and smallest shift a multiplier may have. */
#define ERT_QUANT_SHIFT_MAX 30
#define ERT_QUANT_SHIFT_MIN (-31)
/* QLinearAdd: inputs are shifted left by this many bits before scaling (TFLite). */
#define ERT_QUANT_ADD_LEFT_SHIFT 20

/*
 * TFLite's QuantizeMultiplier: @real = q * 2^s with q in [0.5, 1) (frexp),
 * m = q * 2^31 rounded half away from zero; m == 2^31 becomes 2^30 with
 * s + 1. @real == 0, or s < -31 (too small to matter), give (0, 0).
 * Returns false, leaving *@mult and *@shift alone, when @real is negative,
 * not finite, or too large (s > 30).
 */
bool ert_quant_multiplier(double real, int32_t *mult, int32_t *shift);

/*
 * The multiplier a_scale * b_scale / y_scale, evaluated in double in that
 * order from the (float32) scales: QLinearConv, QLinearMatMul, QGemm (per
 * output channel / column) and QLinearMul. Same return as above.
 */
bool ert_quant_product_multiplier(double a_scale, double b_scale, double y_scale,
				  int32_t *mult, int32_t *shift);

/*
 * The three multipliers of QLinearAdd (TFLite ADD): with t = 2 * max(a_s, b_s),
 * a' = requant((a - a_zp) << 20, a_mult, a_shift) for a_s / t, b' likewise,
 * y = requant(a' + b', out_mult, out_shift) for t / (2^20 * c_s).
 * a_shift and b_shift are in [-31, 0].
 */
struct ert_quant_add {
	int32_t a_mult, a_shift;
	int32_t b_mult, b_shift;
	int32_t out_mult, out_shift;
};

/* False (and *@p untouched) when a scale is not positive and finite or out_shift > 30. */
bool ert_quant_add_params(double a_scale, double b_scale, double c_scale,
			  struct ert_quant_add *p);

/*
 * TFLite's SaturatingRoundingDoublingHighMul: round(a * b / 2^31) with ties
 * rounded up (toward +infinity); INT32_MIN * INT32_MIN saturates to INT32_MAX.
 */
int32_t ert_quant_srdhm(int32_t a, int32_t b);

/* TFLite's RoundingDivideByPOT: x / 2^@exponent rounded half away from zero; @exponent 0..31. */
int32_t ert_quant_rdivpot(int32_t x, int32_t exponent);

/*
 * requant(x, m, s) = rdivpot(srdhm(x << max(s, 0), m), max(-s, 0)); the left
 * shift wraps modulo 2^32. Out-of-range arguments are clamped as the enpu
 * executor clamps them (s to [-31, 30], m to >= 0), so every input is defined.
 */
int32_t ert_requant_fixed(int32_t x, int32_t mult, int32_t shift);

/* Average pooling: @sum / @count rounded half away from zero; 0 when @count is 0. */
int32_t ert_quant_avg_round(int64_t sum, int64_t count);

#endif /* ERT_QUANT_FIXED_H */
