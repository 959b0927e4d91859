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
//
// The elementwise shaders compute in CT, reading with LDC() and writing
// with STC(): float, except in their half-arithmetic variant (-DERT_F16
// -DERT_F16_ARITH, "NAME.f16a", launched where the device has shaderFloat16:
// VK_KHR_shader_float16_int8), where CT is float16_t and LDC()/STC() move
// the stored halves as they are. Convolutions, matrix products, pooling and
// the row reductions keep float arithmetic in every variant (as OpenCL's
// -DERT_F16_ARITH).
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
#ifdef ERT_F16_ARITH
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define CT float16_t
#else
#define CT float
#endif
#define LDC(v) CT(v)
#define STC(v) T(v)

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

// The math helpers in float; again in half for the half-arithmetic variant.
#define F float
#define ERT_TANH_MAX 15.0
#include "math.glsl"
#undef F
#undef ERT_TANH_MAX
#ifdef ERT_F16_ARITH
// tanh(5) rounds to 1 in half, and exp(10) (drivers' tanh from exp) is finite
#define F float16_t
#define ERT_TANH_MAX 5.0
#include "math.glsl"
#undef F
#undef ERT_TANH_MAX
#endif

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
