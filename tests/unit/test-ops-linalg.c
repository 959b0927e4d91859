/* SPDX-License-Identifier: MIT */
/*
 * Conv, ConvTranspose, Gemm, MatMul and Einsum on the CPU backend against
 * naive reference loops written here, over shapes that hit every path
 * (pointwise, implicit im2col, grouped, depthwise, edge tiles, batching).
 */
#include <stdlib.h>

#include "cpu/gemm/sgemm.h"
#include "ert-op-test.h"
#include "ert-test.h"

static uint32_t rng = 12345;

static float *rand_buf(int64_t n)
{
	float *p = malloc((size_t)(n ? n : 1) * sizeof(float));

	for (int64_t i = 0; i < n; i++)
		p[i] = frand_r(&rng);
	return p;
}

static double max_diff(const float *a, const float *b, int64_t n)
{
	double m = 0;

	for (int64_t i = 0; i < n; i++) {
		double d = fabs((double)a[i] - b[i]);

		if (d > m || d != d)
			m = d != d ? 1e30 : d;
	}
	return m;
}

struct conv_case {
	int nsp;
	int64_t n, c, m, group, in[3], k[3], s[3], d[3], pb[3], pe[3];
	bool bias;
	int act;
};

/* Reference Conv over explicit pads; returns the output (caller frees). */
static float *ref_conv(const struct conv_case *cc, const float *x, const float *w, const float *b,
		       int64_t *out)
{
	int64_t in[3] = { 1, 1, 1 }, k[3] = { 1, 1, 1 }, s[3] = { 1, 1, 1 }, d[3] = { 1, 1, 1 };
	int64_t pb[3] = { 0 }, o[3];
	int off = 3 - cc->nsp;

	for (int i = 0; i < cc->nsp; i++) {
		in[off + i] = cc->in[i];
		k[off + i] = cc->k[i];
		s[off + i] = cc->s[i];
		d[off + i] = cc->d[i];
		pb[off + i] = cc->pb[i];
	}
	for (int i = 0; i < 3; i++) {
		int64_t pe = i >= off ? cc->pe[i - off] : 0;

		o[i] = (in[i] + pb[i] + pe - (k[i] - 1) * d[i] - 1) / s[i] + 1;
	}
	for (int i = 0; i < cc->nsp; i++)
		out[i] = o[off + i];
	int64_t cg = cc->c / cc->group, mg = cc->m / cc->group;
	float *y = calloc((size_t)(cc->n * cc->m * o[0] * o[1] * o[2]), sizeof(float));

	for (int64_t n = 0; n < cc->n; n++)
		for (int64_t m = 0; m < cc->m; m++)
			for (int64_t z = 0; z < o[0]; z++)
				for (int64_t yy = 0; yy < o[1]; yy++)
					for (int64_t xx = 0; xx < o[2]; xx++) {
						double acc = b ? b[m] : 0;

						for (int64_t ci = 0; ci < cg; ci++)
							for (int64_t a = 0; a < k[0]; a++)
								for (int64_t bb = 0; bb < k[1]; bb++)
									for (int64_t c = 0; c < k[2]; c++) {
										int64_t iz = z * s[0] - pb[0] + a * d[0];
										int64_t iy = yy * s[1] - pb[1] + bb * d[1];
										int64_t ix = xx * s[2] - pb[2] + c * d[2];

										if (iz < 0 || iz >= in[0] || iy < 0 || iy >= in[1] || ix < 0 || ix >= in[2])
											continue;
										acc += (double)x[(((n * cc->c + (m / mg) * cg + ci) * in[0] + iz) * in[1] + iy) * in[2] + ix] *
										       w[(((m * cg + ci) * k[0] + a) * k[1] + bb) * k[2] + c];
									}
						if (cc->act == ERT_ACT_RELU && acc < 0)
							acc = 0;
						y[(((n * cc->m + m) * o[0] + z) * o[1] + yy) * o[2] + xx] = (float)acc;
					}
	return y;
}

