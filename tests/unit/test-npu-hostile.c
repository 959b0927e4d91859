/* SPDX-License-Identifier: MIT */
/*
 * An int8 model whose constant bytes are arbitrary runs in bounded time on
 * the NPU simulator (issue 14): the command stream's work is bounded by its
 * shapes, not by the data in its buffers.
 *
 * The model (two QLinearConv, an int8 MaxPool, a QGemm; the fixed-point
 * rule, so all on the NPU) is built once with sane weights, then again with
 * the same shapes and, per seed:
 * - every byte of its int8 weights and int32 biases random: it must stay on
 *   the NPU, the simulator must execute exactly the jobs and work units of
 *   the sane model (enpu_cs_validate()'s count, which bounds the executor),
 *   and the output must equal the CPU's byte for byte;
 * - every byte of every constant random, scales and zero points too (NaN,
 *   infinities, denormals, huge values; the scales' signs cleared, or the
 *   first negative one would end every case): the session must be refused with a
 *   message (HOSTILE_VERBOSE=1 prints them) or run, wherever the planner
 *   puts each op; and every int byte random with every scale a random
 *   positive one (2^-24 to 2^8): some run, and then give the CPU's bytes.
 * Either way a run may not take more than a few times the sane one; that
 * bound is loose on purpose (a shared machine, the sanitizers): what it
 * catches is a run that is stuck or data-driven.
 *
 * test-npu-hostile --seeds DIR writes the sane model as DIR/npu-int8.ert and
 * .onnx (the fuzzers' int8 seeds).
 */
#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "edgert.h"
#include "ert-graph.h"
#include "ert-test-model.h"
#include "ert-test-onnx-write.h"
#include "ert-test-qgraph.h"
#include "ert-test.h"
#include "npu/npu-device.h"
#include "npu/npu-impl.h"
#include "session/session-impl.h"

enum corrupt { SANE, WEIGHTS, EVERYTHING, SCALES };

/* The model's graph; its constants' bytes replaced as @how says (from @seed). */
static struct ert_graph *build_graph(enum corrupt how, uint64_t seed)
{
	struct qb b = qb_begin(77);
	int64_t xd[4] = { 1, 16, 20, 20 };
	struct qt x = qb_input(&b, "x", 4, xd);
	const struct conv_spec c1 = { .oc = 32, .kh = 3, .kw = 3, .pads = { 1, 1, 1, 1 },
				      .per_channel = true, .bias = true };
	const struct conv_spec c2 = { .oc = 16, .kh = 1, .kw = 1, .stride = { 2, 2 },
				      .bias = true };
	const struct pool_spec ps = { .kh = 2, .kw = 2, .stride = { 2, 2 } };
	struct qt y = q_conv(&b, "npu:conv1", x, &c1);

	y = q_conv(&b, "npu:conv2", y, &c2);
	y = q_pool(&b, "npu:pool", y, &ps, true);
	y = mv_flatten(&b, "flatten", y);
	y = q_gemm(&b, "npu:fc", y, 10, true, true, 1, 0);
	qb_output(&b, y.t);

	for (uint32_t t = 0; how != SANE && t < b.g->n_tensors; t++) {
		struct ert_tensor *c = &b.g->tensors[t];
		bool weight = (c->dtype == ERT_DTYPE_INT8 && c->nbytes > 1) ||
			      c->dtype == ERT_DTYPE_INT32;

		if (!(c->flags & ERT_TENSOR_CONST) || !c->nbytes || (how == WEIGHTS && !weight))
			continue;
		/* the builder's constants are owned: write in place */
		for (size_t i = 0; i < c->nbytes; i++)
			((uint8_t *)c->data)[i] = (uint8_t)rnd(&seed);
		/* floats' signs cleared: a negative scale stops planning at once */
		for (size_t i = 3; c->dtype == ERT_DTYPE_FLOAT32 && i < c->nbytes; i += 4)
			((uint8_t *)c->data)[i] &= 0x7f;
		/* SCALES: any scale a quantiser could give, 2^-24 to 2^8 */
		for (size_t i = 0; how == SCALES && c->dtype == ERT_DTYPE_FLOAT32 && i < c->nbytes;
		     i += 4) {
			float f = ldexpf(1.0f + (float)(rnd(&seed) >> 41) / (float)(1 << 23),
					 (int)(rnd(&seed) % 33) - 24);

			memcpy((uint8_t *)c->data + i, &f, 4);
		}
	}
	return b.g;
}

