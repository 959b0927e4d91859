/* SPDX-License-Identifier: MIT */
/* Elementwise unary and binary ops on the CPU, through one-node graphs. */
#include <float.h>
#include <stdlib.h>

#include "cpu/ops/elementwise.h"
#include "ert-op-test.h"
#include "ert-test.h"

ERT_TEST(add_broadcast_and_fused_relu)
{
	struct one t;
	float a[2 * 3 * 4], b[3] = { -100.0f, 0.0f, 100.0f };

	for (int i = 0; i < 24; i++)
		a[i] = (float)i;
	one_init(&t, ERT_OP_Add, 17, 2, 1);
	set_in(&t, 0, ERT_DTYPE_FLOAT32, 3, (int64_t[]){ 2, 3, 4 }, a);
	set_in(&t, 1, ERT_DTYPE_FLOAT32, 2, (int64_t[]){ 3, 1 }, b);
	REQUIRE(one_run(&t) == ERT_OK);
	CHECK_EQ_INT(t.out[0].rank, 3);
	CHECK_EQ_INT(t.out[0].dims[2], 4);
	const float *y = t.out[0].data;

	for (int i = 0; i < 24; i++)
		CHECK_NEAR(y[i], a[i] + b[(i / 4) % 3], 0);
	free(t.out[0].data);
	t.out[0].data = NULL;

	/* an activation the fusion pass attached */
	ert_node_set_attr_int(t.g, t.n, "ert.act", ERT_ACT_RELU);
	REQUIRE(one_run(&t) == ERT_OK);
	y = t.out[0].data;
	for (int i = 0; i < 24; i++) {
		float r = a[i] + b[(i / 4) % 3];

		CHECK_NEAR(y[i], r > 0 ? r : 0, 0);
	}
	one_fini(&t);
}

ERT_TEST(broadcast_error_names_dims)
{
	struct one t;
	float a[6] = { 0 }, b[4] = { 0 };

	one_init(&t, ERT_OP_Mul, 17, 2, 1);
	set_in(&t, 0, ERT_DTYPE_FLOAT32, 2, (int64_t[]){ 2, 3 }, a);
	set_in(&t, 1, ERT_DTYPE_FLOAT32, 1, (int64_t[]){ 4 }, b);
	CHECK_EQ_INT(one_run(&t), ERT_STATUS_SHAPE);
	CHECK(strstr(t.err.msg, "broadcast") != NULL);
	one_fini(&t);

	/* mixed dtypes are a dtype error, not a crash */
	int32_t ib[3] = { 1, 2, 3 };

	one_init(&t, ERT_OP_Sub, 17, 2, 1);
	set_in(&t, 0, ERT_DTYPE_FLOAT32, 2, (int64_t[]){ 2, 3 }, a);
	set_in(&t, 1, ERT_DTYPE_INT32, 1, (int64_t[]){ 3 }, ib);
	CHECK_EQ_INT(one_run(&t), ERT_STATUS_DTYPE);
	one_fini(&t);
}

ERT_TEST(legacy_axis_broadcast)
{
	struct one t;
	float a[2 * 3 * 2], b[3] = { 10, 20, 30 };

	for (int i = 0; i < 12; i++)
		a[i] = (float)i;
	one_init(&t, ERT_OP_Add, 6, 2, 1);
	ert_node_set_attr_int(t.g, t.n, "broadcast", 1);
	ert_node_set_attr_int(t.g, t.n, "axis", 1);
	set_in(&t, 0, ERT_DTYPE_FLOAT32, 3, (int64_t[]){ 2, 3, 2 }, a);
	set_in(&t, 1, ERT_DTYPE_FLOAT32, 1, (int64_t[]){ 3 }, b);
	REQUIRE(one_run(&t) == ERT_OK);
	const float *y = t.out[0].data;

	for (int i = 0; i < 12; i++)
		CHECK_NEAR(y[i], a[i] + b[(i / 2) % 3], 0);
	one_fini(&t);
}

