/* SPDX-License-Identifier: MIT */
/*
 * CPU reference kernels: ai.onnx.ml's ArrayFeatureExtractor, Binarizer and
 * TreeEnsemble. TreeEnsemble walks each tree of each row from its root to a
 * leaf (indices checked by ert_tree_ensemble_params()), adds the leaf's
 * weight to its target by the aggregate function, then applies the post
 * transform, as ONNX's reference implementation does.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "cpu/cpu-impl.h"
#include "cpu/ops/value-store.h"
#include "ops/ml.h"

static ert_status afe_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in = x->in[0], *idx = x->in[1];
	struct ert_value *out = x->out[0];
	size_t es = ert_dtype_size(in->dtype);
	int64_t last = in->dims[in->rank - 1], rows = last ? in->numel / last : 0;

	for (int64_t j = 0; j < idx->numel; j++) {
		int64_t k = ert_value_get_int(idx, j);

		if (k < 0 || k >= last)
			return ert_node_fail(x->node, err, ERT_STATUS_INVALID_ARGUMENT,
					     "index %lld is outside [0, %lld)", (long long)k,
					     (long long)last);
		for (int64_t r = 0; r < rows; r++)
			memcpy((char *)out->data + (size_t)(r * idx->numel + j) * es,
			       (const char *)in->data + (size_t)(r * last + k) * es, es);
	}
	return ERT_OK;
}

static ert_status binarizer_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in = x->in[0];
	double threshold = ert_attr_float(x->node, "threshold", 0);
	bool fl = ert_dtype_is_float(in->dtype);

	for (int64_t i = 0; i < in->numel; i++) {
		double v = fl ? ert_value_get_float(in, i) : (double)ert_value_get_int(in, i);

		ert_cpu_store_f64(x->out[0], i, v > threshold ? 1 : 0);
	}
	return ERT_OK;
}

/*
 * Workspace: where each BRANCH_MEMBER node's set lies in membership_values
 * ([begin, end) per node), then one row's n_targets sums.
 */
static size_t tree_workspace(const struct ert_cpu *cpu, const struct ert_exec *x)
{
	uint32_t n = 0;

	ert_attr_ints(x->node, "nodes_featureids", &n);
	return (size_t)n * 2 * sizeof(int64_t) + (size_t)x->out[0]->dims[1] * sizeof(double);
}

static void tree_sets(const struct ert_tree_ensemble *p, int64_t *set)
{
	int64_t at = 0;

	for (uint32_t i = 0; i < p->n_nodes; i++) {
		set[2 * i] = set[2 * i + 1] = 0;
		if (ert_value_get_int(&p->modes, i) != ERT_TREE_MEMBER)
			continue;
		set[2 * i] = at;
		while (at < p->membership.numel && !isnan(ert_value_get_float(&p->membership, at)))
			at++;
		set[2 * i + 1] = at++;
	}
}

static bool tree_goes_true(const struct ert_tree_ensemble *p, const int64_t *set, uint32_t i,
			   double v)
{
	double s = ert_value_get_float(&p->splits, i);

	if (isnan(v))
		return p->missing_true && p->missing_true[i];
	switch ((enum ert_tree_mode)ert_value_get_int(&p->modes, i)) {
	case ERT_TREE_LEQ: return v <= s;
	case ERT_TREE_LT: return v < s;
	case ERT_TREE_GTE: return v >= s;
	case ERT_TREE_GT: return v > s;
	case ERT_TREE_EQ: return v == s;
	case ERT_TREE_NEQ: return v != s;
	case ERT_TREE_MEMBER:
		for (int64_t k = set[2 * i]; k < set[2 * i + 1]; k++)
			if (ert_value_get_float(&p->membership, k) == v)
				return true;
		return false;
	}
	return false;
}

/* The leaf row @row reaches in the tree rooted at @root; -1 on a cycle. */
static int64_t tree_leaf(const struct ert_tree_ensemble *p, const int64_t *set,
			 const struct ert_value *in, int64_t row, int64_t root)
{
	int64_t i = root;

	/* a path visits each node at most once; a longer walk is a cycle in the model */
	for (uint32_t steps = 0; steps <= p->n_nodes; steps++) {
		double v = ert_value_get_float(in, row * in->dims[1] + p->feature[i]);
		bool t = tree_goes_true(p, set, (uint32_t)i, v);

		if (t ? p->true_leaf[i] : p->false_leaf[i])
			return t ? p->true_id[i] : p->false_id[i];
		i = t ? p->true_id[i] : p->false_id[i];
	}
	return -1;
}

