/* SPDX-License-Identifier: MIT */
/* Sessions through the public API: planning, memory plan, resize, callbacks, errors. */
#include <stdlib.h>

#include "edgert.h"
#include "ert-graph.h"
#include "ert-test-model.h"
#include "ert-test.h"

static int32_t const_i64(struct ert_graph *g, const char *name, const int64_t *v, int64_t n)
{
	int32_t t = ert_graph_add_tensor(g, name, ERT_DTYPE_INT64, 1, &n);
	int64_t *data = malloc((size_t)n * sizeof(*data));

	memcpy(data, v, (size_t)n * sizeof(*data));
	ert_graph_set_const(g, t, data, (size_t)n * sizeof(*data), true);
	return t;
}

/* x[B,4] -> Relu -> Add(bias[4]) -> Reshape([-1, 2]) -> y */
static ert_model *small_model(int64_t batch)
{
	struct ert_graph *g = ert_graph_create();
	int64_t dims[2] = { batch, 4 }, four = 4;
	int32_t x, r, b, a, s, y;
	float *bias = malloc(4 * sizeof(float));

	g->opset = 17;
	x = ert_graph_add_tensor(g, "x", ERT_DTYPE_FLOAT32, 2, dims);
	if (batch < 0)
		g->tensors[x].dim_names[0] = ert_graph_strdup(g, "batch");
	r = ert_graph_add_tensor(g, "r", ERT_DTYPE_FLOAT32, -1, NULL);
	b = ert_graph_add_tensor(g, "bias", ERT_DTYPE_FLOAT32, 1, &four);
	for (int i = 0; i < 4; i++)
		bias[i] = (float)i;
	ert_graph_set_const(g, b, bias, 4 * sizeof(float), true);
	a = ert_graph_add_tensor(g, "a", ERT_DTYPE_FLOAT32, -1, NULL);
	s = const_i64(g, "shape", (int64_t[]){ -1, 2 }, 2);
	y = ert_graph_add_tensor(g, "y", ERT_DTYPE_FLOAT32, -1, NULL);
	ert_graph_add_input(g, x);
	ert_graph_add_node(g, ERT_OP_Relu, "relu", 1, &x, 1, &r);
	ert_graph_add_node(g, ERT_OP_Add, "add", 2, (int32_t[]){ r, b }, 1, &a);
	ert_graph_add_node(g, ERT_OP_Reshape, "reshape", 2, (int32_t[]){ a, s }, 1, &y);
	ert_graph_add_output(g, y);
	return model_from_graph(g);
}

static void fill_input(ert_session *s, int64_t batch)
{
	float *x = ert_tensor_data(ert_session_get_input(s, 0));

	for (int64_t i = 0; i < batch * 4; i++)
		x[i] = (float)(i % 3) - 1.0f; /* -1, 0, 1, ... */
}

static int check_output(ert_session *s, int64_t batch)
{
	const ert_tensor *y = ert_session_get_output(s, 0);
	const float *out = ert_tensor_data(y);

	if (ert_tensor_rank(y) != 2 || ert_tensor_dim(y, 0) != batch * 2 || ert_tensor_dim(y, 1) != 2)
		return 0;
	for (int64_t i = 0; i < batch * 4; i++) {
		float x = (float)(i % 3) - 1.0f;
		float want = (x > 0 ? x : 0) + (float)(i % 4);

		if (out[i] != want)
			return 0;
	}
	return 1;
}

ERT_TEST(run_small_model)
{
	ert_model *m = small_model(3);
	ert_session *s = NULL;

	REQUIRE(m);
	CHECK_EQ_INT(ert_model_input_count(m), 1);
	CHECK(strcmp(ert_model_output_name(m, 0), "y") == 0);
	CHECK_EQ_INT(ert_session_create(m, NULL, &s), ERT_OK);
	REQUIRE(s);
	fill_input(s, 3);
	CHECK_EQ_INT(ert_session_run(s), ERT_OK);
	CHECK(check_output(s, 3));
	/* a second run gives the same answer */
	CHECK_EQ_INT(ert_session_run(s), ERT_OK);
	CHECK(check_output(s, 3));
	CHECK(ert_session_peak_bytes(s) > 0);
	ert_session_destroy(s);
	ert_model_unref(m);
}