ERT_TEST(integer_div_mod)
{
	struct one t;
	int32_t a[6] = { -7, 7, -7, 7, 5, INT32_MIN }, b[6] = { 2, -2, -2, 0, 0, -1 };

	one_init(&t, ERT_OP_Mod, 13, 2, 1);
	set_in(&t, 0, ERT_DTYPE_INT32, 1, (int64_t[]){ 6 }, a);
	set_in(&t, 1, ERT_DTYPE_INT32, 1, (int64_t[]){ 6 }, b);
	REQUIRE(one_run(&t) == ERT_OK);
	const int32_t *y = t.out[0].data;

	/* sign follows the divisor; by zero gives 0 rather than a trap */
	CHECK_EQ_INT(y[0], 1);
	CHECK_EQ_INT(y[1], -1);
	CHECK_EQ_INT(y[2], -1);
	CHECK_EQ_INT(y[3], 0);
	CHECK_EQ_INT(y[5], 0);
	one_fini(&t);

	one_init(&t, ERT_OP_Div, 13, 2, 1);
	set_in(&t, 0, ERT_DTYPE_INT32, 1, (int64_t[]){ 6 }, a);
	set_in(&t, 1, ERT_DTYPE_INT32, 1, (int64_t[]){ 6 }, b);
	REQUIRE(one_run(&t) == ERT_OK);
	y = t.out[0].data;
	CHECK_EQ_INT(y[0], -3);
	CHECK_EQ_INT(y[3], 0);
	CHECK_EQ_INT(y[5], INT32_MIN); /* wraps like numpy */
	one_fini(&t);
}

ERT_TEST(clip_both_forms)
{
	struct one t;
	float x[5] = { -3, -1, 0, 1, 3 }, lo = -1.5f;
	int8_t xi[4] = { -128, -5, 5, 127 }, hi = 4;

	/* opset 6: attributes */
	one_init(&t, ERT_OP_Clip, 6, 1, 1);
	ert_node_set_attr_float(t.g, t.n, "min", -2.0f);
	ert_node_set_attr_float(t.g, t.n, "max", 0.5f);
	set_in(&t, 0, ERT_DTYPE_FLOAT32, 1, (int64_t[]){ 5 }, x);
	REQUIRE(one_run(&t) == ERT_OK);
	const float *y = t.out[0].data;

	CHECK_NEAR(y[0], -2, 0);
	CHECK_NEAR(y[3], 0.5, 0);
	one_fini(&t);

	/* opset 13: min as input, max omitted */
	one_init(&t, ERT_OP_Clip, 13, 3, 1);
	set_in(&t, 0, ERT_DTYPE_FLOAT32, 1, (int64_t[]){ 5 }, x);
	set_in(&t, 1, ERT_DTYPE_FLOAT32, 0, NULL, &lo);
	t.inp[2] = NULL;
	REQUIRE(one_run(&t) == ERT_OK);
	y = t.out[0].data;
	CHECK_NEAR(y[0], -1.5, 0);
	CHECK_NEAR(y[4], 3, 0);
	one_fini(&t);

	/* int8, max only */
	one_init(&t, ERT_OP_Clip, 13, 3, 1);
	set_in(&t, 0, ERT_DTYPE_INT8, 1, (int64_t[]){ 4 }, xi);
	t.inp[1] = NULL;
	set_in(&t, 2, ERT_DTYPE_INT8, 0, NULL, &hi);
	REQUIRE(one_run(&t) == ERT_OK);
	const int8_t *yi = t.out[0].data;

	CHECK_EQ_INT(yi[0], -128);
	CHECK_EQ_INT(yi[2], 4);
	CHECK_EQ_INT(yi[3], 4);
	one_fini(&t);

	/* min > max: everything becomes max */
	float lo2 = 2.0f, hi2 = -1.0f;

	one_init(&t, ERT_OP_Clip, 13, 3, 1);
	set_in(&t, 0, ERT_DTYPE_FLOAT32, 1, (int64_t[]){ 5 }, x);
	set_in(&t, 1, ERT_DTYPE_FLOAT32, 0, NULL, &lo2);
	set_in(&t, 2, ERT_DTYPE_FLOAT32, 0, NULL, &hi2);
	REQUIRE(one_run(&t) == ERT_OK);
	y = t.out[0].data;
	for (int i = 0; i < 5; i++)
		CHECK_NEAR(y[i], -1.0, 0);
	one_fini(&t);
}

