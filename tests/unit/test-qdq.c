/* SPDX-License-Identifier: MIT */
/*
 * The QDQ fusion pass (libruntime/opt/qdq.c) on small hand-built graphs:
 * which nodes it fuses into which int8 ops, with which inputs and attributes,
 * which patterns it leaves alone, and that the fused model computes what the
 * QDQ model computes: exactly for the ops that only move values, within one
 * output quantum for the requantising ones (float vs fixed-point rounding).
 */
#include <stdlib.h>

#include "ert-test-model.h"
#include "ert-test.h"
#include "opt/passes.h"

/* ---- building QDQ graphs ---- */

static int32_t tensor(struct ert_graph *g, const char *name)
{
	return ert_graph_add_tensor(g, name, ERT_DTYPE_UNDEFINED, -1, NULL);
}

static int32_t constant(struct ert_graph *g, const char *name, ert_dtype dt, int32_t rank,
			const int64_t *dims, const void *vals)
{
	int32_t t = ert_graph_add_tensor(g, name, dt, rank, dims);
	size_t nbytes = ert_dtype_bytes(dt, ert_shape_numel(rank, dims));
	void *copy = malloc(nbytes ? nbytes : 1);

	memcpy(copy, vals, nbytes);
	ert_graph_set_const(g, t, copy, nbytes, true);
	return t;
}

static int32_t f32c(struct ert_graph *g, const char *name, float v)
{
	return constant(g, name, ERT_DTYPE_FLOAT32, 0, NULL, &v);
}

static int32_t zpc(struct ert_graph *g, const char *name, ert_dtype dt, int v)
{
	int8_t b = (int8_t)v;

	return constant(g, name, dt, 0, NULL, &b);
}

static struct ert_node *node(struct ert_graph *g, enum ert_op op, const char *name, uint32_t n_in,
			     const int32_t *in, int32_t out)
{
	int32_t i = ert_graph_add_node(g, op, name, n_in, in, 1, &out);

	return &g->nodes[i];
}

#define IN(...) (uint32_t)(sizeof((int32_t[]){ __VA_ARGS__ }) / sizeof(int32_t)), \
		(const int32_t[]){ __VA_ARGS__ }

/* Per-tensor Q or DQ of @x with scale @s and zero point @zp (of @dt) into a new tensor @name. */
static int32_t qdq(struct ert_graph *g, enum ert_op op, const char *name, int32_t x, float s,
		   ert_dtype dt, int zp)
{
	char sn[64], zn[64];
	int32_t y = tensor(g, name);

	snprintf(sn, sizeof(sn), "%s.s", name);
	snprintf(zn, sizeof(zn), "%s.zp", name);
	node(g, op, name, IN(x, f32c(g, sn, s), zpc(g, zn, dt, zp)), y);
	return y;
}

static int32_t q8(struct ert_graph *g, const char *name, int32_t x, float s, int zp)
{
	return qdq(g, ERT_OP_QuantizeLinear, name, x, s, ERT_DTYPE_INT8, zp);
}

static int32_t dq8(struct ert_graph *g, const char *name, int32_t x, float s, int zp)
{
	return qdq(g, ERT_OP_DequantizeLinear, name, x, s, ERT_DTYPE_INT8, zp);
}

/*
 * DQ of a constant int8 weight @name of @dims (pattern values), per channel
 * along axis 0 with scales 0.01 * (1 + c % 3) when @per_channel.
 */
static int32_t weight(struct ert_graph *g, const char *name, int32_t rank, const int64_t *dims,
		      bool per_channel, int32_t axis, float *ws_out)
{
	int64_t n = ert_shape_numel(rank, dims), m = per_channel ? dims[axis] : 1;
	int8_t *w = malloc((size_t)n);
	float ws[64];
	int8_t zp[64] = { 0 };
	char sn[64], zn[64];
	int32_t y = tensor(g, name), wt;

	for (int64_t i = 0; i < n; i++)
		w[i] = (int8_t)((i * 37 + 11) % 255 - 127);
	for (int64_t c = 0; c < m; c++)
		ws[c] = ws_out[c] = 0.01f * (float)(1 + c % 3);
	snprintf(sn, sizeof(sn), "%s.int8", name);
	wt = constant(g, sn, ERT_DTYPE_INT8, rank, dims, w);
	free(w);
	snprintf(sn, sizeof(sn), "%s.s", name);
	snprintf(zn, sizeof(zn), "%s.zp", name);
	int32_t st = per_channel ? constant(g, sn, ERT_DTYPE_FLOAT32, 1, &m, ws) : f32c(g, sn, ws[0]);
	int32_t zt = per_channel ? constant(g, zn, ERT_DTYPE_INT8, 1, &m, zp)
				 : zpc(g, zn, ERT_DTYPE_INT8, 0);
	struct ert_node *d = node(g, ERT_OP_DequantizeLinear, name, IN(wt, st, zt), y);

	if (per_channel)
		ert_node_set_attr_int(g, d, "axis", axis);
	return y;
}

