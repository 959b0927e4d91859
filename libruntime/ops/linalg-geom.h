/* SPDX-License-Identifier: MIT */
/*
 * linalg-geom.h — window geometry shared by Conv, ConvTranspose, the pools and
 * the integer convolutions, for shape inference and kernels alike.
 *
 * Geometry is always stored as 3-D (d, h, w): a 1-D or 2-D op gets leading
 * axes of size 1, kernel 1, stride 1, no padding, so kernels handle one case.
 */
#ifndef ERT_LINALG_GEOM_H
#define ERT_LINALG_GEOM_H

#include "ert-op-impl.h"

#define ERT_GEOM_MAX_SPATIAL 3

struct ert_conv_geom {
	int32_t nsp;          /* spatial rank of the op: 1, 2 or 3 */
	int64_t in[3];        /* input spatial size */
	int64_t k[3];         /* kernel (window) size */
	int64_t stride[3];
	int64_t dil[3];
	int64_t pad_b[3];     /* padding before (top/left) */
	int64_t pad_e[3];     /* padding after */
	int64_t out[3];       /* output spatial size */
	int64_t out_pad[3];   /* ConvTranspose output_padding */
	int64_t win[3];       /* window span (k - 1) * dil + 1, <= ERT_DIM_MAX */
};

/*
 * On success every window, padded input and output size is at most
 * ERT_DIM_MAX (the arithmetic is checked), so index terms such as
 * o * stride - pad_b + k * dil cannot overflow.
 *
 * Conv and pooling: resolve strides, dilations, pads and auto_pad of node @n
 * for input spatial size @in_sp and window @kernel (both @nsp long) and compute
 * the output size. @ceil_mode: pooling's ceil_mode. Fails with a message.
 */
ert_status ert_geom_conv(const struct ert_node *n, int32_t nsp, const int64_t *in_sp,
			 const int64_t *kernel, bool ceil_mode, struct ert_conv_geom *g,
			 struct ert_err *err);

/*
 * ConvTranspose: as above, with output_padding, and output_shape (spatial part
 * taken from the attribute's tail) overriding the computed size.
 */
ert_status ert_geom_convt(const struct ert_node *n, int32_t nsp, const int64_t *in_sp,
			  const int64_t *kernel, struct ert_conv_geom *g, struct ert_err *err);

/*
 * Numpy matmul output shape of @a x @b into ctx->out[0] with dtype @out_dt;
 * shared by MatMul, MatMulInteger and QLinearMatMul.
 */
ert_status ert_matmul_shape(struct ert_infer_ctx *ctx, const struct ert_value *a,
			    const struct ert_value *b, ert_dtype out_dt);

/*
 * MatMul's folded Transposes (opt/fold-transpose.c; docs/model-format.md,
 * format version 9): "ert.perm_a" / "ert.perm_b" (ints) make operand A / B
 * the Transpose of input 0 / 1 by that permutation (A's dim d is input 0's
 * dim perm_a[d]), "ert.perm_y" stores the product Y transposed (output dim d
 * is Y's dim perm_y[d]). Each list is a permutation of its tensor's rank;
 * perm_a / perm_b need their operand of rank 2 or more, perm_y both, and
 * keeps the last dim last (perm_y[r - 1] = r - 1), so rows of Y are stored
 * contiguous. A kernel reads the operands and writes Y through the strides
 * these give.
 */
enum { ERT_MATMUL_PERM_A, ERT_MATMUL_PERM_B, ERT_MATMUL_PERM_Y, ERT_MATMUL_PERMS };
extern const char *const ert_matmul_perm_attr[ERT_MATMUL_PERMS];

/* Does MatMul @n carry any of the three attributes? */
bool ert_matmul_has_perm(const struct ert_node *n);

/*
 * Permutation @which of MatMul @n for a tensor of rank @rank into @perm (the
 * identity where the attribute is absent). False, with @perm the identity,
 * where the attribute is not a permutation of @rank values (shape inference
 * refuses such a node, so kernels only see valid ones).
 */
bool ert_matmul_perm(const struct ert_node *n, int which, int32_t rank, int32_t *perm);

/*
 * The same for any permutation attribute @name of @n (FusedAttention's
 * perm_q, perm_kt, perm_v, perm_y: ops/attention.c); @keep_last: it must
 * keep the last dim last.
 */
bool ert_perm_attr(const struct ert_node *n, const char *name, int32_t rank, bool keep_last,
		   int32_t *perm);
/* FusedAttention's four: "perm_q", "perm_kt", "perm_v", "perm_y" (ops/attention.c). */
enum { ERT_ATTN_PERM_Q, ERT_ATTN_PERM_KT, ERT_ATTN_PERM_V, ERT_ATTN_PERM_Y, ERT_ATTN_PERMS };
extern const char *const ert_attention_perm_attr[ERT_ATTN_PERMS];

/*
 * Dims and element strides of the view @perm makes of a contiguous tensor of
 * @rank dims @dims. Forward (an operand): view dim d is dims[perm[d]], with
 * that dim's stride. Inverse (the output): @dims are those of the stored
 * Transpose(Y, perm), and the view is Y, its dim perm[d] being stored dim d.
 * @vstrides may be NULL (dims alone: shape inference, where a dim may be
 * unknown).
 */
void ert_perm_view(int32_t rank, const int64_t *dims, const int32_t *perm, bool inverse,
		   int64_t *vdims, int64_t *vstrides);

/*
 * Conv output shape of X @x and weights @w (attributes of ctx->node) into
 * ctx->out[0] with dtype @out_dt; shared by Conv, ConvInteger and QLinearConv.
 */
ert_status ert_conv_shape(struct ert_infer_ctx *ctx, const struct ert_value *x,
			  const struct ert_value *w, ert_dtype out_dt);

/* Product of the three spatial sizes. */
static inline int64_t ert_geom_in_size(const struct ert_conv_geom *g)
{
	return g->in[0] * g->in[1] * g->in[2];
}

static inline int64_t ert_geom_out_size(const struct ert_conv_geom *g)
{
	return g->out[0] * g->out[1] * g->out[2];
}

static inline int64_t ert_geom_k_size(const struct ert_conv_geom *g)
{
	return g->k[0] * g->k[1] * g->k[2];
}

#endif /* ERT_LINALG_GEOM_H */
