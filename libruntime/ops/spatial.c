/* SPDX-License-Identifier: MIT */
/*
 * Shape inference: Col2Im, DeformConv and MaxUnpool — ops that move image
 * values to computed places. The attribute rules below bound every INT and
 * INTS; the products and sums of them are still computed checked, since
 * several bounded values can overflow together.
 */
#include <stdio.h>

#include "ops/spatial.h"

/* "Op 'name': ..." into @err, returning @st (ert_node_fail, ert-op-impl.h). */
#define fail(n, err, st, ...) ert_node_fail(n, err, st, __VA_ARGS__)

/* An INTS attribute of exactly @count values, or @def for each when absent. */
static ert_status attr_list(const struct ert_node *n, struct ert_err *err, const char *name,
			    uint32_t count, int64_t def, int64_t *out)
{
	uint32_t got;
	const int64_t *v = ert_attr_ints(n, name, &got);

	if (!v) {
		for (uint32_t i = 0; i < count; i++)
			out[i] = def;
		return ERT_OK;
	}
	if (got != count)
		return fail(n, err, ERT_STATUS_INVALID_MODEL, "%s has %u values, expected %u", name,
			    got, count);
	for (uint32_t i = 0; i < count; i++)
		out[i] = v[i];
	return ERT_OK;
}

/*
 * Positions of a window of @k taps, @dil apart, sliding by @stride over
 * @len + pads: (len + pb + pe - (dil * (k - 1) + 1)) / stride + 1, or -1
 * when the window does not fit (or the sizes overflow).
 */
static int64_t slide_count(int64_t len, int64_t pb, int64_t pe, int64_t k, int64_t dil,
			   int64_t stride)
{
	int64_t span, total;

	if (!ert_mul_i64(dil, k - 1, &span) || !ert_add_i64(span, 1, &span) ||
	    !ert_add_i64(len, pb, &total) || !ert_add_i64(total, pe, &total) || total < span)
		return -1;
	return (total - span) / stride + 1;
}

/* A rank-1 integer input with @count values known now. */
static ert_status input_ints(const struct ert_node *n, struct ert_err *err,
			     const struct ert_value *v, const char *what, int64_t *out,
			     int32_t *count)
{
	ert_status st;

	if (!v)
		return fail(n, err, ERT_STATUS_INVALID_MODEL, "input %s is missing", what);
	st = ert_check_known(n, err, what, v);
	if (st != ERT_OK)
		return st;
	if (!ert_dtype_is_int(v->dtype) || ert_dtype_size(v->dtype) == 0 || v->rank != 1)
		return fail(n, err, ERT_STATUS_SHAPE, "%s must be a list of integers", what);
	if (v->numel < 1 || v->numel > ERT_SPATIAL_MAX)
		return fail(n, err, ERT_STATUS_SHAPE, "%s has %lld values, expected 1 to %d", what,
			    (long long)v->numel, ERT_SPATIAL_MAX);
	for (int64_t i = 0; i < v->numel; i++)
		out[i] = ert_value_get_int(v, i);
	*count = (int32_t)v->numel;
	return ERT_OK;
}

