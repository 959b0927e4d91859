/* SPDX-License-Identifier: MIT */
/* edgert quantize: range arithmetic, KL threshold, per-channel weights and the QDQ rewrite. */
#include <math.h>
#include <stdlib.h>

#include "ert-test-model.h"
#include "ert-test.h"
#include "session/session-impl.h"
#include "tools/edgert/quantize.h"

ERT_TEST(params_from_range)
{
	struct q_params p;

	p = q_params_from_range(0.0f, 2.55f);
	CHECK_NEAR(p.scale, 0.01, 1e-7);
	CHECK_EQ_INT(p.zp, -128);
	/* -128 - (-1) / (2/255) = -0.5: rounds away from zero */
	p = q_params_from_range(-1.0f, 1.0f);
	CHECK_NEAR(p.scale, 2.0 / 255.0, 1e-8);
	CHECK_EQ_INT(p.zp, -1);
	/* the range is widened to hold 0 */
	p = q_params_from_range(1.0f, 2.0f);
	CHECK_NEAR(p.scale, 2.0 / 255.0, 1e-8);
	CHECK_EQ_INT(p.zp, -128);
	p = q_params_from_range(-3.0f, -1.0f);
	CHECK_NEAR(p.scale, 3.0 / 255.0, 1e-8);
	CHECK_EQ_INT(p.zp, 127);
	/* empty and non-finite ranges get scale 1 */
	p = q_params_from_range(0.0f, 0.0f);
	CHECK_NEAR(p.scale, 1.0, 0);
	CHECK_EQ_INT(p.zp, -128);
	p = q_params_from_range(NAN, 1.0f);
	CHECK_NEAR(p.scale, 1.0, 0);
	CHECK_EQ_INT(p.zp, 0);
}

ERT_TEST(stats_minmax_and_ema)
{
	struct q_stats s = { 0 };
	const float a[3] = { 0.0f, 0.5f, 1.0f };
	const float b[4] = { -1.0f, 3.0f, NAN, INFINITY };
	float lo, hi;

	q_stats_update(&s, a, 3);
	q_stats_update(&s, b, 4);
	CHECK_EQ_INT(s.samples, 2);
	CHECK_NEAR(s.min, -1.0, 0);
	CHECK_NEAR(s.max, 3.0, 0);
	q_range_of(&s, Q_METHOD_MINMAX, &lo, &hi);
	CHECK_NEAR(lo, -1.0, 0);
	CHECK_NEAR(hi, 3.0, 0);
	/* first sample sets the average, then (1 - f) * ema + f * sample */
	q_range_of(&s, Q_METHOD_EMA, &lo, &hi);
	CHECK_NEAR(lo, Q_EMA_FACTOR * -1.0, 1e-6);
	CHECK_NEAR(hi, (1.0 - Q_EMA_FACTOR) * 1.0 + Q_EMA_FACTOR * 3.0, 1e-6);
}

ERT_TEST(kl_threshold)
{
	uint32_t *h = calloc(Q_HIST_BINS, sizeof(*h));
	float t;

	REQUIRE(h);
	/* flat: nothing is gained by clipping */
	for (uint32_t k = 0; k < Q_HIST_BINS; k++)
		h[k] = 1000;
	t = q_kl_threshold(h, Q_HIST_BINS, 8.0f, 128);
	CHECK(t >= 7.8f && t <= 8.0f);
	/* a steep exponential bulk and one far outlier: clip near the bulk's end */
	for (uint32_t k = 0; k < Q_HIST_BINS; k++)
		h[k] = (uint32_t)(1e6 * exp(-(double)k / 40.0));
	h[Q_HIST_BINS - 1] = 1;
	t = q_kl_threshold(h, Q_HIST_BINS, 8.0f, 128);
	CHECK(t > 8.0f * 128 / Q_HIST_BINS && t < 4.0f);
	/* the histogram and the stats path agree: Relu zeros do not count */
	struct q_stats s = { 0 };
	float x[1000];
	float lo, hi;

	for (int i = 0; i < 1000; i++)
		x[i] = i < 500 ? 0.0f : (float)(i - 500) / 100.0f;
	x[999] = 100.0f; /* one outlier */
	q_stats_update(&s, x, 1000);
	s.hist_max = 100.0f;
	s.hist = calloc(Q_HIST_BINS, sizeof(uint32_t));
	REQUIRE(s.hist);
	q_stats_hist_update(&s, x, 1000);
	CHECK_EQ_INT(s.hist[0], 4); /* 0.01..0.04, not the 500 zeros */
	q_range_of(&s, Q_METHOD_KL, &lo, &hi);
	CHECK_NEAR(lo, 0.0, 0);
	CHECK(hi >= 4.0f && hi < 50.0f);
	free(s.hist);
	free(h);
}

