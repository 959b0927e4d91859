/* SPDX-License-Identifier: MIT */
/*
 * recurrent.h — RNN, GRU and LSTM: what shape inference (ops/recurrent.c) and
 * the kernels (backends/cpu/ops/recurrent.c) both read from a node.
 *
 * Inputs, ONNX order: X, W, R, B, sequence_lens, initial_h, and for LSTM
 * initial_c and P. Outputs: Y, Y_h, and for LSTM Y_c; each may be omitted.
 * With layout 0, X is [seq, batch, input], Y [seq, dirs, batch, hidden] and
 * the states [dirs, batch, hidden]; with layout 1 the batch comes first: X
 * [batch, seq, input], Y [batch, seq, dirs, hidden], states [batch, dirs,
 * hidden]. W is [dirs, gates * hidden, input], R [dirs, gates * hidden,
 * hidden], B [dirs, 2 * gates * hidden] (W's biases, then R's), P [dirs, 3 *
 * hidden]. Gates are stored in ONNX's order: LSTM i, o, f, c; GRU z, r, h.
 *
 * sequence_lens[b] = L (0 <= L <= seq) runs batch entry b for L steps: time
 * 0..L-1 forward, L-1..0 in reverse. Y is zero at times L and later, and the
 * final states are those after the last step run (the initial ones when L
 * is 0). A length outside [0, seq] is refused when the kernel runs.
 */
#ifndef ERT_OPS_RECURRENT_H
#define ERT_OPS_RECURRENT_H

#include "ert-op-impl.h"

enum ert_rnn_kind {
	ERT_RNN_SIMPLE,   /* RNN: 1 gate, activation f */
	ERT_RNN_GRU,      /* 3 gates (z, r, h), activations f, g */
	ERT_RNN_LSTM,     /* 4 gates (i, o, f, c), activations f, g, h */
};

/* ONNX's activation functions for recurrent ops (names compared ignoring case). */
enum ert_rnn_fn_type {
	ERT_RNN_FN_RELU,
	ERT_RNN_FN_TANH,
	ERT_RNN_FN_SIGMOID,
	ERT_RNN_FN_AFFINE,           /* alpha * x + beta */
	ERT_RNN_FN_LEAKY_RELU,       /* x >= 0 ? x : alpha * x */
	ERT_RNN_FN_THRESHOLDED_RELU, /* x >= alpha ? x : 0 */
	ERT_RNN_FN_SCALED_TANH,      /* alpha * tanh(beta * x) */
	ERT_RNN_FN_HARD_SIGMOID,     /* min(max(alpha * x + beta, 0), 1) */
	ERT_RNN_FN_ELU,              /* x >= 0 ? x : alpha * (e^x - 1) */
	ERT_RNN_FN_SOFTSIGN,         /* x / (1 + |x|) */
	ERT_RNN_FN_SOFTPLUS,         /* log(1 + e^x) */
};

struct ert_rnn_fn {
	enum ert_rnn_fn_type type;
	float alpha, beta;
};

/* Input and output positions. */
enum {
	ERT_RNN_IN_X, ERT_RNN_IN_W, ERT_RNN_IN_R, ERT_RNN_IN_B, ERT_RNN_IN_SEQ_LENS,
	ERT_RNN_IN_H0, ERT_RNN_IN_C0, ERT_RNN_IN_P,
};
enum { ERT_RNN_OUT_Y, ERT_RNN_OUT_H, ERT_RNN_OUT_C };

struct ert_rnn_params {
	enum ert_rnn_kind kind;
	int gates;               /* 1, 3 or 4 */
	int n_fn;                /* activations per direction: 1, 2 or 3 */
	int dirs;                /* 1, or 2 for bidirectional */
	bool reverse;            /* a single direction, run backwards */
	bool batch_first;        /* layout 1 */
	bool input_forget;       /* LSTM: f = 1 - i */
	bool linear_before_reset; /* GRU: h = g(x Wh + r * (H Rh + Rbh) + Wbh) */
	bool has_clip;
	float clip;              /* pre-activations clipped to [-clip, clip] */
	int64_t seq, batch, input, hidden;
	/* per direction: f, g, h in ONNX's order (unused ones left zero) */
	struct ert_rnn_fn fn[2][3];
};

/*
 * Read and check @n's attributes and its inputs' shapes (@in may hold NULL
 * for omitted inputs; X, W and R are required). Fails with a message naming
 * the node and what is wrong, the status ert_infer_fail() would give.
 */
ert_status ert_rnn_params_get(const struct ert_node *n, const struct ert_value *const *in,
			      uint32_t n_in, struct ert_rnn_params *p, struct ert_err *err);

#endif /* ERT_OPS_RECURRENT_H */
