/* SPDX-License-Identifier: MIT */
/*
 * CPU reference kernels: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear.
 *
 * These are the oracle for the NPU, so the arithmetic follows the ONNX reference
 * exactly: quantise = saturate(rint(x / scale) + zero_point) with x / scale in
 * float32 and rint rounding half to even; dequantise = (float(x) - float(zp)) *
 * scale in float32, rounded to the scale's dtype.
 */
#include <string.h>

#include "cpu/cpu-impl.h"
#include "cpu/ops/norm-access.h"
#include "cpu/ops/qlinear-kernels.h"
#include "cpu/ops/quant-fp8.h"
#include "ops/quant-layout.h"

static bool is_fp8(ert_dtype dt)
{
	return dt == ERT_DTYPE_FLOAT8E4M3FN || dt == ERT_DTYPE_FLOAT8E4M3FNUZ ||
	       dt == ERT_DTYPE_FLOAT8E5M2 || dt == ERT_DTYPE_FLOAT8E5M2FNUZ;
}

static bool is_4bit(ert_dtype dt)
{
	return dt == ERT_DTYPE_INT4 || dt == ERT_DTYPE_UINT4;
}

/* Element @i of a quantised tensor as float (int4 packed low nibble first). */
static float q_load(const void *p, ert_dtype dt, int64_t i)
{
	if (is_4bit(dt)) {
		uint8_t b = ((const uint8_t *)p)[i >> 1];
		int v = (i & 1) ? b >> 4 : b & 15;

		return (float)(dt == ERT_DTYPE_INT4 && v >= 8 ? v - 16 : v);
	}
	if (is_fp8(dt))
		return ert_q_fp8_to_f32(((const uint8_t *)p)[i], dt);
	return (float)ert_nx_ld(p, dt, i);
}

static void q_range_of(ert_dtype dt, double *lo, double *hi)
{
	switch (dt) {
	case ERT_DTYPE_INT8: *lo = -128; *hi = 127; break;
	case ERT_DTYPE_UINT16: *lo = 0; *hi = 65535; break;
	case ERT_DTYPE_INT16: *lo = -32768; *hi = 32767; break;
	case ERT_DTYPE_INT32: *lo = -2147483648.0; *hi = 2147483647.0; break;
	case ERT_DTYPE_UINT4: *lo = 0; *hi = 15; break;
	case ERT_DTYPE_INT4: *lo = -8; *hi = 7; break;
	default: *lo = 0; *hi = 255; break;
	}
}

struct q_args {
	const struct ert_value *x, *scale, *zp;
	struct ert_value *y;
	struct ert_quant_layout l;
	double lo, hi;
	bool saturate;
	ert_q8_quant_fn vec;    /* quantize_bytes()'s level kernel, or NULL */
	ert_q8_dequant_fn dq;   /* dequantize_range()'s level kernel for bytes, or NULL */
};

/* Quantised code of element @i: an integer, or an fp8 bit pattern. */
static int64_t quantize_one(const struct q_args *a, int64_t i)
{
	int64_t pi = ert_quant_param_index(&a->l, i);
	float s = (float)ert_nx_ld(a->scale->data, a->scale->dtype, pi);
	float q = (float)ert_nx_ld(a->x->data, a->x->dtype, i) / s;
	ert_dtype yt = a->y->dtype;
	double r;

	/* numpy divides float16 by float16 in float32 and rounds back to float16. */
	if (a->x->dtype == ERT_DTYPE_FLOAT16)
		q = ert_fp16_to_fp32(ert_fp32_to_fp16(q));
	else if (a->x->dtype == ERT_DTYPE_BFLOAT16)
		q = ert_bf16_to_fp32(ert_fp32_to_bf16(q));
	if (is_fp8(yt)) {
		if (a->zp)
			q += q_load(a->zp->data, yt, pi);
		return ert_q_f32_to_fp8(q, yt, a->saturate);
	}
	if (isnan(q))
		r = 0.0;
	else
		r = nearbyint((double)q);
	if (a->zp)
		r += q_load(a->zp->data, yt, pi);
	r = r < a->lo ? a->lo : r > a->hi ? a->hi : r;
	return (int64_t)r;
}

static void quantize_range(void *arg, int64_t begin, int64_t end)
{
	const struct q_args *a = arg;
	ert_dtype yt = a->y->dtype;
	void *y = a->y->data;
	int64_t n = a->x->numel;

	if (is_4bit(yt)) {
		/* One unit is one output byte (two elements), so threads never share a byte. */
		for (int64_t b = begin; b < end; b++) {
			int64_t lo = quantize_one(a, 2 * b);
			int64_t hi = 2 * b + 1 < n ? quantize_one(a, 2 * b + 1) : 0;

			((uint8_t *)y)[b] = (uint8_t)((lo & 15) | ((hi & 15) << 4));
		}
		return;
	}
	for (int64_t i = begin; i < end; i++) {
		int64_t v = quantize_one(a, i);

		switch (yt) {
		case ERT_DTYPE_INT8: ((int8_t *)y)[i] = (int8_t)v; break;
		case ERT_DTYPE_UINT16: ((uint16_t *)y)[i] = (uint16_t)v; break;
		case ERT_DTYPE_INT16: ((int16_t *)y)[i] = (int16_t)v; break;
		case ERT_DTYPE_INT32: ((int32_t *)y)[i] = (int32_t)v; break;
		default: ((uint8_t *)y)[i] = (uint8_t)v; break;
		}
	}
}