/* DQ of a constant int32 bias of @m values with scales xs * ws[c] (axis 0). */
static int32_t bias_dq(struct ert_graph *g, const char *name, int64_t m, float xs, const float *ws,
		       bool per_channel, float wrong)
{
	int32_t b[64], y = tensor(g, name), bt, st;
	float bs[64];
	char sn[64];

	for (int64_t c = 0; c < m; c++) {
		b[c] = (int32_t)(c * 397 % 1000) - 500;
		bs[c] = xs * ws[per_channel ? c : 0] * wrong;
	}
	snprintf(sn, sizeof(sn), "%s.int32", name);
	bt = constant(g, sn, ERT_DTYPE_INT32, 1, &m, b);
	snprintf(sn, sizeof(sn), "%s.s", name);
	st = constant(g, sn, ERT_DTYPE_FLOAT32, 1, &m, bs);
	ert_node_set_attr_int(g, node(g, ERT_OP_DequantizeLinear, name, IN(bt, st), y), "axis", 0);
	return y;
}

static int32_t input(struct ert_graph *g, const char *name, int32_t rank, const int64_t *dims)
{
	int32_t t = ert_graph_add_tensor(g, name, ERT_DTYPE_FLOAT32, rank, dims);

	ert_graph_add_input(g, t);
	return t;
}

/* ---- looking at the result ---- */

static ert_status optimize(struct ert_graph *g)
{
	struct ert_err err = { "" };
	ert_status st = ert_graph_optimize(g, &err);

	if (st != ERT_OK)
		fprintf(stderr, "optimize: %s\n", err.msg);
	return st;
}

static const struct ert_node *find_op(const struct ert_graph *g, enum ert_op op)
{
	for (uint32_t i = 0; i < g->n_nodes; i++)
		if (!g->nodes[i].dead && g->nodes[i].op == op)
			return &g->nodes[i];
	return NULL;
}

static const char *tname(const struct ert_graph *g, const struct ert_node *n, uint32_t k, bool out)
{
	int32_t t = out ? n->outputs[k] : (k < n->n_inputs ? n->inputs[k] : -1);

	return t < 0 ? "" : g->tensors[t].name;
}

static bool has_clamp(const struct ert_node *n, int64_t lo, int64_t hi)
{
	uint32_t count = 0;
	const int64_t *c = ert_attr_ints(n, "ert.clamp", &count);

	return c && count == 2 && c[0] == lo && c[1] == hi;
}

/*
 * Run @before (QDQ) and @after (fused) on the same input (@dims, batch
 * resized to dims[0] when the model's batch is dynamic) and compare output 0:
 * every element within @tol.
 */
static void check_close(int *ert_test_failed_, struct ert_graph *before, struct ert_graph *after,
			int32_t rank, const int64_t *dims, double tol)
{
	ert_model *m[2] = { model_from_graph(before), model_from_graph(after) };
	int64_t n = ert_shape_numel(rank, dims);
	float *x = malloc((size_t)n * sizeof(float)), *y[2] = { NULL, NULL };
	ert_session *s[2] = { NULL, NULL };
	size_t count = 0;

	REQUIRE(m[0] && m[1] && x);
	for (int64_t i = 0; i < n; i++)
		x[i] = (float)((i * 29) % 41) / 8.0f - 2.5f;
	for (int k = 0; k < 2; k++) {
		const ert_tensor *o;

		CHECK_EQ_INT(ert_session_create(m[k], NULL, &s[k]), ERT_OK);
		if (!s[k])
			break;
		CHECK_EQ_INT(ert_session_resize_input(s[k], 0, (uint32_t)rank, dims), ERT_OK);
		CHECK_EQ_INT(ert_session_set_input(s[k], 0, ERT_DTYPE_FLOAT32, x,
						   (size_t)n * sizeof(float)), ERT_OK);
		if (ert_session_run(s[k]) != ERT_OK) {
			fprintf(stderr, "run: %s\n", ert_session_error(s[k]));
			CHECK(0);
			break;
		}
		o = ert_session_get_output(s[k], 0);
		count = ert_tensor_element_count(o);
		y[k] = malloc(count * sizeof(float) + 1);
		memcpy(y[k], ert_tensor_data(o), count * sizeof(float));
	}
	if (y[0] && y[1]) {
		double worst = 0;

		for (size_t i = 0; i < count; i++) {
			double d = fabs((double)y[0][i] - y[1][i]);

			worst = d > worst ? d : worst;
		}
		CHECK(count > 0);
		CHECK_NEAR(worst, 0.0, tol);
	}
	for (int k = 0; k < 2; k++) {
		free(y[k]);
		ert_session_destroy(s[k]);
		ert_model_unref(m[k]);
	}
	free(x);
}

/* ---- Conv ---- */

/*
 * x -> Q -> DQ -> Conv(DQ(w per channel), DQ(int32 bias)) [-> Relu] -> Q(yq) -> DQ -> y
 */
static struct ert_graph *conv_graph(bool relu, bool dynamic, float wrong_bias_scale)
{
	struct ert_graph *g = ert_graph_create();
	int64_t dx[4] = { dynamic ? -1 : 1, 3, 6, 6 }, dw[4] = { 4, 3, 3, 3 };
	int64_t pads[4] = { 1, 1, 1, 1 };
	float ws[4];
	int32_t x, xq, c, r, yq;

	g->opset = 13;
	x = input(g, "x", 4, dx);
	xq = q8(g, "xq", x, 0.05f, 3);
	int32_t w = weight(g, "w", 4, dw, true, 0, ws);
	int32_t b = bias_dq(g, "b", 4, 0.05f, ws, true, wrong_bias_scale);

