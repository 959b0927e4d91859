/* SPDX-License-Identifier: MIT */
/*
 * Conv, Gemm and MatMul on float32 (planned in gpu-common/gpu-linalg.c):
 * conv_dw.comp for depthwise convolution, and gemm.comp's tiled shader (or
 * gemm_direct.comp on a CPU implementation) for everything else.
 */
#include <string.h>

#include "vulkan/ops/vk-ops.h"

/*
 * gemm.comp's tile: work-groups of 16 x 16 items (64 x 64 of C) where the
 * device allows 256 items a group, else 8 x 8 (32 x 32): specialization
 * constants. On a CPU implementation gemm_direct.comp (no shared memory, no
 * barriers) is the built-in choice instead (ert_vk.gemm_direct); the tuner
 * may choose either.
 */
static uint32_t gemm_side(const struct ert_vk *vk)
{
	const VkPhysicalDeviceLimits *l = &vk->props.limits;

	return l->maxComputeWorkGroupInvocations >= VK_GEMM_LX * VK_GEMM_LY &&
	       l->maxComputeWorkGroupSize[0] >= VK_GEMM_LX &&
	       l->maxComputeWorkGroupSize[1] >= VK_GEMM_LY ? VK_GEMM_LX : 8;
}

/* Add to @t gemm.comp (its float16-storage variant with @f16), groups of @side x @side items. */
static void variant_tiled(struct ert_vk_tunable *t, const struct ert_gpu_gemm *g, uint32_t side,
			  bool f16)
{
	uint32_t i = t->space.n++, tile = side * VK_GEMM_WPT;
	struct ert_tune_variant *v = &t->space.v[i];

	v->dims = 2;
	v->gws[0] = (size_t)(((uint32_t)g->n + tile - 1) / tile) * side;
	v->gws[1] = (size_t)(((uint32_t)g->m + tile - 1) / tile) * side;
	v->lws[0] = v->lws[1] = side;
	v->max_wg = side * side;
	t->shader[i] = vk_shader(f16, "gemm", "gemm.f16");
	t->spec[i][0] = t->spec[i][1] = side;
	t->spec[i][2] = VK_GEMM_TS_K;
	t->n_spec[i] = 3;
}

/*
 * The GEMM's variants, the built-in one first: gemm_direct.comp (an item per
 * column and 8 rows, gemm_direct.comp's ROWS; its group size tuned) on CPU
 * devices, else the tiled gemm.comp at the device's side; then the others
 * (the tiled shader at 8 x 8 too) for the tuner, unless ERT_VULKAN_GEMM
 * chose the shader. @f16: the shaders' float16-storage variants (a step in
 * float16, tuned apart).
 */
static void gemm_variants(const struct ert_vk *vk, const struct ert_gpu_gemm *g, bool f16,
			  struct ert_vk_tunable *t)
{
	const char *direct = vk_shader(f16, "gemm_direct", "gemm_direct.f16");
	uint64_t blocks = (uint64_t)g->n * (uint64_t)((g->m + 7) / 8);
	uint32_t side = gemm_side(vk);

	memset(t, 0, sizeof(*t));
	if (vk->gemm_direct)
		vk_variant_1d(vk, t, direct, blocks);
	if (!vk->gemm_direct || !vk->gemm_forced) {
		variant_tiled(t, g, side, f16);
		if (side != 8)
			variant_tiled(t, g, 8, f16);
	}
	if (!vk->gemm_direct && !vk->gemm_forced)
		vk_variant_1d(vk, t, direct, blocks);
	t->zgroups = (uint32_t)g->batches;
	t->name = vk_shader(f16, "gemm", "gemm.f16");
}

static ert_status gemm_launch(struct ert_vk *vk, struct ert_exec *x, struct ert_vk_step *st,
			      const struct ert_gpu_gemm *g, struct ert_err *err)
{
	struct ert_vk_ref in[4], c;
	struct ert_vk_tunable t;
	VkBuffer table;
	uint32_t ins[4], n_ins = ert_gpu_gemm_inputs(g, ins);
	ert_status s = ERT_OK;

	memset(in, 0, sizeof(in));
	for (uint32_t i = 0; i < n_ins && s == ERT_OK; i++)
		s = ert_vk_in(vk, x, st, ins[i], &in[ins[i]], err);
	if (s == ERT_OK)
		s = ert_vk_out(x, 0, &c, err);
	if (s == ERT_OK)
		s = ert_vk_table(vk, st, g->boff, 4 * g->batches, &table, err);
	if (s == ERT_OK) {
		gemm_variants(vk, g, st->f16, &t);
		s = ert_vk_launch_tunable(vk, st, &t, err);
	}
	if (s != ERT_OK)
		return s;
	ert_vk_arg_ref(st, &in[g->a_in]);
	ert_vk_arg_int(st, g->a_rs);
	ert_vk_arg_int(st, g->a_cs);
	ert_vk_arg_ref(st, &in[g->b_in]);
	ert_vk_arg_int(st, g->b_rs);
	ert_vk_arg_int(st, g->b_cs);
	ert_vk_arg_ref(st, &c);
	ert_vk_arg_int(st, g->ldc);
	ert_vk_arg_int(st, g->m);
	ert_vk_arg_int(st, g->n);
	ert_vk_arg_int(st, g->k);
	ert_vk_arg_buf(st, table);
	/* absent bias or residual: any valid buffer, never read */
	ert_vk_arg_ref(st, g->bias_in >= 0 ? &in[g->bias_in] : &c);
	ert_vk_arg_int(st, g->bias_rs);
	ert_vk_arg_int(st, g->bias_cs);
	ert_vk_arg_float(st, g->alpha);
	ert_vk_arg_float(st, g->beta);
	ert_vk_arg_ref(st, g->res_in >= 0 ? &in[g->res_in] : &c);
	ert_vk_arg_int(st, (g->bias_in >= 0 ? VK_GEMM_HAS_BIAS : 0) |
			   (g->res_in >= 0 ? VK_GEMM_HAS_RES : 0) | (g->conv ? VK_GEMM_CONV : 0) |
			   (int32_t)g->act.type << 8);
	ert_vk_arg_float(st, g->act.p0);
	ert_vk_arg_float(st, g->act.p1);
	for (int i = 0; i < 11; i++)
		ert_vk_arg_int(st, (int32_t)g->geo[i]);
	return ERT_OK;
}