/*
 * float32 to int8/uint8 with one scale and zero point (the int8 models'
 * inputs): the same bytes as quantize_one(), in a loop the compiler
 * vectorises. q = x / s in float32 as there; clamping q to [lo - zp,
 * hi - zp] before rounding gives what clamping after does (both monotone,
 * integer bounds), and keeps |q| below 2^22, where adding and subtracting
 * 1.5 x 2^23 rounds half to even as rint() does. NaN gives zp, as r = 0.
 */
static void quantize_bytes(void *arg, int64_t begin, int64_t end)
{
	const struct q_args *a = arg;
	const float *x = a->x->data;
	const float s = *(const float *)a->scale->data;
	const int32_t zp = a->zp ? (int32_t)q_load(a->zp->data, a->y->dtype, 0) : 0;
	const float lo = (float)(a->lo - zp), hi = (float)(a->hi - zp), magic = 0x1.8p23f;

	if (a->vec) {
		struct ert_q8_quant p = { s, lo, hi, zp, a->y->dtype == ERT_DTYPE_UINT8 };

		begin += a->vec(&p, x + begin, (uint8_t *)a->y->data + begin, end - begin);
	}
	if (a->y->dtype == ERT_DTYPE_INT8) {
		int8_t *y = a->y->data;

		for (int64_t i = begin; i < end; i++) {
			float q = x[i] / s;

			q = q != q ? 0.0f : q < lo ? lo : q > hi ? hi : q;
			y[i] = (int8_t)((int32_t)((q + magic) - magic) + zp);
		}
	} else {
		uint8_t *y = a->y->data;

		for (int64_t i = begin; i < end; i++) {
			float q = x[i] / s;

			q = q != q ? 0.0f : q < lo ? lo : q > hi ? hi : q;
			y[i] = (uint8_t)((int32_t)((q + magic) - magic) + zp);
		}
	}
}

/* float32 to int8/uint8 with one float32 scale and zero point: quantize_bytes(). */
static bool bytes_path(const struct ert_value *xv, const struct ert_value *scale,
		       const struct ert_value *zp, const struct ert_value *y)
{
	return xv->dtype == ERT_DTYPE_FLOAT32 && scale->numel == 1 &&
	       scale->dtype == ERT_DTYPE_FLOAT32 && (!zp || zp->numel == 1) &&
	       (y->dtype == ERT_DTYPE_INT8 || y->dtype == ERT_DTYPE_UINT8);
}

/* quantize_bytes()'s kernel at level @isa and its name (NULL, NULL: the C loop). */
static ert_q8_quant_fn bytes_kernel(enum ert_cpu_isa isa, const char **name)
{
	*name = isa >= ERT_ISA_AVX512 ? "q8-quant-avx512" : isa >= ERT_ISA_AVX2 ? "q8-quant-avx2"
										 : NULL;
	return isa >= ERT_ISA_AVX512 ? ert_q8_quantize_avx512
	       : isa >= ERT_ISA_AVX2 ? ert_q8_quantize_avx2 : NULL;
}

static ert_status quantize_prepare(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	(void)err;
	if (bytes_path(x->in[0], x->in[1], x->n_in > 2 ? x->in[2] : NULL, x->out[0]))
		bytes_kernel(cpu->isa, &x->kernel);
	return ERT_OK;
}

static ert_status quantize_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	struct q_args a = {
		.x = x->in[0], .scale = x->in[1], .zp = x->n_in > 2 ? x->in[2] : NULL,
		.y = x->out[0], .saturate = ert_attr_int(x->node, "saturate", 1) != 0,
	};
	ert_status st = ert_quant_layout_get(x->node, a.x, a.scale, a.zp, &a.l, err);
	int64_t units;

	if (st != ERT_OK)
		return st;
	if (a.zp && a.zp->dtype != a.y->dtype)
		return ert_node_fail(x->node, err, ERT_STATUS_DTYPE,
				     "zero point dtype differs from Y");
	q_range_of(a.y->dtype, &a.lo, &a.hi);
	units = is_4bit(a.y->dtype) ? (a.x->numel + 1) / 2 : a.x->numel;
	if (units > 0 && bytes_path(a.x, a.scale, a.zp, a.y)) {
		const char *name;

		a.vec = bytes_kernel(cpu->isa, &name);
		ert_parallel_for(cpu->pool, units, 8192, quantize_bytes, &a);
	}
	else if (units > 0)
		ert_parallel_for(cpu->pool, units, 8192, quantize_range, &a);
	return ERT_OK;
}

