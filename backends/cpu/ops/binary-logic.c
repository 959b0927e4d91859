/* SPDX-License-Identifier: MIT */
/*
 * Comparison, logic and bit kernels with broadcasting: Equal (strings too) Less Greater
 * LessOrEqual GreaterOrEqual (to bool), And Or Xor (bool), BitwiseAnd/Or/Xor
 * and BitShift (by element width: bits do not care about signedness), and
 * Where (a select by element width, so every dtype shares four kernels).
 */
#include <string.h>

#include "cpu/ops/elementwise.h"
#include "ert-strings.h"

enum cmp { C_EQ, C_LT, C_GT, C_LE, C_GE, C_COUNT };

typedef void (*run_fn)(const void *pa, int64_t sa, const void *pb, int64_t sb, void *py,
		       int64_t n);

#define ID(x) (x)

#define CMP(name, T, VT, CV, expr)                                                            \
	static void name(const void *pa, int64_t sa, const void *pb, int64_t sb, void *py,   \
			 int64_t n)                                                          \
	{                                                                                    \
		const T *a = pa, *b = pb;                                                    \
		uint8_t *y = py;                                                             \
		for (int64_t i = 0; i < n; i++) {                                            \
			VT u = CV(a[i * sa]), w = CV(b[i * sb]);                             \
			y[i] = (expr);                                                       \
		}                                                                            \
	}