	c = tensor(g, "c");
	ert_node_set_attr_ints(g, node(g, ERT_OP_Conv, "conv", IN(dq8(g, "xdq", xq, 0.05f, 3), w, b), c),
			       "pads", pads, 4);
	r = c;
	if (relu) {
		r = tensor(g, "r");
		node(g, ERT_OP_Relu, "relu", IN(c), r);
	}
	yq = q8(g, "yq", r, 0.04f, -10);
	ert_graph_add_output(g, dq8(g, "y", yq, 0.04f, -10));
	return g;
}

ERT_TEST(conv_relu)
{
	for (int dynamic = 0; dynamic < 2; dynamic++) {
		struct ert_graph *before = conv_graph(true, dynamic, 1.0f);
		struct ert_graph *g = conv_graph(true, dynamic, 1.0f);

		REQUIRE(optimize(g) == ERT_OK);
		/* the input's Q, the fused conv, the output's DQ */
		CHECK_EQ_INT(g->n_nodes, 3);
		CHECK_EQ_INT(graph_count_op(g, ERT_OP_QuantizeLinear), 1);
		CHECK_EQ_INT(graph_count_op(g, ERT_OP_DequantizeLinear), 1);
		const struct ert_node *n = find_op(g, ERT_OP_QLinearConv);

		REQUIRE(n);
		CHECK(strcmp(n->name, "conv") == 0);
		CHECK(strcmp(tname(g, n, 0, true), "yq") == 0);
		CHECK(strcmp(tname(g, n, 0, false), "xq") == 0);
		CHECK(strcmp(tname(g, n, 3, false), "w.int8") == 0);
		CHECK(strcmp(tname(g, n, 4, false), "w.s") == 0);
		CHECK(strcmp(tname(g, n, 6, false), "yq.s") == 0);
		CHECK(strcmp(tname(g, n, 8, false), "b.int32") == 0);
		CHECK_EQ_INT(ert_attr_int(n, "ert.requant", 0), 1);
		CHECK(has_clamp(n, -10, 127)); /* Relu: [y_zp, qmax] */
		uint32_t np = 0;
		const int64_t *pads = ert_attr_ints(n, "pads", &np);

		CHECK(pads && np == 4 && pads[0] == 1);
		CHECK(ert_node_attr(n, "ert.act") == NULL);
		check_close(ert_test_failed_, before, g, 4, (int64_t[]){ dynamic ? 2 : 1, 3, 6, 6 },
			    0.0401);
	}
	/* without the Relu: no clamp */
	struct ert_graph *g = conv_graph(false, false, 1.0f);

	REQUIRE(optimize(g) == ERT_OK);
	REQUIRE(find_op(g, ERT_OP_QLinearConv));
	CHECK(ert_node_attr(find_op(g, ERT_OP_QLinearConv), "ert.clamp") == NULL);
	ert_graph_destroy(g);
	/* a bias whose scale is not x_s * w_s: left alone */
	g = conv_graph(true, false, 1.01f);
	REQUIRE(optimize(g) == ERT_OK);
	CHECK_EQ_INT(graph_count_op(g, ERT_OP_QLinearConv), 0);
	CHECK_EQ_INT(graph_count_op(g, ERT_OP_Conv), 1);
	ert_graph_destroy(g);
}

/*
 * PyTorch's form: the weight is a QuantizeLinear of a float constant, the
 * bias a float constant, the activation a Clip(0, 6) node (kept as a node
 * when the batch is dynamic: activation fusion needs the dtypes).
 */
static struct ert_graph *torch_conv_graph(void)
{
	struct ert_graph *g = ert_graph_create();
	int64_t dx[4] = { -1, 2, 5, 5 }, dw[4] = { 3, 2, 3, 3 }, m = 3;
	float w[54], ws[3] = { 0.02f, 0.01f, 0.03f }, b[3] = { 0.5f, -0.25f, 0.1f };
	int8_t wzp[3] = { 0 };
	int32_t x, xq, c, r, yq, wf, wq, wd;

	for (int i = 0; i < 54; i++)
		w[i] = (float)((i * 13) % 19 - 9) * 0.05f;
	g->opset = 13;
	x = input(g, "x", 4, dx);
	xq = q8(g, "xq", x, 0.05f, 0);
	wf = constant(g, "w.f32", ERT_DTYPE_FLOAT32, 4, dw, w);
	int32_t ws_t = constant(g, "w.s", ERT_DTYPE_FLOAT32, 1, &m, ws);
	int32_t wz_t = constant(g, "w.zp", ERT_DTYPE_INT8, 1, &m, wzp);

	wq = tensor(g, "w.q");
	wd = tensor(g, "w.dq");
	ert_node_set_attr_int(g, node(g, ERT_OP_QuantizeLinear, "wq", IN(wf, ws_t, wz_t), wq), "axis", 0);
	ert_node_set_attr_int(g, node(g, ERT_OP_DequantizeLinear, "wdq", IN(wq, ws_t, wz_t), wd),
			      "axis", 0);
	c = tensor(g, "c");
	ert_node_set_attr_int(g, node(g, ERT_OP_Conv, "conv",
				      IN(dq8(g, "xdq", xq, 0.05f, 0), wd,
					 constant(g, "b", ERT_DTYPE_FLOAT32, 1, &m, b)), c),
			      "group", 1);
	r = tensor(g, "r");
	node(g, ERT_OP_Clip, "clip", IN(c, f32c(g, "lo", 0.0f), f32c(g, "hi", 0.5f)), r);
	yq = q8(g, "yq", r, 0.01f, -20);
	ert_graph_add_output(g, dq8(g, "y", yq, 0.01f, -20));
	return g;
}

