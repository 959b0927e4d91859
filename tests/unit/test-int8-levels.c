/* SPDX-License-Identifier: MIT */
/*
 * The int8 kernels (QLinearConv, ConvInteger, QLinearMatMul, MatMulInteger,
 * QGemm, QLinearAdd, QLinearMul) at every SIMD level this CPU supports
 * against the scalar reference, byte for byte: integer accumulation is
 * exact, so every level must give the same outputs. Awkward shapes: K and
 * channel counts no multiple of any block, stride 2, dilation, groups,
 * depthwise, asymmetric padding, 1x1 with stride, 1-D and 3-D, batch > 1,
 * broadcast batches; int8 and uint8 activations and weights, per-tensor and
 * per-channel scales and zero points, both requantisation rules, clamps,
 * ties; with prepacked and run-time weights, memory LOW, one and two
 * threads.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu-impl.h"
#include "cpu/ops/qlinear-kernels.h"
#include "cpu/qgemm/qgemm.h"
#include "edgert.h"
#include "ert-op-test.h"
#include "ert-test-int8.h"
#include "ert-test.h"
#include "ops/quant-fixed.h"

/* ---- convolution ---- */

enum { U8X = 1, U8W = 2, U8Y = 4, PER_CH = 8, WZP = 16, FIXED = 32, CLAMP = 64, TIES = 128,
       NOBIAS = 256 };

struct conv_case {
	const char *name;
	int32_t nsp;                 /* spatial dims: 1, 2 or 3 */
	int64_t n, c, m, group;
	int64_t in[3], k[3], s[3], d[3];
	int64_t pads[6];             /* begins, then ends */
	unsigned flags;
};

static const struct conv_case conv_cases[] = {
	{ "1x1 batch 2, odd channels", 2, 2, 19, 13, 1, { 7, 9 }, { 1, 1 }, { 1, 1 }, { 1, 1 },
	  { 0 }, PER_CH | FIXED },
	{ "1x1 stride 2, uint8", 2, 1, 16, 24, 1, { 9, 11 }, { 1, 1 }, { 2, 2 }, { 1, 1 }, { 0 },
	  U8X | U8Y },
	{ "3x3 pad 1, M tail, asymmetric weights", 2, 1, 8, 70, 1, { 14, 14 }, { 3, 3 }, { 1, 1 },
	  { 1, 1 }, { 1, 1, 1, 1 }, WZP | FIXED | CLAMP },
	{ "3x3 stride 2, asymmetric pads, uint8 weights", 2, 1, 5, 17, 1, { 15, 13 }, { 3, 3 },
	  { 2, 2 }, { 1, 1 }, { 0, 1, 1, 2 }, U8W | WZP | PER_CH },
	{ "3x3 stride 2, uint8 weights at 128", 2, 1, 6, 9, 1, { 11, 10 }, { 3, 3 }, { 2, 2 },
	  { 1, 1 }, { 1, 1, 1, 1 }, U8X | U8W | FIXED },
	{ "3x3 dilation 2", 2, 1, 6, 9, 1, { 12, 12 }, { 3, 3 }, { 1, 1 }, { 2, 2 },
	  { 2, 2, 2, 2 }, PER_CH | FIXED | CLAMP | U8Y },
	{ "3x3 groups 3, batch 2", 2, 2, 12, 15, 3, { 9, 10 }, { 3, 3 }, { 1, 1 }, { 1, 1 },
	  { 1, 1, 1, 1 }, PER_CH | WZP },
	{ "depthwise 3x3", 2, 1, 16, 16, 16, { 11, 13 }, { 3, 3 }, { 1, 1 }, { 1, 1 },
	  { 1, 1, 1, 1 }, PER_CH | FIXED },
	{ "depthwise 3x3 stride 2, multiplier 2", 2, 2, 8, 16, 8, { 12, 9 }, { 3, 3 }, { 2, 2 },
	  { 1, 1 }, { 0, 0, 1, 1 }, U8X | U8Y },
	{ "depthwise 5x5 dilation 2, asymmetric pads", 2, 1, 12, 12, 12, { 17, 19 }, { 5, 5 },
	  { 1, 1 }, { 2, 2 }, { 3, 4, 5, 2 }, PER_CH | WZP | U8X | FIXED | CLAMP },
	{ "depthwise 3x3 stride 2, wide rows, uint8 weights", 2, 1, 5, 5, 5, { 9, 150 }, { 3, 3 },
	  { 2, 2 }, { 1, 1 }, { 1, 1, 1, 1 }, U8W | WZP },
	{ "depthwise 1-D stride 3", 1, 2, 7, 21, 7, { 40 }, { 4 }, { 3 }, { 1 }, { 2, 3 },
	  PER_CH | FIXED },
	{ "5x3 stride (2, 1)", 2, 1, 4, 33, 1, { 10, 17 }, { 5, 3 }, { 2, 1 }, { 1, 1 },
	  { 2, 1, 2, 1 }, FIXED },
	{ "7x7 stride 2, 3 channels", 2, 1, 3, 64, 1, { 32, 32 }, { 7, 7 }, { 2, 2 }, { 1, 1 },
	  { 3, 3, 3, 3 }, PER_CH | FIXED },
	{ "K past every block", 2, 1, 300, 20, 1, { 6, 6 }, { 3, 3 }, { 1, 1 }, { 1, 1 },
	  { 1, 1, 1, 1 }, PER_CH | FIXED },
	{ "N past the tile", 2, 1, 8, 40, 1, { 40, 41 }, { 3, 3 }, { 1, 1 }, { 1, 1 },
	  { 1, 1, 1, 1 }, U8X | CLAMP },
	{ "1x1 wide, ties", 2, 1, 64, 7, 1, { 3, 50 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 0 },
	  TIES },
	{ "1x1 ties, fixed rule", 2, 2, 20, 12, 1, { 5, 7 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 0 },
	  TIES | FIXED | NOBIAS },
	{ "1-D, pads", 1, 2, 6, 10, 1, { 50 }, { 5 }, { 1 }, { 1 }, { 2, 1 }, PER_CH | WZP },
	{ "3-D", 3, 1, 4, 8, 1, { 5, 6, 7 }, { 3, 3, 3 }, { 1, 2, 1 }, { 1, 1, 1 },
	  { 1, 0, 1, 1, 1, 0 }, U8X | FIXED },
	/* im2col's stride-2 copies of more than 16 bytes, and their last 16 */
	{ "3x3 stride 2, wide rows", 2, 1, 5, 9, 1, { 7, 83 }, { 3, 3 }, { 2, 2 }, { 1, 1 },
	  { 1, 1, 1, 1 }, U8X | FIXED },
	{ "1-D stride 2, long row", 1, 1, 4, 8, 1, { 100 }, { 3 }, { 2 }, { 1 }, { 0, 0 }, PER_CH },
	/* channels by fours: B packed in tap-major quads from the interleaved input */
	{ "3x3 stride 2, wide rows, 8 channels", 2, 1, 8, 20, 1, { 9, 83 }, { 3, 3 }, { 2, 2 },
	  { 1, 1 }, { 1, 1, 1, 1 }, U8X | FIXED | PER_CH },
	{ "3x3 stride 2, asymmetric pads, 4 channels, uint8 weights", 2, 2, 4, 17, 1, { 15, 13 },
	  { 3, 3 }, { 2, 2 }, { 1, 1 }, { 0, 1, 1, 2 }, U8W | WZP | PER_CH },
	{ "3x3 dilation 2, 12 channels", 2, 1, 12, 9, 1, { 12, 12 }, { 3, 3 }, { 1, 1 }, { 2, 2 },
	  { 2, 2, 2, 2 }, PER_CH | FIXED | CLAMP | U8Y },
	{ "5x5 stride 3, 8 channels, groups 2", 2, 1, 16, 10, 2, { 23, 61 }, { 5, 5 }, { 3, 3 },
	  { 1, 1 }, { 2, 2, 2, 2 }, PER_CH | FIXED | WZP },
	{ "3x3, a row longer than the panels", 2, 1, 8, 24, 1, { 5, 131 }, { 3, 3 }, { 1, 1 },
	  { 1, 1 }, { 1, 1, 1, 1 }, FIXED },
};

/*
 * The float rule's multiplier x_s * w_s / y_s keeps the output spread over
 * the type's range (accumulators of about 74 * 74 * sqrt(K)); TIES makes it
 * a power of two, so that many products land on a half.
 */
