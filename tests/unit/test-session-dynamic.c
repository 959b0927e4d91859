/* SPDX-License-Identifier: MIT */
/*
 * Data-dependent shapes through sessions (docs/dynamic-shapes.md): nodes
 * after NonZero, Compress, Unique, NonMaxSuppression and a TopK of run-time K
 * planned as continuations; shapes that change from run to run, zero of
 * them, a chain of two data-dependent ops, a continuation keyed by a value
 * shape inference reads; outputs over the memory budget refused with the
 * node named; a skipped data-dependent step; and runs whose shapes an
 * earlier run had seen allocating nothing (malloc is interposed, as in
 * test-run-noalloc; under ASan only the results are checked).
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "edgert.h"
#include "ert-graph.h"
#include "ert-test-model.h"
#include "ert-test.h"

#include "ert-test-malloc-count.h"

#define F32 ERT_DTYPE_FLOAT32
#define I64 ERT_DTYPE_INT64

static int32_t tensor(struct ert_graph *g, const char *name, ert_dtype dt, int32_t rank,
		      const int64_t *dims)
{
	return ert_graph_add_tensor(g, name, dt, rank, dims);
}

static int32_t input(struct ert_graph *g, const char *name, ert_dtype dt, int32_t rank,
		     const int64_t *dims)
{
	int32_t t = tensor(g, name, dt, rank, dims);

	ert_graph_add_input(g, t);
	return t;
}

static int32_t value(struct ert_graph *g, const char *name)
{
	return tensor(g, name, F32, -1, NULL);
}

static struct ert_node *node(struct ert_graph *g, enum ert_op op, const char *name, uint32_t n_in,
			     const int32_t *in, uint32_t n_out, const int32_t *out)
{
	int32_t i = ert_graph_add_node(g, op, name, n_in, in, n_out, out);

	g->nodes[i].opset = 17;
	return &g->nodes[i];
}

static ert_session *session_of(struct ert_graph *g, uint64_t max_memory)
{
	ert_model *m;
	ert_session *s = NULL;
	ert_config cfg;

	g->opset = 17;
	m = model_from_graph(g);
	if (!m)
		return NULL;
	ert_config_init(&cfg);
	cfg.max_memory = max_memory;
	if (ert_session_create(m, &cfg, &s) != ERT_OK)
		fprintf(stderr, "session: %s\n", ert_last_error());
	ert_model_unref(m);
	return s;
}

static ert_status run(ert_session *s)
{
	ert_status st = ert_session_run(s);

	if (st != ERT_OK)
		fprintf(stderr, "  run: %s\n", ert_session_error(s));
	return st;
}

static bool shape_is(const ert_tensor *t, uint32_t rank, const int64_t *dims)
{
	if (ert_tensor_rank(t) != rank)
		return false;
	for (uint32_t d = 0; d < rank; d++)
		if (ert_tensor_dim(t, d) != dims[d])
			return false;
	return true;
}

/*
 * x[3, 4] -> NonZero -> Transpose = coords [n, 2]; Shape(coords)[0] = count;
 * Relu(x) after them in the graph's order: everything but NonZero is planned
 * at run time, for each n.
 */
static struct ert_graph *nonzero_graph(void)
{
	struct ert_graph *g = ert_graph_create();
	int32_t x = input(g, "x", F32, 2, (int64_t[]){ 3, 4 });
	int32_t nz = value(g, "nz"), co = value(g, "coords"), sh = value(g, "shape");
	int32_t zero = tensor(g, "zero", I64, 0, NULL), cnt = value(g, "count"), r = value(g, "relu");
	int64_t *z = calloc(1, sizeof(int64_t));

	ert_graph_set_const(g, zero, z, sizeof(int64_t), true);
	node(g, ERT_OP_NonZero, "nonzero", 1, &x, 1, &nz);
	ert_node_set_attr_ints(g, node(g, ERT_OP_Transpose, "t", 1, &nz, 1, &co), "perm",
			       (int64_t[]){ 1, 0 }, 2);
	node(g, ERT_OP_Shape, "shape", 1, &co, 1, &sh);
	node(g, ERT_OP_Gather, "count", 2, (int32_t[]){ sh, zero }, 1, &cnt);
	node(g, ERT_OP_Relu, "relu", 1, &x, 1, &r);
	ert_graph_add_output(g, co);
	ert_graph_add_output(g, cnt);
	ert_graph_add_output(g, r);
	return g;
}

