/* SPDX-License-Identifier: MIT */
/*
 * Every SIMD level this CPU supports against the scalar reference kernels, on
 * awkward shapes: channel counts that are no multiple of any register block,
 * K past the K block, stride 2, dilation, groups, depthwise, asymmetric
 * padding, 1x1 with stride, batch > 1, fused activations; with prepacked and
 * run-time weights, one and two threads. Also which level a session runs.
 * The GEMM driver and micro-kernels below the ops: test-sgemm-levels.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/conv/conv-smallplane.h"
#include "cpu/conv/conv-stem.h"
#include "cpu/conv/winograd.h"
#include "cpu/cpu-impl.h"
#include "cpu/gemm/sgemm.h"
#include "cpu/ops/linalg-kernels.h"
#include "edgert.h"
#include "ert-op-test.h"
#include "ert-test.h"
#include "opt/opt-private.h"

/* @o's input @i, @rank x @dims, filled with seeded values in [-1, 1). */
static void in_rand(struct one *o, uint32_t i, int32_t rank, const int64_t *dims)
{
	struct ert_value *v = one_in_alloc(o, i, ERT_DTYPE_FLOAT32, rank, dims);
	static uint32_t seed = 12345;
	float *p = v->data;

	for (int64_t k = 0; k < v->numel; k++)
		p[k] = frand_r(&seed);
}

/* Largest |a - b| relative to the reference's magnitude (at least 1). */
static double rel_diff(const struct ert_value *a, const struct ert_value *ref)
{
	const float *x = a->data, *r = ref->data;
	double worst = 0, mag = 1;

	for (int64_t i = 0; i < ref->numel; i++)
		mag = fabs(r[i]) > mag ? fabs(r[i]) : mag;
	for (int64_t i = 0; i < ref->numel; i++) {
		double d = fabs((double)x[i] - r[i]);

		if (isnan(x[i]) != isnan(r[i]))
			return INFINITY;
		worst = d > worst ? d : worst;
	}
	return worst / mag;
}

/* one_compare_levels()'s check: within @tol of the output's magnitude. */
static bool within_tol(const struct ert_value *got, const struct ert_value *ref, double tol,
		       char *why, size_t why_len)
{
	double d = rel_diff(got, ref);

	if (!(d <= tol))
		snprintf(why, why_len, "relative difference %g", d);
	return d <= tol;
}

/*
 * @o at every level, prepacked and run-time weights, memory LOW, 1 and 2
 * threads, against scalar with one thread. Returns the cases run.
 */
static int compare_levels(int *ert_test_failed_, struct one *o, const char *what, double tol)
{
	return one_compare_levels(ert_test_failed_, o, what, within_tol, tol);
}

struct conv_case {
	const char *name;
	int64_t n, c, h, w, m, kh, kw;
	int64_t sh, sw, dh, dw;
	int64_t pads[4];   /* top, left, bottom, right */
	int64_t group;
	bool bias;
	int act;           /* ert_act: 0 none, 1 relu, 2 clip, 3 leaky relu */
	double tol;        /* relative to the output's magnitude; 0: 1e-5 */
};

static const struct conv_case conv_cases[] = {
	{ "1x1 batch 2, odd channels", 2, 19, 7, 9, 13, 1, 1, 1, 1, 1, 1, { 0 }, 1, true, 0, 0 },
	{ "1x1 stride 2", 1, 16, 9, 11, 24, 1, 1, 2, 2, 1, 1, { 0 }, 1, false, 1, 0 },
	{ "3x3 pad 1, M tail", 1, 8, 14, 14, 70, 3, 3, 1, 1, 1, 1, { 1, 1, 1, 1 }, 1, true, 1, 0 },
	{ "3x3 stride 2, asymmetric pads", 1, 5, 15, 13, 17, 3, 3, 2, 2, 1, 1, { 0, 1, 1, 2 }, 1,
	  true, 2, 0 },
	{ "3x3 dilation 2", 1, 6, 12, 12, 9, 3, 3, 1, 1, 2, 2, { 2, 2, 2, 2 }, 1, false, 0, 0 },
	{ "3x3 groups 3, batch 2", 2, 12, 9, 10, 15, 3, 3, 1, 1, 1, 1, { 1, 1, 1, 1 }, 3, true,
	  3, 0 },
	{ "depthwise 3x3", 1, 16, 11, 13, 16, 3, 3, 1, 1, 1, 1, { 1, 1, 1, 1 }, 16, true, 1, 0 },
	{ "depthwise 3x3 stride 2", 2, 24, 12, 9, 24, 3, 3, 2, 2, 1, 1, { 0, 0, 1, 1 }, 24, true,
	  2, 0 },
	{ "5x3 stride (2, 1)", 1, 4, 10, 17, 33, 5, 3, 2, 1, 1, 1, { 2, 1, 2, 1 }, 1, true, 0, 0 },
	{ "7x7 stride 2, 3 channels", 1, 3, 32, 32, 64, 7, 7, 2, 2, 1, 1, { 3, 3, 3, 3 }, 1, true,
	  1, 0 },
	{ "K past the K block", 1, 300, 6, 6, 20, 3, 3, 1, 1, 1, 1, { 1, 1, 1, 1 }, 1, true, 0, 0 },
	{ "N past the N tile", 1, 8, 40, 40, 40, 3, 3, 1, 1, 1, 1, { 1, 1, 1, 1 }, 1, false, 1, 0 },
	{ "1x1 wide", 1, 64, 3, 50, 7, 1, 1, 1, 1, 1, 1, { 0 }, 1, true, 0, 0 },
	{ "1x1, K past the K block, B read in place", 2, 300, 7, 15, 20, 1, 1, 1, 1, 1, 1, { 0 },
	  1, true, 1, 0 },
	{ "1x1 on 32x32 planes (B packed)", 1, 24, 32, 32, 16, 1, 1, 1, 1, 1, 1, { 0 }, 1, false,
	  0, 0 },
	{ "1x1, large image and M (B packed)", 1, 64, 56, 40, 72, 1, 1, 1, 1, 1, 1, { 0 }, 1, true,
	  1, 0 },
	/* several row tiles of A on one image: B packed once for all of them (b_shared) */
	{ "1x1 stride 2, several row tiles", 1, 40, 13, 15, 200, 1, 1, 2, 2, 1, 1, { 0 }, 1, true,
	  1, 0 },
	{ "1x1 on 7x7 planes, several row tiles", 1, 300, 7, 7, 270, 1, 1, 1, 1, 1, 1, { 0 }, 1,
	  true, 2, 0 },
	{ "3x3 stride 2, several row tiles", 1, 24, 15, 14, 140, 3, 3, 2, 2, 1, 1, { 1, 1, 1, 1 },
	  1, false, 0, 0 },
	/* horizontal stride > 1 with a window row of several taps: rows split into column phases */
	{ "3x3 stride 3, dilation 2, groups 2, batch 2", 2, 6, 13, 17, 8, 3, 3, 3, 3, 2, 2,
	  { 2, 1, 0, 3 }, 2, true, 1, 0 },
	{ "2x4 stride (1, 2), odd width", 1, 4, 9, 15, 10, 2, 4, 1, 2, 1, 1, { 0, 0, 1, 1 }, 1,
	  false, 0, 0 },
	{ "3x3 stride 2, two columns", 1, 3, 5, 2, 5, 3, 3, 2, 2, 1, 1, { 1, 1, 1, 1 }, 1, true,
	  2, 0 },
	/*
	 * stride 2 past the N tile (552 pixels), K blocks starting mid-window,
	 * odd width: at avx512 the im2col's gathers (cpu/conv/conv-im2col.h)
	 */
	{ "3x3 stride 2, N past the N tile", 1, 20, 47, 45, 24, 3, 3, 2, 2, 1, 1, { 1, 0, 1, 1 },
	  1, true, 1, 0 },
	/*
	 * 1x1/2 through the gather (at avx512; output planes of 240 and 272
	 * pixels, past the small-plane rule): pads, odd planes, K past the
	 * K block with batch 2 (B packed per tile, a K block starting at
	 * plane 256), and B packed once for several row tiles (K = 270 in
	 * one call)
	 */
	{ "1x1 stride 2, pads, K past the K block, batch 2", 2, 300, 31, 33, 40, 1, 1, 2, 2, 1,
	  1, { 1, 0, 0, 1 }, 1, true, 1, 0 },
	{ "1x1 stride 2, odd plane, several row tiles", 1, 270, 29, 31, 200, 1, 1, 2, 2, 1, 1,
	  { 0 }, 1, false, 0, 0 },
	/*
	 * a stride and pads of 2^32 along the rows: window coordinates past 32
	 * bits, which a gather in int32 would wrap into the image (columns 0 and
	 * 2 lie wholly in the padding; only column 1 reads pixels)
	 */
	{ "3x3 stride (2, 2^32), pads 2^32 - 1", 1, 3, 5, 6, 5, 3, 3, 2, (int64_t)1 << 32, 1, 1,
	  { 1, ((int64_t)1 << 32) - 1, 1, ((int64_t)1 << 32) - 1 }, 1, true, 0, 0 },
	/*
	 * Winograd at avx2 and up (prepacked weights): its rounding is larger.
	 * F(2x2, 3x3) where F(4x4) would have fewer than 48 tiles (ragged
	 * tiles, asymmetric pads, wide rows, shorter than a tile, pads 2 and
	 * the 2x2 cases below), F(4x4) on the others.
	 */
	{ "winograd, ragged tiles", 1, 16, 17, 19, 24, 3, 3, 1, 1, 1, 1, { 1, 1, 1, 1 }, 1, true,
	  1, 1e-4 },
	{ "winograd, no padding, batch 2", 2, 32, 30, 30, 16, 3, 3, 1, 1, 1, 1, { 0 }, 1, true,
	  0, 1e-4 },
	{ "winograd, asymmetric pads", 1, 20, 18, 21, 40, 3, 3, 1, 1, 1, 1, { 0, 2, 1, 0 }, 1,
	  false, 2, 1e-4 },
	{ "winograd, several blocks", 1, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1, { 1, 1, 1, 1 }, 1,
	  true, 3, 1e-4 },
	/* 19 tiles a row: runs of tiles cut at panel ends; 17 and 19 channels, no vector multiple */
	{ "winograd, wide rows, odd channels", 1, 17, 7, 75, 19, 3, 3, 1, 1, 1, 1, { 1, 1, 1, 1 }, 1,
	  true, 1, 1e-4 },
	/* one tile row whose lower input rows lie below the image */
	{ "winograd, image shorter than a tile, batch 3", 3, 24, 4, 66, 16, 3, 3, 1, 1, 1, 1,
	  { 1, 1, 1, 1 }, 1, true, 2, 1e-4 },
	/* 110 tiles in one block: the input transform's 64-tile chunks end inside a tile row */
	{ "winograd, chunk ends inside a tile row", 1, 16, 38, 41, 16, 3, 3, 1, 1, 1, 1,
	  { 1, 1, 1, 1 }, 1, true, 1, 1e-4 },
	{ "winograd, pads 2, output width 25", 1, 16, 13, 23, 16, 3, 3, 1, 1, 1, 1, { 2, 2, 2, 2 }, 1,
	  false, 0, 1e-4 },
	/* F(2x2) with its GEMM's roles swapped: tiles on M, K past the K block, 40 outputs */
	{ "winograd 2x2, 14x14 300->40, batch 2", 2, 300, 14, 14, 40, 3, 3, 1, 1, 1, 1,
	  { 1, 1, 1, 1 }, 1, true, 1, 1e-4 },
	/* 13x15: tiles cut at the right and bottom edges; 70 outputs, no vector multiple */
	{ "winograd 2x2, 13x15 19->70, Clip", 1, 19, 13, 15, 70, 3, 3, 1, 1, 1, 1, { 1, 1, 1, 1 }, 1,
	  true, 2, 1e-4 },
	/* 168 tiles of 12 x 14 in blocks of at most 96 (256 channels): a block ends in a tile row */
	{ "winograd 2x2, several blocks, 256->24 at 24x28", 1, 256, 24, 28, 24, 3, 3, 1, 1, 1, 1,
	  { 1, 1, 1, 1 }, 1, true, 0, 1e-4 },
};

