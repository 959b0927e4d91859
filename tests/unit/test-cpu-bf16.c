/* SPDX-License-Identifier: MIT */
/*
 * precision LOW on the CPU: Conv, Gemm and MatMul in bf16 with fp32 sums
 * where the CPU has AVX512_BF16, against the scalar fp32 reference, on
 * awkward shapes (M, N and K tails, odd K, K past the K block, 1x1 with
 * stride, groups, batch 2, fused activations and residual), with prepacked
 * and run-time weights, memory LOW, one and two threads.
 *
 * Tolerance: bf16 keeps 8 significant bits, so each rounded input is within
 * 2^-9 of its value and each product within about 2^-8; with fp32 sums, an
 * output may differ from the fp32 reference by at most 2^-8 * sum |a| |b|
 * over its products (the activations are 1-Lipschitz; bias, beta * C and the
 * residual are added in fp32). The test computes that sum per output (the
 * reference kernel on |inputs|) and holds every output to 1.01 times the
 * bound plus 1e-5 of it for the fp32 sums' order. It also checks that the
 * bf16 rounding is visible (the kernel did not quietly run fp32).
 *
 * Where the CPU lacks AVX512_BF16 (or a forced level is below avx512), LOW
 * must run the fp32 kernels: the same bits as NORMAL. NORMAL and HIGH never
 * name a bf16 kernel and give the same bits.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu-impl.h"
#include "cpu/gemm/sgemm.h"
#include "edgert.h"
#include "ert-op-test.h"
#include "ert-test.h"
#include "opt/opt-private.h"

/* the kernel expected at LOW: bf16 GEMM, Winograd (or bf16), depthwise, the fp32 stem */
enum expect { K_GEMM, K_WINO, K_DW, K_STEM };

/* Input @i of @rank x @dims: seeded values in [-1, 1), or their magnitudes. */
static void in_fill(struct one *o, uint32_t i, int32_t rank, const int64_t *dims, uint32_t *seed,
		    bool abs_val)
{
	struct ert_value *v = one_in_alloc(o, i, ERT_DTYPE_FLOAT32, rank, dims);
	float *p = v->data;

	for (int64_t k = 0; k < v->numel; k++) {
		p[k] = frand_r(seed);
		if (abs_val)
			p[k] = fabsf(p[k]);
	}
}

static void set_act(struct one *o, int act)
{
	float clip[2] = { -0.5f, 0.7f }, leaky[2] = { 0.1f, 0.0f };

	if (!act)
		return;
	ert_node_set_attr_int(o->g, o->n, "ert.act", act);
	if (act == ERT_ACT_CLIP)
		ert_opt_set_attr_floats(o->g, o->n, "ert.act_params", clip, 2);
	if (act == ERT_ACT_LEAKY_RELU)
		ert_opt_set_attr_floats(o->g, o->n, "ert.act_params", leaky, 2);
}

struct conv_case {
	const char *name;
	int64_t n, c, h, w, m, kh, kw, sh, sw;
	int64_t pad;       /* on every side */
	int64_t group;
	bool bias, res;
	int act;           /* ert_act: 0 none, 1 relu, 2 clip, 3 leaky relu */
	enum expect kind;
};

