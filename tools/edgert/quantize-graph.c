/* SPDX-License-Identifier: MIT */
/*
 * edgert quantize: rewrite the float graph into QDQ form (what is quantised
 * comes from quantize-select.c), as onnxruntime's quantiser writes it:
 *
 *   activation t:  producer -> t -> QuantizeLinear -> t_quantized (int8)
 *                  -> DequantizeLinear -> t_dequantized -> every consumer
 *   weight W:      W_quantized (int8, per channel) -> DequantizeLinear -> op
 *   bias B:        B_quantized (int32, scale x_s * w_s[c]) -> DequantizeLinear -> op
 *
 * The QDQ fusion pass of the optimiser (opt/qdq.c) turns "DQ -> float op -> Q"
 * into int8 ops whose output keeps the QuantizeLinear's output name; what it
 * leaves runs as float ops on fake-quantised values, which is the same model.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "format/ert-format.h"
#include "opt/passes.h"
#include "quantize.h"

static bool is_graph_io(const struct ert_graph *g, int32_t t, uint32_t flag)
{
	return (g->tensors[t].flags & flag) != 0;
}

/* ---- constants and nodes ------------------------------------------------- */

/* Add a constant (takes @data: freed on failure); -1 on out-of-memory. */
static int32_t add_const(struct ert_graph *g, const char *hint, ert_dtype dt, int32_t rank,
			 const int64_t *dims, void *data, size_t nbytes)
{
	int32_t t = data ? ert_graph_add_tensor_unique(g, hint, dt, rank, dims) : -1;

	if (t < 0) {
		free(data);
		return -1;
	}
	ert_graph_set_const(g, t, data, nbytes, true);
	return t;
}

static int32_t scalar_f32(struct ert_graph *g, const char *hint, float v)
{
	float *d = malloc(sizeof(*d));

	if (d)
		*d = v;
	return add_const(g, hint, ERT_DTYPE_FLOAT32, 0, NULL, d, sizeof(*d));
}

static int32_t scalar_i8(struct ert_graph *g, const char *hint, int8_t v)
{
	int8_t *d = malloc(1);

	if (d)
		*d = v;
	return add_const(g, hint, ERT_DTYPE_INT8, 0, NULL, d, 1);
}

static void hint_of(char *buf, size_t size, const char *base, const char *suffix)
{
	snprintf(buf, size, "%.200s_%s", base, suffix);
}

/*
 * DequantizeLinear(x, scale, zp) -> new float tensor shaped like @like;
 * @axis < 0: per tensor. Returns the output tensor or -1.
 */
static int32_t add_dq(struct ert_graph *g, const char *base, int32_t x, int32_t scale, int32_t zp,
		      int64_t axis, int32_t like, int32_t out)
{
	int32_t in[3] = { x, scale, zp };
	char hint[256];
	int32_t ni;

	if (x < 0 || scale < 0 || zp < 0)
		return -1;
	if (out < 0) {
		const struct ert_tensor *lt = &g->tensors[like];
		int32_t rank = lt->rank;
		int64_t dims[ERT_MAX_RANK];

		if (rank > 0)
			memcpy(dims, lt->dims, (size_t)rank * sizeof(dims[0]));
		hint_of(hint, sizeof(hint), base, "dequantized");
		out = ert_graph_add_tensor_unique(g, hint, ERT_DTYPE_FLOAT32, rank, dims);
		if (out < 0)
			return -1;
	}
	hint_of(hint, sizeof(hint), base, "DequantizeLinear");
	ni = ert_graph_add_node(g, ERT_OP_DequantizeLinear, hint, 3, in, 1, &out);
	if (ni < 0)
		return -1;
	if (axis >= 0 && !ert_node_set_attr_int(g, &g->nodes[ni], "axis", axis))
		return -1;
	return out;
}

