/* SPDX-License-Identifier: MIT */
/*
 * Sequences and optionals (docs/sequences.md): the ops on the CPU against
 * values computed here, through the .ert format (v8's value kinds) and
 * through ONNX; the C API that sets and reads such inputs and outputs; and
 * hostile input (positions out of range, a split of zero, a sequence fed to
 * an op that takes tensors, a damaged kind in a file) refused with a message
 * naming the problem.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ert-test.h"
#include "ert-test-control.h"
#include "ert-test-model.h"
#include "ert-test-onnx-write.h"
#include "format/format-priv.h"

static int32_t seq_tensor(struct ert_graph *g, const char *name, uint8_t kind, ert_dtype elem)
{
	int32_t t = ert_graph_add_tensor(g, name, ERT_DTYPE_UINT64, 0, NULL);

	if (t >= 0) {
		g->tensors[t].kind = kind;
		g->tensors[t].elem = elem;
	}
	return t;
}

static int32_t node(struct ert_graph *g, enum ert_op op, const char *name, uint32_t n_in,
		    const int32_t *in, int32_t out)
{
	int32_t i = ert_graph_add_node(g, op, name, n_in, in, 1, &out);

	return i < 0 ? -1 : out;
}

/*
 * x[2,3] -> SplitToSequence(axis 1, keepdims 0) -> s (three [2] tensors)
 * s, pos -> SequenceInsert(s, y[2], pos) -> s2;  s2 -> SequenceErase(-1) -> s3
 * s3 -> SequenceLength -> len;  s3 -> ConcatFromSequence(axis 0, new_axis 1) -> cat
 * s3 -> Optional -> opt;  opt -> OptionalHasElement -> has
 * outputs: len, cat, s3 (a sequence), has
 */
static struct ert_graph *build_pipeline(void)
{
	struct ert_graph *g = ert_graph_create();
	const int64_t xd[2] = { 2, 3 }, yd[1] = { 2 };
	int32_t x, y, pos, s, s2, s3, len, cat, opt, has, n;

	if (!g)
		return NULL;
	g->opset = 18;
	x = ct_tensor(g, "x", ERT_DTYPE_FLOAT32, 2, xd);
	y = ct_tensor(g, "y", ERT_DTYPE_FLOAT32, 1, yd);
	pos = ct_tensor(g, "pos", ERT_DTYPE_INT64, 0, NULL);
	s = seq_tensor(g, "s", ERT_VALUE_SEQUENCE, ERT_DTYPE_FLOAT32);
	s2 = seq_tensor(g, "s2", ERT_VALUE_SEQUENCE, ERT_DTYPE_FLOAT32);
	s3 = seq_tensor(g, "s3", ERT_VALUE_SEQUENCE, ERT_DTYPE_FLOAT32);
	opt = seq_tensor(g, "opt", ERT_VALUE_OPTIONAL_SEQUENCE, ERT_DTYPE_FLOAT32);
	len = ct_tensor(g, "len", ERT_DTYPE_INT64, 0, NULL);
	cat = ct_tensor(g, "cat", ERT_DTYPE_FLOAT32, -1, NULL);
	has = ct_tensor(g, "has", ERT_DTYPE_BOOL, 0, NULL);
	if (x < 0 || y < 0 || pos < 0 || s < 0 || s2 < 0 || s3 < 0 || opt < 0 || len < 0 ||
	    cat < 0 || has < 0)
		goto fail;
	if ((n = ert_graph_add_node(g, ERT_OP_SplitToSequence, "split", 1, &x, 1, &s)) < 0 ||
	    !ert_node_set_attr_int(g, &g->nodes[n], "axis", 1) ||
	    !ert_node_set_attr_int(g, &g->nodes[n], "keepdims", 0))
		goto fail;
	if (node(g, ERT_OP_SequenceInsert, "insert", 3, (const int32_t[]){ s, y, pos }, s2) < 0 ||
	    node(g, ERT_OP_SequenceErase, "erase", 1, &s2, s3) < 0 ||
	    node(g, ERT_OP_SequenceLength, "length", 1, &s3, len) < 0 ||
	    node(g, ERT_OP_Optional, "optional", 1, &s3, opt) < 0 ||
	    node(g, ERT_OP_OptionalHasElement, "has", 1, &opt, has) < 0)
		goto fail;
	if ((n = ert_graph_add_node(g, ERT_OP_ConcatFromSequence, "concat", 1, &s3, 1, &cat)) < 0 ||
	    !ert_node_set_attr_int(g, &g->nodes[n], "axis", 0) ||
	    !ert_node_set_attr_int(g, &g->nodes[n], "new_axis", 1))
		goto fail;
	g->tensors[x].flags |= ERT_TENSOR_INPUT;
	g->tensors[y].flags |= ERT_TENSOR_INPUT;
	g->tensors[pos].flags |= ERT_TENSOR_INPUT;
	if (!ert_graph_add_input(g, x) || !ert_graph_add_input(g, y) || !ert_graph_add_input(g, pos))
		goto fail;
	for (int32_t o = 0; o < 4; o++) {
		int32_t t = (int32_t[]){ len, cat, s3, has }[o];

		g->tensors[t].flags |= ERT_TENSOR_OUTPUT;
		if (!ert_graph_add_output(g, t))
			goto fail;
	}
	return g;
fail:
	ert_graph_destroy(g);
	return NULL;
}

