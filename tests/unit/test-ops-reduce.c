/* SPDX-License-Identifier: MIT */
/* Reduce family kernels through ert_cpu_eval_node() on one-node graphs. */
#include <stdlib.h>

#include "ert-op-test.h"
#include "ert-test.h"

ERT_TEST(reduce_mean_attr_axes)
{
	struct one o;
	float x[12];

	for (int i = 0; i < 12; i++)
		x[i] = (float)i;
	/* [2, 3, 2], axes {0, 2}: noncontiguous reduced axes */
	one_init(&o, ERT_OP_ReduceMean, 13, 1, 1);
	ert_node_set_attr_ints(o.g, o.n, "axes", (int64_t[]){ 0, -1 }, 2);
	set_f32(&o.in[0], 3, (int64_t[]){ 2, 3, 2 }, x);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK_EQ_INT(o.out[0].rank, 3);
	CHECK_EQ_INT(o.out[0].dims[0], 1);
	CHECK_EQ_INT(o.out[0].dims[1], 3);
	const float *y = o.out[0].data;

	/* x[i][j][k] = 6i + 2j + k; column j: (8j + 14) / 4 */
	CHECK_NEAR(y[0], 3.5, 1e-6);
	CHECK_NEAR(y[2], 7.5, 1e-6);
	one_fini(&o);
}

ERT_TEST(reduce_sum_axes_input_and_noop)
{
	struct one o;
	float x[6] = { 1, 2, 3, 4, 5, 6 };
	int64_t ax[1] = { 1 };

	one_init(&o, ERT_OP_ReduceSum, 13, 2, 1);
	ert_node_set_attr_int(o.g, o.n, "keepdims", 0);
	set_f32(&o.in[0], 2, (int64_t[]){ 2, 3 }, x);
	set_val(&o.in[1], ERT_DTYPE_INT64, 1, (int64_t[]){ 1 }, ax);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK_EQ_INT(o.out[0].rank, 1);
	CHECK_NEAR(((float *)o.out[0].data)[1], 15, 0);
	one_fini(&o);

	/* empty axes + noop_with_empty_axes: identity */
	one_init(&o, ERT_OP_ReduceSum, 13, 2, 1);
	ert_node_set_attr_int(o.g, o.n, "noop_with_empty_axes", 1);
	set_f32(&o.in[0], 2, (int64_t[]){ 2, 3 }, x);
	set_val(&o.in[1], ERT_DTYPE_INT64, 1, (int64_t[]){ 0 }, ax);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK_EQ_INT(o.out[0].rank, 2);
	CHECK_NEAR(((float *)o.out[0].data)[5], 6, 0);
	one_fini(&o);

	/* empty axes without noop: everything */
	one_init(&o, ERT_OP_ReduceSum, 13, 2, 1);
	set_f32(&o.in[0], 2, (int64_t[]){ 2, 3 }, x);
	set_val(&o.in[1], ERT_DTYPE_INT64, 1, (int64_t[]){ 0 }, ax);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK_EQ_INT(o.out[0].numel, 1);
	CHECK_NEAR(((float *)o.out[0].data)[0], 21, 0);
	one_fini(&o);
}

ERT_TEST(reduce_empty_set_and_ints)
{
	struct one o;
	float x[1] = { 0 };
	int32_t xi[4] = { 5, -7, 3, 2 };

	one_init(&o, ERT_OP_ReduceMax, 18, 1, 1);
	ert_node_set_attr_ints(o.g, o.n, "axes", (int64_t[]){ 1 }, 1);
	set_f32(&o.in[0], 2, (int64_t[]){ 2, 0 }, x);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK_EQ_INT(o.out[0].numel, 2);
	CHECK(isinf(((float *)o.out[0].data)[0]) && ((float *)o.out[0].data)[0] < 0);
	one_fini(&o);

	one_init(&o, ERT_OP_ReduceProd, 13, 1, 1);
	ert_node_set_attr_int(o.g, o.n, "keepdims", 0);
	set_val(&o.in[0], ERT_DTYPE_INT32, 1, (int64_t[]){ 4 }, xi);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK_EQ_INT(o.out[0].rank, 0);
	CHECK_EQ_INT(((int32_t *)o.out[0].data)[0], -210);
	one_fini(&o);

	one_init(&o, ERT_OP_ReduceLogSumExp, 13, 1, 1);
	float big[2] = { 1000, 1000 };
	set_f32(&o.in[0], 1, (int64_t[]){ 2 }, big);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK_NEAR(((float *)o.out[0].data)[0], 1000 + log(2.0), 1e-3);
	one_fini(&o);
}