ERT_TEST(torch_style_conv)
{
	struct ert_graph *before = torch_conv_graph(), *g = torch_conv_graph();

	REQUIRE(optimize(g) == ERT_OK);
	CHECK_EQ_INT(g->n_nodes, 3);
	CHECK_EQ_INT(graph_count_op(g, ERT_OP_Clip), 0);
	const struct ert_node *n = find_op(g, ERT_OP_QLinearConv);

	REQUIRE(n);
	/* Clip(0, 0.5) at scale 0.01, zero point -20: [-20, 30] */
	CHECK(has_clamp(n, -20, 30));
	/* the weight is the folded QuantizeLinear, the bias quantised: round(b / (0.05 w_s)) */
	const struct ert_tensor *wt = &g->tensors[n->inputs[3]], *bt = &g->tensors[n->inputs[8]];

	CHECK(strcmp(wt->name, "w.q") == 0);
	CHECK((wt->flags & ERT_TENSOR_CONST) && wt->dtype == ERT_DTYPE_INT8);
	REQUIRE((bt->flags & ERT_TENSOR_CONST) && bt->dtype == ERT_DTYPE_INT32 && bt->nbytes == 12);
	CHECK_EQ_INT(((const int32_t *)bt->data)[0], 500);  /* 0.5 / 0.001 */
	CHECK_EQ_INT(((const int32_t *)bt->data)[1], -500); /* -0.25 / 0.0005 */
	CHECK_EQ_INT(((const int32_t *)bt->data)[2], 67);   /* 0.1 / 0.0015 = 66.7 */
	/* the QuantizeLinear of the weight: (i * 13 % 19 - 9) * 0.05 / 0.02 for channel 0 */
	CHECK_EQ_INT(((const int8_t *)wt->data)[1], 10); /* 4 * 0.05 / 0.02 = 10 */
	check_close(ert_test_failed_, before, g, 4, (int64_t[]){ 1, 2, 5, 5 }, 0.0101);
}

/* ---- Gemm, MatMul ---- */

static struct ert_graph *gemm_graph(float alpha)
{
	struct ert_graph *g = ert_graph_create();
	int64_t dx[2] = { 2, 8 }, dw[2] = { 5, 8 }, dw2[2] = { 5, 3 };
	float ws[5], ws2[1];
	int32_t x, aq, gm, gq, mm, mq;
	struct ert_node *n;

	g->opset = 13;
	x = input(g, "x", 2, dx);
	aq = q8(g, "aq", x, 0.05f, 1);
	int32_t w = weight(g, "w", 2, dw, true, 0, ws);

	gm = tensor(g, "gm");
	n = node(g, ERT_OP_Gemm, "gemm", IN(dq8(g, "adq", aq, 0.05f, 1), w,
					    bias_dq(g, "b", 5, 0.05f, ws, true, 1.0f)), gm);
	ert_node_set_attr_int(g, n, "transB", 1);
	ert_node_set_attr_float(g, n, "alpha", alpha);
	gq = q8(g, "gq", gm, 0.03f, -3);
	int32_t w2 = weight(g, "w2", 2, dw2, false, 1, ws2);

	mm = tensor(g, "mm");
	node(g, ERT_OP_MatMul, "matmul", IN(dq8(g, "gdq", gq, 0.03f, -3), w2), mm);
	mq = q8(g, "mq", mm, 0.02f, 5);
	ert_graph_add_output(g, dq8(g, "y", mq, 0.02f, 5));
	return g;
}

ERT_TEST(gemm_matmul)
{
	struct ert_graph *before = gemm_graph(1.0f), *g = gemm_graph(1.0f);

	REQUIRE(optimize(g) == ERT_OK);
	CHECK_EQ_INT(g->n_nodes, 4);
	const struct ert_node *n = find_op(g, ERT_OP_QGemm), *m = find_op(g, ERT_OP_QLinearMatMul);

	REQUIRE(n && m);
	CHECK_EQ_INT(n->n_inputs, 9);
	CHECK_EQ_INT(ert_attr_int(n, "transB", 0), 1);
	CHECK(ert_node_attr(n, "alpha") == NULL);
	CHECK(strcmp(tname(g, n, 6, false), "b.int32") == 0);
	CHECK(strcmp(tname(g, n, 0, true), "gq") == 0);
	CHECK(strcmp(tname(g, m, 0, false), "gq") == 0);
	CHECK(strcmp(tname(g, m, 3, false), "w2.int8") == 0);
	CHECK_EQ_INT(ert_attr_int(m, "ert.requant", 0), 1);
	/* two requantisations in a row: within one quantum of each, propagated */
	check_close(ert_test_failed_, before, g, 2, (int64_t[]){ 2, 8 }, 0.02 * 3);

	/* alpha != 1: the fixed rule refuses QGemm, so Gemm stays (MatMul still fuses) */
	g = gemm_graph(0.5f);
	REQUIRE(optimize(g) == ERT_OK);
	CHECK_EQ_INT(graph_count_op(g, ERT_OP_QGemm), 0);
	CHECK_EQ_INT(graph_count_op(g, ERT_OP_Gemm), 1);
	CHECK_EQ_INT(graph_count_op(g, ERT_OP_QLinearMatMul), 1);
	ert_graph_destroy(g);
}

