/* SPDX-License-Identifier: MIT */
/*
 * Shape inference: elementwise unary ops. The output has the input's shape;
 * its dtype is the input's except for the predicates (bool) and the casts.
 */
#include <string.h>

#include "ops/elementwise.h"

static ert_status need_input(struct ert_infer_ctx *ctx)
{
	if (ctx->n_in < 1 || !ctx->in[0])
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "missing input 0");
	if (ctx->n_out < 1 || !ctx->out[0])
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "missing output 0");
	return ERT_OK;
}

static ert_status same_as_input(struct ert_infer_ctx *ctx, enum ert_ew_class c, ert_dtype out_dt)
{
	const struct ert_value *x;
	ert_status st = need_input(ctx);

	if (st != ERT_OK)
		return st;
	x = ctx->in[0];
	if (!ert_ew_class_ok(x->dtype, c))
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "input is %s, expected %s",
				      ert_dtype_name(x->dtype), ert_ew_class_name(c));
	ert_value_set_shape(ctx->out[0], out_dt ? out_dt : x->dtype, x->rank, x->dims);
	return ERT_OK;
}

static ert_status infer_float(struct ert_infer_ctx *ctx)
{
	return same_as_input(ctx, ERT_EW_FLOAT, ERT_DTYPE_UNDEFINED);
}

static ert_status infer_num(struct ert_infer_ctx *ctx)
{
	return same_as_input(ctx, ERT_EW_NUM, ERT_DTYPE_UNDEFINED);
}

static ert_status infer_int(struct ert_infer_ctx *ctx)
{
	return same_as_input(ctx, ERT_EW_INT, ERT_DTYPE_UNDEFINED);
}

static ert_status infer_bool(struct ert_infer_ctx *ctx)
{
	return same_as_input(ctx, ERT_EW_BOOL, ERT_DTYPE_UNDEFINED);
}

static ert_status infer_any(struct ert_infer_ctx *ctx)
{
	return same_as_input(ctx, ERT_EW_ANY_STRING, ERT_DTYPE_UNDEFINED);
}

/* Identity also passes sequences and optionals (their handles) through. */
static ert_status infer_identity(struct ert_infer_ctx *ctx)
{
	ert_status st = infer_any(ctx);

	if (st == ERT_OK && ctx->in[0] && ctx->out[0])
		ert_value_copy_kind(ctx->out[0], ctx->in[0]);
	return st;
}

/* IsNaN / IsInf take every float type, float8 included (opset 20). */
static ert_status infer_predicate(struct ert_infer_ctx *ctx)
{
	ert_status st = need_input(ctx);
	const struct ert_value *x;

	if (st != ERT_OK)
		return st;
	x = ctx->in[0];
	if (!ert_dtype_is_float(x->dtype))
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "input is %s, expected a float type",
				      ert_dtype_name(x->dtype));
	ert_value_set_shape(ctx->out[0], ERT_DTYPE_BOOL, x->rank, x->dims);
	return ERT_OK;
}

static ert_status infer_gelu(struct ert_infer_ctx *ctx)
{
	const char *a = ert_attr_string(ctx->node, "approximate", "none");

	if (strcmp(a, "none") != 0 && strcmp(a, "tanh") != 0)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL,
				      "approximate '%s', expected none or tanh", a);
	return infer_float(ctx);
}

static ert_status check_scalar_bound(struct ert_infer_ctx *ctx, uint32_t i, const char *what)
{
	const struct ert_value *b = ctx->n_in > i ? ctx->in[i] : NULL;

	if (!b)
		return ERT_OK;
	if (b->dtype != ctx->in[0]->dtype)
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "%s is %s, input is %s", what,
				      ert_dtype_name(b->dtype), ert_dtype_name(ctx->in[0]->dtype));
	if (ert_shape_numel(b->rank, b->dims) != 1)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "%s must be a scalar", what);
	return ERT_OK;
}

