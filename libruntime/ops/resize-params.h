/* SPDX-License-Identifier: MIT */
/*
 * resize-params.h — what a Resize (opset 10..19+) or Upsample (opset 7/9) node
 * asks for, resolved per axis: output size, scale, region of interest and the
 * interpolation settings. Shared by shape inference and the kernels so both read
 * the node the same way.
 */
#ifndef ERT_OPS_RESIZE_PARAMS_H
#define ERT_OPS_RESIZE_PARAMS_H

#include "ert-op-impl.h"

enum ert_resize_mode { ERT_RESIZE_NEAREST, ERT_RESIZE_LINEAR, ERT_RESIZE_CUBIC };

enum ert_resize_coord {
	ERT_COORD_HALF_PIXEL,
	ERT_COORD_HALF_PIXEL_SYMMETRIC,
	ERT_COORD_PYTORCH_HALF_PIXEL,
	ERT_COORD_ALIGN_CORNERS,
	ERT_COORD_ASYMMETRIC,
	ERT_COORD_TF_CROP_AND_RESIZE,
};

enum ert_resize_nearest {
	ERT_NEAREST_ROUND_PREFER_FLOOR,
	ERT_NEAREST_ROUND_PREFER_CEIL,
	ERT_NEAREST_FLOOR,
	ERT_NEAREST_CEIL,
};

struct ert_resize_params {
	int32_t rank;
	int64_t out_dims[ERT_MAX_RANK];
	double scale[ERT_MAX_RANK];      /* 1 on axes that are not resized */
	double roi_start[ERT_MAX_RANK];  /* tf_crop_and_resize; 0 by default */
	double roi_end[ERT_MAX_RANK];    /* 1 by default */
	enum ert_resize_mode mode;
	enum ert_resize_coord coord;
	enum ert_resize_nearest nearest;
	double cubic_a;
	double extrapolation;
	bool exclude_outside;
	bool antialias;
};

/*
 * Resolve @node's parameters for X @in[0] (@in holds the node's @n_in inputs,
 * NULL where omitted; scales/sizes/roi must carry data). Fails with a message
 * naming the problem: unknown mode strings, wrong scales/sizes counts, neither
 * scales nor sizes, non-positive scales.
 */
ert_status ert_resize_params_get(const struct ert_node *node, const struct ert_value *const *in,
				 uint32_t n_in, struct ert_resize_params *p, struct ert_err *err);

#endif /* ERT_OPS_RESIZE_PARAMS_H */
