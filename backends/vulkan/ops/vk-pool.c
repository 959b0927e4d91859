/* SPDX-License-Identifier: MIT */
/*
 * MaxPool, AveragePool and the global pools (planned in gpu-common/gpu-pool.c):
 * pool2d.comp, plane_reduce.comp.
 */
#include "vulkan/ops/vk-ops.h"

static ert_status pool_prepare(struct ert_vk *vk, struct ert_exec *x, struct ert_vk_step *st,
			       struct ert_err *err)
{
	struct ert_gpu_pool p;
	struct ert_vk_ref src, dst;
	ert_status s = ert_gpu_pool_plan(x, &p, err);

	if (s == ERT_OK)
		s = ert_vk_in(vk, x, st, 0, &src, err);
	if (s == ERT_OK)
		s = ert_vk_out(x, 0, &dst, err);
	if (s == ERT_OK)
		s = vk_launch_1d(vk, st, vk_shader(st->f16, "pool2d", "pool2d.f16"), p.n, err);
	if (s != ERT_OK)
		return s;
	ert_vk_arg_ref(st, &src);
	ert_vk_arg_ref(st, &dst);
	ert_vk_arg_int(st, p.mode);
	vk_arg_int8(st, p.geo, 8);
	vk_arg_int8(st, p.geob, 8);
	return ERT_OK;
}

/* Each N x C plane reduced to one value by a work-group. */
static ert_status global_prepare(struct ert_vk *vk, struct ert_exec *x, struct ert_vk_step *st,
				 struct ert_err *err)
{
	struct ert_gpu_plane_reduce p;
	struct ert_vk_ref src, dst;
	ert_status s;

	ert_gpu_plane_reduce_plan(x, &p);
	s = ert_vk_in(vk, x, st, 0, &src, err);
	if (s == ERT_OK)
		s = ert_vk_out(x, 0, &dst, err);
	if (s == ERT_OK)
		s = vk_launch_rows(vk, st, vk_shader_rows(vk, st, "plane_reduce", "plane_reduce.f16",
							       "plane_reduce.sg", "plane_reduce.f16.sg"),
				   p.planes, err);
	if (s != ERT_OK)
		return s;
	ert_vk_arg_ref(st, &src);
	ert_vk_arg_ref(st, &dst);
	ert_vk_arg_int(st, (int32_t)p.len);
	ert_vk_arg_int(st, p.mode);
	ert_vk_arg_int(st, (int32_t)p.planes);
	return ERT_OK;
}

const struct ert_vk_op ert_vk_ops_pool[] = {
	{ ERT_GPU_POOL, NULL, pool_prepare, "vk-pool2d-f32" },
	{ ERT_GPU_PLANE_REDUCE, NULL, global_prepare, "vk-plane-reduce-f32" },
	{ ERT_GPU_KIND_COUNT, NULL, NULL, NULL },
};