/* ---- Add, Mul, pools, and the ops that only move values ---- */

/*
 * Batch dynamic, so that activation fusion (which needs dtypes) leaves the
 * Relu after Add a node of its own:
 * x -> Q(a) -> Conv -> Q(c); Add(DQ(c), DQ(a)) -> Relu -> Q(s);
 * GlobalAveragePool(DQ(s)) -> Q(p, same); Reshape(DQ(p), [1, -1]) -> Q(r, same);
 * Mul(DQ(r), DQ(r)) -> Q(m) -> DQ -> y
 */
static struct ert_graph *residual_graph(void)
{
	struct ert_graph *g = ert_graph_create();
	int64_t dx[4] = { -1, 4, 5, 5 }, dw[4] = { 4, 4, 1, 1 }, two = 2, shape[2] = { 0, -1 };
	float ws[4];
	int32_t x, a, c, cq, s, r, sq, p, pq, rs, rq, m, mq;

	g->opset = 13;
	x = input(g, "x", 4, dx);
	a = q8(g, "a", x, 0.04f, 2);
	c = tensor(g, "c");
	node(g, ERT_OP_Conv, "conv", IN(dq8(g, "a.dq1", a, 0.04f, 2), weight(g, "w", 4, dw, true, 0, ws)),
	     c);
	cq = q8(g, "cq", c, 0.05f, -1);
	s = tensor(g, "s");
	node(g, ERT_OP_Add, "add", IN(dq8(g, "cq.dq", cq, 0.05f, -1), dq8(g, "a.dq2", a, 0.04f, 2)), s);
	r = tensor(g, "r");
	node(g, ERT_OP_Relu, "relu", IN(s), r);
	sq = q8(g, "sq", r, 0.06f, -20);
	p = tensor(g, "p");
	node(g, ERT_OP_GlobalAveragePool, "gap", IN(dq8(g, "sq.dq", sq, 0.06f, -20)), p);
	pq = q8(g, "pq", p, 0.06f, -20);
	rs = tensor(g, "rs");
	node(g, ERT_OP_Reshape, "reshape",
	     IN(dq8(g, "pq.dq", pq, 0.06f, -20), constant(g, "shape", ERT_DTYPE_INT64, 1, &two, shape)),
	     rs);
	rq = q8(g, "rq", rs, 0.06f, -20);
	m = tensor(g, "m");
	node(g, ERT_OP_Mul, "mul", IN(dq8(g, "rq.dq1", rq, 0.06f, -20), dq8(g, "rq.dq2", rq, 0.06f, -20)),
	     m);
	mq = q8(g, "mq", m, 0.1f, -100);
	ert_graph_add_output(g, dq8(g, "y", mq, 0.1f, -100));
	return g;
}

ERT_TEST(residual_add_pool_mul)
{
	struct ert_graph *before = residual_graph(), *g = residual_graph();

	REQUIRE(optimize(g) == ERT_OK);
	CHECK_EQ_INT(graph_count_op(g, ERT_OP_QuantizeLinear), 1);
	CHECK_EQ_INT(graph_count_op(g, ERT_OP_DequantizeLinear), 1);
	CHECK_EQ_INT(g->n_nodes, 7);
	const struct ert_node *add = find_op(g, ERT_OP_QLinearAdd);
	const struct ert_node *gap = find_op(g, ERT_OP_QLinearGlobalAveragePool);
	const struct ert_node *rs = find_op(g, ERT_OP_Reshape), *mul = find_op(g, ERT_OP_QLinearMul);

	REQUIRE(add && gap && rs && mul && find_op(g, ERT_OP_QLinearConv));
	CHECK(strcmp(tname(g, add, 0, false), "cq") == 0);
	CHECK(strcmp(tname(g, add, 3, false), "a") == 0);
	CHECK(strcmp(tname(g, add, 0, true), "sq") == 0);
	CHECK(has_clamp(add, -20, 127)); /* the Relu, a node of its own */
	CHECK_EQ_INT(graph_count_op(g, ERT_OP_Relu), 0);
	CHECK_EQ_INT(ert_attr_int(gap, "ert.requant", 0), 1);
	CHECK(strcmp(tname(g, rs, 0, false), "pq") == 0);
	CHECK(strcmp(tname(g, rs, 0, true), "rq") == 0);
	CHECK(strcmp(tname(g, mul, 0, false), "rq") == 0);
	CHECK(strcmp(tname(g, mul, 3, false), "rq") == 0);
	check_close(ert_test_failed_, before, g, 4, (int64_t[]){ 3, 4, 5, 5 }, 0.1 * 4);
}

/*
 * Exact rewrites: MaxPool, Pad (zero point 3: the pad value becomes 3),
 * Transpose, Concat of two DQs, Flatten, Squeeze / Unsqueeze, a DQ -> Q
 * pair, all with one scale and zero point, and an AveragePool.
 */
static struct ert_graph *movement_graph(bool avg)
{
	struct ert_graph *g = ert_graph_create();
	int64_t dx[4] = { 1, 2, 4, 4 }, k2[2] = { 2, 2 }, pads[8] = { 0, 0, 1, 1, 0, 0, 0, 1 };
	int64_t eight = 8, perm[4] = { 0, 2, 3, 1 }, ax0 = 0, one = 1;
	const float s = 0.1f;
	const int zp = 3;
	int32_t x, a, t[16];
	struct ert_node *n;

