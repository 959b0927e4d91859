/* SPDX-License-Identifier: MIT */
/*
 * Arithmetic binary kernels with broadcasting: Add Sub Mul Div Mod Pow Min Max
 * PRelu, and the steps Sum and Mean are built from. Each (op, type) kernel
 * handles one run of the broadcast walker in four loops (both operands
 * contiguous, either one fixed, both fixed) so that the common cases
 * vectorise. float16/bfloat16 runs go through float32 in stack-sized chunks.
 *
 * Integer arithmetic wraps like numpy: sums and products go through uint64.
 * Integer division and modulo by zero give 0 instead of trapping.
 */
#include <tgmath.h>
#include <string.h>

#include "cpu/ops/elementwise.h"
#include "cpu/vec/vec.h"

enum arith { A_ADD, A_SUB, A_MUL, A_DIV, A_MOD, A_FMOD, A_POW, A_MIN, A_MAX, A_PRELU, A_COUNT };

typedef void (*bin_fn)(const void *pa, int64_t sa, const void *pb, int64_t sb, void *py,
		       int64_t n);

#define BIN(name, T, expr)                                                                \
	static void name(const void *pa, int64_t sa, const void *pb, int64_t sb, void *py,   \
			 int64_t n)                                                          \
	{                                                                                    \
		const T *a = pa, *b = pb;                                                    \
		T *y = py;                                                                   \
		if (sa && sb) {                                                              \
			for (int64_t i = 0; i < n; i++) {                                    \
				T u = a[i], w = b[i];                                        \
				y[i] = (T)(expr);                                            \
			}                                                                    \
		} else if (sb) {                                                             \
			T u = a[0];                                                          \
			for (int64_t i = 0; i < n; i++) {                                    \
				T w = b[i];                                                  \
				y[i] = (T)(expr);                                            \
			}                                                                    \
		} else if (sa) {                                                             \
			T w = b[0];                                                          \
			for (int64_t i = 0; i < n; i++) {                                    \
				T u = a[i];                                                  \
				y[i] = (T)(expr);                                            \
			}                                                                    \
		} else {                                                                     \
			T u = a[0], w = b[0];                                                \
			T r = (T)(expr);                                                     \
			for (int64_t i = 0; i < n; i++)                                      \
				y[i] = r;                                                    \
		}                                                                            \
	}

/* NaN-propagating min/max, as numpy's minimum/maximum. */
#define FMIN(u, w) ((u) < (w) || (u) != (u) ? (u) : (w))
#define FMAX(u, w) ((u) > (w) || (u) != (u) ? (u) : (w))

