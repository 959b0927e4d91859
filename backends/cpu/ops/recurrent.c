/* SPDX-License-Identifier: MIT */
/*
 * CPU kernels: RNN, GRU and LSTM in fp32 (semantics in ops/recurrent.h).
 *
 * Per direction, the input projection of every time step, X W^T plus the
 * biases, is one GEMM (M = seq * batch). Each step then multiplies the
 * hidden state by R^T (M = batch) on R packed once, and applies the gates
 * row by row. Constant W and R are packed at plan time and shared through
 * the session's cache; otherwise R is packed into the workspace once per
 * direction and run, and the GEMM packs W as it goes.
 *
 * Sigmoid and Tanh, the gates' usual activations, go through the level's
 * vector kernels (cpu/vec/vmath.h, within 3 ulp) unless precision is HIGH,
 * as the Sigmoid and Tanh ops do: with a small hidden size they cost more
 * than a step's product.
 *
 * A product (a step's; the input projection of a short sequence) is split
 * over the thread pool only from STEP_PAR_MACS multiply-accumulates:
 * handing it out and joining costs about as much as
 * 2^16 MACs on one thread (2 threads against 1 on a 2-core EPYC, other
 * work held off with SCHED_FIFO, LSTM of 50 steps, batch 1: hidden 128,
 * 2^16 MACs a step, 0.66 against 0.73 ms; hidden 256, 2^18, 1.6 against
 * 2.5 ms; the keyword spotter's 2 x 192 x 48, 1.4 against 1.05 ms).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/gemm/sgemm.h"
#include "cpu/vec/vec.h"
#include "ops/recurrent.h"

#define STEP_PAR_MACS (INT64_C(1) << 17)

/* Packed constant weights of a step (any may be NULL). */
struct rnn_state {
	struct ert_cpu_packed *w;   /* W^T per direction */
	struct ert_cpu_packed *r;   /* R^T per direction: every gate, or GRU's z and r */
	struct ert_cpu_packed *rh;  /* GRU without linear_before_reset: R_h^T per direction */
};

/* Columns of the first recurrent product: GRU computes h's part after r is known. */
static int64_t r_cols(const struct ert_rnn_params *p)
{
	int64_t gh = p->gates * p->hidden;

	return p->kind == ERT_RNN_GRU && !p->linear_before_reset ? 2 * p->hidden : gh;
}

static size_t round16(size_t floats)
{
	return (floats + 15) & ~(size_t)15;
}

/* Workspace regions, in floats from a 64-byte aligned base; 0 when too large. */
struct rnn_ws {
	size_t xw, h, c, g, tmp, rpack, rhpack, gemm, total_bytes;
};

static bool ws_layout(const struct ert_cpu *cpu, const struct ert_rnn_params *p,
		      struct rnn_ws *l)
{
	int64_t gh = p->gates * p->hidden, rows, n;
	size_t at = 0, sz, gemm_a, gemm_b;

	memset(l, 0, sizeof(*l));
	if (!ert_mul_i64(p->seq, p->batch, &rows) || !ert_mul_i64(rows, gh, &n))
		return false;
	size_t sizes[6] = {
		(size_t)n,                                   /* xw: rows x gates*hidden */
		(size_t)(p->batch * p->hidden),              /* h */
		(size_t)(p->batch * p->hidden),              /* c */
		(size_t)(p->batch * gh),                     /* g: batch x gates*hidden */
		(size_t)(p->batch * p->hidden),              /* tmp: r * h, or h(C) */
		(size_t)(p->hidden * (r_cols(p) + ERT_SGEMM_NR_MAX)), /* R^T packed */
	};
	size_t *dst[6] = { &l->xw, &l->h, &l->c, &l->g, &l->tmp, &l->rpack };

	for (int i = 0; i < 6; i++) {
		*dst[i] = at;
		if (!ert_add_size(at, round16(sizes[i]), &at))
			return false;
	}
	l->rhpack = at;
	if (p->kind == ERT_RNN_GRU && !p->linear_before_reset &&
	    !ert_add_size(at, round16((size_t)(p->hidden * (p->hidden + ERT_SGEMM_NR_MAX))), &at))
		return false;
	l->gemm = at;
	gemm_a = ert_sgemm_workspace(ert_cpu_lanes(cpu), rows, gh, p->input);
	gemm_b = ert_sgemm_workspace(ert_cpu_lanes(cpu), p->batch, gh, p->hidden);
	sz = gemm_a > gemm_b ? gemm_a : gemm_b;
	if (!ert_mul_size(at, sizeof(float), &at) || !ert_add_size(at, sz, &at) ||
	    !ert_add_size(at, 64, &l->total_bytes))
		return false;
	return true;
}

