/* SPDX-License-Identifier: MIT */
/*
 * CPU reference kernels: elementwise unary ops. This file reads parameters and
 * dispatches by dtype to unary-float.c, unary-int.c and unary-cast.c.
 */
#include <math.h>
#include <string.h>

#include "cpu/ops/strings.h"
#include "cpu/ops/elementwise.h"

static const struct ert_value *opt_in(const struct ert_exec *x, uint32_t i)
{
	return i < x->n_in ? x->in[i] : NULL;
}

/* Clip bounds: attributes before opset 11, optional scalar inputs after. */
static ert_status clip_bounds(const struct ert_exec *x, struct ert_unary_params *p,
			      struct ert_err *err)
{
	const struct ert_value *in = x->in[0];
	const struct ert_value *b[2] = { opt_in(x, 1), opt_in(x, 2) };

	p->lo = ert_attr_float(x->node, "min", -INFINITY);
	p->hi = ert_attr_float(x->node, "max", INFINITY);
	/* Integer defaults: the type's range (uint64's max as its bits, -1). */
	switch (in->dtype) {
	case ERT_DTYPE_INT8: p->ilo = INT8_MIN; p->ihi = INT8_MAX; break;
	case ERT_DTYPE_INT16: p->ilo = INT16_MIN; p->ihi = INT16_MAX; break;
	case ERT_DTYPE_INT32: p->ilo = INT32_MIN; p->ihi = INT32_MAX; break;
	case ERT_DTYPE_UINT8: p->ilo = 0; p->ihi = UINT8_MAX; break;
	case ERT_DTYPE_UINT16: p->ilo = 0; p->ihi = UINT16_MAX; break;
	case ERT_DTYPE_UINT32: p->ilo = 0; p->ihi = UINT32_MAX; break;
	case ERT_DTYPE_UINT64: p->ilo = 0; p->ihi = -1; break;
	default: p->ilo = INT64_MIN; p->ihi = INT64_MAX; break;
	}
	for (int k = 0; k < 2; k++) {
		if (!b[k])
			continue;
		if (!b[k]->data || b[k]->numel != 1 || b[k]->dtype != in->dtype)
			return ert_node_fail(x->node, err, ERT_STATUS_INVALID_MODEL,
					     "%s bound must be a scalar of the input's type",
					     k ? "max" : "min");
		if (ert_ew_is_arith_float(in->dtype)) {
			double v = ert_value_get_float(b[k], 0);

			*(k ? &p->hi : &p->lo) = v;
		} else {
			*(k ? &p->ihi : &p->ilo) = ert_value_get_int(b[k], 0);
		}
	}
	return ERT_OK;
}

ert_status ert_unary_params_read(const struct ert_exec *x, struct ert_unary_params *p,
				 struct ert_err *err)
{
	const struct ert_node *n = x->node;

	memset(p, 0, sizeof(*p));
	switch (n->op) {
	case ERT_OP_LeakyRelu:
		p->alpha = ert_attr_float(n, "alpha", 0.01f);
		break;
	case ERT_OP_Elu:
	case ERT_OP_Celu:
	case ERT_OP_ThresholdedRelu:
		p->alpha = ert_attr_float(n, "alpha", 1.0f);
		break;
	case ERT_OP_Selu:
		p->alpha = ert_attr_float(n, "alpha", 1.67326319217681884765625f);
		p->gamma = ert_attr_float(n, "gamma", 1.05070102214813232421875f);
		break;
	case ERT_OP_HardSigmoid:
		p->alpha = ert_attr_float(n, "alpha", 0.2f);
		p->beta = ert_attr_float(n, "beta", 0.5f);
		break;
	case ERT_OP_Shrink:
		p->lo = ert_attr_float(n, "lambd", 0.5f);
		p->hi = ert_attr_float(n, "bias", 0.0f);
		break;
	case ERT_OP_Gelu: {
		const char *a = ert_attr_string(n, "approximate", "none");

		if (strcmp(a, "none") != 0 && strcmp(a, "tanh") != 0)
			return ert_node_fail(n, err, ERT_STATUS_INVALID_MODEL,
					     "approximate '%s', expected none or tanh", a);
		p->flag_a = strcmp(a, "tanh") == 0;
		break;
	}
	case ERT_OP_IsInf:
		p->flag_a = ert_attr_int(n, "detect_negative", 1) != 0;
		p->flag_b = ert_attr_int(n, "detect_positive", 1) != 0;
		break;
	case ERT_OP_Clip:
		return clip_bounds(x, p, err);
	default:
		break;
	}
	return ERT_OK;
}

