/* SPDX-License-Identifier: MIT */
/*
 * CPU reference kernels: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss
 * (log-softmax over axis 1, then the NLL). Sums are kept in double.
 */
#include <math.h>
#include <string.h>

#include "cpu/cpu-impl.h"

enum reduction { RED_NONE, RED_SUM, RED_MEAN };

static double get(const struct ert_value *v, int64_t i)
{
	return ert_value_get_float(v, i);
}

static void put(struct ert_value *v, int64_t i, double x)
{
	switch (v->dtype) {
	case ERT_DTYPE_FLOAT64: ((double *)v->data)[i] = x; break;
	case ERT_DTYPE_FLOAT16: ((uint16_t *)v->data)[i] = ert_fp32_to_fp16((float)x); break;
	case ERT_DTYPE_BFLOAT16: ((uint16_t *)v->data)[i] = ert_fp32_to_bf16((float)x); break;
	default: ((float *)v->data)[i] = (float)x; break;
	}
}

/*
 * Shared NLL over log-probabilities read through @logp(i): writes the loss
 * (per element or reduced) into @out.
 */
static ert_status nll(const struct ert_exec *x, const struct ert_value *logp_v, const double *logp,
		      struct ert_err *err)
{
	const struct ert_value *t = x->in[1];
	const struct ert_value *w = x->n_in > 2 ? x->in[2] : NULL;
	struct ert_value *out = x->out[0];
	const char *red_s = ert_attr_string(x->node, "reduction", "mean");
	const struct ert_attr *ii_attr = ert_node_attr(x->node, "ignore_index");
	int64_t ignore = ii_attr ? ii_attr->i : INT64_MIN;
	enum reduction red = strcmp(red_s, "none") == 0 ? RED_NONE :
			     strcmp(red_s, "sum") == 0 ? RED_SUM : RED_MEAN;
	int64_t n = logp_v->dims[0], c = logp_v->dims[1], inner = 1;
	double sum = 0, wsum = 0;

	for (int32_t d = 2; d < logp_v->rank; d++)
		inner *= logp_v->dims[d];
	for (int64_t b = 0; b < n; b++) {
		for (int64_t i = 0; i < inner; i++) {
			int64_t ti = b * inner + i;
			int64_t label = ert_value_get_int(t, ti);
			double loss = 0, wt = 0;

			if (label != ignore) {
				if (label < 0 || label >= c)
					return ert_node_fail(x->node, err,
							     ERT_STATUS_INVALID_ARGUMENT,
							     "label %lld is outside 0..%lld",
							     (long long)label, (long long)c - 1);
				wt = w ? get(w, label) : 1.0;
				double lp = logp ? logp[(b * c + label) * inner + i] :
					    get(logp_v, (b * c + label) * inner + i);

				loss = -lp * wt;
			}
			if (red == RED_NONE)
				put(out, ti, loss);
			sum += loss;
			wsum += wt;
		}
	}
	if (red == RED_SUM)
		put(out, 0, sum);
	else if (red == RED_MEAN)
		put(out, 0, sum / wsum);
	return ERT_OK;
}

static ert_status nll_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	return nll(x, x->in[0], NULL, err);
}

static size_t sce_workspace(const struct ert_cpu *cpu, const struct ert_exec *x)
{
	return (size_t)x->in[0]->numel * sizeof(double);
}

static ert_status sce_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *s = x->in[0];
	double *logp = x->workspace;
	int64_t n = s->dims[0], c = s->dims[1], inner = 1;

	for (int32_t d = 2; d < s->rank; d++)
		inner *= s->dims[d];
	/* log_softmax over the class axis, stable: x - max - log(sum(exp(x - max))) */
	for (int64_t b = 0; b < n; b++) {
		for (int64_t i = 0; i < inner; i++) {
			int64_t base = b * c * inner + i;
			double mx = -INFINITY, sum = 0;

			for (int64_t k = 0; k < c; k++)
				mx = fmax(mx, get(s, base + k * inner));
			for (int64_t k = 0; k < c; k++)
				sum += exp(get(s, base + k * inner) - mx);
			double lse = mx + log(sum);

			for (int64_t k = 0; k < c; k++)
				logp[base + k * inner] = get(s, base + k * inner) - lse;
		}
	}
	if (x->n_out > 1 && x->out[1])
		for (int64_t i = 0; i < s->numel; i++)
			put(x->out[1], i, logp[i]);
	return nll(x, s, logp, err);
}

const struct ert_cpu_op ert_cpu_ops_loss[] = {
	{ .op = ERT_OP_NegativeLogLikelihoodLoss, .compute = nll_compute },
	{ .op = ERT_OP_SoftmaxCrossEntropyLoss, .workspace = sce_workspace, .compute = sce_compute },
	{ .compute = NULL },
};