/* Gemm, MatMul, and a dense or grouped Conv: the tiled GEMM. */
static ert_status gemm_prepare(struct ert_vk *vk, struct ert_exec *x, struct ert_vk_step *st,
			       struct ert_err *err)
{
	struct ert_gpu_gemm g;
	ert_status s = ert_gpu_gemm_plan(x, &g, err);

	if (s != ERT_OK)
		return s;
	s = gemm_launch(vk, x, st, &g, err);
	ert_gpu_gemm_free(&g);
	return s;
}

/*
 * The GEMM's launch within the device's work-group counts: one group along z
 * per batch (a MatMul of 65536 matrices is over lavapipe's 65535), the tiled
 * variant's groups along x and y from N and M. A 1-D launch (vk_grid) always
 * fits. Otherwise the node is refused and runs on the CPU.
 */
static bool gemm_supports(const struct ert_vk *vk, const struct ert_exec *x)
{
	struct ert_gpu_gemm g;
	struct ert_vk_tunable t;
	struct ert_err err;
	bool fits;

	if (x->node->op == ERT_OP_Conv && ert_gpu_conv_is_dw(x))
		return true;
	if (ert_gpu_gemm_plan(x, &g, &err) != ERT_OK)
		return false;
	gemm_variants(vk, &g, false, &t);
	fits = ert_vk_tunable_fits(vk, &t);
	ert_gpu_gemm_free(&g);
	return fits;
}

/* A depthwise Conv: conv_dw.comp, an item per output element. */
static ert_status conv_dw(struct ert_vk *vk, struct ert_exec *x, struct ert_vk_step *st,
			  struct ert_err *err)
{
	struct ert_gpu_conv_dw d;
	struct ert_vk_ref in, w, bias, res, out;
	ert_status s = ert_gpu_conv_dw_plan(x, &d, err);

	if (s == ERT_OK)
		s = ert_vk_in(vk, x, st, 0, &in, err);
	if (s == ERT_OK)
		s = ert_vk_in(vk, x, st, 1, &w, err);
	if (s == ERT_OK && d.has_bias)
		s = ert_vk_in(vk, x, st, 2, &bias, err);
	if (s == ERT_OK && d.has_res)
		s = ert_vk_in(vk, x, st, 3, &res, err);
	if (s == ERT_OK)
		s = ert_vk_out(x, 0, &out, err);
	if (s == ERT_OK)
		s = vk_launch_1d(vk, st, vk_shader(st->f16, "conv_dw", "conv_dw.f16"), d.n, err);
	if (s != ERT_OK)
		return s;
	ert_vk_arg_ref(st, &in);
	ert_vk_arg_ref(st, &w);
	ert_vk_arg_ref(st, &out);
	ert_vk_arg_ref(st, d.has_bias ? &bias : &out);
	ert_vk_arg_ref(st, d.has_res ? &res : &out);
	ert_vk_arg_int(st, d.has_bias | d.has_res << 1 | (int32_t)d.act.type << 8);
	ert_vk_arg_float(st, d.act.p0);
	ert_vk_arg_float(st, d.act.p1);
	vk_arg_int8(st, d.geo, 8);
	vk_arg_int8(st, d.geob, 8);
	return ERT_OK;
}

static ert_status conv_prepare(struct ert_vk *vk, struct ert_exec *x, struct ert_vk_step *st,
			       struct ert_err *err)
{
	if (!ert_gpu_conv_is_dw(x))
		return gemm_prepare(vk, x, st, err);
	x->kernel = "vk-conv-dw-f32";
	return conv_dw(vk, x, st, err);
}

const struct ert_vk_op ert_vk_ops_linalg[] = {
	{ ERT_GPU_CONV, gemm_supports, conv_prepare, "vk-conv-gemm-f32" },
	{ ERT_GPU_GEMM, gemm_supports, gemm_prepare, "vk-gemm-f32" },
	{ ERT_GPU_KIND_COUNT, NULL, NULL, NULL },
};
