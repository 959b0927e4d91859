/* SPDX-License-Identifier: MIT */
/*
 * Shared machinery of the CPU elementwise kernels: the broadcast walker and
 * conversions of reduced-precision floats.
 */
#include <math.h>
#include <string.h>

#include "cpu/ops/elementwise.h"

ert_status ert_bcast_init(struct ert_bcast *b, const struct ert_value *out,
			  const struct ert_value *const *in, uint32_t n_in, struct ert_err *err)
{
	int64_t own[ERT_BCAST_MAX_IN][ERT_MAX_RANK];
	int32_t r = 0, m = 0;

	memset(b, 0, sizeof(*b));
	b->n_in = n_in;
	b->numel = ert_shape_numel(out->rank, out->dims);
	/* Shape inference guarantees this; a kernel must still never read out of bounds. */
	for (uint32_t k = 0; k < n_in; k++) {
		int64_t s = 1;
		bool ok = in[k]->rank <= out->rank && n_in <= ERT_BCAST_MAX_IN;

		for (int32_t j = in[k]->rank - 1; ok && j >= 0; j--) {
			int64_t o = out->dims[j + out->rank - in[k]->rank];

			ok = in[k]->dims[j] == o || in[k]->dims[j] == 1;
			own[k][j] = s;
			s *= in[k]->dims[j];
		}
		if (!ok) {
			ert_err_set(err, "input %u does not broadcast to the output shape", k);
			return ERT_STATUS_INTERNAL;
		}
	}
	/* Size-1 output dims carry nothing: drop them. */
	for (int32_t d = 0; d < out->rank; d++) {
		if (out->dims[d] == 1)
			continue;
		b->dims[r] = out->dims[d];
		for (uint32_t k = 0; k < n_in; k++) {
			int32_t j = d - (out->rank - in[k]->rank);

			b->strides[k][r] = j >= 0 && in[k]->dims[j] != 1 ? own[k][j] : 0;
		}
		r++;
	}
	/* Merge a dim into its outer neighbour when every input walks them as one. */
	for (int32_t d = 0; d < r; d++) {
		bool merge = m > 0;

		for (uint32_t k = 0; merge && k < n_in; k++)
			merge = b->strides[k][m - 1] == b->strides[k][d] * b->dims[d];
		if (merge) {
			b->dims[m - 1] *= b->dims[d];
			for (uint32_t k = 0; k < n_in; k++)
				b->strides[k][m - 1] = b->strides[k][d];
			continue;
		}
		b->dims[m] = b->dims[d];
		for (uint32_t k = 0; k < n_in; k++)
			b->strides[k][m] = b->strides[k][d];
		m++;
	}
	if (m == 0) {
		b->dims[0] = 1;
		for (uint32_t k = 0; k < n_in; k++)
			b->strides[k][0] = 0;
		m = 1;
	}
	b->rank = m;
	return ERT_OK;
}

struct bcast_job {
	const struct ert_bcast *b;
	ert_bcast_fn fn;
	void *ctx;
};

static void bcast_range(void *arg, int64_t begin, int64_t end)
{
	const struct bcast_job *job = arg;
	const struct ert_bcast *b = job->b;
	int64_t coord[ERT_MAX_RANK], off[ERT_BCAST_MAX_IN] = { 0 }, step[ERT_BCAST_MAX_IN];
	int32_t last = b->rank - 1;
	int64_t idx = begin, pos = begin;

	for (int32_t d = last; d >= 0; d--) {
		coord[d] = idx % b->dims[d];
		idx /= b->dims[d];
		for (uint32_t k = 0; k < b->n_in; k++)
			off[k] += coord[d] * b->strides[k][d];
	}
	for (uint32_t k = 0; k < b->n_in; k++)
		step[k] = b->strides[k][last];
	while (pos < end) {
		int64_t n = b->dims[last] - coord[last];

		if (n > end - pos)
			n = end - pos;
		job->fn(job->ctx, off, step, pos, n);
		pos += n;
		coord[last] += n;
		for (uint32_t k = 0; k < b->n_in; k++)
			off[k] += n * step[k];
		for (int32_t d = last; d > 0 && coord[d] == b->dims[d]; d--) {
			coord[d] = 0;
			coord[d - 1]++;
			for (uint32_t k = 0; k < b->n_in; k++)
				off[k] += b->strides[k][d - 1] - b->dims[d] * b->strides[k][d];
		}
	}
}

void ert_bcast_run(struct ert_cpu *cpu, const struct ert_bcast *b, ert_bcast_fn fn, void *ctx)
{
	struct bcast_job job = { b, fn, ctx };

	if (b->numel > 0)
		ert_ew_parallel(cpu, b->numel, bcast_range, &job);
}

/* ---- float8 ---- */

