/* SPDX-License-Identifier: MIT */
/* Axes of Reduce* nodes: attribute or input, keepdims, noop_with_empty_axes. */
#include "ops/reduce-axes.h"

static ert_status add_axis(const struct ert_node *n, uint32_t i, int64_t axis, int32_t rank,
			   uint32_t *mask, struct ert_err *err)
{
	int32_t a;

	if (!ert_norm_axis(axis, rank, &a))
		return ert_node_fail(n, err, ERT_STATUS_SHAPE,
				     "axis %lld (axes[%u]) is out of range for rank %d",
				     (long long)axis, i, (int)rank);
	if (*mask & (1u << a))
		return ert_node_fail(n, err, ERT_STATUS_INVALID_MODEL,
				     "axis %lld (axes[%u]) is listed twice", (long long)axis, i);
	*mask |= 1u << a;
	return ERT_OK;
}

ert_status ert_reduce_axes_get(const struct ert_node *n, const struct ert_value *x,
			       const struct ert_value *axes_in, struct ert_reduce_axes *out,
			       struct ert_err *err)
{
	uint32_t mask = 0, count = 0;
	ert_status st;

	out->keepdims = ert_attr_int(n, "keepdims", 1) != 0;
	out->noop = false;
	if (axes_in) {
		if (!ert_dtype_is_int(axes_in->dtype) || axes_in->rank > 1)
			return ert_node_fail(n, err, ERT_STATUS_DTYPE,
					     "axes must be a 1-D integer tensor");
		if (ert_check_known(n, err, "axes", axes_in) != ERT_OK)
			return ERT_STATUS_UNSUPPORTED;
		count = (uint32_t)axes_in->numel;
		for (uint32_t i = 0; i < count; i++) {
			st = add_axis(n, i, ert_value_get_int(axes_in, i), x->rank, &mask, err);
			if (st != ERT_OK)
				return st;
		}
	} else {
		const int64_t *axes = ert_attr_ints(n, "axes", &count);

		for (uint32_t i = 0; i < count; i++) {
			st = add_axis(n, i, axes[i], x->rank, &mask, err);
			if (st != ERT_OK)
				return st;
		}
	}
	if (count == 0) {
		if (ert_attr_int(n, "noop_with_empty_axes", 0)) {
			out->noop = true;
		} else {
			for (int32_t k = 0; k < x->rank; k++)
				mask |= 1u << k;
		}
	}
	out->mask = mask;
	return ERT_OK;
}

void ert_reduce_out_shape(const struct ert_value *x, const struct ert_reduce_axes *ra,
			  int32_t *rank_out, int64_t *dims_out)
{
	int32_t r = 0;

	for (int32_t k = 0; k < x->rank; k++) {
		if (!(ra->mask & (1u << k)))
			dims_out[r++] = x->dims[k];
		else if (ra->keepdims)
			dims_out[r++] = 1;
	}
	*rank_out = r;
}