ert_status ert_col2im_params(const struct ert_node *n, const struct ert_value *const *in,
			     uint32_t n_in, struct ert_col2im_params *p, struct ert_err *err)
{
	const struct ert_value *x = in[0];
	int32_t k2;
	int64_t cols = 1;
	ert_status st;

	if (n_in < 3)
		return fail(n, err, ERT_STATUS_INVALID_MODEL, "needs input, image_shape, block_shape");
	if ((st = input_ints(n, err, in[1], "image_shape", p->img, &p->k)) ||
	    (st = input_ints(n, err, in[2], "block_shape", p->block, &k2)))
		return st;
	if (k2 != p->k)
		return fail(n, err, ERT_STATUS_SHAPE, "image_shape has %d values, block_shape %d",
			    (int)p->k, (int)k2);
	if ((st = attr_list(n, err, "dilations", (uint32_t)p->k, 1, p->dil)) ||
	    (st = attr_list(n, err, "strides", (uint32_t)p->k, 1, p->stride)) ||
	    (st = attr_list(n, err, "pads", 2 * (uint32_t)p->k, 0, p->pad)))
		return st;
	if (x->rank != 3)
		return fail(n, err, ERT_STATUS_SHAPE, "input rank %d, expected 3 [N, C*prod(block), L]",
			    (int)x->rank);
	p->block_size = 1;
	for (int32_t d = 0; d < p->k; d++) {
		if (p->img[d] < 1 || p->img[d] > ERT_DIM_MAX || p->block[d] < 1 ||
		    p->block[d] > ERT_DIM_MAX)
			return fail(n, err, ERT_STATUS_SHAPE,
				    "image_shape[%d] = %lld and block_shape[%d] = %lld must lie in "
				    "[1, 2^48]", (int)d, (long long)p->img[d], (int)d,
				    (long long)p->block[d]);
		p->blocks[d] = slide_count(p->img[d], p->pad[d], p->pad[p->k + d], p->block[d],
					   p->dil[d], p->stride[d]);
		if (p->blocks[d] < 1)
			return fail(n, err, ERT_STATUS_SHAPE,
				    "block_shape[%d] = %lld with dilations[%d] = %lld does not fit "
				    "image_shape[%d] = %lld with its pads", (int)d,
				    (long long)p->block[d], (int)d, (long long)p->dil[d], (int)d,
				    (long long)p->img[d]);
		if (!ert_mul_i64(p->block_size, p->block[d], &p->block_size) ||
		    !ert_mul_i64(cols, p->blocks[d], &cols))
			return fail(n, err, ERT_STATUS_SHAPE, "block sizes overflow");
	}
	if (x->dims[1] % p->block_size != 0 || x->dims[2] != cols)
		return fail(n, err, ERT_STATUS_SHAPE,
			    "input [%lld, %lld, %lld] needs dim 1 a multiple of %lld (block_shape) and "
			    "dim 2 = %lld (the blocks image_shape, block_shape, dilations, pads and "
			    "strides give)",
			    (long long)x->dims[0], (long long)x->dims[1], (long long)x->dims[2],
			    (long long)p->block_size, (long long)cols);
	p->channels = x->dims[1] / p->block_size;
	return ERT_OK;
}

static bool is_float(ert_dtype dt)
{
	return dt == ERT_DTYPE_FLOAT32 || dt == ERT_DTYPE_FLOAT64 || dt == ERT_DTYPE_FLOAT16 ||
	       dt == ERT_DTYPE_BFLOAT16;
}

static ert_status infer_col2im(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x = ctx->n_in ? ctx->in[0] : NULL;
	struct ert_col2im_params p;
	int64_t dims[ERT_MAX_RANK];
	ert_status st;

	if (!x)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "input is missing");
	if (!is_float(x->dtype))
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "input has type %s, expected a float",
				      ert_dtype_name(x->dtype));
	st = ert_col2im_params(ctx->node, ctx->in, ctx->n_in, &p, ctx->err);
	if (st != ERT_OK)
		return st;
	dims[0] = x->dims[0];
	dims[1] = p.channels;
	for (int32_t d = 0; d < p.k; d++)
		dims[2 + d] = p.img[d];
	ert_value_set_shape(ctx->out[0], x->dtype, 2 + p.k, dims);
	return ERT_OK;
}