static void conv_setup(struct one *o, const struct conv_case *cc, bool integer)
{
	ert_dtype xdt = cc->flags & U8X ? ERT_DTYPE_UINT8 : ERT_DTYPE_INT8;
	ert_dtype wdt = cc->flags & U8W ? ERT_DTYPE_UINT8 : ERT_DTYPE_INT8;
	ert_dtype ydt = cc->flags & U8Y ? ERT_DTYPE_UINT8 : ERT_DTYPE_INT8;
	int64_t xd[5] = { cc->n, cc->c }, wd[5] = { cc->m, cc->c / cc->group }, bd[1] = { cc->m };
	int64_t kk = 1, pads[6], nch = cc->flags & PER_CH ? cc->m : 0;
	int wlo = cc->flags & U8W ? 128 : 0, whi = wlo;
	float ws;

	for (int d = 0; d < cc->nsp; d++) {
		xd[2 + d] = cc->in[d];
		wd[2 + d] = cc->k[d];
		kk *= cc->k[d];
		pads[d] = cc->pads[d];
		pads[cc->nsp + d] = cc->pads[cc->nsp + d];
	}
	if (cc->flags & WZP) {
		wlo = cc->flags & U8W ? 100 : -20;
		whi = cc->flags & U8W ? 150 : 20;
	}
	ws = cc->flags & TIES ? 0.0625f
			      : 40.0f / (74.0f * 74.0f * sqrtf((float)(wd[1] * kk))) / 0.02f;
	if (integer) {
		one_init(o, ERT_OP_ConvInteger, 10, 4, 1);
		in_bytes(o, 0, xdt, 2 + cc->nsp, xd);
		in_bytes(o, 1, wdt, 2 + cc->nsp, wd);
		in_zp(o, 2, xdt, 0, xdt == ERT_DTYPE_UINT8 ? 90 : -30,
		      xdt == ERT_DTYPE_UINT8 ? 160 : 30);
		in_zp(o, 3, wdt, nch, wlo, whi);
	} else {
		one_init(o, ERT_OP_QLinearConv, 10, cc->flags & NOBIAS ? 8 : 9, 1);
		in_bytes(o, 0, xdt, 2 + cc->nsp, xd);
		in_scales(o, 1, 0, cc->flags & TIES ? 1.0f : 0.02f, false);
		in_zp(o, 2, xdt, 0, xdt == ERT_DTYPE_UINT8 ? 90 : -30,
		      xdt == ERT_DTYPE_UINT8 ? 160 : 30);
		in_bytes(o, 3, wdt, 2 + cc->nsp, wd);
		in_scales(o, 4, nch, ws, !(cc->flags & TIES));
		in_zp(o, 5, wdt, nch, wlo, whi);
		in_scales(o, 6, 0, cc->flags & TIES ? 16.0f : 1.0f, false);
		in_zp(o, 7, ydt, 0, ydt == ERT_DTYPE_UINT8 ? 100 : -10,
		      ydt == ERT_DTYPE_UINT8 ? 140 : 10);
		if (!(cc->flags & NOBIAS))
			in_i32(o, 8, 1, bd, 3000);
		if (cc->flags & (FIXED | CLAMP))
			set_rule(o, cc->flags & FIXED, cc->flags & CLAMP ? (ydt == ERT_DTYPE_UINT8 ? 110 : -5) : 1,
				 cc->flags & CLAMP ? (ydt == ERT_DTYPE_UINT8 ? 250 : 100) : 0);
	}
	ert_node_set_attr_ints(o->g, o->n, "strides", cc->s, cc->nsp);
	ert_node_set_attr_ints(o->g, o->n, "dilations", cc->d, cc->nsp);
	ert_node_set_attr_ints(o->g, o->n, "pads", pads, 2 * cc->nsp);
	ert_node_set_attr_int(o->g, o->n, "group", cc->group);
}

ERT_TEST(qlinearconv_every_level)
{
	int runs = 0;

	for (size_t i = 0; i < sizeof(conv_cases) / sizeof(conv_cases[0]); i++) {
		struct one o;

		conv_setup(&o, &conv_cases[i], false);
		runs += compare_levels(ert_test_failed_, &o, conv_cases[i].name);
		one_fini(&o);
	}
	CHECK(runs > 0);
}

ERT_TEST(convinteger_every_level)
{
	int runs = 0;

	for (size_t i = 0; i < sizeof(conv_cases) / sizeof(conv_cases[0]); i++) {
		struct one o;

		conv_setup(&o, &conv_cases[i], true);
		runs += compare_levels(ert_test_failed_, &o, conv_cases[i].name);
		one_fini(&o);
	}
	CHECK(runs > 0);
}

/* ---- matrix products ---- */

struct mm_case {
	const char *name;
	enum ert_op op;
	int32_t ra, rb;
	int64_t a[4], b[4];
	unsigned flags;              /* U8X: A uint8, U8W: B uint8, PER_CH: per-column B */
	float mult;                  /* output multiplier per unit accumulator spread (0: 1) */
};

static const struct mm_case mm_cases[] = {
	{ "batched, broadcast B batch", ERT_OP_QLinearMatMul, 4, 3, { 2, 3, 37, 29 }, { 1, 29, 53 },
	  FIXED, 0 },
	{ "2-D B, N = 1, uint8", ERT_OP_QLinearMatMul, 3, 2, { 1, 50, 7 }, { 7, 1 },
	  U8X | U8W | U8Y, 0 },
	{ "per-column B, M past the tile", ERT_OP_QLinearMatMul, 2, 2, { 130, 300 }, { 300, 49 },
	  PER_CH | WZP | FIXED | CLAMP, 0 },
	{ "vector times matrix", ERT_OP_QLinearMatMul, 1, 2, { 33 }, { 33, 70 }, U8X, 0 },
	{ "ties, batched B", ERT_OP_QLinearMatMul, 3, 3, { 6, 17, 64 }, { 6, 64, 17 }, TIES, 0 },
	{ "multiplier above 1 (left shift)", ERT_OP_QLinearMatMul, 2, 2, { 9, 3 }, { 3, 40 },
	  FIXED, 1.7f },
	{ "integer, per-row a zp, per-column b zp", ERT_OP_MatMulInteger, 2, 2, { 50, 7 },
	  { 7, 33 }, U8X | PER_CH | WZP, 0 },
	{ "integer, vector, int8", ERT_OP_MatMulInteger, 1, 2, { 33 }, { 33, 70 }, 0, 0 },
	{ "integer, batched uint8 B", ERT_OP_MatMulInteger, 3, 3, { 3, 20, 45 }, { 3, 45, 50 },
	  U8W | WZP, 0 },
	/* K4 = 175: more than one K block of every kernel, a short last AMX chunk */
	{ "long K, rows and columns past the tile", ERT_OP_QLinearMatMul, 2, 2, { 37, 700 },
	  { 700, 53 }, PER_CH | WZP | FIXED, 0 },
};

static void mm_setup(struct one *o, const struct mm_case *mc)
{
	ert_dtype adt = mc->flags & U8X ? ERT_DTYPE_UINT8 : ERT_DTYPE_INT8;
	ert_dtype bdt = mc->flags & U8W ? ERT_DTYPE_UINT8 : ERT_DTYPE_INT8;
	ert_dtype ydt = mc->flags & U8Y ? ERT_DTYPE_UINT8 : ERT_DTYPE_INT8;
	int64_t k = mc->a[mc->ra - 1], n = mc->rb > 1 ? mc->b[mc->rb - 1] : 1;
	int64_t m = mc->ra > 1 ? mc->a[mc->ra - 2] : 0;
	int64_t ncol = mc->flags & PER_CH ? n : 0;
	int blo = bdt == ERT_DTYPE_UINT8 ? 128 : 0, bhi = blo;
	float spread = 74.0f * 74.0f * sqrtf((float)k), bs;

	if (mc->flags & WZP) {
		blo = bdt == ERT_DTYPE_UINT8 ? 100 : -20;
		bhi = bdt == ERT_DTYPE_UINT8 ? 150 : 20;
	}
	bs = mc->flags & TIES ? 0.0625f : (mc->mult ? mc->mult : 40.0f / spread) / 0.02f;
	if (mc->op == ERT_OP_MatMulInteger) {
		one_init(o, ERT_OP_MatMulInteger, 10, 4, 1);
		in_bytes(o, 0, adt, mc->ra, mc->a);
		in_bytes(o, 1, bdt, mc->rb, mc->b);
		/* a per-row a_zero_point when A is a matrix */
		in_zp(o, 2, adt, mc->flags & PER_CH ? m : 0, adt == ERT_DTYPE_UINT8 ? 90 : -30,
		      adt == ERT_DTYPE_UINT8 ? 160 : 30);
		in_zp(o, 3, bdt, ncol, blo, bhi);
		return;
	}
	one_init(o, ERT_OP_QLinearMatMul, 10, 8, 1);
	in_bytes(o, 0, adt, mc->ra, mc->a);
	in_scales(o, 1, 0, mc->flags & TIES ? 1.0f : 0.02f, false);
	in_zp(o, 2, adt, 0, adt == ERT_DTYPE_UINT8 ? 90 : -30, adt == ERT_DTYPE_UINT8 ? 160 : 30);
	in_bytes(o, 3, bdt, mc->rb, mc->b);
	in_scales(o, 4, ncol, bs, !(mc->flags & TIES));
	in_zp(o, 5, bdt, ncol, blo, bhi);
	in_scales(o, 6, 0, mc->flags & TIES ? 16.0f : 1.0f, false);
	in_zp(o, 7, ydt, 0, ydt == ERT_DTYPE_UINT8 ? 100 : -10, ydt == ERT_DTYPE_UINT8 ? 140 : 10);
	if (mc->flags & (FIXED | CLAMP))
		set_rule(o, mc->flags & FIXED, mc->flags & CLAMP ? -5 : 1, mc->flags & CLAMP ? 100 : 0);
}

