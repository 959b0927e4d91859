/* SPDX-License-Identifier: MIT */
/*
 * Attention fusion: MatMul(Q, K) -> [Mul or Div by a scalar] -> Softmax
 * (last axis) -> MatMul(., V) becomes one FusedAttention(Q, K, V) node
 * (ops/attention.c), which the CPU runs per (batch, head) and block of
 * query rows without writing the score tensor out (cpu/ops/attention.c).
 *
 * The Transposes that fold-transpose.c folded into the MatMuls carry over:
 * the score MatMul's ert.perm_a and ert.perm_b become perm_q and perm_kt,
 * the second MatMul's ert.perm_b and ert.perm_y become perm_v and perm_y.
 * Float32; every intermediate read by the next op alone and no graph
 * output; neither MatMul with a bias or activation of its own, the score
 * MatMul without ert.perm_y, the second without ert.perm_a; the scale a
 * constant float32 of one element and of rank no more than the scores'
 * (Mul on either side, or the scores divided by it: the fused op
 * multiplies by 1 / c, so that form is not bit-identical); the softmax on
 * the last axis. Q, K and V must have static shapes, one rank (2 or more)
 * after their perms, and the same leading dims (no broadcasting between
 * them), where the unfused MatMuls would broadcast.
 *
 * Only the CPU runs FusedAttention: a GPU or NPU backend leaves it to the
 * CPU. The pass is off by default (ERT_OPT_ATTENTION_DEFAULT);
 * ERT_FUSE_ATTENTION=1 (or 0) in the environment of whatever runs the
 * optimiser (edgert convert / zoo, the ONNX importer) turns it on (off). ert_opt_unfuse_attention() gives
 * the four ops back (for the quantizer, which quantizes them one by one).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/linalg-geom.h"
#include "opt/opt-private.h"

struct attn_match {
	uint32_t qk, scale, sm, pv; /* node indices; scale UINT32_MAX when none */
	float mul;
};

static bool plain_matmul(const struct ert_graph *g, const struct ert_node *n)
{
	return !n->dead && n->op == ERT_OP_MatMul && n->n_inputs == 2 && n->n_outputs == 1 &&
	       n->inputs[0] >= 0 && n->inputs[1] >= 0 && n->outputs[0] >= 0 &&
	       !ert_attr_int(n, "ert.bias", 0) && ert_node_act(n).type == ERT_ACT_NONE &&
	       (g->tensors[n->outputs[0]].dtype == ERT_DTYPE_FLOAT32 ||
		g->tensors[n->outputs[0]].dtype == ERT_DTYPE_UNDEFINED);
}

/* Tensor @t is read once, by a node, and is no graph output. */
static bool single_use(const struct ert_graph *g, const uint32_t *uses, int32_t t)
{
	return t >= 0 && uses[t] == 1 && !ert_opt_is_graph_output(g, t);
}

static bool from_dequantize(const struct ert_graph *g, const int32_t *producer, int32_t t)
{
	return producer[t] >= 0 && g->nodes[producer[t]].op == ERT_OP_DequantizeLinear;
}

/* A scale node @n (Mul or Div) of input @x by a scalar constant: its factor into *@mul. */
static bool scale_of(const struct ert_graph *g, const struct ert_node *n, int32_t x, int32_t r,
		     float *mul)
{
	int side;
	const float *c;

	if (n->dead || (n->op != ERT_OP_Mul && n->op != ERT_OP_Div) || n->n_inputs != 2 ||
	    n->n_outputs != 1 || n->outputs[0] < 0)
		return false;
	side = n->inputs[0] == x ? 1 : 0;
	if (n->inputs[1 - side] != x || n->inputs[side] < 0 || n->inputs[side] == x ||
	    (n->op == ERT_OP_Div && side != 1))
		return false;
	c = ert_opt_const_f32(g, n->inputs[side], 1);
	if (!c || g->tensors[n->inputs[side]].rank > r)
		return false;
	*mul = n->op == ERT_OP_Div ? 1.0f / *c : *c;
	return true;
}

