/* SPDX-License-Identifier: MIT */
/*
 * Conv, Gemm and MatMul on float32. Everything but depthwise convolution runs
 * on gemm.cl's tiled kernel: Gemm and MatMul with their transposes as
 * strides and their batches as a table of offsets, dense and grouped
 * convolutions as an implicit GEMM per image and group (1x1 convolutions of
 * stride 1 as a plain one). Fused activations ("ert.act"), Conv's residual
 * ("ert.residual", input 3), bias and Gemm's C are applied in its epilogue.
 */
#include <stdlib.h>
#include <string.h>

#include "ops/linalg-geom.h"
#include "opencl/ops/ocl-ops.h"

/* What one gemm_f32 launch computes (see gemm.cl). */
struct gemm_desc {
	struct ert_ocl_ref a, b, c, bias, res;
	cl_int a_rs, a_cs, b_rs, b_cs, ldc, m, n, k;
	cl_int bias_rs, bias_cs;
	bool has_bias, has_res;
	float alpha, beta;
	struct ert_act_desc act;
	bool conv;
	int64_t geo[8], geob[8];
	const cl_int *boff;          /* 4 offsets per batch */
	size_t batches;
};

#define GEMM_WG_N (OCL_GEMM_TS_N / OCL_GEMM_WPT_N)
#define GEMM_WG_M (OCL_GEMM_TS_M / OCL_GEMM_WPT_M)

static bool gemm_fits(const struct ert_ocl *cl)
{
	return cl->max_wg >= GEMM_WG_N * GEMM_WG_M &&
	       cl->local_mem >= OCL_GEMM_TS_K * (OCL_GEMM_TS_M + 1 + OCL_GEMM_TS_N) * sizeof(float);
}

/*
 * The kernels gemm.cl has for @g, the 64x64 tiles first (the built-in
 * choice): 32x32 tiles when 64x64 ones give fewer work-groups than four
 * per compute unit (late layers of a CNN at batch 1), the one-element-per-
 * group kernel for M of at most 4 rows (classifier heads). The tuner picks.
 */
static uint32_t gemm_variants(const struct ert_ocl *cl, const struct gemm_desc *g, bool is_conv,
			      struct ert_ocl_variant *v)
{
	size_t m = (size_t)g->m, n = (size_t)g->n;
	size_t groups = ert_ocl_round_up(n, OCL_GEMM_TS_N) / OCL_GEMM_TS_N *
			(ert_ocl_round_up(m, OCL_GEMM_TS_M) / OCL_GEMM_TS_M) * g->batches;
	/* test hook: every product on one kernel, to hold each to the CPU's answer */
	const char *only = getenv("ERT_OPENCL_TEST_GEMM");
	bool tiles32 = groups < 4 * (size_t)cl->compute_units, gemv = m <= 4;
	uint32_t k = 0;

	if (only && (!strcmp(only, "32x32") || !strcmp(only, "gemv"))) {
		tiles32 = !strcmp(only, "32x32");
		gemv = !tiles32;
	}
	v[k++] = (struct ert_ocl_variant){
		.kernel = "gemm_f32", .dims = 3,
		.gws = { ert_ocl_round_up(n, OCL_GEMM_TS_N) / OCL_GEMM_WPT_N,
			 ert_ocl_round_up(m, OCL_GEMM_TS_M) / OCL_GEMM_WPT_M, g->batches },
		.lws = { GEMM_WG_N, GEMM_WG_M, 1 },
		.label = is_conv ? "ocl-conv-gemm-f32-64x64" : "ocl-gemm-f32-64x64",
	};
	if (tiles32)
		v[k++] = (struct ert_ocl_variant){
			.kernel = "gemm_f32_32x32", .dims = 3,
			.gws = { ert_ocl_round_up(n, OCL_GEMM32_TS) / OCL_GEMM_WPT_N,
				 ert_ocl_round_up(m, OCL_GEMM32_TS) / OCL_GEMM_WPT_M, g->batches },
			.lws = { OCL_GEMM32_TS / OCL_GEMM_WPT_N, OCL_GEMM32_TS / OCL_GEMM_WPT_M, 1 },
			.label = is_conv ? "ocl-conv-gemm-f32-32x32" : "ocl-gemm-f32-32x32",
		};
	if (gemv && cl->max_wg >= OCL_GEMV_WG)
		v[k++] = (struct ert_ocl_variant){
			.kernel = "gemm_f32_gemv", .dims = 3,
			.gws = { n * OCL_GEMV_WG, m, g->batches },
			.lws = { OCL_GEMV_WG, 1, 1 },
			.label = is_conv ? "ocl-conv-gemv-f32" : "ocl-gemv-f32",
		};
	if (only && (!strcmp(only, "32x32") || !strcmp(only, "gemv")) && k > 1) {
		v[0] = v[k - 1];
		k = 1;
	}
	return k;
}

