/* SPDX-License-Identifier: MIT */
/*
 * The int8 ops of docs/int8.md under both requantisation rules, with results
 * worked out by hand: the fixed-point primitives (multipliers, ties of the
 * rounding doubling high multiply and of the rounding shift), QLinearConv,
 * QLinearMatMul, QGemm, QLinearAdd, QLinearMul and the average pools, with
 * ties, negative values, per-channel scales, ert.clamp and broadcast, and
 * the cases the fixed rule refuses at shape inference.
 */
#include <stdlib.h>

#include "ert-op-test.h"
#include "ert-test.h"
#include "ops/quant-fixed.h"

ERT_TEST(multiplier_values)
{
	int32_t m = 7, s = 7;

	REQUIRE(ert_quant_multiplier(0.5, &m, &s));
	CHECK_EQ_INT(m, 1 << 30);
	CHECK_EQ_INT(s, 0);
	REQUIRE(ert_quant_multiplier(1.0, &m, &s));
	CHECK_EQ_INT(m, 1 << 30);
	CHECK_EQ_INT(s, 1);
	REQUIRE(ert_quant_multiplier(0.75, &m, &s));
	CHECK_EQ_INT(m, 1610612736); /* 0.75 * 2^31 */
	CHECK_EQ_INT(s, 0);
	REQUIRE(ert_quant_multiplier(0.1, &m, &s));
	CHECK_EQ_INT(m, 1717986918); /* 0.8 * 2^31 = 1717986918.4 */
	CHECK_EQ_INT(s, -3);
	/* q = 1 - 2^-40 rounds up to 2^31: becomes 2^30 with the shift one higher */
	REQUIRE(ert_quant_multiplier(1.0 - ldexp(1.0, -40), &m, &s));
	CHECK_EQ_INT(m, 1 << 30);
	CHECK_EQ_INT(s, 1);
	/* a tie of q * 2^31: 0.5 + 2^-32 gives 2^30 + 0.5, rounded away from zero */
	REQUIRE(ert_quant_multiplier(0.5 + ldexp(1.0, -32), &m, &s));
	CHECK_EQ_INT(m, (1 << 30) + 1);
	REQUIRE(ert_quant_multiplier(0.0, &m, &s));
	CHECK_EQ_INT(m, 0);
	CHECK_EQ_INT(s, 0);
	REQUIRE(ert_quant_multiplier(1e-12, &m, &s)); /* s = -39 < -31 */
	CHECK_EQ_INT(m, 0);
	CHECK_EQ_INT(s, 0);
	REQUIRE(ert_quant_multiplier(0.99 * ldexp(1.0, 30), &m, &s)); /* s = 30: the largest */
	CHECK_EQ_INT(s, 30);
	m = s = 7;
	CHECK(!ert_quant_multiplier(ldexp(1.0, 30), &m, &s)); /* s = 31 */
	CHECK(!ert_quant_multiplier(-0.5, &m, &s));
	CHECK(!ert_quant_multiplier(NAN, &m, &s));
	CHECK(!ert_quant_multiplier(INFINITY, &m, &s));
	CHECK_EQ_INT(m, 7); /* untouched on failure */
	CHECK_EQ_INT(s, 7);
	CHECK(!ert_quant_product_multiplier(1.0, 1.0, 0.0, &m, &s));
	REQUIRE(ert_quant_product_multiplier(0.5, 0.25, 0.5, &m, &s));
	CHECK_EQ_INT(m, 1 << 30);
	CHECK_EQ_INT(s, -1);
}

ERT_TEST(requant_ties)
{
	/* srdhm rounds ties up: 0.5 -> 1, -0.5 -> 0, -1.5 -> -1 */
	CHECK_EQ_INT(ert_quant_srdhm(1, 1 << 30), 1);
	CHECK_EQ_INT(ert_quant_srdhm(-1, 1 << 30), 0);
	CHECK_EQ_INT(ert_quant_srdhm(-3, 1 << 30), -1);
	CHECK_EQ_INT(ert_quant_srdhm(INT32_MIN, INT32_MIN), INT32_MAX);
	CHECK_EQ_INT(ert_quant_srdhm(INT32_MIN, INT32_MAX), -2147483647);
	/* rdivpot rounds ties away from zero */
	CHECK_EQ_INT(ert_quant_rdivpot(5, 1), 3);
	CHECK_EQ_INT(ert_quant_rdivpot(-5, 1), -3);
	CHECK_EQ_INT(ert_quant_rdivpot(-3, 2), -1);
	CHECK_EQ_INT(ert_quant_rdivpot(6, 2), 2);
	CHECK_EQ_INT(ert_quant_rdivpot(-6, 2), -2);
	CHECK_EQ_INT(ert_quant_rdivpot(INT32_MIN, 31), -1);
	CHECK_EQ_INT(ert_quant_rdivpot(INT32_MAX, 31), 1);
	/* 3 * 0.25 = 0.75: srdhm(3, 2^30) = 2, then 2 / 2 = 1 */
	CHECK_EQ_INT(ert_requant_fixed(3, 1 << 30, -1), 1);
	CHECK_EQ_INT(ert_requant_fixed(-3, 1 << 30, -1), -1);
	CHECK_EQ_INT(ert_requant_fixed(20, 1 << 30, -2), 3);   /* 2.5 -> 3 */
	CHECK_EQ_INT(ert_requant_fixed(-20, 1 << 30, -2), -3); /* -2.5 -> -3 */
	CHECK_EQ_INT(ert_requant_fixed(5, 1 << 30, 2), 10);
	/* the left shift wraps: 2^30 << 2 = 0 */
	CHECK_EQ_INT(ert_requant_fixed(1 << 30, 1 << 30, 2), 0);
	/* out-of-range arguments are clamped, not undefined */
	CHECK_EQ_INT(ert_requant_fixed(100, -5, 3), 0);
	CHECK_EQ_INT(ert_requant_fixed(1, 1 << 30, 99), ert_requant_fixed(1, 1 << 30, 30));
	CHECK_EQ_INT(ert_quant_avg_round(3, 2), 2);
	CHECK_EQ_INT(ert_quant_avg_round(-3, 2), -2);
	CHECK_EQ_INT(ert_quant_avg_round(1, 3), 0);
	CHECK_EQ_INT(ert_quant_avg_round(-2, 3), -1);
	CHECK_EQ_INT(ert_quant_avg_round(5, 0), 0);
}