ERT_TEST(matmul_every_level)
{
	int runs = 0;

	for (size_t i = 0; i < sizeof(mm_cases) / sizeof(mm_cases[0]); i++) {
		struct one o;

		mm_setup(&o, &mm_cases[i]);
		runs += compare_levels(ert_test_failed_, &o, mm_cases[i].name);
		one_fini(&o);
	}
	CHECK(runs > 0);
}

struct qgemm_case {
	const char *name;
	int64_t m, n, k;
	bool ta, tb;
	float alpha;
	int32_t rc;                  /* C: 0 none, 1 (N), 2 (M, N), 3 (M, 1), 4 scalar */
	bool float_out;              /* no y_scale / y_zero_point */
	unsigned flags;
};

static const struct qgemm_case qgemm_cases[] = {
	{ "classifier head, transB", 1, 1000, 300, false, true, 1.0f, 1, false, FIXED | PER_CH },
	{ "full C, uint8", 5, 70, 33, false, true, 1.0f, 2, false, U8X | U8W | U8Y | WZP },
	{ "transposed A, C per row", 9, 21, 130, true, false, 1.0f, 3, false, PER_CH | FIXED },
	{ "alpha, scalar C", 40, 17, 77, false, false, 0.75f, 4, false, U8X | CLAMP },
	{ "float output, alpha", 12, 50, 61, true, true, 0.5f, 1, true, PER_CH | WZP },
	{ "no C, M past the tile", 140, 35, 19, false, false, 1.0f, 0, false, FIXED },
};

static void qgemm_setup(struct one *o, const struct qgemm_case *qc)
{
	ert_dtype adt = qc->flags & U8X ? ERT_DTYPE_UINT8 : ERT_DTYPE_INT8;
	ert_dtype bdt = qc->flags & U8W ? ERT_DTYPE_UINT8 : ERT_DTYPE_INT8;
	ert_dtype ydt = qc->flags & U8Y ? ERT_DTYPE_UINT8 : ERT_DTYPE_INT8;
	int64_t ad[2] = { qc->ta ? qc->k : qc->m, qc->ta ? qc->m : qc->k };
	int64_t bd[2] = { qc->tb ? qc->n : qc->k, qc->tb ? qc->k : qc->n };
	int64_t cd[2] = { qc->m, qc->n }, cr[2] = { qc->m, 1 };
	int64_t ncol = qc->flags & PER_CH ? qc->n : 0;
	int blo = bdt == ERT_DTYPE_UINT8 ? 128 : 0, bhi = blo;

	if (qc->flags & WZP) {
		blo = bdt == ERT_DTYPE_UINT8 ? 100 : -20;
		bhi = bdt == ERT_DTYPE_UINT8 ? 150 : 20;
	}
	one_init(o, ERT_OP_QGemm, 13, qc->float_out ? 7 : 9, 1);
	in_bytes(o, 0, adt, 2, ad);
	in_scales(o, 1, 0, 0.02f, false);
	in_zp(o, 2, adt, 0, adt == ERT_DTYPE_UINT8 ? 90 : -30, adt == ERT_DTYPE_UINT8 ? 160 : 30);
	in_bytes(o, 3, bdt, 2, bd);
	in_scales(o, 4, ncol, 40.0f / (74.0f * 74.0f * sqrtf((float)qc->k)) / 0.02f, true);
	in_zp(o, 5, bdt, ncol, blo, bhi);
	if (qc->rc == 1)
		in_i32(o, 6, 1, cd + 1, 5000);
	else if (qc->rc == 2)
		in_i32(o, 6, 2, cd, 5000);
	else if (qc->rc == 3)
		in_i32(o, 6, 2, cr, 5000);
	else if (qc->rc == 4)
		in_i32(o, 6, 0, NULL, 5000);
	else
		o->inp[6] = NULL;
	if (!qc->float_out) {
		in_scales(o, 7, 0, 1.0f, false);
		in_zp(o, 8, ydt, 0, ydt == ERT_DTYPE_UINT8 ? 100 : -10,
		      ydt == ERT_DTYPE_UINT8 ? 140 : 10);
	}
	ert_node_set_attr_int(o->g, o->n, "transA", qc->ta);
	ert_node_set_attr_int(o->g, o->n, "transB", qc->tb);
	ert_node_set_attr_float(o->g, o->n, "alpha", qc->alpha);
	if (qc->flags & (FIXED | CLAMP))
		set_rule(o, qc->flags & FIXED, qc->flags & CLAMP ? -5 : 1, qc->flags & CLAMP ? 100 : 0);
}

ERT_TEST(qgemm_every_level)
{
	int runs = 0;

	for (size_t i = 0; i < sizeof(qgemm_cases) / sizeof(qgemm_cases[0]); i++) {
		struct one o;

		qgemm_setup(&o, &qgemm_cases[i]);
		runs += compare_levels(ert_test_failed_, &o, qgemm_cases[i].name);
		one_fini(&o);
	}
	CHECK(runs > 0);
}

/* ---- QLinearAdd, QLinearMul ---- */

struct bin_case {
	const char *name;
	enum ert_op op;
	int32_t ra, rb;
	int64_t a[4], b[4];
	unsigned flags;              /* U8X: all uint8; FIXED, CLAMP */
	float sa, sb, sy;
};

static const struct bin_case bin_cases[] = {
	{ "add, same shape, odd length", ERT_OP_QLinearAdd, 2, 2, { 37, 29 }, { 37, 29 }, FIXED,
	  0.05f, 0.031f, 0.07f },
	{ "add, float rule, uint8", ERT_OP_QLinearAdd, 3, 3, { 3, 17, 11 }, { 3, 17, 11 }, U8X,
	  0.02f, 0.03f, 0.04f },
	{ "add, per-channel broadcast", ERT_OP_QLinearAdd, 4, 3, { 2, 6, 5, 13 }, { 6, 1, 1 },
	  FIXED | CLAMP, 0.1f, 0.2f, 0.15f },
	{ "add, scalar B, ties", ERT_OP_QLinearAdd, 2, 0, { 5, 21 }, { 0 }, 0, 0.5f, 0.25f, 1.0f },
	{ "add, inner broadcast, uint8", ERT_OP_QLinearAdd, 3, 3, { 4, 9, 23 }, { 4, 1, 23 },
	  U8X | FIXED, 0.02f, 0.5f, 0.3f },
	{ "mul, same shape", ERT_OP_QLinearMul, 2, 2, { 19, 41 }, { 19, 41 }, FIXED, 0.05f, 0.04f,
	  0.2f },
	{ "mul, float rule, broadcast", ERT_OP_QLinearMul, 3, 2, { 3, 7, 30 }, { 7, 1 }, U8X,
	  0.05f, 0.04f, 0.2f },
	{ "mul, ties", ERT_OP_QLinearMul, 1, 1, { 100 }, { 100 }, FIXED | CLAMP, 0.5f, 0.5f, 2.0f },
};

static void bin_setup(struct one *o, const struct bin_case *bc)
{
	ert_dtype dt = bc->flags & U8X ? ERT_DTYPE_UINT8 : ERT_DTYPE_INT8;
	int zlo = dt == ERT_DTYPE_UINT8 ? 90 : -30, zhi = dt == ERT_DTYPE_UINT8 ? 160 : 30;

	one_init(o, bc->op, 1, 8, 1);
	in_bytes(o, 0, dt, bc->ra, bc->a);
	in_scales(o, 1, 0, bc->sa, false);
	in_zp(o, 2, dt, 0, zlo, zhi);
	in_bytes(o, 3, dt, bc->rb, bc->b);
	in_scales(o, 4, 0, bc->sb, false);
	in_zp(o, 5, dt, 0, zlo, zhi);
	in_scales(o, 6, 0, bc->sy, false);
	in_zp(o, 7, dt, 0, zlo, zhi);
	if (bc->flags & (FIXED | CLAMP))
		set_rule(o, bc->flags & FIXED, bc->flags & CLAMP ? zhi - 40 : 1,
			 bc->flags & CLAMP ? zhi + 20 : 0);
}

