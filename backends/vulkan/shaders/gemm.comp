// SPDX-License-Identifier: MIT
// C = act(alpha * A x B + beta * bias + residual), tiled: a work-group of
// LX x LY items (specialization constants 0 and 1) computes a TS_M x TS_N
// tile of C (TS_M = LY * WPT, TS_N = LX * WPT), each item WPT x WPT of it
// in registers, from TS_K-deep slices (constant 2) of A and B staged in
// shared memory. Bounds are checked on every load and store: any M, N, K.
//
// A(m, k) = A[m * a_rs + k * a_cs] and B(k, n) = B[k * b_rs + n * b_cs]:
// transposes are strides. With VK_GEMM_CONV, B is the implicit im2col matrix
// of one image and group: B(k, n) = X[ic][oy * sh - ph + ky * dh][ox * sw -
// pw + kx * dw] (zero outside the image), k = (ic * KH + ky) * KW + kx,
// n = oy * OW + ox; no im2col buffer is ever written.
//
// Batches run along z: boff holds four element offsets per batch (A, B,
// C and residual, bias), so any broadcast of batch dims and any group layout
// is a table the host fills once.
#version 450
#extension GL_GOOGLE_include_directive : require
// [[unroll]]: the register blocks stay registers (unrolled, not arrays in memory)
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

layout(local_size_x_id = 0, local_size_y_id = 1) in;
layout(constant_id = 2) const int TS_K = VK_GEMM_TS_K;
const int WPT = VK_GEMM_WPT;
const int LX = int(gl_WorkGroupSize.x), LY = int(gl_WorkGroupSize.y);
const int TS_M = LY * WPT, TS_N = LX * WPT;

#include "gemm.glsl"

shared float As[TS_K * TS_M];
shared float Bs[TS_K * TS_N];

void main()
{
	float acc[WPT][WPT];
	int tn = int(gl_LocalInvocationID.x), tm = int(gl_LocalInvocationID.y);
	int lid = tm * LX + tn;
	int n0 = int(gl_WorkGroupID.x) * TS_N, m0 = int(gl_WorkGroupID.y) * TS_M;
	int z = int(gl_WorkGroupID.z);
	int a_base = p.ao + boff[4 * z], b_base = p.bo + boff[4 * z + 1];

	[[unroll]] for (int wm = 0; wm < WPT; wm++)
		[[unroll]] for (int wn = 0; wn < WPT; wn++)
			acc[wm][wn] = 0.0;

	for (int k0 = 0; k0 < p.K; k0 += TS_K) {
		for (int l = lid; l < TS_K * TS_M; l += LX * LY) {
			int kk = l / TS_M, mm = l - kk * TS_M;
			int m = m0 + mm, k = k0 + kk;

			As[l] = m < p.M && k < p.K ? LD(A[a_base + m * p.a_rs + k * p.a_cs]) : 0.0;
		}
		for (int l = lid; l < TS_K * TS_N; l += LX * LY) {
			int kk = l / TS_N, nn = l - kk * TS_N;
			int n = n0 + nn, k = k0 + kk;

			Bs[l] = n < p.N && k < p.K ? load_b(b_base, k, n) : 0.0;
		}
		// the tiles are complete before anyone reads them
		barrier();
		for (int kk = 0; kk < TS_K; kk++) {
			float bv[WPT];

			[[unroll]] for (int wn = 0; wn < WPT; wn++)
				bv[wn] = Bs[kk * TS_N + tn + wn * LX];
			[[unroll]] for (int wm = 0; wm < WPT; wm++) {
				float av = As[kk * TS_M + tm + wm * LY];

				[[unroll]] for (int wn = 0; wn < WPT; wn++)
					acc[wm][wn] += av * bv[wn];
			}
		}
		// everyone is done with the tiles before the next slice overwrites them
		barrier();
	}

	[[unroll]] for (int wm = 0; wm < WPT; wm++) {
		int m = m0 + tm + wm * LY;

		if (m >= p.M)
			continue;
		[[unroll]] for (int wn = 0; wn < WPT; wn++) {
			int n = n0 + tn + wn * LX;

			if (n < p.N)
				store_c(z, m, n, acc[wm][wn]);
		}
	}
}
