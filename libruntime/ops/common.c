/* SPDX-License-Identifier: MIT */
/* Helpers shared by shape inference and kernels. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ert-op-impl.h"

bool ert_value_finish(struct ert_value *v)
{
	int64_t n = ert_shape_numel(v->rank, v->dims);

	if (n < 0 || (ert_dtype_size(v->dtype) && n > (int64_t)(SIZE_MAX / 16)))
		return false;
	/*
	 * A tensor with no elements may not carry huge dims into later arithmetic
	 * either: each dim is at most ERT_DIM_MAX and the product of the non-zero
	 * dims stays under the element limit, so any product of some of the dims
	 * (a kernel's plane or row size) fits.
	 */
	int64_t nz = 1;

	for (int32_t i = 0; i < v->rank; i++) {
		if (v->dims[i] > ERT_DIM_MAX)
			return false;
		if (v->dims[i] && (!ert_mul_i64(nz, v->dims[i], &nz) || nz > (int64_t)(SIZE_MAX / 16)))
			return false;
	}
	v->numel = n;
	v->nbytes = ert_dtype_bytes(v->dtype, n);
	return true;
}

void ert_tensor_take_shape(struct ert_tensor *x, const struct ert_value *v)
{
	x->dtype = v->dtype;
	x->rank = v->rank;
	for (int32_t i = 0; i < ERT_MAX_RANK; i++) {
		x->dims[i] = i < v->rank ? v->dims[i] : 0;
		x->dim_names[i] = NULL;
	}
}

void ert_tensor_make_const(struct ert_graph *g, int32_t t, struct ert_value *v)
{
	ert_tensor_take_shape(&g->tensors[t], v);
	ert_graph_set_const(g, t, v->data, v->nbytes, true);
	v->data = NULL;
}

void ert_value_set_shape(struct ert_value *dst, ert_dtype dt, int32_t rank, const int64_t *dims)
{
	dst->dtype = dt;
	dst->rank = rank;
	for (int32_t i = 0; i < rank; i++)
		dst->dims[i] = dims[i];
}

ert_status ert_broadcast_shapes(const struct ert_value *const *vals, uint32_t n,
				struct ert_value *out, struct ert_err *err, const char *op)
{
	int32_t rank = 0;

	for (uint32_t k = 0; k < n; k++)
		if (vals[k] && vals[k]->rank > rank)
			rank = vals[k]->rank;
	for (int32_t i = 0; i < rank; i++) {
		int64_t d = 1;

		for (uint32_t k = 0; k < n; k++) {
			const struct ert_value *v = vals[k];

			if (!v)
				continue;
			int32_t j = i - (rank - v->rank);

			if (j < 0)
				continue;
			int64_t e = v->dims[j];

			if (e == d || e == 1)
				continue;
			if (d == 1) {
				d = e;
				continue;
			}
			ert_err_set(err, "%s: cannot broadcast dimension %d: %lld vs %lld", op,
				    (int)i, (long long)d, (long long)e);
			return ERT_STATUS_SHAPE;
		}
		out->dims[i] = d;
	}
	out->rank = rank;
	return ERT_OK;
}

bool ert_norm_axis(int64_t axis, int32_t rank, int32_t *out)
{
	if (axis < -(int64_t)rank || axis >= rank)
		return false;
	*out = (int32_t)(axis < 0 ? axis + rank : axis);
	return true;
}

int64_t ert_value_get_int(const struct ert_value *v, int64_t i)
{
	const void *p = v->data;

	switch (v->dtype) {
	case ERT_DTYPE_INT64: return ((const int64_t *)p)[i];
	case ERT_DTYPE_INT32: return ((const int32_t *)p)[i];
	case ERT_DTYPE_INT16: return ((const int16_t *)p)[i];
	case ERT_DTYPE_INT8: return ((const int8_t *)p)[i];
	case ERT_DTYPE_UINT64: return (int64_t)((const uint64_t *)p)[i];
	case ERT_DTYPE_UINT32: return ((const uint32_t *)p)[i];
	case ERT_DTYPE_UINT16: return ((const uint16_t *)p)[i];
	case ERT_DTYPE_UINT8:
	case ERT_DTYPE_BOOL: return ((const uint8_t *)p)[i];
	default: return (int64_t)ert_value_get_float(v, i);
	}
}

double ert_value_get_float(const struct ert_value *v, int64_t i)
{
	const void *p = v->data;

	switch (v->dtype) {
	case ERT_DTYPE_FLOAT32: return ((const float *)p)[i];
	case ERT_DTYPE_FLOAT64: return ((const double *)p)[i];
	case ERT_DTYPE_FLOAT16: return ert_fp16_to_fp32(((const uint16_t *)p)[i]);
	case ERT_DTYPE_BFLOAT16: return ert_bf16_to_fp32(((const uint16_t *)p)[i]);
	case ERT_DTYPE_INT4:
	case ERT_DTYPE_UINT4:
	case ERT_DTYPE_FLOAT8E4M3FN:
	case ERT_DTYPE_FLOAT8E4M3FNUZ:
	case ERT_DTYPE_FLOAT8E5M2:
	case ERT_DTYPE_FLOAT8E5M2FNUZ:
	case ERT_DTYPE_UNDEFINED:
	case ERT_DTYPE_STRING:
	case ERT_DTYPE_COMPLEX64:
	case ERT_DTYPE_COMPLEX128:
	case ERT_DTYPE_COUNT:
		return NAN;
	default:
		return (double)ert_value_get_int(v, i);
	}
}

