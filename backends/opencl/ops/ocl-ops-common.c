/* SPDX-License-Identifier: MIT */
/* Helpers the OpenCL ops share. */
#include "opencl/ops/ocl-ops.h"

void ocl_int8(cl_int *out8, const int64_t *v, int rank)
{
	for (int i = 0; i < 8; i++)
		out8[i] = i < rank ? (cl_int)v[i] : 0;
}
