/* SPDX-License-Identifier: MIT */
/*
 * ml.h — ai.onnx.ml's TreeEnsemble: its attributes read and checked once
 * for shape inference (ops/ml.c) and again by the CPU kernel, so both agree
 * and the kernel walks only indices that were checked.
 */
#ifndef ERT_OPS_ML_H
#define ERT_OPS_ML_H

#include "ert-op-impl.h"

enum ert_tree_mode {
	ERT_TREE_LEQ, ERT_TREE_LT, ERT_TREE_GTE, ERT_TREE_GT, ERT_TREE_EQ, ERT_TREE_NEQ,
	ERT_TREE_MEMBER,
};
enum ert_tree_agg { ERT_TREE_AVERAGE, ERT_TREE_SUM, ERT_TREE_MIN, ERT_TREE_MAX };
enum ert_tree_post {
	ERT_TREE_NONE, ERT_TREE_SOFTMAX, ERT_TREE_LOGISTIC, ERT_TREE_SOFTMAX_ZERO, ERT_TREE_PROBIT,
};

struct ert_tree_ensemble {
	uint32_t n_nodes, n_leaves, n_trees;
	const int64_t *feature, *true_id, *true_leaf, *false_id, *false_leaf;
	const int64_t *missing_true;  /* NULL: missing values (NaN) never go true */
	const int64_t *roots, *leaf_target;
	/* tensor attributes (dtype, numel, data), read with ert_value_get_*() */
	struct ert_value modes, splits, weights, membership; /* membership.numel 0: none */
	int64_t n_targets, max_feature; /* max_feature: -1 with no branch nodes */
	enum ert_tree_agg agg;
	enum ert_tree_post post;
};

/*
 * Read and check @n's attributes: equal lengths, every child, leaf, root and
 * target index in range, modes known, one membership set (values up to a NaN)
 * for each BRANCH_MEMBER node. INVALID_MODEL/UNSUPPORTED with a message.
 */
ert_status ert_tree_ensemble_params(const struct ert_graph *g, const struct ert_node *n,
				    struct ert_tree_ensemble *p, struct ert_err *err);

#endif /* ERT_OPS_ML_H */
