/* SPDX-License-Identifier: MIT */
/*
 * CPU kernels: NonZero, Compress, Unique (NonMaxSuppression in select-nms.c).
 * Their output sizes depend on the values: each counts or collects first,
 * then gives the shapes through ert_exec_output() and writes the outputs.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/ops/select-kernels.h"

/* Is element @i of @v non-zero? (plain dtypes only: ops/select.c admits no others) */
static bool is_nonzero(const struct ert_value *v, int64_t i)
{
	switch (v->dtype) {
	case ERT_DTYPE_FLOAT32:
		return ((const float *)v->data)[i] != 0.0f;
	case ERT_DTYPE_FLOAT64:
		return ((const double *)v->data)[i] != 0.0;
	case ERT_DTYPE_FLOAT16:
	case ERT_DTYPE_BFLOAT16:
		/* +-0 are the only zeros: every other pattern (NaN too) is non-zero */
		return (((const uint16_t *)v->data)[i] & 0x7fff) != 0;
	default: {
		size_t es = ert_dtype_size(v->dtype);
		const uint8_t *p = (const uint8_t *)v->data + (size_t)i * es;

		for (size_t b = 0; b < es; b++)
			if (p[b])
				return true;
		return false;
	}
	}
}

static ert_status nonzero_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in = x->in[0];
	int32_t rank = in->rank ? in->rank : 1;
	int64_t count = 0, dims[2], j = 0;
	ert_status st;

	for (int64_t i = 0; i < in->numel; i++)
		count += is_nonzero(in, i);
	dims[0] = rank;
	dims[1] = count;
	st = ert_exec_output(x, 0, 2, dims, err);
	if (st != ERT_OK)
		return st;
	int64_t *out = x->out[0]->data;

	for (int64_t i = 0; i < in->numel; i++) {
		int64_t rem = i;

		if (!is_nonzero(in, i))
			continue;
		/* coordinates of element i, last axis fastest */
		for (int32_t d = in->rank - 1; d >= 0; d--) {
			out[d * count + j] = rem % in->dims[d];
			rem /= in->dims[d];
		}
		if (!in->rank)
			out[j] = 0;
		j++;
	}
	return ERT_OK;
}

static ert_status compress_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in = x->in[0], *cond = x->in[1];
	const uint8_t *c = cond->data;
	const struct ert_attr *axis_attr = ert_node_attr(x->node, "axis");
	size_t es = ert_dtype_size(in->dtype);
	int64_t outer = 1, n = in->numel, inner = 1, kept = 0, dims[ERT_MAX_RANK];
	int32_t axis = -1, rank = 1;
	ert_status st;

	if (axis_attr) {
		if (!ert_norm_axis(ert_attr_int(x->node, "axis", 0), in->rank, &axis))
			return ert_node_fail(x->node, err, ERT_STATUS_SHAPE, "axis out of range");
		n = in->dims[axis];
		for (int32_t d = 0; d < axis; d++)
			outer *= in->dims[d];
		for (int32_t d = axis + 1; d < in->rank; d++)
			inner *= in->dims[d];
	}
	/* entries of a longer condition past the axis are not read */
	if (cond->numel < n)
		n = cond->numel;
	for (int64_t i = 0; i < n; i++)
		kept += c[i] != 0;
	if (axis >= 0) {
		memcpy(dims, in->dims, sizeof(dims));
		dims[axis] = kept;
		rank = in->rank;
	} else {
		dims[0] = kept;
	}
	st = ert_exec_output(x, 0, rank, dims, err);
	if (st != ERT_OK)
		return st;
	uint8_t *out = x->out[0]->data;
	int64_t span = axis >= 0 ? in->dims[axis] : in->numel;
	size_t row = (size_t)inner * es;

	for (int64_t o = 0; o < outer && kept; o++) {
		const uint8_t *src = (const uint8_t *)in->data + (size_t)(o * span) * row;

		for (int64_t i = 0; i < n; i++) {
			if (!c[i])
				continue;
			memcpy(out, src + (size_t)i * row, row);
			out += row;
		}
	}
	return ERT_OK;
}

