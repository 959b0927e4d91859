/* SPDX-License-Identifier: MIT */
/* Resize family kernels through ert_cpu_eval_node() on one-node graphs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ert-op-test.h"
#include "ert-test.h"

ERT_TEST(nearest_upsample_scales)
{
	struct one o;
	float x[4] = { 1, 2, 3, 4 }, sc[4] = { 1, 1, 2, 3 };

	one_init(&o, ERT_OP_Resize, 13, 3, 1);
	o.inp[1] = NULL; /* roi omitted */
	set_f32(&o.in[0], 4, (int64_t[]){ 1, 1, 2, 2 }, x);
	set_f32(&o.in[2], 1, (int64_t[]){ 4 }, sc);
	ert_node_set_attr_int(o.g, o.n, "exclude_outside", 0);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK_EQ_INT(o.out[0].dims[2], 4);
	CHECK_EQ_INT(o.out[0].dims[3], 6);
	const float *y = o.out[0].data;

	/* half_pixel + round_prefer_floor on an exact 2x/3x upsample repeats pixels */
	CHECK(y[0] == 1 && y[2] == 1 && y[3] == 2 && y[5] == 2);
	CHECK(y[6] == 1 && y[12] == 3 && y[23] == 4);
	one_fini(&o);
}

ERT_TEST(linear_sizes_align_corners)
{
	struct one o;
	float x[2] = { 0, 10 };
	int64_t sizes[1] = { 5 };

	one_init(&o, ERT_OP_Resize, 19, 4, 1);
	o.inp[1] = NULL;
	o.inp[2] = NULL;
	set_f32(&o.in[0], 1, (int64_t[]){ 2 }, x);
	set_val(&o.in[3], ERT_DTYPE_INT64, 1, (int64_t[]){ 1 }, sizes);
	/* string attributes: static literals outlive the graph */
	struct ert_attr *at = ert_node_add_attr(o.g, o.n, "mode", ERT_ATTR_STRING);
	REQUIRE(at);
	at->s = "linear";
	at->len = 6;
	at = ert_node_add_attr(o.g, o.n, "coordinate_transformation_mode", ERT_ATTR_STRING);
	REQUIRE(at);
	at->s = "align_corners";
	at->len = 13;
	REQUIRE(one_run(&o) == ERT_OK);
	const float *y = o.out[0].data;

	CHECK_EQ_INT(o.out[0].dims[0], 5);
	CHECK_NEAR(y[1], 2.5, 1e-6);
	CHECK_NEAR(y[3], 7.5, 1e-6);
	CHECK_NEAR(y[4], 10, 1e-6);
	one_fini(&o);
}

ERT_TEST(upsample_opset7_attribute)
{
	struct one o;
	float x[2] = { 5, 6 };

	one_init(&o, ERT_OP_Upsample, 7, 1, 1);
	struct ert_attr *at = ert_node_add_attr(o.g, o.n, "scales", ERT_ATTR_FLOATS);
	static const float sc[2] = { 1, 2 };

	REQUIRE(at);
	at->floats = sc;
	at->count = 2;
	set_f32(&o.in[0], 2, (int64_t[]){ 1, 2 }, x);
	REQUIRE(one_run(&o) == ERT_OK);
	const float *y = o.out[0].data;

	CHECK_EQ_INT(o.out[0].dims[1], 4);
	CHECK(y[0] == 5 && y[1] == 5 && y[2] == 6 && y[3] == 6);
	one_fini(&o);
}

ERT_TEST(resize_errors)
{
	struct one o;
	float x[2] = { 0, 1 }, sc[2] = { 2, 2 };

	/* neither scales nor sizes */
	one_init(&o, ERT_OP_Resize, 13, 1, 1);
	set_f32(&o.in[0], 1, (int64_t[]){ 2 }, x);
	CHECK_EQ_INT(one_run(&o), ERT_STATUS_INVALID_MODEL);
	CHECK(strstr(o.err.msg, "neither scales nor sizes") != NULL);
	one_fini(&o);

	/* wrong count of scales */
	one_init(&o, ERT_OP_Resize, 13, 3, 1);
	o.inp[1] = NULL;
	set_f32(&o.in[0], 1, (int64_t[]){ 2 }, x);
	set_f32(&o.in[2], 1, (int64_t[]){ 2 }, sc);
	CHECK_EQ_INT(one_run(&o), ERT_STATUS_SHAPE);
	one_fini(&o);
}