static const struct conv_case conv_cases[] = {
	{ "1x1 batch 2, odd channels", 2, 19, 7, 9, 13, 1, 1, 1, 1, 0, 1, true, false, 0, K_GEMM },
	{ "1x1 stride 2", 1, 16, 9, 11, 24, 1, 1, 2, 2, 0, 1, false, false, 1, K_GEMM },
	{ "3x3 pad 1, M tail", 1, 8, 14, 14, 70, 3, 3, 1, 1, 1, 1, true, false, 1, K_GEMM },
	{ "3x3 groups 3, batch 2", 2, 12, 9, 10, 15, 3, 3, 1, 1, 1, 3, true, false, 3, K_GEMM },
	{ "7x7 stride 2, odd K", 1, 3, 32, 32, 64, 7, 7, 2, 2, 3, 1, true, false, 1, K_GEMM },
	{ "odd K past the K block", 1, 29, 6, 7, 20, 3, 3, 1, 1, 1, 1, true, false, 2, K_GEMM },
	{ "1x1, K past the K block", 2, 300, 7, 15, 20, 1, 1, 1, 1, 0, 1, true, false, 1, K_GEMM },
	{ "1x1 + residual, ReLU", 2, 24, 7, 9, 40, 1, 1, 1, 1, 0, 1, true, true, 1, K_GEMM },
	{ "3x3 + residual, Clip", 2, 6, 10, 11, 13, 3, 3, 1, 1, 1, 1, true, true, 2, K_GEMM },
	/* fp32 Winograd, or the bf16 GEMM with a kernel that beats it (AMX) */
	{ "winograd shape", 1, 16, 17, 19, 24, 3, 3, 1, 1, 1, 1, true, false, 1, K_WINO },
	{ "depthwise stays fp32", 1, 16, 11, 13, 16, 3, 3, 1, 1, 1, 16, true, false, 1,
	  K_DW },
	/* K = 27: the fp32 stem kernel is faster than bf16 (cpu/conv/conv-stem.h) */
	{ "3x3/2 3 channels: fp32 stem", 2, 3, 19, 36, 32, 3, 3, 2, 2, 1, 1, true, true, 2,
	  K_STEM },
};

/* @abs_sum: the same products on |inputs|, no bias, residual or activation. */
static void conv_build(struct one *o, const struct conv_case *cc, bool abs_sum)
{
	int64_t xd[4] = { cc->n, cc->c, cc->h, cc->w };
	int64_t wd[4] = { cc->m, cc->c / cc->group, cc->kh, cc->kw }, bd[1] = { cc->m };
	int64_t oh = (cc->h + 2 * cc->pad - cc->kh) / cc->sh + 1;
	int64_t ow = (cc->w + 2 * cc->pad - cc->kw) / cc->sw + 1;
	int64_t rd[4] = { cc->n, cc->m, oh, ow };
	int64_t st[2] = { cc->sh, cc->sw };
	int64_t pads[4] = { cc->pad, cc->pad, cc->pad, cc->pad };
	uint32_t seed = 4242;
	uint32_t n_in = abs_sum ? 2 : cc->res ? 4 : cc->bias ? 3 : 2;

	one_init(o, ERT_OP_Conv, 0, n_in, 1);
	in_fill(o, 0, 4, xd, &seed, abs_sum);
	in_fill(o, 1, 4, wd, &seed, abs_sum);
	if (n_in > 2) {
		in_fill(o, 2, 1, bd, &seed, false);
		if (!cc->bias)
			o->inp[2] = NULL;
	}
	if (n_in > 3) {
		in_fill(o, 3, 4, rd, &seed, false);
		ert_node_set_attr_int(o->g, o->n, "ert.residual", 1);
	}
	ert_node_set_attr_ints(o->g, o->n, "strides", st, 2);
	ert_node_set_attr_ints(o->g, o->n, "pads", pads, 4);
	ert_node_set_attr_int(o->g, o->n, "group", cc->group);
	if (!abs_sum)
		set_act(o, cc->act);
}

struct mm_case {
	const char *name;
	int32_t ra, rb;
	int64_t a[4], b[4];
};

static const struct mm_case mm_cases[] = {
	{ "MatMul batched, broadcast B batch, odd K", 4, 3, { 2, 3, 37, 29 }, { 1, 29, 53 } },
	{ "MatMul 2-D B folded, N = 1", 3, 2, { 1, 50, 7 }, { 7, 1 } },
	{ "MatMul M past the M tile", 2, 2, { 130, 300 }, { 300, 49 } },
	{ "MatMul vector times matrix", 1, 2, { 33 }, { 33, 70 } },
	{ "MatMul attention-like", 3, 3, { 6, 17, 64 }, { 6, 64, 17 } },
};

static void mm_build(struct one *o, const struct mm_case *mc, bool abs_sum)
{
	uint32_t seed = 99;

	one_init(o, ERT_OP_MatMul, 0, 2, 1);
	in_fill(o, 0, mc->ra, mc->a, &seed, abs_sum);
	in_fill(o, 1, mc->rb, mc->b, &seed, abs_sum);
}

