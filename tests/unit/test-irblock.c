/* SPDX-License-Identifier: MIT */
/*
 * The inverted-residual block by bands (cpu/conv/irblock.h) against the three
 * Conv ops it replaces, run one after another at the same kernel level: the
 * same bits in every output, at every level this CPU runs (scalar, avx2,
 * avx512, ...), on one, two and three threads (each thread a chunk of the
 * rows, asserted), with packed and unpacked weights.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu/conv/irblock.h"
#include "cpu/cpu-impl.h"
#include "cpu/gemm/sgemm.h"
#include "edgert.h"
#include "ert-backend-impl.h"
#include "ert-op-test.h"
#include "ert-test-model.h"
#include "ert-test.h"
#include "opt/opt-private.h"
#include "session/session-impl.h"

static uint32_t seed = 777;

struct irb_case {
	const char *name;
	int64_t n, c_in, h, w, mult, c_out, stride;
	int64_t pads[4];
	bool expand, residual;
};

static const struct irb_case cases[] = {
	{ "odd 13x11, s1, 5 -> 30 -> 5, residual", 1, 5, 13, 11, 6, 5, 1, { 1, 1, 1, 1 },
	  true, true },
	{ "odd 15x9, s2, 3 -> 18 -> 7", 1, 3, 15, 9, 6, 7, 2, { 1, 1, 1, 1 }, true, false },
	/* the unfused depthwise takes the flat 3x3 planes here (dwconv-tmpl.h), the fused rows */
	{ "7x7, s1, 16 -> 96 -> 16, residual", 1, 16, 7, 7, 6, 16, 1, { 1, 1, 1, 1 }, true,
	  true },
	{ "batch 2, 9x11, s1, pads 0 2 / 2 0", 2, 4, 9, 11, 6, 5, 1, { 0, 2, 2, 0 }, true, false },
	{ "batch 2, 17x19, s1, 9 -> 27 -> 9, residual", 2, 9, 17, 19, 3, 9, 1, { 1, 1, 1, 1 },
	  true, true },
	{ "batch 2, 16x16, s2, 6 -> 36 -> 11", 2, 6, 16, 16, 6, 11, 2, { 1, 1, 1, 1 }, true,
	  false },
	{ "no expand, 23x7, s1, 13 -> 13 -> 5", 1, 13, 23, 7, 1, 5, 1, { 1, 1, 1, 1 }, false,
	  false },
	{ "no expand, batch 2, 10x21, s2, residual-free", 2, 17, 10, 21, 1, 3, 2, { 1, 1, 1, 1 },
	  false, false },
	{ "pads 0 2 / 2 0, s2, 21x14", 1, 4, 21, 14, 6, 4, 2, { 0, 2, 2, 0 }, true, false },
	{ "one row, s1, 1x40", 1, 8, 1, 40, 6, 8, 1, { 1, 1, 1, 1 }, true, true },
	/* mobilenet_v2's second block (96 wide): several bands of a few rows each */
	{ "112x112, s2, 16 -> 96 -> 24", 1, 16, 112, 112, 6, 24, 2, { 1, 1, 1, 1 }, true,
	  false },
	{ "56x56, s1, 24 -> 144 -> 24, residual", 1, 24, 56, 56, 6, 24, 1, { 1, 1, 1, 1 }, true,
	  true },
	{ "112x112, no expand, 32 -> 16", 1, 32, 112, 112, 1, 16, 1, { 1, 1, 1, 1 }, false,
	  false },
	{ "28x28, s1, 32 -> 192 -> 32, residual", 1, 32, 28, 28, 6, 32, 1, { 1, 1, 1, 1 }, true,
	  true },
	{ "28x28, s2, 32 -> 192 -> 64", 1, 32, 28, 28, 6, 64, 2, { 1, 1, 1, 1 }, true, false },
	{ "14x14, s1, 64 -> 384 -> 96", 1, 64, 14, 14, 6, 96, 1, { 1, 1, 1, 1 }, true, false },
	{ "14x14, s1, 96 -> 576 -> 96, residual", 1, 96, 14, 14, 6, 96, 1, { 1, 1, 1, 1 }, true,
	  true },
};

