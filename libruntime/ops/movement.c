/* SPDX-License-Identifier: MIT */
/*
 * Shape inference: movement ops that only rearrange (Reshape, Flatten, Squeeze,
 * Unsqueeze, Transpose, Concat, Split, Expand, Tile, DepthToSpace,
 * SpaceToDepth), and the family's table.
 */
#include <stdio.h>
#include <string.h>

#include "ops/movement-infer.h"
#include "ops/movement-params.h"

ert_status ert_mv_need_input(struct ert_infer_ctx *ctx, uint32_t i, const char *what)
{
	if (i == 0 && (ctx->n_out < 1 || !ctx->out[0]))
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "needs output 0");
	if (i < ctx->n_in && ctx->in[i])
		return ERT_OK;
	return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "missing input %u (%s)", i, what);
}

static ert_status need_out(struct ert_infer_ctx *ctx, uint32_t min_out)
{
	if (ctx->n_out < min_out)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "needs %u output(s)", min_out);
	return ERT_OK;
}

static ert_status infer_reshape(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x, *s;
	int64_t shape[ERT_MAX_RANK], known = 1;
	uint32_t n = 0;
	int32_t neg = -1;
	bool allowzero = ert_attr_int(ctx->node, "allowzero", 0) != 0;
	ert_status st;

	if ((st = ert_mv_need_input(ctx, 0, "data")) || (st = ert_mv_need_input(ctx, 1, "shape")) ||
	    (st = need_out(ctx, 1)))
		return st;
	x = ctx->in[0];
	s = ctx->in[1];
	st = ert_mv_read_ints(ctx->node, ctx->err, s, "shape", shape, ERT_MAX_RANK, &n);
	if (st != ERT_OK)
		return st;
	for (uint32_t i = 0; i < n; i++) {
		if (shape[i] == 0 && !allowzero) {
			if ((int32_t)i >= x->rank)
				return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
						      "shape[%u] is 0 but the input has rank %d", i,
						      (int)x->rank);
			shape[i] = x->dims[i];
		}
		if (shape[i] == -1) {
			if (neg >= 0)
				return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "more than one -1 in shape");
			neg = (int32_t)i;
			continue;
		}
		if ((st = ert_check_dim(ctx->node, ctx->err, "shape", i, shape[i])))
			return st;
		if (!ert_mul_i64(known, shape[i], &known))
			return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "shape[%u] = %lld: the shape's "
					      "product overflows", i, (long long)shape[i]);
	}
	if (neg >= 0) {
		if (known == 0 || x->numel % known)
			return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
					      "cannot infer -1: %lld elements into blocks of %lld",
					      (long long)x->numel, (long long)known);
		shape[neg] = x->numel / known;
	} else if (known != x->numel) {
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "%lld elements cannot take a shape of %lld",
				      (long long)x->numel, (long long)known);
	}
	ert_value_set_shape(ctx->out[0], x->dtype, (int32_t)n, shape);
	return ERT_OK;
}

static ert_status infer_flatten(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x;
	int64_t axis = ert_attr_int(ctx->node, "axis", 1), d[2];
	ert_status st;

	if ((st = ert_mv_need_input(ctx, 0, "input")) || (st = need_out(ctx, 1)))
		return st;
	x = ctx->in[0];
	if (axis < 0)
		axis += x->rank;
	if (axis < 0 || axis > x->rank)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "axis %lld out of range for rank %d",
				      (long long)ert_attr_int(ctx->node, "axis", 1), (int)x->rank);
	d[0] = ert_shape_numel((int32_t)axis, x->dims);
	d[1] = ert_shape_numel(x->rank - (int32_t)axis, x->dims + axis);
	ert_value_set_shape(ctx->out[0], x->dtype, 2, d);
	return ERT_OK;
}

static ert_status infer_squeeze(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x;
	int32_t axes[ERT_MAX_RANK], r = 0;
	int64_t d[ERT_MAX_RANK];
	bool drop[ERT_MAX_RANK] = { false }, has;
	uint32_t na;
	ert_status st;

	if ((st = ert_mv_need_input(ctx, 0, "data")) || (st = need_out(ctx, 1)))
		return st;
	x = ctx->in[0];
	st = ert_mv_read_axes(ctx->node, ctx->err, ctx->in, ctx->n_in, 1, x->rank, axes, &na, &has);
	if (st != ERT_OK)
		return st;
	for (uint32_t i = 0; i < na; i++) {
		if (x->dims[axes[i]] != 1)
			return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "axis %d (axes[%u]) has size %lld, not 1",
					      (int)axes[i], i, (long long)x->dims[axes[i]]);
		drop[axes[i]] = true;
	}
	for (int32_t i = 0; i < x->rank; i++)
		if (!(na ? drop[i] : x->dims[i] == 1))
			d[r++] = x->dims[i];
	ert_value_set_shape(ctx->out[0], x->dtype, r, d);
	return ERT_OK;
}

