/* SPDX-License-Identifier: MIT */
/*
 * FusedAttention (ops/attention.c, cpu/ops/attention.c) against the four ops
 * it replaces, run one by one at the same kernel level (MatMul with its
 * folded Transposes, Mul by the scale, Softmax, MatMul), and against a
 * double-precision reference, at every level this CPU has, on 1 and 2
 * threads, on awkward shapes: one head without batch dims, batch 2, S not T,
 * odd head dims, S and T of 1, ViT-S/16's 6 x 197 x 64. And the fusion
 * pass (opt/fuse-attention.c): what it fuses, what it leaves, its switch,
 * and the unfusing the quantizer asks for.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu-impl.h"
#include "cpu/gemm/sgemm.h"
#include "ert-op-test.h"
#include "ert-test-model.h"
#include "ert-test.h"
#include "ops/linalg-geom.h"
#include "opt/opt-private.h"

struct attn_case {
	const char *what;
	int32_t r;
	int64_t q[4], k[4], v[4];           /* the stored inputs */
	int64_t pq[4], pk[4], pv[4], py[4]; /* perms; pq[0] < 0: none */
	float scale;
	bool div;                           /* the scale as a Div by 1 / scale */
};

#define NONE { -1 }
static const struct attn_case cases[] = {
	{ "vit_s16 6 heads", 4, { 1, 197, 6, 64 }, { 1, 197, 6, 64 }, { 1, 197, 6, 64 },
	  { 0, 2, 1, 3 }, { 0, 2, 3, 1 }, { 0, 2, 1, 3 }, { 0, 2, 1, 3 }, 0.125f, false },
	{ "one head, rank 2", 2, { 13, 5 }, { 5, 13 }, { 13, 7 }, NONE, NONE, NONE, NONE, 1.0f,
	  false },
	{ "batch 2, 2 heads, S 19 T 23, D 17, E 9", 4, { 2, 19, 2, 17 }, { 2, 23, 2, 17 },
	  { 2, 23, 2, 9 }, { 0, 2, 1, 3 }, { 0, 2, 3, 1 }, { 0, 2, 1, 3 }, { 0, 2, 1, 3 }, 0.3f,
	  false },
	{ "rank 3, Div, D 8 T 50 E 16", 3, { 4, 33, 8 }, { 4, 8, 50 }, { 4, 50, 16 }, NONE, NONE,
	  NONE, NONE, 0.25f, true },
	{ "S 1, T 1", 3, { 3, 1, 6 }, { 3, 6, 1 }, { 3, 1, 5 }, NONE, NONE, NONE, NONE, 2.0f,
	  false },
	{ "K as [B, H, T, D] through perm_kt, S 70", 4, { 1, 3, 70, 24 }, { 1, 3, 41, 24 },
	  { 1, 3, 41, 24 }, NONE, { 0, 1, 3, 2 }, NONE, NONE, 0.2f, false },
};

static void set_perm(struct ert_graph *g, struct ert_node *n, const char *name,
		     const int64_t *p, int32_t r)
{
	if (p[0] >= 0)
		ert_node_set_attr_ints(g, n, name, p, (uint32_t)r);
}

static void fill(float *p, int64_t n, uint32_t seed)
{
	for (int64_t i = 0; i < n; i++)
		p[i] = frand_r(&seed);
}

static int64_t numel(int32_t r, const int64_t *d)
{
	return ert_shape_numel(r, d);
}

/* One node of @op on @in at @isa (@pool, or NULL); the output into @out. */
/* Precision of every eval() (LOW: bf16 products where the CPU has them). */
static ert_level precision = ERT_LEVEL_NORMAL;

static ert_status eval(struct ert_graph *g, struct ert_node *n, enum ert_cpu_isa isa,
		       struct ert_threadpool *pool, const struct ert_value *const *in, uint32_t n_in,
		       struct ert_value *out, struct ert_err *err)
{
	bool cst[4] = { false, false, false, false };
	struct ert_cpu_eval_opts o = { .isa = isa, .pool = pool, .in_const = cst,
				       .precision = precision };

	return ert_cpu_eval_node_with(&o, g, n, in, n_in, out, 1, err);
}

