/* SPDX-License-Identifier: MIT */
/*
 * Shape inference: ops that select elements, so that how many they output
 * depends on the input values: NonZero, Compress, Unique, NonMaxSuppression.
 * The extents only running them tells are -1 here; their kernels give the
 * output shapes (ert_exec_output(), docs/dynamic-shapes.md). All of them
 * compute while planning when their inputs are known then.
 */
#include "ert-op-impl.h"

static const struct ert_value *input(const struct ert_infer_ctx *ctx, uint32_t i)
{
	return i < ctx->n_in ? ctx->in[i] : NULL;
}

static void set_out(struct ert_infer_ctx *ctx, uint32_t k, ert_dtype dt, int32_t rank,
		    const int64_t *dims)
{
	if (k < ctx->n_out && ctx->out[k])
		ert_value_set_shape(ctx->out[k], dt, rank, dims);
}

/* Element types the selecting kernels compare or copy: numbers and bools. */
static bool plain_dtype(ert_dtype dt)
{
	switch (dt) {
	case ERT_DTYPE_FLOAT32: case ERT_DTYPE_FLOAT64: case ERT_DTYPE_FLOAT16:
	case ERT_DTYPE_BFLOAT16: case ERT_DTYPE_BOOL:
	case ERT_DTYPE_INT8: case ERT_DTYPE_INT16: case ERT_DTYPE_INT32: case ERT_DTYPE_INT64:
	case ERT_DTYPE_UINT8: case ERT_DTYPE_UINT16: case ERT_DTYPE_UINT32: case ERT_DTYPE_UINT64:
		return true;
	default:
		return false;
	}
}

static ert_status need_x(struct ert_infer_ctx *ctx, const char *what)
{
	const struct ert_value *x = input(ctx, 0);

	if (!x)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "input %s is missing", what);
	if (!plain_dtype(x->dtype))
		return ert_infer_fail(ctx, ERT_STATUS_UNSUPPORTED, "%s of dtype %s is not supported",
				      what, ert_dtype_name(x->dtype));
	return ERT_OK;
}

/* [rank, -1] coordinates of the non-zero elements (a scalar counts as one element). */
static ert_status infer_nonzero(struct ert_infer_ctx *ctx)
{
	ert_status st = need_x(ctx, "X");
	int64_t dims[2];

	if (st != ERT_OK)
		return st;
	dims[0] = ctx->in[0]->rank ? ctx->in[0]->rank : 1;
	dims[1] = -1;
	set_out(ctx, 0, ERT_DTYPE_INT64, 2, dims);
	return ERT_OK;
}

/*
 * The slices of input along axis where condition is true; without axis, the
 * elements of the flattened input. A condition shorter than the axis leaves
 * out the rest; entries past the axis are not read (as onnxruntime does).
 */
static ert_status infer_compress(struct ert_infer_ctx *ctx)
{
	ert_status st = need_x(ctx, "input");
	const struct ert_value *x = ctx->in[0], *c = input(ctx, 1);
	const struct ert_attr *axis = ert_node_attr(ctx->node, "axis");
	int64_t dims[ERT_MAX_RANK];
	int32_t a;

	if (st != ERT_OK)
		return st;
	if (!c)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "input condition is missing");
	if (c->dtype != ERT_DTYPE_BOOL || c->rank != 1)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
				      "condition must be a 1-D bool tensor, got %s of rank %d",
				      ert_dtype_name(c->dtype), (int)c->rank);
	if (!axis) {
		dims[0] = -1;
		set_out(ctx, 0, x->dtype, 1, dims);
		return ERT_OK;
	}
	if (!ert_norm_axis(ert_attr_int(ctx->node, "axis", 0), x->rank, &a))
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "axis %lld is out of range for rank %d",
				      (long long)ert_attr_int(ctx->node, "axis", 0), (int)x->rank);
	for (int32_t i = 0; i < x->rank; i++)
		dims[i] = i == a ? -1 : x->dims[i];
	set_out(ctx, 0, x->dtype, x->rank, dims);
	return ERT_OK;
}

