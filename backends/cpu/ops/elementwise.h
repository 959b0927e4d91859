/* SPDX-License-Identifier: MIT */
/*
 * elementwise.h — private to the CPU unary and binary families: the broadcast
 * walker, range splitting over the thread pool, reduced-precision conversions
 * and the kernel entry points the two family tables dispatch to.
 */
#ifndef ERT_CPU_ELEMENTWISE_H
#define ERT_CPU_ELEMENTWISE_H

#include "cpu/cpu-impl.h"
#include "ops/elementwise.h"

/* Elements per parallel chunk: below this, threading costs more than it saves. */
#define ERT_EW_GRAIN 16384
/* Elements converted at a time through stack buffers (fp16/bf16, casts). */
#define ERT_EW_CHUNK 256

/*
 * Run fn over [0, n) on the pool when n is large enough to be worth it, in
 * chunks of at least about ERT_EW_GRAIN elements, a multiple of 16 (whole
 * 64-byte lines of float32: no line written by both threads, and the same
 * vector / tail split as one call over [0, n)), as many as make whole rounds
 * of the threads. With chunks of ERT_EW_GRAIN itself, vit_s16's residual
 * Adds (197 x 384 = 4.6 grains) went out as 2 + 3 chunks on two threads,
 * one of them 58 % of the work; and the thread that did a chunk was not the
 * one whose rows the next LayerNorm gave it (docs/performance-gemm.md, "Two
 * threads (2026-11-27, ninth session)").
 */
static inline void ert_ew_parallel(struct ert_cpu *cpu, int64_t n, ert_range_fn fn, void *arg)
{
	struct ert_threadpool *pool = cpu ? cpu->pool : NULL;
	int64_t t = ert_threadpool_size(pool), grain = ERT_EW_GRAIN;

	if (t > 1 && n > grain) {
		/* at most four chunks a thread, as ert_parallel_for() makes */
		int64_t count = n / grain < 4 * t ? n / grain : 4 * t;

		count = count < t ? t : count / t * t;
		grain = ((n + count - 1) / count + 15) / 16 * 16;
	}
	ert_parallel_for(pool, n, grain, fn, arg);
}

/* ---- broadcasting (elementwise.c) ---- */

#define ERT_BCAST_MAX_IN 3

/*
 * Inputs broadcast to an output shape, with dims of size 1 dropped and
 * neighbouring dims merged where every input allows it. The innermost stride
 * of each input is then 0 (broadcast) or 1 (contiguous).
 */
struct ert_bcast {
	uint32_t n_in;
	int32_t rank;
	int64_t numel;
	int64_t dims[ERT_MAX_RANK];
	int64_t strides[ERT_BCAST_MAX_IN][ERT_MAX_RANK];
};

/* INTERNAL error when some @in[i] does not broadcast to @out. */
ert_status ert_bcast_init(struct ert_bcast *b, const struct ert_value *out,
			  const struct ert_value *const *in, uint32_t n_in, struct ert_err *err);

/*
 * One contiguous run of @n output elements starting at @out_off; input i
 * starts at element off[i] and advances by step[i] (0 or 1) per element.
 */
typedef void (*ert_bcast_fn)(void *ctx, const int64_t *off, const int64_t *step,
			     int64_t out_off, int64_t n);

/* Walk the whole output in runs, split over the pool. */
void ert_bcast_run(struct ert_cpu *cpu, const struct ert_bcast *b, ert_bcast_fn fn, void *ctx);

/* ---- reduced-precision floats (elementwise.c) ---- */

float ert_fp8_to_f32(uint8_t v, ert_dtype dt);
/* Round to nearest even; @saturate clamps out-of-range values to ±max. */
uint8_t ert_f32_to_fp8(float f, ert_dtype dt, bool saturate);
bool ert_dtype_is_fp8(ert_dtype dt);

/* fp16/bf16 arrays to and from float32. */
void ert_half_to_f32(ert_dtype dt, const uint16_t *src, float *dst, int64_t n);
void ert_f32_to_half(ert_dtype dt, const float *src, uint16_t *dst, int64_t n);