ert_status ert_deform_params(const struct ert_node *n, const struct ert_value *const *in,
			     uint32_t n_in, struct ert_deform_params *p, struct ert_err *err)
{
	const struct ert_value *x = in[0], *w = n_in > 1 ? in[1] : NULL;
	const struct ert_value *off = n_in > 2 ? in[2] : NULL, *b = n_in > 3 ? in[3] : NULL;
	const struct ert_value *mask = n_in > 4 ? in[4] : NULL;
	uint32_t nk;
	const int64_t *ks;
	int64_t taps, want;
	ert_status st;

	if (!w || !off)
		return fail(n, err, ERT_STATUS_INVALID_MODEL, "needs X, W and offset");
	if (x->rank != 4 || w->rank != 4)
		return fail(n, err, ERT_STATUS_UNSUPPORTED,
			    "X rank %d and W rank %d: only 2-D DeformConv (rank 4) is supported",
			    (int)x->rank, (int)w->rank);
	if (w->dtype != x->dtype || off->dtype != x->dtype || (b && b->dtype != x->dtype) ||
	    (mask && mask->dtype != x->dtype))
		return fail(n, err, ERT_STATUS_DTYPE, "X, W, offset, B and mask must share a type");
	p->group = ert_attr_int(n, "group", 1);
	p->offset_group = ert_attr_int(n, "offset_group", 1);
	ks = ert_attr_ints(n, "kernel_shape", &nk);
	if (ks && nk != 2)
		return fail(n, err, ERT_STATUS_INVALID_MODEL, "kernel_shape has %u values, expected 2",
			    nk);
	p->kernel[0] = ks ? ks[0] : w->dims[2];
	p->kernel[1] = ks ? ks[1] : w->dims[3];
	if (p->kernel[0] != w->dims[2] || p->kernel[1] != w->dims[3])
		return fail(n, err, ERT_STATUS_SHAPE, "kernel_shape does not match W");
	if ((st = attr_list(n, err, "dilations", 2, 1, p->dil)) ||
	    (st = attr_list(n, err, "strides", 2, 1, p->stride)) ||
	    (st = attr_list(n, err, "pads", 4, 0, p->pad)))
		return st;
	if (!ert_mul_i64(w->dims[1], p->group, &want) || want != x->dims[1] ||
	    w->dims[0] % p->group || x->dims[1] % p->offset_group)
		return fail(n, err, ERT_STATUS_SHAPE,
			    "X has %lld channels, W is [%lld, %lld, ...]: not divisible into "
			    "group = %lld and offset_group = %lld", (long long)x->dims[1],
			    (long long)w->dims[0], (long long)w->dims[1], (long long)p->group,
			    (long long)p->offset_group);
	for (int d = 0; d < 2; d++) {
		p->out[d] = slide_count(x->dims[2 + d], p->pad[d], p->pad[2 + d], p->kernel[d],
					p->dil[d], p->stride[d]);
		if (p->out[d] < 0)
			return fail(n, err, ERT_STATUS_SHAPE, "kernel_shape with dilations does not "
				    "fit spatial dim %d with its pads", d);
	}
	taps = p->kernel[0] * p->kernel[1]; /* both are dims of W: the product fits */
	if (!ert_mul_i64(taps, 2 * p->offset_group, &want) || off->rank != 4 ||
	    off->dims[0] != x->dims[0] || off->dims[1] != want || off->dims[2] != p->out[0] ||
	    off->dims[3] != p->out[1])
		return fail(n, err, ERT_STATUS_SHAPE, "offset must be [%lld, %lld, %lld, %lld] (from "
			    "X, kernel_shape, offset_group, strides, dilations and pads)",
			    (long long)x->dims[0], (long long)want, (long long)p->out[0],
			    (long long)p->out[1]);
	if (mask && (mask->rank != 4 || mask->dims[0] != x->dims[0] ||
		     mask->dims[1] != want / 2 || mask->dims[2] != p->out[0] ||
		     mask->dims[3] != p->out[1]))
		return fail(n, err, ERT_STATUS_SHAPE, "mask must be [%lld, %lld, %lld, %lld] (from "
			    "X, kernel_shape, offset_group, strides, dilations and pads)",
			    (long long)x->dims[0], (long long)want / 2, (long long)p->out[0],
			    (long long)p->out[1]);
	if (b && (b->rank != 1 || b->dims[0] != w->dims[0]))
		return fail(n, err, ERT_STATUS_SHAPE, "B must be [%lld]", (long long)w->dims[0]);
	return ERT_OK;
}

static ert_status infer_deform(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x = ctx->n_in ? ctx->in[0] : NULL;
	struct ert_deform_params p;
	int64_t dims[4];
	ert_status st;

	if (!x)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "X is missing");
	if (!is_float(x->dtype))
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "X has type %s, expected a float",
				      ert_dtype_name(x->dtype));
	st = ert_deform_params(ctx->node, ctx->in, ctx->n_in, &p, ctx->err);
	if (st != ERT_OK)
		return st;
	dims[0] = x->dims[0];
	dims[1] = ctx->in[1]->dims[0];
	dims[2] = p.out[0];
	dims[3] = p.out[1];
	ert_value_set_shape(ctx->out[0], x->dtype, 4, dims);
	return ERT_OK;
}

