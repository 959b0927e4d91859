/* SPDX-License-Identifier: MIT */
/*
 * Ops that move elements (planned in gpu-common/gpu-movement.c): the views
 * as a buffer copy, Transpose, Slice and Concat as strided copies
 * (copy_nd.comp) and Gather with planning-time indices (gather.comp).
 */
#include "vulkan/ops/vk-ops.h"

_Static_assert(ERT_VK_MAX_LAUNCHES >= ERT_GPU_MAX_COPIES, "a Concat's copies fit a step");

static ert_status view_prepare(struct ert_vk *vk, struct ert_exec *x, struct ert_vk_step *st,
			       struct ert_err *err)
{
	struct ert_vk_ref src, dst;
	ert_status s = ert_vk_in(vk, x, st, 0, &src, err);

	if (s == ERT_OK)
		s = ert_vk_out(x, 0, &dst, err);
	if (s == ERT_OK)
		s = ert_vk_copy_add(st, &src, &dst, src.es, (size_t)x->out[0]->numel * src.es, err);
	return s;
}

/* One copy_nd launch of @c from @src to @dst. */
static ert_status copy_nd(struct ert_vk *vk, struct ert_vk_step *st, const struct ert_gpu_copy *c,
			  const struct ert_vk_ref *src, const struct ert_vk_ref *dst,
			  struct ert_err *err)
{
	struct ert_vk_ref s_at = *src, d_at = *dst;
	ert_status s;

	if (!c->n)
		return ERT_OK;
	s = vk_launch_1d(vk, st, vk_shader(src->es == 2, "copy_nd", "copy_nd.f16"), c->n, err);
	if (s != ERT_OK)
		return s;
	s_at.off += (int32_t)c->s_base;
	d_at.off += (int32_t)c->d_base;
	ert_vk_arg_ref(st, &s_at);
	ert_vk_arg_ref(st, &d_at);
	ert_vk_arg_int(st, (int32_t)c->n);
	ert_vk_arg_int(st, c->rank);
	vk_arg_int8(st, c->dims, c->rank);
	vk_arg_int8(st, c->ss, c->rank);
	vk_arg_int8(st, c->ds, c->rank);
	return ERT_OK;
}

/* Transpose, Slice and Concat: a strided copy per input. */
static ert_status copy_prepare(struct ert_vk *vk, struct ert_exec *x, struct ert_vk_step *st,
			       struct ert_err *err)
{
	struct ert_gpu_copy c[ERT_GPU_MAX_COPIES];
	struct ert_vk_ref src, dst;
	uint32_t n;
	ert_status s = ert_gpu_copy_plan(x, c, &n, err);

	if (s == ERT_OK)
		s = ert_vk_out(x, 0, &dst, err);
	for (uint32_t k = 0; k < n && s == ERT_OK; k++) {
		s = ert_vk_in(vk, x, st, c[k].in, &src, err);
		if (s == ERT_OK)
			s = copy_nd(vk, st, &c[k], &src, &dst, err);
	}
	return s;
}

static ert_status gather_prepare(struct ert_vk *vk, struct ert_exec *x, struct ert_vk_step *st,
				 struct ert_err *err)
{
	struct ert_gpu_gather g;
	VkBuffer buf;
	struct ert_vk_ref src, dst;
	ert_status s = ert_gpu_gather_plan(x, &g, err);

	if (s != ERT_OK)
		return s;
	s = ert_vk_table(vk, st, g.table, (size_t)g.nidx, &buf, err);
	ert_gpu_gather_free(&g);
	if (s == ERT_OK)
		s = ert_vk_in(vk, x, st, 0, &src, err);
	if (s == ERT_OK)
		s = ert_vk_out(x, 0, &dst, err);
	if (s == ERT_OK)
		s = vk_launch_1d(vk, st, vk_shader(src.es == 2, "gather", "gather.f16"), g.n, err);
	if (s != ERT_OK)
		return s;
	ert_vk_arg_ref(st, &src);
	ert_vk_arg_ref(st, &dst);
	ert_vk_arg_int(st, (int32_t)g.n);
	ert_vk_arg_int(st, (int32_t)g.inner);
	ert_vk_arg_int(st, (int32_t)g.nidx);
	ert_vk_arg_int(st, (int32_t)g.axis_len);
	ert_vk_arg_buf(st, buf);
	return ERT_OK;
}

const struct ert_vk_op ert_vk_ops_movement[] = {
	{ ERT_GPU_VIEW, NULL, view_prepare, "vk-copy" },
	{ ERT_GPU_COPY, NULL, copy_prepare, "vk-copy-nd-u32" },
	{ ERT_GPU_GATHER, NULL, gather_prepare, "vk-gather-u32" },
	{ ERT_GPU_KIND_COUNT, NULL, NULL, NULL },
};
