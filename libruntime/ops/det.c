/* SPDX-License-Identifier: MIT */
/* Shape inference: Det — [..., M, M] to [...], float types. */
#include "ert-op-impl.h"

static ert_status infer_det(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x = ctx->n_in > 0 ? ctx->in[0] : NULL;

	if (!x)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "input is missing");
	if (x->dtype != ERT_DTYPE_FLOAT32 && x->dtype != ERT_DTYPE_FLOAT64 &&
	    x->dtype != ERT_DTYPE_FLOAT16 && x->dtype != ERT_DTYPE_BFLOAT16)
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "input has type %s, expected a float",
				      ert_dtype_name(x->dtype));
	if (x->rank < 2 || x->dims[x->rank - 1] != x->dims[x->rank - 2])
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "input must be [..., M, M]");
	ert_value_set_shape(ctx->out[0], x->dtype, x->rank - 2, x->dims);
	return ERT_OK;
}

const struct ert_op_def ert_op_defs_det[] = {
	{ ERT_OP_Det, infer_det, NULL },
	{ .infer = NULL },
};