ERT_TEST(qlinear_binary_every_level)
{
	int runs = 0;

	for (size_t i = 0; i < sizeof(bin_cases) / sizeof(bin_cases[0]); i++) {
		struct one o;

		bin_setup(&o, &bin_cases[i]);
		runs += compare_levels(ert_test_failed_, &o, bin_cases[i].name);
		one_fini(&o);
	}
	CHECK(runs > 0);
}

/*
 * QLinearAdd and QLinearMul name the lanes they run (edgert profile showed
 * "scalar" for the fixed-rule Adds of the int8 resnet50, which ran the
 * level's lanes): every case, every level this CPU has.
 */
ERT_TEST(qlinear_binary_kernel_names)
{
	enum ert_cpu_isa best = ert_cpu_isa_best();

	for (size_t i = 0; i < sizeof(bin_cases) / sizeof(bin_cases[0]); i++) {
		struct one o;

		bin_setup(&o, &bin_cases[i]);
		for (int isa = ERT_ISA_SCALAR; isa <= (int)best; isa++) {
			const struct ert_cpu_op *op = ert_cpu_op_find(o.n->op);
			struct ert_cpu cpu = { .isa = (enum ert_cpu_isa)isa, .num_threads = 1 };
			struct ert_exec x = { .graph = o.g, .node = o.n };
			struct ert_err err;
			const char *want = isa >= ERT_ISA_AVX512 ? "q8-ew-avx512"
					   : isa >= ERT_ISA_AVX2 ? "q8-ew-avx2" : NULL;

			REQUIRE(op && op->prepare);
			CHECK_EQ_INT(op->prepare(&cpu, &x, &err), ERT_OK);
			if (!want)
				CHECK(x.kernel == NULL);
			else
				CHECK(x.kernel && !strcmp(x.kernel, want));
		}
		one_fini(&o);
	}
}

/* ---- QuantizeLinear, float32 to int8/uint8 ---- */

/*
 * Scale triples (A_s, B_s, C_s) for the fixed-rule Add tests below, with
 * what they reach: the typical case, equal scales (both inputs a power of
 * two), inputs 500x-2000x apart (input shifts -9 to -11: the 32-bit form's
 * last K = 22), -12 (K = 23: the three requantisations' lanes instead), the
 * sum's shift 0 (no sign correction) and +2 (the other lanes), its
 * multiplier 0, its shift -31 and -30, both inputs below the output scale.
 */
static const float add_scales[][3] = {
	{ 0.05f, 0.031f, 0.07f }, { 1.0f, 1.0f, 1.0f }, { 0.001f, 0.5f, 0.002f },
	{ 3.0f, 0.01f, 0.02f }, { 0.02f, 0.02f, 5.0f }, { 0.7f, 0.0007f, 0.0009f },
	{ 1.0f, 0.00066f, 0.5f }, { 1.0f, 0.00033f, 0.5f }, { 1.0f, 1.0f, 2.5e-6f },
	{ 1.0f, 0.6f, 5e-7f }, { 0.001f, 0.001f, 1000.0f }, { 0.001f, 0.001f, 5.9f },
	{ 0.001f, 0.0013f, 4.0f }, { 0.0123f, 0.0456f, 0.0311f },
};

/* The fixed rule's Add of bytes @a and @b with multipliers @q, from ert_requant_fixed() alone. */
static int add_rule(ert_dtype dt, const struct ert_quant_add *q, const int *zp, int lo, int hi,
		    uint8_t a, uint8_t b)
{
	int32_t va = dt == ERT_DTYPE_UINT8 ? a : (int8_t)a, vb = dt == ERT_DTYPE_UINT8 ? b : (int8_t)b;
	int32_t sum = ert_requant_fixed((va - zp[0]) * (1 << 20), q->a_mult, q->a_shift) +
		      ert_requant_fixed((vb - zp[1]) * (1 << 20), q->b_mult, q->b_shift);
	int64_t y = (int64_t)ert_requant_fixed(sum, q->out_mult, q->out_shift) + zp[2];

	return (int)(y < lo ? lo : y > hi ? hi : y);
}

/* Every output of @o (a fixed-rule Add) at every level against add_rule(). */
static void check_add_rule(int *ert_test_failed_, struct one *o, const float *sc, const int *zp,
			   int lo, int hi, const char *what)
{
	const struct ert_value *a = o->inp[0], *b = o->inp[3];
	ert_dtype dt = a->dtype;
	struct ert_quant_add q;

	REQUIRE(ert_quant_add_params(sc[0], sc[1], sc[2], &q));
	for (int isa = ERT_ISA_SCALAR; isa <= (int)ert_cpu_isa_best(); isa++) {
		struct ert_value y;
		int64_t bad = 0;

		if (one_run_at(o, (enum ert_cpu_isa)isa, NULL, true, ERT_LEVEL_NORMAL, &y) != ERT_OK) {
			fprintf(stderr, "%s at %s: %s\n", what,
				ert_cpu_isa_name((enum ert_cpu_isa)isa), o->err.msg);
			*ert_test_failed_ = 1;
			continue;
		}
		/* rank-2 inputs broadcast to y's [rows, cols] */
		for (int64_t r = 0; r < y.dims[0]; r++)
			for (int64_t c = 0; c < y.dims[1]; c++) {
				int64_t ia = (a->dims[0] > 1 ? r * a->dims[1] : 0) + (a->dims[1] > 1 ? c : 0);
				int64_t ib = (b->dims[0] > 1 ? r * b->dims[1] : 0) + (b->dims[1] > 1 ? c : 0);
				uint8_t got = ((const uint8_t *)y.data)[r * y.dims[1] + c];
				int want = add_rule(dt, &q, zp, lo, hi, ((const uint8_t *)a->data)[ia],
						    ((const uint8_t *)b->data)[ib]);

				if ((dt == ERT_DTYPE_UINT8 ? got : (int8_t)got) != want && !bad++)
					fprintf(stderr, "%s at %s: [%lld, %lld] gives %d, not %d\n",
						what, ert_cpu_isa_name((enum ert_cpu_isa)isa),
						(long long)r, (long long)c,
						dt == ERT_DTYPE_UINT8 ? got : (int8_t)got, want);
			}
		if (bad)
			*ert_test_failed_ = 1;
		free(y.data);
	}
}

/* A fixed-rule Add of @dt inputs of dims @da and @db, clamp [lo, hi], in @o. */
static void add_setup(struct one *o, ert_dtype dt, const int64_t *da, const int64_t *db,
		      const float *sc, const int *zp, int lo, int hi)
{
	struct ert_value *av, *bv;

	one_init(o, ERT_OP_QLinearAdd, 1, 8, 1);
	av = one_in_alloc(o, 0, dt, 2, da);
	bv = one_in_alloc(o, 3, dt, 2, db);
	/* a runs through every byte along the columns, b down the rows */
	for (int64_t i = 0; i < av->numel; i++)
		((uint8_t *)av->data)[i] = (uint8_t)(i % da[1]);
	for (int64_t i = 0; i < bv->numel; i++)
		((uint8_t *)bv->data)[i] = (uint8_t)(db[1] > 1 ? i % db[1] + i / db[1] : i);
	in_scales(o, 1, 0, sc[0], false);
	in_zp(o, 2, dt, 0, zp[0], zp[0]);
	in_scales(o, 4, 0, sc[1], false);
	in_zp(o, 5, dt, 0, zp[1], zp[1]);
	in_scales(o, 6, 0, sc[2], false);
	in_zp(o, 7, dt, 0, zp[2], zp[2]);
	set_rule(o, true, lo, hi);
}

/*
 * The fixed-rule QLinearAdd over every pair of input bytes (a 256 x 256
 * grid, plus a run of 37 so the tail is not a whole vector), at every level
 * against the scalar one and against the rule computed here: the lanes'
 * 32-bit form (struct ert_q8_addf) must give the 64-bit products' values
 * for each pair, each zero point at the ends and middle of the type, the
 * scales of add_scales[], a clamp that lets negative sums through and one
 * at the zero point (ReLU: the sum's sign correction skipped).
 */