/* Inverse of the standard normal CDF by Newton's method on erf (PROBIT). */
static double tree_probit(double p)
{
	double y = 2 * p - 1, x = 0;

	if (y <= -1 || y >= 1)
		return y < 0 ? -INFINITY : INFINITY;
	for (int it = 0; it < 60; it++) {
		double d = (erf(x) - y) / (2 / sqrt(M_PI) * exp(-x * x));

		x -= d;
		if (fabs(d) < 1e-15)
			break;
	}
	return sqrt(2) * x;
}

static void tree_post(enum ert_tree_post post, double *v, int64_t n)
{
	double mx = -INFINITY, sum = 0;

	if (post == ERT_TREE_LOGISTIC || post == ERT_TREE_PROBIT) {
		for (int64_t t = 0; t < n; t++)
			v[t] = post == ERT_TREE_LOGISTIC ? 1 / (1 + exp(-v[t])) : tree_probit(v[t]);
		return;
	}
	if (post != ERT_TREE_SOFTMAX && post != ERT_TREE_SOFTMAX_ZERO)
		return;
	/* SOFTMAX_ZERO leaves zeros at zero and takes the softmax of the others */
	for (int64_t t = 0; t < n; t++)
		if ((post == ERT_TREE_SOFTMAX || v[t] != 0) && v[t] > mx)
			mx = v[t];
	for (int64_t t = 0; t < n; t++) {
		v[t] = post == ERT_TREE_SOFTMAX || v[t] != 0 ? exp(v[t] - mx) : 0;
		sum += v[t];
	}
	for (int64_t t = 0; t < n && sum > 0; t++)
		v[t] /= sum;
}

static ert_status tree_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in = x->in[0];
	struct ert_value *out = x->out[0];
	struct ert_tree_ensemble p;
	ert_status st = ert_tree_ensemble_params(x->graph, x->node, &p, err);
	int64_t *set = x->workspace;
	double *v, init, hi;

	if (st != ERT_OK)
		return st;
	v = (double *)(set + 2 * (size_t)p.n_nodes);
	/* MIN and MAX start from the type's extremes, as ONNX's reference does */
	hi = in->dtype == ERT_DTYPE_FLOAT64 ? DBL_MAX : in->dtype == ERT_DTYPE_FLOAT16 ? 65504 : FLT_MAX;
	init = p.agg == ERT_TREE_MIN ? hi : p.agg == ERT_TREE_MAX ? -hi : 0;
	tree_sets(&p, set);
	for (int64_t r = 0; r < in->dims[0]; r++) {
		for (int64_t t = 0; t < p.n_targets; t++)
			v[t] = init;
		for (uint32_t k = 0; k < p.n_trees; k++) {
			int64_t leaf = tree_leaf(&p, set, in, r, p.roots[k]);
			double w;
			int64_t t;

			if (leaf < 0)
				return ert_node_fail(x->node, err, ERT_STATUS_INVALID_MODEL,
						     "tree %u has a cycle", k);
			w = ert_value_get_float(&p.weights, leaf);
			t = p.leaf_target[leaf];
			if (p.agg == ERT_TREE_MIN)
				v[t] = fmin(v[t], w);
			else if (p.agg == ERT_TREE_MAX)
				v[t] = fmax(v[t], w);
			else
				v[t] += w;
		}
		for (int64_t t = 0; t < p.n_targets; t++)
			if (p.agg == ERT_TREE_AVERAGE)
				v[t] /= p.n_trees;
		tree_post(p.post, v, p.n_targets);
		for (int64_t t = 0; t < p.n_targets; t++)
			ert_cpu_store_f64(out, r * p.n_targets + t, v[t]);
	}
	return ERT_OK;
}

const struct ert_cpu_op ert_cpu_ops_ml[] = {
	{ .op = ERT_OP_ArrayFeatureExtractor, .compute = afe_compute },
	{ .op = ERT_OP_Binarizer, .compute = binarizer_compute },
	{ .op = ERT_OP_TreeEnsemble, .workspace = tree_workspace, .compute = tree_compute },
	{ .compute = NULL },
};