static void set_act(struct one *o, int act)
{
	float clip[2] = { -0.5f, 0.7f }, leaky[2] = { 0.1f, 0.0f };

	if (!act)
		return;
	ert_node_set_attr_int(o->g, o->n, "ert.act", act);
	if (act == ERT_ACT_CLIP)
		ert_opt_set_attr_floats(o->g, o->n, "ert.act_params", clip, 2);
	if (act == ERT_ACT_LEAKY_RELU)
		ert_opt_set_attr_floats(o->g, o->n, "ert.act_params", leaky, 2);
}

/*
 * @cc's Conv in @o, with @n_in inputs: 2 (no bias), 3, or 4 (bias and a
 * fused residual of the output's shape, "ert.residual").
 */
/* @cc's output height and width. */
static void conv_case_out(const struct conv_case *cc, int64_t *oh, int64_t *ow)
{
	*oh = (cc->h + cc->pads[0] + cc->pads[2] - cc->dh * (cc->kh - 1) - 1) / cc->sh + 1;
	*ow = (cc->w + cc->pads[1] + cc->pads[3] - cc->dw * (cc->kw - 1) - 1) / cc->sw + 1;
}

static void conv_case_init(struct one *o, const struct conv_case *cc, uint32_t n_in)
{
	int64_t xd[4] = { cc->n, cc->c, cc->h, cc->w };
	int64_t wd[4] = { cc->m, cc->c / cc->group, cc->kh, cc->kw }, bd[1] = { cc->m };
	int64_t st[2] = { cc->sh, cc->sw }, dl[2] = { cc->dh, cc->dw };
	int64_t pads[4] = { cc->pads[0], cc->pads[1], cc->pads[2], cc->pads[3] };

	one_init(o, ERT_OP_Conv, 0, n_in, 1);
	in_rand(o, 0, 4, xd);
	in_rand(o, 1, 4, wd);
	if (n_in > 2)
		in_rand(o, 2, 1, bd);
	if (n_in > 3) {
		int64_t rd[4] = { cc->n, cc->m, 0, 0 };

		conv_case_out(cc, &rd[2], &rd[3]);
		in_rand(o, 3, 4, rd);
		ert_node_set_attr_int(o->g, o->n, "ert.residual", 1);
	}
	ert_node_set_attr_ints(o->g, o->n, "strides", st, 2);
	ert_node_set_attr_ints(o->g, o->n, "dilations", dl, 2);
	ert_node_set_attr_ints(o->g, o->n, "pads", pads, 4);
	ert_node_set_attr_int(o->g, o->n, "group", cc->group);
	set_act(o, cc->act);
}

ERT_TEST(conv_every_level)
{
	int runs = 0;

	for (size_t i = 0; i < sizeof(conv_cases) / sizeof(conv_cases[0]); i++) {
		const struct conv_case *cc = &conv_cases[i];
		struct one o;

		conv_case_init(&o, cc, cc->bias ? 3 : 2);
		runs += compare_levels(ert_test_failed_, &o, cc->name, cc->tol ? cc->tol : 1e-5);
		one_fini(&o);
	}
	CHECK(runs > 0);
}

/* The kernel prepare() names for @o at @isa, weights constant (NULL: none). */
static const char *prepared_kernel(struct one *o, enum ert_cpu_isa isa)
{
	const struct ert_cpu_op *op = ert_cpu_op_find(o->n->op);
	struct ert_value y, *inp[ONE_MAX_IO], *outp[1] = { &y };
	bool cst[ONE_MAX_IO];
	struct ert_cpu cpu = {
		.isa = isa, .num_threads = 1, .gemm = ert_sgemm_kernel_for(isa),
	};
	struct ert_exec x = { .graph = o->g, .node = o->n, .in = inp, .out = outp,
			      .n_in = o->n_in, .n_out = 1, .in_const = cst };
	struct ert_err err;

	/* shapes first: a run gives the output value */
	if (!op || !op->prepare || one_run_at(o, ERT_ISA_SCALAR, NULL, true, ERT_LEVEL_NORMAL, &y) != ERT_OK)
		return NULL;
	for (uint32_t j = 0; j < o->n_in; j++) {
		inp[j] = (struct ert_value *)o->inp[j];
		cst[j] = j > 0;
	}
	if (op->prepare(&cpu, &x, &err) != ERT_OK)
		x.kernel = NULL;
	if (op->release)
		op->release(&x);
	free(y.data);
	return x.kernel;
}

/*
 * Which Winograd prepare() names: at avx512 and up F(2x2, 3x3) on 14x14
 * planes (16 tiles of F(4x4), fewer than NR 48), F(4x4, 3x3) from 28x28
 * (49 tiles) up; F(4x4) on all of them at avx2 (NR 16); none at scalar.
 */
ERT_TEST(conv_winograd_variant)
{
	static const struct {
		struct conv_case c;
		const char *want;    /* at avx512 and up */
	} cases[] = {
		{ { "14x14 256->256", 1, 256, 14, 14, 256, 3, 3, 1, 1, 1, 1, { 1, 1, 1, 1 }, 1, true, 1,
		    0 }, "winograd-2x2-3x3" },
		{ { "28x28 128->128", 1, 128, 28, 28, 128, 3, 3, 1, 1, 1, 1, { 1, 1, 1, 1 }, 1, true, 1,
		    0 }, "winograd-4x4-3x3" },
		{ { "56x56 64->64", 1, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1, { 1, 1, 1, 1 }, 1, true, 1, 0 },
		  "winograd-4x4-3x3" },
	};
	enum ert_cpu_isa best = ert_cpu_isa_best();

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct one o;

		conv_case_init(&o, &cases[i].c, 3);
		for (int isa = ERT_ISA_SCALAR; isa <= (int)best; isa++) {
			const char *k = prepared_kernel(&o, (enum ert_cpu_isa)isa);
			bool wino = k && strstr(k, "winograd");
			const char *want = isa >= ERT_ISA_AVX512 ? cases[i].want : "winograd-4x4-3x3";
			bool ok = isa < ERT_ISA_AVX2 ? !wino : k && strstr(k, want);

			if (!ok) {
				fprintf(stderr, "%s at %s: kernel %s\n", cases[i].c.name,
					ert_cpu_isa_name((enum ert_cpu_isa)isa), k ? k : "(none)");
				*ert_test_failed_ = 1;
			}
		}
		one_fini(&o);
	}
}

/*
 * @o at @isa on 1, 2 and 3 threads (@pools[t], NULL for one): each within
 * @tol of @ref (relative to its magnitude), and 2 and 3 threads the same
 * bits as 1. Sets *@failed otherwise.
 */
static void threads_same_bits(int *failed, struct one *o, const char *name, enum ert_cpu_isa isa,
			      struct ert_threadpool *const pools[3], const struct ert_value *ref,
			      double tol)
{
	struct ert_value got[3];
	int ran = 0;

	for (int t = 0; t < 3; t++, ran++) {
		if (one_run_at(o, isa, pools[t], true, ERT_LEVEL_NORMAL, &got[t]) != ERT_OK) {
			fprintf(stderr, "%s at %s, %d threads: %s\n", name, ert_cpu_isa_name(isa),
				t + 1, o->err.msg);
			*failed = 1;
			break;
		}
		double d = rel_diff(&got[t], ref);

		if (!(d <= tol)) {
			fprintf(stderr, "%s at %s, %d threads: relative difference %g\n", name,
				ert_cpu_isa_name(isa), t + 1, d);
			*failed = 1;
		}
		if (t && (got[t].nbytes != got[0].nbytes ||
			  memcmp(got[t].data, got[0].data, got[0].nbytes) != 0)) {
			fprintf(stderr, "%s at %s: %d threads differ from 1\n", name,
				ert_cpu_isa_name(isa), t + 1);
			*failed = 1;
		}
	}
	for (int t = 0; t < ran; t++)
		free(got[t].data);
}

/*
 * Winograd gives the same bits on 1, 2 and 3 threads at every level that
 * has it (each tile's transforms and each product's K order do not depend
 * on how the threads share the blocks), and stays within 1e-4 of scalar:
 * F(4x4) over two blocks (56x56), 49 tiles in one block (28x28, batch 2),
 * F(2x2) at avx512 (14x14, batch 2, with a residual), few tiles (16 of
 * F(4x4) at avx2: one panel; F(2x2) at avx512) with Clip, a residual
 * without an activation, and an activation applied after the transform
 * (LeakyRelu), and odd channel counts (the input transform's items, rows
 * of positions by channels, cut inside a channel range). The input
 * transform of F(2x2) is split by rows of transform positions on 2
 * threads, F(4x4)'s never (ert_wino_row_split_runs() counts the runs).
 */
