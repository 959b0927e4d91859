/* SPDX-License-Identifier: MIT */
/* Op histogram, parameters and MACs of a graph (for edgert info). */
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu-impl.h"
#include "graph-stats.h"
#include "ops/linalg-einsum.h"
#include "ops/recurrent.h"

/* Largest value the walk computes (all outputs of a node together). */
#define STATS_EVAL_MAX_BYTES 65536

static uint64_t conv_macs(const struct ert_value *x, const struct ert_value *w,
			  const struct ert_value *y, bool transpose)
{
	uint64_t per;

	if (!w || w->rank < 1 || w->numel <= 0)
		return 0;
	if (!transpose) {
		/* each output element: (C/group) * kernel taps */
		if (w->dims[0] <= 0)
			return 0;
		per = (uint64_t)w->numel / (uint64_t)w->dims[0];
		return (uint64_t)y->numel * per;
	}
	/* each input element scatters into (M/group) * kernel taps outputs */
	if (x->rank < 2 || w->dims[0] <= 0)
		return 0;
	per = (uint64_t)w->numel / (uint64_t)w->dims[0];
	return (uint64_t)x->numel * per;
}

static uint64_t node_macs(const struct ert_node *n, const struct ert_value *const *in,
			  uint32_t n_in, const struct ert_value *y)
{
	const struct ert_value *a = n_in > 0 ? in[0] : NULL;
	const struct ert_value *b = n_in > 1 ? in[1] : NULL;

	if (!a || !y || y->numel < 0)
		return 0;
	switch (n->op) {
	case ERT_OP_Conv:
	case ERT_OP_ConvInteger:
		return conv_macs(a, b, y, false);
	case ERT_OP_QLinearConv:
		return conv_macs(a, n_in > 3 ? in[3] : NULL, y, false);
	case ERT_OP_ConvTranspose:
		return conv_macs(a, b, y, true);
	case ERT_OP_Gemm:
	case ERT_OP_QGemm:
		if (a->rank != 2)
			return 0;
		return (uint64_t)y->numel *
		       (uint64_t)(ert_attr_int(n, "transA", 0) ? a->dims[0] : a->dims[1]);
	case ERT_OP_MatMul:
	case ERT_OP_MatMulInteger:
	case ERT_OP_QLinearMatMul:
		if (a->rank < 1)
			return 0;
		return (uint64_t)y->numel * (uint64_t)a->dims[a->rank - 1];
	case ERT_OP_RNN:
	case ERT_OP_GRU:
	case ERT_OP_LSTM: {
		/* per direction and step: x W^T and h R^T for every gate (whole sequence) */
		struct ert_rnn_params p;
		struct ert_err err;
		uint64_t per;

		if (ert_rnn_params_get(n, in, n_in, &p, &err) != ERT_OK)
			return 0;
		per = (uint64_t)p.gates * (uint64_t)p.hidden * (uint64_t)(p.input + p.hidden);
		return (uint64_t)p.dirs * (uint64_t)p.seq * (uint64_t)p.batch * per;
	}
	case ERT_OP_InvertedResidual: {
		/*
		 * edgert's fused block (opt/fuse-irblock.c): the depthwise conv's
		 * W at 1, the project conv's at 3, the expand conv's at 5 when there
		 * is one; the three Convs' MACs, as before the fusion
		 */
		const struct ert_value *wp = n_in > 3 ? in[3] : NULL;
		uint64_t cm, m;

		if (!b || b->rank != 4 || !wp || wp->rank != 4 || y->rank != 4 || wp->dims[0] <= 0)
			return 0;
		cm = (uint64_t)b->dims[0];
		/* depthwise: each of its outputs (N x Cm x OH x OW) takes kh x kw taps */
		m = (uint64_t)(y->numel / wp->dims[0]) * cm * (uint64_t)(b->dims[2] * b->dims[3]);
		m += (uint64_t)y->numel * cm;           /* project: Cm per output */
		if (n_in >= 7)
			m += (uint64_t)a->numel * cm;   /* expand: Cm per input element */
		return m;
	}
	case ERT_OP_FusedAttention: {
		/*
		 * edgert's own (ops/attention.c): Q [.., S, D] KT [.., D, T] and
		 * the probabilities times V [.., T, E], each input read through
		 * its perm_* attribute: S D T + S T E MACs a (batch, head), that
		 * is (Q's numel + Y's) x T, T being dim perm_v[r - 2] of input 2
		 */
		const struct ert_value *v = n_in > 2 ? in[2] : NULL;
		uint32_t np;
		const int64_t *pv = ert_attr_ints(n, "perm_v", &np);
		int64_t t;

		if (!v || v->rank < 2 || v->rank != a->rank)
			return 0;
		t = pv && np == (uint32_t)v->rank ? pv[v->rank - 2] : v->rank - 2;
		if (t < 0 || t >= v->rank)
			return 0;
		return ((uint64_t)a->numel + (uint64_t)y->numel) * (uint64_t)v->dims[t];
	}
	case ERT_OP_Einsum: {
		struct ert_einsum e;
		struct ert_err err;
		uint64_t m = 1;
		const char *eq = ert_attr_string(n, "equation", NULL);

		if (!eq || n_in > ERT_EINSUM_MAX_OPS)
			return 0;
		for (uint32_t i = 0; i < n_in; i++)
			if (!in[i])
				return 0;
		if (ert_einsum_parse(&e, eq, n_in, in, &err, n->name) != ERT_OK)
			return 0;
		/* a contraction visits every combination of its labels once */
		for (int i = 0; i < ERT_EINSUM_MAX_LABELS; i++)
			if (e.size[i] > 0)
				m *= (uint64_t)e.size[i];
		return m;
	}
	default:
		return 0;
	}
}

