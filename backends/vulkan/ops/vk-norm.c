/* SPDX-License-Identifier: MIT */
/*
 * Softmax, LogSoftmax and LayerNormalization (planned in gpu-common/gpu-norm.c):
 * softmax.comp and layernorm.comp, a work-group per row.
 */
#include "vulkan/ops/vk-ops.h"

static ert_status softmax_prepare(struct ert_vk *vk, struct ert_exec *x, struct ert_vk_step *st,
				  struct ert_err *err)
{
	struct ert_gpu_softmax p;
	struct ert_vk_ref src, dst;
	ert_status s = ert_gpu_softmax_plan(x, &p, err);

	if (s == ERT_OK)
		s = ert_vk_in(vk, x, st, 0, &src, err);
	if (s == ERT_OK)
		s = ert_vk_out(x, 0, &dst, err);
	if (s == ERT_OK)
		s = vk_launch_rows(vk, st, vk_shader_rows(vk, st, "softmax", "softmax.f16",
							       "softmax.sg", "softmax.f16.sg"),
				   p.rows, err);
	if (s != ERT_OK)
		return s;
	ert_vk_arg_ref(st, &src);
	ert_vk_arg_ref(st, &dst);
	ert_vk_arg_int(st, (int32_t)p.len);
	ert_vk_arg_int(st, (int32_t)p.inner);
	ert_vk_arg_int(st, p.log);
	ert_vk_arg_int(st, (int32_t)p.rows);
	return ERT_OK;
}

static ert_status layernorm_prepare(struct ert_vk *vk, struct ert_exec *x,
				    struct ert_vk_step *st, struct ert_err *err)
{
	struct ert_gpu_layernorm p;
	struct ert_vk_ref src, sc, b, dst;
	ert_status s = ert_gpu_layernorm_plan(x, &p, err);

	if (s == ERT_OK)
		s = ert_vk_in(vk, x, st, 0, &src, err);
	if (s == ERT_OK)
		s = ert_vk_in(vk, x, st, 1, &sc, err);
	if (s == ERT_OK && p.has_bias)
		s = ert_vk_in(vk, x, st, 2, &b, err);
	if (s == ERT_OK)
		s = ert_vk_out(x, 0, &dst, err);
	if (s == ERT_OK)
		s = vk_launch_rows(vk, st, vk_shader_rows(vk, st, "layernorm", "layernorm.f16",
							       "layernorm.sg", "layernorm.f16.sg"),
				   p.rows, err);
	if (s != ERT_OK)
		return s;
	ert_vk_arg_ref(st, &src);
	ert_vk_arg_ref(st, &sc);
	ert_vk_arg_ref(st, p.has_bias ? &b : &sc);
	ert_vk_arg_int(st, p.has_bias);
	ert_vk_arg_ref(st, &dst);
	ert_vk_arg_int(st, (int32_t)p.len);
	ert_vk_arg_float(st, p.epsilon);
	ert_vk_arg_int(st, (int32_t)p.rows);
	return ERT_OK;
}

const struct ert_vk_op ert_vk_ops_norm[] = {
	{ ERT_GPU_SOFTMAX, NULL, softmax_prepare, "vk-softmax-f32" },
	{ ERT_GPU_LAYERNORM, NULL, layernorm_prepare, "vk-layernorm-f32" },
	{ ERT_GPU_KIND_COUNT, NULL, NULL, NULL },
};
