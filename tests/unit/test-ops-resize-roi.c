/* SPDX-License-Identifier: MIT */
/*
 * RoiAlign, called directly through its shape inference and kernel entry
 * points (the node carries a stand-in op type); the ONNX node tests run it
 * through the op tables.
 */
#include <stdlib.h>

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

ERT_TEST_MAIN(ERT_TEST_ENTRY(avg_over_constant_and_ramp), ERT_TEST_ENTRY(bad_batch_index))