static float *rand_buf(int64_t n, float scale)
{
	float *p = malloc((size_t)n * sizeof(float));

	if (!p)
		abort();
	for (int64_t i = 0; i < n; i++)
		p[i] = frand_r(&seed) * scale;
	return p;
}

static void set_act(struct one *o, const float *clip)
{
	ert_node_set_attr_int(o->g, o->n, "ert.act", ERT_ACT_CLIP);
	ert_opt_set_attr_floats(o->g, o->n, "ert.act_params", clip, 2);
}

/* A Conv of @w [m, c / group, k, k], @b, input @x [n, c, h, w]. */
static void conv_init(struct one *o, bool residual, int64_t group, int64_t k, int64_t s,
		      const int64_t *pads)
{
	int64_t ks[2] = { k, k }, st[2] = { s, s }, p[4] = { 0, 0, 0, 0 };

	one_init(o, ERT_OP_Conv, 11, residual ? 4 : 3, 1);
	if (residual)
		ert_node_set_attr_int(o->g, o->n, "ert.residual", 1);
	ert_node_set_attr_int(o->g, o->n, "group", group);
	ert_node_set_attr_ints(o->g, o->n, "kernel_shape", ks, 2);
	ert_node_set_attr_ints(o->g, o->n, "strides", st, 2);
	ert_node_set_attr_ints(o->g, o->n, "pads", pads ? pads : p, 4);
}

static ert_status run_one(struct one *o, enum ert_cpu_isa isa, struct ert_threadpool *pool,
			  struct ert_value *out)
{
	struct ert_cpu_eval_opts opts = { .isa = isa, .pool = pool };

	return ert_cpu_eval_node_with(&opts, o->g, o->n, o->inp, o->n_in, out, 1, &o->err);
}

struct blk {
	const struct irb_case *c;
	int64_t c_mid, oh, ow;
	float *x, *we, *be, *wd, *bd, *wp, *bp, *res;
	struct ert_conv_geom g;
};

/* The unfused ops at @isa: their output in @out (malloc'd); false on failure. */
static bool unfused(const struct blk *b, enum ert_cpu_isa isa, struct ert_threadpool *pool,
		    struct ert_value *out, double *secs)
{
	const struct irb_case *c = b->c;
	float clip[2] = { 0.0f, 6.0f };
	int64_t xd[4] = { c->n, c->c_in, c->h, c->w }, wed[4] = { b->c_mid, c->c_in, 1, 1 };
	int64_t wdd[4] = { b->c_mid, 1, 3, 3 }, wpd[4] = { c->c_out, b->c_mid, 1, 1 };
	int64_t bed[1] = { b->c_mid }, bpd[1] = { c->c_out };
	int64_t rd[4] = { c->n, c->c_out, b->oh, b->ow };
	struct ert_value e = { 0 }, d = { 0 };
	struct one oe, od, op;
	bool ok = true;
	struct timespec t0, t1;

	conv_init(&oe, false, 1, 1, 1, NULL);
	set_act(&oe, clip);
	set_in(&oe, 0, ERT_DTYPE_FLOAT32, 4, xd, b->x);
	set_in(&oe, 1, ERT_DTYPE_FLOAT32, 4, wed, b->we);
	set_in(&oe, 2, ERT_DTYPE_FLOAT32, 1, bed, b->be);
	conv_init(&od, false, b->c_mid, 3, c->stride, c->pads);
	set_act(&od, clip);
	set_in(&od, 1, ERT_DTYPE_FLOAT32, 4, wdd, b->wd);
	set_in(&od, 2, ERT_DTYPE_FLOAT32, 1, bed, b->bd);
	conv_init(&op, c->residual, 1, 1, 1, NULL);
	set_in(&op, 1, ERT_DTYPE_FLOAT32, 4, wpd, b->wp);
	set_in(&op, 2, ERT_DTYPE_FLOAT32, 1, bpd, b->bp);
	if (c->residual)
		set_in(&op, 3, ERT_DTYPE_FLOAT32, 4, rd, b->res);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (c->expand) {
		ok = run_one(&oe, isa, pool, &e) == ERT_OK;
		set_in(&od, 0, ERT_DTYPE_FLOAT32, 4, e.dims, e.data);
	} else {
		set_in(&od, 0, ERT_DTYPE_FLOAT32, 4, xd, b->x);
	}
	ok = ok && run_one(&od, isa, pool, &d) == ERT_OK;
	if (ok)
		set_in(&op, 0, ERT_DTYPE_FLOAT32, 4, d.dims, d.data);
	ok = ok && run_one(&op, isa, pool, out) == ERT_OK;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	*secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
	if (!ok)
		fprintf(stderr, "%s: unfused: %s%s%s\n", c->name, oe.err.msg, od.err.msg,
			op.err.msg);
	free(e.data);
	free(d.data);
	one_fini(&oe);
	one_fini(&od);
	one_fini(&op);
	return ok;
}

