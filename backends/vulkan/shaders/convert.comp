// SPDX-License-Identifier: MIT
// Conversions between float32 and float16 storage in one buffer (the
// backend's buffer_convert(), precision LOW): where a step in float16 reads
// a tensor a step in float32 wrote, or the other way round. Bindings 0 and
// 1 are the same buffer, seen as float and as float16_t; so and dof are in
// elements of the source's and the destination's type. Needs
// storageBuffer16BitAccess: built once (no float32 variant to choose).
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
// before common.glsl: its ert_gid1() reads the specialised gl_WorkGroupSize
layout(local_size_x_id = 0) in;
#include "common.glsl"

layout(std430, binding = 0) buffer F { float f[]; };
layout(std430, binding = 1) buffer H { float16_t h[]; };
layout(push_constant) uniform P { int so, dof, n, widen; } p;

void main()
{
	int i = int(ert_gid1());

	if (i >= p.n)
		return;
	if (p.widen != 0)
		f[p.dof + i] = float(h[p.so + i]);
	else
		h[p.dof + i] = float16_t(f[p.so + i]);
}
