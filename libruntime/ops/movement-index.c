/* SPDX-License-Identifier: MIT */
/*
 * Shape inference: movement ops driven by indices or per-axis ranges (Slice,
 * Gather*, Scatter*, Pad, CenterCropPad, Trilu, OneHot).
 */
#include <string.h>

#include "ops/movement-infer.h"
#include "ops/movement-params.h"

static bool is_index_type(ert_dtype dt)
{
	return dt == ERT_DTYPE_INT32 || dt == ERT_DTYPE_INT64;
}

static ert_status need_index(struct ert_infer_ctx *ctx, const struct ert_value *v,
			     const char *what)
{
	if (is_index_type(v->dtype))
		return ERT_OK;
	return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "%s are %s, expected int32 or int64", what,
			      ert_dtype_name(v->dtype));
}

ert_status ert_mv_infer_slice(struct ert_infer_ctx *ctx)
{
	struct ert_mv_slice s;
	ert_status st;

	if ((st = ert_mv_need_input(ctx, 0, "data")))
		return st;
	st = ert_mv_slice_params(ctx->node, ctx->err, ctx->in, ctx->n_in, &s);
	if (st != ERT_OK)
		return st;
	if (ctx->n_out < 1 || !ctx->out[0])
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "needs an output");
	ert_value_set_shape(ctx->out[0], ctx->in[0]->dtype, s.rank, s.dims);
	return ERT_OK;
}

ert_status ert_mv_infer_gather(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x, *idx;
	int64_t d[ERT_MAX_RANK];
	int32_t axis, r = 0;
	ert_status st;

	if ((st = ert_mv_need_input(ctx, 0, "data")) || (st = ert_mv_need_input(ctx, 1, "indices")))
		return st;
	x = ctx->in[0];
	idx = ctx->in[1];
	if ((st = need_index(ctx, idx, "indices")))
		return st;
	if (!ert_norm_axis(ert_attr_int(ctx->node, "axis", 0), x->rank, &axis))
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "axis %lld out of range for rank %d",
				      (long long)ert_attr_int(ctx->node, "axis", 0), (int)x->rank);
	if (x->rank - 1 + idx->rank > ERT_MAX_RANK)
		return ert_infer_fail(ctx, ERT_STATUS_UNSUPPORTED, "output rank exceeds %d",
				      ERT_MAX_RANK);
	for (int32_t i = 0; i < axis; i++)
		d[r++] = x->dims[i];
	for (int32_t i = 0; i < idx->rank; i++)
		d[r++] = idx->dims[i];
	for (int32_t i = axis + 1; i < x->rank; i++)
		d[r++] = x->dims[i];
	if (x->dims[axis] == 0 && idx->numel > 0)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "gathering from an empty axis");
	ert_value_set_shape(ctx->out[0], x->dtype, r, d);
	return ERT_OK;
}

ert_status ert_mv_infer_gather_elements(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x, *idx;
	int32_t axis;
	ert_status st;

	if ((st = ert_mv_need_input(ctx, 0, "data")) || (st = ert_mv_need_input(ctx, 1, "indices")))
		return st;
	x = ctx->in[0];
	idx = ctx->in[1];
	if ((st = need_index(ctx, idx, "indices")))
		return st;
	if (x->rank < 1 || idx->rank != x->rank)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "indices rank %d, data rank %d",
				      (int)idx->rank, (int)x->rank);
	if (!ert_norm_axis(ert_attr_int(ctx->node, "axis", 0), x->rank, &axis))
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "axis %lld out of range for rank %d",
				      (long long)ert_attr_int(ctx->node, "axis", 0), (int)x->rank);
	for (int32_t i = 0; i < x->rank; i++)
		if (i != axis && idx->dims[i] > x->dims[i])
			return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
					      "indices dim %d is %lld, data has %lld", (int)i,
					      (long long)idx->dims[i], (long long)x->dims[i]);
	ert_value_set_shape(ctx->out[0], x->dtype, idx->rank, idx->dims);
	return ERT_OK;
}

