/* SPDX-License-Identifier: MIT */
/*
 * Float unary kernels: math, activations, rounding, trigonometry, and the
 * IsNaN / IsInf predicates. Each op is one expression in v (the element) and p
 * (its parameters), written once through <tgmath.h> and instantiated for float
 * and double; float16 and bfloat16 go through float32 in stack-sized chunks.
 *
 * Each loop reads x[i] and then writes y[i], so running in place is safe. The
 * parameters are copied to a local first: a float store through y could alias
 * them, which would stop the loops from vectorising.
 */
#include <tgmath.h>

#include "cpu/ops/elementwise.h"
#include "cpu/vec/vec.h"

typedef void (*f32_fn)(const float *x, float *y, int64_t n, const struct ert_unary_params *p);
typedef void (*f64_fn)(const double *x, double *y, int64_t n, const struct ert_unary_params *p);

#define DEF_LOOP(fname, TT, expr)                                                      \
	static void fname(const TT *x, TT *y, int64_t n, const struct ert_unary_params *pp) \
	{                                                                               \
		typedef TT T;                                                           \
		const struct ert_unary_params pl = *pp, *p = &pl;                       \
		(void)p;                                                                \
		(void)sizeof(T);                                                        \
		for (int64_t i = 0; i < n; i++) {                                       \
			T v = x[i];                                                     \
			y[i] = (expr);                                                  \
		}                                                                       \
	}

#define DEF_UNARY(name, expr) DEF_LOOP(name##_f32, float, expr) DEF_LOOP(name##_f64, double, expr)

#define CLAMP01(t) ((t) < (T)0 ? (T)0 : (t) > (T)1 ? (T)1 : (t))

/* Overflow-free forms: exp() only ever sees a non-positive argument. */
#define SIGMOID(v) ((v) >= (T)0 ? (T)1 / ((T)1 + exp(-(v))) : exp(v) / ((T)1 + exp(v)))
#define SOFTPLUS(v) ((v) > (T)0 ? (v) + log1p(exp(-(v))) : log1p(exp(v)))

DEF_UNARY(abs, fabs(v))
DEF_UNARY(neg, -v)
DEF_UNARY(sqrt, sqrt(v))
DEF_UNARY(reciprocal, (T)1 / v)
DEF_UNARY(exp, exp(v))
DEF_UNARY(log, log(v))
DEF_UNARY(erf, erf(v))
DEF_UNARY(tanh, tanh(v))
DEF_UNARY(sigmoid, SIGMOID(v))
/* Written so that NaN passes through. */
DEF_UNARY(relu, v < (T)0 ? (T)0 : v)
/* Selects before the multiply: a conditional multiply would not vectorise. */
DEF_UNARY(leaky_relu, (v < (T)0 ? (T)0 : v) + (v < (T)0 ? v : (T)0) * (T)p->alpha)
DEF_UNARY(elu, v < (T)0 ? (T)p->alpha * expm1(v) : v)
DEF_UNARY(selu, v <= (T)0 ? (T)p->gamma * ((T)p->alpha * exp(v) - (T)p->alpha)
			  : (T)p->gamma * v)
DEF_UNARY(celu, v > (T)0 ? v : (T)p->alpha * expm1(v / (T)p->alpha))
DEF_UNARY(hard_sigmoid, CLAMP01((T)p->alpha * v + (T)p->beta))
DEF_UNARY(hard_swish, v * CLAMP01(v / (T)6 + (T)0.5))
DEF_UNARY(gelu, (T)0.5 * v * ((T)1 + erf(v * (T)0.70710678118654752440)))
DEF_UNARY(gelu_tanh, (T)0.5 * v * ((T)1 + tanh((T)0.79788456080286535588 *
					       (v + (T)0.044715 * v * v * v))))
DEF_UNARY(softplus, SOFTPLUS(v))
DEF_UNARY(softsign, v / ((T)1 + fabs(v)))
DEF_UNARY(mish, v * tanh(SOFTPLUS(v)))
DEF_UNARY(thresholded_relu, v > (T)p->alpha ? v : (T)0)
DEF_UNARY(shrink, v < (T)-p->lo ? v + (T)p->hi : v > (T)p->lo ? v - (T)p->hi : (T)0)
/* max first, then min: with min > max every element becomes max, as ONNX says. */
#define CLIP(v, lo, hi) (((v) < (lo) ? (lo) : (v)) > (hi) ? (hi) : ((v) < (lo) ? (lo) : (v)))
DEF_UNARY(clip, CLIP(v, (T)p->lo, (T)p->hi))
DEF_UNARY(floor, floor(v))
DEF_UNARY(ceil, ceil(v))
/* nearbyint rounds halves to even in the default rounding mode, as ONNX wants. */
DEF_UNARY(round, nearbyint(v))
DEF_UNARY(sign, v > (T)0 ? (T)1 : v < (T)0 ? (T)-1 : v)
DEF_UNARY(acos, acos(v))
DEF_UNARY(acosh, acosh(v))
DEF_UNARY(asin, asin(v))
DEF_UNARY(asinh, asinh(v))
DEF_UNARY(atan, atan(v))
DEF_UNARY(atanh, atanh(v))
DEF_UNARY(cos, cos(v))
DEF_UNARY(cosh, cosh(v))
DEF_UNARY(sin, sin(v))
DEF_UNARY(sinh, sinh(v))
DEF_UNARY(tan, tan(v))

