/* SPDX-License-Identifier: MIT */
/*
 * Convolutions whose groups read one input channel each (depthwise, and
 * depthwise with a channel multiplier): one work-item per output element.
 * Dense and grouped convolutions are gemm.cl's implicit GEMM.
 *
 * geo8: H, W, KH, KW, sh, sw, ph, pw; geob8: dh, dw, OH, OW, C (input
 * channels), OC, multiplier (OC / C), N.
 */
__kernel void conv_dw_f32(__global const T *x, int xo, __global const T *w, int wo,
			  __global T *y, int yo, __global const T *bias, int bo,
			  int has_bias, __global const T *res, int ro, int has_res,
			  int8 geo8, int8 geob8, int act, float p0, float p1)
{
	int geo[8], geob[8];

	vstore8(geo8, 0, geo);
	vstore8(geob8, 0, geob);
	int H = geo[0], W = geo[1], KH = geo[2], KW = geo[3];
	int OH = geob[2], OW = geob[3], C = geob[4], OC = geob[5], mult = geob[6];
	int total = geob[7] * OC * OH * OW;
	int i = get_global_id(0);

	if (i >= total)
		return;
	int ox = i % OW, t = i / OW;
	int oy = t % OH;

	t /= OH;
	int oc = t % OC, n = t / OC;
	int ic = oc / mult;
	__global const T *xp = x + xo + (n * C + ic) * H * W;
	__global const T *wp = w + wo + oc * KH * KW;
	float acc = 0.0f;

	for (int ky = 0; ky < KH; ky++) {
		int iy = oy * geo[4] - geo[6] + ky * geob[0];

		if (iy < 0 || iy >= H)
			continue;
		for (int kx = 0; kx < KW; kx++) {
			int ix = ox * geo[5] - geo[7] + kx * geob[1];

			if (ix >= 0 && ix < W)
				acc += LD(xp, iy * W + ix) * LD(wp, ky * KW + kx);
		}
	}
	if (has_bias)
		acc += LD(bias, bo + oc);
	if (has_res)
		acc += LD(res, ro + i);
	ST(y, yo + i, ert_act(acc, act, p0, p1));
}