ERT_TEST(weights_per_channel)
{
	/* [2 channels, 3]: channel 1 all zero */
	const float w[6] = { 1.0f, -2.0f, 0.5f, 0.0f, 0.0f, 0.0f };
	/* [3, 2] with the channel on axis 1 (a Gemm weight without transB) */
	const float wt[6] = { 1.0f, 0.0f, -2.0f, 0.0f, 0.5f, 0.0f };
	int8_t q[6];
	float s[2];

	q_weights_per_channel(w, 1, 2, 3, 1.0f, NULL, q, s);
	CHECK_NEAR(s[0], 2.0 / 127.0, 1e-7);
	CHECK_NEAR(s[1], 1.0, 0);
	CHECK_EQ_INT(q[0], 64); /* 63.5 rounds to even */
	CHECK_EQ_INT(q[1], -127);
	CHECK_EQ_INT(q[2], 32);
	CHECK_EQ_INT(q[3], 0);
	q_weights_per_channel(wt, 3, 2, 1, 2.0f, NULL, q, s);
	CHECK_NEAR(s[0], 4.0 / 127.0, 1e-7);
	/* alpha 2: 2, -4, 1 */
	CHECK_EQ_INT(q[0], 64);
	CHECK_EQ_INT(q[2], -127);
	CHECK_EQ_INT(q[4], 32);
	CHECK_EQ_INT(q[1], 0);
	/* a tiny channel under a large bias: the weight scale grows so the bias fits int32 */
	const float tiny[2] = { 1e-6f, -2e-6f };
	float ms = q_bias_min_weight_scale(1e6f, 1e-3f);

	q_weights_per_channel(tiny, 1, 1, 2, 1.0f, &ms, q, s);
	CHECK(s[0] == ms && ms > 2e-6f / 127.0f);
	double bq = round(1e6 / ((double)1e-3f * s[0]));

	CHECK(bq < 2147483647.0 && bq > 2.1e9);
	CHECK_NEAR(bq * (double)(1e-3f * s[0]), 1e6, 1.0);
	CHECK_NEAR(q_bias_min_weight_scale(0.0f, 1.0f), 0.0, 0);
	CHECK_EQ_INT(q_saturate_i32(3e10), INT32_MAX);
	CHECK_EQ_INT(q_saturate_i32(-2.5), -3);
}

ERT_TEST(cosine)
{
	const float a[3] = { 1.0f, 2.0f, 3.0f }, b[3] = { -1.0f, -2.0f, -3.0f };
	const float z[3] = { 0.0f, 0.0f, 0.0f };
	const int8_t q[3] = { -118, -108, -98 };
	struct q_cosine c = { 0 };

	q_cosine_add_f32(&c, a, a, 3);
	CHECK_NEAR(q_cosine_value(&c), 1.0, 1e-12);
	c = (struct q_cosine){ 0 };
	q_cosine_add_f32(&c, a, b, 3);
	CHECK_NEAR(q_cosine_value(&c), -1.0, 1e-12);
	c = (struct q_cosine){ 0 };
	q_cosine_add_f32(&c, z, z, 3);
	CHECK_NEAR(q_cosine_value(&c), 1.0, 0);
	c = (struct q_cosine){ 0 };
	q_cosine_add_f32(&c, a, z, 3);
	CHECK_NEAR(q_cosine_value(&c), 0.0, 0);
	/* (q + 128) * 0.1 = 1, 2, 3 */
	c = (struct q_cosine){ 0 };
	q_cosine_add_q8(&c, a, q, (struct q_params){ 0.1f, -128 }, 3);
	CHECK_NEAR(q_cosine_value(&c), 1.0, 1e-6);
}

/* ---- the rewrite on a small network ------------------------------------------ */