ERT_TEST(unary_in_place_and_threaded)
{
	enum { N = 100000 };
	float *buf = malloc(N * sizeof(float));
	struct ert_threadpool *pool = ert_threadpool_create(4);
	struct ert_cpu cpu = { .pool = pool, .num_threads = 4 };
	struct one t;
	struct ert_value v;
	struct ert_value *vp = &v;
	bool konst = false;
	struct ert_exec x;

	REQUIRE(buf && pool);
	for (int i = 0; i < N; i++)
		buf[i] = (float)(i % 200) / 10.0f - 10.0f;
	one_init(&t, ERT_OP_HardSwish, 17, 1, 1);
	ert_value_set_shape(&v, ERT_DTYPE_FLOAT32, 1, (int64_t[]){ N });
	ert_value_finish(&v);
	v.data = buf;
	memset(&x, 0, sizeof(x));
	x.graph = t.g;
	x.node = t.n;
	x.in = &vp;
	x.out = &vp; /* in place, as the planner may arrange */
	x.n_in = x.n_out = 1;
	x.in_const = &konst;
	const struct ert_cpu_op *k = ert_cpu_op_find(ERT_OP_HardSwish);

	REQUIRE(k);
	CHECK_EQ_INT(k->compute(&cpu, &x, &t.err), ERT_OK);
	for (int i = 0; i < N; i++) {
		float in = (float)(i % 200) / 10.0f - 10.0f;
		float r = in * fminf(fmaxf(in / 6.0f + 0.5f, 0.0f), 1.0f);

		if (fabsf(buf[i] - r) > 1e-6f) {
			CHECK_NEAR(buf[i], r, 1e-6);
			break;
		}
	}
	one_fini(&t);
	ert_threadpool_destroy(pool);
	free(buf);
}

ERT_TEST(threaded_broadcast_matches_scalar)
{
	enum { R = 64, C = 1000 };
	float *a = malloc(R * C * sizeof(float)), *b = malloc(C * sizeof(float));
	float *y = malloc(R * C * sizeof(float));
	struct ert_threadpool *pool = ert_threadpool_create(3);
	struct ert_cpu cpu = { .pool = pool, .num_threads = 3 };
	struct one t;
	struct ert_value va, vb, vy;
	struct ert_value *ins[2] = { &va, &vb }, *outs[1] = { &vy };
	bool konst[2] = { false, false };
	struct ert_exec x;

	REQUIRE(a && b && y && pool);
	for (int i = 0; i < R * C; i++)
		a[i] = (float)(i % 97);
	for (int i = 0; i < C; i++)
		b[i] = (float)(i % 13) + 1.0f;
	one_init(&t, ERT_OP_Div, 17, 2, 1);
	ert_value_set_shape(&va, ERT_DTYPE_FLOAT32, 2, (int64_t[]){ R, C });
	ert_value_set_shape(&vb, ERT_DTYPE_FLOAT32, 1, (int64_t[]){ C });
	ert_value_set_shape(&vy, ERT_DTYPE_FLOAT32, 2, (int64_t[]){ R, C });
	ert_value_finish(&va);
	ert_value_finish(&vb);
	ert_value_finish(&vy);
	va.data = a;
	vb.data = b;
	vy.data = y;
	memset(&x, 0, sizeof(x));
	x.graph = t.g;
	x.node = t.n;
	x.in = ins;
	x.out = outs;
	x.n_in = 2;
	x.n_out = 1;
	x.in_const = konst;
	CHECK_EQ_INT(ert_cpu_op_find(ERT_OP_Div)->compute(&cpu, &x, &t.err), ERT_OK);
	int bad = 0;

	for (int i = 0; i < R * C && !bad; i++)
		bad = y[i] != a[i] / b[i % C];
	CHECK(!bad);
	one_fini(&t);
	ert_threadpool_destroy(pool);
	free(a);
	free(b);
	free(y);
}