/* Symmetric per-channel int8 weight through a DequantizeLinear; w_scale_out: malloc'd. */
static int32_t quantize_weight(struct ert_graph *g, const struct ert_node *n, int32_t w,
			       float alpha, const float *min_scale, float **w_scale_out,
			       int64_t *channels_out)
{
	const struct ert_tensor *wt = &g->tensors[w];
	const char *name = wt->name;
	int64_t numel = ert_shape_numel(wt->rank, wt->dims);
	int64_t ch = q_weight_channels(n, wt), outer = 1, inner = 1, axis;
	int32_t rank = wt->rank;
	int64_t dims[ERT_MAX_RANK];
	int8_t *q = malloc((size_t)numel);
	float *scale = malloc((size_t)ch * sizeof(float));
	float *s_copy = malloc((size_t)ch * sizeof(float));
	int8_t *zp = calloc((size_t)ch, 1);
	int32_t tq, ts, tz;
	char hint[256];

	memcpy(dims, wt->dims, (size_t)rank * sizeof(dims[0]));
	if (n->op == ERT_OP_Conv || (n->op == ERT_OP_Gemm && ert_attr_int(n, "transB", 0)))
		axis = 0;
	else
		axis = rank - 1;
	for (int64_t k = 0; k < axis; k++)
		outer *= dims[k];
	for (int64_t k = axis + 1; k < rank; k++)
		inner *= dims[k];
	if (!q || !scale || !s_copy || !zp) {
		free(q);
		free(scale);
		free(s_copy);
		free(zp);
		return -1;
	}
	q_weights_per_channel(wt->data, outer, ch, inner, alpha, min_scale, q, scale);
	memcpy(s_copy, scale, (size_t)ch * sizeof(float));
	*w_scale_out = s_copy;
	*channels_out = ch;
	hint_of(hint, sizeof(hint), name, "quantized");
	tq = add_const(g, hint, ERT_DTYPE_INT8, rank, dims, q, (size_t)numel);
	hint_of(hint, sizeof(hint), name, "scale");
	ts = add_const(g, hint, ERT_DTYPE_FLOAT32, 1, &ch, scale, (size_t)ch * sizeof(float));
	hint_of(hint, sizeof(hint), name, "zero_point");
	tz = add_const(g, hint, ERT_DTYPE_INT8, 1, &ch, zp, (size_t)ch);
	/* @name may have moved with the tensor array: take it again */
	return add_dq(g, g->tensors[w].name, tq, ts, tz, axis, w, -1);
}

/* int32 bias, b[c] * beta / (x_s * w_s[c]), through a DequantizeLinear over axis 0. */
static int32_t quantize_bias(struct ert_graph *g, int32_t b, float beta, float x_scale,
			     const float *w_scale, int64_t ch)
{
	const struct ert_tensor *bt = &g->tensors[b];
	const float *src = bt->data;
	bool scalar = ert_shape_numel(bt->rank, bt->dims) == 1;
	int32_t *q = malloc((size_t)ch * sizeof(int32_t));
	float *scale = malloc((size_t)ch * sizeof(float));
	int32_t *zp = calloc((size_t)ch, sizeof(int32_t));
	int32_t tq, ts, tz, like;
	char hint[256];

	if (!q || !scale || !zp) {
		free(q);
		free(scale);
		free(zp);
		return -1;
	}
	for (int64_t c = 0; c < ch; c++) {
		scale[c] = x_scale * w_scale[c];
		q[c] = q_saturate_i32((double)(src[scalar ? 0 : c] * beta) / (double)scale[c]);
	}
	hint_of(hint, sizeof(hint), bt->name, "quantized");
	tq = add_const(g, hint, ERT_DTYPE_INT32, 1, &ch, q, (size_t)ch * sizeof(int32_t));
	hint_of(hint, sizeof(hint), g->tensors[b].name, "scale");
	ts = add_const(g, hint, ERT_DTYPE_FLOAT32, 1, &ch, scale, (size_t)ch * sizeof(float));
	hint_of(hint, sizeof(hint), g->tensors[b].name, "zero_point");
	tz = add_const(g, hint, ERT_DTYPE_INT32, 1, &ch, zp, (size_t)ch * sizeof(int32_t));
	like = tq; /* the bias becomes 1-D [channels] whatever its broadcast shape was */
	return like < 0 ? -1 : add_dq(g, g->tensors[b].name, tq, ts, tz, 0, like, -1);
}

