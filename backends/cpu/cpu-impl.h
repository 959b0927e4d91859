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
#include "cpu/isa.h"

struct ert_threadpool;
struct ert_cpu_packed;
struct ert_sgemm_kernel;

/*
 * The CPU backend's context, passed to every kernel. One per session (or per
 * one-off ert_cpu_eval_node()), used by one thread at a time (edgert.h's rule
 * for sessions), so nothing here is locked; kernels touch the packed-weight
 * cache only from prepare() and release(), never from pool threads.
 */
struct ert_cpu {
	struct ert_threadpool *pool;
	uint32_t num_threads;
	/* The kernel level (cpu/isa.h), chosen when the backend is created. */
	enum ert_cpu_isa isa;
	const struct ert_sgemm_kernel *gemm;   /* its GEMM micro-kernel */
	ert_level precision;
	/*
	 * Conv, Gemm and MatMul's kernel with precision LOW: bf16 products,
	 * fp32 sums (ert_sbgemm_kernel_for()); NULL (fp32) at other precisions
	 * and where the level or the CPU has none.
	 */
	const struct ert_sgemm_kernel *gemm_low;
	/*
	 * The session's memory level. LOW: constant weights are never packed into
	 * copies; kernels pack panels from the mapped weights into their workspace
	 * at every run, as they do for weights computed at run time.
	 */
	ert_level memory;
	/* Packed weights shared by every plan of the session, and their bytes. */
	struct ert_cpu_packed *packed;
	size_t packed_bytes;
	/*
	 * Where set (bench/gemm-bench.c), the Winograd convolution adds the
	 * process CPU seconds of its phases here: input transform, the batched
	 * GEMM, output transform. NULL in sessions.
	 */
	double *wino_phase_s;
};

/*
 * Lanes a kernel of @cpu may run at once: the backend's threads (1 without
 * a backend), capped by ERT_MAX_THREADS. Per-lane workspace slots are sized
 * by this number, so the memory plan follows the session's threads.
 */
static inline uint32_t ert_cpu_lanes(const struct ert_cpu *cpu)
{
	uint32_t n = cpu ? cpu->num_threads : 1;

	return n < 1 ? 1 : n > ERT_MAX_THREADS ? ERT_MAX_THREADS : n;
}

struct ert_cpu_op {
	enum ert_op op;
	/* Optional dtype/attribute check; NULL: every case shape inference accepts. */
	bool (*supports)(const struct ert_exec *x);
	/*
	 * Optional scratch size for compute(), which gets the same @cpu. A kernel
	 * with a slot per lane sizes it for ert_cpu_lanes(cpu), never the machine's
	 * CPU count, and its compute() uses no more slots than that.
	 */
	size_t (*workspace)(const struct ert_cpu *cpu, const struct ert_exec *x);
	/* Optional plan-time step (pack weights); may set x->state. */
	ert_status (*prepare)(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err);
	ert_status (*compute)(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err);
	/* Frees x->state; required when prepare() sets it. */
	void (*release)(struct ert_exec *x);
};

/*
 * Packed copies of constant GEMM operands (weights), made at plan time.
 *
 * Every cached plan of a session prepares its own steps, but a weight packs
 * the same way whatever the input shapes, so copies are shared: the cache in
 * struct ert_cpu holds one per (source data, packed layout), refcounted by
 * the steps using it and freed with the last of them. The source pointer is a
 * safe key because a constant's data (mapped model, or a plan's folded
 * buffer) outlives every step that reads it, and so every entry keyed by it.
 */
enum ert_cpu_pack_kind {
	ERT_CPU_PACK_A,          /* ert_sgemm_pack_a(): rows = m, cols = k */
	ERT_CPU_PACK_B,          /* ert_sgemm_pack_b(): rows = k, cols = n */
	/*
	 * Winograd F(4x4, 3x3) (count = 36) or F(2x2, 3x3) (count = 16): src
	 * holds rows = cout x cols = cin 3x3 filters; each of the count
	 * matrices is the transformed filters at one tile position, packed like
	 * A (cpu/conv/winograd.h).
	 */
	ERT_CPU_PACK_WINO,
	/*
	 * The same transformed filters, each position's U transposed (cin x
	 * cout) and packed like B: the GEMM with its roles swapped, tiles as
	 * its rows (linalg-conv.c's wino_conv()).
	 */
	ERT_CPU_PACK_WINO_B,
	/*
	 * int8 GEMM operands (cpu/qgemm/qgemm.h): src holds count matrices of
	 * rows x cols bytes, src_stride bytes apart; fmt names the kernel and
	 * the source type; panel is left as given.
	 */
	ERT_CPU_PACK_Q8A,        /* A blocks and row sums: rows = m, cols = k */
	ERT_CPU_PACK_Q8B,        /* B panels and column sums: rows = k, cols = n */
	/* bf16 pairs for cpu->gemm_low (ert_sbgemm_pack_*_strided()), as A and B above */
	ERT_CPU_PACK_A_BF16,
	ERT_CPU_PACK_B_BF16,
};

