/* SPDX-License-Identifier: MIT */
/*
 * CPU: ops that make values (Shape, Size, Constant, ConstantOfShape, Range,
 * EyeLike, OneHot) or mask them (Trilu).
 */
#include <string.h>

#include "movement-cpu.h"

ert_status ert_mv_cpu_shape(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in = x->in[0];
	int64_t start = ert_attr_int(x->node, "start", 0), *out = x->out[0]->data;

	if (start < 0)
		start += in->rank;
	if (start < 0)
		start = 0;
	for (int64_t i = 0; i < x->out[0]->numel; i++)
		out[i] = in->dims[start + i];
	return ERT_OK;
}

ert_status ert_mv_cpu_size(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	int64_t n = x->in[0]->numel;

	memcpy(x->out[0]->data, &n, sizeof(n));
	return ERT_OK;
}

ert_status ert_mv_cpu_constant(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_attr *a = ert_node_attr(x->node, "value");
	struct ert_value *out = x->out[0];

	if (a && a->type == ERT_ATTR_TENSOR) {
		const struct ert_tensor *t = &x->graph->tensors[a->tensor];

		if (out->nbytes)
			memcpy(out->data, t->data, out->nbytes);
		return ERT_OK;
	}
	if ((a = ert_node_attr(x->node, "value_float")) && a->type == ERT_ATTR_FLOAT)
		memcpy(out->data, &a->f, sizeof(float));
	else if ((a = ert_node_attr(x->node, "value_int")) && a->type == ERT_ATTR_INT)
		memcpy(out->data, &a->i, sizeof(int64_t));
	else if ((a = ert_node_attr(x->node, "value_floats")) && a->type == ERT_ATTR_FLOATS)
		memcpy(out->data, a->floats, (size_t)a->count * sizeof(float));
	else if ((a = ert_node_attr(x->node, "value_ints")) && a->type == ERT_ATTR_INTS)
		memcpy(out->data, a->ints, (size_t)a->count * sizeof(int64_t));
	else
		return ert_node_fail(x->node, err, ERT_STATUS_UNSUPPORTED, "no supported value");
	return ERT_OK;
}

ert_status ert_mv_cpu_constant_of_shape(struct ert_cpu *cpu, struct ert_exec *x,
					struct ert_err *err)
{
	const struct ert_attr *a = ert_node_attr(x->node, "value");
	struct ert_value *out = x->out[0];
	size_t es = ert_dtype_size(out->dtype);
	unsigned char zero[16] = { 0 };
	const void *elem = zero;

	if (a && a->type == ERT_ATTR_TENSOR)
		elem = x->graph->tensors[a->tensor].data;
	ert_mv_fill(out->data, elem, es, out->numel);
	return ERT_OK;
}

#define RANGE_LOOP(T, EXPR)                                                       \
	do {                                                                      \
		T s_, d_, *o_ = out->data;                                        \
		memcpy(&s_, x->in[0]->data, sizeof(T));                           \
		memcpy(&d_, x->in[2]->data, sizeof(T));                           \
		for (int64_t i = 0; i < out->numel; i++)                          \
			o_[i] = (T)(EXPR);                                        \
	} while (0)

/* Integer ranges wrap instead of overflowing a signed type. */
#define RANGE_INT(T) RANGE_LOOP(T, (uint64_t)(int64_t)s_ + (uint64_t)i * (uint64_t)(int64_t)d_)
#define RANGE_FLOAT(T) RANGE_LOOP(T, s_ + (T)i * d_)

ert_status ert_mv_cpu_range(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	struct ert_value *out = x->out[0];

	switch (out->dtype) {
	case ERT_DTYPE_FLOAT32: RANGE_FLOAT(float); break;
	case ERT_DTYPE_FLOAT64: RANGE_FLOAT(double); break;
	case ERT_DTYPE_INT16: RANGE_INT(int16_t); break;
	case ERT_DTYPE_INT32: RANGE_INT(int32_t); break;
	case ERT_DTYPE_INT64: RANGE_INT(int64_t); break;
	default:
		return ert_node_fail(x->node, err, ERT_STATUS_DTYPE, "type %s",
				     ert_dtype_name(out->dtype));
	}
	return ERT_OK;
}