ert_status ert_mv_infer_gather_nd(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x, *idx;
	int64_t b = ert_attr_int(ctx->node, "batch_dims", 0), k, d[ERT_MAX_RANK];
	int32_t r = 0;
	ert_status st;

	if ((st = ert_mv_need_input(ctx, 0, "data")) || (st = ert_mv_need_input(ctx, 1, "indices")))
		return st;
	x = ctx->in[0];
	idx = ctx->in[1];
	if (idx->dtype != ERT_DTYPE_INT64 && idx->dtype != ERT_DTYPE_INT32)
		return need_index(ctx, idx, "indices");
	if (idx->rank < 1 || x->rank < 1)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "data and indices need rank >= 1");
	if (b < 0 || b >= idx->rank || b >= x->rank)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "batch_dims %lld for ranks %d and %d",
				      (long long)b, (int)x->rank, (int)idx->rank);
	k = idx->dims[idx->rank - 1];
	if (k < 1 || k > x->rank - b)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
				      "index tuples of length %lld for data rank %d, batch_dims %lld",
				      (long long)k, (int)x->rank, (long long)b);
	for (int64_t i = 0; i < b; i++)
		if (x->dims[i] != idx->dims[i])
			return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "batch dim %lld differs: %lld vs %lld",
					      (long long)i, (long long)x->dims[i],
					      (long long)idx->dims[i]);
	if (idx->rank - 1 + x->rank - b - k > ERT_MAX_RANK)
		return ert_infer_fail(ctx, ERT_STATUS_UNSUPPORTED, "output rank exceeds %d",
				      ERT_MAX_RANK);
	for (int32_t i = 0; i < idx->rank - 1; i++)
		d[r++] = idx->dims[i];
	for (int64_t i = b + k; i < x->rank; i++)
		d[r++] = x->dims[i];
	ert_value_set_shape(ctx->out[0], x->dtype, r, d);
	return ERT_OK;
}

static ert_status check_reduction(struct ert_infer_ctx *ctx)
{
	const char *red = ert_attr_string(ctx->node, "reduction", "none");

	if (strcmp(red, "none") && strcmp(red, "add") && strcmp(red, "mul") &&
	    strcmp(red, "max") && strcmp(red, "min"))
		return ert_infer_fail(ctx, ERT_STATUS_UNSUPPORTED, "unknown reduction '%s'", red);
	return ERT_OK;
}

ert_status ert_mv_infer_scatter_elements(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x, *idx, *upd;
	int32_t axis;
	ert_status st;

	if ((st = ert_mv_need_input(ctx, 0, "data")) || (st = ert_mv_need_input(ctx, 1, "indices")) ||
	    (st = ert_mv_need_input(ctx, 2, "updates")) || (st = check_reduction(ctx)))
		return st;
	x = ctx->in[0];
	idx = ctx->in[1];
	upd = ctx->in[2];
	if ((st = need_index(ctx, idx, "indices")))
		return st;
	if (upd->dtype != x->dtype)
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "updates are %s, data is %s",
				      ert_dtype_name(upd->dtype), ert_dtype_name(x->dtype));
	if (x->rank < 1 || idx->rank != x->rank || upd->rank != x->rank)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "data, indices and updates need one rank");
	for (int32_t i = 0; i < x->rank; i++)
		if (idx->dims[i] != upd->dims[i])
			return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "indices and updates differ on dim %d",
					      (int)i);
	if (!ert_norm_axis(ert_attr_int(ctx->node, "axis", 0), x->rank, &axis))
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "axis %lld out of range for rank %d",
				      (long long)ert_attr_int(ctx->node, "axis", 0), (int)x->rank);
	for (int32_t i = 0; i < x->rank; i++)
		if (i != axis && idx->dims[i] > x->dims[i])
			return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "indices dim %d exceeds data", (int)i);
	ert_value_set_shape(ctx->out[0], x->dtype, x->rank, x->dims);
	return ERT_OK;
}