static ert_status gemm_launch(struct ert_ocl *cl, struct ert_ocl_step *st,
			      const struct gemm_desc *g, struct ert_err *err)
{
	struct ert_ocl_variant v[3];
	uint32_t nv = gemm_variants(cl, g, st->node->op == ERT_OP_Conv, v);
	cl_int geo8[8], geob8[8];
	cl_mem table;
	ert_status s = ert_ocl_table(cl, st, g->boff, 4 * g->batches, &table, err);

	if (s == ERT_OK)
		s = ert_ocl_launch_variants(cl, st, "gemm", v, nv, err);
	if (s != ERT_OK)
		return s;
	ocl_int8(geo8, g->geo, 8);
	ocl_int8(geob8, g->geob, 8);
	ert_ocl_arg_ref(st, &g->a);
	ert_ocl_arg_int(st, g->a_rs);
	ert_ocl_arg_int(st, g->a_cs);
	ert_ocl_arg_ref(st, &g->b);
	ert_ocl_arg_int(st, g->b_rs);
	ert_ocl_arg_int(st, g->b_cs);
	ert_ocl_arg_ref(st, &g->c);
	ert_ocl_arg_int(st, g->ldc);
	ert_ocl_arg_int(st, g->m);
	ert_ocl_arg_int(st, g->n);
	ert_ocl_arg_int(st, g->k);
	ert_ocl_arg_mem(st, table);
	/* absent bias or residual: any valid buffer, never read */
	ert_ocl_arg_ref(st, g->has_bias ? &g->bias : &g->c);
	ert_ocl_arg_int(st, g->bias_rs);
	ert_ocl_arg_int(st, g->bias_cs);
	ert_ocl_arg_int(st, g->has_bias);
	ert_ocl_arg_float(st, g->alpha);
	ert_ocl_arg_float(st, g->beta);
	ert_ocl_arg_ref(st, g->has_res ? &g->res : &g->c);
	ert_ocl_arg_int(st, g->has_res);
	ert_ocl_arg_int(st, (cl_int)g->act.type);
	ert_ocl_arg_float(st, g->act.p0);
	ert_ocl_arg_float(st, g->act.p1);
	ert_ocl_arg_int(st, g->conv);
	ert_ocl_arg_int8(st, geo8);
	ert_ocl_arg_int8(st, geob8);
	return ERT_OK;
}

