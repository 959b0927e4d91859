/* SPDX-License-Identifier: MIT */
/*
 * qlinear.h — private to the int8 ops (libruntime/ops/qlinalg.c,
 * qlinear-ew.c and their CPU kernels): the attributes that choose how an int8
 * op requantises (docs/int8.md) and the shape-inference checks they share.
 *
 *   ert.requant  INT   absent or 0: onnxruntime's float rule; 1: the
 *                      fixed-point rule of ops/quant-fixed.h
 *   ert.clamp    INTS  [lo, hi]: clamp of the output in its integer domain
 *                      (a fused Relu/Clip); default the output type's range
 */
#ifndef ERT_OPS_QLINEAR_H
#define ERT_OPS_QLINEAR_H

#include "ert-op-impl.h"
#include "ops/quant-fixed.h"

struct ert_qrule {
	bool fixed;         /* ert.requant = 1 */
	int32_t lo, hi;     /* output clamp, inside the output type's range */
};

/*
 * Read the rule of node @n whose output has dtype @out_dt (uint8 or int8).
 * Returns NULL, or a static string saying what is wrong with the attributes.
 */
const char *ert_qrule_read(const struct ert_node *n, ert_dtype out_dt, struct ert_qrule *r);

/* Value @c of a per-tensor (one element) or per-channel parameter; 0 for NULL. */
double ert_qparam_float(const struct ert_value *v, int64_t c);
int32_t ert_qparam_int(const struct ert_value *v, int64_t c);

/* ---- shape inference ---- */

/* Input @i of ctx, or NULL when absent or past the node's inputs. */
static inline const struct ert_value *ert_qin(const struct ert_infer_ctx *ctx, uint32_t i)
{
	return i < ctx->n_in ? ctx->in[i] : NULL;
}

/* ert_qrule_read() reported through ctx. */
ert_status ert_qinfer_rule(struct ert_infer_ctx *ctx, ert_dtype out_dt, struct ert_qrule *r);

/*
 * Fixed rule: the scales at inputs @idx (absent ones skipped) must be known
 * at plan time (constants), and positive and finite.
 */
ert_status ert_qinfer_scales_known(struct ert_infer_ctx *ctx, const uint32_t *idx, uint32_t n);

/*
 * Fixed rule: every multiplier a_s[c] * b_s[c] / y_s for c < @count (a
 * one-element scale applies to every c) must be representable. The inputs
 * @ia, @ib, @iy are scales checked by ert_qinfer_scales_known().
 */
ert_status ert_qinfer_product_mults(struct ert_infer_ctx *ctx, uint32_t ia, uint32_t ib,
				    uint32_t iy, int64_t count);

#endif /* ERT_OPS_QLINEAR_H */