/* Run the pipeline with @pos; the columns of x, y inserted at @pos, the last one erased. */
static void check_pipeline(int *ert_test_failed_, ert_session *s, int64_t pos)
{
	static const float x[6] = { 1, 2, 3, 4, 5, 6 }, y[2] = { -1, -2 };
	float cols[4][2] = { { 1, 4 }, { 2, 5 }, { 3, 6 } };
	const ert_tensor *seq = ert_session_get_output(s, 2);
	/* ONNX: a negative position counts from the back of the sequence before the insertion */
	uint32_t at = (uint32_t)(pos < 0 ? pos + 3 : pos);
	ert_item it;

	memmove(cols[at + 1], cols[at], (3 - at) * sizeof(cols[0]));
	cols[at][0] = y[0];
	cols[at][1] = y[1];
	CHECK_EQ_INT(ert_session_set_input(s, 0, ERT_DTYPE_FLOAT32, x, sizeof(x)), ERT_OK);
	CHECK_EQ_INT(ert_session_set_input(s, 1, ERT_DTYPE_FLOAT32, y, sizeof(y)), ERT_OK);
	CHECK_EQ_INT(ert_session_set_input(s, 2, ERT_DTYPE_INT64, &pos, sizeof(pos)), ERT_OK);
	if (ert_session_run(s) != ERT_OK) {
		fprintf(stderr, "run: %s\n", ert_session_error(s));
		CHECK(0);
		return;
	}
	CHECK_EQ_INT(*(const int64_t *)ert_tensor_data(ert_session_get_output(s, 0)), 3);
	const ert_tensor *cat = ert_session_get_output(s, 1);

	CHECK_EQ_INT(ert_tensor_rank(cat), 2);
	CHECK_EQ_INT(ert_tensor_dim(cat, 0), 3);
	CHECK_EQ_INT(ert_tensor_dim(cat, 1), 2);
	for (int i = 0; i < 6; i++)
		CHECK_NEAR(((const float *)ert_tensor_data(cat))[i], cols[i / 2][i % 2], 0);
	CHECK_EQ_INT(ert_tensor_kind(seq), ERT_VALUE_SEQUENCE);
	CHECK_EQ_INT(ert_tensor_item_dtype(seq), ERT_DTYPE_FLOAT32);
	CHECK(ert_tensor_data(seq) == NULL);
	CHECK_EQ_INT(ert_tensor_item_count(seq), 3);
	CHECK_EQ_INT(ert_tensor_has_value(seq), 1);
	for (uint32_t i = 0; i < 3; i++) {
		CHECK_EQ_INT(ert_tensor_get_item(seq, i, &it), ERT_OK);
		CHECK_EQ_INT(it.rank, 1);
		CHECK_EQ_INT(it.dims[0], 2);
		CHECK_EQ_INT(it.size, 8);
		CHECK_NEAR(((const float *)it.data)[1], cols[i][1], 0);
	}
	CHECK_EQ_INT(ert_tensor_get_item(seq, 3, &it), ERT_STATUS_NOT_FOUND);
	CHECK_EQ_INT(*(const uint8_t *)ert_tensor_data(ert_session_get_output(s, 3)), 1);
}