/* ---- kernels behind the family tables ---- */

/* Scalar parameters of the unary ops, read from attributes or inputs. */
struct ert_unary_params {
	float alpha, beta, gamma;
	double lo, hi;      /* Clip bounds; Shrink lambd (lo) and bias (hi) */
	int64_t ilo, ihi;   /* Clip bounds for integer inputs */
	bool flag_a, flag_b; /* Gelu tanh; IsInf detect_negative / detect_positive */
};

ert_status ert_unary_params_read(const struct ert_exec *x, struct ert_unary_params *p,
				 struct ert_err *err);

/* Float unary ops (unary-float.c). */
bool ert_unary_float_supported(enum ert_op op);
ert_status ert_unary_float_run(struct ert_cpu *cpu, enum ert_op op,
			       const struct ert_unary_params *p, const struct ert_value *in,
			       struct ert_value *out, struct ert_err *err);

/*
 * Name of the vector kernel ert_unary_float_run() uses for @op on @dt at
 * @cpu's level (cpu/vec/vec.h), or NULL for the portable loops.
 */
const char *ert_unary_float_kernel(const struct ert_cpu *cpu, enum ert_op op,
				   const struct ert_unary_params *p, ert_dtype dt);

/* Vectorised float32 Sigmoid, Tanh, Erf, Gelu, HardSwish (unary-vmath.c); in place is fine. */
void ert_vm_sigmoid_f32(const float *x, float *y, int64_t n);
void ert_vm_tanh_f32(const float *x, float *y, int64_t n);
void ert_vm_erf_f32(const float *x, float *y, int64_t n);
void ert_vm_gelu_f32(const float *x, float *y, int64_t n);
void ert_vm_gelu_tanh_f32(const float *x, float *y, int64_t n);
void ert_vm_hard_swish_f32(const float *x, float *y, int64_t n);

/* Integer and bool unary ops (unary-int.c). */
bool ert_unary_int_supported(enum ert_op op);
ert_status ert_unary_int_run(struct ert_cpu *cpu, enum ert_op op,
			     const struct ert_unary_params *p, const struct ert_value *in,
			     struct ert_value *out, struct ert_err *err);

/* Dropout: a copy at inference, seeded masks in training mode (unary-dropout.c). */
ert_status ert_dropout_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err);

/* Cast between any two known dtypes (unary-cast.c). */
ert_status ert_cast_run(struct ert_cpu *cpu, const struct ert_value *in, struct ert_value *out,
			bool saturate, struct ert_err *err);

/* Arithmetic: Add Sub Mul Div Mod Pow Min Max PRelu (binary-arith.c). */
ert_status ert_binary_arith_run(struct ert_cpu *cpu, const struct ert_node *node, enum ert_op op,
				const struct ert_value *a, const struct ert_value *b,
				struct ert_value *out, struct ert_err *err);

/* Name of the vector kernel Add..Max on @dt run at @cpu's level, or NULL (binary-arith.c). */
const char *ert_binary_arith_kernel(const struct ert_cpu *cpu, const struct ert_node *node,
				    ert_dtype dt);

/* Sum, Mean, Min, Max over any number of inputs (binary-arith.c). */
ert_status ert_variadic_run(struct ert_cpu *cpu, const struct ert_node *node,
			    const struct ert_value *const *in, uint32_t n_in,
			    struct ert_value *out, struct ert_err *err);

/* Comparisons, logic, bit operations, Where (binary-logic.c). */
bool ert_binary_logic_supported(const struct ert_node *node, ert_dtype dt);
ert_status ert_binary_logic_run(struct ert_cpu *cpu, const struct ert_node *node,
				const struct ert_value *a, const struct ert_value *b,
				struct ert_value *out, struct ert_err *err);
ert_status ert_where_run(struct ert_cpu *cpu, const struct ert_value *c, const struct ert_value *a,
			 const struct ert_value *b, struct ert_value *out, struct ert_err *err);

#endif /* ERT_CPU_ELEMENTWISE_H */