/* Shapes of Q, KT, V (the MatMuls' operands after their perms): static, chained, one batch. */
static bool shapes_fit(const struct ert_graph *g, const struct ert_node *qk,
		       const struct ert_node *pv, int32_t *rank)
{
	const struct ert_tensor *t[3] = { &g->tensors[qk->inputs[0]], &g->tensors[qk->inputs[1]],
					   &g->tensors[pv->inputs[1]] };
	const struct ert_node *host[3] = { qk, qk, pv };
	const int which[3] = { ERT_MATMUL_PERM_A, ERT_MATMUL_PERM_B, ERT_MATMUL_PERM_B };
	int64_t v[3][ERT_MAX_RANK];
	int32_t perm[ERT_MAX_RANK], r = t[0]->rank;

	for (int i = 0; i < 3; i++) {
		if (!ert_opt_shape_static(t[i]) || t[i]->rank != r || r < 2 ||
		    t[i]->dtype != ERT_DTYPE_FLOAT32 ||
		    !ert_matmul_perm(host[i], which[i], r, perm))
			return false;
		ert_perm_view(r, t[i]->dims, perm, false, v[i], NULL);
	}
	for (int32_t d = 0; d < r - 2; d++)
		if (v[0][d] != v[1][d] || v[0][d] != v[2][d])
			return false;
	*rank = r;
	return v[0][r - 1] == v[1][r - 2] && v[1][r - 1] == v[2][r - 2] &&
	       (!ert_node_attr(pv, "ert.perm_y") || ert_matmul_perm(pv, ERT_MATMUL_PERM_Y, r, perm));
}

/* Does Softmax @si start an attention pattern? */
static bool match(const struct ert_graph *g, const uint32_t *uses, const int32_t *producer,
		  uint32_t si, struct attn_match *m)
{
	const struct ert_node *sm = &g->nodes[si], *qk, *pv = NULL;
	int32_t x, p, r;

	if (sm->dead || sm->op != ERT_OP_Softmax || sm->n_inputs != 1 || sm->n_outputs != 1 ||
	    sm->inputs[0] < 0 || sm->outputs[0] < 0)
		return false;
	x = sm->inputs[0];
	p = sm->outputs[0];
	if (!single_use(g, uses, x) || !single_use(g, uses, p) || producer[x] < 0)
		return false;
	m->sm = si;
	m->scale = UINT32_MAX;
	m->mul = 1.0f;
	qk = &g->nodes[producer[x]];
	if (qk->op == ERT_OP_Mul || qk->op == ERT_OP_Div) {
		const struct ert_node *sc = qk;
		int32_t s = -1;

		for (uint32_t k = 0; k < sc->n_inputs && s < 0; k++)
			if (sc->inputs[k] >= 0 && producer[sc->inputs[k]] >= 0 &&
			    g->nodes[producer[sc->inputs[k]]].op == ERT_OP_MatMul)
				s = sc->inputs[k];
		if (s < 0 || !single_use(g, uses, s))
			return false;
		m->scale = (uint32_t)producer[x];
		qk = &g->nodes[producer[s]];
		/* the rank check waits for the MatMul's shapes: scale_of() below */
	}
	if (!plain_matmul(g, qk) || ert_node_attr(qk, "ert.perm_y"))
		return false;
	m->qk = (uint32_t)(qk - g->nodes);
	for (uint32_t i = 0; i < g->n_nodes && !pv; i++)
		if (!g->nodes[i].dead && g->nodes[i].op == ERT_OP_MatMul &&
		    g->nodes[i].n_inputs >= 1 && g->nodes[i].inputs[0] == p)
			pv = &g->nodes[i];
	if (!pv || !plain_matmul(g, pv) || pv->inputs[1] == p || ert_node_attr(pv, "ert.perm_a"))
		return false;
	m->pv = (uint32_t)(pv - g->nodes);
	if (!shapes_fit(g, qk, pv, &r))
		return false;
	if (m->scale != UINT32_MAX &&
	    !scale_of(g, &g->nodes[m->scale], qk->outputs[0], r, &m->mul))
		return false;
	/* the softmax axis, normalised: the last (opset < 13 flattens from it: the same rows) */
	int64_t axis = ert_attr_int(sm, "axis", sm->opset && sm->opset < 13 ? 1 : -1);

	if (axis < 0)
		axis += r;
	if (axis != r - 1)
		return false;
	for (int k = 0; k < 2; k++)
		if (from_dequantize(g, producer, qk->inputs[k]))
			return false;
	return !from_dequantize(g, producer, pv->inputs[1]);
}

