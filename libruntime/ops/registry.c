/* SPDX-License-Identifier: MIT */
/* Index the per-family shape-inference tables by op. */
#include <pthread.h>

#include "ert-op-impl.h"

extern const struct ert_op_def ert_op_defs_unary[];
extern const struct ert_op_def ert_op_defs_binary[];
extern const struct ert_op_def ert_op_defs_linalg[];
extern const struct ert_op_def ert_op_defs_pool[];
extern const struct ert_op_def ert_op_defs_qlinalg[];
extern const struct ert_op_def ert_op_defs_qlinear[];
extern const struct ert_op_def ert_op_defs_norm[];
extern const struct ert_op_def ert_op_defs_reduce[];
extern const struct ert_op_def ert_op_defs_quant[];
extern const struct ert_op_def ert_op_defs_resize[];
extern const struct ert_op_def ert_op_defs_movement[];
extern const struct ert_op_def ert_op_defs_loss[];

static const struct ert_op_def *const families[] = {
	ert_op_defs_unary,
	ert_op_defs_binary,
	ert_op_defs_linalg,
	ert_op_defs_pool,
	ert_op_defs_qlinalg,
	ert_op_defs_qlinear,
	ert_op_defs_norm,
	ert_op_defs_reduce,
	ert_op_defs_quant,
	ert_op_defs_resize,
	ert_op_defs_movement,
	ert_op_defs_loss,
};

static ert_infer_fn by_op[ERT_OP_COUNT];
static pthread_once_t by_op_once = PTHREAD_ONCE_INIT;

static void build_index(void)
{
	for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++)
		for (const struct ert_op_def *d = families[f]; d->infer; d++)
			by_op[d->op] = d->infer;
}

/*
 * Every op in ert-ops.def writes its output 0 (ONNX makes output 0 optional
 * only for ops we do not have, such as LSTM), so a node without one is refused
 * here, once, before any family's inference reads ctx->out[0]; and a node
 * naming more outputs than its op makes is refused after it.
 */
static ert_status infer_checked(struct ert_infer_ctx *ctx)
{
	ert_status st;

	if (ctx->n_out < 1 || !ctx->out[0])
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "output 0 is missing");
	st = by_op[ctx->node->op](ctx);
	if (st != ERT_OK)
		return st;
	/* an output the op does not make would be left without a type */
	for (uint32_t k = 1; k < ctx->n_out; k++)
		if (ctx->out[k] && ctx->out[k]->dtype == ERT_DTYPE_UNDEFINED)
			return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL,
					      "has %u outputs; output %u is not one %s makes",
					      ctx->n_out, k, ert_op_name(ctx->node->op));
	return ERT_OK;
}

ert_infer_fn ert_op_infer(enum ert_op op)
{
	if ((unsigned)op >= ERT_OP_COUNT)
		return NULL;
	pthread_once(&by_op_once, build_index);
	return by_op[op] ? infer_checked : NULL;
}
