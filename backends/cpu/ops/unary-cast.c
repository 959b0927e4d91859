/* SPDX-License-Identifier: MIT */
/*
 * Cast between every pair of known dtypes. Values go through a stack buffer of
 * double (from float types) or int64 (from integer types and bool) in chunks,
 * so each source and each destination type is written once instead of once per
 * pair. Integer to integer stays in int64 so that 64-bit values are exact.
 *
 * Choices where ONNX leaves the result undefined: float to integer truncates
 * toward zero and saturates (NaN gives 0); 4-bit targets round to nearest even
 * and saturate, as the ONNX reference does; bfloat16 targets truncate.
 */
#include <math.h>
#include <string.h>

#include "cpu/ops/elementwise.h"

static bool from_float(ert_dtype dt)
{
	return ert_ew_is_arith_float(dt) || ert_dtype_is_fp8(dt);
}

static bool is_unsigned(ert_dtype dt)
{
	return dt == ERT_DTYPE_UINT8 || dt == ERT_DTYPE_UINT16 || dt == ERT_DTYPE_UINT32 ||
	       dt == ERT_DTYPE_UINT64 || dt == ERT_DTYPE_UINT4 || dt == ERT_DTYPE_BOOL;
}

static int64_t nibble(const uint8_t *p, int64_t i, bool sign)
{
	int v = (p[i >> 1] >> ((i & 1) * 4)) & 0xf;

	return sign && v >= 8 ? v - 16 : v;
}

static void set_nibble(uint8_t *p, int64_t i, int64_t v)
{
	int sh = (int)(i & 1) * 4;

	p[i >> 1] = (uint8_t)((p[i >> 1] & ~(0xf << sh)) | ((v & 0xf) << sh));
}

static void load_f64(ert_dtype dt, const void *src, int64_t s, int64_t n, double *buf)
{
	for (int64_t i = 0; i < n; i++) {
		switch (dt) {
		case ERT_DTYPE_FLOAT32: buf[i] = ((const float *)src)[s + i]; break;
		case ERT_DTYPE_FLOAT64: buf[i] = ((const double *)src)[s + i]; break;
		case ERT_DTYPE_FLOAT16:
			buf[i] = ert_fp16_to_fp32(((const uint16_t *)src)[s + i]);
			break;
		case ERT_DTYPE_BFLOAT16:
			buf[i] = ert_bf16_to_fp32(((const uint16_t *)src)[s + i]);
			break;
		default: buf[i] = ert_fp8_to_f32(((const uint8_t *)src)[s + i], dt); break;
		}
	}
}

static void load_i64(ert_dtype dt, const void *src, int64_t s, int64_t n, int64_t *buf)
{
	for (int64_t i = 0; i < n; i++) {
		int64_t j = s + i;

		switch (dt) {
		case ERT_DTYPE_INT8: buf[i] = ((const int8_t *)src)[j]; break;
		case ERT_DTYPE_INT16: buf[i] = ((const int16_t *)src)[j]; break;
		case ERT_DTYPE_INT32: buf[i] = ((const int32_t *)src)[j]; break;
		case ERT_DTYPE_INT64: buf[i] = ((const int64_t *)src)[j]; break;
		case ERT_DTYPE_UINT8: buf[i] = ((const uint8_t *)src)[j]; break;
		case ERT_DTYPE_UINT16: buf[i] = ((const uint16_t *)src)[j]; break;
		case ERT_DTYPE_UINT32: buf[i] = ((const uint32_t *)src)[j]; break;
		/* Kept as bits; is_unsigned() tells the readers. */
		case ERT_DTYPE_UINT64: buf[i] = (int64_t)((const uint64_t *)src)[j]; break;
		case ERT_DTYPE_BOOL: buf[i] = ((const uint8_t *)src)[j] != 0; break;
		case ERT_DTYPE_INT4: buf[i] = nibble(src, j, true); break;
		case ERT_DTYPE_UINT4: buf[i] = nibble(src, j, false); break;
		default: buf[i] = 0; break;
		}
	}
}

/* double to integer type @dt: truncate (4-bit: round half even), saturate. */
static int64_t f64_to_int(double v, ert_dtype dt)
{
	double lo, hi;

	switch (dt) {
	case ERT_DTYPE_INT8: lo = -128.0; hi = 127.0; break;
	case ERT_DTYPE_INT16: lo = -32768.0; hi = 32767.0; break;
	case ERT_DTYPE_INT32: lo = -2147483648.0; hi = 2147483647.0; break;
	case ERT_DTYPE_UINT8: lo = 0.0; hi = 255.0; break;
	case ERT_DTYPE_UINT16: lo = 0.0; hi = 65535.0; break;
	case ERT_DTYPE_UINT32: lo = 0.0; hi = 4294967295.0; break;
	case ERT_DTYPE_INT4: lo = -8.0; hi = 7.0; v = nearbyint(v); break;
	case ERT_DTYPE_UINT4: lo = 0.0; hi = 15.0; v = nearbyint(v); break;
	case ERT_DTYPE_UINT64:
		if (isnan(v) || v <= 0.0)
			return 0;
		if (v >= 18446744073709551616.0)
			return -1; /* all bits: UINT64_MAX */
		return (int64_t)(uint64_t)v;
	default: /* int64 */
		if (isnan(v))
			return 0;
		if (v >= 9223372036854775808.0)
			return INT64_MAX;
		if (v < -9223372036854775808.0)
			return INT64_MIN;
		return (int64_t)v;
	}
	if (isnan(v))
		return 0;
	v = v < lo ? lo : v > hi ? hi : v;
	return (int64_t)v;
}