ERT_TEST(add_params)
{
	struct ert_quant_add p;

	/* A_s = 1, B_s = 0.5, C_s = 1: t = 2, a: 0.5, b: 0.25, out: 2 / 2^20 */
	REQUIRE(ert_quant_add_params(1.0, 0.5, 1.0, &p));
	CHECK_EQ_INT(p.a_mult, 1 << 30);
	CHECK_EQ_INT(p.a_shift, 0);
	CHECK_EQ_INT(p.b_mult, 1 << 30);
	CHECK_EQ_INT(p.b_shift, -1);
	CHECK_EQ_INT(p.out_mult, 1 << 30);
	CHECK_EQ_INT(p.out_shift, -18);
	CHECK(!ert_quant_add_params(1.0, 0.0, 1.0, &p));
	CHECK(!ert_quant_add_params(1.0, 1.0, 1e-30, &p)); /* out multiplier 2^81 */
}

/* ---- ops ---- */

static void set_scale(struct one *o, uint32_t i, float *v)
{
	set_in(o, i, ERT_DTYPE_FLOAT32, 0, NULL, v);
}

static void set_zp(struct one *o, uint32_t i, ert_dtype dt, void *v)
{
	set_in(o, i, dt, 0, NULL, v);
}

static void set_rule(struct one *o, bool fixed, int lo, int hi)
{
	ert_node_set_attr_int(o->g, o->n, "ert.requant", fixed ? 1 : 0);
	if (lo <= hi) {
		int64_t c[2] = { lo, hi };

		ert_node_set_attr_ints(o->g, o->n, "ert.clamp", c, 2);
	}
}

static void check_i8(int *ert_test_failed_, const struct ert_value *y, const int8_t *want, int n)
{
	REQUIRE(y->dtype == ERT_DTYPE_INT8 && y->numel == n);
	for (int i = 0; i < n; i++)
		if (((const int8_t *)y->data)[i] != want[i]) {
			fprintf(stderr, "element %d: got %d, want %d\n", i,
				((const int8_t *)y->data)[i], want[i]);
			*ert_test_failed_ = 1;
		}
}

static void check_u8(int *ert_test_failed_, const struct ert_value *y, const uint8_t *want, int n)
{
	REQUIRE(y->dtype == ERT_DTYPE_UINT8 && y->numel == n);
	for (int i = 0; i < n; i++)
		if (((const uint8_t *)y->data)[i] != want[i]) {
			fprintf(stderr, "element %d: got %d, want %d\n", i,
				((const uint8_t *)y->data)[i], want[i]);
			*ert_test_failed_ = 1;
		}
}

/*
 * 1x1 convolution of x = [10, -10, 3, -3] (1x1x1x4), x_s = 0.5, into two
 * channels: w = 2 (w_s 0.25, multiplier 0.125) and w = -3 with bias 1
 * (w_s 0.5, multiplier 0.25); y_s = 1.
 *   channel 0: acc [20, -20, 6, -6] * 0.125 = [2.5, -2.5, 0.75, -0.75]
 *   channel 1: acc [-29, 31, -8, 10] * 0.25 = [-7.25, 7.75, -2, 2.5]
 */
static void conv_case(struct one *o, int8_t *yzp)
{
	static int8_t x[4] = { 10, -10, 3, -3 }, w[2] = { 2, -3 }, xzp = 0, wzp = 0;
	static int32_t b[2] = { 0, 1 };
	static float xs = 0.5f, ws[2] = { 0.25f, 0.5f }, ys = 1.0f;
	static const int64_t dx[4] = { 1, 1, 1, 4 }, dw[4] = { 2, 1, 1, 1 }, dc[1] = { 2 };

	one_init(o, ERT_OP_QLinearConv, 10, 9, 1);
	set_in(o, 0, ERT_DTYPE_INT8, 4, dx, x);
	set_scale(o, 1, &xs);
	set_zp(o, 2, ERT_DTYPE_INT8, &xzp);
	set_in(o, 3, ERT_DTYPE_INT8, 4, dw, w);
	set_in(o, 4, ERT_DTYPE_FLOAT32, 1, dc, ws);
	set_zp(o, 5, ERT_DTYPE_INT8, &wzp);
	set_scale(o, 6, &ys);
	set_zp(o, 7, ERT_DTYPE_INT8, yzp);
	set_in(o, 8, ERT_DTYPE_INT32, 1, dc, b);
}

