/* SPDX-License-Identifier: MIT */
/* Shape inference: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear. */
#include "ops/quant-layout.h"

static const struct ert_value *input(struct ert_infer_ctx *ctx, uint32_t i)
{
	return i < ctx->n_in ? ctx->in[i] : NULL;
}

static bool scale_dtype_ok(ert_dtype dt)
{
	return dt == ERT_DTYPE_FLOAT32 || dt == ERT_DTYPE_FLOAT16 || dt == ERT_DTYPE_BFLOAT16 ||
	       dt == ERT_DTYPE_FLOAT64;
}

/* Element types a quantised tensor may have. */
static bool qtype_ok(ert_dtype dt)
{
	switch (dt) {
	case ERT_DTYPE_UINT8:
	case ERT_DTYPE_INT8:
	case ERT_DTYPE_UINT16:
	case ERT_DTYPE_INT16:
	case ERT_DTYPE_INT32:
	case ERT_DTYPE_UINT4:
	case ERT_DTYPE_INT4:
	case ERT_DTYPE_FLOAT8E4M3FN:
	case ERT_DTYPE_FLOAT8E4M3FNUZ:
	case ERT_DTYPE_FLOAT8E5M2:
	case ERT_DTYPE_FLOAT8E5M2FNUZ:
		return true;
	default:
		return false;
	}
}

static ert_status common(struct ert_infer_ctx *ctx, const struct ert_value **x_out)
{
	const struct ert_value *x = input(ctx, 0), *scale = input(ctx, 1), *zp = input(ctx, 2);
	struct ert_quant_layout l;

	if (!x || !scale)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "X or scale is missing");
	if (!scale_dtype_ok(scale->dtype))
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "scale has dtype %s",
				      ert_dtype_name(scale->dtype));
	if (ctx->n_out < 1 || !ctx->out[0])
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "output is missing");
	if (zp && !qtype_ok(zp->dtype))
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "zero point has dtype %s",
				      ert_dtype_name(zp->dtype));
	*x_out = x;
	return ert_quant_layout_get(ctx->node, x, scale, zp, &l, ctx->err);
}

static ert_status infer_quantize(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x = NULL, *zp = input(ctx, 2);
	ert_status st = common(ctx, &x);
	ert_dtype out = ERT_DTYPE_UINT8;
	int64_t want = ert_attr_int(ctx->node, "output_dtype", 0);

	if (st != ERT_OK)
		return st;
	if (!scale_dtype_ok(x->dtype) && x->dtype != ERT_DTYPE_INT32)
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "X has dtype %s",
				      ert_dtype_name(x->dtype));
	if (zp)
		out = zp->dtype;
	else if (want)
		out = (ert_dtype)want;
	if (zp && want && want != (int64_t)zp->dtype)
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE,
				      "output_dtype %lld differs from the zero point's %s",
				      (long long)want, ert_dtype_name(zp->dtype));
	if (want != (int32_t)want || !ert_dtype_valid((int32_t)out) || !qtype_ok(out))
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE,
				      "cannot quantise to dtype %lld (output_dtype or the zero "
				      "point's type)", zp ? (long long)out : (long long)want);
	ert_value_set_shape(ctx->out[0], out, x->rank, x->dims);
	return ERT_OK;
}

static ert_status infer_dequantize(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x = NULL, *zp = input(ctx, 2);
	ert_status st = common(ctx, &x);

	if (st != ERT_OK)
		return st;
	if (!qtype_ok(x->dtype))
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "X has dtype %s",
				      ert_dtype_name(x->dtype));
	if (zp && zp->dtype != x->dtype)
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "zero point is %s, X is %s",
				      ert_dtype_name(zp->dtype), ert_dtype_name(x->dtype));
	ert_value_set_shape(ctx->out[0], input(ctx, 1)->dtype, x->rank, x->dims);
	return ERT_OK;
}

static ert_status infer_dynamic(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x = input(ctx, 0);

	if (!x)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "X is missing");
	if (x->dtype != ERT_DTYPE_FLOAT32)
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "X has dtype %s, expected float32",
				      ert_dtype_name(x->dtype));
	if (ctx->n_out < 1 || !ctx->out[0])
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "output Y is missing");
	ert_value_set_shape(ctx->out[0], ERT_DTYPE_UINT8, x->rank, x->dims);
	if (ctx->n_out > 1 && ctx->out[1])
		ert_value_set_shape(ctx->out[1], ERT_DTYPE_FLOAT32, 0, NULL);
	if (ctx->n_out > 2 && ctx->out[2])
		ert_value_set_shape(ctx->out[2], ERT_DTYPE_UINT8, 0, NULL);
	return ERT_OK;
}

static const struct ert_attr_rule quant_rules[] = {
	ERT_RULE_AXIS("axis"), ERT_RULE_INT("block_size", 0, ERT_DIM_MAX), ERT_RULE_FLAG("saturate"),
	ERT_RULE_END,
};

const struct ert_op_def ert_op_defs_quant[] = {
	{ ERT_OP_QuantizeLinear, infer_quantize, quant_rules },
	{ ERT_OP_DequantizeLinear, infer_dequantize, quant_rules },
	{ ERT_OP_DynamicQuantizeLinear, infer_dynamic, NULL },
	{ .infer = NULL },
};