static bool params_of(const struct ert_exec *x, struct ert_rnn_params *p)
{
	struct ert_err err;

	return ert_rnn_params_get(x->node, (const struct ert_value *const *)x->in, x->n_in, p,
				  &err) == ERT_OK;
}

static bool rnn_supports(const struct ert_exec *x)
{
	return x->n_in > 0 && x->in[0] && x->in[0]->dtype == ERT_DTYPE_FLOAT32;
}

static size_t rnn_workspace(const struct ert_cpu *cpu, const struct ert_exec *x)
{
	struct ert_rnn_params p;
	struct rnn_ws l;

	if (!params_of(x, &p))
		return 0;
	/* too large to address: planning refuses a workspace this size */
	return ws_layout(cpu, &p, &l) ? l.total_bytes : SIZE_MAX;
}

static const float *in_f32(const struct ert_exec *x, uint32_t i)
{
	return i < x->n_in && x->in[i] ? x->in[i]->data : NULL;
}

static float *out_f32(const struct ert_exec *x, uint32_t i)
{
	return i < x->n_out && x->out[i] ? x->out[i]->data : NULL;
}

static void rnn_release(struct ert_exec *x)
{
	struct rnn_state *s = x->state;

	if (!s)
		return;
	ert_cpu_pack_put(s->w);
	ert_cpu_pack_put(s->r);
	ert_cpu_pack_put(s->rh);
	free(s);
	x->state = NULL;
}

static ert_status rnn_prepare(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	struct ert_rnn_params p;
	struct rnn_state *s;
	int64_t gh;
	ert_status st = ERT_OK;

	x->kernel = cpu->gemm ? cpu->gemm->name : NULL;
	if (!params_of(x, &p) || p.hidden == 0)
		return ERT_OK; /* compute reports what is wrong */
	if (!x->in_const[ERT_RNN_IN_W] && !x->in_const[ERT_RNN_IN_R])
		return ERT_OK;
	s = calloc(1, sizeof(*s));
	if (!s)
		goto oom;
	x->state = s;
	gh = p.gates * p.hidden;
	if (x->in_const[ERT_RNN_IN_W] && p.input > 0) {
		struct ert_cpu_pack_key key = {
			.src = in_f32(x, ERT_RNN_IN_W), .kind = ERT_CPU_PACK_B,
			.rows = p.input, .cols = gh, .rs = 1, .cs = p.input,
			.count = p.dirs, .src_stride = gh * p.input,
		};

		st = ert_cpu_pack_get(cpu, &key, &s->w);
	}
	if (st == ERT_OK && x->in_const[ERT_RNN_IN_R]) {
		struct ert_cpu_pack_key key = {
			.src = in_f32(x, ERT_RNN_IN_R), .kind = ERT_CPU_PACK_B,
			.rows = p.hidden, .cols = r_cols(&p), .rs = 1, .cs = p.hidden,
			.count = p.dirs, .src_stride = gh * p.hidden,
		};

		st = ert_cpu_pack_get(cpu, &key, &s->r);
		if (st == ERT_OK && r_cols(&p) < gh) {
			key.src += 2 * p.hidden * p.hidden;
			key.cols = p.hidden;
			st = ert_cpu_pack_get(cpu, &key, &s->rh);
		}
	}
	if (st == ERT_OK)
		return ERT_OK;
oom:
	rnn_release(x);
	return ert_node_fail(x->node, err, ERT_STATUS_OUT_OF_MEMORY,
			     "out of memory packing weights");
}

