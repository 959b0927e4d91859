/* SPDX-License-Identifier: MIT */
/*
 * ert-op-test.h — helpers the test-ops-*.c programs share: a graph of one node
 * with placeholder inputs and outputs, input values over buffers the test owns,
 * and runs through ert_cpu_eval_node(), through the kernel table on a thread
 * pool, or through an infer/compute pair called directly. Everything is static
 * inline, so each program compiles only what it calls.
 */
#ifndef ERT_OP_TEST_H
#define ERT_OP_TEST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu-impl.h"

/* Inputs, and outputs, one node may have here (QLinearConv with "ert.residual" takes 14). */
#define ONE_MAX_IO 14

struct one {
	struct ert_graph *g;
	struct ert_node *n;
	struct ert_value in[ONE_MAX_IO];
	/* what a run passes: &in[i], or NULL set by the test for an omitted input */
	const struct ert_value *inp[ONE_MAX_IO];
	/* the last run's results, malloc'd: the next run or one_fini() frees them */
	struct ert_value out[ONE_MAX_IO];
	/* input buffers from one_in_alloc(), freed by one_fini() */
	void *bufs[ONE_MAX_IO];
	uint32_t n_in, n_out;
	struct ert_err err;
};

typedef ert_status (*one_compute_fn)(struct ert_cpu *cpu, struct ert_exec *x,
				     struct ert_err *err);

/*
 * A new graph holding one @op node of @opset with @n_in inputs "in<i>" and @n_out
 * outputs "out<i>", placeholders of no shape: shapes and dtypes come with the
 * values a run passes. *@node gets the node.
 */
static inline struct ert_graph *one_graph(enum ert_op op, int opset, uint32_t n_in,
					  uint32_t n_out, struct ert_node **node)
{
	int32_t ins[ONE_MAX_IO], outs[ONE_MAX_IO], ni;
	struct ert_graph *g = ert_graph_create();
	char name[16];

	if (!g || n_in > ONE_MAX_IO || n_out > ONE_MAX_IO)
		abort();
	for (uint32_t i = 0; i < n_in; i++) {
		snprintf(name, sizeof(name), "in%u", i);
		ins[i] = ert_graph_add_tensor(g, name, ERT_DTYPE_FLOAT32, -1, NULL);
	}
	for (uint32_t i = 0; i < n_out; i++) {
		snprintf(name, sizeof(name), "out%u", i);
		outs[i] = ert_graph_add_tensor(g, name, ERT_DTYPE_FLOAT32, -1, NULL);
	}
	ni = ert_graph_add_node(g, op, NULL, n_in, ins, n_out, outs);
	if (ni < 0)
		abort();
	*node = &g->nodes[ni];
	(*node)->opset = (uint16_t)opset;
	return g;
}

/* @o: a node as one_graph() makes it, every input passed as o->in[i]. */
static inline void one_init(struct one *o, enum ert_op op, int opset, uint32_t n_in,
			    uint32_t n_out)
{
	memset(o, 0, sizeof(*o));
	o->g = one_graph(op, opset, n_in, n_out, &o->n);
	for (uint32_t i = 0; i < n_in; i++)
		o->inp[i] = &o->in[i];
	o->n_in = n_in;
	o->n_out = n_out;
}

/* A value of @dt and @dims over @data (not copied, not freed). */
static inline struct ert_value mkval(ert_dtype dt, int32_t rank, const int64_t *dims, void *data)
{
	struct ert_value v;

	memset(&v, 0, sizeof(v));
	ert_value_set_shape(&v, dt, rank, dims);
	ert_value_finish(&v);
	v.data = data;
	return v;
}

static inline struct ert_value mkf32(int32_t rank, const int64_t *dims, float *data)
{
	return mkval(ERT_DTYPE_FLOAT32, rank, dims, data);
}

static inline void set_val(struct ert_value *v, ert_dtype dt, int32_t rank, const int64_t *dims,
			   void *data)
{
	*v = mkval(dt, rank, dims, data);
}

static inline void set_f32(struct ert_value *v, int32_t rank, const int64_t *dims, float *data)
{
	*v = mkval(ERT_DTYPE_FLOAT32, rank, dims, data);
}

/* Input @i over @data, passed again if the test had set o->inp[i] to NULL. */
static inline void set_in(struct one *o, uint32_t i, ert_dtype dt, int32_t rank,
			  const int64_t *dims, const void *data)
{
	set_val(&o->in[i], dt, rank, dims, (void *)data);
	o->inp[i] = &o->in[i];
}

