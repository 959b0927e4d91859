/* SPDX-License-Identifier: MIT */
/*
 * Dynamic quantisation (backends/cpu/dq/, docs/dynamic-quant.md): Conv, Gemm
 * and MatMul on block-quantised weights with activations quantised as they
 * run. Every level this CPU has gives the scalar reference's bits (integer
 * block sums are exact, and the float steps are the same), with one and two
 * threads; the result is within a stated tolerance of the float32 kernels on
 * the decoded weights; sessions with memory LOW keep the weights encoded and
 * name the kernel, and memory NORMAL gives the bits an eagerly decoded model
 * gives.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu-impl.h"
#include "cpu/dq/dq.h"
#include "edgert.h"
#include "ert-op-test.h"
#include "ert-test-model.h"
#include "ert-test.h"
#include "format/format-priv.h"
#include "opt/opt-private.h"
#include "session/session-impl.h"

/*
 * Tolerance against the float32 kernels on the same (decoded) weights: the
 * activations' rounding alone, at most half a step of max|x| / 127 per
 * element. Measured: up to about 0.6 % of the output's largest magnitude
 * on these shapes; the bound leaves room.
 */
#define DQ_TOL 0.01

static uint32_t seed = 777;

static void fill(float *p, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		p[i] = frand_r(&seed);
}

/* Block-quantised storage of @w (@rank, @dims) as the .ert loader keeps it. */
struct qw {
	struct ert_wq wq;
	void *enc;
	float *decoded;
};

static void qw_make(struct qw *q, const float *w, int32_t rank, const int64_t *dims, int bits,
		    uint32_t block)
{
	int64_t numel = ert_shape_numel(rank, dims);
	enum fmt_encoding enc = bits == 8 ? FMT_ENC_Q8 : FMT_ENC_Q4;
	uint64_t size = fmt_encoded_size(enc, rank, dims, numel, block);
	uint64_t nb = fmt_quant_blocks(rank, dims, numel, block);

	memset(q, 0, sizeof(*q));
	q->enc = aligned_alloc(64, (size | 63) + 1);
	q->decoded = malloc((size_t)numel * sizeof(float));
	if (!q->enc || !q->decoded)
		abort();
	fmt_encode(enc, w, rank, dims, numel, block, q->enc);
	fmt_decode(enc, q->enc, rank, dims, numel, block, q->decoded);
	q->wq.bits = bits;
	q->wq.block = block;
	q->wq.rows = rank >= 2 ? dims[0] : 1;
	q->wq.row_len = numel / q->wq.rows;
	q->wq.blocks_per_row = (int64_t)nb / q->wq.rows;
	q->wq.scales = q->enc;
	q->wq.q = (const uint8_t *)q->enc + nb * 4;
	q->wq.enc_bytes = size;
}

static void qw_free(struct qw *q)
{
	free(q->enc);
	free(q->decoded);
}

/* @o's node at @isa with input 1 block-quantised (@q); outputs to @out. */
static ert_status run_dq(struct one *o, struct qw *q, enum ert_cpu_isa isa,
			 struct ert_threadpool *pool, struct ert_value *out)
{
	bool cst[ONE_MAX_IO] = { false, true, true, true };
	struct ert_cpu_eval_opts opts = {
		.isa = isa, .pool = pool, .in_const = cst, .memory = ERT_LEVEL_LOW,
	};
	struct ert_value w = o->in[1];

	o->in[1].data = NULL;
	o->in[1].wq = &q->wq;
	ert_status st = ert_cpu_eval_node_with(&opts, o->g, o->n, o->inp, o->n_in, out, 1,
					       &o->err);

	o->in[1] = w;
	return st;
}

/* The float32 kernels (scalar) on the decoded weights. */
static ert_status run_f32(struct one *o, struct qw *q, struct ert_value *out)
{
	struct ert_cpu_eval_opts opts = { .isa = ERT_ISA_SCALAR, .memory = ERT_LEVEL_NORMAL };
	struct ert_value w = o->in[1];

	o->in[1].data = q->decoded;
	o->in[1].wq = NULL;
	ert_status st = ert_cpu_eval_node_with(&opts, o->g, o->n, o->inp, o->n_in, out, 1,
					       &o->err);

	o->in[1] = w;
	return st;
}