/* Vectorised float32 forms (unary-vmath.c), used unless precision is "high". */
#define DEF_FAST(name)                                                                  \
	static void name##_fast(const float *x, float *y, int64_t n,                    \
				const struct ert_unary_params *p)                       \
	{                                                                               \
		ert_vm_##name##_f32(x, y, n);                                           \
	}

DEF_FAST(sigmoid)
DEF_FAST(tanh)
DEF_FAST(erf)
DEF_FAST(gelu)
DEF_FAST(gelu_tanh)
DEF_FAST(hard_swish)

#define ENTRY(o, name) { ERT_OP_##o, name##_f32, name##_f64, NULL }
#define FAST(o, name) { ERT_OP_##o, name##_f32, name##_f64, name##_fast }

static const struct float_kernel {
	enum ert_op op;
	f32_fn f32;
	f64_fn f64;
	f32_fn f32_fast;
} kernels[] = {
	ENTRY(Abs, abs), ENTRY(Neg, neg), ENTRY(Sqrt, sqrt), ENTRY(Reciprocal, reciprocal),
	ENTRY(Exp, exp), ENTRY(Log, log), FAST(Erf, erf), FAST(Tanh, tanh),
	FAST(Sigmoid, sigmoid), ENTRY(Relu, relu), ENTRY(LeakyRelu, leaky_relu),
	ENTRY(Elu, elu), ENTRY(Selu, selu), ENTRY(Celu, celu),
	ENTRY(HardSigmoid, hard_sigmoid), FAST(HardSwish, hard_swish), FAST(Gelu, gelu),
	ENTRY(Softplus, softplus), ENTRY(Softsign, softsign), ENTRY(Mish, mish),
	ENTRY(ThresholdedRelu, thresholded_relu), ENTRY(Shrink, shrink), ENTRY(Clip, clip),
	ENTRY(Floor, floor), ENTRY(Ceil, ceil), ENTRY(Round, round), ENTRY(Sign, sign),
	ENTRY(Acos, acos), ENTRY(Acosh, acosh), ENTRY(Asin, asin), ENTRY(Asinh, asinh),
	ENTRY(Atan, atan), ENTRY(Atanh, atanh), ENTRY(Cos, cos), ENTRY(Cosh, cosh),
	ENTRY(Sin, sin), ENTRY(Sinh, sinh), ENTRY(Tan, tan),
};

static const struct float_kernel *find_kernel(enum ert_op op, const struct ert_unary_params *p)
{
	static const struct float_kernel tanh_gelu = { ERT_OP_Gelu, gelu_tanh_f32, gelu_tanh_f64,
						       gelu_tanh_fast };

	if (op == ERT_OP_Gelu && p && p->flag_a)
		return &tanh_gelu;
	for (size_t i = 0; i < sizeof(kernels) / sizeof(kernels[0]); i++)
		if (kernels[i].op == op)
			return &kernels[i];
	return NULL;
}

bool ert_unary_float_supported(enum ert_op op)
{
	return op == ERT_OP_IsNaN || op == ERT_OP_IsInf || find_kernel(op, NULL);
}

/* IsNaN / IsInf as one predicate over double (exact for every float type). */
static uint8_t predicate(enum ert_op op, const struct ert_unary_params *p, double v)
{
	if (op == ERT_OP_IsNaN)
		return isnan(v) != 0;
	if (!isinf(v))
		return 0;
	return v > 0 ? p->flag_b : p->flag_a;
}

/*
 * The vector kernel (cpu/vec/vec.h) of @op at @cpu's level, or -1. Those
 * computing the reference's own arithmetic always; the approximations
 * (bounds in cpu/vec/vmath.h) unless precision is HIGH, like the f32_fast
 * forms above.
 */
static int vec_unary_id(const struct ert_cpu *cpu, enum ert_op op,
			const struct ert_unary_params *p)
{
	bool approx = !(cpu && cpu->precision == ERT_LEVEL_HIGH);

	if (!cpu || !ert_vec_kernels_for(cpu->isa))
		return -1;
	switch (op) {
	case ERT_OP_Relu: return ERT_VEC_RELU;
	case ERT_OP_Clip: return ERT_VEC_CLIP;
	case ERT_OP_LeakyRelu: return ERT_VEC_LEAKY_RELU;
	case ERT_OP_HardSigmoid: return ERT_VEC_HARD_SIGMOID;
	case ERT_OP_HardSwish: return ERT_VEC_HARD_SWISH;
	case ERT_OP_Sigmoid: return approx ? ERT_VEC_SIGMOID : -1;
	case ERT_OP_Tanh: return approx ? ERT_VEC_TANH : -1;
	case ERT_OP_Erf: return approx ? ERT_VEC_ERF : -1;
	case ERT_OP_Exp: return approx ? ERT_VEC_EXP : -1;
	case ERT_OP_Gelu:
		return !approx ? -1 : p->flag_a ? ERT_VEC_GELU_TANH : ERT_VEC_GELU;
	default: return -1;
	}
}