ERT_TEST(qlinearconv_rules)
{
	struct one o;
	int8_t yzp = 0;
	/* NCHW: channel 0's four outputs, then channel 1's */
	const int8_t fixed[8] = { 3, -3, 1, -1, -7, 8, -2, 3 };
	const int8_t flt[8] = { 2, -2, 1, -1, -7, 8, -2, 2 };

	conv_case(&o, &yzp);
	set_rule(&o, true, 1, 0);
	REQUIRE(one_run(&o) == ERT_OK);
	check_i8(ert_test_failed_, &o.out[0], fixed, 8);
	one_fini(&o);

	conv_case(&o, &yzp);
	REQUIRE(one_run(&o) == ERT_OK); /* no ert.requant: the float rule */
	check_i8(ert_test_failed_, &o.out[0], flt, 8);
	one_fini(&o);

	/* a fused Relu: clamp [y_zp, 127] with y_zp = 5 */
	const int8_t relu[8] = { 8, 5, 6, 5, 5, 13, 5, 8 };

	yzp = 5;
	conv_case(&o, &yzp);
	set_rule(&o, true, 5, 127);
	REQUIRE(one_run(&o) == ERT_OK);
	check_i8(ert_test_failed_, &o.out[0], relu, 8);
	one_fini(&o);

	/* Clip to [-1, 2] in the output domain, float rule */
	const int8_t clip[8] = { 2, -1, 1, -1, -1, 2, -1, 2 };

	yzp = 0;
	conv_case(&o, &yzp);
	set_rule(&o, false, -1, 2);
	REQUIRE(one_run(&o) == ERT_OK);
	check_i8(ert_test_failed_, &o.out[0], clip, 8);
	one_fini(&o);
}

/* uint8 x and y, 3x3 window with padding and stride 2, fixed rule, checked against a direct loop. */
ERT_TEST(qlinearconv_fixed_uint8_padded)
{
	enum { C = 3, M = 4, H = 7, W = 6 };
	static uint8_t x[C * H * W], yzp = 100, xzp = 130;
	static int8_t w[M * C * 9], wzp = 0;
	static int32_t b[M] = { 1000, -777, 0, 31 };
	static float xs = 0.03f, ws[M] = { 0.002f, 0.004f, 0.0011f, 0.0007f }, ys = 0.02f;
	int64_t dx[4] = { 1, C, H, W }, dw[4] = { M, C, 3, 3 }, dm[1] = { M };
	int64_t pads[4] = { 1, 1, 1, 0 }, st[2] = { 2, 2 };
	struct one o;

	for (int i = 0; i < C * H * W; i++)
		x[i] = (uint8_t)(i * 89 % 256);
	for (int i = 0; i < M * C * 9; i++)
		w[i] = (int8_t)(i * 41 % 255 - 127);
	one_init(&o, ERT_OP_QLinearConv, 10, 9, 1);
	set_in(&o, 0, ERT_DTYPE_UINT8, 4, dx, x);
	set_scale(&o, 1, &xs);
	set_zp(&o, 2, ERT_DTYPE_UINT8, &xzp);
	set_in(&o, 3, ERT_DTYPE_INT8, 4, dw, w);
	set_in(&o, 4, ERT_DTYPE_FLOAT32, 1, dm, ws);
	set_zp(&o, 5, ERT_DTYPE_INT8, &wzp);
	set_scale(&o, 6, &ys);
	set_zp(&o, 7, ERT_DTYPE_UINT8, &yzp);
	set_in(&o, 8, ERT_DTYPE_INT32, 1, dm, b);
	ert_node_set_attr_ints(o.g, o.n, "pads", pads, 4);
	ert_node_set_attr_ints(o.g, o.n, "strides", st, 2);
	set_rule(&o, true, 1, 0);
	REQUIRE(one_run(&o) == ERT_OK);
	int oh = (H + 2 - 3) / 2 + 1, ow = (W + 1 - 3) / 2 + 1;

	REQUIRE(o.out[0].dims[2] == oh && o.out[0].dims[3] == ow);
	for (int m = 0; m < M; m++) {
		int32_t mult, shift;

		REQUIRE(ert_quant_product_multiplier(xs, ws[m], ys, &mult, &shift));
		for (int a = 0; a < oh; a++)
			for (int c = 0; c < ow; c++) {
				int32_t acc = b[m];

				for (int ci = 0; ci < C; ci++)
					for (int ky = 0; ky < 3; ky++)
						for (int kx = 0; kx < 3; kx++) {
							int iy = a * 2 - 1 + ky, ix = c * 2 - 1 + kx;

							if (iy < 0 || iy >= H || ix < 0 || ix >= W)
								continue;
							acc += (x[(ci * H + iy) * W + ix] - xzp) *
							       w[((m * C + ci) * 3 + ky) * 3 + kx];
						}
				int32_t q = ert_requant_fixed(acc, mult, shift) + yzp;

				q = q < 0 ? 0 : q > 255 ? 255 : q;
				CHECK_EQ_INT(((uint8_t *)o.out[0].data)[(m * oh + a) * ow + c], q);
			}
	}
	one_fini(&o);
}

/*
 * a (2x2) x b (2x3), per-column b_s [0.25, 0.5, 1], a_s 0.5, y_s 1, zero points 0:
 * acc = [[1*1+2*0, ...]]; see the expected values below.
 */