static double max_rel(const struct ert_value *a, const struct ert_value *ref)
{
	const float *x = a->data, *r = ref->data;
	double mag = 1e-30, worst = 0;

	for (int64_t i = 0; i < ref->numel; i++)
		mag = fabs(r[i]) > mag ? fabs(r[i]) : mag;
	for (int64_t i = 0; i < ref->numel; i++) {
		double d = fabs((double)x[i] - r[i]);

		if (!(d <= worst))
			worst = d;
	}
	return worst / mag;
}

/*
 * @o (input 1 the weights @w of @wrank/@wdims) with @bits-bit weights: every
 * level and 1/2 threads against scalar bit for bit, scalar against float32.
 * Returns the runs compared.
 */
static int check_case(int *ert_test_failed_, struct one *o, const char *what, int bits,
		      uint32_t block)
{
	struct ert_threadpool *pool = ert_threadpool_create(2);
	enum ert_cpu_isa best = ert_cpu_isa_best();
	struct ert_value ref, f32, got;
	struct qw q;
	int runs = 0;

	if (!pool) {
		*ert_test_failed_ = 1;
		return 0;
	}
	int64_t act = ert_attr_int(o->n, "ert.act", 0);

	qw_make(&q, o->in[1].data, o->in[1].rank, o->in[1].dims, bits, block);
	/*
	 * Accuracy before the fused activation (Relu and Clip can only shrink
	 * a difference, and a clipped output's magnitude says nothing of the
	 * dot products'); the levels are compared with it.
	 */
	ert_node_set_attr_int(o->g, o->n, "ert.act", 0);
	if (run_dq(o, &q, ERT_ISA_SCALAR, NULL, &ref) != ERT_OK ||
	    run_f32(o, &q, &f32) != ERT_OK) {
		fprintf(stderr, "%s (%d-bit): %s\n", what, bits, o->err.msg);
		*ert_test_failed_ = 1;
		goto out;
	}
	double d = max_rel(&ref, &f32);

	if (!(d <= DQ_TOL)) {
		fprintf(stderr, "%s (%d-bit): %g of the float32 result's magnitude apart\n", what,
			bits, d);
		*ert_test_failed_ = 1;
	}
	if (getenv("DQ_VERBOSE"))
		fprintf(stderr, "%s (%d-bit): %.5f of the float32 magnitude\n", what, bits, d);
	free(f32.data);
	free(ref.data);
	ert_node_set_attr_int(o->g, o->n, "ert.act", act);
	if (run_dq(o, &q, ERT_ISA_SCALAR, NULL, &ref) != ERT_OK) {
		fprintf(stderr, "%s (%d-bit): %s\n", what, bits, o->err.msg);
		*ert_test_failed_ = 1;
		goto out;
	}
	for (int isa = ERT_ISA_SCALAR; isa <= (int)best; isa++) {
		for (int t = 0; t < 2; t++) {
			if (run_dq(o, &q, (enum ert_cpu_isa)isa, t ? pool : NULL, &got) != ERT_OK) {
				fprintf(stderr, "%s at %s: %s\n", what,
					ert_cpu_isa_name((enum ert_cpu_isa)isa), o->err.msg);
				*ert_test_failed_ = 1;
				continue;
			}
			CHECK_EQ_INT(got.numel, ref.numel);
			if (got.numel == ref.numel &&
			    memcmp(got.data, ref.data, (size_t)ref.numel * sizeof(float)) != 0) {
				fprintf(stderr, "%s (%d-bit) at %s, %d threads: not the scalar bits\n",
					what, bits, ert_cpu_isa_name((enum ert_cpu_isa)isa), t + 1);
				*ert_test_failed_ = 1;
			}
			free(got.data);
			runs++;
		}
	}
	free(ref.data);
out:
	qw_free(&q);
	ert_threadpool_destroy(pool);
	return runs;
}

static void set_act(struct one *o, int act)
{
	float clip[2] = { -0.5f, 0.7f };

	if (!act)
		return;
	ert_node_set_attr_int(o->g, o->n, "ert.act", act);
	if (act == ERT_ACT_CLIP)
		ert_opt_set_attr_floats(o->g, o->n, "ert.act_params", clip, 2);
}

static struct ert_value *in_rand(struct one *o, uint32_t i, int32_t rank, const int64_t *dims)
{
	struct ert_value *v = one_in_alloc(o, i, ERT_DTYPE_FLOAT32, rank, dims);

