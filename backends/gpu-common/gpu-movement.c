/* SPDX-License-Identifier: MIT */
/*
 * Ops that move elements, on a GPU: the views (Reshape, Flatten, Squeeze,
 * Unsqueeze, Identity, Dropout) as a buffer copy, or nothing when the
 * planner put the output on its input; Transpose, Slice and Concat as
 * strided copies and Gather with planning-time indices. Elements are moved
 * as bits: any dtype of 4 bytes (views: any dtype).
 */
#include <stdlib.h>
#include <string.h>

#include "gpu-common/gpu-ops-impl.h"
#include "ops/movement-params.h"

static bool is4(const struct ert_value *v)
{
	return v && ert_dtype_size(v->dtype) == 4;
}

/* ---- views ---- */

bool ert_gpu_view_supports(const struct ert_exec *x)
{
	const struct ert_value *in = x->in[0], *out = x->out[0];

	if (x->node->op == ERT_OP_Dropout && (x->n_in > 1 || (x->n_out > 1 && x->out[1])))
		return false;
	return in && out && in->dtype == out->dtype && in->nbytes == out->nbytes &&
	       ert_dtype_size(in->dtype) > 0;
}

/* ---- strided copies ---- */

/* @c: the walk over @dims (@rank) from input @in at @ss strides to the output at @ds, folded. */
static void copy_walk(struct ert_gpu_copy *c, uint32_t in, int64_t s_base, int64_t d_base,
		      int rank, const int64_t *dims, const int64_t *ss, const int64_t *ds)
{
	int64_t str[2][ERT_MAX_RANK];

	*c = (struct ert_gpu_copy){ .in = in, .n = 1, .s_base = s_base, .d_base = d_base };
	for (int i = 0; i < rank; i++) {
		c->dims[i] = dims[i];
		str[0][i] = ss[i];
		str[1][i] = ds[i];
		c->n *= dims[i];
	}
	if (!c->n)
		return;
	c->rank = ert_gpu_fold_dims(rank, c->dims, 2, str);
	memcpy(c->ss, str[0], sizeof(c->ss));
	memcpy(c->ds, str[1], sizeof(c->ds));
}

static bool transpose_perm(const struct ert_exec *x, int32_t *perm)
{
	int32_t rank = x->in[0]->rank;
	uint32_t np;
	const int64_t *p = ert_attr_ints(x->node, "perm", &np);
	bool seen[ERT_MAX_RANK] = { false };

	if (p && (int32_t)np != rank)
		return false;
	for (int32_t i = 0; i < rank; i++) {
		int64_t v = p ? p[i] : rank - 1 - i;

		if (v < 0 || v >= rank || seen[v])
			return false;
		seen[v] = true;
		perm[i] = (int32_t)v;
	}
	return true;
}

bool ert_gpu_transpose_supports(const struct ert_exec *x)
{
	int32_t perm[ERT_MAX_RANK];

	return x->n_in == 1 && is4(x->in[0]) && x->out[0]->dtype == x->in[0]->dtype &&
	       x->in[0]->rank <= 8 && transpose_perm(x, perm);
}

static void transpose_plan(const struct ert_exec *x, struct ert_gpu_copy *c)
{
	const struct ert_value *in = x->in[0], *out = x->out[0];
	int32_t perm[ERT_MAX_RANK];
	int64_t is[ERT_MAX_RANK], ss[ERT_MAX_RANK], ds[ERT_MAX_RANK];

	transpose_perm(x, perm);
	ert_gpu_contig_strides(in, is);
	ert_gpu_contig_strides(out, ds);
	for (int32_t i = 0; i < out->rank; i++)
		ss[i] = is[perm[i]];
	copy_walk(c, 0, 0, 0, out->rank, out->dims, ss, ds);
}

bool ert_gpu_slice_supports(const struct ert_exec *x)
{
	struct ert_mv_slice sl;
	struct ert_err err;

	for (uint32_t k = 1; k < x->n_in; k++)
		if (!ert_gpu_const_or_absent(x, k))
			return false;
	return is4(x->in[0]) && x->out[0]->dtype == x->in[0]->dtype && x->in[0]->rank <= 8 &&
	       ert_mv_slice_params(x->node, &err, (const struct ert_value *const *)x->in, x->n_in,
				   &sl) == ERT_OK;
}

static ert_status slice_plan(const struct ert_exec *x, struct ert_gpu_copy *c, struct ert_err *err)
{
	const struct ert_value *in = x->in[0], *out = x->out[0];
	int64_t is[ERT_MAX_RANK], ss[ERT_MAX_RANK], ds[ERT_MAX_RANK], base = 0;
	struct ert_mv_slice sl;
	ert_status s = ert_mv_slice_params(x->node, err, (const struct ert_value *const *)x->in,
					   x->n_in, &sl);

	if (s != ERT_OK)
		return s;
	ert_gpu_contig_strides(in, is);
	ert_gpu_contig_strides(out, ds);
	for (int32_t i = 0; i < in->rank; i++) {
		base += sl.start[i] * is[i];
		ss[i] = sl.step[i] * is[i];
	}
	copy_walk(c, 0, base, 0, out->rank, out->dims, ss, ds);
	return ERT_OK;
}