static int32_t cf32(struct ert_graph *g, const char *name, int32_t rank, const int64_t *dims,
		    float base)
{
	int64_t n = ert_shape_numel(rank, dims);
	float *d = malloc((size_t)n * sizeof(float));
	int32_t t = ert_graph_add_tensor(g, name, ERT_DTYPE_FLOAT32, rank, dims);

	if (!d || t < 0) {
		free(d);
		return -1;
	}
	for (int64_t i = 0; i < n; i++)
		d[i] = base * (float)sin(1.3 * (double)i + 0.4);
	ert_graph_set_const(g, t, d, (size_t)n * sizeof(float), true);
	return t;
}

static int32_t node(struct ert_graph *g, enum ert_op op, const char *name, uint32_t n_in,
		    const int32_t *in, const char *out)
{
	int32_t y = ert_graph_add_tensor(g, out, ERT_DTYPE_FLOAT32, -1, NULL);

	return y < 0 || ert_graph_add_node(g, op, name, n_in, in, 1, &y) < 0 ? -1 : y;
}

/*
 * x[1,2,4,4] -> Conv(+Relu) -> y -> MaxPool 2x2 -> p -> Flatten -> f -> Gemm
 * (transB) -> g -> Softmax -> prob (Softmax has no int8 form: it stays float)
 */
static ert_model *small_net(void)
{
	struct ert_graph *g = ert_graph_create();
	const int64_t xd[4] = { 1, 2, 4, 4 }, wd[4] = { 3, 2, 1, 1 }, bd[1] = { 3 };
	const int64_t w2d[2] = { 4, 12 }, cd[1] = { 4 }, k2[2] = { 2, 2 };
	int32_t x, in[3], y, p, f, t;

	if (!g)
		return NULL;
	g->opset = 17;
	x = ert_graph_add_tensor(g, "x", ERT_DTYPE_FLOAT32, 4, xd);
	if (x < 0 || !ert_graph_add_input(g, x))
		goto fail;
	in[0] = x;
	in[1] = cf32(g, "w", 4, wd, 1.0f);
	in[2] = cf32(g, "b", 1, bd, 0.1f);
	y = node(g, ERT_OP_Conv, "conv", 3, in, "y");
	if (y < 0 || !ert_node_set_attr_int(g, &g->nodes[g->n_nodes - 1], "ert.act", ERT_ACT_RELU))
		goto fail;
	p = node(g, ERT_OP_MaxPool, "pool", 1, &y, "p");
	if (p < 0 || !ert_node_set_attr_ints(g, &g->nodes[g->n_nodes - 1], "kernel_shape", k2, 2) ||
	    !ert_node_set_attr_ints(g, &g->nodes[g->n_nodes - 1], "strides", k2, 2))
		goto fail;
	f = node(g, ERT_OP_Flatten, "flatten", 1, &p, "f");
	in[0] = f;
	in[1] = cf32(g, "w2", 2, w2d, 0.5f);
	in[2] = cf32(g, "c", 1, cd, 0.2f);
	t = node(g, ERT_OP_Gemm, "fc", 3, in, "g");
	if (t < 0 || !ert_node_set_attr_int(g, &g->nodes[g->n_nodes - 1], "transB", 1))
		goto fail;
	t = node(g, ERT_OP_Softmax, "sig", 1, &t, "prob");
	if (t < 0 || !ert_graph_add_output(g, t))
		goto fail;
	return model_from_graph(g);
fail:
	ert_graph_destroy(g);
	return NULL;
}

static const struct ert_node *producer_of(const struct ert_graph *g, int32_t t)
{
	int32_t n = t >= 0 ? ert_graph_producer(g, t) : -1;

	return n >= 0 ? &g->nodes[n] : NULL;
}

static const struct ert_node *node_named(const struct ert_graph *g, const char *name)
{
	for (uint32_t i = 0; i < g->n_nodes; i++)
		if (strcmp(g->nodes[i].name, name) == 0)
			return &g->nodes[i];
	return NULL;
}

static const struct q_act *act_of(const struct q_result *r, const struct ert_graph *fg,
				  const char *name)
{
	for (uint32_t k = 0; k < r->n_acts; k++)
		if (strcmp(fg->tensors[r->acts[k].tensor].name, name) == 0)
			return &r->acts[k];
	return NULL;
}

