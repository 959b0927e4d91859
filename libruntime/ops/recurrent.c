/* SPDX-License-Identifier: MIT */
/* Shape inference and attribute parsing: RNN, GRU, LSTM (see ops/recurrent.h). */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "ops/recurrent.h"

static const struct {
	const char *name;
	enum ert_rnn_fn_type type;
	bool alpha, beta;      /* consumes an activation_alpha / activation_beta */
	float def_alpha, def_beta;
} fn_table[] = {
	{ "Relu", ERT_RNN_FN_RELU, false, false, 0.0f, 0.0f },
	{ "Tanh", ERT_RNN_FN_TANH, false, false, 0.0f, 0.0f },
	{ "Sigmoid", ERT_RNN_FN_SIGMOID, false, false, 0.0f, 0.0f },
	{ "Affine", ERT_RNN_FN_AFFINE, true, true, 1.0f, 0.0f },
	{ "LeakyRelu", ERT_RNN_FN_LEAKY_RELU, true, false, 0.01f, 0.0f },
	{ "ThresholdedRelu", ERT_RNN_FN_THRESHOLDED_RELU, true, false, 1.0f, 0.0f },
	{ "ScaledTanh", ERT_RNN_FN_SCALED_TANH, true, true, 1.0f, 1.0f },
	{ "HardSigmoid", ERT_RNN_FN_HARD_SIGMOID, true, true, 0.2f, 0.5f },
	{ "Elu", ERT_RNN_FN_ELU, true, false, 1.0f, 0.0f },
	{ "Softsign", ERT_RNN_FN_SOFTSIGN, false, false, 0.0f, 0.0f },
	{ "Softplus", ERT_RNN_FN_SOFTPLUS, false, false, 0.0f, 0.0f },
};

/* "Op 'name': ..." into @err, returning @st (ert_node_fail, ert-op-impl.h). */
#define fail(n, err, st, ...) ert_node_fail(n, err, st, __VA_ARGS__)

static const struct ert_value *input(const struct ert_value *const *in, uint32_t n_in, uint32_t i)
{
	return i < n_in ? in[i] : NULL;
}

static ert_status read_fns(const struct ert_node *n, struct ert_rnn_params *p,
			   struct ert_err *err)
{
	static const enum ert_rnn_fn_type defaults[3][3] = {
		[ERT_RNN_SIMPLE] = { ERT_RNN_FN_TANH },
		[ERT_RNN_GRU] = { ERT_RNN_FN_SIGMOID, ERT_RNN_FN_TANH },
		[ERT_RNN_LSTM] = { ERT_RNN_FN_SIGMOID, ERT_RNN_FN_TANH, ERT_RNN_FN_TANH },
	};
	const struct ert_attr *acts = ert_node_attr(n, "activations");
	const struct ert_attr *alphas = ert_node_attr(n, "activation_alpha");
	const struct ert_attr *betas = ert_node_attr(n, "activation_beta");
	uint32_t na = 0, nb = 0, count;

	for (int d = 0; d < p->dirs; d++)
		for (int k = 0; k < p->n_fn; k++)
			p->fn[d][k].type = defaults[p->kind][k];
	if (!acts)
		return ERT_OK;
	if (acts->type != ERT_ATTR_STRINGS)
		return fail(n, err, ERT_STATUS_INVALID_MODEL,
			    "attribute activations must be a list of strings");
	if (alphas && alphas->type != ERT_ATTR_FLOATS)
		return fail(n, err, ERT_STATUS_INVALID_MODEL,
			    "attribute activation_alpha must be a list of floats");
	if (betas && betas->type != ERT_ATTR_FLOATS)
		return fail(n, err, ERT_STATUS_INVALID_MODEL,
			    "attribute activation_beta must be a list of floats");
	count = acts->count;
	/* one set for each direction, or (bidirectional) one set both share */
	if (count != (uint32_t)(p->n_fn * p->dirs) && count != (uint32_t)p->n_fn)
		return fail(n, err, ERT_STATUS_INVALID_MODEL,
			    "attribute activations has %u names, expected %d (%d per direction)",
			    count, p->n_fn * p->dirs, p->n_fn);
	for (uint32_t i = 0; i < count; i++) {
		const char *name = acts->strings[i];
		size_t t = 0;

		while (t < sizeof(fn_table) / sizeof(fn_table[0]) &&
		       strcasecmp(fn_table[t].name, name) != 0)
			t++;
		if (t == sizeof(fn_table) / sizeof(fn_table[0]))
			return fail(n, err, ERT_STATUS_UNSUPPORTED,
				    "activation '%.64s' is not one ONNX defines for recurrent ops",
				    name);
		struct ert_rnn_fn f = { fn_table[t].type, fn_table[t].def_alpha,
					fn_table[t].def_beta };

		/* the lists are consumed in order by the functions that take them */
		if (fn_table[t].alpha && alphas && na < alphas->count)
			f.alpha = alphas->floats[na++];
		if (fn_table[t].beta && betas && nb < betas->count)
			f.beta = betas->floats[nb++];
		p->fn[i / (uint32_t)p->n_fn][i % (uint32_t)p->n_fn] = f;
	}
	if (count == (uint32_t)p->n_fn && p->dirs == 2)
		for (int k = 0; k < p->n_fn; k++)
			p->fn[1][k] = p->fn[0][k];
	return ERT_OK;
}