/*
 * The fused block at @isa on @threads (pool or none), packed weights or not;
 * the row chunks an image was cut into in @chunks.
 */
static float *fused(const struct blk *b, enum ert_cpu_isa isa, struct ert_threadpool *pool,
		    uint32_t threads, bool packed, double *secs, int64_t *chunks, bool *flat)
{
	const struct irb_case *c = b->c;
	struct ert_cpu cpu = {
		.pool = pool, .num_threads = threads, .isa = isa,
		.gemm = ert_sgemm_kernel_for(isa), .precision = ERT_LEVEL_NORMAL,
	};
	const int mr = cpu.gemm->mr;
	struct ert_act_desc clip = { ERT_ACT_CLIP, 0.0f, 6.0f };
	float *pe = NULL, *pp = NULL, *y;
	struct ert_irb_args a = {
		.n_img = c->n, .c_in = c->c_in, .c_mid = b->c_mid, .c_out = c->c_out, .g = &b->g,
		.expand = c->expand,
		.ex = { .w = b->we, .bias = b->be, .act = clip },
		.dw_w = b->wd, .dw_bias = b->bd, .dw_act = clip,
		.pj = { .w = b->wp, .bias = b->bp },
		.x = b->x, .res = c->residual ? b->res : NULL,
	};
	struct timespec t0, t1;
	void *ws;

	if (packed) {
		pe = malloc(ert_sgemm_packed_a_floats(b->c_mid, c->c_in, mr) * sizeof(float));
		pp = malloc(ert_sgemm_packed_a_floats(c->c_out, b->c_mid, mr) * sizeof(float));
		if (!pe || !pp)
			abort();
		ert_sgemm_pack_a(b->we, c->c_in, 1, b->c_mid, c->c_in, mr, pe);
		ert_sgemm_pack_a(b->wp, b->c_mid, 1, c->c_out, b->c_mid, mr, pp);
		a.ex.w_packed = pe;
		a.pj.w_packed = pp;
	}
	y = malloc((size_t)(c->n * c->c_out * b->oh * b->ow) * sizeof(float));
	ws = malloc(ert_irb_workspace(&cpu, &a));
	if (!y || !ws)
		abort();
	a.y = y;
	*chunks = ert_irb_chunks(&cpu, &a);
	*flat = ert_irb_dw_flat(&cpu, &a);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ert_irb_run(&cpu, &a, ws);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	*secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
	free(ws);
	free(pe);
	free(pp);
	return y;
}

/*
 * The chunks an image's rows are cut into on @threads where there are fewer
 * images than threads: bands of at most ceil(OH / threads) rows, so every
 * thread has rows of its own where ceil(OH / that) reaches the threads.
 * Other cases go by the band's height alone (-1: not asserted).
 */
/*
 * Does the block's depthwise stage go flat at @isa (dwconv.h's
 * ert_dwconv_band_flat()): stride 1, the input's size, rows narrower than a
 * vector (16 floats at avx512, 8 at avx2), and (these cases' planes) at
 * most 256 outputs?
 */
static bool flat_expected(const struct blk *b, enum ert_cpu_isa isa)
{
	const struct irb_case *c = b->c;
	int64_t vw = isa >= ERT_ISA_AVX512 ? 16 : 8;

	return isa >= ERT_ISA_AVX2 && c->stride == 1 && b->oh == c->h && b->ow == c->w &&
	       c->w < vw && c->h * c->w <= 256;
}

static int64_t chunks_expected(const struct blk *b, uint32_t threads)
{
	int64_t r = (b->oh + threads - 1) / threads, bands = (b->oh + r - 1) / r;

	if (threads == 1)
		return 1;
	if (b->c->n >= threads)
		return -1;
	return bands < threads ? bands : threads;
}