static uint32_t count_op(const struct ert_graph *g, enum ert_op op)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < g->n_nodes; i++)
		n += g->nodes[i].op == op;
	return n;
}

/*
 * Calibrate @m on 4 random samples and quantise with @c: the QDQ form, or
 * with @fuse after the optimiser's QDQ fusion.
 */
static bool quantize_small(ert_model *m, const struct q_choice *c, bool fuse, struct q_result *r)
{
	const struct ert_graph *fg = ert_model_graph(m);
	struct q_stats *stats = calloc(fg->n_tensors, sizeof(*stats));
	struct q_samples s;
	ert_config cfg;
	bool ok;

	ert_config_init(&cfg);
	cfg.num_threads = 1;
	ok = stats && q_samples_open(&s, "test", NULL, 4, 7, m);
	ok = ok && q_calibrate(m, &cfg, &s, c->method, stats);
	if (fuse)
		ok = ok && q_quantize_graph(fg, stats, c, r);
	else
		ok = ok && q_rewrite_graph(fg, stats, c, r);
	q_stats_free(stats, fg->n_tensors);
	return ok;
}

ERT_TEST(qdq_rewrite)
{
	ert_model *m = small_net();
	struct q_choice c = { .method = Q_METHOD_MINMAX };
	struct q_result r;
	const struct ert_graph *fg, *qg;
	const struct ert_node *conv, *dq, *fc, *sig;
	const struct q_act *ax, *ay, *ap, *af;

	REQUIRE(m);
	fg = ert_model_graph(m);
	REQUIRE(quantize_small(m, &c, false, &r));
	qg = r.graph;
	CHECK_EQ_INT(r.n_quantized, 4); /* conv, pool, flatten, fc; not the Softmax */
	CHECK_EQ_INT(r.n_acts, 5);      /* x, y, p, f, g */
	CHECK_EQ_INT(count_op(qg, ERT_OP_QuantizeLinear), 5);
	/* activations: 5, weights: 2, biases: 2 */
	CHECK_EQ_INT(count_op(qg, ERT_OP_DequantizeLinear), 9);
	ax = act_of(&r, fg, "x");
	ay = act_of(&r, fg, "y");
	ap = act_of(&r, fg, "p");
	af = act_of(&r, fg, "f");
	REQUIRE(ax && ay && ap && af && act_of(&r, fg, "g"));
	CHECK(!act_of(&r, fg, "prob"));
	/* pool and flatten share their input's parameters; Relu output: zp -128 */
	CHECK(ap->p.scale == ay->p.scale && ap->p.zp == ay->p.zp);
	CHECK(af->p.scale == ay->p.scale && af->p.zp == ay->p.zp);
	CHECK_EQ_INT(ay->p.zp, -128);
	CHECK(strcmp(ay->op, "Conv") == 0 && strcmp(ay->node, "conv") == 0);

	conv = node_named(qg, "conv");
	REQUIRE(conv && conv->n_inputs == 3);
	dq = producer_of(qg, conv->inputs[0]);
	REQUIRE(dq && dq->op == ERT_OP_DequantizeLinear);
	CHECK(strcmp(qg->tensors[dq->inputs[0]].name, ax->qname) == 0);
	/* weight: int8 per output channel, axis 0, values in [-127, 127] */
	dq = producer_of(qg, conv->inputs[1]);
	REQUIRE(dq && dq->op == ERT_OP_DequantizeLinear);
	CHECK_EQ_INT(ert_attr_int(dq, "axis", -1), 0);
	const struct ert_tensor *wq = &qg->tensors[dq->inputs[0]];
	const struct ert_tensor *ws = &qg->tensors[dq->inputs[1]];

	REQUIRE(wq->dtype == ERT_DTYPE_INT8 && (wq->flags & ERT_TENSOR_CONST));
	REQUIRE(ws->dtype == ERT_DTYPE_FLOAT32 && ws->rank == 1 && ws->dims[0] == 3);
	for (int i = 0; i < 6; i++)
		CHECK(((const int8_t *)wq->data)[i] >= -127);
	/* bias: int32 round(b / (x_s * w_s[c])) with that scale */
	dq = producer_of(qg, conv->inputs[2]);
	REQUIRE(dq && dq->op == ERT_OP_DequantizeLinear);
	const struct ert_tensor *bq = &qg->tensors[dq->inputs[0]];
	const struct ert_tensor *bs = &qg->tensors[dq->inputs[1]];
	const struct ert_tensor *bf = &fg->tensors[ert_graph_find_tensor(fg, "b")];

	REQUIRE(bq->dtype == ERT_DTYPE_INT32 && bs->dtype == ERT_DTYPE_FLOAT32);
	for (int ch = 0; ch < 3; ch++) {
		float s = ax->p.scale * ((const float *)ws->data)[ch];

		CHECK_NEAR(((const float *)bs->data)[ch], s, 0);
		CHECK_EQ_INT(((const int32_t *)bq->data)[ch],
			     lround(((const float *)bf->data)[ch] / (double)s));
	}
	/* Gemm with transB: the channel axis of its weight is 0 */
	fc = node_named(qg, "fc");
	REQUIRE(fc);
	dq = producer_of(qg, fc->inputs[1]);
	REQUIRE(dq && dq->op == ERT_OP_DequantizeLinear);
	CHECK_EQ_INT(ert_attr_int(dq, "axis", -1), 0);
	CHECK_EQ_INT(qg->tensors[dq->inputs[1]].dims[0], 4);
	/* the float op reads the dequantised Gemm output; the output keeps its name */
	sig = node_named(qg, "sig");
	REQUIRE(sig);
	dq = producer_of(qg, sig->inputs[0]);
	CHECK(dq && dq->op == ERT_OP_DequantizeLinear);
	CHECK(strcmp(qg->tensors[qg->outputs[0]].name, "prob") == 0);
	q_result_free(&r);
	ert_model_unref(m);
}