ERT_TEST(conv_winograd_threads_same_bits)
{
	static const struct {
		struct conv_case c;
		bool residual;
	} cases[] = {
		{ { "56x56 64->64, LeakyRelu", 1, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1, { 1, 1, 1, 1 }, 1,
		    true, 3, 0 }, false },
		{ { "28x28 128->128, batch 2, ReLU", 2, 128, 28, 28, 128, 3, 3, 1, 1, 1, 1,
		    { 1, 1, 1, 1 }, 1, true, 1, 0 }, false },
		{ { "14x14 64->80 + residual, ReLU, batch 2", 2, 64, 14, 14, 80, 3, 3, 1, 1, 1, 1,
		    { 1, 1, 1, 1 }, 1, true, 1, 0 }, true },
		{ { "16x16 16->24, 16 tiles, Clip", 1, 16, 16, 16, 24, 3, 3, 1, 1, 1, 1,
		    { 1, 1, 1, 1 }, 1, false, 2, 0 }, false },
		{ { "30x26 32->16 + residual, no activation, batch 2", 2, 32, 30, 26, 16, 3, 3, 1, 1, 1,
		    1, { 1, 1, 1, 1 }, 1, true, 0, 0 }, true },
		{ { "14x14 19->40, odd channels, ReLU", 1, 19, 14, 14, 40, 3, 3, 1, 1, 1, 1,
		    { 1, 1, 1, 1 }, 1, true, 1, 0 }, false },
		{ { "28x28 17->21, odd channels", 1, 17, 28, 28, 21, 3, 3, 1, 1, 1, 1,
		    { 1, 1, 1, 1 }, 1, true, 0, 0 }, false },
	};
	struct ert_threadpool *pools[3] = { NULL, ert_threadpool_create(2),
					    ert_threadpool_create(3) };
	enum ert_cpu_isa best = ert_cpu_isa_best();
	int runs = 0;

	REQUIRE(pools[1] && pools[2]);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct conv_case *cc = &cases[i].c;
		struct ert_value ref;
		struct one o;

		conv_case_init(&o, cc, cases[i].residual ? 4 : cc->bias ? 3 : 2);
		REQUIRE(one_run_at(&o, ERT_ISA_SCALAR, NULL, true, ERT_LEVEL_NORMAL, &ref) == ERT_OK);
		for (int isa = ERT_ISA_AVX2; isa <= (int)best; isa++) {
			const char *k = prepared_kernel(&o, (enum ert_cpu_isa)isa);

			if (!k || !strstr(k, "winograd")) {
				fprintf(stderr, "%s at %s: kernel %s, not Winograd\n", cc->name,
					ert_cpu_isa_name((enum ert_cpu_isa)isa), k ? k : "(none)");
				*ert_test_failed_ = 1;
				continue;
			}
			uint64_t split0 = ert_wino_row_split_runs();
			/* F(2x2) on 2 threads: 2 row groups (3: by channel); F(4x4) never */
			uint64_t want = strstr(k, "winograd-2x2") ? 1 : 0;

			threads_same_bits(ert_test_failed_, &o, cc->name, (enum ert_cpu_isa)isa, pools,
					  &ref, 1e-4);
			if (ert_wino_row_split_runs() - split0 != want) {
				fprintf(stderr,
					"%s at %s: input transform split by rows %d times, want %d\n",
					cc->name, ert_cpu_isa_name((enum ert_cpu_isa)isa),
					(int)(ert_wino_row_split_runs() - split0), (int)want);
				*ert_test_failed_ = 1;
			}
			runs++;
		}
		free(ref.data);
		one_fini(&o);
	}
	ert_threadpool_destroy(pools[1]);
	ert_threadpool_destroy(pools[2]);
	CHECK(runs > 0 || best < ERT_ISA_AVX2);
}

/*
 * Expanding pointwise convolutions on small planes split into bands of
 * output channels, one GEMM a thread (ops/linalg-conv.c, band_split_parts()):
 * the same bits on 1, 2 and 3 threads at every level (each output float's K
 * blocks do not depend on the band it falls in), within 1e-5 of scalar.
 * Bands of whole MR-row panels with a last partial one (150 and 40 rows),
 * 3 threads on 40 rows, B read in place and packed (784 and 143 pixels), a
 * residual and Clip, and one too large for the split (its weights) that
 * keeps the driver's tiles. The split's rule is asked for each case and
 * thread count, so that a rule change that moved the cases off the split
 * fails here rather than passing on the driver's tiles.
 */
ERT_TEST(conv_band_split_threads_same_bits)
{
	static const struct {
		struct conv_case c;
		bool residual;
	} cases[] = {
		{ { "13x11 24->150 + residual, Clip", 1, 24, 13, 11, 150, 1, 1, 1, 1, 1, 1, { 0 }, 1,
		    true, 2, 0 }, true },
		{ { "9x9 16->40, no bias", 1, 16, 9, 9, 40, 1, 1, 1, 1, 1, 1, { 0 }, 1, false, 0, 0 },
		  false },
		{ { "28x28 32->64, ReLU", 1, 32, 28, 28, 64, 1, 1, 1, 1, 1, 1, { 0 }, 1, true, 1, 0 },
		  false },
		{ { "10x10 128->512 (weights over the split's)", 1, 128, 10, 10, 512, 1, 1, 1, 1, 1, 1,
		    { 0 }, 1, true, 1, 0 }, false },
	};
	struct ert_threadpool *pools[3] = { NULL, ert_threadpool_create(2),
					    ert_threadpool_create(3) };
	enum ert_cpu_isa best = ert_cpu_isa_best();
	int runs = 0;

	REQUIRE(pools[1] && pools[2]);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct conv_case *cc = &cases[i].c;
		struct ert_value ref;
		struct one o;

		conv_case_init(&o, cc, cases[i].residual ? 4 : cc->bias ? 3 : 2);
		REQUIRE(one_run_at(&o, ERT_ISA_SCALAR, NULL, true, ERT_LEVEL_NORMAL, &ref) == ERT_OK);
		for (int isa = ERT_ISA_SCALAR; isa <= (int)best; isa++) {
			threads_same_bits(ert_test_failed_, &o, cc->name, (enum ert_cpu_isa)isa, pools,
					  &ref, 1e-5);
			for (uint32_t t = 1; t <= 3; t++) {
				const struct ert_cpu cpu = {
					.isa = (enum ert_cpu_isa)isa, .num_threads = t,
					.gemm = ert_sgemm_kernel_for((enum ert_cpu_isa)isa),
				};
				uint32_t want = t > 1 && i + 1 < sizeof(cases) / sizeof(cases[0]) ? t
												 : 0;
				const struct ert_conv_geom g = {
					.nsp = 2, .in = { 1, cc->h, cc->w }, .k = { 1, 1, 1 },
					.stride = { 1, 1, 1 }, .dil = { 1, 1, 1 },
					.out = { 1, cc->h, cc->w }, .win = { 1, 1, 1 },
				};
				uint32_t got = ert_cpu_conv_band_parts(&cpu, &g, cc->n, cc->c, cc->m,
								       cc->group);

				if (got != want) {
					fprintf(stderr, "%s at %s, %u threads: %u bands, want %u\n",
						cc->name, ert_cpu_isa_name((enum ert_cpu_isa)isa), t,
						got, want);
					CHECK(got == want);
				}
			}
			runs++;
		}
		free(ref.data);
		one_fini(&o);
	}
	ert_threadpool_destroy(pools[1]);
	ert_threadpool_destroy(pools[2]);
	CHECK(runs > 0);
}

/*
 * Small output planes (cpu/conv/conv-smallplane.h): the product taken
 * transposed, pixels on the GEMM's rows and the prepacked weights on its
 * columns, at every SIMD level (the scalar level is the reference and
 * keeps the direct GEMM), against scalar; prepare() names the kernel. Each
 * shape (sp) is one the rule's padded-work test takes at avx2 (6 x 16) and
 * avx512 (8 x 48) alike, then taken where the plane is within
 * ERT_CONV_SP_MAX_PIXELS (the 14x14 ones are not, by default: they check
 * that the old path keeps them), or one it must not take (groups). At
 * avx512 and up the rule also takes planes of at most
 * ERT_CONV_SP_WINDOW_PIXELS (196) whose window is larger than 1x1 where the
 * padded-work test at 8 x 48 passes and the window is at most 3x3 (sp512):
 * odd planes and channel counts, a residual, and the shapes it must leave
 * (1x1 and 4x4 windows, more padded work, 225 pixels).
 */