struct gemm_case {
	const char *name;
	int64_t m, n, k;
	bool ta, tb;
	float alpha, beta;
	int32_t rc;        /* rank of C: 0 none, 1 row broadcast, 2 full */
	int act;
};

static const struct gemm_case gemm_cases[] = {
	{ "Gemm classifier head, transposed B", 1, 1000, 96, false, true, 1.0f, 1.0f, 1, 0 },
	{ "Gemm alpha beta, full C, odd K", 5, 70, 33, false, true, 0.5f, 2.0f, 2, 1 },
	{ "Gemm transposed A", 9, 21, 130, true, false, 1.5f, 1.0f, 1, 2 },
	{ "Gemm no C, K past the K block", 140, 17, 301, false, false, 1.0f, 0.0f, 0, 3 },
};

static void gemm_build(struct one *o, const struct gemm_case *gc, bool abs_sum)
{
	int64_t ad[2] = { gc->ta ? gc->k : gc->m, gc->ta ? gc->m : gc->k };
	int64_t bd[2] = { gc->tb ? gc->n : gc->k, gc->tb ? gc->k : gc->n };
	int64_t cd[2] = { gc->m, gc->n };
	uint32_t seed = 7;
	uint32_t n_in = gc->rc && !abs_sum ? 3 : 2;

	one_init(o, ERT_OP_Gemm, 0, n_in, 1);
	in_fill(o, 0, 2, ad, &seed, abs_sum);
	in_fill(o, 1, 2, bd, &seed, abs_sum);
	if (n_in > 2)
		in_fill(o, 2, gc->rc, gc->rc == 1 ? cd + 1 : cd, &seed, false);
	ert_node_set_attr_int(o->g, o->n, "transA", gc->ta);
	ert_node_set_attr_int(o->g, o->n, "transB", gc->tb);
	ert_node_set_attr_float(o->g, o->n, "alpha", abs_sum ? fabsf(gc->alpha) : gc->alpha);
	ert_node_set_attr_float(o->g, o->n, "beta", gc->beta);
	if (!abs_sum)
		set_act(o, gc->act);
}

/* Case @i of all of them: @o built (with |inputs| for @abs_sum); its name and kind. */
static bool case_build(size_t i, struct one *o, bool abs_sum, const char **name,
		       enum expect *kind)
{
	const size_t nc = sizeof(conv_cases) / sizeof(conv_cases[0]);
	const size_t nm = sizeof(mm_cases) / sizeof(mm_cases[0]);
	const size_t ng = sizeof(gemm_cases) / sizeof(gemm_cases[0]);

	*kind = K_GEMM;
	if (i < nc) {
		conv_build(o, &conv_cases[i], abs_sum);
		*name = conv_cases[i].name;
		*kind = conv_cases[i].kind;
	} else if (i < nc + nm) {
		mm_build(o, &mm_cases[i - nc], abs_sum);
		*name = mm_cases[i - nc].name;
	} else if (i < nc + nm + ng) {
		gemm_build(o, &gemm_cases[i - nc - nm], abs_sum);
		*name = gemm_cases[i - nc - nm].name;
	} else {
		return false;
	}
	return true;
}

static ert_status run(struct one *o, enum ert_cpu_isa isa, struct ert_threadpool *pool,
		      bool const_w, ert_level memory, ert_level precision, struct ert_value *out)
{
	bool cst[ONE_MAX_IO];
	struct ert_cpu_eval_opts opts = {
		.isa = isa, .pool = pool, .in_const = cst, .memory = memory,
		.precision = precision,
	};

	for (uint32_t i = 0; i < o->n_in; i++)
		cst[i] = i > 0 && const_w;
	return ert_cpu_eval_node_with(&opts, o->g, o->n, o->inp, o->n_in, out, 1, &o->err);
}

/*
 * Every case at level @isa with precision LOW, four ways (prepacked
 * weights, run-time weights, memory LOW, two threads), against the scalar
 * fp32 reference within the bf16 bound; or, without bf16, bit for bit
 * against NORMAL.
 */