/* What the QDQ fusion makes of the rewrite: int8 ops end to end, one Q in, one DQ out. */
ERT_TEST(qdq_fuses_to_int8)
{
	ert_model *m = small_net();
	struct q_choice c = { .method = Q_METHOD_MINMAX };
	struct q_result r;
	const struct ert_graph *fg, *qg;
	const struct ert_node *n;

	REQUIRE(m);
	fg = ert_model_graph(m);
	REQUIRE(quantize_small(m, &c, true, &r));
	qg = r.graph;
	CHECK_EQ_INT(count_op(qg, ERT_OP_QuantizeLinear), 1);   /* at the input */
	CHECK_EQ_INT(count_op(qg, ERT_OP_DequantizeLinear), 1); /* before the float Softmax */
	CHECK_EQ_INT(count_op(qg, ERT_OP_QLinearConv), 1);
	CHECK_EQ_INT(count_op(qg, ERT_OP_QGemm), 1);
	CHECK_EQ_INT(count_op(qg, ERT_OP_MaxPool), 1);
	CHECK_EQ_INT(count_op(qg, ERT_OP_Flatten), 1);
	CHECK_EQ_INT(count_op(qg, ERT_OP_Conv), 0);
	CHECK_EQ_INT(count_op(qg, ERT_OP_Gemm), 0);
	/* every int8 tensor the cosine table reads survives under its name */
	for (uint32_t k = 0; k < r.n_acts; k++) {
		int32_t t = ert_graph_find_tensor(qg, r.acts[k].qname);

		CHECK(t >= 0 && qg->tensors[t].dtype == ERT_DTYPE_INT8);
	}
	for (uint32_t i = 0; i < qg->n_nodes; i++) {
		n = &qg->nodes[i];
		if (n->op == ERT_OP_QLinearConv || n->op == ERT_OP_QGemm)
			CHECK_EQ_INT(ert_attr_int(n, "ert.requant", 0), 1);
		/*
		 * The Relu output was calibrated after the Relu: its range starts at
		 * 0, so zp is -128 and the clamp [zp, 127] is all of int8 (none).
		 */
		if (n->op == ERT_OP_QLinearConv) {
			uint32_t cnt = 0;

			CHECK_EQ_INT(act_of(&r, fg, "y")->p.zp, -128);
			CHECK(!ert_attr_ints(n, "ert.clamp", &cnt));
		}
	}
	q_result_free(&r);
	ert_model_unref(m);
}

