/* SPDX-License-Identifier: MIT */
/*
 * Conv, Gemm and MatMul on float32. Everything but depthwise convolution runs
 * on gemm.comp's tiled shader: Gemm and MatMul with their transposes as
 * strides and their batches as a table of offsets, dense and grouped
 * convolutions as an implicit GEMM per image and group (1x1 convolutions of
 * stride 1 as a plain one). Fused activations ("ert.act"), Conv's residual
 * ("ert.residual", input 3), bias and Gemm's C are applied in its epilogue.
 */
#include <stdlib.h>
#include <string.h>

#include "ops/linalg-geom.h"
#include "vulkan/ops/vk-ops.h"

/* What one gemm.comp launch computes. */
struct gemm_desc {
	struct ert_vk_ref a, b, c, bias, res;
	int32_t a_rs, a_cs, b_rs, b_cs, ldc, m, n, k;
	int32_t bias_rs, bias_cs;
	bool has_bias, has_res;
	float alpha, beta;
	struct ert_act_desc act;
	bool conv;
	int64_t geo[11];             /* H, W, KH, KW, sh, sw, ph, pw, dh, dw, OW */
	const int32_t *boff;         /* 4 offsets per batch */
	size_t batches;
};

/*
 * gemm.comp's tile: work-groups of 16 x 16 items (64 x 64 of C) where the
 * device allows 256 items a group, else 8 x 8 (32 x 32): specialization
 * constants. On a CPU implementation gemm_direct.comp (no shared memory, no
 * barriers) runs instead (ert_vk.gemm_direct).
 */
static uint32_t gemm_side(const struct ert_vk *vk)
{
	const VkPhysicalDeviceLimits *l = &vk->props.limits;

	return l->maxComputeWorkGroupInvocations >= VK_GEMM_LX * VK_GEMM_LY &&
	       l->maxComputeWorkGroupSize[0] >= VK_GEMM_LX &&
	       l->maxComputeWorkGroupSize[1] >= VK_GEMM_LY ? VK_GEMM_LX : 8;
}

static ert_status gemm_launch(struct ert_vk *vk, struct ert_vk_step *st,
			      const struct gemm_desc *g, struct ert_err *err)
{
	uint32_t side = gemm_side(vk), tile = side * VK_GEMM_WPT;
	uint32_t spec[3] = { side, side, VK_GEMM_TS_K };
	uint32_t groups[3] = { ((uint32_t)g->n + tile - 1) / tile, ((uint32_t)g->m + tile - 1) / tile,
			       (uint32_t)g->batches };
	VkBuffer table;
	ert_status s = ert_vk_table(vk, st, g->boff, 4 * g->batches, &table, err);

	if (s == ERT_OK && vk->gemm_direct) {
		/* an item per column and 8 rows (gemm_direct.comp's ROWS) */
		uint64_t blocks = (uint64_t)g->n * (uint64_t)((g->m + 7) / 8);

		spec[0] = VK_WG_1D;
		vk_grid((blocks + VK_WG_1D - 1) / VK_WG_1D, groups);
		groups[2] = (uint32_t)g->batches;
		s = ert_vk_launch_add(vk, st, "gemm_direct", spec, 1, groups, err);
	} else if (s == ERT_OK) {
		s = ert_vk_launch_add(vk, st, "gemm", spec, 3, groups, err);
	}
	if (s != ERT_OK)
		return s;
	ert_vk_arg_ref(st, &g->a);
	ert_vk_arg_int(st, g->a_rs);
	ert_vk_arg_int(st, g->a_cs);
	ert_vk_arg_ref(st, &g->b);
	ert_vk_arg_int(st, g->b_rs);
	ert_vk_arg_int(st, g->b_cs);
	ert_vk_arg_ref(st, &g->c);
	ert_vk_arg_int(st, g->ldc);
	ert_vk_arg_int(st, g->m);
	ert_vk_arg_int(st, g->n);
	ert_vk_arg_int(st, g->k);
	ert_vk_arg_buf(st, table);
	/* absent bias or residual: any valid buffer, never read */
	ert_vk_arg_ref(st, g->has_bias ? &g->bias : &g->c);
	ert_vk_arg_int(st, g->bias_rs);
	ert_vk_arg_int(st, g->bias_cs);
	ert_vk_arg_float(st, g->alpha);
	ert_vk_arg_float(st, g->beta);
	ert_vk_arg_ref(st, g->has_res ? &g->res : &g->c);
	ert_vk_arg_int(st, (g->has_bias ? VK_GEMM_HAS_BIAS : 0) | (g->has_res ? VK_GEMM_HAS_RES : 0) |
			   (g->conv ? VK_GEMM_CONV : 0) | (int32_t)g->act.type << 8);
	ert_vk_arg_float(st, g->act.p0);
	ert_vk_arg_float(st, g->act.p1);
	for (int i = 0; i < 11; i++)
		ert_vk_arg_int(st, (int32_t)g->geo[i]);
	return ERT_OK;
}