static void check_nonzero_run(int *ert_test_failed_, ert_session *s, const float *x)
{
	int64_t want[12][2], n = 0;
	float *in = ert_tensor_data(ert_session_get_input(s, 0));

	memcpy(in, x, 12 * sizeof(float));
	for (int64_t i = 0; i < 12; i++) {
		if (x[i] != 0.0f) {
			want[n][0] = i / 4;
			want[n][1] = i % 4;
			n++;
		}
	}
	REQUIRE(run(s) == ERT_OK);
	const ert_tensor *co = ert_session_get_output(s, 0), *cnt = ert_session_get_output(s, 1);
	const ert_tensor *r = ert_session_get_output(s, 2);

	CHECK(shape_is(co, 2, (int64_t[]){ n, 2 }));
	CHECK_EQ_INT(ert_tensor_dtype(co), I64);
	if (n)
		CHECK(memcmp(ert_tensor_data(co), want, (size_t)n * 2 * sizeof(int64_t)) == 0);
	CHECK_EQ_INT(*(const int64_t *)ert_tensor_data(cnt), n);
	for (int i = 0; i < 12; i++)
		CHECK_NEAR(((const float *)ert_tensor_data(r))[i], x[i] > 0 ? x[i] : 0, 0);
}

ERT_TEST(nonzero_then_continuation)
{
	static const float a[12] = { 0, 1, 0, -2, 3, 0, 0, 0, 0, 0, 5, 6 };
	static const float none[12] = { 0 };
	static const float all[12] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
	static const float b[12] = { 7, 0, 0, 0, 0, -1, 0, 0, 2, 0, 0, 3 };
	ert_session *s = session_of(nonzero_graph(), 0);

	REQUIRE(s);
	/* before any run, the coordinates' count is unknown */
	CHECK_EQ_INT(ert_tensor_dim(ert_session_get_output(s, 0), 0), -1);
	check_nonzero_run(ert_test_failed_, s, a);
	/* none at all: zero-length outputs through the ops after NonZero */
	check_nonzero_run(ert_test_failed_, s, none);
	check_nonzero_run(ert_test_failed_, s, all);
	/* back to a count seen before: the cached continuation, fresh values */
	check_nonzero_run(ert_test_failed_, s, b);
	check_nonzero_run(ert_test_failed_, s, a);
	ert_session_destroy(s);
}

ERT_TEST(runs_of_known_shapes_allocate_nothing)
{
	static const float a[12] = { 0, 1, 0, -2, 3, 0, 0, 0, 0, 0, 5, 6 };
	static const float b[12] = { 9, 9, 0, 9, 0, 0, 0, 0, 9, 0, 0, 0 };
	ert_session *s = session_of(nonzero_graph(), 0);

	REQUIRE(s);
	check_nonzero_run(ert_test_failed_, s, a);
	check_nonzero_run(ert_test_failed_, s, b);
	/* both counts (5 and 4) have their continuation now, and the buffer fits 5 */
	atomic_store(&allocations, 0);
	atomic_store(&counting, 1);
	for (int i = 0; i < 3; i++) {
		CHECK_EQ_INT(ert_session_run(s), ERT_OK);
		memcpy(ert_tensor_data(ert_session_get_input(s, 0)), i % 2 ? b : a, sizeof(a));
	}
	atomic_store(&counting, 0);
	CHECK_EQ_INT(atomic_load(&allocations), 0);
	check_nonzero_run(ert_test_failed_, s, a);
	ert_session_destroy(s);
}

/*
 * x[n] -> mask = x > 0 -> Compress(x, mask) -> Unique -> (u, counts);
 * ReduceSum(u) after: two data-dependent steps, a continuation of a
 * continuation.
 */
