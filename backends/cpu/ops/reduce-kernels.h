/* SPDX-License-Identifier: MIT */
/* reduce-kernels.h — kernels of the reduce family that live outside reduce.c. */
#ifndef ERT_CPU_REDUCE_KERNELS_H
#define ERT_CPU_REDUCE_KERNELS_H

#include "cpu/cpu-impl.h"

/* reduce-index.c: ops along one axis that produce or use indices. */
ert_status ert_cpu_argminmax(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err);
ert_status ert_cpu_cumsum(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err);
size_t ert_cpu_topk_workspace(const struct ert_cpu *cpu, const struct ert_exec *x);
ert_status ert_cpu_topk(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err);

#endif /* ERT_CPU_REDUCE_KERNELS_H */