ERT_TEST(conv_smallplane_every_level)
{
	static const struct {
		struct conv_case c;
		bool residual, sp, sp512;
	} cases[] = {
		/* 7x7 (N = 49), output channels no multiple of either NR */
		{ { "7x7 3x3 40->70, N = 49, ReLU", 1, 40, 7, 7, 70, 3, 3, 1, 1, 1, 1, { 1, 1, 1, 1 },
		    1, true, 1, 0 }, false, true, false },
		{ { "7x7 1x1 96->70, batch 3, Clip", 3, 96, 7, 7, 70, 1, 1, 1, 1, 1, 1, { 0 }, 1, true,
		    2, 0 }, false, true, false },
		{ { "7x7 3x3 300->64, K past the K block, no bias", 1, 300, 7, 7, 64, 3, 3, 1, 1, 1, 1,
		    { 1, 1, 1, 1 }, 1, false, 0, 0 }, false, true, false },
		{ { "7x7 3x3 24->40, LeakyRelu (after the GEMM)", 2, 24, 7, 7, 40, 3, 3, 1, 1, 1, 1,
		    { 1, 1, 1, 1 }, 1, true, 3, 0 }, false, true, false },
		/* N = 1: a 1x1 image, every tap but the centre in the padding */
		{ { "1x1 image 3x3 24->33, N = 1", 2, 24, 1, 1, 33, 3, 3, 1, 1, 1, 1, { 1, 1, 1, 1 }, 1,
		    true, 1, 0 }, false, true, false },
		{ { "1x7 image 3x3 16->50, N = 7", 1, 16, 1, 7, 50, 3, 3, 1, 1, 1, 1, { 1, 1, 1, 1 }, 1,
		    true, 0, 0 }, false, true, false },
		/* 14x14 (N = 196): 12 channels in keep it off Winograd */
		{ { "14x14 3x3 12->47, N = 196", 1, 12, 14, 14, 47, 3, 3, 1, 1, 1, 1, { 1, 1, 1, 1 }, 1,
		    true, 1, 0 }, false, true, true },
		{ { "14x14 1x1 64->47, batch 2", 2, 64, 14, 14, 47, 1, 1, 1, 1, 1, 1, { 0 }, 1, true, 0,
		    0 }, false, true, false },
		/* stride 2 onto a 7x7 output */
		{ { "14x14 3x3/2 20->37, output 7x7, Clip", 2, 20, 14, 14, 37, 3, 3, 2, 2, 1, 1,
		    { 1, 1, 1, 1 }, 1, true, 2, 0 }, false, true, false },
		{ { "14x14 1x1/2 33->64, output 7x7", 1, 33, 14, 14, 64, 1, 1, 2, 2, 1, 1, { 0 }, 1,
		    true, 1, 0 }, false, true, false },
		{ { "8x8 3x3 dilation 2, asymmetric pads, output 7x7", 1, 10, 8, 8, 40, 3, 3, 1, 1, 2, 2,
		    { 2, 1, 1, 2 }, 1, true, 0, 0 }, false, true, false },
		/* fused residual: act(conv + bias + residual) in the transposing pass */
		{ { "7x7 3x3 24->40 + residual, ReLU", 2, 24, 7, 7, 40, 3, 3, 1, 1, 1, 1, { 1, 1, 1, 1 },
		    1, true, 1, 0 }, true, true, false },
		{ { "7x7 1x1 30->48 + residual, Clip", 1, 30, 7, 7, 48, 1, 1, 1, 1, 1, 1, { 0 }, 1, true,
		    2, 0 }, true, true, false },
		{ { "14x14 3x3/2 16->37 + residual, LeakyRelu", 2, 16, 14, 14, 37, 3, 3, 2, 2, 1, 1,
		    { 1, 1, 1, 1 }, 1, true, 3, 0 }, true, true, false },
		{ { "7x7 3x3 24->40 + residual, no activation", 1, 24, 7, 7, 40, 3, 3, 1, 1, 1, 1,
		    { 1, 1, 1, 1 }, 1, true, 0, 0 }, true, true, false },
		/* the old path: groups, and a plane over any limit */
		{ { "7x7 3x3 groups 3", 2, 12, 7, 7, 15, 3, 3, 1, 1, 1, 1, { 1, 1, 1, 1 }, 3, true, 1, 0 },
		  false, false, false },
		{ { "17x17 3x3/1 8->40 (289 pixels)", 1, 8, 17, 17, 40, 3, 3, 1, 1, 1, 1,
		    { 1, 1, 1, 1 }, 1, true, 1, 0 }, false, false, false },
		/* avx512's wider rule: stride 2 onto 11x11 (121) and 14x14 (196) */
		{ { "22x22 3x3/2 7->90, output 11x11, batch 2, ReLU", 2, 7, 22, 22, 90, 3, 3, 2, 2, 1,
		    1, { 1, 1, 1, 1 }, 1, true, 1, 0 }, false, false, true },
		{ { "27x28 3x3/2 10->47 + residual, LeakyRelu, output 14x14", 2, 10, 27, 28, 47, 3, 3,
		    2, 2, 1, 1, { 1, 1, 1, 1 }, 1, true, 3, 0 }, true, false, true },
		{ { "28x28 3x3/2 20->300, K past the K block, output 14x14, no bias", 1, 20, 28, 28,
		    300, 3, 3, 2, 2, 1, 1, { 1, 1, 1, 1 }, 1, false, 2, 0 }, false, false, true },
		{ { "28x28 3x3/2 10->64, output 14x14 (more padded work swapped)", 1, 10, 28, 28, 64, 3,
		    3, 2, 2, 1, 1, { 1, 1, 1, 1 }, 1, true, 1, 0 }, false, false, false },
		{ { "28x28 1x1/2 16->47, output 14x14 (a 1x1 window)", 1, 16, 28, 28, 47, 1, 1, 2, 2, 1,
		    1, { 0 }, 1, true, 1, 0 }, false, false, false },
		{ { "30x30 3x3/2 8->47, output 15x15 (225 pixels)", 1, 8, 30, 30, 47, 3, 3, 2, 2, 1, 1,
		    { 1, 1, 1, 1 }, 1, true, 1, 0 }, false, false, false },
		{ { "56x56 4x4/4 16->47, output 14x14 (a window past 3x3)", 1, 16, 56, 56, 47, 4, 4, 4,
		    4, 1, 1, { 0 }, 1, true, 0, 0 }, false, false, false },
	};
	enum ert_cpu_isa best = ert_cpu_isa_best();
	int runs = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct conv_case *cc = &cases[i].c;
		struct one o;
		int64_t oh, ow;

		conv_case_out(cc, &oh, &ow);
		bool want = cases[i].sp && oh * ow <= ERT_CONV_SP_MAX_PIXELS;

		conv_case_init(&o, cc, cases[i].residual ? 4 : cc->bias ? 3 : 2);
		runs += compare_levels(ert_test_failed_, &o, cc->name, 1e-5);
		for (int isa = ERT_ISA_SCALAR; isa <= (int)best; isa++) {
			const char *k = prepared_kernel(&o, (enum ert_cpu_isa)isa);
			bool sp = k && strstr(k, "smallplane");
			bool w512 = cases[i].sp512 && isa >= ERT_ISA_AVX512 &&
				    oh * ow <= ERT_CONV_SP_WINDOW_PIXELS;

			if (sp != ((want || w512) && isa > ERT_ISA_SCALAR)) {
				fprintf(stderr, "%s at %s: kernel %s\n", cc->name,
					ert_cpu_isa_name((enum ert_cpu_isa)isa), k ? k : "(none)");
				*ert_test_failed_ = 1;
			}
		}
		one_fini(&o);
	}
	CHECK(runs > 0);
}

/*
 * The small-plane rule's limits, asked directly (no tensors): a 7x7 output
 * is taken and a 9x8 one (72 pixels) is not; a 3x3/2 window onto 14x14
 * (196 pixels) is taken at avx512 and up (ERT_CONV_SP_WINDOW_PIXELS), not
 * at avx2, and onto 15x14 (210) at neither; a 1x1/2 onto 14x14 at neither.
 * And the gather's 32-bit offsets: a 1x1/7724 conv onto 7x7 from a 46340 x
 * 46340 input plane (88047 floats under INT32_MAX) is taken, from 46341 x
 * 46341 (4634 floats past it) it is not, at every SIMD level; nor a 3x3/3311
 * onto 14x14 from that plane at avx512 (the 3x3 windows padded by 1: the
 * output sizes are the input's). 64 channels in, 512 out: fewer
 * padded products swapped at either level's register block.
 */
ERT_TEST(conv_smallplane_rule_limits)
{
	static const struct {
		int64_t ih, iw, k, stride, oh, ow;
		bool avx2, avx512;
	} cases[] = {
		{ 7, 7, 1, 1, 7, 7, true, true },
		{ 9, 8, 1, 1, 9, 8, false, false },
		{ 28, 28, 3, 2, 14, 14, false, true },
		{ 30, 28, 3, 2, 15, 14, false, false },
		{ 28, 28, 1, 2, 14, 14, false, false },
		{ 46340, 46340, 1, 7724, 7, 7, true, true },
		{ 46341, 46341, 1, 7724, 7, 7, false, false },
		{ 46340, 46340, 3, 3311, 14, 14, false, true },
		{ 46341, 46341, 3, 3311, 14, 14, false, false },
	};
	enum ert_cpu_isa best = ert_cpu_isa_best();
	int asked = 0;

	for (int isa = ERT_ISA_AVX2; isa <= (int)best; isa++) {
		const struct ert_cpu cpu = {
			.isa = (enum ert_cpu_isa)isa, .num_threads = 1,
			.gemm = ert_sgemm_kernel_for((enum ert_cpu_isa)isa),
		};

		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			const int64_t kw = cases[i].k, oh = cases[i].oh, ow = cases[i].ow;
			const struct ert_conv_geom g = {
				.nsp = 2,
				.in = { cases[i].ih, cases[i].iw, 1 },
				.k = { kw, kw, 1 },
				.stride = { cases[i].stride, cases[i].stride, 1 },
				.dil = { 1, 1, 1 },
				.pad_b = { kw / 2, kw / 2, 0 },
				.pad_e = { kw / 2, kw / 2, 0 },
				.out = { oh, ow, 1 },
				.win = { kw, kw, 1 },
			};
			bool took = ert_conv_sp_kernel(&cpu, &g, 64, 512) != NULL;
			bool want = isa >= ERT_ISA_AVX512
					    ? cases[i].avx512 && oh * ow <= (kw > 1
								    ? ERT_CONV_SP_WINDOW_PIXELS
								    : ERT_CONV_SP_MAX_PIXELS)
					    : cases[i].avx2 && oh * ow <= ERT_CONV_SP_MAX_PIXELS;

			if (took != want) {
				fprintf(stderr, "%s: %lld x %lld, %lldx%lld/%lld -> %lld x %lld %s\n",
					ert_cpu_isa_name((enum ert_cpu_isa)isa),
					(long long)cases[i].ih, (long long)cases[i].iw,
					(long long)kw, (long long)kw, (long long)cases[i].stride,
					(long long)oh, (long long)ow, took ? "taken" : "refused");
				*ert_test_failed_ = 1;
			}
			asked++;
		}
	}
	CHECK(asked > 0 || best < ERT_ISA_AVX2);
}

/*
 * ert_conv_sp_run() called directly, on 1 and 2 threads, on planes the rule
 * leaves to the old path by default (14x14 = 196 pixels, 16x16 = 256), so
 * that the swapped path is held to the scalar reference there too, for
 * builds with a higher ERT_CONV_SP_MAX_PIXELS; and on a 7x7 plane of several
 * K blocks whose 200 columns the threads' ranges cut inside the 48-wide
 * weight panels (the ranges are 16 columns apart); and on A large enough
 * to be packed K block by K block, at 3x3 and 1x1. Two threads give the
 * same bits as one at each level, with A packed once or once a lane.
 */