static void run_pipeline(int *ert_test_failed_, ert_model *m)
{
	ert_session *s = session_one_thread(m);
	int64_t bad = 7;

	REQUIRE(s);
	check_pipeline(ert_test_failed_, s, 0);
	check_pipeline(ert_test_failed_, s, 3);
	check_pipeline(ert_test_failed_, s, -2);
	check_pipeline(ert_test_failed_, s, 1);
	/* a position outside [-n, n] fails the run, naming it */
	CHECK_EQ_INT(ert_session_set_input(s, 2, ERT_DTYPE_INT64, &bad, sizeof(bad)), ERT_OK);
	CHECK_EQ_INT(ert_session_run(s), ERT_STATUS_SHAPE);
	CHECK(strstr(ert_session_error(s), "position 7 is outside [-3, 3]") != NULL);
	/* after a failed run a sequence output holds nothing the application could misread */
	CHECK_EQ_INT(ert_tensor_item_count(ert_session_get_output(s, 2)), -1);
	CHECK_EQ_INT(ert_tensor_has_value(ert_session_get_output(s, 2)), 0);
	check_pipeline(ert_test_failed_, s, 2);
	ert_session_destroy(s);
}

ERT_TEST(pipeline_through_ert)
{
	ert_model *m = model_from_graph(build_pipeline());

	REQUIRE(m);
	run_pipeline(ert_test_failed_, m);
	ert_model_unref(m);
}

ERT_TEST(pipeline_through_onnx)
{
	ert_model *m = model_from_graph_onnx(build_pipeline());

	REQUIRE(m);
	run_pipeline(ert_test_failed_, m);
	ert_model_unref(m);
}

/* q (a sequence input), i -> SequenceAt -> y;  o (an optional input) -> OptionalHasElement -> h */
static struct ert_graph *build_inputs(enum ert_op consumer)
{
	struct ert_graph *g = ert_graph_create();
	int32_t q, i, o, y, h;

	if (!g)
		return NULL;
	g->opset = 18;
	q = seq_tensor(g, "q", ERT_VALUE_SEQUENCE, ERT_DTYPE_INT32);
	o = seq_tensor(g, "o", ERT_VALUE_OPTIONAL, ERT_DTYPE_INT32);
	i = ct_tensor(g, "i", ERT_DTYPE_INT64, 0, NULL);
	y = ct_tensor(g, "y", ERT_DTYPE_INT32, -1, NULL);
	h = ct_tensor(g, "h", ERT_DTYPE_BOOL, 0, NULL);
	if (q < 0 || o < 0 || i < 0 || y < 0 || h < 0 ||
	    node(g, consumer, "at", consumer == ERT_OP_SequenceAt ? 2 : 1,
		 (const int32_t[]){ q, i }, y) < 0 ||
	    node(g, ERT_OP_OptionalHasElement, "has", 1, &o, h) < 0)
		goto fail;
	for (int32_t k = 0; k < 3; k++) {
		int32_t t = (int32_t[]){ q, o, i }[k];

		g->tensors[t].flags |= ERT_TENSOR_INPUT;
		if (!ert_graph_add_input(g, t))
			goto fail;
	}
	g->tensors[y].flags |= ERT_TENSOR_OUTPUT;
	g->tensors[h].flags |= ERT_TENSOR_OUTPUT;
	if (!ert_graph_add_output(g, y) || !ert_graph_add_output(g, h))
		goto fail;
	return g;
fail:
	ert_graph_destroy(g);
	return NULL;
}