ERT_TEST(qlinearmatmul_per_column)
{
	static int8_t a[4] = { 3, -1, -5, 2 }, b[6] = { 1, 2, 1, 2, -1, -1 }, zp = 0;
	static float as = 0.5f, bs[3] = { 0.25f, 0.5f, 1.0f }, ys = 1.0f;
	int64_t da[2] = { 2, 2 }, db[2] = { 2, 3 }, d3[1] = { 3 };
	/*
	 * acc = [[3-2, 6+1, 3+1], [-5+4, -10-2, -5-2]] = [[1, 7, 4], [-1, -12, -7]]
	 * multipliers [0.125, 0.25, 0.5]: [[0.125, 1.75, 2], [-0.125, -3, -3.5]];
	 * the tie -3.5 has shift 0: srdhm alone rounds it up to -3, the float
	 * rule to even (-4)
	 */
	const int8_t fixed[6] = { 0, 2, 2, 0, -3, -3 };
	const int8_t flt[6] = { 0, 2, 2, 0, -3, -4 };
	struct one o;

	for (int rule = 0; rule < 2; rule++) {
		one_init(&o, ERT_OP_QLinearMatMul, 10, 8, 1);
		set_in(&o, 0, ERT_DTYPE_INT8, 2, da, a);
		set_scale(&o, 1, &as);
		set_zp(&o, 2, ERT_DTYPE_INT8, &zp);
		set_in(&o, 3, ERT_DTYPE_INT8, 2, db, b);
		set_in(&o, 4, ERT_DTYPE_FLOAT32, 1, d3, bs);
		set_zp(&o, 5, ERT_DTYPE_INT8, &zp);
		set_scale(&o, 6, &ys);
		set_zp(&o, 7, ERT_DTYPE_INT8, &zp);
		set_rule(&o, rule == 1, 1, 0);
		REQUIRE(one_run(&o) == ERT_OK);
		check_i8(ert_test_failed_, &o.out[0], rule ? fixed : flt, 6);
		one_fini(&o);
	}
	/* y_s 2: [[0.0625, 0.875, 1], [-0.0625, -1.5, -1.75]]: the tie -1.5 goes to -2 both ways */
	static float ys2 = 2.0f;
	const int8_t fixed2[6] = { 0, 1, 1, 0, -2, -2 };

	one_init(&o, ERT_OP_QLinearMatMul, 10, 8, 1);
	set_in(&o, 0, ERT_DTYPE_INT8, 2, da, a);
	set_scale(&o, 1, &as);
	set_zp(&o, 2, ERT_DTYPE_INT8, &zp);
	set_in(&o, 3, ERT_DTYPE_INT8, 2, db, b);
	set_in(&o, 4, ERT_DTYPE_FLOAT32, 1, d3, bs);
	set_zp(&o, 5, ERT_DTYPE_INT8, &zp);
	set_scale(&o, 6, &ys2);
	set_zp(&o, 7, ERT_DTYPE_INT8, &zp);
	set_rule(&o, true, 1, 0);
	REQUIRE(one_run(&o) == ERT_OK);
	check_i8(ert_test_failed_, &o.out[0], fixed2, 6);
	/* float rule: -1.5 -> -2 (even) as well; 0.875 -> 1, -1.75 -> -2 */
	set_rule(&o, false, 1, 0);
	REQUIRE(one_run(&o) == ERT_OK);
	check_i8(ert_test_failed_, &o.out[0], fixed2, 6);
	one_fini(&o);
}

/* QGemm: A (2x3) int8, B transposed (N=2, K=3), C per column, both rules and float output. */
static void qgemm_case(struct one *o, int n_in)
{
	static int8_t a[6] = { 1, 2, 3, -1, -2, -3 }, b[6] = { 1, 1, 1, 2, 0, -1 };
	static int8_t azp = 1, bzp = 0, yzp = -1;
	static int32_t c[2] = { 3, -4 };
	static float as = 0.5f, bs[2] = { 0.5f, 0.25f }, ys = 1.0f;
	int64_t da[2] = { 2, 3 }, db[2] = { 2, 3 }, d2[1] = { 2 };

	one_init(o, ERT_OP_QGemm, 13, (uint32_t)n_in, 1);
	set_in(o, 0, ERT_DTYPE_INT8, 2, da, a);
	set_scale(o, 1, &as);
	set_zp(o, 2, ERT_DTYPE_INT8, &azp);
	set_in(o, 3, ERT_DTYPE_INT8, 2, db, b);
	set_in(o, 4, ERT_DTYPE_FLOAT32, 1, d2, bs);
	set_zp(o, 5, ERT_DTYPE_INT8, &bzp);
	set_in(o, 6, ERT_DTYPE_INT32, 1, d2, c);
	if (n_in > 7) {
		set_scale(o, 7, &ys);
		set_zp(o, 8, ERT_DTYPE_INT8, &yzp);
	}
	ert_node_set_attr_int(o->g, o->n, "transB", 1);
}

ERT_TEST(qgemm_rules)
{
	/*
	 * a - 1 = [[0, 1, 2], [-2, -3, -4]]; B' columns [1,1,1] and [2,0,-1]
	 * acc + C = [[3 + 3, -2 - 4], [-9 + 3, 0 - 4]] = [[6, -6], [-6, -4]]
	 * multipliers [0.25, 0.125]: [[1.5, -0.75], [-1.5, -0.5]], then y_zp -1
	 */
	const int8_t fixed[4] = { 1, -2, -3, -2 };  /* 2, -1, -2, -1: -0.5 rounds away */
	const int8_t flt[4] = { 1, -2, -3, -1 };    /* 2, -1, -2, 0: ties to even */
	struct one o;

	qgemm_case(&o, 9);
	set_rule(&o, true, 1, 0);
	REQUIRE(one_run(&o) == ERT_OK);
	check_i8(ert_test_failed_, &o.out[0], fixed, 4);
	one_fini(&o);

	qgemm_case(&o, 9);
	REQUIRE(one_run(&o) == ERT_OK);
	check_i8(ert_test_failed_, &o.out[0], flt, 4);
	one_fini(&o);

	/* alpha 2 under the float rule: [[3, -1.5], [-3, -1]] - 1 */
	const int8_t alpha2[4] = { 2, -3, -4, -2 };

	qgemm_case(&o, 9);
	ert_node_set_attr_float(o.g, o.n, "alpha", 2.0f);
	REQUIRE(one_run(&o) == ERT_OK);
	check_i8(ert_test_failed_, &o.out[0], alpha2, 4);
	/* ... which the fixed rule refuses */
	set_rule(&o, true, 1, 0);
	CHECK_EQ_INT(one_run(&o), ERT_STATUS_UNSUPPORTED);
	CHECK(strstr(o.err.msg, "alpha") != NULL);
	one_fini(&o);

	/* no y_scale / y_zero_point: float32 output acc * a_s * b_s */
	qgemm_case(&o, 7);
	REQUIRE(one_run(&o) == ERT_OK);
	REQUIRE(o.out[0].dtype == ERT_DTYPE_FLOAT32);
	CHECK_NEAR(((float *)o.out[0].data)[0], 1.5, 0);
	CHECK_NEAR(((float *)o.out[0].data)[1], -0.75, 0);
	CHECK_NEAR(((float *)o.out[0].data)[2], -1.5, 0);
	CHECK_NEAR(((float *)o.out[0].data)[3], -0.5, 0);
	one_fini(&o);
}