/* @vec: the level's vector kernels, NULL for libm's (scalar level, precision HIGH). */
static void fn_apply(const struct ert_vec_kernels *vec, const struct ert_rnn_fn *f, float *v,
		     int64_t n)
{
	static const struct ert_vec_uparams none;
	float a = f->alpha, b = f->beta;

	if (vec && (f->type == ERT_RNN_FN_SIGMOID || f->type == ERT_RNN_FN_TANH)) {
		vec->unary[f->type == ERT_RNN_FN_SIGMOID ? ERT_VEC_SIGMOID : ERT_VEC_TANH](
			v, v, n, &none);
		return;
	}
	switch (f->type) {
	case ERT_RNN_FN_RELU:
		for (int64_t i = 0; i < n; i++)
			v[i] = v[i] > 0.0f ? v[i] : 0.0f;
		break;
	case ERT_RNN_FN_TANH:
		for (int64_t i = 0; i < n; i++)
			v[i] = tanhf(v[i]);
		break;
	case ERT_RNN_FN_SIGMOID:
		for (int64_t i = 0; i < n; i++)
			v[i] = 1.0f / (1.0f + expf(-v[i]));
		break;
	case ERT_RNN_FN_AFFINE:
		for (int64_t i = 0; i < n; i++)
			v[i] = a * v[i] + b;
		break;
	case ERT_RNN_FN_LEAKY_RELU:
		for (int64_t i = 0; i < n; i++)
			v[i] = v[i] >= 0.0f ? v[i] : a * v[i];
		break;
	case ERT_RNN_FN_THRESHOLDED_RELU:
		for (int64_t i = 0; i < n; i++)
			v[i] = v[i] >= a ? v[i] : 0.0f;
		break;
	case ERT_RNN_FN_SCALED_TANH:
		for (int64_t i = 0; i < n; i++)
			v[i] = a * tanhf(b * v[i]);
		break;
	case ERT_RNN_FN_HARD_SIGMOID:
		for (int64_t i = 0; i < n; i++) {
			float y = a * v[i] + b;

			v[i] = y < 0.0f ? 0.0f : y > 1.0f ? 1.0f : y;
		}
		break;
	case ERT_RNN_FN_ELU:
		for (int64_t i = 0; i < n; i++)
			v[i] = v[i] >= 0.0f ? v[i] : a * expm1f(v[i]);
		break;
	case ERT_RNN_FN_SOFTSIGN:
		for (int64_t i = 0; i < n; i++)
			v[i] = v[i] / (1.0f + fabsf(v[i]));
		break;
	case ERT_RNN_FN_SOFTPLUS:
		/* log(1 + e^x) = max(x, 0) + log1p(e^-|x|): no overflow for large x */
		for (int64_t i = 0; i < n; i++)
			v[i] = (v[i] > 0.0f ? v[i] : 0.0f) + log1pf(expf(-fabsf(v[i])));
		break;
	}
}

/* v += a (pre-activations from the two products), then clip: NaN stays NaN. */
static void add_clip(const struct ert_rnn_params *p, float *v, const float *a, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		v[i] += a[i];
	if (!p->has_clip)
		return;
	for (int64_t i = 0; i < n; i++)
		v[i] = v[i] < -p->clip ? -p->clip : v[i] > p->clip ? p->clip : v[i];
}

struct rnn_run {
	const struct ert_rnn_params *p;
	struct ert_cpu *cpu;
	const struct ert_sgemm_kernel *kern;
	const struct ert_vec_kernels *vec;   /* Sigmoid, Tanh; NULL: libm */
	const struct rnn_state *state;
	const float *x, *w, *r, *b, *h0, *c0, *peep;
	const int32_t *lens;
	float *y, *yh, *yc;
	float *xw, *h, *c, *g, *tmp, *rpack, *rhpack;
	void *gws;
	size_t gws_size;
};

/* Offsets of (time t, batch b) rows in X and of (t, direction d, b) in Y. */
static int64_t x_row(const struct ert_rnn_params *p, int64_t t, int64_t b)
{
	return p->batch_first ? b * p->seq + t : t * p->batch + b;
}

static int64_t y_off(const struct ert_rnn_params *p, int64_t t, int d, int64_t b)
{
	int64_t row = p->batch_first ? (b * p->seq + t) * p->dirs + d
				     : (t * p->dirs + d) * p->batch + b;

	return row * p->hidden;
}

static int64_t state_off(const struct ert_rnn_params *p, int d, int64_t b)
{
	return (p->batch_first ? b * p->dirs + d : d * p->batch + b) * p->hidden;
}