ert_status ert_mv_cpu_eye_like(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	struct ert_value *out = x->out[0];
	int64_t k = ert_attr_int(x->node, "k", 0), rows = out->dims[0], cols = out->dims[1];
	size_t es = ert_dtype_size(out->dtype);
	unsigned char one[16];

	if (!ert_mv_store_scalar(out->dtype, 1.0, one))
		return ert_node_fail(x->node, err, ERT_STATUS_UNSUPPORTED, "type %s",
				     ert_dtype_name(out->dtype));
	memset(out->data, 0, out->nbytes);
	/* k may be any int64: the ones sit at column i + k, so only rows with
	 * -k <= i < cols - k hold one; clamp k first (|k| <= rows + cols after) so
	 * neither the negation nor the sums can overflow */
	k = ert_clamp_i64(k, -rows, cols);
	for (int64_t i = k < 0 ? -k : 0; i < rows && i + k < cols; i++)
		memcpy((char *)out->data + (size_t)(i * cols + i + k) * es, one, es);
	return ERT_OK;
}

ert_status ert_mv_cpu_one_hot(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *idx = x->in[0], *vals = x->in[2];
	struct ert_value *out = x->out[0];
	int32_t axis;
	size_t es = ert_dtype_size(out->dtype);
	const char *off_v = vals->data, *on_v = off_v + es;

	if (!ert_norm_axis(ert_attr_int(x->node, "axis", -1), out->rank, &axis))
		return ert_node_fail(x->node, err, ERT_STATUS_SHAPE, "bad axis");
	int64_t depth = out->dims[axis];
	int64_t inner = ert_shape_numel(idx->rank - axis, idx->dims + axis);
	int64_t outer = inner ? idx->numel / inner : 0;

	ert_mv_fill(out->data, off_v, es, out->numel);
	for (int64_t o = 0; o < outer; o++) {
		for (int64_t i = 0; i < inner; i++) {
			int64_t p = o * inner + i;
			double f = ert_dtype_is_float(idx->dtype) ? ert_value_get_float(idx, p) : 0;
			int64_t v = ert_dtype_is_float(idx->dtype)
					    ? (f > -9e18 && f < 9e18 ? (int64_t)f : INT64_MAX)
					    : ert_value_get_int(idx, p);

			if (v < 0 && v >= -depth)
				v += depth;
			if (v < 0 || v >= depth) /* out of range: all "off" */
				continue;
			memcpy((char *)out->data + (size_t)((o * depth + v) * inner + i) * es, on_v,
			       es);
		}
	}
	return ERT_OK;
}

ert_status ert_mv_cpu_trilu(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in = x->in[0];
	struct ert_value *out = x->out[0];
	bool upper = ert_attr_int(x->node, "upper", 1) != 0;
	int64_t k = 0, m = in->dims[in->rank - 2], n = in->dims[in->rank - 1];
	size_t es = ert_dtype_size(in->dtype);
	int64_t mats = m > 0 && n > 0 ? in->numel / (m * n) : 0;

	if (x->n_in > 1 && x->in[1])
		k = ert_value_get_int(x->in[1], 0);
	/* Clamp k to where it stops mattering, so i + k cannot overflow. */
	k = k < -m ? -m : k > n ? n : k;
	ert_mv_copy(cpu, out->data, in->data, out->nbytes);
	for (int64_t b = 0; b < mats; b++) {
		for (int64_t i = 0; i < m; i++) {
			char *row = (char *)out->data + (size_t)((b * m + i) * n) * es;
			/* upper keeps j >= i + k, lower keeps j <= i + k */
			int64_t lo = upper ? 0 : i + k + 1, hi = upper ? i + k : n;

			lo = lo < 0 ? 0 : lo > n ? n : lo;
			hi = hi < 0 ? 0 : hi > n ? n : hi;
			if (hi > lo)
				memset(row + (size_t)lo * es, 0, (size_t)(hi - lo) * es);
		}
	}
	return ERT_OK;
}
