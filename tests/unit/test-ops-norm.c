/* SPDX-License-Identifier: MIT */
/* Norm family kernels through ert_cpu_eval_node() on one-node graphs. */
#include <stdlib.h>

#include "ert-op-test.h"
#include "ert-test.h"

ERT_TEST(softmax_last_axis)
{
	struct one o;
	float x[6] = { 1, 2, 3, 1, 1, 1 };

	one_init(&o, ERT_OP_Softmax, 13, 1, 1);
	set_f32(&o.in[0], 2, (int64_t[]){ 2, 3 }, x);
	REQUIRE(one_run(&o) == ERT_OK);
	const float *y = o.out[0].data;
	double e = exp(1) + exp(2) + exp(3);

	CHECK_NEAR(y[0], exp(1) / e, 1e-6);
	CHECK_NEAR(y[2], exp(3) / e, 1e-6);
	CHECK_NEAR(y[4], 1.0 / 3, 1e-6);
	one_fini(&o);
}

ERT_TEST(softmax_opset11_flattens_and_axis0)
{
	struct one o;
	float x[4] = { 0, 1, 2, 3 };

	/* opset 11, axis 0: the whole tensor is one row */
	one_init(&o, ERT_OP_LogSoftmax, 11, 1, 1);
	ert_node_set_attr_int(o.g, o.n, "axis", 0);
	set_f32(&o.in[0], 2, (int64_t[]){ 2, 2 }, x);
	REQUIRE(one_run(&o) == ERT_OK);
	const float *y = o.out[0].data;
	double lse = log(exp(0) + exp(1) + exp(2) + exp(3));

	CHECK_NEAR(y[0], 0 - lse, 1e-5);
	CHECK_NEAR(y[3], 3 - lse, 1e-5);
	one_fini(&o);

	/* opset 13, axis 0: columns */
	one_init(&o, ERT_OP_Softmax, 13, 1, 1);
	ert_node_set_attr_int(o.g, o.n, "axis", 0);
	set_f32(&o.in[0], 2, (int64_t[]){ 2, 2 }, x);
	REQUIRE(one_run(&o) == ERT_OK);
	y = o.out[0].data;
	CHECK_NEAR(y[0], 1.0 / (1.0 + exp(2)), 1e-6);
	CHECK_NEAR(y[0] + y[2], 1.0, 1e-6);
	one_fini(&o);
}

ERT_TEST(hardmax_first_max)
{
	struct one o;
	float x[4] = { 3, 1, 3, 2 };

	one_init(&o, ERT_OP_Hardmax, 13, 1, 1);
	set_f32(&o.in[0], 1, (int64_t[]){ 4 }, x);
	REQUIRE(one_run(&o) == ERT_OK);
	const float *y = o.out[0].data;

	CHECK(y[0] == 1 && y[1] == 0 && y[2] == 0 && y[3] == 0);
	one_fini(&o);
}

ERT_TEST(layer_norm_with_stats)
{
	struct one o;
	float x[6] = { 1, 2, 3, 4, 4, 4 }, s[3] = { 1, 2, 1 }, b[3] = { 0, 0, 1 };

	one_init(&o, ERT_OP_LayerNormalization, 17, 3, 3);
	set_f32(&o.in[0], 2, (int64_t[]){ 2, 3 }, x);
	set_f32(&o.in[1], 1, (int64_t[]){ 3 }, s);
	set_f32(&o.in[2], 1, (int64_t[]){ 3 }, b);
	REQUIRE(one_run(&o) == ERT_OK);
	const float *y = o.out[0].data, *m = o.out[1].data, *inv = o.out[2].data;
	double is = 1.0 / sqrt(2.0 / 3 + 1e-5);

	CHECK_EQ_INT(o.out[1].rank, 2);
	CHECK_EQ_INT(o.out[1].dims[1], 1);
	CHECK_NEAR(m[0], 2, 1e-6);
	CHECK_NEAR(inv[0], is, 1e-4);
	CHECK_NEAR(y[0], -is, 1e-4);
	CHECK_NEAR(y[1], 0, 1e-6);
	CHECK_NEAR(y[2], is + 1, 1e-4);
	CHECK_NEAR(y[3], 0, 1e-6);
	CHECK_NEAR(y[5], 1, 1e-6);
	one_fini(&o);
}

ERT_TEST(batch_and_instance_norm)
{
	struct one o;
	float x[8] = { 1, 2, 3, 4, 10, 10, 10, 10 };
	float s[2] = { 2, 1 }, b[2] = { 0, 5 }, mean[2] = { 2, 10 }, var[2] = { 4, 1 };

	one_init(&o, ERT_OP_BatchNormalization, 15, 5, 1);
	set_f32(&o.in[0], 4, (int64_t[]){ 1, 2, 2, 2 }, x);
	set_f32(&o.in[1], 1, (int64_t[]){ 2 }, s);
	set_f32(&o.in[2], 1, (int64_t[]){ 2 }, b);
	set_f32(&o.in[3], 1, (int64_t[]){ 2 }, mean);
	set_f32(&o.in[4], 1, (int64_t[]){ 2 }, var);
	ert_node_set_attr_float(o.g, o.n, "epsilon", 0.0f);
	REQUIRE(one_run(&o) == ERT_OK);
	const float *y = o.out[0].data;

	CHECK_NEAR(y[0], (1 - 2) / 2.0 * 2, 1e-6);
	CHECK_NEAR(y[3], (4 - 2) / 2.0 * 2, 1e-6);
	CHECK_NEAR(y[5], 5, 1e-6);
	one_fini(&o);

	one_init(&o, ERT_OP_InstanceNormalization, 6, 3, 1);
	set_f32(&o.in[0], 4, (int64_t[]){ 1, 2, 2, 2 }, x);
	set_f32(&o.in[1], 1, (int64_t[]){ 2 }, s);
	set_f32(&o.in[2], 1, (int64_t[]){ 2 }, b);
	REQUIRE(one_run(&o) == ERT_OK);
	y = o.out[0].data;
	CHECK_NEAR(y[0], -1.5 / sqrt(1.25 + 1e-5) * 2, 1e-4);
	CHECK_NEAR(y[7], 5, 1e-6);
	one_fini(&o);
}

ERT_TEST(bad_input_reports)
{
	struct one o;
	float x[4] = { 0 }, s[3] = { 0 };

	one_init(&o, ERT_OP_LayerNormalization, 17, 2, 1);
	set_f32(&o.in[0], 2, (int64_t[]){ 2, 2 }, x);
	set_f32(&o.in[1], 1, (int64_t[]){ 3 }, s);
	CHECK_EQ_INT(one_run(&o), ERT_STATUS_SHAPE);
	CHECK(strstr(o.err.msg, "Scale") != NULL);
	one_fini(&o);

	one_init(&o, ERT_OP_Softmax, 13, 1, 1);
	set_f32(&o.in[0], 2, (int64_t[]){ 2, 2 }, x);
	o.in[0].dtype = ERT_DTYPE_INT32;
	CHECK_EQ_INT(one_run(&o), ERT_STATUS_DTYPE);
	one_fini(&o);
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(softmax_last_axis), ERT_TEST_ENTRY(softmax_opset11_flattens_and_axis0),
	      ERT_TEST_ENTRY(hardmax_first_max), ERT_TEST_ENTRY(layer_norm_with_stats),
	      ERT_TEST_ENTRY(batch_and_instance_norm), ERT_TEST_ENTRY(bad_input_reports))
