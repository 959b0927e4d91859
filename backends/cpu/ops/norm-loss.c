/* SPDX-License-Identifier: MIT */
/*
 * CPU reference kernels: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.
 * Scores are viewed as [N, C, D]. Loss of a position = -weight[t] * logp[t]
 * with t its label (logp = the input for NLL, log-softmax over C for SCE);
 * ignored labels contribute nothing. 'mean' divides by the summed weights when
 * weights or ignore_index are given, by N * D otherwise, as the ONNX reference.
 */
#include "cpu/ops/norm-access.h"
#include "cpu/ops/norm-kernels.h"
#include "ops/norm-loss.h"

/* max and log(sum(exp(x - max))) over C at position (i, dd). */
static void lse_at(const struct ert_value *x, const struct ert_loss_params *p, int64_t i,
		   int64_t dd, double *max_out, double *log_sum_out)
{
	int64_t base = i * p->c * p->d + dd;
	double max = -INFINITY, sum = 0.0;

	for (int64_t k = 0; k < p->c; k++) {
		double v = ert_nx_ld(x->data, x->dtype, base + k * p->d);

		max = v > max ? v : max;
	}
	for (int64_t k = 0; k < p->c; k++)
		sum += exp(ert_nx_ld(x->data, x->dtype, base + k * p->d) - max);
	*max_out = max;
	*log_sum_out = log(sum);
}

static ert_status loss_compute(struct ert_exec *x, bool sce, struct ert_err *err)
{
	const struct ert_value *s = x->in[0], *t = x->in[1];
	const struct ert_value *w = x->n_in > 2 ? x->in[2] : NULL;
	struct ert_value *out = x->out[0], *logp = sce && x->n_out > 1 ? x->out[1] : NULL;
	struct ert_loss_params p;
	double total = 0.0, wsum = 0.0;
	ert_status st = ert_loss_params_get(x->node, s, t, w, &p, err);

	if (st != ERT_OK)
		return st;
	for (int64_t i = 0; i < p.n; i++) {
		for (int64_t dd = 0; dd < p.d; dd++) {
			int64_t pos = i * p.d + dd, lab = ert_value_get_int(t, pos);
			double loss = 0.0, wt = 0.0, max = 0.0, lsum = 0.0;

			if (sce && (logp || !p.has_ignore || lab != p.ignore_index))
				lse_at(s, &p, i, dd, &max, &lsum);
			if (logp)
				for (int64_t k = 0; k < p.c; k++) {
					int64_t e = (i * p.c + k) * p.d + dd;

					ert_nx_st(logp->data, logp->dtype, e,
						  ert_nx_ld(s->data, s->dtype, e) - max - lsum);
				}
			if (!p.has_ignore || lab != p.ignore_index) {
				int64_t e = (i * p.c + lab) * p.d + dd;
				double lp;

				if (lab < 0 || lab >= p.c) {
					ert_err_set(err, "%s '%s': label %lld out of range [0, %lld)",
						    ert_op_name(x->node->op), x->node->name,
						    (long long)lab, (long long)p.c);
					return ERT_STATUS_INVALID_ARGUMENT;
				}
				lp = ert_nx_ld(s->data, s->dtype, e);
				if (sce)
					lp = lp - max - lsum;
				wt = w ? ert_nx_ld(w->data, w->dtype, lab) : 1.0;
				loss = -lp * wt;
			}
			if (p.reduction == ERT_LOSS_NONE)
				ert_nx_st(out->data, out->dtype, pos, loss);
			total += loss;
			wsum += wt;
		}
	}
	if (p.reduction == ERT_LOSS_SUM)
		ert_nx_st(out->data, out->dtype, 0, total);
	else if (p.reduction == ERT_LOSS_MEAN)
		ert_nx_st(out->data, out->dtype, 0,
			  w || p.has_ignore ? total / wsum : total / (double)(p.n * p.d));
	return ERT_OK;
}

ert_status ert_cpu_nll_loss(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	return loss_compute(x, false, err);
}

ert_status ert_cpu_sce_loss(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	return loss_compute(x, true, err);
}