ERT_TEST(chained_compress_unique)
{
	struct ert_graph *g = ert_graph_create();
	int32_t x = input(g, "x", F32, 1, (int64_t[]){ 8 });
	int32_t zero = tensor(g, "zero", F32, 0, NULL), mask = value(g, "mask"), sel = value(g, "sel");
	int32_t u = value(g, "u"), idx = value(g, "idx"), inv = value(g, "inv"), cnt = value(g, "cnt");
	int32_t sum = value(g, "sum");
	float *z = calloc(1, sizeof(float));

	ert_graph_set_const(g, zero, z, sizeof(float), true);
	node(g, ERT_OP_Greater, "gt", 2, (int32_t[]){ x, zero }, 1, &mask);
	ert_node_set_attr_int(g, node(g, ERT_OP_Compress, "compress", 2, (int32_t[]){ x, mask }, 1,
				      &sel), "axis", 0);
	node(g, ERT_OP_Unique, "unique", 1, &sel, 4, (int32_t[]){ u, idx, inv, cnt });
	node(g, ERT_OP_ReduceSum, "sum", 1, &u, 1, &sum);
	ert_graph_add_output(g, u);
	ert_graph_add_output(g, cnt);
	ert_graph_add_output(g, sum);

	ert_session *s = session_of(g, 0);
	static const float in1[8] = { 3, -1, 2, 3, 0, 2, 7, 3 };   /* kept 3 2 3 2 7 3 */
	static const float in2[8] = { -1, -2, -3, 0, 0, 0, -5, -6 }; /* nothing kept */
	static const float in3[8] = { 1, 1, 1, 1, 1, 1, 1, 1 };

	REQUIRE(s);
	memcpy(ert_tensor_data(ert_session_get_input(s, 0)), in1, sizeof(in1));
	REQUIRE(run(s) == ERT_OK);
	const ert_tensor *to = ert_session_get_output(s, 0), *tc = ert_session_get_output(s, 1);
	const ert_tensor *ts = ert_session_get_output(s, 2);

	CHECK(shape_is(to, 1, (int64_t[]){ 3 }));
	CHECK(memcmp(ert_tensor_data(to), (float[]){ 2, 3, 7 }, 3 * sizeof(float)) == 0);
	CHECK(memcmp(ert_tensor_data(tc), (int64_t[]){ 2, 3, 1 }, 3 * sizeof(int64_t)) == 0);
	CHECK_NEAR(*(const float *)ert_tensor_data(ts), 12, 0);

	memcpy(ert_tensor_data(ert_session_get_input(s, 0)), in2, sizeof(in2));
	REQUIRE(run(s) == ERT_OK);
	CHECK(shape_is(to, 1, (int64_t[]){ 0 }));
	CHECK(shape_is(tc, 1, (int64_t[]){ 0 }));
	CHECK_NEAR(*(const float *)ert_tensor_data(ts), 0, 0);

	memcpy(ert_tensor_data(ert_session_get_input(s, 0)), in3, sizeof(in3));
	REQUIRE(run(s) == ERT_OK);
	CHECK(shape_is(to, 1, (int64_t[]){ 1 }));
	CHECK_EQ_INT(((const int64_t *)ert_tensor_data(tc))[0], 8);
	CHECK_NEAR(*(const float *)ert_tensor_data(ts), 1, 0);
	ert_session_destroy(s);
}

/*
 * k[m] (int64) -> Unique -> ConstantOfShape: shape inference reads Unique's
 * output, so the continuation is keyed by its bytes, not only its shape.
 */
ERT_TEST(continuation_keyed_by_value)
{
	struct ert_graph *g = ert_graph_create();
	int32_t k = input(g, "k", I64, 1, (int64_t[]){ 3 });
	int32_t u = value(g, "u"), y = value(g, "y");

	node(g, ERT_OP_Unique, "unique", 1, &k, 1, &u);
	node(g, ERT_OP_ConstantOfShape, "fill", 1, &u, 1, &y);
	ert_graph_add_output(g, y);

	ert_session *s = session_of(g, 0);
	int64_t *in;

	REQUIRE(s);
	in = ert_tensor_data(ert_session_get_input(s, 0));
	memcpy(in, (int64_t[]){ 4, 4, 4 }, 3 * sizeof(int64_t));
	REQUIRE(run(s) == ERT_OK);
	CHECK(shape_is(ert_session_get_output(s, 0), 1, (int64_t[]){ 4 }));
	/* the same shape [1] from Unique, another value: another continuation */
	memcpy(in, (int64_t[]){ 2, 2, 2 }, 3 * sizeof(int64_t));
	REQUIRE(run(s) == ERT_OK);
	CHECK(shape_is(ert_session_get_output(s, 0), 1, (int64_t[]){ 2 }));
	memcpy(in, (int64_t[]){ 3, 1, 3 }, 3 * sizeof(int64_t));
	REQUIRE(run(s) == ERT_OK);
	CHECK(shape_is(ert_session_get_output(s, 0), 2, (int64_t[]){ 1, 3 }));
	memcpy(in, (int64_t[]){ 4, 4, 4 }, 3 * sizeof(int64_t));
	REQUIRE(run(s) == ERT_OK);
	CHECK(shape_is(ert_session_get_output(s, 0), 1, (int64_t[]){ 4 }));
	ert_session_destroy(s);
}

