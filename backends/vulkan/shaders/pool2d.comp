// SPDX-License-Identifier: MIT
// MaxPool / AveragePool windows over NCHW planes, one item per output
// element, as the CPU's pool.c counts them: a max over no tap is 0; an
// average divides by the taps inside the input, or by the whole window with
// count_include_pad. geo: H, W, KH, KW, sh, sw, ph, pw; geob: dh, dw, OH,
// OW, planes (N x C).
#version 450
#extension GL_GOOGLE_include_directive : require
// before common.glsl: its ert_gid1() reads the specialised gl_WorkGroupSize
layout(local_size_x_id = 0) in;
#include "common.glsl"

layout(std430, binding = 0) readonly buffer Xb { T x[]; };
layout(std430, binding = 1) writeonly buffer Yb { T y[]; };
layout(push_constant) uniform P { int xo, yo, mode; int geo[8], geob[8]; } p;

void main()
{
	int H = p.geo[0], W = p.geo[1], KH = p.geo[2], KW = p.geo[3];
	int OH = p.geob[2], OW = p.geob[3];
	int i = int(ert_gid1());

	if (i >= p.geob[4] * OH * OW)
		return;
	int ox = i % OW, t = i / OW;
	int oy = t % OH, pl = t / OH;
	int xb = p.xo + pl * H * W;
	int sy = oy * p.geo[4] - p.geo[6], sx = ox * p.geo[5] - p.geo[7];
	float acc = 0.0;
	int cnt = 0;
	bool any = false;

	for (int ky = 0; ky < KH; ky++) {
		int iy = sy + ky * p.geob[0];

		if (iy < 0 || iy >= H)
			continue;
		for (int kx = 0; kx < KW; kx++) {
			int ix = sx + kx * p.geob[1];

			if (ix < 0 || ix >= W)
				continue;
			float v = LD(x[xb + iy * W + ix]);

			if (p.mode == ERT_GPU_POOL_MAX) {
				if (!any || v > acc || isnan(v))
					acc = v;
				any = true;
			} else {
				acc += v;
				cnt++;
			}
		}
	}
	if (p.mode == ERT_GPU_POOL_AVG_PAD)
		acc = acc / float(KH * KW);
	else if (p.mode == ERT_GPU_POOL_AVG)
		acc = cnt != 0 ? acc / float(cnt) : 0.0;
	y[p.yo + i] = ST(acc);
}