/* The four ops, one by one, at @isa: into @y (malloc'd data). */
static bool unfused(const struct attn_case *c, enum ert_cpu_isa isa, struct ert_threadpool *pool,
		    struct ert_value in[3], struct ert_value *y)
{
	struct ert_value s = { 0 }, s2 = { 0 }, p = { 0 }, sc;
	struct ert_err err = { "" };
	struct ert_node *n;
	struct ert_graph *g;
	float scale = c->div ? 1.0f / c->scale : c->scale;
	bool ok;

	sc = mkf32(0, NULL, &scale);
	g = one_graph(ERT_OP_MatMul, 20, 2, 1, &n);
	set_perm(g, n, "ert.perm_a", c->pq, c->r);
	set_perm(g, n, "ert.perm_b", c->pk, c->r);
	ok = eval(g, n, isa, pool, (const struct ert_value *[]){ &in[0], &in[1] }, 2, &s, &err) ==
	     ERT_OK;
	ert_graph_destroy(g);
	g = one_graph(c->div ? ERT_OP_Div : ERT_OP_Mul, 20, 2, 1, &n);
	ok = ok && eval(g, n, isa, pool, (const struct ert_value *[]){ &s, &sc }, 2, &s2, &err) ==
			   ERT_OK;
	ert_graph_destroy(g);
	g = one_graph(ERT_OP_Softmax, 20, 1, 1, &n);
	ert_node_set_attr_int(g, n, "axis", -1);
	ok = ok && eval(g, n, isa, pool, (const struct ert_value *[]){ &s2 }, 1, &p, &err) == ERT_OK;
	ert_graph_destroy(g);
	g = one_graph(ERT_OP_MatMul, 20, 2, 1, &n);
	set_perm(g, n, "ert.perm_b", c->pv, c->r);
	set_perm(g, n, "ert.perm_y", c->py, c->r);
	ok = ok && eval(g, n, isa, pool, (const struct ert_value *[]){ &p, &in[2] }, 2, y, &err) ==
			   ERT_OK;
	ert_graph_destroy(g);
	if (!ok)
		fprintf(stderr, "unfused %s: %s\n", c->what, err.msg);
	free(s.data);
	free(s2.data);
	free(p.data);
	return ok;
}

static ert_status fused(const struct attn_case *c, enum ert_cpu_isa isa,
			struct ert_threadpool *pool, struct ert_value in[3], struct ert_value *y,
			struct ert_err *err)
{
	struct ert_node *n;
	struct ert_graph *g = one_graph(ERT_OP_FusedAttention, 20, 3, 1, &n);
	ert_status st;

	set_perm(g, n, "perm_q", c->pq, c->r);
	set_perm(g, n, "perm_kt", c->pk, c->r);
	set_perm(g, n, "perm_v", c->pv, c->r);
	set_perm(g, n, "perm_y", c->py, c->r);
	if (c->div || c->scale != 1.0f)
		ert_node_set_attr_float(g, n, "scale", c->div ? 1.0f / (1.0f / c->scale) : c->scale);
	st = eval(g, n, isa, pool, (const struct ert_value *[]){ &in[0], &in[1], &in[2] }, 3, y, err);
	ert_graph_destroy(g);
	return st;
}

/* Element @idx (view coordinates) of view @perm of a contiguous tensor @dims. */
static double at(const struct ert_value *v, const int64_t *p, int32_t r, const int64_t *idx)
{
	int64_t off = 0, st = 1, pos[4];

	for (int32_t d = 0; d < r; d++)
		pos[p[0] >= 0 ? p[d] : d] = idx[d];
	for (int32_t d = r - 1; d >= 0; d--) {
		off += pos[d] * st;
		st *= v->dims[d];
	}
	return ((const float *)v->data)[off];
}

