/* SPDX-License-Identifier: MIT */
/*
 * Static shape propagation: where every input of a node has a known shape (and
 * the inputs shape inference reads by value are constants), run the op's shape
 * inference and record the output shapes in the graph. Later passes (Shape
 * folding, fusion) and `edgert info` rely on them; the planner still infers
 * shapes itself for the actual input shapes.
 */
#include <stdlib.h>
#include <string.h>

#include "opt/opt-private.h"

struct infer_bufs {
	uint32_t cap_in, cap_out;
	struct ert_value *in_vals, *out_vals;
	const struct ert_value **in;
	struct ert_value **out;
};

/* Spare NULL entries past n_in / n_out, for shape inference that reads ahead. */
#define SPARE 8

static bool bufs_reserve(struct infer_bufs *b, uint32_t n_in, uint32_t n_out)
{
	n_in += SPARE;
	n_out += SPARE;
	if (n_in > b->cap_in) {
		void *v = realloc(b->in_vals, n_in * sizeof(*b->in_vals));

		if (!v)
			return false;
		b->in_vals = v;
		v = realloc((void *)b->in, n_in * sizeof(*b->in));
		if (!v)
			return false;
		b->in = v;
		b->cap_in = n_in;
	}
	if (n_out > b->cap_out) {
		void *v = realloc(b->out_vals, n_out * sizeof(*b->out_vals));

		if (!v)
			return false;
		b->out_vals = v;
		v = realloc(b->out, n_out * sizeof(*b->out));
		if (!v)
			return false;
		b->out = v;
		b->cap_out = n_out;
	}
	return true;
}

static void bufs_free(struct infer_bufs *b)
{
	free(b->in_vals);
	free(b->out_vals);
	free((void *)b->in);
	free(b->out);
}

/* Inputs ready: shapes static, dtypes known, value inputs constant. */
static bool inputs_ready(const struct ert_graph *g, const struct ert_node *n)
{
	uint32_t need = ert_op_value_inputs(n->op);

	if (n->n_inputs == 0 || n->inputs[0] < 0)
		return false; /* every op of ert-ops.def needs its first input */
	for (uint32_t k = 0; k < n->n_inputs; k++) {
		int32_t t = n->inputs[k];

		if (t < 0)
			continue;
		const struct ert_tensor *x = &g->tensors[t];

		if (!ert_opt_shape_static(x) || !ert_dtype_valid(x->dtype))
			return false;
		if (k < 32 && (need & (1u << k)) && !(x->flags & ERT_TENSOR_CONST))
			return false;
	}
	return true;
}

static bool record(struct ert_tensor *x, const struct ert_value *v)
{
	bool same = x->dtype == v->dtype && x->rank == v->rank;

	for (int32_t i = 0; same && i < v->rank; i++)
		same = x->dims[i] == v->dims[i];
	if (same)
		return false;
	ert_tensor_take_shape(x, v);
	return true;
}

static bool value_sane(const struct ert_value *v)
{
	if (v->rank < 0 || v->rank > ERT_MAX_RANK || !ert_dtype_valid(v->dtype))
		return false;
	for (int32_t i = 0; i < v->rank; i++)
		if (v->dims[i] < 0)
			return false;
	return true;
}

ert_status ert_opt_infer_shapes(struct ert_graph *g, bool *changed, struct ert_err *err)
{
	struct infer_bufs b = { 0 };
	ert_status st = ERT_OK;

	for (uint32_t i = 0; i < g->n_nodes; i++) {
		struct ert_node *n = &g->nodes[i];
		ert_infer_fn infer = ert_op_infer(n->op);
		struct ert_err local;

		if (n->dead || !infer || !inputs_ready(g, n))
			continue;
		if (!bufs_reserve(&b, n->n_inputs, n->n_outputs)) {
			ert_err_set(err, "failed to propagate shapes: out of memory");
			st = ERT_STATUS_OUT_OF_MEMORY;
			break;
		}
		for (uint32_t k = 0; k < b.cap_in; k++)
			b.in[k] = NULL;
		for (uint32_t k = 0; k < b.cap_out; k++)
			b.out[k] = NULL;
		for (uint32_t k = 0; k < n->n_inputs; k++) {
			if (n->inputs[k] < 0) {
				b.in[k] = NULL;
				continue;
			}
			ert_opt_tensor_value(g, n->inputs[k], &b.in_vals[k]);
			b.in[k] = &b.in_vals[k];
		}
		for (uint32_t k = 0; k < n->n_outputs; k++) {
			memset(&b.out_vals[k], 0, sizeof(b.out_vals[k]));
			b.out[k] = n->outputs[k] >= 0 ? &b.out_vals[k] : NULL;
		}
		struct ert_infer_ctx ctx = {
			.graph = g, .node = n, .in = b.in, .out = b.out,
			.n_in = n->n_inputs, .n_out = n->n_outputs, .err = &local,
		};

		/* A node that does not infer here fails at plan time with its message. */
		if (infer(&ctx) != ERT_OK)
			continue;
		for (uint32_t k = 0; k < n->n_outputs; k++) {
			int32_t t = n->outputs[k];

			if (t < 0 || (g->tensors[t].flags & ERT_TENSOR_CONST) ||
			    !value_sane(&b.out_vals[k]))
				continue;
			if (record(&g->tensors[t], &b.out_vals[k]))
				*changed = true;
		}
	}
	bufs_free(&b);
	return st;
}