/*
 * @count matrices of @rows x @cols, matrix i at src + i * src_stride floats,
 * element (r, c) at r * rs + c * cs from there. Packed matrix i lies at
 * data + i * stride of the entry.
 */
struct ert_cpu_pack_key {
	const float *src;
	enum ert_cpu_pack_kind kind;
	int panel;               /* MR (A) or NR (B) of the kernel; set by ert_cpu_pack_get() */
	int64_t rows, cols, rs, cs;
	int64_t count, src_stride;
	int fmt;                 /* ERT_CPU_PACK_Q8*: ert_qgemm_key_fmt(); 0 otherwise */
};

struct ert_cpu_packed {
	struct ert_cpu_packed *next;
	struct ert_cpu *cpu;     /* the cache it belongs to */
	struct ert_cpu_pack_key key;
	uint32_t refs;
	size_t stride;           /* floats per packed matrix */
	size_t bytes;            /* allocated for data */
	float *data;
};

/*
 * A reference to the packed form of @key, packing it on the first request.
 * Sets *@out to NULL (and returns ERT_OK) when the session's memory level is
 * LOW: the kernel then packs from the source at run time.
 */
ert_status ert_cpu_pack_get(struct ert_cpu *cpu, const struct ert_cpu_pack_key *key,
			    struct ert_cpu_packed **out);
/* Drop a reference from ert_cpu_pack_get(); accepts NULL. */
void ert_cpu_pack_put(struct ert_cpu_packed *pk);
/* A kernel's release(): x->state is the step's struct ert_cpu_packed, or NULL. */
void ert_cpu_release_packed(struct ert_exec *x);

static inline const float *ert_cpu_packed_data(const void *state)
{
	return state ? ((const struct ert_cpu_packed *)state)->data : NULL;
}

/*
 * Host memory for the CPU backend's arenas and packed weights: 64-byte
 * aligned (a cache line, the widest vector load), and from 2 MiB on 2 MiB
 * aligned and asked for transparent huge pages (cpu-backend.c); NULL when
 * out of memory. Freed with free().
 */
void *ert_cpu_alloc(size_t bytes);

/*
 * Bytes the CPU backend @be holds in packed weights right now, on top of the
 * plans' arenas (0 for NULL or another backend): for the session's memory report.
 */
size_t ert_cpu_backend_resident_bytes(struct ert_backend *be);

/* Kernel table entry for @op, or NULL. */
const struct ert_cpu_op *ert_cpu_op_find(enum ert_op op);

/*
 * Dynamic quantisation (cpu/dq/). ert_cpu_dq_accepts(): may step @x (Conv,
 * Gemm or MatMul) read its weights (input 1) block-quantised, as the model
 * stores them? The planner leaves them so with memory LOW where it may.
 * ert_cpu_dq_op(): the int8 kernels' entry for @x when its weights were left
 * so (input 1 has wq and no data), else NULL.
 */
bool ert_cpu_dq_accepts(const struct ert_exec *x);
const struct ert_cpu_op *ert_cpu_dq_op(const struct ert_exec *x);

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
/*
 * The config of a subgraph session a CPU step runs (If, Loop, Scan,
 * SequenceMap; ops/control.c): the step's threads, precision and memory
 * level, within the session's memory budget.
 */
void ert_cpu_subrun_config(const struct ert_cpu *cpu, const struct ert_exec *x, ert_config *cfg);

ert_status ert_cpu_eval_node(const struct ert_graph *g, const struct ert_node *n,
			     const struct ert_value *const *in, uint32_t n_in,
			     struct ert_value *out, uint32_t n_out, struct ert_err *err);

/*
 * ert_cpu_eval_node() with the kernel level, threads, memory level and which
 * inputs count as constant (prepacked) chosen by the caller: for tests that
 * hold a kernel of one level against another.
 */
struct ert_cpu_eval_opts {
	enum ert_cpu_isa isa;
	struct ert_threadpool *pool;   /* NULL: the caller's thread alone */
	const bool *in_const;          /* n_in flags; NULL: every input constant */
	ert_level memory;              /* LOW: nothing prepacked */
	ert_level precision;           /* LOW: bf16 GEMM kernels where the CPU has them */
};

ert_status ert_cpu_eval_node_with(const struct ert_cpu_eval_opts *o, const struct ert_graph *g,
				  const struct ert_node *n, const struct ert_value *const *in,
				  uint32_t n_in, struct ert_value *out, uint32_t n_out,
				  struct ert_err *err);

/* Check that compute() got the workspace the kernel asked for. */
static inline ert_status ert_cpu_ws_check(const struct ert_exec *x, size_t need,
					  struct ert_err *err)
{
	if (need && (!x->workspace || x->workspace_size < need))
		return ert_node_fail(x->node, err, ERT_STATUS_INTERNAL,
				     "workspace of %zu bytes, %zu needed", x->workspace_size, need);
	return ERT_OK;
}

#endif /* ERT_CPU_IMPL_H */
