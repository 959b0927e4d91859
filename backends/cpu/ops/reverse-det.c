/* SPDX-License-Identifier: MIT */
/*
 * CPU reference kernels: ReverseSequence (reverse the first len[b] steps of
 * each batch entry, copy the rest) and Det (LU with partial pivoting, in
 * double, per matrix).
 */
#include <math.h>
#include <string.h>

#include "cpu/ops/value-store.h"

static ert_status reverse_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in = x->in[0], *lens = x->in[1];
	struct ert_value *out = x->out[0];
	int32_t ba = (int32_t)ert_attr_int(x->node, "batch_axis", 1);
	int32_t ta = 1 - ba;
	int64_t batch = in->dims[ba], steps = in->dims[ta], inner = 1;
	size_t es = ert_dtype_size(in->dtype);

	for (int32_t d = 2; d < in->rank; d++)
		inner *= in->dims[d];
	for (int64_t b = 0; b < batch; b++) {
		int64_t len = ((const int64_t *)lens->data)[b];

		if (len < 0 || len > steps)
			return ert_node_fail(x->node, err, ERT_STATUS_INVALID_ARGUMENT,
					     "sequence_lens[%lld] = %lld is outside [0, %lld]",
					     (long long)b, (long long)len, (long long)steps);
		for (int64_t t = 0; t < steps; t++) {
			int64_t src_t = t < len ? len - 1 - t : t;
			/* row-major over the first two axes, whichever is time */
			int64_t dst = ta == 0 ? t * batch + b : b * steps + t;
			int64_t src = ta == 0 ? src_t * batch + b : b * steps + src_t;

			memcpy((char *)out->data + (size_t)(dst * inner) * es,
			       (const char *)in->data + (size_t)(src * inner) * es, (size_t)inner * es);
		}
	}
	return ERT_OK;
}

static size_t det_workspace(const struct ert_cpu *cpu, const struct ert_exec *x)
{
	int64_t m = x->in[0]->dims[x->in[0]->rank - 1];

	return (size_t)(m * m) * sizeof(double);
}

static ert_status det_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in = x->in[0];
	struct ert_value *out = x->out[0];
	int64_t m = in->dims[in->rank - 1], mm = m * m;
	double *a = x->workspace;

	for (int64_t k = 0; k < out->numel; k++) {
		double det = 1;

		for (int64_t i = 0; i < mm; i++)
			a[i] = ert_value_get_float(in, k * mm + i);
		for (int64_t c = 0; c < m && det != 0; c++) {
			int64_t piv = c;

			for (int64_t r = c + 1; r < m; r++)
				if (fabs(a[r * m + c]) > fabs(a[piv * m + c]))
					piv = r;
			if (a[piv * m + c] == 0) {
				det = 0;
				break;
			}
			if (piv != c) {
				for (int64_t j = 0; j < m; j++) {
					double t = a[c * m + j];

					a[c * m + j] = a[piv * m + j];
					a[piv * m + j] = t;
				}
				det = -det;
			}
			det *= a[c * m + c];
			for (int64_t r = c + 1; r < m; r++) {
				double f = a[r * m + c] / a[c * m + c];

				for (int64_t j = c; j < m; j++)
					a[r * m + j] -= f * a[c * m + j];
			}
		}
		ert_cpu_store_f64(out, k, det);
	}
	return ERT_OK;
}

const struct ert_cpu_op ert_cpu_ops_reverse_det[] = {
	{ .op = ERT_OP_ReverseSequence, .compute = reverse_compute },
	{ .op = ERT_OP_Det, .workspace = det_workspace, .compute = det_compute },
	{ .compute = NULL },
};
