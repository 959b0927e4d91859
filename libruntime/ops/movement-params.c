/* SPDX-License-Identifier: MIT */
/* Movement family: decoding shared by shape inference and the CPU kernels. */
#include <stdio.h>
#include <string.h>

#include "ops/movement-params.h"

ert_status ert_mv_read_ints(const struct ert_node *n, struct ert_err *err,
			    const struct ert_value *v, const char *what, int64_t *out,
			    uint32_t max, uint32_t *count)
{
	ert_status st = ert_check_known(n, err, what, v);

	if (st != ERT_OK)
		return st;
	if (!ert_dtype_is_int(v->dtype) || ert_dtype_size(v->dtype) == 0)
		return ert_node_fail(n, err, ERT_STATUS_DTYPE, "%s has type %s, expected an integer",
				     what, ert_dtype_name(v->dtype));
	if (v->rank > 1)
		return ert_node_fail(n, err, ERT_STATUS_SHAPE, "%s has rank %d, expected 1", what,
				     (int)v->rank);
	if (v->numel > (int64_t)max)
		return ert_node_fail(n, err, ERT_STATUS_SHAPE, "%s has %lld entries, at most %u allowed",
				     what, (long long)v->numel, max);
	for (int64_t i = 0; i < v->numel; i++)
		out[i] = ert_value_get_int(v, i);
	*count = (uint32_t)v->numel;
	return ERT_OK;
}