static ert_status infer_clip(struct ert_infer_ctx *ctx)
{
	ert_status st = same_as_input(ctx, ERT_EW_NUM, ERT_DTYPE_UNDEFINED);

	if (st == ERT_OK)
		st = check_scalar_bound(ctx, 1, "min");
	if (st == ERT_OK)
		st = check_scalar_bound(ctx, 2, "max");
	return st;
}

static ert_status infer_dropout(struct ert_infer_ctx *ctx)
{
	ert_status st = same_as_input(ctx, ERT_EW_ANY, ERT_DTYPE_UNDEFINED);
	const struct ert_value *x = ctx->in[0];

	if (st != ERT_OK)
		return st;
	/* The mask is all true at inference; opset < 10 typed it like the input. */
	if (ctx->n_out > 1 && ctx->out[1]) {
		ert_dtype mdt = ctx->node->opset >= 10 ? ERT_DTYPE_BOOL : x->dtype;

		ert_value_set_shape(ctx->out[1], mdt, x->rank, x->dims);
	}
	return ERT_OK;
}

static ert_status check_cast_types(struct ert_infer_ctx *ctx, int64_t to)
{
	ert_dtype from = ctx->in[0]->dtype;

	if (to == ERT_DTYPE_STRING || from == ERT_DTYPE_STRING) {
		/* numbers print and parse (backends/cpu/ops/strings-cast.c); bool and the rest do not */
		ert_dtype other = to == ERT_DTYPE_STRING ? from : (ert_dtype)to;

		if (other == ERT_DTYPE_STRING || ert_ew_is_arith_float(other) || ert_ew_is_int(other))
			return ERT_OK;
		return ert_infer_fail(ctx, ERT_STATUS_UNSUPPORTED,
				      "casts between string and %s are not supported",
				      ert_dtype_name(other));
	}
	if (!ert_dtype_valid((int32_t)to) || to != (int32_t)to)
		return ert_infer_fail(ctx, ERT_STATUS_UNSUPPORTED,
				      "cannot cast to type %lld (attribute to)", (long long)to);
	if (!ert_dtype_valid(from))
		return ert_infer_fail(ctx, ERT_STATUS_UNSUPPORTED, "cannot cast from type %d",
				      (int)from);
	return ERT_OK;
}

/* Cast-1 named the target type with a string ("FLOAT"); later opsets use the number. */
static int64_t cast_target(const struct ert_attr *a)
{
	static const char *const names[ERT_DTYPE_COUNT] = {
		[ERT_DTYPE_FLOAT32] = "FLOAT", [ERT_DTYPE_UINT8] = "UINT8",
		[ERT_DTYPE_INT8] = "INT8", [ERT_DTYPE_UINT16] = "UINT16",
		[ERT_DTYPE_INT16] = "INT16", [ERT_DTYPE_INT32] = "INT32",
		[ERT_DTYPE_INT64] = "INT64", [ERT_DTYPE_STRING] = "STRING",
		[ERT_DTYPE_BOOL] = "BOOL", [ERT_DTYPE_FLOAT16] = "FLOAT16",
		[ERT_DTYPE_FLOAT64] = "DOUBLE", [ERT_DTYPE_UINT32] = "UINT32",
		[ERT_DTYPE_UINT64] = "UINT64",
	};

	if (a->type == ERT_ATTR_INT)
		return a->i;
	if (a->type != ERT_ATTR_STRING)
		return 0;
	for (int i = 0; i < ERT_DTYPE_COUNT; i++)
		if (names[i] && a->s && strcmp(names[i], a->s) == 0)
			return i;
	return 0;
}

static ert_status infer_cast(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x;
	const struct ert_attr *a;
	ert_status st = need_input(ctx);
	int64_t to;

	if (st != ERT_OK)
		return st;
	x = ctx->in[0];
	a = ert_node_attr(ctx->node, "to");
	if (!a)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "missing attribute 'to'");
	to = cast_target(a);
	st = check_cast_types(ctx, to);
	if (st != ERT_OK)
		return st;
	ert_value_set_shape(ctx->out[0], (ert_dtype)to, x->rank, x->dims);
	return ERT_OK;
}

