/* SPDX-License-Identifier: MIT */
/*
 * norm-access.h — element access shared by the norm, reduce and resize kernels
 * (private to backends/cpu/ops). The reference kernels compute in double and
 * load/store through these helpers so one loop serves every float dtype; the
 * dtype switch is loop-invariant, which the compiler hoists at -O3.
 */
#ifndef ERT_CPU_NORM_ACCESS_H
#define ERT_CPU_NORM_ACCESS_H

#include <math.h>

#include "cpu/cpu-impl.h"

static inline double ert_nx_ld(const void *p, ert_dtype dt, int64_t i)
{
	switch (dt) {
	case ERT_DTYPE_FLOAT32: return ((const float *)p)[i];
	case ERT_DTYPE_FLOAT64: return ((const double *)p)[i];
	case ERT_DTYPE_FLOAT16: return ert_fp16_to_fp32(((const uint16_t *)p)[i]);
	case ERT_DTYPE_BFLOAT16: return ert_bf16_to_fp32(((const uint16_t *)p)[i]);
	case ERT_DTYPE_INT64: return (double)((const int64_t *)p)[i];
	case ERT_DTYPE_INT32: return ((const int32_t *)p)[i];
	case ERT_DTYPE_INT16: return ((const int16_t *)p)[i];
	case ERT_DTYPE_INT8: return ((const int8_t *)p)[i];
	case ERT_DTYPE_UINT64: return (double)((const uint64_t *)p)[i];
	case ERT_DTYPE_UINT32: return ((const uint32_t *)p)[i];
	case ERT_DTYPE_UINT16: return ((const uint16_t *)p)[i];
	case ERT_DTYPE_UINT8:
	case ERT_DTYPE_BOOL: return ((const uint8_t *)p)[i];
	default: return 0.0;
	}
}

/* Integer stores truncate toward zero and saturate (no UB on overflow or NaN). */
static inline int64_t ert_nx_to_i64(double v, double lo, double hi)
{
	if (isnan(v))
		return 0;
	v = v < lo ? lo : v > hi ? hi : v;
	return (int64_t)v;
}

static inline void ert_nx_st(void *p, ert_dtype dt, int64_t i, double v)
{
	switch (dt) {
	case ERT_DTYPE_FLOAT32: ((float *)p)[i] = (float)v; break;
	case ERT_DTYPE_FLOAT64: ((double *)p)[i] = v; break;
	case ERT_DTYPE_FLOAT16: ((uint16_t *)p)[i] = ert_fp32_to_fp16((float)v); break;
	case ERT_DTYPE_BFLOAT16: ((uint16_t *)p)[i] = ert_fp32_to_bf16((float)v); break;
	case ERT_DTYPE_INT64:
		((int64_t *)p)[i] = ert_nx_to_i64(v, -9223372036854775808.0, 9223372036854774784.0);
		break;
	case ERT_DTYPE_INT32: ((int32_t *)p)[i] = (int32_t)ert_nx_to_i64(v, INT32_MIN, INT32_MAX); break;
	case ERT_DTYPE_INT16: ((int16_t *)p)[i] = (int16_t)ert_nx_to_i64(v, INT16_MIN, INT16_MAX); break;
	case ERT_DTYPE_INT8: ((int8_t *)p)[i] = (int8_t)ert_nx_to_i64(v, INT8_MIN, INT8_MAX); break;
	case ERT_DTYPE_UINT64:
		((uint64_t *)p)[i] = (uint64_t)(isnan(v) || v < 0 ? 0.0
						: v > 18446744073709549568.0 ? 18446744073709549568.0 : v);
		break;
	case ERT_DTYPE_UINT32: ((uint32_t *)p)[i] = (uint32_t)ert_nx_to_i64(v, 0, UINT32_MAX); break;
	case ERT_DTYPE_UINT16: ((uint16_t *)p)[i] = (uint16_t)ert_nx_to_i64(v, 0, UINT16_MAX); break;
	case ERT_DTYPE_UINT8: ((uint8_t *)p)[i] = (uint8_t)ert_nx_to_i64(v, 0, UINT8_MAX); break;
	case ERT_DTYPE_BOOL: ((uint8_t *)p)[i] = v != 0.0; break;
	default: break;
	}
}

static inline bool ert_nx_is_float(ert_dtype dt)
{
	return dt == ERT_DTYPE_FLOAT32 || dt == ERT_DTYPE_FLOAT64 || dt == ERT_DTYPE_FLOAT16 ||
	       dt == ERT_DTYPE_BFLOAT16;
}

/* Product of dims[begin, end). */
static inline int64_t ert_nx_span(const struct ert_value *v, int32_t begin, int32_t end)
{
	int64_t n = 1;

	for (int32_t i = begin; i < end; i++)
		n *= v->dims[i];
	return n;
}

#endif /* ERT_CPU_NORM_ACCESS_H */