	fill(v->data, v->numel);
	return v;
}

struct conv_case {
	const char *name;
	int64_t n, c, h, w, m, kh, kw, stride, dil, pad, group;
	bool bias, residual;
	int act;
	uint32_t block;   /* the file's block size */
};

static const struct conv_case conv_cases[] = {
	/* K = 45: a short last block, weights copied */
	{ "3x3 pad 1, K 45, batch 2, residual + relu", 2, 5, 9, 11, 13, 3, 3, 1, 1, 1, 1, true,
	  true, ERT_ACT_RELU, 32 },
	/* K = 64 read in place; 1x1 with stride 2 is no pointwise GEMM */
	{ "1x1 stride 2", 1, 64, 9, 11, 24, 1, 1, 2, 1, 0, 1, false, false, 0, 32 },
	{ "1x1 pointwise, M 17, clip", 1, 96, 7, 5, 17, 1, 1, 1, 1, 0, 1, true, false,
	  ERT_ACT_CLIP, 32 },
	/* groups: K = 32 x 9 per group in place, 10 outputs per group */
	{ "3x3 groups 2, dilation 2, batch 2", 2, 64, 10, 9, 20, 3, 3, 1, 2, 2, 2, true, true,
	  ERT_ACT_RELU, 32 },
	{ "7x7 stride 2, 3 channels (K 147)", 1, 3, 20, 18, 16, 7, 7, 2, 1, 3, 1, true, false,
	  ERT_ACT_RELU, 32 },
	/* the file's blocks of 64: quantised again in blocks of 32 */
	{ "3x3, file blocks of 64", 1, 32, 8, 8, 40, 3, 3, 1, 1, 1, 1, true, false, 0, 64 },
	{ "3x3, M of 70 (J tiles and tail)", 1, 32, 6, 7, 70, 3, 3, 1, 1, 1, 1, true, false, 0,
	  32 },
};

ERT_TEST(conv_levels_and_accuracy)
{
	int runs = 0;

	for (size_t i = 0; i < sizeof(conv_cases) / sizeof(conv_cases[0]); i++) {
		const struct conv_case *cc = &conv_cases[i];
		int64_t oh = (cc->h + 2 * cc->pad - cc->dil * (cc->kh - 1) - 1) / cc->stride + 1;
		int64_t ow = (cc->w + 2 * cc->pad - cc->dil * (cc->kw - 1) - 1) / cc->stride + 1;
		int64_t xd[4] = { cc->n, cc->c, cc->h, cc->w };
		int64_t wd[4] = { cc->m, cc->c / cc->group, cc->kh, cc->kw }, bd[1] = { cc->m };
		int64_t rd[4] = { cc->n, cc->m, oh, ow };
		int64_t st[2] = { cc->stride, cc->stride }, dl[2] = { cc->dil, cc->dil };
		int64_t pads[4] = { cc->pad, cc->pad, cc->pad, cc->pad };

		for (int bits = 8; bits >= 4; bits -= 4) {
			struct one o;

			one_init(&o, ERT_OP_Conv, 0, cc->residual ? 4 : cc->bias ? 3 : 2, 1);
			in_rand(&o, 0, 4, xd);
			in_rand(&o, 1, 4, wd);
			if (cc->bias || cc->residual)
				in_rand(&o, 2, 1, bd);
			if (cc->residual) {
				in_rand(&o, 3, 4, rd);
				ert_node_set_attr_int(o.g, o.n, "ert.residual", 1);
			}
			ert_node_set_attr_ints(o.g, o.n, "strides", st, 2);
			ert_node_set_attr_ints(o.g, o.n, "dilations", dl, 2);
			ert_node_set_attr_ints(o.g, o.n, "pads", pads, 4);
			ert_node_set_attr_int(o.g, o.n, "group", cc->group);
			set_act(&o, cc->act);
			runs += check_case(ert_test_failed_, &o, cc->name, bits, cc->block);
			one_fini(&o);
		}
	}
	CHECK(runs > 0);
}

