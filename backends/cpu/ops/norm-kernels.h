/* SPDX-License-Identifier: MIT */
/* norm-kernels.h — kernels of the norm family that live outside norm.c. */
#ifndef ERT_CPU_NORM_KERNELS_H
#define ERT_CPU_NORM_KERNELS_H

#include "cpu/cpu-impl.h"

/* norm-stats.c: normalisations by mean and variance. */
ert_status ert_cpu_layer_norm_prepare(struct ert_cpu *cpu, struct ert_exec *x,
				      struct ert_err *err);
ert_status ert_cpu_layer_norm(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err);
ert_status ert_cpu_batch_norm(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err);
ert_status ert_cpu_instance_norm(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err);
ert_status ert_cpu_group_norm(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err);
size_t ert_cpu_mvn_workspace(const struct ert_cpu *cpu, const struct ert_exec *x);
ert_status ert_cpu_mvn(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err);

/*
 * norm.c: the reference Softmax of one contiguous float32 row (float exps,
 * a double sum), as the Softmax op computes it where it has no vector
 * kernel (the scalar level, precision HIGH); y may be x.
 */
void ert_cpu_softmax_row_f32(const float *x, float *y, int64_t n);

#endif /* ERT_CPU_NORM_KERNELS_H */