ert_status ert_mv_infer_scatter_nd(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x, *idx, *upd;
	int64_t k;
	ert_status st;

	if ((st = ert_mv_need_input(ctx, 0, "data")) || (st = ert_mv_need_input(ctx, 1, "indices")) ||
	    (st = ert_mv_need_input(ctx, 2, "updates")) || (st = check_reduction(ctx)))
		return st;
	x = ctx->in[0];
	idx = ctx->in[1];
	upd = ctx->in[2];
	if (idx->dtype != ERT_DTYPE_INT64)
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "indices are %s, expected int64",
				      ert_dtype_name(idx->dtype));
	if (upd->dtype != x->dtype)
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "updates are %s, data is %s",
				      ert_dtype_name(upd->dtype), ert_dtype_name(x->dtype));
	if (idx->rank < 1 || x->rank < 1)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "data and indices need rank >= 1");
	k = idx->dims[idx->rank - 1];
	if (k < 1 || k > x->rank)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "index tuples of %lld for data rank %d",
				      (long long)k, (int)x->rank);
	/* updates shape = indices.shape[:-1] + data.shape[k:] */
	if (upd->rank != idx->rank - 1 + x->rank - k)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "updates rank %d, expected %lld",
				      (int)upd->rank, (long long)(idx->rank - 1 + x->rank - k));
	for (int32_t i = 0; i < upd->rank; i++) {
		int64_t want = i < idx->rank - 1 ? idx->dims[i] : x->dims[k + i - (idx->rank - 1)];

		if (upd->dims[i] != want)
			return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "updates dim %d is %lld, expected %lld",
					      (int)i, (long long)upd->dims[i], (long long)want);
	}
	ert_value_set_shape(ctx->out[0], x->dtype, x->rank, x->dims);
	return ERT_OK;
}

ert_status ert_mv_infer_pad(struct ert_infer_ctx *ctx)
{
	struct ert_mv_pad p;
	ert_status st;

	if ((st = ert_mv_need_input(ctx, 0, "data")))
		return st;
	st = ert_mv_pad_params(ctx->node, ctx->err, ctx->in, ctx->n_in, &p);
	if (st != ERT_OK)
		return st;
	ert_value_set_shape(ctx->out[0], ctx->in[0]->dtype, p.rank, p.dims);
	return ERT_OK;
}

ert_status ert_mv_infer_trilu(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x;
	ert_status st;

	if ((st = ert_mv_need_input(ctx, 0, "input")))
		return st;
	x = ctx->in[0];
	if (x->rank < 2)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "input rank %d, expected >= 2",
				      (int)x->rank);
	if (ctx->n_in > 1 && ctx->in[1] && (ctx->in[1]->numel != 1 ||
					    ctx->in[1]->dtype != ERT_DTYPE_INT64))
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "k must be one int64");
	ert_value_set_shape(ctx->out[0], x->dtype, x->rank, x->dims);
	return ERT_OK;
}

ert_status ert_mv_infer_one_hot(struct ert_infer_ctx *ctx)
{
	const struct ert_value *idx, *depth, *vals;
	int64_t d[ERT_MAX_RANK], dep;
	int32_t axis;
	ert_status st;

	if ((st = ert_mv_need_input(ctx, 0, "indices")) || (st = ert_mv_need_input(ctx, 1, "depth")) ||
	    (st = ert_mv_need_input(ctx, 2, "values")))
		return st;
	idx = ctx->in[0];
	depth = ctx->in[1];
	vals = ctx->in[2];
	if (depth->numel != 1 || !depth->data)
		return ert_infer_fail(ctx, ERT_STATUS_UNSUPPORTED,
				      "depth must be one value known when the model is planned");
	if (vals->numel != 2)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "values has %lld elements, expected 2",
				      (long long)vals->numel);
	if (ert_dtype_size(idx->dtype) == 0 || ert_dtype_size(vals->dtype) == 0)
		return ert_infer_fail(ctx, ERT_STATUS_UNSUPPORTED, "sub-byte types");
	if (ert_dtype_is_float(depth->dtype)) {
		double f = ert_value_get_float(depth, 0);

		/* converting a double out of int64's range is undefined */
		dep = f >= 1.0 && f <= (double)ERT_DIM_MAX ? (int64_t)f : 0;
	} else {
		dep = ert_value_get_int(depth, 0);
	}
	if (dep < 1 || dep > ERT_DIM_MAX)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "depth = %lld is out of range [1, 2^48]",
				      (long long)dep);
	if (idx->rank + 1 > ERT_MAX_RANK)
		return ert_infer_fail(ctx, ERT_STATUS_UNSUPPORTED, "output rank exceeds %d",
				      ERT_MAX_RANK);
	if (!ert_norm_axis(ert_attr_int(ctx->node, "axis", -1), idx->rank + 1, &axis))
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "axis %lld out of range for rank %d",
				      (long long)ert_attr_int(ctx->node, "axis", -1),
				      (int)idx->rank + 1);
	for (int32_t i = 0, j = 0; i <= idx->rank; i++)
		d[i] = i == axis ? dep : idx->dims[j++];
	ert_value_set_shape(ctx->out[0], vals->dtype, idx->rank + 1, d);
	return ERT_OK;
}