/*
 * NonMaxSuppression whose scores all fall under the threshold: no rows;
 * Gather picks the box column of each row, Cast after it.
 */
ERT_TEST(nms_empty_selection_flows_on)
{
	struct ert_graph *g = ert_graph_create();
	int32_t boxes = input(g, "boxes", F32, 3, (int64_t[]){ 1, 3, 4 });
	int32_t scores = input(g, "scores", F32, 3, (int64_t[]){ 1, 1, 3 });
	int32_t mo = tensor(g, "max_out", I64, 1, (int64_t[]){ 1 });
	int32_t iou = tensor(g, "iou", F32, 1, (int64_t[]){ 1 });
	int32_t thr = tensor(g, "thr", F32, 1, (int64_t[]){ 1 });
	int32_t two = tensor(g, "two", I64, 0, NULL);
	int32_t sel = value(g, "sel"), col = value(g, "col"), f = value(g, "f");
	int64_t *mov = malloc(sizeof(int64_t)), *twov = malloc(sizeof(int64_t));
	float *iouv = malloc(sizeof(float)), *thrv = malloc(sizeof(float));

	*mov = 10;
	*twov = 2;
	*iouv = 0.5f;
	*thrv = 0.5f;
	ert_graph_set_const(g, mo, mov, sizeof(int64_t), true);
	ert_graph_set_const(g, two, twov, sizeof(int64_t), true);
	ert_graph_set_const(g, iou, iouv, sizeof(float), true);
	ert_graph_set_const(g, thr, thrv, sizeof(float), true);
	node(g, ERT_OP_NonMaxSuppression, "nms", 5, (int32_t[]){ boxes, scores, mo, iou, thr }, 1,
	     &sel);
	ert_node_set_attr_int(g, node(g, ERT_OP_Gather, "col", 2, (int32_t[]){ sel, two }, 1, &col),
			      "axis", 1);
	ert_node_set_attr_int(g, node(g, ERT_OP_Cast, "cast", 1, &col, 1, &f), "to", F32);
	ert_graph_add_output(g, f);

	ert_session *s = session_of(g, 0);
	static const float bx[12] = { 0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, 2, 1, 3 };

	REQUIRE(s);
	memcpy(ert_tensor_data(ert_session_get_input(s, 0)), bx, sizeof(bx));
	memcpy(ert_tensor_data(ert_session_get_input(s, 1)), (float[]){ 0.1f, 0.2f, 0.3f },
	       3 * sizeof(float));
	REQUIRE(run(s) == ERT_OK);
	CHECK(shape_is(ert_session_get_output(s, 0), 1, (int64_t[]){ 0 }));
	/* boxes 0 and 1 overlap (IoU 0.82): 1 scores higher and suppresses 0 */
	memcpy(ert_tensor_data(ert_session_get_input(s, 1)), (float[]){ 0.9f, 0.95f, 0.6f },
	       3 * sizeof(float));
	REQUIRE(run(s) == ERT_OK);
	CHECK(shape_is(ert_session_get_output(s, 0), 1, (int64_t[]){ 2 }));
	CHECK(memcmp(ert_tensor_data(ert_session_get_output(s, 0)), (float[]){ 1, 2 },
		     2 * sizeof(float)) == 0);
	ert_session_destroy(s);
}

