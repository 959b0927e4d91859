/* SPDX-License-Identifier: MIT */
/*
 * Shape inference: the random generators (RandomNormal, RandomUniform and
 * their *Like forms, Bernoulli, Multinomial). They are never evaluated
 * while planning or folded into constants (ert_op_is_random()): every run
 * draws new values. How they are seeded: docs/onnx-support.md.
 */
#include "ops/scalar-input.h"

bool ert_op_is_random(enum ert_op op)
{
	switch (op) {
	case ERT_OP_RandomNormal: case ERT_OP_RandomUniform: case ERT_OP_RandomNormalLike:
	case ERT_OP_RandomUniformLike: case ERT_OP_Bernoulli: case ERT_OP_Multinomial:
		return true;
	default:
		return false;
	}
}

static bool is_float(ert_dtype dt)
{
	return dt == ERT_DTYPE_FLOAT32 || dt == ERT_DTYPE_FLOAT64 || dt == ERT_DTYPE_FLOAT16 ||
	       dt == ERT_DTYPE_BFLOAT16;
}

static ert_status infer_random(struct ert_infer_ctx *ctx)
{
	const int64_t *shape;
	uint32_t n;
	ert_dtype dt = ERT_DTYPE_FLOAT32;
	ert_status st;

	if ((st = ert_op_attr_dtype(ctx, "dtype", ERT_DTYPE_FLOAT32, true, &dt)))
		return st;
	shape = ert_attr_ints(ctx->node, "shape", &n);
	if (!shape)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "attribute shape is missing");
	if (n > ERT_MAX_RANK)
		return ert_infer_fail(ctx, ERT_STATUS_UNSUPPORTED, "shape has rank %u, at most %d",
				      n, ERT_MAX_RANK);
	for (uint32_t i = 0; i < n; i++)
		if ((st = ert_check_dim(ctx->node, ctx->err, "shape", i, shape[i])))
			return st;
	ert_value_set_shape(ctx->out[0], dt, (int32_t)n, shape);
	return ERT_OK;
}

/* RandomNormalLike, RandomUniformLike, Bernoulli: the input's shape. */
static ert_status infer_random_like(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x = ert_op_input(ctx, 0);
	bool bern = ctx->node->op == ERT_OP_Bernoulli;
	ert_dtype dt = ERT_DTYPE_FLOAT32;
	ert_status st;

	if (!x)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "input is missing");
	if (bern && !is_float(x->dtype))
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE,
				      "input (probabilities) has type %s, expected a float",
				      ert_dtype_name(x->dtype));
	/* the *Like ops copy any input's shape; their output is a float type */
	st = ert_op_attr_dtype(ctx, "dtype", is_float(x->dtype) ? x->dtype : ERT_DTYPE_UNDEFINED,
			       !bern, &dt);
	if (st != ERT_OK)
		return st;
	ert_value_set_shape(ctx->out[0], dt, x->rank, x->dims);
	return ERT_OK;
}

static ert_status infer_multinomial(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x = ert_op_input(ctx, 0);
	int64_t dims[2];
	ert_dtype dt = ERT_DTYPE_FLOAT32;
	ert_status st;

	if (!x)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "input is missing");
	if (!is_float(x->dtype) || x->rank != 2)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
				      "input must be float [batch_size, class_size]");
	if ((st = ert_op_attr_dtype(ctx, "dtype", ERT_DTYPE_INT32, false, &dt)))
		return st;
	if (dt != ERT_DTYPE_INT32 && dt != ERT_DTYPE_INT64)
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "dtype must be int32 or int64");
	dims[0] = x->dims[0];
	dims[1] = ert_attr_int(ctx->node, "sample_size", 1);
	ert_value_set_shape(ctx->out[0], dt, 2, dims);
	return ERT_OK;
}

static const struct ert_attr_rule random_rules[] = {
	ERT_RULE_INT("dtype", 1, ERT_DTYPE_COUNT - 1),
	ERT_RULE_INTS("shape", ERT_MAX_RANK, 0, ERT_DIM_MAX), ERT_RULE_END,
};
static const struct ert_attr_rule multinomial_rules[] = {
	ERT_RULE_INT("dtype", 1, ERT_DTYPE_COUNT - 1), ERT_RULE_INT("sample_size", 1, ERT_DIM_MAX),
	ERT_RULE_END,
};

const struct ert_op_def ert_op_defs_random[] = {
	{ ERT_OP_RandomNormal, infer_random, random_rules },
	{ ERT_OP_RandomUniform, infer_random, random_rules },
	{ ERT_OP_RandomNormalLike, infer_random_like, random_rules },
	{ ERT_OP_RandomUniformLike, infer_random_like, random_rules },
	{ ERT_OP_Bernoulli, infer_random_like, random_rules },
	{ ERT_OP_Multinomial, infer_multinomial, multinomial_rules },
	{ .infer = NULL },
};