ERT_TEST(inputs_through_api)
{
	static const int32_t a[1] = { 7 }, b[6] = { 1, 2, 3, 4, 5, 6 }, c[2] = { -1, -2 };
	const ert_item items[3] = {
		{ ERT_DTYPE_INT32, 0, { 0 }, a, sizeof(a) },
		{ ERT_DTYPE_INT32, 2, { 3, 2 }, b, sizeof(b) },
		{ ERT_DTYPE_INT32, 1, { 2 }, c, sizeof(c) },
	};
	ert_item bad = items[1];
	ert_model *m = model_from_graph(build_inputs(ERT_OP_SequenceAt));
	ert_session *s = session_one_thread(m);
	int64_t idx;

	REQUIRE(s);
	CHECK_EQ_INT(ert_tensor_kind(ert_session_get_input(s, 0)), ERT_VALUE_SEQUENCE);
	CHECK_EQ_INT(ert_tensor_kind(ert_session_get_input(s, 1)), ERT_VALUE_OPTIONAL);
	CHECK(ert_tensor_data(ert_session_get_input(s, 0)) == NULL);
	CHECK_EQ_INT(ert_tensor_item_count(ert_session_get_input(s, 0)), 0);
	CHECK_EQ_INT(ert_tensor_has_value(ert_session_get_input(s, 1)), 0);
	/* a sequence's handle is not the application's to write */
	CHECK_EQ_INT(ert_session_set_input(s, 0, ERT_DTYPE_UINT64, &idx, 8), ERT_STATUS_DTYPE);
	CHECK(strstr(ert_session_error(s), "ert_session_set_input_items") != NULL);
	CHECK_EQ_INT(ert_session_set_input_items(s, 2, 1, 0, NULL), ERT_STATUS_DTYPE);
	bad.dtype = ERT_DTYPE_FLOAT32;
	CHECK_EQ_INT(ert_session_set_input_items(s, 0, 1, 1, &bad), ERT_STATUS_DTYPE);
	CHECK(strstr(ert_session_error(s), "inserting a float32 tensor into a sequence of int32"));
	bad = items[1];
	bad.size = 20;
	CHECK_EQ_INT(ert_session_set_input_items(s, 0, 1, 1, &bad), ERT_STATUS_SHAPE);
	CHECK_EQ_INT(ert_session_set_input_items(s, 1, 1, 2, items), ERT_STATUS_SHAPE);
	CHECK_EQ_INT(ert_session_set_input_items(s, 0, 1, ERT_MAX_SEQUENCE_LENGTH + 1, items),
		     ERT_STATUS_SHAPE);
	CHECK_EQ_INT(ert_session_set_input_items(s, 0, 1, 3, items), ERT_OK);
	CHECK_EQ_INT(ert_session_set_input_items(s, 1, 1, 1, items + 2), ERT_OK);
	for (idx = -3; idx < 3; idx++) {
		const ert_item *want = &items[idx < 0 ? idx + 3 : idx];
		const ert_tensor *y = ert_session_get_output(s, 0);

		CHECK_EQ_INT(ert_session_set_input(s, 2, ERT_DTYPE_INT64, &idx, sizeof(idx)), ERT_OK);
		REQUIRE(ert_session_run(s) == ERT_OK);
		CHECK_EQ_INT(ert_tensor_rank(y), want->rank);
		CHECK_EQ_INT(ert_tensor_byte_size(y), want->size);
		CHECK(memcmp(ert_tensor_data(y), want->data, want->size) == 0);
		CHECK_EQ_INT(*(const uint8_t *)ert_tensor_data(ert_session_get_output(s, 1)), 1);
	}
	/* none: the optional holds nothing */
	CHECK_EQ_INT(ert_session_set_input_items(s, 1, 0, 0, NULL), ERT_OK);
	CHECK_EQ_INT(ert_tensor_has_value(ert_session_get_input(s, 1)), 0);
	REQUIRE(ert_session_run(s) == ERT_OK);
	CHECK_EQ_INT(*(const uint8_t *)ert_tensor_data(ert_session_get_output(s, 1)), 0);
	idx = 3;
	CHECK_EQ_INT(ert_session_set_input(s, 2, ERT_DTYPE_INT64, &idx, sizeof(idx)), ERT_OK);
	CHECK_EQ_INT(ert_session_run(s), ERT_STATUS_SHAPE);
	CHECK(strstr(ert_session_error(s), "SequenceAt 'at': position 3 is outside [-3, 2]"));
	ert_session_destroy(s);
	ert_model_unref(m);
}