/* QGemm uint8, transA, B not transposed, C (M, 1) broadcast along columns. */
ERT_TEST(qgemm_trans_a_uint8)
{
	enum { M = 3, K = 4, N = 5 };
	static uint8_t a[K * M], b[K * N], azp = 120, bzp = 7, yzp = 90;
	static int32_t c[M] = { 100, -200, 5 };
	static float as = 0.05f, bs = 0.02f, ys = 0.07f;
	int64_t da[2] = { K, M }, db[2] = { K, N }, dc[2] = { M, 1 };
	struct one o;

	for (int i = 0; i < K * M; i++)
		a[i] = (uint8_t)(i * 53 % 256);
	for (int i = 0; i < K * N; i++)
		b[i] = (uint8_t)(i * 97 % 256);
	for (int rule = 0; rule < 2; rule++) {
		one_init(&o, ERT_OP_QGemm, 13, 9, 1);
		set_in(&o, 0, ERT_DTYPE_UINT8, 2, da, a);
		set_scale(&o, 1, &as);
		set_zp(&o, 2, ERT_DTYPE_UINT8, &azp);
		set_in(&o, 3, ERT_DTYPE_UINT8, 2, db, b);
		set_scale(&o, 4, &bs);
		set_zp(&o, 5, ERT_DTYPE_UINT8, &bzp);
		set_in(&o, 6, ERT_DTYPE_INT32, 2, dc, c);
		set_scale(&o, 7, &ys);
		set_zp(&o, 8, ERT_DTYPE_UINT8, &yzp);
		ert_node_set_attr_int(o.g, o.n, "transA", 1);
		set_rule(&o, rule == 1, 1, 0);
		REQUIRE(one_run(&o) == ERT_OK);
		REQUIRE(o.out[0].dims[0] == M && o.out[0].dims[1] == N);
		for (int i = 0; i < M; i++)
			for (int j = 0; j < N; j++) {
				int32_t acc = c[i], mult, shift;
				double q;

				for (int p = 0; p < K; p++)
					acc += (a[p * M + i] - azp) * (b[p * N + j] - bzp);
				if (rule) {
					REQUIRE(ert_quant_product_multiplier(as, bs, ys, &mult, &shift));
					q = ert_requant_fixed(acc, mult, shift) + yzp;
				} else {
					q = rint(acc * (double)(as * bs / ys)) + yzp;
				}
				q = q < 0 ? 0 : q > 255 ? 255 : q;
				CHECK_EQ_INT(((uint8_t *)o.out[0].data)[i * N + j], (int)q);
			}
		one_fini(&o);
	}
}

/* QLinearAdd / QLinearMul inputs: A (2x3), B (3) or (2x1) broadcast, int8 zero points 0. */
static void binary_case(struct one *o, enum ert_op op, const int64_t *db, int rb, float *sc)
{
	static int8_t a[6] = { 1, -1, 0, 1, 3, 5 }, b[6] = { 1, -1, -1, -1, 2, 2 }, zp = 0;
	static const int64_t da[2] = { 2, 3 };

	one_init(o, op, 13, 8, 1);
	set_in(o, 0, ERT_DTYPE_INT8, 2, da, a);
	set_scale(o, 1, &sc[0]);
	set_zp(o, 2, ERT_DTYPE_INT8, &zp);
	set_in(o, 3, ERT_DTYPE_INT8, rb, db, b);
	set_scale(o, 4, &sc[1]);
	set_zp(o, 5, ERT_DTYPE_INT8, &zp);
	set_scale(o, 6, &sc[2]);
	set_zp(o, 7, ERT_DTYPE_INT8, &zp);
}

ERT_TEST(qlinearadd_ties_and_broadcast)
{
	/* A_s 1, B_s 0.5, C_s 1: y = a + b / 2 */
	static float sc[3] = { 1.0f, 0.5f, 1.0f };
	int64_t db[1] = { 3 };
	struct one o;
	/* b broadcast as [1, -1, -1]: a + b/2 = [1.5, -1.5, -0.5, 1.5, 2.5, 4.5] */
	const int8_t fixed[6] = { 2, -2, -1, 2, 3, 5 };
	const int8_t flt[6] = { 2, -2, 0, 2, 2, 4 };

	binary_case(&o, ERT_OP_QLinearAdd, db, 1, sc);
	set_rule(&o, true, 1, 0);
	REQUIRE(one_run(&o) == ERT_OK);
	check_i8(ert_test_failed_, &o.out[0], fixed, 6);
	set_rule(&o, false, 1, 0);
	REQUIRE(one_run(&o) == ERT_OK);
	check_i8(ert_test_failed_, &o.out[0], flt, 6);
	/* clamp [0, 3] */
	const int8_t clamped[6] = { 2, 0, 0, 2, 3, 3 };

	set_rule(&o, true, 0, 3);
	REQUIRE(one_run(&o) == ERT_OK);
	check_i8(ert_test_failed_, &o.out[0], clamped, 6);
	one_fini(&o);

	/* b as a column (2x1) = [1, -1]: a + b/2 = [1.5, -0.5, 0.5, 0.5, 2.5, 4.5] */
	int64_t dcol[2] = { 2, 1 };
	const int8_t col[6] = { 2, -1, 1, 1, 3, 5 };

	binary_case(&o, ERT_OP_QLinearAdd, dcol, 2, sc);
	set_rule(&o, true, 1, 0);
	REQUIRE(one_run(&o) == ERT_OK);
	check_i8(ert_test_failed_, &o.out[0], col, 6);
	one_fini(&o);
}

