/* SPDX-License-Identifier: MIT */
/*
 * Moving elements as bits, by their size: 4 bytes (float32 and int32 alike,
 * _u32) and 2 bytes (float32 tensors stored as float16, _u16). Element i of
 * an n-element walk over @dims (rank <= 8, row-major) is read at @sstr
 * strides and written at @dstr strides. Transpose, Slice, Concat's pieces,
 * Split and Expand are all this with different strides.
 */
#define COPY_ND(name, E)                                                                  \
__kernel void name(__global const E *src, int so, __global E *dst, int dof, int n,        \
		   int rank, int8 dims8, int8 sstr8, int8 dstr8)                          \
{                                                                                         \
	int dims[8], ss[8], ds[8];                                                        \
	int i = get_global_id(0);                                                         \
                                                                                          \
	if (i >= n)                                                                       \
		return;                                                                   \
	vstore8(dims8, 0, dims);                                                          \
	vstore8(sstr8, 0, ss);                                                            \
	vstore8(dstr8, 0, ds);                                                            \
	dst[dof + ert_strided_index(i, rank, dims, ds)] =                                 \
		src[so + ert_strided_index(i, rank, dims, ss)];                           \
}

COPY_ND(copy_nd_u32, uint)
COPY_ND(copy_nd_u16, ushort)

/*
 * Gather along one axis with indices known when planning (@idx, already
 * made non-negative and in range): the output is [outer][nidx][inner].
 */
#define GATHER(name, E)                                                                   \
__kernel void name(__global const E *src, int so, __global E *dst, int dof, int n,        \
		   int inner, int nidx, int axis_len, __global const int *idx)            \
{                                                                                         \
	int i = get_global_id(0);                                                         \
                                                                                          \
	if (i >= n)                                                                       \
		return;                                                                   \
	int r = i % inner, t = i / inner;                                                 \
	int j = t % nidx, o = t / nidx;                                                   \
                                                                                          \
	dst[dof + i] = src[so + (o * axis_len + idx[j]) * inner + r];                     \
}

GATHER(gather_u32, uint)
GATHER(gather_u16, ushort)
