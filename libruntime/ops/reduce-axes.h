/* SPDX-License-Identifier: MIT */
/*
 * reduce-axes.h — which axes a Reduce* node reduces, shared by shape inference
 * (libruntime/ops/reduce.c) and the kernels (backends/cpu/ops/reduce*.c) so both
 * read the node the same way.
 */
#ifndef ERT_OPS_REDUCE_AXES_H
#define ERT_OPS_REDUCE_AXES_H

#include "ert-op-impl.h"

struct ert_reduce_axes {
	uint32_t mask;   /* bit k: axis k is reduced */
	bool noop;       /* empty axes with noop_with_empty_axes: Y = X */
	bool keepdims;
};

/*
 * Resolve the axes of Reduce* node @n for input X @x: from the axes input (ReduceSum
 * at opset >= 13, every Reduce* at opset >= 18; whatever the node actually has) or
 * the axes attribute; no axes means all axes unless noop_with_empty_axes is set.
 * @axes_in is input 1 or NULL. Fails with a message on an out-of-range or repeated
 * axis, or an axes input whose value is unknown.
 */
ert_status ert_reduce_axes_get(const struct ert_node *n, const struct ert_value *x,
			       const struct ert_value *axes_in, struct ert_reduce_axes *out,
			       struct ert_err *err);

/* Shape of the reduced output of @x under @ra. */
void ert_reduce_out_shape(const struct ert_value *x, const struct ert_reduce_axes *ra,
			  int32_t *rank_out, int64_t *dims_out);

#endif /* ERT_OPS_REDUCE_AXES_H */