ERT_TEST(fused_block_same_bits_every_level)
{
	struct ert_threadpool *pools[4] = { NULL, NULL, ert_threadpool_create(2),
					    ert_threadpool_create(3) };
	int runs = 0, split3 = 0, flat_runs[4] = { 0 };

	REQUIRE(pools[2] != NULL && pools[3] != NULL);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct irb_case *c = &cases[i];
		struct ert_err err = { 0 };
		struct blk b = { .c = c, .c_mid = c->c_in * c->mult };
		int64_t in[2] = { c->h, c->w }, k[2] = { 3, 3 };
		struct one o;

		/* the geometry as the Conv sees it */
		conv_init(&o, false, b.c_mid, 3, c->stride, c->pads);
		REQUIRE(ert_geom_conv(o.n, 2, in, k, false, &b.g, &err) == ERT_OK);
		one_fini(&o);
		b.oh = b.g.out[1];
		b.ow = b.g.out[2];
		b.x = rand_buf(c->n * c->c_in * c->h * c->w, 2.0f);
		b.we = rand_buf(b.c_mid * c->c_in, 1.0f);
		b.be = rand_buf(b.c_mid, 1.0f);
		b.wd = rand_buf(b.c_mid * 9, 1.0f);
		b.bd = rand_buf(b.c_mid, 1.0f);
		b.wp = rand_buf(c->c_out * b.c_mid, 1.0f);
		b.bp = rand_buf(c->c_out, 1.0f);
		b.res = rand_buf(c->n * c->c_out * b.oh * b.ow, 2.0f);
		for (int isa = ERT_ISA_SCALAR; isa <= (int)ert_cpu_isa_best(); isa++) {
			struct ert_cpu lv = { .isa = (enum ert_cpu_isa)isa };

			if (!ert_irb_ok(&lv, &b.g))
				continue;
			/* 1, 2 and (on planes up to 28x28: cheap under ASan) 3 threads */
			for (int t = 0; t < 6; t++) {
				uint32_t threads = (uint32_t)(t % 3) + 1;
				bool packed = t >= 3;
				struct ert_value ref = { 0 };
				double su = 0, sf = 0;
				int64_t chunks = 0, want = chunks_expected(&b, threads);
				bool flat = false, want_flat = flat_expected(&b, (enum ert_cpu_isa)isa);
				float *y;

				if (threads == 3 && c->h * c->w > 28 * 28)
					continue;
				if (!unfused(&b, (enum ert_cpu_isa)isa, pools[threads], &ref,
					     &su)) {
					*ert_test_failed_ = 1;
					continue;
				}
				y = fused(&b, (enum ert_cpu_isa)isa, pools[threads], threads,
					  packed, &sf, &chunks, &flat);
				if (memcmp(y, ref.data, ref.nbytes)) {
					fprintf(stderr, "%s at %s, %u threads, %s weights: differs\n",
						c->name, ert_cpu_isa_name((enum ert_cpu_isa)isa),
						threads, packed ? "packed" : "plain");
					*ert_test_failed_ = 1;
				}
				if (want >= 0 && chunks != want) {
					fprintf(stderr, "%s at %s, %u threads: %lld chunks, not %lld\n",
						c->name, ert_cpu_isa_name((enum ert_cpu_isa)isa),
						threads, (long long)chunks, (long long)want);
					*ert_test_failed_ = 1;
				}
				if (flat != want_flat) {
					fprintf(stderr, "%s at %s, %u threads: depthwise %s, not %s\n",
						c->name, ert_cpu_isa_name((enum ert_cpu_isa)isa),
						threads, flat ? "flat" : "by rows",
						want_flat ? "flat" : "by rows");
					*ert_test_failed_ = 1;
				}
				flat_runs[threads] += flat && chunks == (int64_t)threads;
				split3 += threads == 3 && chunks == 3;
				if (getenv("IRB_TIMES"))
					fprintf(stderr, "%-45s %-8s %u thr: unfused %.3f ms, fused %.3f ms\n",
						c->name, ert_cpu_isa_name((enum ert_cpu_isa)isa),
						threads, su * 1e3, sf * 1e3);
				free(y);
				free(ref.data);
				runs++;
			}
		}
		free(b.x);
		free(b.we);
		free(b.be);
		free(b.wd);
		free(b.bd);
		free(b.wp);
		free(b.bp);
		free(b.res);
	}
	CHECK(runs > 0);
	CHECK(split3 > 0);
	/* flat bands on 1, 2 and 3 chunks (avx2: the 23x7 and 7x7 planes; avx512: also 14x14) */
	if (ert_cpu_isa_best() >= ERT_ISA_AVX2)
		CHECK(flat_runs[1] > 0 && flat_runs[2] > 0 && flat_runs[3] > 0);
	ert_threadpool_destroy(pools[2]);
	ert_threadpool_destroy(pools[3]);
}

