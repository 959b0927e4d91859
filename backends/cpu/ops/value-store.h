/* SPDX-License-Identifier: MIT */
/*
 * value-store.h — private to backends/cpu/ops: store a double as element @i
 * of a value of any byte-sized type. Integer types saturate (NaN gives 0),
 * so values a hostile model computes (a huge scale, an infinite edge) never
 * reach an undefined float-to-integer conversion.
 */
#ifndef ERT_CPU_VALUE_STORE_H
#define ERT_CPU_VALUE_STORE_H

#include <math.h>
#include <string.h>

#include "cpu/cpu-impl.h"

static inline int64_t ert_cpu_sat_i64(double v, double lo, double hi)
{
	if (isnan(v))
		return 0;
	if (v <= lo)
		return (int64_t)lo;
	/* int64's bound is 2^63 in double: at or above it is INT64_MAX */
	if (v >= hi)
		return hi >= 9.2e18 ? INT64_MAX : (int64_t)hi;
	return (int64_t)v;
}

static inline void ert_cpu_store_f64(struct ert_value *o, int64_t i, double v)
{
	char *p = (char *)o->data + (size_t)i * ert_dtype_size(o->dtype);

	switch (o->dtype) {
	case ERT_DTYPE_FLOAT32: { float t = (float)v; memcpy(p, &t, 4); break; }
	case ERT_DTYPE_FLOAT64: memcpy(p, &v, 8); break;
	case ERT_DTYPE_FLOAT16: { uint16_t t = ert_fp32_to_fp16((float)v); memcpy(p, &t, 2); break; }
	case ERT_DTYPE_BFLOAT16: { uint16_t t = ert_fp32_to_bf16((float)v); memcpy(p, &t, 2); break; }
	case ERT_DTYPE_BOOL: *(uint8_t *)p = v != 0.0 && !isnan(v); break;
	case ERT_DTYPE_INT8: *(int8_t *)p = (int8_t)ert_cpu_sat_i64(v, INT8_MIN, INT8_MAX); break;
	case ERT_DTYPE_UINT8: *(uint8_t *)p = (uint8_t)ert_cpu_sat_i64(v, 0, UINT8_MAX); break;
	case ERT_DTYPE_INT16: { int16_t t = (int16_t)ert_cpu_sat_i64(v, INT16_MIN, INT16_MAX); memcpy(p, &t, 2); break; }
	case ERT_DTYPE_UINT16: { uint16_t t = (uint16_t)ert_cpu_sat_i64(v, 0, UINT16_MAX); memcpy(p, &t, 2); break; }
	case ERT_DTYPE_INT32: { int32_t t = (int32_t)ert_cpu_sat_i64(v, INT32_MIN, INT32_MAX); memcpy(p, &t, 4); break; }
	case ERT_DTYPE_UINT32: { uint32_t t = (uint32_t)ert_cpu_sat_i64(v, 0, UINT32_MAX); memcpy(p, &t, 4); break; }
	case ERT_DTYPE_INT64: { int64_t t = ert_cpu_sat_i64(v, -9223372036854775808.0, 9223372036854775808.0); memcpy(p, &t, 8); break; }
	case ERT_DTYPE_UINT64: {
		/* only values an int64 holds: enough for every op that stores through here */
		uint64_t t = (uint64_t)ert_cpu_sat_i64(v, 0, 9223372036854775808.0);
		memcpy(p, &t, 8);
		break;
	}
	default: break;
	}
}

/* A byte-sized type ert_cpu_store_f64() writes (no fp8, no 4-bit, no strings). */
static inline bool ert_cpu_storable(ert_dtype dt)
{
	return ert_dtype_size(dt) > 0 && dt != ERT_DTYPE_STRING &&
	       !(ert_dtype_is_float(dt) && ert_dtype_size(dt) == 1);
}

#endif /* ERT_CPU_VALUE_STORE_H */