static ert_status infer_unsqueeze(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x;
	int32_t axes[ERT_MAX_RANK], r;
	int64_t d[ERT_MAX_RANK], raw[ERT_MAX_RANK];
	bool ins[ERT_MAX_RANK] = { false };
	uint32_t na = 0;
	ert_status st;

	if ((st = ert_mv_need_input(ctx, 0, "data")) || (st = need_out(ctx, 1)))
		return st;
	x = ctx->in[0];
	/* Axes count against the output rank, which needs their number first. */
	if (ctx->n_in > 1 && ctx->in[1]) {
		st = ert_mv_read_ints(ctx->node, ctx->err, ctx->in[1], "axes", raw, ERT_MAX_RANK, &na);
		if (st != ERT_OK)
			return st;
	} else {
		const int64_t *a = ert_attr_ints(ctx->node, "axes", &na);

		if (!a)
			return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "needs axes");
		if (na > ERT_MAX_RANK)
			return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "too many axes");
		memcpy(raw, a, na * sizeof(*a));
	}
	r = x->rank + (int32_t)na;
	if (r > ERT_MAX_RANK)
		return ert_infer_fail(ctx, ERT_STATUS_UNSUPPORTED, "output rank %d exceeds %d",
				      (int)r, ERT_MAX_RANK);
	for (uint32_t i = 0; i < na; i++) {
		if (!ert_norm_axis(raw[i], r, &axes[i]))
			return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
					      "axis %lld (axes[%u]) is out of range for rank %d",
					      (long long)raw[i], i, (int)r);
		if (ins[axes[i]])
			return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "axis %d (axes[%u]) is repeated",
					      (int)axes[i], i);
		ins[axes[i]] = true;
	}
	for (int32_t i = 0, j = 0; i < r; i++)
		d[i] = ins[i] ? 1 : x->dims[j++];
	ert_value_set_shape(ctx->out[0], x->dtype, r, d);
	return ERT_OK;
}

static ert_status infer_transpose(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x;
	const int64_t *perm;
	uint32_t np;
	int64_t d[ERT_MAX_RANK];
	bool seen[ERT_MAX_RANK] = { false };
	ert_status st;

	if ((st = ert_mv_need_input(ctx, 0, "data")) || (st = need_out(ctx, 1)))
		return st;
	x = ctx->in[0];
	perm = ert_attr_ints(ctx->node, "perm", &np);
	if (perm && np != (uint32_t)x->rank)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "perm has %u entries for rank %d", np,
				      (int)x->rank);
	for (int32_t i = 0; i < x->rank; i++) {
		int64_t p = perm ? perm[i] : x->rank - 1 - i;

		if (p < 0 || p >= x->rank || seen[p])
			return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "perm is not a permutation");
		seen[p] = true;
		d[i] = x->dims[p];
	}
	ert_value_set_shape(ctx->out[0], x->dtype, x->rank, d);
	return ERT_OK;
}

static ert_status infer_concat(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x0 = NULL;
	int64_t d[ERT_MAX_RANK];
	int32_t axis;
	ert_status st;

	if ((st = need_out(ctx, 1)))
		return st;
	for (uint32_t i = 0; i < ctx->n_in && !x0; i++)
		x0 = ctx->in[i];
	if (!x0)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "has no inputs");
	if (!ert_node_attr(ctx->node, "axis") && ctx->node->opset >= 4)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "needs attribute axis");
	if (!ert_norm_axis(ert_attr_int(ctx->node, "axis", 1), x0->rank, &axis))
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "axis %lld out of range for rank %d",
				      (long long)ert_attr_int(ctx->node, "axis", 1), (int)x0->rank);
	memcpy(d, x0->dims, sizeof(d[0]) * (size_t)x0->rank);
	d[axis] = 0;
	for (uint32_t i = 0; i < ctx->n_in; i++) {
		const struct ert_value *v = ctx->in[i];

		if (!v)
			continue;
		if (v->dtype != x0->dtype)
			return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "input %u is %s, input 0 is %s", i,
					      ert_dtype_name(v->dtype), ert_dtype_name(x0->dtype));
		if (v->rank != x0->rank)
			return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "input %u has rank %d, expected %d",
					      i, (int)v->rank, (int)x0->rank);
		for (int32_t k = 0; k < v->rank; k++)
			if (k != axis && v->dims[k] != x0->dims[k])
				return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
						      "input %u has %lld on axis %d, expected %lld", i,
						      (long long)v->dims[k], (int)k,
						      (long long)x0->dims[k]);
		/* each dim <= ERT_DIM_MAX, and so the sum, or it stops */
		d[axis] += v->dims[axis];
		if (d[axis] > ERT_DIM_MAX)
			return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
					      "inputs add up to more than 2^48 on axis %d", (int)axis);
	}
	ert_value_set_shape(ctx->out[0], x0->dtype, x0->rank, d);
	return ERT_OK;
}

