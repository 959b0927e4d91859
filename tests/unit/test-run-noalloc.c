/* SPDX-License-Identifier: MIT */
/*
 * ert_session_run allocates nothing: malloc and friends are interposed to count
 * calls while a planned session runs a small CNN on two threads. (Under ASan,
 * which owns malloc, only the results are checked.)
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "edgert.h"
#include "ert-graph.h"
#include "ert-test.h"
#include "format/ert-format.h"

#include "ert-test-malloc-count.h"

static int32_t add_const(struct ert_graph *g, const char *name, int32_t rank, const int64_t *dims,
			 unsigned seed)
{
	int32_t t = ert_graph_add_tensor(g, name, ERT_DTYPE_FLOAT32, rank, dims);
	int64_t n = ert_shape_numel(rank, dims);
	float *v = malloc((size_t)n * sizeof(float));

	for (int64_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		v[i] = ((float)(seed >> 16 & 0x7fff) / 32768.0f - 0.5f) * 0.2f;
	}
	ert_graph_set_const(g, t, v, (size_t)n * sizeof(float), true);
	return t;
}

/* x[1,3,32,32] → Conv 3x3 (16) → Relu → MaxPool 2 → Conv 1x1 (32) → GAP → Flatten → Gemm (10) → Softmax */
static ert_model *small_cnn(void)
{
	struct ert_graph *g = ert_graph_create();
	struct ert_err err = { "" };
	int64_t xd[4] = { 1, 3, 32, 32 };
	int32_t t[12];
	ert_model *m = NULL;
	void *img = NULL;
	size_t size;
	char msg[256];

	g->opset = 17;
	t[0] = ert_graph_add_tensor(g, "x", ERT_DTYPE_FLOAT32, 4, xd);
	ert_graph_add_input(g, t[0]);
	t[1] = add_const(g, "w1", 4, (int64_t[]){ 16, 3, 3, 3 }, 1);
	t[2] = add_const(g, "b1", 1, (int64_t[]){ 16 }, 2);
	t[3] = add_const(g, "w2", 4, (int64_t[]){ 32, 16, 1, 1 }, 3);
	t[4] = add_const(g, "w3", 2, (int64_t[]){ 10, 32 }, 4);
	t[5] = add_const(g, "b3", 1, (int64_t[]){ 10 }, 5);
	const char *names[] = { "c1", "r1", "p1", "c2", "gap", "flat", "fc", "y" };
	int32_t a[8];

	for (int i = 0; i < 8; i++)
		a[i] = ert_graph_add_tensor(g, names[i], ERT_DTYPE_FLOAT32, -1, NULL);
	int32_t c1 = ert_graph_add_node(g, ERT_OP_Conv, "conv1", 3, (int32_t[]){ t[0], t[1], t[2] },
				       1, &a[0]);
	ert_node_set_attr_ints(g, &g->nodes[c1], "pads", (int64_t[]){ 1, 1, 1, 1 }, 4);
	ert_graph_add_node(g, ERT_OP_Relu, "relu", 1, &a[0], 1, &a[1]);
	int32_t p1 = ert_graph_add_node(g, ERT_OP_MaxPool, "pool", 1, &a[1], 1, &a[2]);

	ert_node_set_attr_ints(g, &g->nodes[p1], "kernel_shape", (int64_t[]){ 2, 2 }, 2);
	ert_node_set_attr_ints(g, &g->nodes[p1], "strides", (int64_t[]){ 2, 2 }, 2);
	ert_graph_add_node(g, ERT_OP_Conv, "conv2", 2, (int32_t[]){ a[2], t[3] }, 1, &a[3]);
	ert_graph_add_node(g, ERT_OP_GlobalAveragePool, "gap", 1, &a[3], 1, &a[4]);
	ert_graph_add_node(g, ERT_OP_Flatten, "flatten", 1, &a[4], 1, &a[5]);
	int32_t fc = ert_graph_add_node(g, ERT_OP_Gemm, "fc", 3, (int32_t[]){ a[5], t[4], t[5] }, 1,
					&a[6]);

	ert_node_set_attr_int(g, &g->nodes[fc], "transB", 1);
	ert_graph_add_node(g, ERT_OP_Softmax, "softmax", 1, &a[6], 1, &a[7]);
	ert_graph_add_output(g, a[7]);
	if (ert_format_write_memory(g, NULL, &img, &size, &err) == ERT_OK &&
	    ert_model_load_memory(img, size, 1, &m, msg, sizeof(msg)) != ERT_OK)
		fprintf(stderr, "cannot load: %s\n", msg);
	if (!img)
		fprintf(stderr, "cannot serialise: %s\n", err.msg);
	free(img);
	ert_graph_destroy(g);
	return m;
}

ERT_TEST(run_allocates_nothing)
{
	ert_model *m = small_cnn();
	ert_session *s = NULL;
	ert_config cfg;

	REQUIRE(m);
	ert_config_init(&cfg);
	cfg.num_threads = 2;
	CHECK_EQ_INT(ert_session_create(m, &cfg, &s), ERT_OK);
	REQUIRE(s);
	float *x = ert_tensor_data(ert_session_get_input(s, 0));

	for (int i = 0; i < 3 * 32 * 32; i++)
		x[i] = (float)(i % 17) / 17.0f;
	CHECK_EQ_INT(ert_session_run(s), ERT_OK);
	atomic_store(&allocations, 0);
	atomic_store(&counting, 1);
	for (int i = 0; i < 5; i++)
		CHECK_EQ_INT(ert_session_run(s), ERT_OK);
	atomic_store(&counting, 0);
	CHECK_EQ_INT(atomic_load(&allocations), 0);

	const float *y = ert_tensor_data(ert_session_get_output(s, 0));
	double sum = 0;

	for (int i = 0; i < 10; i++)
		sum += y[i];
	CHECK_NEAR(sum, 1.0, 1e-5);
	ert_session_destroy(s);
	ert_model_unref(m);
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(run_allocates_nothing))