struct fp8_format {
	int mbits, bias;
	bool fnuz;          /* no -0 and no inf; 0x80 is the only NaN */
	bool has_inf;       /* E5M2: IEEE-style inf and NaN */
	double max;
};

static const struct fp8_format *fp8_format(ert_dtype dt)
{
	static const struct fp8_format e4m3fn = { 3, 7, false, false, 448.0 };
	static const struct fp8_format e4m3fnuz = { 3, 8, true, false, 240.0 };
	static const struct fp8_format e5m2 = { 2, 15, false, true, 57344.0 };
	static const struct fp8_format e5m2fnuz = { 2, 16, true, false, 57344.0 };

	switch (dt) {
	case ERT_DTYPE_FLOAT8E4M3FN: return &e4m3fn;
	case ERT_DTYPE_FLOAT8E4M3FNUZ: return &e4m3fnuz;
	case ERT_DTYPE_FLOAT8E5M2: return &e5m2;
	case ERT_DTYPE_FLOAT8E5M2FNUZ: return &e5m2fnuz;
	default: return NULL;
	}
}

bool ert_dtype_is_fp8(ert_dtype dt)
{
	return fp8_format(dt) != NULL;
}

float ert_fp8_to_f32(uint8_t v, ert_dtype dt)
{
	const struct fp8_format *f = fp8_format(dt);
	int ebits, e, m;
	double r;

	if (!f)
		return NAN;
	ebits = 7 - f->mbits;
	e = (v >> f->mbits) & ((1 << ebits) - 1);
	m = v & ((1 << f->mbits) - 1);
	if (f->fnuz && v == 0x80)
		return NAN;
	if (f->has_inf && e == (1 << ebits) - 1)
		return m ? NAN : (v & 0x80) ? -INFINITY : INFINITY;
	if (!f->fnuz && !f->has_inf && (v & 0x7f) == 0x7f)
		return NAN;
	if (e == 0)
		r = ldexp(m, 1 - f->bias - f->mbits);
	else
		r = ldexp(m + (1 << f->mbits), e - f->bias - f->mbits);
	return (float)((v & 0x80) ? -r : r);
}

/* NaN keeps the sign where the format has signed NaNs, as the ONNX reference does. */
static uint8_t fp8_nan(const struct fp8_format *f, uint8_t sign)
{
	return f->fnuz ? 0x80 : (uint8_t)(sign | 0x7f);
}

uint8_t ert_f32_to_fp8(float x, ert_dtype dt, bool saturate)
{
	const struct fp8_format *f = fp8_format(dt);
	uint8_t sign = signbit(x) ? 0x80 : 0;
	double a = fabs((double)x), step, q;
	int e, emin;

	if (!f)
		return 0;
	if (isnan(x))
		return fp8_nan(f, sign);
	if (isinf(x) && !saturate)
		return f->has_inf ? (uint8_t)(sign | 0x7c) : fp8_nan(f, sign);
	if (isinf(x))
		q = f->max;
	else {
		emin = 1 - f->bias;
		frexp(a, &e);
		e = e - 1 < emin ? emin : e - 1;
		step = ldexp(1.0, e - f->mbits);
		q = nearbyint(a / step) * step; /* ties to even: the default rounding mode */
		if (q > f->max) {
			if (!saturate)
				return f->has_inf ? (uint8_t)(sign | 0x7c) : fp8_nan(f, sign);
			q = f->max;
		}
	}
	if (q == 0.0)
		return f->fnuz ? 0 : sign;
	emin = 1 - f->bias;
	if (q < ldexp(1.0, emin))
		return (uint8_t)(sign | (int)(q / ldexp(1.0, emin - f->mbits)));
	frexp(q, &e);
	e -= 1;
	int mant = (int)(q / ldexp(1.0, e - f->mbits)) - (1 << f->mbits);

	return (uint8_t)(sign | ((e + f->bias) << f->mbits) | mant);
}

/* ---- float16 / bfloat16 ---- */

void ert_half_to_f32(ert_dtype dt, const uint16_t *src, float *dst, int64_t n)
{
	if (dt == ERT_DTYPE_BFLOAT16) {
		for (int64_t i = 0; i < n; i++)
			dst[i] = ert_bf16_to_fp32(src[i]);
	} else {
		for (int64_t i = 0; i < n; i++)
			dst[i] = ert_fp16_to_fp32(src[i]);
	}
}

void ert_f32_to_half(ert_dtype dt, const float *src, uint16_t *dst, int64_t n)
{
	if (dt == ERT_DTYPE_BFLOAT16) {
		for (int64_t i = 0; i < n; i++)
			dst[i] = ert_fp32_to_bf16(src[i]);
	} else {
		for (int64_t i = 0; i < n; i++)
			dst[i] = ert_fp32_to_fp16(src[i]);
	}
}
