/* SPDX-License-Identifier: MIT */
/*
 * movement-cpu.h — private to the CPU movement kernels (backends/cpu/ops/movement*.c).
 *
 * Most movement ops are one "strided copy": the output is written contiguously
 * while the source is walked with arbitrary per-axis strides (a transpose, a
 * slice with any steps, a broadcast with stride 0, a tile as twice the axes).
 * One engine does them all, collapsing axes first and using a blocked
 * transpose when the innermost source stride is not 1.
 */
#ifndef ERT_CPU_MOVEMENT_H
#define ERT_CPU_MOVEMENT_H

#include "cpu/cpu-impl.h"
#include "ops/movement-params.h"

/* Tile needs two axes per input axis. */
#define ERT_MV_STRIDED_MAX_RANK (2 * ERT_MAX_RANK)

struct ert_mv_strided {
	int32_t rank;
	int64_t dims[ERT_MV_STRIDED_MAX_RANK];   /* output dims, row-major */
	int64_t stride[ERT_MV_STRIDED_MAX_RANK]; /* source step per axis, in elements */
	int64_t base;                            /* source offset of element 0, in elements */
};

/*
 * dst[i] = src[base + sum(idx_k * stride_k)] for every output index, elements
 * of @esize bytes. @dst must not overlap the source.
 */
void ert_mv_strided_copy(struct ert_cpu *cpu, void *dst, const void *src, size_t esize,
			 const struct ert_mv_strided *s);

/* Row-major element strides of a shape. */
void ert_mv_strides(int32_t rank, const int64_t *dims, int64_t *strides);

/*
 * Copy @nbytes from @src to @dst: nothing when they are the same (in place),
 * memmove when they overlap, a parallel memcpy when large.
 */
void ert_mv_copy(struct ert_cpu *cpu, void *dst, const void *src, size_t nbytes);

/* Fill @count elements of @esize bytes at @dst with the element at @elem. */
void ert_mv_fill(void *dst, const void *elem, size_t esize, int64_t count);

/* Every present output has a byte-sized element type (no int4/uint4/strings). */
bool ert_mv_cpu_supports(const struct ert_exec *x);

/* Inputs as shape inference saw them. */
static inline const struct ert_value *const *ert_mv_cin(const struct ert_exec *x)
{
	return (const struct ert_value *const *)x->in;
}

/* movement-strided.c */
ert_status ert_mv_cpu_transpose(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err);
ert_status ert_mv_cpu_space_depth(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err);
ert_status ert_mv_cpu_expand(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err);
ert_status ert_mv_cpu_tile(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err);
ert_status ert_mv_cpu_slice(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err);

/* movement-index.c */
ert_status ert_mv_cpu_pad(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err);
ert_status ert_mv_cpu_gather(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err);
ert_status ert_mv_cpu_gather_elements(struct ert_cpu *cpu, struct ert_exec *x,
				      struct ert_err *err);
ert_status ert_mv_cpu_gather_nd(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err);

/* movement-scatter.c */
ert_status ert_mv_cpu_scatter_elements(struct ert_cpu *cpu, struct ert_exec *x,
				       struct ert_err *err);
ert_status ert_mv_cpu_scatter_nd(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err);

/* movement-gen.c */
ert_status ert_mv_cpu_shape(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err);
ert_status ert_mv_cpu_size(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err);
ert_status ert_mv_cpu_constant(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err);
ert_status ert_mv_cpu_constant_of_shape(struct ert_cpu *cpu, struct ert_exec *x,
					struct ert_err *err);
ert_status ert_mv_cpu_range(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err);
ert_status ert_mv_cpu_eye_like(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err);
ert_status ert_mv_cpu_one_hot(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err);
ert_status ert_mv_cpu_trilu(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err);

#endif /* ERT_CPU_MOVEMENT_H */
