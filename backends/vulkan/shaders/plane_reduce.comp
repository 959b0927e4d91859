// SPDX-License-Identifier: MIT
// The mean or max of each row of len elements (GlobalAveragePool,
// GlobalMaxPool), one work-group per row.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "reduce.glsl"

layout(local_size_x = ERT_GPU_RED_WG) in;
layout(std430, binding = 0) readonly buffer Xb { T x[]; };
layout(std430, binding = 1) writeonly buffer Yb { T y[]; };
layout(push_constant) uniform P { int xo, yo, len, mode, rows; } p;

void main()
{
	int row = int(ert_group1()), l = int(gl_LocalInvocationID.x);

	if (row >= p.rows)
		return;
	bool is_max = p.mode == ERT_GPU_POOL_MAX;
	int xb = p.xo + row * p.len;
	float acc = is_max ? -1.0 / 0.0 : 0.0;

	for (int j = l; j < p.len; j += ERT_GPU_RED_WG) {
		float v = LD(x[xb + j]);

		acc = is_max ? (v > acc || isnan(v) ? v : acc) : acc + v;
	}
	acc = wg_reduce(acc, is_max);
	if (l == 0)
		y[p.yo + row] = ST(is_max ? acc : acc / float(p.len));
}
