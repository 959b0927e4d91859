/* SPDX-License-Identifier: MIT */
/*
 * Shape inference: ImageDecoder — the encoded bytes (uint8, 1-D) to
 * [H, W, C] uint8, C 3 for RGB and BGR, 1 for Grayscale; H and W are read
 * from the image when it runs (docs/dynamic-shapes.md).
 */
#include <string.h>

#include "ert-op-impl.h"

static ert_status infer_image_decoder(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x = ctx->n_in ? ctx->in[0] : NULL;
	const char *fmt = ert_attr_string(ctx->node, "pixel_format", "RGB");
	int64_t dims[3] = { -1, -1, 3 };

	if (!x || x->dtype != ERT_DTYPE_UINT8 || x->rank != 1)
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "input must be 1-D uint8 (the encoded image)");
	if (strcmp(fmt, "Grayscale") == 0)
		dims[2] = 1;
	else if (strcmp(fmt, "RGB") != 0 && strcmp(fmt, "BGR") != 0)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL,
				      "pixel_format '%s', expected RGB, BGR or Grayscale", fmt);
	ert_value_set_shape(ctx->out[0], ERT_DTYPE_UINT8, 3, dims);
	return ERT_OK;
}

const struct ert_op_def ert_op_defs_image[] = {
	{ ERT_OP_ImageDecoder, infer_image_decoder, NULL },
	{ .infer = NULL },
};
