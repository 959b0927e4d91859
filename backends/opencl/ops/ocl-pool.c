/* SPDX-License-Identifier: MIT */
/* MaxPool, AveragePool (1-D, 2-D) and the global pools on float32, NCHW. */
#include "ops/linalg-geom.h"
#include "opencl/ops/ocl-ops.h"

static bool pool_geom(const struct ert_exec *x, struct ert_conv_geom *g)
{
	const struct ert_value *in = x->in[0];
	uint32_t nk;
	const int64_t *ks = ert_attr_ints(x->node, "kernel_shape", &nk);
	struct ert_err err;

	if (in->rank < 3 || in->rank > 4 || !ks || (int32_t)nk != in->rank - 2)
		return false;
	return ert_geom_conv(x->node, in->rank - 2, in->dims + 2, ks,
			     ert_attr_int(x->node, "ceil_mode", 0) != 0, g, &err) == ERT_OK &&
	       g->nsp <= 2;
}

static bool pool_supports(const struct ert_ocl *cl, const struct ert_exec *x)
{
	struct ert_conv_geom g;

	/* MaxPool's Indices output stays on the CPU */
	if (x->n_out > 1 && x->out[1])
		return false;
	return x->n_in == 1 && ert_gpu_is_f32(x->in[0]) && ert_gpu_all_f32(x, 1) && pool_geom(x, &g);
}

static ert_status pool_prepare(struct ert_ocl *cl, struct ert_exec *x, struct ert_ocl_step *st,
			       struct ert_err *err)
{
	const struct ert_value *in = x->in[0];
	struct ert_conv_geom g;
	struct ert_ocl_ref src, dst;
	int mode = ERT_GPU_POOL_MAX;
	cl_int geo8[8], geob8[8];
	ert_status s;

	if (!pool_geom(x, &g)) {
		ert_err_set(err, "opencl: %s '%s': unsupported geometry", ert_op_name(x->node->op),
			    x->node->name);
		return ERT_STATUS_UNSUPPORTED;
	}
	if (x->node->op == ERT_OP_AveragePool)
		mode = ert_attr_int(x->node, "count_include_pad", 0) ? ERT_GPU_POOL_AVG_PAD : ERT_GPU_POOL_AVG;
	int64_t geo[8] = { g.in[1], g.in[2], g.k[1], g.k[2], g.stride[1], g.stride[2],
			   g.pad_b[1], g.pad_b[2] };
	int64_t geob[8] = { g.dil[1], g.dil[2], g.out[1], g.out[2], in->dims[0] * in->dims[1] };

	s = ert_ocl_in(cl, x, st, 0, &src, err);
	if (s == ERT_OK)
		s = ert_ocl_out(x, 0, &dst, err);
	if (s == ERT_OK)
		s = ocl_launch_1d(cl, st, "pool", "pool2d_f32", x->out[0]->numel, err);
	if (s != ERT_OK)
		return s;
	ocl_int8(geo8, geo, 8);
	ocl_int8(geob8, geob, 8);
	ert_ocl_arg_ref(st, &src);
	ert_ocl_arg_ref(st, &dst);
	ert_ocl_arg_int(st, mode);
	ert_ocl_arg_int8(st, geo8);
	ert_ocl_arg_int8(st, geob8);
	return ERT_OK;
}

static bool global_supports(const struct ert_ocl *cl, const struct ert_exec *x)
{
	return x->n_in == 1 && ert_gpu_is_f32(x->in[0]) && ert_gpu_all_f32(x, 1) && x->in[0]->rank >= 3;
}

/* Each N x C plane reduced to one value by a work-group (pool.cl). */
static ert_status global_prepare(struct ert_ocl *cl, struct ert_exec *x, struct ert_ocl_step *st,
				 struct ert_err *err)
{
	const struct ert_value *in = x->in[0];
	int64_t planes = in->dims[0] * in->dims[1];
	size_t gws = (size_t)planes * 64, lws = 64;
	struct ert_ocl_ref src, dst;
	ert_status s = ert_ocl_in(cl, x, st, 0, &src, err);

	if (s == ERT_OK)
		s = ert_ocl_out(x, 0, &dst, err);
	if (s == ERT_OK)
		s = ert_ocl_launch_add(cl, st, "pool", "plane_reduce_f32", 1, &gws, &lws, err);
	if (s != ERT_OK)
		return s;
	ert_ocl_arg_ref(st, &src);
	ert_ocl_arg_ref(st, &dst);
	ert_ocl_arg_int(st, (cl_int)(planes ? in->numel / planes : 0));
	ert_ocl_arg_int(st, x->node->op == ERT_OP_GlobalMaxPool ? ERT_GPU_POOL_MAX : ERT_GPU_POOL_AVG);
	return ERT_OK;
}

const struct ert_ocl_op ert_ocl_ops_pool[] = {
	{ ERT_OP_MaxPool, pool_supports, NULL, pool_prepare, "ocl-pool2d-f32" },
	{ ERT_OP_AveragePool, pool_supports, NULL, pool_prepare, "ocl-pool2d-f32" },
	{ ERT_OP_GlobalAveragePool, global_supports, NULL, global_prepare, "ocl-plane-reduce-f32" },
	{ ERT_OP_GlobalMaxPool, global_supports, NULL, global_prepare, "ocl-plane-reduce-f32" },
	{ ERT_OP_COUNT, NULL, NULL, NULL, NULL },
};