ERT_TEST(qlinearmul_ties)
{
	/* A_s 0.5, B_s 0.5, C_s 1: y = a * b / 4 */
	static float sc[3] = { 0.5f, 0.5f, 1.0f };
	int64_t db[2] = { 2, 3 };
	struct one o;
	/*
	 * a * b = [1, 1, 0, -1, 6, 10] / 4 = [0.25, 0.25, 0, -0.25, 1.5, 2.5]; the
	 * fixed rule rounds twice: 0.25 -> srdhm 0.5 -> 1 -> rdivpot 0.5 -> 1
	 * (TFLite's result), -0.25 -> srdhm -0.5 -> 0
	 */
	const int8_t fixed[6] = { 1, 1, 0, 0, 2, 3 };
	const int8_t flt[6] = { 0, 0, 0, 0, 2, 2 };

	binary_case(&o, ERT_OP_QLinearMul, db, 2, sc);
	set_rule(&o, true, 1, 0);
	REQUIRE(one_run(&o) == ERT_OK);
	check_i8(ert_test_failed_, &o.out[0], fixed, 6);
	set_rule(&o, false, 1, 0);
	REQUIRE(one_run(&o) == ERT_OK);
	check_i8(ert_test_failed_, &o.out[0], flt, 6);
	one_fini(&o);

	/* C_s 0.125: y = 2 a b, negative and saturating: 2 * [1, 1, 0, -1, 6, 10] */
	static float sc2[3] = { 0.5f, 0.5f, 0.125f };
	const int8_t dbl[6] = { 2, 2, 0, -2, 12, 20 };

	binary_case(&o, ERT_OP_QLinearMul, db, 2, sc2);
	set_rule(&o, true, 1, 0);
	REQUIRE(one_run(&o) == ERT_OK);
	check_i8(ert_test_failed_, &o.out[0], dbl, 6);
	one_fini(&o);
}

/* uint8 QLinearAdd with zero points, fixed rule against the formula of docs/int8.md. */
ERT_TEST(qlinearadd_uint8_zero_points)
{
	enum { N = 256 };
	static uint8_t a[N], b[N], azp = 128, bzp = 3, yzp = 77;
	static float as = 0.031f, bs = 0.0173f, cs = 0.045f;
	int64_t d[1] = { N };
	struct ert_quant_add p;
	struct one o;

	for (int i = 0; i < N; i++) {
		a[i] = (uint8_t)i;
		b[i] = (uint8_t)(i * 131 % 256);
	}
	REQUIRE(ert_quant_add_params(as, bs, cs, &p));
	one_init(&o, ERT_OP_QLinearAdd, 13, 8, 1);
	set_in(&o, 0, ERT_DTYPE_UINT8, 1, d, a);
	set_scale(&o, 1, &as);
	set_zp(&o, 2, ERT_DTYPE_UINT8, &azp);
	set_in(&o, 3, ERT_DTYPE_UINT8, 1, d, b);
	set_scale(&o, 4, &bs);
	set_zp(&o, 5, ERT_DTYPE_UINT8, &bzp);
	set_scale(&o, 6, &cs);
	set_zp(&o, 7, ERT_DTYPE_UINT8, &yzp);
	set_rule(&o, true, 1, 0);
	REQUIRE(one_run(&o) == ERT_OK);
	for (int i = 0; i < N; i++) {
		int32_t sa = ert_requant_fixed((a[i] - azp) * (1 << 20), p.a_mult, p.a_shift);
		int32_t sb = ert_requant_fixed((b[i] - bzp) * (1 << 20), p.b_mult, p.b_shift);
		int32_t q = ert_requant_fixed(sa + sb, p.out_mult, p.out_shift) + yzp;
		double real = (as * (a[i] - azp) + bs * (b[i] - bzp)) / cs + yzp;

		q = q < 0 ? 0 : q > 255 ? 255 : q;
		CHECK_EQ_INT(((uint8_t *)o.out[0].data)[i], q);
		/* and the fixed rule stays within one step of the real result */
		if (real > 0.5 && real < 254.5)
			CHECK_NEAR(q, real, 1.0);
	}
	one_fini(&o);
}

/* x: 1x1x3x3 int8, kernel 2x2, stride 2, pads 0/1 bottom-right; x_s = y_s, zp 0. */
static void avgpool_case(struct one *o, int8_t *x, int8_t *yzp, float *ys)
{
	static float xs = 0.5f;
	static int8_t xzp = 0;
	static const int64_t dx[4] = { 1, 1, 3, 3 }, ks[2] = { 2, 2 }, st[2] = { 2, 2 };
	static const int64_t pads[4] = { 0, 0, 1, 1 };

	one_init(o, ERT_OP_QLinearAveragePool, 13, 5, 1);
	set_in(o, 0, ERT_DTYPE_INT8, 4, dx, x);
	set_scale(o, 1, &xs);
	set_zp(o, 2, ERT_DTYPE_INT8, &xzp);
	set_scale(o, 3, ys);
	set_zp(o, 4, ERT_DTYPE_INT8, yzp);
	ert_node_set_attr_ints(o->g, o->n, "kernel_shape", ks, 2);
	ert_node_set_attr_ints(o->g, o->n, "strides", st, 2);
	ert_node_set_attr_ints(o->g, o->n, "pads", pads, 4);
}

