/* SPDX-License-Identifier: MIT */
/*
 * Shape inference: signal processing (DFT, STFT, the Hann, Hamming and
 * Blackman windows, MelWeightMatrix). Complex values are ONNX's: a trailing
 * dimension of 2 (real, imaginary); a real signal has a trailing 1.
 * Lengths come from inputs whose values ert-ops.def marks as needed while
 * planning (window sizes, DFT and frame lengths, mel bins).
 */
#include "ops/scalar-input.h"
#include "ops/signal.h"

static bool is_signal_float(ert_dtype dt)
{
	return dt == ERT_DTYPE_FLOAT32 || dt == ERT_DTYPE_FLOAT64 || dt == ERT_DTYPE_FLOAT16 ||
	       dt == ERT_DTYPE_BFLOAT16;
}

ert_status ert_dft_params(const struct ert_node *n, const struct ert_value *const *in, uint32_t n_in,
			  struct ert_dft_params *p, struct ert_err *err)
{
	const struct ert_value *x = in[0];
	const struct ert_value *len_v = n_in > 1 ? in[1] : NULL;
	const struct ert_value *axis_v = n_in > 2 ? in[2] : NULL;
	int64_t axis, m;
	ert_status st;

	p->inverse = ert_attr_int(n, "inverse", 0) != 0;
	p->onesided = ert_attr_int(n, "onesided", 0) != 0;
	if (x->rank < 2 || (x->dims[x->rank - 1] != 1 && x->dims[x->rank - 1] != 2))
		return ert_node_fail(n, err, ERT_STATUS_SHAPE,
				     "input must be [..., 1] (real) or [..., 2] (complex)");
	/* opset 20 made axis an input (default -2); before, an attribute (default 1) */
	if (n->opset >= 20) {
		axis = -2;
		if (axis_v) {
			st = ert_check_known(n, err, "axis", axis_v);
			if (st != ERT_OK)
				return st;
			if (axis_v->numel != 1 || !ert_dtype_is_int(axis_v->dtype))
				return ert_node_fail(n, err, ERT_STATUS_SHAPE,
						     "axis must be one integer");
			axis = ert_value_get_int(axis_v, 0);
		}
	} else {
		axis = ert_attr_int(n, "axis", 1);
	}
	/* ONNX: [-r, -2] or [0, r - 2]; the last axis holds the complex parts */
	if (axis < -(int64_t)x->rank || axis > x->rank - 2 || axis == -1)
		return ert_node_fail(n, err, ERT_STATUS_SHAPE,
				     "axis %lld is out of range for rank %d", (long long)axis,
				     (int)x->rank);
	p->axis = (int32_t)(axis < 0 ? axis + x->rank : axis);
	m = x->dims[p->axis];
	if (len_v) {
		st = ert_check_known(n, err, "dft_length", len_v);
		if (st != ERT_OK)
			return st;
		if (len_v->numel != 1 || !ert_dtype_is_int(len_v->dtype))
			return ert_node_fail(n, err, ERT_STATUS_SHAPE,
					     "dft_length must be one integer");
		p->n = ert_value_get_int(len_v, 0);
	} else {
		/* an inverse of a one-sided spectrum gives an even-length signal by default */
		p->n = p->inverse && p->onesided ? 2 * (m - 1) : m;
	}
	if (p->n < 1 || p->n > ERT_DFT_MAX)
		return ert_node_fail(n, err, ERT_STATUS_SHAPE,
				     "dft_length %lld is outside [1, %lld]", (long long)p->n,
				     (long long)ERT_DFT_MAX);
	p->complex_in = x->dims[x->rank - 1] == 2;
	return ERT_OK;
}