static void low_at(int *ert_test_failed_, enum ert_cpu_isa isa)
{
	const struct ert_sgemm_kernel *bf16 = ert_sbgemm_kernel_for(isa);
	struct ert_threadpool *pool = ert_threadpool_create(2);
	const char *name;
	enum expect kind;
	struct one o, a;
	int cases = 0;

	REQUIRE(pool);
	if (!bf16)
		printf("note: no AVX512_BF16 at level %s: bf16 cases skipped; "
		       "checking that LOW runs fp32\n", ert_cpu_isa_name(isa));
	else
		printf("level %s: %s\n", ert_cpu_isa_name(isa), bf16->name);
	for (size_t i = 0; case_build(i, &o, false, &name, &kind); i++) {
		struct ert_value ref, sum, got, want;
		/* largest |got - ref| / sum where bf16 runs, and where fp32 should */
		double worst = 0, worst_f32 = 0;
		bool any_bf16 = false;

		case_build(i, &a, true, &name, &kind);
		REQUIRE(run(&o, ERT_ISA_SCALAR, NULL, true, ERT_LEVEL_NORMAL, ERT_LEVEL_NORMAL,
			    &ref) == ERT_OK);
		REQUIRE(run(&a, ERT_ISA_SCALAR, NULL, true, ERT_LEVEL_NORMAL, ERT_LEVEL_NORMAL,
			    &sum) == ERT_OK);
		REQUIRE(sum.numel == ref.numel);
		for (int v = 0; v < 4; v++) {
			bool const_w = v != 1;
			ert_level mem = v == 2 ? ERT_LEVEL_LOW : ERT_LEVEL_NORMAL;
			struct ert_threadpool *p = v == 3 ? pool : NULL;
			/* Winograd needs prepacked weights; without, the 3x3 runs as GEMM */
			bool f32 = kind == K_DW || kind == K_STEM ||
				   (kind == K_WINO && const_w && mem != ERT_LEVEL_LOW && bf16 &&
				    !bf16->over_winograd);
			double *w = f32 ? &worst_f32 : &worst;

			any_bf16 |= !f32;
			if (run(&o, isa, p, const_w, mem, ERT_LEVEL_LOW, &got) != ERT_OK) {
				fprintf(stderr, "%s (variant %d): %s\n", name, v, o.err.msg);
				*ert_test_failed_ = 1;
				continue;
			}
			CHECK_EQ_INT(got.numel, ref.numel);
			if (!bf16) {
				REQUIRE(run(&o, isa, p, const_w, mem, ERT_LEVEL_NORMAL, &want) ==
					ERT_OK);
				CHECK(got.numel == want.numel &&
				      !memcmp(got.data, want.data, (size_t)got.numel * sizeof(float)));
				free(want.data);
			}
			for (int64_t q = 0; q < got.numel && q < ref.numel; q++) {
				float g = ((float *)got.data)[q], r = ((float *)ref.data)[q];
				double s = ((float *)sum.data)[q];
				double d = fabs((double)g - r);
				double bound = bf16 ? (1.01 * 0x1p-8 + 1e-5) * s + 1e-6 : 1e-4 * s + 1e-6;

				if (!(d <= bound)) {
					fprintf(stderr, "%s (variant %d) [%ld]: %g, reference %g, "
						"bound %g\n", name, v, (long)q, g, r, bound);
					*ert_test_failed_ = 1;
					break;
				}
				if (s > 0 && d / s > *w)
					*w = d / s;
			}
			free(got.data);
		}
		/* 2^-8 is the bound; random inputs come well within it, but not near 0 */
		if (bf16 && any_bf16 && !(worst > 0x1p-14)) {
			fprintf(stderr, "%s: no bf16 rounding seen (worst %g of the sums)\n", name,
				worst);
			*ert_test_failed_ = 1;
		}
		if (bf16 && !(worst_f32 < 1e-5)) {
			fprintf(stderr, "%s: should stay fp32 (worst %g of the sums)\n", name,
				worst_f32);
			*ert_test_failed_ = 1;
		}
		free(ref.data);
		free(sum.data);
		one_fini(&o);
		one_fini(&a);
		cases++;
	}
	CHECK(cases > 10);
	ert_threadpool_destroy(pool);
}