/* A constant [d0, d1, d2, d3] (rank @rank) of seeded floats. */
static int32_t add_w(struct ert_graph *g, const char *name, int32_t rank, int64_t d0, int64_t d1,
		     int64_t d2, int64_t d3)
{
	int64_t dims[4] = { d0, d1, d2, d3 }, n = 1;

	for (int32_t i = 0; i < rank; i++)
		n *= dims[i];
	return ert_opt_add_const(g, name, ERT_DTYPE_FLOAT32, rank, dims,
				 rand_buf(n, 1.0f), (size_t)n * sizeof(float));
}

static int32_t add_conv(struct ert_graph *g, const char *name, int32_t x, int32_t w, int32_t b,
			int32_t res, int64_t group, int64_t k)
{
	int32_t in[4] = { x, w, b, res }, y = ert_graph_add_tensor_unique(g, name, ERT_DTYPE_FLOAT32,
									 -1, NULL);
	int32_t ni = ert_graph_add_node(g, ERT_OP_Conv, name, res >= 0 ? 4 : 3, in, 1, &y);
	struct ert_node *n = &g->nodes[ni];
	int64_t ks[2] = { k, k }, pads[4] = { k / 2, k / 2, k / 2, k / 2 };
	float clip[2] = { 0.0f, 6.0f };

	n->opset = 13;
	ert_node_set_attr_int(g, n, "group", group);
	ert_node_set_attr_ints(g, n, "kernel_shape", ks, 2);
	ert_node_set_attr_ints(g, n, "pads", pads, 4);
	if (res >= 0) {
		ert_node_set_attr_int(g, n, "ert.residual", 1);
	} else {
		ert_node_set_attr_int(g, n, "ert.act", ERT_ACT_CLIP);
		ert_opt_set_attr_floats(g, n, "ert.act_params", clip, 2);
	}
	return y;
}

enum { IRB_PLAIN, IRB_MID_OUTPUT, IRB_SMALL, IRB_UNDER };

/*
 * A block (expand 8 -> 48, depthwise, project 48 -> 8 + X) optimised with
 * @env (then unfused where @unfuse): its op counts. 37x37: the expanded
 * tensor 257 KiB, just over ERT_OPT_IRBLOCK_MIN_BYTES; 36x36 just under.
 */
static struct ert_graph *block_graph(int variant)
{
	int64_t hw = variant == IRB_SMALL ? 8 : variant == IRB_UNDER ? 36 : 37;
	int64_t xd[4] = { 1, 8, hw, hw };
	struct ert_graph *g = ert_graph_create();
	int32_t x, e, d, y;

	if (!g)
		abort();
	g->opset = 17;
	x = ert_graph_add_tensor(g, "x", ERT_DTYPE_FLOAT32, 4, xd);
	ert_graph_add_input(g, x);
	e = add_conv(g, "expand", x, add_w(g, "we", 4, 48, 8, 1, 1), add_w(g, "be", 1, 48, 1, 1, 1),
		     -1, 1, 1);
	d = add_conv(g, "dw", e, add_w(g, "wd", 4, 48, 1, 3, 3), add_w(g, "bd", 1, 48, 1, 1, 1), -1,
		     48, 3);
	y = add_conv(g, "project", d, add_w(g, "wp", 4, 8, 48, 1, 1), add_w(g, "bp", 1, 8, 1, 1, 1),
		     x, 1, 1);
	ert_graph_add_output(g, y);
	if (variant == IRB_MID_OUTPUT)
		ert_graph_add_output(g, d);
	return g;
}