/* ---- Unique: a stable merge sort of the slices' indices ---- */

struct uniq {
	const struct ert_value *in;
	int64_t outer, n, inner; /* slice j: elements (o, j, i), o < outer, i < inner */
};

/* Element @e as a key: floats by value (NaN above all, equal to NaN), ints exact. */
static int cmp_elem(const struct ert_value *v, int64_t a, int64_t b)
{
	switch (v->dtype) {
	case ERT_DTYPE_FLOAT32: case ERT_DTYPE_FLOAT64:
	case ERT_DTYPE_FLOAT16: case ERT_DTYPE_BFLOAT16: {
		double x = ert_value_get_float(v, a), y = ert_value_get_float(v, b);

		if (isnan(x) || isnan(y))
			return isnan(x) - isnan(y);
		return (x > y) - (x < y);
	}
	case ERT_DTYPE_UINT64: {
		uint64_t x = ((const uint64_t *)v->data)[a], y = ((const uint64_t *)v->data)[b];

		return (x > y) - (x < y);
	}
	default: {
		int64_t x = ert_value_get_int(v, a), y = ert_value_get_int(v, b);

		return (x > y) - (x < y);
	}
	}
}

/* Slices @a and @b, compared element by element in their row-major order. */
static int cmp_slice(const struct uniq *u, int64_t a, int64_t b)
{
	for (int64_t o = 0; o < u->outer; o++) {
		for (int64_t i = 0; i < u->inner; i++) {
			int64_t base = o * u->n * u->inner + i;
			int c = cmp_elem(u->in, base + a * u->inner, base + b * u->inner);

			if (c)
				return c;
		}
	}
	return 0;
}

/* Sort @idx (n entries) by key, ties keeping their order; @key NULL: by value. */
static void merge_sort(const struct uniq *u, const int64_t *key, int64_t *idx, int64_t *tmp,
		       int64_t n)
{
	for (int64_t w = 1; w < n; w *= 2) {
		for (int64_t lo = 0; lo < n; lo += 2 * w) {
			int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
			int64_t a = lo, b = mid, o = lo;

			while (a < mid && b < hi) {
				bool right = key ? key[idx[b]] < key[idx[a]]
						 : cmp_slice(u, idx[b], idx[a]) < 0;

				tmp[o++] = right ? idx[b++] : idx[a++];
			}
			while (a < mid)
				tmp[o++] = idx[a++];
			while (b < hi)
				tmp[o++] = idx[b++];
		}
		memcpy(idx, tmp, sizeof(int64_t) * (size_t)n);
	}
}

static bool unique_geometry(const struct ert_exec *x, struct uniq *u, int32_t *axis)
{
	const struct ert_value *in = x->in[0];

	u->in = in;
	u->outer = 1;
	u->inner = 1;
	u->n = in->numel;
	*axis = -1;
	if (!ert_node_attr(x->node, "axis"))
		return true;
	if (!ert_norm_axis(ert_attr_int(x->node, "axis", 0), in->rank, axis))
		return false;
	u->n = in->dims[*axis];
	for (int32_t d = 0; d < *axis; d++)
		u->outer *= in->dims[d];
	for (int32_t d = *axis + 1; d < in->rank; d++)
		u->inner *= in->dims[d];
	return true;
}

/* idx, tmp, group of each slice, first slice of each group, output order: n each */
static size_t unique_workspace(const struct ert_cpu *cpu, const struct ert_exec *x)
{
	struct uniq u;
	int32_t axis;

	if (!unique_geometry(x, &u, &axis))
		return 0;
	return (size_t)(u.n ? u.n : 1) * 5 * sizeof(int64_t);
}

