/* SPDX-License-Identifier: MIT */
/* Softmax, LogSoftmax and LayerNormalization on float32: a work-group per row. */
#include "vulkan/ops/vk-ops.h"

static int64_t span(const struct ert_value *v, int32_t from, int32_t to)
{
	int64_t n = 1;

	for (int32_t d = from; d < to; d++)
		n *= v->dims[d];
	return n;
}

/*
 * Rows of the softmax: before opset 13 the input is flattened to 2-D at
 * axis (default 1) and each row is everything from axis on; from 13 a row is
 * the one axis (default -1), its elements @inner apart.
 */
static bool softmax_rows(const struct ert_exec *x, int64_t *rows, int64_t *len, int64_t *inner)
{
	const struct ert_value *in = x->in[0];
	bool legacy = x->node->opset < 13;
	int32_t axis;

	if (in->rank == 0 || !ert_norm_axis(ert_attr_int(x->node, "axis", legacy ? 1 : -1),
					    in->rank, &axis))
		return false;
	if (legacy) {
		*len = span(in, axis, in->rank);
		*inner = 1;
	} else {
		*len = in->dims[axis];
		*inner = span(in, axis + 1, in->rank);
	}
	*rows = span(in, 0, axis) * *inner;
	return true;
}

static bool softmax_supports(const struct ert_vk *vk, const struct ert_exec *x)
{
	int64_t rows, len, inner;

	return x->n_in == 1 && ert_gpu_is_f32(x->in[0]) && ert_gpu_all_f32(x, 1) &&
	       softmax_rows(x, &rows, &len, &inner);
}

static ert_status softmax_prepare(struct ert_vk *vk, struct ert_exec *x, struct ert_vk_step *st,
				  struct ert_err *err)
{
	int64_t rows, len, inner;
	struct ert_vk_ref src, dst;
	ert_status s;

	if (!softmax_rows(x, &rows, &len, &inner)) {
		ert_err_set(err, "vulkan: %s '%s': bad axis", ert_op_name(x->node->op), x->node->name);
		return ERT_STATUS_UNSUPPORTED;
	}
	s = ert_vk_in(vk, x, st, 0, &src, err);
	if (s == ERT_OK)
		s = ert_vk_out(x, 0, &dst, err);
	if (s == ERT_OK)
		s = vk_launch_rows(vk, st, "softmax", rows, err);
	if (s != ERT_OK)
		return s;
	ert_vk_arg_ref(st, &src);
	ert_vk_arg_ref(st, &dst);
	ert_vk_arg_int(st, (int32_t)len);
	ert_vk_arg_int(st, (int32_t)inner);
	ert_vk_arg_int(st, x->node->op == ERT_OP_LogSoftmax);
	ert_vk_arg_int(st, (int32_t)rows);
	return ERT_OK;
}

/* Rows of @len from axis on; Scale and B hold exactly one row (no broadcasting here). */
static bool layernorm_rows(const struct ert_exec *x, int64_t *rows, int64_t *len)
{
	const struct ert_value *in = x->in[0], *sc = ert_gpu_opt_in(x, 1), *b = ert_gpu_opt_in(x, 2);
	int32_t axis;

	if (in->rank == 0 || !ert_norm_axis(ert_attr_int(x->node, "axis", -1), in->rank, &axis))
		return false;
	*len = span(in, axis, in->rank);
	*rows = span(in, 0, axis);
	return sc && sc->numel == *len && (!b || b->numel == *len);
}

static bool layernorm_supports(const struct ert_vk *vk, const struct ert_exec *x)
{
	int64_t rows, len;

	/* the optional Mean and InvStdDev outputs stay on the CPU */
	for (uint32_t k = 1; k < x->n_out; k++)
		if (x->out[k])
			return false;
	return x->n_in >= 2 && ert_gpu_is_f32(x->in[0]) && ert_gpu_is_f32(x->in[1]) &&
	       ert_gpu_all_f32(x, 3) && layernorm_rows(x, &rows, &len);
}

static ert_status layernorm_prepare(struct ert_vk *vk, struct ert_exec *x,
				    struct ert_vk_step *st, struct ert_err *err)
{
	bool has_bias = ert_gpu_opt_in(x, 2) != NULL;
	int64_t rows, len;
	struct ert_vk_ref src, sc, b, dst;
	ert_status s;

	if (!layernorm_rows(x, &rows, &len)) {
		ert_err_set(err, "vulkan: LayerNormalization '%s': unsupported shapes", x->node->name);
		return ERT_STATUS_UNSUPPORTED;
	}
	s = ert_vk_in(vk, x, st, 0, &src, err);
	if (s == ERT_OK)
		s = ert_vk_in(vk, x, st, 1, &sc, err);
	if (s == ERT_OK && has_bias)
		s = ert_vk_in(vk, x, st, 2, &b, err);
	if (s == ERT_OK)
		s = ert_vk_out(x, 0, &dst, err);
	if (s == ERT_OK)
		s = vk_launch_rows(vk, st, "layernorm", rows, err);
	if (s != ERT_OK)
		return s;
	ert_vk_arg_ref(st, &src);
	ert_vk_arg_ref(st, &sc);
	ert_vk_arg_ref(st, has_bias ? &b : &sc);
	ert_vk_arg_int(st, has_bias);
	ert_vk_arg_ref(st, &dst);
	ert_vk_arg_int(st, (int32_t)len);
	ert_vk_arg_float(st, ert_attr_float(x->node, "epsilon", 1e-5f));
	ert_vk_arg_int(st, (int32_t)rows);
	return ERT_OK;
}

const struct ert_vk_op ert_vk_ops_norm[] = {
	{ ERT_OP_Softmax, softmax_supports, softmax_prepare, "vk-softmax-f32" },
	{ ERT_OP_LogSoftmax, softmax_supports, softmax_prepare, "vk-softmax-f32" },
	{ ERT_OP_LayerNormalization, layernorm_supports, layernorm_prepare, "vk-layernorm-f32" },
	{ ERT_OP_COUNT, NULL, NULL, NULL },
};