ERT_TEST(qlinearaveragepool_rules)
{
	/*
	 * windows: [1, 2, -4, 2] = 1/4 -> 0.25, [5, 7] -> 6, [-1, -2] -> -1.5, [3] -> 3;
	 * with x = [[1, 2, 5], [-4, 2, 7], [-1, -2, 3]]
	 */
	static int8_t x[9] = { 1, 2, 5, -4, 2, 7, -1, -2, 3 };
	static float ys = 0.5f, ys2 = 0.25f;
	int8_t zp = 0;
	const int8_t fixed[4] = { 0, 6, -2, 3 };
	const int8_t flt[4] = { 0, 6, -2, 3 }; /* -1.5 -> -2 both ways */
	struct one o;

	avgpool_case(&o, x, &zp, &ys);
	set_rule(&o, true, 1, 0);
	REQUIRE(one_run(&o) == ERT_OK);
	check_i8(ert_test_failed_, &o.out[0], fixed, 4);
	set_rule(&o, false, 1, 0);
	REQUIRE(one_run(&o) == ERT_OK);
	check_i8(ert_test_failed_, &o.out[0], flt, 4);
	/* count_include_pad under the float rule: [0.25, 12/4 = 3, -3/4, 3/4] */
	const int8_t incl[4] = { 0, 3, -1, 1 };

	ert_node_set_attr_int(o.g, o.n, "count_include_pad", 1);
	REQUIRE(one_run(&o) == ERT_OK);
	check_i8(ert_test_failed_, &o.out[0], incl, 4);
	/* ... which the fixed rule refuses */
	set_rule(&o, true, 1, 0);
	CHECK_EQ_INT(one_run(&o), ERT_STATUS_UNSUPPORTED);
	CHECK(strstr(o.err.msg, "count_include_pad") != NULL);
	one_fini(&o);

	/* y_scale 0.25 (the float rule doubles): [0.5, 12, -3, 6] */
	const int8_t twice[4] = { 0, 12, -3, 6 };

	avgpool_case(&o, x, &zp, &ys2);
	REQUIRE(one_run(&o) == ERT_OK);
	check_i8(ert_test_failed_, &o.out[0], twice, 4);
	set_rule(&o, true, 1, 0);
	CHECK_EQ_INT(one_run(&o), ERT_STATUS_UNSUPPORTED);
	CHECK(strstr(o.err.msg, "y_scale = x_scale") != NULL);
	one_fini(&o);

	/* ties of the fixed rule: [3, 4, 4, 4] / 4 = 3.75, [-5, -6] = -5.5 -> -6, [2, 1] 1.5 -> 2 */
	static int8_t x2[9] = { 3, 4, 9, 4, 4, 9, -5, -6, 1 };
	const int8_t t2[4] = { 4, 9, -6, 1 };

	const int8_t t2c[4] = { 4, 8, -6, 1 };

	avgpool_case(&o, x2, &zp, &ys);
	set_rule(&o, true, 1, 0);
	REQUIRE(one_run(&o) == ERT_OK);
	check_i8(ert_test_failed_, &o.out[0], t2, 4);
	set_rule(&o, true, -128, 8);
	REQUIRE(one_run(&o) == ERT_OK);
	check_i8(ert_test_failed_, &o.out[0], t2c, 4);
	one_fini(&o);
}

ERT_TEST(qlinearglobalaveragepool_rules)
{
	/* 1x2x2x2 uint8, channel 0 [1, 2, 2, 2] = 1.75, channel 1 [10, 11, 10, 11] = 10.5 */
	static uint8_t x[8] = { 1, 2, 2, 2, 10, 11, 10, 11 }, zp = 0, zp3 = 3;
	static float s = 0.5f;
	int64_t dx[4] = { 1, 2, 2, 2 };
	const uint8_t fixed[2] = { 2, 11 }, flt[2] = { 2, 10 };
	struct one o;

	one_init(&o, ERT_OP_QLinearGlobalAveragePool, 13, 5, 1);
	set_in(&o, 0, ERT_DTYPE_UINT8, 4, dx, x);
	set_scale(&o, 1, &s);
	set_zp(&o, 2, ERT_DTYPE_UINT8, &zp);
	set_scale(&o, 3, &s);
	set_zp(&o, 4, ERT_DTYPE_UINT8, &zp);
	set_rule(&o, true, 1, 0);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK_EQ_INT(o.out[0].dims[2], 1);
	check_u8(ert_test_failed_, &o.out[0], fixed, 2);
	set_rule(&o, false, 1, 0);
	REQUIRE(one_run(&o) == ERT_OK);
	check_u8(ert_test_failed_, &o.out[0], flt, 2);
	/* zero points 3 in and out: (x - 3) averages to [-1.25, 7.5] -> [-1, 8] + 3 */
	const uint8_t zp3f[2] = { 2, 11 };

	set_zp(&o, 2, ERT_DTYPE_UINT8, &zp3);
	set_zp(&o, 4, ERT_DTYPE_UINT8, &zp3);
	REQUIRE(one_run(&o) == ERT_OK);
	check_u8(ert_test_failed_, &o.out[0], zp3f, 2);
	/* channels_last: the same data read as 1x2x2x2 NHWC: channels [1,2,10,10] and [2,2,11,11] */
	const uint8_t last[2] = { 6, 6 }; /* 5.75 -> 6 and 6.5 -> 6 (even) */

	set_zp(&o, 2, ERT_DTYPE_UINT8, &zp);
	set_zp(&o, 4, ERT_DTYPE_UINT8, &zp);
	ert_node_set_attr_int(o.g, o.n, "channels_last", 1);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK_EQ_INT(o.out[0].dims[3], 2);
	CHECK_EQ_INT(o.out[0].dims[1], 1);
	check_u8(ert_test_failed_, &o.out[0], last, 2);
	one_fini(&o);
}

/* ---- what the fixed rule refuses at shape inference ---- */

