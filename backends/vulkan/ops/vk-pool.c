/* SPDX-License-Identifier: MIT */
/* MaxPool, AveragePool (1-D, 2-D) and the global pools on float32, NCHW. */
#include "ops/linalg-geom.h"
#include "vulkan/ops/vk-ops.h"

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

static bool pool_supports(const struct ert_vk *vk, const struct ert_exec *x)
{
	struct ert_conv_geom g;

	/* MaxPool's Indices output stays on the CPU */
	if (x->n_out > 1 && x->out[1])
		return false;
	return x->n_in == 1 && ert_gpu_is_f32(x->in[0]) && ert_gpu_all_f32(x, 1) &&
	       pool_geom(x, &g);
}

static ert_status pool_prepare(struct ert_vk *vk, struct ert_exec *x, struct ert_vk_step *st,
			       struct ert_err *err)
{
	const struct ert_value *in = x->in[0];
	struct ert_conv_geom g;
	struct ert_vk_ref src, dst;
	int mode = ERT_GPU_POOL_MAX;
	ert_status s;

	if (!pool_geom(x, &g)) {
		ert_err_set(err, "vulkan: %s '%s': unsupported geometry", ert_op_name(x->node->op),
			    x->node->name);
		return ERT_STATUS_UNSUPPORTED;
	}
	if (x->node->op == ERT_OP_AveragePool)
		mode = ert_attr_int(x->node, "count_include_pad", 0) ? ERT_GPU_POOL_AVG_PAD : ERT_GPU_POOL_AVG;

	int64_t geo[8] = { g.in[1], g.in[2], g.k[1], g.k[2], g.stride[1], g.stride[2],
			   g.pad_b[1], g.pad_b[2] };
	int64_t geob[8] = { g.dil[1], g.dil[2], g.out[1], g.out[2], in->dims[0] * in->dims[1] };

	s = ert_vk_in(vk, x, st, 0, &src, err);
	if (s == ERT_OK)
		s = ert_vk_out(x, 0, &dst, err);
	if (s == ERT_OK)
		s = vk_launch_1d(vk, st, "pool2d", x->out[0]->numel, err);
	if (s != ERT_OK)
		return s;
	ert_vk_arg_ref(st, &src);
	ert_vk_arg_ref(st, &dst);
	ert_vk_arg_int(st, mode);
	vk_arg_int8(st, geo, 8);
	vk_arg_int8(st, geob, 8);
	return ERT_OK;
}

static bool global_supports(const struct ert_vk *vk, const struct ert_exec *x)
{
	return x->n_in == 1 && ert_gpu_is_f32(x->in[0]) && ert_gpu_all_f32(x, 1) &&
	       x->in[0]->rank >= 3;
}

/* Each N x C plane reduced to one value by a work-group (plane_reduce.comp). */
static ert_status global_prepare(struct ert_vk *vk, struct ert_exec *x, struct ert_vk_step *st,
				 struct ert_err *err)
{
	const struct ert_value *in = x->in[0];
	int64_t planes = in->dims[0] * in->dims[1];
	struct ert_vk_ref src, dst;
	ert_status s = ert_vk_in(vk, x, st, 0, &src, err);

	if (s == ERT_OK)
		s = ert_vk_out(x, 0, &dst, err);
	if (s == ERT_OK)
		s = vk_launch_rows(vk, st, "plane_reduce", planes, err);
	if (s != ERT_OK)
		return s;
	ert_vk_arg_ref(st, &src);
	ert_vk_arg_ref(st, &dst);
	ert_vk_arg_int(st, (int32_t)(planes ? in->numel / planes : 0));
	ert_vk_arg_int(st, x->node->op == ERT_OP_GlobalMaxPool ? ERT_GPU_POOL_MAX : ERT_GPU_POOL_AVG);
	ert_vk_arg_int(st, (int32_t)planes);
	return ERT_OK;
}

const struct ert_vk_op ert_vk_ops_pool[] = {
	{ ERT_OP_MaxPool, pool_supports, pool_prepare, "vk-pool2d-f32" },
	{ ERT_OP_AveragePool, pool_supports, pool_prepare, "vk-pool2d-f32" },
	{ ERT_OP_GlobalAveragePool, global_supports, global_prepare, "vk-plane-reduce-f32" },
	{ ERT_OP_GlobalMaxPool, global_supports, global_prepare, "vk-plane-reduce-f32" },
	{ ERT_OP_COUNT, NULL, NULL, NULL },
};