ert_status ert_check_dim(const struct ert_node *n, struct ert_err *err, const char *what,
			 int64_t idx, int64_t v)
{
	char at[96];

	if (v >= 0 && v <= ERT_DIM_MAX)
		return ERT_OK;
	if (idx < 0)
		snprintf(at, sizeof(at), "%s", what);
	else
		snprintf(at, sizeof(at), "%s[%lld]", what, (long long)idx);
	return ert_node_fail(n, err, ERT_STATUS_SHAPE, "%s = %lld %s", at, (long long)v,
			     v < 0 ? "is negative" : "exceeds the largest dimension, 2^48");
}

ert_status ert_check_known(const struct ert_node *n, struct ert_err *err, const char *what,
			   const struct ert_value *v)
{
	/* numel -1: a shape not known yet, so neither are the values */
	if (v->data || v->numel == 0)
		return ERT_OK;
	return ert_node_fail(n, err, ERT_STATUS_UNSUPPORTED,
			     "%s must be known when the model is planned", what);
}

const char *ert_node_label(const struct ert_node *n, char *buf, size_t size)
{
	snprintf(buf, size, "%s '%s'", ert_op_name(n->op), n->name ? n->name : "");
	return buf;
}

static ert_status __attribute__((format(printf, 4, 0)))
node_vfail(const struct ert_node *n, struct ert_err *err, ert_status st, const char *fmt,
	   va_list ap)
{
	char buf[400], who[160];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	ert_err_set(err, "%s: %s", ert_node_label(n, who, sizeof(who)), buf);
	return st;
}

ert_status ert_node_fail(const struct ert_node *n, struct ert_err *err, ert_status st,
			 const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	st = node_vfail(n, err, st, fmt, ap);
	va_end(ap);
	return st;
}

ert_status ert_infer_fail(struct ert_infer_ctx *ctx, ert_status st, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	st = node_vfail(ctx->node, ctx->err, st, fmt, ap);
	va_end(ap);
	return st;
}

struct ert_act_desc ert_node_act(const struct ert_node *n)
{
	return ert_node_act_named(n, "ert.act", "ert.act_params");
}

struct ert_act_desc ert_node_act_named(const struct ert_node *n, const char *type,
				       const char *params)
{
	struct ert_act_desc a = { ERT_ACT_NONE, 0.0f, 0.0f };
	uint32_t count;
	const float *p;

	a.type = (enum ert_act)ert_attr_int(n, type, ERT_ACT_NONE);
	p = ert_attr_floats(n, params, &count);
	if (count > 0)
		a.p0 = p[0];
	if (count > 1)
		a.p1 = p[1];
	return a;
}

/* The Gelu op's reference, in double as the CPU's scalar unary kernel has it. */
static float gelu_ref(float v, bool tanh_form)
{
	double d = v;

	if (tanh_form)
		return (float)(0.5 * d * (1.0 + tanh(0.79788456080286535588 *
						     (d + 0.044715 * d * d * d))));
	return (float)(0.5 * d * (1.0 + erf(d * 0.70710678118654752440)));
}

void ert_act_apply(const struct ert_act_desc *act, float *x, int64_t count)
{
	int64_t i;

	switch (act->type) {
	case ERT_ACT_NONE:
		break;
	case ERT_ACT_RELU:
		for (i = 0; i < count; i++)
			x[i] = x[i] > 0.0f ? x[i] : 0.0f;
		break;
	case ERT_ACT_CLIP:
		for (i = 0; i < count; i++)
			x[i] = x[i] < act->p0 ? act->p0 : x[i] > act->p1 ? act->p1 : x[i];
		break;
	case ERT_ACT_LEAKY_RELU:
		for (i = 0; i < count; i++)
			x[i] = x[i] >= 0.0f ? x[i] : x[i] * act->p0;
		break;
	case ERT_ACT_SIGMOID:
		for (i = 0; i < count; i++)
			x[i] = 1.0f / (1.0f + expf(-x[i]));
		break;
	case ERT_ACT_HARD_SWISH:
		for (i = 0; i < count; i++) {
			float t = x[i] / 6.0f + 0.5f;

			t = t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t;
			x[i] *= t;
		}
		break;
	case ERT_ACT_HARD_SIGMOID:
		for (i = 0; i < count; i++) {
			float t = act->p0 * x[i] + act->p1;

			x[i] = t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t;
		}
		break;
	case ERT_ACT_TANH:
		for (i = 0; i < count; i++)
			x[i] = tanhf(x[i]);
		break;
	case ERT_ACT_GELU:
		for (i = 0; i < count; i++)
			x[i] = gelu_ref(x[i], act->p0 != 0.0f);
		break;
	}
}
