/* SPDX-License-Identifier: MIT */
/* Index the per-family shape-inference tables by op. */
#include <pthread.h>
#include <stdio.h>

#include "ert-op-impl.h"

extern const struct ert_op_def ert_op_defs_unary[];
extern const struct ert_op_def ert_op_defs_binary[];
extern const struct ert_op_def ert_op_defs_linalg[];
extern const struct ert_op_def ert_op_defs_attention[];
extern const struct ert_op_def ert_op_defs_pool[];
extern const struct ert_op_def ert_op_defs_qlinalg[];
extern const struct ert_op_def ert_op_defs_qlinear[];
extern const struct ert_op_def ert_op_defs_norm[];
extern const struct ert_op_def ert_op_defs_reduce[];
extern const struct ert_op_def ert_op_defs_quant[];
extern const struct ert_op_def ert_op_defs_resize[];
extern const struct ert_op_def ert_op_defs_movement[];
extern const struct ert_op_def ert_op_defs_loss[];
extern const struct ert_op_def ert_op_defs_recurrent[];
extern const struct ert_op_def ert_op_defs_select[];
extern const struct ert_op_def ert_op_defs_signal[];
extern const struct ert_op_def ert_op_defs_spatial[];
extern const struct ert_op_def ert_op_defs_reverse[];
extern const struct ert_op_def ert_op_defs_det[];
extern const struct ert_op_def ert_op_defs_random[];
extern const struct ert_op_def ert_op_defs_tfidf[];
extern const struct ert_op_def ert_op_defs_training[];
extern const struct ert_op_def ert_op_defs_ml[];
extern const struct ert_op_def ert_op_defs_strings[];
extern const struct ert_op_def ert_op_defs_image[];
extern const struct ert_op_def ert_op_defs_control[];
extern const struct ert_op_def ert_op_defs_sequence[];

static const struct ert_op_def *const families[] = {
	ert_op_defs_unary,
	ert_op_defs_binary,
	ert_op_defs_linalg,
	ert_op_defs_attention,
	ert_op_defs_pool,
	ert_op_defs_qlinalg,
	ert_op_defs_qlinear,
	ert_op_defs_norm,
	ert_op_defs_reduce,
	ert_op_defs_quant,
	ert_op_defs_resize,
	ert_op_defs_movement,
	ert_op_defs_loss,
	ert_op_defs_recurrent,
	ert_op_defs_select,
	ert_op_defs_signal,
	ert_op_defs_spatial,
	ert_op_defs_reverse,
	ert_op_defs_det,
	ert_op_defs_random,
	ert_op_defs_tfidf,
	ert_op_defs_training,
	ert_op_defs_ml,
	ert_op_defs_strings,
	ert_op_defs_image,
	ert_op_defs_control,
	ert_op_defs_sequence,
};

static ert_infer_fn by_op[ERT_OP_COUNT];
static const struct ert_attr_rule *rules_by_op[ERT_OP_COUNT];
static pthread_once_t by_op_once = PTHREAD_ONCE_INIT;

static void build_index(void)
{
	for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++)
		for (const struct ert_op_def *d = families[f]; d->infer; d++) {
			by_op[d->op] = d->infer;
			rules_by_op[d->op] = d->attrs;
		}
}

static ert_status rule_fail(const struct ert_node *n, struct ert_err *err,
			    const struct ert_attr_rule *r, int64_t idx, int64_t v)
{
	char at[80];

	if (idx < 0)
		snprintf(at, sizeof(at), "%s", r->name);
	else
		snprintf(at, sizeof(at), "%s[%lld]", r->name, (long long)idx);
	return ert_node_fail(n, err, ERT_STATUS_INVALID_MODEL,
			     "attribute %s = %lld is out of range [%lld, %lld]", at, (long long)v,
			     (long long)r->min, (long long)r->max);
}

ert_status ert_op_check_attrs(const struct ert_node *n, struct ert_err *err)
{
	const struct ert_attr_rule *r;

	if ((unsigned)n->op >= ERT_OP_COUNT)
		return ERT_OK;
	pthread_once(&by_op_once, build_index);
	for (r = rules_by_op[n->op]; r && r->name; r++) {
		const struct ert_attr *a = ert_node_attr(n, r->name);
		bool is_int = a && (a->type == ERT_ATTR_INT || a->type == ERT_ATTR_FLOAT);

		if (!a)
			continue;
		if (r->max_count == 0 && !is_int)
			return ert_node_fail(n, err, ERT_STATUS_INVALID_MODEL,
					     "attribute %s must be an integer", r->name);
		if (r->max_count == 0) {
			int64_t v = ert_attr_int(n, r->name, 0);

			if (v < r->min || v > r->max)
				return rule_fail(n, err, r, -1, v);
			continue;
		}
		if (a->type != ERT_ATTR_INTS)
			return ert_node_fail(n, err, ERT_STATUS_INVALID_MODEL,
					     "attribute %s must be a list of integers", r->name);
		if (a->count > r->max_count)
			return ert_node_fail(n, err, ERT_STATUS_INVALID_MODEL,
					     "attribute %s has %u values, at most %u", r->name,
					     a->count, r->max_count);
		for (uint32_t i = 0; i < a->count; i++)
			if (a->ints[i] < r->min || a->ints[i] > r->max)
				return rule_fail(n, err, r, i, a->ints[i]);
	}
	return ERT_OK;
}

