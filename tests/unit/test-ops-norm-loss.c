/* SPDX-License-Identifier: MIT */
/*
 * NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss, called directly: the
 * ops are not in ert-ops.def yet, so the node carries a stand-in op type.
 */
#include <stdlib.h>

#include "cpu/ops/norm-kernels.h"
#include "ert-test.h"
#include "ops/norm-loss.h"

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

static ert_status run_loss(struct one *o, bool sce)
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

	st = sce ? ert_infer_sce_loss(&ic) : ert_infer_nll_loss(&ic);
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
	return sce ? ert_cpu_sce_loss(NULL, &x, &o->err) : ert_cpu_nll_loss(NULL, &x, &o->err);
}

static void set_reduction(struct one *o, const char *r)
{
	struct ert_attr *a = ert_node_add_attr(o->g, o->n, "reduction", ERT_ATTR_STRING);

	a->s = r;
	a->len = (uint32_t)strlen(r);
}

ERT_TEST(nll_weights_and_ignore)
{
	struct one o;
	float x[6] = { -1, -2, -3, -4, -5, -6 }, w[3] = { 1, 2, 4 };
	int64_t t[2] = { 2, 1 };

	/* mean with weights: (3*4 + 5*2) / (4 + 2) */
	one_init(&o, ERT_OP_Softmax, 13, 3, 1);
	set_f32(&o.in[0], 2, (int64_t[]){ 2, 3 }, x);
	set_val(&o.in[1], ERT_DTYPE_INT64, 1, (int64_t[]){ 2 }, t);
	set_f32(&o.in[2], 1, (int64_t[]){ 3 }, w);
	REQUIRE(run_loss(&o, false) == ERT_OK);
	CHECK_EQ_INT(o.out[0].rank, 0);
	CHECK_NEAR(*(float *)o.out[0].data, 22.0 / 6.0, 1e-6);
	one_fini(&o);

	/* ignore_index drops the second sample; reduction none keeps its 0 */
	one_init(&o, ERT_OP_Softmax, 13, 2, 1);
	ert_node_set_attr_int(o.g, o.n, "ignore_index", 1);
	set_reduction(&o, "none");
	set_f32(&o.in[0], 2, (int64_t[]){ 2, 3 }, x);
	set_val(&o.in[1], ERT_DTYPE_INT64, 1, (int64_t[]){ 2 }, t);
	REQUIRE(run_loss(&o, false) == ERT_OK);
	CHECK_EQ_INT(o.out[0].numel, 2);
	CHECK_NEAR(((float *)o.out[0].data)[0], 3, 0);
	CHECK_NEAR(((float *)o.out[0].data)[1], 0, 0);
	one_fini(&o);

	/* a label out of range is an error, not a wild read */
	t[1] = 7;
	one_init(&o, ERT_OP_Softmax, 13, 2, 1);
	set_f32(&o.in[0], 2, (int64_t[]){ 2, 3 }, x);
	set_val(&o.in[1], ERT_DTYPE_INT64, 1, (int64_t[]){ 2 }, t);
	CHECK_EQ_INT(run_loss(&o, false), ERT_STATUS_INVALID_ARGUMENT);
	CHECK(strstr(o.err.msg, "label 7") != NULL);
	one_fini(&o);
}

ERT_TEST(sce_log_prob)
{
	struct one o;
	float x[4] = { 0, 1, 2, 2 };   /* [N=1, C=2, D=2] */
	int32_t t[2] = { 1, 0 };

	one_init(&o, ERT_OP_Softmax, 13, 2, 2);
	set_reduction(&o, "sum");
	set_f32(&o.in[0], 3, (int64_t[]){ 1, 2, 2 }, x);
	set_val(&o.in[1], ERT_DTYPE_INT32, 2, (int64_t[]){ 1, 2 }, t);
	REQUIRE(run_loss(&o, true) == ERT_OK);
	const float *lp = o.out[1].data;
	double l0 = log(exp(0) + exp(2)), l1 = log(exp(1) + exp(2));

	CHECK_NEAR(lp[0], 0 - l0, 1e-6);
	CHECK_NEAR(lp[2], 2 - l0, 1e-6);
	CHECK_NEAR(lp[3], 2 - l1, 1e-6);
	CHECK_NEAR(*(float *)o.out[0].data, -(2 - l0) - (1 - l1), 1e-5);
	one_fini(&o);
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(nll_weights_and_ignore), ERT_TEST_ENTRY(sce_log_prob))
