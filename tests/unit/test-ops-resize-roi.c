/* SPDX-License-Identifier: MIT */
/*
 * RoiAlign, called directly through its shape inference and kernel entry
 * points (the node carries a stand-in op type); the ONNX node tests run it
 * through the op tables.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/ops/resize-kernels.h"
#include "ert-op-test.h"
#include "ert-test.h"
#include "ops/resize-roi.h"

static ert_status run_roi(struct one *o)
{
	return one_run_kernel(o, ert_infer_roi_align, ert_cpu_roi_align, NULL);
}

ERT_TEST(avg_over_constant_and_ramp)
{
	struct one o;
	float x[16], rois[8] = { 0, 0, 4, 4, 1, 1, 3, 3 };
	int64_t batch[2] = { 0, 0 };

	/* x[h][w] = w: the average of a bin is the mean x of its samples */
	for (int i = 0; i < 16; i++)
		x[i] = (float)(i % 4);
	one_init(&o, ERT_OP_Softmax, 16, 3, 1);
	ert_node_set_attr_int(o.g, o.n, "output_height", 1);
	ert_node_set_attr_int(o.g, o.n, "output_width", 2);
	ert_node_set_attr_int(o.g, o.n, "sampling_ratio", 2);
	set_f32(&o.in[0], 4, (int64_t[]){ 1, 1, 4, 4 }, x);
	set_f32(&o.in[1], 2, (int64_t[]){ 2, 4 }, rois);
	set_val(&o.in[2], ERT_DTYPE_INT64, 1, (int64_t[]){ 2 }, batch);
	REQUIRE(run_roi(&o) == ERT_OK);
	CHECK_EQ_INT(o.out[0].dims[0], 2);
	CHECK_EQ_INT(o.out[0].dims[3], 2);
	const float *y = o.out[0].data;

	/* half_pixel: RoI 0 spans x in [-0.5, 3.5); left bin samples x = 0, 1 */
	CHECK_NEAR(y[0], 0.5, 1e-6);
	CHECK_NEAR(y[1], 2.5, 1e-6);
	/* RoI 1 spans [0.5, 2.5): samples 0.75, 1.25 and 1.75, 2.25 */
	CHECK_NEAR(y[2], 1.0, 1e-6);
	CHECK_NEAR(y[3], 2.0, 1e-6);
	one_fini(&o);
}

ERT_TEST(bad_batch_index)
{
	struct one o;
	float x[4] = { 1, 2, 3, 4 }, rois[4] = { 0, 0, 1, 1 };
	int64_t batch[1] = { 3 };

	one_init(&o, ERT_OP_Softmax, 16, 3, 1);
	set_f32(&o.in[0], 4, (int64_t[]){ 1, 1, 2, 2 }, x);
	set_f32(&o.in[1], 2, (int64_t[]){ 1, 4 }, rois);
	set_val(&o.in[2], ERT_DTYPE_INT64, 1, (int64_t[]){ 1 }, batch);
	CHECK_EQ_INT(run_roi(&o), ERT_STATUS_INVALID_ARGUMENT);
	CHECK(strstr(o.err.msg, "RoI 0") != NULL);
	one_fini(&o);
}

/*
 * Through the op table the average and the max are taken separably
 * (per-axis weights in the kernel's workspace); called directly, without a
 * workspace, the kernel walks every sample. Both must agree: adaptive
 * grids, a RoI far past the map, a fixed sampling_ratio, both coordinate
 * modes, values of both signs (the max takes a negative value's smallest
 * weight), and a NaN on the map (the max then walks the bins it is under).
 * The max is the same double products: equal, not near.
 */
/* RoiAlign on a [1, 2, 9, 11] map through both paths: the results agree */
static void check_paths(int *ert_test_failed_, const float *x, const float *rois, int sr,
			bool half_pixel, bool max)
{
	int64_t batch[2] = { 0, 0 };
	struct one o[2];
	struct ert_attr *at;

	for (int k = 0; k < 2; k++) {
		one_init(&o[k], k ? ERT_OP_RoiAlign : ERT_OP_Softmax, 16, 3, 1);
		ert_node_set_attr_int(o[k].g, o[k].n, "output_height", 3);
		ert_node_set_attr_int(o[k].g, o[k].n, "output_width", 4);
		ert_node_set_attr_int(o[k].g, o[k].n, "sampling_ratio", sr);
		ert_node_set_attr_float(o[k].g, o[k].n, "spatial_scale", 0.5f);
		at = ert_node_add_attr(o[k].g, o[k].n, "coordinate_transformation_mode",
				       ERT_ATTR_STRING);
		REQUIRE(at);
		at->s = half_pixel ? "half_pixel" : "output_half_pixel";
		at->len = (uint32_t)strlen(at->s);
		at = ert_node_add_attr(o[k].g, o[k].n, "mode", ERT_ATTR_STRING);
		REQUIRE(at);
		at->s = max ? "max" : "avg";
		at->len = 3;
		set_f32(&o[k].in[0], 4, (int64_t[]){ 1, 2, 9, 11 }, (float *)x);
		set_f32(&o[k].in[1], 2, (int64_t[]){ 2, 4 }, (float *)rois);
		set_val(&o[k].in[2], ERT_DTYPE_INT64, 1, (int64_t[]){ 2 }, batch);
	}
	REQUIRE(run_roi(&o[0]) == ERT_OK);
	REQUIRE(one_run(&o[1]) == ERT_OK);
	REQUIRE(o[0].out[0].numel == o[1].out[0].numel);
	for (int64_t i = 0; i < o[0].out[0].numel; i++) {
		float a = ((const float *)o[0].out[0].data)[i];
		float b = ((const float *)o[1].out[0].data)[i];

		if (isnan(a) || isnan(b))
			CHECK(isnan(a) && isnan(b));
		else
			CHECK_NEAR(a, b, max ? 0.0 : 1e-5 * (fabs(a) > 1 ? fabs(a) : 1));
	}
	one_fini(&o[0]);
	one_fini(&o[1]);
}

ERT_TEST(separable_bins_match_the_samples)
{
	static const float roi_sets[][8] = {
		{ 0.3f, 0.7f, 9.1f, 6.2f, 2.0f, 1.0f, 3.5f, 8.0f },
		{ -40.0f, -25.0f, 900.0f, 700.0f, 5.5f, 5.5f, 5.5f, 5.5f },
	};
	float x[2 * 9 * 11];
	uint32_t st = 11;

	for (int max = 0; max < 2; max++)
		for (int nan = 0; nan < 2; nan++) {
			for (int i = 0; i < 2 * 9 * 11; i++)
				x[i] = frand_r(&st) * 4.0f - 2.0f;
			if (nan)
				x[3 * 11 + 4] = NAN;
			for (int rs = 0; rs < 2; rs++)
				for (int sr = 0; sr <= 3; sr += 3)
					for (int hp = 0; hp < 2; hp++)
						check_paths(ert_test_failed_, x, roi_sets[rs], sr, hp,
						    max);
		}
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(separable_bins_match_the_samples), ERT_TEST_ENTRY(avg_over_constant_and_ramp), ERT_TEST_ENTRY(bad_batch_index))
