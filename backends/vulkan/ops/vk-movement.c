/* SPDX-License-Identifier: MIT */
/*
 * Ops that move elements: the views (Reshape, Flatten, Squeeze, Unsqueeze,
 * Identity, Dropout) as a buffer copy, or nothing when the planner put the
 * output on its input; Transpose, Slice and Concat as strided copies
 * (copy_nd.comp) and Gather with planning-time indices. Elements are moved
 * as bits: any dtype of 4 bytes (views: any dtype).
 */
#include <stdlib.h>
#include <string.h>

#include "ops/movement-params.h"
#include "vulkan/ops/vk-ops.h"

static bool is4(const struct ert_value *v)
{
	return v && ert_dtype_size(v->dtype) == 4;
}

/* ---- views ---- */

static bool view_supports(const struct ert_vk *vk, const struct ert_exec *x)
{
	const struct ert_value *in = x->in[0], *out = x->out[0];

	if (x->node->op == ERT_OP_Dropout && (x->n_in > 1 || (x->n_out > 1 && x->out[1])))
		return false;
	return in && out && in->dtype == out->dtype && in->nbytes == out->nbytes &&
	       ert_dtype_size(in->dtype) > 0;
}

static ert_status view_prepare(struct ert_vk *vk, struct ert_exec *x, struct ert_vk_step *st,
			       struct ert_err *err)
{
	struct ert_vk_ref src, dst;
	ert_status s = ert_vk_in(vk, x, st, 0, &src, err);

	if (s == ERT_OK)
		s = ert_vk_out(x, 0, &dst, err);
	if (s == ERT_OK)
		s = ert_vk_copy_add(st, &src, &dst, ert_dtype_size(x->in[0]->dtype),
				    x->out[0]->nbytes, err);
	return s;
}

/* ---- strided copies ---- */

/*
 * One copy_nd launch: the walk over @dims (@rank) reads @src at @ss strides
 * from element @s_base and writes @dst at @ds strides from @d_base.
 */
