/* SPDX-License-Identifier: MIT */
/* Scale/zero-point layouts of QuantizeLinear and DequantizeLinear. */
#include "ops/quant-layout.h"

ert_status ert_quant_layout_get(const struct ert_node *node, const struct ert_value *x,
				const struct ert_value *scale, const struct ert_value *zp,
				struct ert_quant_layout *out, struct ert_err *err)
{
	int64_t axis = ert_attr_int(node, "axis", 1);
	int64_t block = ert_attr_int(node, "block_size", 0);
	int32_t a = 0;

	out->kind = ERT_QUANT_PER_TENSOR;
	out->n = out->inner = out->block = out->nblocks = 1;
	/* A scalar zero point may be [] or [1]: compare element counts. */
	if (zp && zp->numel != scale->numel)
		return ert_node_fail(node, err, ERT_STATUS_SHAPE,
				     "zero point and scale have different element counts");
	if (scale->numel == 1 && block <= 0)
		return ERT_OK;
	if (x->rank == 0 || !ert_norm_axis(axis, x->rank, &a)) {
		return ert_node_fail(node, err, ERT_STATUS_SHAPE,
				     "axis = %lld is out of range for X of rank %d",
				     (long long)axis, (int)x->rank);
	}
	out->n = x->dims[a];
	out->inner = 1;
	for (int32_t k = a + 1; k < x->rank; k++)
		out->inner *= x->dims[k];
	if (block <= 0) {
		if (scale->rank != 1 || scale->numel != out->n)
			return ert_node_fail(node, err, ERT_STATUS_SHAPE,
					     "per-axis scale (block_size 0) must be 1-D with "
					     "X.shape[axis] elements");
		out->kind = ERT_QUANT_PER_AXIS;
		return ERT_OK;
	}
	/* Blocked: scale has X's shape with axis a divided into ceil(n / block). */
	out->kind = ERT_QUANT_BLOCKED;
	out->block = block;
	out->nblocks = out->n / block + (out->n % block != 0);
	if (scale->rank != x->rank)
		return ert_node_fail(node, err, ERT_STATUS_SHAPE,
				     "blocked scale (block_size > 0) must have X's rank");
	for (int32_t k = 0; k < x->rank; k++) {
		int64_t want = k == a ? out->nblocks : x->dims[k];

		if (scale->dims[k] != want)
			return ert_node_fail(node, err, ERT_STATUS_SHAPE, "blocked scale shape "
					     "does not match X, axis and block_size");
	}
	return ERT_OK;
}