ERT_TEST(cast_reduced_precision)
{
	struct one t;
	float x[6] = { 1.0f, -0.3f, 500.0f, -1e9f, 3.0e-3f, NAN };

	one_init(&t, ERT_OP_Cast, 19, 1, 1);
	ert_node_set_attr_int(t.g, t.n, "to", ERT_DTYPE_FLOAT8E4M3FN);
	set_in(&t, 0, ERT_DTYPE_FLOAT32, 1, (int64_t[]){ 6 }, x);
	REQUIRE(one_run(&t) == ERT_OK);
	const uint8_t *y = t.out[0].data;

	CHECK_EQ_INT(y[0], 0x38);          /* 1.0: exponent 7, mantissa 0 */
	CHECK_EQ_INT(y[2], 0x7e);          /* saturates to 448 */
	CHECK_EQ_INT(y[3], 0xfe);          /* -448 */
	CHECK_EQ_INT(y[5] & 0x7f, 0x7f);   /* NaN */
	one_fini(&t);

	/* float → int4 rounds half to even and saturates, packed low nibble first */
	float xi[5] = { 2.5f, -9.0f, 7.6f, -1.0f, 3.5f };

	one_init(&t, ERT_OP_Cast, 21, 1, 1);
	ert_node_set_attr_int(t.g, t.n, "to", ERT_DTYPE_INT4);
	set_in(&t, 0, ERT_DTYPE_FLOAT32, 1, (int64_t[]){ 5 }, xi);
	REQUIRE(one_run(&t) == ERT_OK);
	CHECK_EQ_INT(t.out[0].nbytes, 3);
	y = t.out[0].data;
	CHECK_EQ_INT(y[0], 0x82);          /* 2, -8 */
	CHECK_EQ_INT(y[1], 0xf7);          /* 7, -1 */
	CHECK_EQ_INT(y[2] & 0xf, 4);
	one_fini(&t);

	/*
	 * casts to string make strings, which live in a session's run heap: evaluated
	 * alone (as folding does) they are refused with a message (test-strings runs them)
	 */
	one_init(&t, ERT_OP_Cast, 21, 1, 1);
	ert_node_set_attr_int(t.g, t.n, "to", ERT_DTYPE_STRING);
	set_in(&t, 0, ERT_DTYPE_FLOAT32, 1, (int64_t[]){ 5 }, xi);
	CHECK_EQ_INT(one_run(&t), ERT_STATUS_UNSUPPORTED);
	CHECK(strstr(t.err.msg, "string") != NULL);
	one_fini(&t);
	/* bool has no string form in edgert */
	one_init(&t, ERT_OP_Cast, 21, 1, 1);
	ert_node_set_attr_int(t.g, t.n, "to", ERT_DTYPE_STRING);
	set_in(&t, 0, ERT_DTYPE_BOOL, 1, (int64_t[]){ 5 }, xi);
	CHECK_EQ_INT(one_run(&t), ERT_STATUS_UNSUPPORTED);
	CHECK(strstr(t.err.msg, "between string and bool") != NULL);
	one_fini(&t);
}

ERT_TEST(where_and_compare)
{
	struct one t;
	uint8_t c[2] = { 1, 0 };
	int64_t a[2 * 2] = { 1, 2, 3, 4 }, b = -9;

	one_init(&t, ERT_OP_Where, 16, 3, 1);
	set_in(&t, 0, ERT_DTYPE_BOOL, 1, (int64_t[]){ 2 }, c);
	set_in(&t, 1, ERT_DTYPE_INT64, 2, (int64_t[]){ 2, 2 }, a);
	set_in(&t, 2, ERT_DTYPE_INT64, 0, NULL, &b);
	REQUIRE(one_run(&t) == ERT_OK);
	const int64_t *y = t.out[0].data;

	CHECK_EQ_INT(y[0], 1);
	CHECK_EQ_INT(y[1], -9);
	CHECK_EQ_INT(y[2], 3);
	CHECK_EQ_INT(y[3], -9);
	one_fini(&t);

	float f[3] = { 1, NAN, 3 }, g = 2;

	one_init(&t, ERT_OP_GreaterOrEqual, 16, 2, 1);
	set_in(&t, 0, ERT_DTYPE_FLOAT32, 1, (int64_t[]){ 3 }, f);
	set_in(&t, 1, ERT_DTYPE_FLOAT32, 0, NULL, &g);
	REQUIRE(one_run(&t) == ERT_OK);
	CHECK_EQ_INT(t.out[0].dtype, ERT_DTYPE_BOOL);
	const uint8_t *yb = t.out[0].data;

	CHECK(yb[0] == 0 && yb[1] == 0 && yb[2] == 1);
	one_fini(&t);
}

ERT_TEST(variadic_mean_and_max)
{
	struct one t;
	float a[2] = { 1, 5 }, b[3 * 1] = { 2, 4, 6 }, c = 9;

	one_init(&t, ERT_OP_Mean, 13, 3, 1);
	set_in(&t, 0, ERT_DTYPE_FLOAT32, 1, (int64_t[]){ 2 }, a);
	set_in(&t, 1, ERT_DTYPE_FLOAT32, 2, (int64_t[]){ 3, 1 }, b);
	set_in(&t, 2, ERT_DTYPE_FLOAT32, 0, NULL, &c);
	REQUIRE(one_run(&t) == ERT_OK);
	CHECK_EQ_INT(t.out[0].numel, 6);
	const float *y = t.out[0].data;

	CHECK_NEAR(y[0], (1 + 2 + 9) / 3.0, 1e-6);
	CHECK_NEAR(y[5], (5 + 6 + 9) / 3.0, 1e-6);
	one_fini(&t);

	one_init(&t, ERT_OP_Max, 13, 2, 1);
	set_in(&t, 0, ERT_DTYPE_FLOAT32, 1, (int64_t[]){ 2 }, a);
	set_in(&t, 1, ERT_DTYPE_FLOAT32, 2, (int64_t[]){ 3, 1 }, b);
	REQUIRE(one_run(&t) == ERT_OK);
	y = t.out[0].data;
	CHECK_NEAR(y[0], 2, 0);
	CHECK_NEAR(y[1], 5, 0);
	CHECK_NEAR(y[4], 6, 0);
	one_fini(&t);
}