ERT_TEST(gemm_matmul_levels_and_accuracy)
{
	static const struct {
		const char *name;
		int64_t m, k, n;
		bool ta, tb;
		int c_rank;          /* 0 none, 1 [N], 2 [M, N] */
		float alpha, beta;
		int act;
	} cases[] = {
		{ "transB, K 100 (copy), C [N], alpha, beta", 3, 100, 37, false, true, 1, 0.5f, 2.0f,
		  ERT_ACT_RELU },
		{ "transB, K 64 in place, transA, C [M, N]", 5, 64, 19, true, true, 2, 1.0f, 1.0f, 0 },
		{ "no transB (B is K x N: copy), M 1", 1, 96, 70, false, false, 1, 1.0f, 1.0f,
		  ERT_ACT_CLIP },
		{ "transB, batch rows 33, K 256", 33, 256, 9, false, true, 0, 1.0f, 1.0f, 0 },
	};
	int runs = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t ad[2] = { cases[i].ta ? cases[i].k : cases[i].m,
				  cases[i].ta ? cases[i].m : cases[i].k };
		int64_t bd[2] = { cases[i].tb ? cases[i].n : cases[i].k,
				  cases[i].tb ? cases[i].k : cases[i].n };
		int64_t cd[2] = { cases[i].m, cases[i].n };

		for (int bits = 8; bits >= 4; bits -= 4) {
			struct one o;

			one_init(&o, ERT_OP_Gemm, 0, cases[i].c_rank ? 3 : 2, 1);
			in_rand(&o, 0, 2, ad);
			in_rand(&o, 1, 2, bd);
			if (cases[i].c_rank)
				in_rand(&o, 2, cases[i].c_rank, cd + 2 - cases[i].c_rank);
			ert_node_set_attr_int(o.g, o.n, "transA", cases[i].ta);
			ert_node_set_attr_int(o.g, o.n, "transB", cases[i].tb);
			ert_node_set_attr_float(o.g, o.n, "alpha", cases[i].alpha);
			ert_node_set_attr_float(o.g, o.n, "beta", cases[i].beta);
			set_act(&o, cases[i].act);
			runs += check_case(ert_test_failed_, &o, cases[i].name, bits, 32);
			one_fini(&o);
		}
	}
	/* MatMul: batch of A folded into rows, B [K, N] (copied along K), and B [K] */
	for (int bits = 8; bits >= 4; bits -= 4) {
		int64_t ad[3] = { 2, 5, 64 }, bd[2] = { 64, 40 }, vd[1] = { 96 }, ad2[2] = { 3, 96 };
		struct one o;

		one_init(&o, ERT_OP_MatMul, 0, 2, 1);
		in_rand(&o, 0, 3, ad);
		in_rand(&o, 1, 2, bd);
		set_act(&o, ERT_ACT_RELU);
		runs += check_case(ert_test_failed_, &o, "MatMul [2,5,64] x [64,40]", bits, 32);
		one_fini(&o);

		one_init(&o, ERT_OP_MatMul, 0, 2, 1);
		in_rand(&o, 0, 2, ad2);
		in_rand(&o, 1, 1, vd);
		runs += check_case(ert_test_failed_, &o, "MatMul [3,96] x [96]", bits, 32);
		one_fini(&o);
	}
	/* the optimiser's fused bias (ert.bias): input 2 added per column, then Gelu */
	for (int bits = 8; bits >= 4; bits -= 4) {
		int64_t ad[3] = { 2, 5, 64 }, bd[2] = { 64, 40 };
		struct one o;

		one_init(&o, ERT_OP_MatMul, 0, 3, 1);
		in_rand(&o, 0, 3, ad);
		in_rand(&o, 1, 2, bd);
		in_rand(&o, 2, 1, bd + 1);
		ert_node_set_attr_int(o.g, o.n, "ert.bias", 1);
		set_act(&o, ERT_ACT_GELU);
		runs += check_case(ert_test_failed_, &o, "MatMul [2,5,64] x [64,40] + bias, Gelu",
				   bits, 32);
		one_fini(&o);
	}
	CHECK(runs > 0);
}

/*
 * The kernels' integer sums at their extremes: every product 127 x -127
 * (vpmaddubsw's pairs must not saturate), over several blocks, at every level.
 */