ERT_TEST(resize_and_plan_cache)
{
	ert_model *m = small_model(-1);
	ert_session *s = NULL;

	REQUIRE(m);
	CHECK_EQ_INT(ert_session_create(m, NULL, &s), ERT_OK);
	REQUIRE(s);
	for (int round = 0; round < 3; round++) {
		for (int64_t batch = 1; batch <= 5; batch += 2) {
			int64_t dims[2] = { batch, 4 };

			CHECK_EQ_INT(ert_session_resize_input(s, 0, 2, dims), ERT_OK);
			fill_input(s, batch);
			CHECK_EQ_INT(ert_session_run(s), ERT_OK);
			CHECK(check_output(s, batch));
		}
	}
	/* the fixed dimension cannot change, nor the rank */
	CHECK_EQ_INT(ert_session_resize_input(s, 0, 2, (int64_t[]){ 2, 5 }), ERT_STATUS_SHAPE);
	CHECK(strstr(ert_session_error(s), "must be 4") != NULL);
	CHECK_EQ_INT(ert_session_resize_input(s, 0, 1, (int64_t[]){ 2 }), ERT_STATUS_SHAPE);
	CHECK_EQ_INT(ert_session_resize_input(s, 3, 1, (int64_t[]){ 2 }), ERT_STATUS_NOT_FOUND);
	ert_session_destroy(s);
	ert_model_unref(m);
}

/* A chain of n Relu over a [1, 1024] float tensor. */
static ert_model *relu_chain(int n)
{
	struct ert_graph *g = ert_graph_create();
	int64_t dims[2] = { 1, 1024 };
	int32_t prev = ert_graph_add_tensor(g, "x", ERT_DTYPE_FLOAT32, 2, dims);

	g->opset = 17;
	ert_graph_add_input(g, prev);
	for (int i = 0; i < n; i++) {
		char name[32];
		int32_t t;

		snprintf(name, sizeof(name), "t%d", i);
		t = ert_graph_add_tensor(g, name, ERT_DTYPE_FLOAT32, -1, NULL);
		ert_graph_add_node(g, i % 2 ? ERT_OP_Relu : ERT_OP_Neg, NULL, 1, &prev, 1, &t);
		prev = t;
	}
	ert_graph_add_output(g, prev);
	return model_from_graph(g);
}

ERT_TEST(memory_plan_reuses_buffers)
{
	ert_model *m = relu_chain(16);
	ert_session *s = NULL;

	REQUIRE(m);
	CHECK_EQ_INT(ert_session_create(m, NULL, &s), ERT_OK);
	REQUIRE(s);
	/* 16 intermediates of 4 KiB each, but at most two are ever alive */
	size_t peak = ert_session_peak_bytes(s);

	CHECK(peak >= 4096 * 2);
	CHECK(peak <= 4096 * 3);
	float *x = ert_tensor_data(ert_session_get_input(s, 0));

	for (int i = 0; i < 1024; i++)
		x[i] = (float)(i - 512);
	CHECK_EQ_INT(ert_session_run(s), ERT_OK);
	const float *y = ert_tensor_data(ert_session_get_output(s, 0));
	/* Neg then Relu, 8 times: relu(-x) for the first pair, then stays >= 0 → 0 after Neg/Relu */
	int ok = 1;

	for (int i = 0; i < 1024; i++)
		ok &= y[i] == 0.0f;
	CHECK(ok);
	ert_session_destroy(s);
	ert_model_unref(m);
}

struct cb_state {
	int before, after;
	int skip_index, stop_index;
	char last_type[32];
	int bad_backend;
};

static int before_cb(const ert_op_info *op, void *user)
{
	struct cb_state *st = user;

	st->before++;
	return (int)op->index == st->skip_index;
}

static int after_cb(const ert_op_info *op, void *user)
{
	struct cb_state *st = user;

	st->after++;
	snprintf(st->last_type, sizeof(st->last_type), "%s", op->type);
	st->bad_backend |= strcmp(op->backend, "cpu") != 0;
	return (int)op->index == st->stop_index;
}