static ert_model *build(enum corrupt how, uint64_t seed)
{
	return model_from_graph(build_graph(how, seed));
}

/* The sane model as DIR/npu-int8.ert and .onnx: seeds for the fuzzers. */
static int write_seeds(const char *dir)
{
	struct ert_graph *g = build_graph(SANE, 0);
	struct ert_err err = { "" };
	void *img = NULL;
	uint8_t *onnx = NULL;
	size_t n = 0, no = ert_test_graph_to_onnx(g, &onnx);
	char path[512];
	int rc = 1;
	FILE *f;

	if (ert_graph_toposort(g, &err) == ERT_OK &&
	    ert_format_write_memory(g, NULL, &img, &n, &err) == ERT_OK && no) {
		snprintf(path, sizeof(path), "%s/npu-int8.ert", dir);
		f = fopen(path, "wb");
		rc = !f || fwrite(img, 1, n, f) != n;
		if (f)
			fclose(f);
		snprintf(path, sizeof(path), "%s/npu-int8.onnx", dir);
		f = fopen(path, "wb");
		rc |= !f || fwrite(onnx, 1, no, f) != no;
		if (f)
			fclose(f);
	}
	free(img);
	free(onnx);
	ert_graph_destroy(g);
	return rc;
}

static ert_session *session(ert_model *m, bool npu, ert_status *st)
{
	ert_session *s = NULL;
	ert_config cfg;

	ert_config_init(&cfg);
	cfg.num_threads = 1;
	if (npu) {
		cfg.backends[0] = ERT_BACKEND_NPU;
		cfg.backends[1] = ERT_BACKEND_CPU;
		cfg.num_backends = 2;
	}
	*st = ert_session_create(m, &cfg, &s);
	return s;
}

static struct npu_sim_stats sim_stats(ert_session *s)
{
	struct npu_sim_stats st = { 0, 0 };

	for (uint32_t b = 0; b < s->n_backends; b++)
		if (!strcmp(s->backends[b]->ops->name, "npu"))
			npu_dev_sim_stats(((const struct ert_npu *)s->backends[b]->ctx)->dev, &st);
	return st;
}

struct placement {
	int npu, off_npu;
};