bool ert_gpu_concat_supports(const struct ert_exec *x)
{
	int32_t axis;

	if (x->n_in == 0 || x->n_in > ERT_GPU_MAX_COPIES || !is4(x->out[0]) ||
	    x->out[0]->rank > 8 ||
	    !ert_norm_axis(ert_attr_int(x->node, "axis", 0), x->out[0]->rank, &axis))
		return false;
	for (uint32_t k = 0; k < x->n_in; k++)
		if (!x->in[k] || x->in[k]->dtype != x->out[0]->dtype)
			return false;
	return true;
}

static void concat_plan(const struct ert_exec *x, struct ert_gpu_copy *c)
{
	const struct ert_value *out = x->out[0];
	int64_t ds[ERT_MAX_RANK], at = 0;
	int32_t axis;

	ert_norm_axis(ert_attr_int(x->node, "axis", 0), out->rank, &axis);
	ert_gpu_contig_strides(out, ds);
	for (uint32_t k = 0; k < x->n_in; k++) {
		const struct ert_value *in = x->in[k];
		int64_t ss[ERT_MAX_RANK];

		ert_gpu_contig_strides(in, ss);
		copy_walk(&c[k], k, 0, at * ds[axis], in->rank, in->dims, ss, ds);
		at += in->dims[axis];
	}
}

ert_status ert_gpu_copy_plan(const struct ert_exec *x, struct ert_gpu_copy *c, uint32_t *n,
			     struct ert_err *err)
{
	*n = 1;
	switch (x->node->op) {
	case ERT_OP_Transpose:
		transpose_plan(x, c);
		return ERT_OK;
	case ERT_OP_Slice:
		return slice_plan(x, c, err);
	case ERT_OP_Concat:
		if (x->n_in > ERT_GPU_MAX_COPIES)
			break;
		concat_plan(x, c);
		*n = x->n_in;
		return ERT_OK;
	default:
		break;
	}
	*n = 0;
	return ert_node_fail(x->node, err, ERT_STATUS_UNSUPPORTED,
			     "not a strided copy the GPU backends take");
}

/* ---- Gather ---- */

/* Gather's indices, known when planning, made non-negative; false when one is out of range. */
static bool gather_indices(const struct ert_exec *x, int32_t axis, int32_t *out)
{
	const struct ert_value *idx = x->in[1];
	int64_t len = x->in[0]->dims[axis];

	for (int64_t i = 0; i < idx->numel; i++) {
		int64_t v = ert_value_get_int(idx, i);

		if (v < -len || v >= len)
			return false;
		if (out)
			out[i] = (int32_t)(v < 0 ? v + len : v);
	}
	return true;
}

bool ert_gpu_gather_supports(const struct ert_exec *x)
{
	int32_t axis;

	return x->n_in == 2 && is4(x->in[0]) && x->out[0]->dtype == x->in[0]->dtype &&
	       (x->in[1]->dtype == ERT_DTYPE_INT64 || x->in[1]->dtype == ERT_DTYPE_INT32) &&
	       ert_gpu_const_or_absent(x, 1) && x->in[0]->rank > 0 &&
	       ert_norm_axis(ert_attr_int(x->node, "axis", 0), x->in[0]->rank, &axis) &&
	       gather_indices(x, axis, NULL);
}

ert_status ert_gpu_gather_plan(const struct ert_exec *x, struct ert_gpu_gather *g,
			       struct ert_err *err)
{
	const struct ert_value *in = x->in[0], *idx = x->in[1];
	int64_t inner = 1;
	int32_t axis;

	ert_norm_axis(ert_attr_int(x->node, "axis", 0), in->rank, &axis);
	for (int32_t d = axis + 1; d < in->rank; d++)
		inner *= in->dims[d];
	/* an empty output reads nothing: 1s keep the kernels' divisions defined */
	*g = (struct ert_gpu_gather){
		.n = x->out[0]->numel,
		.inner = inner ? inner : 1,
		.nidx = idx->numel ? idx->numel : 1,
		.axis_len = in->dims[axis],
	};
	g->table = calloc((size_t)g->nidx, sizeof(*g->table));
	if (!g->table)
		return ert_node_fail(x->node, err, ERT_STATUS_OUT_OF_MEMORY,
				     "out of memory while preparing");
	gather_indices(x, axis, g->table);
	return ERT_OK;
}

void ert_gpu_gather_free(struct ert_gpu_gather *g)
{
	free(g->table);
	g->table = NULL;
}