#define DEF_FLOAT(S, T)                                                                   \
	BIN(add_##S, T, u + w)                                                               \
	BIN(sub_##S, T, u - w)                                                               \
	BIN(mul_##S, T, u * w)                                                               \
	BIN(div_##S, T, u / w)                                                               \
	BIN(fmod_##S, T, fmod(u, w))                                                         \
	BIN(powg_##S, T, pow(u, w))                                                          \
	/* Exponents decomposed models use a lot (x^2, sqrt, 1/x) skip pow(). */            \
	static void pow_##S(const void *pa, int64_t sa, const void *pb, int64_t sb, void *py, \
			    int64_t n)                                                       \
	{                                                                                    \
		const T *a = pa;                                                             \
		T *y = py, w = *(const T *)pb;                                               \
		if (sb || !sa || (w != 2 && w != 1 && w != -1 && w != (T)0.5)) {           \
			powg_##S(pa, sa, pb, sb, py, n);                                     \
		} else if (w == 2) {                                                         \
			for (int64_t i = 0; i < n; i++)                                      \
				y[i] = a[i] * a[i];                                          \
		} else if (w == 1) {                                                         \
			for (int64_t i = 0; i < n; i++)                                      \
				y[i] = a[i];                                                 \
		} else if (w == -1) {                                                        \
			for (int64_t i = 0; i < n; i++)                                      \
				y[i] = (T)1 / a[i];                                          \
		} else {                                                                     \
			/* pow(-0, .5) is +0 and pow(-inf, .5) is +inf; sqrt differs. */    \
			for (int64_t i = 0; i < n; i++) {                                    \
				T u = a[i];                                                  \
				y[i] = u == -(T)INFINITY ? (T)INFINITY : sqrt(u) + (T)0;     \
			}                                                                    \
		}                                                                            \
	}                                                                                    \
	BIN(min_##S, T, FMIN(u, w))                                                          \
	BIN(max_##S, T, FMAX(u, w))                                                          \
	BIN(prelu_##S, T, u < 0 ? u * w : u)                                                 \
	static const bin_fn S##_fns[A_COUNT] = {                                             \
		[A_ADD] = add_##S, [A_SUB] = sub_##S, [A_MUL] = mul_##S, [A_DIV] = div_##S,  \
		[A_FMOD] = fmod_##S, [A_POW] = pow_##S, [A_MIN] = min_##S,                   \
		[A_MAX] = max_##S, [A_PRELU] = prelu_##S,                                    \
	};

static inline int64_t sdiv(int64_t u, int64_t w)
{
	return w == 0 ? 0 : w == -1 ? (int64_t)(0u - (uint64_t)u) : u / w;
}

/* C remainder: the sign follows the dividend (fmod=1). */
static inline int64_t sfmod(int64_t u, int64_t w)
{
	return w == 0 || w == -1 ? 0 : u % w;
}

/* Python remainder: the sign follows the divisor (fmod=0). */
static inline int64_t smod(int64_t u, int64_t w)
{
	int64_t r = sfmod(u, w);

	return r != 0 && (r < 0) != (w < 0) ? r + w : r;
}

static inline uint64_t upow(uint64_t u, uint64_t e)
{
	uint64_t r = 1;

	for (; e; e >>= 1, u *= u)
		if (e & 1)
			r *= u;
	return r;
}

static inline int64_t spow(int64_t u, int64_t e)
{
	if (e < 0)
		return u == 1 ? 1 : u == -1 ? (e & 1 ? -1 : 1) : 0;
	return (int64_t)upow((uint64_t)u, (uint64_t)e);
}

#define WRAP(T, expr) ((T)(uint64_t)(expr))

#define DEF_SIGNED(S, T)                                                                  \
	BIN(add_##S, T, WRAP(T, (uint64_t)u + (uint64_t)w))                                  \
	BIN(sub_##S, T, WRAP(T, (uint64_t)u - (uint64_t)w))                                  \
	BIN(mul_##S, T, WRAP(T, (uint64_t)u * (uint64_t)w))                                  \
	BIN(div_##S, T, WRAP(T, sdiv(u, w)))                                                 \
	BIN(mod_##S, T, smod(u, w))                                                          \
	BIN(fmod_##S, T, sfmod(u, w))                                                        \
	BIN(pow_##S, T, WRAP(T, spow(u, w)))                                                 \
	BIN(min_##S, T, u < w ? u : w)                                                       \
	BIN(max_##S, T, u > w ? u : w)                                                       \
	BIN(prelu_##S, T, u < 0 ? WRAP(T, (uint64_t)u * (uint64_t)w) : u)                    \
	static const bin_fn S##_fns[A_COUNT] = {                                             \
		[A_ADD] = add_##S, [A_SUB] = sub_##S, [A_MUL] = mul_##S, [A_DIV] = div_##S,  \
		[A_MOD] = mod_##S, [A_FMOD] = fmod_##S, [A_POW] = pow_##S,                   \
		[A_MIN] = min_##S, [A_MAX] = max_##S, [A_PRELU] = prelu_##S,                 \
	};

/* Unsigned: both remainders agree; PRelu is the identity. */
#define DEF_UNSIGNED(S, T)                                                                \
	BIN(add_##S, T, u + w)                                                               \
	BIN(sub_##S, T, u - w)                                                               \
	BIN(mul_##S, T, (uint64_t)u * w)                                                     \
	BIN(div_##S, T, w ? u / w : 0)                                                       \
	BIN(mod_##S, T, w ? u % w : 0)                                                       \
	BIN(pow_##S, T, upow(u, w))                                                          \
	BIN(min_##S, T, u < w ? u : w)                                                       \
	BIN(max_##S, T, u > w ? u : w)                                                       \
	BIN(prelu_##S, T, u + 0 * w) /* w is unused; keeps the compiler quiet */             \
	static const bin_fn S##_fns[A_COUNT] = {                                             \
		[A_ADD] = add_##S, [A_SUB] = sub_##S, [A_MUL] = mul_##S, [A_DIV] = div_##S,  \
		[A_MOD] = mod_##S, [A_FMOD] = mod_##S, [A_POW] = pow_##S,                    \
		[A_MIN] = min_##S, [A_MAX] = max_##S, [A_PRELU] = prelu_##S,                 \
	};

DEF_FLOAT(f32, float)
DEF_FLOAT(f64, double)
DEF_SIGNED(i8, int8_t)
DEF_SIGNED(i16, int16_t)
DEF_SIGNED(i32, int32_t)
DEF_SIGNED(i64, int64_t)
DEF_UNSIGNED(u8, uint8_t)
DEF_UNSIGNED(u16, uint16_t)
DEF_UNSIGNED(u32, uint32_t)
DEF_UNSIGNED(u64, uint64_t)

static const bin_fn *fns_for(ert_dtype dt)
{
	switch (dt) {
	case ERT_DTYPE_FLOAT32:
	case ERT_DTYPE_FLOAT16:
	case ERT_DTYPE_BFLOAT16: return f32_fns;
	case ERT_DTYPE_FLOAT64: return f64_fns;
	case ERT_DTYPE_INT8: return i8_fns;
	case ERT_DTYPE_INT16: return i16_fns;
	case ERT_DTYPE_INT32: return i32_fns;
	case ERT_DTYPE_INT64: return i64_fns;
	case ERT_DTYPE_UINT8: return u8_fns;
	case ERT_DTYPE_UINT16: return u16_fns;
	case ERT_DTYPE_UINT32: return u32_fns;
	case ERT_DTYPE_UINT64: return u64_fns;
	default: return NULL;
	}
}

struct job {
	const struct ert_cpu *cpu;
	bin_fn fn;
	ert_dtype dt;
	size_t esize;
	const void *a, *b;
	void *y;
	struct ert_act_desc act;
};

/* One fp16/bf16 run: widen both operands chunk by chunk, compute, narrow. */
static void half_run(const struct job *j, const uint16_t *a, int64_t sa, const uint16_t *b,
		     int64_t sb, uint16_t *y, int64_t n)
{
	float fa[ERT_EW_CHUNK], fb[ERT_EW_CHUNK], fy[ERT_EW_CHUNK];

	for (int64_t i = 0; i < n; i += ERT_EW_CHUNK) {
		int64_t m = n - i < ERT_EW_CHUNK ? n - i : ERT_EW_CHUNK;

		ert_half_to_f32(j->dt, a + i * sa, fa, sa ? m : 1);
		ert_half_to_f32(j->dt, b + i * sb, fb, sb ? m : 1);
		j->fn(fa, sa, fb, sb, fy, m);
		ert_f32_to_half(j->dt, fy, y + i, m);
	}
}

static void arith_run(void *ctx, const int64_t *off, const int64_t *step, int64_t out_off,
		      int64_t n)
{
	const struct job *j = ctx;
	const char *a = (const char *)j->a + off[0] * j->esize;
	const char *b = (const char *)j->b + off[1] * j->esize;
	char *y = (char *)j->y + out_off * j->esize;

	if (j->dt == ERT_DTYPE_FLOAT16 || j->dt == ERT_DTYPE_BFLOAT16) {
		half_run(j, (const uint16_t *)a, step[0], (const uint16_t *)b, step[1],
			 (uint16_t *)y, n);
		return;
	}
	j->fn(a, step[0], b, step[1], y, n);
	if (j->act.type != ERT_ACT_NONE)
		ert_cpu_act_apply(j->cpu, &j->act, (float *)y, n);
}

static enum arith arith_of(const struct ert_node *node, enum ert_op op)
{
	switch (op) {
	case ERT_OP_Add:
	case ERT_OP_Sum:
	case ERT_OP_Mean: return A_ADD;
	case ERT_OP_Sub: return A_SUB;
	case ERT_OP_Mul: return A_MUL;
	case ERT_OP_Div: return A_DIV;
	case ERT_OP_Mod: return ert_attr_int(node, "fmod", 0) ? A_FMOD : A_MOD;
	case ERT_OP_Pow: return A_POW;
	case ERT_OP_Min: return A_MIN;
	case ERT_OP_Max: return A_MAX;
	case ERT_OP_PRelu: return A_PRELU;
	default: return A_COUNT;
	}
}

/* The vector kernel of @k on floats at @cpu's level (bit for bit the loops above), or NULL. */
static ert_vec_binary_fn vec_fn(const struct ert_cpu *cpu, enum arith k, ert_dtype dt)
{
	const struct ert_vec_kernels *vk = cpu ? ert_vec_kernels_for(cpu->isa) : NULL;

	if (!vk || (dt != ERT_DTYPE_FLOAT32 && dt != ERT_DTYPE_FLOAT16 && dt != ERT_DTYPE_BFLOAT16))
		return NULL;
	switch (k) {
	case A_ADD: return vk->binary[ERT_VEC_ADD];
	case A_SUB: return vk->binary[ERT_VEC_SUB];
	case A_MUL: return vk->binary[ERT_VEC_MUL];
	case A_DIV: return vk->binary[ERT_VEC_DIV];
	case A_MIN: return vk->binary[ERT_VEC_MIN];
	case A_MAX: return vk->binary[ERT_VEC_MAX];
	default: return NULL;
	}
}

const char *ert_binary_arith_kernel(const struct ert_cpu *cpu, const struct ert_node *node,
				    ert_dtype dt)
{
	return vec_fn(cpu, arith_of(node, node->op), dt) ? ert_vec_kernels_for(cpu->isa)->name_eltwise
							 : NULL;
}

/* Pow with base and exponent of different types: through double, per element. */
struct pow_job {
	const struct ert_value *a, *b;
	struct ert_value *y;
};

static void pow_mixed_run(void *ctx, const int64_t *off, const int64_t *step, int64_t out_off,
			  int64_t n)
{
	const struct pow_job *j = ctx;
	bool int_exp = ert_ew_is_int(j->b->dtype);

	for (int64_t i = 0; i < n; i++) {
		double u = ert_value_get_float(j->a, off[0] + i * step[0]);
		double w = ert_value_get_float(j->b, off[1] + i * step[1]);
		double r = pow(u, w);
		int64_t k = out_off + i;

		switch (j->y->dtype) {
		case ERT_DTYPE_FLOAT32: ((float *)j->y->data)[k] = (float)r; break;
		case ERT_DTYPE_FLOAT64: ((double *)j->y->data)[k] = r; break;
		case ERT_DTYPE_FLOAT16: ((uint16_t *)j->y->data)[k] = ert_fp32_to_fp16((float)r); break;
		case ERT_DTYPE_BFLOAT16: ((uint16_t *)j->y->data)[k] = ert_fp32_to_bf16((float)r); break;
		default: {
			/* Integer base: exact for integer exponents. */
			int64_t v = int_exp ? spow(ert_value_get_int(j->a, off[0] + i * step[0]),
						   ert_value_get_int(j->b, off[1] + i * step[1]))
					    : (isfinite(r) && fabs(r) < 9.2e18 ? (int64_t)r : 0);
			size_t es = ert_dtype_size(j->y->dtype);
			char *p = (char *)j->y->data + k * (int64_t)es;

			/* Little-endian truncation keeps the low bytes, as a C cast would. */
			memcpy(p, &v, es);
			break;
		}
		}
	}
}

static void scale_mean(struct ert_value *y, uint32_t count)
{
	int64_t n = y->numel;

	for (int64_t i = 0; i < n; i++) {
		switch (y->dtype) {
		case ERT_DTYPE_FLOAT32: ((float *)y->data)[i] /= (float)count; break;
		case ERT_DTYPE_FLOAT64: ((double *)y->data)[i] /= count; break;
		case ERT_DTYPE_FLOAT16: {
			uint16_t *p = (uint16_t *)y->data + i;

			*p = ert_fp32_to_fp16(ert_fp16_to_fp32(*p) / (float)count);
			break;
		}
		case ERT_DTYPE_BFLOAT16: {
			uint16_t *p = (uint16_t *)y->data + i;

			*p = ert_fp32_to_bf16(ert_bf16_to_fp32(*p) / (float)count);
			break;
		}
		default: break;
		}
	}
}

/* y = a op b, broadcast into y's shape (a may be y itself). */
static ert_status arith_step(struct ert_cpu *cpu, const struct ert_node *node, enum ert_op op,
			     const struct ert_value *a, const struct ert_value *b,
			     struct ert_value *y, struct ert_err *err)
{
	const bin_fn *fns = fns_for(y->dtype);
	enum arith k = arith_of(node, op);
	const struct ert_value *in[2] = { a, b };
	struct ert_bcast bc;

	if (ert_bcast_init(&bc, y, in, 2, err) != ERT_OK)
		return ERT_STATUS_INTERNAL;
	if (op == ERT_OP_Pow && (a->dtype != b->dtype || y->dtype == ERT_DTYPE_FLOAT16 ||
				 y->dtype == ERT_DTYPE_BFLOAT16)) {
		struct pow_job pj = { a, b, y };

		ert_bcast_run(cpu, &bc, pow_mixed_run, &pj);
		return ERT_OK;
	}
	if (!fns || k == A_COUNT || !fns[k] || a->dtype != y->dtype || b->dtype != y->dtype)
		return ert_node_fail(node, err, ERT_STATUS_UNSUPPORTED, "no cpu kernel for %s",
				     ert_dtype_name(y->dtype));
	struct job j = { cpu, fns[k], y->dtype, ert_dtype_size(y->dtype), a->data, b->data, y->data,
			 { ERT_ACT_NONE, 0, 0 } };

	if (vec_fn(cpu, k, y->dtype))
		j.fn = vec_fn(cpu, k, y->dtype);

	if (op == ERT_OP_Add && y->dtype == ERT_DTYPE_FLOAT32)
		j.act = ert_node_act(node);
	ert_bcast_run(cpu, &bc, arith_run, &j);
	return ERT_OK;
}

ert_status ert_binary_arith_run(struct ert_cpu *cpu, const struct ert_node *node, enum ert_op op,
				const struct ert_value *a, const struct ert_value *b,
				struct ert_value *out, struct ert_err *err)
{
	return arith_step(cpu, node, op, a, b, out, err);
}

/* Folded pairwise into the output: out = in0 op in1, then out = out op in_k. */
ert_status ert_variadic_run(struct ert_cpu *cpu, const struct ert_node *node,
			    const struct ert_value *const *in, uint32_t n_in,
			    struct ert_value *out, struct ert_err *err)
{
	ert_status st = ERT_OK;

	if (n_in == 1) {
		if (out->data != in[0]->data && out->nbytes)
			memmove(out->data, in[0]->data, out->nbytes);
	} else {
		st = arith_step(cpu, node, node->op, in[0], in[1], out, err);
		for (uint32_t k = 2; k < n_in && st == ERT_OK; k++)
			st = arith_step(cpu, node, node->op, out, in[k], out, err);
	}
	if (st == ERT_OK && node->op == ERT_OP_Mean)
		scale_mean(out, n_in);
	return st;
}