static int32_t *table_alloc(size_t batches, const struct ert_node *n, struct ert_err *err)
{
	int32_t *t = calloc(batches ? 4 * batches : 4, sizeof(*t));

	if (!t)
		ert_err_set(err, "vulkan: out of memory preparing %s '%s'", ert_op_name(n->op),
			    n->name);
	return t;
}

/* ---- Conv ---- */

/* Geometry of a 1-D or 2-D Conv; false for other ranks or bad attributes. */
static bool conv_geom(const struct ert_exec *x, struct ert_conv_geom *g)
{
	const struct ert_value *in = x->in[0], *w = x->in[1];
	struct ert_err err;

	if (in->rank < 3 || in->rank > 4 || w->rank != in->rank)
		return false;
	return ert_geom_conv(x->node, in->rank - 2, in->dims + 2, w->dims + 2, false, g, &err) ==
	       ERT_OK && g->nsp <= 2;
}

static bool conv_supports(const struct ert_vk *vk, const struct ert_exec *x)
{
	const struct ert_value *r = ert_gpu_opt_in(x, 3);
	struct ert_conv_geom g;
	int64_t group = ert_attr_int(x->node, "group", 1);

	if (x->n_in < 2 || !ert_gpu_is_f32(x->in[0]) || !ert_gpu_is_f32(x->in[1]) ||
	    !ert_gpu_all_f32(x, 4) || x->n_out != 1 || !conv_geom(x, &g))
		return false;
	if (group < 1 || x->in[0]->dims[1] % group || x->in[1]->dims[0] % group)
		return false;
	return !r || r->numel == x->out[0]->numel;
}

static ert_status conv_dw(struct ert_vk *vk, struct ert_exec *x, struct ert_vk_step *st,
			  const struct ert_conv_geom *g, const struct ert_vk_ref *in,
			  const struct ert_vk_ref *w, const struct ert_vk_ref *bias,
			  const struct ert_vk_ref *res, const struct ert_vk_ref *out,
			  struct ert_err *err)
{
	const struct ert_value *xv = x->in[0], *y = x->out[0];
	int64_t oc = x->in[1]->dims[0], c = xv->dims[1];
	int64_t geo[8] = { g->in[1], g->in[2], g->k[1], g->k[2], g->stride[1], g->stride[2],
			   g->pad_b[1], g->pad_b[2] };
	int64_t geob[8] = { g->dil[1], g->dil[2], g->out[1], g->out[2], c, oc, oc / c,
			    xv->dims[0] };
	struct ert_act_desc act = ert_node_act(x->node);
	ert_status s = vk_launch_1d(vk, st, "conv_dw", y->numel, err);

	if (s != ERT_OK)
		return s;
	ert_vk_arg_ref(st, in);
	ert_vk_arg_ref(st, w);
	ert_vk_arg_ref(st, out);
	ert_vk_arg_ref(st, bias ? bias : out);
	ert_vk_arg_ref(st, res ? res : out);
	ert_vk_arg_int(st, (bias != NULL) | (res != NULL) << 1 | (int32_t)act.type << 8);
	ert_vk_arg_float(st, act.p0);
	ert_vk_arg_float(st, act.p1);
	vk_arg_int8(st, geo, 8);
	vk_arg_int8(st, geob, 8);
	return ERT_OK;
}

static ert_status conv_prepare(struct ert_vk *vk, struct ert_exec *x, struct ert_vk_step *st,
			       struct ert_err *err)
{
	const struct ert_value *xv = x->in[0], *w = x->in[1];
	bool has_bias = ert_gpu_opt_in(x, 2) != NULL, has_res = ert_gpu_opt_in(x, 3) != NULL;
	struct ert_vk_ref in, wr, bias, res, out;
	struct ert_conv_geom g;
	ert_status s;

