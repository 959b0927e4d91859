/* SPDX-License-Identifier: MIT */
/*
 * Packed weights on the CPU backend: one copy per session however many cached
 * plans use a weight, none with memory LOW, and the same outputs either way.
 */
#include <stdlib.h>
#include <unistd.h>

#include "cpu/gemm/sgemm.h"
#include "edgert.h"
#include "ert-graph.h"
#include "ert-test-model.h"
#include "ert-test.h"
#include "format/ert-format.h"
#include "session/session-impl.h"

static int32_t weight(struct ert_graph *g, const char *name, int32_t rank, const int64_t *dims,
		      uint32_t seed)
{
	int32_t t = ert_graph_add_tensor(g, name, ERT_DTYPE_FLOAT32, rank, dims);
	int64_t n = 1;

	for (int32_t i = 0; i < rank; i++)
		n *= dims[i];
	float *w = malloc((size_t)n * sizeof(float));

	for (int64_t i = 0; i < n; i++)
		w[i] = (float)((i * 7 + seed * 13) % 17) / 17.0f - 0.5f;
	ert_graph_set_const(g, t, w, (size_t)n * sizeof(float), true);
	return t;
}

static int32_t shape(struct ert_graph *g, const char *name, int64_t d0, int64_t d1, int64_t d2,
		     int64_t n)
{
	int32_t t = ert_graph_add_tensor(g, name, ERT_DTYPE_INT64, 1, &n);
	int64_t *v = malloc(3 * sizeof(*v));

	v[0] = d0;
	v[1] = d1;
	v[2] = d2;
	ert_graph_set_const(g, t, v, (size_t)n * sizeof(*v), true);
	return t;
}

static int32_t tmp(struct ert_graph *g, const char *name)
{
	return ert_graph_add_tensor(g, name, ERT_DTYPE_FLOAT32, -1, NULL);
}

/*
 * x[B,8,16,16] -> Conv 3x3 (8->16) -> Conv 3x3 group 4 -> Reshape [B,256,16]
 * -> MatMul(w3) and Neg -> MatMul(w3) (one weight, two nodes) -> Add
 * -> Reshape [B*256,32] -> Gemm(w4, transB) -> y[B*256,8].
 * Every weight is packed in NORMAL mode at any B (M = 256 * B > MC).
 */
static ert_model *packed_model(void)
{
	struct ert_graph *g = ert_graph_create();
	int64_t xd[4] = { -1, 8, 16, 16 };
	int64_t w1d[4] = { 16, 8, 3, 3 }, w2d[4] = { 16, 4, 3, 3 }, w3d[2] = { 16, 32 };
	int64_t w4d[2] = { 8, 32 }, bd = 8, pads[4] = { 1, 1, 1, 1 };
	int32_t x, c1, c2, r, nr, m1, m2, a, r2, y, n;

	g->opset = 17;
	x = ert_graph_add_tensor(g, "x", ERT_DTYPE_FLOAT32, 4, xd);
	g->tensors[x].dim_names[0] = ert_graph_strdup(g, "batch");
	ert_graph_add_input(g, x);
	c1 = tmp(g, "c1");
	c2 = tmp(g, "c2");
	r = tmp(g, "r");
	nr = tmp(g, "nr");
	m1 = tmp(g, "m1");
	m2 = tmp(g, "m2");
	a = tmp(g, "a");
	r2 = tmp(g, "r2");
	y = tmp(g, "y");

	n = ert_graph_add_node(g, ERT_OP_Conv, "conv1", 2,
			       (int32_t[]){ x, weight(g, "w1", 4, w1d, 1) }, 1, &c1);
	ert_node_set_attr_ints(g, &g->nodes[n], "pads", pads, 4);
	n = ert_graph_add_node(g, ERT_OP_Conv, "conv2", 2,
			       (int32_t[]){ c1, weight(g, "w2", 4, w2d, 2) }, 1, &c2);
	ert_node_set_attr_ints(g, &g->nodes[n], "pads", pads, 4);
	ert_node_set_attr_int(g, &g->nodes[n], "group", 4);
	ert_graph_add_node(g, ERT_OP_Reshape, "reshape1", 2,
			   (int32_t[]){ c2, shape(g, "s1", -1, 256, 16, 3) }, 1, &r);
	ert_graph_add_node(g, ERT_OP_Neg, "neg", 1, &r, 1, &nr);

	int32_t w3 = weight(g, "w3", 2, w3d, 3);

	ert_graph_add_node(g, ERT_OP_MatMul, "matmul1", 2, (int32_t[]){ r, w3 }, 1, &m1);
	ert_graph_add_node(g, ERT_OP_MatMul, "matmul2", 2, (int32_t[]){ nr, w3 }, 1, &m2);
	ert_graph_add_node(g, ERT_OP_Add, "add", 2, (int32_t[]){ m1, m2 }, 1, &a);
	ert_graph_add_node(g, ERT_OP_Reshape, "reshape2", 2,
			   (int32_t[]){ a, shape(g, "s2", -1, 32, 0, 2) }, 1, &r2);
	n = ert_graph_add_node(g, ERT_OP_Gemm, "gemm", 3,
			       (int32_t[]){ r2, weight(g, "w4", 2, w4d, 4),
					    weight(g, "b4", 1, &bd, 5) }, 1, &y);
	ert_node_set_attr_int(g, &g->nodes[n], "transB", 1);
	ert_graph_add_output(g, y);
	return model_from_graph(g);
}

