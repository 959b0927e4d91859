/* SPDX-License-Identifier: MIT */
/*
 * Shape inference: softmax-like ops and normalisations. Every main output has
 * the shape and dtype of X; the statistics outputs of LayerNormalization and
 * training-mode BatchNormalization get their own shapes.
 */
#include "ert-op-impl.h"

static bool is_real_float(ert_dtype dt)
{
	return dt == ERT_DTYPE_FLOAT32 || dt == ERT_DTYPE_FLOAT64 || dt == ERT_DTYPE_FLOAT16 ||
	       dt == ERT_DTYPE_BFLOAT16;
}

/* X must be present and floating point; Y copies its shape. */
static ert_status same_as_x(struct ert_infer_ctx *ctx, int32_t min_rank)
{
	const struct ert_value *x = ctx->n_in > 0 ? ctx->in[0] : NULL;

	if (!x)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "input X is missing");
	if (!is_real_float(x->dtype))
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "X has dtype %s, expected a float type",
				      ert_dtype_name(x->dtype));
	if (x->rank < min_rank)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "X has rank %d, expected at least %d",
				      (int)x->rank, (int)min_rank);
	if (ctx->n_out < 1 || !ctx->out[0])
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "output Y is missing");
	ert_value_set_shape(ctx->out[0], x->dtype, x->rank, x->dims);
	return ERT_OK;
}

/* Input @i, when given, must hold @want elements of X's dtype family. */
static ert_status check_param(struct ert_infer_ctx *ctx, uint32_t i, const char *what,
			      int64_t want, bool required)
{
	const struct ert_value *p = i < ctx->n_in ? ctx->in[i] : NULL;

	if (!p) {
		if (required)
			return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "input %s is missing",
					      what);
		return ERT_OK;
	}
	if (!is_real_float(p->dtype))
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "%s has dtype %s, expected a float type",
				      what, ert_dtype_name(p->dtype));
	if (want >= 0 && p->numel != want)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "%s has %lld elements, expected %lld",
				      what, (long long)p->numel, (long long)want);
	return ERT_OK;
}

static ert_status infer_softmax(struct ert_infer_ctx *ctx)
{
	ert_status st = same_as_x(ctx, 0);
	int64_t axis;
	int32_t a;

	if (st != ERT_OK)
		return st;
	axis = ert_attr_int(ctx->node, "axis", ctx->node->opset >= 13 ? -1 : 1);
	/* Rank 0 has nothing to normalise over; treat it as a single element. */
	if (ctx->in[0]->rank > 0 && !ert_norm_axis(axis, ctx->in[0]->rank, &a))
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "axis %lld out of range for rank %d",
				      (long long)axis, (int)ctx->in[0]->rank);
	return ERT_OK;
}

static ert_status infer_layer_norm(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x, *s;
	ert_status st = same_as_x(ctx, 1);
	int64_t axis = ert_attr_int(ctx->node, "axis", -1);
	int64_t dims[ERT_MAX_RANK];
	int32_t a;

	if (st != ERT_OK)
		return st;
	x = ctx->in[0];
	if (!ert_norm_axis(axis, x->rank, &a))
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "axis %lld out of range for rank %d",
				      (long long)axis, (int)x->rank);
	for (uint32_t i = 1; i < 3; i++) {
		const char *what = i == 1 ? "Scale" : "B";

		st = check_param(ctx, i, what, -1, i == 1);
		if (st != ERT_OK)
			return st;
		s = i < ctx->n_in ? ctx->in[i] : NULL;
		if (!s)
			continue;
		/* Scale and B broadcast (numpy style) to X.shape[axis:]. */
		if (s->rank > x->rank - a)
			return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
					      "%s has rank %d, more than the %d normalised axes", what,
					      (int)s->rank, (int)(x->rank - a));
		for (int32_t k = 0; k < s->rank; k++) {
			int64_t d = s->dims[k], xd = x->dims[x->rank - s->rank + k];

			if (d != 1 && d != xd)
				return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
						      "%s dim %d is %lld, X has %lld there", what,
						      (int)k, (long long)d, (long long)xd);
		}
	}
	for (int32_t k = 0; k < x->rank; k++)
		dims[k] = k < a ? x->dims[k] : 1;
	for (uint32_t o = 1; o < 3 && o < ctx->n_out; o++) {
		ert_dtype dt = ert_attr_int(ctx->node, "stash_type", 1) == 11 ? ERT_DTYPE_FLOAT64
									      : ERT_DTYPE_FLOAT32;

		if (ctx->out[o])
			ert_value_set_shape(ctx->out[o], dt, x->rank, dims);
	}
	return ERT_OK;
}

static ert_status infer_batch_norm(struct ert_infer_ctx *ctx)
{
	ert_status st = same_as_x(ctx, 2);
	static const char *const names[] = { "X", "scale", "B", "input_mean", "input_var" };
	bool training;
	int64_t c;

	if (st != ERT_OK)
		return st;
	c = ctx->in[0]->dims[1];
	for (uint32_t i = 1; i < 5; i++) {
		st = check_param(ctx, i, names[i], c, true);
		if (st != ERT_OK)
			return st;
	}
	training = ctx->node->opset >= 14 && ert_attr_int(ctx->node, "training_mode", 0) != 0;
	if (!training) {
		for (uint32_t o = 1; o < ctx->n_out; o++)
			if (ctx->out[o])
				return ert_infer_fail(ctx, ERT_STATUS_UNSUPPORTED,
						      "output %u is only defined in training mode", o);
		return ERT_OK;
	}
	for (uint32_t o = 1; o < 3 && o < ctx->n_out; o++)
		if (ctx->out[o])
			ert_value_set_shape(ctx->out[o], ctx->in[2 + o]->dtype, 1, &c);
	for (uint32_t o = 3; o < ctx->n_out; o++)
		if (ctx->out[o])
			return ert_infer_fail(ctx, ERT_STATUS_UNSUPPORTED,
					      "saved mean/var outputs (opset < 14) are not supported");
	return ERT_OK;
}

