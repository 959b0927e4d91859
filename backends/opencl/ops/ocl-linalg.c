/* SPDX-License-Identifier: MIT */
/*
 * Conv, Gemm and MatMul on float32 (planned in gpu-common/gpu-linalg.c):
 * conv.cl's depthwise kernel, and gemm.cl's tiled kernels for everything
 * else, of which the tuner picks one per launch.
 */
#include <stdlib.h>
#include <string.h>

#include "opencl/ops/ocl-ops.h"

#define GEMM_WG_N (OCL_GEMM_TS_N / OCL_GEMM_WPT_N)
#define GEMM_WG_M (OCL_GEMM_TS_M / OCL_GEMM_WPT_M)

/* Can the device run gemm.cl's 64x64 tiles (their work-group and local memory)? */
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
static uint32_t gemm_variants(const struct ert_ocl *cl, const struct ert_gpu_gemm *g, bool is_conv,
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

static ert_status gemm_launch(struct ert_ocl *cl, struct ert_exec *x, struct ert_ocl_step *st,
			      const struct ert_gpu_gemm *g, struct ert_err *err)
{
	struct ert_ocl_variant v[3];
	uint32_t nv = gemm_variants(cl, g, st->node->op == ERT_OP_Conv, v);
	struct ert_ocl_ref in[4], c;
	cl_int geo8[8], geob8[8];
	cl_mem table;
	uint32_t ins[4], n_ins = ert_gpu_gemm_inputs(g, ins);
	ert_status s = ERT_OK;

	memset(in, 0, sizeof(in));
	for (uint32_t i = 0; i < n_ins && s == ERT_OK; i++)
		s = ert_ocl_in(cl, x, st, ins[i], &in[ins[i]], err);
	if (s == ERT_OK)
		s = ert_ocl_out(x, 0, &c, err);
	if (s == ERT_OK)
		s = ert_ocl_table(cl, st, g->boff, 4 * g->batches, &table, err);
	if (s == ERT_OK)
		s = ert_ocl_launch_variants(cl, st, "gemm", v, nv, err);
	if (s != ERT_OK)
		return s;
	ocl_int8(geo8, g->geo, 8);
	ocl_int8(geob8, g->geo + 8, 3);
	ert_ocl_arg_ref(st, &in[g->a_in]);
	ert_ocl_arg_int(st, g->a_rs);
	ert_ocl_arg_int(st, g->a_cs);
	ert_ocl_arg_ref(st, &in[g->b_in]);
	ert_ocl_arg_int(st, g->b_rs);
	ert_ocl_arg_int(st, g->b_cs);
	ert_ocl_arg_ref(st, &c);
	ert_ocl_arg_int(st, g->ldc);
	ert_ocl_arg_int(st, g->m);
	ert_ocl_arg_int(st, g->n);
	ert_ocl_arg_int(st, g->k);
	ert_ocl_arg_mem(st, table);
	/* absent bias or residual: any valid buffer, never read */
	ert_ocl_arg_ref(st, g->bias_in >= 0 ? &in[g->bias_in] : &c);
	ert_ocl_arg_int(st, g->bias_rs);
	ert_ocl_arg_int(st, g->bias_cs);
	ert_ocl_arg_int(st, g->bias_in >= 0);
	ert_ocl_arg_float(st, g->alpha);
	ert_ocl_arg_float(st, g->beta);
	ert_ocl_arg_ref(st, g->res_in >= 0 ? &in[g->res_in] : &c);
	ert_ocl_arg_int(st, g->res_in >= 0);
	ert_ocl_arg_int(st, (cl_int)g->act.type);
	ert_ocl_arg_float(st, g->act.p0);
	ert_ocl_arg_float(st, g->act.p1);
	ert_ocl_arg_int(st, g->conv);
	ert_ocl_arg_int8(st, geo8);
	ert_ocl_arg_int8(st, geob8);
	return ERT_OK;
}

/* Gemm, MatMul, and a dense or grouped Conv: the tiled GEMM. */
static ert_status gemm_prepare(struct ert_ocl *cl, struct ert_exec *x, struct ert_ocl_step *st,
			       struct ert_err *err)
{
	struct ert_gpu_gemm g;
	ert_status s = ert_gpu_gemm_plan(x, &g, err);

	if (s != ERT_OK)
		return s;
	s = gemm_launch(cl, x, st, &g, err);
	ert_gpu_gemm_free(&g);
	return s;
}

/* A depthwise Conv: conv.cl's kernel, an item per output element. */
static ert_status conv_dw(struct ert_ocl *cl, struct ert_exec *x, struct ert_ocl_step *st,
			  struct ert_err *err)
{
	struct ert_gpu_conv_dw d;
	struct ert_ocl_ref in, w, bias, res, out;
	cl_int geo8[8], geob8[8];
	ert_status s = ert_gpu_conv_dw_plan(x, &d, err);

	if (s == ERT_OK)
		s = ert_ocl_in(cl, x, st, 0, &in, err);
	if (s == ERT_OK)
		s = ert_ocl_in(cl, x, st, 1, &w, err);
	if (s == ERT_OK && d.has_bias)
		s = ert_ocl_in(cl, x, st, 2, &bias, err);
	if (s == ERT_OK && d.has_res)
		s = ert_ocl_in(cl, x, st, 3, &res, err);
	if (s == ERT_OK)
		s = ert_ocl_out(x, 0, &out, err);
	if (s == ERT_OK)
		s = ocl_launch_1d(cl, st, "conv", "conv_dw_f32", d.n, err);
	if (s != ERT_OK)
		return s;
	ocl_int8(geo8, d.geo, 8);
	ocl_int8(geob8, d.geob, 8);
	ert_ocl_arg_ref(st, &in);
	ert_ocl_arg_ref(st, &w);
	ert_ocl_arg_ref(st, &out);
	ert_ocl_arg_ref(st, d.has_bias ? &bias : &out);
	ert_ocl_arg_int(st, d.has_bias);
	ert_ocl_arg_ref(st, d.has_res ? &res : &out);
	ert_ocl_arg_int(st, d.has_res);
	ert_ocl_arg_int8(st, geo8);
	ert_ocl_arg_int8(st, geob8);
	ert_ocl_arg_int(st, (cl_int)d.act.type);
	ert_ocl_arg_float(st, d.act.p0);
	ert_ocl_arg_float(st, d.act.p1);
	return ERT_OK;
}

static ert_status conv_prepare(struct ert_ocl *cl, struct ert_exec *x, struct ert_ocl_step *st,
			       struct ert_err *err)
{
	if (!ert_gpu_conv_is_dw(x))
		return gemm_prepare(cl, x, st, err);
	x->kernel = "ocl-conv-dw-f32";
	return conv_dw(cl, x, st, err);
}

/* A dense or grouped convolution runs on the tiled GEMM's work-groups. */
static bool conv_fits(const struct ert_ocl *cl, const struct ert_exec *x)
{
	return ert_gpu_conv_is_dw(x) || gemm_fits(cl);
}

static bool gemm_fits_op(const struct ert_ocl *cl, const struct ert_exec *x)
{
	return gemm_fits(cl);
}

const struct ert_ocl_op ert_ocl_ops_linalg[] = {
	{ ERT_GPU_CONV, conv_fits, NULL, conv_prepare, "ocl-conv-gemm-f32-64x64" },
	{ ERT_GPU_GEMM, gemm_fits_op, NULL, gemm_prepare, "ocl-gemm-f32-64x64" },
	{ ERT_GPU_KIND_COUNT, NULL, NULL, NULL, NULL },
};