/*
 * What the cache should hold: each weight once, in the layout the GEMM kernel
 * of the session's level packs (sessions here take the default level).
 */
static size_t expected_resident_bytes(void)
{
	struct ert_err err;
	enum ert_cpu_isa isa = ERT_ISA_SCALAR;
	const struct ert_sgemm_kernel *kern;

	if (ert_cpu_isa_choose(0, &isa, &err) != ERT_OK)
		isa = ERT_ISA_SCALAR;
	kern = ert_sgemm_kernel_for(isa);
	size_t floats[4] = {
		ert_sgemm_packed_a_floats(16, 8 * 9, kern->mr),          /* conv1 */
		4 * ert_sgemm_packed_a_floats(4, 4 * 9, kern->mr),       /* conv2, per group */
		ert_sgemm_packed_b_floats(16, 32, kern->nr),             /* w3, both MatMuls */
		ert_sgemm_packed_b_floats(32, 8, kern->nr),              /* gemm */
	};
	size_t bytes = 0;

	for (int i = 0; i < 4; i++)
		bytes += ((floats[i] * sizeof(float)) | 63) + 1;
	return bytes;
}

static size_t resident(ert_session *s)
{
	size_t bytes = 0;

	for (uint32_t b = 0; b < s->n_backends; b++)
		bytes += ert_cpu_backend_resident_bytes(s->backends[b]);
	return bytes;
}

static uint32_t cached_plans(const ert_session *s)
{
	uint32_t n = 0;

	for (const struct ert_plan *p = s->plan; p; p = p->next)
		n++;
	return n;
}

/* Resize to @batch, fill every sample with a pattern of its index, run; output or NULL. */
static const float *run_batch(ert_session *s, int64_t batch)
{
	int64_t dims[4] = { batch, 8, 16, 16 };
	ert_tensor *in;

	if (ert_session_resize_input(s, 0, 4, dims) != ERT_OK)
		return NULL;
	/* The first run after a resize plans; it is also what makes the buffer valid. */
	if (ert_session_run(s) != ERT_OK)
		return NULL;
	in = ert_session_get_input(s, 0);
	float *xd = ert_tensor_data(in);
	size_t per = ert_tensor_element_count(in) / (size_t)batch;

	for (int64_t b = 0; b < batch; b++)
		for (size_t i = 0; i < per; i++)
			xd[(size_t)b * per + i] = (float)((i * 5 + (size_t)b * 3) % 23) / 23.0f - 0.5f;
	if (ert_session_run(s) != ERT_OK)
		return NULL;
	return ert_tensor_data(ert_session_get_output(s, 0));
}