/* C (+)= A B on the pool; one thread for products under STEP_PAR_MACS. */
static void gemm(const struct rnn_run *k, int64_t m, int64_t n, int64_t kk, const float *a,
		 int64_t lda, const float *b, int64_t b_cs, const float *b_packed, float *c,
		 int64_t ldc, bool accumulate)
{
	struct ert_sgemm_desc d = {
		.kern = k->kern, .m = m, .n = n, .k = kk, .batch = 1,
		.a = a, .a_rs = lda, .a_cs = 1,
		.b = b, .b_rs = 1, .b_cs = b_cs, .b_packed = b_packed,
		.c = c, .ldc = ldc, .alpha = 1.0f, .accumulate = accumulate,
	};

	int64_t mn, macs;
	bool small = ert_mul_i64(m, n, &mn) && ert_mul_i64(mn, kk, &macs) &&
		     macs < STEP_PAR_MACS;

	ert_sgemm_run(k->cpu->pool, small ? 1 : k->cpu->num_threads, &d, k->gws, k->gws_size);
}

/* xw = X W_d^T + Wb + Rb (Rb_h stays out for GRU with linear_before_reset). */
static void input_projection(const struct rnn_run *k, int d)
{
	const struct ert_rnn_params *p = k->p;
	int64_t gh = p->gates * p->hidden, rows = p->seq * p->batch;
	const float *wb = k->b ? k->b + d * 2 * gh : NULL, *rb = wb ? wb + gh : NULL;
	int64_t skip_from = p->kind == ERT_RNN_GRU && p->linear_before_reset ? 2 * p->hidden : gh;

	if (rows == 0)
		return;
	if (wb) {
		for (int64_t j = 0; j < gh; j++)
			k->xw[j] = wb[j] + (j < skip_from ? rb[j] : 0.0f);
	} else {
		memset(k->xw, 0, (size_t)gh * sizeof(float));
	}
	for (int64_t i = 1; i < rows; i++)
		memcpy(k->xw + i * gh, k->xw, (size_t)gh * sizeof(float));
	if (p->input == 0)
		return;
	gemm(k, rows, gh, p->input, k->x, p->input, k->w + d * gh * p->input, p->input,
	     k->state && k->state->w ? k->state->w->data + d * k->state->w->stride : NULL,
	     k->xw, gh, true);
}

static void lstm_row(const struct rnn_run *k, int d, const float *xr, float *gr, float *hb,
		     float *cb, float *tb)
{
	const struct ert_rnn_params *p = k->p;
	const struct ert_rnn_fn *fn = p->fn[d];
	int64_t hs = p->hidden;
	float *gi = gr, *go = gr + hs, *gf = gr + 2 * hs, *gc = gr + 3 * hs;
	const float *pi = k->peep ? k->peep + d * 3 * hs : NULL;
	const float *po = pi ? pi + hs : NULL, *pf = pi ? pi + 2 * hs : NULL;

	if (pi) {
		for (int64_t j = 0; j < hs; j++) {
			gi[j] += pi[j] * cb[j];
			gf[j] += pf[j] * cb[j];
		}
	}
	add_clip(p, gi, xr, hs);
	fn_apply(k->vec, &fn[0], gi, hs);
	if (p->input_forget) {
		for (int64_t j = 0; j < hs; j++)
			gf[j] = 1.0f - gi[j];
	} else {
		add_clip(p, gf, xr + 2 * hs, hs);
		fn_apply(k->vec, &fn[0], gf, hs);
	}
	add_clip(p, gc, xr + 3 * hs, hs);
	fn_apply(k->vec, &fn[1], gc, hs);
	for (int64_t j = 0; j < hs; j++)
		cb[j] = gf[j] * cb[j] + gi[j] * gc[j];
	if (po)
		for (int64_t j = 0; j < hs; j++)
			go[j] += po[j] * cb[j];
	add_clip(p, go, xr + hs, hs);
	fn_apply(k->vec, &fn[0], go, hs);
	memcpy(tb, cb, (size_t)hs * sizeof(float));
	fn_apply(k->vec, &fn[2], tb, hs);
	for (int64_t j = 0; j < hs; j++)
		hb[j] = go[j] * tb[j];
}

/* GRU's z and r (into gr, activated); with linear_before_reset h's pre-activation too. */
static void gru_zr(const struct rnn_run *k, int d, const float *xr, float *gr)
{
	const struct ert_rnn_params *p = k->p;

	add_clip(p, gr, xr, 2 * p->hidden);
	fn_apply(k->vec, &p->fn[d][0], gr, 2 * p->hidden);
}

