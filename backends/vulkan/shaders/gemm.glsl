// SPDX-License-Identifier: MIT
// What gemm.comp and gemm_direct.comp share: their buffers and push
// constants (one host-side launch serves both), the implicit im2col load
// and the epilogue. See gemm.comp for the arguments.
layout(std430, binding = 0) readonly buffer Ab { T A[]; };
layout(std430, binding = 1) readonly buffer Bb { T B[]; };
layout(std430, binding = 2) writeonly buffer Cb { T C[]; };
layout(std430, binding = 3) readonly buffer Tb { int boff[]; };
layout(std430, binding = 4) readonly buffer Sb { T bias[]; };
layout(std430, binding = 5) readonly buffer Rb { T res[]; };
// geo: H, W, KH, KW, sh, sw, ph, pw; dh, dw, OW
layout(push_constant) uniform P {
	int ao, a_rs, a_cs, bo, b_rs, b_cs, co, ldc, M, N, K;
	int bias_o, bias_rs, bias_cs;
	float alpha, beta;
	int res_o, flags;
	float p0, p1;
	int geo[11];
} p;

float load_b(int base, int k, int n)
{
	if ((p.flags & VK_GEMM_CONV) == 0)
		return LD(B[base + k * p.b_rs + n * p.b_cs]);
	int khw = p.geo[2] * p.geo[3];
	int ic = k / khw, r = k - ic * khw;
	int ky = r / p.geo[3], kx = r - ky * p.geo[3];
	int oy = n / p.geo[10], ox = n - oy * p.geo[10];
	int iy = oy * p.geo[4] - p.geo[6] + ky * p.geo[8];
	int ix = ox * p.geo[5] - p.geo[7] + kx * p.geo[9];

	if (iy < 0 || iy >= p.geo[0] || ix < 0 || ix >= p.geo[1])
		return 0.0;
	return LD(B[base + (ic * p.geo[0] + iy) * p.geo[1] + ix]);
}

// C(m, n) of batch z = act(alpha * acc + beta * bias + residual)
void store_c(int z, int m, int n, float acc)
{
	float v = p.alpha * acc;

	if ((p.flags & VK_GEMM_HAS_BIAS) != 0)
		v += p.beta * LD(bias[p.bias_o + boff[4 * z + 3] + m * p.bias_rs + n * p.bias_cs]);
	if ((p.flags & VK_GEMM_HAS_RES) != 0)
		v += LD(res[p.res_o + boff[4 * z + 2] + m * p.ldc + n]);
	C[p.co + boff[4 * z + 2] + m * p.ldc + n] = ST(ert_act(v, p.flags >> 8, p.p0, p.p1));
}
