/* SPDX-License-Identifier: MIT */
/*
 * Ops that move elements: the views (Reshape, Flatten, Squeeze, Unsqueeze,
 * Identity, Dropout) as a buffer copy, or nothing when the planner put the
 * output on its input; Transpose, Slice and Concat as strided copies
 * (movement.cl's copy_nd_u32) and Gather with planning-time indices.
 * Elements are moved as bits: any dtype of 4 bytes (views: any dtype), and
 * float32 stored as float16 (precision LOW) with the _u16 kernels.
 */
#include <stdlib.h>
#include <string.h>

#include "ops/movement-params.h"
#include "opencl/ops/ocl-ops.h"

static bool is4(const struct ert_value *v)
{
	return v && ert_dtype_size(v->dtype) == 4;
}

/* ---- views ---- */

static bool view_supports(const struct ert_ocl *cl, const struct ert_exec *x)
{
	const struct ert_value *in = x->in[0], *out = x->out[0];

	if (x->node->op == ERT_OP_Dropout && (x->n_in > 1 || (x->n_out > 1 && x->out[1])))
		return false;
	return in && out && in->dtype == out->dtype && in->nbytes == out->nbytes &&
	       ert_dtype_size(in->dtype) > 0;
}

static ert_status view_prepare(struct ert_ocl *cl, struct ert_exec *x, struct ert_ocl_step *st,
			       struct ert_err *err)
{
	struct ert_ocl_ref src, dst;
	ert_status s = ert_ocl_in(cl, x, st, 0, &src, err);

	if (s == ERT_OK)
		s = ert_ocl_out(x, 0, &dst, err);
	if (s == ERT_OK)
		s = ert_ocl_copy_add(st, &src, &dst, (size_t)src.es,
				     (size_t)x->out[0]->numel * (size_t)src.es, err);
	return s;
}

/* ---- strided copies ---- */

/*
 * One copy_nd_u32 launch: the walk over @dims (@rank) reads @src at @ss
 * strides from element @s_base and writes @dst at @ds strides from @d_base.
 */