ERT_TEST(fixed_rule_refusals)
{
	struct one o;
	int8_t zp = 0;
	static float big = 65536.0f, tiny = 1e-6f;

	/* multiplier 0.5 * w_s * 65536 / 1e-6 = about 2^44 */
	conv_case(&o, &zp);
	set_scale(&o, 1, &big);
	set_scale(&o, 6, &tiny);
	set_rule(&o, true, 1, 0);
	CHECK_EQ_INT(one_run(&o), ERT_STATUS_UNSUPPORTED);
	CHECK(strstr(o.err.msg, "too large") != NULL);
	/* the float rule takes it (and saturates) */
	set_rule(&o, false, 1, 0);
	CHECK_EQ_INT(one_run(&o), ERT_OK);
	one_fini(&o);

	/* bad attributes */
	conv_case(&o, &zp);
	ert_node_set_attr_int(o.g, o.n, "ert.requant", 2);
	CHECK_EQ_INT(one_run(&o), ERT_STATUS_INVALID_MODEL);
	CHECK(strstr(o.err.msg, "ert.requant") != NULL);
	ert_node_set_attr_int(o.g, o.n, "ert.requant", 1);
	int64_t c3[3] = { 0, 1, 2 }, crev[2] = { 5, 4 }, cbig[2] = { 0, 200 };

	ert_node_set_attr_ints(o.g, o.n, "ert.clamp", c3, 3);
	CHECK_EQ_INT(one_run(&o), ERT_STATUS_INVALID_MODEL);
	CHECK(strstr(o.err.msg, "ert.clamp") != NULL);
	ert_node_set_attr_ints(o.g, o.n, "ert.clamp", crev, 2);
	CHECK_EQ_INT(one_run(&o), ERT_STATUS_INVALID_MODEL);
	ert_node_set_attr_ints(o.g, o.n, "ert.clamp", cbig, 2); /* 200 > int8's 127 */
	CHECK_EQ_INT(one_run(&o), ERT_STATUS_INVALID_MODEL);
	one_fini(&o);

	/* scales unknown at plan time */
	conv_case(&o, &zp);
	set_rule(&o, true, 1, 0);
	o.in[6].data = NULL;
	struct ert_value out;
	struct ert_value *outp[1] = { &out };
	struct ert_infer_ctx ctx = { .graph = o.g, .node = o.n, .in = o.inp, .out = outp,
				     .n_in = 9, .n_out = 1, .err = &o.err };

	memset(&out, 0, sizeof(out));
	CHECK_EQ_INT(ert_op_infer(ERT_OP_QLinearConv)(&ctx), ERT_STATUS_UNSUPPORTED);
	CHECK(strstr(o.err.msg, "constant scales") != NULL);
	one_fini(&o);

	/* QLinearAdd with an output multiplier past 2^30 */
	static float sc[3] = { 1.0f, 1.0f, 1e-20f };
	int64_t db[1] = { 3 };

	binary_case(&o, ERT_OP_QLinearAdd, db, 1, sc);
	set_rule(&o, true, 1, 0);
	CHECK_EQ_INT(one_run(&o), ERT_STATUS_UNSUPPORTED);
	one_fini(&o);
	/* a zero scale */
	static float sc0[3] = { 1.0f, 0.0f, 1.0f };

	binary_case(&o, ERT_OP_QLinearMul, db, 1, sc0);
	set_rule(&o, true, 1, 0);
	CHECK_EQ_INT(one_run(&o), ERT_STATUS_INVALID_MODEL);
	CHECK(strstr(o.err.msg, "positive") != NULL);
	one_fini(&o);
}

ERT_TEST(bad_inputs)
{
	struct one o;
	static float sc[3] = { 1.0f, 1.0f, 1.0f };
	int64_t db[1] = { 4 };
	static uint8_t u = 0;

	/* shapes that do not broadcast */
	binary_case(&o, ERT_OP_QLinearAdd, db, 1, sc);
	CHECK_EQ_INT(one_run(&o), ERT_STATUS_SHAPE);
	one_fini(&o);
	/* a zero point of the other 8-bit type */
	int64_t d3[1] = { 3 };

	binary_case(&o, ERT_OP_QLinearAdd, d3, 1, sc);
	set_zp(&o, 5, ERT_DTYPE_UINT8, &u);
	CHECK_EQ_INT(one_run(&o), ERT_STATUS_DTYPE);
	CHECK(strstr(o.err.msg, "input 5") != NULL);
	one_fini(&o);
	/* QGemm: inner dimensions differ (transB dropped: B is 2x3, A' is 2x3) */
	qgemm_case(&o, 9);
	ert_node_set_attr_int(o.g, o.n, "transB", 0);
	CHECK_EQ_INT(one_run(&o), ERT_STATUS_SHAPE);
	one_fini(&o);
	/* QLinearAveragePool channels_last is not implemented */
	static int8_t x[9];
	static float ys = 0.5f;
	int8_t zp = 0;

	avgpool_case(&o, x, &zp, &ys);
	ert_node_set_attr_int(o.g, o.n, "channels_last", 1);
	CHECK_EQ_INT(one_run(&o), ERT_STATUS_UNSUPPORTED);
	CHECK(strstr(o.err.msg, "channels_last") != NULL);
	one_fini(&o);
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(multiplier_values), ERT_TEST_ENTRY(requant_ties),
	      ERT_TEST_ENTRY(add_params), ERT_TEST_ENTRY(qlinearconv_rules),
	      ERT_TEST_ENTRY(qlinearconv_fixed_uint8_padded),
	      ERT_TEST_ENTRY(qlinearmatmul_per_column), ERT_TEST_ENTRY(qgemm_rules),
	      ERT_TEST_ENTRY(qgemm_trans_a_uint8), ERT_TEST_ENTRY(qlinearadd_ties_and_broadcast),
	      ERT_TEST_ENTRY(qlinearmul_ties), ERT_TEST_ENTRY(qlinearadd_uint8_zero_points),
	      ERT_TEST_ENTRY(qlinearaveragepool_rules),
	      ERT_TEST_ENTRY(qlinearglobalaveragepool_rules),
	      ERT_TEST_ENTRY(fixed_rule_refusals), ERT_TEST_ENTRY(bad_inputs))
