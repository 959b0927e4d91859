/* SPDX-License-Identifier: MIT */
/*
 * Norm, reduce, quant and resize kernels on a 4-thread CPU backend must give
 * bit-identical results to the single-threaded ert_cpu_eval_node(): each output
 * element is computed by exactly one task in a fixed order, so any difference
 * is a race or a split that lost or repeated work. Inputs are large enough for
 * ert_parallel_for to split them.
 *
 * The kernels that may run in place (Y written over X: softmax family, the
 * normalisations except LRN, CumSum) are also checked with Y aliasing X.
 */
#include <stdlib.h>

#include "ert-op-test.h"
#include "ert-test.h"

ert_status ert_cpu_backend_create(const ert_config *cfg, struct ert_backend **out,
				  struct ert_err *err);

static uint32_t rng = 12345;

/* Uniform in [-4, 4). */
static float frand(void)
{
	return (float)(lcg_next(&rng) >> 8) / 16777216.0f * 8.0f - 4.0f;
}

/* Input @i: random values of @dims, or a copy of @data when given. */
static void tc_input(struct one *t, uint32_t i, ert_dtype dt, int32_t rank, const int64_t *dims,
		     const void *data)
{
	struct ert_value *v = one_in_alloc(t, i, dt, rank, dims);

	if (data)
		memcpy(v->data, data, v->nbytes);
	else if (dt == ERT_DTYPE_FLOAT32)
		for (int64_t k = 0; k < v->numel; k++)
			((float *)v->data)[k] = frand();
	else
		for (size_t k = 0; k < v->nbytes; k++)
			((uint8_t *)v->data)[k] = (uint8_t)(frand() * 64.0f);
}

/* Infer, allocate and compute on @be the way a session does; @inplace: Y over X. */
static ert_status run_on(struct ert_backend *be, struct one *t, struct ert_value *out,
			 bool inplace, struct ert_err *err)
{
	struct ert_value *outp[ONE_MAX_IO], *inp[ONE_MAX_IO], alias;
	bool in_const[ONE_MAX_IO];
	struct ert_exec x;
	ert_status st;

	for (uint32_t i = 0; i < t->n_out; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		outp[i] = &out[i];
	}
	for (uint32_t i = 0; i < t->n_in; i++) {
		inp[i] = (struct ert_value *)t->inp[i];
		in_const[i] = true;
	}
	struct ert_infer_ctx ic = {
		.graph = t->g, .node = t->n, .in = t->inp, .out = outp,
		.n_in = t->n_in, .n_out = t->n_out, .err = err,
	};

	st = ert_op_infer(t->n->op)(&ic);
	if (st != ERT_OK)
		return st;
	for (uint32_t i = 0; i < t->n_out; i++) {
		ert_value_finish(&out[i]);
		out[i].data = calloc(1, out[i].nbytes + 1);
	}
	if (inplace) {
		/* Y takes over a private copy of X, which the kernel then reads as X. */
		memcpy(out[0].data, t->in[0].data, out[0].nbytes);
		alias = t->in[0];
		alias.data = out[0].data;
		inp[0] = &alias;
	}
	memset(&x, 0, sizeof(x));
	x.graph = t->g;
	x.node = t->n;
	x.in = inp;
	x.out = outp;
	x.n_in = t->n_in;
	x.n_out = t->n_out;
	x.in_const = in_const;
	if (!ert_backend_supports_op(be, &x))
		return ERT_STATUS_UNSUPPORTED;
	x.workspace_size = ert_backend_workspace_size(be, &x);
	x.workspace = malloc(x.workspace_size + 1);
	st = ert_backend_prepare(be, &x, err);
	if (st == ERT_OK)
		st = ert_backend_compute(be, &x, err);
	ert_backend_release(be, &x);
	free(x.workspace);
	return st;
}

/* Serial and 4-thread results of @t (in place: Y over X) must match byte for byte. */
static int same_ways(struct ert_backend *be, struct one *t, bool inplace)
{
	struct ert_value serial[3], par[3];
	struct ert_err err;
	int ok = 1;

	if (ert_cpu_eval_node(t->g, t->n, t->inp, t->n_in, serial, t->n_out, &err) != ERT_OK) {
		fprintf(stderr, "serial %s: %s\n", ert_op_name(t->n->op), err.msg);
		return 0;
	}
	if (run_on(be, t, par, inplace, &err) != ERT_OK) {
		fprintf(stderr, "threads %s: %s\n", ert_op_name(t->n->op), err.msg);
		ok = 0;
	}
	for (uint32_t i = 0; ok && i < t->n_out; i++)
		if (serial[i].nbytes != par[i].nbytes ||
		    memcmp(serial[i].data, par[i].data, serial[i].nbytes) != 0) {
			fprintf(stderr, "%s: output %u differs between 1 and 4 threads%s\n",
				ert_op_name(t->n->op), i, inplace ? " in place" : "");
			ok = 0;
		}
	for (uint32_t i = 0; i < t->n_out; i++) {
		free(serial[i].data);
		free(par[i].data);
	}
	return ok;
}

