/* SPDX-License-Identifier: MIT */
/* Softmax, LogSoftmax and LayerNormalization on float32: a work-group per row. */
#include "opencl/ops/ocl-ops.h"

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

static bool softmax_supports(const struct ert_ocl *cl, const struct ert_exec *x)
{
	int64_t rows, len, inner;

	return x->n_in == 1 && ert_gpu_is_f32(x->in[0]) && ert_gpu_all_f32(x, 1) &&
	       softmax_rows(x, &rows, &len, &inner);
}

static ert_status softmax_prepare(struct ert_ocl *cl, struct ert_exec *x, struct ert_ocl_step *st,
				  struct ert_err *err)
{
	int64_t rows, len, inner;
	size_t gws, lws = 64;
	struct ert_ocl_ref src, dst;
	ert_status s;

	if (!softmax_rows(x, &rows, &len, &inner)) {
		ert_err_set(err, "opencl: %s '%s': bad axis", ert_op_name(x->node->op), x->node->name);
		return ERT_STATUS_UNSUPPORTED;
	}
	gws = (size_t)rows * lws;
	s = ert_ocl_in(cl, x, st, 0, &src, err);
	if (s == ERT_OK)
		s = ert_ocl_out(x, 0, &dst, err);
	if (s == ERT_OK)
		s = ert_ocl_launch_add(cl, st, "norm", "softmax_f32", 1, &gws, &lws, err);
	if (s != ERT_OK)
		return s;
	ert_ocl_arg_ref(st, &src);
	ert_ocl_arg_ref(st, &dst);
	ert_ocl_arg_int(st, (cl_int)len);
	ert_ocl_arg_int(st, (cl_int)inner);
	ert_ocl_arg_int(st, x->node->op == ERT_OP_LogSoftmax);
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

static bool layernorm_supports(const struct ert_ocl *cl, const struct ert_exec *x)
{
	int64_t rows, len;

	/* the optional Mean and InvStdDev outputs stay on the CPU */
	for (uint32_t k = 1; k < x->n_out; k++)
		if (x->out[k])
			return false;
	return x->n_in >= 2 && ert_gpu_is_f32(x->in[0]) && ert_gpu_is_f32(x->in[1]) && ert_gpu_all_f32(x, 3) &&
	       layernorm_rows(x, &rows, &len);
}

static ert_status layernorm_prepare(struct ert_ocl *cl, struct ert_exec *x,
				    struct ert_ocl_step *st, struct ert_err *err)
{
	bool has_bias = ert_gpu_opt_in(x, 2) != NULL;
	int64_t rows, len;
	size_t gws, lws = 64;
	struct ert_ocl_ref src, sc, b, dst;
	ert_status s;

	if (!layernorm_rows(x, &rows, &len)) {
		ert_err_set(err, "opencl: LayerNormalization '%s': unsupported shapes", x->node->name);
		return ERT_STATUS_UNSUPPORTED;
	}
	gws = (size_t)rows * lws;
	s = ert_ocl_in(cl, x, st, 0, &src, err);
	if (s == ERT_OK)
		s = ert_ocl_in(cl, x, st, 1, &sc, err);
	if (s == ERT_OK && has_bias)
		s = ert_ocl_in(cl, x, st, 2, &b, err);
	if (s == ERT_OK)
		s = ert_ocl_out(x, 0, &dst, err);
	if (s == ERT_OK)
		s = ert_ocl_launch_add(cl, st, "norm", "layernorm_f32", 1, &gws, &lws, err);
	if (s != ERT_OK)
		return s;
	ert_ocl_arg_ref(st, &src);
	ert_ocl_arg_ref(st, &sc);
	ert_ocl_arg_ref(st, has_bias ? &b : &sc);
	ert_ocl_arg_int(st, has_bias);
	ert_ocl_arg_ref(st, &dst);
	ert_ocl_arg_int(st, (cl_int)len);
	ert_ocl_arg_float(st, ert_attr_float(x->node, "epsilon", 1e-5f));
	return ERT_OK;
}

const struct ert_ocl_op ert_ocl_ops_norm[] = {
	{ ERT_OP_Softmax, softmax_supports, NULL, softmax_prepare, "ocl-softmax-f32" },
	{ ERT_OP_LogSoftmax, softmax_supports, NULL, softmax_prepare, "ocl-softmax-f32" },
	{ ERT_OP_LayerNormalization, layernorm_supports, NULL, layernorm_prepare,
	  "ocl-layernorm-f32" },
	{ ERT_OP_COUNT, NULL, NULL, NULL, NULL },
};
