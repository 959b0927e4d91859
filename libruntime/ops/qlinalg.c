/* SPDX-License-Identifier: MIT */
/*
 * Shape inference: QLinearConv, QLinearMatMul, QGemm (com.microsoft),
 * ConvInteger, MatMulInteger. The QLinear ops take "ert.requant" and
 * "ert.clamp" (ops/qlinear.h); the fixed-point rule's multipliers must be
 * representable, which needs the scales at plan time.
 */
#include <math.h>
#include <string.h>

#include "ops/linalg-geom.h"
#include "ops/qlinear.h"

static bool is_q8(const struct ert_value *v)
{
	return v && (v->dtype == ERT_DTYPE_UINT8 || v->dtype == ERT_DTYPE_INT8);
}

static const struct ert_value *in_at(struct ert_infer_ctx *ctx, uint32_t i)
{
	return ert_qin(ctx, i);
}

/*
 * A scale (float32/float16) or zero point (8-bit) input: a scalar, or a vector
 * of @per_len entries when @per_len > 0 (per-channel). Absent is fine when
 * @optional.
 */
static ert_status check_param(struct ert_infer_ctx *ctx, uint32_t i, bool scale, int64_t per_len,
			      bool optional)
{
	const struct ert_value *v = in_at(ctx, i);

	if (!v) {
		if (optional)
			return ERT_OK;
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "input %u is missing", i);
	}
	if (scale ? (v->dtype != ERT_DTYPE_FLOAT32 && v->dtype != ERT_DTYPE_FLOAT16)
		  : !is_q8(v))
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "input %u has dtype %s", i,
				      ert_dtype_name(v->dtype));
	if (v->numel == 1 && v->rank <= 1)
		return ERT_OK;
	if (per_len > 0 && v->rank == 1 && v->dims[0] == per_len)
		return ERT_OK;
	return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "input %u must be a scalar%s", i,
			      per_len > 0 ? " or one value per channel" : "");
}

/*
 * "ert.residual" = 1 (opt/fuse-residual.c, docs/int8.md): a fixed-rule
 * QLinearAdd fused after the convolution. Inputs 9 to 13 are the residual
 * (the output's shape and type), its scale and zero point, and the sum's
 * scale and zero point; the convolution's own output (y_scale,
 * y_zero_point) is the Add's other input, and ert.clamp is the Add's.
 */
static ert_status residual_check(struct ert_infer_ctx *ctx)
{
	const struct ert_value *y = ctx->out[0], *r = in_at(ctx, 9);
	static const uint32_t scales[] = { 10, 12 };
	struct ert_quant_add p;
	ert_status st;

	if (ctx->n_in != 14 || !r)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL,
				      "ert.residual needs 14 inputs, the residual at 9");
	if (r->dtype != y->dtype || r->rank != y->rank ||
	    memcmp(r->dims, y->dims, (size_t)y->rank * sizeof(y->dims[0])))
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
				      "the residual must have the output's shape and type");
	if ((st = check_param(ctx, 10, true, 0, false)) ||
	    (st = check_param(ctx, 11, false, 0, true)) ||
	    (st = check_param(ctx, 12, true, 0, false)) ||
	    (st = check_param(ctx, 13, false, 0, true)))
		return st;
	for (uint32_t i = 11; i <= 13; i += 2)
		if (in_at(ctx, i) && in_at(ctx, i)->dtype != y->dtype)
			return ert_infer_fail(ctx, ERT_STATUS_DTYPE,
					      "input %u must have the output's dtype", i);
	if ((st = ert_qinfer_scales_known(ctx, scales, 2)) != ERT_OK)
		return st;
	if (!ert_quant_add_params(ert_qparam_float(in_at(ctx, 6), 0),
				  ert_qparam_float(in_at(ctx, 10), 0),
				  ert_qparam_float(in_at(ctx, 12), 0), &p))
		return ert_infer_fail(ctx, ERT_STATUS_UNSUPPORTED,
				      "ert.residual: the sum's multiplier is too large for the "
				      "fixed-point rule");
	return ERT_OK;
}