static int same_both_ways(struct ert_backend *be, struct one *t)
{
	return same_ways(be, t, false);
}

static int same_in_place(struct ert_backend *be, struct one *t)
{
	return same_ways(be, t, false) && same_ways(be, t, true);
}

static struct ert_backend *make_backend(void)
{
	ert_config cfg;
	struct ert_backend *be = NULL;
	struct ert_err err;

	ert_config_init(&cfg);
	cfg.num_threads = 4;
	if (ert_cpu_backend_create(&cfg, &be, &err) != ERT_OK)
		return NULL;
	return be;
}

ERT_TEST(norm_family)
{
	struct ert_backend *be = make_backend();
	struct one t;

	REQUIRE(be);
	one_init(&t, ERT_OP_Softmax, 13, 1, 1);
	ert_node_set_attr_int(t.g, t.n, "axis", 1);
	tc_input(&t, 0, ERT_DTYPE_FLOAT32, 3, (int64_t[]){ 8, 300, 40 }, NULL);
	CHECK(same_in_place(be, &t));
	one_fini(&t);

	one_init(&t, ERT_OP_LogSoftmax, 13, 1, 1);
	tc_input(&t, 0, ERT_DTYPE_FLOAT32, 2, (int64_t[]){ 300, 700 }, NULL);
	CHECK(same_in_place(be, &t));
	one_fini(&t);

	one_init(&t, ERT_OP_Hardmax, 13, 1, 1);
	tc_input(&t, 0, ERT_DTYPE_FLOAT32, 2, (int64_t[]){ 300, 70 }, NULL);
	CHECK(same_in_place(be, &t));
	one_fini(&t);

	one_init(&t, ERT_OP_LayerNormalization, 17, 3, 3);
	tc_input(&t, 0, ERT_DTYPE_FLOAT32, 2, (int64_t[]){ 512, 384 }, NULL);
	tc_input(&t, 1, ERT_DTYPE_FLOAT32, 1, (int64_t[]){ 384 }, NULL);
	tc_input(&t, 2, ERT_DTYPE_FLOAT32, 1, (int64_t[]){ 384 }, NULL);
	CHECK(same_in_place(be, &t));
	one_fini(&t);

	one_init(&t, ERT_OP_BatchNormalization, 15, 5, 1);
	tc_input(&t, 0, ERT_DTYPE_FLOAT32, 4, (int64_t[]){ 4, 16, 64, 64 }, NULL);
	for (uint32_t i = 1; i < 5; i++)
		tc_input(&t, i, ERT_DTYPE_FLOAT32, 1, (int64_t[]){ 16 }, NULL);
	for (int k = 0; k < 16; k++)
		((float *)t.in[4].data)[k] = 1.0f + (float)k; /* variance > 0 */
	CHECK(same_both_ways(be, &t));
	one_fini(&t);

	one_init(&t, ERT_OP_GroupNormalization, 21, 3, 1);
	ert_node_set_attr_int(t.g, t.n, "num_groups", 4);
	tc_input(&t, 0, ERT_DTYPE_FLOAT32, 4, (int64_t[]){ 3, 16, 40, 40 }, NULL);
	tc_input(&t, 1, ERT_DTYPE_FLOAT32, 1, (int64_t[]){ 16 }, NULL);
	tc_input(&t, 2, ERT_DTYPE_FLOAT32, 1, (int64_t[]){ 16 }, NULL);
	CHECK(same_in_place(be, &t));
	one_fini(&t);

	one_init(&t, ERT_OP_LRN, 13, 1, 1);
	ert_node_set_attr_int(t.g, t.n, "size", 5);
	tc_input(&t, 0, ERT_DTYPE_FLOAT32, 4, (int64_t[]){ 2, 12, 50, 50 }, NULL);
	CHECK(same_both_ways(be, &t));
	one_fini(&t);
	ert_backend_destroy(be);
}