ERT_TEST(conv_smallplane_run_direct)
{
	static const struct {
		struct conv_case c;
		bool residual;
	} cases[] = {
		{ { "14x14 3x3 12->47, N = 196, ReLU", 2, 12, 14, 14, 47, 3, 3, 1, 1, 1, 1,
		    { 1, 1, 1, 1 }, 1, true, 1, 0 }, false },
		{ { "14x14 1x1 64->40, N = 196", 1, 64, 14, 14, 40, 1, 1, 1, 1, 1, 1, { 0 }, 1, true, 0,
		    0 }, false },
		{ { "32x32 3x3/2 8->33, N = 256, no bias, Clip", 1, 8, 32, 32, 33, 3, 3, 2, 2, 1, 1,
		    { 1, 1, 1, 1 }, 1, false, 2, 0 }, false },
		{ { "28x28 1x1/2 20->50 + residual, LeakyRelu", 2, 20, 28, 28, 50, 1, 1, 2, 2, 1, 1,
		    { 0 }, 1, true, 3, 0 }, true },
		{ { "7x7 3x3 48->200, K = 432, ReLU", 1, 48, 7, 7, 200, 3, 3, 1, 1, 1, 1,
		    { 1, 1, 1, 1 }, 1, true, 1, 0 }, false },
		/* A over 1 MB at avx512 and avx2, packed K block by K block (SP_JIT_A_BYTES) */
		{ { "7x7 3x3 544->40, K = 4896, batch 2", 2, 544, 7, 7, 40, 3, 3, 1, 1, 1, 1,
		    { 1, 1, 1, 1 }, 1, true, 0, 0 }, false },
		{ { "7x7 1x1 4700->20 + residual, K = 4700", 1, 4700, 7, 7, 20, 1, 1, 1, 1, 1, 1,
		    { 0 }, 1, true, 1, 0 }, true },
	};
	struct ert_threadpool *pool = ert_threadpool_create(2);
	enum ert_cpu_isa best = ert_cpu_isa_best();

	REQUIRE(pool != NULL);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct conv_case *cc = &cases[i].c;
		int64_t ksp[2] = { cc->kh, cc->kw }, k = cc->c * cc->kh * cc->kw;
		struct ert_conv_geom g;
		struct ert_value ref;
		struct one o;

		conv_case_init(&o, cc, cases[i].residual ? 4 : cc->bias ? 3 : 2);
		REQUIRE(one_run_at(&o, ERT_ISA_SCALAR, NULL, true, ERT_LEVEL_NORMAL, &ref) == ERT_OK);
		REQUIRE(ert_geom_conv(o.n, 2, o.in[0].dims + 2, ksp, false, &g, &o.err) == ERT_OK);
		for (int isa = ERT_ISA_AVX2; isa <= (int)best; isa++) {
			void *one_thread = NULL;

			for (uint32_t threads = 1; threads <= 2; threads++) {
				struct ert_cpu cpu = {
					.isa = (enum ert_cpu_isa)isa, .num_threads = threads,
					.pool = threads > 1 ? pool : NULL,
					.gemm = ert_sgemm_kernel_for((enum ert_cpu_isa)isa),
				};
				const int nr = cpu.gemm->nr;
				float *wp = aligned_alloc(64, ((ert_sgemm_packed_b_floats(k, cc->m, nr) *
								sizeof(float)) | 63) + 1);
				void *ws = malloc(ert_conv_sp_workspace(&cpu, &g, cc->c, cc->m));
				struct ert_value got = ref;

				got.data = malloc(ref.nbytes);
				REQUIRE(wp && ws && got.data);
				ert_sgemm_pack_b(o.in[1].data, 1, k, k, cc->m, nr, wp);

				struct ert_conv_sp_args a = {
					.g = &g, .n_img = cc->n, .c_in = cc->c, .m = cc->m,
					.x = o.in[0].data, .w_packed = wp,
					.bias = cc->bias ? o.in[2].data : NULL,
					.res = cases[i].residual ? o.in[3].data : NULL,
					.act = ert_node_act(o.n), .y = got.data,
				};

				ert_conv_sp_run(&cpu, &a, ws);
				double d = rel_diff(&got, &ref);

				if (!(d <= 1e-5)) {
					fprintf(stderr, "%s at %s, %u threads: relative difference %g\n",
						cc->name, ert_cpu_isa_name((enum ert_cpu_isa)isa), threads, d);
					*ert_test_failed_ = 1;
				}
				if (threads == 1) {
					one_thread = got.data;
				} else {
					if (memcmp(got.data, one_thread, ref.nbytes) != 0) {
						fprintf(stderr, "%s at %s: 2 threads differ from 1\n",
							cc->name,
							ert_cpu_isa_name((enum ert_cpu_isa)isa));
						*ert_test_failed_ = 1;
					}
					free(got.data);
				}
				free(ws);
				free(wp);
			}
			free(one_thread);
		}
		free(ref.data);
		one_fini(&o);
	}
	ert_threadpool_destroy(pool);
}

/*
 * The direct kernel for few input channels (cpu/conv/conv-stem.h) at every
 * SIMD level against scalar, and prepare() names it exactly where the rule
 * takes the shape: strides 1 and 2 and (2, 1), dilation, asymmetric pads,
 * odd sizes (rows no multiple of a vector, channels no multiple of a tile),
 * batch 2, no bias, every store path (the activations of the tap loop's own
 * copy and the others out of line), a fused residual, bands of fewer rows
 * where the input copy is wide, and shapes it must leave to the GEMM.
 */
ERT_TEST(conv_stem_every_level)
{
	static const struct {
		struct conv_case c;
		bool residual, stem;
	} cases[] = {
		{ { "3x3/2 3->32 (mobilenet_v2's stem), Clip", 1, 3, 37, 41, 32, 3, 3, 2, 2, 1, 1,
		    { 1, 1, 1, 1 }, 1, true, 2, 0 }, false, true },
		{ { "7x7/2 3->64 (resnet's stem), asymmetric pads, batch 2, ReLU", 2, 3, 45, 50, 64, 7,
		    7, 2, 2, 1, 1, { 3, 2, 3, 4 }, 1, true, 1, 0 }, false, true },
		{ { "3x3/1 4->13, pads top/left only, LeakyRelu, no bias", 1, 4, 19, 23, 13, 3, 3, 1, 1,
		    1, 1, { 0, 1, 2, 0 }, 1, false, 3, 0 }, false, true },
		{ { "5x5 stride (2, 1), dilation 2, 1->9", 2, 1, 20, 30, 9, 5, 5, 2, 1, 2, 2,
		    { 2, 3, 1, 0 }, 1, true, 0, 0 }, false, true },
		{ { "3x3/3 2->17, no padding, odd width", 1, 2, 26, 61, 17, 3, 3, 3, 3, 1, 1, { 0 }, 1,
		    true, 1, 0 }, false, true },
		{ { "1x3 2->8, one output row", 1, 2, 1, 33, 8, 1, 3, 1, 1, 1, 1, { 0, 1, 0, 1 }, 1, true,
		    0, 0 }, false, true },
		{ { "3x3/2 3->20, HardSwish (stored out of line)", 2, 3, 23, 34, 20, 3, 3, 2, 2, 1, 1,
		    { 1, 1, 1, 1 }, 1, true, ERT_ACT_HARD_SWISH, 0 }, false, true },
		{ { "3x3/2 3->24, Sigmoid", 1, 3, 16, 40, 24, 3, 3, 2, 2, 1, 1, { 1, 1, 1, 1 }, 1, true,
		    ERT_ACT_SIGMOID, 0 }, false, true },
		{ { "3x3/2 3->16 + residual, Clip", 2, 3, 21, 35, 16, 3, 3, 2, 2, 1, 1, { 1, 1, 1, 1 }, 1,
		    true, 2, 0 }, true, true },
		{ { "7x7/2 2->24 + residual, no activation", 1, 2, 30, 27, 24, 7, 7, 2, 2, 1, 1,
		    { 3, 3, 3, 3 }, 1, true, 0, 0 }, true, true },
		{ { "3x3/2 3->9 + residual, HardSwish", 1, 3, 12, 31, 9, 3, 3, 2, 2, 1, 1, { 1, 0, 0, 1 },
		    1, false, ERT_ACT_HARD_SWISH, 0 }, true, true },
		/* 300 output columns: a band's copy of 3 rows would not fit, 2 do */
		{ { "3x3/2 3->8 on 600 columns, bands of 2 rows", 1, 3, 9, 600, 8, 3, 3, 2, 2, 1, 1,
		    { 1, 1, 1, 1 }, 1, true, 1, 0 }, false, true },
		/* the GEMM's: one output row of a band too wide, a narrow output, more channels */
		{ { "7x7/2 4->16 on 1100 columns", 1, 4, 7, 1100, 16, 7, 7, 2, 2, 1, 1, { 3, 3, 3, 3 }, 1,
		    true, 1, 0 }, false, false },
		{ { "3x3 3->16, output 6 wide", 1, 3, 10, 6, 16, 3, 3, 1, 1, 1, 1, { 1, 1, 1, 1 }, 1,
		    true, 0, 0 }, false, false },
		{ { "3x3 5->16", 1, 5, 10, 20, 16, 3, 3, 1, 1, 1, 1, { 1, 1, 1, 1 }, 1, true, 0, 0 },
		  false, false },
		{ { "1x1 3->16", 1, 3, 10, 20, 16, 1, 1, 1, 1, 1, 1, { 0 }, 1, true, 0, 0 }, false,
		  false },
		{ { "3x3 3->6, fewer channels than a tile", 1, 3, 10, 20, 6, 3, 3, 1, 1, 1, 1,
		    { 1, 1, 1, 1 }, 1, true, 0, 0 }, false, false },
		/* past ERT_CONV_STEM_MAX_TAPS products an output */
		{ { "16x16/16 3->24 (a ViT patch embedding, 768 products)", 1, 3, 32, 144, 24, 16,
		    16, 16, 16, 1, 1, { 0 }, 1, true, 0, 0 }, false, false },
		{ { "7x7/2 4->16 (196 products)", 1, 4, 21, 40, 16, 7, 7, 2, 2, 1, 1,
		    { 3, 3, 3, 3 }, 1, true, 1, 0 }, false, false },
		{ { "6x6/2 4->16 (144 products)", 1, 4, 21, 40, 16, 6, 6, 2, 2, 1, 1,
		    { 2, 2, 3, 3 }, 1, true, 1, 0 }, false, true },
	};
	enum ert_cpu_isa best = ert_cpu_isa_best();
	int runs = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct conv_case *cc = &cases[i].c;
		struct one o;

		conv_case_init(&o, cc, cases[i].residual ? 4 : cc->bias ? 3 : 2);
		runs += compare_levels(ert_test_failed_, &o, cc->name, 1e-5);
		for (int isa = ERT_ISA_SCALAR; isa <= (int)best; isa++) {
			const char *k = prepared_kernel(&o, (enum ert_cpu_isa)isa);
			bool stem = k && strstr(k, "conv-stem");

			if (stem != (cases[i].stem && isa > ERT_ISA_SCALAR)) {
				fprintf(stderr, "%s at %s: kernel %s\n", cc->name,
					ert_cpu_isa_name((enum ert_cpu_isa)isa), k ? k : "(none)");
				*ert_test_failed_ = 1;
			}
		}
		one_fini(&o);
	}
	CHECK(runs > 0);
}

