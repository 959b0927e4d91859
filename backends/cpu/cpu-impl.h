/* SPDX-License-Identifier: MIT */
/*
 * cpu-impl.h — private to backends/cpu: kernel tables and the thread pool.
 *
 * Each op family has one file in backends/cpu/ops/ exporting
 * `const struct ert_cpu_op ert_cpu_ops_<family>[]`, ended by an entry with
 * .compute == NULL. cpu-backend.c indexes them by op.
 */
#ifndef ERT_CPU_IMPL_H
#define ERT_CPU_IMPL_H

#include "ert-backend-impl.h"

struct ert_threadpool;

/* The CPU backend's context, passed to every kernel. */
struct ert_cpu {
	struct ert_threadpool *pool;
	uint32_t num_threads;
	ert_level precision;
};

struct ert_cpu_op {
	enum ert_op op;
	/* Optional dtype/attribute check; NULL: every case shape inference accepts. */
	bool (*supports)(const struct ert_exec *x);
	/* Optional scratch size for compute(). */
	size_t (*workspace)(const struct ert_exec *x);
	/* Optional plan-time step (pack weights); may set x->state. */
	ert_status (*prepare)(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err);
	ert_status (*compute)(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err);
	/* Frees x->state; required when prepare() sets it. */
	void (*release)(struct ert_exec *x);
};

/* Kernel table entry for @op, or NULL. */
const struct ert_cpu_op *ert_cpu_op_find(enum ert_op op);

/*
 * Run fn(arg, begin, end) over [0, n) split into chunks of at least @grain items
 * across the pool's threads (the caller's thread takes part). Returns when all
 * chunks are done. With a NULL pool or n <= grain it runs inline.
 */
typedef void (*ert_range_fn)(void *arg, int64_t begin, int64_t end);
void ert_parallel_for(struct ert_threadpool *pool, int64_t n, int64_t grain,
		      ert_range_fn fn, void *arg);

struct ert_threadpool *ert_threadpool_create(uint32_t num_threads);
void ert_threadpool_destroy(struct ert_threadpool *pool);
uint32_t ert_threadpool_size(const struct ert_threadpool *pool);

/*
 * Evaluate one node on the CPU outside any session (constant folding, plan-time
 * values): infers shapes, mallocs outputs (caller frees out[i]->data), computes.
 */
ert_status ert_cpu_eval_node(const struct ert_graph *g, const struct ert_node *n,
			     const struct ert_value *const *in, uint32_t n_in,
			     struct ert_value *out, uint32_t n_out, struct ert_err *err);

#endif /* ERT_CPU_IMPL_H */
