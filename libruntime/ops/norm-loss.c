/* SPDX-License-Identifier: MIT */
/* Shape inference: NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss. */
#include <string.h>

#include "ops/norm-loss.h"

static ert_status fail(struct ert_err *err, const struct ert_node *node, ert_status st,
		       const char *what)
{
	ert_err_set(err, "%s '%s': %s", ert_op_name(node->op), node->name, what);
	return st;
}

ert_status ert_loss_params_get(const struct ert_node *node, const struct ert_value *x,
			       const struct ert_value *t, const struct ert_value *w,
			       struct ert_loss_params *p, struct ert_err *err)
{
	const char *red = ert_attr_string(node, "reduction", "mean");

	memset(p, 0, sizeof(*p));
	if (strcmp(red, "none") == 0)
		p->reduction = ERT_LOSS_NONE;
	else if (strcmp(red, "sum") == 0)
		p->reduction = ERT_LOSS_SUM;
	else if (strcmp(red, "mean") == 0)
		p->reduction = ERT_LOSS_MEAN;
	else
		return fail(err, node, ERT_STATUS_UNSUPPORTED,
			    "reduction must be none, sum or mean");
	p->has_ignore = ert_node_attr(node, "ignore_index") != NULL;
	p->ignore_index = ert_attr_int(node, "ignore_index", 0);
	if (!x || !t)
		return fail(err, node, ERT_STATUS_INVALID_MODEL, "scores or labels are missing");
	if (!ert_dtype_is_float(x->dtype) || ert_dtype_size(x->dtype) < 2)
		return fail(err, node, ERT_STATUS_DTYPE, "scores must be float16/32/64 or bfloat16");
	if (t->dtype != ERT_DTYPE_INT32 && t->dtype != ERT_DTYPE_INT64)
		return fail(err, node, ERT_STATUS_DTYPE, "labels must be int32 or int64");
	if (x->rank < 2 || t->rank != x->rank - 1)
		return fail(err, node, ERT_STATUS_SHAPE,
			    "scores must be [N, C, d...] and labels [N, d...]");
	if (t->dims[0] != x->dims[0])
		return fail(err, node, ERT_STATUS_SHAPE, "labels and scores disagree on N");
	p->n = x->dims[0];
	p->c = x->dims[1];
	p->d = 1;
	for (int32_t k = 2; k < x->rank; k++) {
		if (t->dims[k - 1] != x->dims[k])
			return fail(err, node, ERT_STATUS_SHAPE,
				    "labels and scores disagree on a trailing dim");
		p->d *= x->dims[k];
	}
	if (w && (w->rank != 1 || w->dims[0] != p->c || !ert_dtype_is_float(w->dtype)))
		return fail(err, node, ERT_STATUS_SHAPE, "weights must be a float vector of C");
	return ERT_OK;
}

static ert_status infer_loss(struct ert_infer_ctx *ctx, bool sce)
{
	const struct ert_value *x = ctx->n_in > 0 ? ctx->in[0] : NULL;
	const struct ert_value *t = ctx->n_in > 1 ? ctx->in[1] : NULL;
	const struct ert_value *w = ctx->n_in > 2 ? ctx->in[2] : NULL;
	struct ert_loss_params p;
	ert_status st = ert_loss_params_get(ctx->node, x, t, w, &p, ctx->err);

	if (st != ERT_OK)
		return st;
	if (ctx->n_out < 1 || !ctx->out[0])
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "output is missing");
	if (p.reduction == ERT_LOSS_NONE)
		ert_value_set_shape(ctx->out[0], x->dtype, t->rank, t->dims);
	else
		ert_value_set_shape(ctx->out[0], x->dtype, 0, NULL);
	if (ctx->n_out > 1 && ctx->out[1]) {
		if (!sce)
			return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "has one output only");
		ert_value_set_shape(ctx->out[1], x->dtype, x->rank, x->dims);
	}
	return ERT_OK;
}

ert_status ert_infer_nll_loss(struct ert_infer_ctx *ctx)
{
	return infer_loss(ctx, false);
}

ert_status ert_infer_sce_loss(struct ert_infer_ctx *ctx)
{
	return infer_loss(ctx, true);
}
