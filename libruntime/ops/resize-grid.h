/* SPDX-License-Identifier: MIT */
/*
 * resize-grid.h — GridSample (opset 16: 4-D, bilinear/nearest/bicubic; opset 20:
 * N-D, linear/nearest/cubic): settings shared by shape inference
 * (resize-grid.c) and the CPU kernel. Registered in the resize family's
 * tables (ops/resize.c, cpu/ops/resize.c) with AffineGrid.
 */
#ifndef ERT_OPS_RESIZE_GRID_H
#define ERT_OPS_RESIZE_GRID_H

#include "ops/resize-params.h"

enum ert_grid_padding { ERT_GRID_ZEROS, ERT_GRID_BORDER, ERT_GRID_REFLECTION };

struct ert_grid_params {
	enum ert_resize_mode mode;
	enum ert_grid_padding padding;
	bool align_corners;
	int32_t spatial;   /* X rank - 2 */
};

/* Read the attributes and check X @x and grid @grid; message on failure. */
ert_status ert_grid_params_get(const struct ert_node *node, const struct ert_value *x,
			       const struct ert_value *grid, struct ert_grid_params *p,
			       struct ert_err *err);

ert_status ert_infer_grid_sample(struct ert_infer_ctx *ctx);

/*
 * AffineGrid (opset 20): theta [N, 2, 3] or [N, 3, 4] and size (N, C, H, W) or
 * (N, C, D, H, W), read for its value, give the sampling grid [N, (D,) H, W, r]
 * that GridSample consumes.
 */
ert_status ert_infer_affine_grid(struct ert_infer_ctx *ctx);

#endif /* ERT_OPS_RESIZE_GRID_H */
