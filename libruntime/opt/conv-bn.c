/* SPDX-License-Identifier: MIT */
/*
 * Conv followed by inference-mode BatchNormalization becomes one Conv:
 *   s = scale / sqrt(var + eps),  W'[m] = W[m] * s[m],  b'[m] = (b[m] - mean[m]) * s[m] + B[m]
 * The new weights and bias are new owned constants (the originals may be shared).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt/opt-private.h"

struct bn_params {
	const float *scale, *bias, *mean, *var;
	float eps;
};

/* BatchNormalization @bn normalising a tensor of @m channels, all parameters constant. */
static bool bn_foldable(const struct ert_graph *g, const struct ert_node *bn, int64_t m,
			const uint32_t *uses, struct bn_params *p)
{
	if (bn->n_inputs != 5 || bn->outputs[0] < 0)
		return false;
	for (uint32_t k = 1; k < bn->n_outputs; k++)
		if (bn->outputs[k] >= 0 && uses[bn->outputs[k]])
			return false; /* running statistics are read: training mode */
	if (ert_attr_int(bn, "training_mode", 0) != 0 || ert_attr_int(bn, "spatial", 1) != 1)
		return false;
	p->scale = ert_opt_const_f32(g, bn->inputs[1], m);
	p->bias = ert_opt_const_f32(g, bn->inputs[2], m);
	p->mean = ert_opt_const_f32(g, bn->inputs[3], m);
	p->var = ert_opt_const_f32(g, bn->inputs[4], m);
	p->eps = ert_attr_float(bn, "epsilon", 1e-5f);
	return p->scale && p->bias && p->mean && p->var;
}

static ert_status fold_pair(struct ert_graph *g, uint32_t ci, uint32_t bi,
			    const struct bn_params *p, bool *changed, struct ert_err *err)
{
	struct ert_node *conv = &g->nodes[ci];
	const struct ert_tensor *wt = &g->tensors[conv->inputs[1]];
	int64_t m = wt->dims[0], per = ert_shape_numel(wt->rank, wt->dims) / (m ? m : 1);
	int32_t bias_t = conv->n_inputs > 2 ? conv->inputs[2] : -1;
	const float *w = wt->data, *b = bias_t >= 0 ? ert_opt_const_f32(g, bias_t, m) : NULL;
	int64_t wdims[ERT_MAX_RANK];
	int32_t wrank = wt->rank;
	char hint[160];
	float *nw = malloc((size_t)(m * per) * sizeof(float) + 1);
	float *nb = malloc((size_t)m * sizeof(float) + 1);
	int32_t *inputs = NULL;
	int32_t tw, tb;

	if (!nw || !nb)
		goto oom;
	memcpy(wdims, wt->dims, sizeof(wdims));
	for (int64_t c = 0; c < m; c++) {
		float s = p->scale[c] / sqrtf(p->var[c] + p->eps);

		for (int64_t j = 0; j < per; j++)
			nw[c * per + j] = w[c * per + j] * s;
		nb[c] = ((b ? b[c] : 0.0f) - p->mean[c]) * s + p->bias[c];
	}
	if (conv->n_inputs < 3) {
		inputs = realloc(conv->inputs, 3 * sizeof(*inputs));
		if (!inputs)
			goto oom;
		conv->inputs = inputs;
		inputs[2] = -1;
		conv->n_inputs = 3;
	}
	snprintf(hint, sizeof(hint), "%.120s.bn_w", conv->name);
	tw = ert_opt_add_const(g, hint, ERT_DTYPE_FLOAT32, wrank, wdims, nw,
			       (size_t)(m * per) * sizeof(float));
	nw = NULL;
	if (tw < 0)
		goto oom;
	snprintf(hint, sizeof(hint), "%.120s.bn_b", conv->name);
	tb = ert_opt_add_const(g, hint, ERT_DTYPE_FLOAT32, 1, &m, nb, (size_t)m * sizeof(float));
	nb = NULL;
	if (tb < 0)
		goto oom;
	conv = &g->nodes[ci];
	conv->inputs[1] = tw;
	conv->inputs[2] = tb;
	conv->outputs[0] = g->nodes[bi].outputs[0];
	g->nodes[bi].dead = true;
	*changed = true;
	return ERT_OK;
oom:
	free(nw);
	free(nb);
	ert_err_set(err, "failed to fold BatchNormalization into '%s': out of memory",
		    g->nodes[ci].name);
	return ERT_STATUS_OUT_OF_MEMORY;
}

ert_status ert_opt_fold_conv_bn(struct ert_graph *g, bool *changed, struct ert_err *err)
{
	uint32_t *uses = ert_opt_count_uses(g);
	int32_t *producer = ert_opt_producers(g);
	ert_status st = ERT_OK;

	if (!uses || !producer) {
		ert_err_set(err, "failed to fold batch norms: out of memory");
		st = ERT_STATUS_OUT_OF_MEMORY;
		goto out;
	}
	for (uint32_t bi = 0; bi < g->n_nodes && st == ERT_OK; bi++) {
		const struct ert_node *bn = &g->nodes[bi];
		struct bn_params p;

		if (bn->dead || bn->op != ERT_OP_BatchNormalization || bn->n_inputs < 1 ||
		    bn->inputs[0] < 0 || producer[bn->inputs[0]] < 0)
			continue;
		int32_t c = bn->inputs[0];
		uint32_t ci = (uint32_t)producer[c];
		const struct ert_node *conv = &g->nodes[ci];

		if (conv->op != ERT_OP_Conv || conv->n_outputs != 1 || uses[c] != 1 ||
		    ert_opt_is_graph_output(g, c) || ert_node_attr(conv, "ert.act") ||
		    conv->n_inputs < 2 || conv->inputs[1] < 0)
			continue;
		const struct ert_tensor *wt = &g->tensors[conv->inputs[1]];
		int64_t wn = ert_shape_numel(wt->rank, wt->dims);

		if (wt->rank < 3 || wt->dims[0] <= 0 || !ert_opt_const_f32(g, conv->inputs[1], wn))
			continue;
		if (conv->n_inputs > 2 && conv->inputs[2] >= 0 &&
		    !ert_opt_const_f32(g, conv->inputs[2], wt->dims[0]))
			continue;
		if (!bn_foldable(g, bn, wt->dims[0], uses, &p))
			continue;
		st = fold_pair(g, ci, bi, &p, changed, err);
	}
out:
	free(uses);
	free(producer);
	return st;
}