/* At the best level, and at each level below it that has a bf16 kernel of its own. */
ERT_TEST(low_precision_every_case)
{
	const struct ert_sgemm_kernel *prev = NULL;
	enum ert_cpu_isa best = ert_cpu_isa_best();

	low_at(ert_test_failed_, best);
	for (int isa = ERT_ISA_AVX512; isa < (int)best; isa++) {
		const struct ert_sgemm_kernel *k = ert_sbgemm_kernel_for((enum ert_cpu_isa)isa);

		if (k && k != prev && k != ert_sbgemm_kernel_for(best))
			low_at(ert_test_failed_, (enum ert_cpu_isa)isa);
		prev = k;
	}
}

/* NORMAL and HIGH: fp32 kernels, the same bits, within fp32 rounding of scalar. */
ERT_TEST(normal_and_high_unchanged)
{
	enum ert_cpu_isa best = ert_cpu_isa_best();
	const char *name;
	enum expect kind;
	struct one o;

	for (size_t i = 0; case_build(i, &o, false, &name, &kind); i++) {
		struct ert_value ref, nrm, high;

		REQUIRE(run(&o, ERT_ISA_SCALAR, NULL, true, ERT_LEVEL_NORMAL, ERT_LEVEL_NORMAL,
			    &ref) == ERT_OK);
		REQUIRE(run(&o, best, NULL, true, ERT_LEVEL_NORMAL, ERT_LEVEL_NORMAL, &nrm) ==
			ERT_OK);
		REQUIRE(run(&o, best, NULL, true, ERT_LEVEL_NORMAL, ERT_LEVEL_HIGH, &high) ==
			ERT_OK);
		CHECK(nrm.numel == high.numel &&
		      !memcmp(nrm.data, high.data, (size_t)nrm.numel * sizeof(float)));
		for (int64_t q = 0; q < ref.numel; q++) {
			float r = ((float *)ref.data)[q], g = ((float *)nrm.data)[q];

			if (!(fabsf(g - r) <= 1e-4f * (1.0f + fabsf(r)))) {
				fprintf(stderr, "%s at NORMAL [%ld]: %g, reference %g\n", name,
					(long)q, g, r);
				*ert_test_failed_ = 1;
				break;
			}
		}
		free(ref.data);
		free(nrm.data);
		free(high.data);
		one_fini(&o);
	}
}

/*
 * prepare() names the kernel that runs (edgert profile shows it): the bf16
 * one for LOW where there is one, never at NORMAL, HIGH, or a level below
 * avx512; Winograd and depthwise keep theirs.
 */
