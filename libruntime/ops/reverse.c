/* SPDX-License-Identifier: MIT */
/*
 * Shape inference: ReverseSequence. Input [max_time, batch, ...] (time_axis
 * 0, batch_axis 1) or [batch, max_time, ...]; sequence_lens [batch] of
 * int64. The output has the input's shape; the kernel checks each length.
 */
#include "ert-op-impl.h"

static ert_status infer_reverse_sequence(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x = ctx->n_in > 0 ? ctx->in[0] : NULL;
	const struct ert_value *len = ctx->n_in > 1 ? ctx->in[1] : NULL;
	int64_t batch_axis = ert_attr_int(ctx->node, "batch_axis", 1);
	int64_t time_axis = ert_attr_int(ctx->node, "time_axis", 0);

	if (!x || !len)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "needs input and sequence_lens");
	if (batch_axis == time_axis)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL,
				      "batch_axis and time_axis are both %lld", (long long)batch_axis);
	if (x->rank < 2)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "input rank %d, expected at least 2",
				      (int)x->rank);
	if (ert_dtype_size(x->dtype) == 0 || x->dtype == ERT_DTYPE_STRING)
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "input type %s",
				      ert_dtype_name(x->dtype));
	if (len->dtype != ERT_DTYPE_INT64 || len->rank != 1 || len->dims[0] != x->dims[batch_axis])
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
				      "sequence_lens must be int64 [%lld] (the batch size)",
				      (long long)x->dims[batch_axis]);
	ert_value_set_shape(ctx->out[0], x->dtype, x->rank, x->dims);
	return ERT_OK;
}

static const struct ert_attr_rule reverse_rules[] = {
	ERT_RULE_FLAG("batch_axis"), ERT_RULE_FLAG("time_axis"), ERT_RULE_END,
};

const struct ert_op_def ert_op_defs_reverse[] = {
	{ ERT_OP_ReverseSequence, infer_reverse_sequence, reverse_rules },
	{ .infer = NULL },
};