static ert_status infer_split(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x;
	const int64_t *attr_split;
	int64_t split[ERT_MAX_RANK > 64 ? ERT_MAX_RANK : 64], dim, sum = 0, chunk = 0;
	uint32_t ns = 0, nout = ctx->n_out;
	int32_t axis;
	bool given = false;
	ert_status st;

	if ((st = ert_mv_need_input(ctx, 0, "input")) || (st = need_out(ctx, 1)))
		return st;
	x = ctx->in[0];
	if (!ert_norm_axis(ert_attr_int(ctx->node, "axis", 0), x->rank, &axis))
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "axis %lld out of range for rank %d",
				      (long long)ert_attr_int(ctx->node, "axis", 0), (int)x->rank);
	dim = x->dims[axis];
	attr_split = ert_attr_ints(ctx->node, "split", &ns);
	if (ctx->n_in > 1 && ctx->in[1]) {
		if (ctx->in[1]->numel > (int64_t)(sizeof(split) / sizeof(split[0])) ||
		    ctx->in[1]->numel != nout)
			return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "split has %lld entries for %u outputs",
					      (long long)ctx->in[1]->numel, nout);
		st = ert_mv_read_ints(ctx->node, ctx->err, ctx->in[1], "split", split, nout, &ns);
		if (st != ERT_OK)
			return st;
		given = true;
	} else if (attr_split) {
		if (ns != nout)
			return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "split has %u entries for %u outputs",
					      ns, nout);
		given = true;
	} else {
		int64_t parts = ert_attr_int(ctx->node, "num_outputs", nout);

		if (parts != nout || nout == 0)
			return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "num_outputs %lld with %u outputs",
					      (long long)parts, nout);
		/* Opset 18: the last chunk may be smaller; before that it must divide. */
		chunk = (dim + nout - 1) / nout;
		if (!ert_node_attr(ctx->node, "num_outputs") && dim % nout)
			return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
					      "axis of size %lld does not split into %u equal parts",
					      (long long)dim, nout);
	}
	for (uint32_t i = 0; i < nout; i++) {
		int64_t d[ERT_MAX_RANK], part;

		if (given) {
			part = attr_split && !(ctx->n_in > 1 && ctx->in[1]) ? attr_split[i] : split[i];
			if (part < 0)
				return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "split[%u] is %lld", i,
						      (long long)part);
		} else {
			part = dim - sum < chunk ? dim - sum : chunk;
		}
		/* sum <= dim here; part may be anything up to INT64_MAX */
		if (part > dim - sum) {
			sum = -1;
			break;
		}
		sum += part;
		if (!ctx->out[i])
			continue;
		memcpy(d, x->dims, sizeof(d[0]) * (size_t)x->rank);
		d[axis] = part;
		ert_value_set_shape(ctx->out[i], x->dtype, x->rank, d);
	}
	if (sum != dim)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "split sizes do not add up to %lld",
				      (long long)dim);
	return ERT_OK;
}

static ert_status infer_expand(struct ert_infer_ctx *ctx)
{
	struct ert_value shape = { 0 };
	const struct ert_value *vals[2];
	char what[200];
	uint32_t n = 0;
	ert_status st;

	if ((st = ert_mv_need_input(ctx, 0, "input")) || (st = ert_mv_need_input(ctx, 1, "shape")) ||
	    (st = need_out(ctx, 1)))
		return st;
	st = ert_mv_read_ints(ctx->node, ctx->err, ctx->in[1], "shape", shape.dims, ERT_MAX_RANK, &n);
	if (st != ERT_OK)
		return st;
	for (uint32_t i = 0; i < n; i++)
		if ((st = ert_check_dim(ctx->node, ctx->err, "shape", i, shape.dims[i])))
			return st;
	shape.rank = (int32_t)n;
	vals[0] = ctx->in[0];
	vals[1] = &shape;
	snprintf(what, sizeof(what), "Expand '%s' (input and shape)", ctx->node->name);
	st = ert_broadcast_shapes(vals, 2, ctx->out[0], ctx->err, what);
	ctx->out[0]->dtype = ctx->in[0]->dtype;
	return st;
}

