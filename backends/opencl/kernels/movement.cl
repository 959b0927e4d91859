/* SPDX-License-Identifier: MIT */
/*
 * Moving 4-byte elements (float32 and int32 alike, as bits): element i of
 * an n-element walk over @dims (rank <= 8, row-major) is read at @sstr
 * strides and written at @dstr strides. Transpose, Slice, Concat's pieces,
 * Split and Expand are all this with different strides.
 */
__kernel void copy_nd_u32(__global const uint *src, int so, __global uint *dst, int dof, int n,
			  int rank, int8 dims8, int8 sstr8, int8 dstr8)
{
	int dims[8], ss[8], ds[8];
	int i = get_global_id(0);

	if (i >= n)
		return;
	vstore8(dims8, 0, dims);
	vstore8(sstr8, 0, ss);
	vstore8(dstr8, 0, ds);
	dst[dof + ert_strided_index(i, rank, dims, ds)] = src[so + ert_strided_index(i, rank, dims, ss)];
}

/*
 * Gather along one axis with indices known when planning (@idx, already
 * made non-negative and in range): the output is [outer][nidx][inner].
 */
__kernel void gather_u32(__global const uint *src, int so, __global uint *dst, int dof, int n,
			 int inner, int nidx, int axis_len, __global const int *idx)
{
	int i = get_global_id(0);

	if (i >= n)
		return;
	int r = i % inner, t = i / inner;
	int j = t % nidx, o = t / nidx;

	dst[dof + i] = src[so + (o * axis_len + idx[j]) * inner + r];
}