/* Asymmetric per-tensor int8 for a constant operand of Add/Mul. */
static int32_t quantize_operand(struct ert_graph *g, int32_t t)
{
	const struct ert_tensor *tt = &g->tensors[t];
	int64_t numel = ert_shape_numel(tt->rank, tt->dims);
	const float *src = tt->data;
	float lo = 0.0f, hi = 0.0f;
	struct q_params p;
	int8_t *q = malloc((size_t)numel);
	int32_t tq, ts, tz;
	char hint[256];

	if (!q)
		return -1;
	for (int64_t i = 0; i < numel; i++) {
		if (isfinite(src[i])) {
			lo = src[i] < lo ? src[i] : lo;
			hi = src[i] > hi ? src[i] : hi;
		}
	}
	p = q_params_from_range(lo, hi);
	for (int64_t i = 0; i < numel; i++) {
		float v = nearbyintf(src[i] / p.scale) + p.zp;

		q[i] = (int8_t)(isnan(v) ? p.zp : v < -128.0f ? -128 : v > 127.0f ? 127 : v);
	}
	hint_of(hint, sizeof(hint), tt->name, "quantized");
	tq = add_const(g, hint, ERT_DTYPE_INT8, tt->rank, tt->dims, q, (size_t)numel);
	hint_of(hint, sizeof(hint), g->tensors[t].name, "scale");
	ts = scalar_f32(g, hint, p.scale);
	hint_of(hint, sizeof(hint), g->tensors[t].name, "zero_point");
	tz = scalar_i8(g, hint, p.zp);
	return add_dq(g, g->tensors[t].name, tq, ts, tz, -1, t, -1);
}

/* Replace weights, biases and constant operands of quantised node @i. */
static bool rewrite_node(struct qg *q, uint32_t i)
{
	struct ert_graph *g = q->g;
	struct ert_node *n = &g->nodes[i];
	enum ert_op op = n->op;
	float alpha = 1.0f, beta = 1.0f, x_scale, *w_scale = NULL, *min_scale = NULL;
	int32_t w, b, t;
	int64_t ch = 0;

	if (q_kind_of(op) == QK_BINARY) {
		for (uint32_t k = 0; k < 2; k++) {
			if (!q_const_f32(g, g->nodes[i].inputs[k]))
				continue;
			t = quantize_operand(g, g->nodes[i].inputs[k]);
			if (t < 0)
				return false;
			g->nodes[i].inputs[k] = t;
		}
		return true;
	}
	if (q_kind_of(op) != QK_WEIGHTED)
		return true;
	if (op == ERT_OP_Gemm) {
		alpha = ert_attr_float(n, "alpha", 1.0f);
		beta = ert_attr_float(n, "beta", 1.0f);
	}
	w = q_in_at(n, 1);
	b = q_in_at(n, 2);
	x_scale = q->params[q_find(q->parent, n->inputs[0])].scale;
	if (b >= 0) {
		const struct ert_tensor *bt = &g->tensors[b];
		bool scalar = ert_shape_numel(bt->rank, bt->dims) == 1;

		ch = q_weight_channels(n, &g->tensors[w]);
		min_scale = malloc((size_t)ch * sizeof(*min_scale));
		if (!min_scale)
			goto oom;
		for (int64_t c = 0; c < ch; c++)
			min_scale[c] = q_bias_min_weight_scale(
				((const float *)bt->data)[scalar ? 0 : c] * beta, x_scale);
	}
	t = quantize_weight(g, n, w, alpha, min_scale, &w_scale, &ch);
	if (t < 0)
		goto oom;
	g->nodes[i].inputs[1] = t;
	if (b >= 0) {
		t = quantize_bias(g, b, beta, x_scale, w_scale, ch);
		if (t < 0)
			goto oom;
		g->nodes[i].inputs[2] = t;
	}
	/* alpha went into the weights and beta into the bias: the fixed-point rule wants 1 */
	if (op == ERT_OP_Gemm && (alpha != 1.0f || beta != 1.0f) &&
	    (!ert_node_set_attr_float(g, &g->nodes[i], "alpha", 1.0f) ||
	     !ert_node_set_attr_float(g, &g->nodes[i], "beta", 1.0f)))
		goto oom;
	free(w_scale);
	free(min_scale);
	return true;
oom:
	free(w_scale);
	free(min_scale);
	return false;
}