static ert_status infer_tile(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x;
	int64_t rep[ERT_MAX_RANK], d[ERT_MAX_RANK];
	uint32_t n = 0;
	ert_status st;

	if ((st = ert_mv_need_input(ctx, 0, "input")) || (st = ert_mv_need_input(ctx, 1, "repeats")) ||
	    (st = need_out(ctx, 1)))
		return st;
	x = ctx->in[0];
	st = ert_mv_read_ints(ctx->node, ctx->err, ctx->in[1], "repeats", rep, ERT_MAX_RANK, &n);
	if (st != ERT_OK)
		return st;
	if (n != (uint32_t)x->rank)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "%u repeats for rank %d", n, (int)x->rank);
	for (int32_t i = 0; i < x->rank; i++) {
		if (rep[i] < 0)
			return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "repeats[%d] = %lld is negative",
					      (int)i, (long long)rep[i]);
		if (!ert_mul_i64(x->dims[i], rep[i], &d[i]) || d[i] > ERT_DIM_MAX)
			return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
					      "repeats[%d] = %lld times %lld exceeds the largest "
					      "dimension, %lld", (int)i, (long long)rep[i],
					      (long long)x->dims[i], (long long)ERT_DIM_MAX);
	}
	ert_value_set_shape(ctx->out[0], x->dtype, x->rank, d);
	return ERT_OK;
}

/* DepthToSpace and SpaceToDepth on NCHW. */
static ert_status infer_space_depth(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x;
	int64_t b = ert_attr_int(ctx->node, "blocksize", 0), d[4];
	ert_status st;

	if ((st = ert_mv_need_input(ctx, 0, "input")) || (st = need_out(ctx, 1)))
		return st;
	x = ctx->in[0];
	if (x->rank != 4)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "input rank %d, expected 4", (int)x->rank);
	if (b <= 0 || b > (1 << 20))
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "blocksize %lld", (long long)b);
	d[0] = x->dims[0];
	if (ctx->node->op == ERT_OP_DepthToSpace) {
		const char *mode = ert_attr_string(ctx->node, "mode", "DCR");

		if (strcmp(mode, "DCR") && strcmp(mode, "CRD"))
			return ert_infer_fail(ctx, ERT_STATUS_UNSUPPORTED, "unknown mode '%s'", mode);
		if (x->dims[1] % (b * b))
			return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
					      "%lld channels do not divide by blocksize^2 %lld",
					      (long long)x->dims[1], (long long)(b * b));
		d[1] = x->dims[1] / (b * b);
		if (!ert_mul_i64(x->dims[2], b, &d[2]) || !ert_mul_i64(x->dims[3], b, &d[3]) ||
		    d[2] > ERT_DIM_MAX || d[3] > ERT_DIM_MAX)
			return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
					      "blocksize %lld makes the spatial size %lldx%lld too large",
					      (long long)b, (long long)x->dims[2], (long long)x->dims[3]);
	} else {
		if (x->dims[2] % b || x->dims[3] % b)
			return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
					      "spatial size %lldx%lld does not divide by blocksize %lld",
					      (long long)x->dims[2], (long long)x->dims[3], (long long)b);
		if (!ert_mul_i64(x->dims[1], b * b, &d[1]) || d[1] > ERT_DIM_MAX)
			return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
					      "blocksize %lld makes %lld channels too many",
					      (long long)b, (long long)x->dims[1]);
		d[2] = x->dims[2] / b;
		d[3] = x->dims[3] / b;
	}
	ert_value_set_shape(ctx->out[0], x->dtype, 4, d);
	return ERT_OK;
}

/*
 * Integer attributes of the family (ert_attr_rule). Shape's start/end, Slice's
 * starts/ends and EyeLike's k mean something for any int64 (they are clamped),
 * so only their counts are bounded.
 */
