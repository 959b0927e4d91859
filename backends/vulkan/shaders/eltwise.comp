// SPDX-License-Identifier: MIT
// Unary elementwise ops on float tensors: one item per element.
#version 450
#extension GL_GOOGLE_include_directive : require
// before common.glsl: its ert_gid1() reads the specialised gl_WorkGroupSize
layout(local_size_x_id = 0) in;
#include "common.glsl"

layout(std430, binding = 0) readonly buffer X { T x[]; };
layout(std430, binding = 1) writeonly buffer Y { T y[]; };
layout(push_constant) uniform P { int xo, yo, n, op; float p0, p1; } p;

// in CT: half in the half-arithmetic variant (common.glsl)
CT unary_op(CT v)
{
	switch (p.op) {
	case ERT_GPU_UN_RELU: return v < CT(0.0) ? CT(0.0) : v; // NaN passes through
	case ERT_GPU_UN_SIGMOID: return ert_sigmoid(v);
	case ERT_GPU_UN_TANH: return ert_tanh(v);
	case ERT_GPU_UN_CLIP: { CT t = v < CT(p.p0) ? CT(p.p0) : v; return t > CT(p.p1) ? CT(p.p1) : t; }
	case ERT_GPU_UN_LEAKY_RELU: return v < CT(0.0) ? v * CT(p.p0) : v;
	case ERT_GPU_UN_HARD_SWISH: return v * clamp(v / CT(6.0) + CT(0.5), CT(0.0), CT(1.0));
	case ERT_GPU_UN_HARD_SIGMOID: return clamp(CT(p.p0) * v + CT(p.p1), CT(0.0), CT(1.0));
	case ERT_GPU_UN_ELU: return v < CT(0.0) ? CT(p.p0) * ert_expm1(v) : v;
	case ERT_GPU_UN_EXP: return exp(v);
	case ERT_GPU_UN_LOG: return log(v);
	case ERT_GPU_UN_NEG: return -v;
	case ERT_GPU_UN_ABS: return abs(v);
	case ERT_GPU_UN_SQRT: return sqrt(v);
	case ERT_GPU_UN_RECIPROCAL: return CT(1.0) / v;
	case ERT_GPU_UN_ERF: return ert_erf(v);
	case ERT_GPU_UN_GELU: return ert_gelu(v);
	case ERT_GPU_UN_GELU_TANH: return ert_gelu_tanh(v);
	case ERT_GPU_UN_SOFTPLUS: return v > CT(0.0) ? v + ert_log1p(exp(-v)) : ert_log1p(exp(v));
	case ERT_GPU_UN_FLOOR: return floor(v);
	case ERT_GPU_UN_CEIL: return ceil(v);
	case ERT_GPU_UN_SOFTSIGN: return v / (CT(1.0) + abs(v));
	default: return v;
	}
}

void main()
{
	int i = int(ert_gid1());

	if (i < p.n)
		y[p.yo + i] = STC(unary_op(LDC(x[p.xo + i])));
}
