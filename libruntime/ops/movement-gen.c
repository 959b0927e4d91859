/* SPDX-License-Identifier: MIT */
/*
 * Shape inference: ops that make new values rather than move data (Shape, Size,
 * Constant, ConstantOfShape, Range, EyeLike).
 */
#include <math.h>
#include <string.h>

#include "ops/movement-infer.h"
#include "ops/movement-params.h"

static ert_status need_output(struct ert_infer_ctx *ctx)
{
	if (ctx->n_out < 1 || !ctx->out[0])
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "needs output 0");
	return ERT_OK;
}

ert_status ert_mv_infer_shape(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x;
	int64_t start = ert_attr_int(ctx->node, "start", 0), end, len;
	ert_status st;

	if ((st = ert_mv_need_input(ctx, 0, "data")))
		return st;
	x = ctx->in[0];
	end = ert_attr_int(ctx->node, "end", x->rank);
	if (start < 0)
		start += x->rank;
	if (end < 0)
		end += x->rank;
	start = start < 0 ? 0 : start > x->rank ? x->rank : start;
	end = end < 0 ? 0 : end > x->rank ? x->rank : end;
	len = end > start ? end - start : 0;
	ert_value_set_shape(ctx->out[0], ERT_DTYPE_INT64, 1, &len);
	return ERT_OK;
}

ert_status ert_mv_infer_size(struct ert_infer_ctx *ctx)
{
	ert_status st;

	if ((st = ert_mv_need_input(ctx, 0, "data")))
		return st;
	ert_value_set_shape(ctx->out[0], ERT_DTYPE_INT64, 0, NULL);
	return ERT_OK;
}

/*
 * The attribute tensor a Constant or ConstantOfShape node carries in "value"
 * (NULL when absent); fails when it refers to no usable constant.
 */
static ert_status value_tensor(struct ert_infer_ctx *ctx, const struct ert_tensor **out)
{
	const struct ert_attr *a = ert_node_attr(ctx->node, "value");
	const struct ert_tensor *t;

	*out = NULL;
	if (!a)
		return ERT_OK;
	if (a->type != ERT_ATTR_TENSOR || !ctx->graph || a->tensor < 0 ||
	    (uint32_t)a->tensor >= ctx->graph->n_tensors)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "attribute value is not a tensor");
	t = &ctx->graph->tensors[a->tensor];
	if (!ert_dtype_valid(t->dtype) || t->rank < 0 ||
	    (!t->data && ert_shape_numel(t->rank, t->dims) != 0) ||
	    t->nbytes < ert_dtype_bytes(t->dtype, ert_shape_numel(t->rank, t->dims)))
		return ert_infer_fail(ctx, ERT_STATUS_UNSUPPORTED,
				      "attribute value has no data of a supported type");
	*out = t;
	return ERT_OK;
}

ert_status ert_mv_infer_constant(struct ert_infer_ctx *ctx)
{
	const struct ert_tensor *t;
	const struct ert_attr *a;
	int64_t n;
	ert_status st;

	if ((st = need_output(ctx)) || (st = value_tensor(ctx, &t)))
		return st;
	if (t) {
		ert_value_set_shape(ctx->out[0], t->dtype, t->rank, t->dims);
		return ERT_OK;
	}
	if ((a = ert_node_attr(ctx->node, "value_float")) && a->type == ERT_ATTR_FLOAT) {
		ert_value_set_shape(ctx->out[0], ERT_DTYPE_FLOAT32, 0, NULL);
	} else if ((a = ert_node_attr(ctx->node, "value_int")) && a->type == ERT_ATTR_INT) {
		ert_value_set_shape(ctx->out[0], ERT_DTYPE_INT64, 0, NULL);
	} else if ((a = ert_node_attr(ctx->node, "value_floats")) && a->type == ERT_ATTR_FLOATS) {
		n = a->count;
		ert_value_set_shape(ctx->out[0], ERT_DTYPE_FLOAT32, 1, &n);
	} else if ((a = ert_node_attr(ctx->node, "value_ints")) && a->type == ERT_ATTR_INTS) {
		n = a->count;
		ert_value_set_shape(ctx->out[0], ERT_DTYPE_INT64, 1, &n);
	} else {
		return ert_infer_fail(ctx, ERT_STATUS_UNSUPPORTED,
				      "needs a value, value_float(s) or value_int(s) attribute "
				      "(strings and sparse tensors are not supported)");
	}
	return ERT_OK;
}

