// SPDX-License-Identifier: MIT
// Unary elementwise ops on float32: one item per element.
#version 450
#extension GL_GOOGLE_include_directive : require
// before common.glsl: its ert_gid1() reads the specialised gl_WorkGroupSize
layout(local_size_x_id = 0) in;
#include "common.glsl"

layout(std430, binding = 0) readonly buffer X { T x[]; };
layout(std430, binding = 1) writeonly buffer Y { T y[]; };
layout(push_constant) uniform P { int xo, yo, n, op; float p0, p1; } p;

float unary_op(float v)
{
	switch (p.op) {
	case ERT_GPU_UN_RELU: return v < 0.0 ? 0.0 : v; // NaN passes through
	case ERT_GPU_UN_SIGMOID: return ert_sigmoid(v);
	case ERT_GPU_UN_TANH: return ert_tanh(v);
	case ERT_GPU_UN_CLIP: { float t = v < p.p0 ? p.p0 : v; return t > p.p1 ? p.p1 : t; }
	case ERT_GPU_UN_LEAKY_RELU: return v < 0.0 ? v * p.p0 : v;
	case ERT_GPU_UN_HARD_SWISH: return v * clamp(v / 6.0 + 0.5, 0.0, 1.0);
	case ERT_GPU_UN_HARD_SIGMOID: return clamp(p.p0 * v + p.p1, 0.0, 1.0);
	case ERT_GPU_UN_ELU: return v < 0.0 ? p.p0 * ert_expm1(v) : v;
	case ERT_GPU_UN_EXP: return exp(v);
	case ERT_GPU_UN_LOG: return log(v);
	case ERT_GPU_UN_NEG: return -v;
	case ERT_GPU_UN_ABS: return abs(v);
	case ERT_GPU_UN_SQRT: return sqrt(v);
	case ERT_GPU_UN_RECIPROCAL: return 1.0 / v;
	case ERT_GPU_UN_ERF: return ert_erf(v);
	case ERT_GPU_UN_GELU: return ert_gelu(v);
	case ERT_GPU_UN_GELU_TANH: return ert_gelu_tanh(v);
	case ERT_GPU_UN_SOFTPLUS: return v > 0.0 ? v + ert_log1p(exp(-v)) : ert_log1p(exp(v));
	case ERT_GPU_UN_FLOOR: return floor(v);
	case ERT_GPU_UN_CEIL: return ceil(v);
	case ERT_GPU_UN_SOFTSIGN: return v / (1.0 + abs(v));
	default: return v;
	}
}

void main()
{
	int i = int(ert_gid1());

	if (i < p.n)
		y[p.yo + i] = ST(unary_op(LD(x[p.xo + i])));
}