static void run_conv_case(int *ert_test_failed_, const struct conv_case *cc)
{
	struct ert_node *node;
	struct ert_graph *g = one_graph(ERT_OP_Conv, 0, cc->bias ? 3 : 2, 1, &node);
	int64_t xd[5] = { cc->n, cc->c }, wd[5] = { cc->m, cc->c / cc->group }, od[3];
	int64_t pads[6];
	struct ert_value out;
	struct ert_err err;

	for (int i = 0; i < cc->nsp; i++) {
		xd[2 + i] = cc->in[i];
		wd[2 + i] = cc->k[i];
		pads[i] = cc->pb[i];
		pads[cc->nsp + i] = cc->pe[i];
	}
	ert_node_set_attr_ints(g, node, "strides", cc->s, (uint32_t)cc->nsp);
	ert_node_set_attr_ints(g, node, "dilations", cc->d, (uint32_t)cc->nsp);
	ert_node_set_attr_ints(g, node, "pads", pads, (uint32_t)(2 * cc->nsp));
	ert_node_set_attr_int(g, node, "group", cc->group);
	if (cc->act)
		ert_node_set_attr_int(g, node, "ert.act", cc->act);
	struct ert_value xv = mkf32(cc->nsp + 2, xd, rand_buf(ert_shape_numel(cc->nsp + 2, xd)));
	struct ert_value wv = mkf32(cc->nsp + 2, wd, rand_buf(ert_shape_numel(cc->nsp + 2, wd)));
	struct ert_value bv = mkf32(1, &cc->m, rand_buf(cc->m));
	const struct ert_value *in[3] = { &xv, &wv, &bv };
	float *ref = ref_conv(cc, xv.data, wv.data, cc->bias ? bv.data : NULL, od);

	CHECK_EQ_INT(ert_cpu_eval_node(g, node, in, cc->bias ? 3 : 2, &out, 1, &err), ERT_OK);
	if (out.data) {
		CHECK_EQ_INT(out.dims[1], cc->m);
		for (int i = 0; i < cc->nsp; i++)
			CHECK_EQ_INT(out.dims[2 + i], od[i]);
		CHECK_NEAR(max_diff(out.data, ref, out.numel), 0, 1e-4);
	} else {
		fprintf(stderr, "conv failed: %s\n", err.msg);
	}
	free(out.data);
	free(ref);
	free(xv.data);
	free(wv.data);
	free(bv.data);
	ert_graph_destroy(g);
}