/* @v (when given) must be of @dt with @rank dims equal to @dims. */
static ert_status check_shape(const struct ert_node *n, struct ert_err *err, const char *what,
			      const struct ert_value *v, ert_dtype dt, int32_t rank,
			      const int64_t *dims)
{
	bool same = v->rank == rank;

	if (v->dtype != dt)
		return fail(n, err, ERT_STATUS_DTYPE, "%s has dtype %s, expected %s", what,
			    ert_dtype_name(v->dtype), ert_dtype_name(dt));
	for (int32_t i = 0; same && i < rank; i++)
		same = v->dims[i] == dims[i];
	if (same)
		return ERT_OK;
	char got[96] = "", want[96] = "";
	size_t lg = 0, lw = 0;

	for (int32_t i = 0; i < v->rank && lg < sizeof(got) - 24; i++)
		lg += (size_t)snprintf(got + lg, sizeof(got) - lg, "%s%lld", i ? "x" : "",
				       (long long)v->dims[i]);
	for (int32_t i = 0; i < rank && lw < sizeof(want) - 24; i++)
		lw += (size_t)snprintf(want + lw, sizeof(want) - lw, "%s%lld", i ? "x" : "",
				       (long long)dims[i]);
	return fail(n, err, ERT_STATUS_SHAPE, "%s has shape [%s], expected [%s]", what, got, want);
}

ert_status ert_rnn_params_get(const struct ert_node *n, const struct ert_value *const *in,
			      uint32_t n_in, struct ert_rnn_params *p, struct ert_err *err)
{
	const struct ert_value *x = input(in, n_in, ERT_RNN_IN_X);
	const struct ert_value *w = input(in, n_in, ERT_RNN_IN_W);
	const struct ert_value *r = input(in, n_in, ERT_RNN_IN_R);
	const struct ert_value *v;
	const char *dir = ert_attr_string(n, "direction", "forward");
	const struct ert_attr *clip = ert_node_attr(n, "clip");
	int64_t gh, dims[3];
	ert_status st;

	memset(p, 0, sizeof(*p));
	switch (n->op) {
	case ERT_OP_RNN: p->kind = ERT_RNN_SIMPLE; p->gates = 1; p->n_fn = 1; break;
	case ERT_OP_GRU: p->kind = ERT_RNN_GRU; p->gates = 3; p->n_fn = 2; break;
	case ERT_OP_LSTM: p->kind = ERT_RNN_LSTM; p->gates = 4; p->n_fn = 3; break;
	default:
		return fail(n, err, ERT_STATUS_INTERNAL, "not a recurrent op");
	}
	if (n_in > (p->kind == ERT_RNN_LSTM ? 8u : 6u))
		return fail(n, err, ERT_STATUS_INVALID_MODEL, "has %u inputs, at most %d", n_in,
			    p->kind == ERT_RNN_LSTM ? 8 : 6);
	if (!x || !w || !r)
		return fail(n, err, ERT_STATUS_INVALID_MODEL, "inputs X, W and R are required");
	if (!strcmp(dir, "forward")) {
		p->dirs = 1;
	} else if (!strcmp(dir, "reverse")) {
		p->dirs = 1;
		p->reverse = true;
	} else if (!strcmp(dir, "bidirectional")) {
		p->dirs = 2;
	} else {
		return fail(n, err, ERT_STATUS_INVALID_MODEL,
			    "direction '%.64s' is not forward, reverse or bidirectional", dir);
	}
	p->batch_first = ert_attr_int(n, "layout", 0) != 0;
	p->input_forget = p->kind == ERT_RNN_LSTM && ert_attr_int(n, "input_forget", 0) != 0;
	p->linear_before_reset = p->kind == ERT_RNN_GRU &&
				 ert_attr_int(n, "linear_before_reset", 0) != 0;
	if (clip) {
		if (clip->type != ERT_ATTR_FLOAT)
			return fail(n, err, ERT_STATUS_INVALID_MODEL, "attribute clip must be a float");
		if (!(clip->f > 0.0f))
			return fail(n, err, ERT_STATUS_INVALID_MODEL,
				    "attribute clip = %g, expected a positive number", clip->f);
		p->has_clip = true;
		p->clip = clip->f;
	}
	st = read_fns(n, p, err);
	if (st != ERT_OK)
		return st;

	if (!ert_dtype_is_float(x->dtype) || ert_dtype_size(x->dtype) < 2)
		return fail(n, err, ERT_STATUS_DTYPE, "X has dtype %s, expected a float type",
			    ert_dtype_name(x->dtype));
	if (x->rank != 3)
		return fail(n, err, ERT_STATUS_SHAPE, "X has rank %d, expected 3", (int)x->rank);
	p->seq = x->dims[p->batch_first ? 1 : 0];
	p->batch = x->dims[p->batch_first ? 0 : 1];
	p->input = x->dims[2];
	if (r->rank != 3)
		return fail(n, err, ERT_STATUS_SHAPE, "R has rank %d, expected 3", (int)r->rank);
	p->hidden = ert_attr_int(n, "hidden_size", r->dims[2]);
	/* the rules bound hidden_size by 2^48: gates * hidden stays far inside int64 */
	gh = p->gates * p->hidden;
	dims[0] = p->dirs;
	dims[1] = gh;
	dims[2] = p->input;
	st = check_shape(n, err, "W", w, x->dtype, 3, dims);
	if (st == ERT_OK) {
		dims[2] = p->hidden;
		st = check_shape(n, err, "R", r, x->dtype, 3, dims);
	}
	if (st == ERT_OK && (v = input(in, n_in, ERT_RNN_IN_B))) {
		dims[1] = 2 * gh;
		st = check_shape(n, err, "B", v, x->dtype, 2, dims);
	}
	if (st == ERT_OK && (v = input(in, n_in, ERT_RNN_IN_SEQ_LENS)))
		st = check_shape(n, err, "sequence_lens", v, ERT_DTYPE_INT32, 1, &p->batch);
	dims[0] = p->batch_first ? p->batch : p->dirs;
	dims[1] = p->batch_first ? p->dirs : p->batch;
	dims[2] = p->hidden;
	if (st == ERT_OK && (v = input(in, n_in, ERT_RNN_IN_H0)))
		st = check_shape(n, err, "initial_h", v, x->dtype, 3, dims);
	if (st == ERT_OK && p->kind == ERT_RNN_LSTM && (v = input(in, n_in, ERT_RNN_IN_C0)))
		st = check_shape(n, err, "initial_c", v, x->dtype, 3, dims);
	if (st == ERT_OK && p->kind == ERT_RNN_LSTM && (v = input(in, n_in, ERT_RNN_IN_P))) {
		dims[0] = p->dirs;
		dims[1] = 3 * p->hidden;
		st = check_shape(n, err, "P", v, x->dtype, 2, dims);
	}
	return st;
}

