/* SPDX-License-Identifier: MIT */
/*
 * movement-infer.h — private to libruntime/ops: shape inference functions of the
 * movement family, spread over movement*.c and listed in one table in movement.c.
 */
#ifndef ERT_OPS_MOVEMENT_INFER_H
#define ERT_OPS_MOVEMENT_INFER_H

#include "ert-op-impl.h"

/* movement-index.c */
ert_status ert_mv_infer_slice(struct ert_infer_ctx *ctx);
ert_status ert_mv_infer_gather(struct ert_infer_ctx *ctx);
ert_status ert_mv_infer_gather_elements(struct ert_infer_ctx *ctx);
ert_status ert_mv_infer_gather_nd(struct ert_infer_ctx *ctx);
ert_status ert_mv_infer_scatter_elements(struct ert_infer_ctx *ctx);
ert_status ert_mv_infer_scatter_nd(struct ert_infer_ctx *ctx);
ert_status ert_mv_infer_pad(struct ert_infer_ctx *ctx);
ert_status ert_mv_infer_trilu(struct ert_infer_ctx *ctx);
ert_status ert_mv_infer_one_hot(struct ert_infer_ctx *ctx);

/* movement-gen.c */
ert_status ert_mv_infer_shape(struct ert_infer_ctx *ctx);
ert_status ert_mv_infer_size(struct ert_infer_ctx *ctx);
ert_status ert_mv_infer_constant(struct ert_infer_ctx *ctx);
ert_status ert_mv_infer_constant_of_shape(struct ert_infer_ctx *ctx);
ert_status ert_mv_infer_range(struct ert_infer_ctx *ctx);
ert_status ert_mv_infer_eye_like(struct ert_infer_ctx *ctx);

/*
 * Input @i present (else INVALID_MODEL naming it). Checking input 0 also checks
 * that output 0 exists, which every op here needs.
 */
ert_status ert_mv_need_input(struct ert_infer_ctx *ctx, uint32_t i, const char *what);

#endif /* ERT_OPS_MOVEMENT_INFER_H */
