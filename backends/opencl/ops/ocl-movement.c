/* SPDX-License-Identifier: MIT */
/*
 * Ops that move elements (planned in gpu-common/gpu-movement.c): the views
 * as a buffer copy, Transpose, Slice and Concat as movement.cl's strided
 * copies and Gather with planning-time indices. Elements are moved as bits:
 * 4 bytes with the _u32 kernels, and float32 stored as float16 (precision
 * LOW) with the _u16 ones.
 */
#include "opencl/ops/ocl-ops.h"

_Static_assert(ERT_OCL_MAX_LAUNCHES >= ERT_GPU_MAX_COPIES, "a Concat's copies fit a step");

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

/* One copy_nd launch of @c from @src to @dst. */
static ert_status copy_nd(struct ert_ocl *cl, struct ert_ocl_step *st, const struct ert_gpu_copy *c,
			  const struct ert_ocl_ref *src, const struct ert_ocl_ref *dst,
			  struct ert_err *err)
{
	cl_int d8[8], s8[8], t8[8];
	ert_status s;

	if (!c->n)
		return ERT_OK;
	s = ocl_launch_1d(cl, st, "movement", src->es == 2 ? "copy_nd_u16" : "copy_nd_u32", c->n,
			  err);
	if (s != ERT_OK)
		return s;
	ocl_int8(d8, c->dims, c->rank);
	ocl_int8(s8, c->ss, c->rank);
	ocl_int8(t8, c->ds, c->rank);
	ert_ocl_arg_mem(st, src->mem);
	ert_ocl_arg_int(st, (cl_int)(src->off + c->s_base));
	ert_ocl_arg_mem(st, dst->mem);
	ert_ocl_arg_int(st, (cl_int)(dst->off + c->d_base));
	ert_ocl_arg_int(st, (cl_int)c->n);
	ert_ocl_arg_int(st, c->rank);
	ert_ocl_arg_int8(st, d8);
	ert_ocl_arg_int8(st, s8);
	ert_ocl_arg_int8(st, t8);
	return ERT_OK;
}

/* Transpose, Slice and Concat: a strided copy per input. */
static ert_status copy_prepare(struct ert_ocl *cl, struct ert_exec *x, struct ert_ocl_step *st,
			       struct ert_err *err)
{
	struct ert_gpu_copy c[ERT_GPU_MAX_COPIES];
	struct ert_ocl_ref src, dst;
	uint32_t n;
	ert_status s = ert_gpu_copy_plan(x, c, &n, err);

	if (s == ERT_OK)
		s = ert_ocl_out(x, 0, &dst, err);
	for (uint32_t k = 0; k < n && s == ERT_OK; k++) {
		s = ert_ocl_in(cl, x, st, c[k].in, &src, err);
		if (s == ERT_OK)
			s = copy_nd(cl, st, &c[k], &src, &dst, err);
	}
	return s;
}

static ert_status gather_prepare(struct ert_ocl *cl, struct ert_exec *x, struct ert_ocl_step *st,
				 struct ert_err *err)
{
	struct ert_gpu_gather g;
	cl_mem mem;
	struct ert_ocl_ref src, dst;
	ert_status s = ert_gpu_gather_plan(x, &g, err);

	if (s != ERT_OK)
		return s;
	s = ert_ocl_table(cl, st, g.table, (size_t)g.nidx, &mem, err);
	ert_gpu_gather_free(&g);
	if (s == ERT_OK)
		s = ert_ocl_in(cl, x, st, 0, &src, err);
	if (s == ERT_OK)
		s = ert_ocl_out(x, 0, &dst, err);
	if (s == ERT_OK)
		s = ocl_launch_1d(cl, st, "movement", src.es == 2 ? "gather_u16" : "gather_u32", g.n,
				  err);
	if (s != ERT_OK)
		return s;
	ert_ocl_arg_ref(st, &src);
	ert_ocl_arg_ref(st, &dst);
	ert_ocl_arg_int(st, (cl_int)g.n);
	ert_ocl_arg_int(st, (cl_int)g.inner);
	ert_ocl_arg_int(st, (cl_int)g.nidx);
	ert_ocl_arg_int(st, (cl_int)g.axis_len);
	ert_ocl_arg_mem(st, mem);
	return ERT_OK;
}

const struct ert_ocl_op ert_ocl_ops_movement[] = {
	{ ERT_GPU_VIEW, NULL, NULL, view_prepare, "ocl-copy" },
	{ ERT_GPU_COPY, NULL, NULL, copy_prepare, "ocl-copy-nd-u32" },
	{ ERT_GPU_GATHER, NULL, NULL, gather_prepare, "ocl-gather-u32" },
	{ ERT_GPU_KIND_COUNT, NULL, NULL, NULL, NULL },
};