ERT_TEST(kernel_names)
{
	enum ert_cpu_isa best = ert_cpu_isa_best();
	const char *name;
	enum expect kind;
	struct one o;

	for (size_t i = 0; case_build(i, &o, false, &name, &kind); i++) {
		const struct ert_cpu_op *op = ert_cpu_op_find(o.n->op);
		struct ert_value y;

		REQUIRE(op && op->prepare);
		/* shapes first: a run at the scalar level gives the output value */
		REQUIRE(run(&o, ERT_ISA_SCALAR, NULL, true, ERT_LEVEL_NORMAL, ERT_LEVEL_NORMAL, &y) ==
			ERT_OK);
		for (int isa = ERT_ISA_SCALAR; isa <= (int)best; isa++) {
			for (int pr = 0; pr < 3; pr++) {
				ert_level prec = pr == 0 ? ERT_LEVEL_LOW : pr == 1 ? ERT_LEVEL_NORMAL
										: ERT_LEVEL_HIGH;
				const struct ert_sgemm_kernel *bf =
					prec == ERT_LEVEL_LOW ? ert_sbgemm_kernel_for((enum ert_cpu_isa)isa)
							      : NULL;
				struct ert_value *inp[ONE_MAX_IO], *outp[1] = { &y };
				bool cst[ONE_MAX_IO];
				struct ert_cpu cpu = {
					.isa = (enum ert_cpu_isa)isa, .num_threads = 1,
					.gemm = ert_sgemm_kernel_for((enum ert_cpu_isa)isa),
					.precision = prec, .gemm_low = bf,
				};
				struct ert_exec x = { .graph = o.g, .node = o.n, .in = inp,
						      .out = outp, .n_in = o.n_in, .n_out = 1,
						      .in_const = cst };
				struct ert_err err;

				for (uint32_t j = 0; j < o.n_in; j++) {
					inp[j] = (struct ert_value *)o.inp[j];
					cst[j] = j > 0;
				}
				CHECK_EQ_INT(op->prepare(&cpu, &x, &err), ERT_OK);
				/* a depthwise convolution without a vector kernel names none */
				CHECK(x.kernel != NULL || kind == K_DW);
				/* Winograd, unless the bf16 kernel is the faster way */
				bool wino = kind == K_WINO && bf && !bf->over_winograd;

				if (bf && (kind == K_GEMM || (kind == K_WINO && !wino)))
					CHECK(x.kernel && !strcmp(x.kernel, bf->name) &&
					      strstr(x.kernel, "bf16"));
				else
					CHECK(!x.kernel || !strstr(x.kernel, "bf16"));
				if (wino)
					CHECK(x.kernel && strstr(x.kernel, "winograd") != NULL);
				/* the stem kernel at every precision, from avx2 up */
				if (kind == K_STEM && isa >= ERT_ISA_AVX2)
					CHECK(x.kernel && strstr(x.kernel, "conv-stem") != NULL);
				if (x.state && op->release)
					op->release(&x);
				CHECK(cpu.packed == NULL);
			}
		}
		/* the bf16 kernel exists only from avx512 up, and only with AVX512_BF16 */
		CHECK(ert_sbgemm_kernel_for(ERT_ISA_AVX2) == NULL);
		CHECK((ert_sbgemm_kernel_for(best) != NULL) ==
		      (best >= ERT_ISA_AVX512 && ert_cpu_features()->avx512bf16));
		free(y.data);
		one_fini(&o);
	}
}

/* fp32 to bf16 as vcvtne2ps2bf16 does for normal numbers and zero: nearest, ties to even. */
static float bf16_round(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	if ((u & 0x7f800000u) == 0)
		u &= 0x80000000u;
	else
		u = (u + 0x7fffu + ((u >> 16) & 1)) & 0xffff0000u;
	memcpy(&f, &u, 4);
	return f;
}

/*
 * The bf16 micro-kernel and packing alone: every mr x nr edge, odd K, all
 * epilogue modes, against sums of the bf16-rounded inputs in double; B
 * packed from the matrix and converted in place from fp32 panels give the
 * same words.
 */
