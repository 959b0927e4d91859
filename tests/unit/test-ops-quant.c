/* SPDX-License-Identifier: MIT */
/* Quant family kernels through ert_cpu_eval_node() on one-node graphs. */
#include <stdlib.h>

#include "cpu/ops/quant-fp8.h"
#include "ert-op-test.h"
#include "ert-test.h"

ERT_TEST(quantize_uint8_half_even)
{
	struct one o;
	float x[6] = { 2.5f, 3.5f, -0.5f, 300.0f, -300.0f, 1.49f };
	float s = 1.0f;
	uint8_t zp = 128;

	one_init(&o, ERT_OP_QuantizeLinear, 13, 3, 1);
	set_f32(&o.in[0], 1, (int64_t[]){ 6 }, x);
	set_f32(&o.in[1], 0, NULL, &s);
	set_val(&o.in[2], ERT_DTYPE_UINT8, 0, NULL, &zp);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK_EQ_INT(o.out[0].dtype, ERT_DTYPE_UINT8);
	const uint8_t *y = o.out[0].data;

	CHECK_EQ_INT(y[0], 130);
	CHECK_EQ_INT(y[1], 132);
	CHECK_EQ_INT(y[2], 128); /* -0.5 rounds to -0 */
	CHECK_EQ_INT(y[3], 255);
	CHECK_EQ_INT(y[4], 0);
	CHECK_EQ_INT(y[5], 129);
	one_fini(&o);
}

/*
 * One scale and zero point, float32 to int8/uint8 (the kernel's vectorised
 * path): every byte as saturate(nearbyint(x / s) + zp) computed here in
 * double, over halves, ties, NaN, infinities, huge values, a zero scale.
 */
ERT_TEST(quantize_bytes_match_rint)
{
	static const float specials[] = { 0.0f, -0.0f, 0.5f, -0.5f, 1.5f, -1.5f, 2.5f, 126.5f,
					  127.5f, 128.5f, -128.5f, -129.5f, 254.5f, 255.5f, 1e9f,
					  -1e9f, 3.4e38f, -3.4e38f, 1e-40f };
	const float scales[] = { 1.0f, 0.5f, 0.0173f, 3.0f, 0.0f };
	enum { N = 2000 };
	float *x = malloc(N * sizeof(float));
	uint32_t st = 99;

	for (int i = 0; i < N; i++) {
		size_t ns = sizeof(specials) / sizeof(specials[0]);

		x[i] = (size_t)i < ns ? specials[i] : frand_r(&st) * 300.0f;
	}
	x[N - 1] = NAN;
	x[N - 2] = INFINITY;
	x[N - 3] = -INFINITY;
	for (size_t si = 0; si < sizeof(scales) / sizeof(scales[0]); si++)
		for (int s8 = 0; s8 < 2; s8++) {
			struct one o;
			float sc = scales[si];
			uint8_t zpb = s8 ? (uint8_t)(int8_t)-7 : 131;
			int zp = s8 ? -7 : 131, lo = s8 ? -128 : 0, hi = s8 ? 127 : 255;

			one_init(&o, ERT_OP_QuantizeLinear, 13, 3, 1);
			set_f32(&o.in[0], 1, (int64_t[]){ N }, x);
			set_f32(&o.in[1], 0, NULL, &sc);
			set_val(&o.in[2], s8 ? ERT_DTYPE_INT8 : ERT_DTYPE_UINT8, 0, NULL, &zpb);
			REQUIRE(one_run(&o) == ERT_OK);
			for (int i = 0; i < N; i++) {
				float q = x[i] / sc;
				double r = isnan(q) ? 0.0 : nearbyint((double)q);
				int want, got;

				r += zp;
				want = (int)(r < lo ? lo : r > hi ? hi : r);
				got = s8 ? ((const int8_t *)o.out[0].data)[i]
					 : ((const uint8_t *)o.out[0].data)[i];
				if (got != want)
					fprintf(stderr, "x %g scale %g: got %d, want %d\n", (double)x[i],
						(double)sc, got, want);
				CHECK_EQ_INT(got, want);
			}
			one_fini(&o);
		}
	free(x);
}

ERT_TEST(quantize_per_axis_int4_and_blocked)
{
	struct one o;
	float x[6] = { 1, 2, 3, 4, -20, 6 };
	float s[3] = { 1, 2, 0.5f };
	uint8_t zp[2] = { 0, 0 }; /* int4 zero points: three nibbles */

	/* [2, 3] per axis 1, int4 */
	one_init(&o, ERT_OP_QuantizeLinear, 21, 3, 1);
	set_f32(&o.in[0], 2, (int64_t[]){ 2, 3 }, x);
	set_f32(&o.in[1], 1, (int64_t[]){ 3 }, s);
	set_val(&o.in[2], ERT_DTYPE_INT4, 1, (int64_t[]){ 3 }, zp);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK_EQ_INT(o.out[0].nbytes, 3);
	const uint8_t *y = o.out[0].data;

	/* 1, 1, 6, 4, -10 -> -8 (saturated), 12 -> 7 */
	CHECK_EQ_INT(y[0], 0x11);
	CHECK_EQ_INT(y[1], 0x46);
	CHECK_EQ_INT(y[2], 0x78);
	one_fini(&o);

	/* blocked: [2, 3] axis 1 block 2: scale [2, 2] */
	float bs[4] = { 1, 10, 2, 20 };

	one_init(&o, ERT_OP_QuantizeLinear, 21, 2, 1);
	ert_node_set_attr_int(o.g, o.n, "block_size", 2);
	ert_node_set_attr_int(o.g, o.n, "output_dtype", ERT_DTYPE_INT8);
	set_f32(&o.in[0], 2, (int64_t[]){ 2, 3 }, x);
	set_f32(&o.in[1], 2, (int64_t[]){ 2, 2 }, bs);
	REQUIRE(one_run(&o) == ERT_OK);
	const int8_t *yi = o.out[0].data;

	CHECK_EQ_INT(o.out[0].dtype, ERT_DTYPE_INT8);
	CHECK(yi[0] == 1 && yi[1] == 2 && yi[2] == 0 && yi[3] == 2 && yi[4] == -10 && yi[5] == 0);
	one_fini(&o);
}

