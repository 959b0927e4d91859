/* SPDX-License-Identifier: MIT */
/*
 * edgert quantize: which nodes are quantised and which activations get a
 * QuantizeLinear/DequantizeLinear pair. A node is quantised when its op is
 * one the int8 path has, its activations were seen by the calibration, its
 * weight is constant and its fused activation (if any) is a clamp; pools,
 * Reshape and Flatten put their output in their input's group so that both
 * share one scale and zero point. Elementwise activations standing on their
 * own (Sigmoid, HardSwish, ...) get their input and output quantised: the QDQ
 * fusion turns them into table lookups.
 */
#include <string.h>

#include "opt/passes.h"
#include "quantize.h"

enum q_kind q_kind_of(enum ert_op op)
{
	switch (op) {
	case ERT_OP_Conv:
	case ERT_OP_Gemm:
	case ERT_OP_MatMul:
		return QK_WEIGHTED;
	case ERT_OP_Add:
	case ERT_OP_Mul:
		return QK_BINARY;
	case ERT_OP_AveragePool:
	case ERT_OP_GlobalAveragePool:
	case ERT_OP_MaxPool:
		return QK_POOL;
	case ERT_OP_Reshape:
	case ERT_OP_Flatten:
		return QK_SHAPE;
	default:
		/* what the QDQ fusion turns into a table lookup */
		return ert_opt_table_op(op) ? QK_UNARY : QK_NONE;
	}
}

/* A float activation the calibration saw, and that can be rewired. */
static bool act_ok(const struct qg *q, int32_t t)
{
	const struct ert_tensor *tt;

	if (t < 0 || (uint32_t)t >= q->n_tensors || q->fidx[t] < 0)
		return false;
	tt = &q->g->tensors[t];
	if (tt->flags & ERT_TENSOR_CONST)
		return false;
	if ((tt->flags & ERT_TENSOR_INPUT) && (tt->flags & ERT_TENSOR_OUTPUT))
		return false;
	return q->stats[q->fidx[t]].samples > 0;
}

bool q_const_f32(const struct ert_graph *g, int32_t t)
{
	const struct ert_tensor *tt;
	int64_t n;

	if (t < 0)
		return false;
	tt = &g->tensors[t];
	n = ert_shape_numel(tt->rank, tt->dims);
	return (tt->flags & ERT_TENSOR_CONST) && tt->dtype == ERT_DTYPE_FLOAT32 && n > 0 &&
	       tt->data && tt->nbytes == (size_t)n * sizeof(float);
}

/* Output features of a Gemm or MatMul weight, or of a Conv (axis 0). */
int64_t q_weight_channels(const struct ert_node *n, const struct ert_tensor *w)
{
	if (n->op == ERT_OP_Conv)
		return w->dims[0];
	if (n->op == ERT_OP_Gemm)
		return ert_attr_int(n, "transB", 0) ? w->dims[0] : w->dims[1];
	return w->dims[w->rank - 1];
}

/* A bias the int32 form can hold: absent, or constant with one value per channel (or one). */
static bool bias_ok(const struct ert_graph *g, int32_t b, int64_t channels)
{
	int64_t n;

	if (b < 0)
		return true;
	if (!q_const_f32(g, b))
		return false;
	n = ert_shape_numel(g->tensors[b].rank, g->tensors[b].dims);
	return n == 1 || (n == channels && g->tensors[b].rank >= 1 &&
			  g->tensors[b].dims[g->tensors[b].rank - 1] == channels);
}