ERT_TEST(qlinear_add_fixed_every_byte)
{
	static const int zps[2][3] = { { 0, 128, 255 }, { -128, 0, 127 } };
	int runs = 0;

	for (int s8 = 0; s8 < 2; s8++)
		for (size_t si = 0; si < sizeof(add_scales) / sizeof(add_scales[0]); si++)
			for (int z = 0; z < 6; z++) {
				ert_dtype dt = s8 ? ERT_DTYPE_INT8 : ERT_DTYPE_UINT8;
				int64_t dims[2] = { 256, 256 + 37 };
				int zp[3] = { zps[s8][z % 3], zps[s8][(z + 1) % 3], zps[s8][(z + 2) % 3] };
				int lo = z < 3 ? (s8 ? -100 : 20) : zp[2];
				int hi = z < 3 ? (s8 ? 90 : 230 - (int)si * z) : (s8 ? 127 : 255);
				struct one o;
				char what[80];

				add_setup(&o, dt, dims, dims, add_scales[si], zp, lo, hi);
				snprintf(what, sizeof(what), "fixed add, %s, scales %zu, zp %d/%d/%d, [%d, %d]",
					 s8 ? "int8" : "uint8", si, zp[0], zp[1], zp[2], lo, hi);
				runs += compare_levels(ert_test_failed_, &o, what);
				check_add_rule(ert_test_failed_, &o, add_scales[si], zp, lo, hi, what);
				one_fini(&o);
			}
	CHECK(runs > 0);
}

/*
 * The same with one input repeating a byte along the run (step 0: its
 * scaled value joins the lanes' constant), on either side, so every pair of
 * bytes is still met: [1, 256 + 37] against [256, 1] and the other way
 * round; and two scalars (one element).
 */
ERT_TEST(qlinear_add_fixed_broadcast)
{
	static const int zps[2][3] = { { 3, 128, 250 }, { -120, 0, 127 } };
	int runs = 0;

	for (int s8 = 0; s8 < 2; s8++)
		for (size_t si = 0; si < sizeof(add_scales) / sizeof(add_scales[0]); si++)
			for (int side = 0; side < 3; side++) {
				ert_dtype dt = s8 ? ERT_DTYPE_INT8 : ERT_DTYPE_UINT8;
				int64_t row[2] = { 1, 256 + 37 }, col[2] = { 256, 1 }, one1[2] = { 1, 1 };
				int zp[3] = { zps[s8][side], zps[s8][(side + 1) % 3], zps[s8][(side + 2) % 3] };
				int lo = side == 1 ? zp[2] : s8 ? -128 : 0, hi = s8 ? 127 : 255;
				struct one o;
				char what[80];

				add_setup(&o, dt, side == 2 ? one1 : side ? col : row,
					  side == 2 ? one1 : side ? row : col, add_scales[si], zp, lo, hi);
				snprintf(what, sizeof(what), "fixed add, %s, scales %zu, broadcast %s",
					 s8 ? "int8" : "uint8", si,
					 side == 2 ? "both" : side ? "a" : "b");
				runs += compare_levels(ert_test_failed_, &o, what);
				check_add_rule(ert_test_failed_, &o, add_scales[si], zp, lo, hi, what);
				one_fini(&o);
			}
	CHECK(runs > 0);
}

/*
 * ert_q8_add_init() takes the 32-bit form at the SIMD levels for the
 * scales quantised models have (and for the edges above: the sum's shift
 * 0, input shift -11), and leaves it for the three requantisations' lanes
 * where a bound fails (input shift -12, the sum's shift > 0): so the tests
 * above run both.
 */
ERT_TEST(qlinear_add_fixed_form_chosen)
{
	static const struct {
		size_t si;
		bool fast;
	} want[] = { { 0, true }, { 1, true }, { 5, true }, { 6, true }, { 7, false },
		     { 8, true }, { 9, false }, { 11, true }, { 13, true } };
	struct ert_qout qo = { .dtype = ERT_DTYPE_INT8, .zp = -3, .lo = -128, .hi = 127,
			       .fixed = true };
	struct ert_q8_add *p = malloc(sizeof(*p));

	REQUIRE(p);
	for (int isa = ERT_ISA_SCALAR; isa <= (int)ert_cpu_isa_best(); isa++)
		for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
			const float *sc = add_scales[want[i].si];

			REQUIRE(ert_q8_add_init(p, (enum ert_cpu_isa)isa, &qo, sc[0], 5, sc[1], -7,
						sc[2]));
			if ((p->fast != NULL) != (want[i].fast && isa >= ERT_ISA_AVX2)) {
				fprintf(stderr, "scales %zu at %s: 32-bit form %s\n", want[i].si,
					ert_cpu_isa_name((enum ert_cpu_isa)isa),
					p->fast ? "taken" : "not taken");
				*ert_test_failed_ = 1;
			}
		}
	free(p);
}

/*
 * QuantizeLinear's byte kernels (q8-quant-<level>) against the scalar level
 * and against rint(x / s) + zp saturated, computed here: lengths around
 * the 8 and 16 lanes (1 element, tails, past a parallel chunk of 8192),
 * zero points at both ends and the middle of each type, ties of .5 both
 * ways (scale 0.5: x / s exact), values far past the type's range, NaN
 * (gives zp), +-inf and -0.
 */
ERT_TEST(quantize_every_level)
{
	static const int64_t lens[] = { 1, 7, 8, 9, 15, 16, 17, 33, 8192 + 13 };
	static const int zps[2][3] = { { 0, 128, 255 }, { -128, 0, 127 } };
	static const float special[] = { NAN, INFINITY, -INFINITY, -0.0f, 1e30f, -1e30f,
					 63.75f, -64.25f, 0.25f, -0.25f, 0.75f, -0.75f };
	int runs = 0;

	for (int s8 = 0; s8 < 2; s8++)
		for (int z = 0; z < 3; z++)
			for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
				ert_dtype dt = s8 ? ERT_DTYPE_INT8 : ERT_DTYPE_UINT8;
				int64_t n = lens[li];
				int zp = zps[s8][z], lo = s8 ? -128 : 0, hi = s8 ? 127 : 255;
				const float sc = 0.5f;
				struct ert_value *xv, y;
				struct one o;
				char what[64];

				one_init(&o, ERT_OP_QuantizeLinear, 0, 3, 1);
				xv = one_in_alloc(&o, 0, ERT_DTYPE_FLOAT32, 1, &n);
				for (int64_t k = 0; k < n; k++) {
					float *x = xv->data;
					uint32_t r = lcg_next(&seed);

					if (r % 5 == 0)
						x[k] = special[(r >> 8) % (sizeof(special) /
									 sizeof(special[0]))];
					else if (r % 5 == 1) /* a tie: (m + 0.5) * s */
						x[k] = ((float)((int)(r >> 8) % 601 - 300) + 0.5f) * sc;
					else
						x[k] = (frand_r(&seed) - 0.5f) * 300.0f;
				}
				in_scales(&o, 1, 0, sc, false);
				in_zp(&o, 2, dt, 0, zp, zp);
				snprintf(what, sizeof(what), "quantize %s zp %d n %lld",
					 s8 ? "int8" : "uint8", zp, (long long)n);
				runs += compare_levels(ert_test_failed_, &o, what);
				for (int isa = ERT_ISA_SCALAR; isa <= (int)ert_cpu_isa_best(); isa++) {
					REQUIRE(one_run_at(&o, (enum ert_cpu_isa)isa, NULL, true,
						       ERT_LEVEL_NORMAL, &y) == ERT_OK);
					for (int64_t k = 0; k < n; k++) {
						float q = ((const float *)xv->data)[k] / sc;
						double r = isnan(q) ? 0.0 : nearbyint((double)q);
						double w = r + zp < lo ? lo : r + zp > hi ? hi : r + zp;
						int got = s8 ? ((int8_t *)y.data)[k]
							     : ((uint8_t *)y.data)[k];

						if (got != (int)w) {
							fprintf(stderr, "%s at %s: [%lld] %g gives %d, "
								"not %d\n", what,
								ert_cpu_isa_name((enum ert_cpu_isa)isa),
								(long long)k, (double)q, got, (int)w);
							*ert_test_failed_ = 1;
							break;
						}
					}
					free(y.data);
				}
				one_fini(&o);
			}
	CHECK(runs > 0);
}