static void gru_h(const struct rnn_run *k, int d, const float *xr, float *gr, float *hb)
{
	const struct ert_rnn_params *p = k->p;
	int64_t hs = p->hidden;
	float *z = gr, *r = gr + hs, *gh = gr + 2 * hs;

	if (p->linear_before_reset) {
		const float *rbh = k->b ? k->b + d * 6 * hs + 5 * hs : NULL;

		for (int64_t j = 0; j < hs; j++)
			gh[j] = r[j] * (gh[j] + (rbh ? rbh[j] : 0.0f));
	}
	add_clip(p, gh, xr + 2 * hs, hs);
	fn_apply(k->vec, &p->fn[d][1], gh, hs);
	for (int64_t j = 0; j < hs; j++)
		hb[j] = (1.0f - z[j]) * gh[j] + z[j] * hb[j];
}

static void run_direction(const struct rnn_run *k, int d, bool backwards)
{
	const struct ert_rnn_params *p = k->p;
	int64_t hs = p->hidden, gh = p->gates * hs, nr = r_cols(p), steps = 0;
	const float *rd = k->r + d * gh * hs;
	const float *rp, *rhp = NULL;

	input_projection(k, d);
	if (k->state && k->state->r) {
		rp = k->state->r->data + d * k->state->r->stride;
		rhp = k->state->rh ? k->state->rh->data + d * k->state->rh->stride : NULL;
	} else {
		ert_sgemm_pack_b(rd, 1, hs, hs, nr, k->kern->nr, k->rpack);
		rp = k->rpack;
	}
	if (nr < gh && !rhp) {
		ert_sgemm_pack_b(rd + 2 * hs * hs, 1, hs, hs, hs, k->kern->nr, k->rhpack);
		rhp = k->rhpack;
	}
	for (int64_t b = 0; b < p->batch; b++) {
		int64_t len = k->lens ? k->lens[b] : p->seq;

		steps = len > steps ? len : steps;
		if (k->h0)
			memcpy(k->h + b * hs, k->h0 + state_off(p, d, b), (size_t)hs * sizeof(float));
		else
			memset(k->h + b * hs, 0, (size_t)hs * sizeof(float));
		if (k->c0)
			memcpy(k->c + b * hs, k->c0 + state_off(p, d, b), (size_t)hs * sizeof(float));
		else
			memset(k->c + b * hs, 0, (size_t)hs * sizeof(float));
	}
	for (int64_t s = 0; s < steps; s++) {
		gemm(k, p->batch, nr, hs, k->h, hs, NULL, 0, rp, k->g, gh, false);
		if (nr < gh)
			memset(k->tmp, 0, (size_t)(p->batch * hs) * sizeof(float));
		for (int64_t b = 0; b < p->batch; b++) {
			int64_t len = k->lens ? k->lens[b] : p->seq;
			int64_t t = backwards ? len - 1 - s : s;
			const float *xr = k->xw + x_row(p, t, b) * gh;
			float *gr = k->g + b * gh, *hb = k->h + b * hs;

			if (s >= len)
				continue;
			if (p->kind == ERT_RNN_SIMPLE) {
				add_clip(p, gr, xr, hs);
				fn_apply(k->vec, &p->fn[d][0], gr, hs);
				memcpy(hb, gr, (size_t)hs * sizeof(float));
			} else if (p->kind == ERT_RNN_LSTM) {
				lstm_row(k, d, xr, gr, hb, k->c + b * hs, k->tmp + b * hs);
			} else {
				gru_zr(k, d, xr, gr);
				if (nr < gh)
					for (int64_t j = 0; j < hs; j++)
						k->tmp[b * hs + j] = gr[hs + j] * hb[j];
				else
					gru_h(k, d, xr, gr, hb);
			}
		}
		if (nr < gh) {
			/* GRU: h's product needs r * H, known only now */
			gemm(k, p->batch, hs, hs, k->tmp, hs, NULL, 0, rhp, k->g + 2 * hs, gh, false);
			for (int64_t b = 0; b < p->batch; b++) {
				int64_t len = k->lens ? k->lens[b] : p->seq;
				int64_t t = backwards ? len - 1 - s : s;

				if (s < len)
					gru_h(k, d, k->xw + x_row(p, t, b) * gh, k->g + b * gh,
					      k->h + b * hs);
			}
		}
		if (!k->y)
			continue;
		for (int64_t b = 0; b < p->batch; b++) {
			int64_t len = k->lens ? k->lens[b] : p->seq;
			int64_t t = backwards ? len - 1 - s : s;

			if (s < len)
				memcpy(k->y + y_off(p, t, d, b), k->h + b * hs,
				       (size_t)hs * sizeof(float));
		}
	}
	for (int64_t b = 0; b < p->batch; b++) {
		if (k->yh)
			memcpy(k->yh + state_off(p, d, b), k->h + b * hs, (size_t)hs * sizeof(float));
		if (k->yc)
			memcpy(k->yc + state_off(p, d, b), k->c + b * hs, (size_t)hs * sizeof(float));
	}
}

