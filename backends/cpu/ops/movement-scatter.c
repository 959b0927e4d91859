/* SPDX-License-Identifier: MIT */
/*
 * CPU: ScatterElements and ScatterND with reductions none/add/mul/max/min.
 * Updates are applied serially in index order, so duplicate indices behave as
 * the ONNX reference does (the last write wins for "none").
 */
#include <string.h>

#include "movement-cpu.h"

enum reduction { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN };

static ert_status get_reduction(const struct ert_exec *x, struct ert_err *err,
				enum reduction *out)
{
	const char *r = ert_attr_string(x->node, "reduction", "none");

	if (!strcmp(r, "none"))
		*out = RED_NONE;
	else if (!strcmp(r, "add"))
		*out = RED_ADD;
	else if (!strcmp(r, "mul"))
		*out = RED_MUL;
	else if (!strcmp(r, "max"))
		*out = RED_MAX;
	else if (!strcmp(r, "min"))
		*out = RED_MIN;
	else
		return ert_node_fail(x->node, err, ERT_STATUS_UNSUPPORTED, "reduction '%s'", r);
	return ERT_OK;
}

#define REDUCE_LOOP(T, ADD, MUL)                                                  \
	do {                                                                      \
		T *d_ = dst;                                                      \
		const T *s_ = src;                                                \
		for (int64_t i = 0; i < n; i++) {                                 \
			T a_ = d_[i], b_ = s_[i];                                 \
			switch (red) {                                            \
			case RED_ADD: d_[i] = (ADD); break;                       \
			case RED_MUL: d_[i] = (MUL); break;                       \
			case RED_MAX: d_[i] = b_ > a_ ? b_ : a_; break;           \
			case RED_MIN: d_[i] = b_ < a_ ? b_ : a_; break;           \
			case RED_NONE: d_[i] = b_; break;                         \
			}                                                         \
		}                                                                 \
	} while (0)

#define REDUCE_FLOAT(T) REDUCE_LOOP(T, a_ + b_, a_ * b_)
/* Integers wrap like two's complement rather than overflow a signed type. */
#define REDUCE_INT(T)                                                             \
	REDUCE_LOOP(T, (T)((uint64_t)a_ + (uint64_t)b_), (T)((uint64_t)a_ * (uint64_t)b_))

static float half_get(ert_dtype dt, uint16_t h)
{
	return dt == ERT_DTYPE_FLOAT16 ? ert_fp16_to_fp32(h) : ert_bf16_to_fp32(h);
}

static uint16_t half_put(ert_dtype dt, float f)
{
	return dt == ERT_DTYPE_FLOAT16 ? ert_fp32_to_fp16(f) : ert_fp32_to_bf16(f);
}

/* dst[i] = red(dst[i], src[i]) for @n elements of @dt; false for types it cannot combine. */
static bool reduce_into(ert_dtype dt, enum reduction red, void *dst, const void *src, int64_t n)
{
	if (red == RED_NONE) {
		memcpy(dst, src, (size_t)n * ert_dtype_size(dt));
		return true;
	}
	switch (dt) {
	case ERT_DTYPE_FLOAT32: REDUCE_FLOAT(float); return true;
	case ERT_DTYPE_FLOAT64: REDUCE_FLOAT(double); return true;
	case ERT_DTYPE_INT8: REDUCE_INT(int8_t); return true;
	case ERT_DTYPE_UINT8: REDUCE_INT(uint8_t); return true;
	case ERT_DTYPE_INT16: REDUCE_INT(int16_t); return true;
	case ERT_DTYPE_UINT16: REDUCE_INT(uint16_t); return true;
	case ERT_DTYPE_INT32: REDUCE_INT(int32_t); return true;
	case ERT_DTYPE_UINT32: REDUCE_INT(uint32_t); return true;
	case ERT_DTYPE_INT64: REDUCE_INT(int64_t); return true;
	case ERT_DTYPE_UINT64: REDUCE_INT(uint64_t); return true;
	case ERT_DTYPE_BOOL: {
		uint8_t *d = dst;
		const uint8_t *s = src;

		for (int64_t i = 0; i < n; i++)
			d[i] = red == RED_ADD || red == RED_MAX ? (d[i] || s[i]) : (d[i] && s[i]);
		return true;
	}
	case ERT_DTYPE_FLOAT16:
	case ERT_DTYPE_BFLOAT16: {
		uint16_t *d = dst;
		const uint16_t *s = src;

		for (int64_t i = 0; i < n; i++) {
			float a = half_get(dt, d[i]), b = half_get(dt, s[i]), r = a;

			switch (red) {
			case RED_ADD: r = a + b; break;
			case RED_MUL: r = a * b; break;
			case RED_MAX: r = b > a ? b : a; break;
			case RED_MIN: r = b < a ? b : a; break;
			case RED_NONE: r = b; break;
			}
			d[i] = half_put(dt, r);
		}
		return true;
	}
	default:
		return false;
	}
}

