/* SPDX-License-Identifier: MIT */
/* Elementwise float32 ops (planned in gpu-common/gpu-eltwise.c): eltwise.cl's kernels. */
#include "opencl/ops/ocl-ops.h"

static ert_status unary_prepare(struct ert_ocl *cl, struct ert_exec *x, struct ert_ocl_step *st,
				struct ert_err *err)
{
	struct ert_gpu_unary u;
	struct ert_ocl_ref in, out;
	ert_status s;

	ert_gpu_unary_plan(x, &u);
	s = ert_ocl_in(cl, x, st, 0, &in, err);
	if (s == ERT_OK)
		s = ert_ocl_out(x, 0, &out, err);
	if (s == ERT_OK)
		s = ocl_launch_1d(cl, st, "eltwise", "unary_f32", u.n, err);
	if (s != ERT_OK)
		return s;
	ert_ocl_arg_ref(st, &in);
	ert_ocl_arg_ref(st, &out);
	ert_ocl_arg_int(st, (cl_int)u.n);
	ert_ocl_arg_int(st, u.code);
	ert_ocl_arg_float(st, u.p0);
	ert_ocl_arg_float(st, u.p1);
	return ERT_OK;
}

static ert_status binary_prepare(struct ert_ocl *cl, struct ert_exec *x, struct ert_ocl_step *st,
				 struct ert_err *err)
{
	struct ert_gpu_binary b;
	struct ert_ocl_ref a, bb, c;
	cl_int d8[8], sa8[8], sb8[8];
	ert_status s;

	ert_gpu_binary_plan(x, &b);
	s = ert_ocl_in(cl, x, st, 0, &a, err);
	if (s == ERT_OK)
		s = ert_ocl_in(cl, x, st, 1, &bb, err);
	if (s == ERT_OK)
		s = ert_ocl_out(x, 0, &c, err);
	if (s == ERT_OK)
		s = ocl_launch_1d(cl, st, "eltwise", b.same ? "binary_same_f32" : "binary_f32", b.n,
				  err);
	if (s != ERT_OK)
		return s;
	ert_ocl_arg_ref(st, &a);
	ert_ocl_arg_ref(st, &bb);
	ert_ocl_arg_ref(st, &c);
	ert_ocl_arg_int(st, (cl_int)b.n);
	ert_ocl_arg_int(st, b.op);
	if (!b.same) {
		ocl_int8(d8, b.dims, b.rank);
		ocl_int8(sa8, b.sa, b.rank);
		ocl_int8(sb8, b.sb, b.rank);
		ert_ocl_arg_int(st, b.rank);
		ert_ocl_arg_int8(st, d8);
		ert_ocl_arg_int8(st, sa8);
		ert_ocl_arg_int8(st, sb8);
	}
	ert_ocl_arg_int(st, (cl_int)b.act.type);
	ert_ocl_arg_float(st, b.act.p0);
	ert_ocl_arg_float(st, b.act.p1);
	return ERT_OK;
}

const struct ert_ocl_op ert_ocl_ops_eltwise[] = {
	{ ERT_GPU_UNARY, NULL, NULL, unary_prepare, "ocl-unary-f32" },
	{ ERT_GPU_BINARY, NULL, NULL, binary_prepare, "ocl-binary-f32" },
	{ ERT_GPU_KIND_COUNT, NULL, NULL, NULL, NULL },
};
