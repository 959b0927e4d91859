/* SPDX-License-Identifier: MIT */
/*
 * smallplane-bench: the Convs that run on the small-plane kernels
 * (cpu/conv/conv-smallplane.h) at the sizes of ResNet-50's and ResNet-18's
 * last stages and MobileNet-v2's 7x7 pointwise layers, through the CPU
 * backend's Conv op, their packed weights flushed from every cache level
 * before each timed run (as in a model run, where a layer's weights were
 * last read a whole network ago; "warm" as the third argument leaves them
 * in the caches). Prints the best and median milliseconds of the runs and
 * the GFLOP/s of the median.
 *
 *   make bench-progs    (or as bench/gemm-bench.c's header says, for this file)
 *   build/bench/smallplane-bench [THREADS [NAME-PART [warm]]]
 *
 * SP_BENCH_REPS (environment) sets the number of timed runs (default 30).
 * One thread is timed in process CPU time (a shared machine disturbs it
 * less), more in wall-clock time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu/cpu-impl.h"
#include "cpu/gemm/sgemm.h"
#include "bench-util.h"

struct layer {
	const char *name;
	int64_t c, m, hw, k, stride;
};

static void run_layer(const struct layer *l, uint32_t threads, int reps, bool warm)
{
	struct ert_graph *g = ert_graph_create();
	int64_t xd[4] = { 1, l->c, l->hw, l->hw }, wd[4] = { l->m, l->c, l->k, l->k };
	int64_t pad = l->k / 2, pads[4] = { pad, pad, pad, pad }, st[2] = { l->stride, l->stride };
	int32_t in[2], out;

	in[0] = ert_graph_add_tensor(g, "x", ERT_DTYPE_FLOAT32, 4, xd);
	in[1] = ert_graph_add_tensor(g, "w", ERT_DTYPE_FLOAT32, 4, wd);
	out = ert_graph_add_tensor(g, "y", ERT_DTYPE_FLOAT32, -1, NULL);
	int32_t ni = ert_graph_add_node(g, ERT_OP_Conv, "c", 2, in, 1, &out);
	struct ert_node *node = &g->nodes[ni];

	ert_node_set_attr_ints(g, node, "pads", pads, 4);
	ert_node_set_attr_ints(g, node, "strides", st, 2);

	struct ert_value xv = { .dtype = ERT_DTYPE_FLOAT32, .rank = 4 };
	struct ert_value wv = { .dtype = ERT_DTYPE_FLOAT32, .rank = 4 };
	struct ert_value yv;

	memcpy(xv.dims, xd, sizeof(xd));
	memcpy(wv.dims, wd, sizeof(wd));
	ert_value_finish(&xv);
	ert_value_finish(&wv);
	xv.data = malloc(xv.nbytes);
	wv.data = malloc(wv.nbytes);
	for (int64_t i = 0; i < xv.numel; i++)
		((float *)xv.data)[i] = (float)(i % 7) * 0.1f;
	for (int64_t i = 0; i < wv.numel; i++)
		((float *)wv.data)[i] = (float)(i % 5) * 0.01f;

	const struct ert_value *inv[2] = { &xv, &wv };
	struct ert_err err;

	if (ert_cpu_eval_node(g, node, inv, 2, &yv, 1, &err) != ERT_OK) {
		fprintf(stderr, "%s: %s\n", l->name, err.msg);
		exit(1);
	}
	const struct ert_cpu_op *k = ert_cpu_op_find(ERT_OP_Conv);
	struct ert_value *xin[2] = { &xv, &wv }, *yout[1] = { &yv };
	bool cst[2] = { false, true };
	struct ert_exec x = { .graph = g, .node = node, .in = xin, .out = yout, .n_in = 2,
			      .n_out = 1, .in_const = cst };
	struct ert_cpu cpu = { .pool = ert_threadpool_create(threads), .num_threads = threads };
	struct ert_err ierr;

	if (ert_cpu_isa_choose(0, &cpu.isa, &ierr) != ERT_OK)
		cpu.isa = ERT_ISA_SCALAR;
	cpu.gemm = ert_sgemm_kernel_for(cpu.isa);
	x.workspace_size = k->workspace ? k->workspace(&cpu, &x) : 0;
	x.workspace = malloc(x.workspace_size + 1);
	if (k->prepare)
		k->prepare(&cpu, &x, &err);
	k->compute(&cpu, &x, &err);

	const clockid_t clk = threads == 1 ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC;
	double *t = malloc(sizeof(double) * (size_t)reps);

	for (int r = 0; r < reps; r++) {
		if (!warm)
			bench_flush_packed(x.state);
		double t0 = bench_now(clk);

		k->compute(&cpu, &x, &err);
		t[r] = bench_now(clk) - t0;
	}
	qsort(t, (size_t)reps, sizeof(double), bench_cmp_double);
	double flops = 2.0 * (double)(l->m * yv.dims[2] * yv.dims[3] * l->c * l->k * l->k);

	printf("%-24s best %6.3f  median %6.3f ms  %6.1f GFLOP/s  %s\n", l->name, 1e3 * t[0],
	       1e3 * t[reps / 2], flops / t[reps / 2] / 1e9, x.kernel ? x.kernel : "?");
	if (k->release)
		k->release(&x);
	free(t);
	ert_threadpool_destroy(cpu.pool);
	free(x.workspace);
	free(xv.data);
	free(wv.data);
	free(yv.data);
	ert_graph_destroy(g);
}

int main(int argc, char **argv)
{
	static const struct layer layers[] = {
		/* ResNet-50's last stage (torchvision v1.5: the stride on the 3x3) */
		{ "r50 3x3 512->512 7x7", 512, 512, 7, 3, 1 },
		{ "r50 3x3/2 512->512 14x14", 512, 512, 14, 3, 2 },
		{ "r50 1x1 512->2048 7x7", 512, 2048, 7, 1, 1 },
		{ "r50 1x1 2048->512 7x7", 2048, 512, 7, 1, 1 },
		{ "r50 1x1/2 1024->2048 14", 1024, 2048, 14, 1, 2 },
		{ "r50 3x3/2 256->256 28x28", 256, 256, 28, 3, 2 },
		/* ResNet-18's (its 3x3 512 -> 512 at 7x7 is ResNet-50's) */
		{ "r18 3x3/2 256->512 14x14", 256, 512, 14, 3, 2 },
		{ "r18 1x1/2 256->512 14x14", 256, 512, 14, 1, 2 },
		{ "r18 3x3/2 128->256 28x28", 128, 256, 28, 3, 2 },
		/* MobileNet-v2's 1x1 layers at 7x7 */
		{ "mv2 1x1 160->960 7x7", 160, 960, 7, 1, 1 },
		{ "mv2 1x1 960->160 7x7", 960, 160, 7, 1, 1 },
		{ "mv2 1x1 960->320 7x7", 960, 320, 7, 1, 1 },
		{ "mv2 1x1 320->1280 7x7", 320, 1280, 7, 1, 1 },
	};
	uint32_t threads = argc > 1 ? (uint32_t)atoi(argv[1]) : 1;
	const char *only = argc > 2 ? argv[2] : NULL;
	bool warm = argc > 3 && !strcmp(argv[3], "warm");
	const char *reps_env = getenv("SP_BENCH_REPS");
	int reps = reps_env && atoi(reps_env) > 0 ? atoi(reps_env) : 30;

	if (threads < 1)
		threads = 1;
	for (size_t i = 0; i < sizeof(layers) / sizeof(layers[0]); i++)
		if (!only || strstr(layers[i].name, only))
			run_layer(&layers[i], threads, reps, warm);
	return 0;
}