ERT_TEST(float16_math)
{
	struct one t;
	uint16_t x[3] = { ert_fp32_to_fp16(-2.0f), ert_fp32_to_fp16(0.5f),
			  ert_fp32_to_fp16(4.0f) };

	one_init(&t, ERT_OP_Sqrt, 13, 1, 1);
	set_in(&t, 0, ERT_DTYPE_FLOAT16, 1, (int64_t[]){ 3 }, x);
	REQUIRE(one_run(&t) == ERT_OK);
	const uint16_t *y = t.out[0].data;

	CHECK(isnan(ert_fp16_to_fp32(y[0])));
	CHECK_NEAR(ert_fp16_to_fp32(y[2]), 2.0, 0);
	one_fini(&t);

	/* Sqrt of an integer is a dtype error */
	int32_t xi[1] = { 4 };

	one_init(&t, ERT_OP_Sqrt, 13, 1, 1);
	set_in(&t, 0, ERT_DTYPE_INT32, 1, (int64_t[]){ 1 }, xi);
	CHECK_EQ_INT(one_run(&t), ERT_STATUS_DTYPE);
	one_fini(&t);
}

static double ref_sigmoid(double x)
{
	return 1.0 / (1.0 + exp(-x));
}

static double ref_gelu(double x)
{
	return 0.5 * x * erfc(-x / sqrt(2.0));
}

static double ref_gelu_tanh(double x)
{
	return 0.5 * x * (1.0 + tanh(0.79788456080286535588 * (x + 0.044715 * x * x * x)));
}

static double ref_hard_swish(double x)
{
	double t = x / 6.0 + 0.5;

	return x * (t < 0 ? 0 : t > 1 ? 1 : t);
}

/* The vectorised float32 forms against double libm, in place, over [-20, 20]. */
ERT_TEST(fast_math_accuracy)
{
	enum { N = 40001 };
	static float buf[N];
	static const struct {
		const char *name;
		void (*fn)(const float *, float *, int64_t);
		double (*ref)(double);
	} fns[] = {
		{ "sigmoid", ert_vm_sigmoid_f32, ref_sigmoid },
		{ "tanh", ert_vm_tanh_f32, tanh },
		{ "erf", ert_vm_erf_f32, erf },
		{ "gelu", ert_vm_gelu_f32, ref_gelu },
		{ "gelu_tanh", ert_vm_gelu_tanh_f32, ref_gelu_tanh },
		{ "hard_swish", ert_vm_hard_swish_f32, ref_hard_swish },
	};

	for (size_t f = 0; f < sizeof(fns) / sizeof(fns[0]); f++) {
		for (int i = 0; i < N; i++)
			buf[i] = (float)(i - N / 2) * 1e-3f;
		fns[f].fn(buf, buf, N);
		for (int i = 0; i < N; i++) {
			double x = (float)(i - N / 2) * 1e-3f, r = fns[f].ref(x);

			if (!(fabs(buf[i] - r) <= 5e-7 + 2e-6 * fabs(r))) {
				fprintf(stderr, "%s(%g) = %.9g, expected %.9g\n", fns[f].name, x,
					buf[i], r);
				CHECK(0);
				break;
			}
		}
	}
	float sp[4] = { NAN, INFINITY, -INFINITY, -0.0f };

	ert_vm_tanh_f32(sp, sp, 4);
	CHECK(isnan(sp[0]) && sp[1] == 1.0f && sp[2] == -1.0f && sp[3] == 0.0f);
}

