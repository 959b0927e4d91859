// SPDX-License-Identifier: MIT
// The same GEMM as gemm.comp (same buffers, push constants and table of
// batch offsets) without shared memory or barriers, for CPU implementations
// such as lavapipe: a work-group's items run there as SIMD lanes, barriers
// switch between them, and caches do the staging. Each item computes one
// column n of C over ROWS rows, neighbouring items neighbouring columns (so
// the lanes' loads of B are neighbours); an implicit-im2col B is walked by
// (channel, ky, kx) with no division in the loop.
#version 450
#extension GL_GOOGLE_include_directive : require
// [[unroll]]: the register blocks stay registers (unrolled, not arrays in memory)
#extension GL_EXT_control_flow_attributes : require
// before common.glsl: its ert_gid1() reads the specialised gl_WorkGroupSize
layout(local_size_x_id = 0) in;
#include "common.glsl"

const int ROWS = 8;

#include "gemm.glsl"

void main()
{
	int i = int(ert_gid1()), z = int(gl_WorkGroupID.z);
	int mb = (p.M + ROWS - 1) / ROWS;

	if (i >= p.N * mb)
		return;
	int n = i % p.N, m0 = (i / p.N) * ROWS;
	int b_base = p.bo + boff[4 * z + 1];
	int ar[ROWS];
	float acc[ROWS];

	[[unroll]] for (int w = 0; w < ROWS; w++) {
		ar[w] = p.ao + boff[4 * z] + min(m0 + w, p.M - 1) * p.a_rs;
		acc[w] = 0.0;
	}
	if ((p.flags & VK_GEMM_CONV) == 0) {
		for (int k = 0; k < p.K; k++) {
			float bv = LD(B[b_base + k * p.b_rs + n * p.b_cs]);

			[[unroll]] for (int w = 0; w < ROWS; w++)
				acc[w] += LD(A[ar[w] + k * p.a_cs]) * bv;
		}
	} else {
		int H = p.geo[0], W = p.geo[1], KH = p.geo[2], KW = p.geo[3];
		int oy = n / p.geo[10], ox = n - oy * p.geo[10];
		int iy0 = oy * p.geo[4] - p.geo[6], ix0 = ox * p.geo[5] - p.geo[7];
		int k = 0;

		for (int ic = 0; ic < p.K / (KH * KW); ic++) {
			for (int ky = 0; ky < KH; ky++) {
				int iy = iy0 + ky * p.geo[8];
				bool row_in = iy >= 0 && iy < H;
				int rb = b_base + (ic * H + iy) * W;

				for (int kx = 0; kx < KW; kx++, k++) {
					int ix = ix0 + kx * p.geo[9];
					float bv = row_in && ix >= 0 && ix < W ? LD(B[rb + ix]) : 0.0;

					[[unroll]] for (int w = 0; w < ROWS; w++)
						acc[w] += LD(A[ar[w] + k * p.a_cs]) * bv;
				}
			}
		}
	}
	[[unroll]] for (int w = 0; w < ROWS && m0 + w < p.M; w++)
		store_c(z, m0 + w, n, acc[w]);
}