static ert_status unique_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in = x->in[0];
	struct uniq u;
	int32_t axis;
	size_t es = ert_dtype_size(in->dtype);
	bool sorted = ert_attr_int(x->node, "sorted", 1) != 0;
	int64_t groups = 0, dims[ERT_MAX_RANK];
	ert_status st;

	if (!unique_geometry(x, &u, &axis))
		return ert_node_fail(x->node, err, ERT_STATUS_SHAPE, "axis out of range");
	if (!x->workspace || x->workspace_size < unique_workspace(cpu, x))
		return ert_node_fail(x->node, err, ERT_STATUS_INTERNAL, "workspace too small");
	int64_t *idx = x->workspace, *tmp = idx + u.n, *group = tmp + u.n;
	int64_t *first = group + u.n, *order = first + u.n;

	for (int64_t i = 0; i < u.n; i++)
		idx[i] = i;
	merge_sort(&u, NULL, idx, tmp, u.n);
	/* runs of equal slices; stable, so a run starts with its first occurrence */
	for (int64_t i = 0; i < u.n; i++) {
		if (i == 0 || cmp_slice(&u, idx[i - 1], idx[i]) != 0)
			first[groups++] = idx[i];
		group[idx[i]] = groups - 1;
	}
	/* order[g]: the output position of sorted group g */
	for (int64_t g = 0; g < groups; g++)
		order[g] = g;
	if (!sorted) {
		/* by first occurrence: sort the groups by their first slice's index */
		int64_t *by = idx, *pos = tmp;

		for (int64_t g = 0; g < groups; g++)
			by[g] = g;
		merge_sort(&u, first, by, pos, groups);
		for (int64_t g = 0; g < groups; g++)
			order[by[g]] = g;
	}
	if (axis >= 0) {
		memcpy(dims, in->dims, sizeof(dims));
		dims[axis] = groups;
		st = ert_exec_output(x, 0, in->rank, dims, err);
	} else {
		st = ert_exec_output(x, 0, 1, &groups, err);
	}
	if (st == ERT_OK)
		st = ert_exec_output(x, 1, 1, &groups, err);
	if (st == ERT_OK)
		st = ert_exec_output(x, 2, 1, &u.n, err);
	if (st == ERT_OK)
		st = ert_exec_output(x, 3, 1, &groups, err);
	if (st != ERT_OK)
		return st;

	struct ert_value *y = x->out[0];
	int64_t *oi = x->n_out > 1 && x->out[1] ? x->out[1]->data : NULL;
	int64_t *inv = x->n_out > 2 && x->out[2] ? x->out[2]->data : NULL;
	int64_t *cnt = x->n_out > 3 && x->out[3] ? x->out[3]->data : NULL;
	size_t row = (size_t)u.inner * es;

	for (int64_t g = 0; g < groups; g++) {
		int64_t at = order[g];

		for (int64_t o = 0; y && o < u.outer; o++)
			memcpy((uint8_t *)y->data + (size_t)(o * groups + at) * row,
			       (const uint8_t *)in->data + (size_t)(o * u.n + first[g]) * row, row);
		if (oi)
			oi[at] = first[g];
		if (cnt)
			cnt[at] = 0;
	}
	for (int64_t i = 0; i < u.n; i++) {
		if (inv)
			inv[i] = order[group[i]];
		if (cnt)
			cnt[order[group[i]]]++;
	}
	return ERT_OK;
}

static bool select_supports(const struct ert_exec *x)
{
	return x->n_in > 0 && x->in[0] && ert_dtype_size(x->in[0]->dtype) > 0;
}

const struct ert_cpu_op ert_cpu_ops_select[] = {
	{ .op = ERT_OP_NonZero, .supports = select_supports, .compute = nonzero_compute },
	{ .op = ERT_OP_Compress, .supports = select_supports, .compute = compress_compute },
	{ .op = ERT_OP_Unique, .supports = select_supports, .workspace = unique_workspace,
	  .compute = unique_compute },
	{ .op = ERT_OP_NonMaxSuppression, .workspace = ert_cpu_nms_workspace,
	  .compute = ert_cpu_nms_compute },
	{ .compute = NULL },
};
