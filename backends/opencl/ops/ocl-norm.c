/* SPDX-License-Identifier: MIT */
/*
 * Softmax, LogSoftmax and LayerNormalization (planned in gpu-common/gpu-norm.c):
 * norm.cl's kernels, a work-group of ERT_GPU_RED_WG items per row.
 */
#include "opencl/ops/ocl-ops.h"

static ert_status softmax_prepare(struct ert_ocl *cl, struct ert_exec *x, struct ert_ocl_step *st,
				  struct ert_err *err)
{
	struct ert_gpu_softmax p;
	size_t gws, lws = ERT_GPU_RED_WG;
	struct ert_ocl_ref src, dst;
	ert_status s = ert_gpu_softmax_plan(x, &p, err);

	if (s != ERT_OK)
		return s;
	gws = (size_t)p.rows * lws;
	s = ert_ocl_in(cl, x, st, 0, &src, err);
	if (s == ERT_OK)
		s = ert_ocl_out(x, 0, &dst, err);
	if (s == ERT_OK)
		s = ert_ocl_launch_add(cl, st, "norm", "softmax_f32", 1, &gws, &lws, err);
	if (s != ERT_OK)
		return s;
	ert_ocl_arg_ref(st, &src);
	ert_ocl_arg_ref(st, &dst);
	ert_ocl_arg_int(st, (cl_int)p.len);
	ert_ocl_arg_int(st, (cl_int)p.inner);
	ert_ocl_arg_int(st, p.log);
	return ERT_OK;
}

static ert_status layernorm_prepare(struct ert_ocl *cl, struct ert_exec *x,
				    struct ert_ocl_step *st, struct ert_err *err)
{
	struct ert_gpu_layernorm p;
	size_t gws, lws = ERT_GPU_RED_WG;
	struct ert_ocl_ref src, sc, b, dst;
	ert_status s = ert_gpu_layernorm_plan(x, &p, err);

	if (s != ERT_OK)
		return s;
	gws = (size_t)p.rows * lws;
	s = ert_ocl_in(cl, x, st, 0, &src, err);
	if (s == ERT_OK)
		s = ert_ocl_in(cl, x, st, 1, &sc, err);
	if (s == ERT_OK && p.has_bias)
		s = ert_ocl_in(cl, x, st, 2, &b, err);
	if (s == ERT_OK)
		s = ert_ocl_out(x, 0, &dst, err);
	if (s == ERT_OK)
		s = ert_ocl_launch_add(cl, st, "norm", "layernorm_f32", 1, &gws, &lws, err);
	if (s != ERT_OK)
		return s;
	ert_ocl_arg_ref(st, &src);
	ert_ocl_arg_ref(st, &sc);
	ert_ocl_arg_ref(st, p.has_bias ? &b : &sc);
	ert_ocl_arg_int(st, p.has_bias);
	ert_ocl_arg_ref(st, &dst);
	ert_ocl_arg_int(st, (cl_int)p.len);
	ert_ocl_arg_float(st, p.epsilon);
	return ERT_OK;
}

const struct ert_ocl_op ert_ocl_ops_norm[] = {
	{ ERT_GPU_SOFTMAX, NULL, NULL, softmax_prepare, "ocl-softmax-f32" },
	{ ERT_GPU_LAYERNORM, NULL, NULL, layernorm_prepare, "ocl-layernorm-f32" },
	{ ERT_GPU_KIND_COUNT, NULL, NULL, NULL, NULL },
};