/* Input @i of @dt and @dims over a new, uninitialised buffer that one_fini() frees. */
static inline struct ert_value *one_in_alloc(struct one *o, uint32_t i, ert_dtype dt,
					     int32_t rank, const int64_t *dims)
{
	struct ert_value *v = &o->in[i];

	set_val(v, dt, rank, dims, NULL);
	free(o->bufs[i]);
	o->bufs[i] = malloc(v->nbytes ? v->nbytes : 1);
	if (!o->bufs[i])
		abort();
	v->data = o->bufs[i];
	return v;
}

static inline void one_free_out(struct one *o)
{
	for (uint32_t i = 0; i < o->n_out; i++) {
		free(o->out[i].data);
		memset(&o->out[i], 0, sizeof(o->out[i]));
	}
}

/* Evaluate through ert_cpu_eval_node(); a second run replaces the outputs. */
static inline ert_status one_run(struct one *o)
{
	one_free_out(o);
	return ert_cpu_eval_node(o->g, o->n, o->inp, o->n_in, o->out, o->n_out, &o->err);
}

/*
 * Infer with @infer, then call @compute on @cpu (may be NULL for kernels that do
 * not look at it) with no input constant and no workspace. Outputs are calloc'd
 * with a spare byte (zero-sized ones too); the next run or one_fini() frees them.
 */
static inline ert_status one_run_kernel(struct one *o, ert_infer_fn infer, one_compute_fn compute,
					struct ert_cpu *cpu)
{
	struct ert_value *inp[ONE_MAX_IO], *outp[ONE_MAX_IO];
	bool in_const[ONE_MAX_IO] = { false };
	ert_status st;

	one_free_out(o);
	for (uint32_t i = 0; i < o->n_out; i++)
		outp[i] = &o->out[i];
	for (uint32_t i = 0; i < o->n_in; i++)
		inp[i] = (struct ert_value *)o->inp[i];
	struct ert_infer_ctx ic = { .graph = o->g, .node = o->n, .in = o->inp, .out = outp,
				    .n_in = o->n_in, .n_out = o->n_out, .err = &o->err };

	st = infer(&ic);
	if (st != ERT_OK)
		return st;
	for (uint32_t i = 0; i < o->n_out; i++) {
		ert_value_finish(&o->out[i]);
		o->out[i].data = calloc(1, o->out[i].nbytes + 1);
		if (!o->out[i].data)
			abort();
	}
	struct ert_exec x = { .graph = o->g, .node = o->n, .in = inp, .out = outp,
			      .n_in = o->n_in, .n_out = o->n_out, .in_const = in_const };

	return compute(cpu, &x, &o->err);
}

/* The op's kernel from the table, on @pool, as one_run_kernel() runs it. */
static inline ert_status one_run_pool(struct one *o, struct ert_threadpool *pool)
{
	struct ert_cpu cpu = { .pool = pool, .num_threads = ert_threadpool_size(pool) };
	const struct ert_cpu_op *k = ert_cpu_op_find(o->n->op);

	if (!k)
		return ERT_STATUS_UNSUPPORTED;
	return one_run_kernel(o, ert_op_infer(o->n->op), k->compute, &cpu);
}

static inline void one_fini(struct one *o)
{
	one_free_out(o);
	for (uint32_t i = 0; i < ONE_MAX_IO; i++)
		free(o->bufs[i]);
	ert_graph_destroy(o->g);
}

/*
 * Run @o's node at kernel level @isa, on @pool (NULL: one thread), with
 * the inputs after the first constant (prepacked at plan time) when
 * @const_w, at memory level @memory; its o->n_out outputs to out[] (the
 * caller frees each out[k].data).
 */
static inline ert_status one_run_at(struct one *o, enum ert_cpu_isa isa,
				    struct ert_threadpool *pool, bool const_w, ert_level memory,
				    struct ert_value *out)
{
	bool cst[ONE_MAX_IO];
	struct ert_cpu_eval_opts opts = {
		.isa = isa, .pool = pool, .in_const = cst, .memory = memory,
	};

	for (uint32_t i = 0; i < o->n_in; i++)
		cst[i] = i > 0 && const_w;
	return ert_cpu_eval_node_with(&opts, o->g, o->n, o->inp, o->n_in, out, o->n_out, &o->err);
}

/*
 * Whether a level's output @got is close enough to the scalar level's @ref
 * (@tol as the caller means it); if not, what differs, in @why.
 */
typedef bool (*one_level_check_fn)(const struct ert_value *got, const struct ert_value *ref,
				   double tol, char *why, size_t why_len);

