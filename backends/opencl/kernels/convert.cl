/* SPDX-License-Identifier: MIT */
/*
 * Conversions between float32 and float16 storage in device memory (the
 * backend's buffer_convert(), precision LOW): where a step in float16 reads
 * a tensor a step in float32 wrote, or the other way round. Core OpenCL 1.2
 * (vload_half/vstore_half): no cl_khr_fp16 needed.
 */
__kernel void f32_to_f16(__global const float *src, int so, __global half *dst, int dof, int n)
{
	int i = get_global_id(0);

	if (i < n)
		vstore_half_rte(src[so + i], dof + i, dst);
}

__kernel void f16_to_f32(__global const half *src, int so, __global float *dst, int dof, int n)
{
	int i = get_global_id(0);

	if (i < n)
		dst[dof + i] = vload_half(so + i, src);
}