ERT_TEST(reduce_family)
{
	struct ert_backend *be = make_backend();
	struct one t;
	int64_t k = 7;

	REQUIRE(be);
	one_init(&t, ERT_OP_ReduceMean, 13, 1, 1);
	ert_node_set_attr_ints(t.g, t.n, "axes", (int64_t[]){ 1 }, 1);
	tc_input(&t, 0, ERT_DTYPE_FLOAT32, 3, (int64_t[]){ 16, 300, 50 }, NULL);
	CHECK(same_both_ways(be, &t));
	one_fini(&t);

	one_init(&t, ERT_OP_ReduceLogSumExp, 13, 1, 1);
	ert_node_set_attr_ints(t.g, t.n, "axes", (int64_t[]){ 0, 2 }, 2);
	tc_input(&t, 0, ERT_DTYPE_FLOAT32, 3, (int64_t[]){ 16, 300, 50 }, NULL);
	CHECK(same_both_ways(be, &t));
	one_fini(&t);

	one_init(&t, ERT_OP_ArgMax, 13, 1, 1);
	ert_node_set_attr_int(t.g, t.n, "axis", 1);
	tc_input(&t, 0, ERT_DTYPE_FLOAT32, 3, (int64_t[]){ 16, 300, 50 }, NULL);
	CHECK(same_both_ways(be, &t));
	one_fini(&t);

	one_init(&t, ERT_OP_CumSum, 14, 2, 1);
	int32_t axis = 1;
	ert_node_set_attr_int(t.g, t.n, "reverse", 1);
	tc_input(&t, 0, ERT_DTYPE_FLOAT32, 2, (int64_t[]){ 300, 500 }, NULL);
	tc_input(&t, 1, ERT_DTYPE_INT32, 0, NULL, &axis);
	CHECK(same_in_place(be, &t));
	one_fini(&t);

	one_init(&t, ERT_OP_TopK, 11, 2, 2);
	tc_input(&t, 0, ERT_DTYPE_FLOAT32, 2, (int64_t[]){ 300, 500 }, NULL);
	tc_input(&t, 1, ERT_DTYPE_INT64, 1, (int64_t[]){ 1 }, &k);
	CHECK(same_both_ways(be, &t));
	one_fini(&t);
	ert_backend_destroy(be);
}

ERT_TEST(quant_family)
{
	struct ert_backend *be = make_backend();
	struct one t;
	float s = 0.37f;
	uint8_t zp = 3;

	REQUIRE(be);
	/* odd element count: the last int4 byte is half used */
	one_init(&t, ERT_OP_QuantizeLinear, 21, 3, 1);
	tc_input(&t, 0, ERT_DTYPE_FLOAT32, 1, (int64_t[]){ 100001 }, NULL);
	tc_input(&t, 1, ERT_DTYPE_FLOAT32, 0, NULL, &s);
	tc_input(&t, 2, ERT_DTYPE_INT4, 0, NULL, &zp);
	CHECK(same_both_ways(be, &t));
	one_fini(&t);

	one_init(&t, ERT_OP_DequantizeLinear, 21, 3, 1);
	tc_input(&t, 0, ERT_DTYPE_UINT8, 1, (int64_t[]){ 300000 }, NULL);
	tc_input(&t, 1, ERT_DTYPE_FLOAT32, 0, NULL, &s);
	tc_input(&t, 2, ERT_DTYPE_UINT8, 0, NULL, &zp);
	CHECK(same_both_ways(be, &t));
	one_fini(&t);
	ert_backend_destroy(be);
}

ERT_TEST(resize_family)
{
	struct ert_backend *be = make_backend();
	struct one t;
	float up[4] = { 1, 1, 2, 2 }, down[4] = { 1, 1, 0.3f, 0.45f };
	struct ert_attr *a;

	REQUIRE(be);
	one_init(&t, ERT_OP_Resize, 13, 3, 1);
	t.inp[1] = NULL;
	a = ert_node_add_attr(t.g, t.n, "mode", ERT_ATTR_STRING);
	REQUIRE(a);
	a->s = "linear";
	a->len = 6;
	tc_input(&t, 0, ERT_DTYPE_FLOAT32, 4, (int64_t[]){ 1, 8, 100, 100 }, NULL);
	tc_input(&t, 2, ERT_DTYPE_FLOAT32, 1, (int64_t[]){ 4 }, up);
	CHECK(same_both_ways(be, &t));
	one_fini(&t);

	one_init(&t, ERT_OP_Resize, 18, 3, 1);
	t.inp[1] = NULL;
	a = ert_node_add_attr(t.g, t.n, "mode", ERT_ATTR_STRING);
	REQUIRE(a);
	a->s = "cubic";
	a->len = 5;
	ert_node_set_attr_int(t.g, t.n, "antialias", 1);
	tc_input(&t, 0, ERT_DTYPE_FLOAT32, 4, (int64_t[]){ 1, 4, 120, 90 }, NULL);
	tc_input(&t, 2, ERT_DTYPE_FLOAT32, 1, (int64_t[]){ 4 }, down);
	CHECK(same_both_ways(be, &t));
	one_fini(&t);
	ert_backend_destroy(be);
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(norm_family), ERT_TEST_ENTRY(reduce_family),
	      ERT_TEST_ENTRY(quant_family), ERT_TEST_ENTRY(resize_family))
