// SPDX-License-Identifier: MIT
// Moving 4-byte elements (float32 and int32 alike, as bits): element i of
// an n-element walk over dims (rank <= 8, row-major) is read at ss strides
// and written at ds strides. Transpose, Slice and Concat's pieces are all
// this with different strides.
#version 450
#extension GL_GOOGLE_include_directive : require
// before common.glsl: its ert_gid1() reads the specialised gl_WorkGroupSize
layout(local_size_x_id = 0) in;
#include "common.glsl"

layout(std430, binding = 0) readonly buffer Sb { U src[]; };
layout(std430, binding = 1) writeonly buffer Db { U dst[]; };
layout(push_constant) uniform P { int so, dof, n, rank; int dims[8], ss[8], ds[8]; } p;

void main()
{
	int i = int(ert_gid1());

	if (i >= p.n)
		return;
	int r = i, is = 0, id = 0;

	for (int d = p.rank - 1; d >= 0; d--) {
		int q = r / p.dims[d], k = r - q * p.dims[d];

		r = q;
		is += k * p.ss[d];
		id += k * p.ds[d];
	}
	dst[p.dof + id] = src[p.so + is];
}