static ert_session *session(ert_model *m, ert_level memory)
{
	ert_session *s = NULL;
	ert_config cfg;

	ert_config_init(&cfg);
	cfg.memory = memory;
	cfg.num_threads = 2;
	if (ert_session_create(m, &cfg, &s) != ERT_OK)
		fprintf(stderr, "cannot create session: %s\n", ert_last_error());
	return s;
}

enum { OUT_PER_SAMPLE = 256 * 8 };

ERT_TEST(packed_once_across_plans)
{
	ert_model *m = packed_model();
	ert_session *s = m ? session(m, ERT_LEVEL_NORMAL) : NULL;
	float first[OUT_PER_SAMPLE];
	const float *y;

	REQUIRE(s);
	y = run_batch(s, 1);
	REQUIRE(y);
	memcpy(first, y, sizeof(first));
	size_t one_plan = resident(s);

	CHECK_EQ_INT(one_plan, expected_resident_bytes());
	/* the report of what the session holds counts the packed copies */
	size_t inputs = 0;

	for (uint32_t k = 0; k < s->model->graph->n_inputs; k++)
		inputs += s->in_caps[k];
	CHECK_EQ_INT(ert_session_peak_bytes(s), inputs + s->plan->peak_bytes + one_plan);
	y = run_batch(s, 2);
	REQUIRE(y);
	CHECK_EQ_INT(cached_plans(s), 2);
	/* The second plan packed nothing: it found every weight in the cache. */
	CHECK_EQ_INT(resident(s), one_plan);
	for (int i = 0; i < OUT_PER_SAMPLE; i++)
		CHECK_NEAR(y[i], first[i], 1e-5);
	/* More shapes than the plan cache holds: evicted plans drop only their references. */
	for (int64_t b = 3; b <= 6; b++)
		REQUIRE(run_batch(s, b));
	CHECK_EQ_INT(cached_plans(s), ERT_PLAN_CACHE_MAX);
	CHECK_EQ_INT(resident(s), one_plan);
	y = run_batch(s, 1);
	REQUIRE(y);
	for (int i = 0; i < OUT_PER_SAMPLE; i++)
		CHECK_NEAR(y[i], first[i], 1e-5);
	ert_session_destroy(s);
	ert_model_unref(m);
}

/* Two sessions on one model, at memory levels @la and @lb. */
struct two {
	ert_model *m;
	ert_session *a, *b;
};

static bool two_open(struct two *t, ert_level la, ert_level lb)
{
	t->m = packed_model();
	t->a = t->m ? session(t->m, la) : NULL;
	t->b = t->m ? session(t->m, lb) : NULL;
	return t->a && t->b;
}

static void two_close(struct two *t)
{
	ert_session_destroy(t->a);
	ert_session_destroy(t->b);
	ert_model_unref(t->m);
}

ERT_TEST(memory_low_packs_nothing)
{
	struct two t;

	REQUIRE(two_open(&t, ERT_LEVEL_NORMAL, ERT_LEVEL_LOW));
	for (int64_t b = 1; b <= 3; b++) {
		const float *yn = run_batch(t.a, b), *yl = run_batch(t.b, b);

		REQUIRE(yn && yl);
		CHECK(resident(t.a) > 0);
		CHECK_EQ_INT(resident(t.b), 0);
		for (int64_t i = 0; i < b * OUT_PER_SAMPLE; i++)
			CHECK_NEAR(yl[i], yn[i], 1e-5 * (1.0 + fabs(yn[i])));
	}
	two_close(&t);
}