static ert_status copy_nd(struct ert_ocl *cl, struct ert_ocl_step *st,
			  const struct ert_ocl_ref *src, int64_t s_base,
			  const struct ert_ocl_ref *dst, int64_t d_base, int rank, const int64_t *dims,
			  const int64_t *ss, const int64_t *ds, struct ert_err *err)
{
	int64_t d[ERT_MAX_RANK], str[2][ERT_MAX_RANK], n = 1;
	cl_int d8[8], s8[8], t8[8];
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
	r = ocl_fold_dims(rank, d, 2, str);
	s = ocl_launch_1d(cl, st, "movement", src->es == 2 ? "copy_nd_u16" : "copy_nd_u32", n,
			  err);
	if (s != ERT_OK)
		return s;
	ocl_int8(d8, d, r);
	ocl_int8(s8, str[0], r);
	ocl_int8(t8, str[1], r);
	ert_ocl_arg_mem(st, src->mem);
	ert_ocl_arg_int(st, (cl_int)(src->off + s_base));
	ert_ocl_arg_mem(st, dst->mem);
	ert_ocl_arg_int(st, (cl_int)(dst->off + d_base));
	ert_ocl_arg_int(st, (cl_int)n);
	ert_ocl_arg_int(st, r);
	ert_ocl_arg_int8(st, d8);
	ert_ocl_arg_int8(st, s8);
	ert_ocl_arg_int8(st, t8);
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

static bool transpose_supports(const struct ert_ocl *cl, const struct ert_exec *x)
{
	int32_t perm[ERT_MAX_RANK];

	return x->n_in == 1 && is4(x->in[0]) && x->out[0]->dtype == x->in[0]->dtype &&
	       transpose_perm(x, perm);
}

static ert_status transpose_prepare(struct ert_ocl *cl, struct ert_exec *x,
				    struct ert_ocl_step *st, struct ert_err *err)
{
	const struct ert_value *in = x->in[0], *out = x->out[0];
	int32_t perm[ERT_MAX_RANK];
	int64_t is[ERT_MAX_RANK], ss[ERT_MAX_RANK], ds[ERT_MAX_RANK];
	struct ert_ocl_ref src, dst;
	ert_status s;

	transpose_perm(x, perm);
	ocl_contig_strides(in, is);
	ocl_contig_strides(out, ds);
	for (int32_t i = 0; i < out->rank; i++)
		ss[i] = is[perm[i]];
	s = ert_ocl_in(cl, x, st, 0, &src, err);
	if (s == ERT_OK)
		s = ert_ocl_out(x, 0, &dst, err);
	if (s == ERT_OK)
		s = copy_nd(cl, st, &src, 0, &dst, 0, out->rank, out->dims, ss, ds, err);
	return s;
}

static bool slice_supports(const struct ert_ocl *cl, const struct ert_exec *x)
{
	struct ert_mv_slice sl;
	struct ert_err err;

	for (uint32_t k = 1; k < x->n_in; k++)
		if (!ert_gpu_const_or_absent(x, k))
			return false;
	return is4(x->in[0]) && x->out[0]->dtype == x->in[0]->dtype &&
	       ert_mv_slice_params(x->node, &err, (const struct ert_value *const *)x->in, x->n_in,
				   &sl) == ERT_OK;
}

static ert_status slice_prepare(struct ert_ocl *cl, struct ert_exec *x, struct ert_ocl_step *st,
				struct ert_err *err)
{
	const struct ert_value *in = x->in[0], *out = x->out[0];
	int64_t is[ERT_MAX_RANK], ss[ERT_MAX_RANK], ds[ERT_MAX_RANK], base = 0;
	struct ert_mv_slice sl;
	struct ert_ocl_ref src, dst;
	ert_status s = ert_mv_slice_params(x->node, err, (const struct ert_value *const *)x->in,
					   x->n_in, &sl);

	if (s != ERT_OK)
		return s;
	ocl_contig_strides(in, is);
	ocl_contig_strides(out, ds);
	for (int32_t i = 0; i < in->rank; i++) {
		base += sl.start[i] * is[i];
		ss[i] = sl.step[i] * is[i];
	}
	s = ert_ocl_in(cl, x, st, 0, &src, err);
	if (s == ERT_OK)
		s = ert_ocl_out(x, 0, &dst, err);
	if (s == ERT_OK)
		s = copy_nd(cl, st, &src, base, &dst, 0, out->rank, out->dims, ss, ds, err);
	return s;
}

static bool concat_supports(const struct ert_ocl *cl, const struct ert_exec *x)
{
	int32_t axis;

	if (x->n_in == 0 || x->n_in > ERT_OCL_MAX_LAUNCHES || !is4(x->out[0]) ||
	    !ert_norm_axis(ert_attr_int(x->node, "axis", 0), x->out[0]->rank, &axis))
		return false;
	for (uint32_t k = 0; k < x->n_in; k++)
		if (!x->in[k] || x->in[k]->dtype != x->out[0]->dtype)
			return false;
	return true;
}

static ert_status concat_prepare(struct ert_ocl *cl, struct ert_exec *x, struct ert_ocl_step *st,
				 struct ert_err *err)
{
	const struct ert_value *out = x->out[0];
	int64_t ds[ERT_MAX_RANK], at = 0;
	struct ert_ocl_ref dst;
	int32_t axis;
	ert_status s = ert_ocl_out(x, 0, &dst, err);

	ert_norm_axis(ert_attr_int(x->node, "axis", 0), out->rank, &axis);
	ocl_contig_strides(out, ds);
	for (uint32_t k = 0; k < x->n_in && s == ERT_OK; k++) {
		const struct ert_value *in = x->in[k];
		int64_t ss[ERT_MAX_RANK];
		struct ert_ocl_ref src;

		ocl_contig_strides(in, ss);
		s = ert_ocl_in(cl, x, st, k, &src, err);
		if (s == ERT_OK)
			s = copy_nd(cl, st, &src, 0, &dst, at * ds[axis], in->rank, in->dims, ss, ds,
				    err);
		at += in->dims[axis];
	}
	return s;
}

/* Gather's indices, known when planning, made non-negative; false when one is out of range. */
static bool gather_indices(const struct ert_exec *x, int32_t axis, cl_int *out)
{
	const struct ert_value *idx = x->in[1];
	int64_t len = x->in[0]->dims[axis];

	for (int64_t i = 0; i < idx->numel; i++) {
		int64_t v = ert_value_get_int(idx, i);

		if (v < -len || v >= len)
			return false;
		if (out)
			out[i] = (cl_int)(v < 0 ? v + len : v);
	}
	return true;
}

static bool gather_supports(const struct ert_ocl *cl, const struct ert_exec *x)
{
	int32_t axis;

	return x->n_in == 2 && is4(x->in[0]) && x->out[0]->dtype == x->in[0]->dtype &&
	       (x->in[1]->dtype == ERT_DTYPE_INT64 || x->in[1]->dtype == ERT_DTYPE_INT32) &&
	       ert_gpu_const_or_absent(x, 1) && x->in[0]->rank > 0 &&
	       ert_norm_axis(ert_attr_int(x->node, "axis", 0), x->in[0]->rank, &axis) &&
	       gather_indices(x, axis, NULL);
}

static ert_status gather_prepare(struct ert_ocl *cl, struct ert_exec *x, struct ert_ocl_step *st,
				 struct ert_err *err)
{
	const struct ert_value *in = x->in[0], *idx = x->in[1];
	int64_t inner = 1;
	int32_t axis;
	cl_int *table;
	cl_mem mem;
	struct ert_ocl_ref src, dst;
	ert_status s;

	ert_norm_axis(ert_attr_int(x->node, "axis", 0), in->rank, &axis);
	for (int32_t d = axis + 1; d < in->rank; d++)
		inner *= in->dims[d];
	table = calloc(idx->numel ? (size_t)idx->numel : 1, sizeof(*table));
	if (!table) {
		ert_err_set(err, "opencl: out of memory preparing Gather '%s'", x->node->name);
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	gather_indices(x, axis, table);
	s = ert_ocl_table(cl, st, table, idx->numel ? (size_t)idx->numel : 1, &mem, err);
	free(table);
	if (s == ERT_OK)
		s = ert_ocl_in(cl, x, st, 0, &src, err);
	if (s == ERT_OK)
		s = ert_ocl_out(x, 0, &dst, err);
	if (s == ERT_OK)
		s = ocl_launch_1d(cl, st, "movement", src.es == 2 ? "gather_u16" : "gather_u32",
				  x->out[0]->numel, err);
	if (s != ERT_OK)
		return s;
	ert_ocl_arg_ref(st, &src);
	ert_ocl_arg_ref(st, &dst);
	ert_ocl_arg_int(st, (cl_int)x->out[0]->numel);
	ert_ocl_arg_int(st, (cl_int)inner);
	ert_ocl_arg_int(st, (cl_int)idx->numel);
	ert_ocl_arg_int(st, (cl_int)in->dims[axis]);
	ert_ocl_arg_mem(st, mem);
	return ERT_OK;
}

#define VIEW(name) { ERT_OP_##name, view_supports, NULL, view_prepare, "ocl-copy" }

const struct ert_ocl_op ert_ocl_ops_movement[] = {
	VIEW(Reshape), VIEW(Flatten), VIEW(Squeeze), VIEW(Unsqueeze), VIEW(Identity),
	VIEW(Dropout),
	{ ERT_OP_Transpose, transpose_supports, NULL, transpose_prepare, "ocl-copy-nd-u32" },
	{ ERT_OP_Slice, slice_supports, NULL, slice_prepare, "ocl-copy-nd-u32" },
	{ ERT_OP_Concat, concat_supports, NULL, concat_prepare, "ocl-copy-nd-u32" },
	{ ERT_OP_Gather, gather_supports, NULL, gather_prepare, "ocl-gather-u32" },
	{ ERT_OP_COUNT, NULL, NULL, NULL, NULL },
};