/* Largest |fused - reference| over Y, the reference in double; relative to max |ref| (>= 1). */
static double ref_diff(const struct attn_case *c, struct ert_value in[3], const struct ert_value *y)
{
	int32_t r = c->r;
	int64_t qv[4], kv[4], vv[4], batch = 1, idx[4] = { 0 };
	double worst = 0;

	for (int32_t d = 0; d < r; d++) {
		qv[d] = in[0].dims[c->pq[0] >= 0 ? c->pq[d] : d];
		kv[d] = in[1].dims[c->pk[0] >= 0 ? c->pk[d] : d];
		vv[d] = in[2].dims[c->pv[0] >= 0 ? c->pv[d] : d];
	}
	for (int32_t d = 0; d < r - 2; d++)
		batch *= qv[d];
	int64_t S = qv[r - 2], D = qv[r - 1], T = kv[r - 1], E = vv[r - 1];
	double *row = malloc((size_t)T * sizeof(double));

	for (int64_t b = 0; b < batch; b++) {
		int64_t rem = b;

		for (int32_t d = r - 3; d >= 0; d--) {
			idx[d] = rem % qv[d];
			rem /= qv[d];
		}
		for (int64_t i = 0; i < S; i++) {
			double mx = -INFINITY, sum = 0;

			for (int64_t t = 0; t < T; t++) {
				double acc = 0;

				for (int64_t k = 0; k < D; k++) {
					idx[r - 2] = i;
					idx[r - 1] = k;
					double a = at(&in[0], c->pq, r, idx);

					idx[r - 2] = k;
					idx[r - 1] = t;
					acc += a * at(&in[1], c->pk, r, idx);
				}
				row[t] = acc * c->scale;
				mx = row[t] > mx ? row[t] : mx;
			}
			for (int64_t t = 0; t < T; t++)
				sum += (row[t] = exp(row[t] - mx));
			for (int64_t e = 0; e < E; e++) {
				double acc = 0;

				for (int64_t t = 0; t < T; t++) {
					idx[r - 2] = t;
					idx[r - 1] = e;
					acc += row[t] / sum * at(&in[2], c->pv, r, idx);
				}
				idx[r - 2] = i;
				idx[r - 1] = e;
				/* Y's element idx is stored at Transpose(Y, perm_y)'s sidx */
				int64_t sidx[4];
				static const int64_t none[1] = { -1 };

				for (int32_t d = 0; d < r; d++)
					sidx[d] = c->py[0] >= 0 ? idx[c->py[d]] : idx[d];
				double got = at(y, none, r, sidx);

				worst = fabs(got - acc) > worst ? fabs(got - acc) : worst;
			}
		}
	}
	free(row);
	return worst;
}

static double max_abs(const struct ert_value *a, const struct ert_value *b)
{
	double w = 0;

	if (a->numel != b->numel)
		return INFINITY;
	for (int64_t i = 0; i < a->numel; i++) {
		double d = fabs((double)((const float *)a->data)[i] - ((const float *)b->data)[i]);

		if (isnan(d))
			return INFINITY;
		w = d > w ? d : w;
	}
	return w;
}

ERT_TEST(fused_matches_unfused_every_level)
{
	struct ert_threadpool *pool = ert_threadpool_create(2);
	enum ert_cpu_isa best = ert_cpu_isa_best();

	CHECK(pool != NULL);
	for (size_t ci = 0; ci < sizeof(cases) / sizeof(cases[0]); ci++) {
		const struct attn_case *c = &cases[ci];
		struct ert_value in[3];
		float *buf[3];
		const int64_t *dims[3] = { c->q, c->k, c->v };

		for (int i = 0; i < 3; i++) {
			int64_t n = numel(c->r, dims[i]);

			buf[i] = malloc((size_t)n * sizeof(float));
			fill(buf[i], n, 77u + (uint32_t)(ci * 3 + i));
			in[i] = mkf32(c->r, dims[i], buf[i]);
		}
		for (int isa = ERT_ISA_SCALAR; isa <= (int)best && isa <= ERT_ISA_AVX512; isa++) {
			for (int th = 0; th < 2; th++) {
				struct ert_value yf = { 0 }, yu = { 0 };
				struct ert_err err = { "" };
				struct ert_threadpool *p = th ? pool : NULL;

				CHECK_EQ_INT(fused(c, (enum ert_cpu_isa)isa, p, in, &yf, &err), ERT_OK);
				if (err.msg[0])
					fprintf(stderr, "%s\n", err.msg);
				CHECK(unfused(c, (enum ert_cpu_isa)isa, p, in, &yu));
				if (yf.data && yu.data) {
					double du = max_abs(&yf, &yu), dr = ref_diff(c, in, &yf);

					/* a Mul by the scale: the same bits; a Div: 1 / c rounded once */
					CHECK(du <= (c->div ? 1e-6 : 0.0));
					CHECK(dr <= 2e-5);
					if (th == 0)
						printf("# %-40s %-6s fused-unfused %.3g, fused-double %.3g\n",
						       c->what, ert_cpu_isa_name((enum ert_cpu_isa)isa), du, dr);
				}
				free(yf.data);
				free(yu.data);
			}
		}
		for (int i = 0; i < 3; i++)
			free(buf[i]);
	}
	ert_threadpool_destroy(pool);
}

