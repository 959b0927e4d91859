/* SPDX-License-Identifier: MIT */
/*
 * irblock-bench: mobilenet_v2's inverted-residual blocks (expand 1x1 ->
 * depthwise 3x3 -> project 1x1, ReLU6, the residual where the block has
 * one) as sessions of their own, optimised with the block fused
 * (ERT_FUSE_IRBLOCK=1: one InvertedResidual where the pass takes it) and
 * not (=0), the two sessions' runs alternated in one process; the outputs
 * compared bit for bit.
 *
 *   make bench-progs; build/bench/irblock-bench [THREADS [RUNS [BLOCK]]]
 *
 * Per block: the best and the median of RUNS (default 30) runs of each, in
 * ms of process CPU time on 1 thread (a shared machine disturbs it less),
 * of wall time on more. BLOCK: only that line of the table (0-8). "fused"
 * says how many InvertedResidual nodes the pass made (0: the block is
 * under ERT_OPT_IRBLOCK_MIN_BYTES, both sessions run the Convs).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "edgert.h"
#include "ert-graph.h"
#include "format/ert-format.h"
#include "opt/opt-private.h"
#include "bench-util.h"

static uint32_t seed;

static float frand(void)
{
	seed = seed * 1664525u + 1013904223u;
	return (float)(seed >> 8) / 16777216.0f - 0.5f;
}

/* A constant of @n seeded floats, [d0, d1, d2, d3] (rank @rank). */
static int32_t add_w(struct ert_graph *g, const char *name, int32_t rank, int64_t d0, int64_t d1,
		     int64_t d2, int64_t d3)
{
	int64_t dims[4] = { d0, d1, d2, d3 }, n = 1;
	float *p;

	for (int32_t i = 0; i < rank; i++)
		n *= dims[i];
	p = malloc((size_t)n * sizeof(float));
	if (!p)
		abort();
	for (int64_t i = 0; i < n; i++)
		p[i] = frand();
	return ert_opt_add_const(g, name, ERT_DTYPE_FLOAT32, rank, dims, p,
				 (size_t)n * sizeof(float));
}

/* A Conv of @x into a new tensor: ReLU6 unless it takes the residual @res (>= 0). */
static int32_t add_conv(struct ert_graph *g, const char *name, int32_t x, int32_t w, int32_t b,
			int32_t res, int64_t group, int64_t k, int64_t s)
{
	int32_t in[4] = { x, w, b, res };
	int32_t y = ert_graph_add_tensor_unique(g, name, ERT_DTYPE_FLOAT32, -1, NULL);
	int32_t ni = ert_graph_add_node(g, ERT_OP_Conv, name, res >= 0 ? 4 : 3, in, 1, &y);
	struct ert_node *n = &g->nodes[ni];
	int64_t ks[2] = { k, k }, pads[4] = { k / 2, k / 2, k / 2, k / 2 }, st[2] = { s, s };
	float clip[2] = { 0.0f, 6.0f };

	n->opset = 13;
	ert_node_set_attr_int(g, n, "group", group);
	ert_node_set_attr_ints(g, n, "kernel_shape", ks, 2);
	ert_node_set_attr_ints(g, n, "pads", pads, 4);
	ert_node_set_attr_ints(g, n, "strides", st, 2);
	if (res >= 0) {
		ert_node_set_attr_int(g, n, "ert.residual", 1);
	} else if (strcmp(name, "project")) {
		ert_node_set_attr_int(g, n, "ert.act", ERT_ACT_CLIP);
		ert_opt_set_attr_floats(g, n, "ert.act_params", clip, 2);
	}
	return y;
}

/* mobilenet_v2's blocks of more than 7x7: input channels, size, expansion, output, stride */
static const struct blk {
	int64_t cin, hw, t, cout, s;
} blks[] = {
	{ 32, 112, 1, 16, 1 }, { 16, 112, 6, 24, 2 }, { 24, 56, 6, 24, 1 }, { 24, 56, 6, 32, 2 },
	{ 32, 28, 6, 32, 1 },  { 32, 28, 6, 64, 2 },  { 64, 14, 6, 64, 1 }, { 64, 14, 6, 96, 1 },
	{ 96, 14, 6, 96, 1 },
};