static const struct ert_attr_rule reshape_rules[] = { ERT_RULE_FLAG("allowzero"), ERT_RULE_END };
static const struct ert_attr_rule axis_rules[] = { ERT_RULE_AXIS("axis"), ERT_RULE_END };
static const struct ert_attr_rule axes_rules[] = { ERT_RULE_AXES("axes"), ERT_RULE_END };
static const struct ert_attr_rule transpose_rules[] = {
	ERT_RULE_INTS("perm", ERT_MAX_RANK, 0, ERT_MAX_RANK - 1), ERT_RULE_END,
};
static const struct ert_attr_rule split_rules[] = {
	ERT_RULE_AXIS("axis"), ERT_RULE_INTS("split", ERT_NODE_MAX_IO, 0, ERT_DIM_MAX),
	ERT_RULE_INT("num_outputs", 1, ERT_NODE_MAX_IO), ERT_RULE_END,
};
static const struct ert_attr_rule block_rules[] = {
	ERT_RULE_INT("blocksize", 1, 1 << 20), ERT_RULE_END,
};
static const struct ert_attr_rule slice_rules[] = {
	ERT_RULE_INTS("starts", ERT_MAX_RANK, INT64_MIN, INT64_MAX),
	ERT_RULE_INTS("ends", ERT_MAX_RANK, INT64_MIN, INT64_MAX), ERT_RULE_AXES("axes"),
	ERT_RULE_END,
};
static const struct ert_attr_rule gather_nd_rules[] = {
	ERT_RULE_INT("batch_dims", 0, ERT_MAX_RANK), ERT_RULE_END,
};
static const struct ert_attr_rule pad_rules[] = {
	ERT_RULE_INTS("pads", 2 * ERT_MAX_RANK, -ERT_DIM_MAX, ERT_DIM_MAX),
	ERT_RULE_INTS("paddings", 2 * ERT_MAX_RANK, -ERT_DIM_MAX, ERT_DIM_MAX), ERT_RULE_END,
};
static const struct ert_attr_rule trilu_rules[] = { ERT_RULE_FLAG("upper"), ERT_RULE_END };
static const struct ert_attr_rule shape_rules[] = {
	ERT_RULE_INT("start", INT64_MIN, INT64_MAX), ERT_RULE_INT("end", INT64_MIN, INT64_MAX),
	ERT_RULE_END,
};
static const struct ert_attr_rule eye_rules[] = {
	ERT_RULE_INT("k", INT64_MIN, INT64_MAX), ERT_RULE_END,
};

const struct ert_op_def ert_op_defs_movement[] = {
	{ ERT_OP_Reshape, infer_reshape, reshape_rules },
	{ ERT_OP_Flatten, infer_flatten, axis_rules },
	{ ERT_OP_Squeeze, infer_squeeze, axes_rules },
	{ ERT_OP_Unsqueeze, infer_unsqueeze, axes_rules },
	{ ERT_OP_Transpose, infer_transpose, transpose_rules },
	{ ERT_OP_Concat, infer_concat, axis_rules },
	{ ERT_OP_Split, infer_split, split_rules },
	{ ERT_OP_Expand, infer_expand, NULL },
	{ ERT_OP_Tile, infer_tile, NULL },
	{ ERT_OP_DepthToSpace, infer_space_depth, block_rules },
	{ ERT_OP_SpaceToDepth, infer_space_depth, block_rules },
	{ ERT_OP_Slice, ert_mv_infer_slice, slice_rules },
	{ ERT_OP_Gather, ert_mv_infer_gather, axis_rules },
	{ ERT_OP_GatherElements, ert_mv_infer_gather_elements, axis_rules },
	{ ERT_OP_GatherND, ert_mv_infer_gather_nd, gather_nd_rules },
	{ ERT_OP_ScatterElements, ert_mv_infer_scatter_elements, axis_rules },
	{ ERT_OP_Scatter, ert_mv_infer_scatter_elements, axis_rules },
	{ ERT_OP_ScatterND, ert_mv_infer_scatter_nd, gather_nd_rules },
	{ ERT_OP_Pad, ert_mv_infer_pad, pad_rules },
	{ ERT_OP_CenterCropPad, ert_mv_infer_pad, axes_rules },
	{ ERT_OP_Trilu, ert_mv_infer_trilu, trilu_rules },
	{ ERT_OP_OneHot, ert_mv_infer_one_hot, axis_rules },
	{ ERT_OP_Shape, ert_mv_infer_shape, shape_rules },
	{ ERT_OP_Size, ert_mv_infer_size, NULL },
	{ ERT_OP_Constant, ert_mv_infer_constant, NULL },
	{ ERT_OP_ConstantOfShape, ert_mv_infer_constant_of_shape, NULL },
	{ ERT_OP_Range, ert_mv_infer_range, NULL },
	{ ERT_OP_EyeLike, ert_mv_infer_eye_like, eye_rules },
	{ .infer = NULL },
};