ERT_TEST(callbacks_skip_and_stop)
{
	ert_model *m = small_model(2);
	struct cb_state st = { 0, 0, -1, -1, "", 0 };
	ert_session *s = NULL;
	ert_config cfg;

	REQUIRE(m);
	ert_config_init(&cfg);
	cfg.before_op = before_cb;
	cfg.after_op = after_cb;
	cfg.callback_user = &st;
	CHECK_EQ_INT(ert_session_create(m, &cfg, &s), ERT_OK);
	REQUIRE(s);
	fill_input(s, 2);
	CHECK_EQ_INT(ert_session_run(s), ERT_OK);
	CHECK_EQ_INT(st.before, 3);
	CHECK_EQ_INT(st.after, 3);
	CHECK(strcmp(st.last_type, "Reshape") == 0);
	CHECK_EQ_INT(st.bad_backend, 0);

	st = (struct cb_state){ 0, 0, -1, 1, "", 0 };
	CHECK_EQ_INT(ert_session_run(s), ERT_STATUS_STOPPED);
	CHECK_EQ_INT(st.after, 2);
	CHECK(strstr(ert_session_error(s), "Add") != NULL);

	/* skipping the Add leaves its output as the previous run wrote it */
	st = (struct cb_state){ 0, 0, 1, -1, "", 0 };
	CHECK_EQ_INT(ert_session_run(s), ERT_OK);
	CHECK_EQ_INT(st.before, 3);
	CHECK_EQ_INT(st.after, 2);
	ert_session_destroy(s);
	ert_model_unref(m);
}

ERT_TEST(bad_arguments)
{
	ert_model *m = small_model(2);
	ert_session *s = NULL;
	ert_config cfg;
	float buf[8] = { 0 };

	REQUIRE(m);
	ert_config_init(&cfg);
	cfg.num_threads = 99;
	CHECK_EQ_INT(ert_session_create(m, &cfg, &s), ERT_STATUS_INVALID_ARGUMENT);
	CHECK(s == NULL);
	CHECK(strstr(ert_last_error(), "num_threads") != NULL);
	ert_config_init(&cfg);
	cfg.tune = (ert_tune)(ERT_TUNE_WIDE + 1);
	CHECK_EQ_INT(ert_session_create(m, &cfg, &s), ERT_STATUS_INVALID_ARGUMENT);
	CHECK(strstr(ert_last_error(), "tune") != NULL);
	ert_config_init(&cfg);
	cfg.struct_size = 12;
	CHECK_EQ_INT(ert_session_create(m, &cfg, &s), ERT_STATUS_INVALID_ARGUMENT);
	CHECK_EQ_INT(ert_session_create(NULL, NULL, &s), ERT_STATUS_INVALID_ARGUMENT);

	CHECK_EQ_INT(ert_session_create(m, NULL, &s), ERT_OK);
	REQUIRE(s);
	CHECK(ert_session_get_input(s, 1) == NULL);
	CHECK(ert_session_get_output(s, 7) == NULL);
	CHECK(ert_session_get_input_by_name(s, "nope") == NULL);
	CHECK(ert_session_get_input_by_name(s, "x") == ert_session_get_input(s, 0));
	CHECK_EQ_INT(ert_session_set_input(s, 0, ERT_DTYPE_INT32, buf, sizeof(buf)),
		     ERT_STATUS_DTYPE);
	CHECK(strstr(ert_session_error(s), "float32") != NULL);
	CHECK_EQ_INT(ert_session_set_input(s, 0, ERT_DTYPE_FLOAT32, buf, 12), ERT_STATUS_SHAPE);
	CHECK_EQ_INT(ert_session_set_input(s, 0, ERT_DTYPE_FLOAT32, buf, sizeof(buf)), ERT_OK);
	CHECK_EQ_INT(ert_session_run(s), ERT_OK);
	ert_session_destroy(s);
	ert_session_destroy(NULL);
	ert_model_unref(m);
	ert_model_unref(NULL);

	char msg[128];
	ert_model *bad = NULL;

	CHECK_EQ_INT(ert_model_load_file("/nonexistent/model.ert", &bad, msg, sizeof(msg)),
		     ERT_STATUS_IO);
	CHECK(strstr(msg, "/nonexistent/model.ert") != NULL);
	CHECK(bad == NULL);
	CHECK(strcmp(ert_status_string(ERT_STATUS_SHAPE), "shape mismatch") == 0);
}

