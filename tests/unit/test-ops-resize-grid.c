/* SPDX-License-Identifier: MIT */
/*
 * GridSample and AffineGrid, called directly: the ops are not in ert-ops.def
 * yet, so the node carries a stand-in op type.
 */
#include <stdlib.h>

#include "cpu/ops/resize-kernels.h"
#include "ert-test.h"
#include "ops/resize-grid.h"

struct one {
	struct ert_graph *g;
	struct ert_node *n;
	struct ert_value in[6];
	const struct ert_value *inp[6];
	struct ert_value out[3];
	uint32_t n_in, n_out;
	struct ert_err err;
};

static void one_init(struct one *o, enum ert_op op, int opset, uint32_t n_in, uint32_t n_out)
{
	int32_t ins[6], outs[3];

	memset(o, 0, sizeof(*o));
	o->g = ert_graph_create();
	for (uint32_t i = 0; i < n_in; i++) {
		char name[16];

		snprintf(name, sizeof(name), "in%u", i);
		ins[i] = ert_graph_add_tensor(o->g, name, ERT_DTYPE_FLOAT32, -1, NULL);
		o->inp[i] = &o->in[i];
	}
	for (uint32_t i = 0; i < n_out; i++) {
		char name[16];

		snprintf(name, sizeof(name), "out%u", i);
		outs[i] = ert_graph_add_tensor(o->g, name, ERT_DTYPE_FLOAT32, -1, NULL);
	}
	int32_t ni = ert_graph_add_node(o->g, op, NULL, n_in, ins, n_out, outs);

	o->n = &o->g->nodes[ni];
	o->n->opset = (uint16_t)opset;
	o->n_in = n_in;
	o->n_out = n_out;
}

static void set_val(struct ert_value *v, ert_dtype dt, int32_t rank, const int64_t *dims,
		    void *data)
{
	memset(v, 0, sizeof(*v));
	ert_value_set_shape(v, dt, rank, dims);
	ert_value_finish(v);
	v->data = data;
}

static void set_f32(struct ert_value *v, int32_t rank, const int64_t *dims, float *data)
{
	set_val(v, ERT_DTYPE_FLOAT32, rank, dims, data);
}

static void one_fini(struct one *o)
{
	for (uint32_t i = 0; i < o->n_out; i++)
		free(o->out[i].data);
	ert_graph_destroy(o->g);
}

static ert_status run_grid_op(struct one *o, bool affine)
{
	struct ert_value *outp[3], *inp[6];
	struct ert_exec x;
	ert_status st;

	for (uint32_t i = 0; i < o->n_out; i++)
		outp[i] = &o->out[i];
	for (uint32_t i = 0; i < o->n_in; i++)
		inp[i] = (struct ert_value *)o->inp[i];
	struct ert_infer_ctx ic = {
		.graph = o->g, .node = o->n, .in = o->inp, .out = outp,
		.n_in = o->n_in, .n_out = o->n_out, .err = &o->err,
	};

	st = affine ? ert_infer_affine_grid(&ic) : ert_infer_grid_sample(&ic);
	if (st != ERT_OK)
		return st;
	for (uint32_t i = 0; i < o->n_out; i++) {
		ert_value_finish(&o->out[i]);
		o->out[i].data = calloc(1, o->out[i].nbytes + 1);
	}
	memset(&x, 0, sizeof(x));
	x.graph = o->g;
	x.node = o->n;
	x.in = inp;
	x.out = outp;
	x.n_in = o->n_in;
	x.n_out = o->n_out;
	return affine ? ert_cpu_affine_grid(NULL, &x, &o->err)
		      : ert_cpu_grid_sample(NULL, &x, &o->err);
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