static void dequantize_range(void *arg, int64_t begin, int64_t end)
{
	const struct q_args *a = arg;
	ert_dtype xt = a->x->dtype;

	if (a->dq) {
		struct ert_q8_dequant p = {
			*(const float *)a->scale->data,
			a->zp ? q_load(a->zp->data, a->zp->dtype, 0) : 0.0f, xt == ERT_DTYPE_UINT8,
		};

		begin += a->dq(&p, (const uint8_t *)a->x->data + begin,
			       (float *)a->y->data + begin, end - begin);
	}

	for (int64_t i = begin; i < end; i++) {
		int64_t pi = ert_quant_param_index(&a->l, i);
		float v = q_load(a->x->data, xt, i);
		float s = (float)ert_nx_ld(a->scale->data, a->scale->dtype, pi);

		if (a->zp)
			v -= q_load(a->zp->data, a->zp->dtype, pi);
		ert_nx_st(a->y->data, a->y->dtype, i, (double)(v * s));
	}
}

/*
 * int8/uint8 to float32 with one float32 scale and zero point (the int8
 * models' outputs): the level's kernel and its name (NULL, NULL: the loop).
 */
static ert_q8_dequant_fn dequant_kernel(enum ert_cpu_isa isa, const struct ert_value *xv,
					const struct ert_value *scale, const struct ert_value *zp,
					const struct ert_value *y, const char **name)
{
	*name = NULL;
	if ((xv->dtype != ERT_DTYPE_INT8 && xv->dtype != ERT_DTYPE_UINT8) ||
	    scale->dtype != ERT_DTYPE_FLOAT32 || scale->numel != 1 ||
	    (zp && (zp->numel != 1 || zp->dtype != xv->dtype)) || y->dtype != ERT_DTYPE_FLOAT32 ||
	    isa < ERT_ISA_AVX2)
		return NULL;
	*name = isa >= ERT_ISA_AVX512 ? "q8-dequant-avx512" : "q8-dequant-avx2";
	return isa >= ERT_ISA_AVX512 ? ert_q8_dequantize_avx512 : ert_q8_dequantize_avx2;
}

static ert_status dequantize_prepare(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	(void)err;
	dequant_kernel(cpu->isa, x->in[0], x->in[1], x->n_in > 2 ? x->in[2] : NULL, x->out[0],
		       &x->kernel);
	return ERT_OK;
}

static ert_status dequantize_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	struct q_args a = {
		.x = x->in[0], .scale = x->in[1], .zp = x->n_in > 2 ? x->in[2] : NULL,
		.y = x->out[0],
	};
	ert_status st = ert_quant_layout_get(x->node, a.x, a.scale, a.zp, &a.l, err);
	const char *name;

	if (st != ERT_OK)
		return st;
	a.dq = dequant_kernel(cpu->isa, a.x, a.scale, a.zp, a.y, &name);
	if (a.x->numel > 0)
		ert_parallel_for(cpu->pool, a.x->numel, 8192, dequantize_range, &a);
	return ERT_OK;
}

static ert_status dynamic_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in = x->in[0];
	const float *src = in->data;
	uint8_t *y = x->out[0]->data;
	float mn = 0.0f, mx = 0.0f, scale, zp;

	/* The range always includes 0 so that 0 is exactly representable. */
	for (int64_t i = 0; i < in->numel; i++) {
		mn = src[i] < mn ? src[i] : mn;
		mx = src[i] > mx ? src[i] : mx;
	}
	scale = (mx - mn) / 255.0f;
	if (scale == 0.0f || isnan(scale)) {
		zp = 0.0f;
		memset(y, 0, (size_t)in->numel);
	} else {
		float t = 0.0f - mn / scale;

		zp = nearbyintf(t < 0.0f ? 0.0f : t > 255.0f ? 255.0f : t);
		for (int64_t i = 0; i < in->numel; i++) {
			float r = nearbyintf(src[i] / scale) + zp;

			y[i] = (uint8_t)(r < 0.0f ? 0.0f : r > 255.0f ? 255.0f : r);
		}
	}
	if (x->n_out > 1 && x->out[1])
		*(float *)x->out[1]->data = scale;
	if (x->n_out > 2 && x->out[2])
		*(uint8_t *)x->out[2]->data = (uint8_t)zp;
	return ERT_OK;
}

const struct ert_cpu_op ert_cpu_ops_quant[] = {
	{ .op = ERT_OP_QuantizeLinear, .prepare = quantize_prepare, .compute = quantize_compute },
	{ .op = ERT_OP_DequantizeLinear, .prepare = dequantize_prepare,
	  .compute = dequantize_compute },
	{ .op = ERT_OP_DynamicQuantizeLinear, .compute = dynamic_compute },
	{ .compute = NULL },
};