ERT_TEST(dot_extremes_exact)
{
	enum { NI = 3, NJ = 11, KB = 4 };
	int8_t qa[NI * KB * 32];
	uint8_t qw[NJ * KB * 32], q4[NJ * KB * 16];
	float sa[NI * KB], sw[NJ * KB], out[NI * NJ];

	for (int i = 0; i < NI * KB * 32; i++)
		qa[i] = (int8_t)(i % 3 == 0 ? -127 : 127);
	for (int i = 0; i < NJ * KB * 32; i++)
		qw[i] = (uint8_t)(int8_t)(i % 3 == 0 ? 127 : -127);
	for (int i = 0; i < NJ * KB * 16; i++)
		q4[i] = 0x99; /* -7, -7 */
	for (int i = 0; i < NI * KB; i++)
		sa[i] = 1.0f / 64;
	for (int i = 0; i < NJ * KB; i++)
		sw[i] = 1.0f / 128;
	for (int isa = ERT_ISA_SCALAR; isa <= (int)ert_cpu_isa_best(); isa++) {
		const struct ert_dq_kernel *k = ert_dq_kernel_for((enum ert_cpu_isa)isa);
		struct ert_dq_w w8 = { 8, NJ, KB * 32, KB, qw, KB * 32, sw, KB };
		struct ert_dq_w w4 = { 4, NJ, KB * 32, KB, q4, KB * 16, sw, KB };

		k->dot(qa, sa, NI, &w8, 0, NJ, out, NJ);
		for (int i = 0; i < NI; i++)
			for (int j = 0; j < NJ; j++) {
				double s = 0;

				for (int t = 0; t < KB * 32; t++)
					s += (double)qa[i * KB * 32 + t] * (int8_t)qw[j * KB * 32 + t];
				CHECK(out[i * NJ + j] == (float)(s / 64 / 128));
			}
		k->dot(qa, sa, NI, &w4, 0, NJ, out, NJ);
		for (int i = 0; i < NI; i++)
			for (int j = 0; j < NJ; j++) {
				double s = 0;

				for (int t = 0; t < KB * 32; t++)
					s += (double)qa[i * KB * 32 + t] * -7;
				CHECK(out[i * NJ + j] == (float)(s / 64 / 128));
			}
	}
}

/* A model: Conv (3x3, 32 -> 40) then Gemm (transB, 40*8*8 -> 10), as a graph. */
static struct ert_graph *small_model(float **w_conv, float **w_gemm)
{
	struct ert_graph *g = ert_graph_create();
	int64_t xd[4] = { 1, 32, 8, 8 }, wd[4] = { 40, 32, 3, 3 }, bd[1] = { 40 };
	int64_t fd[2] = { 1, 2560 }, gd[2] = { 10, 2560 }, shd[1] = { 2 }, od[2] = { 1, 10 };
	int64_t pads[4] = { 1, 1, 1, 1 };
	static const int64_t shape[2] = { 1, 2560 };
	float *wc = malloc(40 * 32 * 9 * sizeof(float)), *wg = malloc(10 * 2560 * sizeof(float));
	float *bc = malloc(40 * sizeof(float));
	int64_t *sh = malloc(sizeof(shape));

	if (!g || !wc || !wg || !bc || !sh)
		abort();
	fill(wc, 40 * 32 * 9);
	fill(wg, 10 * 2560);
	fill(bc, 40);
	memcpy(sh, shape, sizeof(shape));
	int32_t x = ert_graph_add_tensor(g, "x", ERT_DTYPE_FLOAT32, 4, xd);
	int32_t w = ert_graph_add_tensor(g, "wc", ERT_DTYPE_FLOAT32, 4, wd);
	int32_t b = ert_graph_add_tensor(g, "bc", ERT_DTYPE_FLOAT32, 1, bd);
	int32_t c = ert_graph_add_tensor(g, "c", ERT_DTYPE_FLOAT32, 4, (int64_t[]){ 1, 40, 8, 8 });
	int32_t s = ert_graph_add_tensor(g, "shape", ERT_DTYPE_INT64, 1, shd);
	int32_t f = ert_graph_add_tensor(g, "flat", ERT_DTYPE_FLOAT32, 2, fd);
	int32_t gw = ert_graph_add_tensor(g, "wg", ERT_DTYPE_FLOAT32, 2, gd);
	int32_t y = ert_graph_add_tensor(g, "y", ERT_DTYPE_FLOAT32, 2, od);

	ert_graph_set_const(g, w, wc, 40 * 32 * 9 * sizeof(float), true);
	ert_graph_set_const(g, b, bc, 40 * sizeof(float), true);
	ert_graph_set_const(g, s, sh, sizeof(shape), true);
	ert_graph_set_const(g, gw, wg, 10 * 2560 * sizeof(float), true);
	ert_graph_add_input(g, x);
	int32_t cn = ert_graph_add_node(g, ERT_OP_Conv, "conv", 3, (int32_t[]){ x, w, b }, 1, &c);