/* Resize @x of dims @xd to @sz (rank 4) by sizes; a malloc'd copy of the output. */
static float *resize_to(int *ert_test_failed_, const float *x, const int64_t *xd,
			const int64_t *sz, const char *mode, int antialias)
{
	struct one o;
	float *y = NULL;
	int64_t sizes[4];

	memcpy(sizes, sz, sizeof(sizes));
	one_init(&o, ERT_OP_Resize, 18, 4, 1);
	o.inp[1] = NULL;
	o.inp[2] = NULL;
	set_f32(&o.in[0], 4, xd, (float *)x);
	set_val(&o.in[3], ERT_DTYPE_INT64, 1, (int64_t[]){ 4 }, sizes);
	struct ert_attr *at = ert_node_add_attr(o.g, o.n, "mode", ERT_ATTR_STRING);

	CHECK(at != NULL);
	if (!at) {
		one_fini(&o);
		return NULL;
	}
	at->s = mode;
	at->len = (uint32_t)strlen(mode);
	ert_node_set_attr_int(o.g, o.n, "antialias", antialias);
	CHECK_EQ_INT(one_run(&o), ERT_OK);
	if (o.out[0].data) {
		for (int d = 0; d < 4; d++)
			CHECK_EQ_INT(o.out[0].dims[d], sz[d]);
		y = malloc((size_t)o.out[0].numel * sizeof(float));
		memcpy(y, o.out[0].data, (size_t)o.out[0].numel * sizeof(float));
	}
	one_fini(&o);
	return y;
}

/*
 * An antialiased resize that shrinks one axis a lot and grows another would
 * cost the product of both axes' taps per output summed directly; the
 * kernel then goes one axis at a time. Its result equals two resizes of one
 * axis each, small enough to be summed directly (the axes left as they are
 * have identity taps), to float rounding of the intermediate.
 */
ERT_TEST(antialias_across_axes_is_separable)
{
	static const char *const modes[] = { "linear", "cubic" };
	int64_t xd[4] = { 1, 1, 2, 2000 }, mid[4] = { 1, 1, 2, 3 }, out[4] = { 1, 1, 60, 3 };
	float *x = malloc(2 * 2000 * sizeof(float));
	uint32_t st = 5;

	for (int i = 0; i < 4000; i++)
		x[i] = frand_r(&st) * 10.0f;
	for (int m = 0; m < 2; m++) {
		float *direct = resize_to(ert_test_failed_, x, xd, out, modes[m], 1);
		float *step = resize_to(ert_test_failed_, x, xd, mid, modes[m], 1);
		float *two = step ? resize_to(ert_test_failed_, step, mid, out, modes[m], 1) : NULL;
		double big = 0;

		REQUIRE(direct && two);
		for (int i = 0; i < 180; i++)
			big = fabs(two[i]) > big ? fabs(two[i]) : big;
		CHECK(big > 0.1);
		for (int i = 0; i < 180; i++)
			CHECK_NEAR(direct[i], two[i], 1e-5 * big);
		free(direct);
		free(step);
		free(two);
	}
	free(x);

	/* the fuzzers' slow case: ~4e9 products summed directly, a few thousand here */
	int64_t hd[4] = { 1, 256, 4, 4 }, hs[4] = { 255, 1, 2, 2 };
	float *hx = calloc(256 * 16, sizeof(float));

	for (int i = 0; i < 256 * 16; i++)
		hx[i] = (float)(i % 7);
	float *hy = resize_to(ert_test_failed_, hx, hd, hs, "cubic", 1);

	REQUIRE(hy);
	for (int i = 0; i < 255 * 4; i++)
		CHECK(isfinite(hy[i]));
	free(hy);
	free(hx);
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(antialias_across_axes_is_separable), ERT_TEST_ENTRY(nearest_upsample_scales), ERT_TEST_ENTRY(linear_sizes_align_corners),
	      ERT_TEST_ENTRY(upsample_opset7_attribute), ERT_TEST_ENTRY(resize_errors))