	g->opset = 13;
	x = input(g, "x", 4, dx);
	a = q8(g, "a", x, s, zp);
	t[0] = tensor(g, "mp");
	ert_node_set_attr_ints(g, node(g, ERT_OP_MaxPool, "maxpool", IN(dq8(g, "a.dq", a, s, zp)), t[0]),
			       "kernel_shape", k2, 2);
	t[1] = q8(g, "mpq", t[0], s, zp);                                  /* 1x2x3x3 */
	t[2] = tensor(g, "pad");
	node(g, ERT_OP_Pad, "pad", IN(dq8(g, "mpq.dq", t[1], s, zp),
				      constant(g, "pads", ERT_DTYPE_INT64, 1, &eight, pads)), t[2]);
	t[3] = q8(g, "padq", t[2], s, zp);                                 /* 1x2x4x5 */
	t[4] = tensor(g, "tr");
	ert_node_set_attr_ints(g, node(g, ERT_OP_Transpose, "transpose",
				       IN(dq8(g, "padq.dq", t[3], s, zp)), t[4]), "perm", perm, 4);
	t[5] = q8(g, "trq", t[4], s, zp);                                  /* 1x4x5x2 */
	t[6] = tensor(g, "cat");
	n = node(g, ERT_OP_Concat, "concat", IN(dq8(g, "trq.dq1", t[5], s, zp),
						dq8(g, "trq.dq2", t[5], s, zp)), t[6]);
	ert_node_set_attr_int(g, n, "axis", 3);
	t[7] = q8(g, "catq", t[6], s, zp);                                 /* 1x4x5x4 */
	t[8] = tensor(g, "avg");
	n = node(g, avg ? ERT_OP_AveragePool : ERT_OP_MaxPool, "pool2",
		 IN(dq8(g, "catq.dq", t[7], s, zp)), t[8]);
	ert_node_set_attr_ints(g, n, "kernel_shape", k2, 2);
	ert_node_set_attr_ints(g, n, "strides", k2, 2);
	t[9] = q8(g, "avgq", t[8], s, zp);                                 /* 1x4x2x2 */
	t[10] = tensor(g, "sq");
	node(g, ERT_OP_Squeeze, "squeeze", IN(dq8(g, "avgq.dq", t[9], s, zp),
					      constant(g, "ax0", ERT_DTYPE_INT64, 1, &one, &ax0)), t[10]);
	t[11] = q8(g, "sqq", t[10], s, zp);                                /* 4x2x2 */
	t[12] = dq8(g, "sqq.dq", t[11], s, zp);
	t[13] = q8(g, "requant", t[12], s, zp);                            /* a DQ -> Q pair */
	t[14] = tensor(g, "fl");
	node(g, ERT_OP_Flatten, "flatten", IN(dq8(g, "requant.dq", t[13], s, zp)), t[14]);
	t[15] = q8(g, "flq", t[14], s, zp);                                /* 4x4 */
	ert_graph_add_output(g, dq8(g, "y", t[15], s, zp));
	return g;
}

ERT_TEST(movement_exact)
{
	struct ert_graph *before = movement_graph(false), *g = movement_graph(false);

	REQUIRE(optimize(g) == ERT_OK);
	CHECK_EQ_INT(graph_count_op(g, ERT_OP_QuantizeLinear), 1);
	CHECK_EQ_INT(graph_count_op(g, ERT_OP_DequantizeLinear), 1);
	CHECK_EQ_INT(graph_count_op(g, ERT_OP_MaxPool), 2);
	static const enum ert_op kept[] = { ERT_OP_Pad, ERT_OP_Transpose, ERT_OP_Concat,
					    ERT_OP_Squeeze, ERT_OP_Flatten };

	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		CHECK_EQ_INT(graph_count_op(g, kept[i]), 1);
	CHECK_EQ_INT(g->n_nodes, 9);
	const struct ert_node *pad = find_op(g, ERT_OP_Pad), *cat = find_op(g, ERT_OP_Concat);

	REQUIRE(pad && cat && pad->n_inputs == 3);
	const struct ert_tensor *pv = &g->tensors[pad->inputs[2]];

	CHECK(pv->dtype == ERT_DTYPE_INT8 && pv->nbytes == 1 && *(const int8_t *)pv->data == 3);
	CHECK(strcmp(tname(g, cat, 0, false), "trq") == 0 && strcmp(tname(g, cat, 1, false), "trq") == 0);
	/* the DQ -> Q pair is gone: Flatten reads Squeeze's output */
	CHECK(strcmp(tname(g, find_op(g, ERT_OP_Flatten), 0, false), "sqq") == 0);
	check_close(ert_test_failed_, before, g, 4, (int64_t[]){ 1, 2, 4, 4 }, 0.0);

	/* with an AveragePool: exact but for ties (half away from zero vs to even) */
	before = movement_graph(true);
	g = movement_graph(true);
	REQUIRE(optimize(g) == ERT_OK);
	CHECK_EQ_INT(g->n_nodes, 9);
	const struct ert_node *avg = find_op(g, ERT_OP_QLinearAveragePool);

	REQUIRE(avg);
	CHECK_EQ_INT(ert_attr_int(avg, "ert.requant", 0), 1);
	CHECK_EQ_INT(ert_attr_ints(avg, "strides", &(uint32_t){ 0 })[1], 2);
	check_close(ert_test_failed_, before, g, 4, (int64_t[]){ 1, 2, 4, 4 }, 0.1001);

	/* count_include_pad = 1 is the same average when nothing is padded ... */
	before = movement_graph(true);
	g = movement_graph(true);
	for (uint32_t i = 0; i < g->n_nodes; i++)
		if (g->nodes[i].op == ERT_OP_AveragePool) {
			ert_node_set_attr_int(g, &g->nodes[i], "count_include_pad", 1);
			ert_node_set_attr_int(before, &before->nodes[i], "count_include_pad", 1);
		}
	REQUIRE(optimize(g) == ERT_OK);
	avg = find_op(g, ERT_OP_QLinearAveragePool);
	REQUIRE(avg);
	CHECK(ert_node_attr(avg, "count_include_pad") == NULL);
	check_close(ert_test_failed_, before, g, 4, (int64_t[]){ 1, 2, 4, 4 }, 0.1001);
	/* ... but not with padding, which the fixed rule would leave out of the count */
	g = movement_graph(true);
	for (uint32_t i = 0; i < g->n_nodes; i++)
		if (g->nodes[i].op == ERT_OP_AveragePool) {
			ert_node_set_attr_int(g, &g->nodes[i], "count_include_pad", 1);
			ert_node_set_attr_ints(g, &g->nodes[i], "pads", (int64_t[]){ 1, 1, 0, 0 }, 4);
		}
	REQUIRE(optimize(g) == ERT_OK);
	CHECK_EQ_INT(graph_count_op(g, ERT_OP_QLinearAveragePool), 0);
	CHECK_EQ_INT(graph_count_op(g, ERT_OP_AveragePool), 1);
	ert_graph_destroy(g);
}

