/* SPDX-License-Identifier: MIT */
/* Elementwise float32 ops (planned in gpu-common/gpu-eltwise.c): eltwise.comp, binary*.comp. */
#include "vulkan/ops/vk-ops.h"

static ert_status unary_prepare(struct ert_vk *vk, struct ert_exec *x, struct ert_vk_step *st,
				struct ert_err *err)
{
	struct ert_gpu_unary u;
	struct ert_vk_ref in, out;
	ert_status s;

	ert_gpu_unary_plan(x, &u);
	s = ert_vk_in(vk, x, st, 0, &in, err);
	if (s == ERT_OK)
		s = ert_vk_out(x, 0, &out, err);
	if (s == ERT_OK)
		s = vk_launch_1d(vk, st,
				 vk_shader_half(vk, st, "eltwise", "eltwise.f16", "eltwise.f16a"),
				 u.n, err);
	if (s != ERT_OK)
		return s;
	ert_vk_arg_ref(st, &in);
	ert_vk_arg_ref(st, &out);
	ert_vk_arg_int(st, (int32_t)u.n);
	ert_vk_arg_int(st, u.code);
	ert_vk_arg_float(st, u.p0);
	ert_vk_arg_float(st, u.p1);
	return ERT_OK;
}

static ert_status binary_prepare(struct ert_vk *vk, struct ert_exec *x, struct ert_vk_step *st,
				 struct ert_err *err)
{
	struct ert_gpu_binary b;
	struct ert_vk_ref a, bb, c;
	ert_status s;

	ert_gpu_binary_plan(x, &b);
	s = ert_vk_in(vk, x, st, 0, &a, err);
	if (s == ERT_OK)
		s = ert_vk_in(vk, x, st, 1, &bb, err);
	if (s == ERT_OK)
		s = ert_vk_out(x, 0, &c, err);
	if (s == ERT_OK)
		s = vk_launch_1d(vk, st, b.same ?
				 vk_shader_half(vk, st, "binary_same", "binary_same.f16",
						"binary_same.f16a") :
				 vk_shader_half(vk, st, "binary", "binary.f16", "binary.f16a"), b.n,
				 err);
	if (s != ERT_OK)
		return s;
	ert_vk_arg_ref(st, &a);
	ert_vk_arg_ref(st, &bb);
	ert_vk_arg_ref(st, &c);
	ert_vk_arg_int(st, (int32_t)b.n);
	if (b.same) {
		ert_vk_arg_int(st, b.op);
		ert_vk_arg_int(st, (int32_t)b.act.type);
	} else {
		/* one push constant: the op, the rank and the activation */
		ert_vk_arg_int(st, b.op | b.rank << 8 | (int32_t)b.act.type << 16);
	}
	ert_vk_arg_float(st, b.act.p0);
	ert_vk_arg_float(st, b.act.p1);
	if (!b.same) {
		vk_arg_int8(st, b.dims, b.rank);
		vk_arg_int8(st, b.sa, b.rank);
		vk_arg_int8(st, b.sb, b.rank);
	}
	return ERT_OK;
}

const struct ert_vk_op ert_vk_ops_eltwise[] = {
	{ ERT_GPU_UNARY, NULL, unary_prepare, "vk-unary-f32" },
	{ ERT_GPU_BINARY, NULL, binary_prepare, "vk-binary-f32" },
	{ ERT_GPU_KIND_COUNT, NULL, NULL, NULL },
};