ERT_TEST(sessions_do_not_share)
{
	struct two t;

	REQUIRE(two_open(&t, ERT_LEVEL_NORMAL, ERT_LEVEL_NORMAL));
	REQUIRE(run_batch(t.a, 2) && run_batch(t.b, 1));
	CHECK_EQ_INT(resident(t.a), expected_resident_bytes());
	CHECK_EQ_INT(resident(t.b), expected_resident_bytes());
	/* No backend, nothing held. */
	CHECK_EQ_INT(ert_cpu_backend_resident_bytes(NULL), 0);
	ert_session_destroy(t.a);
	t.a = NULL;
	CHECK_EQ_INT(resident(t.b), expected_resident_bytes());
	two_close(&t);
}

/* Anonymous resident memory of this process (heap, not file mappings), in bytes. */
static long long rss_anon(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "RssAnon: %lld", &kb) == 1)
			break;
	fclose(f);
	return kb * 1024;
}

/* x[1,512,4,4] -> Conv 3x3 (512->1024): 18 MiB of weights, little else. */
static ert_model *big_weights_model(const char *path, size_t *weight_bytes)
{
	struct ert_graph *g = ert_graph_create();
	int64_t xd[4] = { 1, 512, 4, 4 }, wd[4] = { 1024, 512, 3, 3 }, pads[4] = { 1, 1, 1, 1 };
	struct ert_err err = { "" };
	ert_model *m = NULL;
	char msg[256];
	int32_t x, y, n;

	g->opset = 17;
	x = ert_graph_add_tensor(g, "x", ERT_DTYPE_FLOAT32, 4, xd);
	ert_graph_add_input(g, x);
	y = tmp(g, "y");
	n = ert_graph_add_node(g, ERT_OP_Conv, "conv", 2, (int32_t[]){ x, weight(g, "w", 4, wd, 6) },
			       1, &y);
	ert_node_set_attr_ints(g, &g->nodes[n], "pads", pads, 4);
	ert_graph_add_output(g, y);
	*weight_bytes = 1024 * 512 * 9 * sizeof(float);
	if (ert_graph_toposort(g, &err) != ERT_OK ||
	    ert_format_write_file(g, NULL, path, &err) != ERT_OK)
		fprintf(stderr, "cannot write test model: %s\n", err.msg);
	else if (ert_model_load_file(path, &m, msg, sizeof(msg)) != ERT_OK)
		fprintf(stderr, "cannot load test model: %s\n", msg);
	ert_graph_destroy(g);
	return m;
}

/*
 * The point of LOW: a mapped model's weights stay file-backed. A session and a
 * run add no weight-sized anonymous memory, where NORMAL adds the packed copy.
 */
ERT_TEST(memory_low_adds_no_anonymous_copy)
{
	char path[] = "/tmp/ert-test-packed-XXXXXX";
	int fd = mkstemp(path);
	size_t wbytes = 0;
	ert_model *m;

	REQUIRE(fd >= 0);
	close(fd);
	m = big_weights_model(path, &wbytes);
	unlink(path);       /* the mapping keeps the file */
	REQUIRE(m);
	for (int low = 1; low >= 0; low--) {
		long long before = rss_anon();
		ert_session *s = session(m, low ? ERT_LEVEL_LOW : ERT_LEVEL_NORMAL);

		REQUIRE(s);
		REQUIRE(ert_session_run(s) == ERT_OK);
		long long grown = rss_anon() - before;

		REQUIRE(before > 0);
		if (low) {
			CHECK(grown < (long long)wbytes / 4);
			CHECK_EQ_INT(resident(s), 0);
		} else {
			CHECK(grown >= (long long)wbytes * 9 / 10);
			CHECK(resident(s) >= wbytes);
		}
		ert_session_destroy(s);
	}
	ert_model_unref(m);
}

int main(int argc, char **argv)
{
	static const struct ert_test_case cases[] = {
		ERT_TEST_ENTRY(packed_once_across_plans),
		ERT_TEST_ENTRY(memory_low_packs_nothing),
		ERT_TEST_ENTRY(sessions_do_not_share),
		ERT_TEST_ENTRY(memory_low_adds_no_anonymous_copy),
	};

	return ert_test_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
}