static ert_status infer_castlike(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x;
	ert_status st = need_input(ctx);

	if (st != ERT_OK)
		return st;
	if (ctx->n_in < 2 || !ctx->in[1])
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "missing input 'target_type'");
	x = ctx->in[0];
	st = check_cast_types(ctx, ctx->in[1]->dtype);
	if (st != ERT_OK)
		return st;
	ert_value_set_shape(ctx->out[0], ctx->in[1]->dtype, x->rank, x->dims);
	return ERT_OK;
}

static const struct ert_attr_rule isinf_rules[] = {
	ERT_RULE_FLAG("detect_negative"), ERT_RULE_FLAG("detect_positive"), ERT_RULE_END,
};
static const struct ert_attr_rule cast_rules[] = { ERT_RULE_FLAG("saturate"), ERT_RULE_END };

const struct ert_op_def ert_op_defs_unary[] = {
	{ ERT_OP_Abs, infer_num, NULL },
	{ ERT_OP_Neg, infer_num, NULL },
	{ ERT_OP_Sqrt, infer_float, NULL },
	{ ERT_OP_Reciprocal, infer_float, NULL },
	{ ERT_OP_Exp, infer_float, NULL },
	{ ERT_OP_Log, infer_float, NULL },
	{ ERT_OP_Erf, infer_float, NULL },
	{ ERT_OP_Tanh, infer_float, NULL },
	{ ERT_OP_Sigmoid, infer_float, NULL },
	{ ERT_OP_Relu, infer_num, NULL },
	{ ERT_OP_LeakyRelu, infer_float, NULL },
	{ ERT_OP_Elu, infer_float, NULL },
	{ ERT_OP_Selu, infer_float, NULL },
	{ ERT_OP_Celu, infer_float, NULL },
	{ ERT_OP_HardSigmoid, infer_float, NULL },
	{ ERT_OP_HardSwish, infer_float, NULL },
	{ ERT_OP_Gelu, infer_gelu, NULL },
	{ ERT_OP_Softplus, infer_float, NULL },
	{ ERT_OP_Softsign, infer_float, NULL },
	{ ERT_OP_Mish, infer_float, NULL },
	{ ERT_OP_ThresholdedRelu, infer_float, NULL },
	{ ERT_OP_Shrink, infer_num, NULL },
	{ ERT_OP_Clip, infer_clip, NULL },
	{ ERT_OP_Floor, infer_float, NULL },
	{ ERT_OP_Ceil, infer_float, NULL },
	{ ERT_OP_Round, infer_float, NULL },
	{ ERT_OP_Sign, infer_num, NULL },
	{ ERT_OP_Not, infer_bool, NULL },
	{ ERT_OP_IsNaN, infer_predicate, NULL },
	{ ERT_OP_IsInf, infer_predicate, isinf_rules },
	{ ERT_OP_Acos, infer_float, NULL },
	{ ERT_OP_Acosh, infer_float, NULL },
	{ ERT_OP_Asin, infer_float, NULL },
	{ ERT_OP_Asinh, infer_float, NULL },
	{ ERT_OP_Atan, infer_float, NULL },
	{ ERT_OP_Atanh, infer_float, NULL },
	{ ERT_OP_Cos, infer_float, NULL },
	{ ERT_OP_Cosh, infer_float, NULL },
	{ ERT_OP_Sin, infer_float, NULL },
	{ ERT_OP_Sinh, infer_float, NULL },
	{ ERT_OP_Tan, infer_float, NULL },
	{ ERT_OP_BitwiseNot, infer_int, NULL },
	{ ERT_OP_Identity, infer_identity, NULL },
	{ ERT_OP_Dropout, infer_dropout, NULL },
	{ ERT_OP_Cast, infer_cast, cast_rules },
	{ ERT_OP_CastLike, infer_castlike, cast_rules },
	{ .infer = NULL },
};
