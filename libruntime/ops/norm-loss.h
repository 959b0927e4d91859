/* SPDX-License-Identifier: MIT */
/*
 * norm-loss.h — NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss: shape
 * inference (norm-loss.c) and the settings both it and the CPU kernels read.
 *
 * The two ops are not in ert-ops.def yet; these functions are ready for the
 * norm tables once ERT_OP(NegativeLogLikelihoodLoss, 0x0) and
 * ERT_OP(SoftmaxCrossEntropyLoss, 0x0) are added there.
 */
#ifndef ERT_OPS_NORM_LOSS_H
#define ERT_OPS_NORM_LOSS_H

#include "ert-op-impl.h"

enum ert_loss_reduction { ERT_LOSS_NONE, ERT_LOSS_SUM, ERT_LOSS_MEAN };

struct ert_loss_params {
	enum ert_loss_reduction reduction;
	bool has_ignore;
	int64_t ignore_index;
	int64_t n, c, d;   /* scores as [N, C, D] with D the product of trailing dims */
};

/*
 * Read reduction/ignore_index and check scores @x (rank >= 2, float), labels
 * @t (integer, shape [N, d1..dk]) and optional weights @w ([C]).
 */
ert_status ert_loss_params_get(const struct ert_node *node, const struct ert_value *x,
			       const struct ert_value *t, const struct ert_value *w,
			       struct ert_loss_params *p, struct ert_err *err);

ert_status ert_infer_nll_loss(struct ert_infer_ctx *ctx);
ert_status ert_infer_sce_loss(struct ert_infer_ctx *ctx);

#endif /* ERT_OPS_NORM_LOSS_H */