static ert_status infer_qlinearconv(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x = in_at(ctx, 0), *w = in_at(ctx, 3), *yzp = in_at(ctx, 7);
	const struct ert_value *b = in_at(ctx, 8);
	static const uint32_t scales[] = { 1, 4, 6 };
	struct ert_qrule rule;
	ert_status st;

	if (!is_q8(x) || !is_q8(w) || ctx->n_out < 1 || !ctx->out[0])
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "x and w must be uint8 or int8");
	if (w->rank < 1)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "w must have rank >= 3");
	if ((st = check_param(ctx, 1, true, 0, false)) || (st = check_param(ctx, 2, false, 0, true)) ||
	    (st = check_param(ctx, 4, true, w->dims[0], false)) ||
	    (st = check_param(ctx, 5, false, w->dims[0], true)) ||
	    (st = check_param(ctx, 6, true, 0, false)) || (st = check_param(ctx, 7, false, 0, true)))
		return st;
	if (b && (b->dtype != ERT_DTYPE_INT32 || b->rank != 1 || b->dims[0] != w->dims[0]))
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "B must be %lld int32 values",
				      (long long)w->dims[0]);
	bool residual = ert_attr_int(ctx->node, "ert.residual", 0) != 0;

	if (!residual && ctx->n_in > 9)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL,
				      "%u inputs: more than 9 need ert.residual", ctx->n_in);
	st = ert_conv_shape(ctx, x, w, yzp ? yzp->dtype : ERT_DTYPE_UINT8);
	if (st != ERT_OK || (st = ert_qinfer_rule(ctx, ctx->out[0]->dtype, &rule)) != ERT_OK)
		return st;
	if (!rule.fixed)
		return residual ? ert_infer_fail(ctx, ERT_STATUS_UNSUPPORTED,
						 "ert.residual needs ert.requant = 1")
				: ERT_OK;
	if ((st = ert_qinfer_scales_known(ctx, scales, 3)) != ERT_OK ||
	    (st = ert_qinfer_product_mults(ctx, 1, 4, 6, w->dims[0])) != ERT_OK)
		return st;
	return residual ? residual_check(ctx) : ERT_OK;
}

static ert_status infer_convinteger(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x = in_at(ctx, 0), *w = in_at(ctx, 1);
	ert_status st;

	if (!is_q8(x) || !is_q8(w) || ctx->n_out < 1 || !ctx->out[0])
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "x and w must be uint8 or int8");
	if (w->rank < 1)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "w must have rank >= 3");
	if ((st = check_param(ctx, 2, false, 0, true)) ||
	    (st = check_param(ctx, 3, false, w->dims[0], true)))
		return st;
	return ert_conv_shape(ctx, x, w, ERT_DTYPE_INT32);
}

static ert_status infer_qlinearmatmul(struct ert_infer_ctx *ctx)
{
	const struct ert_value *a = in_at(ctx, 0), *b = in_at(ctx, 3), *yzp = in_at(ctx, 7);
	static const uint32_t scales[] = { 1, 4, 6 };
	struct ert_qrule rule;
	ert_status st;

	if (!is_q8(a) || !is_q8(b) || ctx->n_out < 1 || !ctx->out[0])
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "a and b must be uint8 or int8");
	int64_t m = a->rank >= 2 ? a->dims[a->rank - 2] : 0;
	int64_t n = b->rank >= 2 ? b->dims[b->rank - 1] : 0;

	if ((st = check_param(ctx, 1, true, m, false)) || (st = check_param(ctx, 2, false, m, true)) ||
	    (st = check_param(ctx, 4, true, n, false)) || (st = check_param(ctx, 5, false, n, true)) ||
	    (st = check_param(ctx, 6, true, 0, false)) || (st = check_param(ctx, 7, false, 0, true)))
		return st;
	st = ert_matmul_shape(ctx, a, b, yzp ? yzp->dtype : ERT_DTYPE_UINT8);
	if (st != ERT_OK || (st = ert_qinfer_rule(ctx, ctx->out[0]->dtype, &rule)) != ERT_OK ||
	    !rule.fixed)
		return st;
	if (in_at(ctx, 1)->numel > 1 || (in_at(ctx, 2) && in_at(ctx, 2)->numel > 1))
		return ert_infer_fail(ctx, ERT_STATUS_UNSUPPORTED,
				      "ert.requant = 1 needs a per-tensor a_scale and a_zero_point");
	if ((st = ert_qinfer_scales_known(ctx, scales, 3)) != ERT_OK)
		return st;
	return ert_qinfer_product_mults(ctx, 1, 4, 6, n);
}

/*
 * com.microsoft QGemm: Y = alpha * (A' - a_zp)(B' - b_zp) with int32 C added
 * before scaling; quantised when y_zero_point is given, float32 otherwise.
 */
