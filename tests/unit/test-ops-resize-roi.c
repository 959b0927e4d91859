/* SPDX-License-Identifier: MIT */
/*
 * RoiAlign, called directly: the op is not in ert-ops.def yet, so the node
 * carries a stand-in op type.
 */
#include <stdlib.h>

#include "cpu/ops/resize-kernels.h"
#include "ert-test.h"
#include "ops/resize-roi.h"

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

static ert_status run_roi(struct one *o)
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

	st = ert_infer_roi_align(&ic);
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
	return ert_cpu_roi_align(NULL, &x, &o->err);
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
