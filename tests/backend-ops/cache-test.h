/* SPDX-License-Identifier: MIT */
/*
 * cache-test.h — what the GPU backends' cache-file tests share
 * (test-ocl-cache.c, test-vk-cache.c): the checks' tally, the model and its
 * input, and whole-file reads and writes.
 */
#ifndef ERT_CACHE_TEST_H
#define ERT_CACHE_TEST_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edgert.h"
#include "ert-graph.h"
#include "ert-test-model.h"

/* Elements of the model's input and output. */
#define CT_N_X 300

static int passed, failed;

static void check(bool ok, const char *what, const char *why)
{
	if (ok) {
		passed++;
		printf("ok - %s\n", what);
	} else {
		failed++;
		printf("not ok - %s: %s\n", what, why);
	}
}

/*
 * y = Softmax(Relu(x) * x + x) on a 3 x 100 input: an elementwise kernel,
 * two binary ones and a row reduction.
 */
static ert_model *cache_test_model(void)
{
	struct ert_graph *g = ert_graph_create();
	int64_t dims[2] = { 3, CT_N_X / 3 };
	int32_t x, a, b, c, y;

	if (!g)
		return NULL;
	g->opset = 17;
	x = ert_graph_add_tensor(g, "x", ERT_DTYPE_FLOAT32, 2, dims);
	a = ert_graph_add_tensor(g, "a", ERT_DTYPE_FLOAT32, -1, NULL);
	b = ert_graph_add_tensor(g, "b", ERT_DTYPE_FLOAT32, -1, NULL);
	c = ert_graph_add_tensor(g, "c", ERT_DTYPE_FLOAT32, -1, NULL);
	y = ert_graph_add_tensor(g, "y", ERT_DTYPE_FLOAT32, -1, NULL);
	ert_graph_add_input(g, x);
	ert_graph_add_node(g, ERT_OP_Relu, "relu", 1, &x, 1, &a);
	ert_graph_add_node(g, ERT_OP_Mul, "mul", 2, (int32_t[]){ a, x }, 1, &b);
	ert_graph_add_node(g, ERT_OP_Add, "add", 2, (int32_t[]){ b, x }, 1, &c);
	ert_graph_add_node(g, ERT_OP_Softmax, "softmax", 1, &c, 1, &y);
	ert_graph_add_output(g, y);
	return model_from_graph(g);
}

/* One run of @s on the test's input: its output in @y, or false. */
static bool cache_test_run(ert_session *s, float *y)
{
	float x[CT_N_X];

	for (int i = 0; i < CT_N_X; i++)
		x[i] = (float)((i * 37) % 23) * 0.25f - 2.5f;
	if (ert_session_set_input(s, 0, ERT_DTYPE_FLOAT32, x, sizeof(x)) != ERT_OK ||
	    ert_session_run(s) != ERT_OK)
		return false;
	memcpy(y, ert_tensor_data(ert_session_get_output(s, 0)), CT_N_X * sizeof(*y));
	return true;
}

/* The bytes of file @p (malloc'd, *@size of them), or NULL when it is missing or empty. */
static unsigned char *read_file(const char *p, size_t *size)
{
	FILE *f = fopen(p, "rb");
	unsigned char *buf = NULL;
	long n;

	*size = 0;
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)n)) && fread(buf, 1, (size_t)n, f) == (size_t)n)
		*size = (size_t)n;
	fclose(f);
	if (!*size) {
		free(buf);
		return NULL;
	}
	return buf;
}

static bool write_file(const char *p, const void *buf, size_t size)
{
	FILE *f = fopen(p, "wb");
	bool ok = f && fwrite(buf, 1, size, f) == size;

	return f && fclose(f) == 0 && ok;
}

#endif
