/* SPDX-License-Identifier: MIT */
/*
 * vact.h — the fused activations of ert_act_apply() (libruntime/ops/common.c)
 * on one vector, written with the reference's comparisons and operation order
 * so that ReLU, Clip, LeakyRelu, HardSwish and HardSigmoid agree bit for bit;
 * Sigmoid, Tanh and Gelu are vmath.h's approximations (bounds stated there).
 */
#ifndef ERT_CPU_VACT_H
#define ERT_CPU_VACT_H

#include "cpu/vec/vmath.h"
#include "ert-op-impl.h"

/* t < 0 ? 0 : t > 1 ? 1 : t (a NaN stays) */
SIMD_INLINE vf vclamp01(vf t)
{
	return vf_min(vf_set1(1.0f), vf_max(vf_zero(), t));
}

/* x * clamp01(x / 6 + 1/2) */
SIMD_INLINE vf vhard_swish(vf x)
{
	return vf_mul(x, vclamp01(vf_add(vf_div(x, vf_set1(6.0f)), vf_set1(0.5f))));
}

SIMD_INLINE vf vact(const struct ert_act_desc *a, vf x)
{
	switch (a->type) {
	case ERT_ACT_RELU:          /* x > 0 ? x : 0 */
		return vf_max(x, vf_zero());
	case ERT_ACT_CLIP: {        /* x < p0 ? p0 : x > p1 ? p1 : x */
		vf lo = vf_set1(a->p0), hi = vf_set1(a->p1);

		return vf_sel(vf_lt(x, lo), lo, vf_sel(vf_gt(x, hi), hi, x));
	}
	case ERT_ACT_LEAKY_RELU:    /* x >= 0 ? x : x * p0 */
		return vf_sel(vf_ge(x, vf_zero()), x, vf_mul(x, vf_set1(a->p0)));
	case ERT_ACT_SIGMOID:
		return vsigmoid(x);
	case ERT_ACT_HARD_SWISH:
		return vhard_swish(x);
	case ERT_ACT_HARD_SIGMOID:
		return vclamp01(vf_add(vf_mul(vf_set1(a->p0), x), vf_set1(a->p1)));
	case ERT_ACT_TANH:
		return vtanh(x);
	case ERT_ACT_GELU:
		return a->p0 != 0.0f ? vgelu_tanh(x) : vgelu(x);
	case ERT_ACT_NONE:
	default:
		return x;
	}
}

#endif /* ERT_CPU_VACT_H */