ERT_TEST(dequantize_per_axis)
{
	struct one o;
	int8_t x[4] = { -128, 0, 127, 10 };
	float s[2] = { 0.5f, 2.0f };
	int8_t zp[2] = { 0, 10 };

	one_init(&o, ERT_OP_DequantizeLinear, 13, 3, 1);
	ert_node_set_attr_int(o.g, o.n, "axis", 0);
	set_val(&o.in[0], ERT_DTYPE_INT8, 2, (int64_t[]){ 2, 2 }, x);
	set_f32(&o.in[1], 1, (int64_t[]){ 2 }, s);
	set_val(&o.in[2], ERT_DTYPE_INT8, 1, (int64_t[]){ 2 }, zp);
	REQUIRE(one_run(&o) == ERT_OK);
	const float *y = o.out[0].data;

	CHECK(y[0] == -64 && y[1] == 0 && y[2] == 234 && y[3] == 0);
	one_fini(&o);

	/* zero point of another dtype is refused */
	uint8_t zpu = 0;
	one_init(&o, ERT_OP_DequantizeLinear, 13, 3, 1);
	set_val(&o.in[0], ERT_DTYPE_INT8, 2, (int64_t[]){ 2, 2 }, x);
	set_f32(&o.in[1], 0, NULL, s);
	set_val(&o.in[2], ERT_DTYPE_UINT8, 0, NULL, &zpu);
	CHECK_EQ_INT(one_run(&o), ERT_STATUS_DTYPE);
	one_fini(&o);
}

ERT_TEST(fp8_codes)
{
	CHECK_EQ_INT(ert_q_f32_to_fp8(1.0f, ERT_DTYPE_FLOAT8E4M3FN, true), 0x38);
	CHECK_EQ_INT(ert_q_f32_to_fp8(448.0f, ERT_DTYPE_FLOAT8E4M3FN, true), 0x7e);
	CHECK_EQ_INT(ert_q_f32_to_fp8(1e6f, ERT_DTYPE_FLOAT8E4M3FN, true), 0x7e);
	CHECK_EQ_INT(ert_q_f32_to_fp8(-1e6f, ERT_DTYPE_FLOAT8E4M3FN, false), 0xff);
	CHECK_EQ_INT(ert_q_f32_to_fp8(1.0f, ERT_DTYPE_FLOAT8E5M2, true), 0x3c);
	CHECK_EQ_INT(ert_q_f32_to_fp8(INFINITY, ERT_DTYPE_FLOAT8E5M2, false), 0x7c);
	CHECK_EQ_INT(ert_q_f32_to_fp8(-240.0f, ERT_DTYPE_FLOAT8E4M3FNUZ, true), 0xff);
	/* 1.0625 is halfway between 1 and 1.125: ties to even (1.0) */
	CHECK_EQ_INT(ert_q_f32_to_fp8(1.0625f, ERT_DTYPE_FLOAT8E4M3FN, true), 0x38);
	CHECK_EQ_INT(ert_q_f32_to_fp8(1.1875f, ERT_DTYPE_FLOAT8E4M3FN, true), 0x3a);
	/* smallest subnormal of e4m3fn is 2^-9 */
	CHECK_EQ_INT(ert_q_f32_to_fp8(0.001953125f, ERT_DTYPE_FLOAT8E4M3FN, true), 0x01);
	for (int b = 0; b < 256; b++) {
		float v = ert_q_fp8_to_f32((uint8_t)b, ERT_DTYPE_FLOAT8E4M3FN);

		if (!isnan(v) && b != 0x80)
			CHECK_EQ_INT(ert_q_f32_to_fp8(v, ERT_DTYPE_FLOAT8E4M3FN, true), b);
		v = ert_q_fp8_to_f32((uint8_t)b, ERT_DTYPE_FLOAT8E5M2);
		if (!isnan(v))
			CHECK_EQ_INT(ert_q_f32_to_fp8(v, ERT_DTYPE_FLOAT8E5M2, false), b);
	}
}

ERT_TEST(dynamic_quantize_example)
{
	struct one o;
	float x[6] = { 0, 2, -3, -2.5f, 1.34f, 0.5f };

	one_init(&o, ERT_OP_DynamicQuantizeLinear, 11, 1, 3);
	set_f32(&o.in[0], 1, (int64_t[]){ 6 }, x);
	REQUIRE(one_run(&o) == ERT_OK);
	const uint8_t *y = o.out[0].data;

	CHECK_NEAR(*(float *)o.out[1].data, 5.0 / 255, 1e-7);
	CHECK_EQ_INT(*(uint8_t *)o.out[2].data, 153);
	CHECK(y[0] == 153 && y[1] == 255 && y[2] == 0 && y[3] == 26 && y[4] == 221 && y[5] == 179);
	one_fini(&o);
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(quantize_uint8_half_even), ERT_TEST_ENTRY(quantize_bytes_match_rint),
	      ERT_TEST_ENTRY(quantize_per_axis_int4_and_blocked),
	      ERT_TEST_ENTRY(dequantize_per_axis), ERT_TEST_ENTRY(fp8_codes),
	      ERT_TEST_ENTRY(dynamic_quantize_example))