/*
 * Conv with a fused residual (input 3, "ert.residual"): every level against
 * scalar, and scalar against the unfused sum it stands for, bit for bit:
 * Conv, then + R, then the activation.
 */
ERT_TEST(conv_residual_every_level)
{
	static const struct {
		const char *name;
		int64_t c, h, w, m, k, group, pad;
		int act;
	} cases[] = {
		{ "1x1 GEMM + residual, ReLU", 24, 7, 9, 40, 1, 1, 0, 1 },
		{ "3x3 im2col + residual, Clip", 6, 10, 11, 13, 3, 1, 1, 2 },
		{ "Winograd + residual, ReLU", 32, 20, 18, 32, 3, 1, 1, 1 },
		{ "Winograd + residual, LeakyRelu", 16, 16, 16, 24, 3, 1, 1, 3 },
		{ "Winograd + residual, Clip, wide rows", 20, 9, 70, 24, 3, 1, 1, 2 },
		{ "Winograd + residual, no activation", 24, 17, 21, 16, 3, 1, 1, 0 },
		/* F(2x2) at avx512 (F(4x4) at avx2) */
		{ "Winograd 2x2 + residual, Clip, 14x14 24->70", 24, 14, 14, 70, 3, 1, 1, 2 },
		{ "depthwise + residual", 16, 9, 9, 16, 3, 16, 1, 1 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct one o, plain;
		int64_t xd[4] = { 2, cases[i].c, cases[i].h, cases[i].w };
		int64_t wd[4] = { cases[i].m, cases[i].c / cases[i].group, cases[i].k, cases[i].k };
		int64_t bd[1] = { cases[i].m };
		int64_t oh = cases[i].h + 2 * cases[i].pad - cases[i].k + 1;
		int64_t ow = cases[i].w + 2 * cases[i].pad - cases[i].k + 1;
		int64_t rd[4] = { 2, cases[i].m, oh, ow };
		int64_t pads[4] = { cases[i].pad, cases[i].pad, cases[i].pad, cases[i].pad };
		struct ert_value fused, conv;

		one_init(&o, ERT_OP_Conv, 0, 4, 1);
		in_rand(&o, 0, 4, xd);
		in_rand(&o, 1, 4, wd);
		in_rand(&o, 2, 1, bd);
		in_rand(&o, 3, 4, rd);
		ert_node_set_attr_ints(o.g, o.n, "pads", pads, 4);
		ert_node_set_attr_int(o.g, o.n, "group", cases[i].group);
		ert_node_set_attr_int(o.g, o.n, "ert.residual", 1);
		set_act(&o, cases[i].act);
		compare_levels(ert_test_failed_, &o, cases[i].name, cases[i].k == 3 &&
			       cases[i].c >= 16 && cases[i].group == 1 ? 1e-4 : 1e-5);

		/* the same Conv without residual and activation, on the same inputs */
		one_init(&plain, ERT_OP_Conv, 0, 3, 1);
		for (int k = 0; k < 3; k++)
			plain.in[k] = o.in[k];
		ert_node_set_attr_ints(plain.g, plain.n, "pads", pads, 4);
		ert_node_set_attr_int(plain.g, plain.n, "group", cases[i].group);
		REQUIRE(one_run_at(&o, ERT_ISA_SCALAR, NULL, true, ERT_LEVEL_NORMAL, &fused) == ERT_OK);
		REQUIRE(one_run_at(&plain, ERT_ISA_SCALAR, NULL, true, ERT_LEVEL_NORMAL, &conv) ==
			ERT_OK);
		struct ert_act_desc act = ert_node_act(o.n);
		float *want = conv.data;
		const float *r = o.in[3].data;

		for (int64_t q = 0; q < conv.numel; q++)
			want[q] += r[q];
		ert_act_apply(&act, want, conv.numel);
		CHECK(fused.numel == conv.numel &&
		      !memcmp(fused.data, conv.data, (size_t)conv.numel * sizeof(float)));
		free(fused.data);
		free(conv.data);
		for (int k = 0; k < 3; k++)
			plain.in[k].data = NULL;
		ert_graph_destroy(plain.g);
		one_fini(&o);
	}
}

/* A residual of another shape, or one without the attribute, is refused by shape inference. */
ERT_TEST(conv_residual_checked)
{
	struct one o;
	int64_t xd[4] = { 1, 4, 5, 5 }, wd[4] = { 8, 4, 1, 1 }, rd[4] = { 1, 8, 5, 4 };
	struct ert_value out;

	one_init(&o, ERT_OP_Conv, 0, 4, 1);
	in_rand(&o, 0, 4, xd);
	in_rand(&o, 1, 4, wd);
	o.inp[2] = NULL;
	in_rand(&o, 3, 4, rd);
	ert_node_set_attr_int(o.g, o.n, "ert.residual", 1);
	CHECK_EQ_INT(one_run_at(&o, ERT_ISA_SCALAR, NULL, true, ERT_LEVEL_NORMAL, &out),
		     ERT_STATUS_SHAPE);
	CHECK(strstr(o.err.msg, "residual") != NULL);
	ert_node_set_attr_int(o.g, o.n, "ert.residual", 0);
	rd[3] = 5;
	in_rand(&o, 3, 4, rd);
	CHECK_EQ_INT(one_run_at(&o, ERT_ISA_SCALAR, NULL, true, ERT_LEVEL_NORMAL, &out),
		     ERT_STATUS_INVALID_MODEL);
	one_fini(&o);
}

ERT_TEST(matmul_every_level)
{
	static const struct {
		const char *name;
		int32_t ra, rb;
		int64_t a[4], b[4];
	} cases[] = {
		{ "batched, broadcast B batch", 4, 3, { 2, 3, 37, 29 }, { 1, 29, 53 } },
		{ "2-D B folded, N = 1", 3, 2, { 1, 50, 7 }, { 7, 1 } },
		{ "M past the M tile", 2, 2, { 130, 300 }, { 300, 49 } },
		{ "vector times matrix", 1, 2, { 33 }, { 33, 70 } },
		{ "attention-like", 3, 3, { 6, 17, 64 }, { 6, 64, 17 } },
	};
	int runs = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct one o;

		one_init(&o, ERT_OP_MatMul, 0, 2, 1);
		in_rand(&o, 0, cases[i].ra, cases[i].a);
		in_rand(&o, 1, cases[i].rb, cases[i].b);
		runs += compare_levels(ert_test_failed_, &o, cases[i].name, 1e-5);
		one_fini(&o);
	}
	CHECK(runs > 0);
}

/*
 * MatMul with a fused bias (input 2, "ert.bias"): every level against scalar
 * (Gelu, which runs on each level's vector kernels, included), and at every
 * level bit for bit against the unfused ops it stands for: the MatMul alone,
 * then + b per column, then the activation (ReLU, Clip or none, which the
 * micro-kernels apply exactly).
 */
ERT_TEST(matmul_bias_every_level)
{
	static const struct {
		const char *name;
		int32_t ra, rb;
		int64_t a[4], b[4];
		int act;
	} cases[] = {
		{ "ViT linear, folded batch, K past the K block", 3, 2, { 1, 197, 384 }, { 384, 77 },
		  0 },
		{ "N = 1, ReLU", 2, 2, { 9, 31 }, { 31, 1 }, 1 },
		{ "N tails of every kernel, Clip", 2, 2, { 13, 40 }, { 40, 57 }, 2 },
		{ "batched B, M tail", 3, 3, { 3, 11, 20 }, { 3, 20, 50 }, 1 },
		{ "vector times matrix", 1, 2, { 300 }, { 300, 33 }, 0 },
		{ "Gelu", 2, 2, { 10, 70 }, { 70, 130 }, ERT_ACT_GELU },
		{ "K = 0", 2, 2, { 4, 0 }, { 0, 9 }, 2 },
	};
	enum ert_cpu_isa best = ert_cpu_isa_best();
	int runs = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct one o, plain;
		int32_t rb = cases[i].rb;
		int64_t n = cases[i].b[rb - 1];

		one_init(&o, ERT_OP_MatMul, 0, 3, 1);
		in_rand(&o, 0, cases[i].ra, cases[i].a);
		in_rand(&o, 1, rb, cases[i].b);
		in_rand(&o, 2, 1, &n);
		ert_node_set_attr_int(o.g, o.n, "ert.bias", 1);
		set_act(&o, cases[i].act);
		runs += compare_levels(ert_test_failed_, &o, cases[i].name, 1e-5);

		one_init(&plain, ERT_OP_MatMul, 0, 2, 1);
		for (int k = 0; k < 2; k++)
			plain.in[k] = o.in[k];
		for (int isa = ERT_ISA_SCALAR; isa <= (int)best && cases[i].act != ERT_ACT_GELU;
		     isa++) {
			struct ert_value fused, mm;

			REQUIRE(one_run_at(&o, (enum ert_cpu_isa)isa, NULL, true, ERT_LEVEL_NORMAL,
				       &fused) == ERT_OK);
			REQUIRE(one_run_at(&plain, (enum ert_cpu_isa)isa, NULL, true, ERT_LEVEL_NORMAL,
				       &mm) == ERT_OK);
			struct ert_act_desc act = ert_node_act(o.n);
			float *want = mm.data;
			const float *bias = o.in[2].data;

			for (int64_t q = 0; q < mm.numel; q++)
				want[q] += bias[q % n];
			ert_act_apply(&act, want, mm.numel);
			if (!(fused.numel == mm.numel &&
			      !memcmp(fused.data, mm.data, (size_t)mm.numel * sizeof(float)))) {
				fprintf(stderr, "%s at %s: not the unfused MatMul + bias\n",
					cases[i].name, ert_cpu_isa_name((enum ert_cpu_isa)isa));
				*ert_test_failed_ = 1;
			}
			free(fused.data);
			free(mm.data);
		}
		for (int k = 0; k < 2; k++)
			plain.in[k].data = NULL;
		ert_graph_destroy(plain.g);
		one_fini(&o);
	}
	CHECK(runs > 0);
}

