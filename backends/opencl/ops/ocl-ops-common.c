/* SPDX-License-Identifier: MIT */
/* Shape helpers the OpenCL ops share. */
#include <string.h>

#include "opencl/ops/ocl-ops.h"

int ocl_fold_dims(int rank, int64_t *dims, int n_ops, int64_t (*strides)[ERT_MAX_RANK])
{
	int out = 0;

	for (int d = 0; d < rank; d++) {
		if (dims[d] == 1)
			continue;
		if (out > 0) {
			bool merge = true;

			/* dim out-1 followed by d is one dim when every operand's
			 * stride of out-1 is its stride of d times the size of d */
			for (int o = 0; o < n_ops; o++)
				if (strides[o][out - 1] != strides[o][d] * dims[d])
					merge = false;
			if (merge) {
				dims[out - 1] *= dims[d];
				for (int o = 0; o < n_ops; o++)
					strides[o][out - 1] = strides[o][d];
				continue;
			}
		}
		dims[out] = dims[d];
		for (int o = 0; o < n_ops; o++)
			strides[o][out] = strides[o][d];
		out++;
	}
	if (out == 0) {
		/* a single element */
		dims[0] = 1;
		for (int o = 0; o < n_ops; o++)
			strides[o][0] = 0;
		out = 1;
	}
	return out;
}

void ocl_contig_strides(const struct ert_value *v, int64_t *strides)
{
	int64_t s = 1;

	for (int d = v->rank - 1; d >= 0; d--) {
		strides[d] = s;
		s *= v->dims[d];
	}
}

void ocl_int8(cl_int *out8, const int64_t *v, int rank)
{
	for (int i = 0; i < 8; i++)
		out8[i] = i < rank ? (cl_int)v[i] : 0;
}
