/* SPDX-License-Identifier: MIT */
/*
 * MaxPool, AveragePool and the global pools (planned in gpu-common/gpu-pool.c):
 * pool.cl's kernels.
 */
#include "opencl/ops/ocl-ops.h"

static ert_status pool_prepare(struct ert_ocl *cl, struct ert_exec *x, struct ert_ocl_step *st,
			       struct ert_err *err)
{
	struct ert_gpu_pool p;
	struct ert_ocl_ref src, dst;
	cl_int geo8[8], geob8[8];
	ert_status s = ert_gpu_pool_plan(x, &p, err);

	if (s == ERT_OK)
		s = ert_ocl_in(cl, x, st, 0, &src, err);
	if (s == ERT_OK)
		s = ert_ocl_out(x, 0, &dst, err);
	if (s == ERT_OK)
		s = ocl_launch_1d(cl, st, "pool", "pool2d_f32", p.n, err);
	if (s != ERT_OK)
		return s;
	ocl_int8(geo8, p.geo, 8);
	ocl_int8(geob8, p.geob, 8);
	ert_ocl_arg_ref(st, &src);
	ert_ocl_arg_ref(st, &dst);
	ert_ocl_arg_int(st, p.mode);
	ert_ocl_arg_int8(st, geo8);
	ert_ocl_arg_int8(st, geob8);
	return ERT_OK;
}

/* Each N x C plane reduced to one value by a work-group of ERT_GPU_RED_WG items. */
static ert_status global_prepare(struct ert_ocl *cl, struct ert_exec *x, struct ert_ocl_step *st,
				 struct ert_err *err)
{
	struct ert_gpu_plane_reduce p;
	size_t gws, lws = ERT_GPU_RED_WG;
	struct ert_ocl_ref src, dst;
	ert_status s;

	ert_gpu_plane_reduce_plan(x, &p);
	gws = (size_t)p.planes * lws;
	s = ert_ocl_in(cl, x, st, 0, &src, err);
	if (s == ERT_OK)
		s = ert_ocl_out(x, 0, &dst, err);
	if (s == ERT_OK)
		s = ert_ocl_launch_add(cl, st, "pool", "plane_reduce_f32", 1, &gws, &lws, err);
	if (s != ERT_OK)
		return s;
	ert_ocl_arg_ref(st, &src);
	ert_ocl_arg_ref(st, &dst);
	ert_ocl_arg_int(st, (cl_int)p.len);
	ert_ocl_arg_int(st, p.mode);
	return ERT_OK;
}

const struct ert_ocl_op ert_ocl_ops_pool[] = {
	{ ERT_GPU_POOL, NULL, NULL, pool_prepare, "ocl-pool2d-f32" },
	{ ERT_GPU_PLANE_REDUCE, NULL, NULL, global_prepare, "ocl-plane-reduce-f32" },
	{ ERT_GPU_KIND_COUNT, NULL, NULL, NULL, NULL },
};