/* QuantizeLinear names its byte kernel above the scalar level, and only for bytes. */
ERT_TEST(quantize_kernel_names)
{
	for (int isa = ERT_ISA_SCALAR; isa <= (int)ert_cpu_isa_best(); isa++)
		for (int to16 = 0; to16 < 2; to16++) {
			const struct ert_cpu_op *op = ert_cpu_op_find(ERT_OP_QuantizeLinear);
			struct ert_cpu cpu = { .isa = (enum ert_cpu_isa)isa, .num_threads = 1 };
			int64_t n = 5;
			struct ert_value y;
			struct ert_value *inp[ONE_MAX_IO], *outp[1] = { &y };
			struct one o;
			struct ert_err err;
			const char *want = to16 ? NULL
					   : isa >= ERT_ISA_AVX512 ? "q8-quant-avx512"
					   : isa >= ERT_ISA_AVX2 ? "q8-quant-avx2" : NULL;

			one_init(&o, ERT_OP_QuantizeLinear, 0, 3, 1);
			memset(one_in_alloc(&o, 0, ERT_DTYPE_FLOAT32, 1, &n)->data, 0,
			       5 * sizeof(float));
			in_scales(&o, 1, 0, 0.5f, false);
			if (to16) {
				struct ert_value *z = one_in_alloc(&o, 2, ERT_DTYPE_INT16, 0, &n);

				memset(z->data, 0, sizeof(int16_t));
			} else {
				in_zp(&o, 2, ERT_DTYPE_UINT8, 0, 3, 3);
			}
			REQUIRE(one_run_at(&o, ERT_ISA_SCALAR, NULL, true, ERT_LEVEL_NORMAL, &y) == ERT_OK);
			for (uint32_t j = 0; j < o.n_in; j++)
				inp[j] = (struct ert_value *)o.inp[j];
			struct ert_exec x = { .graph = o.g, .node = o.n, .in = inp, .out = outp,
					      .n_in = o.n_in, .n_out = 1 };

			REQUIRE(op && op->prepare);
			CHECK_EQ_INT(op->prepare(&cpu, &x, &err), ERT_OK);
			if (!want)
				CHECK(x.kernel == NULL);
			else
				CHECK(x.kernel && !strcmp(x.kernel, want));
			free(y.data);
			one_fini(&o);
		}
}

/* ---- QLinearConv with a fused residual ("ert.residual") ---- */

/*
 * The fused node against the QLinearConv and the QLinearAdd it replaces,
 * at the same level (and against the scalar pair): every conv case, made
 * fixed-rule and without a clamp of its own, its output added to a random
 * residual of its shape; the sum's clamp on every other case, the
 * conv's output on either side of the Add, the residual's and the sum's
 * scales above, below and equal to the conv's.
 */
static void copy_ints(struct one *dst, const struct one *src, const char *name)
{
	uint32_t n = 0;
	const int64_t *v = ert_attr_ints(src->n, name, &n);

	if (v)
		ert_node_set_attr_ints(dst->g, dst->n, name, v, n);
}

/* The conv's output (side @swap: as B), then the Add; the result in *@out. */
static ert_status pair_at(struct one *conv, struct one *add, bool swap, enum ert_cpu_isa isa,
			  struct ert_threadpool *pool, bool const_w, ert_level mem,
			  struct ert_value *out)
{
	struct ert_value y;
	ert_status st = one_run_at(conv, isa, pool, const_w, mem, &y);

	if (st != ERT_OK)
		return st;
	add->in[swap ? 3 : 0] = y;
	st = one_run_at(add, isa, pool, const_w, mem, out);
	add->in[swap ? 3 : 0].data = NULL;
	free(y.data);
	if (st != ERT_OK)
		snprintf(conv->err.msg, sizeof(conv->err.msg), "%s", add->err.msg);
	return st;
}

/*
 * The residual's and the sum's scales over the conv's output scale: the
 * first three in the Add's 32-bit form (the conv's output the power-of-two
 * input, the residual, equal scales: the epilogue's fast rows at the SIMD
 * levels), the last outside it (the conv's output 6000x below the Add's
 * larger scale: an input shift of -12; the epilogue's general rows).
 */
static const float res_scales[4][2] = { { 0.5f, 1.1f }, { 1.7f, 2.3f }, { 1.0f, 0.9f },
					{ 3000.0f, 2500.0f } };

ERT_TEST(qlinearconv_residual_every_level)
{
	struct ert_threadpool *pool = ert_threadpool_create(2);
	enum ert_cpu_isa best = ert_cpu_isa_best();
	int runs = 0;

	REQUIRE(pool);
	for (size_t i = 0; i < sizeof(conv_cases) / sizeof(conv_cases[0]); i++) {
		struct conv_case cc = conv_cases[i];
		/* the sum's clamp: below the zero point, none, ReLU (lo = zero point) */
		bool u8 = cc.flags & U8Y, swap = i % 2;
		int clamp = (int)(i % 3);
		ert_dtype dt = u8 ? ERT_DTYPE_UINT8 : ERT_DTYPE_INT8;
		int zlo = u8 ? 90 : -30, zhi = u8 ? 160 : 30;
		struct one conv, add, f;
		struct ert_value ref, want, got;

		cc.flags = (cc.flags | FIXED) & ~(unsigned)CLAMP;
		conv_setup(&conv, &cc, false);
		/* the conv's output: its shape and type for the residual */
		REQUIRE(one_run_at(&conv, ERT_ISA_SCALAR, NULL, true, ERT_LEVEL_NORMAL, &ref) == ERT_OK);
		REQUIRE(ref.dtype == dt);
		float ys = ert_value_get_float(conv.inp[6], 0);
		const float *sc = res_scales[i % 4];

		one_init(&add, ERT_OP_QLinearAdd, 1, 8, 1);
		set_in(&add, swap ? 3 : 0, dt, ref.rank, ref.dims, NULL);
		add.in[swap ? 4 : 1] = conv.in[6];
		add.in[swap ? 5 : 2] = conv.in[7];
		in_bytes(&add, swap ? 0 : 3, dt, ref.rank, ref.dims);
		in_scales(&add, swap ? 1 : 4, 0, ys * sc[0], false);
		in_zp(&add, swap ? 2 : 5, dt, 0, zlo, zhi);
		in_scales(&add, 6, 0, ys * sc[1], false);
		in_zp(&add, 7, dt, 0, zlo, zhi);
		free(ref.data);
		if (clamp == 2)
			set_rule(&add, true, (int)ert_value_get_int(&add.in[7], 0), u8 ? 255 : 127);
		else
			set_rule(&add, true, clamp == 0 ? zlo + 20 : 1, clamp == 0 ? zhi + 60 : 0);

		one_init(&f, ERT_OP_QLinearConv, 10, 14, 1);
		for (uint32_t k = 0; k < 9; k++) {
			f.in[k] = conv.in[k];
			f.inp[k] = k < conv.n_in ? &f.in[k] : NULL;
		}
		for (uint32_t k = 0; k < 3; k++)
			f.in[9 + k] = add.in[(swap ? 0 : 3) + k];
		f.in[12] = add.in[6];
		f.in[13] = add.in[7];
		copy_ints(&f, &conv, "strides");
		copy_ints(&f, &conv, "dilations");
		copy_ints(&f, &conv, "pads");
		copy_ints(&f, &add, "ert.clamp");
		ert_node_set_attr_int(f.g, f.n, "group", cc.group);
		ert_node_set_attr_int(f.g, f.n, "ert.requant", 1);
		ert_node_set_attr_int(f.g, f.n, "ert.residual", 1);

		if (pair_at(&conv, &add, swap, ERT_ISA_SCALAR, NULL, true, ERT_LEVEL_NORMAL, &ref) !=
		    ERT_OK) {
			fprintf(stderr, "%s: scalar pair failed: %s\n", cc.name, conv.err.msg);
			*ert_test_failed_ = 1;
			goto next;
		}
		for (int isa = ERT_ISA_SCALAR; isa <= (int)best; isa++) {
			for (int v = 0; v < 4; v++) {
				bool const_w = v != 1;
				ert_level mem = v == 2 ? ERT_LEVEL_LOW : ERT_LEVEL_NORMAL;
				struct ert_threadpool *p = v == 3 ? pool : NULL;
				const char *lv = ert_cpu_isa_name((enum ert_cpu_isa)isa);

				if (pair_at(&conv, &add, swap, (enum ert_cpu_isa)isa, p, const_w, mem,
					    &want) != ERT_OK) {
					fprintf(stderr, "%s at %s: pair: %s\n", cc.name, lv, conv.err.msg);
					*ert_test_failed_ = 1;
					continue;
				}
				if (one_run_at(&f, (enum ert_cpu_isa)isa, p, const_w, mem, &got) != ERT_OK) {
					fprintf(stderr, "%s at %s: fused: %s\n", cc.name, lv, f.err.msg);
					*ert_test_failed_ = 1;
					free(want.data);
					continue;
				}
				CHECK_EQ_INT(got.dtype, dt);
				CHECK_EQ_INT(got.numel, want.numel);
				if (got.numel == want.numel &&
				    (first_diff(&got, &want) >= 0 || first_diff(&got, &ref) >= 0)) {
					fprintf(stderr, "%s at %s (variant %d): fused output differs\n",
						cc.name, lv, v);
					*ert_test_failed_ = 1;
				}
				free(want.data);
				free(got.data);
				runs++;
			}
		}
		free(ref.data);
next:
		one_fini(&f);
		one_fini(&add);
		one_fini(&conv);
	}
	ert_threadpool_destroy(pool);
	CHECK(runs > 0);
}

