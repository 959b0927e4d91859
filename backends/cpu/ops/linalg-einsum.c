/* SPDX-License-Identifier: MIT */
/*
 * CPU Einsum. Matmul-shaped equations go to the SGEMM (linalg-einsum-gemm.c);
 * the rest take the general form here: every output element sums the product
 * of its operands over the contracted labels. Each operand reaches a label through
 * the sum of the strides of its axes carrying it, which covers diagonals
 * (repeated labels) and broadcast (size-1 axes get stride 0).
 */
#include <string.h>

#include "cpu/ops/linalg-kernels.h"
#include "ops/linalg-einsum.h"

size_t ert_cpu_einsum_workspace(const struct ert_cpu *cpu, const struct ert_exec *x)
{
	const char *eq = ert_attr_string(x->node, "equation", "");
	struct ert_einsum e;
	struct ert_err err;

	if (ert_einsum_parse(&e, eq, x->n_in, (const struct ert_value *const *)x->in, &err,
			     x->node->name) != ERT_OK)
		return 0;
	return ert_cpu_einsum_gemm_workspace(cpu, x, &e);
}

struct einsum_job {
	const struct ert_einsum *e;
	const void *data[ERT_EINSUM_MAX_OPS];
	bool f64;
	int64_t stride[ERT_EINSUM_MAX_OPS][ERT_EINSUM_MAX_LABELS];
	int32_t n_red;
	uint8_t red[ERT_EINSUM_MAX_LABELS];   /* contracted labels */
	void *y;
};

static void einsum_range(void *arg, int64_t begin, int64_t end)
{
	const struct einsum_job *job = arg;
	const struct ert_einsum *e = job->e;

	for (int64_t o = begin; o < end; o++) {
		int64_t base[ERT_EINSUM_MAX_OPS] = { 0 }, idx[ERT_EINSUM_MAX_LABELS];
		int64_t rem = o;
		double acc = 0.0;
		bool empty = false;

		for (int32_t a = e->out_rank - 1; a >= 0; a--) {
			int l = e->out_label[a];
			int64_t v = rem % e->size[l];

			rem /= e->size[l];
			for (uint32_t k = 0; k < e->n_ops; k++)
				base[k] += v * job->stride[k][l];
		}
		for (int32_t r = 0; r < job->n_red; r++) {
			idx[r] = 0;
			if (e->size[job->red[r]] == 0)
				empty = true;
		}
		while (!empty) {
			double prod = 1.0;

			if (job->f64)
				for (uint32_t k = 0; k < e->n_ops; k++)
					prod *= ((const double *)job->data[k])[base[k]];
			else
				for (uint32_t k = 0; k < e->n_ops; k++)
					prod *= ((const float *)job->data[k])[base[k]];
			acc += prod;
			int32_t r = job->n_red - 1;

			for (; r >= 0; r--) {
				int l = job->red[r];

				for (uint32_t k = 0; k < e->n_ops; k++)
					base[k] += job->stride[k][l];
				if (++idx[r] < e->size[l])
					break;
				for (uint32_t k = 0; k < e->n_ops; k++)
					base[k] -= idx[r] * job->stride[k][l];
				idx[r] = 0;
			}
			if (r < 0)
				break;
		}
		if (job->f64)
			((double *)job->y)[o] = acc;
		else
			((float *)job->y)[o] = (float)acc;
	}
}

ert_status ert_cpu_einsum_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const char *eq = ert_attr_string(x->node, "equation", "");
	struct ert_einsum e;
	struct einsum_job job;
	ert_status st;

	st = ert_einsum_parse(&e, eq, x->n_in, (const struct ert_value *const *)x->in, err,
			      x->node->name);
	if (st != ERT_OK)
		return st;
	bool done;

	st = ert_cpu_einsum_gemm(cpu, x, &e, &done);
	if (st != ERT_OK || done)
		return st;
	memset(&job, 0, sizeof(job));
	job.e = &e;
	job.y = x->out[0]->data;
	job.f64 = x->out[0]->dtype == ERT_DTYPE_FLOAT64;
	for (uint32_t k = 0; k < e.n_ops; k++) {
		const struct ert_value *v = x->in[k];
		int64_t s = 1;

		job.data[k] = v->data;
		for (int32_t a = v->rank - 1; a >= 0; a--) {
			if (v->dims[a] != 1)
				job.stride[k][e.label[k][a]] += s;
			s *= v->dims[a];
		}
	}
	for (int l = 0; l < ERT_EINSUM_MAX_LABELS; l++)
		if (e.size[l] >= 0 && !e.in_out[l])
			job.red[job.n_red++] = (uint8_t)l;
	ert_parallel_for(cpu->pool, x->out[0]->numel, 256, einsum_range, &job);
	return ERT_OK;
}
