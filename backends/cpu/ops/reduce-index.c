/* SPDX-License-Identifier: MIT */
/*
 * CPU reference kernels along one axis: ArgMax, ArgMin, CumSum, TopK. X is viewed
 * as [outer, n, inner] lanes. Integer dtypes compare and add in int64 so large
 * values keep their exact order and sums.
 */
#include <string.h>

#include "cpu/ops/norm-access.h"
#include "cpu/ops/reduce-kernels.h"

struct lane {
	const struct ert_value *in;
	struct ert_value *out, *out2;
	int64_t n, inner;
	bool is_int;
	bool flag_a, flag_b;  /* ArgMax: is_max, select_last; CumSum: exclusive, reverse */
	int64_t k;            /* TopK */
	void *ws;
};

static int64_t ld_i64(const void *p, ert_dtype dt, int64_t i)
{
	if (dt == ERT_DTYPE_INT64)
		return ((const int64_t *)p)[i];
	if (dt == ERT_DTYPE_UINT64)
		return (int64_t)((const uint64_t *)p)[i];
	return (int64_t)ert_nx_ld(p, dt, i);
}

/* <0, 0, >0 as element @i is less than, equal to, greater than element @j. */
static int cmp_elem(const struct lane *l, int64_t i, int64_t j)
{
	const void *p = l->in->data;
	ert_dtype dt = l->in->dtype;

	if (l->is_int) {
		int64_t a = ld_i64(p, dt, i), b = ld_i64(p, dt, j);

		return (a > b) - (a < b);
	}
	double a = ert_nx_ld(p, dt, i), b = ert_nx_ld(p, dt, j);

	/* NaN ranks above every number, so it wins ArgMax and TopK like numpy's max. */
	if (isnan(a) || isnan(b))
		return isnan(a) - isnan(b);
	return (a > b) - (a < b);
}

static void lane_setup(struct lane *l, const struct ert_value *in, int32_t axis)
{
	l->in = in;
	l->n = in->dims[axis];
	l->inner = ert_nx_span(in, axis + 1, in->rank);
	l->is_int = !ert_nx_is_float(in->dtype);
}

static int64_t lane_base(const struct lane *l, int64_t r)
{
	return (r / l->inner) * l->n * l->inner + r % l->inner;
}

static int64_t lanes_of(const struct ert_value *in, int32_t axis)
{
	return ert_nx_span(in, 0, axis) * ert_nx_span(in, axis + 1, in->rank);
}

static void arg_range(void *arg, int64_t begin, int64_t end)
{
	const struct lane *l = arg;

	for (int64_t r = begin; r < end; r++) {
		int64_t base = lane_base(l, r), best = 0;

		for (int64_t k = 1; k < l->n; k++) {
			int c = cmp_elem(l, base + k * l->inner, base + best * l->inner);

			if (!l->flag_a)
				c = -c;
			if (c > 0 || (c == 0 && l->flag_b))
				best = k;
		}
		((int64_t *)l->out->data)[r] = best;
	}
}

ert_status ert_cpu_argminmax(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in = x->in[0];
	struct lane l = { .out = x->out[0] };
	int32_t axis;

	if (!ert_norm_axis(ert_attr_int(x->node, "axis", 0), in->rank, &axis))
		return ert_node_fail(x->node, err, ERT_STATUS_SHAPE, "axis out of range");
	lane_setup(&l, in, axis);
	l.flag_a = x->node->op == ERT_OP_ArgMax;
	l.flag_b = ert_attr_int(x->node, "select_last_index", 0) != 0;
	if (lanes_of(in, axis) > 0 && l.n > 0)
		ert_parallel_for(cpu->pool, lanes_of(in, axis), 4096 / (l.n + 1) + 1, arg_range, &l);
	return ERT_OK;
}

static void cumsum_range(void *arg, int64_t begin, int64_t end)
{
	const struct lane *l = arg;
	ert_dtype dt = l->in->dtype;

	for (int64_t r = begin; r < end; r++) {
		int64_t base = lane_base(l, r);
		double acc = 0.0;
		uint64_t iacc = 0;

		for (int64_t s = 0; s < l->n; s++) {
			int64_t k = l->flag_b ? l->n - 1 - s : s, i = base + k * l->inner;

			if (l->is_int) {
				uint64_t v = (uint64_t)ld_i64(l->in->data, dt, i);

				if (!l->flag_a)
					iacc += v;
				if (dt == ERT_DTYPE_INT64 || dt == ERT_DTYPE_UINT64)
					((int64_t *)l->out->data)[i] = (int64_t)iacc;
				else
					ert_nx_st(l->out->data, dt, i, (double)(int64_t)iacc);
				if (l->flag_a)
					iacc += v;
			} else {
				double v = ert_nx_ld(l->in->data, dt, i);

				if (!l->flag_a)
					acc += v;
				ert_nx_st(l->out->data, dt, i, acc);
				if (l->flag_a)
					acc += v;
			}
		}
	}
}

