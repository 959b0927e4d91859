/* SPDX-License-Identifier: MIT */
/*
 * quant-layout.h — how QuantizeLinear / DequantizeLinear scales and zero points
 * map onto X: per tensor, per axis, or blocked along an axis (opset 21
 * block_size). Shared by shape inference and the CPU kernels.
 */
#ifndef ERT_OPS_QUANT_LAYOUT_H
#define ERT_OPS_QUANT_LAYOUT_H

#include "ert-op-impl.h"

enum ert_quant_kind {
	ERT_QUANT_PER_TENSOR,
	ERT_QUANT_PER_AXIS,
	ERT_QUANT_BLOCKED,
};

struct ert_quant_layout {
	enum ert_quant_kind kind;
	int64_t n, inner;   /* X as [outer, n, inner] around the axis */
	int64_t block;      /* BLOCKED: elements of n per scale */
	int64_t nblocks;    /* BLOCKED: ceil(n / block) */
};

/*
 * Work out the layout for X @x and scale @scale (zero point @zp may be NULL; when
 * given it must have the scale's shape). Fails with a message naming the mismatch.
 */
ert_status ert_quant_layout_get(const struct ert_node *node, const struct ert_value *x,
				const struct ert_value *scale, const struct ert_value *zp,
				struct ert_quant_layout *out, struct ert_err *err);

/* Index into scale / zero point for element @i of X. */
static inline int64_t ert_quant_param_index(const struct ert_quant_layout *l, int64_t i)
{
	int64_t in, a, o;

	switch (l->kind) {
	case ERT_QUANT_PER_AXIS:
		return (i / l->inner) % l->n;
	case ERT_QUANT_BLOCKED:
		in = i % l->inner;
		a = (i / l->inner) % l->n;
		o = i / (l->inner * l->n);
		return (o * l->nblocks + a / l->block) * l->inner + in;
	default:
		return 0;
	}
}

#endif /* ERT_OPS_QUANT_LAYOUT_H */
