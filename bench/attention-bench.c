/* SPDX-License-Identifier: MIT */
/*
 * attention-bench: FusedAttention (cpu/ops/attention.c) against the four ops
 * it replaces (MatMul with folded Transposes, Mul by the scale, Softmax,
 * MatMul), one vit_s16 layer's attention (6 heads, 197 tokens, head dim
 * 64), at every kernel level the CPU has, on 1 and 2 threads (or THREADS).
 *
 *   cc -O2 -D_GNU_SOURCE -Ilibruntime/include -Ilibruntime -Ibackends -I. \
 *      bench/attention-bench.c build/libedgert.a -lprotobuf-c -ljpeg -lpng16 -lz \
 *      -ldrm -lOpenCL -lvulkan -lm -lpthread -o build/attention-bench
 *   taskset -c 2,3 build/attention-bench [REPEATS [THREADS [LEVEL]]]
 *
 * The kernels run as a session runs them: outputs and workspaces allocated
 * once, prepare() once, then compute() REPEATS times (default 200) after a
 * warm-up; the best and the median wall time per layer, in ms, and GFLOP/s
 * of the two products, and the unfused median over the fused one. The fused
 * and unfused runs alternate in rounds, so a drift of the machine hits
 * both. LEVEL (scalar, avx2, avx512, avx512vnni, amx): that level alone.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu/cpu-impl.h"
#include "cpu/gemm/sgemm.h"
#include "cpu/isa.h"

#define HEADS 6
#define TOKENS 197
#define HEAD_DIM 64
#define ROUNDS 5

struct step {
	struct ert_graph *g;
	struct ert_node *n;
	struct ert_value *in[3], out;
	struct ert_value *outp[1];
	bool in_const[3];
	struct ert_exec x;
	const struct ert_cpu_op *k;
};

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static struct ert_value val(int32_t rank, const int64_t *dims, void *data)
{
	struct ert_value v;

	memset(&v, 0, sizeof(v));
	ert_value_set_shape(&v, ERT_DTYPE_FLOAT32, rank, dims);
	ert_value_finish(&v);
	v.data = data;
	return v;
}

static void perm(struct step *s, const char *name, const int64_t *p)
{
	if (!ert_node_set_attr_ints(s->g, s->n, name, p, 4))
		abort();
}

/* A step of @op on @n_in inputs, its output allocated (infer, workspace, prepare). */
static void step_init(struct step *s, enum ert_op op, struct ert_value **in, uint32_t n_in)
{
	int32_t t[4];
	int ni;

	memset(s, 0, sizeof(*s));
	s->g = ert_graph_create();
	for (uint32_t i = 0; i <= n_in; i++)
		t[i] = ert_graph_add_tensor(s->g, i < n_in ? "in" : "out", ERT_DTYPE_FLOAT32, -1, NULL);
	ni = ert_graph_add_node(s->g, op, "n", n_in, t, 1, &t[n_in]);
	if (!s->g || ni < 0)
		abort();
	s->n = &s->g->nodes[ni];
	s->n->opset = 20;
	for (uint32_t i = 0; i < n_in; i++)
		s->in[i] = in[i];
	s->outp[0] = &s->out;
	s->k = ert_cpu_op_find(op);
}

static void step_plan(struct step *s, struct ert_cpu *cpu, uint32_t n_in)
{
	struct ert_err err = { "" };
	struct ert_infer_ctx ic = { .graph = s->g, .node = s->n,
				    .in = (const struct ert_value *const *)s->in, .out = s->outp,
				    .n_in = n_in, .n_out = 1, .err = &err };

	if (ert_op_infer(s->n->op)(&ic) != ERT_OK) {
		fprintf(stderr, "infer: %s\n", err.msg);
		exit(1);
	}
	ert_value_finish(&s->out);
	s->out.data = aligned_alloc(64, (s->out.nbytes + 63) / 64 * 64);
	s->x = (struct ert_exec){ .graph = s->g, .node = s->n, .in = s->in, .out = s->outp,
				  .n_in = n_in, .n_out = 1, .in_const = s->in_const };
	s->x.workspace_size = s->k->workspace ? s->k->workspace(cpu, &s->x) : 0;
	s->x.workspace = s->x.workspace_size ? aligned_alloc(64, (s->x.workspace_size + 63) / 64 * 64)
					     : NULL;
	if (s->k->prepare && s->k->prepare(cpu, &s->x, &err) != ERT_OK) {
		fprintf(stderr, "prepare: %s\n", err.msg);
		exit(1);
	}
}

