/* SPDX-License-Identifier: MIT */
/*
 * spatial.h — Col2Im, DeformConv and MaxUnpool parameters, read and checked
 * once for shape inference (ops/spatial.c) and again by the CPU kernels
 * (backends/cpu/ops/spatial.c), so both agree on every size. All products of
 * attributes are computed with overflow checks: models are untrusted.
 */
#ifndef ERT_OPS_SPATIAL_H
#define ERT_OPS_SPATIAL_H

#include "ert-op-impl.h"

#define ERT_SPATIAL_MAX (ERT_MAX_RANK - 2)

/* Col2Im: image [N, C, img...] from columns [N, C * prod(block), prod(blocks)]. */
struct ert_col2im_params {
	int32_t k;                       /* spatial dims */
	int64_t img[ERT_SPATIAL_MAX], block[ERT_SPATIAL_MAX];
	int64_t dil[ERT_SPATIAL_MAX], stride[ERT_SPATIAL_MAX], pad[2 * ERT_SPATIAL_MAX];
	int64_t blocks[ERT_SPATIAL_MAX]; /* block positions per dim */
	int64_t channels;                /* C */
	int64_t block_size;              /* prod(block) */
};

/* DeformConv (2-D): X [N, C, H, W], W [M, C / group, kh, kw]. */
struct ert_deform_params {
	int64_t kernel[2], dil[2], stride[2], pad[4], out[2];
	int64_t group, offset_group;
};

/* MaxUnpool: X and I [N, C, in...] into Y (output_shape, or the inferred shape). */
struct ert_unpool_params {
	int32_t rank;
	int64_t inferred[ERT_MAX_RANK]; /* where the indices point */
	int64_t out[ERT_MAX_RANK];      /* Y's shape: inferred, or output_shape (no smaller) */
};

ert_status ert_col2im_params(const struct ert_node *n, const struct ert_value *const *in,
			     uint32_t n_in, struct ert_col2im_params *p, struct ert_err *err);
ert_status ert_deform_params(const struct ert_node *n, const struct ert_value *const *in,
			     uint32_t n_in, struct ert_deform_params *p, struct ert_err *err);
ert_status ert_unpool_params(const struct ert_node *n, const struct ert_value *const *in,
			     uint32_t n_in, struct ert_unpool_params *p, struct ert_err *err);

#endif /* ERT_OPS_SPATIAL_H */
