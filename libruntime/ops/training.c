/* SPDX-License-Identifier: MIT */
/*
 * Shape inference: ai.onnx.preview.training's Adagrad, Adam and Momentum.
 * Inputs are R (learning rate, float scalar), T (update count, int64
 * scalar), then k groups of tensors: X..., G... and the optimizer's states
 * (Adagrad H..., Momentum V..., Adam V... and H...). The outputs are the new
 * X... and the new states, each shaped as its input.
 */
#include "ops/training.h"

uint32_t ert_optim_states(enum ert_op op)
{
	return op == ERT_OP_Adam ? 2 : 1;
}

static ert_status infer_optim(struct ert_infer_ctx *ctx)
{
	uint32_t groups = 2 + ert_optim_states(ctx->node->op), k;
	const struct ert_value *r = ctx->n_in > 0 ? ctx->in[0] : NULL;
	const struct ert_value *t = ctx->n_in > 1 ? ctx->in[1] : NULL;

	if (ctx->n_in < 2 + groups || (ctx->n_in - 2) % groups)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL,
				      "%u inputs, expected R, T and %u tensors per optimized input",
				      ctx->n_in, groups);
	k = (ctx->n_in - 2) / groups;
	if (ctx->n_out != (groups - 1) * k)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL,
				      "%u outputs, expected %u for %u optimized inputs", ctx->n_out,
				      (groups - 1) * k, k);
	if (!r || !t || r->numel != 1 || t->numel != 1 || t->dtype != ERT_DTYPE_INT64 ||
	    (r->dtype != ERT_DTYPE_FLOAT32 && r->dtype != ERT_DTYPE_FLOAT64))
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE,
				      "R must be a float scalar and T an int64 scalar");
	for (uint32_t i = 2; i < ctx->n_in; i++) {
		const struct ert_value *v = ctx->in[i], *x = ctx->in[2 + (i - 2) % k];

		if (!v)
			return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "input %u is missing", i);
		if (v->dtype != ERT_DTYPE_FLOAT32 && v->dtype != ERT_DTYPE_FLOAT64)
			return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "input %u has type %s, expected "
					      "float32 or float64", i, ert_dtype_name(v->dtype));
		if (v->dtype != x->dtype || v->rank != x->rank ||
		    memcmp(v->dims, x->dims, (size_t)v->rank * sizeof(v->dims[0])) != 0)
			return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "input %u differs in type or shape "
					      "from the X it goes with (input %u)", i, 2 + (i - 2) % k);
	}
	/* output j: X_new of group j % k, then the states in input order */
	for (uint32_t j = 0; j < ctx->n_out; j++) {
		const struct ert_value *x = ctx->in[2 + j % k];

		if (ctx->out[j])
			ert_value_set_shape(ctx->out[j], x->dtype, x->rank, x->dims);
	}
	return ERT_OK;
}

const struct ert_op_def ert_op_defs_training[] = {
	{ ERT_OP_Adagrad, infer_optim, NULL },
	{ ERT_OP_Adam, infer_optim, NULL },
	{ ERT_OP_Momentum, infer_optim, NULL },
	{ .infer = NULL },
};
