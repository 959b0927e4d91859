/* SPDX-License-Identifier: MIT */
/*
 * gemm-bench: Conv through the CPU backend at ResNet-50 and ResNet-18 layer
 * sizes, and MatMul at vit_s16's linear-layer sizes (197 tokens, constant
 * weights packed as in a session; names start with "vit"), on 1 and N threads, in GFLOP/s and as a ratio against a naive
 * triple-loop GEMM of the same size measured in the same run.
 *
 *   cc -O2 -D_GNU_SOURCE -Ilibruntime/include -Ilibruntime -Ibackends -I. \
 *      bench/gemm-bench.c build/libedgert.a -lprotobuf-c -ljpeg -lpng16 -lz -lm \
 *      -lpthread -ldrm -lOpenCL -lvulkan -o build/gemm-bench
 *   build/gemm-bench [THREADS [NAME-PART]]     (NAME-PART: only layers whose name has it)
 *   build/gemm-bench THREADS vitchain [RUNS [warm]]  (vit_s16's 48 linear layers in turn)
 *
 * Each figure is the best of 5 timed runs, or of GEMM_BENCH_REPS (environment)
 * runs: more on a loaded machine. With GEMM_BENCH_COLD=1 (environment) a
 * Conv's packed weights are flushed from the caches before each timed run
 * (x86 only; not counted), so that they come from memory as in a model run,
 * where each layer's weights were last read a whole network ago.
 *
 * One-thread figures are per CPU-second (process CPU time), N-thread ones per
 * wall-clock second, and also per CPU-second: on a busy machine the last one
 * close to the 1-thread figure shows the threads add no work of their own.
 * Where the CPU has AVX512_BF16, each layer also runs with precision LOW
 * (bf16 products, 1 thread), and the micro-kernels are timed alone on
 * L1-resident panels first. A layer on Winograd also prints how its 1-thread
 * CPU time splits between the input transform, the 36 batched GEMMs and the
 * output transform (summed over the timed runs; an untimed first run faults
 * the buffers in).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu/cpu-impl.h"
#include "cpu/gemm/sgemm.h"
#include "bench-util.h"

/*
 * Single-threaded runs are timed in process CPU time, multi-threaded ones in
 * wall time: a shared build machine then disturbs the 1-thread figure less.
 */
static clockid_t bench_clock = CLOCK_MONOTONIC;