/* Pow's shortcut exponents agree with pow() on the special values too. */
ERT_TEST(pow_shortcuts_match_pow)
{
	static const float ex[] = { 2.0f, 1.0f, -1.0f, 0.5f, 3.0f };
	float x[7] = { -0.0f, -INFINITY, 4.0f, -4.0f, 3.0f, 0.0f, INFINITY };
	struct one t;

	for (size_t e = 0; e < sizeof(ex) / sizeof(ex[0]); e++) {
		one_init(&t, ERT_OP_Pow, 15, 2, 1);
		set_in(&t, 0, ERT_DTYPE_FLOAT32, 1, (int64_t[]){ 7 }, x);
		set_in(&t, 1, ERT_DTYPE_FLOAT32, 0, NULL, &ex[e]);
		REQUIRE(one_run(&t) == ERT_OK);
		const float *y = t.out[0].data;

		for (int i = 0; i < 7; i++) {
			float want = powf(x[i], ex[e]);

			if (isnan(want))
				CHECK(isnan(y[i]));
			else
				CHECK(y[i] == want && signbit(y[i]) == signbit(want));
		}
		one_fini(&t);
	}
}

/* Cast-1 names its target with a string. */
ERT_TEST(cast_opset1_string_target)
{
	struct one t;
	int32_t x[3] = { -1, 0, 70000 };
	struct ert_attr *a;

	one_init(&t, ERT_OP_Cast, 1, 1, 1);
	a = ert_node_add_attr(t.g, t.n, "to", ERT_ATTR_STRING);
	REQUIRE(a);
	a->s = "DOUBLE";
	a->len = 6;
	set_in(&t, 0, ERT_DTYPE_INT32, 1, (int64_t[]){ 3 }, x);
	REQUIRE(one_run(&t) == ERT_OK);
	CHECK_EQ_INT(t.out[0].dtype, ERT_DTYPE_FLOAT64);
	CHECK_NEAR(((const double *)t.out[0].data)[2], 70000.0, 0);
	one_fini(&t);

	one_init(&t, ERT_OP_Cast, 1, 1, 1);
	a = ert_node_add_attr(t.g, t.n, "to", ERT_ATTR_STRING);
	REQUIRE(a);
	a->s = "NOPE";
	a->len = 4;
	set_in(&t, 0, ERT_DTYPE_INT32, 1, (int64_t[]){ 3 }, x);
	CHECK_EQ_INT(one_run(&t), ERT_STATUS_UNSUPPORTED);
	one_fini(&t);
}

/* Casts split over threads: 4-bit bytes at block edges, saturation, odd sizes. */
ERT_TEST(cast_threaded_matches_single)
{
	enum { N = 100001 };
	static float x[N];
	static uint8_t a[N / 2 + 1], b[N / 2 + 1];
	static int64_t ia[N], ib[N];
	struct ert_threadpool *pool = ert_threadpool_create(3);
	struct ert_cpu cpu = { .pool = pool, .num_threads = 3 };
	struct ert_value vx, va, vb;
	struct ert_err err;

	REQUIRE(pool);
	for (int i = 0; i < N; i++)
		x[i] = (float)((i * 37) % 41) - 20.5f;
	x[7] = NAN;
	x[8] = 1e30f;
	memset(&vx, 0, sizeof(vx));
	ert_value_set_shape(&vx, ERT_DTYPE_FLOAT32, 1, (int64_t[]){ N });
	ert_value_finish(&vx);
	vx.data = x;
	va = vx;
	va.dtype = ERT_DTYPE_INT4;
	ert_value_finish(&va);
	vb = va;
	va.data = a;
	vb.data = b;
	memset(a, 0xff, sizeof(a));
	CHECK_EQ_INT(ert_cast_run(&cpu, &vx, &va, true, &err), ERT_OK);
	CHECK_EQ_INT(ert_cast_run(NULL, &vx, &vb, true, &err), ERT_OK);
	CHECK(memcmp(a, b, va.nbytes) == 0);
	CHECK_EQ_INT(a[N / 2] >> 4, 0); /* the pad nibble */
	CHECK_EQ_INT(a[0] & 0xf, (uint8_t)-8 & 0xf);

	va.dtype = vb.dtype = ERT_DTYPE_INT64;
	ert_value_finish(&va);
	ert_value_finish(&vb);
	va.data = ia;
	vb.data = ib;
	CHECK_EQ_INT(ert_cast_run(&cpu, &vx, &va, true, &err), ERT_OK);
	CHECK_EQ_INT(ia[0], -20);
	CHECK_EQ_INT(ia[7], 0);          /* NaN */
	CHECK_EQ_INT(ia[8], INT64_MAX);  /* saturated */
	/* the direct float32 -> int64 loop agrees with the generic path (float64 -> int64) */
	double *d = malloc(N * sizeof(double));
	struct ert_value vd = vx;

	REQUIRE(d);
	vd.dtype = ERT_DTYPE_FLOAT64;
	ert_value_finish(&vd);
	vd.data = d;
	CHECK_EQ_INT(ert_cast_run(&cpu, &vx, &vd, true, &err), ERT_OK);
	CHECK_EQ_INT(ert_cast_run(&cpu, &vd, &vb, true, &err), ERT_OK);
	CHECK(memcmp(ia, ib, sizeof(ia)) == 0);
	free(d);
	ert_threadpool_destroy(pool);
}