/*
 * MatMul with a fused scale ("ert.scale"), bias and residual (input 3,
 * "ert.residual"): every level against scalar, and at every level, on two
 * threads, bit for bit against the unfused ops: the MatMul alone, then
 * times the scale, + b per column, + the residual, then the activation.
 */
ERT_TEST(matmul_residual_scale_every_level)
{
	static const struct {
		const char *name;
		int32_t ra, rb;
		int64_t a[4], b[4];
		int act;
		bool bias;
		float scale;	/* 0: none */
	} cases[] = {
		{ "ViT proj, folded batch, K past the K block", 3, 2, { 1, 197, 384 }, { 384, 77 },
		  0, true, 0.0f },
		{ "scale 0.3 and bias, N tails, Clip", 2, 2, { 13, 300 }, { 300, 57 }, 2, true, 0.3f },
		{ "batched B (attention), scale 1/8, no bias, ReLU", 3, 3, { 3, 11, 20 },
		  { 3, 20, 50 }, 1, false, 0.125f },
		{ "scale alone, vector times matrix", 1, 2, { 300 }, { 300, 33 }, 0, false, -1.7f },
		{ "K = 0", 2, 2, { 4, 0 }, { 0, 9 }, 2, true, 0.5f },
	};
	enum ert_cpu_isa best = ert_cpu_isa_best();
	struct ert_threadpool *pool = ert_threadpool_create(2);
	int runs = 0;

	REQUIRE(pool);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct one o, plain;
		int32_t rb = cases[i].rb, ry = cases[i].ra > rb ? cases[i].ra : rb;
		int64_t n = cases[i].b[rb - 1], yd[4];
		bool res = cases[i].scale == 0.0f || cases[i].bias || cases[i].act;

		/* Y's dims: A's rows (if any), B's columns, the longer batch */
		for (int32_t d = 0; d < ry; d++)
			yd[d] = cases[i].ra >= rb ? cases[i].a[d] : cases[i].b[d];
		if (cases[i].ra == 1)
			ry = 1;
		yd[ry - 1] = n;
		one_init(&o, ERT_OP_MatMul, 0, res ? 4 : 2, 1);
		in_rand(&o, 0, cases[i].ra, cases[i].a);
		in_rand(&o, 1, rb, cases[i].b);
		if (res) {
			in_rand(&o, 2, 1, &n);
			in_rand(&o, 3, ry, yd);
			ert_node_set_attr_int(o.g, o.n, "ert.residual", 1);
			if (cases[i].bias)
				ert_node_set_attr_int(o.g, o.n, "ert.bias", 1);
			else
				o.inp[2] = NULL;
		}
		if (cases[i].scale != 0.0f)
			ert_node_set_attr_float(o.g, o.n, "ert.scale", cases[i].scale);
		set_act(&o, cases[i].act);
		runs += compare_levels(ert_test_failed_, &o, cases[i].name, 1e-5);

		one_init(&plain, ERT_OP_MatMul, 0, 2, 1);
		for (int k = 0; k < 2; k++)
			plain.in[k] = o.in[k];
		for (int isa = ERT_ISA_SCALAR; isa <= (int)best; isa++) {
			struct ert_value fused, mm;

			REQUIRE(one_run_at(&o, (enum ert_cpu_isa)isa, pool, true, ERT_LEVEL_NORMAL,
					   &fused) == ERT_OK);
			REQUIRE(one_run_at(&plain, (enum ert_cpu_isa)isa, pool, true,
					   ERT_LEVEL_NORMAL, &mm) == ERT_OK);
			struct ert_act_desc act = ert_node_act(o.n);
			float *want = mm.data;
			const float *bias = res && cases[i].bias ? o.in[2].data : NULL;
			const float *r = res ? o.in[3].data : NULL;

			for (int64_t q = 0; q < mm.numel; q++) {
				if (cases[i].scale != 0.0f)
					want[q] *= cases[i].scale;
				if (bias)
					want[q] += bias[q % n];
				if (r)
					want[q] += r[q];
			}
			ert_act_apply(&act, want, mm.numel);
			if (!(fused.numel == mm.numel &&
			      !memcmp(fused.data, mm.data, (size_t)mm.numel * sizeof(float)))) {
				fprintf(stderr, "%s at %s: not the unfused MatMul, Mul and Adds\n",
					cases[i].name, ert_cpu_isa_name((enum ert_cpu_isa)isa));
				*ert_test_failed_ = 1;
			}
			free(fused.data);
			free(mm.data);
		}
		for (int k = 0; k < 2; k++)
			plain.in[k].data = NULL;
		ert_graph_destroy(plain.g);
		one_fini(&o);
	}
	ert_threadpool_destroy(pool);
	CHECK(runs > 0);
}

/* @v transposed by @perm (its dim d is @v's dim perm[d]), into @dst (@v's numel floats). */
static void host_transpose(const struct ert_value *v, const int64_t *perm, float *dst,
			   int64_t *dims)
{
	int64_t st[ERT_MAX_RANK], s = 1, idx[ERT_MAX_RANK] = { 0 };
	const float *src = v->data;

	for (int32_t d = v->rank - 1; d >= 0; d--) {
		st[d] = s;
		s *= v->dims[d];
	}
	for (int32_t d = 0; d < v->rank; d++)
		dims[d] = v->dims[perm[d]];
	for (int64_t i = 0; i < v->numel; i++) {
		int64_t off = 0;

		for (int32_t d = 0; d < v->rank; d++)
			off += idx[d] * st[perm[d]];
		dst[i] = src[off];
		for (int32_t d = v->rank - 1; d >= 0 && ++idx[d] == dims[d]; d--)
			idx[d] = 0;
	}
}

/*
 * MatMul with folded Transposes (ert.perm_a, ert.perm_b, ert.perm_y): every
 * level against scalar (prepacked and run-time B, memory LOW, two threads),
 * and at every level bit for bit against the plain MatMul of the transposed
 * copies, its product then transposed: the ops the attributes stand for.
 */
ERT_TEST(matmul_perm_every_level)
{
	static const struct {
		const char *name;
		int32_t ra, rb;
		int64_t a[4], b[4];
		int64_t pa[4], pb[4], py[4]; /* pa[0] < 0: none */
		int act;                     /* with a fused bias: ReLU (1); 0: no bias */
	} cases[] = {
		{ "ViT Q K^T", 4, 4, { 1, 197, 6, 64 }, { 1, 197, 6, 64 }, { 0, 2, 1, 3 },
		  { 0, 2, 3, 1 }, { -1 }, 0 },
		{ "ViT attention x V, merged", 4, 4, { 1, 6, 197, 197 }, { 1, 197, 6, 64 }, { -1 },
		  { 0, 2, 1, 3 }, { 0, 2, 1, 3 }, 0 },
		{ "broadcast batches, K past the K block", 4, 4, { 2, 1, 300, 13 }, { 3, 1, 300, 20 },
		  { 1, 0, 3, 2 }, { -1 }, { 1, 0, 2, 3 }, 0 },
		{ "rank 2, A^T and B^T, bias and ReLU", 2, 2, { 40, 9 }, { 57, 40 }, { 1, 0 },
		  { 1, 0 }, { -1 }, 1 },
		{ "2-D A, 3-D B, 3-D output permutation", 2, 3, { 5, 11 }, { 4, 7, 5 }, { 1, 0 },
		  { 0, 2, 1 }, { 1, 0, 2 }, 0 },
		{ "A^T times a vector", 3, 1, { 3, 5, 4 }, { 5 }, { 0, 2, 1 }, { -1 }, { -1 }, 0 },
		{ "a vector times B^T", 1, 3, { 5 }, { 2, 6, 5 }, { -1 }, { 0, 2, 1 }, { -1 }, 0 },
		{ "B^T shared by A's batch", 3, 2, { 2, 9, 20 }, { 31, 20 }, { -1 }, { 1, 0 },
		  { -1 }, 0 },
		/* the packing's transposes on sizes no block divides (sgemm_pack_every_level) */
		{ "Q K^T, odd tokens and head size", 4, 4, { 2, 13, 3, 21 }, { 2, 13, 3, 21 },
		  { 0, 2, 1, 3 }, { 0, 2, 3, 1 }, { -1 }, 0 },
		{ "A^T and B^T past the K block, odd M and N", 2, 2, { 300, 23 }, { 37, 300 },
		  { 1, 0 }, { 1, 0 }, { -1 }, 0 },
		{ "probabilities x V, K tail", 4, 4, { 1, 3, 29, 70 }, { 1, 70, 3, 19 }, { -1 },
		  { 0, 2, 1, 3 }, { -1 }, 0 },
	};
	enum ert_cpu_isa best = ert_cpu_isa_best();
	int runs = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct one o, plain;
		int32_t ra = cases[i].ra, rb = cases[i].rb, ry = ra > rb ? ra : rb;
		bool bias = cases[i].act != 0;
		int64_t td[2][ERT_MAX_RANK], n;

		one_init(&o, ERT_OP_MatMul, 0, bias ? 3 : 2, 1);
		in_rand(&o, 0, ra, cases[i].a);
		in_rand(&o, 1, rb, cases[i].b);
		if (cases[i].pa[0] >= 0)
			ert_node_set_attr_ints(o.g, o.n, "ert.perm_a", cases[i].pa, (uint32_t)ra);
		if (cases[i].pb[0] >= 0)
			ert_node_set_attr_ints(o.g, o.n, "ert.perm_b", cases[i].pb, (uint32_t)rb);
		if (cases[i].py[0] >= 0)
			ert_node_set_attr_ints(o.g, o.n, "ert.perm_y", cases[i].py, (uint32_t)ry);
		n = cases[i].pb[0] >= 0 ? cases[i].b[cases[i].pb[rb - 1]] : cases[i].b[rb - 1];
		if (bias) {
			in_rand(&o, 2, 1, &n);
			ert_node_set_attr_int(o.g, o.n, "ert.bias", 1);
			set_act(&o, cases[i].act);
		}
		runs += compare_levels(ert_test_failed_, &o, cases[i].name, 1e-5);

		/* the plain MatMul of the transposed copies */
		one_init(&plain, ERT_OP_MatMul, 0, bias ? 3 : 2, 1);
		for (int k = 0; k < 2; k++) {
			const int64_t *p = k ? cases[i].pb : cases[i].pa;
			int64_t id[ERT_MAX_RANK] = { 0, 1, 2, 3 };
			int32_t r = k ? rb : ra;

			if (p[0] < 0)
				p = id;
			for (int32_t d = 0; d < r; d++)
				td[k][d] = o.in[k].dims[p[d]];
			host_transpose(&o.in[k], p,
				       one_in_alloc(&plain, (uint32_t)k, ERT_DTYPE_FLOAT32, r, td[k])->data,
				       td[k]);
		}
		if (bias) {
			plain.in[2] = o.in[2];
			ert_node_set_attr_int(plain.g, plain.n, "ert.bias", 1);
			set_act(&plain, cases[i].act);
		}
		for (int isa = ERT_ISA_SCALAR; isa <= (int)best; isa++) {
			struct ert_value got, mm;

			REQUIRE(one_run_at(&o, (enum ert_cpu_isa)isa, NULL, true, ERT_LEVEL_NORMAL,
				       &got) == ERT_OK);
			REQUIRE(one_run_at(&plain, (enum ert_cpu_isa)isa, NULL, true, ERT_LEVEL_NORMAL,
				       &mm) == ERT_OK);
			float *want = malloc((size_t)mm.numel * sizeof(float) + 1);
			int64_t wd[ERT_MAX_RANK], id[ERT_MAX_RANK] = { 0, 1, 2, 3 };

			REQUIRE(want);
			host_transpose(&mm, cases[i].py[0] >= 0 ? cases[i].py : id, want, wd);
			CHECK_EQ_INT(got.rank, mm.rank);
			for (int32_t d = 0; d < got.rank && d < mm.rank; d++)
				CHECK_EQ_INT(got.dims[d], wd[d]);
			if (!(got.numel == mm.numel &&
			      !memcmp(got.data, want, (size_t)mm.numel * sizeof(float)))) {
				fprintf(stderr, "%s at %s: not the MatMul of the transposed copies\n",
					cases[i].name, ert_cpu_isa_name((enum ert_cpu_isa)isa));
				*ert_test_failed_ = 1;
			}
			free(want);
			free(got.data);
			free(mm.data);
		}
		one_fini(&plain);
		one_fini(&o);
	}
	CHECK(runs > 0);
}

