/* SPDX-License-Identifier: MIT */
/*
 * linalg-einsum.h — Einsum equations parsed into label lists, shared by shape
 * inference and the CPU kernel.
 *
 * Every letter gets a label id 0..51; each axis covered by '...' gets an id
 * from 52 up, counted from the right end of the ellipsis so that operands of
 * different ellipsis rank broadcast like numpy.
 */
#ifndef ERT_LINALG_EINSUM_H
#define ERT_LINALG_EINSUM_H

#include "ert-op-impl.h"

#define ERT_EINSUM_MAX_OPS 8
#define ERT_EINSUM_MAX_LABELS (52 + ERT_MAX_RANK)

struct ert_einsum {
	uint32_t n_ops;
	int32_t rank[ERT_EINSUM_MAX_OPS];
	uint8_t label[ERT_EINSUM_MAX_OPS][ERT_MAX_RANK]; /* label id of each operand axis */
	int32_t out_rank;
	uint8_t out_label[ERT_MAX_RANK];
	int64_t size[ERT_EINSUM_MAX_LABELS];              /* -1: label unused */
	bool in_out[ERT_EINSUM_MAX_LABELS];               /* label appears in the output */
};

/*
 * Parse @eq for operands of @ranks/@dims (@n of them), check that sizes agree
 * (a size of 1 broadcasts) and derive the output labels. Fails with a message.
 */
ert_status ert_einsum_parse(struct ert_einsum *e, const char *eq, uint32_t n,
			    const struct ert_value *const *ops, struct ert_err *err,
			    const char *node_name);

#endif /* ERT_LINALG_EINSUM_H */
