/* SPDX-License-Identifier: MIT */
/* Private to the CPU select family (select.c, select-nms.c). */
#ifndef ERT_CPU_SELECT_KERNELS_H
#define ERT_CPU_SELECT_KERNELS_H

#include "cpu/cpu-impl.h"

size_t ert_cpu_nms_workspace(const struct ert_cpu *cpu, const struct ert_exec *x);
ert_status ert_cpu_nms_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err);

#endif /* ERT_CPU_SELECT_KERNELS_H */
