/* SPDX-License-Identifier: MIT */
/* .ert writer and loader: round trips, in-place weights, fp16 and block quantisation. */
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "ert-test.h"
#include "format/ert-format.h"

/* Copy an image into a 64-byte aligned buffer, as a mapping would be. */
static uint8_t *aligned_copy(const void *img, size_t size)
{
	uint8_t *p = aligned_alloc(64, (size + 63) & ~(size_t)63);

	if (p)
		memcpy(p, img, size);
	return p;
}

static float frand(uint32_t *s)
{
	*s = *s * 1664525u + 1013904223u;
	return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static const char str_with_nul[] = { 'a', '\0', 'b' };

/* A graph that uses every attribute type, several dtypes, symbolic dims and quant params. */
static struct ert_graph *build_everything(void)
{
	struct ert_graph *g = ert_graph_create();
	static const float wdata[8] = { 1, -2, 3, -4, 5.5f, -6.25f, 7, 8 };
	static const int64_t bdata[2] = { -5, 1ll << 40 };
	static const int8_t qdata[2] = { -128, 127 };
	static const uint8_t i4data[3] = { 0x21, 0x43, 0x05 };
	static const float scales[2] = { 0.5f, 0.25f };
	static const int32_t zps[2] = { 3, -3 };
	float *owned = malloc(8 * sizeof(float));

	if (!g || !owned) {
		free(owned);
		ert_graph_destroy(g);
		return NULL;
	}
	memcpy(owned, wdata, sizeof(wdata));
	g->producer = "unit test";
	g->ir_version = 9;
	g->opset = 17;
	int32_t x = ert_graph_add_tensor(g, "x", ERT_DTYPE_FLOAT32, 3, (int64_t[]){ -1, 2, 4 });
	int32_t w = ert_graph_add_tensor(g, "w", ERT_DTYPE_FLOAT32, 2, (int64_t[]){ 4, 2 });
	int32_t b = ert_graph_add_tensor(g, "b", ERT_DTYPE_INT64, 1, (int64_t[]){ 2 });
	int32_t q = ert_graph_add_tensor(g, "q", ERT_DTYPE_INT8, 1, (int64_t[]){ 2 });
	int32_t i4 = ert_graph_add_tensor(g, "i4", ERT_DTYPE_INT4, 1, (int64_t[]){ 5 });
	int32_t y = ert_graph_add_tensor(g, "y", ERT_DTYPE_UNDEFINED, -1, NULL);
	int32_t z = ert_graph_add_tensor(g, "z", ERT_DTYPE_FLOAT32, 3, (int64_t[]){ -1, 2, 2 });
	int32_t e = ert_graph_add_tensor(g, "empty", ERT_DTYPE_FLOAT32, 1, (int64_t[]){ 0 });

	g->tensors[x].dim_names[0] = ert_graph_strdup(g, "batch");
	g->tensors[z].dim_names[0] = ert_graph_strdup(g, "batch");
	ert_graph_set_const(g, w, owned, sizeof(wdata), true);
	ert_graph_set_const(g, b, bdata, sizeof(bdata), false);
	ert_graph_set_const(g, q, qdata, sizeof(qdata), false);
	ert_graph_set_const(g, i4, i4data, sizeof(i4data), false);
	ert_graph_set_const(g, e, NULL, 0, false);
	g->tensors[q].quant = (struct ert_quant){ 0, 2, scales, zps };
	ert_graph_add_input(g, x);

	int32_t ins[3] = { x, w, -1 };
	int32_t n0 = ert_graph_add_node(g, ERT_OP_MatMul, "mm", 3, ins, 1, &y);
	int32_t ins2[4] = { y, b, q, i4 };
	int32_t outs2[2] = { z, -1 };
	int32_t n1 = ert_graph_add_node(g, ERT_OP_Einsum, "ein", 4, ins2, 2, outs2);
	struct ert_node *n = &g->nodes[n1];

	g->nodes[n0].opset = 13;
	ert_node_set_attr_float(g, n, "f", -1.5f);
	ert_node_set_attr_int(g, n, "i", -(1ll << 50));
	ert_node_set_attr_ints(g, n, "ints", (int64_t[]){ 1, -2, 3 }, 3);
	struct ert_attr *a = ert_node_add_attr(g, n, "s", ERT_ATTR_STRING);

	a->s = ert_graph_strndup(g, str_with_nul, 3);
	a->len = 3;
	a = ert_node_add_attr(g, n, "t", ERT_ATTR_TENSOR);
	a->tensor = e;
	a = ert_node_add_attr(g, n, "fs", ERT_ATTR_FLOATS);
	float *fs = ert_graph_alloc(g, 2 * sizeof(float));
	fs[0] = 0.125f;
	fs[1] = -3e30f;
	a->floats = fs;
	a->count = 2;
	a = ert_node_add_attr(g, n, "ss", ERT_ATTR_STRINGS);
	const char **ss = ert_graph_alloc(g, 2 * sizeof(char *));
	ss[0] = ert_graph_strdup(g, "one");
	ss[1] = ert_graph_strdup(g, "");
	a->strings = ss;
	a->count = 2;
	a = ert_node_add_attr(g, n, "empty_ints", ERT_ATTR_INTS);
	a->count = 0;
	a->ints = NULL;
	ert_graph_add_output(g, z);
	return g;
}

ERT_TEST(round_trip_everything)
{
	struct ert_graph *g = build_everything(), *h = NULL;
	struct ert_err err = { "" };
	void *img = NULL;
	size_t size = 0;

	REQUIRE(g);
	CHECK_EQ_INT(ert_graph_validate(g, &err), ERT_OK);
	CHECK_EQ_INT(ert_format_write_memory(g, NULL, &img, &size, &err), ERT_OK);
	REQUIRE(img);
	CHECK(ert_format_probe(img, size));
	CHECK(!ert_format_probe("hello world", 11));
	CHECK_EQ_INT(ert_format_load(img, size, &h, &err), ERT_OK);
	if (!h)
		fprintf(stderr, "load: %s\n", err.msg);
	REQUIRE(h);
	CHECK_EQ_INT(h->n_tensors, g->n_tensors);
	CHECK_EQ_INT(h->n_nodes, 2);
	CHECK(strcmp(h->producer, "unit test") == 0);
	CHECK_EQ_INT(h->ir_version, 9);
	CHECK_EQ_INT(h->opset, 17);
	CHECK_EQ_INT(h->n_inputs, 1);
	CHECK_EQ_INT(h->n_outputs, 1);
	for (uint32_t t = 0; t < g->n_tensors && t < h->n_tensors; t++) {
		const struct ert_tensor *a = &g->tensors[t], *b = &h->tensors[t];

		CHECK(strcmp(a->name, b->name) == 0);
		CHECK_EQ_INT(a->dtype, b->dtype);
		CHECK_EQ_INT(a->rank, b->rank);
		CHECK_EQ_INT(a->flags & 7, b->flags & 7);
		for (int d = 0; d < a->rank; d++) {
			CHECK_EQ_INT(a->dims[d], b->dims[d]);
			CHECK(!a->dim_names[d] == !b->dim_names[d]);
			if (a->dim_names[d] && b->dim_names[d])
				CHECK(strcmp(a->dim_names[d], b->dim_names[d]) == 0);
		}
		CHECK_EQ_INT(a->nbytes, b->nbytes);
		if (a->nbytes && b->nbytes == a->nbytes)
			CHECK(memcmp(a->data, b->data, a->nbytes) == 0);
		CHECK_EQ_INT(a->quant.count, b->quant.count);
	}
	const struct ert_tensor *q = &h->tensors[ert_graph_find_tensor(h, "q")];

	CHECK_EQ_INT(q->quant.axis, 0);
	REQUIRE(q->quant.count == 2 && q->quant.zero_points);
	CHECK_NEAR(q->quant.scales[1], 0.25, 0);
	CHECK_EQ_INT(q->quant.zero_points[1], -3);
	CHECK(strcmp(h->tensors[0].dim_names[0], "batch") == 0);

	const struct ert_node *mm = &h->nodes[0], *n = &h->nodes[1];

	CHECK_EQ_INT(mm->op, ERT_OP_MatMul);
	CHECK_EQ_INT(mm->opset, 13);
	CHECK_EQ_INT(mm->n_inputs, 3);
	CHECK_EQ_INT(mm->inputs[2], -1);
	CHECK_EQ_INT(n->op, ERT_OP_Einsum);
	CHECK(strcmp(n->name, "ein") == 0);
	CHECK_EQ_INT(n->outputs[1], -1);
	CHECK_EQ_INT(n->n_attrs, 8);
	CHECK_NEAR(ert_attr_float(n, "f", 0), -1.5, 0);
	CHECK_EQ_INT(ert_attr_int(n, "i", 0), -(1ll << 50));
	uint32_t cnt;
	const int64_t *ints = ert_attr_ints(n, "ints", &cnt);

	CHECK(ints && cnt == 3 && ints[1] == -2);
	const float *fl = ert_attr_floats(n, "fs", &cnt);

	CHECK(fl && cnt == 2 && fl[1] == -3e30f);
	const struct ert_attr *a = ert_node_attr(n, "s");

	CHECK(a && a->type == ERT_ATTR_STRING && a->len == 3 && memcmp(a->s, str_with_nul, 3) == 0);
	a = ert_node_attr(n, "t");
	CHECK(a && a->type == ERT_ATTR_TENSOR && a->tensor == ert_graph_find_tensor(h, "empty"));
	a = ert_node_attr(n, "ss");
	CHECK(a && a->type == ERT_ATTR_STRINGS && a->count == 2 &&
	      strcmp(a->strings[0], "one") == 0 && a->strings[1][0] == 0);
	a = ert_node_attr(n, "empty_ints");
	CHECK(a && a->type == ERT_ATTR_INTS && a->count == 0);
	ert_graph_destroy(h);
	free(img);
	ert_graph_destroy(g);
}

ERT_TEST(raw_weights_in_place)
{
	struct ert_graph *g = build_everything(), *h = NULL;
	struct ert_err err;
	void *img = NULL;
	size_t size = 0;

	REQUIRE(g);
	REQUIRE(ert_format_write_memory(g, NULL, &img, &size, &err) == ERT_OK);
	uint8_t *al = aligned_copy(img, size);

	REQUIRE(al);
	CHECK_EQ_INT(ert_format_load(al, size, &h, &err), ERT_OK);
	REQUIRE(h);
	for (uint32_t t = 0; t < h->n_tensors; t++) {
		const struct ert_tensor *x = &h->tensors[t];

		if (!(x->flags & ERT_TENSOR_CONST) || !x->nbytes)
			continue;
		const uint8_t *p = x->data;

		CHECK(p >= al && p + x->nbytes <= al + size);
		CHECK((uintptr_t)p % 64 == 0);
		CHECK(!(x->flags & ERT_TENSOR_OWNED));
	}
	ert_graph_destroy(h);
	h = NULL;

	/* a buffer that is not 64-byte aligned: weights are copied, still aligned */
	uint8_t *mis = malloc(size + 8);

	REQUIRE(mis);
	uint8_t *base = mis + ((uintptr_t)mis % 64 == 0 ? 8 : 0);

	memcpy(base, img, size);
	CHECK_EQ_INT(ert_format_load(base, size, &h, &err), ERT_OK);
	if (h) {
		int32_t w = ert_graph_find_tensor(h, "w");

		CHECK((uintptr_t)h->tensors[w].data % 64 == 0);
		CHECK(h->tensors[w].flags & ERT_TENSOR_OWNED);
		CHECK_NEAR(((const float *)h->tensors[w].data)[5], -6.25, 0);
	}
	ert_graph_destroy(h);
	free(mis);
	free(al);
	free(img);
	ert_graph_destroy(g);
}

/* x[1,K] → MatMul(W[K,N]) → Reshape(shape const) → out, with float bias Add. */
static struct ert_graph *build_matmul(int64_t k, int64_t nout, float **w_out, uint32_t seed)
{
	struct ert_graph *g = ert_graph_create();
	float *w = malloc((size_t)(k * nout) * sizeof(float));
	float *bias = malloc((size_t)nout * sizeof(float));
	int64_t *shape = malloc(2 * sizeof(int64_t));

	if (!g || !w || !bias || !shape) {
		free(w);
		free(bias);
		free(shape);
		ert_graph_destroy(g);
		return NULL;
	}
	for (int64_t i = 0; i < k * nout; i++)
		w[i] = frand(&seed) * (1.0f + (float)(i % 7));
	for (int64_t i = 0; i < nout; i++)
		bias[i] = 0.1f * (float)i + 0.0001f;
	shape[0] = nout;
	shape[1] = 1;
	int32_t x = ert_graph_add_tensor(g, "x", ERT_DTYPE_FLOAT32, 2, (int64_t[]){ 1, k });
	int32_t wt = ert_graph_add_tensor(g, "W", ERT_DTYPE_FLOAT32, 2, (int64_t[]){ k, nout });
	int32_t bt = ert_graph_add_tensor(g, "bias", ERT_DTYPE_FLOAT32, 1, &nout);
	int32_t st = ert_graph_add_tensor(g, "shape", ERT_DTYPE_INT64, 1, (int64_t[]){ 2 });
	int32_t y = ert_graph_add_tensor(g, "y", ERT_DTYPE_FLOAT32, 2, (int64_t[]){ 1, nout });
	int32_t yb = ert_graph_add_tensor(g, "yb", ERT_DTYPE_FLOAT32, 2, (int64_t[]){ 1, nout });
	int32_t o = ert_graph_add_tensor(g, "out", ERT_DTYPE_FLOAT32, 2, (int64_t[]){ nout, 1 });

	ert_graph_set_const(g, wt, w, (size_t)(k * nout) * 4, true);
	ert_graph_set_const(g, bt, bias, (size_t)nout * 4, true);
	ert_graph_set_const(g, st, shape, 16, true);
	ert_graph_add_input(g, x);
	ert_graph_add_node(g, ERT_OP_MatMul, "mm", 2, (int32_t[]){ x, wt }, 1, &y);
	ert_graph_add_node(g, ERT_OP_Add, "add", 2, (int32_t[]){ y, bt }, 1, &yb);
	ert_graph_add_node(g, ERT_OP_Reshape, "rs", 2, (int32_t[]){ yb, st }, 1, &o);
	ert_graph_add_output(g, o);
	*w_out = w;
	return g;
}

static void check_lossy(int *ert_test_failed_, uint32_t fp16, uint32_t bits, uint32_t block)
{
	float *w;
	struct ert_graph *g = build_matmul(24, 16, &w, 7 + bits), *h = NULL;
	struct ert_write_options opt = { .fp16 = fp16, .weight_bits = bits, .weight_block = block };
	struct ert_err err;
	void *img = NULL, *raw = NULL;
	size_t size = 0, raw_size = 0;

	REQUIRE(g);
	REQUIRE(ert_format_write_memory(g, &opt, &img, &size, &err) == ERT_OK);
	REQUIRE(ert_format_write_memory(g, NULL, &raw, &raw_size, &err) == ERT_OK);
	CHECK(size < raw_size);
	CHECK_EQ_INT(ert_format_load(img, size, &h, &err), ERT_OK);
	REQUIRE(h);
	const struct ert_tensor *wt = &h->tensors[ert_graph_find_tensor(h, "W")];
	const struct ert_tensor *bt = &h->tensors[ert_graph_find_tensor(h, "bias")];
	const struct ert_tensor *st = &h->tensors[ert_graph_find_tensor(h, "shape")];

	CHECK_EQ_INT(wt->dtype, ERT_DTYPE_FLOAT32);
	CHECK_EQ_INT(wt->nbytes, 24 * 16 * 4);
	/* fp16 is decoded at load; block-quantised weights stay encoded until asked for */
	if (bits) {
		REQUIRE(wt->wq);
		CHECK(wt->data == NULL);
		CHECK_EQ_INT(wt->wq->bits, (int)bits);
		CHECK(atomic_load(&wt->wq->decoded) == NULL);
	} else {
		CHECK(wt->flags & ERT_TENSOR_OWNED);
	}
	CHECK_EQ_INT(((const int64_t *)st->data)[0], 16);
	const float *d = ert_graph_const_data(h, ert_graph_find_tensor(h, "W"));

	REQUIRE(d);
	/* decoded once: the same buffer on every call */
	CHECK(d == ert_graph_const_data(h, ert_graph_find_tensor(h, "W")));
	double worst = 0, bound = 0;

	/* quantised error is at most half a step of the block's scale */
	uint32_t bs = block ? block : 32;
	for (int r = 0; r < 24; r++) {
		for (uint32_t s = 0; s < 16; s += bs) {
			float amax = 0;

			for (uint32_t j = s; j < 16 && j < s + bs; j++)
				amax = fmaxf(amax, fabsf(w[r * 16 + j]));
			for (uint32_t j = s; j < 16 && j < s + bs; j++) {
				double e = fabs(d[r * 16 + j] - w[r * 16 + j]);
				double lim = bits ? amax / (bits == 8 ? 127.0 : 7.0) * 0.5 + 1e-6
						  : fabs(w[r * 16 + j]) / 1024.0 + 1e-7;

				if (e > lim)
					worst = e, bound = lim;
			}
		}
	}
	CHECK_NEAR(worst, 0, bound);
	/* the bias is not a weight input: raw unless fp16 was asked for */
	if (fp16)
		CHECK_NEAR(((const float *)bt->data)[3], 0.3001, 0.3001 / 1024);
	else
		CHECK(((const float *)bt->data)[3] == 0.1f * 3.0f + 0.0001f);
	ert_graph_destroy(h);
	free(img);
	free(raw);
	ert_graph_destroy(g);
}

ERT_TEST(fp16_round_trip)
{
	check_lossy(ert_test_failed_, 1, 0, 0);
}

ERT_TEST(int8_block_round_trip)
{
	check_lossy(ert_test_failed_, 0, 8, 0);
	check_lossy(ert_test_failed_, 1, 8, 5);
}

ERT_TEST(int4_block_round_trip)
{
	check_lossy(ert_test_failed_, 0, 4, 0);
	check_lossy(ert_test_failed_, 0, 4, 3);
}

ERT_TEST(write_options_rejected)
{
	float *w;
	struct ert_graph *g = build_matmul(16, 16, &w, 1);
	struct ert_write_options opt = { .weight_bits = 5 };
	struct ert_err err = { "" };
	void *img = NULL;
	size_t size = 0;

	REQUIRE(g);
	CHECK_EQ_INT(ert_format_write_memory(g, &opt, &img, &size, &err),
		     ERT_STATUS_INVALID_ARGUMENT);
	CHECK(strstr(err.msg, "weight_bits") != NULL);
	CHECK(img == NULL);
	ert_graph_destroy(g);
}

ERT_TEST(write_file_atomic)
{
	float *w;
	struct ert_graph *g = build_matmul(8, 4, &w, 3), *h = NULL;
	struct ert_err err = { "" };
	char path[] = "/tmp/ert-test-format-XXXXXX";
	int fd = mkstemp(path);

	REQUIRE(g && fd >= 0);
	if (write(fd, "old", 3) != 3)
		CHECK(0);
	close(fd);
	CHECK_EQ_INT(ert_format_write_file(g, NULL, path, &err), ERT_OK);

	FILE *f = fopen(path, "rb");
	uint8_t buf[8192];
	size_t n = f ? fread(buf, 1, sizeof(buf), f) : 0;

	if (f)
		fclose(f);
	CHECK(n > 64);
	CHECK_EQ_INT(ert_format_load(buf, n, &h, &err), ERT_OK);
	ert_graph_destroy(h);
	CHECK_EQ_INT(ert_format_write_file(g, NULL, "/nonexistent-dir/x.ert", &err), ERT_STATUS_IO);
	CHECK(strstr(err.msg, "nonexistent-dir") != NULL);
	unlink(path);
	ert_graph_destroy(g);
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(round_trip_everything), ERT_TEST_ENTRY(raw_weights_in_place),
	      ERT_TEST_ENTRY(fp16_round_trip), ERT_TEST_ENTRY(int8_block_round_trip),
	      ERT_TEST_ENTRY(int4_block_round_trip), ERT_TEST_ENTRY(write_options_rejected),
	      ERT_TEST_ENTRY(write_file_atomic))
