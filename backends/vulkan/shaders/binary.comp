// SPDX-License-Identifier: MIT
// c = act(a op b), numpy broadcasting: the host folds the shapes into
// rank <= 8 dims of the output and each input's strides (0 where it is
// broadcast), merging dims where it can. code: op | rank << 8 | act << 16.
#version 450
#extension GL_GOOGLE_include_directive : require
// before common.glsl: its ert_gid1() reads the specialised gl_WorkGroupSize
layout(local_size_x_id = 0) in;
#include "common.glsl"
#include "binary.glsl"

layout(std430, binding = 0) readonly buffer A { T a[]; };
layout(std430, binding = 1) readonly buffer B { T b[]; };
layout(std430, binding = 2) writeonly buffer C { T c[]; };
layout(push_constant) uniform P {
	int ao, bo, co, n, code;
	float p0, p1;
	int dims[8], sa[8], sb[8];
} p;

void main()
{
	int i = int(ert_gid1());

	if (i >= p.n)
		return;
	int rank = (p.code >> 8) & 255, ia = 0, ib = 0, r = i;

	for (int d = rank - 1; d >= 0; d--) {
		int q = r / p.dims[d], k = r - q * p.dims[d];

		r = q;
		ia += k * p.sa[d];
		ib += k * p.sb[d];
	}
	float v = float(binary_op(LDC(a[p.ao + ia]), LDC(b[p.bo + ib]), p.code & 255));

	c[p.co + i] = ST(ert_act(v, p.code >> 16, p.p0, p.p1));
}
