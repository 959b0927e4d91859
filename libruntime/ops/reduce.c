/* SPDX-License-Identifier: MIT */
/* Shape inference: Reduce*, ArgMax/ArgMin, CumSum, TopK. */
#include "ops/reduce-axes.h"

static const struct ert_value *input(struct ert_infer_ctx *ctx, uint32_t i)
{
	return i < ctx->n_in ? ctx->in[i] : NULL;
}

static ert_status need_x(struct ert_infer_ctx *ctx, bool allow_bool)
{
	const struct ert_value *x = input(ctx, 0);

	if (!x)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "input X is missing");
	if (!ert_dtype_is_float(x->dtype) && !ert_dtype_is_int(x->dtype) &&
	    !(allow_bool && x->dtype == ERT_DTYPE_BOOL))
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "X has unsupported dtype %s",
				      ert_dtype_name(x->dtype));
	if (x->dtype == ERT_DTYPE_INT4 || x->dtype == ERT_DTYPE_UINT4 ||
	    (ert_dtype_is_float(x->dtype) && ert_dtype_size(x->dtype) == 1))
		return ert_infer_fail(ctx, ERT_STATUS_UNSUPPORTED, "X dtype %s is not supported",
				      ert_dtype_name(x->dtype));
	if (ctx->n_out < 1 || !ctx->out[0])
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "output is missing");
	return ERT_OK;
}

static ert_status infer_reduce(struct ert_infer_ctx *ctx)
{
	enum ert_op op = ctx->node->op;
	ert_status st = need_x(ctx, op == ERT_OP_ReduceMax || op == ERT_OP_ReduceMin);
	struct ert_reduce_axes ra;
	int64_t dims[ERT_MAX_RANK];
	int32_t rank;

	if (st != ERT_OK)
		return st;
	st = ert_reduce_axes_get(ctx->node, ctx->in[0], input(ctx, 1), &ra, ctx->err);
	if (st != ERT_OK)
		return st;
	if (ra.noop) {
		ert_value_set_shape(ctx->out[0], ctx->in[0]->dtype, ctx->in[0]->rank,
				    ctx->in[0]->dims);
		return ERT_OK;
	}
	ert_reduce_out_shape(ctx->in[0], &ra, &rank, dims);
	ert_value_set_shape(ctx->out[0], ctx->in[0]->dtype, rank, dims);
	return ERT_OK;
}

static ert_status infer_arg(struct ert_infer_ctx *ctx)
{
	ert_status st = need_x(ctx, false);
	const struct ert_value *x;
	int64_t axis = ert_attr_int(ctx->node, "axis", 0), dims[ERT_MAX_RANK];
	bool keep = ert_attr_int(ctx->node, "keepdims", 1) != 0;
	int32_t a, r = 0;

	if (st != ERT_OK)
		return st;
	x = ctx->in[0];
	if (!ert_norm_axis(axis, x->rank, &a))
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "axis %lld out of range for rank %d",
				      (long long)axis, (int)x->rank);
	if (x->dims[a] == 0)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "axis %d has no elements",
				      (int)a);
	for (int32_t k = 0; k < x->rank; k++) {
		if (k != a)
			dims[r++] = x->dims[k];
		else if (keep)
			dims[r++] = 1;
	}
	ert_value_set_shape(ctx->out[0], ERT_DTYPE_INT64, r, dims);
	return ERT_OK;
}

static ert_status infer_cumsum(struct ert_infer_ctx *ctx)
{
	ert_status st = need_x(ctx, false);
	const struct ert_value *ax = input(ctx, 1);

	if (st != ERT_OK)
		return st;
	if (!ax || !ert_dtype_is_int(ax->dtype) || ax->numel != 1)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL,
				      "axis must be a one-element integer tensor");
	if (ctx->in[0]->rank < 1)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "X must have rank >= 1");
	if (ax->data) {
		int32_t a;

		if (!ert_norm_axis(ert_value_get_int(ax, 0), ctx->in[0]->rank, &a))
			return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "axis %lld out of range",
					      (long long)ert_value_get_int(ax, 0));
	}
	ert_value_set_shape(ctx->out[0], ctx->in[0]->dtype, ctx->in[0]->rank, ctx->in[0]->dims);
	return ERT_OK;
}