/* TopK with K a graph input: values + 1 after it, for K = 2, 0, 4. */
ERT_TEST(topk_of_runtime_k)
{
	struct ert_graph *g = ert_graph_create();
	int32_t x = input(g, "x", F32, 2, (int64_t[]){ 2, 4 });
	int32_t k = input(g, "k", I64, 1, (int64_t[]){ 1 });
	int32_t one = tensor(g, "one", F32, 0, NULL), v = value(g, "v"), i = value(g, "i");
	int32_t y = value(g, "y");
	float *onev = malloc(sizeof(float));

	*onev = 1;
	ert_graph_set_const(g, one, onev, sizeof(float), true);
	node(g, ERT_OP_TopK, "topk", 2, (int32_t[]){ x, k }, 2, (int32_t[]){ v, i });
	node(g, ERT_OP_Add, "add", 2, (int32_t[]){ v, one }, 1, &y);
	ert_graph_add_output(g, y);
	ert_graph_add_output(g, i);

	ert_session *s = session_of(g, 0);
	static const float xv[8] = { 1, 4, 2, 3, 8, 5, 7, 6 };

	REQUIRE(s);
	memcpy(ert_tensor_data(ert_session_get_input(s, 0)), xv, sizeof(xv));
	*(int64_t *)ert_tensor_data(ert_session_get_input(s, 1)) = 2;
	REQUIRE(run(s) == ERT_OK);
	CHECK(shape_is(ert_session_get_output(s, 0), 2, (int64_t[]){ 2, 2 }));
	CHECK(memcmp(ert_tensor_data(ert_session_get_output(s, 0)), (float[]){ 5, 4, 9, 8 },
		     4 * sizeof(float)) == 0);
	CHECK(memcmp(ert_tensor_data(ert_session_get_output(s, 1)), (int64_t[]){ 1, 3, 0, 2 },
		     4 * sizeof(int64_t)) == 0);
	*(int64_t *)ert_tensor_data(ert_session_get_input(s, 1)) = 0;
	REQUIRE(run(s) == ERT_OK);
	CHECK(shape_is(ert_session_get_output(s, 0), 2, (int64_t[]){ 2, 0 }));
	*(int64_t *)ert_tensor_data(ert_session_get_input(s, 1)) = 4;
	REQUIRE(run(s) == ERT_OK);
	CHECK(shape_is(ert_session_get_output(s, 1), 2, (int64_t[]){ 2, 4 }));
	CHECK_NEAR(((const float *)ert_tensor_data(ert_session_get_output(s, 0)))[7], 6, 0);
	/* K past the axis: refused when the kernel reads it */
	*(int64_t *)ert_tensor_data(ert_session_get_input(s, 1)) = 5;
	CHECK_EQ_INT(ert_session_run(s), ERT_STATUS_INVALID_ARGUMENT);
	CHECK(strstr(ert_session_error(s), "K = 5, axis has 4 elements") != NULL);
	ert_session_destroy(s);
}

/* A data-dependent output past the memory budget: refused, the node named; smaller ones run. */
ERT_TEST(dynamic_output_over_budget)
{
	struct ert_graph *g = ert_graph_create();
	int32_t x = input(g, "x", F32, 2, (int64_t[]){ 256, 256 });
	int32_t nz = value(g, "nz");

	node(g, ERT_OP_NonZero, "nonzero", 1, &x, 1, &nz);
	ert_graph_add_output(g, nz);
	/* the input takes 256 KiB; all 65536 coordinates would take 1 MiB */
	ert_session *s = session_of(g, 768 << 10);
	float *in;

	REQUIRE(s);
	in = ert_tensor_data(ert_session_get_input(s, 0));
	for (int i = 0; i < 256 * 256; i++)
		in[i] = 1.0f;
	CHECK_EQ_INT(ert_session_run(s), ERT_STATUS_OUT_OF_MEMORY);
	CHECK(strstr(ert_session_error(s), "NonZero 'nonzero'") != NULL);
	CHECK(strstr(ert_session_error(s), "data-dependent output") != NULL);
	memset(in, 0, 256 * 256 * sizeof(float));
	in[5] = in[70000 % 65536] = 2.0f;
	REQUIRE(run(s) == ERT_OK);
	CHECK(shape_is(ert_session_get_output(s, 0), 2, (int64_t[]){ 2, 2 }));
	ert_session_destroy(s);
}

static int skip_nonzero(const ert_op_info *info, void *user)
{
	return strcmp(info->type, "NonZero") == 0;
}

/* A data-dependent step skipped by before_op: the nodes after it cannot be planned. */
ERT_TEST(skipped_dynamic_step_stops_the_run)
{
	struct ert_graph *g = nonzero_graph();
	ert_model *m = model_from_graph(g);
	ert_session *s = NULL;
	ert_config cfg;

	REQUIRE(m);
	ert_config_init(&cfg);
	cfg.before_op = skip_nonzero;
	REQUIRE(ert_session_create(m, &cfg, &s) == ERT_OK);
	CHECK_EQ_INT(ert_session_run(s), ERT_STATUS_STOPPED);
	CHECK(strstr(ert_session_error(s), "NonZero 'nonzero'") != NULL);
	ert_session_destroy(s);
	ert_model_unref(m);
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(nonzero_then_continuation),
	      ERT_TEST_ENTRY(runs_of_known_shapes_allocate_nothing),
	      ERT_TEST_ENTRY(chained_compress_unique), ERT_TEST_ENTRY(continuation_keyed_by_value),
	      ERT_TEST_ENTRY(nms_empty_selection_flows_on), ERT_TEST_ENTRY(topk_of_runtime_k),
	      ERT_TEST_ENTRY(dynamic_output_over_budget),
	      ERT_TEST_ENTRY(skipped_dynamic_step_stops_the_run))
