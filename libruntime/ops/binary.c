/* SPDX-License-Identifier: MIT */
/*
 * Shape inference: elementwise binary, ternary (Where) and variadic ops, all
 * with numpy (multidirectional) broadcasting.
 */
#include <stdio.h>
#include <string.h>

#include "ops/elementwise.h"

/*
 * Check that inputs [first, n_in) are present, of class @c and, when @same, of
 * one dtype; broadcast them all into out[0] with dtype @out_dt (0: input's).
 */
static ert_status broadcast_inputs(struct ert_infer_ctx *ctx, uint32_t first, uint32_t min_in,
				   enum ert_ew_class c, bool same, ert_dtype out_dt)
{
	const struct ert_value *vals[64];
	struct ert_value legacy;
	ert_dtype dt = ERT_DTYPE_UNDEFINED;
	uint32_t n = 0;

	if (ctx->n_in < min_in)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "%u inputs, expected %u",
				      ctx->n_in, min_in);
	if (ctx->n_in - first > 64)
		return ert_infer_fail(ctx, ERT_STATUS_UNSUPPORTED, "%u inputs, at most 64",
				      ctx->n_in);
	if (ctx->n_out < 1 || !ctx->out[0])
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "missing output 0");
	for (uint32_t i = first; i < ctx->n_in; i++) {
		const struct ert_value *v = ctx->in[i];

		if (!v)
			return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "missing input %u", i);
		if (!ert_ew_class_ok(v->dtype, c))
			return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "input %u is %s, expected %s",
					      i, ert_dtype_name(v->dtype), ert_ew_class_name(c));
		if (dt == ERT_DTYPE_UNDEFINED)
			dt = v->dtype;
		else if (same && v->dtype != dt)
			return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "input %u is %s, input %u is %s",
					      i, ert_dtype_name(v->dtype), first,
					      ert_dtype_name(dt));
		vals[n++] = v;
	}
	if (n == 2 && first == 0) {
		ert_ew_legacy_operand(ctx->node, vals[0], vals[1], &legacy);
		vals[1] = &legacy;
	}
	char what[200];

	snprintf(what, sizeof(what), "%s '%s'", ert_op_name(ctx->node->op),
		 ctx->node->name ? ctx->node->name : "");
	ert_status st = ert_broadcast_shapes(vals, n, ctx->out[0], ctx->err, what);
	if (st != ERT_OK)
		return st;
	ctx->out[0]->dtype = out_dt ? out_dt : dt;
	return ERT_OK;
}

static ert_status infer_arith(struct ert_infer_ctx *ctx)
{
	return broadcast_inputs(ctx, 0, 2, ERT_EW_NUM, true, ERT_DTYPE_UNDEFINED);
}

static ert_status infer_variadic(struct ert_infer_ctx *ctx)
{
	enum ert_ew_class c = ctx->node->op == ERT_OP_Mean ? ERT_EW_FLOAT : ERT_EW_NUM;

	return broadcast_inputs(ctx, 0, 1, c, true, ERT_DTYPE_UNDEFINED);
}

static ert_status infer_compare(struct ert_infer_ctx *ctx)
{
	enum ert_ew_class c = ctx->node->op == ERT_OP_Equal ? ERT_EW_EQUAL : ERT_EW_NUM;

	return broadcast_inputs(ctx, 0, 2, c, true, ERT_DTYPE_BOOL);
}

static ert_status infer_logic(struct ert_infer_ctx *ctx)
{
	return broadcast_inputs(ctx, 0, 2, ERT_EW_BOOL, true, ERT_DTYPE_UNDEFINED);
}

static ert_status infer_bitwise(struct ert_infer_ctx *ctx)
{
	return broadcast_inputs(ctx, 0, 2, ERT_EW_INT, true, ERT_DTYPE_UNDEFINED);
}

static ert_status infer_bitshift(struct ert_infer_ctx *ctx)
{
	const char *dir = ert_attr_string(ctx->node, "direction", "");

	if (strcmp(dir, "LEFT") != 0 && strcmp(dir, "RIGHT") != 0)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL,
				      "direction '%s', expected LEFT or RIGHT", dir);
	return infer_bitwise(ctx);
}

