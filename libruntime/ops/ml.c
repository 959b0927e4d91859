/* SPDX-License-Identifier: MIT */
/*
 * Shape inference: ai.onnx.ml's ArrayFeatureExtractor (X[..., Y] with the
 * indices flattened: [..., len(Y)], [1, len(Y)] for a 1-D X), Binarizer
 * (X's shape and type) and TreeEnsemble ([N, F] to [N, n_targets]).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ops/ml.h"

static bool tree_tensor(const struct ert_graph *g, const struct ert_node *n, const char *name,
			struct ert_value *v)
{
	const struct ert_attr *a = ert_node_attr(n, name);
	const struct ert_tensor *t;
	size_t es;

	memset(v, 0, sizeof(*v));
	if (!a || a->type != ERT_ATTR_TENSOR || a->tensor < 0 || (uint32_t)a->tensor >= g->n_tensors)
		return false;
	t = &g->tensors[a->tensor];
	es = ert_dtype_size(t->dtype);
	v->dtype = t->dtype;
	v->data = (void *)ert_graph_const_data(g, a->tensor);
	if (!es || !v->data)
		return false;
	v->numel = (int64_t)(t->nbytes / es);
	v->nbytes = t->nbytes;
	return true;
}

/* the float types ert_value_get_float() reads, which TreeEnsemble's tensors use */
static bool tree_float(ert_dtype dt)
{
	return dt == ERT_DTYPE_FLOAT32 || dt == ERT_DTYPE_FLOAT64 || dt == ERT_DTYPE_FLOAT16;
}

static ert_status tree_fail(struct ert_err *err, const struct ert_node *n, const char *fmt,
			    const char *what, int64_t i, int64_t v)
{
	char msg[160];

	snprintf(msg, sizeof(msg), fmt, what, (long long)i, (long long)v);
	return ert_node_fail(n, err, ERT_STATUS_INVALID_MODEL, "%s", msg);
}

static const int64_t *tree_ints(const struct ert_node *n, const char *name, uint32_t want,
				bool *ok)
{
	uint32_t count = 0;
	const int64_t *v = ert_attr_ints(n, name, &count);

	if (!v || count != want)
		*ok = false;
	return v;
}

/* Every index of @ids within [0, @limit). */
static ert_status tree_range(struct ert_err *err, const struct ert_node *n, const char *what,
			     const int64_t *ids, uint32_t count, int64_t limit)
{
	for (uint32_t i = 0; i < count; i++)
		if (ids[i] < 0 || ids[i] >= limit)
			return tree_fail(err, n, "%s[%lld] = %lld is out of range", what, i, ids[i]);
	return ERT_OK;
}

ert_status ert_tree_ensemble_params(const struct ert_graph *g, const struct ert_node *n,
				    struct ert_tree_ensemble *p, struct ert_err *err)
{
	uint32_t n_miss = 0;
	int64_t sets = 0, members = 0;
	bool ok = true;
	ert_status st;