/* Copy MatMul @mm's attribute @from to @n as @to, where @mm has it. */
static bool copy_perm(struct ert_graph *g, uint32_t mm, uint32_t n, const char *from,
		      const char *to)
{
	uint32_t count = 0;
	const int64_t *p = ert_attr_ints(&g->nodes[mm], from, &count);

	return !ert_node_attr(&g->nodes[mm], from) ||
	       (p && ert_node_set_attr_ints(g, &g->nodes[n], to, p, count));
}

static bool rewrite(struct ert_graph *g, const struct attn_match *m)
{
	char name[160];
	int32_t in[3] = { g->nodes[m->qk].inputs[0], g->nodes[m->qk].inputs[1],
			  g->nodes[m->pv].inputs[1] };
	int32_t y = g->nodes[m->pv].outputs[0];
	int32_t ni;

	snprintf(name, sizeof(name), "%.140s.attention", g->nodes[m->sm].name);
	ni = ert_graph_add_node(g, ERT_OP_FusedAttention, name, 3, in, 1, &y);
	if (ni < 0)
		return false;
	g->nodes[ni].opset = g->nodes[m->sm].opset;
	if (!copy_perm(g, m->qk, (uint32_t)ni, "ert.perm_a", "perm_q") ||
	    !copy_perm(g, m->qk, (uint32_t)ni, "ert.perm_b", "perm_kt") ||
	    !copy_perm(g, m->pv, (uint32_t)ni, "ert.perm_b", "perm_v") ||
	    !copy_perm(g, m->pv, (uint32_t)ni, "ert.perm_y", "perm_y") ||
	    (m->mul != 1.0f && !ert_node_set_attr_float(g, &g->nodes[ni], "scale", m->mul))) {
		/* the half-made node computes nothing: gone again */
		g->nodes[ni].dead = true;
		return false;
	}
	g->nodes[m->qk].dead = true;
	g->nodes[m->sm].dead = true;
	g->nodes[m->pv].dead = true;
	if (m->scale != UINT32_MAX)
		g->nodes[m->scale].dead = true;
	return true;
}

ert_status ert_opt_fuse_attention(struct ert_graph *g, bool *changed, struct ert_err *err)
{
	uint32_t *uses, n_nodes = g->n_nodes;
	int32_t *producer;
	ert_status st = ERT_OK;

	if (!ert_opt_env_switch("ERT_FUSE_ATTENTION", ERT_OPT_ATTENTION_DEFAULT))
		return ERT_OK;
	uses = ert_opt_count_uses(g);
	producer = ert_opt_producers(g);
	if (!uses || !producer) {
		ert_err_set(err, "failed to fuse attention: out of memory");
		st = ERT_STATUS_OUT_OF_MEMORY;
		goto out;
	}
	for (uint32_t i = 0; i < n_nodes; i++) {
		struct attn_match m;

		if (!match(g, uses, producer, i, &m))
			continue;
		if (!rewrite(g, &m)) {
			ert_err_set(err, "failed to fuse attention at '%s': out of memory",
				    g->nodes[i].name);
			st = ERT_STATUS_OUT_OF_MEMORY;
			goto out;
		}
		/* the four nodes' outputs are gone; the new node's are not in producer[]: no rematch */
		*changed = true;
	}
out:
	free(uses);
	free(producer);
	return st;
}

