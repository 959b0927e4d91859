/* SPDX-License-Identifier: MIT */
/* Element types: sizes, names, classes; reduced-precision float conversions. */
#include <math.h>
#include <string.h>

#include "ert-op-impl.h"

static const struct {
	const char *name;
	uint8_t size;   /* bytes; 0: sub-byte or unsupported */
	uint8_t is_float, is_int;
} dtypes[ERT_DTYPE_COUNT] = {
	[ERT_DTYPE_UNDEFINED] = { "undefined", 0, 0, 0 },
	[ERT_DTYPE_FLOAT32] = { "float32", 4, 1, 0 },
	[ERT_DTYPE_UINT8] = { "uint8", 1, 0, 1 },
	[ERT_DTYPE_INT8] = { "int8", 1, 0, 1 },
	[ERT_DTYPE_UINT16] = { "uint16", 2, 0, 1 },
	[ERT_DTYPE_INT16] = { "int16", 2, 0, 1 },
	[ERT_DTYPE_INT32] = { "int32", 4, 0, 1 },
	[ERT_DTYPE_INT64] = { "int64", 8, 0, 1 },
	[ERT_DTYPE_STRING] = { "string", sizeof(ert_string), 0, 0 }, /* handles (ert-strings.h) */
	[ERT_DTYPE_BOOL] = { "bool", 1, 0, 0 },
	[ERT_DTYPE_FLOAT16] = { "float16", 2, 1, 0 },
	[ERT_DTYPE_FLOAT64] = { "float64", 8, 1, 0 },
	[ERT_DTYPE_UINT32] = { "uint32", 4, 0, 1 },
	[ERT_DTYPE_UINT64] = { "uint64", 8, 0, 1 },
	[ERT_DTYPE_COMPLEX64] = { "complex64", 0, 0, 0 },
	[ERT_DTYPE_COMPLEX128] = { "complex128", 0, 0, 0 },
	[ERT_DTYPE_BFLOAT16] = { "bfloat16", 2, 1, 0 },
	[ERT_DTYPE_FLOAT8E4M3FN] = { "float8e4m3fn", 1, 1, 0 },
	[ERT_DTYPE_FLOAT8E4M3FNUZ] = { "float8e4m3fnuz", 1, 1, 0 },
	[ERT_DTYPE_FLOAT8E5M2] = { "float8e5m2", 1, 1, 0 },
	[ERT_DTYPE_FLOAT8E5M2FNUZ] = { "float8e5m2fnuz", 1, 1, 0 },
	[ERT_DTYPE_UINT4] = { "uint4", 0, 0, 1 },
	[ERT_DTYPE_INT4] = { "int4", 0, 0, 1 },
};

const char *ert_dtype_name(ert_dtype dt)
{
	return (unsigned)dt < ERT_DTYPE_COUNT ? dtypes[dt].name : "invalid";
}

size_t ert_dtype_size(ert_dtype dt)
{
	return (unsigned)dt < ERT_DTYPE_COUNT ? dtypes[dt].size : 0;
}

size_t ert_dtype_bytes(ert_dtype dt, int64_t count)
{
	if (count < 0)
		return 0;
	if (dt == ERT_DTYPE_INT4 || dt == ERT_DTYPE_UINT4)
		return (size_t)(count / 2 + (count & 1));
	return (size_t)count * ert_dtype_size(dt);
}

bool ert_dtype_is_float(ert_dtype dt)
{
	return (unsigned)dt < ERT_DTYPE_COUNT && dtypes[dt].is_float;
}

bool ert_dtype_is_int(ert_dtype dt)
{
	return (unsigned)dt < ERT_DTYPE_COUNT && dtypes[dt].is_int;
}

bool ert_dtype_valid(int32_t dt)
{
	return dt > 0 && dt < ERT_DTYPE_COUNT && dt != ERT_DTYPE_STRING &&
	       dt != ERT_DTYPE_COMPLEX64 && dt != ERT_DTYPE_COMPLEX128;
}

static uint32_t f32_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

static float bits_f32(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

float ert_fp16_to_fp32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16;
	uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff;

	if (exp == 0x1f)
		return bits_f32(sign | 0x7f800000 | (man << 13));
	if (exp == 0) {
		/* subnormal: value = man * 2^-24 */
		float v = (float)man * 5.9604644775390625e-8f;

		return sign ? -v : v;
	}
	return bits_f32(sign | ((exp + 112) << 23) | (man << 13));
}

uint16_t ert_fp32_to_fp16(float f)
{
	uint32_t u = f32_bits(f);
	uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
	uint32_t au = u & 0x7fffffff;

	if (au >= 0x7f800000) /* inf or NaN (keep NaN quiet) */
		return sign | (au > 0x7f800000 ? 0x7e00 : 0x7c00);
	if (au >= 0x477ff000) /* rounds to >= 65520: overflow to inf */
		return sign | 0x7c00;
	if (au < 0x38800000) {
		/* result is subnormal or zero: round man * 2^-24 to nearest even */
		float a = bits_f32(au);
		float scaled = a * 16777216.0f; /* a / 2^-24, exact */
		uint32_t r = (uint32_t)nearbyintf(scaled);

		return sign | (uint16_t)r;
	}
	uint32_t mant = au & 0x7fffff, exp = (au >> 23) - 112;
	uint32_t h = (exp << 10) | (mant >> 13);
	uint32_t rest = mant & 0x1fff;

	if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
		h++;
	return sign | (uint16_t)h;
}

float ert_bf16_to_fp32(uint16_t h)
{
	return bits_f32((uint32_t)h << 16);
}

uint16_t ert_fp32_to_bf16(float f)
{
	uint32_t u = f32_bits(f);

	if ((u & 0x7fffffff) > 0x7f800000)
		return (uint16_t)((u >> 16) | 0x40);
	u += 0x7fff + ((u >> 16) & 1);
	return (uint16_t)(u >> 16);
}