static ert_status infer_instance_norm(struct ert_infer_ctx *ctx)
{
	ert_status st = same_as_x(ctx, 2);

	if (st != ERT_OK)
		return st;
	for (uint32_t i = 1; i < 3; i++) {
		st = check_param(ctx, i, i == 1 ? "scale" : "B", ctx->in[0]->dims[1], true);
		if (st != ERT_OK)
			return st;
	}
	return ERT_OK;
}

static ert_status infer_group_norm(struct ert_infer_ctx *ctx)
{
	ert_status st = same_as_x(ctx, 2);
	int64_t groups = ert_attr_int(ctx->node, "num_groups", 0);
	int64_t c;

	if (st != ERT_OK)
		return st;
	c = ctx->in[0]->dims[1];
	if (groups <= 0 || c % groups != 0)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
				      "num_groups = %lld does not divide %lld channels",
				      (long long)groups, (long long)c);
	for (uint32_t i = 1; i < 3; i++) {
		const struct ert_value *p;

		st = check_param(ctx, i, i == 1 ? "scale" : "bias", -1, true);
		if (st != ERT_OK)
			return st;
		p = ctx->in[i];
		/* Opset 18 takes one value per group, opset 21 one per channel. */
		if (p->numel != c && p->numel != groups)
			return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
					      "%s has %lld elements, expected %lld (channels) or %lld "
					      "(num_groups)", i == 1 ? "scale" : "bias",
					      (long long)p->numel, (long long)c, (long long)groups);
	}
	return ERT_OK;
}

static ert_status infer_lp_norm(struct ert_infer_ctx *ctx)
{
	ert_status st = same_as_x(ctx, 1);
	int64_t p = ert_attr_int(ctx->node, "p", 2);
	int32_t a;

	if (st != ERT_OK)
		return st;
	if (p != 1 && p != 2)
		return ert_infer_fail(ctx, ERT_STATUS_UNSUPPORTED, "p = %lld, expected 1 or 2",
				      (long long)p);
	if (!ert_norm_axis(ert_attr_int(ctx->node, "axis", -1), ctx->in[0]->rank, &a))
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "axis out of range for rank %d",
				      (int)ctx->in[0]->rank);
	return ERT_OK;
}

static ert_status infer_lrn(struct ert_infer_ctx *ctx)
{
	ert_status st = same_as_x(ctx, 2);

	if (st != ERT_OK)
		return st;
	if (ert_attr_int(ctx->node, "size", 0) <= 0)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL,
				      "attribute size is missing or not positive");
	return ERT_OK;
}

static ert_status infer_mvn(struct ert_infer_ctx *ctx)
{
	ert_status st = same_as_x(ctx, 0);
	uint32_t n;
	const int64_t *axes = ert_attr_ints(ctx->node, "axes", &n);
	int32_t a;

	if (st != ERT_OK)
		return st;
	if (!axes && ctx->in[0]->rank < 4)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
				      "default axes [0, 2, 3] need rank 4, X has rank %d",
				      (int)ctx->in[0]->rank);
	for (uint32_t i = 0; i < n; i++)
		if (!ert_norm_axis(axes[i], ctx->in[0]->rank, &a))
			return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "axis %lld out of range",
					      (long long)axes[i]);
	return ERT_OK;
}

static const struct ert_attr_rule axis_rules[] = { ERT_RULE_AXIS("axis"), ERT_RULE_END };
static const struct ert_attr_rule batch_norm_rules[] = {
	ERT_RULE_FLAG("training_mode"), ERT_RULE_FLAG("spatial"), ERT_RULE_END,
};
static const struct ert_attr_rule group_norm_rules[] = {
	ERT_RULE_INT("num_groups", 1, ERT_DIM_MAX), ERT_RULE_END,
};
static const struct ert_attr_rule lp_norm_rules[] = {
	ERT_RULE_AXIS("axis"), ERT_RULE_INT("p", 1, 2), ERT_RULE_END,
};
static const struct ert_attr_rule lrn_rules[] = {
	ERT_RULE_INT("size", 1, ERT_ATTR_SIZE_MAX), ERT_RULE_END,
};
static const struct ert_attr_rule mvn_rules[] = { ERT_RULE_AXES("axes"), ERT_RULE_END };

const struct ert_op_def ert_op_defs_norm[] = {
	{ ERT_OP_Softmax, infer_softmax, axis_rules },
	{ ERT_OP_LogSoftmax, infer_softmax, axis_rules },
	{ ERT_OP_Hardmax, infer_softmax, axis_rules },
	{ ERT_OP_LayerNormalization, infer_layer_norm, axis_rules },
	{ ERT_OP_BatchNormalization, infer_batch_norm, batch_norm_rules },
	{ ERT_OP_InstanceNormalization, infer_instance_norm, NULL },
	{ ERT_OP_GroupNormalization, infer_group_norm, group_norm_rules },
	{ ERT_OP_LpNormalization, infer_lp_norm, lp_norm_rules },
	{ ERT_OP_LRN, infer_lrn, lrn_rules },
	{ ERT_OP_MeanVarianceNormalization, infer_mvn, mvn_rules },
	{ .infer = NULL },
};
