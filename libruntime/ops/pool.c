/* SPDX-License-Identifier: MIT */
/* Shape inference: MaxPool, AveragePool, LpPool and their global forms. */
#include "ops/linalg-geom.h"

static ert_status pool_input(struct ert_infer_ctx *ctx, bool any_dtype, int32_t min_rank)
{
	const struct ert_value *x = ctx->n_in ? ctx->in[0] : NULL;

	if (!x || ctx->n_out < 1 || !ctx->out[0])
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "needs input X and output Y");
	if (x->dtype != ERT_DTYPE_FLOAT32 &&
	    !(any_dtype && (x->dtype == ERT_DTYPE_UINT8 || x->dtype == ERT_DTYPE_INT8)))
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "X is %s; float32%s expected",
				      ert_dtype_name(x->dtype), any_dtype ? ", uint8 or int8" : "");
	if (x->rank < min_rank || x->rank > 5)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "X has rank %d, expected %d to 5",
				      (int)x->rank, (int)min_rank);
	return ERT_OK;
}

static ert_status infer_window(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x;
	struct ert_conv_geom g;
	int64_t dims[ERT_MAX_RANK];
	uint32_t nk;
	const int64_t *ks;
	bool is_max = ctx->node->op == ERT_OP_MaxPool;
	ert_status st = pool_input(ctx, is_max, 3);

	if (st != ERT_OK)
		return st;
	x = ctx->in[0];
	ks = ert_attr_ints(ctx->node, "kernel_shape", &nk);
	if (!ks || (int32_t)nk != x->rank - 2)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL,
				      "kernel_shape must have %d values", (int)x->rank - 2);
	if (ctx->node->op == ERT_OP_MaxPool && ert_attr_int(ctx->node, "storage_order", 0) > 1)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "bad storage_order");
	st = ert_geom_conv(ctx->node, x->rank - 2, x->dims + 2, ks,
			   ert_attr_int(ctx->node, "ceil_mode", 0) != 0, &g, ctx->err);
	if (st != ERT_OK)
		return st;
	for (int i = 3 - g.nsp; i < 3; i++)
		if (g.pad_b[i] >= g.win[i] || g.pad_e[i] >= g.win[i])
			return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL,
					      "pads %lld, %lld on spatial axis %d are not smaller than "
					      "the window of %lld (kernel_shape, dilations)",
					      (long long)g.pad_b[i], (long long)g.pad_e[i],
					      i - (3 - g.nsp), (long long)g.win[i]);
	dims[0] = x->dims[0];
	dims[1] = x->dims[1];
	for (int32_t i = 0; i < x->rank - 2; i++)
		dims[2 + i] = g.out[3 - (x->rank - 2) + i];
	ert_value_set_shape(ctx->out[0], x->dtype, x->rank, dims);
	if (ctx->n_out > 1 && ctx->out[1]) {
		if (!is_max)
			return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "only one output");
		ert_value_set_shape(ctx->out[1], ERT_DTYPE_INT64, x->rank, dims);
	}
	return ERT_OK;
}

static ert_status infer_global(struct ert_infer_ctx *ctx)
{
	int64_t dims[ERT_MAX_RANK];
	ert_status st = pool_input(ctx, ctx->node->op == ERT_OP_GlobalMaxPool, 2);

	if (st != ERT_OK)
		return st;
	const struct ert_value *x = ctx->in[0];

	for (int32_t i = 0; i < x->rank; i++)
		dims[i] = i < 2 ? x->dims[i] : 1;
	ert_value_set_shape(ctx->out[0], x->dtype, x->rank, dims);
	return ERT_OK;
}

#define WINDOW_RULES                                                              \
	ERT_RULE_SPATIAL("kernel_shape", 1), ERT_RULE_SPATIAL("strides", 1),              \
	ERT_RULE_SPATIAL("dilations", 1), ERT_RULE_SPATIAL("pads", 0),                    \
	ERT_RULE_FLAG("ceil_mode")

static const struct ert_attr_rule max_rules[] = {
	WINDOW_RULES, ERT_RULE_FLAG("storage_order"), ERT_RULE_END,
};
static const struct ert_attr_rule avg_rules[] = {
	WINDOW_RULES, ERT_RULE_FLAG("count_include_pad"), ERT_RULE_END,
};
/* p is an exponent: pow(|x|, p), then the p-th root */
static const struct ert_attr_rule lp_rules[] = {
	WINDOW_RULES, ERT_RULE_INT("p", 1, INT32_MAX), ERT_RULE_END,
};
static const struct ert_attr_rule global_lp_rules[] = {
	ERT_RULE_INT("p", 1, INT32_MAX), ERT_RULE_END,
};

const struct ert_op_def ert_op_defs_pool[] = {
	{ ERT_OP_MaxPool, infer_window, max_rules },
	{ ERT_OP_AveragePool, infer_window, avg_rules },
	{ ERT_OP_LpPool, infer_window, lp_rules },
	{ ERT_OP_GlobalAveragePool, infer_global, NULL },
	{ ERT_OP_GlobalMaxPool, infer_global, NULL },
	{ ERT_OP_GlobalLpPool, infer_global, global_lp_rules },
	{ .infer = NULL },
};
