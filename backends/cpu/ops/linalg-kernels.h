/* SPDX-License-Identifier: MIT */
/* Private to the CPU linalg family: kernels split over several files. */
#ifndef ERT_CPU_LINALG_KERNELS_H
#define ERT_CPU_LINALG_KERNELS_H

#include "cpu/cpu-impl.h"
#include "ops/linalg-geom.h"

size_t ert_cpu_conv_workspace(const struct ert_cpu *cpu, const struct ert_exec *x);
ert_status ert_cpu_conv_prepare(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err);
ert_status ert_cpu_conv_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err);
/*
 * The threads' bands of output channels a Conv of geometry @g (@n_img
 * images, @c_in -> @m channels, @group groups) with constant weights runs
 * in on @cpu (ops/linalg-conv.c, band_split_parts()), or 0 where it takes
 * another path. Asked by the tests, which check the path they mean.
 */
uint32_t ert_cpu_conv_band_parts(const struct ert_cpu *cpu, const struct ert_conv_geom *g,
				 int64_t n_img, int64_t c_in, int64_t m, int64_t group);

size_t ert_cpu_convt_workspace(const struct ert_cpu *cpu, const struct ert_exec *x);
ert_status ert_cpu_convt_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err);

size_t ert_cpu_einsum_workspace(const struct ert_cpu *cpu, const struct ert_exec *x);
struct ert_einsum;
/* Matmul-shaped Einsums on the SGEMM (linalg-einsum-gemm.c); 0 / !*done otherwise. */
size_t ert_cpu_einsum_gemm_workspace(const struct ert_cpu *cpu, const struct ert_exec *x,
				     const struct ert_einsum *e);
ert_status ert_cpu_einsum_gemm(struct ert_cpu *cpu, struct ert_exec *x,
			       const struct ert_einsum *e, bool *done);
ert_status ert_cpu_einsum_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err);

#endif /* ERT_CPU_LINALG_KERNELS_H */