/* QuantizeLinear -> DequantizeLinear after activation @t; consumers read the result. */
static bool insert_qdq(struct qg *q, int32_t t, struct q_act *row)
{
	struct ert_graph *g = q->g;
	struct q_params p = q->params[q_find(q->parent, t)];
	int32_t rank = g->tensors[t].rank, src = t, tq, ts, tz, out = -1, qn;
	int64_t dims[ERT_MAX_RANK];
	char hint[256], base[256];

	snprintf(base, sizeof(base), "%s", g->tensors[t].name);
	if (rank > 0)
		memcpy(dims, g->tensors[t].dims, (size_t)rank * sizeof(dims[0]));
	hint_of(hint, sizeof(hint), base, "scale");
	ts = scalar_f32(g, hint, p.scale);
	hint_of(hint, sizeof(hint), base, "zero_point");
	tz = scalar_i8(g, hint, p.zp);
	hint_of(hint, sizeof(hint), base, "quantized");
	tq = ert_graph_add_tensor_unique(g, hint, ERT_DTYPE_INT8, rank, dims);
	if (ts < 0 || tz < 0 || tq < 0)
		return false;
	if (is_graph_io(g, t, ERT_TENSOR_OUTPUT)) {
		/* the output keeps its name: the producer writes a new float tensor */
		int32_t pn = ert_graph_producer(g, t);

		hint_of(hint, sizeof(hint), base, "float");
		src = ert_graph_add_tensor_unique(g, hint, ERT_DTYPE_FLOAT32, rank, dims);
		if (src < 0 || pn < 0)
			return false;
		for (uint32_t k = 0; k < g->nodes[pn].n_outputs; k++)
			if (g->nodes[pn].outputs[k] == t)
				g->nodes[pn].outputs[k] = src;
		out = t;
	}
	{
		int32_t in[3] = { src, ts, tz };

		hint_of(hint, sizeof(hint), base, "QuantizeLinear");
		qn = ert_graph_add_node(g, ERT_OP_QuantizeLinear, hint, 3, in, 1, &tq);
	}
	if (qn < 0)
		return false;
	out = add_dq(g, base, tq, ts, tz, -1, src, out);
	if (out < 0)
		return false;
	if (out != t) {
		/* every reader but the new QuantizeLinear reads the dequantised value */
		for (uint32_t i = 0; i < g->n_nodes; i++) {
			if ((int32_t)i == qn)
				continue;
			for (uint32_t k = 0; k < g->nodes[i].n_inputs; k++)
				if (g->nodes[i].inputs[k] == t)
					g->nodes[i].inputs[k] = out;
		}
	}
	row->qname = strdup(g->tensors[tq].name);
	row->p = p;
	return row->qname != NULL;
}

/* ---- driver ----------------------------------------------------------------- */

/* The rows of the cosine table: quantised activations in graph order. */
static bool collect_rows(struct qg *q, struct q_result *r, int32_t **order_out)
{
	const struct ert_graph *g = q->g;
	int32_t *order = calloc(q->n_tensors ? q->n_tensors : 1, sizeof(*order));
	uint32_t n = 0;

	if (!order)
		return false;
	for (uint32_t k = 0; k < g->n_inputs; k++)
		if (q->in_qt[g->inputs[k]])
			order[n++] = g->inputs[k];
	for (uint32_t i = 0; i < q->n_nodes; i++) {
		const struct ert_node *nd = &g->nodes[i];

		for (uint32_t k = 0; k < nd->n_outputs; k++)
			if (nd->outputs[k] >= 0 && q->in_qt[nd->outputs[k]])
				order[n++] = nd->outputs[k];
	}
	r->acts = calloc(n ? n : 1, sizeof(*r->acts));
	if (!r->acts) {
		free(order);
		return false;
	}
	for (uint32_t k = 0; k < n; k++) {
		int32_t pn = ert_graph_producer(g, order[k]);

		r->acts[k].tensor = q->fidx[order[k]];
		r->acts[k].node = pn >= 0 ? g->nodes[pn].name : "";
		r->acts[k].op = pn >= 0 ? ert_op_name(g->nodes[pn].op) : "input";
	}
	r->n_acts = n;
	*order_out = order;
	return true;
}

