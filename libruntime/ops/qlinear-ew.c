/* SPDX-License-Identifier: MIT */
/*
 * Shape inference of onnxruntime's com.microsoft int8 ops QLinearAdd,
 * QLinearMul, QLinearAveragePool and QLinearGlobalAveragePool, under either
 * requantisation rule (ops/qlinear.h, docs/int8.md).
 */
#include <stdio.h>

#include "ops/linalg-geom.h"
#include "ops/qlinear.h"

static bool is_q8(const struct ert_value *v)
{
	return v && (v->dtype == ERT_DTYPE_UINT8 || v->dtype == ERT_DTYPE_INT8);
}

/* A per-tensor scale (float32) or zero point (of dtype @zp_dt) at input @i. */
static ert_status scalar_param(struct ert_infer_ctx *ctx, uint32_t i, bool scale, ert_dtype zp_dt,
			       bool optional)
{
	const struct ert_value *v = ert_qin(ctx, i);

	if (!v) {
		if (optional)
			return ERT_OK;
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "input %u is missing", i);
	}
	if (v->dtype != (scale ? ERT_DTYPE_FLOAT32 : zp_dt))
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "input %u has dtype %s, expected %s", i,
				      ert_dtype_name(v->dtype),
				      ert_dtype_name(scale ? ERT_DTYPE_FLOAT32 : zp_dt));
	if (v->numel != 1 || v->rank > 1)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "input %u must be a scalar", i);
	return ERT_OK;
}

/* Inputs: A, A_scale, A_zero_point, B, B_scale, B_zero_point, C_scale, C_zero_point. */
static ert_status infer_binary(struct ert_infer_ctx *ctx)
{
	const struct ert_value *a = ert_qin(ctx, 0), *b = ert_qin(ctx, 3);
	static const uint32_t scales[] = { 1, 4, 6 };
	struct ert_qrule rule;
	ert_status st;

	if (!is_q8(a) || !is_q8(b) || a->dtype != b->dtype)
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE,
				      "A and B must both be uint8 or both int8");
	if ((st = scalar_param(ctx, 1, true, a->dtype, false)) ||
	    (st = scalar_param(ctx, 2, false, a->dtype, true)) ||
	    (st = scalar_param(ctx, 4, true, a->dtype, false)) ||
	    (st = scalar_param(ctx, 5, false, a->dtype, true)) ||
	    (st = scalar_param(ctx, 6, true, a->dtype, false)) ||
	    (st = scalar_param(ctx, 7, false, a->dtype, true)))
		return st;
	const struct ert_value *ab[2] = { a, b };

	char what[200];

	snprintf(what, sizeof(what), "%s '%s'", ert_op_name(ctx->node->op),
		 ctx->node->name ? ctx->node->name : "");
	st = ert_broadcast_shapes(ab, 2, ctx->out[0], ctx->err, what);
	if (st != ERT_OK)
		return st;
	ctx->out[0]->dtype = a->dtype;
	if ((st = ert_qinfer_rule(ctx, a->dtype, &rule)) != ERT_OK || !rule.fixed)
		return st;
	if ((st = ert_qinfer_scales_known(ctx, scales, 3)) != ERT_OK)
		return st;
	if (ctx->node->op == ERT_OP_QLinearMul)
		return ert_qinfer_product_mults(ctx, 1, 4, 6, 1);

	struct ert_quant_add p;

	if (!ert_quant_add_params(ert_qparam_float(ert_qin(ctx, 1), 0),
				  ert_qparam_float(ert_qin(ctx, 4), 0),
				  ert_qparam_float(ert_qin(ctx, 6), 0), &p))
		return ert_infer_fail(ctx, ERT_STATUS_UNSUPPORTED,
				      "ert.requant = 1: output multiplier 2 * max(A_scale, "
				      "B_scale) / (2^20 * C_scale) is too large for the fixed-point rule");
	return ERT_OK;
}

/* Inputs X, x_scale, x_zero_point, y_scale, y_zero_point; checks common to both pools. */
static ert_status pool_params(struct ert_infer_ctx *ctx, int32_t min_rank, struct ert_qrule *rule)
{
	const struct ert_value *x = ert_qin(ctx, 0);
	static const uint32_t scales[] = { 1, 3 };
	ert_status st;

	if (!is_q8(x))
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "X must be uint8 or int8");
	if (x->rank < min_rank || x->rank > 2 + ERT_GEOM_MAX_SPATIAL)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "X has rank %d, expected %d to %d",
				      (int)x->rank, (int)min_rank, 2 + ERT_GEOM_MAX_SPATIAL);
	if ((st = scalar_param(ctx, 1, true, x->dtype, false)) ||
	    (st = scalar_param(ctx, 2, false, x->dtype, true)) ||
	    (st = scalar_param(ctx, 3, true, x->dtype, false)) ||
	    (st = scalar_param(ctx, 4, false, x->dtype, true)))
		return st;
	if ((st = ert_qinfer_rule(ctx, x->dtype, rule)) != ERT_OK || !rule->fixed)
		return st;
	if ((st = ert_qinfer_scales_known(ctx, scales, 2)) != ERT_OK)
		return st;
	const struct ert_value *xzp = ert_qin(ctx, 2), *yzp = ert_qin(ctx, 4);

	if ((xzp && !xzp->data) || (yzp && !yzp->data))
		return ert_infer_fail(ctx, ERT_STATUS_UNSUPPORTED,
				      "ert.requant = 1 needs constant zero points");
	/* the fixed rule averages raw integers: no requantisation */
	if (ert_qparam_float(ert_qin(ctx, 1), 0) != ert_qparam_float(ert_qin(ctx, 3), 0) ||
	    ert_qparam_int(xzp, 0) != ert_qparam_int(yzp, 0))
		return ert_infer_fail(ctx, ERT_STATUS_UNSUPPORTED,
				      "ert.requant = 1 needs y_scale = x_scale and "
				      "y_zero_point = x_zero_point");
	return ERT_OK;
}