static void step_run(struct step *s, struct ert_cpu *cpu)
{
	struct ert_err err = { "" };

	if (s->k->compute(cpu, &s->x, &err) != ERT_OK) {
		fprintf(stderr, "compute: %s\n", err.msg);
		exit(1);
	}
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 200;
	int max_threads = argc > 2 ? atoi(argv[2]) : 2;
	const char *only = argc > 3 ? argv[3] : NULL;
	int64_t d4[4] = { 1, TOKENS, HEADS, HEAD_DIM }, one = 1;
	static const int64_t pq[4] = { 0, 2, 1, 3 }, pk[4] = { 0, 2, 3, 1 };
	size_t n = (size_t)TOKENS * HEADS * HEAD_DIM;
	float *q = malloc(n * 4), *k = malloc(n * 4), *v = malloc(n * 4), scale = 0.125f;
	struct ert_value vq = val(4, d4, q), vk = val(4, d4, k), vv = val(4, d4, v);
	struct ert_value vs = val(0, &one, &scale);
	double flop = 4.0 * HEADS * TOKENS * TOKENS * HEAD_DIM;
	double *t = malloc((size_t)(reps > 0 ? reps : 1) * sizeof(double));

	if (reps < 1 || max_threads < 1 || !q || !k || !v || !t)
		return 1;
	for (size_t i = 0; i < n; i++) {
		q[i] = (float)((i * 7919) % 1000) / 1000.0f - 0.5f;
		k[i] = (float)((i * 104729) % 1000) / 1000.0f - 0.5f;
		v[i] = (float)((i * 1299709) % 1000) / 1000.0f - 0.5f;
	}
	printf("vit_s16 attention, %d heads x %d tokens x %d: ms per layer (best / median of %d), GFLOP/s of the best\n",
	       HEADS, TOKENS, HEAD_DIM, reps);
	for (int isa = ERT_ISA_SCALAR; isa <= (int)ert_cpu_isa_best(); isa++) {
		if (only && strcmp(only, ert_cpu_isa_name((enum ert_cpu_isa)isa)))
			continue;
		for (int th = 1; th <= max_threads; th++) {
			struct ert_threadpool *pool = th > 1 ? ert_threadpool_create((uint32_t)th) : NULL;
			struct ert_cpu cpu = { .pool = pool, .num_threads = (uint32_t)th,
					       .isa = (enum ert_cpu_isa)isa,
					       .gemm = ert_sgemm_kernel_for((enum ert_cpu_isa)isa),
					       .precision = ERT_LEVEL_NORMAL, .memory = ERT_LEVEL_NORMAL };
			struct step u[4], f;
			double best[2] = { 1e9, 1e9 }, med[2] = { 0, 0 };

			step_init(&u[0], ERT_OP_MatMul, (struct ert_value *[]){ &vq, &vk }, 2);
			perm(&u[0], "ert.perm_a", pq);
			perm(&u[0], "ert.perm_b", pk);
			step_plan(&u[0], &cpu, 2);
			step_init(&u[1], ERT_OP_Mul, (struct ert_value *[]){ &u[0].out, &vs }, 2);
			step_plan(&u[1], &cpu, 2);
			step_init(&u[2], ERT_OP_Softmax, (struct ert_value *[]){ &u[1].out }, 1);
			ert_node_set_attr_int(u[2].g, u[2].n, "axis", -1);
			step_plan(&u[2], &cpu, 1);
			step_init(&u[3], ERT_OP_MatMul, (struct ert_value *[]){ &u[2].out, &vv }, 2);
			perm(&u[3], "ert.perm_b", pq);
			perm(&u[3], "ert.perm_y", pq);
			step_plan(&u[3], &cpu, 2);
			step_init(&f, ERT_OP_FusedAttention, (struct ert_value *[]){ &vq, &vk, &vv }, 3);
			perm(&f, "perm_q", pq);
			perm(&f, "perm_kt", pk);
			perm(&f, "perm_v", pq);
			perm(&f, "perm_y", pq);
			ert_node_set_attr_float(f.g, f.n, "scale", scale);
			step_plan(&f, &cpu, 3);
			for (int round = 0; round < ROUNDS; round++) {
				for (int w = 0; w < 2; w++) {
					for (int r = -3; r < reps; r++) {
						double t0 = now();

						if (w)
							step_run(&f, &cpu);
						else
							for (int s = 0; s < 4; s++)
								step_run(&u[s], &cpu);
						if (r >= 0)
							t[r] = now() - t0;
					}
					qsort(t, (size_t)reps, sizeof(*t), cmp_d);
					best[w] = t[0] < best[w] ? t[0] : best[w];
					med[w] += t[reps / 2] / ROUNDS;
				}
			}
			if (memcmp(f.out.data, u[3].out.data, f.out.nbytes))
				printf("  (%s: fused and unfused outputs differ)\n",
				       ert_cpu_isa_name((enum ert_cpu_isa)isa));
			printf("%-8s %d thread%s  unfused %7.3f / %7.3f  %6.1f   fused %7.3f / %7.3f  %6.1f   x%.2f\n",
			       ert_cpu_isa_name((enum ert_cpu_isa)isa), th, th > 1 ? "s" : " ",
			       best[0] * 1e3, med[0] * 1e3, flop / best[0] * 1e-9, best[1] * 1e3,
			       med[1] * 1e3, flop / best[1] * 1e-9, med[0] / med[1]);
			for (int s = 0; s < 4; s++) {
				free(u[s].out.data);
				free(u[s].x.workspace);
				if (u[s].k->release && u[s].x.state)
					u[s].k->release(&u[s].x);
				ert_graph_destroy(u[s].g);
			}
			free(f.out.data);
			free(f.x.workspace);
			ert_graph_destroy(f.g);
			ert_threadpool_destroy(pool);
		}
	}
	free(q);
	free(k);
	free(v);
	free(t);
	return 0;
}
