/* SPDX-License-Identifier: MIT */
/*
 * RNN, GRU and LSTM against a plain double-precision reference written from
 * the ONNX equations: every direction, both layouts, sequence_lens shorter
 * than the sequence (zero included), initial states, peepholes, clip,
 * input_forget, linear_before_reset, activations with alpha/beta; weights
 * prepacked, packed at run time, and with memory LOW, on 1 and 2 threads;
 * through a session with Y omitted; and the errors bad nodes get.
 */
#include <stdlib.h>
#include <strings.h>

#include "ert-op-test.h"
#include "ert-test-model.h"
#include "ert-test.h"
#include "ops/recurrent.h"

struct rcase {
	enum ert_op op;
	const char *dir;        /* NULL: the default (forward) */
	int layout;
	int64_t seq, batch, input, hidden;
	bool bias, h0, c0, peep, lbr, input_forget;
	const int32_t *lens;    /* NULL: no sequence_lens */
	float clip;             /* 0: none */
	int n_acts;
	const char *acts[6];
	int n_alpha, n_beta;
	float alpha[6], beta[6];
	bool hidden_attr;       /* set hidden_size (else read from R) */
};

/* the case's tensors and the reference's outputs */
struct rdata {
	int dirs, gates;
	float *x, *w, *r, *b, *h0, *c0, *p;
	double *y, *yh, *yc;
	int64_t nx, nw, nr, nb, ns, np, ny;
};

static uint32_t rng_state;

