/* SPDX-License-Identifier: MIT */
/* Softmax, LogSoftmax and LayerNormalization on float32 on a GPU: a work-group per row. */
#include "gpu-common/gpu-ops-impl.h"

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
static bool softmax_rows(const struct ert_exec *x, struct ert_gpu_softmax *s)
{
	const struct ert_value *in = x->in[0];
	bool legacy = x->node->opset < 13;
	int32_t axis;

	if (in->rank == 0 || !ert_norm_axis(ert_attr_int(x->node, "axis", legacy ? 1 : -1),
					    in->rank, &axis))
		return false;
	if (legacy) {
		s->len = span(in, axis, in->rank);
		s->inner = 1;
	} else {
		s->len = in->dims[axis];
		s->inner = span(in, axis + 1, in->rank);
	}
	s->rows = span(in, 0, axis) * s->inner;
	s->log = x->node->op == ERT_OP_LogSoftmax;
	return true;
}

bool ert_gpu_softmax_supports(const struct ert_exec *x)
{
	struct ert_gpu_softmax s;

	return x->n_in == 1 && ert_gpu_is_f32(x->in[0]) && ert_gpu_all_f32(x, 1) &&
	       softmax_rows(x, &s);
}

ert_status ert_gpu_softmax_plan(const struct ert_exec *x, struct ert_gpu_softmax *s,
				struct ert_err *err)
{
	if (softmax_rows(x, s))
		return ERT_OK;
	return ert_node_fail(x->node, err, ERT_STATUS_UNSUPPORTED, "bad axis");
}

/* Rows of @len from axis on; Scale and B hold exactly one row (no broadcasting here). */
static bool layernorm_rows(const struct ert_exec *x, struct ert_gpu_layernorm *l)
{
	const struct ert_value *in = x->in[0], *sc = ert_gpu_opt_in(x, 1), *b = ert_gpu_opt_in(x, 2);
	int32_t axis;

	if (in->rank == 0 || !ert_norm_axis(ert_attr_int(x->node, "axis", -1), in->rank, &axis))
		return false;
	l->len = span(in, axis, in->rank);
	l->rows = span(in, 0, axis);
	l->has_bias = b != NULL;
	l->epsilon = ert_attr_float(x->node, "epsilon", 1e-5f);
	return sc && sc->numel == l->len && (!b || b->numel == l->len);
}

bool ert_gpu_layernorm_supports(const struct ert_exec *x)
{
	struct ert_gpu_layernorm l;

	/* the optional Mean and InvStdDev outputs stay on the CPU */
	for (uint32_t k = 1; k < x->n_out; k++)
		if (x->out[k])
			return false;
	return x->n_in >= 2 && ert_gpu_is_f32(x->in[0]) && ert_gpu_is_f32(x->in[1]) &&
	       ert_gpu_all_f32(x, 3) && layernorm_rows(x, &l);
}

ert_status ert_gpu_layernorm_plan(const struct ert_exec *x, struct ert_gpu_layernorm *l,
				  struct ert_err *err)
{
	if (layernorm_rows(x, l))
		return ERT_OK;
	return ert_node_fail(x->node, err, ERT_STATUS_UNSUPPORTED, "unsupported shapes");
}