static int64_t index_at(const struct ert_value *v, int64_t i)
{
	return v->dtype == ERT_DTYPE_INT32 ? ((const int32_t *)v->data)[i]
					   : ((const int64_t *)v->data)[i];
}

static ert_status unsupported_type(const struct ert_exec *x, struct ert_err *err)
{
	return ert_node_fail(x->node, err, ERT_STATUS_UNSUPPORTED, "reduction on %s",
			     ert_dtype_name(x->in[0]->dtype));
}

ert_status ert_mv_cpu_scatter_elements(struct ert_cpu *cpu, struct ert_exec *x,
				       struct ert_err *err)
{
	const struct ert_value *in = x->in[0], *idx = x->in[1], *upd = x->in[2];
	struct ert_value *out = x->out[0];
	int64_t strides[ERT_MAX_RANK], pos[ERT_MAX_RANK] = { 0 };
	size_t es = ert_dtype_size(in->dtype);
	enum reduction red;
	int32_t axis;
	ert_status st;

	if ((st = get_reduction(x, err, &red)))
		return st;
	if (!ert_norm_axis(ert_attr_int(x->node, "axis", 0), in->rank, &axis))
		return ert_node_fail(x->node, err, ERT_STATUS_SHAPE, "bad axis");
	for (int64_t i = 0; i < idx->numel; i++) {
		int64_t k = index_at(idx, i);

		if (k < -in->dims[axis] || k >= in->dims[axis])
			return ert_node_fail(x->node, err, ERT_STATUS_INVALID_ARGUMENT,
					     "index %lld out of range for an axis of size %lld",
					     (long long)k, (long long)in->dims[axis]);
	}
	ert_mv_copy(cpu, out->data, in->data, out->nbytes);
	ert_mv_strides(in->rank, in->dims, strides);
	for (int64_t i = 0; i < idx->numel; i++) {
		int64_t off = 0, k = index_at(idx, i);

		if (k < 0)
			k += in->dims[axis];
		for (int32_t a = 0; a < in->rank; a++)
			off += (a == axis ? k : pos[a]) * strides[a];
		if (!reduce_into(in->dtype, red, (char *)out->data + (size_t)off * es,
				 (const char *)upd->data + (size_t)i * es, 1))
			return unsupported_type(x, err);
		for (int32_t a = idx->rank - 1; a >= 0; a--) {
			if (++pos[a] < idx->dims[a])
				break;
			pos[a] = 0;
		}
	}
	return ERT_OK;
}

ert_status ert_mv_cpu_scatter_nd(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in = x->in[0], *idx = x->in[1], *upd = x->in[2];
	struct ert_value *out = x->out[0];
	int64_t k = idx->dims[idx->rank - 1], strides[ERT_MAX_RANK];
	int64_t tuples = idx->numel / k;
	int64_t slice = ert_shape_numel(in->rank - (int32_t)k, in->dims + k);
	size_t es = ert_dtype_size(in->dtype);
	enum reduction red;
	ert_status st;

	if ((st = get_reduction(x, err, &red)))
		return st;
	for (int64_t i = 0; i < idx->numel; i++) {
		int64_t d = in->dims[i % k], v = index_at(idx, i);

		if (v < -d || v >= d)
			return ert_node_fail(x->node, err, ERT_STATUS_INVALID_ARGUMENT,
					     "index %lld out of range for an axis of size %lld",
					     (long long)v, (long long)d);
	}
	ert_mv_copy(cpu, out->data, in->data, out->nbytes);
	ert_mv_strides(in->rank, in->dims, strides);
	for (int64_t t = 0; t < tuples; t++) {
		int64_t off = 0;

		for (int64_t c = 0; c < k; c++) {
			int64_t v = index_at(idx, t * k + c);

			off += (v < 0 ? v + in->dims[c] : v) * strides[c];
		}
		if (!reduce_into(in->dtype, red, (char *)out->data + (size_t)off * es,
				 (const char *)upd->data + (size_t)(t * slice) * es, slice))
			return unsupported_type(x, err);
	}
	return ERT_OK;
}