/* Y, indices, inverse_indices, counts (onnx Unique-11). */
static ert_status infer_unique(struct ert_infer_ctx *ctx)
{
	ert_status st = need_x(ctx, "X");
	const struct ert_value *x = ctx->in[0];
	const struct ert_attr *axis = ert_node_attr(ctx->node, "axis");
	int64_t dims[ERT_MAX_RANK], one[1] = { -1 }, inv[1];
	int32_t a;

	if (st != ERT_OK)
		return st;
	if (ctx->n_out > 4)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "has %u outputs, at most 4",
				      ctx->n_out);
	if (axis) {
		if (!ert_norm_axis(ert_attr_int(ctx->node, "axis", 0), x->rank, &a))
			return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
					      "axis %lld is out of range for rank %d",
					      (long long)ert_attr_int(ctx->node, "axis", 0),
					      (int)x->rank);
		for (int32_t i = 0; i < x->rank; i++)
			dims[i] = i == a ? -1 : x->dims[i];
		set_out(ctx, 0, x->dtype, x->rank, dims);
		inv[0] = x->dims[a];
	} else {
		set_out(ctx, 0, x->dtype, 1, one);
		inv[0] = x->numel;
	}
	set_out(ctx, 1, ERT_DTYPE_INT64, 1, one);
	set_out(ctx, 2, ERT_DTYPE_INT64, 1, inv);
	set_out(ctx, 3, ERT_DTYPE_INT64, 1, one);
	return ERT_OK;
}

/* A scalar (or one-element) input of @dt, when given. */
static ert_status check_scalar(struct ert_infer_ctx *ctx, uint32_t i, const char *what,
			       ert_dtype dt)
{
	const struct ert_value *v = input(ctx, i);

	if (!v)
		return ERT_OK;
	if (v->dtype != dt || v->numel != 1 || v->rank > 1)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
				      "%s must be one %s, got %s of %lld elements", what,
				      ert_dtype_name(dt), ert_dtype_name(v->dtype),
				      (long long)v->numel);
	return ERT_OK;
}

/* selected_indices [-1, 3]: (batch, class, box) rows. */
static ert_status infer_nms(struct ert_infer_ctx *ctx)
{
	const struct ert_value *boxes = input(ctx, 0), *scores = input(ctx, 1);
	int64_t dims[2] = { -1, 3 };
	ert_status st;

	if (!boxes || !scores)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "boxes and scores are required");
	if (boxes->dtype != ERT_DTYPE_FLOAT32 || scores->dtype != ERT_DTYPE_FLOAT32)
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE,
				      "boxes and scores must be float32, got %s and %s",
				      ert_dtype_name(boxes->dtype), ert_dtype_name(scores->dtype));
	if (boxes->rank != 3 || boxes->dims[2] != 4)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
				      "boxes must be [batch, boxes, 4], got rank %d", (int)boxes->rank);
	if (scores->rank != 3 || scores->dims[0] != boxes->dims[0] ||
	    scores->dims[2] != boxes->dims[1])
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
				      "scores must be [batch, classes, boxes] = [%lld, C, %lld]",
				      (long long)boxes->dims[0], (long long)boxes->dims[1]);
	st = check_scalar(ctx, 2, "max_output_boxes_per_class", ERT_DTYPE_INT64);
	if (st == ERT_OK)
		st = check_scalar(ctx, 3, "iou_threshold", ERT_DTYPE_FLOAT32);
	if (st == ERT_OK)
		st = check_scalar(ctx, 4, "score_threshold", ERT_DTYPE_FLOAT32);
	if (st != ERT_OK)
		return st;
	set_out(ctx, 0, ERT_DTYPE_INT64, 2, dims);
	return ERT_OK;
}

static const struct ert_attr_rule compress_rules[] = { ERT_RULE_AXIS("axis"), ERT_RULE_END };
static const struct ert_attr_rule unique_rules[] = {
	ERT_RULE_AXIS("axis"), ERT_RULE_FLAG("sorted"), ERT_RULE_END,
};
static const struct ert_attr_rule nms_rules[] = {
	ERT_RULE_FLAG("center_point_box"), ERT_RULE_END,
};

const struct ert_op_def ert_op_defs_select[] = {
	{ ERT_OP_NonZero, infer_nonzero, NULL },
	{ ERT_OP_Compress, infer_compress, compress_rules },
	{ ERT_OP_Unique, infer_unique, unique_rules },
	{ ERT_OP_NonMaxSuppression, infer_nms, nms_rules },
	{ .infer = NULL },
};