/*
 * Precision LOW at the best level: bf16 products in both forms where the CPU
 * has a bf16 kernel (Sapphire Rapids), fp32 elsewhere (then the same bits).
 */
ERT_TEST(fused_matches_unfused_low_precision)
{
	enum ert_cpu_isa best = ert_cpu_isa_best();
	bool bf16 = ert_sbgemm_kernel_for(best) != NULL;

	precision = ERT_LEVEL_LOW;
	for (size_t ci = 0; ci < sizeof(cases) / sizeof(cases[0]); ci++) {
		const struct attn_case *c = &cases[ci];
		struct ert_value in[3], yf = { 0 }, yu = { 0 };
		struct ert_err err = { "" };
		float *buf[3];
		const int64_t *dims[3] = { c->q, c->k, c->v };

		for (int i = 0; i < 3; i++) {
			int64_t n = numel(c->r, dims[i]);

			buf[i] = malloc((size_t)n * sizeof(float));
			fill(buf[i], n, 91u + (uint32_t)(ci * 3 + i));
			in[i] = mkf32(c->r, dims[i], buf[i]);
		}
		CHECK_EQ_INT(fused(c, best, NULL, in, &yf, &err), ERT_OK);
		CHECK(unfused(c, best, NULL, in, &yu));
		if (yf.data && yu.data) {
			double du = max_abs(&yf, &yu), dr = ref_diff(c, in, &yf);

			/* bf16 operands: about 3 significant digits; same products both ways */
			CHECK(du <= (bf16 ? 1e-3 : c->div ? 1e-6 : 0.0));
			CHECK(dr <= (bf16 ? 2e-2 : 2e-5));
			printf("# low %-36s %-6s %s fused-unfused %.3g, fused-double %.3g\n", c->what,
			       ert_cpu_isa_name(best), bf16 ? "bf16" : "fp32", du, dr);
		}
		free(yf.data);
		free(yu.data);
		for (int i = 0; i < 3; i++)
			free(buf[i]);
	}
	precision = ERT_LEVEL_NORMAL;
}

ERT_TEST(bad_shapes_refused)
{
	struct ert_node *n;
	struct ert_graph *g = one_graph(ERT_OP_FusedAttention, 20, 3, 1, &n);
	float z[64] = { 0 };
	struct ert_value in[3], y = { 0 };
	struct ert_err err = { "" };

	in[0] = mkf32(3, (int64_t[]){ 2, 3, 4 }, z);
	in[1] = mkf32(3, (int64_t[]){ 1, 4, 5 }, z);  /* batch 1 against 2: no broadcasting */
	in[2] = mkf32(3, (int64_t[]){ 2, 5, 2 }, z);
	CHECK_EQ_INT(eval(g, n, ERT_ISA_SCALAR, NULL, (const struct ert_value *[]){ &in[0], &in[1], &in[2] },
			  3, &y, &err), ERT_STATUS_SHAPE);
	CHECK(strstr(err.msg, "batch dim 0") != NULL);
	in[1] = mkf32(3, (int64_t[]){ 2, 3, 5 }, z);  /* D 4 against 3 */
	CHECK_EQ_INT(eval(g, n, ERT_ISA_SCALAR, NULL, (const struct ert_value *[]){ &in[0], &in[1], &in[2] },
			  3, &y, &err), ERT_STATUS_SHAPE);
	CHECK(strstr(err.msg, "do not chain") != NULL);
	ert_node_set_attr_ints(g, n, "perm_y", (int64_t[]){ 0, 2, 1 }, 3);
	in[1] = mkf32(3, (int64_t[]){ 2, 4, 5 }, z);
	CHECK_EQ_INT(eval(g, n, ERT_ISA_SCALAR, NULL, (const struct ert_value *[]){ &in[0], &in[1], &in[2] },
			  3, &y, &err), ERT_STATUS_INVALID_MODEL);
	CHECK(strstr(err.msg, "keeps the last one last") != NULL);
	free(y.data);
	ert_graph_destroy(g);
}

