/* SPDX-License-Identifier: MIT */
/* Shape inference: Resize and Upsample. */
#include "ops/resize-grid.h"
#include "ops/resize-params.h"
#include "ops/resize-roi.h"

static ert_status infer_resize(struct ert_infer_ctx *ctx)
{
	struct ert_resize_params p;
	const struct ert_value *x = ctx->n_in > 0 ? ctx->in[0] : NULL;
	ert_status st;

	if (!x)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "input X is missing");
	if (x->dtype == ERT_DTYPE_BOOL || x->dtype == ERT_DTYPE_INT4 ||
	    x->dtype == ERT_DTYPE_UINT4 ||
	    (!ert_dtype_is_int(x->dtype) && !ert_dtype_is_float(x->dtype)) ||
	    (ert_dtype_is_float(x->dtype) && ert_dtype_size(x->dtype) == 1))
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "X has unsupported dtype %s",
				      ert_dtype_name(x->dtype));
	if (ctx->n_out < 1 || !ctx->out[0])
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "output Y is missing");
	st = ert_resize_params_get(ctx->node, ctx->in, ctx->n_in, &p, ctx->err);
	if (st != ERT_OK)
		return st;
	ert_value_set_shape(ctx->out[0], x->dtype, x->rank, p.out_dims);
	return ERT_OK;
}

static const struct ert_attr_rule resize_rules[] = {
	ERT_RULE_AXES("axes"), ERT_RULE_FLAG("exclude_outside"), ERT_RULE_FLAG("antialias"),
	ERT_RULE_END,
};
static const struct ert_attr_rule grid_rules[] = { ERT_RULE_FLAG("align_corners"), ERT_RULE_END };
/*
 * sampling_ratio samples per bin and axis: 256 x 256 is the most the kernel
 * takes (ROI_MAX_SAMPLES in backends/cpu/ops/resize-roi.c).
 */
static const struct ert_attr_rule roi_rules[] = {
	ERT_RULE_INT("output_height", 1, ERT_DIM_MAX), ERT_RULE_INT("output_width", 1, ERT_DIM_MAX),
	ERT_RULE_INT("sampling_ratio", 0, 256), ERT_RULE_END,
};

const struct ert_op_def ert_op_defs_resize[] = {
	{ ERT_OP_Resize, infer_resize, resize_rules },
	{ ERT_OP_Upsample, infer_resize, resize_rules },
	{ ERT_OP_GridSample, ert_infer_grid_sample, grid_rules },
	{ ERT_OP_AffineGrid, ert_infer_affine_grid, grid_rules },
	{ ERT_OP_RoiAlign, ert_infer_roi_align, roi_rules },
	{ .infer = NULL },
};
