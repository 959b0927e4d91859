/* SPDX-License-Identifier: MIT */
/*
 * The random generators (ops/random.c, backends/cpu/ops/random.c): the
 * support and moments of what they draw, determinism by seed and node, and,
 * in a session, new values at every run from a node that is never folded
 * although its input is a constant.
 */
#include <math.h>

#include "ert-op-test.h"
#include "ert-test-model.h"
#include "ert-test.h"

#define N 20000

static double mean(const float *v, int64_t n)
{
	double s = 0;

	for (int64_t i = 0; i < n; i++)
		s += v[i];
	return s / (double)n;
}

static void uniform_node(struct one *o, float seed, bool seeded)
{
	int64_t shape[1] = { N };

	one_init(o, ERT_OP_RandomUniform, 1, 0, 1);
	ert_node_set_attr_ints(o->g, o->n, "shape", shape, 1);
	ert_node_set_attr_float(o->g, o->n, "low", 2.0f);
	ert_node_set_attr_float(o->g, o->n, "high", 5.0f);
	if (seeded)
		ert_node_set_attr_float(o->g, o->n, "seed", seed);
}

ERT_TEST(uniform)
{
	struct one a, b, c;

	uniform_node(&a, 0, false);
	uniform_node(&b, 1.0f, true);
	uniform_node(&c, 1.0f, true);
	REQUIRE(one_run(&a) == ERT_OK && one_run(&b) == ERT_OK && one_run(&c) == ERT_OK);
	CHECK_EQ_INT(a.out[0].dtype, ERT_DTYPE_FLOAT32);
	CHECK_EQ_INT(a.out[0].numel, N);
	const float *va = a.out[0].data, *vb = b.out[0].data, *vc = c.out[0].data;
	int differ = 0;

	for (int64_t i = 0; i < N; i++) {
		CHECK(va[i] >= 2.0f && va[i] <= 5.0f);
		differ += va[i] != vb[i];
	}
	CHECK_NEAR(mean(va, N), 3.5, 0.05);
	/* the same seed draws the same values; no seed, other values */
	CHECK(memcmp(vb, vc, N * sizeof(float)) == 0);
	CHECK(differ > N / 2);
	one_fini(&a);
	one_fini(&b);
	one_fini(&c);
}

ERT_TEST(normal)
{
	struct one o;
	int64_t shape[2] = { 100, N / 100 };
	double m, var = 0;

	one_init(&o, ERT_OP_RandomNormal, 1, 0, 1);
	ert_node_set_attr_ints(o.g, o.n, "shape", shape, 2);
	ert_node_set_attr_float(o.g, o.n, "mean", 1.0f);
	ert_node_set_attr_float(o.g, o.n, "scale", 2.0f);
	ert_node_set_attr_int(o.g, o.n, "dtype", ERT_DTYPE_FLOAT64);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK_EQ_INT(o.out[0].dtype, ERT_DTYPE_FLOAT64);
	CHECK_EQ_INT(o.out[0].rank, 2);
	const double *v = o.out[0].data;

	m = 0;
	for (int64_t i = 0; i < N; i++)
		m += v[i];
	m /= N;
	for (int64_t i = 0; i < N; i++)
		var += (v[i] - m) * (v[i] - m);
	CHECK_NEAR(m, 1.0, 0.06);
	CHECK_NEAR(sqrt(var / N), 2.0, 0.06);
	one_fini(&o);
}

ERT_TEST(bernoulli)
{
	static float p[N];
	int64_t dims[1] = { N };
	struct one o;

	one_init(&o, ERT_OP_Bernoulli, 15, 1, 1);
	for (float q = 0; q <= 1.0f; q += 0.25f) {
		for (int64_t i = 0; i < N; i++)
			p[i] = q;
		set_in(&o, 0, ERT_DTYPE_FLOAT32, 1, dims, p);
		REQUIRE(one_run(&o) == ERT_OK);
		const float *y = o.out[0].data;

		for (int64_t i = 0; i < N; i++)
			CHECK(y[i] == 0.0f || y[i] == 1.0f);
		/* p = 0 never draws 1, p = 1 always */
		CHECK_NEAR(mean(y, N), q, q == 0 || q == 1 ? 0 : 0.015);
	}
	one_fini(&o);
}

ERT_TEST(multinomial)
{
	float logits[2] = { 0.0f, logf(3.0f) };
	int64_t dims[2] = { 1, 2 }, count = 0;
	struct one o;

	one_init(&o, ERT_OP_Multinomial, 7, 1, 1);
	ert_node_set_attr_int(o.g, o.n, "sample_size", N);
	ert_node_set_attr_int(o.g, o.n, "dtype", ERT_DTYPE_INT64);
	set_in(&o, 0, ERT_DTYPE_FLOAT32, 2, dims, logits);
	REQUIRE(one_run(&o) == ERT_OK);
	const int64_t *s = o.out[0].data;

	for (int64_t i = 0; i < N; i++) {
		CHECK(s[i] == 0 || s[i] == 1);
		count += s[i];
	}
	/* softmax(0, log 3) = (1/4, 3/4) */
	CHECK_NEAR((double)count / N, 0.75, 0.015);
	one_fini(&o);
}

/* x (constant) -> RandomUniformLike -> y: two runs of one session differ. */
ERT_TEST(session_runs_draw_anew)
{
	struct ert_graph *g = ert_graph_create();
	int64_t dims[1] = { 64 };
	struct ert_value v;
	float *ones = calloc(64, sizeof(float)), first[64];
	ert_session *s = NULL;
	ert_model *m;
	int32_t x, y;

	REQUIRE(g && ones);
	g->opset = 17;
	x = ert_graph_add_tensor(g, "x", ERT_DTYPE_FLOAT32, 1, dims);
	y = ert_graph_add_tensor(g, "y", ERT_DTYPE_FLOAT32, -1, NULL);
	memset(&v, 0, sizeof(v));
	ert_value_set_shape(&v, ERT_DTYPE_FLOAT32, 1, dims);
	ert_value_finish(&v);
	v.data = ones;
	ert_tensor_make_const(g, x, &v);
	ert_graph_add_node(g, ERT_OP_RandomUniformLike, "rng", 1, &x, 1, &y);
	ert_graph_add_output(g, y);
	m = model_from_graph(g);
	REQUIRE(m);
	REQUIRE(ert_session_create(m, NULL, &s) == ERT_OK);
	REQUIRE(ert_session_run(s) == ERT_OK);
	memcpy(first, ert_tensor_data(ert_session_get_output(s, 0)), sizeof(first));
	REQUIRE(ert_session_run(s) == ERT_OK);
	CHECK(memcmp(first, ert_tensor_data(ert_session_get_output(s, 0)), sizeof(first)) != 0);
	ert_session_destroy(s);
	/* a new session starts the same sequence again */
	REQUIRE(ert_session_create(m, NULL, &s) == ERT_OK);
	REQUIRE(ert_session_run(s) == ERT_OK);
	CHECK(memcmp(first, ert_tensor_data(ert_session_get_output(s, 0)), sizeof(first)) == 0);
	ert_session_destroy(s);
	ert_model_unref(m);
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(uniform), ERT_TEST_ENTRY(normal), ERT_TEST_ENTRY(bernoulli),
	      ERT_TEST_ENTRY(multinomial), ERT_TEST_ENTRY(session_runs_draw_anew))
