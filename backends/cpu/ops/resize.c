/* SPDX-License-Identifier: MIT */
/*
 * CPU reference kernels: Resize and Upsample. Taps are built per axis into the
 * workspace at compute time (the sizes may come from values known only then),
 * then each output element sums its taps' product over all axes in double.
 */
#include <string.h>

#include "cpu/ops/norm-access.h"
#include "cpu/ops/resize-taps.h"

struct rz_args {
	const struct ert_value *in;
	struct ert_value *out;
	int32_t rank;
	struct ert_resize_axis ax[ERT_MAX_RANK];
	int64_t in_stride[ERT_MAX_RANK];
	double extrapolation;
};

static double one_output(const struct rz_args *a, const int64_t *c)
{
	int32_t t[ERT_MAX_RANK] = { 0 }, cnt[ERT_MAX_RANK];
	const int64_t *idx[ERT_MAX_RANK];
	const double *w[ERT_MAX_RANK];
	double acc = 0.0;
	int32_t r = a->rank;

	for (int32_t d = 0; d < r; d++) {
		const struct ert_resize_axis *ax = &a->ax[d];

		cnt[d] = ax->count[c[d]];
		if (cnt[d] < 0)
			return a->extrapolation;
		if (cnt[d] == 0)
			return 0.0;
		idx[d] = ax->index + c[d] * ax->slots;
		w[d] = ax->weight + c[d] * ax->slots;
	}
	for (;;) {
		int64_t off = 0;
		double wt = 1.0;

		for (int32_t d = 0; d < r; d++) {
			off += idx[d][t[d]] * a->in_stride[d];
			wt *= w[d][t[d]];
		}
		acc += wt * ert_nx_ld(a->in->data, a->in->dtype, off);
		int32_t d = r - 1;

		for (; d >= 0; d--) {
			if (++t[d] < cnt[d])
				break;
			t[d] = 0;
		}
		if (d < 0)
			break;
	}
	return acc;
}

static void resize_range(void *arg, int64_t begin, int64_t end)
{
	const struct rz_args *a = arg;
	int64_t c[ERT_MAX_RANK], rest = begin;
	bool is_int = !ert_nx_is_float(a->out->dtype);

	for (int32_t d = a->rank - 1; d >= 0; d--) {
		c[d] = rest % a->ax[d].out;
		rest /= a->ax[d].out;
	}
	for (int64_t o = begin; o < end; o++) {
		double v = one_output(a, c);

		/* Integer outputs: the reference casts its float result, truncating. */
		if (is_int)
			v = trunc(v);
		ert_nx_st(a->out->data, a->out->dtype, o, v);
		for (int32_t d = a->rank - 1; d >= 0; d--) {
			if (++c[d] < a->ax[d].out)
				break;
			c[d] = 0;
		}
	}
}

/* Workspace from shapes alone: the sizes/scales values may not be known yet. */
static size_t resize_workspace(const struct ert_exec *x)
{
	struct ert_resize_params p;
	const struct ert_value *in = x->in[0], *out = x->out[0];
	size_t total = 0;

	memset(&p, 0, sizeof(p));
	p.mode = ERT_RESIZE_LINEAR;
	if (strcmp(ert_attr_string(x->node, "mode", "nearest"), "cubic") == 0)
		p.mode = ERT_RESIZE_CUBIC;
	p.antialias = ert_attr_int(x->node, "antialias", 0) != 0;
	for (int32_t d = 0; d < in->rank; d++)
		total += ert_resize_axis_bytes(out->dims[d], ert_resize_slots(&p, in->dims[d],
									     out->dims[d]));
	return total;
}

static ert_status resize_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in = x->in[0];
	struct ert_resize_params p;
	struct rz_args a = { .in = in, .out = x->out[0], .rank = in->rank };
	char *mem = x->workspace;
	size_t used = 0;
	int64_t stride = 1;
	ert_status st;

	st = ert_resize_params_get(x->node, (const struct ert_value *const *)x->in, x->n_in, &p,
				   err);
	if (st != ERT_OK)
		return st;
	a.extrapolation = p.extrapolation;
	for (int32_t d = in->rank - 1; d >= 0; d--) {
		a.in_stride[d] = stride;
		stride *= in->dims[d];
	}
	for (int32_t d = 0; d < in->rank; d++) {
		int32_t slots;
		size_t bytes;

		if (p.out_dims[d] != x->out[0]->dims[d]) {
			ert_err_set(err, "%s '%s': output dim %d is %lld, planned %lld",
				    ert_op_name(x->node->op), x->node->name, (int)d,
				    (long long)p.out_dims[d], (long long)x->out[0]->dims[d]);
			return ERT_STATUS_SHAPE;
		}
		if (in->dims[d] == 0 && p.out_dims[d] > 0) {
			ert_err_set(err, "%s '%s': cannot resize an empty axis %d to %lld",
				    ert_op_name(x->node->op), x->node->name, (int)d,
				    (long long)p.out_dims[d]);
			return ERT_STATUS_SHAPE;
		}
		slots = ert_resize_slots(&p, in->dims[d], p.out_dims[d]);
		bytes = ert_resize_axis_bytes(p.out_dims[d], slots);
		if (used + bytes > x->workspace_size) {
			ert_err_set(err, "%s '%s': workspace too small", ert_op_name(x->node->op),
				    x->node->name);
			return ERT_STATUS_INTERNAL;
		}
		st = ert_resize_axis_taps(&p, d, in->dims[d], mem + used, slots, &a.ax[d], err);
		if (st != ERT_OK)
			return st;
		used += bytes;
	}
	if (x->out[0]->numel > 0)
		ert_parallel_for(cpu->pool, x->out[0]->numel, 2048, resize_range, &a);
	return ERT_OK;
}

const struct ert_cpu_op ert_cpu_ops_resize[] = {
	{ .op = ERT_OP_Resize, .workspace = resize_workspace, .compute = resize_compute },
	{ .op = ERT_OP_Upsample, .workspace = resize_workspace, .compute = resize_compute },
	{ .compute = NULL },
};