/* A sequence where an op takes tensors: refused when planned, naming the input. */
ERT_TEST(sequence_into_tensor_op)
{
	ert_model *m = model_from_graph(build_inputs(ERT_OP_Neg));
	ert_config cfg;
	ert_session *s = NULL;

	REQUIRE(m);
	ert_config_init(&cfg);
	CHECK_EQ_INT(ert_session_create(m, &cfg, &s), ERT_STATUS_DTYPE);
	CHECK(strstr(ert_last_error(), "Neg 'at': input 0 'q' is a sequence; Neg takes tensors"));
	ert_session_destroy(s);
	ert_model_unref(m);
}

/*
 * x f32[16384] -> SequenceConstruct -> s0 -> SequenceInsert(x) -> s1 ... -> s7
 * -> SequenceLength -> n. Each step holds a copy of what it read and x once
 * more: 1 + 2 + ... + 8 = 36 copies of x's 64 KiB.
 */
static struct ert_graph *build_growing(void)
{
	struct ert_graph *g = ert_graph_create();
	const int64_t xd[1] = { 16384 };
	int32_t x, s, n;
	char name[16];

	if (!g)
		return NULL;
	g->opset = 18;
	x = ct_tensor(g, "x", ERT_DTYPE_FLOAT32, 1, xd);
	s = seq_tensor(g, "s0", ERT_VALUE_SEQUENCE, ERT_DTYPE_FLOAT32);
	n = ct_tensor(g, "n", ERT_DTYPE_INT64, 0, NULL);
	if (x < 0 || s < 0 || n < 0 || node(g, ERT_OP_SequenceConstruct, "construct", 1, &x, s) < 0)
		goto fail;
	for (int i = 1; i < 8; i++) {
		int32_t next;

		snprintf(name, sizeof(name), "s%d", i);
		next = seq_tensor(g, name, ERT_VALUE_SEQUENCE, ERT_DTYPE_FLOAT32);
		snprintf(name, sizeof(name), "ins%d", i);
		if (next < 0 ||
		    node(g, ERT_OP_SequenceInsert, name, 2, (const int32_t[]){ s, x }, next) < 0)
			goto fail;
		s = next;
	}
	if (node(g, ERT_OP_SequenceLength, "len", 1, &s, n) < 0 || !ert_graph_add_input(g, x) ||
	    !ert_graph_add_output(g, n))
		goto fail;
	return g;
fail:
	ert_graph_destroy(g);
	return NULL;
}