/*
 * What the fused form refuses: a broadcast residual, another type, the float
 * rule, a sum's multiplier too large, extra inputs without ert.residual.
 */
ERT_TEST(qlinearconv_residual_refused)
{
	const struct conv_case *cc = &conv_cases[0];
	struct ert_value y;
	struct one f;

	/* bad -1: the valid form, which runs */
	for (int bad = -1; bad < 4; bad++) {
		conv_setup(&f, cc, false); /* for the shapes of x and w */
		struct one g;
		int64_t rd[4] = { cc->n, cc->m, 7, 9 };

		one_init(&g, ERT_OP_QLinearConv, 10, 14, 1);
		for (uint32_t k = 0; k < 9; k++)
			g.in[k] = f.in[k];
		if (bad == 0)
			rd[2] = rd[3] = 1; /* broadcast along the pixels */
		in_bytes(&g, 9, bad == 1 ? ERT_DTYPE_UINT8 : ERT_DTYPE_INT8, 4, rd);
		in_scales(&g, 10, 0, 0.5f, false);
		in_zp(&g, 11, ERT_DTYPE_INT8, 0, -3, 3);
		in_scales(&g, 12, 0, bad == 3 ? 1e-20f : 1.5f, false);
		in_zp(&g, 13, ERT_DTYPE_INT8, 0, -3, 3);
		if (bad != 2)
			ert_node_set_attr_int(g.g, g.n, "ert.requant", 1);
		ert_node_set_attr_int(g.g, g.n, "ert.residual", 1);
		ert_status st = one_run_at(&g, ERT_ISA_SCALAR, NULL, true, ERT_LEVEL_NORMAL, &y);

		CHECK(bad < 0 ? st == ERT_OK : st != ERT_OK);
		if (st == ERT_OK)
			free(y.data);
		one_fini(&g);
		one_fini(&f);
	}
	/* and more than 9 inputs without ert.residual */
	conv_setup(&f, cc, false);
	struct one g;

	one_init(&g, ERT_OP_QLinearConv, 10, 10, 1);
	for (uint32_t k = 0; k < 9; k++)
		g.in[k] = f.in[k];
	in_scales(&g, 9, 0, 0.5f, false);
	CHECK(one_run_at(&g, ERT_ISA_SCALAR, NULL, true, ERT_LEVEL_NORMAL, &y) != ERT_OK);
	one_fini(&g);
	one_fini(&f);
}

/*
 * Each level's block epilogue (epi_rows) in the fixed rule with per-row
 * terms, as a convolution calls it, against ert_requant_fixed() + zp and
 * the clamp computed here: widths around the vectors (1 to 53 columns),
 * with and without colsum's u, raw sums from small to the whole int32
 * range, multipliers from 0 to 2^31 - 1 and every shift from -31 to 30,
 * int8 and uint8 outputs with and without a clamp.
 */
ERT_TEST(qgemm_epi_rows_fixed_every_level)
{
	static const int32_t ranges[][3] = { /* zp, lo, hi */
		{ -5, -128, 127 }, { 3, -20, 90 }, { 120, 0, 255 }, { 0, 17, 200 }, { 255, 0, 100 },
		{ -128, 0, 127 },
	};
	enum ert_cpu_isa best = ert_cpu_isa_best();
	uint32_t st = 77;
	int runs = 0;

	for (int isa = ERT_ISA_AVX2; isa <= (int)best; isa++) {
		const struct ert_qgemm_kernel *k = ert_qgemm_kernel_for((enum ert_cpu_isa)isa);

		if (!k)
			continue;
		for (int trial = 0; trial < 400; trial++) {
			enum { ROWS = 5, LD = 64 };
			int32_t raw[ROWS * LD], u[LD], c0[ROWS], c1[ROWS], mult[ROWS], shift[ROWS];
			uint8_t out[ROWS * LD], want[ROWS * LD];
			const int32_t *rg = ranges[trial % 6];
			int64_t n = 1 + (int64_t)(lcg_next(&st) % 53);
			int mag = trial % 4; /* raw sums: small, medium, large, any */
			bool with_u = trial % 3 == 0;

			for (int i = 0; i < ROWS * LD; i++) {
				uint32_t r = lcg_next(&st) ^ (lcg_next(&st) << 16);

				raw[i] = mag == 0 ? (int32_t)(r % 4001) - 2000
					 : mag == 1 ? (int32_t)(r % 400001) - 200000
					 : mag == 2 ? (int32_t)(r >> 2) - (1 << 29) : (int32_t)r;
			}
			for (int j = 0; j < LD; j++)
				u[j] = (int32_t)(lcg_next(&st) % 20000);
			for (int r = 0; r < ROWS; r++) {
				uint32_t m = lcg_next(&st) ^ (lcg_next(&st) << 16);

				c0[r] = (int32_t)(lcg_next(&st) % 2001) - 1000;
				c1[r] = (int32_t)(lcg_next(&st) % 21) - 10;
				mult[r] = r == 0 && trial % 5 == 0 ? 0 : (int32_t)(m >> 1 | 1u << 30);
				if (r == 1 && trial % 7 == 0)
					mult[r] = (int32_t)(m >> 8);
				shift[r] = (int32_t)(lcg_next(&st) % 62) - 31;
				if (r >= 2 && trial % 2)
					shift[r] = -(int32_t)(lcg_next(&st) % 12);
			}
			struct ert_qgemm_epi e = { .mode = ERT_QGEMM_OUT_FIXED, .u = with_u ? u : NULL,
						   .zp = rg[0], .lo = rg[1], .hi = rg[2] };
			const struct ert_qgemm_rows rt = { .c0 = c0, .c1 = c1, .mult1 = mult,
							   .shift1 = shift };

			memset(out, 0xee, sizeof(out));
			memset(want, 0xee, sizeof(want));
			for (int r = 0; r < ROWS; r++)
				for (int64_t j = 0; j < n; j++) {
					uint32_t v = (uint32_t)raw[r * LD + j] + (uint32_t)c0[r];
					int64_t q;

					if (with_u)
						v += (uint32_t)c1[r] * (uint32_t)u[j];
					q = (int64_t)ert_requant_fixed((int32_t)v, mult[r], shift[r]) + rg[0];
					q = q < rg[1] ? rg[1] : q > rg[2] ? rg[2] : q;
					want[r * LD + j] = (uint8_t)q;
				}
			k->epi_rows(raw, LD, ROWS, n, &e, &rt, out, LD);
			if (memcmp(out, want, sizeof(out)) != 0) {
				int bad = 0;

				while (out[bad] == want[bad])
					bad++;
				fprintf(stderr, "%s: trial %d, n %lld: byte %d is %u, want %u\n", k->name,
					trial, (long long)n, bad, out[bad], want[bad]);
				CHECK(false);
				break;
			}
			runs++;
		}
	}
	if (best < ERT_ISA_AVX2)
		fprintf(stderr, "no SIMD level on this CPU: epilogue test skipped\n");
	else
		CHECK(runs > 0);
}

/*
 * The fixed rows with a fused residual (e->res, as a QLinearConv with
 * "ert.residual" calls epi_rows): each level's block epilogue against the
 * conv's output stage computed here followed by the scalar Add
 * (ert_q8_add_run() at the scalar level) over those bytes and the
 * residual's. Scales the Add's 32-bit form takes, with either input the
 * power-of-two one (the epilogue's fast rows), and scales it refuses (the
 * general rows, residual8()/residual16()); which is which is checked.
 * Widths 1 to 53 (the fast rows' tails), int8 and uint8, with and without
 * colsum's u, the sum's clamp below the zero point, ReLU (lo = zero point:
 * no sign fix-up) and none, conv outputs that saturate the type.
 */
