/* SPDX-License-Identifier: MIT */
/* ocl-ops.h — helpers the OpenCL op files share. */
#ifndef ERT_OCL_OPS_H
#define ERT_OCL_OPS_H

#include "gpu-common/gpu-ops.h"
#include "opencl/kernels/ocl-codes.h"
#include "opencl/ocl-impl.h"

/*
 * 1-D launch of @n items, in groups of ERT_GPU_WG_1D (64: every device runs those) unless
 * the tuner finds a better size.
 */
static inline ert_status ocl_launch_1d(struct ert_ocl *cl, struct ert_ocl_step *st,
				       const char *prog, const char *kernel, int64_t n,
				       struct ert_err *err)
{
	size_t g = (size_t)n, l = ERT_GPU_WG_1D;

	return ert_ocl_launch_tunable(cl, st, prog, kernel, 1, &g, &l, err);
}

/* Eight ints for an int8 argument, from @rank int64 values (the rest 0). */
void ocl_int8(cl_int *out8, const int64_t *v, int rank);

#endif
