/* SPDX-License-Identifier: MIT */
/* Private to the CPU linalg family: kernels split over several files. */
#ifndef ERT_CPU_LINALG_KERNELS_H
#define ERT_CPU_LINALG_KERNELS_H

#include "cpu/cpu-impl.h"

size_t ert_cpu_conv_workspace(const struct ert_cpu *cpu, const struct ert_exec *x);
ert_status ert_cpu_conv_prepare(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err);
ert_status ert_cpu_conv_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err);

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