static float rnd(void)
{
	rng_state = rng_state * 1664525u + 1013904223u;
	return (float)((rng_state >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static float *rnd_buf(int64_t n, float scale)
{
	float *v = malloc((size_t)(n ? n : 1) * sizeof(float));

	for (int64_t i = 0; i < n; i++)
		v[i] = rnd() * scale;
	return v;
}

static int gates_of(enum ert_op op)
{
	return op == ERT_OP_LSTM ? 4 : op == ERT_OP_GRU ? 3 : 1;
}

static int fns_of(enum ert_op op)
{
	return op == ERT_OP_LSTM ? 3 : op == ERT_OP_GRU ? 2 : 1;
}

/* ---- the reference ---- */

struct rfn {
	const char *name;
	double alpha, beta;
};

static double ref_apply(const struct rfn *f, double x)
{
	double a = f->alpha, b = f->beta;

	if (!strcasecmp(f->name, "Relu"))
		return x > 0 ? x : 0;
	if (!strcasecmp(f->name, "Tanh"))
		return tanh(x);
	if (!strcasecmp(f->name, "Sigmoid"))
		return 1 / (1 + exp(-x));
	if (!strcasecmp(f->name, "Affine"))
		return a * x + b;
	if (!strcasecmp(f->name, "LeakyRelu"))
		return x >= 0 ? x : a * x;
	if (!strcasecmp(f->name, "ThresholdedRelu"))
		return x >= a ? x : 0;
	if (!strcasecmp(f->name, "ScaledTanh"))
		return a * tanh(b * x);
	if (!strcasecmp(f->name, "HardSigmoid"))
		return fmin(fmax(a * x + b, 0), 1);
	if (!strcasecmp(f->name, "Elu"))
		return x >= 0 ? x : a * (exp(x) - 1);
	if (!strcasecmp(f->name, "Softsign"))
		return x / (1 + fabs(x));
	if (!strcasecmp(f->name, "Softplus"))
		return log(1 + exp(x));
	abort();
}

/* ONNX's defaults, and the alpha/beta lists consumed in order by the functions that use them. */
static void ref_fns(const struct rcase *c, int dirs, struct rfn fn[2][3])
{
	static const char *const def[3][3] = {
		{ "Tanh" }, { "Sigmoid", "Tanh" }, { "Sigmoid", "Tanh", "Tanh" },
	};
	int nf = fns_of(c->op), na = 0, nb = 0;

	for (int d = 0; d < dirs; d++)
		for (int k = 0; k < nf; k++)
			fn[d][k] = (struct rfn){ def[nf - 1][k], 0, 0 };
	for (int i = 0; i < c->n_acts; i++) {
		struct rfn f = { c->acts[i], 0, 0 };
		const char *n = f.name;
		bool ua = !strcasecmp(n, "Affine") || !strcasecmp(n, "LeakyRelu") ||
			  !strcasecmp(n, "ThresholdedRelu") || !strcasecmp(n, "ScaledTanh") ||
			  !strcasecmp(n, "HardSigmoid") || !strcasecmp(n, "Elu");
		bool ub = !strcasecmp(n, "Affine") || !strcasecmp(n, "ScaledTanh") ||
			  !strcasecmp(n, "HardSigmoid");

		f.alpha = !strcasecmp(n, "LeakyRelu") ? 0.01 : !strcasecmp(n, "HardSigmoid") ? 0.2 : 1;
		f.beta = !strcasecmp(n, "HardSigmoid") ? 0.5 : !strcasecmp(n, "ScaledTanh") ? 1 : 0;
		if (ua && na < c->n_alpha)
			f.alpha = c->alpha[na++];
		if (ub && nb < c->n_beta)
			f.beta = c->beta[nb++];
		fn[i / nf][i % nf] = f;
	}
	if (c->n_acts == nf && dirs == 2)
		for (int k = 0; k < nf; k++)
			fn[1][k] = fn[0][k];
}

static double clipv(const struct rcase *c, double v)
{
	if (c->clip <= 0)
		return v;
	return v < -c->clip ? -c->clip : v > c->clip ? c->clip : v;
}

static void reference(const struct rcase *c, struct rdata *t)
{
	int64_t H = c->hidden, I = c->input, G = t->gates, GH = G * H;
	struct rfn fn[2][3];
	double h[64], cc[64], hn[64], xw[4][64], hr[4][64], rh[64];

	ref_fns(c, t->dirs, fn);
	for (int d = 0; d < t->dirs; d++) {
		bool back = t->dirs == 2 ? d == 1 : c->dir && !strcmp(c->dir, "reverse");
		const float *W = t->w + d * GH * I, *R = t->r + d * GH * H;
		const float *Wb = c->bias ? t->b + d * 2 * GH : NULL, *Rb = Wb ? Wb + GH : NULL;
		const float *P = c->peep ? t->p + d * 3 * H : NULL;

		for (int64_t b = 0; b < c->batch; b++) {
			int64_t L = c->lens ? c->lens[b] : c->seq;
			int64_t so = (c->layout ? b * t->dirs + d : d * c->batch + b) * H;

			for (int64_t j = 0; j < H; j++) {
				h[j] = c->h0 ? t->h0[so + j] : 0;
				cc[j] = c->c0 ? t->c0[so + j] : 0;
			}
			for (int64_t s = 0; s < L; s++) {
				int64_t tt = back ? L - 1 - s : s;
				const float *xt = t->x + (c->layout ? b * c->seq + tt : tt * c->batch + b) * I;

				for (int q = 0; q < G; q++) {
					for (int64_t j = 0; j < H; j++) {
						double a = Wb ? Wb[q * H + j] : 0, r = Rb ? Rb[q * H + j] : 0;

						for (int64_t i = 0; i < I; i++)
							a += (double)W[(q * H + j) * I + i] * xt[i];
						for (int64_t i = 0; i < H; i++)
							r += (double)R[(q * H + j) * H + i] * h[i];
						xw[q][j] = a;
						hr[q][j] = r;
					}
				}
				for (int64_t j = 0; j < H && c->op == ERT_OP_RNN; j++)
					hn[j] = ref_apply(&fn[d][0], clipv(c, xw[0][j] + hr[0][j]));
				if (c->op == ERT_OP_GRU) {
					double z[64], r[64];

					for (int64_t j = 0; j < H; j++) {
						z[j] = ref_apply(&fn[d][0], clipv(c, xw[0][j] + hr[0][j]));
						r[j] = ref_apply(&fn[d][0], clipv(c, xw[1][j] + hr[1][j]));
						rh[j] = r[j] * h[j];
					}
					for (int64_t j = 0; j < H; j++) {
						double pre;

						if (c->lbr) {
							pre = xw[2][j] + r[j] * hr[2][j];
						} else {
							pre = xw[2][j] + (Rb ? Rb[2 * H + j] : 0);
							for (int64_t i = 0; i < H; i++)
								pre += (double)R[(2 * H + j) * H + i] * rh[i];
						}
						double hh = ref_apply(&fn[d][1], clipv(c, pre));

						hn[j] = (1 - z[j]) * hh + z[j] * h[j];
					}
				}
				if (c->op == ERT_OP_LSTM) {
					for (int64_t j = 0; j < H; j++) {
						double pi = P ? P[j] : 0, po = P ? P[H + j] : 0;
						double pf = P ? P[2 * H + j] : 0;
						double i = ref_apply(&fn[d][0], clipv(c, xw[0][j] + hr[0][j] +
											pi * cc[j]));
						double f = c->input_forget
								   ? 1 - i
								   : ref_apply(&fn[d][0],
									       clipv(c, xw[2][j] + hr[2][j] +
											     pf * cc[j]));
						double g = ref_apply(&fn[d][1], clipv(c, xw[3][j] + hr[3][j]));

						cc[j] = f * cc[j] + i * g;
						double o = ref_apply(&fn[d][0], clipv(c, xw[1][j] + hr[1][j] +
											po * cc[j]));

						hn[j] = o * ref_apply(&fn[d][2], cc[j]);
					}
				}
				for (int64_t j = 0; j < H; j++) {
					int64_t yo = c->layout ? ((b * c->seq + tt) * t->dirs + d) * H
							       : ((tt * t->dirs + d) * c->batch + b) * H;

					h[j] = hn[j];
					t->y[yo + j] = h[j];
				}
			}
			for (int64_t j = 0; j < H; j++) {
				t->yh[so + j] = h[j];
				t->yc[so + j] = cc[j];
			}
		}
	}
}

static void rdata_make(const struct rcase *c, struct rdata *t)
{
	int64_t H = c->hidden;

	memset(t, 0, sizeof(*t));
	t->dirs = c->dir && !strcmp(c->dir, "bidirectional") ? 2 : 1;
	t->gates = gates_of(c->op);
	t->nx = c->seq * c->batch * c->input;
	t->nw = t->dirs * t->gates * H * c->input;
	t->nr = t->dirs * t->gates * H * H;
	t->nb = t->dirs * 2 * t->gates * H;
	t->ns = t->dirs * c->batch * H;
	t->np = t->dirs * 3 * H;
	t->ny = c->seq * t->ns;
	t->x = rnd_buf(t->nx, 1.0f);
	t->w = rnd_buf(t->nw, 0.6f);
	t->r = rnd_buf(t->nr, 0.6f);
	t->b = rnd_buf(t->nb, 0.5f);
	t->h0 = rnd_buf(t->ns, 0.8f);
	t->c0 = rnd_buf(t->ns, 0.8f);
	t->p = rnd_buf(t->np, 0.5f);
	t->y = calloc((size_t)(t->ny ? t->ny : 1), sizeof(double));
	t->yh = calloc((size_t)(t->ns ? t->ns : 1), sizeof(double));
	t->yc = calloc((size_t)(t->ns ? t->ns : 1), sizeof(double));
	reference(c, t);
}

static void rdata_free(struct rdata *t)
{
	free(t->x);
	free(t->w);
	free(t->r);
	free(t->b);
	free(t->h0);
	free(t->c0);
	free(t->p);
	free(t->y);
	free(t->yh);
	free(t->yc);
}

static void set_string(struct ert_graph *g, struct ert_node *n, const char *name, const char *v)
{
	struct ert_attr *a = ert_node_add_attr(g, n, name, ERT_ATTR_STRING);

	a->s = ert_graph_strdup(g, v);
	a->len = (uint32_t)strlen(v);
}

static void set_strings(struct ert_graph *g, struct ert_node *n, const char *name,
			const char *const *v, uint32_t count)
{
	struct ert_attr *a = ert_node_add_attr(g, n, name, ERT_ATTR_STRINGS);
	const char **s = ert_graph_alloc(g, count * sizeof(*s));

	for (uint32_t i = 0; i < count; i++)
		s[i] = ert_graph_strdup(g, v[i]);
	a->strings = s;
	a->count = count;
}

static void set_floats(struct ert_graph *g, struct ert_node *n, const char *name, const float *v,
		       uint32_t count)
{
	struct ert_attr *a = ert_node_add_attr(g, n, name, ERT_ATTR_FLOATS);
	float *f = ert_graph_alloc(g, count * sizeof(*f));

	memcpy(f, v, count * sizeof(*f));
	a->floats = f;
	a->count = count;
}

static void set_attrs(const struct rcase *c, struct ert_graph *g, struct ert_node *n)
{
	if (c->dir)
		set_string(g, n, "direction", c->dir);
	if (c->hidden_attr)
		ert_node_set_attr_int(g, n, "hidden_size", c->hidden);
	if (c->layout)
		ert_node_set_attr_int(g, n, "layout", c->layout);
	if (c->lbr)
		ert_node_set_attr_int(g, n, "linear_before_reset", 1);
	if (c->input_forget)
		ert_node_set_attr_int(g, n, "input_forget", 1);
	if (c->clip > 0)
		ert_node_set_attr_float(g, n, "clip", c->clip);
	if (c->n_acts)
		set_strings(g, n, "activations", c->acts, (uint32_t)c->n_acts);
	if (c->n_alpha)
		set_floats(g, n, "activation_alpha", c->alpha, (uint32_t)c->n_alpha);
	if (c->n_beta)
		set_floats(g, n, "activation_beta", c->beta, (uint32_t)c->n_beta);
}

static void case_init(const struct rcase *c, const struct rdata *t, struct one *o)
{
	uint32_t n_in = c->op == ERT_OP_LSTM ? 8 : 6, n_out = c->op == ERT_OP_LSTM ? 3 : 2;
	int64_t H = c->hidden, G = t->gates, D = t->dirs;
	int64_t xd[3] = { c->layout ? c->batch : c->seq, c->layout ? c->seq : c->batch, c->input };
	int64_t sd[3] = { c->layout ? c->batch : D, c->layout ? D : c->batch, H };

	one_init(o, c->op, 14, n_in, n_out);
	set_attrs(c, o->g, o->n);
	set_in(o, 0, ERT_DTYPE_FLOAT32, 3, xd, t->x);
	set_in(o, 1, ERT_DTYPE_FLOAT32, 3, (int64_t[]){ D, G * H, c->input }, t->w);
	set_in(o, 2, ERT_DTYPE_FLOAT32, 3, (int64_t[]){ D, G * H, H }, t->r);
	set_in(o, 3, ERT_DTYPE_FLOAT32, 2, (int64_t[]){ D, 2 * G * H }, t->b);
	set_in(o, 4, ERT_DTYPE_INT32, 1, &c->batch, c->lens);
	set_in(o, 5, ERT_DTYPE_FLOAT32, 3, sd, t->h0);
	if (!c->bias)
		o->inp[3] = NULL;
	if (!c->lens)
		o->inp[4] = NULL;
	if (!c->h0)
		o->inp[5] = NULL;
	if (c->op == ERT_OP_LSTM) {
		set_in(o, 6, ERT_DTYPE_FLOAT32, 3, sd, t->c0);
		set_in(o, 7, ERT_DTYPE_FLOAT32, 2, (int64_t[]){ D, 3 * H }, t->p);
		if (!c->c0)
			o->inp[6] = NULL;
		if (!c->peep)
			o->inp[7] = NULL;
	}
}

static bool near(const float *got, const double *want, int64_t n, const char *what,
		 const char *mode)
{
	for (int64_t i = 0; i < n; i++) {
		if (!(fabs(got[i] - want[i]) <= 2e-5 + 1e-4 * fabs(want[i]))) {
			fprintf(stderr, "  %s (%s): element %lld = %.7g, expected %.7g\n", what, mode,
				(long long)i, got[i], want[i]);
			return false;
		}
	}
	return true;
}

static bool check_outputs(const struct rcase *c, const struct rdata *t, const struct one *o,
			  const char *mode)
{
	bool ok = o->out[0].numel == t->ny && o->out[1].numel == t->ns;

	if (!ok) {
		fprintf(stderr, "  %s: output sizes %lld, %lld\n", mode, (long long)o->out[0].numel,
			(long long)o->out[1].numel);
		return false;
	}
	ok = near(o->out[0].data, t->y, t->ny, "Y", mode) &&
	     near(o->out[1].data, t->yh, t->ns, "Y_h", mode);
	if (ok && c->op == ERT_OP_LSTM)
		ok = near(o->out[2].data, t->yc, t->ns, "Y_c", mode);
	return ok;
}

/*
 * Run @c four ways: constants prepacked (ert_cpu_eval_node), nothing
 * constant on 2 threads (R packed at run time, W by the GEMM), memory LOW,
 * and the scalar kernel level; each against the reference.
 */
static bool run_case(const struct rcase *c)
{
	struct ert_threadpool *pool = ert_threadpool_create(2);
	bool no_const[8] = { false };
	struct rdata t;
	struct one o;
	bool ok = true;

	rng_state = (uint32_t)(c->seq * 131 + c->batch * 17 + c->hidden * 7 + c->input);
	rdata_make(c, &t);
	case_init(c, &t, &o);
	if (one_run(&o) != ERT_OK) {
		fprintf(stderr, "  eval: %s\n", o.err.msg);
		ok = false;
	} else {
		ok = check_outputs(c, &t, &o, "prepacked");
	}
	for (int mode = 0; mode < 3 && ok; mode++) {
		struct ert_cpu_eval_opts opts = {
			.isa = ERT_ISA_SCALAR, .pool = mode == 0 ? pool : NULL,
			.in_const = mode == 0 ? no_const : NULL,
			.memory = mode == 1 ? ERT_LEVEL_LOW : ERT_LEVEL_NORMAL,
		};
		static const char *const names[] = { "run-time packing, 2 threads", "memory LOW",
						     "scalar level" };

		if (mode != 2 && ert_cpu_isa_choose(0, &opts.isa, &o.err) != ERT_OK)
			opts.isa = ERT_ISA_SCALAR;
		one_free_out(&o);
		if (ert_cpu_eval_node_with(&opts, o.g, o.n, o.inp, o.n_in, o.out, o.n_out,
					   &o.err) != ERT_OK) {
			fprintf(stderr, "  %s: %s\n", names[mode], o.err.msg);
			ok = false;
		} else {
			ok = check_outputs(c, &t, &o, names[mode]);
		}
	}
	one_fini(&o);
	rdata_free(&t);
	ert_threadpool_destroy(pool);
	return ok;
}

/* hidden 1, one step by hand: h1 = tanh(0.5), h2 = tanh(2 * 0.5 + 0.25 * h1) */
ERT_TEST(rnn_by_hand)
{
	float x[2] = { 1, 2 }, w[1] = { 0.5f }, r[1] = { 0.25f };
	struct one o;

	one_init(&o, ERT_OP_RNN, 14, 3, 2);
	set_in(&o, 0, ERT_DTYPE_FLOAT32, 3, (int64_t[]){ 2, 1, 1 }, x);
	set_in(&o, 1, ERT_DTYPE_FLOAT32, 3, (int64_t[]){ 1, 1, 1 }, w);
	set_in(&o, 2, ERT_DTYPE_FLOAT32, 3, (int64_t[]){ 1, 1, 1 }, r);
	REQUIRE(one_run(&o) == ERT_OK);
	CHECK_EQ_INT(o.out[0].rank, 4);
	CHECK_EQ_INT(o.out[0].dims[0], 2);
	CHECK_EQ_INT(o.out[1].rank, 3);
	double h1 = tanh(0.5), h2 = tanh(1.0 + 0.25 * h1);

	CHECK_NEAR(((float *)o.out[0].data)[0], h1, 1e-6);
	CHECK_NEAR(((float *)o.out[0].data)[1], h2, 1e-6);
	CHECK_NEAR(((float *)o.out[1].data)[0], h2, 1e-6);
	one_fini(&o);
}

static const int32_t lens_a[3] = { 5, 2, 0 };
static const int32_t lens_b[3] = { 3, 5, 1 };
static const int32_t lens_c[4] = { 1, 4, 4, 2 };

ERT_TEST(lstm_forward_states_peepholes)
{
	struct rcase c = { .op = ERT_OP_LSTM, .seq = 5, .batch = 3, .input = 4, .hidden = 3,
			   .bias = true, .h0 = true, .c0 = true, .peep = true, .hidden_attr = true };

	CHECK(run_case(&c));
}

ERT_TEST(lstm_reverse_short_and_empty_sequences)
{
	/* batch entry 2 has length 0: its Y is all zero and Y_h, Y_c are the initial states */
	struct rcase c = { .op = ERT_OP_LSTM, .dir = "reverse", .seq = 5, .batch = 3, .input = 4,
			   .hidden = 3, .bias = true, .h0 = true, .c0 = true, .lens = lens_a };

	CHECK(run_case(&c));
}

ERT_TEST(lstm_bidirectional_batch_first_clip_input_forget_activations)
{
	struct rcase c = {
		.op = ERT_OP_LSTM, .dir = "bidirectional", .layout = 1, .seq = 5, .batch = 3,
		.input = 2, .hidden = 4, .bias = true, .h0 = true, .c0 = true, .peep = true,
		.lens = lens_b, .clip = 0.7f, .input_forget = true, .n_acts = 6,
		.acts = { "HardSigmoid", "ScaledTanh", "Affine", "sigmoid", "Softsign", "Elu" },
		.n_alpha = 4, .alpha = { 0.3f, 0.9f, 0.5f, 0.8f },
		.n_beta = 3, .beta = { 0.4f, 1.2f, 0.1f },
	};

	CHECK(run_case(&c));
}

ERT_TEST(lstm_bidirectional_shared_activations_no_bias)
{
	/* three activation names for two directions: both use them */
	struct rcase c = { .op = ERT_OP_LSTM, .dir = "bidirectional", .seq = 4, .batch = 2,
			   .input = 3, .hidden = 2, .n_acts = 3,
			   .acts = { "Sigmoid", "LeakyRelu", "Softplus" },
			   .n_alpha = 1, .alpha = { 0.2f } };

	CHECK(run_case(&c));
}

ERT_TEST(lstm_blocked_gemm)
{
	/* 4 * 40 gate columns and 70 inputs: several GEMM tiles and K blocks of a level */
	struct rcase c = { .op = ERT_OP_LSTM, .dir = "bidirectional", .seq = 7, .batch = 9,
			   .input = 70, .hidden = 40, .bias = true, .h0 = true, .peep = true,
			   .lens = NULL };

	CHECK(run_case(&c));
}

ERT_TEST(gru_forward_reset_after_product)
{
	struct rcase c = { .op = ERT_OP_GRU, .seq = 4, .batch = 3, .input = 3, .hidden = 5,
			   .bias = true, .h0 = true };

	CHECK(run_case(&c));
}

ERT_TEST(gru_linear_before_reset_bidirectional_lens)
{
	struct rcase c = { .op = ERT_OP_GRU, .dir = "bidirectional", .seq = 4, .batch = 4,
			   .input = 3, .hidden = 5, .bias = true, .h0 = true, .lbr = true,
			   .lens = lens_c, .clip = 1.5f };

	CHECK(run_case(&c));
}

ERT_TEST(gru_reverse_batch_first_lens_activations)
{
	struct rcase c = { .op = ERT_OP_GRU, .dir = "reverse", .layout = 1, .seq = 5, .batch = 3,
			   .input = 2, .hidden = 3, .bias = true, .lens = lens_a, .n_acts = 2,
			   .acts = { "HardSigmoid", "ThresholdedRelu" },
			   .n_alpha = 2, .alpha = { 0.25f, 0.1f }, .n_beta = 1, .beta = { 0.45f } };

	CHECK(run_case(&c));
}

ERT_TEST(gru_blocked_gemm_both_variants)
{
	struct rcase c = { .op = ERT_OP_GRU, .seq = 6, .batch = 10, .input = 33, .hidden = 50,
			   .bias = true, .h0 = true };

	CHECK(run_case(&c));
	c.lbr = true;
	c.dir = "reverse";
	CHECK(run_case(&c));
}

ERT_TEST(step_products_on_threads)
{
	/*
	 * A step's product goes to the pool from 2^17 MACs (STEP_PAR_MACS in
	 * backends/cpu/ops/recurrent.c), below on one thread: LSTM 8 x 256 x 64,
	 * GRU's z and r 16 x 128 x 64 on the pool and its h 16 x 64 x 64 not.
	 */
	struct rcase lstm = { .op = ERT_OP_LSTM, .dir = "bidirectional", .seq = 3, .batch = 8,
			      .input = 16, .hidden = 64, .bias = true, .h0 = true, .c0 = true };
	struct rcase gru = { .op = ERT_OP_GRU, .seq = 3, .batch = 16, .input = 8, .hidden = 64,
			     .bias = true, .h0 = true, .lens = NULL };

	CHECK(run_case(&lstm));
	CHECK(run_case(&gru));
}

ERT_TEST(rnn_variants)
{
	struct rcase a = { .op = ERT_OP_RNN, .seq = 4, .batch = 2, .input = 3, .hidden = 4,
			   .bias = true, .h0 = true, .n_acts = 1, .acts = { "Relu" } };
	struct rcase b = { .op = ERT_OP_RNN, .dir = "bidirectional", .layout = 1, .seq = 5,
			   .batch = 3, .input = 2, .hidden = 3, .bias = true, .lens = lens_a,
			   .n_acts = 2, .acts = { "LeakyRelu", "Tanh" }, .n_alpha = 1,
			   .alpha = { 0.3f }, .clip = 0.9f };
	struct rcase r = { .op = ERT_OP_RNN, .dir = "reverse", .seq = 5, .batch = 3,
			   .input = 2, .hidden = 3, .h0 = true, .lens = lens_b };

	CHECK(run_case(&a));
	CHECK(run_case(&b));
	CHECK(run_case(&r));
}

ERT_TEST(empty_sequence_and_batch)
{
	/* seq 0: Y is empty, Y_h the initial state; batch 0: everything empty */
	struct rcase c = { .op = ERT_OP_LSTM, .seq = 0, .batch = 2, .input = 3, .hidden = 2,
			   .h0 = true, .c0 = true };

	CHECK(run_case(&c));
	c.seq = 3;
	c.batch = 0;
	c.h0 = c.c0 = false;
	CHECK(run_case(&c));
}

/* A node whose case fails shape inference: the message must hold @want. */
static void expect_error(int *ert_test_failed_, const struct rcase *c,
			 void (*edit)(struct one *o), ert_status st, const char *want)
{
	struct rdata t;
	struct one o;
	ert_status got;

	rng_state = 1;
	rdata_make(c, &t);
	case_init(c, &t, &o);
	if (edit)
		edit(&o);
	got = one_run(&o);
	CHECK_EQ_INT(got, st);
	if (!strstr(o.err.msg, want)) {
		fprintf(stderr, "  message '%s' lacks '%s'\n", o.err.msg, want);
		CHECK(!"the error names the problem");
	}
	one_fini(&o);
	rdata_free(&t);
}

static void bad_direction(struct one *o)
{
	set_string(o->g, o->n, "direction", "sideways");
}

static void bad_act_count(struct one *o)
{
	set_strings(o->g, o->n, "activations", (const char *[]){ "Tanh", "Tanh" }, 2);
}

static void bad_act_name(struct one *o)
{
	set_strings(o->g, o->n, "activations", (const char *[]){ "Sigmoid", "Swish" }, 2);
}

static void bad_hidden(struct one *o)
{
	ert_node_set_attr_int(o->g, o->n, "hidden_size", 4);
}

static void zero_hidden(struct one *o)
{
	ert_node_set_attr_int(o->g, o->n, "hidden_size", 0);
}

static void bad_clip(struct one *o)
{
	ert_node_set_attr_float(o->g, o->n, "clip", -1.0f);
}

static void bad_w_shape(struct one *o)
{
	o->in[1].dims[2] = 2;
	ert_value_finish(&o->in[1]);
}

static void bad_lens_dtype(struct one *o)
{
	o->in[4].dtype = ERT_DTYPE_INT64;
	o->in[4].dims[0] = 1;
	ert_value_finish(&o->in[4]);
}

static void layout_flag(struct one *o)
{
	ert_node_set_attr_int(o->g, o->n, "layout", 2);
}

ERT_TEST(bad_nodes_refused)
{
	static const int32_t lens[2] = { 2, 1 };
	struct rcase gru = { .op = ERT_OP_GRU, .seq = 2, .batch = 2, .input = 3, .hidden = 3,
			     .bias = true, .h0 = true, .lens = lens };

	expect_error(ert_test_failed_, &gru, bad_direction, ERT_STATUS_INVALID_MODEL,
		     "direction 'sideways'");
	expect_error(ert_test_failed_, &gru, bad_act_name, ERT_STATUS_UNSUPPORTED,
		     "activation 'Swish'");
	expect_error(ert_test_failed_, &gru, bad_hidden, ERT_STATUS_SHAPE,
		     "W has shape [1x9x3], expected [1x12x3]");
	expect_error(ert_test_failed_, &gru, zero_hidden, ERT_STATUS_INVALID_MODEL,
		     "attribute hidden_size = 0 is out of range");
	expect_error(ert_test_failed_, &gru, bad_clip, ERT_STATUS_INVALID_MODEL, "clip = -1");
	expect_error(ert_test_failed_, &gru, bad_w_shape, ERT_STATUS_SHAPE, "W has shape");
	expect_error(ert_test_failed_, &gru, bad_lens_dtype, ERT_STATUS_DTYPE,
		     "sequence_lens has dtype int64");
	expect_error(ert_test_failed_, &gru, layout_flag, ERT_STATUS_INVALID_MODEL,
		     "attribute layout = 2");

	struct rcase lstm = { .op = ERT_OP_LSTM, .dir = "bidirectional", .seq = 2, .batch = 1,
			      .input = 2, .hidden = 2 };

	expect_error(ert_test_failed_, &lstm, bad_act_count, ERT_STATUS_INVALID_MODEL,
		     "activations has 2 names, expected 6");
}

/* sequence_lens is read when the kernel runs: a length past the sequence is refused. */
ERT_TEST(sequence_length_out_of_range)
{
	static const int32_t too_long[2] = { 1, 3 }, negative[2] = { -1, 1 };
	struct rcase c = { .op = ERT_OP_RNN, .seq = 2, .batch = 2, .input = 1, .hidden = 1,
			   .lens = too_long };
	struct rdata t;
	struct one o;

	rng_state = 3;
	rdata_make(&(struct rcase){ .op = ERT_OP_RNN, .seq = 2, .batch = 2, .input = 1,
				    .hidden = 1 }, &t);
	case_init(&c, &t, &o);
	CHECK_EQ_INT(one_run(&o), ERT_STATUS_INVALID_ARGUMENT);
	CHECK(strstr(o.err.msg, "sequence_lens[1] = 3 is outside [0, 2]") != NULL);
	o.in[4].data = (void *)negative;
	CHECK_EQ_INT(one_run(&o), ERT_STATUS_INVALID_ARGUMENT);
	CHECK(strstr(o.err.msg, "sequence_lens[0] = -1") != NULL);
	one_fini(&o);
	rdata_free(&t);
}

/*
 * Through a session and the .ert format: X a graph input, the weights
 * constants (prepacked), Y omitted, only Y_h (and Y_c) kept; run twice
 * with different X.
 */
ERT_TEST(session_with_y_omitted)
{
	static const int32_t lens[2] = { 3, 1 };
	struct rcase c = { .op = ERT_OP_LSTM, .dir = "bidirectional", .seq = 3, .batch = 2,
			   .input = 3, .hidden = 4, .bias = true, .h0 = true, .lens = lens };
	struct rdata t;
	struct ert_graph *g = ert_graph_create();
	int64_t H = c.hidden, G = 4, D = 2;
	int32_t in[8], out[3];

	rng_state = 11;
	rdata_make(&c, &t);
	in[0] = ert_graph_add_tensor(g, "X", ERT_DTYPE_FLOAT32, 3,
				     (int64_t[]){ c.seq, c.batch, c.input });
	in[1] = ert_graph_add_tensor(g, "W", ERT_DTYPE_FLOAT32, 3, (int64_t[]){ D, G * H, c.input });
	in[2] = ert_graph_add_tensor(g, "R", ERT_DTYPE_FLOAT32, 3, (int64_t[]){ D, G * H, H });
	in[3] = ert_graph_add_tensor(g, "B", ERT_DTYPE_FLOAT32, 2, (int64_t[]){ D, 2 * G * H });
	in[4] = ert_graph_add_tensor(g, "lens", ERT_DTYPE_INT32, 1, (int64_t[]){ c.batch });
	in[5] = ert_graph_add_tensor(g, "h0", ERT_DTYPE_FLOAT32, 3, (int64_t[]){ D, c.batch, H });
	in[6] = in[7] = -1;
	out[0] = -1;
	out[1] = ert_graph_add_tensor(g, "Y_h", ERT_DTYPE_FLOAT32, -1, NULL);
	out[2] = ert_graph_add_tensor(g, "Y_c", ERT_DTYPE_FLOAT32, -1, NULL);
	ert_graph_set_const(g, in[1], t.w, (size_t)t.nw * 4, false);
	ert_graph_set_const(g, in[2], t.r, (size_t)t.nr * 4, false);
	ert_graph_set_const(g, in[3], t.b, (size_t)t.nb * 4, false);
	ert_graph_set_const(g, in[4], lens, (size_t)c.batch * 4, false);
	ert_graph_set_const(g, in[5], t.h0, (size_t)t.ns * 4, false);
	int32_t ni = ert_graph_add_node(g, ERT_OP_LSTM, "lstm", 6, in, 3, out);

	REQUIRE(ni >= 0);
	g->nodes[ni].opset = 14;
	set_attrs(&c, g, &g->nodes[ni]);
	ert_graph_add_input(g, in[0]);
	ert_graph_add_output(g, out[1]);
	ert_graph_add_output(g, out[2]);
	g->opset = 14;

	ert_model *m = model_from_graph(g);
	ert_session *s = NULL;

	REQUIRE(m != NULL);
	REQUIRE(ert_session_create(m, NULL, &s) == ERT_OK);
	for (int round = 0; round < 2; round++) {
		if (round) {
			for (int64_t i = 0; i < t.nx; i++)
				t.x[i] = rnd();
			reference(&c, &t);
		}
		REQUIRE(ert_session_set_input(s, 0, ERT_DTYPE_FLOAT32, t.x, (size_t)t.nx * 4) ==
			ERT_OK);
		if (ert_session_run(s) != ERT_OK) {
			fprintf(stderr, "  run: %s\n", ert_session_error(s));
			CHECK(!"the session runs");
			break;
		}
		const ert_tensor *yh = ert_session_get_output(s, 0), *yc = ert_session_get_output(s, 1);

		CHECK_EQ_INT(ert_tensor_element_count(yh), t.ns);
		CHECK(near(ert_tensor_data(yh), t.yh, t.ns, "Y_h", "session"));
		CHECK(near(ert_tensor_data(yc), t.yc, t.ns, "Y_c", "session"));
	}
	ert_session_destroy(s);
	ert_model_unref(m);
	rdata_free(&t);
}

int main(int argc, char **argv)
{
	static const struct ert_test_case cases[] = {
		ERT_TEST_ENTRY(rnn_by_hand),
		ERT_TEST_ENTRY(lstm_forward_states_peepholes),
		ERT_TEST_ENTRY(lstm_reverse_short_and_empty_sequences),
		ERT_TEST_ENTRY(lstm_bidirectional_batch_first_clip_input_forget_activations),
		ERT_TEST_ENTRY(lstm_bidirectional_shared_activations_no_bias),
		ERT_TEST_ENTRY(lstm_blocked_gemm),
		ERT_TEST_ENTRY(gru_forward_reset_after_product),
		ERT_TEST_ENTRY(gru_linear_before_reset_bidirectional_lens),
		ERT_TEST_ENTRY(gru_reverse_batch_first_lens_activations),
		ERT_TEST_ENTRY(gru_blocked_gemm_both_variants),
		ERT_TEST_ENTRY(step_products_on_threads),
		ERT_TEST_ENTRY(rnn_variants),
		ERT_TEST_ENTRY(empty_sequence_and_batch),
		ERT_TEST_ENTRY(bad_nodes_refused),
		ERT_TEST_ENTRY(sequence_length_out_of_range),
		ERT_TEST_ENTRY(session_with_y_omitted),
	};

	return ert_test_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
}
