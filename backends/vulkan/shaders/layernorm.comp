// SPDX-License-Identifier: MIT
// y = (x - mean) / sqrt(var + eps) * scale + bias over each row of len, a
// work-group per row.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "reduce.glsl"

layout(local_size_x = ERT_GPU_RED_WG) in;
layout(std430, binding = 0) readonly buffer Xb { T x[]; };
layout(std430, binding = 1) readonly buffer Sb { T sc[]; };
layout(std430, binding = 2) readonly buffer Bb { T b[]; };
layout(std430, binding = 3) writeonly buffer Yb { T y[]; };
layout(push_constant) uniform P { int xo, so, bo, has_bias, yo, len; float eps; int rows; } p;

void main()
{
	int row = int(ert_group1()), l = int(gl_LocalInvocationID.x);

	if (row >= p.rows)
		return;
	int xb = p.xo + row * p.len, yb = p.yo + row * p.len;
	float s = 0.0;

	for (int j = l; j < p.len; j += ERT_GPU_RED_WG)
		s += LD(x[xb + j]);
	float mean = wg_reduce(s, false) / float(p.len);

	s = 0.0;
	for (int j = l; j < p.len; j += ERT_GPU_RED_WG) {
		float d = LD(x[xb + j]) - mean;

		s += d * d;
	}
	float var = wg_reduce(s, false) / float(p.len);
	float inv = 1.0 / sqrt(var + p.eps);

	for (int j = l; j < p.len; j += ERT_GPU_RED_WG) {
		float v = (LD(x[xb + j]) - mean) * inv * LD(sc[p.so + j]);

		y[yb + j] = ST(p.has_bias != 0 ? v + LD(b[p.bo + j]) : v);
	}
}
