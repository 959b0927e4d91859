/* SPDX-License-Identifier: MIT */
/*
 * eltwise-tmpl.h — unary and binary fp32 kernels and the fused activation
 * pass, compiled once per level by vec-<level>.c. Whole vectors, then one
 * masked vector for the tail (no scalar remainder, no read past the end).
 */
#ifndef ERT_CPU_ELTWISE_TMPL_H
#define ERT_CPU_ELTWISE_TMPL_H

#include "cpu/vec/vact.h"
#include "cpu/vec/vec.h"

/* Parameters are copied to locals first: stores through y could alias them. */
#define VEC_UNARY(name, EXPR)                                                            \
	static void name(const float *x, float *y, int64_t n, const struct ert_vec_uparams *pp) \
	{                                                                                \
		const struct ert_vec_uparams p = *pp;                                    \
		int64_t i = 0;                                                           \
		(void)p;                                                                 \
		for (; i + VW <= n; i += VW) {                                           \
			vf v = vf_ld(x + i);                                             \
			vf_st(y + i, EXPR);                                              \
		}                                                                        \
		if (i < n) {                                                             \
			vm m_ = vm_first(n - i);                                         \
			vf v = vf_ldm(x + i, m_);                                        \
			vf_stm(y + i, m_, EXPR);                                         \
		}                                                                        \
	}

/* v < 0 ? 0 : v */
VEC_UNARY(un_relu, vf_max(vf_zero(), v))
/* (v < lo ? lo : v), then (. > hi ? hi : .) */
VEC_UNARY(un_clip, vf_min(vf_set1(p.hi), vf_max(vf_set1(p.lo), v)))
/* (v < 0 ? 0 : v) + (v < 0 ? v : 0) * alpha */
VEC_UNARY(un_leaky_relu, vf_add(vf_sel(vf_lt(v, vf_zero()), vf_zero(), v),
				vf_mul(vf_sel(vf_lt(v, vf_zero()), v, vf_zero()),
				       vf_set1(p.alpha))))
VEC_UNARY(un_hard_sigmoid, vclamp01(vf_add(vf_mul(vf_set1(p.alpha), v), vf_set1(p.beta))))
VEC_UNARY(un_hard_swish, vhard_swish(v))
VEC_UNARY(un_sigmoid, vsigmoid(v))
VEC_UNARY(un_tanh, vtanh(v))
VEC_UNARY(un_erf, verf(v))
VEC_UNARY(un_gelu, vgelu(v))
VEC_UNARY(un_gelu_tanh, vgelu_tanh(v))
VEC_UNARY(un_exp, vexp(v))

/* One broadcast-walker run in its four cases (see ert_vec_binary_fn). */
#define VEC_BINARY(name, OP)                                                             \
	static void name(const void *pa, int64_t sa, const void *pb, int64_t sb, void *py,   \
			 int64_t n)                                                          \
	{                                                                                    \
		const float *a = pa, *b = pb;                                                \
		float *y = py;                                                               \
		int64_t i = 0;                                                               \
		vm m_ = vm_first(n % VW);                                                    \
		int64_t full = n - n % VW;                                                   \
		if (sa && sb) {                                                              \
			for (; i < full; i += VW)                                            \
				vf_st(y + i, OP(vf_ld(a + i), vf_ld(b + i)));                \
			if (i < n)                                                           \
				vf_stm(y + i, m_, OP(vf_ldm(a + i, m_), vf_ldm(b + i, m_))); \
		} else if (sb) {                                                             \
			vf u = vf_set1(a[0]);                                                \
			for (; i < full; i += VW)                                            \
				vf_st(y + i, OP(u, vf_ld(b + i)));                           \
			if (i < n)                                                           \
				vf_stm(y + i, m_, OP(u, vf_ldm(b + i, m_)));                 \
		} else if (sa) {                                                             \
			vf w = vf_set1(b[0]);                                                \
			for (; i < full; i += VW)                                            \
				vf_st(y + i, OP(vf_ld(a + i), w));                           \
			if (i < n)                                                           \
				vf_stm(y + i, m_, OP(vf_ldm(a + i, m_), w));                 \
		} else {                                                                     \
			vf r = OP(vf_set1(a[0]), vf_set1(b[0]));                             \
			for (; i < full; i += VW)                                            \
				vf_st(y + i, r);                                             \
			if (i < n)                                                           \
				vf_stm(y + i, m_, r);                                        \
		}                                                                            \
	}

/* numpy's minimum/maximum: u < w || u != u ? u : w (and > for max) */
SIMD_INLINE vf bin_min(vf u, vf w) { return vf_sel(vf_isnan(u), u, vf_min(u, w)); }
SIMD_INLINE vf bin_max(vf u, vf w) { return vf_sel(vf_isnan(u), u, vf_max(u, w)); }

VEC_BINARY(bin_add_f32, vf_add)
VEC_BINARY(bin_sub_f32, vf_sub)
VEC_BINARY(bin_mul_f32, vf_mul)
VEC_BINARY(bin_div_f32, vf_div)
VEC_BINARY(bin_min_f32, bin_min)
VEC_BINARY(bin_max_f32, bin_max)

/* The loop for one activation type @t: a constant once inlined, so vact() folds. */
SIMD_INLINE void act_loop(const struct ert_act_desc *act, enum ert_act t, float *x, int64_t n)
{
	struct ert_act_desc a = *act;
	int64_t i = 0;

	a.type = t;
	for (; i + VW <= n; i += VW)
		vf_st(x + i, vact(&a, vf_ld(x + i)));
	if (i < n) {
		vm m = vm_first(n - i);

		vf_stm(x + i, m, vact(&a, vf_ldm(x + i, m)));
	}
}

static void act_apply(const struct ert_act_desc *act, float *x, int64_t n)
{
	switch (act->type) {
	case ERT_ACT_RELU: act_loop(act, ERT_ACT_RELU, x, n); break;
	case ERT_ACT_CLIP: act_loop(act, ERT_ACT_CLIP, x, n); break;
	case ERT_ACT_LEAKY_RELU: act_loop(act, ERT_ACT_LEAKY_RELU, x, n); break;
	case ERT_ACT_SIGMOID: act_loop(act, ERT_ACT_SIGMOID, x, n); break;
	case ERT_ACT_HARD_SWISH: act_loop(act, ERT_ACT_HARD_SWISH, x, n); break;
	case ERT_ACT_HARD_SIGMOID: act_loop(act, ERT_ACT_HARD_SIGMOID, x, n); break;
	case ERT_ACT_TANH: act_loop(act, ERT_ACT_TANH, x, n); break;
	case ERT_ACT_GELU: act_loop(act, ERT_ACT_GELU, x, n); break;
	case ERT_ACT_NONE:
	default: break;
	}
}

#endif /* ERT_CPU_ELTWISE_TMPL_H */