/* VT: the type compared (float for the half types, which widen exactly). */
#define DEF_CMP(S, T, VT, CV)                                                             \
	CMP(eq_##S, T, VT, CV, u == w)                                                       \
	CMP(lt_##S, T, VT, CV, u < w)                                                        \
	CMP(gt_##S, T, VT, CV, u > w)                                                        \
	CMP(le_##S, T, VT, CV, u <= w)                                                       \
	CMP(ge_##S, T, VT, CV, u >= w)                                                       \
	static const run_fn S##_cmp[C_COUNT] = { eq_##S, lt_##S, gt_##S, le_##S, ge_##S };

DEF_CMP(f32, float, float, ID)
DEF_CMP(f64, double, double, ID)
DEF_CMP(f16, uint16_t, float, ert_fp16_to_fp32)
DEF_CMP(bf16, uint16_t, float, ert_bf16_to_fp32)
DEF_CMP(i8, int8_t, int8_t, ID)
DEF_CMP(i16, int16_t, int16_t, ID)
DEF_CMP(i32, int32_t, int32_t, ID)
DEF_CMP(i64, int64_t, int64_t, ID)
DEF_CMP(u8, uint8_t, uint8_t, ID)
DEF_CMP(u16, uint16_t, uint16_t, ID)
DEF_CMP(u32, uint32_t, uint32_t, ID)
DEF_CMP(u64, uint64_t, uint64_t, ID)

/* Equal on strings: the same bytes (ert-strings.h) */
static void eq_str(const void *pa, int64_t sa, const void *pb, int64_t sb, void *py, int64_t n)
{
	const ert_string *a = pa, *b = pb;
	uint8_t *y = py;

	for (int64_t i = 0; i < n; i++)
		y[i] = ert_string_cmp(&a[i * sa], &b[i * sb]) == 0;
}

static const run_fn *cmp_for(ert_dtype dt)
{
	switch (dt) {
	case ERT_DTYPE_FLOAT32: return f32_cmp;
	case ERT_DTYPE_FLOAT64: return f64_cmp;
	case ERT_DTYPE_FLOAT16: return f16_cmp;
	case ERT_DTYPE_BFLOAT16: return bf16_cmp;
	case ERT_DTYPE_INT8: return i8_cmp;
	case ERT_DTYPE_INT16: return i16_cmp;
	case ERT_DTYPE_INT32: return i32_cmp;
	case ERT_DTYPE_INT64: return i64_cmp;
	case ERT_DTYPE_UINT8:
	case ERT_DTYPE_BOOL: return u8_cmp;
	case ERT_DTYPE_UINT16: return u16_cmp;
	case ERT_DTYPE_UINT32: return u32_cmp;
	case ERT_DTYPE_UINT64: return u64_cmp;
	default: return NULL;
	}
}

#define BITS(name, T, expr)                                                               \
	static void name(const void *pa, int64_t sa, const void *pb, int64_t sb, void *py,   \
			 int64_t n)                                                          \
	{                                                                                    \
		const T *a = pa, *b = pb;                                                    \
		T *y = py;                                                                   \
		for (int64_t i = 0; i < n; i++) {                                            \
			T u = a[i * sa], w = b[i * sb];                                      \
			y[i] = (T)(expr);                                                    \
		}                                                                            \
	}

enum bits { B_AND, B_OR, B_XOR, B_SHL, B_SHR, B_LAND, B_LOR, B_LXOR, B_COUNT };

/* Shifting by the width or more is undefined in C; the result is 0 then. */
#define DEF_BITS(S, T, W)                                                                 \
	BITS(and_##S, T, u & w)                                                              \
	BITS(or_##S, T, u | w)                                                               \
	BITS(xor_##S, T, u ^ w)                                                              \
	BITS(shl_##S, T, w >= (W) ? 0 : u << w)                                              \
	BITS(shr_##S, T, w >= (W) ? 0 : u >> w)                                              \
	static const run_fn S##_bits[B_COUNT] = {                                            \
		and_##S, or_##S, xor_##S, shl_##S, shr_##S,                                  \
	};

DEF_BITS(b8, uint8_t, 8u)
DEF_BITS(b16, uint16_t, 16u)
DEF_BITS(b32, uint32_t, 32u)
DEF_BITS(b64, uint64_t, 64u)

BITS(land, uint8_t, (u != 0) & (w != 0))
BITS(lor, uint8_t, (u != 0) | (w != 0))
BITS(lxor, uint8_t, (u != 0) ^ (w != 0))

static run_fn bits_for(ert_dtype dt, enum bits k)
{
	if (k == B_LAND)
		return dt == ERT_DTYPE_BOOL ? land : NULL;
	if (k == B_LOR)
		return dt == ERT_DTYPE_BOOL ? lor : NULL;
	if (k == B_LXOR)
		return dt == ERT_DTYPE_BOOL ? lxor : NULL;
	if (!ert_ew_is_int(dt))
		return NULL;
	switch (ert_dtype_size(dt)) {
	case 1: return b8_bits[k];
	case 2: return b16_bits[k];
	case 4: return b32_bits[k];
	case 8: return b64_bits[k];
	default: return NULL;
	}
}

static run_fn logic_kernel(const struct ert_node *node, ert_dtype dt)
{
	const run_fn *cmp = cmp_for(dt);

	switch (node->op) {
	case ERT_OP_Equal: return dt == ERT_DTYPE_STRING ? eq_str : cmp ? cmp[C_EQ] : NULL;
	case ERT_OP_Less: return cmp && dt != ERT_DTYPE_BOOL ? cmp[C_LT] : NULL;
	case ERT_OP_Greater: return cmp && dt != ERT_DTYPE_BOOL ? cmp[C_GT] : NULL;
	case ERT_OP_LessOrEqual: return cmp && dt != ERT_DTYPE_BOOL ? cmp[C_LE] : NULL;
	case ERT_OP_GreaterOrEqual: return cmp && dt != ERT_DTYPE_BOOL ? cmp[C_GE] : NULL;
	case ERT_OP_And: return bits_for(dt, B_LAND);
	case ERT_OP_Or: return bits_for(dt, B_LOR);
	case ERT_OP_Xor: return bits_for(dt, B_LXOR);
	case ERT_OP_BitwiseAnd: return bits_for(dt, B_AND);
	case ERT_OP_BitwiseOr: return bits_for(dt, B_OR);
	case ERT_OP_BitwiseXor: return bits_for(dt, B_XOR);
	case ERT_OP_BitShift:
		return bits_for(dt, strcmp(ert_attr_string(node, "direction", ""), "LEFT") == 0
					    ? B_SHL : B_SHR);
	default: return NULL;
	}
}

struct job {
	run_fn fn;
	size_t in_size, out_size;
	const void *a, *b;
	void *y;
};

static void logic_run(void *ctx, const int64_t *off, const int64_t *step, int64_t out_off,
		      int64_t n)
{
	const struct job *j = ctx;

	j->fn((const char *)j->a + off[0] * (int64_t)j->in_size, step[0],
	      (const char *)j->b + off[1] * (int64_t)j->in_size, step[1],
	      (char *)j->y + out_off * (int64_t)j->out_size, n);
}

bool ert_binary_logic_supported(const struct ert_node *node, ert_dtype dt)
{
	return logic_kernel(node, dt) != NULL;
}

ert_status ert_binary_logic_run(struct ert_cpu *cpu, const struct ert_node *node,
				const struct ert_value *a, const struct ert_value *b,
				struct ert_value *out, struct ert_err *err)
{
	const struct ert_value *in[2] = { a, b };
	struct ert_bcast bc;
	struct job j = { logic_kernel(node, a->dtype), ert_dtype_size(a->dtype),
			 ert_dtype_size(out->dtype), a->data, b->data, out->data };

	if (!j.fn || a->dtype != b->dtype)
		return ert_node_fail(node, err, ERT_STATUS_UNSUPPORTED, "no cpu kernel for %s",
				     ert_dtype_name(a->dtype));
	if (ert_bcast_init(&bc, out, in, 2, err) != ERT_OK)
		return ERT_STATUS_INTERNAL;
	ert_bcast_run(cpu, &bc, logic_run, &j);
	return ERT_OK;
}

/* ---- Where ---- */

struct where_job {
	size_t esize;
	const uint8_t *c;
	const void *a, *b;
	void *y;
};

#define SELECT(T)                                                                         \
	do {                                                                                 \
		const T *a = (const T *)j->a + off[1], *b = (const T *)j->b + off[2];        \
		T *y = (T *)j->y + out_off;                                                  \
		for (int64_t i = 0; i < n; i++)                                              \
			y[i] = c[i * step[0]] ? a[i * step[1]] : b[i * step[2]];             \
	} while (0)

static void where_run(void *ctx, const int64_t *off, const int64_t *step, int64_t out_off,
		      int64_t n)
{
	const struct where_job *j = ctx;
	const uint8_t *c = j->c + off[0];

	switch (j->esize) {
	case 1: SELECT(uint8_t); break;
	case 2: SELECT(uint16_t); break;
	case 4: SELECT(uint32_t); break;
	case 8: SELECT(uint64_t); break;
	default: break;
	}
}

ert_status ert_where_run(struct ert_cpu *cpu, const struct ert_value *c, const struct ert_value *a,
			 const struct ert_value *b, struct ert_value *out, struct ert_err *err)
{
	const struct ert_value *in[3] = { c, a, b };
	struct where_job j = { ert_dtype_size(out->dtype), c->data, a->data, b->data, out->data };
	struct ert_bcast bc;

	if (c->dtype != ERT_DTYPE_BOOL || a->dtype != out->dtype || b->dtype != out->dtype ||
	    (j.esize != 1 && j.esize != 2 && j.esize != 4 && j.esize != 8)) {
		ert_err_set(err, "Where: no cpu kernel for %s", ert_dtype_name(out->dtype));
		return ERT_STATUS_UNSUPPORTED;
	}
	if (ert_bcast_init(&bc, out, in, 3, err) != ERT_OK)
		return ERT_STATUS_INTERNAL;
	ert_bcast_run(cpu, &bc, where_run, &j);
	return ERT_OK;
}
