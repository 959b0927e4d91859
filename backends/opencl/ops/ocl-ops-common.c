/* SPDX-License-Identifier: MIT */
/* Shape helpers the OpenCL ops share (the walks: gpu-common/gpu-shape.c). */
#include <string.h>

#include "gpu-common/gpu-shape.h"
#include "opencl/ops/ocl-ops.h"

int ocl_fold_dims(int rank, int64_t *dims, int n_ops, int64_t (*strides)[ERT_MAX_RANK])
{
	return ert_gpu_fold_dims(rank, dims, n_ops, strides);
}

void ocl_contig_strides(const struct ert_value *v, int64_t *strides)
{
	ert_gpu_contig_strides(v, strides);
}

void ocl_int8(cl_int *out8, const int64_t *v, int rank)
{
	for (int i = 0; i < 8; i++)
		out8[i] = i < rank ? (cl_int)v[i] : 0;
}
