/* SPDX-License-Identifier: MIT */
/*
 * C = act(alpha * A x B + beta * bias + residual), tiled: a work-group of
 * (TS_N / WPT_N) x (TS_M / WPT_M) items computes a TS_M x TS_N tile of C,
 * each item WPT_M x WPT_N of it in registers, from TS_K-deep slices of A
 * and B staged in local memory. Bounds are checked on every load and store,
 * so any M, N, K works.
 *
 * A(m, k) = A[m * a_rs + k * a_cs] and B(k, n) = B[k * b_rs + n * b_cs]:
 * transposes are strides. With @conv set, B is the implicit im2col matrix of
 * one image and group: B(k, n) = X[ic][oy * sh - ph + ky * dh][ox * sw - pw +
 * kx * dw] (zero outside the image), k = (ic * KH + ky) * KW + kx,
 * n = oy * OW + ox; no im2col buffer is ever written.
 *
 * Batches run along dimension 2: @boff holds four element offsets per batch
 * (A, B, C and residual, bias), so any broadcast of batch dims and any group
 * layout is a table the host fills once.
 *
 * Tensors are T (float or half storage, common.cl); the tiles, products and
 * sums are float in both variants.
 */
#define TS_M OCL_GEMM_TS_M
#define TS_N OCL_GEMM_TS_N
#define TS_K OCL_GEMM_TS_K
#define WPT_M OCL_GEMM_WPT_M
#define WPT_N OCL_GEMM_WPT_N
#define RTS_M (TS_M / WPT_M)
#define RTS_N (TS_N / WPT_N)

/* geo8: H, W, KH, KW, sh, sw, ph, pw; geo8b: dh, dw, OW, 0... */
inline float load_b(__global const T *B, int k, int n, int b_rs, int b_cs, int conv,
		    const int *geo, const int *geob)
{
	if (!conv)
		return LD(B, k * b_rs + n * b_cs);
	int khw = geo[2] * geo[3];
	int ic = k / khw, r = k - ic * khw;
	int ky = r / geo[3], kx = r - ky * geo[3];
	int oy = n / geob[2], ox = n - oy * geob[2];
	int iy = oy * geo[4] - geo[6] + ky * geob[0];
	int ix = ox * geo[5] - geo[7] + kx * geob[1];

	if (iy < 0 || iy >= geo[0] || ix < 0 || ix >= geo[1])
		return 0.0f;
	return LD(B, (ic * geo[0] + iy) * geo[1] + ix);
}

__kernel __attribute__((reqd_work_group_size(RTS_N, RTS_M, 1)))
void gemm_f32(__global const T *A, int ao, int a_rs, int a_cs,
	      __global const T *B, int bo, int b_rs, int b_cs,
	      __global T *C, int co, int ldc, int M, int N, int K,
	      __global const int *boff,
	      __global const T *bias, int bias_o, int bias_rs, int bias_cs, int has_bias,
	      float alpha, float beta,
	      __global const T *res, int res_o, int has_res,
	      int act, float p0, float p1, int conv, int8 geo8, int8 geob8)
{
	__local float As[TS_K][TS_M];
	__local float Bs[TS_K][TS_N];
	float acc[WPT_M][WPT_N];
	int geo[8], geob[8];
	int tn = get_local_id(0), tm = get_local_id(1);
	int lid = tm * RTS_N + tn;
	int n0 = get_group_id(0) * TS_N, m0 = get_group_id(1) * TS_M;
	int z = get_global_id(2);

	vstore8(geo8, 0, geo);
	vstore8(geob8, 0, geob);
	A += ao + boff[4 * z];
	B += bo + boff[4 * z + 1];
	for (int wm = 0; wm < WPT_M; wm++)
		for (int wn = 0; wn < WPT_N; wn++)
			acc[wm][wn] = 0.0f;

	for (int k0 = 0; k0 < K; k0 += TS_K) {
		for (int l = lid; l < TS_K * TS_M; l += RTS_M * RTS_N) {
			int kk = l / TS_M, mm = l - kk * TS_M;
			int m = m0 + mm, k = k0 + kk;

			As[kk][mm] = m < M && k < K ? LD(A, m * a_rs + k * a_cs) : 0.0f;
		}
		for (int l = lid; l < TS_K * TS_N; l += RTS_M * RTS_N) {
			int kk = l / TS_N, nn = l - kk * TS_N;
			int n = n0 + nn, k = k0 + kk;

			Bs[kk][nn] = n < N && k < K ? load_b(B, k, n, b_rs, b_cs, conv, geo, geob) : 0.0f;
		}
		/* the tiles are complete before anyone reads them */
		barrier(CLK_LOCAL_MEM_FENCE);
		for (int kk = 0; kk < TS_K; kk++) {
			float bv[WPT_N];

			for (int wn = 0; wn < WPT_N; wn++)
				bv[wn] = Bs[kk][tn + wn * RTS_N];
			for (int wm = 0; wm < WPT_M; wm++) {
				float av = As[kk][tm + wm * RTS_M];

				for (int wn = 0; wn < WPT_N; wn++)
					acc[wm][wn] += av * bv[wn];
			}
		}
		/* everyone is done with the tiles before the next slice overwrites them */
		barrier(CLK_LOCAL_MEM_FENCE);
	}

	int c_base = co + boff[4 * z + 2];
	int b_base = bias_o + boff[4 * z + 3];

	for (int wm = 0; wm < WPT_M; wm++) {
		int m = m0 + tm + wm * RTS_M;

		if (m >= M)
			continue;
		for (int wn = 0; wn < WPT_N; wn++) {
			int n = n0 + tn + wn * RTS_N;
			float v;

			if (n >= N)
				continue;
			v = alpha * acc[wm][wn];
			if (has_bias)
				v += beta * LD(bias, b_base + m * bias_rs + n * bias_cs);
			if (has_res)
				v += LD(res, res_o + boff[4 * z + 2] + m * ldc + n);
			ST(C, c_base + m * ldc + n, ert_act(v, act, p0, p1));
		}
	}
}