/* Pow: base and exponent may differ in type; the result has the base's. */
static ert_status infer_pow(struct ert_infer_ctx *ctx)
{
	ert_status st = broadcast_inputs(ctx, 0, 2, ERT_EW_NUM, false, ERT_DTYPE_UNDEFINED);

	if (st == ERT_OK)
		ctx->out[0]->dtype = ctx->in[0]->dtype;
	return st;
}

static ert_status infer_mod(struct ert_infer_ctx *ctx)
{
	ert_status st = infer_arith(ctx);

	if (st == ERT_OK && ert_ew_is_arith_float(ctx->in[0]->dtype) &&
	    !ert_attr_int(ctx->node, "fmod", 0))
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL,
				      "fmod must be 1 for floating-point inputs");
	return st;
}

/* PRelu: the slope broadcasts to X (unidirectional); the output is X's shape. */
static ert_status infer_prelu(struct ert_infer_ctx *ctx)
{
	ert_status st = infer_arith(ctx);
	const struct ert_value *x = ctx->in[0];

	if (st != ERT_OK)
		return st;
	if (ctx->out[0]->rank != x->rank ||
	    memcmp(ctx->out[0]->dims, x->dims, sizeof(x->dims[0]) * (size_t)x->rank) != 0)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
				      "slope does not broadcast to the input's shape");
	return ERT_OK;
}

static ert_status infer_where(struct ert_infer_ctx *ctx)
{
	ert_status st;

	if (ctx->n_in != 3 || !ctx->in[0])
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "expected 3 inputs");
	if (ctx->in[0]->dtype != ERT_DTYPE_BOOL)
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "condition is %s, expected bool",
				      ert_dtype_name(ctx->in[0]->dtype));
	st = broadcast_inputs(ctx, 1, 3, ERT_EW_ANY, true, ERT_DTYPE_UNDEFINED);
	if (st != ERT_OK)
		return st;
	ert_dtype dt = ctx->out[0]->dtype;

	/* Now with the condition included. */
	st = broadcast_inputs(ctx, 0, 3, ERT_EW_ANY, false, dt);
	if (st == ERT_OK && (dt == ERT_DTYPE_INT4 || dt == ERT_DTYPE_UINT4))
		return ert_infer_fail(ctx, ERT_STATUS_UNSUPPORTED, "4-bit values");
	return st;
}

static const struct ert_attr_rule add_rules[] = {
	ERT_RULE_INT("ert.act", ERT_ACT_NONE, ERT_ACT_GELU), ERT_RULE_END,
};
static const struct ert_attr_rule mod_rules[] = { ERT_RULE_FLAG("fmod"), ERT_RULE_END };

const struct ert_op_def ert_op_defs_binary[] = {
	{ ERT_OP_Add, infer_arith, add_rules },
	{ ERT_OP_Sub, infer_arith, NULL },
	{ ERT_OP_Mul, infer_arith, NULL },
	{ ERT_OP_Div, infer_arith, NULL },
	{ ERT_OP_Pow, infer_pow, NULL },
	{ ERT_OP_Mod, infer_mod, mod_rules },
	{ ERT_OP_PRelu, infer_prelu, NULL },
	{ ERT_OP_Equal, infer_compare, NULL },
	{ ERT_OP_Less, infer_compare, NULL },
	{ ERT_OP_Greater, infer_compare, NULL },
	{ ERT_OP_LessOrEqual, infer_compare, NULL },
	{ ERT_OP_GreaterOrEqual, infer_compare, NULL },
	{ ERT_OP_And, infer_logic, NULL },
	{ ERT_OP_Or, infer_logic, NULL },
	{ ERT_OP_Xor, infer_logic, NULL },
	{ ERT_OP_BitShift, infer_bitshift, NULL },
	{ ERT_OP_BitwiseAnd, infer_bitwise, NULL },
	{ ERT_OP_BitwiseOr, infer_bitwise, NULL },
	{ ERT_OP_BitwiseXor, infer_bitwise, NULL },
	{ ERT_OP_Where, infer_where, NULL },
	{ ERT_OP_Min, infer_variadic, NULL },
	{ ERT_OP_Max, infer_variadic, NULL },
	{ ERT_OP_Sum, infer_variadic, NULL },
	{ ERT_OP_Mean, infer_variadic, NULL },
	{ .infer = NULL },
};