ERT_TEST(argmax_select_last)
{
	struct one o;
	float x[6] = { 1, 5, 5, 9, 2, 9 };

	one_init(&o, ERT_OP_ArgMax, 13, 1, 1);
	ert_node_set_attr_int(o.g, o.n, "axis", 1);
	set_f32(&o.in[0], 2, (int64_t[]){ 2, 3 }, x);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK_EQ_INT(o.out[0].dtype, ERT_DTYPE_INT64);
	CHECK_EQ_INT(((int64_t *)o.out[0].data)[0], 1);
	CHECK_EQ_INT(((int64_t *)o.out[0].data)[1], 0);
	one_fini(&o);

	one_init(&o, ERT_OP_ArgMin, 13, 1, 1);
	ert_node_set_attr_int(o.g, o.n, "axis", 0);
	ert_node_set_attr_int(o.g, o.n, "keepdims", 0);
	ert_node_set_attr_int(o.g, o.n, "select_last_index", 1);
	float x2[6] = { 1, 5, 1, 9, 2, 5 };
	set_f32(&o.in[0], 2, (int64_t[]){ 3, 2 }, x2);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK_EQ_INT(o.out[0].rank, 1);
	CHECK_EQ_INT(((int64_t *)o.out[0].data)[0], 1);
	CHECK_EQ_INT(((int64_t *)o.out[0].data)[1], 2);
	one_fini(&o);
}

ERT_TEST(cumsum_exclusive_reverse)
{
	struct one o;
	double x[4] = { 1, 2, 3, 4 };
	int32_t axis = 0;

	one_init(&o, ERT_OP_CumSum, 14, 2, 1);
	ert_node_set_attr_int(o.g, o.n, "exclusive", 1);
	ert_node_set_attr_int(o.g, o.n, "reverse", 1);
	set_val(&o.in[0], ERT_DTYPE_FLOAT64, 1, (int64_t[]){ 4 }, x);
	set_val(&o.in[1], ERT_DTYPE_INT32, 0, NULL, &axis);
	REQUIRE(one_run(&o) == ERT_OK);
	const double *y = o.out[0].data;

	CHECK(y[0] == 9 && y[1] == 7 && y[2] == 4 && y[3] == 0);
	one_fini(&o);
}

ERT_TEST(topk_ties_and_smallest)
{
	struct one o;
	float x[8] = { 3, 1, 3, 2, 0, 7, 7, 1 };
	int64_t k = 3;

	one_init(&o, ERT_OP_TopK, 11, 2, 2);
	set_f32(&o.in[0], 2, (int64_t[]){ 2, 4 }, x);
	set_val(&o.in[1], ERT_DTYPE_INT64, 1, (int64_t[]){ 1 }, &k);
	REQUIRE(one_run(&o) == ERT_OK);
	const float *v = o.out[0].data;
	const int64_t *i = o.out[1].data;

	CHECK(v[0] == 3 && v[1] == 3 && v[2] == 2);
	CHECK(i[0] == 0 && i[1] == 2 && i[2] == 3);
	CHECK(v[3] == 7 && i[3] == 1 && i[4] == 2 && i[5] == 3);
	one_fini(&o);

	one_init(&o, ERT_OP_TopK, 11, 2, 2);
	ert_node_set_attr_int(o.g, o.n, "largest", 0);
	set_f32(&o.in[0], 2, (int64_t[]){ 2, 4 }, x);
	set_val(&o.in[1], ERT_DTYPE_INT64, 1, (int64_t[]){ 1 }, &k);
	REQUIRE(one_run(&o) == ERT_OK);
	i = o.out[1].data;
	CHECK(i[0] == 1 && i[1] == 3 && i[2] == 0);
	one_fini(&o);

	k = 5;
	one_init(&o, ERT_OP_TopK, 11, 2, 2);
	set_f32(&o.in[0], 2, (int64_t[]){ 2, 4 }, x);
	set_val(&o.in[1], ERT_DTYPE_INT64, 1, (int64_t[]){ 1 }, &k);
	CHECK_EQ_INT(one_run(&o), ERT_STATUS_SHAPE);
	CHECK(strstr(o.err.msg, "TopK") != NULL);
	one_fini(&o);
}

ERT_TEST(reduce_bad_axis)
{
	struct one o;
	float x[4] = { 0 };

	one_init(&o, ERT_OP_ReduceMean, 13, 1, 1);
	ert_node_set_attr_ints(o.g, o.n, "axes", (int64_t[]){ 2 }, 1);
	set_f32(&o.in[0], 2, (int64_t[]){ 2, 2 }, x);
	CHECK_EQ_INT(one_run(&o), ERT_STATUS_SHAPE);
	CHECK(strstr(o.err.msg, "axis 2") != NULL);
	one_fini(&o);
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(reduce_mean_attr_axes), ERT_TEST_ENTRY(reduce_sum_axes_input_and_noop),
	      ERT_TEST_ENTRY(reduce_empty_set_and_ints), ERT_TEST_ENTRY(argmax_select_last),
	      ERT_TEST_ENTRY(cumsum_exclusive_reverse), ERT_TEST_ENTRY(topk_ties_and_smallest),
	      ERT_TEST_ENTRY(reduce_bad_axis))
