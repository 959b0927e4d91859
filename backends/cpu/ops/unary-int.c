/* SPDX-License-Identifier: MIT */
/*
 * Integer and bool unary kernels: Abs, Neg, Sign, Relu, Clip, Shrink, BitwiseNot,
 * Not.
 * Negation goes through unsigned arithmetic so that the most negative value
 * wraps (as numpy does) instead of overflowing. Each loop reads x[i] before
 * writing y[i], so running in place is safe.
 */
#include "cpu/ops/elementwise.h"

/* Shrink's lambd and bias are floats: the arithmetic is done in double. */
static inline int64_t shrink(double v, double lambd, double bias)
{
	double r = v < -lambd ? v + bias : v > lambd ? v - bias : 0.0;

	return r >= 9.2e18 ? INT64_MAX : r <= -9.2e18 ? INT64_MIN : (int64_t)r;
}

#define LOOP(expr)                                                                     \
	do {                                                                           \
		for (int64_t i = 0; i < n; i++) {                                      \
			E v = x[i];                                                    \
			y[i] = (E)(expr);                                              \
		}                                                                      \
	} while (0)

#define DEF_SIGNED(T, UT)                                                              \
	static void run_##T(enum ert_op op, const struct ert_unary_params *p,          \
			    const T *x, T *y, int64_t n)                               \
	{                                                                              \
		typedef T E; /* LOOP's element type */                                 \
		T lo = (T)p->ilo, hi = (T)p->ihi;                                      \
		switch (op) {                                                          \
		case ERT_OP_Abs: LOOP(v < 0 ? (T)(UT)(0u - (UT)v) : v); break;        \
		case ERT_OP_Neg: LOOP((T)(UT)(0u - (UT)v)); break;                     \
		case ERT_OP_Sign: LOOP(v > 0 ? 1 : v < 0 ? -1 : 0); break;            \
		case ERT_OP_Relu: LOOP(v < 0 ? 0 : v); break;                          \
		case ERT_OP_Clip: LOOP((v < lo ? lo : v) > hi ? hi : (v < lo ? lo : v)); break;          \
		case ERT_OP_BitwiseNot: LOOP(~v); break;                               \
		case ERT_OP_Shrink: LOOP(shrink((double)v, p->lo, p->hi)); break;       \
		default: break;                                                        \
		}                                                                      \
	}

#define DEF_UNSIGNED(T)                                                                \
	static void run_##T(enum ert_op op, const struct ert_unary_params *p,          \
			    const T *x, T *y, int64_t n)                               \
	{                                                                              \
		typedef T E; /* LOOP's element type */                                 \
		T lo = (T)(uint64_t)p->ilo, hi = (T)(uint64_t)p->ihi;                  \
		switch (op) {                                                          \
		case ERT_OP_Abs:                                                       \
		case ERT_OP_Relu: LOOP(v); break;                                      \
		case ERT_OP_Neg: LOOP(0u - v); break;                                  \
		case ERT_OP_Sign: LOOP(v != 0); break;                                 \
		case ERT_OP_Clip: LOOP((v < lo ? lo : v) > hi ? hi : (v < lo ? lo : v)); break;          \
		case ERT_OP_BitwiseNot: LOOP(~v); break;                               \
		case ERT_OP_Shrink: LOOP(shrink((double)v, p->lo, p->hi)); break;       \
		default: break;                                                        \
		}                                                                      \
	}

DEF_SIGNED(int8_t, uint8_t)
DEF_SIGNED(int16_t, uint16_t)
DEF_SIGNED(int32_t, uint32_t)
DEF_SIGNED(int64_t, uint64_t)
DEF_UNSIGNED(uint8_t)
DEF_UNSIGNED(uint16_t)
DEF_UNSIGNED(uint32_t)
DEF_UNSIGNED(uint64_t)

bool ert_unary_int_supported(enum ert_op op)
{
	switch (op) {
	case ERT_OP_Abs:
	case ERT_OP_Neg:
	case ERT_OP_Sign:
	case ERT_OP_Relu:
	case ERT_OP_Clip:
	case ERT_OP_BitwiseNot:
	case ERT_OP_Not:
	case ERT_OP_Shrink:
		return true;
	default:
		return false;
	}
}

struct job {
	enum ert_op op;
	const struct ert_unary_params *p;
	ert_dtype dt;
	const void *x;
	void *y;
};

#define CALL(T) run_##T(j->op, j->p, (const T *)j->x + b, (T *)j->y + b, n)

static void run_range(void *arg, int64_t b, int64_t e)
{
	const struct job *j = arg;
	int64_t n = e - b;

	switch (j->dt) {
	case ERT_DTYPE_INT8: CALL(int8_t); break;
	case ERT_DTYPE_INT16: CALL(int16_t); break;
	case ERT_DTYPE_INT32: CALL(int32_t); break;
	case ERT_DTYPE_INT64: CALL(int64_t); break;
	case ERT_DTYPE_UINT8: CALL(uint8_t); break;
	case ERT_DTYPE_UINT16: CALL(uint16_t); break;
	case ERT_DTYPE_UINT32: CALL(uint32_t); break;
	case ERT_DTYPE_UINT64: CALL(uint64_t); break;
	case ERT_DTYPE_BOOL: {
		const uint8_t *x = (const uint8_t *)j->x + b;
		uint8_t *y = (uint8_t *)j->y + b;

		for (int64_t i = 0; i < n; i++)
			y[i] = !x[i];
		break;
	}
	default:
		break;
	}
}

ert_status ert_unary_int_run(struct ert_cpu *cpu, enum ert_op op,
			     const struct ert_unary_params *p, const struct ert_value *in,
			     struct ert_value *out, struct ert_err *err)
{
	struct job j = { op, p, in->dtype, in->data, out->data };
	bool is_bool = in->dtype == ERT_DTYPE_BOOL;

	if (!ert_unary_int_supported(op) || (op == ERT_OP_Not) != is_bool ||
	    (!is_bool && !ert_ew_is_int(in->dtype))) {
		ert_err_set(err, "%s: no cpu kernel for %s", ert_op_name(op),
			    ert_dtype_name(in->dtype));
		return ERT_STATUS_UNSUPPORTED;
	}
	ert_ew_parallel(cpu, in->numel, run_range, &j);
	return ERT_OK;
}