static ert_status copy_nd(struct ert_vk *vk, struct ert_vk_step *st,
			  const struct ert_vk_ref *src, int64_t s_base,
			  const struct ert_vk_ref *dst, int64_t d_base, int rank, const int64_t *dims,
			  const int64_t *ss, const int64_t *ds, struct ert_err *err)
{
	int64_t d[ERT_MAX_RANK], str[2][ERT_MAX_RANK], n = 1;
	struct ert_vk_ref s_at = *src, d_at = *dst;
	int r;
	ert_status s;

	for (int i = 0; i < rank; i++) {
		d[i] = dims[i];
		str[0][i] = ss[i];
		str[1][i] = ds[i];
		n *= dims[i];
	}
	if (!n)
		return ERT_OK;
	r = ert_gpu_fold_dims(rank, d, 2, str);
	s = vk_launch_1d(vk, st, "copy_nd", n, err);
	if (s != ERT_OK)
		return s;
	s_at.off += (int32_t)s_base;
	d_at.off += (int32_t)d_base;
	ert_vk_arg_ref(st, &s_at);
	ert_vk_arg_ref(st, &d_at);
	ert_vk_arg_int(st, (int32_t)n);
	ert_vk_arg_int(st, r);
	vk_arg_int8(st, d, r);
	vk_arg_int8(st, str[0], r);
	vk_arg_int8(st, str[1], r);
	return ERT_OK;
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

static bool transpose_supports(const struct ert_vk *vk, const struct ert_exec *x)
{
	int32_t perm[ERT_MAX_RANK];

	return x->n_in == 1 && is4(x->in[0]) && x->out[0]->dtype == x->in[0]->dtype &&
	       x->in[0]->rank <= 8 && transpose_perm(x, perm);
}

static ert_status transpose_prepare(struct ert_vk *vk, struct ert_exec *x,
				    struct ert_vk_step *st, struct ert_err *err)
{
	const struct ert_value *in = x->in[0], *out = x->out[0];
	int32_t perm[ERT_MAX_RANK];
	int64_t is[ERT_MAX_RANK], ss[ERT_MAX_RANK], ds[ERT_MAX_RANK];
	struct ert_vk_ref src, dst;
	ert_status s;

	transpose_perm(x, perm);
	ert_gpu_contig_strides(in, is);
	ert_gpu_contig_strides(out, ds);
	for (int32_t i = 0; i < out->rank; i++)
		ss[i] = is[perm[i]];
	s = ert_vk_in(vk, x, st, 0, &src, err);
	if (s == ERT_OK)
		s = ert_vk_out(x, 0, &dst, err);
	if (s == ERT_OK)
		s = copy_nd(vk, st, &src, 0, &dst, 0, out->rank, out->dims, ss, ds, err);
	return s;
}

static bool slice_supports(const struct ert_vk *vk, const struct ert_exec *x)
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

static ert_status slice_prepare(struct ert_vk *vk, struct ert_exec *x, struct ert_vk_step *st,
				struct ert_err *err)
{
	const struct ert_value *in = x->in[0], *out = x->out[0];
	int64_t is[ERT_MAX_RANK], ss[ERT_MAX_RANK], ds[ERT_MAX_RANK], base = 0;
	struct ert_mv_slice sl;
	struct ert_vk_ref src, dst;
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
	s = ert_vk_in(vk, x, st, 0, &src, err);
	if (s == ERT_OK)
		s = ert_vk_out(x, 0, &dst, err);
	if (s == ERT_OK)
		s = copy_nd(vk, st, &src, base, &dst, 0, out->rank, out->dims, ss, ds, err);
	return s;
}

static bool concat_supports(const struct ert_vk *vk, const struct ert_exec *x)
{
	int32_t axis;

	if (x->n_in == 0 || x->n_in > ERT_VK_MAX_LAUNCHES || !is4(x->out[0]) ||
	    x->out[0]->rank > 8 ||
	    !ert_norm_axis(ert_attr_int(x->node, "axis", 0), x->out[0]->rank, &axis))
		return false;
	for (uint32_t k = 0; k < x->n_in; k++)
		if (!x->in[k] || x->in[k]->dtype != x->out[0]->dtype)
			return false;
	return true;
}

static ert_status concat_prepare(struct ert_vk *vk, struct ert_exec *x, struct ert_vk_step *st,
				 struct ert_err *err)
{
	const struct ert_value *out = x->out[0];
	int64_t ds[ERT_MAX_RANK], at = 0;
	struct ert_vk_ref dst;
	int32_t axis;
	ert_status s = ert_vk_out(x, 0, &dst, err);

	ert_norm_axis(ert_attr_int(x->node, "axis", 0), out->rank, &axis);
	ert_gpu_contig_strides(out, ds);
	for (uint32_t k = 0; k < x->n_in && s == ERT_OK; k++) {
		const struct ert_value *in = x->in[k];
		int64_t ss[ERT_MAX_RANK];
		struct ert_vk_ref src;

		ert_gpu_contig_strides(in, ss);
		s = ert_vk_in(vk, x, st, k, &src, err);
		if (s == ERT_OK)
			s = copy_nd(vk, st, &src, 0, &dst, at * ds[axis], in->rank, in->dims, ss, ds,
				    err);
		at += in->dims[axis];
	}
	return s;
}

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

static bool gather_supports(const struct ert_vk *vk, const struct ert_exec *x)
{
	int32_t axis;

	return x->n_in == 2 && is4(x->in[0]) && x->out[0]->dtype == x->in[0]->dtype &&
	       (x->in[1]->dtype == ERT_DTYPE_INT64 || x->in[1]->dtype == ERT_DTYPE_INT32) &&
	       ert_gpu_const_or_absent(x, 1) && x->in[0]->rank > 0 &&
	       ert_norm_axis(ert_attr_int(x->node, "axis", 0), x->in[0]->rank, &axis) &&
	       gather_indices(x, axis, NULL);
}

static ert_status gather_prepare(struct ert_vk *vk, struct ert_exec *x, struct ert_vk_step *st,
				 struct ert_err *err)
{
	const struct ert_value *in = x->in[0], *idx = x->in[1];
	int64_t inner = 1;
	int32_t axis, *table;
	VkBuffer buf;
	struct ert_vk_ref src, dst;
	ert_status s;

	ert_norm_axis(ert_attr_int(x->node, "axis", 0), in->rank, &axis);
	for (int32_t d = axis + 1; d < in->rank; d++)
		inner *= in->dims[d];
	table = calloc(idx->numel ? (size_t)idx->numel : 1, sizeof(*table));
	if (!table) {
		ert_err_set(err, "vulkan: out of memory preparing Gather '%s'", x->node->name);
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	gather_indices(x, axis, table);
	s = ert_vk_table(vk, st, table, idx->numel ? (size_t)idx->numel : 1, &buf, err);
	free(table);
	if (s == ERT_OK)
		s = ert_vk_in(vk, x, st, 0, &src, err);
	if (s == ERT_OK)
		s = ert_vk_out(x, 0, &dst, err);
	if (s == ERT_OK)
		s = vk_launch_1d(vk, st, "gather", x->out[0]->numel, err);
	if (s != ERT_OK)
		return s;
	ert_vk_arg_ref(st, &src);
	ert_vk_arg_ref(st, &dst);
	ert_vk_arg_int(st, (int32_t)x->out[0]->numel);
	ert_vk_arg_int(st, (int32_t)(inner ? inner : 1));
	ert_vk_arg_int(st, (int32_t)(idx->numel ? idx->numel : 1));
	ert_vk_arg_int(st, (int32_t)in->dims[axis]);
	ert_vk_arg_buf(st, buf);
	return ERT_OK;
}

#define VIEW(name) { ERT_OP_##name, view_supports, view_prepare, "vk-copy" }

const struct ert_vk_op ert_vk_ops_movement[] = {
	VIEW(Reshape), VIEW(Flatten), VIEW(Squeeze), VIEW(Unsqueeze), VIEW(Identity),
	VIEW(Dropout),
	{ ERT_OP_Transpose, transpose_supports, transpose_prepare, "vk-copy-nd-u32" },
	{ ERT_OP_Slice, slice_supports, slice_prepare, "vk-copy-nd-u32" },
	{ ERT_OP_Concat, concat_supports, concat_prepare, "vk-copy-nd-u32" },
	{ ERT_OP_Gather, gather_supports, gather_prepare, "vk-gather-u32" },
	{ ERT_OP_COUNT, NULL, NULL, NULL },
};