static bool rewrite(struct qg *q, struct q_result *r)
{
	int32_t *order = NULL;
	bool ok = false;

	for (uint32_t t = 0; t < q->n_tensors; t++) {
		int32_t root = q_find(q->parent, (int32_t)t);
		float lo, hi;

		/* once per group (a computed scale is never 0) */
		if (!q->in_qt[t] || q->params[root].scale != 0.0f)
			continue;
		q_range_of(&q->stats[q->fidx[root]], r->method, &lo, &hi);
		q->params[root] = q_params_from_range(lo, hi);
	}
	if (!collect_rows(q, r, &order))
		return false;
	for (uint32_t i = 0; i < q->n_nodes; i++)
		if (q->node_q[i] && !rewrite_node(q, i))
			goto out;
	for (uint32_t k = 0; k < r->n_acts; k++)
		if (!insert_qdq(q, order[k], &r->acts[k]))
			goto out;
	ok = true;
out:
	free(order);
	return ok;
}

/* The float graph through the .ert writer and loader: a copy to rewrite. */
static bool copy_graph(const struct ert_graph *fg, struct q_result *r, struct ert_err *err)
{
	ert_status st = ert_format_write_memory(fg, &(struct ert_write_options){ 0 }, &r->image,
						&r->image_size, err);

	if (st == ERT_OK)
		st = ert_format_load(r->image, r->image_size, &r->graph, err);
	return st == ERT_OK;
}

bool q_rewrite_graph(const struct ert_graph *fg, const struct q_stats *stats,
		     const struct q_choice *c, struct q_result *r)
{
	struct ert_err err = { "" };
	struct qg q = { .stats = stats };
	int32_t *fidx = NULL;
	ert_status st;
	bool ok = false;

	memset(r, 0, sizeof(*r));
	r->method = c->method;
	if (!copy_graph(fg, r, &err)) {
		cli_error("quantize", "failed to copy the graph: %s", err.msg);
		return false;
	}
	q.g = r->graph;
	q.n_tensors = q.g->n_tensors;
	q.n_nodes = q.g->n_nodes;
	fidx = malloc((q.n_tensors ? q.n_tensors : 1) * sizeof(*fidx));
	q.node_q = calloc(q.n_nodes ? q.n_nodes : 1, 1);
	q.in_qt = calloc(q.n_tensors ? q.n_tensors : 1, 1);
	q.parent = malloc((q.n_tensors ? q.n_tensors : 1) * sizeof(*q.parent));
	q.params = calloc(q.n_tensors ? q.n_tensors : 1, sizeof(*q.params));
	if (!fidx || !q.node_q || !q.in_qt || !q.parent || !q.params)
		goto oom;
	for (uint32_t t = 0; t < q.n_tensors; t++) {
		fidx[t] = ert_graph_find_tensor(fg, q.g->tensors[t].name);
		q.parent[t] = (int32_t)t;
	}
	q.fidx = fidx;
	q_choose(&q, c, r);
	if (!rewrite(&q, r))
		goto oom;
	st = ert_graph_toposort(q.g, &err);
	if (st != ERT_OK) {
		cli_error("quantize", "failed to sort the quantised graph: %s", err.msg);
		goto out;
	}
	ok = true;
	goto out;
oom:
	cli_error("quantize", "out of memory while quantising the graph");
out:
	free(fidx);
	free(q.node_q);
	free(q.in_qt);
	free(q.parent);
	free(q.params);
	if (!ok)
		q_result_free(r);
	return ok;
}

bool q_quantize_graph(const struct ert_graph *fg, const struct q_stats *stats,
		      const struct q_choice *c, struct q_result *r)
{
	struct ert_err err = { "" };

	if (!q_rewrite_graph(fg, stats, c, r))
		return false;
	if (ert_graph_optimize(r->graph, &err) != ERT_OK) {
		cli_error("quantize", "failed to optimise the quantised graph: %s", err.msg);
		q_result_free(r);
		return false;
	}
	return true;
}

void q_result_free(struct q_result *r)
{
	for (uint32_t k = 0; r->acts && k < r->n_acts; k++)
		free(r->acts[k].qname);
	free(r->acts);
	ert_graph_destroy(r->graph);
	free(r->image);
	memset(r, 0, sizeof(*r));
}