/* What sequences hold counts in the memory budget and in the peak bytes. */
ERT_TEST(sequences_count_in_budget)
{
	ert_model *m = model_from_graph(build_growing());
	float *xv = calloc(16384, sizeof(float));
	ert_session *s = NULL;
	ert_config cfg;
	size_t peak = 0;

	REQUIRE(m && xv);
	ert_config_init(&cfg);
	cfg.num_threads = 1;
	/* the plan and the input fit 1 MiB; the 2.25 MiB of sequence items do not */
	cfg.max_memory = 1 << 20;
	CHECK_EQ_INT(ert_session_create(m, &cfg, &s), ERT_OK);
	REQUIRE(s);
	CHECK_EQ_INT(ert_session_set_input(s, 0, ERT_DTYPE_FLOAT32, xv, 16384 * 4), ERT_OK);
	CHECK_EQ_INT(ert_session_run(s), ERT_STATUS_OUT_OF_MEMORY);
	fprintf(stderr, "over the budget: %s\n", ert_session_error(s));
	CHECK(strncmp(ert_session_error(s), "failed to run SequenceInsert 'ins", 33) == 0);
	CHECK(strstr(ert_session_error(s), "': sequence items take ") != NULL);
	CHECK(strstr(ert_session_error(s), "the session holds that is more than the memory budget of "
			 "1048576 bytes (1.0 MiB) (ert_config.max_memory)") != NULL);
	ert_session_destroy(s);
	s = NULL;

	/* with room for them they run, and the session's peak counts them */
	cfg.max_memory = 8 << 20;
	CHECK_EQ_INT(ert_session_create(m, &cfg, &s), ERT_OK);
	REQUIRE(s);
	CHECK_EQ_INT(ert_session_set_input(s, 0, ERT_DTYPE_FLOAT32, xv, 16384 * 4), ERT_OK);
	for (int run = 0; run < 2; run++) {
		CHECK_EQ_INT(ert_session_run(s), ERT_OK);
		CHECK_EQ_INT(*(const int64_t *)ert_tensor_data(ert_session_get_output(s, 0)), 8);
		/* a second run reuses the items' buffers: nothing more is counted */
		if (run == 0)
			peak = ert_session_peak_bytes(s);
		else
			CHECK_EQ_INT(ert_session_peak_bytes(s), peak);
	}
	CHECK(peak >= 36 * 65536);
	CHECK(peak < 8 << 20);
	ert_session_destroy(s);
	ert_model_unref(m);
	free(xv);
}

/* x -> SplitToSequence(split = @split) -> s -> SequenceLength -> n */
static void check_split(int *ert_test_failed_, int64_t split, int64_t len, const char *msg)
{
	struct ert_graph *g = ert_graph_create();
	const int64_t xd[1] = { len };
	float *xv = calloc((size_t)len + 1, sizeof(float));
	int32_t x, sp, s, n;
	ert_session *ss;
	ert_model *m;

	REQUIRE(g && xv);
	g->opset = 18;
	x = ct_tensor(g, "x", ERT_DTYPE_FLOAT32, 1, xd);
	sp = ct_tensor(g, "split", ERT_DTYPE_INT64, 0, NULL);
	s = seq_tensor(g, "s", ERT_VALUE_SEQUENCE, ERT_DTYPE_FLOAT32);
	n = ct_tensor(g, "n", ERT_DTYPE_INT64, 0, NULL);
	REQUIRE(x >= 0 && sp >= 0 && s >= 0 && n >= 0);
	REQUIRE(node(g, ERT_OP_SplitToSequence, "split", 2, (const int32_t[]){ x, sp }, s) >= 0);
	REQUIRE(node(g, ERT_OP_SequenceLength, "len", 1, &s, n) >= 0);
	g->tensors[x].flags |= ERT_TENSOR_INPUT;
	g->tensors[sp].flags |= ERT_TENSOR_INPUT;
	g->tensors[n].flags |= ERT_TENSOR_OUTPUT;
	REQUIRE(ert_graph_add_input(g, x) && ert_graph_add_input(g, sp) && ert_graph_add_output(g, n));
	m = model_from_graph(g);
	ss = session_one_thread(m);
	REQUIRE(ss);
	CHECK_EQ_INT(ert_session_set_input(ss, 0, ERT_DTYPE_FLOAT32, xv, (size_t)len * 4), ERT_OK);
	CHECK_EQ_INT(ert_session_set_input(ss, 1, ERT_DTYPE_INT64, &split, 8), ERT_OK);
	if (!msg) {
		CHECK_EQ_INT(ert_session_run(ss), ERT_OK);
		CHECK_EQ_INT(*(const int64_t *)ert_tensor_data(ert_session_get_output(ss, 0)),
			     (len + split - 1) / split);
	} else {
		CHECK_EQ_INT(ert_session_run(ss), ERT_STATUS_SHAPE);
		CHECK(strstr(ert_session_error(ss), msg) != NULL);
		if (!strstr(ert_session_error(ss), msg))
			fprintf(stderr, "got: %s\n", ert_session_error(ss));
	}
	ert_session_destroy(ss);
	ert_model_unref(m);
	free(xv);
}

