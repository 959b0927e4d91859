/* SPDX-License-Identifier: MIT */
/*
 * FusedAttention, edgert's own op (opt/fuse-attention.c makes it; no ONNX
 * file may hold it):
 *
 *   Y = softmax(scale * Q K^T, last axis) V
 *
 * Inputs Q, KT, V and the output are read and written through permutations
 * (ints attributes "perm_q", "perm_kt", "perm_v", "perm_y", each the
 * identity when absent, as MatMul's ert.perm_a / ert.perm_b / ert.perm_y):
 * the view Q = Transpose(input 0, perm_q) is [..., S, D], KT =
 * Transpose(input 1, perm_kt) is [..., D, T] (K already transposed: the
 * score MatMul's B), V = Transpose(input 2, perm_v) is [..., T, E], and the
 * output stores Transpose(Y, perm_y) of Y [..., S, E], perm_y keeping the
 * last dim last. The three views have one rank (2 or more) and the same
 * leading (batch, head) dims: no broadcasting. "scale" (float, 1 when
 * absent) multiplies the scores before the softmax. Float32.
 */
#include "ops/linalg-geom.h"

const char *const ert_attention_perm_attr[ERT_ATTN_PERMS] = { "perm_q", "perm_kt", "perm_v", "perm_y" };

static ert_status infer_attention(struct ert_infer_ctx *ctx)
{
	int64_t view[3][ERT_MAX_RANK], ydims[ERT_MAX_RANK], dims[ERT_MAX_RANK];
	int32_t perm[ERT_ATTN_PERMS][ERT_MAX_RANK], r;

	if (ctx->n_in != 3 || ctx->n_out != 1 || !ctx->in[0] || !ctx->in[1] || !ctx->in[2] ||
	    !ctx->out[0])
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL,
				      "needs inputs Q, KT, V and output Y");
	r = ctx->in[0]->rank;
	for (int i = 0; i < 3; i++) {
		const struct ert_value *v = ctx->in[i];

		if (v->dtype != ERT_DTYPE_FLOAT32)
			return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "inputs must be float32 (got %s)",
					      ert_dtype_name(v->dtype));
		if (v->rank != r || r < 2)
			return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
					      "Q, KT and V must have one rank of 2 or more (got %d, %d, %d)",
					      (int)ctx->in[0]->rank, (int)ctx->in[1]->rank,
					      (int)ctx->in[2]->rank);
	}
	for (int w = 0; w < ERT_ATTN_PERMS; w++)
		if (!ert_perm_attr(ctx->node, ert_attention_perm_attr[w], r, w == ERT_ATTN_PERM_Y, perm[w]))
			return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL,
					      w == ERT_ATTN_PERM_Y ? "%s must be a permutation of %d dims that keeps the last one last"
						     : "%s must be a permutation of %d dims",
					      ert_attention_perm_attr[w], (int)r);
	for (int i = 0; i < 3; i++)
		ert_perm_view(r, ctx->in[i]->dims, perm[i], false, view[i], NULL);
	for (int32_t d = 0; d < r - 2; d++)
		if (view[0][d] != view[1][d] || view[0][d] != view[2][d])
			return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
					      "Q, KT and V differ in batch dim %d (%lld, %lld, %lld)",
					      (int)d, (long long)view[0][d], (long long)view[1][d],
					      (long long)view[2][d]);
	if (view[0][r - 1] != view[1][r - 2] || view[1][r - 1] != view[2][r - 2])
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
				      "Q [.., %lld, %lld], KT [.., %lld, %lld] and V [.., %lld, %lld] do not chain",
				      (long long)view[0][r - 2], (long long)view[0][r - 1],
				      (long long)view[1][r - 2], (long long)view[1][r - 1],
				      (long long)view[2][r - 2], (long long)view[2][r - 1]);
	for (int32_t d = 0; d < r - 2; d++)
		ydims[d] = view[0][d];
	ydims[r - 2] = view[0][r - 2];
	ydims[r - 1] = view[2][r - 1];
	/* the stored output: dim d is Y's dim perm_y[d] */
	for (int32_t d = 0; d < r; d++)
		dims[d] = ydims[perm[ERT_ATTN_PERM_Y][d]];
	ert_value_set_shape(ctx->out[0], ERT_DTYPE_FLOAT32, r, dims);
	return ERT_OK;
}

static const struct ert_attr_rule attention_rules[] = {
	ERT_RULE_INTS("perm_q", ERT_MAX_RANK, 0, ERT_MAX_RANK - 1),
	ERT_RULE_INTS("perm_kt", ERT_MAX_RANK, 0, ERT_MAX_RANK - 1),
	ERT_RULE_INTS("perm_v", ERT_MAX_RANK, 0, ERT_MAX_RANK - 1),
	ERT_RULE_INTS("perm_y", ERT_MAX_RANK, 0, ERT_MAX_RANK - 1), ERT_RULE_END,
};

const struct ert_op_def ert_op_defs_attention[] = {
	{ ERT_OP_FusedAttention, infer_attention, attention_rules },
	{ .infer = NULL },
};