ERT_TEST(qgemm_epi_rows_residual_every_level)
{
	/* the residual's and the sum's scales over the conv's; fast: in the 32-bit form */
	static const struct { double rs, cs; bool fast; int shift; } sc[] = {
		{ 0.5, 1.1, true, 0 },      /* the conv's output is the power-of-two input */
		{ 1.7, 2.3, true, 1 },      /* the residual is */
		{ 1.0, 0.9, true, 0 },      /* equal scales: both are, the conv's taken */
		{ 0.02, 0.7, true, 0 },     /* the residual's shift -6 */
		{ 3000.0, 2500.0, false, 0 }, /* the conv's input shift -12: refused */
		{ 1.0 / 3000.0, 0.5, false, 0 }, /* the residual's: refused */
	};
	enum ert_cpu_isa best = ert_cpu_isa_best();
	uint32_t st = 91;
	int runs = 0, fast_runs = 0;

	for (int isa = ERT_ISA_AVX2; isa <= (int)best; isa++) {
		const struct ert_qgemm_kernel *k = ert_qgemm_kernel_for((enum ert_cpu_isa)isa);

		if (!k)
			continue;
		for (int trial = 0; trial < 240; trial++) {
			enum { ROWS = 5, LD = 64 };
			int32_t raw[ROWS * LD], u[LD], c0[ROWS], c1[ROWS], mult[ROWS], shift[ROWS];
			uint8_t conv[ROWS * LD], res[ROWS * LD], out[ROWS * LD], want[ROWS * LD];
			const int si = trial % 6, clamp = (trial / 6) % 3;
			const bool u8 = trial % 5 >= 3, with_u = trial % 7 < 3;
			const int32_t tmin = u8 ? 0 : -128, tmax = u8 ? 255 : 127;
			const int64_t n = 1 + (int64_t)(lcg_next(&st) % 53);
			const int32_t czp = tmin + (int32_t)(lcg_next(&st) % 256);
			const int32_t rzp = tmin + (int32_t)(lcg_next(&st) % 256);
			const int32_t ozp = tmin + 40 + (int32_t)(lcg_next(&st) % 176);
			struct ert_qout qo = { .dtype = u8 ? ERT_DTYPE_UINT8 : ERT_DTYPE_INT8,
					       .zp = ozp, .lo = tmin, .hi = tmax, .fixed = true };
			struct ert_q8_add add, ref;

			if (clamp == 0) {
				qo.lo = ozp - 30;
				qo.hi = ozp + 35;
			} else if (clamp == 1) {
				qo.lo = ozp;
			}
			REQUIRE(ert_q8_add_init(&add, (enum ert_cpu_isa)isa, &qo, 1.0, czp, sc[si].rs,
						rzp, sc[si].cs));
			REQUIRE(ert_q8_add_init(&ref, ERT_ISA_SCALAR, &qo, 1.0, czp, sc[si].rs, rzp,
						sc[si].cs));
			CHECK_EQ_INT(add.fast != NULL, sc[si].fast);
			if (add.fast)
				CHECK_EQ_INT(add.shift, sc[si].shift);
			for (int i = 0; i < ROWS * LD; i++) {
				raw[i] = (int32_t)(lcg_next(&st) % 400001) - 200000;
				res[i] = (uint8_t)(lcg_next(&st) >> 7);
			}
			for (int j = 0; j < LD; j++)
				u[j] = (int32_t)(lcg_next(&st) % 20000);
			for (int r = 0; r < ROWS; r++) {
				c0[r] = (int32_t)(lcg_next(&st) % 2001) - 1000;
				c1[r] = (int32_t)(lcg_next(&st) % 21) - 10;
				mult[r] = (int32_t)(lcg_next(&st) >> 2 | 1u << 30);
				/* outputs mostly inside the type, some saturating it */
				shift[r] = -8 - (int32_t)(lcg_next(&st) % 6);
			}
			struct ert_qgemm_epi e = { .mode = ERT_QGEMM_OUT_FIXED, .u = with_u ? u : NULL,
						   .zp = czp, .lo = tmin, .hi = tmax, .res = &add,
						   .r = res };
			const struct ert_qgemm_rows rt = { .c0 = c0, .c1 = c1, .mult1 = mult,
							   .shift1 = shift };

			memset(conv, 0, sizeof(conv));
			memset(out, 0xee, sizeof(out));
			memset(want, 0xee, sizeof(want));
			for (int r = 0; r < ROWS; r++) {
				for (int64_t j = 0; j < n; j++) {
					uint32_t v = (uint32_t)raw[r * LD + j] + (uint32_t)c0[r];
					int64_t q;

					if (with_u)
						v += (uint32_t)c1[r] * (uint32_t)u[j];
					q = (int64_t)ert_requant_fixed((int32_t)v, mult[r], shift[r]) + czp;
					conv[r * LD + j] = (uint8_t)(q < tmin ? tmin : q > tmax ? tmax : q);
				}
				ert_q8_add_run(&ref, conv + r * LD, 1, res + r * LD, 1, want + r * LD, n);
			}
			k->epi_rows(raw, LD, ROWS, n, &e, &rt, out, LD);
			if (memcmp(out, want, sizeof(out)) != 0) {
				int bad = 0;

				while (out[bad] == want[bad])
					bad++;
				fprintf(stderr,
					"%s: residual trial %d (scales %d, clamp %d, %s), n %lld: byte %d "
					"is %u, want %u\n",
					k->name, trial, si, clamp, u8 ? "uint8" : "int8", (long long)n, bad,
					out[bad], want[bad]);
				CHECK(false);
				break;
			}
			runs++;
			fast_runs += add.fast != NULL && n >= 16;
		}
	}
	if (best < ERT_ISA_AVX2) {
		fprintf(stderr, "no SIMD level on this CPU: residual epilogue test skipped\n");
	} else {
		CHECK(runs > 0);
		CHECK(fast_runs > 0);
	}
}

/*
 * The SIMD path is the one that runs: prepare() names each level's int8 GEMM
 * kernel for a dense convolution and a matrix product, and its depthwise
 * kernel for a depthwise convolution.
 */
ERT_TEST(kernel_names)
{
	enum ert_cpu_isa best = ert_cpu_isa_best();
	struct one conv, dw, mm;

	conv_setup(&conv, &conv_cases[2], false);
	conv_setup(&dw, &conv_cases[7], false);
	mm_setup(&mm, &mm_cases[2]);
	for (int isa = ERT_ISA_SCALAR; isa <= (int)best; isa++) {
		const struct ert_qgemm_kernel *k = ert_qgemm_kernel_for((enum ert_cpu_isa)isa);
		struct one *ops[3] = { &conv, &dw, &mm };

		CHECK((k == NULL) == (isa == ERT_ISA_SCALAR));
		for (int i = 0; i < 3; i++) {
			struct one *o = ops[i];
			const struct ert_cpu_op *op = ert_cpu_op_find(o->n->op);
			struct ert_value y;
			struct ert_value *inp[ONE_MAX_IO], *outp[1] = { &y };
			bool cst[ONE_MAX_IO];
			struct ert_cpu cpu = { .isa = (enum ert_cpu_isa)isa, .num_threads = 1 };
			struct ert_exec x = { .graph = o->g, .node = o->n, .in = inp, .out = outp,
					      .n_in = o->n_in, .n_out = 1, .in_const = cst };
			struct ert_err err;

			/* shapes first: a run at the scalar level gives the output value */
			REQUIRE(one_run_at(o, ERT_ISA_SCALAR, NULL, true, ERT_LEVEL_NORMAL, &y) == ERT_OK);
			for (uint32_t j = 0; j < o->n_in; j++) {
				inp[j] = (struct ert_value *)o->inp[j];
				cst[j] = j > 0;
			}
			REQUIRE(op && op->prepare);
			CHECK_EQ_INT(op->prepare(&cpu, &x, &err), ERT_OK);
			if (!k)
				CHECK(x.kernel == NULL);
			else if (i == 1)
				CHECK(x.kernel && !strncmp(x.kernel, "q8-dwconv-", 10));
			else
				CHECK(x.kernel && !strcmp(x.kernel, k->name));
			if (x.state && op->release)
				op->release(&x);
			CHECK(cpu.packed == NULL); /* released: nothing left in the cache */
			free(y.data);
		}
	}
	one_fini(&conv);
	one_fini(&dw);
	one_fini(&mm);
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(qlinearconv_every_level), ERT_TEST_ENTRY(convinteger_every_level),
	      ERT_TEST_ENTRY(matmul_every_level), ERT_TEST_ENTRY(qgemm_every_level),
	      ERT_TEST_ENTRY(qlinear_binary_every_level), ERT_TEST_ENTRY(qlinear_binary_kernel_names),
	      ERT_TEST_ENTRY(qlinear_add_fixed_every_byte), ERT_TEST_ENTRY(qlinear_add_fixed_broadcast),
	      ERT_TEST_ENTRY(qlinear_add_fixed_form_chosen), ERT_TEST_ENTRY(quantize_every_level),
	      ERT_TEST_ENTRY(quantize_kernel_names),
	      ERT_TEST_ENTRY(qlinearconv_residual_every_level),
	      ERT_TEST_ENTRY(qlinearconv_residual_refused), ERT_TEST_ENTRY(kernel_names),
	      ERT_TEST_ENTRY(qgemm_epi_rows_fixed_every_level),
	      ERT_TEST_ENTRY(qgemm_epi_rows_residual_every_level))
