/* SPDX-License-Identifier: MIT */
/*
 * ViT-S/16 (Dosovitskiy et al. 2021; the "small" size of DeiT), 224x224:
 * 16x16 patch embedding by a strided Conv, class token, learned position
 * embedding, 12 pre-norm blocks (6-head attention, Gelu MLP 1536), head on
 * the class token. Opset 20, the first with Gelu as an ONNX op.
 */
#include <math.h>

#include "zoo.h"

#define DIM 384
#define HEADS 6
#define HEAD_DIM (DIM / HEADS)
#define MLP 1536
#define DEPTH 12
#define PATCH 16
#define TOKENS 197 /* 14 * 14 patches + the class token */

/* [1,T,DIM] → [1,HEADS,T,HEAD_DIM], or [1,HEADS,HEAD_DIM,T] for keys */
static int32_t split_heads(struct zoo_builder *b, int32_t x, bool keys)
{
	static const int64_t shape[4] = { 0, -1, HEADS, HEAD_DIM };
	static const int64_t perm_q[4] = { 0, 2, 1, 3 }, perm_k[4] = { 0, 2, 3, 1 };

	return zoo_transpose(b, zoo_reshape(b, x, 4, shape), 4, keys ? perm_k : perm_q);
}

static int32_t attention(struct zoo_builder *b, int32_t x)
{
	static const int64_t merge_perm[4] = { 0, 2, 1, 3 };
	static const int64_t merge_shape[3] = { 0, -1, DIM };
	/* scale the output projection by 1/sqrt(2 * depth): 24 residual additions */
	float out_scale = 1.0f / sqrtf(2.0f * DEPTH);
	int32_t q = split_heads(b, zoo_linear(b, x, DIM, DIM, 1.0f), false);
	int32_t k = split_heads(b, zoo_linear(b, x, DIM, DIM, 1.0f), true);
	int32_t v = split_heads(b, zoo_linear(b, x, DIM, DIM, 1.0f), false);
	int32_t scale = zoo_fill(b, "attn.scale", 0, NULL, 1.0f / sqrtf((float)HEAD_DIM));
	int32_t s = zoo_op2(b, ERT_OP_Mul, "attn.scores",
			    zoo_op2(b, ERT_OP_MatMul, "attn.qk", q, k), scale);
	struct ert_node *n = NULL;
	int32_t p = zoo_op(b, ERT_OP_Softmax, "attn.softmax", 1, &s, NULL, &n);

	if (p < 0)
		return -1;
	if (!ert_node_set_attr_int(b->g, n, "axis", -1)) {
		b->failed = true;
		return -1;
	}
	int32_t o = zoo_op2(b, ERT_OP_MatMul, "attn.pv", p, v);

	o = zoo_reshape(b, zoo_transpose(b, o, 4, merge_perm), 3, merge_shape);
	return zoo_linear(b, o, DIM, DIM, out_scale);
}

static int32_t mlp(struct zoo_builder *b, int32_t x)
{
	float out_scale = 1.0f / sqrtf(2.0f * DEPTH);
	struct ert_node *n = NULL;
	int32_t h = zoo_linear(b, x, DIM, MLP, 1.0f);

	h = zoo_op(b, ERT_OP_Gelu, "gelu", 1, &h, NULL, &n);
	if (h < 0)
		return -1;
	return zoo_linear(b, h, MLP, DIM, sqrtf(2.0f) * out_scale);
}

static bool build(struct zoo_builder *b)
{
	const int64_t in_dims[4] = { b->batch, 3, 224, 224 };
	static const int64_t flat[3] = { 0, DIM, -1 }, to_tokens[3] = { 0, 2, 1 };
	const int64_t cls_dims[3] = { 1, 1, DIM }, pos_dims[3] = { 1, TOKENS, DIM };
	const int64_t cls_batch[3] = { b->batch, 1, DIM };
	static const int64_t zero = 0;
	int32_t x = zoo_input(b, "input", 4, in_dims);
	struct ert_node *n = NULL;
	int32_t in[2];

	/* patch embedding: Conv 16x16 stride 16 has no padding, unlike zoo_conv's k/2 */
	int64_t wdims[4] = { DIM, 3, PATCH, PATCH }, bdims[1] = { DIM };
	int64_t kern[2] = { PATCH, PATCH }, strides[2] = { PATCH, PATCH };
	int32_t conv_in[3] = { x, zoo_weight(b, "patch.weight", 4, wdims,
					     sqrtf(1.0f / (3 * PATCH * PATCH))),
			       zoo_weight(b, "patch.bias", 1, bdims, 0.02f) };

	x = zoo_op(b, ERT_OP_Conv, "patch_embed", 3, conv_in, NULL, &n);
	if (x < 0 || !ert_node_set_attr_ints(b->g, n, "kernel_shape", kern, 2) ||
	    !ert_node_set_attr_ints(b->g, n, "strides", strides, 2))
		return false;
	x = zoo_transpose(b, zoo_reshape(b, x, 3, flat), 3, to_tokens);

	in[0] = zoo_weight(b, "cls_token", 3, cls_dims, 0.02f);
	/* one class token per image: broadcast by adding zeros (folded while planning) */
	if (b->batch > 1)
		in[0] = zoo_op2(b, ERT_OP_Add, "cls_batch", zoo_fill(b, "cls_zeros", 3, cls_batch, 0.0f),
				in[0]);
	in[1] = x;
	x = zoo_op(b, ERT_OP_Concat, "cls_concat", 2, in, NULL, &n);
	if (x < 0 || !ert_node_set_attr_int(b->g, n, "axis", 1))
		return false;
	x = zoo_op2(b, ERT_OP_Add, "pos_embed", x, zoo_weight(b, "pos_embed", 3, pos_dims, 0.02f));

	for (int i = 0; i < DEPTH; i++) {
		x = zoo_op2(b, ERT_OP_Add, "residual", x, attention(b, zoo_layernorm(b, x, DIM)));
		x = zoo_op2(b, ERT_OP_Add, "residual", x, mlp(b, zoo_layernorm(b, x, DIM)));
	}

	/* class token only: Gather index 0 on the token axis → [1,DIM] */
	in[0] = x;
	in[1] = zoo_ints(b, "cls_index", 0, &zero);
	x = zoo_op(b, ERT_OP_Gather, "cls_select", 2, in, NULL, &n);
	if (x < 0 || !ert_node_set_attr_int(b->g, n, "axis", 1))
		return false;
	x = zoo_layernorm(b, x, DIM);
	x = zoo_gemm(b, x, DIM, 1000, "logits");
	return zoo_end(b, x);
}

const struct zoo_arch zoo_vit_s16 = {
	.name = "vit_s16",
	.description = "ViT-S/16, 1x3x224x224 -> 1x1000, 22.1M parameters",
	.opset = 20,
	.build = build,
};
