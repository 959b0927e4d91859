/* SPDX-License-Identifier: MIT */
/* resize-kernels.h — kernels of the resize family that live outside resize.c. */
#ifndef ERT_CPU_RESIZE_KERNELS_H
#define ERT_CPU_RESIZE_KERNELS_H

#include "cpu/cpu-impl.h"

/* resize-grid.c: GridSample (see ops/resize-grid.h). */
ert_status ert_cpu_grid_sample(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err);
/* resize-grid.c: AffineGrid. */
ert_status ert_cpu_affine_grid(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err);
/* resize-roi.c: RoiAlign (see ops/resize-roi.h). */
ert_status ert_cpu_roi_align(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err);
size_t ert_cpu_roi_align_workspace(const struct ert_cpu *cpu, const struct ert_exec *x);

#endif /* ERT_CPU_RESIZE_KERNELS_H */