ert_status ert_unpool_params(const struct ert_node *n, const struct ert_value *const *in,
			     uint32_t n_in, struct ert_unpool_params *p, struct ert_err *err)
{
	const struct ert_value *x = in[0], *idx = n_in > 1 ? in[1] : NULL;
	const struct ert_value *shape = n_in > 2 ? in[2] : NULL;
	int64_t kernel[ERT_SPATIAL_MAX], stride[ERT_SPATIAL_MAX], pad[2 * ERT_SPATIAL_MAX];
	const int64_t *ks;
	uint32_t nk;
	int32_t k = x->rank - 2;
	ert_status st;

	if (!idx)
		return fail(n, err, ERT_STATUS_INVALID_MODEL, "needs X and I");
	if (x->rank < 3)
		return fail(n, err, ERT_STATUS_SHAPE, "X rank %d, expected [N, C, spatial...]",
			    (int)x->rank);
	if (idx->dtype != ERT_DTYPE_INT64 || idx->rank != x->rank)
		return fail(n, err, ERT_STATUS_SHAPE, "I must be int64 of X's shape");
	for (int32_t d = 0; d < x->rank; d++)
		if (idx->dims[d] != x->dims[d])
			return fail(n, err, ERT_STATUS_SHAPE, "I must have X's shape");
	ks = ert_attr_ints(n, "kernel_shape", &nk);
	if (!ks || nk != (uint32_t)k)
		return fail(n, err, ERT_STATUS_INVALID_MODEL,
			    "kernel_shape must have one value per spatial dim (%d)", (int)k);
	for (int32_t d = 0; d < k; d++)
		kernel[d] = ks[d];
	if ((st = attr_list(n, err, "strides", (uint32_t)k, 1, stride)) ||
	    (st = attr_list(n, err, "pads", 2 * (uint32_t)k, 0, pad)))
		return st;
	p->rank = x->rank;
	p->inferred[0] = x->dims[0];
	p->inferred[1] = x->dims[1];
	for (int32_t d = 0; d < k; d++) {
		int64_t v;

		/* (in - 1) * stride - pads + kernel */
		if (x->dims[2 + d] == 0 ||
		    !ert_mul_i64(x->dims[2 + d] - 1, stride[d], &v) || !ert_add_i64(v, kernel[d], &v) ||
		    !ert_sub_i64(v, pad[d], &v) || !ert_sub_i64(v, pad[k + d], &v) || v < 0 ||
		    v > ERT_DIM_MAX)
			return fail(n, err, ERT_STATUS_SHAPE,
				    "spatial dim %d: (%lld - 1) * stride + kernel - pads is outside "
				    "[0, 2^48]", (int)d, (long long)x->dims[2 + d]);
		p->inferred[2 + d] = v;
	}
	for (int32_t d = 0; d < x->rank; d++)
		p->out[d] = p->inferred[d];
	if (shape) {
		st = ert_check_known(n, err, "output_shape", shape);
		if (st != ERT_OK)
			return st;
		if (!ert_dtype_is_int(shape->dtype) || shape->rank != 1 ||
		    shape->numel != x->rank)
			return fail(n, err, ERT_STATUS_SHAPE, "output_shape must hold %d integers",
				    (int)x->rank);
		for (int32_t d = 0; d < x->rank; d++) {
			int64_t v = ert_value_get_int(shape, d);

			/* the indices address the inferred shape, placed at the output's start */
			if (v < p->inferred[d] || v > ERT_DIM_MAX || (d < 2 && v != p->inferred[d]))
				return fail(n, err, ERT_STATUS_SHAPE,
					    "output_shape[%d] = %lld, expected %s%lld (what X, "
					    "kernel_shape, strides and pads infer)", (int)d,
					    (long long)v, d < 2 ? "" : "at least ",
					    (long long)p->inferred[d]);
			p->out[d] = v;
		}
	}
	return ERT_OK;
}

static ert_status infer_unpool(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x = ctx->n_in ? ctx->in[0] : NULL;
	struct ert_unpool_params p;
	ert_status st;

	if (!x)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "X is missing");
	if (ert_dtype_size(x->dtype) == 0 || x->dtype == ERT_DTYPE_STRING)
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "X has type %s",
				      ert_dtype_name(x->dtype));
	st = ert_unpool_params(ctx->node, ctx->in, ctx->n_in, &p, ctx->err);
	if (st != ERT_OK)
		return st;
	ert_value_set_shape(ctx->out[0], x->dtype, p.rank, p.out);
	return ERT_OK;
}

static const struct ert_attr_rule window_rules[] = {
	ERT_RULE_SPATIAL("dilations", 1), ERT_RULE_SPATIAL("strides", 1),
	ERT_RULE_SPATIAL("pads", 0), ERT_RULE_SPATIAL("kernel_shape", 1),
	ERT_RULE_INT("group", 1, ERT_ATTR_SIZE_MAX), ERT_RULE_INT("offset_group", 1, ERT_ATTR_SIZE_MAX),
	ERT_RULE_END,
};

const struct ert_op_def ert_op_defs_spatial[] = {
	{ ERT_OP_Col2Im, infer_col2im, window_rules },
	{ ERT_OP_DeformConv, infer_deform, window_rules },
	{ ERT_OP_MaxUnpool, infer_unpool, window_rules },
	{ .infer = NULL },
};