static cl_int *table_alloc(size_t batches, const struct ert_node *n, struct ert_err *err)
{
	cl_int *t = calloc(batches ? 4 * batches : 4, sizeof(*t));

	if (!t)
		ert_err_set(err, "opencl: out of memory preparing %s '%s'", ert_op_name(n->op),
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

static bool conv_supports(const struct ert_ocl *cl, const struct ert_exec *x)
{
	const struct ert_value *r = ert_gpu_opt_in(x, 3);
	struct ert_conv_geom g;
	int64_t group = ert_attr_int(x->node, "group", 1);

	if (x->n_in < 2 || !ert_gpu_is_f32(x->in[0]) || !ert_gpu_is_f32(x->in[1]) || !ert_gpu_all_f32(x, 4) ||
	    x->n_out != 1 || !conv_geom(x, &g))
		return false;
	if (group < 1 || x->in[0]->dims[1] % group || x->in[1]->dims[0] % group)
		return false;
	if (r && (r->numel != x->out[0]->numel))
		return false;
	/* a dense or grouped convolution runs on the tiled GEMM's work-groups */
	return x->in[1]->dims[1] == 1 || gemm_fits(cl);
}

static ert_status conv_dw(struct ert_ocl *cl, struct ert_exec *x, struct ert_ocl_step *st,
			  const struct ert_conv_geom *g, const struct ert_ocl_ref *in,
			  const struct ert_ocl_ref *w, const struct ert_ocl_ref *bias,
			  const struct ert_ocl_ref *res, const struct ert_ocl_ref *out,
			  struct ert_err *err)
{
	const struct ert_value *xv = x->in[0], *y = x->out[0];
	int64_t oc = x->in[1]->dims[0], c = xv->dims[1];
	int64_t geo[8] = { g->in[1], g->in[2], g->k[1], g->k[2], g->stride[1], g->stride[2],
			   g->pad_b[1], g->pad_b[2] };
	int64_t geob[8] = { g->dil[1], g->dil[2], g->out[1], g->out[2], c, oc, oc / c,
			    xv->dims[0] };
	struct ert_act_desc act = ert_node_act(x->node);
	cl_int geo8[8], geob8[8];
	ert_status s = ocl_launch_1d(cl, st, "conv", "conv_dw_f32", y->numel, err);

	if (s != ERT_OK)
		return s;
	ocl_int8(geo8, geo, 8);
	ocl_int8(geob8, geob, 8);
	ert_ocl_arg_ref(st, in);
	ert_ocl_arg_ref(st, w);
	ert_ocl_arg_ref(st, out);
	ert_ocl_arg_ref(st, bias ? bias : out);
	ert_ocl_arg_int(st, bias != NULL);
	ert_ocl_arg_ref(st, res ? res : out);
	ert_ocl_arg_int(st, res != NULL);
	ert_ocl_arg_int8(st, geo8);
	ert_ocl_arg_int8(st, geob8);
	ert_ocl_arg_int(st, (cl_int)act.type);
	ert_ocl_arg_float(st, act.p0);
	ert_ocl_arg_float(st, act.p1);
	return ERT_OK;
}

static ert_status conv_prepare(struct ert_ocl *cl, struct ert_exec *x, struct ert_ocl_step *st,
			       struct ert_err *err)
{
	const struct ert_value *xv = x->in[0], *w = x->in[1];
	bool has_bias = ert_gpu_opt_in(x, 2) != NULL, has_res = ert_gpu_opt_in(x, 3) != NULL;
	struct ert_ocl_ref in, wr, bias, res, out;
	struct ert_conv_geom g;
	ert_status s;

	if (!conv_geom(x, &g)) {
		ert_err_set(err, "opencl: Conv '%s': unsupported geometry", x->node->name);
		return ERT_STATUS_UNSUPPORTED;
	}
	s = ert_ocl_in(cl, x, st, 0, &in, err);
	if (s == ERT_OK)
		s = ert_ocl_in(cl, x, st, 1, &wr, err);
	if (s == ERT_OK && has_bias)
		s = ert_ocl_in(cl, x, st, 2, &bias, err);
	if (s == ERT_OK && has_res)
		s = ert_ocl_in(cl, x, st, 3, &res, err);
	if (s == ERT_OK)
		s = ert_ocl_out(x, 0, &out, err);
	if (s != ERT_OK)
		return s;
	if (w->dims[1] == 1) {
		x->kernel = "ocl-conv-dw-f32";
		return conv_dw(cl, x, st, &g, &in, &wr, has_bias ? &bias : NULL,
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
		.a_rs = (cl_int)k, .a_cs = 1, .b_rs = (cl_int)hw, .b_cs = 1,
		.ldc = (cl_int)p, .m = (cl_int)ocg, .n = (cl_int)p, .k = (cl_int)k,
		.bias_rs = 1, .bias_cs = 0, .has_bias = has_bias, .has_res = has_res,
		.alpha = 1.0f, .beta = 1.0f, .act = ert_node_act(x->node), .conv = !pointwise,
		.geo = { g.in[1], g.in[2], g.k[1], g.k[2], g.stride[1], g.stride[2], g.pad_b[1],
			 g.pad_b[2] },
		.geob = { g.dil[1], g.dil[2], g.out[2] },
		.batches = (size_t)(nimg * group),
	};
	cl_int *boff = table_alloc(d.batches, x->node, err);

	if (!boff)
		return ERT_STATUS_OUT_OF_MEMORY;
	for (int64_t n = 0; n < nimg; n++) {
		for (int64_t gi = 0; gi < group; gi++) {
			cl_int *t = boff + 4 * (n * group + gi);

			t[0] = (cl_int)(gi * ocg * k);
			t[1] = (cl_int)((n * c + gi * cg) * hw);
			t[2] = (cl_int)((n * oc + gi * ocg) * p);
			t[3] = (cl_int)(gi * ocg);
		}
	}
	d.boff = boff;
	s = gemm_launch(cl, st, &d, err);
	free(boff);
	return s;
}

/* ---- Gemm ---- */

static bool gemm_supports(const struct ert_ocl *cl, const struct ert_exec *x)
{
	return x->n_in >= 2 && ert_gpu_is_f32(x->in[0]) && ert_gpu_is_f32(x->in[1]) && ert_gpu_all_f32(x, 3) &&
	       x->in[0]->rank == 2 && x->in[1]->rank == 2 && gemm_fits(cl);
}

static ert_status gemm_prepare(struct ert_ocl *cl, struct ert_exec *x, struct ert_ocl_step *st,
			       struct ert_err *err)
{
	const struct ert_value *a = x->in[0], *b = x->in[1], *c = ert_gpu_opt_in(x, 2);
	bool ta = ert_attr_int(x->node, "transA", 0) != 0;
	bool tb = ert_attr_int(x->node, "transB", 0) != 0;
	int64_t m = x->out[0]->dims[0], n = x->out[0]->dims[1], k = a->dims[ta ? 0 : 1];
	cl_int boff[4] = { 0, 0, 0, 0 };
	struct gemm_desc d = {
		.a_rs = (cl_int)(ta ? 1 : k), .a_cs = (cl_int)(ta ? m : 1),
		.b_rs = (cl_int)(tb ? 1 : n), .b_cs = (cl_int)(tb ? k : 1),
		.ldc = (cl_int)n, .m = (cl_int)m, .n = (cl_int)n, .k = (cl_int)k,
		.has_bias = c && c->numel > 0,
		.alpha = ert_attr_float(x->node, "alpha", 1.0f),
		.beta = ert_attr_float(x->node, "beta", 1.0f),
		.act = ert_node_act(x->node), .boff = boff, .batches = 1,
	};
	ert_status s = ert_ocl_in(cl, x, st, 0, &d.a, err);

	(void)b;
	if (s == ERT_OK)
		s = ert_ocl_in(cl, x, st, 1, &d.b, err);
	if (s == ERT_OK && d.has_bias)
		s = ert_ocl_in(cl, x, st, 2, &d.bias, err);
	if (s == ERT_OK)
		s = ert_ocl_out(x, 0, &d.c, err);
	if (s != ERT_OK)
		return s;
	if (d.has_bias) {
		/* C broadcast to M x N, aligned on the right */
		int64_t rows = c->rank == 2 ? c->dims[0] : 1, cols = c->rank ? c->dims[c->rank - 1] : 1;

		d.bias_rs = rows == 1 ? 0 : (cl_int)cols;
		d.bias_cs = cols == 1 ? 0 : 1;
	}
	return gemm_launch(cl, st, &d, err);
}

/* ---- MatMul ---- */

static bool matmul_supports(const struct ert_ocl *cl, const struct ert_exec *x)
{
	return x->n_in == 2 && ert_gpu_is_f32(x->in[0]) && ert_gpu_is_f32(x->in[1]) && ert_gpu_all_f32(x, 2) &&
	       gemm_fits(cl);
}

static ert_status matmul_prepare(struct ert_ocl *cl, struct ert_exec *x, struct ert_ocl_step *st,
				 struct ert_err *err)
{
	const struct ert_value *a = x->in[0], *b = x->in[1];
	int ra = a->rank, rb = b->rank;
	int64_t m = ra == 1 ? 1 : a->dims[ra - 2], k = a->dims[ra - 1];
	int64_t n = rb == 1 ? 1 : b->dims[rb - 1];
	/* batch dims: A's and B's leading dims, broadcast, aligned on the right */
	int na = ra > 2 ? ra - 2 : 0, nb = rb > 2 ? rb - 2 : 0, nbat = na > nb ? na : nb;
	int64_t bdims[ERT_MAX_RANK], sa[ERT_MAX_RANK], sb[ERT_MAX_RANK];
	int64_t batches = 1, astep = m * k, bstep = k * n;
	struct gemm_desc d = {
		.a_rs = (cl_int)k, .a_cs = 1, .b_rs = (cl_int)n, .b_cs = 1,
		.ldc = (cl_int)n, .m = (cl_int)m, .n = (cl_int)n, .k = (cl_int)k,
		.alpha = 1.0f, .beta = 0.0f, .act = ert_node_act(x->node),
	};
	ert_status s;

	if (rb == 1) {
		d.b_rs = 1;
		d.b_cs = 0;
	}
	int64_t sa_acc = 1, sb_acc = 1;

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
	cl_int *boff = table_alloc(d.batches, x->node, err);

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
		boff[4 * z] = (cl_int)oa;
		boff[4 * z + 1] = (cl_int)ob;
		boff[4 * z + 2] = (cl_int)(z * m * n);
	}
	d.boff = boff;
	s = ert_ocl_in(cl, x, st, 0, &d.a, err);
	if (s == ERT_OK)
		s = ert_ocl_in(cl, x, st, 1, &d.b, err);
	if (s == ERT_OK)
		s = ert_ocl_out(x, 0, &d.c, err);
	if (s == ERT_OK)
		s = gemm_launch(cl, st, &d, err);
	free(boff);
	return s;
}

const struct ert_ocl_op ert_ocl_ops_linalg[] = {
	{ ERT_OP_Conv, conv_supports, NULL, conv_prepare, "ocl-conv-gemm-f32-64x64" },
	{ ERT_OP_Gemm, gemm_supports, NULL, gemm_prepare, "ocl-gemm-f32-64x64" },
	{ ERT_OP_MatMul, matmul_supports, NULL, matmul_prepare, "ocl-gemm-f32-64x64" },
	{ ERT_OP_COUNT, NULL, NULL, NULL, NULL },
};