/* ONNX makes output 0 optional for these: a node may keep only Y_h (and Y_c). */
static bool output0_optional(enum ert_op op)
{
	return op == ERT_OP_RNN || op == ERT_OP_GRU || op == ERT_OP_LSTM;
}

/*
 * Ops whose output shapes may depend on input values: when those are not
 * known, their inference gives -1 for the extents the kernel decides
 * (ert_exec_output(), docs/dynamic-shapes.md).
 */
static bool data_dependent(enum ert_op op)
{
	switch (op) {
	case ERT_OP_NonZero: case ERT_OP_NonMaxSuppression: case ERT_OP_Unique:
	case ERT_OP_Compress: case ERT_OP_TopK:
	case ERT_OP_If: case ERT_OP_Loop: case ERT_OP_Scan:
	case ERT_OP_StringSplit: case ERT_OP_StringNormalizer: case ERT_OP_ImageDecoder:
	/* a tensor taken out of a sequence or optional: even its rank (-1 here) */
	case ERT_OP_SequenceAt: case ERT_OP_ConcatFromSequence: case ERT_OP_OptionalGetElement:
		return true;
	default:
		return false;
	}
}

static bool any_output(const struct ert_infer_ctx *ctx)
{
	for (uint32_t k = 0; k < ctx->n_out; k++)
		if (ctx->out[k])
			return true;
	return false;
}

/*
 * Attribute rules first: inference and kernels may rely on them.
 * Every op in ert-ops.def but the recurrent ones writes its output 0, so a
 * node without one is refused here, once, before any family's inference reads
 * ctx->out[0] (a recurrent node needs some output); and a node naming more
 * outputs than its op makes is refused after it.
 */
static ert_status infer_checked(struct ert_infer_ctx *ctx)
{
	ert_status st;

	if (output0_optional(ctx->node->op) && !any_output(ctx))
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "has no outputs");
	if (!output0_optional(ctx->node->op) && (ctx->n_out < 1 || !ctx->out[0]))
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "output 0 is missing");
	st = ert_op_check_attrs(ctx->node, ctx->err);
	if (st != ERT_OK)
		return st;
	/*
	 * Inference may rely on its inputs meeting ert_value_finish()'s bounds;
	 * a caller that builds values from a file's declared shapes (the clean-up
	 * passes, edgert info) may not have checked them.
	 */
	for (uint32_t k = 0; k < ctx->n_in; k++) {
		struct ert_value v;

		if (!ctx->in[k])
			continue;
		v = *ctx->in[k];
		if (v.rank < 0 || v.rank > ERT_MAX_RANK || !ert_value_finish(&v))
			return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
					      "input %u has a dimension outside [0, 2^48] or too many "
					      "elements", k);
	}
	/* a sequence or optional where the op takes tensors */
	st = ert_infer_check_kinds(ctx);
	if (st != ERT_OK)
		return st;
	st = by_op[ctx->node->op](ctx);
	if (st != ERT_OK)
		return st;
	/*
	 * Every caller would refuse a dim outside [0, ERT_DIM_MAX] or an element
	 * count past the limit (ert_value_finish()); refusing it here names the
	 * node in every path (planning, the clean-up passes, edgert info).
	 */
	for (uint32_t k = 0; k < ctx->n_out; k++) {
		struct ert_value v;

		if (!ctx->out[k] || ctx->out[k]->dtype == ERT_DTYPE_UNDEFINED)
			continue;
		v = *ctx->out[k];
		/* -1: an extent that only running a data-dependent op tells */
		for (int32_t i = 0; data_dependent(ctx->node->op) && i < v.rank && i < ERT_MAX_RANK; i++)
			if (v.dims[i] == -1)
				v.dims[i] = 0;
		if (v.rank == -1 && data_dependent(ctx->node->op))
			continue;
		if (v.rank < 0 || v.rank > ERT_MAX_RANK || !ert_value_finish(&v))
			return ert_infer_fail(ctx, ERT_STATUS_SHAPE,
					      "output %u would have %s: a dimension outside [0, 2^48] "
					      "or too many elements", k,
					      v.rank < 0 || v.rank > ERT_MAX_RANK ? "a bad rank"
										 : "such a shape");
	}
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