static void optimised_counts(int variant, const char *env, bool unfuse, int *n_irb, int *n_conv)
{
	struct ert_graph *g = block_graph(variant);
	struct ert_err err = { 0 };

	if (env)
		setenv("ERT_FUSE_IRBLOCK", env, 1);
	else
		unsetenv("ERT_FUSE_IRBLOCK");
	*n_irb = *n_conv = -1;
	if (ert_graph_optimize(g, &err) == ERT_OK &&
	    (!unfuse || ert_opt_unfuse_irblock(g, &err) == ERT_OK)) {
		*n_irb = graph_count_op(g, ERT_OP_InvertedResidual);
		*n_conv = graph_count_op(g, ERT_OP_Conv);
	} else {
		fprintf(stderr, "optimise: %s\n", err.msg);
	}
	unsetenv("ERT_FUSE_IRBLOCK");
	ert_graph_destroy(g);
}

/* What the pass fuses and what it leaves, and its switch. */
ERT_TEST(fuse_pass)
{
	int irb, conv;

	optimised_counts(IRB_PLAIN, "1", false, &irb, &conv);
	CHECK_EQ_INT(irb, 1);
	CHECK_EQ_INT(conv, 0);
	optimised_counts(IRB_PLAIN, "0", false, &irb, &conv);
	CHECK_EQ_INT(irb, 0);
	CHECK_EQ_INT(conv, 3);
	/* off by default (ERT_OPT_IRBLOCK_DEFAULT) */
	optimised_counts(IRB_PLAIN, NULL, false, &irb, &conv);
	CHECK_EQ_INT(irb, ERT_OPT_IRBLOCK_DEFAULT ? 1 : 0);
	/* and back (for the quantizer) */
	optimised_counts(IRB_PLAIN, "1", true, &irb, &conv);
	CHECK_EQ_INT(irb, 0);
	CHECK_EQ_INT(conv, 3);
	/* the depthwise output is also a graph output: nothing fuses */
	optimised_counts(IRB_MID_OUTPUT, "1", false, &irb, &conv);
	CHECK_EQ_INT(irb, 0);
	CHECK_EQ_INT(conv, 3);
	/* 8x8 planes (64 pixels) are left to the small-plane GEMM */
	optimised_counts(IRB_SMALL, "1", false, &irb, &conv);
	CHECK_EQ_INT(irb, 0);
	CHECK_EQ_INT(conv, 3);
	/* an expanded tensor under ERT_OPT_IRBLOCK_MIN_BYTES (48 x 36 x 36 floats) stays unfused */
	CHECK(48 * 36 * 36 * 4 < ERT_OPT_IRBLOCK_MIN_BYTES &&
	      48 * 37 * 37 * 4 >= ERT_OPT_IRBLOCK_MIN_BYTES);
	optimised_counts(IRB_UNDER, "1", false, &irb, &conv);
	CHECK_EQ_INT(irb, 0);
	CHECK_EQ_INT(conv, 3);
}

/*
 * "convdev": a device backend (registered as ERT_BACKEND_OPENCL through the
 * static library's ert_backend_register()) that takes every float32 Conv,
 * in host memory of its own buffer type. Sessions are only planned here,
 * never run, so it computes nothing.
 */
static bool cd_supports(struct ert_backend *be, const struct ert_exec *x)
{
	return x->node->op == ERT_OP_Conv && x->n_out == 1 && x->out[0] &&
	       x->out[0]->dtype == ERT_DTYPE_FLOAT32;
}

static const char *cd_buffer_type(struct ert_backend *be)
{
	return "convdev-mem";
}

static ert_status cd_alloc(struct ert_backend *be, size_t size, struct ert_buffer *out,
			   struct ert_err *err)
{
	void *p = malloc(size ? size : 1);