	if (!conv_geom(x, &g)) {
		ert_err_set(err, "vulkan: Conv '%s': unsupported geometry", x->node->name);
		return ERT_STATUS_UNSUPPORTED;
	}
	s = ert_vk_in(vk, x, st, 0, &in, err);
	if (s == ERT_OK)
		s = ert_vk_in(vk, x, st, 1, &wr, err);
	if (s == ERT_OK && has_bias)
		s = ert_vk_in(vk, x, st, 2, &bias, err);
	if (s == ERT_OK && has_res)
		s = ert_vk_in(vk, x, st, 3, &res, err);
	if (s == ERT_OK)
		s = ert_vk_out(x, 0, &out, err);
	if (s != ERT_OK)
		return s;
	if (w->dims[1] == 1) {
		x->kernel = "vk-conv-dw-f32";
		return conv_dw(vk, x, st, &g, &in, &wr, has_bias ? &bias : NULL,
			       has_res ? &res : NULL, &out, err);
	}

	int64_t group = ert_attr_int(x->node, "group", 1);
	int64_t nimg = xv->dims[0], c = xv->dims[1], oc = w->dims[0];
	int64_t cg = c / group, ocg = oc / group;
	int64_t hw = g.in[1] * g.in[2], p = g.out[1] * g.out[2], k = cg * g.k[1] * g.k[2];
	bool pointwise = g.k[1] == 1 && g.k[2] == 1 && g.stride[1] == 1 && g.stride[2] == 1 &&
			 !g.pad_b[1] && !g.pad_b[2] && !g.pad_e[1] && !g.pad_e[2];
	struct gemm_desc d = {
		.a = wr, .b = in, .c = out, .bias = bias, .res = res,
		.a_rs = (int32_t)k, .a_cs = 1, .b_rs = (int32_t)hw, .b_cs = 1,
		.ldc = (int32_t)p, .m = (int32_t)ocg, .n = (int32_t)p, .k = (int32_t)k,
		.bias_rs = 1, .bias_cs = 0, .has_bias = has_bias, .has_res = has_res,
		.alpha = 1.0f, .beta = 1.0f, .act = ert_node_act(x->node), .conv = !pointwise,
		.geo = { g.in[1], g.in[2], g.k[1], g.k[2], g.stride[1], g.stride[2], g.pad_b[1],
			 g.pad_b[2], g.dil[1], g.dil[2], g.out[2] },
		.batches = (size_t)(nimg * group),
	};
	int32_t *boff = table_alloc(d.batches, x->node, err);

	if (!boff)
		return ERT_STATUS_OUT_OF_MEMORY;
	for (int64_t n = 0; n < nimg; n++) {
		for (int64_t gi = 0; gi < group; gi++) {
			int32_t *t = boff + 4 * (n * group + gi);

			t[0] = (int32_t)(gi * ocg * k);
			t[1] = (int32_t)((n * c + gi * cg) * hw);
			t[2] = (int32_t)((n * oc + gi * ocg) * p);
			t[3] = (int32_t)(gi * ocg);
		}
	}
	d.boff = boff;
	s = gemm_launch(vk, st, &d, err);
	free(boff);
	return s;
}

/* ---- Gemm ---- */

static bool gemm_supports(const struct ert_vk *vk, const struct ert_exec *x)
{
	return x->n_in >= 2 && ert_gpu_is_f32(x->in[0]) && ert_gpu_is_f32(x->in[1]) &&
	       ert_gpu_all_f32(x, 3) && x->in[0]->rank == 2 && x->in[1]->rank == 2;
}

static ert_status gemm_prepare(struct ert_vk *vk, struct ert_exec *x, struct ert_vk_step *st,
			       struct ert_err *err)
{
	const struct ert_value *a = x->in[0], *c = ert_gpu_opt_in(x, 2);
	bool ta = ert_attr_int(x->node, "transA", 0) != 0;
	bool tb = ert_attr_int(x->node, "transB", 0) != 0;
	int64_t m = x->out[0]->dims[0], n = x->out[0]->dims[1], k = a->dims[ta ? 0 : 1];
	int32_t boff[4] = { 0, 0, 0, 0 };
	struct gemm_desc d = {
		.a_rs = (int32_t)(ta ? 1 : k), .a_cs = (int32_t)(ta ? m : 1),
		.b_rs = (int32_t)(tb ? 1 : n), .b_cs = (int32_t)(tb ? k : 1),
		.ldc = (int32_t)n, .m = (int32_t)m, .n = (int32_t)n, .k = (int32_t)k,
		.has_bias = c && c->numel > 0,
		.alpha = ert_attr_float(x->node, "alpha", 1.0f),
		.beta = ert_attr_float(x->node, "beta", 1.0f),
		.act = ert_node_act(x->node), .boff = boff, .batches = 1,
	};
	ert_status s = ert_vk_in(vk, x, st, 0, &d.a, err);

