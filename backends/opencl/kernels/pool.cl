/* SPDX-License-Identifier: MIT */
/*
 * Pooling over NCHW planes.
 *
 * pool2d_f32: MaxPool / AveragePool windows, one work-item per output
 * element, as the CPU's pool.c counts them: a max over no tap is 0; an
 * average divides by the taps inside the input, or by the whole window with
 * count_include_pad. geo8: H, W, KH, KW, sh, sw, ph, pw; geob8: dh, dw, OH,
 * OW, planes (N x C).
 *
 * plane_reduce_f32: the mean or max of each row of @len elements (GlobalAveragePool,
 * GlobalMaxPool, ReduceMean over trailing axes), one work-group of ERT_GPU_RED_WG
 * items per row.
 *
 * Tensors are T (common.cl); maxima and sums are taken in float.
 */
__kernel void pool2d_f32(__global const T *x, int xo, __global T *y, int yo, int mode,
			 int8 geo8, int8 geob8)
{
	int geo[8], geob[8];

	vstore8(geo8, 0, geo);
	vstore8(geob8, 0, geob);
	int H = geo[0], W = geo[1], KH = geo[2], KW = geo[3];
	int OH = geob[2], OW = geob[3];
	int i = get_global_id(0);

	if (i >= geob[4] * OH * OW)
		return;
	int ox = i % OW, t = i / OW;
	int oy = t % OH, pl = t / OH;
	__global const T *xp = x + xo + pl * H * W;
	int sy = oy * geo[4] - geo[6], sx = ox * geo[5] - geo[7];
	float acc = 0.0f;
	int cnt = 0;
	bool any = false;

	for (int ky = 0; ky < KH; ky++) {
		int iy = sy + ky * geob[0];

		if (iy < 0 || iy >= H)
			continue;
		for (int kx = 0; kx < KW; kx++) {
			int ix = sx + kx * geob[1];
			float v;

			if (ix < 0 || ix >= W)
				continue;
			v = LD(xp, iy * W + ix);
			if (mode == ERT_GPU_POOL_MAX) {
				if (!any || v > acc || isnan(v))
					acc = v;
				any = true;
			} else {
				acc += v;
				cnt++;
			}
		}
	}
	if (mode == ERT_GPU_POOL_AVG_PAD)
		acc = acc / (float)(KH * KW);
	else if (mode == ERT_GPU_POOL_AVG)
		acc = cnt ? acc / (float)cnt : 0.0f;
	ST(y, yo + i, acc);
}

__kernel __attribute__((reqd_work_group_size(ERT_GPU_RED_WG, 1, 1)))
void plane_reduce_f32(__global const T *x, int xo, __global T *y, int yo, int len,
		      int mode)
{
	__local float part[ERT_GPU_RED_WG];
	int row = get_group_id(0), l = get_local_id(0);
	__global const T *xp = x + xo + row * len;
	bool max = mode == ERT_GPU_POOL_MAX;
	float acc = max ? -INFINITY : 0.0f;

	for (int j = l; j < len; j += ERT_GPU_RED_WG) {
		float v = LD(xp, j);

		acc = max ? (v > acc || isnan(v) ? v : acc) : acc + v;
	}
	part[l] = acc;
	for (int s = ERT_GPU_RED_WG / 2; s > 0; s >>= 1) {
		/* each halving reads what the previous one wrote */
		barrier(CLK_LOCAL_MEM_FENCE);
		if (l < s) {
			float o = part[l + s];

			part[l] = max ? (o > part[l] || isnan(o) ? o : part[l]) : part[l] + o;
		}
	}
	if (l == 0)
		ST(y, yo + row, max ? part[0] : part[0] / (float)len);
}