static void count_step(const struct ert_node *node, const struct ert_value *const *in,
		       uint32_t n_in, const struct ert_value *const *out, uint32_t n_out,
		       const char *backend, void *user)
{
	struct placement *pl = user;

	if (strncmp(node->name, "npu:", 4))
		return;
	if (!strcmp(backend, "npu"))
		pl->npu++;
	else
		pl->off_npu++;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void fill_input(ert_session *s)
{
	ert_tensor *t = ert_session_get_input(s, 0);
	int8_t *p = ert_tensor_data(t);
	uint64_t seed = 5;

	for (size_t i = 0; i < ert_tensor_element_count(t); i++)
		p[i] = (int8_t)rnd(&seed);
}

/* Run @s once: its time in seconds (negative when the run failed). */
static double timed_run(ert_session *s, ert_status *st)
{
	double t0;

	fill_input(s);
	t0 = now();
	*st = ert_session_run(s);
	return now() - t0;
}

/* The longest a run may take given the sane model's run: loose, see the top. */
static double bound(double sane)
{
	return 10.0 * sane + 2.0;
}

struct sane {
	struct npu_sim_stats per_run;
	double secs;
	int npu_steps;
};

static void run_sane(int *ert_test_failed_, struct sane *out)
{
	ert_model *m = build(SANE, 0);
	struct npu_sim_stats a, b;
	struct placement pl = { 0, 0 };
	ert_session *s;
	ert_status st;

	REQUIRE(m);
	s = session(m, true, &st);
	CHECK_EQ_INT(st, ERT_OK);
	if (s) {
		CHECK_EQ_INT(ert_session_visit_steps(s, count_step, &pl), ERT_OK);
		CHECK_EQ_INT(pl.off_npu, 0);
		CHECK_EQ_INT(pl.npu, 4);
		timed_run(s, &st); /* warm */
		CHECK_EQ_INT(st, ERT_OK);
		a = sim_stats(s);
		out->secs = timed_run(s, &st);
		CHECK_EQ_INT(st, ERT_OK);
		b = sim_stats(s);
		out->per_run.jobs = b.jobs - a.jobs;
		out->per_run.work = b.work - a.work;
		out->npu_steps = pl.npu;
		CHECK(out->per_run.jobs > 0 && out->per_run.work > 0);
		printf("sane model: %llu jobs, %llu work units a run, %.4f s\n",
		       (unsigned long long)out->per_run.jobs,
		       (unsigned long long)out->per_run.work, out->secs);
	}
	ert_session_destroy(s);
	ert_model_unref(m);
}

ERT_TEST(arbitrary_weights_same_work)
{
	struct sane sane = { { 0, 0 }, 0, 0 };

	run_sane(ert_test_failed_, &sane);
	REQUIRE(!*ert_test_failed_);
	for (uint64_t seed = 1; seed <= 8; seed++) {
		ert_model *m = build(WEIGHTS, seed);
		struct placement pl = { 0, 0 };
		struct npu_sim_stats a, b;
		ert_session *s, *ref;
		ert_status st, rst;
		double secs;

		REQUIRE(m);
		s = session(m, true, &st);
		ref = session(m, false, &rst);
		CHECK_EQ_INT(st, ERT_OK);
		CHECK_EQ_INT(rst, ERT_OK);
		if (s && ref) {
			CHECK_EQ_INT(ert_session_visit_steps(s, count_step, &pl), ERT_OK);
			CHECK_EQ_INT(pl.npu, sane.npu_steps);
			CHECK_EQ_INT(pl.off_npu, 0);
			a = sim_stats(s);
			secs = timed_run(s, &st);
			b = sim_stats(s);
			CHECK_EQ_INT(st, ERT_OK);
			CHECK_EQ_INT(b.jobs - a.jobs, sane.per_run.jobs);
			CHECK_EQ_INT(b.work - a.work, sane.per_run.work);
			if (secs > bound(sane.secs))
				fprintf(stderr, "seed %llu: %.3f s, the sane model %.3f s\n",
					(unsigned long long)seed, secs, sane.secs);
			CHECK(secs <= bound(sane.secs));
			timed_run(ref, &rst);
			CHECK_EQ_INT(rst, ERT_OK);
			const ert_tensor *y = ert_session_get_output(s, 0);
			const ert_tensor *r = ert_session_get_output(ref, 0);

			REQUIRE(y && r && ert_tensor_byte_size(y) == ert_tensor_byte_size(r));
			CHECK(memcmp(ert_tensor_data(y), ert_tensor_data(r), ert_tensor_byte_size(r)) == 0);
		}
		ert_session_destroy(s);
		ert_session_destroy(ref);
		ert_model_unref(m);
	}
}

/*
 * Sixteen models of @how: each refused with a message or run within the
 * bound; one that runs on {npu, cpu} gives the CPU's bytes.
 */
static void hostile_constants(int *ert_test_failed_, enum corrupt how, int *ran_out)
{
	struct sane sane = { { 0, 0 }, 0, 0 };
	int ran = 0, refused = 0;

	run_sane(ert_test_failed_, &sane);
	REQUIRE(!*ert_test_failed_);
	for (uint64_t seed = 1; seed <= 16; seed++) {
		ert_model *m = build(how, seed);
		ert_session *s, *ref;
		ert_status st, rst;
		double secs;

		/* the builder's graph still loads: constants' sizes did not change */
		REQUIRE(m);
		s = session(m, true, &st);
		if (!s) {
			if (getenv("HOSTILE_VERBOSE"))
				printf("seed %llu: %s\n", (unsigned long long)seed, ert_last_error());
			CHECK(ert_last_error()[0] != '\0');
			refused++;
			ert_model_unref(m);
			continue;
		}
		secs = timed_run(s, &st);
		if (st != ERT_OK)
			CHECK(ert_session_error(s)[0] != '\0');
		ran += st == ERT_OK;
		refused += st != ERT_OK;
		if (secs > bound(sane.secs))
			fprintf(stderr, "seed %llu: %.3f s, the sane model %.3f s\n",
				(unsigned long long)seed, secs, sane.secs);
		CHECK(secs <= bound(sane.secs));
		ref = st == ERT_OK ? session(m, false, &rst) : NULL;
		if (ref) {
			timed_run(ref, &rst);
			CHECK_EQ_INT(rst, ERT_OK);
			const ert_tensor *y = ert_session_get_output(s, 0);
			const ert_tensor *r = ert_session_get_output(ref, 0);

			CHECK(y && r && ert_tensor_byte_size(y) == ert_tensor_byte_size(r) &&
			      !memcmp(ert_tensor_data(y), ert_tensor_data(r), ert_tensor_byte_size(r)));
		}
		ert_session_destroy(ref);
		ert_session_destroy(s);
		ert_model_unref(m);
	}
	CHECK_EQ_INT(ran + refused, 16);
	printf("%s: %d of 16 ran, %d refused with a message\n",
	       how == SCALES ? "random bytes, random positive scales" : "every constant byte random",
	       ran, refused);
	*ran_out = ran;
}

ERT_TEST(arbitrary_constants_bounded)
{
	int ran;

	hostile_constants(ert_test_failed_, EVERYTHING, &ran);
}

ERT_TEST(arbitrary_scales_bounded)
{
	int ran = 0;

	hostile_constants(ert_test_failed_, SCALES, &ran);
	/* some must get past planning, or this would test only the refusals */
	CHECK(ran > 0);
}

/*
 * A Slice on the NPU whose steps are INT64_MAX on its length-1 axes (a step
 * that never steps: the lowering multiplied it into a stride).
 */
ERT_TEST(slice_huge_steps)
{
	struct qb b = qb_begin(9);
	int64_t xd[4] = { 1, 16, 20, 20 };
	struct qt x = qb_input(&b, "x", 4, xd);
	const struct conv_spec c1 = { .oc = 32, .kh = 3, .kw = 3, .pads = { 1, 1, 1, 1 },
				      .bias = true };
	struct qt y = q_conv(&b, "npu:conv", x, &c1);
	const int64_t starts[4] = { 0, 0, 3, 0 }, ends[4] = { 1, 32, 4, 20 };
	const int64_t axes[4] = { 0, 1, 2, 3 }, steps[4] = { INT64_MAX, 1, INT64_MAX, 1 };
	int32_t in[5] = { y.t, qb_ints(&b, 4, starts), qb_ints(&b, 4, ends), qb_ints(&b, 4, axes),
			  qb_ints(&b, 4, steps) };
	int32_t out = qb_value(&b, "npu:slice");
	struct placement pl = { 0, 0 };
	ert_model *m;
	ert_session *s, *ref;
	ert_status st, rst;

	qb_node(&b, ERT_OP_Slice, "npu:slice", 5, in, out);
	qb_output(&b, out);
	m = model_from_graph(b.g);
	REQUIRE(m);
	s = session(m, true, &st);
	ref = session(m, false, &rst);
	CHECK_EQ_INT(st, ERT_OK);
	CHECK_EQ_INT(rst, ERT_OK);
	if (s && ref) {
		CHECK_EQ_INT(ert_session_visit_steps(s, count_step, &pl), ERT_OK);
		CHECK_EQ_INT(pl.npu, 2);
		timed_run(s, &st);
		timed_run(ref, &rst);
		CHECK_EQ_INT(st, ERT_OK);
		CHECK_EQ_INT(rst, ERT_OK);
		const ert_tensor *a = ert_session_get_output(s, 0), *r = ert_session_get_output(ref, 0);

		REQUIRE(a && r && ert_tensor_byte_size(r) == 32 * 20);
		CHECK(ert_tensor_byte_size(a) == ert_tensor_byte_size(r) &&
		      !memcmp(ert_tensor_data(a), ert_tensor_data(r), ert_tensor_byte_size(r)));
	}
	ert_session_destroy(s);
	ert_session_destroy(ref);
	ert_model_unref(m);
}

int main(int argc, char **argv)
{
	static const struct ert_test_case cases[] = {
		ERT_TEST_ENTRY(arbitrary_weights_same_work),
		ERT_TEST_ENTRY(arbitrary_constants_bounded),
		ERT_TEST_ENTRY(arbitrary_scales_bounded),
		ERT_TEST_ENTRY(slice_huge_steps),
	};

	if (argc > 2 && !strcmp(argv[1], "--seeds"))
		return write_seeds(argv[2]);
	setenv("ERT_NPU_DEVICE", "sim", 1);
	setenv("ERT_QUIET", "1", 1);
	return ert_test_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
}
