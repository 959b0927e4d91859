/* SPDX-License-Identifier: MIT */
/*
 * resize-roi.h — RoiAlign (opset 10 and 16): shape inference and the settings
 * the CPU kernel shares. Registered in the resize family's tables.
 */
#ifndef ERT_OPS_RESIZE_ROI_H
#define ERT_OPS_RESIZE_ROI_H

#include "ert-op-impl.h"

struct ert_roi_params {
	bool max_mode;      /* "max": largest weighted corner; "avg": mean of samples */
	bool half_pixel;    /* opset 16 default; opset 10 behaves as output_half_pixel */
	int64_t out_h, out_w;
	int64_t sampling_ratio;  /* 0: adaptive, ceil(roi size / output size) */
	double spatial_scale;
};

/* Read the attributes and check X, rois and batch_indices; message on failure. */
ert_status ert_roi_params_get(const struct ert_node *node, const struct ert_value *x,
			      const struct ert_value *rois, const struct ert_value *batch,
			      struct ert_roi_params *p, struct ert_err *err);

ert_status ert_infer_roi_align(struct ert_infer_ctx *ctx);

#endif /* ERT_OPS_RESIZE_ROI_H */