const char *ert_unary_float_kernel(const struct ert_cpu *cpu, enum ert_op op,
				   const struct ert_unary_params *p, ert_dtype dt)
{
	if (!ert_ew_is_arith_float(dt) || dt == ERT_DTYPE_FLOAT64 || vec_unary_id(cpu, op, p) < 0)
		return NULL;
	return ert_vec_kernels_for(cpu->isa)->name_eltwise;
}

struct job {
	const struct float_kernel *k;
	f32_fn f32;
	ert_vec_unary_fn vec;        /* f32 through a vector kernel instead, when set */
	struct ert_vec_uparams vp;
	enum ert_op op;
	const struct ert_unary_params *p;
	ert_dtype dt;
	const void *x;
	void *y;
};

static void run_range(void *arg, int64_t begin, int64_t end)
{
	const struct job *j = arg;
	int64_t n = end - begin;

	if (j->op == ERT_OP_IsNaN || j->op == ERT_OP_IsInf) {
		uint8_t *y = (uint8_t *)j->y + begin;

		for (int64_t i = 0; i < n; i++) {
			double v;

			switch (j->dt) {
			case ERT_DTYPE_FLOAT32: v = ((const float *)j->x)[begin + i]; break;
			case ERT_DTYPE_FLOAT64: v = ((const double *)j->x)[begin + i]; break;
			case ERT_DTYPE_BFLOAT16:
				v = ert_bf16_to_fp32(((const uint16_t *)j->x)[begin + i]);
				break;
			case ERT_DTYPE_FLOAT16:
				v = ert_fp16_to_fp32(((const uint16_t *)j->x)[begin + i]);
				break;
			default: v = ert_fp8_to_f32(((const uint8_t *)j->x)[begin + i], j->dt); break;
			}
			y[i] = predicate(j->op, j->p, v);
		}
		return;
	}
	switch (j->dt) {
	case ERT_DTYPE_FLOAT32:
		if (j->vec)
			j->vec((const float *)j->x + begin, (float *)j->y + begin, n, &j->vp);
		else
			j->f32((const float *)j->x + begin, (float *)j->y + begin, n, j->p);
		break;
	case ERT_DTYPE_FLOAT64:
		j->k->f64((const double *)j->x + begin, (double *)j->y + begin, n, j->p);
		break;
	default: {
		float buf[ERT_EW_CHUNK];

		for (int64_t i = begin; i < end; i += ERT_EW_CHUNK) {
			int64_t m = end - i < ERT_EW_CHUNK ? end - i : ERT_EW_CHUNK;

			ert_half_to_f32(j->dt, (const uint16_t *)j->x + i, buf, m);
			if (j->vec)
				j->vec(buf, buf, m, &j->vp);
			else
				j->f32(buf, buf, m, j->p);
			ert_f32_to_half(j->dt, buf, (uint16_t *)j->y + i, m);
		}
		break;
	}
	}
}

ert_status ert_unary_float_run(struct ert_cpu *cpu, enum ert_op op,
			       const struct ert_unary_params *p, const struct ert_value *in,
			       struct ert_value *out, struct ert_err *err)
{
	struct job j = { .k = find_kernel(op, p), .op = op, .p = p, .dt = in->dtype,
			 .x = in->data, .y = out->data };

	bool pred = op == ERT_OP_IsNaN || op == ERT_OP_IsInf;

	if (!(ert_ew_is_arith_float(in->dtype) || (pred && ert_dtype_is_fp8(in->dtype))) ||
	    (!j.k && !pred)) {
		ert_err_set(err, "%s: no cpu kernel for %s", ert_op_name(op),
			    ert_dtype_name(in->dtype));
		return ERT_STATUS_UNSUPPORTED;
	}
	if (j.k)
		j.f32 = j.k->f32_fast && !(cpu && cpu->precision == ERT_LEVEL_HIGH) ? j.k->f32_fast
										: j.k->f32;
	if (j.k && ert_unary_float_kernel(cpu, op, p, in->dtype)) {
		j.vec = ert_vec_kernels_for(cpu->isa)->unary[vec_unary_id(cpu, op, p)];
		/* the reference rounds its parameters to float as well */
		j.vp = (struct ert_vec_uparams){ .lo = (float)p->lo, .hi = (float)p->hi,
						 .alpha = p->alpha, .beta = p->beta };
	}
	ert_ew_parallel(cpu, in->numel, run_range, &j);
	return ERT_OK;
}