/* ---- what stays as it is ---- */

ERT_TEST(refusals)
{
	struct ert_graph *g;
	int64_t dx[4] = { 1, 3, 6, 6 };

	/* the conv's float output is also read by a second node */
	g = conv_graph(false, false, 1.0f);
	{
		int32_t c = ert_graph_find_tensor(g, "c"), z = tensor(g, "z");

		node(g, ERT_OP_Relu, "other", IN(c), z);
		ert_graph_add_output(g, z);
	}
	REQUIRE(optimize(g) == ERT_OK);
	CHECK_EQ_INT(graph_count_op(g, ERT_OP_QLinearConv), 0);
	CHECK_EQ_INT(graph_count_op(g, ERT_OP_Conv), 1);
	ert_graph_destroy(g);

	/* weights from a graph input: not constant */
	g = ert_graph_create();
	g->opset = 13;
	{
		int32_t x = input(g, "x", 4, dx), w = input(g, "w", 4, (int64_t[]){ 2, 3, 1, 1 });
		int32_t c = tensor(g, "c");

		node(g, ERT_OP_Conv, "conv", IN(dq8(g, "xdq", q8(g, "xq", x, 0.1f, 0), 0.1f, 0),
						dq8(g, "wdq", q8(g, "wq", w, 0.1f, 0), 0.1f, 0)), c);
		ert_graph_add_output(g, dq8(g, "y", q8(g, "yq", c, 0.1f, 0), 0.1f, 0));
	}
	REQUIRE(optimize(g) == ERT_OK);
	CHECK_EQ_INT(graph_count_op(g, ERT_OP_QLinearConv), 0);
	ert_graph_destroy(g);

	/* LeakyRelu between Conv and Q: not a clamp */
	g = conv_graph(true, true, 1.0f);
	for (uint32_t i = 0; i < g->n_nodes; i++)
		if (g->nodes[i].op == ERT_OP_Relu)
			g->nodes[i].op = ERT_OP_LeakyRelu;
	REQUIRE(optimize(g) == ERT_OK);
	CHECK_EQ_INT(graph_count_op(g, ERT_OP_QLinearConv), 0);
	/* (activation fusion made it the Conv's ert.act, which QDQ fusion refuses) */
	CHECK_EQ_INT(graph_count_op(g, ERT_OP_Conv), 1);
	ert_graph_destroy(g);

	/* a multiplier the fixed rule cannot represent: x_s * w_s / y_s ~ 2^33 */
	g = conv_graph(false, false, 1.0f);
	for (uint32_t i = 0; i < g->n_nodes; i++)
		if (strcmp(g->nodes[i].name, "yq") == 0)
			*(float *)g->tensors[g->nodes[i].inputs[1]].data = 1e-13f;
	REQUIRE(optimize(g) == ERT_OK);
	CHECK_EQ_INT(graph_count_op(g, ERT_OP_QLinearConv), 0);
	ert_graph_destroy(g);

	/* AveragePool whose output scale differs from its input's; a per-channel activation DQ */
	g = ert_graph_create();
	g->opset = 13;
	{
		int64_t k2[2] = { 2, 2 }, c3 = 3;
		float sc[3] = { 0.1f, 0.2f, 0.3f };
		int8_t zp[3] = { 0 };
		int32_t x = input(g, "x", 4, dx), xq = q8(g, "xq", x, 0.1f, 0), p = tensor(g, "p");
		int32_t pc = tensor(g, "pc"), pcq, d = tensor(g, "d");

		ert_node_set_attr_ints(g, node(g, ERT_OP_AveragePool, "avg", IN(dq8(g, "xdq", xq, 0.1f, 0)),
					       p), "kernel_shape", k2, 2);
		ert_graph_add_output(g, dq8(g, "y", q8(g, "pq", p, 0.2f, 0), 0.2f, 0));
		/* per-channel DQ (axis 1) into MaxPool */
		ert_node_set_attr_int(g, node(g, ERT_OP_DequantizeLinear, "pcdq",
					      IN(xq, constant(g, "pc.s", ERT_DTYPE_FLOAT32, 1, &c3, sc),
						 constant(g, "pc.zp", ERT_DTYPE_INT8, 1, &c3, zp)), d),
				      "axis", 1);
		ert_node_set_attr_ints(g, node(g, ERT_OP_MaxPool, "mp", IN(d), pc), "kernel_shape", k2, 2);
		pcq = q8(g, "pcq", pc, 0.1f, 0);
		ert_graph_add_output(g, dq8(g, "y2", pcq, 0.1f, 0));
	}
	REQUIRE(optimize(g) == ERT_OK);
	CHECK_EQ_INT(graph_count_op(g, ERT_OP_QLinearAveragePool), 0);
	CHECK_EQ_INT(graph_count_op(g, ERT_OP_AveragePool), 1);
	CHECK_EQ_INT(graph_count_op(g, ERT_OP_MaxPool), 1);
	CHECK_EQ_INT(graph_count_op(g, ERT_OP_QuantizeLinear), 3);
	ert_graph_destroy(g);

	/* Add of an int8 and a uint8 tensor */
	g = ert_graph_create();
	g->opset = 13;
	{
		int32_t x = input(g, "x", 4, dx), s = tensor(g, "s");
		int32_t u = qdq(g, ERT_OP_QuantizeLinear, "u", x, 0.1f, ERT_DTYPE_UINT8, 128);
		int32_t ud = qdq(g, ERT_OP_DequantizeLinear, "ud", u, 0.1f, ERT_DTYPE_UINT8, 128);

		node(g, ERT_OP_Add, "add", IN(ud, dq8(g, "xdq", q8(g, "xq", x, 0.1f, 0), 0.1f, 0)), s);
		ert_graph_add_output(g, dq8(g, "y", q8(g, "sq", s, 0.2f, 0), 0.2f, 0));
	}
	REQUIRE(optimize(g) == ERT_OK);
	CHECK_EQ_INT(graph_count_op(g, ERT_OP_QLinearAdd), 0);
	ert_graph_destroy(g);
}

