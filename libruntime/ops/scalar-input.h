/* SPDX-License-Identifier: MIT */
/*
 * scalar-input.h — private to libruntime/ops: reading a scalar (or
 * one-element) input whose value shape inference needs. ert-ops.def marks
 * such inputs in value_inputs, so the planner computes them first; callers
 * without values (edgert info, the clean-up passes) get UNSUPPORTED.
 */
#ifndef ERT_OPS_SCALAR_INPUT_H
#define ERT_OPS_SCALAR_INPUT_H

#include "ert-op-impl.h"

static inline const struct ert_value *ert_op_input(const struct ert_infer_ctx *ctx, uint32_t k)
{
	return k < ctx->n_in ? ctx->in[k] : NULL;
}

/* Input @k as one integer (rank 0 or one element), known while planning. */
static inline ert_status ert_op_scalar_int(struct ert_infer_ctx *ctx, uint32_t k, const char *what,
					   int64_t *out)
{
	const struct ert_value *v = ert_op_input(ctx, k);

	if (!v)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "input %s is missing", what);
	if (!ert_dtype_is_int(v->dtype) || ert_dtype_size(v->dtype) == 0)
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "%s has type %s, expected an integer",
				      what, ert_dtype_name(v->dtype));
	if (v->numel != 1 || v->rank > 1)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "%s must be a scalar, has %lld elements",
				      what, (long long)v->numel);
	if (ert_check_known(ctx->node, ctx->err, what, v) != ERT_OK)
		return ERT_STATUS_UNSUPPORTED;
	*out = ert_value_get_int(v, 0);
	return ERT_OK;
}

/* Input @k as one float of any float type (rank 0 or one element), or NaN when unknown. */
static inline ert_status ert_op_scalar_float(struct ert_infer_ctx *ctx, uint32_t k, const char *what)
{
	const struct ert_value *v = ert_op_input(ctx, k);

	if (!v)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "input %s is missing", what);
	if (!ert_dtype_is_float(v->dtype) || ert_dtype_size(v->dtype) == 0)
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "%s has type %s, expected a float",
				      what, ert_dtype_name(v->dtype));
	if (v->numel != 1 || v->rank > 1)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "%s must be a scalar, has %lld elements",
				      what, (long long)v->numel);
	return ERT_OK;
}

/*
 * The output dtype an attribute names (ONNX's TensorProto codes): one the
 * runtime stores with a whole number of bytes, and a float type when
 * @float_only. @def when the attribute is absent.
 */
static inline ert_status ert_op_attr_dtype(struct ert_infer_ctx *ctx, const char *attr,
					   ert_dtype def, bool float_only, ert_dtype *out)
{
	int64_t dt = ert_attr_int(ctx->node, attr, def);

	if (dt <= 0 || dt >= ERT_DTYPE_COUNT || !ert_dtype_valid((int32_t)dt) ||
	    ert_dtype_size((ert_dtype)dt) == 0 || (float_only && !ert_dtype_is_float((ert_dtype)dt)) ||
	    (ert_dtype_is_float((ert_dtype)dt) && ert_dtype_size((ert_dtype)dt) == 1))
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "%s = %lld is not a supported type",
				      attr, (long long)dt);
	*out = (ert_dtype)dt;
	return ERT_OK;
}

#endif /* ERT_OPS_SCALAR_INPUT_H */