static void init_value(struct ert_value *v, const struct ert_tensor *t)
{
	v->dtype = t->dtype;
	v->rank = t->rank;
	for (int32_t d = 0; d < t->rank && d < ERT_MAX_RANK; d++)
		v->dims[d] = t->dims[d] < 0 ? 1 : t->dims[d];
	if (t->rank < 0 || !ert_value_finish(v)) {
		v->rank = -1;
		return;
	}
	if (t->flags & ERT_TENSOR_CONST) {
		/* the walk never writes constant data; inference only reads it */
		v->data = (void *)t->data;
		if (t->nbytes < v->nbytes)
			v->data = NULL;
	}
}

/*
 * Compute @n's outputs when shapes further on need their values (Shape,
 * Gather, Concat... feeding a Reshape: a dynamic sequence length taken as
 * 1) and every input's value is known, as planning a session does: small
 * outputs only, no random generators, no subgraphs. The values are owned
 * by @s. What the CPU kernels refuse stays unknown.
 */
static void eval_values(const struct ert_graph *g, const struct ert_node *n,
			const uint8_t *need, const struct ert_value *const *in,
			struct ert_value **outs, struct graph_stats *s)
{
	struct ert_value vals[8];
	struct ert_err err;
	bool needed = false;
	uint64_t bytes = 0;

	if (!need || n->n_outputs > 8 || ert_op_is_random(n->op) || n->op == ERT_OP_If ||
	    n->op == ERT_OP_Loop || n->op == ERT_OP_Scan)
		return;
	for (uint32_t k = 0; k < n->n_outputs; k++) {
		if (!outs[k])
			continue;
		needed = needed || need[n->outputs[k]];
		bytes += outs[k]->nbytes;
	}
	if (!needed || bytes > STATS_EVAL_MAX_BYTES)
		return;
	/* Shape and Size read only their input's shape */
	for (uint32_t k = 0; n->op != ERT_OP_Shape && n->op != ERT_OP_Size && k < n->n_inputs; k++)
		if (in[k] && !in[k]->data)
			return;
	memset(vals, 0, sizeof(vals));
	if (ert_cpu_eval_node(g, n, in, n->n_inputs, vals, n->n_outputs, &err) != ERT_OK)
		return;
	for (uint32_t k = 0; k < n->n_outputs; k++) {
		int32_t t = n->outputs[k];

		if (outs[k] && vals[k].rank == outs[k]->rank && vals[k].nbytes == outs[k]->nbytes &&
		    vals[k].dtype == outs[k]->dtype) {
			outs[k]->data = vals[k].data;
			s->owned[t] = true;
		} else {
			free(vals[k].data);
		}
	}
}