	ert_node_set_attr_ints(g, &g->nodes[cn], "pads", pads, 4);
	ert_node_set_attr_int(g, &g->nodes[cn], "ert.act", ERT_ACT_RELU);
	ert_graph_add_node(g, ERT_OP_Reshape, "flatten", 2, (int32_t[]){ c, s }, 1, &f);
	int32_t gn = ert_graph_add_node(g, ERT_OP_Gemm, "fc", 2, (int32_t[]){ f, gw }, 1, &y);

	ert_node_set_attr_int(g, &g->nodes[gn], "transB", 1);
	ert_graph_add_output(g, y);
	*w_conv = wc;
	*w_gemm = wg;
	return g;
}

struct kernels_seen {
	int dq;
	char conv[48];
};

static int after_op(const ert_op_info *op, void *user)
{
	struct kernels_seen *k = user;

	if (op->kernel && strncmp(op->kernel, "dq8-gemm-", 9) == 0)
		k->dq++;
	if (strcmp(op->type, "Conv") == 0)
		snprintf(k->conv, sizeof(k->conv), "%s", op->kernel ? op->kernel : "");
	return 0;
}

static ert_status run_session_threads(ert_model *m, ert_level memory, uint32_t threads,
				      float *y, size_t *peak, struct kernels_seen *seen)
{
	ert_session *s = NULL;
	ert_config cfg;
	ert_status st;

	ert_config_init(&cfg);
	cfg.num_threads = threads;
	cfg.memory = memory;
	cfg.after_op = after_op;
	cfg.callback_user = seen;
	st = ert_session_create(m, &cfg, &s);
	if (st != ERT_OK)
		return st;
	uint32_t sx = 99;
	float *x = ert_tensor_data(ert_session_get_input(s, 0));

	for (int i = 0; i < 32 * 64; i++)
		x[i] = frand_r(&sx);
	st = ert_session_run(s);
	if (st == ERT_OK) {
		memcpy(y, ert_tensor_data(ert_session_get_output(s, 0)), 10 * sizeof(float));
		*peak = ert_session_peak_bytes(s);
	}
	ert_session_destroy(s);
	return st;
}

static ert_status run_session(ert_model *m, ert_level memory, float *y, size_t *peak,
			      struct kernels_seen *seen)
{
	return run_session_threads(m, memory, 2, y, peak, seen);
}

/*
 * Sessions: memory LOW leaves both weights encoded (nothing decoded in the
 * model afterwards), runs the dq kernels, holds less; memory NORMAL decodes
 * and gives exactly what a model holding the decoded values gives.
 */
