/* SPDX-License-Identifier: MIT */
/* Shape inference and settings of GridSample. */
#include <string.h>

#include "ops/resize-grid.h"

ert_status ert_grid_params_get(const struct ert_node *node, const struct ert_value *x,
			       const struct ert_value *grid, struct ert_grid_params *p,
			       struct ert_err *err)
{
	const char *mode = ert_attr_string(node, "mode", node->opset >= 20 ? "linear" : "bilinear");
	const char *pad = ert_attr_string(node, "padding_mode", "zeros");

	memset(p, 0, sizeof(*p));
	/* Opset 16 spelled the modes bilinear/bicubic; opset 20 linear/cubic. */
	if (!strcmp(mode, "linear") || !strcmp(mode, "bilinear"))
		p->mode = ERT_RESIZE_LINEAR;
	else if (!strcmp(mode, "cubic") || !strcmp(mode, "bicubic"))
		p->mode = ERT_RESIZE_CUBIC;
	else if (!strcmp(mode, "nearest"))
		p->mode = ERT_RESIZE_NEAREST;
	else
		return ert_node_fail(node, err, ERT_STATUS_UNSUPPORTED, "unknown mode");
	if (!strcmp(pad, "zeros"))
		p->padding = ERT_GRID_ZEROS;
	else if (!strcmp(pad, "border"))
		p->padding = ERT_GRID_BORDER;
	else if (!strcmp(pad, "reflection"))
		p->padding = ERT_GRID_REFLECTION;
	else
		return ert_node_fail(node, err, ERT_STATUS_UNSUPPORTED, "unknown padding_mode");
	p->align_corners = ert_attr_int(node, "align_corners", 0) != 0;
	if (!x || !grid)
		return ert_node_fail(node, err, ERT_STATUS_INVALID_MODEL, "X or grid is missing");
	if (!ert_dtype_is_float(x->dtype) || ert_dtype_size(x->dtype) < 2 ||
	    !ert_dtype_is_float(grid->dtype) || ert_dtype_size(grid->dtype) < 2)
		return ert_node_fail(node, err, ERT_STATUS_DTYPE,
				     "X and grid must be float16/32/64");
	if (x->rank < 3 || grid->rank != x->rank)
		return ert_node_fail(node, err, ERT_STATUS_SHAPE,
				     "X must be [N, C, D1..Dr], grid [N, ..., r]");
	p->spatial = x->rank - 2;
	if (grid->dims[0] != x->dims[0] || grid->dims[grid->rank - 1] != p->spatial)
		return ert_node_fail(node, err, ERT_STATUS_SHAPE,
				     "grid must be [N, D1_out..Dr_out, r] with X's N and r");
	return ERT_OK;
}

ert_status ert_infer_grid_sample(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x = ctx->n_in > 0 ? ctx->in[0] : NULL;
	const struct ert_value *grid = ctx->n_in > 1 ? ctx->in[1] : NULL;
	struct ert_grid_params p;
	int64_t dims[ERT_MAX_RANK];
	ert_status st = ert_grid_params_get(ctx->node, x, grid, &p, ctx->err);

	if (st != ERT_OK)
		return st;
	if (ctx->n_out < 1 || !ctx->out[0])
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "output Y is missing");
	dims[0] = x->dims[0];
	dims[1] = x->dims[1];
	for (int32_t k = 1; k < grid->rank - 1; k++)
		dims[k + 1] = grid->dims[k];
	ert_value_set_shape(ctx->out[0], x->dtype, x->rank, dims);
	return ERT_OK;
}

ert_status ert_infer_affine_grid(struct ert_infer_ctx *ctx)
{
	const struct ert_value *theta = ctx->n_in > 0 ? ctx->in[0] : NULL;
	const struct ert_value *size = ctx->n_in > 1 ? ctx->in[1] : NULL;
	int64_t dims[ERT_MAX_RANK], r;
	ert_status st;

	if (!theta || !size || ctx->n_out < 1 || !ctx->out[0])
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "needs theta, size and grid");
	if (!ert_dtype_is_float(theta->dtype) || ert_dtype_size(theta->dtype) < 2)
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "theta must be float16/32/64");
	if (!ert_dtype_is_int(size->dtype) || size->rank != 1 ||
	    (size->numel != 4 && size->numel != 5))
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "size must hold 4 or 5 integers");
	if (ert_check_known(ctx->node, ctx->err, "size", size) != ERT_OK)
		return ERT_STATUS_UNSUPPORTED;
	r = size->numel - 2;
	if (theta->rank != 3 || theta->dims[1] != r || theta->dims[2] != r + 1)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "theta must be [N, %lld, %lld]",
				      (long long)r, (long long)(r + 1));
	if (ert_value_get_int(size, 0) != theta->dims[0])
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "size and theta disagree on N");
	dims[0] = theta->dims[0];
	for (int64_t k = 0; k < r; k++) {
		dims[k + 1] = ert_value_get_int(size, k + 2);
		st = ert_check_dim(ctx->node, ctx->err, "size", k + 2, dims[k + 1]);
		if (st != ERT_OK)
			return st;
	}
	dims[r + 1] = r;
	ert_value_set_shape(ctx->out[0], theta->dtype, (int32_t)r + 2, dims);
	return ERT_OK;
}