ERT_TEST(integer_shrink)
{
	struct one t;
	int8_t x[5] = { -10, -2, 0, 2, 10 };

	one_init(&t, ERT_OP_Shrink, 9, 1, 1);
	ert_node_set_attr_float(t.g, t.n, "lambd", 1.5f);
	ert_node_set_attr_float(t.g, t.n, "bias", 1.5f);
	set_in(&t, 0, ERT_DTYPE_INT8, 1, (int64_t[]){ 5 }, x);
	REQUIRE(one_run(&t) == ERT_OK);
	const int8_t *y = t.out[0].data;

	/* -10 + 1.5 = -8.5 truncates to -8; 0 stays 0 */
	CHECK_EQ_INT(y[0], -8);
	CHECK_EQ_INT(y[1], 0);
	CHECK_EQ_INT(y[2], 0);
	CHECK_EQ_INT(y[4], 8);
	one_fini(&t);
}

/* Element of @v at output coordinate @c (numpy broadcasting), the naive way. */
static int64_t naive_offset(const struct ert_value *v, int32_t out_rank, const int64_t *c)
{
	int64_t off = 0;

	for (int32_t j = 0; j < v->rank; j++) {
		int64_t cj = c[j + out_rank - v->rank];

		off = off * v->dims[j] + (v->dims[j] == 1 ? 0 : cj);
	}
	return off;
}

/*
 * Random shapes against naive indexing: Sub (operand order matters) and Where
 * (three inputs), through the threaded broadcast walker, big enough at times
 * to be split over threads mid-run.
 */
ERT_TEST(broadcast_random_shapes)
{
	struct ert_threadpool *pool = ert_threadpool_create(3);
	struct ert_cpu cpu = { .pool = pool, .num_threads = 3 };
	uint32_t seed = 12345;
	int bad = 0, big = 0;

	REQUIRE(pool);
	for (int iter = 0; iter < 300 && !bad; iter++) {
		struct ert_value v[3], out;
		const struct ert_value *cins[3] = { &v[0], &v[1], &v[2] };
		int64_t dims[ERT_MAX_RANK];
		int32_t rank;
		struct ert_err err;

#define RND(n) (((seed = seed * 1103515245u + 12345u) >> 16) % (n))
		rank = 1 + (int32_t)RND(5);
		for (int32_t d = 0; d < rank; d++)
			dims[d] = 1 + (int64_t)RND(iter % 10 == 0 && rank <= 3 ? 40 : 5);
		for (int k = 0; k < 3; k++) {
			int32_t r = rank - (int32_t)RND((uint32_t)rank + 1);

			memset(&v[k], 0, sizeof(v[k]));
			v[k].dtype = k == 0 ? ERT_DTYPE_BOOL : ERT_DTYPE_FLOAT32;
			v[k].rank = r;
			for (int32_t j = 0; j < r; j++)
				v[k].dims[j] = RND(3) == 0 ? 1 : dims[j + rank - r];
			ert_value_finish(&v[k]);
			v[k].data = malloc(v[k].nbytes + 1);
			for (int64_t i = 0; i < v[k].numel; i++) {
				if (k == 0)
					((uint8_t *)v[k].data)[i] = (uint8_t)RND(2);
				else
					((float *)v[k].data)[i] = (float)RND(1000);
			}
		}
		memset(&out, 0, sizeof(out));
		REQUIRE(ert_broadcast_shapes(cins, 3, &out, &err, "test") == ERT_OK);
		out.dtype = ERT_DTYPE_FLOAT32;
		ert_value_finish(&out);
		out.data = malloc(out.nbytes + 1);
		/* Sub of inputs 1 and 2, broadcast to the three-way shape */
		CHECK_EQ_INT(ert_binary_arith_run(&cpu, &(struct ert_node){ .op = ERT_OP_Sub,
									   .opset = 17, .name = "s" },
						  ERT_OP_Sub, &v[1], &v[2], &out, &err),
			     ERT_OK);
		int64_t c[ERT_MAX_RANK] = { 0 };

		for (int64_t i = 0; i < out.numel && !bad; i++) {
			float want = ((float *)v[1].data)[naive_offset(&v[1], out.rank, c)] -
				     ((float *)v[2].data)[naive_offset(&v[2], out.rank, c)];

			bad = ((float *)out.data)[i] != want;
			for (int32_t d = out.rank - 1; d >= 0 && ++c[d] == out.dims[d]; d--)
				c[d] = 0;
		}
		CHECK(!bad);
		big += out.numel > ERT_EW_GRAIN;
		CHECK_EQ_INT(ert_where_run(&cpu, &v[0], &v[1], &v[2], &out, &err), ERT_OK);
		memset(c, 0, sizeof(c));
		for (int64_t i = 0; i < out.numel && !bad; i++) {
			bool cond = ((uint8_t *)v[0].data)[naive_offset(&v[0], out.rank, c)];
			const struct ert_value *src = cond ? &v[1] : &v[2];

			bad = ((float *)out.data)[i] !=
			      ((float *)src->data)[naive_offset(src, out.rank, c)];
			for (int32_t d = out.rank - 1; d >= 0 && ++c[d] == out.dims[d]; d--)
				c[d] = 0;
		}
		CHECK(!bad);
		for (int k = 0; k < 3; k++)
			free(v[k].data);
		free(out.data);
#undef RND
	}
	CHECK(big > 0); /* some cases were split over threads */
	ert_threadpool_destroy(pool);
}