static ert_status infer_dft(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x = ert_op_input(ctx, 0);
	struct ert_dft_params p;
	int64_t dims[ERT_MAX_RANK];
	ert_status st;

	if (!x)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "input is missing");
	if (!is_signal_float(x->dtype))
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "input has type %s, expected a float",
				      ert_dtype_name(x->dtype));
	st = ert_dft_params(ctx->node, ctx->in, ctx->n_in, &p, ctx->err);
	if (st != ERT_OK)
		return st;
	for (int32_t d = 0; d < x->rank; d++)
		dims[d] = x->dims[d];
	if (p.inverse && p.onesided) {
		/* a one-sided spectrum back to its real signal */
		dims[p.axis] = p.n;
		dims[x->rank - 1] = 1;
	} else {
		dims[p.axis] = p.onesided ? p.n / 2 + 1 : p.n;
		dims[x->rank - 1] = 2;
	}
	ert_value_set_shape(ctx->out[0], x->dtype, x->rank, dims);
	return ERT_OK;
}

ert_status ert_stft_params(const struct ert_node *n, const struct ert_value *const *in,
			   uint32_t n_in, struct ert_stft_params *p, struct ert_err *err)
{
	const struct ert_value *x = in[0], *step_v = n_in > 1 ? in[1] : NULL;
	const struct ert_value *win = n_in > 2 ? in[2] : NULL, *len_v = n_in > 3 ? in[3] : NULL;

	p->onesided = ert_attr_int(n, "onesided", 1) != 0;
	if (x->rank != 3 || (x->dims[2] != 1 && x->dims[2] != 2))
		return ert_node_fail(n, err, ERT_STATUS_SHAPE,
				     "signal must be [batch, length, 1 or 2]");
	if (!step_v || !step_v->data || step_v->numel != 1 || !ert_dtype_is_int(step_v->dtype)) {
		return ert_node_fail(n, err,
				     step_v && !step_v->data ? ERT_STATUS_UNSUPPORTED : ERT_STATUS_SHAPE,
				     "frame_step must be one integer known when the model is planned");
	}
	p->step = ert_value_get_int(step_v, 0);
	if (win && (win->rank != 1 || win->dtype != x->dtype))
		return ert_node_fail(n, err, ERT_STATUS_SHAPE,
				     "window must be one-dimensional of the signal's type");
	if (len_v) {
		if (!len_v->data || len_v->numel != 1 || !ert_dtype_is_int(len_v->dtype)) {
			return ert_node_fail(n, err,
					     !len_v->data ? ERT_STATUS_UNSUPPORTED : ERT_STATUS_SHAPE,
					     "frame_length must be one integer known when the model "
					     "is planned");
		}
		p->length = ert_value_get_int(len_v, 0);
		if (win && win->dims[0] != p->length)
			return ert_node_fail(n, err, ERT_STATUS_SHAPE,
					     "window has %lld values, frame_length is %lld",
					     (long long)win->dims[0], (long long)p->length);
	} else if (win) {
		p->length = win->dims[0];
	} else {
		return ert_node_fail(n, err, ERT_STATUS_INVALID_MODEL,
				     "needs a window or a frame_length");
	}
	if (p->step < 1 || p->step > ERT_DIM_MAX)
		return ert_node_fail(n, err, ERT_STATUS_SHAPE,
				     "frame_step %lld is outside [1, 2^48]", (long long)p->step);
	if (p->length < 1 || p->length > x->dims[1] || p->length > ERT_DFT_MAX)
		return ert_node_fail(n, err, ERT_STATUS_SHAPE,
				     "frame_length %lld is outside [1, %lld] (the signal's "
				     "length, at most %lld)", (long long)p->length,
				     (long long)x->dims[1], (long long)ERT_DFT_MAX);
	p->frames = 1 + (x->dims[1] - p->length) / p->step;
	p->bins = p->onesided ? p->length / 2 + 1 : p->length;
	return ERT_OK;
}

static ert_status infer_stft(struct ert_infer_ctx *ctx)
{
	const struct ert_value *x = ert_op_input(ctx, 0);
	struct ert_stft_params p;
	int64_t dims[4];
	ert_status st;

	if (!x)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "signal is missing");
	if (!is_signal_float(x->dtype))
		return ert_infer_fail(ctx, ERT_STATUS_DTYPE, "signal has type %s, expected a float",
				      ert_dtype_name(x->dtype));
	st = ert_stft_params(ctx->node, ctx->in, ctx->n_in, &p, ctx->err);
	if (st != ERT_OK)
		return st;
	dims[0] = x->dims[0];
	dims[1] = p.frames;
	dims[2] = p.bins;
	dims[3] = 2;
	ert_value_set_shape(ctx->out[0], x->dtype, 4, dims);
	return ERT_OK;
}