	memset(p, 0, sizeof(*p));
	p->feature = ert_attr_ints(n, "nodes_featureids", &p->n_nodes);
	p->roots = ert_attr_ints(n, "tree_roots", &p->n_trees);
	p->leaf_target = ert_attr_ints(n, "leaf_targetids", &p->n_leaves);
	p->true_id = tree_ints(n, "nodes_truenodeids", p->n_nodes, &ok);
	p->true_leaf = tree_ints(n, "nodes_trueleafs", p->n_nodes, &ok);
	p->false_id = tree_ints(n, "nodes_falsenodeids", p->n_nodes, &ok);
	p->false_leaf = tree_ints(n, "nodes_falseleafs", p->n_nodes, &ok);
	p->missing_true = ert_attr_ints(n, "nodes_missing_value_tracks_true", &n_miss);
	p->n_targets = ert_attr_int(n, "n_targets", 0);
	p->agg = (enum ert_tree_agg)ert_attr_int(n, "aggregate_function", ERT_TREE_SUM);
	p->post = (enum ert_tree_post)ert_attr_int(n, "post_transform", ERT_TREE_NONE);
	if (!p->feature || !p->roots || !p->leaf_target || !ok ||
	    (p->missing_true && n_miss != p->n_nodes) || !p->n_trees || !p->n_leaves)
		return ert_node_fail(n, err, ERT_STATUS_INVALID_MODEL,
				     "needs tree_roots, leaf_targetids and the nodes_* "
				     "attributes, one entry per node each");
	if (!tree_tensor(g, n, "nodes_modes", &p->modes) || p->modes.dtype != ERT_DTYPE_UINT8 ||
	    p->modes.numel != p->n_nodes || !tree_tensor(g, n, "nodes_splits", &p->splits) ||
	    !tree_float(p->splits.dtype) || p->splits.numel != p->n_nodes ||
	    !tree_tensor(g, n, "leaf_weights", &p->weights) ||
	    !tree_float(p->weights.dtype) || p->weights.numel != p->n_leaves)
		return ert_node_fail(n, err, ERT_STATUS_INVALID_MODEL,
				     "nodes_modes (uint8), nodes_splits and leaf_weights (float "
				     "tensors) need one entry per node or leaf");
	if (ert_node_attr(n, "membership_values") &&
	    (!tree_tensor(g, n, "membership_values", &p->membership) ||
	     !tree_float(p->membership.dtype)))
		return ert_node_fail(n, err, ERT_STATUS_INVALID_MODEL,
				     "membership_values is not a float tensor");
	if (p->n_targets < 1 || p->n_targets > ERT_DIM_MAX)
		return ert_node_fail(n, err, ERT_STATUS_INVALID_MODEL,
				     "n_targets = %lld is out of range", (long long)p->n_targets);
	if ((uint64_t)p->agg > ERT_TREE_MAX || (uint64_t)p->post > ERT_TREE_PROBIT)
		return ert_node_fail(n, err, ERT_STATUS_INVALID_MODEL,
				     "aggregate_function %d or post_transform %d is unknown",
				     (int)p->agg, (int)p->post);
	if ((st = tree_range(err, n, "tree_roots", p->roots, p->n_trees, p->n_nodes)) ||
	    (st = tree_range(err, n, "leaf_targetids", p->leaf_target, p->n_leaves, p->n_targets)) ||
	    (st = tree_range(err, n, "nodes_featureids", p->feature, p->n_nodes, ERT_DIM_MAX)))
		return st;
	p->max_feature = -1;
	for (uint32_t i = 0; i < p->n_nodes; i++) {
		int64_t mode = ert_value_get_int(&p->modes, i);

		if (mode > ERT_TREE_MEMBER)
			return tree_fail(err, n, "%s[%lld] = %lld is unknown", "nodes_modes", i, mode);
		if (mode == ERT_TREE_MEMBER)
			members++;
		if (p->feature[i] > p->max_feature)
			p->max_feature = p->feature[i];
		if (p->true_id[i] < 0 || p->true_id[i] >= (p->true_leaf[i] ? p->n_leaves : p->n_nodes))
			return tree_fail(err, n, "%s[%lld] = %lld is out of range", "nodes_truenodeids",
					 i, p->true_id[i]);
		if (p->false_id[i] < 0 ||
		    p->false_id[i] >= (p->false_leaf[i] ? p->n_leaves : p->n_nodes))
			return tree_fail(err, n, "%s[%lld] = %lld is out of range",
					 "nodes_falsenodeids", i, p->false_id[i]);
	}
	/* one set per member node, each ended by a NaN (the last one may be unended) */
	for (int64_t i = 0; i < p->membership.numel; i++)
		if (isnan(ert_value_get_float(&p->membership, i)) || i + 1 == p->membership.numel)
			sets++;
	if (sets < members)
		return tree_fail(err, n, "%s holds %lld sets for %lld member nodes",
				 "membership_values", sets, members);
	return ERT_OK;
}