ERT_TEST(qdq_model_matches_float)
{
	ert_model *m = small_net(), *qm = NULL;
	struct q_choice c = { .method = Q_METHOD_KL };
	struct q_layer_cos lc;
	struct ert_err err = { "" };
	struct q_result r;
	ert_config cfg;
	void *img = NULL;
	size_t size = 0;
	char msg[256];

	REQUIRE(m);
	REQUIRE(quantize_small(m, &c, true, &r));
	REQUIRE(ert_format_write_memory(r.graph, NULL, &img, &size, &err) == ERT_OK);
	REQUIRE(ert_model_load_memory(img, size, 1, &qm, msg, sizeof(msg)) == ERT_OK);
	ert_config_init(&cfg);
	cfg.num_threads = 1;
	REQUIRE(q_compare(m, qm, &cfg, &r, NULL, 3, 1234, "test", &lc));
	CHECK_EQ_INT(lc.inputs, 3);
	CHECK(lc.worst > 0.99 && lc.worst <= 1.0 + 1e-9);
	for (uint32_t k = 0; k < r.n_acts; k++) {
		/* every row compared on every input: the int8 tensors exist in the model */
		CHECK_EQ_INT(lc.act_n[k], 3);
		CHECK(lc.act_sum[k] / 3 > 0.99);
	}
	q_layer_cos_free(&lc);
	ert_model_unref(qm);
	free(img);
	q_result_free(&r);
	ert_model_unref(m);
}

ERT_TEST(keep_float)
{
	ert_model *m = small_net();
	const char *keep[1] = { "conv" };
	const char *bad[1] = { "nope" };
	struct q_choice c = { .method = Q_METHOD_MINMAX, .keep_float = keep, .n_keep_float = 1 };
	struct q_result r;
	const struct ert_graph *fg;
	const struct ert_node *n;

	REQUIRE(m);
	fg = ert_model_graph(m);
	CHECK(q_check_keep_float(fg, &c));
	c.keep_float = bad;
	fprintf(stderr, "(an error about 'nope' is expected:)\n");
	CHECK(!q_check_keep_float(fg, &c));
	c.keep_float = keep;
	REQUIRE(quantize_small(m, &c, false, &r));
	CHECK_EQ_INT(r.n_quantized, 3);
	CHECK_EQ_INT(r.n_float, 1);
	CHECK(!act_of(&r, fg, "x")); /* only the float Conv reads it */
	CHECK(act_of(&r, fg, "y"));
	n = node_named(r.graph, "conv");
	REQUIRE(n);
	CHECK(r.graph->tensors[n->inputs[1]].dtype == ERT_DTYPE_FLOAT32);
	CHECK(r.graph->tensors[n->inputs[1]].flags & ERT_TENSOR_CONST);
	q_result_free(&r);

	/* --keep-first is the Conv too; --keep-last the Gemm (Flatten still follows its input) */
	c = (struct q_choice){ .method = Q_METHOD_EMA, .keep_first = true };
	REQUIRE(quantize_small(m, &c, false, &r));
	CHECK_EQ_INT(r.n_quantized, 3);
	CHECK(!act_of(&r, fg, "x"));
	q_result_free(&r);
	c = (struct q_choice){ .method = Q_METHOD_MINMAX, .keep_last = true };
	REQUIRE(quantize_small(m, &c, false, &r));
	CHECK_EQ_INT(r.n_quantized, 3);
	CHECK(act_of(&r, fg, "f") && !act_of(&r, fg, "g"));
	n = node_named(r.graph, "fc");
	REQUIRE(n);
	CHECK(r.graph->tensors[n->inputs[1]].dtype == ERT_DTYPE_FLOAT32);
	q_result_free(&r);
	ert_model_unref(m);
}

int main(int argc, char **argv)
{
	static const struct ert_test_case cases[] = {
		ERT_TEST_ENTRY(params_from_range),
		ERT_TEST_ENTRY(stats_minmax_and_ema),
		ERT_TEST_ENTRY(kl_threshold),
		ERT_TEST_ENTRY(weights_per_channel),
		ERT_TEST_ENTRY(cosine),
		ERT_TEST_ENTRY(qdq_rewrite),
		ERT_TEST_ENTRY(qdq_fuses_to_int8),
		ERT_TEST_ENTRY(qdq_model_matches_float),
		ERT_TEST_ENTRY(keep_float),
	};

	return ert_test_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
}
