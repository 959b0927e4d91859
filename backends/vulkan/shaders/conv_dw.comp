// SPDX-License-Identifier: MIT
// Convolutions whose groups read one input channel each (depthwise, and
// depthwise with a channel multiplier): one item per output element.
// Dense and grouped convolutions are gemm.comp's implicit GEMM.
//
// geo: H, W, KH, KW, sh, sw, ph, pw; geob: dh, dw, OH, OW, C (input
// channels), OC, multiplier (OC / C), N. flags: has_bias | has_res << 1 | act << 8.
#version 450
#extension GL_GOOGLE_include_directive : require
// before common.glsl: its ert_gid1() reads the specialised gl_WorkGroupSize
layout(local_size_x_id = 0) in;
#include "common.glsl"

layout(std430, binding = 0) readonly buffer Xb { T x[]; };
layout(std430, binding = 1) readonly buffer Wb { T w[]; };
layout(std430, binding = 2) writeonly buffer Yb { T y[]; };
layout(std430, binding = 3) readonly buffer Sb { T bias[]; };
layout(std430, binding = 4) readonly buffer Rb { T res[]; };
layout(push_constant) uniform P {
	int xo, wo, yo, bo, ro, flags;
	float p0, p1;
	int geo[8], geob[8];
} p;

void main()
{
	int H = p.geo[0], W = p.geo[1], KH = p.geo[2], KW = p.geo[3];
	int OH = p.geob[2], OW = p.geob[3], C = p.geob[4], OC = p.geob[5], mult = p.geob[6];
	int i = int(ert_gid1());

	if (i >= p.geob[7] * OC * OH * OW)
		return;
	int ox = i % OW, t = i / OW;
	int oy = t % OH;

	t /= OH;
	int oc = t % OC, n = t / OC;
	int ic = oc / mult;
	int xb = p.xo + (n * C + ic) * H * W, wb = p.wo + oc * KH * KW;
	float acc = 0.0;

	for (int ky = 0; ky < KH; ky++) {
		int iy = oy * p.geo[4] - p.geo[6] + ky * p.geob[0];

		if (iy < 0 || iy >= H)
			continue;
		for (int kx = 0; kx < KW; kx++) {
			int ix = ox * p.geo[5] - p.geo[7] + kx * p.geob[1];

			if (ix >= 0 && ix < W)
				acc += LD(x[xb + iy * W + ix]) * LD(w[wb + ky * KW + kx]);
		}
	}
	if ((p.flags & 1) != 0)
		acc += LD(bias[p.bo + oc]);
	if ((p.flags & 2) != 0)
		acc += LD(res[p.ro + i]);
	y[p.yo + i] = ST(ert_act(acc, p.flags >> 8, p.p0, p.p1));
}