static ert_status infer_tree_ensemble(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x = ctx->n_in ? ctx->in[0] : NULL;
	struct ert_tree_ensemble p;
	ert_status st;

	if (!x)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "input is missing");
	if (x->dtype != ERT_DTYPE_FLOAT32 && x->dtype != ERT_DTYPE_FLOAT64 &&
	    x->dtype != ERT_DTYPE_FLOAT16)
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "input has type %s, expected a float",
				      ert_dtype_name(x->dtype));
	if (x->rank != 2)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "input rank %d, expected [N, F]",
				      (int)x->rank);
	if ((st = ert_tree_ensemble_params(ctx->graph, ctx->node, &p, ctx->err)))
		return st;
	if (p.max_feature >= x->dims[1])
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "a node reads feature %lld of %lld",
				      (long long)p.max_feature, (long long)x->dims[1]);
	ert_value_set_shape(ctx->out[0], x->dtype, 2, (int64_t[]){ x->dims[0], p.n_targets });
	return ERT_OK;
}

static ert_status infer_array_feature_extractor(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x = ctx->n_in > 0 ? ctx->in[0] : NULL;
	const struct ert_value *y = ctx->n_in > 1 ? ctx->in[1] : NULL;
	int64_t dims[ERT_MAX_RANK];

	if (!x || !y)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "needs X and Y");
	if (x->dtype != ERT_DTYPE_FLOAT32 && x->dtype != ERT_DTYPE_FLOAT64 &&
	    x->dtype != ERT_DTYPE_INT64 && x->dtype != ERT_DTYPE_INT32 &&
	    x->dtype != ERT_DTYPE_STRING)
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "X has type %s", ert_dtype_name(x->dtype));
	if (y->dtype != ERT_DTYPE_INT64)
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "Y has type %s, expected int64",
				      ert_dtype_name(y->dtype));
	if (x->rank < 1)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "X is a scalar");
	if (x->rank == 1) {
		dims[0] = 1;
		dims[1] = y->numel;
		ert_value_set_shape(ctx->out[0], x->dtype, 2, dims);
		return ERT_OK;
	}
	memcpy(dims, x->dims, sizeof(dims));
	dims[x->rank - 1] = y->numel;
	ert_value_set_shape(ctx->out[0], x->dtype, x->rank, dims);
	return ERT_OK;
}

static ert_status infer_binarizer(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x = ctx->n_in ? ctx->in[0] : NULL;

	if (!x)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "input is missing");
	if (x->dtype != ERT_DTYPE_FLOAT32 && x->dtype != ERT_DTYPE_FLOAT64 &&
	    x->dtype != ERT_DTYPE_INT64 && x->dtype != ERT_DTYPE_INT32)
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "input has type %s",
				      ert_dtype_name(x->dtype));
	ert_value_set_shape(ctx->out[0], x->dtype, x->rank, x->dims);
	return ERT_OK;
}

static const struct ert_attr_rule tree_rules[] = {
	ERT_RULE_INT("aggregate_function", ERT_TREE_AVERAGE, ERT_TREE_MAX),
	ERT_RULE_INT("post_transform", ERT_TREE_NONE, ERT_TREE_PROBIT),
	ERT_RULE_INT("n_targets", 1, ERT_DIM_MAX),
	ERT_RULE_INTS("nodes_trueleafs", UINT32_MAX, 0, 1),
	ERT_RULE_INTS("nodes_falseleafs", UINT32_MAX, 0, 1),
	ERT_RULE_INTS("nodes_missing_value_tracks_true", UINT32_MAX, 0, 1),
	ERT_RULE_END,
};

const struct ert_op_def ert_op_defs_ml[] = {
	{ ERT_OP_ArrayFeatureExtractor, infer_array_feature_extractor, NULL },
	{ ERT_OP_Binarizer, infer_binarizer, NULL },
	{ ERT_OP_TreeEnsemble, infer_tree_ensemble, tree_rules },
	{ .infer = NULL },
};