/*
 * A ViT attention as the zoo builds it: q, k, v [1, T, H, D] views, the
 * MatMuls' folded Transposes, Mul by 1/sqrt(D), Softmax(-1), the merge
 * Transpose folded into the second MatMul. @variant: 0 as is, 1 the scores
 * also a graph output, 2 Softmax on axis 2, 3 a Div, 4 a scale of 2 elements.
 */
static struct ert_graph *vit_attention(int variant, int32_t *y_out)
{
	struct ert_graph *g = ert_graph_create();
	int64_t d4[4] = { 1, 9, 2, 8 }, one = 1, two = 2;
	int32_t q = ert_graph_add_tensor(g, "q", ERT_DTYPE_FLOAT32, 4, d4);
	int32_t k = ert_graph_add_tensor(g, "k", ERT_DTYPE_FLOAT32, 4, d4);
	int32_t v = ert_graph_add_tensor(g, "v", ERT_DTYPE_FLOAT32, 4, d4);
	int32_t s = ert_graph_add_tensor(g, "s", ERT_DTYPE_FLOAT32, -1, NULL);
	int32_t s2 = ert_graph_add_tensor(g, "s2", ERT_DTYPE_FLOAT32, -1, NULL);
	int32_t p = ert_graph_add_tensor(g, "p", ERT_DTYPE_FLOAT32, -1, NULL);
	int32_t y = ert_graph_add_tensor(g, "y", ERT_DTYPE_FLOAT32, -1, NULL);
	float *c = malloc(2 * sizeof(float));
	int32_t ct, ni;

	c[0] = c[1] = variant == 3 ? 2.828427f : 0.35355339f;
	ct = ert_opt_add_const(g, "scale", ERT_DTYPE_FLOAT32, variant == 4 ? 1 : 0,
			       variant == 4 ? &two : &one, c, (variant == 4 ? 2 : 1) * sizeof(float));
	ert_graph_add_input(g, q);
	ert_graph_add_input(g, k);
	ert_graph_add_input(g, v);
	ni = ert_graph_add_node(g, ERT_OP_MatMul, "qk", 2, (int32_t[]){ q, k }, 1, &s);
	ert_node_set_attr_ints(g, &g->nodes[ni], "ert.perm_a", (int64_t[]){ 0, 2, 1, 3 }, 4);
	ert_node_set_attr_ints(g, &g->nodes[ni], "ert.perm_b", (int64_t[]){ 0, 2, 3, 1 }, 4);
	ni = ert_graph_add_node(g, variant == 3 ? ERT_OP_Div : ERT_OP_Mul, "scale", 2,
				(int32_t[]){ s, ct }, 1, &s2);
	ni = ert_graph_add_node(g, ERT_OP_Softmax, "softmax", 1, &s2, 1, &p);
	ert_node_set_attr_int(g, &g->nodes[ni], "axis", variant == 2 ? 2 : -1);
	ni = ert_graph_add_node(g, ERT_OP_MatMul, "pv", 2, (int32_t[]){ p, v }, 1, &y);
	ert_node_set_attr_ints(g, &g->nodes[ni], "ert.perm_b", (int64_t[]){ 0, 2, 1, 3 }, 4);
	ert_node_set_attr_ints(g, &g->nodes[ni], "ert.perm_y", (int64_t[]){ 0, 2, 1, 3 }, 4);
	for (uint32_t i = 0; i < g->n_nodes; i++)
		g->nodes[i].opset = 20;
	ert_graph_add_output(g, y);
	if (variant == 1)
		ert_graph_add_output(g, s);
	*y_out = y;
	return g;
}