ert_status ert_mv_infer_constant_of_shape(struct ert_infer_ctx *ctx)
{
	const struct ert_tensor *t;
	int64_t shape[ERT_MAX_RANK];
	uint32_t n = 0;
	ert_status st;

	if ((st = ert_mv_need_input(ctx, 0, "input")) || (st = value_tensor(ctx, &t)))
		return st;
	if (t && (ert_shape_numel(t->rank, t->dims) != 1 || ert_dtype_size(t->dtype) == 0))
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL,
				      "value must be one element of a byte-sized type");
	st = ert_mv_read_ints(ctx->node, ctx->err, ctx->in[0], "shape", shape, ERT_MAX_RANK, &n);
	if (st != ERT_OK)
		return st;
	/* ONNX names the shape input "input" */
	for (uint32_t i = 0; i < n; i++)
		if ((st = ert_check_dim(ctx->node, ctx->err, "input", i, shape[i])))
			return st;
	ert_value_set_shape(ctx->out[0], t ? t->dtype : ERT_DTYPE_FLOAT32, (int32_t)n, shape);
	return ERT_OK;
}

/* Number of elements Range makes: max(ceil((limit - start) / delta), 0). */
static ert_status range_count(struct ert_infer_ctx *ctx, int64_t *count)
{
	const struct ert_value *s = ctx->in[0], *l = ctx->in[1], *d = ctx->in[2];

	if (ert_dtype_is_float(s->dtype)) {
		double a = ert_value_get_float(s, 0), b = ert_value_get_float(l, 0);
		double c = ert_value_get_float(d, 0), n;

		if (c == 0.0 || isnan(a) || isnan(b) || isnan(c))
			return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "delta is 0 or NaN");
		n = ceil((b - a) / c);
		if (!(n <= (double)ERT_DIM_MAX))
			return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
					      "start %g, limit %g and delta %g make more than 2^48 "
					      "elements", a, b, c);
		*count = n > 0 ? (int64_t)n : 0;
	} else {
		int64_t a = ert_value_get_int(s, 0), b = ert_value_get_int(l, 0);
		int64_t c = ert_value_get_int(d, 0);
		double span;

		if (c == 0)
			return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "delta is 0");
		/* in double first: limit - start may overflow int64 */
		span = ((double)b - (double)a) / (double)c;
		if (span <= 0) {
			*count = 0;
		} else if (span > (double)ERT_DIM_MAX) {
			return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
					      "start %lld, limit %lld and delta %lld make more than "
					      "2^48 elements", (long long)a, (long long)b, (long long)c);
		} else if (fabs((double)b - (double)a) > 4.0e18) {
			*count = (int64_t)ceil(span);
		} else {
			int64_t diff = b - a;

			*count = c > 0 ? (diff - 1) / c + 1 : (diff + 1) / c + 1;
		}
	}
	return ERT_OK;
}

ert_status ert_mv_infer_range(struct ert_infer_ctx *ctx)
{
	int64_t count;
	ert_status st;

	if ((st = ert_mv_need_input(ctx, 0, "start")) || (st = ert_mv_need_input(ctx, 1, "limit")) ||
	    (st = ert_mv_need_input(ctx, 2, "delta")))
		return st;
	for (int i = 0; i < 3; i++) {
		const struct ert_value *v = ctx->in[i];

		if (v->numel != 1 || !v->data)
			return ert_infer_fail(ctx, ERT_STATUS_UNSUPPORTED,
					      "input %d must be one value known when the model is planned",
					      i);
		if (v->dtype != ctx->in[0]->dtype)
			return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "inputs differ in type");
	}
	switch (ctx->in[0]->dtype) {
	case ERT_DTYPE_FLOAT32: case ERT_DTYPE_FLOAT64: case ERT_DTYPE_INT16:
	case ERT_DTYPE_INT32: case ERT_DTYPE_INT64:
		break;
	default:
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "type %s not supported",
				      ert_dtype_name(ctx->in[0]->dtype));
	}
	if ((st = range_count(ctx, &count)))
		return st;
	ert_value_set_shape(ctx->out[0], ctx->in[0]->dtype, 1, &count);
	return ERT_OK;
}

ert_status ert_mv_infer_eye_like(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x;
	int64_t dt;
	ert_status st;

	if ((st = ert_mv_need_input(ctx, 0, "input")))
		return st;
	x = ctx->in[0];
	if (x->rank != 2)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "input rank %d, expected 2", (int)x->rank);
	dt = ert_attr_int(ctx->node, "dtype", x->dtype);
	if (dt <= 0 || dt >= ERT_DTYPE_COUNT || !ert_dtype_valid((int32_t)dt) ||
	    ert_dtype_size((ert_dtype)dt) == 0)
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "dtype %lld not supported", (long long)dt);
	ert_value_set_shape(ctx->out[0], (ert_dtype)dt, 2, x->dims);
	return ERT_OK;
}
