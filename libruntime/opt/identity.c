/* SPDX-License-Identifier: MIT */
/*
 * Identity, inference-mode Dropout and one-input Sum removal. Readers of the
 * output read the input instead. When the output is a graph output its name
 * must survive, so the input's producer is made to write the output tensor
 * directly; when that is impossible (the input is a graph input, a constant
 * or another graph output) the node stays.
 *
 * A Sum of two inputs becomes an Add here too: the same float additions
 * (a + b, one rounding), with the same multidirectional broadcasting, so the
 * activation, residual and QDQ fusions that look for Add take it. Exported
 * ResNets write their residual as a Sum (the ONNX model zoo's ResNet-50 from
 * Caffe2: 16 Sums, each followed by a Relu, that otherwise ran as separate
 * passes over the block's output).
 */
#include <stdlib.h>

#include "opt/opt-private.h"

/* Dropout is an identity at inference unless training_mode is (or may be) on. */
static bool dropout_is_identity(const struct ert_graph *g, const struct ert_node *n,
				const uint32_t *uses)
{
	if (n->n_outputs > 1 && n->outputs[1] >= 0 && uses[n->outputs[1]])
		return false; /* the mask is read */
	if (n->n_inputs > 2 && n->inputs[2] >= 0) {
		const struct ert_tensor *t = &g->tensors[n->inputs[2]];

		if (!(t->flags & ERT_TENSOR_CONST) || t->nbytes < 1 ||
		    *(const uint8_t *)t->data != 0)
			return false;
	}
	return true;
}

/*
 * A Sum of exactly two present inputs without attributes (opset 1-5's
 * consumed_inputs would mean something else to Add of those opsets).
 */
static bool sum_as_add(const struct ert_node *n)
{
	return n->op == ERT_OP_Sum && n->n_inputs == 2 && !n->n_attrs && n->inputs[0] >= 0 &&
	       n->inputs[1] >= 0 && n->n_outputs == 1 && n->outputs[0] >= 0;
}

static bool remove_node(struct ert_graph *g, struct ert_node *n, const int32_t *producer)
{
	int32_t x = n->inputs[0], y = n->outputs[0];

	if (!ert_opt_is_graph_output(g, y)) {
		n->dead = true;
		ert_opt_replace_uses(g, y, x);
		return true;
	}
	const struct ert_tensor *xt = &g->tensors[x];
	int32_t p = producer[x];

	if (p < 0 || (xt->flags & (ERT_TENSOR_CONST | ERT_TENSOR_INPUT | ERT_TENSOR_OUTPUT)))
		return false;
	/* y takes x's place: x's producer writes y and x's other readers read y. */
	struct ert_node *pn = &g->nodes[p];

	for (uint32_t k = 0; k < pn->n_outputs; k++)
		if (pn->outputs[k] == x)
			pn->outputs[k] = y;
	n->dead = true;
	ert_opt_replace_uses(g, x, y);
	return true;
}

ert_status ert_opt_remove_identity(struct ert_graph *g, bool *changed, struct ert_err *err)
{
	uint32_t *uses = ert_opt_count_uses(g);
	int32_t *producer = ert_opt_producers(g);
	ert_status st = ERT_OK;

	if (!uses || !producer) {
		ert_err_set(err, "failed to remove identities: out of memory");
		st = ERT_STATUS_OUT_OF_MEMORY;
		goto out;
	}
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		struct ert_node *n = &g->nodes[i];

		if (!n->dead && sum_as_add(n)) {
			n->op = ERT_OP_Add;
			*changed = true;
			continue;
		}
		if (n->dead || (n->op != ERT_OP_Identity && n->op != ERT_OP_Dropout &&
				!(n->op == ERT_OP_Sum && n->n_inputs == 1 && !n->n_attrs)))
			continue;
		if (n->n_inputs < 1 || n->inputs[0] < 0 || n->n_outputs < 1 || n->outputs[0] < 0)
			continue;
		if (n->op == ERT_OP_Dropout && !dropout_is_identity(g, n, uses))
			continue;
		int32_t x = n->inputs[0], y = n->outputs[0];

		if (remove_node(g, n, producer)) {
			/* keep the producer table right for later nodes of this walk */
			if (producer[x] >= 0 && ert_opt_is_graph_output(g, y))
				producer[y] = producer[x];
			*changed = true;
		}
	}
out:
	free(uses);
	free(producer);
	return st;
}