ert_status ert_mv_read_axes(const struct ert_node *n, struct ert_err *err,
			    const struct ert_value *const *in, uint32_t n_in,
			    uint32_t input_idx, int32_t rank, int32_t *axes, uint32_t *count,
			    bool *present)
{
	const struct ert_value *v = ert_mv_in(in, n_in, input_idx);
	int64_t raw[ERT_MAX_RANK];
	uint32_t cnt = 0;
	ert_status st;

	*present = false;
	*count = 0;
	if (v) {
		st = ert_mv_read_ints(n, err, v, "axes", raw, ERT_MAX_RANK, &cnt);
		if (st != ERT_OK)
			return st;
		*present = true;
	} else {
		const int64_t *a = ert_attr_ints(n, "axes", &cnt);

		if (!a)
			return ERT_OK;
		if (cnt > ERT_MAX_RANK)
			return ert_node_fail(n, err, ERT_STATUS_SHAPE, "%u axes, at most %d allowed",
					     cnt, ERT_MAX_RANK);
		memcpy(raw, a, cnt * sizeof(raw[0]));
		*present = true;
	}
	for (uint32_t i = 0; i < cnt; i++) {
		if (!ert_norm_axis(raw[i], rank, &axes[i]))
			return ert_node_fail(n, err, ERT_STATUS_SHAPE,
					     "axis %lld (axes[%u]) is out of range for rank %d",
					     (long long)raw[i], i, (int)rank);
		for (uint32_t j = 0; j < i; j++)
			if (axes[j] == axes[i])
				return ert_node_fail(n, err, ERT_STATUS_SHAPE,
						     "axis %d (axes[%u]) is repeated", (int)axes[i], i);
	}
	*count = cnt;
	return ERT_OK;
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

ert_status ert_mv_slice_params(const struct ert_node *n, struct ert_err *err,
			       const struct ert_value *const *in, uint32_t n_in,
			       struct ert_mv_slice *out)
{
	const struct ert_value *x = in[0];
	int64_t starts[ERT_MAX_RANK], ends[ERT_MAX_RANK], steps[ERT_MAX_RANK];
	int32_t axes[ERT_MAX_RANK];
	uint32_t ns = 0, ne = 0, nst = 0, na = 0;
	bool has_axes;
	ert_status st;

	if (ert_mv_in(in, n_in, 1) && ert_mv_in(in, n_in, 2)) {
		st = ert_mv_read_ints(n, err, in[1], "starts", starts, ERT_MAX_RANK, &ns);
		if (st == ERT_OK)
			st = ert_mv_read_ints(n, err, in[2], "ends", ends, ERT_MAX_RANK, &ne);
		if (st == ERT_OK && ert_mv_in(in, n_in, 4))
			st = ert_mv_read_ints(n, err, in[4], "steps", steps, ERT_MAX_RANK, &nst);
		else
			nst = ns;
		if (st != ERT_OK)
			return st;
		if (!ert_mv_in(in, n_in, 4))
			for (uint32_t i = 0; i < ns; i++)
				steps[i] = 1;
	} else {
		const int64_t *a = ert_attr_ints(n, "starts", &ns);
		const int64_t *b = ert_attr_ints(n, "ends", &ne);

		if (!a || !b)
			return ert_node_fail(n, err, ERT_STATUS_INVALID_MODEL,
					     "needs starts and ends (inputs or attributes)");
		if (ns > ERT_MAX_RANK || ne > ERT_MAX_RANK)
			return ert_node_fail(n, err, ERT_STATUS_SHAPE, "too many starts/ends");
		memcpy(starts, a, ns * sizeof(*a));
		memcpy(ends, b, ne * sizeof(*b));
		for (uint32_t i = 0; i < ns; i++)
			steps[i] = 1;
		nst = ns;
	}
	if (ns != ne || ns != nst)
		return ert_node_fail(n, err, ERT_STATUS_SHAPE,
				     "starts, ends and steps have %u, %u and %u entries", ns, ne, nst);
	st = ert_mv_read_axes(n, err, in, n_in, 3, x->rank, axes, &na, &has_axes);
	if (st != ERT_OK)
		return st;
	if (!has_axes) {
		if (ns > (uint32_t)x->rank)
			return ert_node_fail(n, err, ERT_STATUS_SHAPE, "%u starts for rank %d", ns,
					     (int)x->rank);
		for (uint32_t i = 0; i < ns; i++)
			axes[i] = (int32_t)i;
	} else if (na != ns) {
		return ert_node_fail(n, err, ERT_STATUS_SHAPE, "%u axes for %u starts", na, ns);
	}

	out->rank = x->rank;
	for (int32_t i = 0; i < x->rank; i++) {
		out->start[i] = 0;
		out->step[i] = 1;
		out->dims[i] = x->dims[i];
	}
	for (uint32_t i = 0; i < ns; i++) {
		int32_t ax = axes[i];
		int64_t dim = x->dims[ax], s = starts[i], e = ends[i], step = steps[i], len;

		if (step == 0)
			return ert_node_fail(n, err, ERT_STATUS_INVALID_MODEL, "steps[%u] is 0 (axis %d)",
					     i, (int)ax);
		if (s < 0)
			s += dim;
		if (e < 0)
			e += dim;
		if (step > 0) {
			s = clamp64(s, 0, dim);
			e = clamp64(e, 0, dim);
			len = e > s ? (e - s - 1) / step + 1 : 0;
		} else {
			s = clamp64(s, 0, dim - 1);
			e = clamp64(e, -1, dim - 1);
			if (step == INT64_MIN)
				step = -INT64_MAX;
			len = s > e ? (s - e - 1) / -step + 1 : 0;
		}
		out->start[ax] = len > 0 ? s : 0;
		out->step[ax] = step;
		out->dims[ax] = len;
	}
	return ERT_OK;
}

static ert_status pad_mode(const struct ert_node *n, struct ert_err *err,
			   enum ert_mv_pad_mode *mode)
{
	const char *m = ert_attr_string(n, "mode", "constant");

	if (!strcmp(m, "constant"))
		*mode = ERT_MV_PAD_CONSTANT;
	else if (!strcmp(m, "reflect"))
		*mode = ERT_MV_PAD_REFLECT;
	else if (!strcmp(m, "edge"))
		*mode = ERT_MV_PAD_EDGE;
	else if (!strcmp(m, "wrap"))
		*mode = ERT_MV_PAD_WRAP;
	else
		return ert_node_fail(n, err, ERT_STATUS_UNSUPPORTED, "unknown mode '%s'", m);
	return ERT_OK;
}

/* CenterCropPad: crop or pad each listed axis around its centre to input 1's sizes. */
static ert_status center_crop_pad(const struct ert_node *n, struct ert_err *err,
				  const struct ert_value *const *in, uint32_t n_in,
				  struct ert_mv_pad *out)
{
	const struct ert_value *x = in[0];
	int64_t shape[ERT_MAX_RANK];
	int32_t axes[ERT_MAX_RANK];
	uint32_t ns = 0, na = 0;
	bool has_axes;
	ert_status st;

	if (!ert_mv_in(in, n_in, 1))
		return ert_node_fail(n, err, ERT_STATUS_INVALID_MODEL, "needs input 'shape'");
	st = ert_mv_read_ints(n, err, in[1], "shape", shape, ERT_MAX_RANK, &ns);
	if (st == ERT_OK)
		st = ert_mv_read_axes(n, err, in, 0, 0, x->rank, axes, &na, &has_axes);
	if (st != ERT_OK)
		return st;
	if (!has_axes) {
		na = (uint32_t)x->rank;
		for (uint32_t i = 0; i < na; i++)
			axes[i] = (int32_t)i;
	}
	if (ns != na)
		return ert_node_fail(n, err, ERT_STATUS_SHAPE, "shape has %u entries for %u axes", ns,
				     na);
	for (uint32_t i = 0; i < na; i++) {
		int32_t ax = axes[i];
		int64_t dim = x->dims[ax], want = shape[i];

		st = ert_check_dim(n, err, "shape", i, want);
		if (st != ERT_OK)
			return st;
		if (want < dim) {
			out->begin[ax] = -((dim - want) / 2);
			out->end[ax] = want - dim - out->begin[ax];
		} else {
			out->begin[ax] = (want - dim) / 2;
			out->end[ax] = want - dim - out->begin[ax];
		}
		out->dims[ax] = want;
	}
	return ERT_OK;
}

ert_status ert_mv_pad_params(const struct ert_node *n, struct ert_err *err,
			     const struct ert_value *const *in, uint32_t n_in,
			     struct ert_mv_pad *out)
{
	const struct ert_value *x = in[0];
	int64_t pads[2 * ERT_MAX_RANK];
	int32_t axes[ERT_MAX_RANK];
	uint32_t np = 0, na = 0;
	bool has_axes = false;
	ert_status st;

	memset(out, 0, sizeof(*out));
	out->rank = x->rank;
	for (int32_t i = 0; i < x->rank; i++)
		out->dims[i] = x->dims[i];
	if (n->op == ERT_OP_CenterCropPad)
		return center_crop_pad(n, err, in, n_in, out);

	st = pad_mode(n, err, &out->mode);
	if (st != ERT_OK)
		return st;
	if (ert_mv_in(in, n_in, 1)) {
		st = ert_mv_read_ints(n, err, in[1], "pads", pads, 2 * ERT_MAX_RANK, &np);
		if (st == ERT_OK)
			st = ert_mv_read_axes(n, err, in, n_in, 3, x->rank, axes, &na, &has_axes);
		if (st != ERT_OK)
			return st;
		out->has_value_input = ert_mv_in(in, n_in, 2) != NULL;
		if (out->has_value_input && in[2]->numel != 1)
			return ert_node_fail(n, err, ERT_STATUS_SHAPE,
					     "constant_value has %lld elements, expected 1",
					     (long long)in[2]->numel);
		if (out->has_value_input && in[2]->dtype != x->dtype)
			return ert_node_fail(n, err, ERT_STATUS_DTYPE,
					     "constant_value is %s, data is %s",
					     ert_dtype_name(in[2]->dtype), ert_dtype_name(x->dtype));
	} else {
		const int64_t *p = ert_attr_ints(n, "pads", &np);

		if (!p) /* Pad-1 spelling */
			p = ert_attr_ints(n, "paddings", &np);
		if (!p)
			return ert_node_fail(n, err, ERT_STATUS_INVALID_MODEL, "needs pads");
		if (np > 2 * ERT_MAX_RANK)
			return ert_node_fail(n, err, ERT_STATUS_SHAPE, "%u pads for rank %d", np,
					     (int)x->rank);
		memcpy(pads, p, np * sizeof(*p));
		out->value = ert_attr_float(n, "value", 0.0f);
	}
	if (!has_axes) {
		na = (uint32_t)x->rank;
		for (uint32_t i = 0; i < na; i++)
			axes[i] = (int32_t)i;
	}
	if (np != 2 * na)
		return ert_node_fail(n, err, ERT_STATUS_SHAPE, "%u pads for %u axes", np, na);
	for (uint32_t i = 0; i < na; i++) {
		int32_t ax = axes[i];
		int64_t b = pads[i], e = pads[i + na], d = x->dims[ax];

		if (b < -d || e < -d || b > ERT_DIM_MAX || e > ERT_DIM_MAX || d + b + e < 0 ||
		    d + b + e > ERT_DIM_MAX)
			return ert_node_fail(n, err, ERT_STATUS_SHAPE,
					     "pads %lld, %lld do not fit axis %d of size %lld",
					     (long long)b, (long long)e, (int)ax, (long long)d);
		if (out->mode != ERT_MV_PAD_CONSTANT && d == 0 && (b > 0 || e > 0))
			return ert_node_fail(n, err, ERT_STATUS_SHAPE,
					     "cannot pad empty axis %d in this mode", (int)ax);
		out->begin[ax] = b;
		out->end[ax] = e;
		out->dims[ax] = d + b + e;
	}
	return ERT_OK;
}

bool ert_mv_store_scalar(ert_dtype dt, double v, void *dst)
{
	switch (dt) {
	case ERT_DTYPE_FLOAT32: { float t = (float)v; memcpy(dst, &t, 4); return true; }
	case ERT_DTYPE_FLOAT64: memcpy(dst, &v, 8); return true;
	case ERT_DTYPE_FLOAT16: { uint16_t t = ert_fp32_to_fp16((float)v); memcpy(dst, &t, 2); return true; }
	case ERT_DTYPE_BFLOAT16: { uint16_t t = ert_fp32_to_bf16((float)v); memcpy(dst, &t, 2); return true; }
	case ERT_DTYPE_INT8: { int8_t t = (int8_t)(int64_t)v; memcpy(dst, &t, 1); return true; }
	case ERT_DTYPE_UINT8: { uint8_t t = (uint8_t)(int64_t)v; memcpy(dst, &t, 1); return true; }
	case ERT_DTYPE_BOOL: { uint8_t t = v != 0.0; memcpy(dst, &t, 1); return true; }
	case ERT_DTYPE_INT16: { int16_t t = (int16_t)(int64_t)v; memcpy(dst, &t, 2); return true; }
	case ERT_DTYPE_UINT16: { uint16_t t = (uint16_t)(int64_t)v; memcpy(dst, &t, 2); return true; }
	case ERT_DTYPE_INT32: { int32_t t = (int32_t)(int64_t)v; memcpy(dst, &t, 4); return true; }
	case ERT_DTYPE_UINT32: { uint32_t t = (uint32_t)(int64_t)v; memcpy(dst, &t, 4); return true; }
	case ERT_DTYPE_INT64: { int64_t t = (int64_t)v; memcpy(dst, &t, 8); return true; }
	case ERT_DTYPE_UINT64: { uint64_t t = (uint64_t)(int64_t)v; memcpy(dst, &t, 8); return true; }
	case ERT_DTYPE_FLOAT8E4M3FN:
	case ERT_DTYPE_FLOAT8E4M3FNUZ:
	case ERT_DTYPE_FLOAT8E5M2:
	case ERT_DTYPE_FLOAT8E5M2FNUZ:
		/* only zero, whose encoding is all bits clear in every fp8 variant */
		if (v != 0.0)
			return false;
		memset(dst, 0, 1);
		return true;
	default:
		return false;
	}
}