ERT_TEST(pass_fuses_vit_attention)
{
	struct ert_err err = { "" };
	int32_t y;
	struct ert_graph *g;

	setenv("ERT_FUSE_ATTENTION", "1", 1);
	for (int variant = 0; variant <= 4; variant++) {
		bool want = variant == 0 || variant == 3;

		g = vit_attention(variant, &y);
		CHECK_EQ_INT(ert_graph_optimize(g, &err), ERT_OK);
		CHECK_EQ_INT(graph_count_op(g, ERT_OP_FusedAttention), want ? 1 : 0);
		CHECK_EQ_INT(graph_count_op(g, ERT_OP_MatMul), want ? 0 : 2);
		for (uint32_t i = 0; want && i < g->n_nodes; i++) {
			const struct ert_node *n = &g->nodes[i];
			uint32_t cnt = 0;
			const int64_t *pq;

			if (n->op != ERT_OP_FusedAttention)
				continue;
			pq = ert_attr_ints(n, "perm_kt", &cnt);
			CHECK(pq && cnt == 4 && pq[2] == 3 && pq[3] == 1);
			CHECK(ert_node_attr(n, "perm_q") && ert_node_attr(n, "perm_v") &&
			      ert_node_attr(n, "perm_y"));
			CHECK(fabsf(ert_attr_float(n, "scale", 0) - 0.35355339f) < 1e-6f);
			CHECK(strcmp(g->tensors[n->outputs[0]].name, "y") == 0);
			/* the quantizer's unfusing: the four ops again, then perms as Transposes */
			CHECK_EQ_INT(ert_opt_unfuse_activations(g, &err), ERT_OK);
			if (err.msg[0])
				fprintf(stderr, "%s\n", err.msg);
			CHECK_EQ_INT(graph_count_op(g, ERT_OP_FusedAttention), 0);
			CHECK_EQ_INT(graph_count_op(g, ERT_OP_MatMul), 2);
			CHECK_EQ_INT(graph_count_op(g, ERT_OP_Mul), 1);
			CHECK_EQ_INT(graph_count_op(g, ERT_OP_Softmax), 1);
			CHECK_EQ_INT(graph_count_op(g, ERT_OP_Transpose), 4);
			/* and the optimiser fuses it again */
			CHECK_EQ_INT(ert_graph_optimize(g, &err), ERT_OK);
			CHECK_EQ_INT(graph_count_op(g, ERT_OP_FusedAttention), 1);
			break;
		}
		ert_graph_destroy(g);
	}
	/* the switch */
	setenv("ERT_FUSE_ATTENTION", "0", 1);
	g = vit_attention(0, &y);
	CHECK_EQ_INT(ert_graph_optimize(g, &err), ERT_OK);
	CHECK_EQ_INT(graph_count_op(g, ERT_OP_FusedAttention), 0);
	CHECK_EQ_INT(graph_count_op(g, ERT_OP_Softmax), 1);
	ert_graph_destroy(g);
	setenv("ERT_FUSE_ATTENTION", "1", 1);
	g = vit_attention(0, &y);
	CHECK_EQ_INT(ert_graph_optimize(g, &err), ERT_OK);
	CHECK_EQ_INT(graph_count_op(g, ERT_OP_FusedAttention), 1);
	ert_graph_destroy(g);
	/* off by default (opt-private.h: 2-3 % on Sapphire Rapids does not pay for GPU runs) */
	unsetenv("ERT_FUSE_ATTENTION");
	g = vit_attention(0, &y);
	CHECK_EQ_INT(ert_graph_optimize(g, &err), ERT_OK);
	CHECK_EQ_INT(graph_count_op(g, ERT_OP_FusedAttention), ERT_OPT_ATTENTION_DEFAULT ? 1 : 0);
	ert_graph_destroy(g);
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(fused_matches_unfused_every_level),
	      ERT_TEST_ENTRY(fused_matches_unfused_low_precision), ERT_TEST_ENTRY(bad_shapes_refused),
	      ERT_TEST_ENTRY(pass_fuses_vit_attention))