/* The runs one_compare_levels_with() makes at each level: a mask. */
enum {
	ONE_RUN_PACKED = 1 << 0,	/* weights prepacked, one thread */
	ONE_RUN_PLAIN = 1 << 1,		/* run-time weights, one thread */
	ONE_RUN_LOW = 1 << 2,		/* memory LOW (nothing prepacked), one thread */
	ONE_RUN_POOL = 1 << 3,		/* weights prepacked, two threads */
	ONE_RUN_ALL = 0xf,
};

/*
 * @o at every level from @from up to the CPU's best, in the @runs variants
 * (ONE_RUN_*), each held by @check to the scalar level with prepacked
 * weights on one thread (not compared with itself): output 0 with @tol,
 * any others with @tol_rest. Sets *@failed on a failed run or check.
 * Returns the runs compared.
 */
static inline int one_compare_levels_with(int *failed, struct one *o, const char *what,
					  one_level_check_fn check, double tol, double tol_rest,
					  enum ert_cpu_isa from, unsigned runs)
{
	struct ert_threadpool *pool = ert_threadpool_create(2);
	enum ert_cpu_isa best = ert_cpu_isa_best();
	struct ert_value ref[ONE_MAX_IO], got[ONE_MAX_IO];
	int n = 0;

	if (!pool) {
		*failed = 1;
		return 0;
	}
	if (one_run_at(o, ERT_ISA_SCALAR, NULL, true, ERT_LEVEL_NORMAL, ref) != ERT_OK) {
		fprintf(stderr, "%s: scalar reference failed: %s\n", what, o->err.msg);
		*failed = 1;
		ert_threadpool_destroy(pool);
		return 0;
	}
	for (int isa = (int)from; isa <= (int)best; isa++) {
		for (int v = 0; v < 4; v++) {
			const char *lv = ert_cpu_isa_name((enum ert_cpu_isa)isa);
			struct ert_threadpool *p = v == 3 ? pool : NULL;

			if (!(runs & (1u << v)) || (isa == ERT_ISA_SCALAR && v == 0))
				continue;
			if (one_run_at(o, (enum ert_cpu_isa)isa, p, v != 1,
				       v == 2 ? ERT_LEVEL_LOW : ERT_LEVEL_NORMAL, got) != ERT_OK) {
				fprintf(stderr, "%s at %s: %s\n", what, lv, o->err.msg);
				*failed = 1;
				continue;
			}
			for (uint32_t k = 0; k < o->n_out; k++) {
				char why[160] = "";

				if (got[k].dtype != ref[k].dtype || got[k].numel != ref[k].numel) {
					fprintf(stderr,
						"%s at %s (variant %d), output %u: %s [%lld], expected %s [%lld]\n",
						what, lv, v, k, ert_dtype_name(got[k].dtype),
						(long long)got[k].numel, ert_dtype_name(ref[k].dtype),
						(long long)ref[k].numel);
					*failed = 1;
				} else if (!check(&got[k], &ref[k], k ? tol_rest : tol, why,
						  sizeof(why))) {
					fprintf(stderr, "%s at %s (variant %d), output %u: %s\n", what,
						lv, v, k, why);
					*failed = 1;
				}
				free(got[k].data);
			}
			n++;
		}
	}
	for (uint32_t k = 0; k < o->n_out; k++)
		free(ref[k].data);
	ert_threadpool_destroy(pool);
	return n;
}

/*
 * @o at every level up to the CPU's best in four variants (prepacked
 * weights, run-time weights, memory LOW, two threads; at the scalar level
 * the last three), each held by @check to the scalar level with prepacked
 * weights on one thread. Sets *@failed on a failed run or check. Returns
 * the runs compared.
 */
static inline int one_compare_levels(int *failed, struct one *o, const char *what,
				     one_level_check_fn check, double tol)
{
	return one_compare_levels_with(failed, o, what, check, tol, tol, ERT_ISA_SCALAR,
				       ONE_RUN_ALL);
}

/* 0, 1, 2, ... */
static inline void fill_f32(float *p, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		p[i] = (float)i;
}

/*
 * The tests' pseudo-random source, a linear congruential generator (Numerical
 * Recipes' constants) whose state each program seeds and keeps: same seed, same
 * inputs on every run.
 */
static inline uint32_t lcg_next(uint32_t *state)
{
	*state = *state * 1664525u + 1013904223u;
	return *state;
}

/* Uniform in [-1, 1) on a grid of 2^-15. */
static inline float frand_r(uint32_t *state)
{
	return (float)((lcg_next(state) >> 8) & 0xffff) / 32768.0f - 1.0f;
}

#endif /* ERT_OP_TEST_H */