/*
 * x -> Q -> DQ -> HardSwish -> Q -> DQ -> Sigmoid -> Q -> DQ -> y: both
 * chains become QLinearLookup tables, and the outputs stay exactly the same.
 */
static struct ert_graph *table_graph(void)
{
	struct ert_graph *g = ert_graph_create();
	int64_t dx[2] = { 4, 37 };
	int32_t x, a, h, hq, sg, sq;

	g->opset = 14;
	x = input(g, "x", 2, dx);
	a = q8(g, "a", x, 0.03f, -5);
	h = tensor(g, "hs");
	node(g, ERT_OP_HardSwish, "hardswish", IN(dq8(g, "a.dq", a, 0.03f, -5)), h);
	hq = q8(g, "hsq", h, 0.02f, -100);
	sg = tensor(g, "sig");
	node(g, ERT_OP_Sigmoid, "sigmoid", IN(dq8(g, "hsq.dq", hq, 0.02f, -100)), sg);
	sq = q8(g, "sigq", sg, 1.0f / 255.0f, -128);
	ert_graph_add_output(g, dq8(g, "y", sq, 1.0f / 255.0f, -128));
	return g;
}

ERT_TEST(activation_tables)
{
	struct ert_graph *before = table_graph(), *g = table_graph();
	const struct ert_node *n;

	REQUIRE(optimize(g) == ERT_OK);
	CHECK_EQ_INT(graph_count_op(g, ERT_OP_QLinearLookup), 2);
	CHECK_EQ_INT(graph_count_op(g, ERT_OP_HardSwish), 0);
	CHECK_EQ_INT(graph_count_op(g, ERT_OP_Sigmoid), 0);
	n = find_op(g, ERT_OP_QLinearLookup);
	REQUIRE(n && n->n_inputs == 2);
	CHECK(!strcmp(tname(g, n, 0, false), "a"));
	CHECK(!strcmp(tname(g, n, 0, true), "hsq"));
	CHECK(g->tensors[n->inputs[1]].flags & ERT_TENSOR_CONST);
	CHECK_EQ_INT(g->tensors[n->inputs[1]].nbytes, 256);
	/* the tables hold what the chains computed: the outputs are equal */
	int64_t dx[2] = { 4, 37 };

	check_close(ert_test_failed_, before, g, 2, dx, 0.0);
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(conv_relu), ERT_TEST_ENTRY(torch_style_conv),
	      ERT_TEST_ENTRY(gemm_matmul), ERT_TEST_ENTRY(residual_add_pool_mul),
	      ERT_TEST_ENTRY(movement_exact), ERT_TEST_ENTRY(refusals),
	      ERT_TEST_ENTRY(activation_tables))