static ert_status infer_topk(struct ert_infer_ctx *ctx)
{
	ert_status st = need_x(ctx, false);
	const struct ert_value *x, *kv = input(ctx, 1);
	int64_t k, dims[ERT_MAX_RANK];
	bool k_unknown = kv && !kv->data;
	int32_t a;

	if (st != ERT_OK)
		return st;
	x = ctx->in[0];
	if (kv) {
		if (!ert_dtype_is_int(kv->dtype) || kv->numel != 1)
			return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL,
					      "K must be a one-element integer tensor");
		/* K known only when it runs: -1, the kernel gives the shapes */
		k = k_unknown ? -1 : ert_value_get_int(kv, 0);
	} else {
		k = ert_attr_int(ctx->node, "k", -1);
	}
	if (!ert_norm_axis(ert_attr_int(ctx->node, "axis", -1), x->rank, &a))
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "axis out of range for rank %d",
				      (int)x->rank);
	if (!k_unknown && (k < 0 || k > x->dims[a]))
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "K = %lld, axis has %lld elements",
				      (long long)k, (long long)x->dims[a]);
	for (int32_t i = 0; i < x->rank; i++)
		dims[i] = i == a ? k : x->dims[i];
	ert_value_set_shape(ctx->out[0], x->dtype, x->rank, dims);
	if (ctx->n_out > 1 && ctx->out[1])
		ert_value_set_shape(ctx->out[1], ERT_DTYPE_INT64, x->rank, dims);
	return ERT_OK;
}

static const struct ert_attr_rule reduce_rules[] = {
	ERT_RULE_AXES("axes"), ERT_RULE_FLAG("keepdims"), ERT_RULE_FLAG("noop_with_empty_axes"),
	ERT_RULE_END,
};
static const struct ert_attr_rule arg_rules[] = {
	ERT_RULE_AXIS("axis"), ERT_RULE_FLAG("keepdims"), ERT_RULE_FLAG("select_last_index"),
	ERT_RULE_END,
};
static const struct ert_attr_rule cumsum_rules[] = {
	ERT_RULE_FLAG("exclusive"), ERT_RULE_FLAG("reverse"), ERT_RULE_END,
};
static const struct ert_attr_rule topk_rules[] = {
	ERT_RULE_AXIS("axis"), ERT_RULE_FLAG("largest"), ERT_RULE_FLAG("sorted"),
	ERT_RULE_INT("k", 0, ERT_DIM_MAX), ERT_RULE_END,
};

const struct ert_op_def ert_op_defs_reduce[] = {
	{ ERT_OP_ReduceMean, infer_reduce, reduce_rules },
	{ ERT_OP_ReduceSum, infer_reduce, reduce_rules },
	{ ERT_OP_ReduceMax, infer_reduce, reduce_rules },
	{ ERT_OP_ReduceMin, infer_reduce, reduce_rules },
	{ ERT_OP_ReduceProd, infer_reduce, reduce_rules },
	{ ERT_OP_ReduceL1, infer_reduce, reduce_rules },
	{ ERT_OP_ReduceL2, infer_reduce, reduce_rules },
	{ ERT_OP_ReduceLogSum, infer_reduce, reduce_rules },
	{ ERT_OP_ReduceLogSumExp, infer_reduce, reduce_rules },
	{ ERT_OP_ReduceSumSquare, infer_reduce, reduce_rules },
	{ ERT_OP_ArgMax, infer_arg, arg_rules },
	{ ERT_OP_ArgMin, infer_arg, arg_rules },
	{ ERT_OP_CumSum, infer_cumsum, cumsum_rules },
	{ ERT_OP_TopK, infer_topk, topk_rules },
	{ .infer = NULL },
};