/* A bias of another length, or an input 2 without the attribute, is refused by shape inference. */
ERT_TEST(matmul_bias_checked)
{
	struct one o;
	int64_t ad[2] = { 3, 4 }, bd[2] = { 4, 5 }, cd[1] = { 4 };
	struct ert_value out;

	one_init(&o, ERT_OP_MatMul, 0, 3, 1);
	in_rand(&o, 0, 2, ad);
	in_rand(&o, 1, 2, bd);
	in_rand(&o, 2, 1, cd);
	ert_node_set_attr_int(o.g, o.n, "ert.bias", 1);
	CHECK_EQ_INT(one_run_at(&o, ERT_ISA_SCALAR, NULL, true, ERT_LEVEL_NORMAL, &out),
		     ERT_STATUS_SHAPE);
	CHECK(strstr(o.err.msg, "ert.bias") != NULL);
	ert_node_set_attr_int(o.g, o.n, "ert.bias", 0);
	cd[0] = 5;
	in_rand(&o, 2, 1, cd);
	CHECK_EQ_INT(one_run_at(&o, ERT_ISA_SCALAR, NULL, true, ERT_LEVEL_NORMAL, &out),
		     ERT_STATUS_INVALID_MODEL);
	one_fini(&o);
}

ERT_TEST(gemm_every_level)
{
	static const struct {
		const char *name;
		int64_t m, n, k;
		bool ta, tb;
		float alpha, beta;
		int32_t rc;        /* rank of C: 0 none, 1 row broadcast, 2 full */
		int act;
	} cases[] = {
		{ "classifier head", 1, 1000, 96, false, true, 1.0f, 1.0f, 1, 0 },
		{ "alpha beta, full C", 5, 70, 33, false, true, 0.5f, 2.0f, 2, 1 },
		{ "transposed A", 9, 21, 130, true, false, 1.5f, 1.0f, 1, 2 },
		{ "no C", 140, 17, 300, false, false, 1.0f, 0.0f, 0, 3 },
		{ "transposed A and B, odd sizes", 29, 35, 141, true, true, 1.0f, 1.0f, 1, 0 },
		{ "transposed B, N past two panels", 50, 97, 64, false, true, 1.0f, 0.0f, 0, 1 },
	};
	int runs = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct one o;
		int64_t ad[2] = { cases[i].ta ? cases[i].k : cases[i].m,
				  cases[i].ta ? cases[i].m : cases[i].k };
		int64_t bd[2] = { cases[i].tb ? cases[i].n : cases[i].k,
				  cases[i].tb ? cases[i].k : cases[i].n };
		int64_t cd[2] = { cases[i].m, cases[i].n };

		one_init(&o, ERT_OP_Gemm, 0, cases[i].rc ? 3 : 2, 1);
		in_rand(&o, 0, 2, ad);
		in_rand(&o, 1, 2, bd);
		if (cases[i].rc == 1)
			in_rand(&o, 2, 1, cd + 1);
		else if (cases[i].rc == 2)
			in_rand(&o, 2, 2, cd);
		ert_node_set_attr_int(o.g, o.n, "transA", cases[i].ta);
		ert_node_set_attr_int(o.g, o.n, "transB", cases[i].tb);
		ert_node_set_attr_float(o.g, o.n, "alpha", cases[i].alpha);
		ert_node_set_attr_float(o.g, o.n, "beta", cases[i].beta);
		set_act(&o, cases[i].act);
		runs += compare_levels(ert_test_failed_, &o, cases[i].name, 1e-5);
		one_fini(&o);
	}
	CHECK(runs > 0);
}

/* A session runs the level its config and ERT_CPU_ISA ask for; above the CPU's best it fails. */
ERT_TEST(session_level_choice)
{
	enum ert_cpu_isa best = ert_cpu_isa_best();
	ert_cpu_level got;
	const char *env = getenv("ERT_CPU_ISA");
	enum ert_cpu_isa cap = best;

	if (env && *env && ert_cpu_isa_from_name(env) >= 0 &&
	    (enum ert_cpu_isa)ert_cpu_isa_from_name(env) < best)
		cap = (enum ert_cpu_isa)ert_cpu_isa_from_name(env);
	for (int l = ERT_CPU_LEVEL_SCALAR; l <= ERT_CPU_LEVEL_AMX; l++) {
		ert_status st = ert_cpu_level_resolve((ert_cpu_level)l, &got);

		if ((enum ert_cpu_isa)(l - 1) > best) {
			CHECK_EQ_INT(st, ERT_STATUS_UNSUPPORTED);
			CHECK(strstr(ert_last_error(), "supports at most") != NULL);
			continue;
		}
		CHECK_EQ_INT(st, ERT_OK);
		CHECK_EQ_INT(got, (l - 1) < (int)cap ? l : (int)cap + 1);
	}
	CHECK_EQ_INT(ert_cpu_level_resolve(ERT_CPU_LEVEL_AUTO, &got), ERT_OK);
	CHECK_EQ_INT(got, (int)cap + 1);
	CHECK_EQ_INT(ert_cpu_level_resolve((ert_cpu_level)99, &got), ERT_STATUS_INVALID_ARGUMENT);
	CHECK(!strcmp(ert_cpu_level_name(ERT_CPU_LEVEL_AVX512VNNI), "avx512vnni"));
	CHECK(!strcmp(ert_cpu_level_name((ert_cpu_level)42), "unknown"));

	char line[8];
	size_t n = ert_cpu_describe(line, sizeof(line));

	CHECK(n > sizeof(line));
	CHECK_EQ_INT(strlen(line), sizeof(line) - 1);
}

/* A bad ERT_CPU_ISA fails session creation with a message naming it. */
ERT_TEST(bad_env_level_refused)
{
	const char *old = getenv("ERT_CPU_ISA");
	char *saved = old ? strdup(old) : NULL;
	ert_cpu_level got;

	setenv("ERT_CPU_ISA", "sse9", 1);
	CHECK_EQ_INT(ert_cpu_level_resolve(ERT_CPU_LEVEL_AUTO, &got), ERT_STATUS_INVALID_ARGUMENT);
	CHECK(strstr(ert_last_error(), "ERT_CPU_ISA='sse9'") != NULL);
	setenv("ERT_CPU_ISA", "scalar", 1);
	CHECK_EQ_INT(ert_cpu_level_resolve(ERT_CPU_LEVEL_AUTO, &got), ERT_OK);
	CHECK_EQ_INT(got, ERT_CPU_LEVEL_SCALAR);
	if (saved)
		setenv("ERT_CPU_ISA", saved, 1);
	else
		unsetenv("ERT_CPU_ISA");
	free(saved);
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(conv_every_level), ERT_TEST_ENTRY(conv_winograd_variant),
	      ERT_TEST_ENTRY(conv_winograd_threads_same_bits),
	      ERT_TEST_ENTRY(conv_band_split_threads_same_bits),
	      ERT_TEST_ENTRY(conv_smallplane_every_level),
	      ERT_TEST_ENTRY(conv_smallplane_rule_limits),
	      ERT_TEST_ENTRY(conv_smallplane_run_direct), ERT_TEST_ENTRY(conv_stem_every_level),
	      ERT_TEST_ENTRY(conv_residual_every_level),
	      ERT_TEST_ENTRY(conv_residual_checked), ERT_TEST_ENTRY(matmul_every_level),
	      ERT_TEST_ENTRY(matmul_bias_every_level),
	      ERT_TEST_ENTRY(matmul_residual_scale_every_level),
	      ERT_TEST_ENTRY(matmul_perm_every_level), ERT_TEST_ENTRY(matmul_bias_checked),
	      ERT_TEST_ENTRY(gemm_every_level), ERT_TEST_ENTRY(session_level_choice),
	      ERT_TEST_ENTRY(bad_env_level_refused))
