// SPDX-License-Identifier: MIT
// Gather along one axis with indices known when planning (idx, already
// made non-negative and in range): the output is [outer][nidx][inner].
#version 450
#extension GL_GOOGLE_include_directive : require
// before common.glsl: its ert_gid1() reads the specialised gl_WorkGroupSize
layout(local_size_x_id = 0) in;
#include "common.glsl"

layout(std430, binding = 0) readonly buffer Sb { U src[]; };
layout(std430, binding = 1) writeonly buffer Db { U dst[]; };
layout(std430, binding = 2) readonly buffer Ib { int idx[]; };
layout(push_constant) uniform P { int so, dof, n, inner, nidx, axis_len; } p;

void main()
{
	int i = int(ert_gid1());

	if (i >= p.n)
		return;
	int r = i % p.inner, t = i / p.inner;
	int j = t % p.nidx, o = t / p.nidx;

	dst[p.dof + i] = src[p.so + (o * p.axis_len + idx[j]) * p.inner + r];
}