static ert_status infer_recurrent(struct ert_infer_ctx *ctx)
{
	struct ert_rnn_params p;
	ert_status st = ert_rnn_params_get(ctx->node, ctx->in, ctx->n_in, &p, ctx->err);
	uint32_t n_out = ctx->node->op == ERT_OP_LSTM ? 3 : 2;
	ert_dtype dt;
	int64_t y[4], s[3];

	if (st != ERT_OK)
		return st;
	if (ctx->n_out > n_out)
		return ert_infer_fail(ctx, ERT_STATUS_INVALID_MODEL, "has %u outputs, at most %u",
				      ctx->n_out, n_out);
	dt = ctx->in[ERT_RNN_IN_X]->dtype;
	if (p.batch_first) {
		y[0] = p.batch;
		y[1] = p.seq;
		s[0] = p.batch;
		s[1] = p.dirs;
	} else {
		y[0] = p.seq;
		y[1] = p.dirs;
		s[0] = p.dirs;
		s[1] = p.batch;
	}
	y[2] = p.batch_first ? p.dirs : p.batch;
	y[3] = s[2] = p.hidden;
	if (ctx->out[ERT_RNN_OUT_Y])
		ert_value_set_shape(ctx->out[ERT_RNN_OUT_Y], dt, 4, y);
	for (uint32_t k = ERT_RNN_OUT_H; k < ctx->n_out; k++)
		if (ctx->out[k])
			ert_value_set_shape(ctx->out[k], dt, 3, s);
	return ERT_OK;
}

#define RNN_RULES ERT_RULE_INT("hidden_size", 1, ERT_ATTR_SIZE_MAX), ERT_RULE_FLAG("layout")

static const struct ert_attr_rule rnn_rules[] = { RNN_RULES, ERT_RULE_END };
static const struct ert_attr_rule gru_rules[] = {
	RNN_RULES, ERT_RULE_FLAG("linear_before_reset"), ERT_RULE_END,
};
static const struct ert_attr_rule lstm_rules[] = {
	RNN_RULES, ERT_RULE_FLAG("input_forget"), ERT_RULE_END,
};

const struct ert_op_def ert_op_defs_recurrent[] = {
	{ ERT_OP_RNN, infer_recurrent, rnn_rules },
	{ ERT_OP_GRU, infer_recurrent, gru_rules },
	{ ERT_OP_LSTM, infer_recurrent, lstm_rules },
	{ .infer = NULL },
};
