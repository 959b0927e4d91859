/* SPDX-License-Identifier: MIT */
/* Shape inference and settings of RoiAlign. */
#include <string.h>

#include "ops/resize-roi.h"

ert_status ert_roi_params_get(const struct ert_node *node, const struct ert_value *x,
			      const struct ert_value *rois, const struct ert_value *batch,
			      struct ert_roi_params *p, struct ert_err *err)
{
	const char *mode = ert_attr_string(node, "mode", "avg");
	const char *coord = ert_attr_string(node, "coordinate_transformation_mode",
					    node->opset >= 16 ? "half_pixel" : "output_half_pixel");

	memset(p, 0, sizeof(*p));
	if (!strcmp(mode, "max"))
		p->max_mode = true;
	else if (strcmp(mode, "avg"))
		return ert_node_fail(node, err, ERT_STATUS_UNSUPPORTED, "mode must be avg or max");
	if (!strcmp(coord, "half_pixel"))
		p->half_pixel = true;
	else if (strcmp(coord, "output_half_pixel"))
		return ert_node_fail(node, err, ERT_STATUS_UNSUPPORTED,
				     "coordinate_transformation_mode must be half_pixel or "
				     "output_half_pixel");
	p->out_h = ert_attr_int(node, "output_height", 1);
	p->out_w = ert_attr_int(node, "output_width", 1);
	p->sampling_ratio = ert_attr_int(node, "sampling_ratio", 0);
	p->spatial_scale = ert_attr_float(node, "spatial_scale", 1.0f);
	if (p->out_h <= 0 || p->out_w <= 0 || p->sampling_ratio < 0)
		return ert_node_fail(node, err, ERT_STATUS_INVALID_MODEL,
				     "output sizes must be positive, sampling_ratio not negative");
	if (!x || !rois || !batch)
		return ert_node_fail(node, err, ERT_STATUS_INVALID_MODEL,
				     "needs X, rois and batch_indices");
	if (!ert_dtype_is_float(x->dtype) || ert_dtype_size(x->dtype) < 2 ||
	    !ert_dtype_is_float(rois->dtype) || ert_dtype_size(rois->dtype) < 2)
		return ert_node_fail(node, err, ERT_STATUS_DTYPE,
				     "X and rois must be float16/32/64");
	if (!ert_dtype_is_int(batch->dtype))
		return ert_node_fail(node, err, ERT_STATUS_DTYPE, "batch_indices must be integers");
	if (x->rank != 4 || rois->rank != 2 || rois->dims[1] != 4 || batch->rank != 1 ||
	    batch->dims[0] != rois->dims[0])
		return ert_node_fail(node, err, ERT_STATUS_SHAPE,
				     "X must be [N, C, H, W], rois [R, 4], batch_indices [R]");
	return ERT_OK;
}

ert_status ert_infer_roi_align(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x = ctx->n_in > 0 ? ctx->in[0] : NULL;
	const struct ert_value *rois = ctx->n_in > 1 ? ctx->in[1] : NULL;
	const struct ert_value *batch = ctx->n_in > 2 ? ctx->in[2] : NULL;
	struct ert_roi_params p;
	ert_status st = ert_roi_params_get(ctx->node, x, rois, batch, &p, ctx->err);

	if (st != ERT_OK)
		return st;
	if (ctx->n_out < 1 || !ctx->out[0])
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "output Y is missing");
	ert_value_set_shape(ctx->out[0], x->dtype, 4,
			    (int64_t[]){ rois->dims[0], x->dims[1], p.out_h, p.out_w });
	return ERT_OK;
}