static ert_status infer_window(struct ert_infer_ctx *ctx)
{
	int64_t size = 0;
	ert_dtype dt = ERT_DTYPE_FLOAT32;
	ert_status st;

	if ((st = ert_op_scalar_int(ctx, 0, "size", &size)) ||
	    (st = ert_op_attr_dtype(ctx, "output_datatype", ERT_DTYPE_FLOAT32, false, &dt)) ||
	    (st = ert_check_dim(ctx->node, ctx->err, "size", -1, size)))
		return st;
	ert_value_set_shape(ctx->out[0], dt, 1, &size);
	return ERT_OK;
}

static ert_status infer_mel(struct ert_infer_ctx *ctx)
{
	int64_t bins = 0, len = 0, dims[2];
	ert_dtype dt = ERT_DTYPE_FLOAT32;
	ert_status st;

	if ((st = ert_op_scalar_int(ctx, 0, "num_mel_bins", &bins)) ||
	    (st = ert_op_scalar_int(ctx, 1, "dft_length", &len)) ||
	    (st = ert_op_attr_dtype(ctx, "output_datatype", ERT_DTYPE_FLOAT32, false, &dt)))
		return st;
	/* sample_rate and the edges are read by the kernel; check their types now */
	if (!ert_op_input(ctx, 2) || !ert_dtype_is_int(ctx->in[2]->dtype) ||
	    ctx->in[2]->numel != 1 || ert_dtype_size(ctx->in[2]->dtype) == 0)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "sample_rate must be one integer");
	if ((st = ert_op_scalar_float(ctx, 3, "lower_edge_hertz")) ||
	    (st = ert_op_scalar_float(ctx, 4, "upper_edge_hertz")))
		return st;
	if (len < 1 || len > ERT_DFT_MAX)
		return ert_infer_fail(ctx, ERT_STATUS_SHAPE, "dft_length %lld is outside [1, %lld]",
				      (long long)len, (long long)ERT_DFT_MAX);
	if ((st = ert_check_dim(ctx->node, ctx->err, "num_mel_bins", -1, bins)))
		return st;
	dims[0] = len / 2 + 1;
	dims[1] = bins;
	ert_value_set_shape(ctx->out[0], dt, 2, dims);
	return ERT_OK;
}

static const struct ert_attr_rule dft_rules[] = {
	ERT_RULE_FLAG("inverse"), ERT_RULE_FLAG("onesided"),
	ERT_RULE_INT("axis", -ERT_MAX_RANK, ERT_MAX_RANK), ERT_RULE_END,
};
static const struct ert_attr_rule stft_rules[] = { ERT_RULE_FLAG("onesided"), ERT_RULE_END };
static const struct ert_attr_rule window_rules[] = {
	ERT_RULE_FLAG("periodic"), ERT_RULE_INT("output_datatype", 1, ERT_DTYPE_COUNT - 1),
	ERT_RULE_END,
};
static const struct ert_attr_rule mel_rules[] = {
	ERT_RULE_INT("output_datatype", 1, ERT_DTYPE_COUNT - 1), ERT_RULE_END,
};

const struct ert_op_def ert_op_defs_signal[] = {
	{ ERT_OP_DFT, infer_dft, dft_rules },
	{ ERT_OP_STFT, infer_stft, stft_rules },
	{ ERT_OP_HannWindow, infer_window, window_rules },
	{ ERT_OP_HammingWindow, infer_window, window_rules },
	{ ERT_OP_BlackmanWindow, infer_window, window_rules },
	{ ERT_OP_MelWeightMatrix, infer_mel, mel_rules },
	{ .infer = NULL },
};