static void ukernel_edges(int *ert_test_failed_, const struct ert_sgemm_kernel *k)
{
	/* kq = 19: one whole 16-pair AMX step and a short one */
	const int64_t kc = 37, kq = (kc + 1) / 2, ldc = 64, lda = 41, ldb = 53;
	uint32_t seed = 11;
	float *a = malloc(sizeof(float) * (size_t)(k->mr * lda));
	float *b = malloc(sizeof(float) * (size_t)(kc * ldb));
	float *fp = malloc(sizeof(float) * (size_t)(kc * k->nr * 2));
	uint32_t *pa = malloc(sizeof(uint32_t) * (size_t)(kq * k->mr));
	uint32_t *pb = malloc(sizeof(uint32_t) * (size_t)(kq * k->nr));
	float *c = malloc(sizeof(float) * (size_t)(k->mr * ldc));
	float bias[ERT_SGEMM_MR_MAX];

	REQUIRE(a && b && fp && pa && pb && c);
	for (int64_t i = 0; i < k->mr * lda; i++)
		a[i] = frand_r(&seed) * 3.0f;
	for (int64_t i = 0; i < kc * ldb; i++)
		b[i] = frand_r(&seed);
	for (int i = 0; i < ERT_SGEMM_MR_MAX; i++)
		bias[i] = frand_r(&seed);
	for (int64_t mr = 1; mr <= k->mr; mr++) {
		/* A: rows of a (lda apart), the last rows past mr must pack as zeros */
		if (k->a_rows)
			ert_sbgemm_pack_a_rows(a, lda, 1, 0, mr, 0, kc, k->mr, k->kc, pa);
		else
			ert_sbgemm_pack_a_strided(a, lda, 1, 0, mr, 0, kc, k->mr, pa);
		for (int64_t nr = 1; nr <= k->nr; nr++) {
			ert_sbgemm_pack_b_strided(b, ldb, 1, 0, kc, 0, nr, k->nr, pb);
			/* the same panel from fp32 rows, converted in place */
			for (int64_t p = 0; p < kc; p++)
				for (int64_t j = 0; j < k->nr; j++)
					fp[p * k->nr + j] = j < nr ? b[p * ldb + j] : 0.0f;
			ert_sbgemm_panels_to_bf16(fp, kc, nr, k->nr);
			CHECK(!memcmp(fp, pb, sizeof(uint32_t) * (size_t)(kq * k->nr)));
			for (int mode = 0; mode < 3; mode++) {
				struct ert_sgemm_epi e = {
					.alpha = mode == 2 ? 0.25f : 1.0f, .load_c = mode == 1,
					.bias = mode == 0 ? bias : NULL,
					.act = mode == 2 ? ERT_EPI_CLIP : ERT_EPI_RELU,
					.lo = -0.3f, .hi = 0.4f,
				};
				double worst = 0;

				for (int64_t i = 0; i < k->mr * ldc; i++)
					c[i] = (float)i * 1e-3f;
				k->fn(kq, (const float *)(const void *)pa,
				      (const float *)(const void *)pb, k->nr, c, ldc, mr, nr, &e);
				for (int64_t i = 0; i < k->mr; i++) {
					for (int64_t j = 0; j < ldc; j++) {
						double old = (double)(i * ldc + j) * 1e-3, want = old;
						double mag = 1;

						if (i < mr && j < nr) {
							double s = 0;

							for (int64_t p = 0; p < kc; p++) {
								double t = (double)bf16_round(a[i * lda + p]) *
									   bf16_round(b[p * ldb + j]);

								s += t;
								mag += fabs(t);
							}
							want = (e.load_c ? (double)(float)old
									 : e.bias ? bias[i] : 0.0) +
							       e.alpha * s;
							if (e.act == ERT_EPI_RELU)
								want = want > 0 ? want : 0;
							else
								want = want < e.lo ? e.lo
								       : want > e.hi ? e.hi : want;
						}
						/* fp32 sums of exact bf16 products: 37 roundings at most */
						double d = fabs(c[i * ldc + j] - want) / mag;

						worst = d > worst ? d : worst;
					}
				}
				if (!(worst <= 4e-6)) {
					fprintf(stderr, "%s %ldx%ld mode %d: differs by %g of the sum\n",
						k->name, (long)mr, (long)nr, mode, worst);
					*ert_test_failed_ = 1;
				}
			}
		}
	}
	free(a);
	free(b);
	free(fp);
	free(pa);
	free(pb);
	free(c);
}

ERT_TEST(bf16_ukernel_edges)
{
	const struct ert_sgemm_kernel *last = NULL;

	for (int isa = ERT_ISA_AVX512; isa <= (int)ert_cpu_isa_best(); isa++) {
		const struct ert_sgemm_kernel *k = ert_sbgemm_kernel_for((enum ert_cpu_isa)isa);

		if (k && k != last)
			ukernel_edges(ert_test_failed_, k);
		last = k;
	}
	if (!last)
		printf("note: no AVX512_BF16: bf16 micro-kernels not tested here\n");
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(low_precision_every_case), ERT_TEST_ENTRY(normal_and_high_unchanged),
	      ERT_TEST_ENTRY(kernel_names), ERT_TEST_ENTRY(bf16_ukernel_edges))
