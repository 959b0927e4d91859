/* SPDX-License-Identifier: MIT */
/* Shape helpers the GPU backends' op files share. */
#include "gpu-common/gpu-shape.h"

int ert_gpu_fold_dims(int rank, int64_t *dims, int n_ops, int64_t (*strides)[ERT_MAX_RANK])
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

void ert_gpu_contig_strides(const struct ert_value *v, int64_t *strides)
{
	int64_t s = 1;

	for (int d = v->rank - 1; d >= 0; d--) {
		strides[d] = s;
		s *= v->dims[d];
	}
}

void ert_gpu_broadcast_strides(const struct ert_value *v, const struct ert_value *out,
			       int64_t *strides)
{
	int64_t own[ERT_MAX_RANK];
	int shift = out->rank - v->rank;

	ert_gpu_contig_strides(v, own);
	for (int d = 0; d < out->rank; d++) {
		int vd = d - shift;

		strides[d] = vd < 0 || v->dims[vd] == 1 ? 0 : own[vd];
	}
}