/* Store integers (already in range or to be wrapped) into integer type @dt. */
static void store_int(ert_dtype dt, void *dst, int64_t j, int64_t v)
{
	switch (dt) {
	case ERT_DTYPE_INT8: ((int8_t *)dst)[j] = (int8_t)v; break;
	case ERT_DTYPE_INT16: ((int16_t *)dst)[j] = (int16_t)v; break;
	case ERT_DTYPE_INT32: ((int32_t *)dst)[j] = (int32_t)v; break;
	case ERT_DTYPE_INT64: ((int64_t *)dst)[j] = v; break;
	case ERT_DTYPE_UINT8: ((uint8_t *)dst)[j] = (uint8_t)v; break;
	case ERT_DTYPE_UINT16: ((uint16_t *)dst)[j] = (uint16_t)v; break;
	case ERT_DTYPE_UINT32: ((uint32_t *)dst)[j] = (uint32_t)v; break;
	case ERT_DTYPE_UINT64: ((uint64_t *)dst)[j] = (uint64_t)v; break;
	case ERT_DTYPE_BOOL: ((uint8_t *)dst)[j] = v != 0; break;
	case ERT_DTYPE_INT4: set_nibble(dst, j, v < -8 ? -8 : v > 7 ? 7 : v); break;
	case ERT_DTYPE_UINT4: set_nibble(dst, j, v < 0 ? 0 : v > 15 ? 15 : v); break;
	default: break;
	}
}

/*
 * float to bfloat16 in Cast drops the low 16 bits (rounds toward zero): that is
 * what ONNX's Cast test data expects (test_cast_FLOAT_to_BFLOAT16), unlike the
 * round-to-nearest-even of ert_fp32_to_bf16() used elsewhere. NaNs stay NaN.
 */
static uint16_t bf16_truncate(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	if ((u & 0x7fffffff) > 0x7f800000)
		return (uint16_t)((u >> 16) | 0x40);
	return (uint16_t)(u >> 16);
}

static void store_f64(ert_dtype dt, void *dst, int64_t s, int64_t n, const double *buf,
		      bool saturate)
{
	for (int64_t i = 0; i < n; i++) {
		int64_t j = s + i;
		double v = buf[i];

		switch (dt) {
		case ERT_DTYPE_FLOAT32: ((float *)dst)[j] = (float)v; break;
		case ERT_DTYPE_FLOAT64: ((double *)dst)[j] = v; break;
		case ERT_DTYPE_FLOAT16: ((uint16_t *)dst)[j] = ert_fp32_to_fp16((float)v); break;
		case ERT_DTYPE_BFLOAT16: ((uint16_t *)dst)[j] = bf16_truncate((float)v); break;
		case ERT_DTYPE_FLOAT8E4M3FN:
		case ERT_DTYPE_FLOAT8E4M3FNUZ:
		case ERT_DTYPE_FLOAT8E5M2:
		case ERT_DTYPE_FLOAT8E5M2FNUZ:
			((uint8_t *)dst)[j] = ert_f32_to_fp8((float)v, dt, saturate);
			break;
		case ERT_DTYPE_BOOL: ((uint8_t *)dst)[j] = v != 0.0; break;
		default: store_int(dt, dst, j, f64_to_int(v, dt)); break;
		}
	}
}

struct job {
	const struct ert_value *in;
	struct ert_value *out;
	bool saturate;
};

#define PAIR(a, b) ((uint32_t)(a) << 8 | (uint32_t)(b))
#define DIRECT(F, T, expr)                                                                 \
	do {                                                                              \
		const F *x_ = (const F *)src + s;                                         \
		T *y_ = (T *)dst + s;                                                     \
		for (int64_t i = 0; i < n; i++) {                                         \
			F v = x_[i];                                                      \
			y_[i] = (expr);                                                   \
		}                                                                         \
		return true;                                                              \
	} while (0)

/*
 * The pairs models cast most (image bytes, index widths, half precision) in one
 * loop each, with the same results as the generic path.
 */
