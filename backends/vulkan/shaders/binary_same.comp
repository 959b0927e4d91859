// SPDX-License-Identifier: MIT
// c = act(a op b) for operands of one shape: no index arithmetic.
#version 450
#extension GL_GOOGLE_include_directive : require
// before common.glsl: its ert_gid1() reads the specialised gl_WorkGroupSize
layout(local_size_x_id = 0) in;
#include "common.glsl"
#include "binary.glsl"

layout(std430, binding = 0) readonly buffer A { T a[]; };
layout(std430, binding = 1) readonly buffer B { T b[]; };
layout(std430, binding = 2) writeonly buffer C { T c[]; };
layout(push_constant) uniform P { int ao, bo, co, n, op, act; float p0, p1; } p;

void main()
{
	int i = int(ert_gid1());

	if (i < p.n)
		c[p.co + i] = ST(ert_act(float(binary_op(LDC(a[p.ao + i]), LDC(b[p.bo + i]), p.op)),
				    p.act, p.p0, p.p1));
}