bool graph_stats_compute(const struct ert_graph *g, struct graph_stats *out)
{
	uint8_t *needed_vals = NULL;
	const struct ert_value **in = NULL;
	struct ert_value **outs = NULL;
	uint32_t max_io = 1;

	memset(out, 0, sizeof(*out));
	out->n_tensors = g->n_tensors;
	out->vals = calloc(g->n_tensors ? g->n_tensors : 1, sizeof(*out->vals));
	out->node_macs = calloc(g->n_nodes ? g->n_nodes : 1, sizeof(*out->node_macs));
	out->owned = calloc(g->n_tensors ? g->n_tensors : 1, sizeof(*out->owned));
	if (!out->vals || !out->node_macs || !out->owned) {
		graph_stats_free(out);
		return false;
	}
	for (uint32_t t = 0; t < g->n_tensors; t++) {
		const struct ert_tensor *ten = &g->tensors[t];

		out->vals[t].rank = -1;
		if (ten->flags & (ERT_TENSOR_CONST | ERT_TENSOR_INPUT))
			init_value(&out->vals[t], ten);
		if ((ten->flags & ERT_TENSOR_CONST) && ten->rank >= 0) {
			int64_t n = ert_shape_numel(ten->rank, ten->dims);

			out->params += n > 0 ? (uint64_t)n : 0;
			out->param_bytes += ten->nbytes;
		}
	}
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct ert_node *n = &g->nodes[i];

		max_io = n->n_inputs > max_io ? n->n_inputs : max_io;
		max_io = n->n_outputs > max_io ? n->n_outputs : max_io;
	}
	in = calloc(max_io, sizeof(*in));
	outs = calloc(max_io, sizeof(*outs));
	needed_vals = ert_graph_mark_value_needed(g);
	if (!in || !outs || !needed_vals) {
		free(in);
		free(outs);
		free(needed_vals);
		graph_stats_free(out);
		return false;
	}
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct ert_node *n = &g->nodes[i];
		ert_infer_fn infer = (unsigned)n->op < ERT_OP_COUNT ? ert_op_infer(n->op) : NULL;
		uint32_t need = (unsigned)n->op < ERT_OP_COUNT ? ert_op_value_inputs(n->op) : 0;
		struct ert_err err = { "" };
		bool ok = infer != NULL;

		if ((unsigned)n->op < ERT_OP_COUNT)
			out->op_count[n->op]++;
		for (uint32_t k = 0; k < n->n_inputs; k++) {
			int32_t t = n->inputs[k];

			in[k] = NULL;
			if (t < 0 || (uint32_t)t >= g->n_tensors)
				continue;
			if (out->vals[t].rank < 0)
				ok = false;
			in[k] = &out->vals[t];
			if (k < 32 && (need >> k & 1) && !out->vals[t].data)
				ok = false;
		}
		for (uint32_t k = 0; k < n->n_outputs; k++) {
			int32_t t = n->outputs[k];

			outs[k] = t >= 0 && (uint32_t)t < g->n_tensors ? &out->vals[t] : NULL;
			if (outs[k] && !(g->tensors[t].flags & ERT_TENSOR_CONST))
				memset(outs[k], 0, sizeof(*outs[k]));
		}
		if (ok) {
			struct ert_infer_ctx ctx = {
				.graph = g, .node = n, .in = in, .out = outs,
				.n_in = n->n_inputs, .n_out = n->n_outputs, .err = &err,
			};

			ok = infer(&ctx) == ERT_OK;
			for (uint32_t k = 0; ok && k < n->n_outputs; k++)
				if (outs[k] && !ert_value_finish(outs[k]))
					ok = false;
		}
		if (!ok) {
			out->unknown++;
			for (uint32_t k = 0; k < n->n_outputs; k++)
				if (outs[k]) {
					outs[k]->rank = -1;
					outs[k]->data = NULL;
				}
			continue;
		}
		out->node_macs[i] = node_macs(n, in, n->n_inputs, n->n_outputs ? outs[0] : NULL);
		out->macs += out->node_macs[i];
		eval_values(g, n, needed_vals, in, outs, out);
	}
	free(in);
	free(outs);
	free(needed_vals);
	return true;
}

void graph_stats_free(struct graph_stats *s)
{
	for (uint32_t t = 0; s->vals && s->owned && t < s->n_tensors; t++)
		if (s->owned[t])
			free(s->vals[t].data);
	free(s->owned);
	s->owned = NULL;
	free(s->vals);
	free(s->node_macs);
	s->vals = NULL;
	s->node_macs = NULL;
}