ERT_TEST(hostile_split)
{
	check_split(ert_test_failed_, 2, 5, NULL);
	check_split(ert_test_failed_, 0, 5, "split 0: pieces of at least one");
	check_split(ert_test_failed_, -3, 5, "split -3: pieces of at least one");
	/* more pieces than a sequence may hold: refused before any is made */
	check_split(ert_test_failed_, 1, (int64_t)ERT_MAX_SEQUENCE_LENGTH + 1,
		    "1048577 pieces: a sequence holds at most 1048576");
}

/* The value kind in a file: v8 flags; in a v7 file they are damage. */
ERT_TEST(file_kinds)
{
	struct ert_graph *g = build_pipeline(), *back = NULL;
	struct ert_err err = { "" };
	void *img = NULL;
	size_t size = 0;

	REQUIRE(g);
	REQUIRE(ert_graph_toposort(g, &err) == ERT_OK);
	REQUIRE(ert_format_write_memory(g, NULL, &img, &size, &err) == ERT_OK);
	ert_graph_destroy(g);
	CHECK_EQ_INT(((uint8_t *)img)[FMT_OFF_VERSION], ERT_FORMAT_VERSION);
	CHECK_EQ_INT(ert_format_load(img, size, &back, &err), ERT_OK);
	REQUIRE(back);
	int32_t s3 = ert_graph_find_tensor(back, "s3"), x = ert_graph_find_tensor(back, "x");

	REQUIRE(s3 >= 0 && x >= 0);
	CHECK_EQ_INT(back->tensors[s3].kind, ERT_VALUE_SEQUENCE);
	CHECK_EQ_INT(back->tensors[s3].elem, ERT_DTYPE_FLOAT32);
	CHECK_EQ_INT(back->tensors[s3].dtype, ERT_DTYPE_UINT64);
	CHECK_EQ_INT(back->tensors[x].kind, ERT_VALUE_TENSOR);
	ert_graph_destroy(back);
	back = NULL;
	/* the same image called version 7: the kind bits are undefined there */
	fmt_put32((uint8_t *)img + FMT_OFF_VERSION, 7);
	fmt_put32((uint8_t *)img + FMT_OFF_CHECKSUM, 0);
	fmt_put32((uint8_t *)img + FMT_OFF_CHECKSUM,
		  fmt_checksum(img, fmt_get32((uint8_t *)img + FMT_OFF_HEADER_SIZE),
			       fmt_get32((uint8_t *)img + FMT_OFF_NSECTIONS)));
	CHECK_EQ_INT(ert_format_load(img, size, &back, &err), ERT_STATUS_INVALID_MODEL);
	CHECK(strstr(err.msg, "undefined flags 0x10") != NULL);
	CHECK(back == NULL);
	free(img);
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(pipeline_through_ert), ERT_TEST_ENTRY(pipeline_through_onnx),
	      ERT_TEST_ENTRY(inputs_through_api), ERT_TEST_ENTRY(sequence_into_tensor_op),
	      ERT_TEST_ENTRY(sequences_count_in_budget),
	      ERT_TEST_ENTRY(hostile_split), ERT_TEST_ENTRY(file_kinds))