static ert_status infer_qgemm(struct ert_infer_ctx *ctx)
{
	const struct ert_value *a = in_at(ctx, 0), *b = in_at(ctx, 3), *c = in_at(ctx, 6);
	const struct ert_value *ys = in_at(ctx, 7), *yzp = in_at(ctx, 8);
	static const uint32_t scales[] = { 1, 4, 7 };
	bool ta = ert_attr_int(ctx->node, "transA", 0) != 0;
	bool tb = ert_attr_int(ctx->node, "transB", 0) != 0;
	float alpha = ert_attr_float(ctx->node, "alpha", 1.0f);
	struct ert_qrule rule;
	int64_t dims[2];
	ert_status st;

	if (!is_q8(a) || !is_q8(b))
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "A and B must be uint8 or int8");
	if (a->rank != 2 || b->rank != 2)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "A and B must be matrices (rank %d, %d)",
				      (int)a->rank, (int)b->rank);
	int64_t m = a->dims[ta ? 1 : 0], k = a->dims[ta ? 0 : 1];
	int64_t kb = b->dims[tb ? 1 : 0], n = b->dims[tb ? 0 : 1];

	if (k != kb)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
				      "A' is %lldx%lld but B' is %lldx%lld (transA %d, transB %d)",
				      (long long)m, (long long)k, (long long)kb, (long long)n, (int)ta,
				      (int)tb);
	if ((st = check_param(ctx, 1, true, 0, false)) || (st = check_param(ctx, 2, false, 0, true)) ||
	    (st = check_param(ctx, 4, true, n, false)) || (st = check_param(ctx, 5, false, n, true)) ||
	    (st = check_param(ctx, 7, true, 0, true)) || (st = check_param(ctx, 8, false, 0, true)))
		return st;
	if (in_at(ctx, 1)->dtype != ERT_DTYPE_FLOAT32 || in_at(ctx, 4)->dtype != ERT_DTYPE_FLOAT32 ||
	    (ys && ys->dtype != ERT_DTYPE_FLOAT32))
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "scales must be float32");
	if (c && (c->dtype != ERT_DTYPE_INT32 || c->rank > 2 ||
		  (c->rank == 2 && ((c->dims[0] != 1 && c->dims[0] != m) ||
				    (c->dims[1] != 1 && c->dims[1] != n))) ||
		  (c->rank == 1 && c->dims[0] != 1 && c->dims[0] != n)))
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
				      "C must be int32 and broadcast to (%lld, %lld)",
				      (long long)m, (long long)n);
	if (!!ys != !!yzp)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL,
				      "y_scale and y_zero_point must be given together");
	if (!isfinite(alpha))
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "alpha is not finite");
	dims[0] = m;
	dims[1] = n;
	ert_value_set_shape(ctx->out[0], yzp ? yzp->dtype : ERT_DTYPE_FLOAT32, 2, dims);
	if (!yzp) {
		if (ert_node_attr(ctx->node, "ert.requant") || ert_node_attr(ctx->node, "ert.clamp"))
			return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL,
					      "ert.requant and ert.clamp need a quantised output");
		return ERT_OK;
	}
	if ((st = ert_qinfer_rule(ctx, yzp->dtype, &rule)) != ERT_OK || !rule.fixed)
		return st;
	if (alpha != 1.0f)
		return ert_infer_fail(ctx, ERT_STATUS_UNSUPPORTED,
				      "ert.requant = 1 needs alpha = 1 (alpha is %g)", (double)alpha);
	if ((st = ert_qinfer_scales_known(ctx, scales, 3)) != ERT_OK)
		return st;
	return ert_qinfer_product_mults(ctx, 1, 4, 7, n);
}

static ert_status infer_matmulinteger(struct ert_infer_ctx *ctx)
{
	const struct ert_value *a = in_at(ctx, 0), *b = in_at(ctx, 1);
	ert_status st;

	if (!is_q8(a) || !is_q8(b) || ctx->n_out < 1 || !ctx->out[0])
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "A and B must be uint8 or int8");
	int64_t m = a->rank >= 2 ? a->dims[a->rank - 2] : 0;
	int64_t n = b->rank >= 2 ? b->dims[b->rank - 1] : 0;

	if ((st = check_param(ctx, 2, false, m, true)) || (st = check_param(ctx, 3, false, n, true)))
		return st;
	return ert_matmul_shape(ctx, a, b, ERT_DTYPE_INT32);
}

static const struct ert_attr_rule qconv_rules[] = {
	ERT_RULE_INT("group", 1, ERT_DIM_MAX), ERT_RULE_SPATIAL("kernel_shape", 1),
	ERT_RULE_SPATIAL("strides", 1), ERT_RULE_SPATIAL("dilations", 1), ERT_RULE_SPATIAL("pads", 0),
	ERT_RULE_END,
};
static const struct ert_attr_rule qgemm_rules[] = {
	ERT_RULE_FLAG("transA"), ERT_RULE_FLAG("transB"), ERT_RULE_END,
};

const struct ert_op_def ert_op_defs_qlinalg[] = {
	{ ERT_OP_QLinearConv, infer_qlinearconv, qconv_rules },
	{ ERT_OP_ConvInteger, infer_convinteger, qconv_rules },
	{ ERT_OP_QLinearMatMul, infer_qlinearmatmul, NULL },
	{ ERT_OP_QGemm, infer_qgemm, qgemm_rules },
	{ ERT_OP_MatMulInteger, infer_matmulinteger, NULL },
	{ .infer = NULL },
};