ERT_TEST(session_low_and_normal)
{
	float *wc, *wg, y_low[10], y_norm[10], y_ref[10];
	struct ert_graph *g = small_model(&wc, &wg);
	struct ert_write_options opt = { .weight_bits = 8 };
	struct ert_err err = { "" };
	struct kernels_seen seen = { 0 };
	void *img = NULL;
	size_t size = 0, peak_low = 0, peak_norm = 0, peak_ref = 0;
	char msg[256];
	ert_model *m = NULL, *ref = NULL;

	REQUIRE(g);
	REQUIRE(ert_graph_toposort(g, &err) == ERT_OK);
	REQUIRE(ert_format_write_memory(g, &opt, &img, &size, &err) == ERT_OK);
	/* the reference model: the same graph holding the decoded values raw */
	int64_t nwc = 40 * 32 * 9, nwg = 10 * 2560;
	int64_t dc[4] = { 40, 32, 3, 3 }, dg[2] = { 10, 2560 };
	uint8_t *enc = malloc((size_t)fmt_encoded_size(FMT_ENC_Q8, 4, dc, nwc, 32));

	REQUIRE(enc);
	fmt_encode(FMT_ENC_Q8, wc, 4, dc, nwc, 32, enc);
	fmt_decode(FMT_ENC_Q8, enc, 4, dc, nwc, 32, wc);
	free(enc);
	enc = malloc((size_t)fmt_encoded_size(FMT_ENC_Q8, 2, dg, nwg, 32));
	REQUIRE(enc);
	fmt_encode(FMT_ENC_Q8, wg, 2, dg, nwg, 32, enc);
	fmt_decode(FMT_ENC_Q8, enc, 2, dg, nwg, 32, wg);
	free(enc);
	ref = model_from_graph(g);
	REQUIRE(ref);
	REQUIRE(ert_model_load_memory(img, size, 1, &m, msg, sizeof(msg)) == ERT_OK);
	free(img);

	CHECK_EQ_INT(run_session(m, ERT_LEVEL_LOW, y_low, &peak_low, &seen), ERT_OK);
	CHECK_EQ_INT(seen.dq, 2);
	CHECK(strncmp(seen.conv, "dq8-gemm-", 9) == 0);
	const struct ert_graph *mg = ert_model_graph(m);

	for (uint32_t t = 0; t < mg->n_tensors; t++)
		if (mg->tensors[t].wq)
			CHECK(atomic_load(&mg->tensors[t].wq->decoded) == NULL);
	seen.dq = 0;
	CHECK_EQ_INT(run_session(m, ERT_LEVEL_NORMAL, y_norm, &peak_norm, &seen), ERT_OK);
	CHECK_EQ_INT(seen.dq, 0);
	CHECK_EQ_INT(run_session(ref, ERT_LEVEL_NORMAL, y_ref, &peak_ref, &seen), ERT_OK);
	CHECK(memcmp(y_norm, y_ref, sizeof(y_ref)) == 0);
	CHECK_EQ_INT(peak_norm, peak_ref);
	/* LOW: no packed float copies, the int8 weights read in place */
	CHECK(peak_low < peak_norm);
	double mag = 0, worst = 0;

	for (int i = 0; i < 10; i++) {
		mag = fabs(y_ref[i]) > mag ? fabs(y_ref[i]) : mag;
		worst = fabs(y_low[i] - y_ref[i]) > worst ? fabs(y_low[i] - y_ref[i]) : worst;
	}
	CHECK(worst <= DQ_TOL * mag);
	ert_model_unref(m);
	ert_model_unref(ref);
}

/*
 * The dq kernels' workspace has a slot per lane the session can use: the
 * memory plan grows with the session's threads and does not depend on how
 * many CPUs the machine has (a 2-thread session on a 16-core machine plans
 * 2 slots, not 16). The results are the same at every thread count.
 */
ERT_TEST(session_workspace_follows_threads)
{
	float *wc, *wg, y1[10], y2[10], y4[10];
	struct ert_graph *g = small_model(&wc, &wg);
	struct ert_write_options opt = { .weight_bits = 8 };
	struct ert_err err = { "" };
	struct kernels_seen seen = { 0 };
	void *img = NULL;
	size_t size = 0, peak1 = 0, peak2 = 0, peak4 = 0;
	char msg[256];
	ert_model *m = NULL;

	REQUIRE(g);
	REQUIRE(ert_graph_toposort(g, &err) == ERT_OK);
	REQUIRE(ert_format_write_memory(g, &opt, &img, &size, &err) == ERT_OK);
	ert_graph_destroy(g);
	REQUIRE(ert_model_load_memory(img, size, 1, &m, msg, sizeof(msg)) == ERT_OK);
	free(img);
	CHECK_EQ_INT(run_session_threads(m, ERT_LEVEL_LOW, 1, y1, &peak1, &seen), ERT_OK);
	CHECK_EQ_INT(run_session_threads(m, ERT_LEVEL_LOW, 2, y2, &peak2, &seen), ERT_OK);
	CHECK_EQ_INT(run_session_threads(m, ERT_LEVEL_LOW, 4, y4, &peak4, &seen), ERT_OK);
	CHECK_EQ_INT(seen.dq, 6);
	CHECK(peak1 < peak2);
	CHECK(peak2 < peak4);
	CHECK(memcmp(y1, y2, sizeof(y1)) == 0);
	CHECK(memcmp(y1, y4, sizeof(y1)) == 0);
	ert_model_unref(m);
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(conv_levels_and_accuracy),
	      ERT_TEST_ENTRY(gemm_matmul_levels_and_accuracy), ERT_TEST_ENTRY(dot_extremes_exact),
	      ERT_TEST_ENTRY(session_low_and_normal),
	      ERT_TEST_ENTRY(session_workspace_follows_threads))