/* Empty tensors and rank-0 scalars go through every path without trouble. */
ERT_TEST(empty_and_scalar)
{
	struct one t;
	float a = 2.0f, b = 3.0f, row[3] = { 1, 2, 3 };

	one_init(&t, ERT_OP_Add, 17, 2, 1);
	set_in(&t, 0, ERT_DTYPE_FLOAT32, 2, (int64_t[]){ 0, 3 }, row);
	set_in(&t, 1, ERT_DTYPE_FLOAT32, 1, (int64_t[]){ 3 }, row);
	REQUIRE(one_run(&t) == ERT_OK);
	CHECK_EQ_INT(t.out[0].numel, 0);
	CHECK_EQ_INT(t.out[0].dims[0], 0);
	one_fini(&t);

	one_init(&t, ERT_OP_Mul, 17, 2, 1);
	set_in(&t, 0, ERT_DTYPE_FLOAT32, 0, NULL, &a);
	set_in(&t, 1, ERT_DTYPE_FLOAT32, 0, NULL, &b);
	REQUIRE(one_run(&t) == ERT_OK);
	CHECK_EQ_INT(t.out[0].rank, 0);
	CHECK_NEAR(*(const float *)t.out[0].data, 6.0, 0);
	one_fini(&t);

	one_init(&t, ERT_OP_Cast, 21, 1, 1);
	ert_node_set_attr_int(t.g, t.n, "to", ERT_DTYPE_UINT4);
	set_in(&t, 0, ERT_DTYPE_FLOAT32, 1, (int64_t[]){ 0 }, row);
	REQUIRE(one_run(&t) == ERT_OK);
	CHECK_EQ_INT(t.out[0].nbytes, 0);
	one_fini(&t);

	one_init(&t, ERT_OP_Sigmoid, 17, 1, 1);
	set_in(&t, 0, ERT_DTYPE_FLOAT32, 3, (int64_t[]){ 2, 0, 5 }, row);
	REQUIRE(one_run(&t) == ERT_OK);
	CHECK_EQ_INT(t.out[0].numel, 0);
	one_fini(&t);
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(add_broadcast_and_fused_relu),
	      ERT_TEST_ENTRY(broadcast_error_names_dims), ERT_TEST_ENTRY(legacy_axis_broadcast),
	      ERT_TEST_ENTRY(integer_div_mod), ERT_TEST_ENTRY(clip_both_forms),
	      ERT_TEST_ENTRY(unary_in_place_and_threaded),
	      ERT_TEST_ENTRY(threaded_broadcast_matches_scalar),
	      ERT_TEST_ENTRY(cast_reduced_precision), ERT_TEST_ENTRY(where_and_compare),
	      ERT_TEST_ENTRY(variadic_mean_and_max), ERT_TEST_ENTRY(float16_math),
	      ERT_TEST_ENTRY(fast_math_accuracy), ERT_TEST_ENTRY(pow_shortcuts_match_pow),
	      ERT_TEST_ENTRY(cast_opset1_string_target), ERT_TEST_ENTRY(cast_threaded_matches_single),
	      ERT_TEST_ENTRY(integer_shrink), ERT_TEST_ENTRY(broadcast_random_shapes),
	      ERT_TEST_ENTRY(empty_and_scalar))