	if (s == ERT_OK)
		s = ert_vk_in(vk, x, st, 1, &d.b, err);
	if (s == ERT_OK && d.has_bias)
		s = ert_vk_in(vk, x, st, 2, &d.bias, err);
	if (s == ERT_OK)
		s = ert_vk_out(x, 0, &d.c, err);
	if (s != ERT_OK)
		return s;
	if (d.has_bias) {
		/* C broadcast to M x N, aligned on the right */
		int64_t rows = c->rank == 2 ? c->dims[0] : 1, cols = c->rank ? c->dims[c->rank - 1] : 1;

		d.bias_rs = rows == 1 ? 0 : (int32_t)cols;
		d.bias_cs = cols == 1 ? 0 : 1;
	}
	return gemm_launch(vk, st, &d, err);
}

/* ---- MatMul ---- */

static bool matmul_supports(const struct ert_vk *vk, const struct ert_exec *x)
{
	return x->n_in == 2 && ert_gpu_is_f32(x->in[0]) && ert_gpu_is_f32(x->in[1]) &&
	       ert_gpu_all_f32(x, 2) && x->out[0]->rank <= ERT_MAX_RANK;
}

static ert_status matmul_prepare(struct ert_vk *vk, struct ert_exec *x, struct ert_vk_step *st,
				 struct ert_err *err)
{
	const struct ert_value *a = x->in[0], *b = x->in[1];
	int ra = a->rank, rb = b->rank;
	int64_t m = ra == 1 ? 1 : a->dims[ra - 2], k = a->dims[ra - 1];
	int64_t n = rb == 1 ? 1 : b->dims[rb - 1];
	/* batch dims: A's and B's leading dims, broadcast, aligned on the right */
	int na = ra > 2 ? ra - 2 : 0, nb = rb > 2 ? rb - 2 : 0, nbat = na > nb ? na : nb;
	int64_t bdims[ERT_MAX_RANK], sa[ERT_MAX_RANK], sb[ERT_MAX_RANK];
	int64_t batches = 1, astep = m * k, bstep = k * n, sa_acc = 1, sb_acc = 1;
	struct gemm_desc d = {
		.a_rs = (int32_t)k, .a_cs = 1, .b_rs = (int32_t)n, .b_cs = 1,
		.ldc = (int32_t)n, .m = (int32_t)m, .n = (int32_t)n, .k = (int32_t)k,
		.alpha = 1.0f, .beta = 0.0f, .act = ert_node_act(x->node),
	};
	int32_t *boff;
	ert_status s;

	if (rb == 1) {
		d.b_rs = 1;
		d.b_cs = 0;
	}
	for (int i = nbat - 1; i >= 0; i--) {
		int ia = i - (nbat - na), ib = i - (nbat - nb);
		int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;

		bdims[i] = da > db ? da : db;
		sa[i] = da == 1 ? 0 : astep * sa_acc;
		sb[i] = db == 1 ? 0 : bstep * sb_acc;
		sa_acc *= da;
		sb_acc *= db;
		batches *= bdims[i];
	}
	d.batches = (size_t)batches;
	boff = table_alloc(d.batches, x->node, err);
	if (!boff)
		return ERT_STATUS_OUT_OF_MEMORY;
	for (int64_t z = 0; z < batches; z++) {
		int64_t r = z, oa = 0, ob = 0;

		for (int i = nbat - 1; i >= 0; i--) {
			int64_t ci = r % bdims[i];

			r /= bdims[i];
			oa += ci * sa[i];
			ob += ci * sb[i];
		}
		boff[4 * z] = (int32_t)oa;
		boff[4 * z + 1] = (int32_t)ob;
		boff[4 * z + 2] = (int32_t)(z * m * n);
	}
	d.boff = boff;
	s = ert_vk_in(vk, x, st, 0, &d.a, err);
	if (s == ERT_OK)
		s = ert_vk_in(vk, x, st, 1, &d.b, err);
	if (s == ERT_OK)
		s = ert_vk_out(x, 0, &d.c, err);
	if (s == ERT_OK)
		s = gemm_launch(vk, st, &d, err);
	free(boff);
	return s;
}

const struct ert_vk_op ert_vk_ops_linalg[] = {
	{ ERT_OP_Conv, conv_supports, conv_prepare, "vk-conv-gemm-f32" },
	{ ERT_OP_Gemm, gemm_supports, gemm_prepare, "vk-gemm-f32" },
	{ ERT_OP_MatMul, matmul_supports, matmul_prepare, "vk-gemm-f32" },
	{ ERT_OP_COUNT, NULL, NULL, NULL },
};