/* Reshape whose target shape is a graph input: planned from the input's value. */
ERT_TEST(value_input_replans)
{
	struct ert_graph *g = ert_graph_create();
	int64_t xd[2] = { 2, 6 }, two = 2;
	int32_t x = ert_graph_add_tensor(g, "x", ERT_DTYPE_FLOAT32, 2, xd);
	int32_t sh = ert_graph_add_tensor(g, "shape", ERT_DTYPE_INT64, 1, &two);
	int32_t y = ert_graph_add_tensor(g, "y", ERT_DTYPE_FLOAT32, -1, NULL);
	ert_session *s = NULL;
	ert_model *m;

	g->opset = 17;
	ert_graph_add_input(g, x);
	ert_graph_add_input(g, sh);
	ert_graph_add_node(g, ERT_OP_Reshape, "reshape", 2, (int32_t[]){ x, sh }, 1, &y);
	ert_graph_add_output(g, y);
	m = model_from_graph(g);
	REQUIRE(m);
	CHECK_EQ_INT(ert_session_create(m, NULL, &s), ERT_OK);
	REQUIRE(s);
	int64_t shapes[3][2] = { { 3, 4 }, { 12, 1 }, { 3, 4 } };

	for (int i = 0; i < 3; i++) {
		CHECK_EQ_INT(ert_session_set_input(s, 1, ERT_DTYPE_INT64, shapes[i], sizeof(shapes[i])),
			     ERT_OK);
		CHECK_EQ_INT(ert_session_run(s), ERT_OK);
		CHECK_EQ_INT(ert_tensor_dim(ert_session_get_output(s, 0), 0), shapes[i][0]);
		CHECK_EQ_INT(ert_tensor_dim(ert_session_get_output(s, 0), 1), shapes[i][1]);
	}
	int64_t bad[2] = { 5, 5 };

	CHECK_EQ_INT(ert_session_set_input(s, 1, ERT_DTYPE_INT64, bad, sizeof(bad)), ERT_OK);
	CHECK(ert_session_run(s) != ERT_OK);
	CHECK(strstr(ert_session_error(s), "reshape") != NULL);
	ert_session_destroy(s);
	ert_model_unref(m);
}

/*
 * An op failing on the CPU while running (Gather's index out of range): the
 * error names the op and its type once, no backend (the CPU's messages carry
 * none), the problem after them.
 */
ERT_TEST(cpu_op_error_names_op_once)
{
	struct ert_graph *g = ert_graph_create();
	int64_t three = 3, one = 1, idx = 5;
	float *data = malloc(3 * sizeof(float));
	ert_session *s = NULL;
	ert_config cfg;
	int32_t x, i, y;

	REQUIRE(g && data);
	data[0] = 1, data[1] = 2, data[2] = 3;
	g->opset = 17;
	x = ert_graph_add_tensor(g, "x", ERT_DTYPE_FLOAT32, 1, &three);
	ert_graph_set_const(g, x, data, 3 * sizeof(float), true);
	i = ert_graph_add_tensor(g, "i", ERT_DTYPE_INT64, 1, &one);
	ert_graph_add_input(g, i);
	y = ert_graph_add_tensor(g, "y", ERT_DTYPE_FLOAT32, -1, NULL);
	ert_graph_add_node(g, ERT_OP_Gather, "pick", 2, (int32_t[]){ x, i }, 1, &y);
	ert_graph_add_output(g, y);
	ert_model *m = model_from_graph(g);

	REQUIRE(m);
	ert_config_init(&cfg);
	REQUIRE(ert_session_create(m, &cfg, &s) == ERT_OK);
	CHECK_EQ_INT(ert_session_set_input(s, 0, ERT_DTYPE_INT64, &idx, 8), ERT_OK);
	CHECK_EQ_INT(ert_session_run(s), ERT_STATUS_INVALID_ARGUMENT);
	CHECK_EQ_STR(ert_session_error(s), "failed to run Gather 'pick': "
					   "index 5 out of range for an axis of size 3");
	CHECK_EQ_STR(ert_last_error(), ert_session_error(s));
	ert_session_destroy(s);
	ert_model_unref(m);
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(run_small_model), ERT_TEST_ENTRY(resize_and_plan_cache),
	      ERT_TEST_ENTRY(memory_plan_reuses_buffers), ERT_TEST_ENTRY(callbacks_skip_and_stop),
	      ERT_TEST_ENTRY(bad_arguments), ERT_TEST_ENTRY(value_input_replans),
	      ERT_TEST_ENTRY(cpu_op_error_names_op_once))
