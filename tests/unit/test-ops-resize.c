/* SPDX-License-Identifier: MIT */
/* Resize family kernels through ert_cpu_eval_node() on one-node graphs. */
#include <stdlib.h>

#include "cpu/cpu-impl.h"
#include "ert-test.h"

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

static ert_status one_run(struct one *o)
{
	return ert_cpu_eval_node(o->g, o->n, o->inp, o->n_in, o->out, o->n_out, &o->err);
}

static void one_fini(struct one *o)
{
	for (uint32_t i = 0; i < o->n_out; i++)
		free(o->out[i].data);
	ert_graph_destroy(o->g);
}



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

ERT_TEST_MAIN(ERT_TEST_ENTRY(nearest_upsample_scales), ERT_TEST_ENTRY(linear_sizes_align_corners),
	      ERT_TEST_ENTRY(upsample_opset7_attribute), ERT_TEST_ENTRY(resize_errors))
