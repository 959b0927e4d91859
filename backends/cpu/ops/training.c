/* SPDX-License-Identifier: MIT */
/*
 * CPU reference kernels: ai.onnx.preview.training's Adagrad, Adam and
 * Momentum, one update step per (X, G, states) group, computed in double
 * as ONNX's reference implementation writes them:
 *   g = norm_coefficient * X + G (the regularised gradient), then
 *   Adagrad:  H' = H + g^2; X' = X - R / (1 + T * decay_factor) * g / (sqrt(H') + epsilon)
 *   Momentum: V' = alpha * V + (T > 0 ? beta : 1) * g;
 *             X' = X - R * V' (standard) or X - R * (g + alpha * V') (nesterov)
 *   Adam:     V' = alpha * V + (1 - alpha) * g; H' = beta * H + (1 - beta) * g^2;
 *             R' = T > 0 ? R * sqrt(1 - beta^T) / (1 - alpha^T) : R;
 *             X' = (1 - norm_coefficient_post) * (X - R' * V' / (sqrt(H') + epsilon))
 * Each element is read before it is written, so outputs may alias inputs.
 */
#include <math.h>
#include <string.h>

#include "ops/training.h"
#include "cpu/ops/value-store.h"

struct optim {
	double r, norm, alpha, beta, eps, decay, post;
	int64_t t;
	bool nesterov;
};

static void adagrad_step(const struct optim *o, double *x, double g, double *h)
{
	double r = o->r / (1 + (double)o->t * o->decay);

	g += o->norm * *x;
	*h += g * g;
	*x -= r * g / (sqrt(*h) + o->eps);
}

static void momentum_step(const struct optim *o, double *x, double g, double *v)
{
	g += o->norm * *x;
	*v = o->alpha * *v + (o->t > 0 ? o->beta : 1) * g;
	*x -= o->nesterov ? o->r * (g + o->alpha * *v) : o->r * *v;
}

static void adam_step(const struct optim *o, double *x, double g, double *v, double *h)
{
	double r = o->r;

	g += o->norm * *x;
	*v = o->alpha * *v + (1 - o->alpha) * g;
	*h = o->beta * *h + (1 - o->beta) * g * g;
	if (o->t > 0)
		r *= sqrt(1 - pow(o->beta, (double)o->t)) / (1 - pow(o->alpha, (double)o->t));
	*x = (1 - o->post) * (*x - r * *v / (sqrt(*h) + o->eps));
}

static ert_status optim_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	enum ert_op op = x->node->op;
	uint32_t states = ert_optim_states(op), k = (x->n_in - 2) / (2 + states);
	const char *mode = ert_attr_string(x->node, "mode", "standard");
	struct optim o = {
		.r = ert_value_get_float(x->in[0], 0),
		.t = ert_value_get_int(x->in[1], 0),
		.norm = ert_attr_float(x->node, "norm_coefficient", 0),
		.post = ert_attr_float(x->node, "norm_coefficient_post", 0),
		.decay = ert_attr_float(x->node, "decay_factor", 0),
		.eps = ert_attr_float(x->node, "epsilon", 1e-6f),
		.alpha = ert_attr_float(x->node, "alpha", 0.9f),
		.beta = ert_attr_float(x->node, "beta", op == ERT_OP_Adam ? 0.999f : 0),
		.nesterov = strcmp(mode, "nesterov") == 0,
	};

	if (op == ERT_OP_Momentum && !o.nesterov && strcmp(mode, "standard") != 0)
		return ert_node_fail(x->node, err, ERT_STATUS_INVALID_MODEL,
				     "mode '%s', expected standard or nesterov", mode);
	for (uint32_t i = 0; i < k; i++) {
		const struct ert_value *xi = x->in[2 + i], *gi = x->in[2 + k + i];
		const struct ert_value *s1 = x->in[2 + 2 * k + i];
		const struct ert_value *s2 = states > 1 ? x->in[2 + 3 * k + i] : NULL;
		struct ert_value *xo = x->out[i], *o1 = x->out[k + i];
		struct ert_value *o2 = states > 1 ? x->out[2 * k + i] : NULL;

		for (int64_t e = 0; e < xi->numel; e++) {
			double xv = ert_value_get_float(xi, e), g = ert_value_get_float(gi, e);
			double a = ert_value_get_float(s1, e), b = s2 ? ert_value_get_float(s2, e) : 0;

			if (op == ERT_OP_Adagrad)
				adagrad_step(&o, &xv, g, &a);
			else if (op == ERT_OP_Momentum)
				momentum_step(&o, &xv, g, &a);
			else
				adam_step(&o, &xv, g, &a, &b);
			if (xo)
				ert_cpu_store_f64(xo, e, xv);
			if (o1)
				ert_cpu_store_f64(o1, e, a);
			if (o2)
				ert_cpu_store_f64(o2, e, b);
		}
	}
	return ERT_OK;
}

const struct ert_cpu_op ert_cpu_ops_training[] = {
	{ .op = ERT_OP_Adagrad, .compute = optim_compute },
	{ .op = ERT_OP_Adam, .compute = optim_compute },
	{ .op = ERT_OP_Momentum, .compute = optim_compute },
	{ .compute = NULL },
};