ERT_TEST(conv_paths)
{
	static const struct conv_case cases[] = {
		/* pointwise (GEMM on the image), edge tiles in M and N */
		{ 2, 2, 13, 37, 1, { 9, 7 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 0 }, { 0 }, true, 0 },
		/* 3x3 pad 1, im2col, relu */
		{ 2, 1, 5, 11, 1, { 10, 12 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, true, 1 },
		/* strided, dilated, asymmetric pads */
		{ 2, 2, 4, 6, 1, { 11, 9 }, { 3, 2 }, { 2, 3 }, { 2, 1 }, { 1, 0 }, { 2, 1 }, false, 0 },
		/* stride 2 over wide rows: strided gathers without bounds checks */
		{ 2, 1, 3, 5, 1, { 9, 40 }, { 3, 3 }, { 2, 2 }, { 1, 2 }, { 1, 1 }, { 1, 2 }, true, 0 },
		/* grouped */
		{ 2, 1, 8, 12, 4, { 7, 7 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, true, 0 },
		/* depthwise, stride 2, and with a channel multiplier */
		{ 2, 2, 6, 6, 6, { 9, 8 }, { 3, 3 }, { 2, 2 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, true, 1 },
		{ 2, 1, 3, 6, 3, { 6, 6 }, { 5, 5 }, { 1, 1 }, { 2, 1 }, { 4, 2 }, { 4, 2 }, true, 0 },
		/* depthwise 3-tap rows: fused interior plus per-tap edges, dilated, narrow */
		{ 2, 1, 4, 4, 4, { 7, 17 }, { 3, 3 }, { 1, 1 }, { 1, 2 }, { 1, 2 }, { 1, 1 }, true, 0 },
		{ 2, 1, 2, 2, 2, { 5, 3 }, { 3, 3 }, { 2, 2 }, { 1, 3 }, { 1, 3 }, { 1, 3 }, false, 0 },
		/* 1-D and 3-D */
		{ 1, 2, 3, 5, 1, { 17 }, { 4 }, { 2 }, { 1 }, { 2 }, { 1 }, true, 0 },
		{ 3, 1, 2, 3, 1, { 5, 6, 4 }, { 3, 3, 2 }, { 1, 2, 1 }, { 1, 1, 2 }, { 1, 1, 0 },
		  { 1, 0, 1 }, true, 0 },
		/* deep K (several KC blocks) and wide N (several NC tiles) */
		{ 2, 1, 40, 9, 1, { 20, 21 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, true, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_conv_case(ert_test_failed_, &cases[i]);
}

/* Reference C = alpha * op(A) op(B) + beta * C. */
ERT_TEST(gemm_variants)
{
	for (int variant = 0; variant < 8; variant++) {
		int ta = variant & 1, tb = (variant >> 1) & 1, crank = variant >> 2 ? 1 : 2;
		int64_t m = 7 + variant * 5, n = 9 + variant * 3, k = 300 - variant * 30;
		int64_t ad[2] = { ta ? k : m, ta ? m : k }, bd[2] = { tb ? n : k, tb ? k : n };
		int64_t cd[2] = { crank == 2 ? m : n, n };
		struct ert_node *node;
		struct ert_graph *g = one_graph(ERT_OP_Gemm, 0, 3, 1, &node);
		struct ert_value av = mkf32(2, ad, rand_buf(m * k));
		struct ert_value bv = mkf32(2, bd, rand_buf(k * n));
		struct ert_value cv = mkf32(crank, cd, rand_buf(crank == 2 ? m * n : n));
		const struct ert_value *in[3] = { &av, &bv, &cv };
		struct ert_value out;
		struct ert_err err;
		float *a = av.data, *b = bv.data, *c = cv.data;

		ert_node_set_attr_int(g, node, "transA", ta);
		ert_node_set_attr_int(g, node, "transB", tb);
		ert_node_set_attr_float(g, node, "alpha", 0.5f);
		ert_node_set_attr_float(g, node, "beta", 2.0f);
		CHECK_EQ_INT(ert_cpu_eval_node(g, node, in, 3, &out, 1, &err), ERT_OK);
		for (int64_t i = 0; out.data && i < m; i++)
			for (int64_t j = 0; j < n; j++) {
				double acc = 0;

				for (int64_t p = 0; p < k; p++)
					acc += (double)a[ta ? p * m + i : i * k + p] *
					       b[tb ? j * k + p : p * n + j];
				acc = 0.5 * acc + 2.0 * c[crank == 2 ? i * n + j : j];
				CHECK_NEAR(((float *)out.data)[i * n + j], acc, 1e-3);
			}
		free(out.data);
		free(a);
		free(b);
		free(c);
		ert_graph_destroy(g);
	}
}

ERT_TEST(matmul_broadcast)
{
	/* (2,1,5,33) x (3,33,6) -> (2,3,5,6); (4,5,7) x (7) -> (4,5); (7) x (3,7,2) */
	static const struct { int32_t ra, rb; int64_t a[4], b[4]; } cases[] = {
		{ 4, 3, { 2, 1, 5, 33 }, { 3, 33, 6 } },
		{ 3, 1, { 4, 5, 7 }, { 7 } },
		{ 1, 3, { 7 }, { 3, 7, 2 } },
		{ 3, 2, { 3, 70, 20 }, { 20, 300 } },
	};

	for (size_t t = 0; t < sizeof(cases) / sizeof(cases[0]); t++) {
		struct ert_node *node;
		struct ert_graph *g = one_graph(ERT_OP_MatMul, 0, 2, 1, &node);
		int64_t na = ert_shape_numel(cases[t].ra, cases[t].a);
		int64_t nb = ert_shape_numel(cases[t].rb, cases[t].b);
		struct ert_value av = mkf32(cases[t].ra, cases[t].a, rand_buf(na));
		struct ert_value bv = mkf32(cases[t].rb, cases[t].b, rand_buf(nb));
		const struct ert_value *in[2] = { &av, &bv };
		struct ert_value out;
		struct ert_err err;

		REQUIRE(ert_cpu_eval_node(g, node, in, 2, &out, 1, &err) == ERT_OK);
		/* Reference through numpy-style index arithmetic on padded 4-D shapes. */
		int64_t A[4] = { 1, 1, 1, 1 }, B[4] = { 1, 1, 1, 1 };
		bool avec = cases[t].ra == 1, bvec = cases[t].rb == 1;

		for (int i = 0; i < cases[t].ra; i++)
			A[4 - cases[t].ra + i - (avec ? 1 : 0)] = cases[t].a[i];
		if (avec)
			A[3] = cases[t].a[0], A[2] = 1;
		for (int i = 0; i < cases[t].rb; i++)
			B[4 - cases[t].rb + i] = cases[t].b[i];
		if (bvec)
			B[2] = cases[t].b[0], B[3] = 1;
		int64_t k = A[3], m = A[2], n = B[3], o = 0;
		double worst = 0;

		for (int64_t i0 = 0; i0 < (A[0] > B[0] ? A[0] : B[0]); i0++)
			for (int64_t i1 = 0; i1 < (A[1] > B[1] ? A[1] : B[1]); i1++)
				for (int64_t i = 0; i < m; i++)
					for (int64_t j = 0; j < n; j++, o++) {
						double acc = 0;

						for (int64_t p = 0; p < k; p++)
							acc += (double)((float *)av.data)[(((A[0] > 1 ? i0 : 0) * A[1] + (A[1] > 1 ? i1 : 0)) * m + i) * k + p] *
							       ((float *)bv.data)[(((B[0] > 1 ? i0 : 0) * B[1] + (B[1] > 1 ? i1 : 0)) * k + p) * n + j];
						double dd = fabs(acc - ((float *)out.data)[o]);

						worst = dd > worst ? dd : worst;
					}
		CHECK_EQ_INT(o, out.numel);
		CHECK_NEAR(worst, 0, 1e-4);
		free(out.data);
		free(av.data);
		free(bv.data);
		ert_graph_destroy(g);
	}
}

/*
 * The SGEMM driver on a real pool: lanes, tiles and batches agree with one
 * thread, bit for bit (a tile is computed by one thread whichever takes
 * it). Shapes with more column tiles than lanes (each lane's home is a
 * run of columns), fewer (home runs of tiles), and several problems.
 */
ERT_TEST(sgemm_threads)
{
	static const int64_t shapes[][4] = {
		/* m, n, k, batch */
		{ 150, 530, 600, 1 }, { 40, 20, 33, 1 }, { 97, 300, 64, 3 }, { 300, 7, 130, 2 },
	};
	struct ert_threadpool *pool = ert_threadpool_create(3);

	REQUIRE(pool);
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		int64_t m = shapes[s][0], n = shapes[s][1], k = shapes[s][2], nb = shapes[s][3];
		float *a = rand_buf(nb * m * k), *b = rand_buf(nb * k * n);
		float *c1 = malloc(sizeof(float) * nb * m * n), *c3 = malloc(sizeof(float) * nb * m * n);
		size_t ws = ert_sgemm_workspace(3, m, n, k);
		void *w = malloc(ws);
		int64_t a_off[3], b_off[3], c_off[3];
		struct ert_sgemm_desc d = {
			.m = m, .n = n, .k = k, .batch = nb, .a = a, .a_rs = k, .a_cs = 1,
			.b = b, .b_rs = n, .b_cs = 1, .c = c1, .ldc = n, .alpha = 1.0f,
			.a_off = a_off, .b_off = b_off, .c_off = c_off,
		};

		REQUIRE(a && b && c1 && c3 && w);
		for (int64_t i = 0; i < nb; i++) {
			a_off[i] = i * m * k;
			b_off[i] = i * k * n;
			c_off[i] = i * m * n;
		}
		ert_sgemm_run(NULL, 1, &d, w, ws);
		d.c = c3;
		ert_sgemm_run(pool, 3, &d, w, ws);
		CHECK_NEAR(max_diff(c1, c3, nb * m * n), 0, 0);

		int64_t bi = nb - 1, i = m * 3 / 4, j = n * 2 / 3;
		double acc = 0;

		for (int64_t p = 0; p < k; p++)
			acc += (double)a[a_off[bi] + i * k + p] * b[b_off[bi] + p * n + j];
		CHECK_NEAR(c1[c_off[bi] + i * n + j], acc, 1e-3);
		free(a);
		free(b);
		free(c1);
		free(c3);
		free(w);
	}
	ert_threadpool_destroy(pool);
}

ERT_TEST(einsum_forms)
{
	static const struct { const char *eq; uint32_t n; int32_t r[2]; int64_t d[2][3]; int32_t orank; int64_t od[3]; } cases[] = {
		{ "bij,bjk->bik", 2, { 3, 3 }, { { 2, 3, 4 }, { 2, 4, 5 } }, 3, { 2, 3, 5 } },
		{ "ij->ji", 1, { 2 }, { { 3, 4 } }, 2, { 4, 3 } },
		{ "i,i", 2, { 1, 1 }, { { 5 }, { 5 } }, 0, { 0 } },
		{ "...ii->...i", 1, { 3 }, { { 2, 3, 3 } }, 2, { 2, 3 } },
		{ "ij->i", 1, { 2 }, { { 3, 4 } }, 1, { 3 } },
	};

	for (size_t t = 0; t < sizeof(cases) / sizeof(cases[0]); t++) {
		struct ert_node *node;
		struct ert_graph *g = one_graph(ERT_OP_Einsum, 0, cases[t].n, 1, &node);
		struct ert_value v[2];
		const struct ert_value *in[2];
		struct ert_value out;
		struct ert_err err;
		struct ert_attr *at = ert_node_add_attr(g, node, "equation", ERT_ATTR_STRING);

		at->s = cases[t].eq;
		at->len = (uint32_t)strlen(cases[t].eq);
		for (uint32_t i = 0; i < cases[t].n; i++) {
			v[i] = mkf32(cases[t].r[i], cases[t].d[i],
				     rand_buf(ert_shape_numel(cases[t].r[i], cases[t].d[i])));
			in[i] = &v[i];
		}
		CHECK_EQ_INT(ert_cpu_eval_node(g, node, in, cases[t].n, &out, 1, &err), ERT_OK);
		CHECK_EQ_INT(out.rank, cases[t].orank);
		for (int32_t i = 0; i < out.rank && i < cases[t].orank; i++)
			CHECK_EQ_INT(out.dims[i], cases[t].od[i]);
		float *y = out.data, *a = v[0].data, *b = cases[t].n > 1 ? v[1].data : NULL;

		if (y && t == 0) {
			double acc = 0;

			for (int j = 0; j < 4; j++)
				acc += (double)a[(1 * 3 + 2) * 4 + j] * b[(1 * 4 + j) * 5 + 3];
			CHECK_NEAR(y[(1 * 3 + 2) * 5 + 3], acc, 1e-5);
		} else if (y && t == 1) {
			CHECK_NEAR(y[2 * 3 + 1], a[1 * 4 + 2], 0);
		} else if (y && t == 2) {
			double acc = 0;

			for (int j = 0; j < 5; j++)
				acc += (double)a[j] * b[j];
			CHECK_NEAR(y[0], acc, 1e-5);
		} else if (y && t == 3) {
			CHECK_NEAR(y[1 * 3 + 2], a[(1 * 3 + 2) * 3 + 2], 0);
		} else if (y && t == 4) {
			CHECK_NEAR(y[1], a[4] + a[5] + a[6] + a[7], 1e-5);
		}
		free(out.data);
		for (uint32_t i = 0; i < cases[t].n; i++)
			free(v[i].data);
		ert_graph_destroy(g);
	}
}

/* Matmul-shaped Einsums (SGEMM path, float32) agree with the general path (float64). */
ERT_TEST(einsum_gemm_matches_general)
{
	static const struct { const char *eq; int32_t r[2]; int64_t d[2][4]; } cases[] = {
		{ "bhqd,bhkd->bhqk", { 4, 4 }, { { 2, 3, 7, 16 }, { 2, 3, 9, 16 } } },
		{ "bji,bjk->bki", { 3, 3 }, { { 2, 5, 6 }, { 2, 5, 4 } } },
		{ "ik,jkl->ijl", { 2, 3 }, { { 3, 5 }, { 4, 5, 6 } } },
		{ "ij,jk", { 2, 2 }, { { 13, 70 }, { 70, 11 } } },
	};

	for (size_t t = 0; t < sizeof(cases) / sizeof(cases[0]); t++) {
		struct ert_node *node;
		struct ert_graph *g = one_graph(ERT_OP_Einsum, 0, 2, 1, &node);
		struct ert_attr *at = ert_node_add_attr(g, node, "equation", ERT_ATTR_STRING);
		struct ert_value v[2], vd[2], out, outd;
		const struct ert_value *in[2] = { &v[0], &v[1] }, *ind[2] = { &vd[0], &vd[1] };
		struct ert_err err;

		at->s = cases[t].eq;
		at->len = (uint32_t)strlen(cases[t].eq);
		for (int i = 0; i < 2; i++) {
			int64_t n = ert_shape_numel(cases[t].r[i], cases[t].d[i]);
			double *dd = malloc(sizeof(double) * (size_t)n);

			v[i] = mkf32(cases[t].r[i], cases[t].d[i], rand_buf(n));
			for (int64_t j = 0; j < n; j++)
				dd[j] = ((float *)v[i].data)[j];
			vd[i] = v[i];
			vd[i].dtype = ERT_DTYPE_FLOAT64;
			ert_value_finish(&vd[i]);
			vd[i].data = dd;
		}
		REQUIRE(ert_cpu_eval_node(g, node, in, 2, &out, 1, &err) == ERT_OK);
		REQUIRE(ert_cpu_eval_node(g, node, ind, 2, &outd, 1, &err) == ERT_OK);
		CHECK_EQ_INT(out.numel, outd.numel);
		double worst = 0;

		for (int64_t i = 0; i < out.numel; i++) {
			double dlt = fabs(((float *)out.data)[i] - ((double *)outd.data)[i]);

			worst = dlt > worst ? dlt : worst;
		}
		CHECK_NEAR(worst, 0, 1e-4);
		free(out.data);
		free(outd.data);
		for (int i = 0; i < 2; i++) {
			free(v[i].data);
			free(vd[i].data);
		}
		ert_graph_destroy(g);
	}
}

/*
 * Recompute @node's output with no input marked constant (no prepacked
 * weights) on a 2-thread pool and compare with eval_node's result @ref.
 */
static double recompute_unpacked(const struct ert_graph *g, const struct ert_node *node,
				 const struct ert_value *const *in, uint32_t n_in,
				 const struct ert_value *ref)
{
	const struct ert_cpu_op *k = ert_cpu_op_find(node->op);
	struct ert_value *inp[4], y = *ref, *outp[1] = { &y };
	bool cst[4] = { false, false, false, false };
	struct ert_cpu cpu = { .pool = ert_threadpool_create(2), .num_threads = 2 };
	struct ert_exec x = { .graph = g, .node = node, .in = inp, .out = outp, .n_in = n_in,
			      .n_out = 1, .in_const = cst };
	struct ert_err err;
	double diff = 1e30;

	/* the kernel level ert_cpu_eval_node() runs */
	if (ert_cpu_isa_choose(0, &cpu.isa, &err) != ERT_OK)
		cpu.isa = ERT_ISA_SCALAR;
	cpu.gemm = ert_sgemm_kernel_for(cpu.isa);
	for (uint32_t i = 0; i < n_in; i++)
		inp[i] = (struct ert_value *)in[i];
	y.data = malloc(ref->nbytes);
	x.workspace_size = k->workspace ? k->workspace(&cpu, &x) : 0;
	x.workspace = malloc(x.workspace_size + 1);
	if (k->prepare && k->prepare(&cpu, &x, &err) != ERT_OK)
		goto out;
	if (k->compute(&cpu, &x, &err) == ERT_OK)
		diff = max_diff(y.data, ref->data, ref->numel);
	if (k->release && x.state)
		k->release(&x);
out:
	free(x.workspace);
	free(y.data);
	ert_threadpool_destroy(cpu.pool);
	return diff;
}

ERT_TEST(runtime_weights_match_packed)
{
	/* Conv 3x3 grouped */
	struct ert_node *node;
	struct ert_graph *g = one_graph(ERT_OP_Conv, 0, 3, 1, &node);
	int64_t xd[4] = { 2, 6, 9, 10 }, wd[4] = { 9, 2, 3, 3 }, bd[1] = { 9 };
	int64_t pads[4] = { 1, 0, 1, 2 };
	struct ert_value xv = mkf32(4, xd, rand_buf(2 * 6 * 90)), wv = mkf32(4, wd, rand_buf(162));
	struct ert_value bv = mkf32(1, bd, rand_buf(9)), out;
	const struct ert_value *in[3] = { &xv, &wv, &bv };
	struct ert_err err;

	ert_node_set_attr_int(g, node, "group", 3);
	ert_node_set_attr_ints(g, node, "pads", pads, 4);
	REQUIRE(ert_cpu_eval_node(g, node, in, 3, &out, 1, &err) == ERT_OK);
	CHECK_NEAR(recompute_unpacked(g, node, in, 3, &out), 0, 0);
	free(out.data);
	ert_graph_destroy(g);

	/* MatMul (3, 50, 33) x (33, 70) folds the batch into M (150 rows: B is prepacked) */
	g = one_graph(ERT_OP_MatMul, 0, 2, 1, &node);
	int64_t ad[3] = { 3, 50, 33 }, bd2[2] = { 33, 70 };
	struct ert_value av = mkf32(3, ad, rand_buf(3 * 50 * 33)), b2 = mkf32(2, bd2, rand_buf(33 * 70));
	const struct ert_value *in2[2] = { &av, &b2 };

	REQUIRE(ert_cpu_eval_node(g, node, in2, 2, &out, 1, &err) == ERT_OK);
	CHECK_NEAR(recompute_unpacked(g, node, in2, 2, &out), 0, 0);
	free(out.data);
	ert_graph_destroy(g);

	/* Gemm transB with a vector C; 140 rows, so B is prepacked */
	g = one_graph(ERT_OP_Gemm, 0, 3, 1, &node);
	int64_t gd[2] = { 140, 300 }, hd[2] = { 20, 300 }, cd[1] = { 20 };
	struct ert_value gv = mkf32(2, gd, rand_buf(140 * 300)), hv = mkf32(2, hd, rand_buf(6000));
	struct ert_value cv = mkf32(1, cd, rand_buf(20));
	const struct ert_value *in3[3] = { &gv, &hv, &cv };

	ert_node_set_attr_int(g, node, "transB", 1);
	ert_node_set_attr_int(g, node, "ert.act", ERT_ACT_RELU);
	REQUIRE(ert_cpu_eval_node(g, node, in3, 3, &out, 1, &err) == ERT_OK);
	CHECK_NEAR(recompute_unpacked(g, node, in3, 3, &out), 0, 0);
	for (int64_t i = 0; i < out.numel; i++)
		CHECK(((float *)out.data)[i] >= 0.0f);
	free(out.data);
	ert_graph_destroy(g);
	free(xv.data);
	free(wv.data);
	free(bv.data);
	free(av.data);
	free(b2.data);
	free(gv.data);
	free(hv.data);
	free(cv.data);
}

ERT_TEST(bad_shapes_fail_cleanly)
{
	struct ert_node *node;
	struct ert_graph *g = one_graph(ERT_OP_Conv, 0, 2, 1, &node);
	int64_t xd[4] = { 1, 3, 5, 5 }, wd[4] = { 4, 2, 3, 3 };
	float buf[128] = { 0 };
	struct ert_value xv = mkf32(4, xd, buf), wv = mkf32(4, wd, buf);
	const struct ert_value *in[2] = { &xv, &wv };
	struct ert_value out;
	struct ert_err err;

	CHECK_EQ_INT(ert_cpu_eval_node(g, node, in, 2, &out, 1, &err), ERT_STATUS_SHAPE);
	CHECK(strstr(err.msg, "channels") != NULL);
	ert_graph_destroy(g);

	g = one_graph(ERT_OP_MatMul, 0, 2, 1, &node);
	int64_t ad[2] = { 2, 3 }, bd[2] = { 4, 2 };
	struct ert_value a2 = mkf32(2, ad, buf), b2 = mkf32(2, bd, buf);
	const struct ert_value *in2[2] = { &a2, &b2 };

	CHECK_EQ_INT(ert_cpu_eval_node(g, node, in2, 2, &out, 1, &err), ERT_STATUS_SHAPE);
	ert_graph_destroy(g);
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(conv_paths), ERT_TEST_ENTRY(gemm_variants),
	      ERT_TEST_ENTRY(matmul_broadcast), ERT_TEST_ENTRY(sgemm_threads),
	      ERT_TEST_ENTRY(einsum_forms), ERT_TEST_ENTRY(einsum_gemm_matches_general),
	      ERT_TEST_ENTRY(runtime_weights_match_packed),
	      ERT_TEST_ENTRY(bad_shapes_fail_cleanly))