static bool cast_direct(ert_dtype from, ert_dtype to, const void *src, void *dst, int64_t s,
			int64_t n)
{
	switch (PAIR(from, to)) {
	case PAIR(ERT_DTYPE_UINT8, ERT_DTYPE_FLOAT32): DIRECT(uint8_t, float, (float)v);
	case PAIR(ERT_DTYPE_BOOL, ERT_DTYPE_FLOAT32): DIRECT(uint8_t, float, v ? 1.0f : 0.0f);
	case PAIR(ERT_DTYPE_INT32, ERT_DTYPE_FLOAT32): DIRECT(int32_t, float, (float)v);
	case PAIR(ERT_DTYPE_INT64, ERT_DTYPE_FLOAT32): DIRECT(int64_t, float, (float)(double)v);
	case PAIR(ERT_DTYPE_INT32, ERT_DTYPE_INT64): DIRECT(int32_t, int64_t, v);
	case PAIR(ERT_DTYPE_INT64, ERT_DTYPE_INT32): DIRECT(int64_t, int32_t, (int32_t)v);
	case PAIR(ERT_DTYPE_FLOAT32, ERT_DTYPE_FLOAT64): DIRECT(float, double, v);
	case PAIR(ERT_DTYPE_FLOAT64, ERT_DTYPE_FLOAT32): DIRECT(double, float, (float)v);
	case PAIR(ERT_DTYPE_FLOAT16, ERT_DTYPE_FLOAT32): DIRECT(uint16_t, float, ert_fp16_to_fp32(v));
	case PAIR(ERT_DTYPE_FLOAT32, ERT_DTYPE_FLOAT16): DIRECT(float, uint16_t, ert_fp32_to_fp16(v));
	case PAIR(ERT_DTYPE_FLOAT32, ERT_DTYPE_BOOL): DIRECT(float, uint8_t, v != 0.0f);
	case PAIR(ERT_DTYPE_FLOAT32, ERT_DTYPE_INT64):
		DIRECT(float, int64_t, f64_to_int(v, ERT_DTYPE_INT64));
	case PAIR(ERT_DTYPE_FLOAT32, ERT_DTYPE_INT32):
		DIRECT(float, int32_t, (int32_t)f64_to_int(v, ERT_DTYPE_INT32));
	default: return false;
	}
}

static void cast_blocks(void *arg, int64_t b, int64_t e)
{
	const struct job *j = arg;
	ert_dtype from = j->in->dtype, to = j->out->dtype;
	double fbuf[ERT_EW_CHUNK];
	int64_t ibuf[ERT_EW_CHUNK];

	for (int64_t blk = b; blk < e; blk++) {
		int64_t s = blk * ERT_EW_CHUNK;
		int64_t n = j->in->numel - s < ERT_EW_CHUNK ? j->in->numel - s : ERT_EW_CHUNK;

		if (cast_direct(from, to, j->in->data, j->out->data, s, n))
			continue;
		/* Nibbles are merged into their bytes: start from zero (and a zero pad). */
		if (to == ERT_DTYPE_INT4 || to == ERT_DTYPE_UINT4)
			memset((uint8_t *)j->out->data + s / 2, 0, (size_t)(n + 1) / 2);

		if (from_float(from)) {
			load_f64(from, j->in->data, s, n, fbuf);
			store_f64(to, j->out->data, s, n, fbuf, j->saturate);
			continue;
		}
		load_i64(from, j->in->data, s, n, ibuf);
		if (!from_float(to)) {
			for (int64_t i = 0; i < n; i++)
				store_int(to, j->out->data, s + i, ibuf[i]);
			continue;
		}
		for (int64_t i = 0; i < n; i++)
			fbuf[i] = is_unsigned(from) ? (double)(uint64_t)ibuf[i] : (double)ibuf[i];
		store_f64(to, j->out->data, s, n, fbuf, j->saturate);
	}
}

ert_status ert_cast_run(struct ert_cpu *cpu, const struct ert_value *in, struct ert_value *out,
			bool saturate, struct ert_err *err)
{
	struct job j = { in, out, saturate };
	int64_t blocks = (in->numel + ERT_EW_CHUNK - 1) / ERT_EW_CHUNK;

	if (!ert_dtype_valid(in->dtype) || !ert_dtype_valid(out->dtype)) {
		ert_err_set(err, "Cast: no cpu kernel from %s to %s", ert_dtype_name(in->dtype),
			    ert_dtype_name(out->dtype));
		return ERT_STATUS_UNSUPPORTED;
	}
	if (in->dtype == out->dtype) {
		if (in->data != out->data && out->nbytes)
			memmove(out->data, in->data, out->nbytes);
		return ERT_OK;
	}
	/* Blocks are whole multiples of two elements: 4-bit bytes are never shared. */
	ert_parallel_for(cpu ? cpu->pool : NULL, blocks, ERT_EW_GRAIN / ERT_EW_CHUNK, cast_blocks,
			 &j);
	return ERT_OK;
}
