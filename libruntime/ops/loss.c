/* SPDX-License-Identifier: MIT */
/*
 * Shape inference: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.
 * Scores are [N, C, d1..dk], labels [N, d1..dk]; the loss is [N, d1..dk] with
 * reduction "none", a scalar otherwise.
 */
#include <string.h>

#include "ert-op-impl.h"

static bool is_real_float(ert_dtype dt)
{
	return dt == ERT_DTYPE_FLOAT32 || dt == ERT_DTYPE_FLOAT64 || dt == ERT_DTYPE_FLOAT16 ||
	       dt == ERT_DTYPE_BFLOAT16;
}

static ert_status infer_loss(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x = ctx->n_in > 0 ? ctx->in[0] : NULL;
	const struct ert_value *t = ctx->n_in > 1 ? ctx->in[1] : NULL;
	const struct ert_value *w = ctx->n_in > 2 ? ctx->in[2] : NULL;
	const char *red = ert_attr_string(ctx->node, "reduction", "mean");

	if (!x || !t || ctx->n_out < 1 || !ctx->out[0])
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL,
				      "needs scores, labels and a loss output");
	if (!is_real_float(x->dtype))
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "scores have dtype %s",
				      ert_dtype_name(x->dtype));
	if (t->dtype != ERT_DTYPE_INT32 && t->dtype != ERT_DTYPE_INT64)
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "labels have dtype %s, expected int32/64",
				      ert_dtype_name(t->dtype));
	if (x->rank < 2 || t->rank != x->rank - 1)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
				      "scores of rank %d need labels of rank %d, got %d",
				      (int)x->rank, (int)x->rank - 1, (int)t->rank);
	for (int32_t d = 0; d < t->rank; d++) {
		int64_t want = x->dims[d == 0 ? 0 : d + 1];

		if (t->dims[d] != want)
			return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
					      "labels dim %d is %lld, scores say %lld", (int)d,
					      (long long)t->dims[d], (long long)want);
	}
	if (w && (w->dtype != x->dtype || w->rank != 1 || w->dims[0] != x->dims[1]))
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "weights must be [%lld] of %s",
				      (long long)x->dims[1], ert_dtype_name(x->dtype));
	if (strcmp(red, "none") == 0)
		ert_value_set_shape(ctx->out[0], x->dtype, t->rank, t->dims);
	else if (strcmp(red, "mean") == 0 || strcmp(red, "sum") == 0)
		ert_value_set_shape(ctx->out[0], x->dtype, 0, NULL);
	else
		return ert_infer_fail(ctx, ERT_STATUS_UNSUPPORTED, "reduction '%s'", red);
	/* SoftmaxCrossEntropyLoss may also return the log-probabilities */
	if (ctx->n_out > 1 && ctx->out[1])
		ert_value_set_shape(ctx->out[1], x->dtype, x->rank, x->dims);
	return ERT_OK;
}

const struct ert_op_def ert_op_defs_loss[] = {
	{ ERT_OP_NegativeLogLikelihoodLoss, infer_loss, NULL },
	{ ERT_OP_SoftmaxCrossEntropyLoss, infer_loss, NULL },
	{ .infer = NULL },
};