static ert_status rnn_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	struct ert_rnn_params p;
	struct rnn_ws l;
	ert_status st = ert_rnn_params_get(x->node, (const struct ert_value *const *)x->in,
					   x->n_in, &p, err);

	if (st != ERT_OK)
		return st;
	if (!ws_layout(cpu, &p, &l))
		return ert_node_fail(x->node, err, ERT_STATUS_SHAPE, "workspace size overflows");
	if (!x->workspace || x->workspace_size < l.total_bytes)
		return ert_node_fail(x->node, err, ERT_STATUS_INTERNAL,
				     "workspace of %zu bytes, %zu needed", x->workspace_size,
				     l.total_bytes);
	struct rnn_run k = {
		.p = &p, .cpu = cpu,
		.kern = cpu->gemm ? cpu->gemm : ert_sgemm_kernel_for(ERT_ISA_SCALAR),
		.vec = cpu->precision == ERT_LEVEL_HIGH ? NULL : ert_vec_kernels_for(cpu->isa),
		.state = x->state,
		.x = in_f32(x, ERT_RNN_IN_X), .w = in_f32(x, ERT_RNN_IN_W),
		.r = in_f32(x, ERT_RNN_IN_R), .b = in_f32(x, ERT_RNN_IN_B),
		.h0 = in_f32(x, ERT_RNN_IN_H0),
		.c0 = p.kind == ERT_RNN_LSTM ? in_f32(x, ERT_RNN_IN_C0) : NULL,
		.peep = p.kind == ERT_RNN_LSTM ? in_f32(x, ERT_RNN_IN_P) : NULL,
		.lens = ERT_RNN_IN_SEQ_LENS < x->n_in && x->in[ERT_RNN_IN_SEQ_LENS]
				? x->in[ERT_RNN_IN_SEQ_LENS]->data : NULL,
		.y = out_f32(x, ERT_RNN_OUT_Y), .yh = out_f32(x, ERT_RNN_OUT_H),
		.yc = p.kind == ERT_RNN_LSTM ? out_f32(x, ERT_RNN_OUT_C) : NULL,
	};
	float *base = (float *)(((uintptr_t)x->workspace + 63) & ~(uintptr_t)63);

	for (int64_t b = 0; k.lens && b < p.batch; b++) {
		if (k.lens[b] < 0 || k.lens[b] > p.seq)
			return ert_node_fail(x->node, err, ERT_STATUS_INVALID_ARGUMENT,
					     "sequence_lens[%lld] = %d is outside [0, %lld]",
					     (long long)b, (int)k.lens[b], (long long)p.seq);
	}
	if (k.y)
		memset(k.y, 0, x->out[ERT_RNN_OUT_Y]->nbytes);
	if (p.hidden == 0 || p.batch == 0)
		return ERT_OK;
	k.xw = base + l.xw;
	k.h = base + l.h;
	k.c = base + l.c;
	k.g = base + l.g;
	k.tmp = base + l.tmp;
	k.rpack = base + l.rpack;
	k.rhpack = base + l.rhpack;
	k.gws = base + l.gemm;
	k.gws_size = l.total_bytes - 64 - l.gemm * sizeof(float);
	for (int d = 0; d < p.dirs; d++)
		run_direction(&k, d, d == 1 || p.reverse);
	return ERT_OK;
}

const struct ert_cpu_op ert_cpu_ops_recurrent[] = {
	{ .op = ERT_OP_RNN, .supports = rnn_supports, .workspace = rnn_workspace,
	  .prepare = rnn_prepare, .compute = rnn_compute, .release = rnn_release },
	{ .op = ERT_OP_GRU, .supports = rnn_supports, .workspace = rnn_workspace,
	  .prepare = rnn_prepare, .compute = rnn_compute, .release = rnn_release },
	{ .op = ERT_OP_LSTM, .supports = rnn_supports, .workspace = rnn_workspace,
	  .prepare = rnn_prepare, .compute = rnn_compute, .release = rnn_release },
	{ .compute = NULL },
};
