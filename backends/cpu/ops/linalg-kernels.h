/* SPDX-License-Identifier: MIT */
/* Private to the CPU linalg family: kernels split over several files. */
#ifndef ERT_CPU_LINALG_KERNELS_H
#define ERT_CPU_LINALG_KERNELS_H

#include "cpu/cpu-impl.h"

size_t ert_cpu_conv_workspace(const struct ert_exec *x);
ert_status ert_cpu_conv_prepare(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err);
ert_status ert_cpu_conv_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err);

size_t ert_cpu_convt_workspace(const struct ert_exec *x);
ert_status ert_cpu_convt_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err);

size_t ert_cpu_einsum_workspace(const struct ert_exec *x);
struct ert_einsum;
/* Matmul-shaped Einsums on the SGEMM (linalg-einsum-gemm.c); 0 / !*done otherwise. */
size_t ert_cpu_einsum_gemm_workspace(const struct ert_exec *x, const struct ert_einsum *e);
ert_status ert_cpu_einsum_gemm(struct ert_cpu *cpu, struct ert_exec *x,
			       const struct ert_einsum *e, bool *done);
ert_status ert_cpu_einsum_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err);

/* Check that compute() got the workspace the kernel asked for. */
static inline ert_status ert_cpu_ws_check(const struct ert_exec *x, size_t need,
					  struct ert_err *err)
{
	if (need && (!x->workspace || x->workspace_size < need)) {
		ert_err_set(err, "%s '%s': workspace of %zu bytes, %zu needed",
			    ert_op_name(x->node->op), x->node->name, x->workspace_size, need);
		return ERT_STATUS_INTERNAL;
	}
	return ERT_OK;
}

#endif /* ERT_CPU_LINALG_KERNELS_H */