static bool unary_supports(const struct ert_exec *x)
{
	ert_dtype dt = x->in[0]->dtype;
	enum ert_op op = x->node->op;

	if (ert_ew_is_arith_float(dt))
		return ert_unary_float_supported(op);
	if (ert_dtype_is_fp8(dt))
		return op == ERT_OP_IsNaN || op == ERT_OP_IsInf;
	if (ert_ew_is_int(dt) || dt == ERT_DTYPE_BOOL)
		return ert_unary_int_supported(op) && (op == ERT_OP_Not) == (dt == ERT_DTYPE_BOOL);
	return false;
}

/* Shape inference guarantees this; a kernel must still never write out of bounds. */
static ert_status same_count(const struct ert_exec *x, struct ert_err *err)
{
	if (x->out[0]->numel == x->in[0]->numel)
		return ERT_OK;
	return ert_node_fail(x->node, err, ERT_STATUS_INTERNAL,
			     "output has %lld elements, input %lld", (long long)x->out[0]->numel,
			     (long long)x->in[0]->numel);
}

static ert_status unary_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	struct ert_unary_params p;
	ert_status st = same_count(x, err);

	if (st == ERT_OK)
		st = ert_unary_params_read(x, &p, err);
	if (st != ERT_OK)
		return st;
	if (ert_ew_is_arith_float(x->in[0]->dtype) || ert_dtype_is_fp8(x->in[0]->dtype))
		return ert_unary_float_run(cpu, x->node->op, &p, x->in[0], x->out[0], err);
	return ert_unary_int_run(cpu, x->node->op, &p, x->in[0], x->out[0], err);
}

static void copy_value(const struct ert_value *in, struct ert_value *out)
{
	size_t n = in->nbytes < out->nbytes ? in->nbytes : out->nbytes;

	if (out->data != in->data && n)
		memmove(out->data, in->data, n);
}

static ert_status identity_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	copy_value(x->in[0], x->out[0]);
	return ERT_OK;
}

static ert_status cast_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	bool saturate = ert_attr_int(x->node, "saturate", 1) != 0;

	if (same_count(x, err) != ERT_OK)
		return ERT_STATUS_INTERNAL;
	if (x->in[0]->dtype == ERT_DTYPE_STRING || x->out[0]->dtype == ERT_DTYPE_STRING)
		return ert_cpu_string_cast(x, err);
	return ert_cast_run(cpu, x->in[0], x->out[0], saturate, err);
}

/* Names the vector kernel the op will run, for edgert profile. */
static ert_status unary_prepare(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	struct ert_unary_params p;
	struct ert_err perr;

	/* only Gelu's form picks the kernel; a bad attribute is compute()'s to report */
	memset(&p, 0, sizeof(p));
	if (x->node->op == ERT_OP_Gelu && ert_unary_params_read(x, &p, &perr) != ERT_OK)
		return ERT_OK;
	x->kernel = ert_unary_float_kernel(cpu, x->node->op, &p, x->in[0]->dtype);
	return ERT_OK;
}

#define UNARY(o)                                                                         \
	{ .op = ERT_OP_##o, .supports = unary_supports, .prepare = unary_prepare,        \
	  .compute = unary_compute }

const struct ert_cpu_op ert_cpu_ops_unary[] = {
	UNARY(Abs), UNARY(Neg), UNARY(Sqrt), UNARY(Reciprocal), UNARY(Exp), UNARY(Log),
	UNARY(Erf), UNARY(Tanh), UNARY(Sigmoid), UNARY(Relu), UNARY(LeakyRelu), UNARY(Elu),
	UNARY(Selu), UNARY(Celu), UNARY(HardSigmoid), UNARY(HardSwish), UNARY(Gelu),
	UNARY(Softplus), UNARY(Softsign), UNARY(Mish), UNARY(ThresholdedRelu), UNARY(Shrink),
	UNARY(Clip), UNARY(Floor), UNARY(Ceil), UNARY(Round), UNARY(Sign), UNARY(Not),
	UNARY(IsNaN), UNARY(IsInf), UNARY(Acos), UNARY(Acosh), UNARY(Asin), UNARY(Asinh),
	UNARY(Atan), UNARY(Atanh), UNARY(Cos), UNARY(Cosh), UNARY(Sin), UNARY(Sinh),
	UNARY(Tan), UNARY(BitwiseNot),
	{ .op = ERT_OP_Identity, .compute = identity_compute },
	{ .op = ERT_OP_Dropout, .compute = ert_dropout_compute },
	{ .op = ERT_OP_Cast, .compute = cast_compute },
	{ .op = ERT_OP_CastLike, .compute = cast_compute },
	{ .compute = NULL },
};
