/* SPDX-License-Identifier: MIT */
/* Shape inference: QLinearConv, QLinearMatMul, ConvInteger, MatMulInteger. */
#include "ops/linalg-geom.h"

static bool is_q8(const struct ert_value *v)
{
	return v && (v->dtype == ERT_DTYPE_UINT8 || v->dtype == ERT_DTYPE_INT8);
}

static const struct ert_value *in_at(struct ert_infer_ctx *ctx, uint32_t i)
{
	return i < ctx->n_in ? ctx->in[i] : NULL;
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

static ert_status infer_qlinearconv(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x = in_at(ctx, 0), *w = in_at(ctx, 3), *yzp = in_at(ctx, 7);
	const struct ert_value *b = in_at(ctx, 8);
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
	return ert_conv_shape(ctx, x, w, yzp ? yzp->dtype : ERT_DTYPE_UINT8);
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
	ert_status st;

	if (!is_q8(a) || !is_q8(b) || ctx->n_out < 1 || !ctx->out[0])
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "a and b must be uint8 or int8");
	int64_t m = a->rank >= 2 ? a->dims[a->rank - 2] : 0;
	int64_t n = b->rank >= 2 ? b->dims[b->rank - 1] : 0;

	if ((st = check_param(ctx, 1, true, m, false)) || (st = check_param(ctx, 2, false, m, true)) ||
	    (st = check_param(ctx, 4, true, n, false)) || (st = check_param(ctx, 5, false, n, true)) ||
	    (st = check_param(ctx, 6, true, 0, false)) || (st = check_param(ctx, 7, false, 0, true)))
		return st;
	return ert_matmul_shape(ctx, a, b, yzp ? yzp->dtype : ERT_DTYPE_UINT8);
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

const struct ert_op_def ert_op_defs_qlinalg[] = {
	{ ERT_OP_QLinearConv, infer_qlinearconv },
	{ ERT_OP_ConvInteger, infer_convinteger },
	{ ERT_OP_QLinearMatMul, infer_qlinearmatmul },
	{ ERT_OP_MatMulInteger, infer_matmulinteger },
	{ .infer = NULL },
};
