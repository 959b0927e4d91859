/* SPDX-License-Identifier: MIT */
/*
 * GridSample and AffineGrid, called directly through their shape inference and
 * kernel entry points (the node carries a stand-in op type); the ONNX node
 * tests run them through the op tables.
 */
#include <stdlib.h>

#include "cpu/ops/resize-kernels.h"
#include "ert-op-test.h"
#include "ert-test.h"
#include "ops/resize-grid.h"

static ert_status run_grid_op(struct one *o, bool affine)
{
	if (affine)
		return one_run_kernel(o, ert_infer_affine_grid, ert_cpu_affine_grid, NULL);
	return one_run_kernel(o, ert_infer_grid_sample, ert_cpu_grid_sample, NULL);
}

static ert_status run_grid(struct one *o)
{
	return run_grid_op(o, false);
}

static void set_str(struct one *o, const char *name, const char *v)
{
	struct ert_attr *a = ert_node_add_attr(o->g, o->n, name, ERT_ATTR_STRING);

	a->s = v;
	a->len = (uint32_t)strlen(v);
}

ERT_TEST(bilinear_and_padding)
{
	struct one o;
	float x[4] = { 1, 2, 3, 4 };
	/* (x, y) pairs: centre, top-left corner, far outside */
	float grid[6] = { 0, 0, -1, -1, 5, 0 };

	one_init(&o, ERT_OP_Softmax, 16, 2, 1);
	ert_node_set_attr_int(o.g, o.n, "align_corners", 1);
	set_f32(&o.in[0], 4, (int64_t[]){ 1, 1, 2, 2 }, x);
	set_f32(&o.in[1], 4, (int64_t[]){ 1, 1, 3, 2 }, grid);
	REQUIRE(run_grid(&o) == ERT_OK);
	const float *y = o.out[0].data;

	CHECK_EQ_INT(o.out[0].dims[3], 3);
	CHECK_NEAR(y[0], 2.5, 1e-6);
	CHECK_NEAR(y[1], 1, 1e-6);
	CHECK_NEAR(y[2], 0, 1e-6); /* zeros padding */
	one_fini(&o);

	one_init(&o, ERT_OP_Softmax, 16, 2, 1);
	ert_node_set_attr_int(o.g, o.n, "align_corners", 1);
	set_str(&o, "padding_mode", "border");
	set_f32(&o.in[0], 4, (int64_t[]){ 1, 1, 2, 2 }, x);
	set_f32(&o.in[1], 4, (int64_t[]){ 1, 1, 3, 2 }, grid);
	REQUIRE(run_grid(&o) == ERT_OK);
	y = o.out[0].data;
	CHECK_NEAR(y[2], 3, 1e-6); /* x clamped to the right column (2, 4), y halfway */
	one_fini(&o);
}

ERT_TEST(nearest_and_errors)
{
	struct one o;
	float x[4] = { 1, 2, 3, 4 }, grid[2] = { 0.9f, -0.9f };

	one_init(&o, ERT_OP_Softmax, 20, 2, 1);
	set_str(&o, "mode", "nearest");
	set_f32(&o.in[0], 4, (int64_t[]){ 1, 1, 2, 2 }, x);
	set_f32(&o.in[1], 4, (int64_t[]){ 1, 1, 1, 2 }, grid);
	REQUIRE(run_grid(&o) == ERT_OK);
	CHECK_NEAR(*(float *)o.out[0].data, 2, 0);
	one_fini(&o);

	one_init(&o, ERT_OP_Softmax, 20, 2, 1);
	set_f32(&o.in[0], 4, (int64_t[]){ 1, 1, 2, 2 }, x);
	set_f32(&o.in[1], 4, (int64_t[]){ 1, 1, 2, 1 }, grid);
	CHECK_EQ_INT(run_grid(&o), ERT_STATUS_SHAPE);
	one_fini(&o);

	one_init(&o, ERT_OP_Softmax, 20, 2, 1);
	set_str(&o, "padding_mode", "wrap");
	set_f32(&o.in[0], 4, (int64_t[]){ 1, 1, 2, 2 }, x);
	set_f32(&o.in[1], 4, (int64_t[]){ 1, 1, 1, 2 }, grid);
	CHECK_EQ_INT(run_grid(&o), ERT_STATUS_UNSUPPORTED);
	CHECK(strstr(o.err.msg, "padding_mode") != NULL);
	one_fini(&o);
}

ERT_TEST(affine_grid_identity)
{
	struct one o;
	/* identity plus a shift of x by 0.5 */
	float theta[6] = { 1, 0, 0.5f, 0, 1, 0 };
	int64_t size[4] = { 1, 3, 2, 4 };

	one_init(&o, ERT_OP_Softmax, 20, 2, 1);
	set_f32(&o.in[0], 3, (int64_t[]){ 1, 2, 3 }, theta);
	set_val(&o.in[1], ERT_DTYPE_INT64, 1, (int64_t[]){ 4 }, size);
	REQUIRE(run_grid_op(&o, true) == ERT_OK);
	const float *g = o.out[0].data;

	CHECK_EQ_INT(o.out[0].rank, 4);
	CHECK_EQ_INT(o.out[0].dims[1], 2);
	CHECK_EQ_INT(o.out[0].dims[2], 4);
	CHECK_EQ_INT(o.out[0].dims[3], 2);
	/* pixel centres: x in {-0.75, -0.25, 0.25, 0.75}, y in {-0.5, 0.5} */
	CHECK_NEAR(g[0], -0.75 + 0.5, 1e-6);
	CHECK_NEAR(g[1], -0.5, 1e-6);
	CHECK_NEAR(g[7 * 2], 0.75 + 0.5, 1e-6);
	CHECK_NEAR(g[7 * 2 + 1], 0.5, 1e-6);
	one_fini(&o);

	/* size disagreeing with theta's N */
	size[0] = 2;
	one_init(&o, ERT_OP_Softmax, 20, 2, 1);
	set_f32(&o.in[0], 3, (int64_t[]){ 1, 2, 3 }, theta);
	set_val(&o.in[1], ERT_DTYPE_INT64, 1, (int64_t[]){ 4 }, size);
	CHECK_EQ_INT(run_grid_op(&o, true), ERT_STATUS_SHAPE);
	one_fini(&o);
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(bilinear_and_padding), ERT_TEST_ENTRY(nearest_and_errors),
	      ERT_TEST_ENTRY(affine_grid_identity))
