/* SPDX-License-Identifier: MIT */
/*
 * resize-taps.h — per-axis interpolation taps of Resize/Upsample (private to
 * backends/cpu/ops). Interpolation is separable: every output coordinate of an
 * axis reads a few input coordinates with weights, and an N-D output element is
 * the weighted sum over the product of its axes' taps.
 */
#ifndef ERT_CPU_RESIZE_TAPS_H
#define ERT_CPU_RESIZE_TAPS_H

#include "cpu/cpu-impl.h"
#include "ops/resize-params.h"

struct ert_resize_axis {
	int64_t in, out;
	int32_t slots;      /* tap slots per output coordinate */
	int32_t *count;     /* [out]: taps used; -1: outside the crop, extrapolate */
	int64_t *index;     /* [out * slots]: input coordinates */
	double *weight;     /* [out * slots] */
};

/* Tap slots an axis of @in -> @out elements can need (from shapes alone). */
int32_t ert_resize_slots(const struct ert_resize_params *p, int64_t in, int64_t out);

/* Bytes of workspace one axis takes for @slots slots. */
size_t ert_resize_axis_bytes(int64_t out, int32_t slots);

/*
 * Fill the taps of axis @d into @ax, whose arrays are carved from @mem
 * (ert_resize_axis_bytes() bytes). Fails if a coordinate would need more taps
 * than the slots allow (an error naming @node).
 */
ert_status ert_resize_axis_taps(const struct ert_node *node, const struct ert_resize_params *p,
				int32_t d, int64_t in, void *mem, int32_t slots,
				struct ert_resize_axis *ax, struct ert_err *err);

#endif /* ERT_CPU_RESIZE_TAPS_H */
