// SPDX-License-Identifier: MIT
// Softmax and LogSoftmax, a work-group per row of len elements inner apart.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "reduce.glsl"

layout(local_size_x = ERT_GPU_RED_WG) in;
layout(std430, binding = 0) readonly buffer Xb { T x[]; };
layout(std430, binding = 1) writeonly buffer Yb { T y[]; };
layout(push_constant) uniform P { int xo, yo, len, inner, log_softmax, rows; } p;

void main()
{
	int row = int(ert_group1()), l = int(gl_LocalInvocationID.x);

	// every item of a group takes the same branch: the barriers below stay uniform
	if (row >= p.rows)
		return;
	int base = (row / p.inner) * p.len * p.inner + row % p.inner;
	int xb = p.xo + base, yb = p.yo + base;
	float m = -1.0 / 0.0, s = 0.0;

	for (int j = l; j < p.len; j += ERT_GPU_RED_WG) {
		float v = LD(x[xb + j * p.inner]);

		m = v > m || isnan(v) ? v : m;
	}
	m = wg_reduce(m, true);
	for (int j = l; j < p.len; j += ERT_GPU_RED_WG)
		s += exp(LD(x[xb + j * p.inner]) - m);
	s = wg_reduce(s, false);
	if (p.log_softmax != 0) {
		float ls = log(s);

		for (int j = l; j < p.len; j += ERT_GPU_RED_WG)
			y[yb + j * p.inner] = ST(LD(x[xb + j * p.inner]) - m - ls);
	} else {
		for (int j = l; j < p.len; j += ERT_GPU_RED_WG)
			y[yb + j * p.inner] = ST(exp(LD(x[xb + j * p.inner]) - m) / s);
	}
}