/* A session of block @b on @threads, fused or not; its InvertedResidual count in @n_irb. */
static ert_session *block_session(const struct blk *b, bool fuse, uint32_t threads, int *n_irb)
{
	struct ert_graph *g = ert_graph_create();
	struct ert_err err = { "" };
	int64_t xd[4] = { 1, b->cin, b->hw, b->hw }, cm = b->cin * b->t;
	int32_t x, e, d, y;
	ert_model *m = NULL;
	ert_session *s = NULL;
	ert_config cfg;
	void *img = NULL;
	size_t size = 0;
	char msg[256];
	ert_tensor *in;
	float *p;

	if (!g)
		abort();
	seed = 7;
	g->opset = 17;
	x = ert_graph_add_tensor(g, "x", ERT_DTYPE_FLOAT32, 4, xd);
	ert_graph_add_input(g, x);
	e = b->t == 1 ? x
		      : add_conv(g, "expand", x, add_w(g, "we", 4, cm, b->cin, 1, 1),
				 add_w(g, "be", 1, cm, 1, 1, 1), -1, 1, 1, 1);
	d = add_conv(g, "dw", e, add_w(g, "wd", 4, cm, 1, 3, 3), add_w(g, "bd", 1, cm, 1, 1, 1), -1,
		     cm, 3, b->s);
	y = add_conv(g, "project", d, add_w(g, "wp", 4, b->cout, cm, 1, 1),
		     add_w(g, "bp", 1, b->cout, 1, 1, 1), b->s == 1 && b->cin == b->cout ? x : -1, 1,
		     1, 1);
	ert_graph_add_output(g, y);
	setenv("ERT_FUSE_IRBLOCK", fuse ? "1" : "0", 1);
	if (ert_graph_optimize(g, &err) != ERT_OK || ert_graph_toposort(g, &err) != ERT_OK ||
	    ert_format_write_memory(g, NULL, &img, &size, &err) != ERT_OK) {
		fprintf(stderr, "irblock-bench: %s\n", err.msg);
		exit(1);
	}
	*n_irb = 0;
	for (uint32_t i = 0; i < g->n_nodes; i++)
		*n_irb += !g->nodes[i].dead && g->nodes[i].op == ERT_OP_InvertedResidual;
	ert_graph_destroy(g);
	ert_config_init(&cfg);
	cfg.num_threads = threads;
	if (ert_model_load_memory(img, size, 1, &m, msg, sizeof(msg)) != ERT_OK ||
	    ert_session_create(m, &cfg, &s) != ERT_OK) {
		fprintf(stderr, "irblock-bench: %s\n", m ? ert_last_error() : msg);
		exit(1);
	}
	free(img);
	ert_model_unref(m);
	in = ert_session_get_input(s, 0);
	p = ert_tensor_data(in);
	for (size_t i = 0; i < ert_tensor_element_count(in); i++)
		p[i] = frand();
	return s;
}

int main(int argc, char **argv)
{
	uint32_t threads = argc > 1 ? (uint32_t)atoi(argv[1]) : 1;
	int runs = argc > 2 ? atoi(argv[2]) : 30, only = argc > 3 ? atoi(argv[3]) : -1;
	clockid_t ck = threads == 1 ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC;
	double sum[2] = { 0, 0 };
	double *t[2];

	if (threads < 1 || threads > 32 || runs < 1) {
		fprintf(stderr, "usage: irblock-bench [THREADS [RUNS [BLOCK]]]\n");
		return 2;
	}
	t[0] = malloc((size_t)runs * sizeof(double));
	t[1] = malloc((size_t)runs * sizeof(double));
	if (!t[0] || !t[1])
		return 1;
	printf("%u thread%s, %s time, best / median of %d runs (ms)\n", threads,
	       threads == 1 ? "" : "s", threads == 1 ? "process CPU" : "wall", runs);
	for (size_t i = 0; i < sizeof(blks) / sizeof(blks[0]); i++) {
		const struct blk *b = &blks[i];
		int n_irb[2];
		ert_session *s[2];
		const ert_tensor *o[2];
		bool same;

		if (only >= 0 && (size_t)only != i)
			continue;
		s[0] = block_session(b, false, threads, &n_irb[0]);
		s[1] = block_session(b, true, threads, &n_irb[1]);
		for (int r = 0; r < 3; r++)
			for (int k = 0; k < 2; k++)
				ert_session_run(s[k]);
		for (int r = 0; r < runs; r++)
			for (int k = 0; k < 2; k++) {
				double t0 = bench_now(ck);

				ert_session_run(s[k]);
				t[k][r] = bench_now(ck) - t0;
			}
		o[0] = ert_session_get_output(s[0], 0);
		o[1] = ert_session_get_output(s[1], 0);
		same = !memcmp(ert_tensor_data(o[0]), ert_tensor_data(o[1]),
			       ert_tensor_byte_size(o[0]));
		qsort(t[0], (size_t)runs, sizeof(double), bench_cmp_double);
		qsort(t[1], (size_t)runs, sizeof(double), bench_cmp_double);
		printf("%zu: %3lld -> %3lld -> %3lld at %3lldx%-3lld s%lld  unfused %.3f / %.3f  "
		       "fused (%d) %.3f / %.3f  ratio %.2f  %s\n",
		       i, (long long)b->cin, (long long)(b->cin * b->t), (long long)b->cout,
		       (long long)b->hw, (long long)b->hw, (long long)b->s, t[0][0] * 1e3,
		       t[0][runs / 2] * 1e3, n_irb[1], t[1][0] * 1e3, t[1][runs / 2] * 1e3,
		       t[1][0] / t[0][0], same ? "same bits" : "OUTPUTS DIFFER");
		sum[0] += t[0][0];
		sum[1] += t[1][0];
		ert_session_destroy(s[0]);
		ert_session_destroy(s[1]);
	}
	printf("sum of the bests: unfused %.3f, fused %.3f ms\n", sum[0] * 1e3, sum[1] * 1e3);
	free(t[0]);
	free(t[1]);
	return 0;
}