	if (!p) {
		ert_err_set(err, "convdev: out of memory");
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	out->host = out->handle = p;
	out->size = size;
	return ERT_OK;
}

static void cd_free(struct ert_backend *be, struct ert_buffer *buf)
{
	free(buf->handle);
}

static bool cd_host_visible(struct ert_backend *be)
{
	return true;
}

static ert_status cd_prepare(struct ert_backend *be, struct ert_exec *x, struct ert_err *err)
{
	return ERT_OK;
}

static ert_status cd_compute(struct ert_backend *be, struct ert_exec *x, struct ert_err *err)
{
	ert_err_set(err, "convdev: computes nothing");
	return ERT_STATUS_BACKEND;
}

static ert_status cd_synchronize(struct ert_backend *be, struct ert_err *err)
{
	return ERT_OK;
}

static void cd_destroy(struct ert_backend *be)
{
	free(be);
}

static const struct ert_backend_ops cd_ops = {
	.abi_version = ERT_BACKEND_ABI_VERSION,
	.name = "convdev",
	.supports_op = cd_supports,
	.buffer_type = cd_buffer_type,
	.buffer_alloc = cd_alloc,
	.buffer_free = cd_free,
	.buffer_host_visible = cd_host_visible,
	.prepare = cd_prepare,
	.compute = cd_compute,
	.synchronize = cd_synchronize,
	.destroy = cd_destroy,
};

static ert_status cd_create(const ert_config *cfg, struct ert_backend **out, struct ert_err *err)
{
	struct ert_backend *be = calloc(1, sizeof(*be));

	if (!be) {
		ert_err_set(err, "convdev: out of memory");
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	be->ops = &cd_ops;
	be->type = ERT_BACKEND_OPENCL;
	*out = be;
	return ERT_OK;
}

/* @s's planned steps: InvertedResiduals, Convs, and Convs on a device backend. */
static void placed(const ert_session *s, int *n_irb, int *n_conv, int *n_dev)
{
	const struct ert_graph *g = s->model->graph;

	*n_irb = *n_conv = *n_dev = 0;
	for (uint32_t i = 0; s->plan && i < s->plan->n_steps; i++) {
		const struct ert_step *st = &s->plan->steps[i];
		enum ert_op op = g->nodes[st->node].op;

		*n_irb += op == ERT_OP_InvertedResidual;
		*n_conv += op == ERT_OP_Conv;
		*n_dev += op == ERT_OP_Conv && s->backends[st->backend]->type != ERT_BACKEND_CPU;
	}
}

/*
 * Only the CPU runs the fused block: a session that also has a GPU backend
 * plans its Convs instead (ert_model_unfused_irblock()), on the device, and so
 * does the next such session (the unfused model is kept with the model); a
 * CPU session of the same model keeps the block.
 */
ERT_TEST(device_session_gets_the_convs)
{
	struct ert_graph *g = block_graph(IRB_PLAIN);
	struct ert_err err = { 0 };
	int irb, conv, dev;
	ert_model *m;
	ert_session *s = NULL;
	ert_config cfg;

	setenv("ERT_FUSE_IRBLOCK", "1", 1);
	REQUIRE(ert_graph_optimize(g, &err) == ERT_OK);
	unsetenv("ERT_FUSE_IRBLOCK");
	CHECK_EQ_INT(graph_count_op(g, ERT_OP_InvertedResidual), 1);
	m = model_from_graph(g);
	REQUIRE(m != NULL);
	ert_backend_register(ERT_BACKEND_OPENCL, cd_create);
	for (int round = 0; round < 2; round++) {
		ert_config_init(&cfg);
		cfg.backends[0] = ERT_BACKEND_OPENCL;
		cfg.backends[1] = ERT_BACKEND_CPU;
		cfg.num_backends = 2;
		CHECK(ert_session_create(m, &cfg, &s) == ERT_OK);
		if (!s)
			break;
		placed(s, &irb, &conv, &dev);
		CHECK_EQ_INT(irb, 0);
		CHECK_EQ_INT(conv, 3);
		CHECK_EQ_INT(dev, 3);
		CHECK(s->model != m && s->model == atomic_load(&m->unfused));
		ert_session_destroy(s);
		s = NULL;
	}
	ert_backend_register(ERT_BACKEND_OPENCL, NULL);
	s = session_one_thread(m);
	REQUIRE(s != NULL);
	placed(s, &irb, &conv, &dev);
	CHECK_EQ_INT(irb, 1);
	CHECK_EQ_INT(conv, 0);
	CHECK(s->model == m);
	ert_session_destroy(s);
	ert_model_unref(m);
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(fused_block_same_bits_every_level), ERT_TEST_ENTRY(fuse_pass),
	      ERT_TEST_ENTRY(device_session_gets_the_convs))
