// SPDX-License-Identifier: MIT
// Helpers every shader shares. GLSL has no erf, expm1 or log1p, and its
// tanh and pow are not defined everywhere the ops need them: the versions
// here are.
#include "../../gpu-common/gpu-codes.h"
#include "vk-codes.h"

// The storage type of float tensors: float, or float16_t in the variant
// compiled with -DERT_F16 (precision LOW: embedded as "NAME.f16",
// VK_KHR_16bit_storage's storageBuffer16BitAccess, core in Vulkan 1.1).
// Arithmetic is float32 in both: LD() widens a stored element, ST() rounds
// a result to the storage type (to nearest even). U moves elements as
// bits (copy_nd, gather): 4 bytes, or 2 in the float16 variant.
#ifdef ERT_F16
#extension GL_EXT_shader_16bit_storage : require
#define T float16_t
#define U uint16_t
#else
#define T float
#define U uint
#endif
#define LD(v) float(v)
#define ST(v) T(v)

// The flat index of this item in a 1-D launch laid out over a 2-D grid of
// work-groups (grid x is capped at 65535, the least any device allows).
uint ert_gid1()
{
	return (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x +
	       gl_LocalInvocationID.x;
}

// The flat index of this work-group (row reductions: a group per row).
uint ert_group1()
{
	return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
}

// Near 0 a series (drivers may compute tanh from exp and lose the small
// values to cancellation); beyond, the builtin, clamped where tanh is +-1 in
// float (some drivers compute inf/inf there).
float ert_tanh(float v)
{
	if (abs(v) < 0.1) {
		float z = v * v;

		return v * (1.0 + z * (-1.0 / 3.0 + z * (2.0 / 15.0 + z * (-17.0 / 315.0))));
	}
	return tanh(clamp(v, -15.0, 15.0));
}

// Series near 0 (no cancellation), Abramowitz and Stegun 7.1.26 beyond
// (absolute error below 1.5e-7).
float ert_erf(float v)
{
	float a = abs(v);

	if (a < 0.5) {
		float z = v * v;

		return v * 1.1283791670955126 *
		       (1.0 + z * (-1.0 / 3.0 + z * (0.1 + z * (-1.0 / 42.0 + z * (1.0 / 216.0 +
			z * (-1.0 / 1320.0 + z * (1.0 / 9360.0)))))));
	}
	float t = 1.0 / (1.0 + 0.3275911 * a);
	float y = 1.0 - t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 +
		  t * (-1.453152027 + t * 1.061405429)))) * exp(-a * a);

	return v < 0.0 ? -y : y;
}

// Series near 0, where exp(v) - 1 and log(1 + v) cancel.
float ert_expm1(float v)
{
	if (abs(v) < 0.1)
		return v * (1.0 + v * (0.5 + v * (1.0 / 6.0 + v * (1.0 / 24.0 + v * (1.0 / 120.0 +
		       v * (1.0 / 720.0))))));
	return exp(v) - 1.0;
}

float ert_log1p(float v)
{
	if (abs(v) < 0.1)
		return v * (1.0 + v * (-0.5 + v * (1.0 / 3.0 + v * (-0.25 + v * (0.2 +
		       v * (-1.0 / 6.0 + v * (1.0 / 7.0)))))));
	return log(1.0 + v);
}

float ert_gelu(float v)
{
	return 0.5 * v * (1.0 + ert_erf(v * 0.70710678118654752440));
}

float ert_gelu_tanh(float v)
{
	return 0.5 * v * (1.0 + ert_tanh(0.79788456080286535588 * (v + 0.044715 * v * v * v)));
}

float ert_sigmoid(float v)
{
	return 1.0 / (1.0 + exp(-v));
}

// A fused activation, as ert_act_apply() computes it on the CPU.
float ert_act(float v, int act, float p0, float p1)
{
	switch (act) {
	case ERT_GPU_ACT_RELU:
		return v > 0.0 ? v : 0.0;
	case ERT_GPU_ACT_CLIP:
		return v < p0 ? p0 : v > p1 ? p1 : v;
	case ERT_GPU_ACT_LEAKY_RELU:
		return v >= 0.0 ? v : v * p0;
	case ERT_GPU_ACT_SIGMOID:
		return ert_sigmoid(v);
	case ERT_GPU_ACT_HARD_SWISH:
		return v * clamp(v / 6.0 + 0.5, 0.0, 1.0);
	case ERT_GPU_ACT_HARD_SIGMOID:
		return clamp(p0 * v + p1, 0.0, 1.0);
	case ERT_GPU_ACT_TANH:
		return ert_tanh(v);
	case ERT_GPU_ACT_GELU: // p0: 1 for approximate="tanh"
		return p0 != 0.0 ? ert_gelu_tanh(v) : ert_gelu(v);
	default:
		return v;
	}
}