/* Could @n be quantised (leaving --keep-float aside)? */
static bool eligible(const struct qg *q, const struct ert_node *n)
{
	const struct ert_graph *g = q->g;
	enum ert_act act = ert_node_act(n).type;

	if (n->n_outputs < 1 || !act_ok(q, n->outputs[0]))
		return false;
	for (uint32_t k = 1; k < n->n_outputs; k++)
		if (n->outputs[k] >= 0)
			return false; /* MaxPool's Indices */
	/* int8 ops clamp; other fused activations have no int8 form */
	if (act != ERT_ACT_NONE && act != ERT_ACT_RELU && act != ERT_ACT_CLIP)
		return false;
	switch (q_kind_of(n->op)) {
	case QK_WEIGHTED: {
		int32_t w = q_in_at(n, 1);
		const struct ert_tensor *wt;

		if (!act_ok(q, q_in_at(n, 0)) || !q_const_f32(g, w))
			return false;
		wt = &g->tensors[w];
		if (n->op == ERT_OP_Conv) {
			if (wt->rank < 3)
				return false;
			return bias_ok(g, q_in_at(n, 2), wt->dims[0]) &&
			       (q_in_at(n, 2) < 0 || g->tensors[q_in_at(n, 2)].rank == 1);
		}
		if (n->op == ERT_OP_Gemm)
			return wt->rank == 2 && bias_ok(g, q_in_at(n, 2), q_weight_channels(n, wt));
		return wt->rank >= 2 && n->n_inputs == 2;
	}
	case QK_BINARY: {
		int32_t a = q_in_at(n, 0), b = q_in_at(n, 1);

		if (n->n_inputs != 2 || (!act_ok(q, a) && !act_ok(q, b)))
			return false;
		return (act_ok(q, a) || q_const_f32(g, a)) && (act_ok(q, b) || q_const_f32(g, b));
	}
	case QK_POOL:
	case QK_UNARY:
		return act_ok(q, q_in_at(n, 0)) && n->n_inputs == 1;
	default:
		return false;
	}
}

int32_t q_find(int32_t *parent, int32_t t)
{
	while (parent[t] != t) {
		parent[t] = parent[parent[t]];
		t = parent[t];
	}
	return t;
}

/* @out takes @in's scale and zero point. */
static void share(struct qg *q, int32_t out, int32_t in)
{
	q->parent[q_find(q->parent, out)] = q_find(q->parent, in);
}

static bool kept(const struct q_choice *c, const struct ert_node *n, uint32_t i, int64_t first,
		 int64_t last)
{
	if ((c->keep_first && (int64_t)i == first) || (c->keep_last && (int64_t)i == last))
		return true;
	for (uint32_t k = 0; k < c->n_keep_float; k++)
		if (strcmp(c->keep_float[k], n->name) == 0)
			return true;
	return false;
}

void q_choose(struct qg *q, const struct q_choice *c, struct q_result *r)
{
	const struct ert_graph *g = q->g;
	int64_t first = -1, last = -1;

	for (uint32_t i = 0; i < q->n_nodes; i++) {
		if (q_kind_of(g->nodes[i].op) != QK_SHAPE && eligible(q, &g->nodes[i])) {
			if (first < 0)
				first = i;
			last = i;
		}
	}
	for (uint32_t i = 0; i < q->n_nodes; i++) {
		const struct ert_node *n = &g->nodes[i];

		if (q_kind_of(n->op) == QK_SHAPE || !eligible(q, n))
			continue;
		if (kept(c, n, i, first, last)) {
			r->n_float++;
			continue;
		}
		q->node_q[i] = 1;
		for (uint32_t k = 0; k < n->n_inputs; k++)
			if (act_ok(q, n->inputs[k]) && (k == 0 || q_kind_of(n->op) == QK_BINARY))
				q->in_qt[n->inputs[k]] = 1;
		q->in_qt[n->outputs[0]] = 1;
		if (q_kind_of(n->op) == QK_POOL)
			share(q, n->outputs[0], n->inputs[0]);
	}
	/* in graph order, so that a chain of reshapes follows its quantised input */
	for (uint32_t i = 0; i < q->n_nodes; i++) {
		const struct ert_node *n = &g->nodes[i];

		if (q_kind_of(n->op) != QK_SHAPE || n->n_outputs != 1 || !act_ok(q, n->outputs[0]) ||
		    !act_ok(q, q_in_at(n, 0)) || !q->in_qt[n->inputs[0]] || kept(c, n, i, -1, -1))
			continue;
		q->node_q[i] = 1;
		q->in_qt[n->outputs[0]] = 1;
		share(q, n->outputs[0], n->inputs[0]);
	}
	for (uint32_t i = 0; i < q->n_nodes; i++)
		r->n_quantized += q->node_q[i];
}

bool q_check_keep_float(const struct ert_graph *g, const struct q_choice *c)
{
	for (uint32_t k = 0; k < c->n_keep_float; k++) {
		uint32_t i;

		for (i = 0; i < g->n_nodes; i++)
			if (strcmp(g->nodes[i].name, c->keep_float[k]) == 0)
				break;
		if (i == g->n_nodes)
			return cli_error("quantize", "--keep-float: the model has no node named '%s'",
					 c->keep_float[k]),
			       false;
	}
	return true;
}