ert_status ert_cpu_cumsum(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in = x->in[0], *ax = x->in[1];
	struct lane l = { .out = x->out[0] };
	int64_t axis_v = ax && ax->data && ax->numel == 1 ? ert_value_get_int(ax, 0) : INT64_MAX;
	int32_t axis;

	if (!ert_norm_axis(axis_v, in->rank, &axis))
		return ert_node_fail(x->node, err, ERT_STATUS_SHAPE, "axis out of range");
	lane_setup(&l, in, axis);
	l.flag_a = ert_attr_int(x->node, "exclusive", 0) != 0;
	l.flag_b = ert_attr_int(x->node, "reverse", 0) != 0;
	if (lanes_of(in, axis) > 0)
		ert_parallel_for(cpu->pool, lanes_of(in, axis), 4096 / (l.n + 1) + 1, cumsum_range,
				 &l);
	return ERT_OK;
}

/* ---- TopK: stable merge sort of one lane's indices ---- */

static bool before(const struct lane *l, int64_t base, int64_t i, int64_t j)
{
	int c = cmp_elem(l, base + i * l->inner, base + j * l->inner);

	return l->flag_a ? c > 0 : c < 0;
}

static void sort_lane(const struct lane *l, int64_t base, int64_t *idx, int64_t *tmp)
{
	int64_t n = l->n;

	for (int64_t i = 0; i < n; i++)
		idx[i] = i;
	for (int64_t w = 1; w < n; w *= 2) {
		for (int64_t lo = 0; lo < n; lo += 2 * w) {
			int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
			int64_t a = lo, b = mid, o = lo;

			/* Ties keep the lower index first: take from the left run. */
			while (a < mid && b < hi)
				tmp[o++] = before(l, base, idx[b], idx[a]) ? idx[b++] : idx[a++];
			while (a < mid)
				tmp[o++] = idx[a++];
			while (b < hi)
				tmp[o++] = idx[b++];
		}
		memcpy(idx, tmp, sizeof(int64_t) * (size_t)n);
	}
}

static void topk_range(void *arg, int64_t begin, int64_t end)
{
	const struct lane *l = arg;
	size_t es = ert_dtype_size(l->in->dtype);

	for (int64_t r = begin; r < end; r++) {
		int64_t base = lane_base(l, r);
		int64_t *idx = (int64_t *)l->ws + r * 2 * l->n, *tmp = idx + l->n;
		int64_t obase = (r / l->inner) * l->k * l->inner + r % l->inner;

		sort_lane(l, base, idx, tmp);
		for (int64_t k = 0; k < l->k; k++) {
			int64_t o = obase + k * l->inner;

			memcpy((char *)l->out->data + o * (int64_t)es,
			       (const char *)l->in->data + (base + idx[k] * l->inner) * (int64_t)es, es);
			if (l->out2)
				((int64_t *)l->out2->data)[o] = idx[k];
		}
	}
}

size_t ert_cpu_topk_workspace(const struct ert_cpu *cpu, const struct ert_exec *x)
{
	return (size_t)x->in[0]->numel * 2 * sizeof(int64_t);
}

ert_status ert_cpu_topk(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in = x->in[0];
	struct lane l = { .out = x->out[0], .out2 = x->n_out > 1 ? x->out[1] : NULL };
	int32_t axis;

	if (!ert_norm_axis(ert_attr_int(x->node, "axis", -1), in->rank, &axis))
		return ert_node_fail(x->node, err, ERT_STATUS_SHAPE, "axis out of range");
	lane_setup(&l, in, axis);
	l.k = x->out[0]->dims[axis];
	if (x->alloc_output) {
		/* K known only now: it gives the outputs' shapes */
		int64_t dims[ERT_MAX_RANK];
		ert_status st;

		l.k = ert_value_get_int(x->in[1], 0);
		if (l.k < 0 || l.k > in->dims[axis])
			return ert_node_fail(x->node, err, ERT_STATUS_INVALID_ARGUMENT,
					     "K = %lld, axis has %lld elements", (long long)l.k,
					     (long long)in->dims[axis]);
		memcpy(dims, in->dims, sizeof(dims));
		dims[axis] = l.k;
		st = ert_exec_output(x, 0, in->rank, dims, err);
		if (st == ERT_OK)
			st = ert_exec_output(x, 1, in->rank, dims, err);
		if (st != ERT_OK)
			return st;
	}
	l.flag_a = ert_attr_int(x->node, "largest", 1) != 0;
	l.ws = x->workspace;
	if (lanes_of(in, axis) > 0 && l.k > 0)
		ert_parallel_for(cpu->pool, lanes_of(in, axis), 1, topk_range, &l);
	return ERT_OK;
}