static double now(void)
{
	struct timespec t;

	clock_gettime(bench_clock, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Naive reference: C[m x n] = A[m x k] B[k x n], i-p-j order. */
static double naive_gflops(int64_t m, int64_t n, int64_t k)
{
	float *a = calloc((size_t)(m * k), 4), *b = calloc((size_t)(k * n), 4);
	float *c = calloc((size_t)(m * n), 4);
	double t0 = now();

	for (int64_t i = 0; i < m; i++)
		for (int64_t p = 0; p < k; p++)
			for (int64_t j = 0; j < n; j++)
				c[i * n + j] += a[i * k + p] * b[p * n + j];
	double s = now() - t0;

	free(a);
	free(b);
	free(c);
	return 2.0 * (double)(m * n * k) / s / 1e9;
}

/*
 * A Conv (c -> m channels on an hw x hw image, a k x k window), or with
 * matmul set a MatMul of hw x c activations by constant c x m weights
 * (prepacked, as in a session): ViT's linear layers, hw = 197 tokens.
 */
struct layer {
	const char *name;
	int64_t c, m, hw, k, stride, group;
	bool matmul;
};

static double cpu_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* GFLOP per CPU-second of the last multi-threaded measurement (work inflation). */
static double last_cpu_gflops;
/* The last measurement's kernel, and its Winograd phases' CPU seconds (all 0: none). */
static const char *last_kernel;
static double last_phase_s[3];

static double conv_gflops(const struct layer *l, uint32_t threads, bool low)
{
	struct ert_graph *g = ert_graph_create();
	int64_t group = l->group ? l->group : 1;
	int64_t xd[4] = { 1, l->c, l->hw, l->hw }, wd[4] = { l->m, l->c / group, l->k, l->k };
	int rank = 4;

	if (l->matmul) {
		rank = 2;
		xd[0] = l->hw;
		xd[1] = l->c;
		wd[0] = l->c;
		wd[1] = l->m;
	}
	int32_t in[2], out;
	int64_t pad = l->k / 2, pads[4] = { pad, pad, pad, pad };
	int64_t st[2] = { l->stride, l->stride };

	in[0] = ert_graph_add_tensor(g, "x", ERT_DTYPE_FLOAT32, rank, xd);
	in[1] = ert_graph_add_tensor(g, "w", ERT_DTYPE_FLOAT32, rank, wd);
	out = ert_graph_add_tensor(g, "y", ERT_DTYPE_FLOAT32, -1, NULL);
	int32_t ni = ert_graph_add_node(g, l->matmul ? ERT_OP_MatMul : ERT_OP_Conv, "c", 2, in, 1,
					&out);
	struct ert_node *node = &g->nodes[ni];

	if (!l->matmul) {
		ert_node_set_attr_ints(g, node, "pads", pads, 4);
		ert_node_set_attr_ints(g, node, "strides", st, 2);
		ert_node_set_attr_int(g, node, "group", group);
	}

	struct ert_value xv = { .dtype = ERT_DTYPE_FLOAT32, .rank = rank };
	struct ert_value wv = { .dtype = ERT_DTYPE_FLOAT32, .rank = rank };
	struct ert_value yv;

	memcpy(xv.dims, xd, sizeof(xd[0]) * (size_t)rank);
	memcpy(wv.dims, wd, sizeof(wd[0]) * (size_t)rank);
	ert_value_finish(&xv);
	ert_value_finish(&wv);
	xv.data = calloc(1, xv.nbytes);
	wv.data = calloc(1, wv.nbytes);
	for (int64_t i = 0; i < xv.numel; i++)
		((float *)xv.data)[i] = (float)(i % 7) * 0.1f;
	for (int64_t i = 0; i < wv.numel; i++)
		((float *)wv.data)[i] = (float)(i % 5) * 0.01f;

	/* Shape inference through eval_node, then compute() directly on a pool. */
	const struct ert_value *inv[2] = { &xv, &wv };
	struct ert_err err;

	if (ert_cpu_eval_node(g, node, inv, 2, &yv, 1, &err) != ERT_OK) {
		fprintf(stderr, "%s: %s\n", l->name, err.msg);
		exit(1);
	}
	const struct ert_cpu_op *k = ert_cpu_op_find(l->matmul ? ERT_OP_MatMul : ERT_OP_Conv);
	struct ert_value *xin[2] = { &xv, &wv }, *yout[1] = { &yv };
	bool cst[2] = { false, true };
	struct ert_exec x = { .graph = g, .node = node, .in = xin, .out = yout, .n_in = 2,
			      .n_out = 1, .in_const = cst };
	struct ert_cpu cpu = { .pool = ert_threadpool_create(threads), .num_threads = threads,
			       .wino_phase_s = last_phase_s };
	struct ert_err ierr;

	/* the level a session would run (ERT_CPU_ISA applies) */
	if (ert_cpu_isa_choose(0, &cpu.isa, &ierr) != ERT_OK)
		cpu.isa = ERT_ISA_SCALAR;
	cpu.gemm = ert_sgemm_kernel_for(cpu.isa);
	if (low) {
		cpu.precision = ERT_LEVEL_LOW;
		cpu.gemm_low = ert_sbgemm_kernel_for(cpu.isa);
	}

	x.workspace_size = k->workspace ? k->workspace(&cpu, &x) : 0;
	x.workspace = malloc(x.workspace_size + 1);
	if (k->prepare)
		k->prepare(&cpu, &x, &err);
	last_kernel = x.kernel;
	/* a first run faults the workspace and output pages in; not counted */
	k->compute(&cpu, &x, &err);
	memset(last_phase_s, 0, sizeof(last_phase_s));
	double best = 1e30, best_cpu = 1e30;

	bench_clock = threads == 1 ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC;
	const char *reps_env = getenv("GEMM_BENCH_REPS");
	int reps = reps_env && atoi(reps_env) > 0 ? atoi(reps_env) : 5;
	const bool cold = getenv("GEMM_BENCH_COLD") && atoi(getenv("GEMM_BENCH_COLD")) > 0;

	for (int rep = 0; rep < reps; rep++) {
		if (cold && !l->matmul)
			bench_flush_packed(x.state);
		double t0 = now(), c0 = cpu_now();

		k->compute(&cpu, &x, &err);
		double s = now() - t0, cs = cpu_now() - c0;

		best = s < best ? s : best;
		best_cpu = cs < best_cpu ? cs : best_cpu;
	}
	if (k->release)
		k->release(&x);
	double flops = l->matmul ? 2.0 * (double)(l->hw * l->c * l->m)
		       : 2.0 * (double)(l->m * yv.dims[2] * yv.dims[3] * (l->c / group) * l->k *
					l->k);

	last_cpu_gflops = flops / best_cpu / 1e9;
	ert_threadpool_destroy(cpu.pool);
	free(x.workspace);
	free(xv.data);
	free(wv.data);
	free(yv.data);
	ert_graph_destroy(g);
	return flops / best / 1e9;
}

/* GFLOP/s of @k alone: 8 x 48 blocks of C from K = 256 panels that stay in L1. */
static double ukernel_gflops(const struct ert_sgemm_kernel *k)
{
	const int64_t K = 256, kc = k->bf16 ? K / 2 : K, reps = 20000;
	float *a = aligned_alloc(64, sizeof(float) * (size_t)(K * k->mr));
	float *b = aligned_alloc(64, sizeof(float) * (size_t)(K * k->nr));
	float *c = aligned_alloc(64, sizeof(float) * (size_t)(k->mr * k->nr));
	struct ert_sgemm_epi e = { .alpha = 1.0f, .load_c = true };

	/* small values: as floats, and as bf16 pairs read as words, nothing overflows */
	for (int64_t i = 0; i < K * k->mr; i++)
		a[i] = 1e-3f;
	for (int64_t i = 0; i < K * k->nr; i++)
		b[i] = 1e-3f;
	memset(c, 0, sizeof(float) * (size_t)(k->mr * k->nr));
	bench_clock = CLOCK_PROCESS_CPUTIME_ID;
	double t0 = now();

	for (int64_t r = 0; r < reps; r++)
		k->fn(kc, a, b, k->nr, c, k->nr, k->mr, k->nr, &e);
	double s = now() - t0;

	free(a);
	free(b);
	free(c);
	return 2.0 * (double)(reps * K * k->mr * k->nr) / s / 1e9;
}

/*
 * vit_s16's linear layers in a model's order (12 blocks of qkv, proj, fc1
 * with its bias and GELU, fc2 with its bias; each its own weights, 85 MB in
 * all, so every layer's B comes from L3 or memory as in a model run, and
 * its A is the C an earlier layer wrote), on @threads threads: the time of
 * each kind of layer, summed over the blocks, per run (best and median of
 * @runs; process CPU time at 1 thread, wall time otherwise). With @warm,
 * each layer runs twice in a row and the second run is timed: its weights
 * then come from L2 and L3, as in gemm-bench's single layers.
 */
struct chain_op {
	struct ert_graph *g;
	struct ert_exec x;
	struct ert_value *in[3], *out[1];
	bool cst[3];
};

static void chain_op_init(struct chain_op *o, struct ert_cpu *cpu, struct ert_value *a,
			  struct ert_value *y, int64_t k, int64_t n, bool gelu)
{
	int64_t wd[2] = { k, n }, bd[1] = { n };
	struct ert_value *w = calloc(1, sizeof(*w)), *b = calloc(1, sizeof(*b));
	struct ert_err err;
	int32_t in[3], out;

	o->g = ert_graph_create();
	in[0] = ert_graph_add_tensor(o->g, "a", ERT_DTYPE_FLOAT32, a->rank, a->dims);
	in[1] = ert_graph_add_tensor(o->g, "w", ERT_DTYPE_FLOAT32, 2, wd);
	in[2] = ert_graph_add_tensor(o->g, "b", ERT_DTYPE_FLOAT32, 1, bd);
	out = ert_graph_add_tensor(o->g, "y", ERT_DTYPE_FLOAT32, -1, NULL);
	int32_t ni = ert_graph_add_node(o->g, ERT_OP_MatMul, "mm", 3, in, 1, &out);
	struct ert_node *node = &o->g->nodes[ni];

	ert_node_set_attr_int(o->g, node, "ert.bias", 1);
	if (gelu)
		ert_node_set_attr_int(o->g, node, "ert.act", 8 /* ERT_ACT_GELU */);
	*w = (struct ert_value){ .dtype = ERT_DTYPE_FLOAT32, .rank = 2 };
	memcpy(w->dims, wd, sizeof(wd));
	ert_value_finish(w);
	*b = (struct ert_value){ .dtype = ERT_DTYPE_FLOAT32, .rank = 1 };
	b->dims[0] = n;
	ert_value_finish(b);
	w->data = malloc(w->nbytes);
	b->data = malloc(b->nbytes);
	for (int64_t i = 0; i < w->numel; i++)
		((float *)w->data)[i] = (float)((i * 7 + n) % 13 - 6) * 0.01f;
	for (int64_t i = 0; i < n; i++)
		((float *)b->data)[i] = (float)(i % 3) * 0.01f;

	const struct ert_value *inv[3] = { a, w, b };

	if (ert_cpu_eval_node(o->g, node, inv, 3, y, 1, &err) != ERT_OK) {
		fprintf(stderr, "chain: %s\n", err.msg);
		exit(1);
	}
	const struct ert_cpu_op *op = ert_cpu_op_find(ERT_OP_MatMul);

	o->in[0] = a;
	o->in[1] = w;
	o->in[2] = b;
	o->out[0] = y;
	o->cst[0] = false;
	o->cst[1] = o->cst[2] = true;
	o->x = (struct ert_exec){ .graph = o->g, .node = node, .in = o->in, .out = o->out,
				  .n_in = 3, .n_out = 1, .in_const = o->cst };
	o->x.workspace_size = op->workspace(cpu, &o->x);
	if (op->prepare)
		op->prepare(cpu, &o->x, &err);
}

static void vit_chain(uint32_t threads, int runs, bool warm)
{
	enum { BLOCKS = 12, KINDS = 4 };
	static const char *names[KINDS] = { "qkv 197x384x1152", "proj 197x384x384",
					    "fc1+bias+gelu 197x384x1536", "fc2+bias 197x1536x384" };
	static const int64_t kn[KINDS][2] = { { 384, 1152 }, { 384, 384 }, { 384, 1536 },
					      { 1536, 384 } };
	struct ert_cpu cpu = { .pool = ert_threadpool_create(threads), .num_threads = threads };
	struct ert_err ierr;
	struct ert_value v[4]; /* x 197x384, qkv 197x1152, h 197x1536, x2 197x384 */
	int64_t cols[4] = { 384, 1152, 1536, 384 };
	struct chain_op *ops = calloc(BLOCKS * KINDS, sizeof(*ops));
	size_t ws_max = 0;
	double (*t)[KINDS] = calloc((size_t)runs, sizeof(*t));
	const struct ert_cpu_op *k = ert_cpu_op_find(ERT_OP_MatMul);
	struct ert_err err;

	if (ert_cpu_isa_choose(0, &cpu.isa, &ierr) != ERT_OK)
		cpu.isa = ERT_ISA_SCALAR;
	cpu.gemm = ert_sgemm_kernel_for(cpu.isa);
	for (int i = 0; i < 4; i++) {
		v[i] = (struct ert_value){ .dtype = ERT_DTYPE_FLOAT32, .rank = 3 };
		v[i].dims[0] = 1;
		v[i].dims[1] = 197;
		v[i].dims[2] = cols[i];
		ert_value_finish(&v[i]);
		v[i].data = calloc(1, v[i].nbytes);
		for (int64_t j = 0; j < v[i].numel; j++)
			((float *)v[i].data)[j] = (float)(j % 7) * 0.1f;
	}
	for (int b = 0; b < BLOCKS; b++) {
		struct chain_op *o = ops + b * KINDS;
		struct ert_value y;

		/* qkv: x -> qkv; proj: x2 -> x (the attention not run); fc1: x -> h; fc2: h -> x2 */
		chain_op_init(&o[0], &cpu, &v[0], &y, 384, 1152, false);
		free(y.data);
		chain_op_init(&o[1], &cpu, &v[3], &y, 384, 384, false);
		free(y.data);
		chain_op_init(&o[2], &cpu, &v[0], &y, 384, 1536, true);
		free(y.data);
		chain_op_init(&o[3], &cpu, &v[2], &y, 1536, 384, false);
		free(y.data);
		o[0].out[0] = &v[1];
		o[1].out[0] = &v[0];
		o[2].out[0] = &v[2];
		o[3].out[0] = &v[3];
		for (int i = 0; i < KINDS; i++)
			ws_max = o[i].x.workspace_size > ws_max ? o[i].x.workspace_size : ws_max;
	}
	void *ws = aligned_alloc(64, (ws_max + 63) / 64 * 64);

	memset(ws, 0, (ws_max + 63) / 64 * 64);
	bench_clock = threads == 1 ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC;
	for (int r = -1; r < runs; r++) {
		double acc[KINDS] = { 0 };

		for (int i = 0; i < BLOCKS * KINDS; i++) {
			ops[i].x.workspace = ws;
			if (warm)
				k->compute(&cpu, &ops[i].x, &err);
			double t0 = now();

			k->compute(&cpu, &ops[i].x, &err);
			acc[i % KINDS] += now() - t0;
		}
		if (r >= 0)
			memcpy(t[r], acc, sizeof(acc));
	}
	printf("vit chain, %u thread(s), %d runs: ms a run per kind (12 layers), best / median, "
	       "GFLOP/s at the median\n", threads, runs);
	double sum_best = 0, sum_med = 0;

	for (int i = 0; i < KINDS; i++) {
		double *col = malloc(sizeof(double) * (size_t)runs);

		for (int r = 0; r < runs; r++)
			col[r] = t[r][i];
		for (int a = 0; a < runs; a++)
			for (int b = a + 1; b < runs; b++)
				if (col[b] < col[a]) {
					double tmp = col[a];
					col[a] = col[b];
					col[b] = tmp;
				}
		double flops = 2.0 * 197 * (double)(kn[i][0] * kn[i][1]) * BLOCKS;

		printf("  %-28s %7.3f / %7.3f ms  %6.1f GFLOP/s\n", names[i], 1e3 * col[0],
		       1e3 * col[runs / 2], flops / col[runs / 2] / 1e9);
		sum_best += col[0];
		sum_med += col[runs / 2];
		free(col);
	}
	printf("  %-28s %7.3f / %7.3f ms\n", "all", 1e3 * sum_best, 1e3 * sum_med);
	ert_threadpool_destroy(cpu.pool);
	free(t);
	free(ws);
}

int main(int argc, char **argv)
{
	static const struct layer layers[] = {
		/* every ResNet-50 convolution shape (torchvision v1.5: stride on the 3x3) */
		{ "1x1 64->64 56x56", 64, 64, 56, 1, 1, 1, false },
		{ "1x1 64->256 56x56", 64, 256, 56, 1, 1, 1, false },
		{ "1x1 256->64 56x56", 256, 64, 56, 1, 1, 1, false },
		{ "1x1 256->128 56x56", 256, 128, 56, 1, 1, 1, false },
		{ "1x1/2 256->512 56x56", 256, 512, 56, 1, 2, 1, false },
		{ "1x1 128->512 28x28", 128, 512, 28, 1, 1, 1, false },
		{ "1x1 512->128 28x28", 512, 128, 28, 1, 1, 1, false },
		{ "1x1 512->256 28x28", 512, 256, 28, 1, 1, 1, false },
		{ "1x1/2 512->1024 28x28", 512, 1024, 28, 1, 2, 1, false },
		{ "1x1 256->1024 14x14", 256, 1024, 14, 1, 1, 1, false },
		{ "1x1 1024->256 14x14", 1024, 256, 14, 1, 1, 1, false },
		{ "1x1 1024->512 14x14", 1024, 512, 14, 1, 1, 1, false },
		{ "1x1/2 1024->2048 14x14", 1024, 2048, 14, 1, 2, 1, false },
		{ "1x1 512->2048 7x7", 512, 2048, 7, 1, 1, 1, false },
		{ "1x1 2048->512 7x7", 2048, 512, 7, 1, 1, 1, false },
		{ "3x3 64->64 56x56", 64, 64, 56, 3, 1, 1, false },
		{ "3x3/2 128->128 56x56", 128, 128, 56, 3, 2, 1, false },
		{ "3x3 128->128 28x28", 128, 128, 28, 3, 1, 1, false },
		{ "3x3/2 256->256 28x28", 256, 256, 28, 3, 2, 1, false },
		{ "3x3 256->256 14x14", 256, 256, 14, 3, 1, 1, false },
		{ "3x3/2 512->512 14x14", 512, 512, 14, 3, 2, 1, false },
		{ "3x3 512->512 7x7", 512, 512, 7, 3, 1, 1, false },
		{ "7x7/2 3->64 224x224", 3, 64, 224, 7, 2, 1, false },
		/* the ResNet-18 shapes ResNet-50 lacks (3x3 64->64 at 56x56, 128, 256, 512 above) */
		{ "3x3/2 64->128 56x56", 64, 128, 56, 3, 2, 1, false },
		{ "1x1/2 64->128 56x56", 64, 128, 56, 1, 2, 1, false },
		{ "3x3/2 128->256 28x28", 128, 256, 28, 3, 2, 1, false },
		{ "1x1/2 128->256 28x28", 128, 256, 28, 1, 2, 1, false },
		{ "3x3/2 256->512 14x14", 256, 512, 14, 3, 2, 1, false },
		{ "1x1/2 256->512 14x14", 256, 512, 14, 1, 2, 1, false },
		/* MobileNet-v2 shapes: stem, small pointwise, depthwise */
		{ "3x3/2 3->32 224x224", 3, 32, 224, 3, 2, 1, false },
		{ "1x1 32->16 112x112", 32, 16, 112, 1, 1, 1, false },
		{ "dw3x3 32 112x112", 32, 32, 112, 3, 1, 32, false },
		{ "dw3x3/2 96 112x112", 96, 96, 112, 3, 2, 96, false },
		/* vit_s16's linear layers: 197 tokens, weights prepacked (name "vit") */
		{ "vit fc1 197x384x1536", 384, 1536, 197, 1, 1, 1, true },
		{ "vit fc2 197x1536x384", 1536, 384, 197, 1, 1, 1, true },
		{ "vit qkv 197x384x1152", 384, 1152, 197, 1, 1, 1, true },
		{ "vit proj 197x384x384", 384, 384, 197, 1, 1, 1, true },
	};
	uint32_t threads = argc > 1 ? (uint32_t)atoi(argv[1]) : 2;
	const char *only = argc > 2 ? argv[2] : NULL;

	if (only && !strcmp(only, "vitchain")) {
		vit_chain(threads, argc > 3 ? atoi(argv[3]) : 30, argc > 4 && !strcmp(argv[4], "warm"));
		return 0;
	}
	bench_clock = CLOCK_PROCESS_CPUTIME_ID;
	double ref = naive_gflops(256, 784, 256);

	enum ert_cpu_isa isa;
	struct ert_err ierr;

	if (ert_cpu_isa_choose(0, &isa, &ierr) != ERT_OK)
		isa = ERT_ISA_SCALAR;
	const struct ert_sgemm_kernel *bf16 = ert_sbgemm_kernel_for(isa);

	printf("naive reference GEMM: %.2f GFLOP/s\n", ref);
	printf("micro-kernel %s: %.2f GFLOP/s\n", ert_sgemm_kernel_for(isa)->name,
	       ukernel_gflops(ert_sgemm_kernel_for(isa)));
	if (bf16)
		printf("micro-kernel %s: %.2f GFLOP/s\n", bf16->name, ukernel_gflops(bf16));
	for (size_t i = 0; i < sizeof(layers) / sizeof(layers[0]); i++) {
		if (only && !strstr(layers[i].name, only))
			continue;
		double g1 = conv_gflops(&layers[i], 1, false);
		double ph[3] = { last_phase_s[0], last_phase_s[1], last_phase_s[2] };
		double ph_all = ph[0] + ph[1] + ph[2];
		const char *kname = last_kernel;
		double gn = conv_gflops(&layers[i], threads, false);

		printf("%-22s 1 thread %6.2f GFLOP/s (x%.1f naive)  %u threads %6.2f GFLOP/s "
		       "(x%.2f; %.2f per CPU-second)  %s",
		       layers[i].name, g1, g1 / ref, threads, gn, gn / g1, last_cpu_gflops,
		       kname ? kname : "?");
		if (ph_all > 0)
			printf(" [input %.0f%% GEMM %.0f%% output %.0f%%]", 100 * ph[0] / ph_all,
			       100 * ph[1] / ph_all, 100 * ph[2] / ph_all);
		if (bf16) {
			double gl = conv_gflops(&layers[i], 1, true);

			printf("  LOW 1 thread %6.2f GFLOP/s (x%.2f)", gl, gl / g1);
		}
		printf("\n");
	}
	return 0;
}