static ert_status infer_avgpool(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x = ert_qin(ctx, 0);
	const struct ert_node *n = ctx->node;
	int64_t dims[ERT_MAX_RANK];
	struct ert_conv_geom g;
	struct ert_qrule rule;
	const int64_t *ks;
	uint32_t nk, nd;
	ert_status st = pool_params(ctx, 3, &rule);

	if (st != ERT_OK)
		return st;
	if (ert_attr_int(n, "channels_last", 0) != 0)
		return ert_infer_fail(ctx, ERT_STATUS_UNSUPPORTED, "channels_last = 1 is not supported");
	if (rule.fixed && ert_attr_int(n, "count_include_pad", 0) != 0)
		return ert_infer_fail(ctx, ERT_STATUS_UNSUPPORTED,
				      "ert.requant = 1 needs count_include_pad = 0");
	ks = ert_attr_ints(n, "kernel_shape", &nk);
	if (!ks || (int32_t)nk != x->rank - 2)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL,
				      "kernel_shape must have %d values", (int)x->rank - 2);
	/* onnxruntime's QLinearAveragePool has no dilations */
	const int64_t *dil = ert_attr_ints(n, "dilations", &nd);

	for (uint32_t i = 0; dil && i < nd; i++)
		if (dil[i] != 1)
			return ert_infer_fail(ctx, ERT_STATUS_UNSUPPORTED, "dilations must be 1");
	st = ert_geom_conv(n, x->rank - 2, x->dims + 2, ks, ert_attr_int(n, "ceil_mode", 0) != 0,
			   &g, ctx->err);
	if (st != ERT_OK)
		return st;
	for (int i = 3 - g.nsp; i < 3; i++)
		if (g.pad_b[i] >= g.k[i] || g.pad_e[i] >= g.k[i])
			return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL,
					      "pads %lld, %lld on spatial axis %d are not smaller than "
					      "kernel_shape %lld", (long long)g.pad_b[i],
					      (long long)g.pad_e[i], i - (3 - g.nsp), (long long)g.k[i]);
	dims[0] = x->dims[0];
	dims[1] = x->dims[1];
	for (int32_t i = 0; i < x->rank - 2; i++)
		dims[2 + i] = g.out[3 - (x->rank - 2) + i];
	ert_value_set_shape(ctx->out[0], x->dtype, x->rank, dims);
	return ERT_OK;
}

static ert_status infer_global_avgpool(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x = ert_qin(ctx, 0);
	int64_t dims[ERT_MAX_RANK];
	struct ert_qrule rule;
	ert_status st = pool_params(ctx, 2, &rule);
	bool last = ert_attr_int(ctx->node, "channels_last", 0) != 0;

	if (st != ERT_OK)
		return st;
	/* NCHW: (N, C, 1, ...); channels_last: (N, 1, ..., C) */
	for (int32_t i = 0; i < x->rank; i++)
		dims[i] = i == 0 || i == (last ? x->rank - 1 : 1) ? x->dims[i] : 1;
	ert_value_set_shape(ctx->out[0], x->dtype, x->rank, dims);
	return ERT_OK;
}

static ert_status infer_lookup(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x = ert_qin(ctx, 0), *t = ert_qin(ctx, 1);

	if (ctx->n_in != 2 || !x || !t)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "takes X and a table");
	if ((x->dtype != ERT_DTYPE_INT8 && x->dtype != ERT_DTYPE_UINT8) ||
	    (t->dtype != ERT_DTYPE_INT8 && t->dtype != ERT_DTYPE_UINT8))
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "X and the table must be int8 or uint8, got %s and %s",
				      ert_dtype_name(x->dtype), ert_dtype_name(t->dtype));
	if (t->numel != 256 || t->rank != 1)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "the table must have 256 entries");
	ert_value_set_shape(ctx->out[0], t->dtype, x->rank, x->dims);
	return ERT_OK;
}

static const struct ert_attr_rule qpool_rules[] = {
	ERT_RULE_SPATIAL("kernel_shape", 1), ERT_RULE_SPATIAL("strides", 1),
	ERT_RULE_SPATIAL("dilations", 1), ERT_RULE_SPATIAL("pads", 0), ERT_RULE_FLAG("ceil_mode"),
	ERT_RULE_FLAG("count_include_pad"), ERT_RULE_FLAG("channels_last"), ERT_RULE_END,
};
static const struct ert_attr_rule qglobal_rules[] = {
	ERT_RULE_FLAG("channels_last"), ERT_RULE_END,
};

const struct ert_op_def ert_op_defs_qlinear[] = {
	{ ERT_OP_QLinearAdd, infer_binary, NULL },
	{ ERT_OP_QLinearMul, infer_binary, NULL },
	{ ERT_OP_QLinearAveragePool, infer_avgpool, qpool_rules },
	{ ERT_OP_QLinearGlobalAveragePool, infer_global_avgpool, qglobal_rules },
	{ ERT_OP_QLinearLookup, infer_lookup, NULL },
	{ .infer = NULL },
};