/* A new tensor named after @t's name and @suffix; -1 on out-of-memory. */
static int32_t new_tensor(struct ert_graph *g, int32_t t, const char *suffix)
{
	char name[160];

	snprintf(name, sizeof(name), "%.120s.%s", g->tensors[t].name, suffix);
	return ert_graph_add_tensor_unique(g, name, ERT_DTYPE_FLOAT32, -1, NULL);
}

/* A node @op of @n_in inputs and one output, named after node @host; its index or -1. */
static int32_t new_node(struct ert_graph *g, uint32_t host, enum ert_op op, const char *suffix,
			const int32_t *in, uint32_t n_in, int32_t out)
{
	char name[160];
	int32_t ni;

	snprintf(name, sizeof(name), "%.120s.%s", g->nodes[host].name, suffix);
	ni = ert_graph_add_node(g, op, name, n_in, in, 1, &out);
	if (ni >= 0)
		g->nodes[ni].opset = g->nodes[host].opset;
	return ni;
}

/* FusedAttention @i as its four ops again: false on out-of-memory. */
static bool unfuse_one(struct ert_graph *g, uint32_t i)
{
	int32_t q = g->nodes[i].inputs[0], k = g->nodes[i].inputs[1], v = g->nodes[i].inputs[2];
	int32_t y = g->nodes[i].outputs[0];
	float scale = ert_attr_float(&g->nodes[i], "scale", 1.0f);
	int32_t s = new_tensor(g, y, "scores"), p = new_tensor(g, y, "probs"), ss = s, n;

	if (s < 0 || p < 0)
		return false;
	n = new_node(g, i, ERT_OP_MatMul, "qk", (int32_t[]){ q, k }, 2, s);
	if (n < 0 || !copy_perm(g, i, (uint32_t)n, "perm_q", "ert.perm_a") ||
	    !copy_perm(g, i, (uint32_t)n, "perm_kt", "ert.perm_b"))
		return false;
	if (scale != 1.0f) {
		float *c = malloc(sizeof(*c));
		int32_t ct;

		if (!c)
			return false;
		*c = scale;
		ct = ert_opt_add_const(g, "attention.scale", ERT_DTYPE_FLOAT32, 0, NULL, c, sizeof(*c));
		ss = new_tensor(g, y, "scaled");
		if (ct < 0 || ss < 0 ||
		    new_node(g, i, ERT_OP_Mul, "scale", (int32_t[]){ s, ct }, 2, ss) < 0)
			return false;
	}
	n = new_node(g, i, ERT_OP_Softmax, "softmax", &ss, 1, p);
	/* axis -1: the last dim (opsets before 13 flatten from it: the same rows) */
	if (n < 0 || !ert_node_set_attr_int(g, &g->nodes[n], "axis", -1))
		return false;
	n = new_node(g, i, ERT_OP_MatMul, "pv", (int32_t[]){ p, v }, 2, y);
	if (n < 0 || !copy_perm(g, i, (uint32_t)n, "perm_v", "ert.perm_b") ||
	    !copy_perm(g, i, (uint32_t)n, "perm_y", "ert.perm_y"))
		return false;
	g->nodes[i].dead = true;
	return true;
}

ert_status ert_opt_unfuse_attention(struct ert_graph *g, struct ert_err *err)
{
	uint32_t n_nodes = g->n_nodes;
	bool any = false;

	for (uint32_t i = 0; i < n_nodes; i++) {
		const struct ert_node *n = &g->nodes[i];

		if (n->dead || n->op != ERT_OP_FusedAttention || n->n_inputs != 3 ||
		    n->n_outputs != 1 || n->outputs[0] < 0)
			continue;
		if (!unfuse_one(g, i)) {
			ert_err_set(err, "failed to split the fused attention '%s': out of memory",
				    g->nodes[i].name);
			return ERT_STATUS_OUT_OF_MEMORY;
		}
		any = true;
	}
	/* the fused nodes go: their outputs have new producers */
	if (any && ert_graph_compact(g) != ERT_OK) {
		ert_err_set(err, "failed to compact graph: out of memory");
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	return ERT_OK;
}
