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
 *
 * Three kernels of the same arguments compute it; the backend's tuner picks
 * one per shape (ocl-linalg.c says which it offers): gemm_f32 (64x64 tiles,
 * 16x16 items of 4x4), gemm_f32_32x32 (32x32 tiles, 8x8 items of 4x4: four
 * times the work-groups, for products too small to fill the device) and
 * gemm_f32_gemv (a work-group of 64 items per element of C, splitting K:
 * for M of a few rows, such as classifier heads, where a tile of 64 rows
 * is mostly empty). When A's rows are contiguous (a_cs == 1, as weights
 * are) the tiled kernels load A along K, so that neighbouring items read
 * neighbouring addresses; the tile in local memory has a padding column so
 * that storing it so hits distinct banks.
 */
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

/* C's element (m, n) of batch z from its sum: alpha, bias, residual, activation. */
inline void store_c(__global T *C, int c_base, int ldc, int m, int n, float acc,
		    __global const T *bias, int b_base, int bias_rs, int bias_cs, int has_bias,
		    float alpha, float beta, __global const T *res, int r_base, int has_res,
		    int act, float p0, float p1)
{
	float v = alpha * acc;

	if (has_bias)
		v += beta * LD(bias, b_base + m * bias_rs + n * bias_cs);
	if (has_res)
		v += LD(res, r_base + m * ldc + n);
	ST(C, c_base + m * ldc + n, ert_act(v, act, p0, p1));
}

#define GEMM_PARAMS \
	__global const T *A, int ao, int a_rs, int a_cs, \
	__global const T *B, int bo, int b_rs, int b_cs, \
	__global T *C, int co, int ldc, int M, int N, int K, \
	__global const int *boff, \
	__global const T *bias, int bias_o, int bias_rs, int bias_cs, int has_bias, \
	float alpha, float beta, \
	__global const T *res, int res_o, int has_res, \
	int act, float p0, float p1, int conv, int8 geo8, int8 geob8

/*
 * One work-group's tile of C: ts_m x ts_n, items of wpt_m x wpt_n, slices
 * ts_k deep through As [ts_k][ts_m + 1] and Bs [ts_k][ts_n] in local
 * memory. The sizes are constants at every call, which the compiler folds.
 */
inline void gemm_tile(GEMM_PARAMS, __local float *As, __local float *Bs,
		      const int ts_m, const int ts_n, const int ts_k, const int wpt_m,
		      const int wpt_n)
{
	const int rts_m = ts_m / wpt_m, rts_n = ts_n / wpt_n, lda = ts_m + 1;
	float acc[4][4];
	int geo[8], geob[8];
	int tn = get_local_id(0), tm = get_local_id(1);
	int lid = tm * rts_n + tn;
	int n0 = get_group_id(0) * ts_n, m0 = get_group_id(1) * ts_m;
	int z = get_global_id(2);

	vstore8(geo8, 0, geo);
	vstore8(geob8, 0, geob);
	A += ao + boff[4 * z];
	B += bo + boff[4 * z + 1];
	for (int wm = 0; wm < wpt_m; wm++)
		for (int wn = 0; wn < wpt_n; wn++)
			acc[wm][wn] = 0.0f;

	for (int k0 = 0; k0 < K; k0 += ts_k) {
		for (int l = lid; l < ts_k * ts_m; l += rts_m * rts_n) {
			/* rows of A contiguous: neighbours take neighbouring k */
			int kk = a_cs == 1 ? l % ts_k : l / ts_m;
			int mm = a_cs == 1 ? l / ts_k : l - kk * ts_m;
			int m = m0 + mm, k = k0 + kk;

			As[kk * lda + mm] = m < M && k < K ? LD(A, m * a_rs + k * a_cs) : 0.0f;
		}
		for (int l = lid; l < ts_k * ts_n; l += rts_m * rts_n) {
			int kk = l / ts_n, nn = l - kk * ts_n;
			int n = n0 + nn, k = k0 + kk;

			Bs[kk * ts_n + nn] = n < N && k < K ?
				load_b(B, k, n, b_rs, b_cs, conv, geo, geob) : 0.0f;
		}
		/* the tiles are complete before anyone reads them */
		barrier(CLK_LOCAL_MEM_FENCE);
		for (int kk = 0; kk < ts_k; kk++) {
			float bv[4];

			for (int wn = 0; wn < wpt_n; wn++)
				bv[wn] = Bs[kk * ts_n + tn + wn * rts_n];
			for (int wm = 0; wm < wpt_m; wm++) {
				float av = As[kk * lda + tm + wm * rts_m];

				for (int wn = 0; wn < wpt_n; wn++)
					acc[wm][wn] += av * bv[wn];
			}
		}
		/* everyone is done with the tiles before the next slice overwrites them */
		barrier(CLK_LOCAL_MEM_FENCE);
	}

	for (int wm = 0; wm < wpt_m; wm++) {
		int m = m0 + tm + wm * rts_m;

		if (m >= M)
			continue;
		for (int wn = 0; wn < wpt_n; wn++) {
			int n = n0 + tn + wn * rts_n;

			if (n < N)
				store_c(C, co + boff[4 * z + 2], ldc, m, n, acc[wm][wn], bias,
					bias_o + boff[4 * z + 3], bias_rs, bias_cs, has_bias, alpha,
					beta, res, res_o + boff[4 * z + 2], has_res, act, p0, p1);
		}
	}
}

#define GEMM_ARGS A, ao, a_rs, a_cs, B, bo, b_rs, b_cs, C, co, ldc, M, N, K, boff, bias, \
	bias_o, bias_rs, bias_cs, has_bias, alpha, beta, res, res_o, has_res, act, p0, p1, \
	conv, geo8, geob8

__kernel __attribute__((reqd_work_group_size(OCL_GEMM_TS_N / OCL_GEMM_WPT_N,
					      OCL_GEMM_TS_M / OCL_GEMM_WPT_M, 1)))
void gemm_f32(GEMM_PARAMS)
{
	__local float As[OCL_GEMM_TS_K * (OCL_GEMM_TS_M + 1)];
	__local float Bs[OCL_GEMM_TS_K * OCL_GEMM_TS_N];

	gemm_tile(GEMM_ARGS, As, Bs, OCL_GEMM_TS_M, OCL_GEMM_TS_N, OCL_GEMM_TS_K,
		  OCL_GEMM_WPT_M, OCL_GEMM_WPT_N);
}

__kernel __attribute__((reqd_work_group_size(OCL_GEMM32_TS / OCL_GEMM_WPT_N,
					      OCL_GEMM32_TS / OCL_GEMM_WPT_M, 1)))
void gemm_f32_32x32(GEMM_PARAMS)
{
	__local float As[OCL_GEMM_TS_K * (OCL_GEMM32_TS + 1)];
	__local float Bs[OCL_GEMM_TS_K * OCL_GEMM32_TS];

	gemm_tile(GEMM_ARGS, As, Bs, OCL_GEMM32_TS, OCL_GEMM32_TS, OCL_GEMM_TS_K,
		  OCL_GEMM_WPT_M, OCL_GEMM_WPT_N);
}

/*
 * One element of C per work-group (dims 0 and 1: n and m), its 64 items
 * each summing every 64th k, then a tree in local memory.
 */
__kernel __attribute__((reqd_work_group_size(OCL_GEMV_WG, 1, 1)))
void gemm_f32_gemv(GEMM_PARAMS)
{
	__local float part[OCL_GEMV_WG];
	int geo[8], geob[8];
	int t = get_local_id(0);
	int n = get_group_id(0), m = get_group_id(1), z = get_global_id(2);
	float acc = 0.0f;

	vstore8(geo8, 0, geo);
	vstore8(geob8, 0, geob);
	A += ao + boff[4 * z];
	B += bo + boff[4 * z + 1];
	/* M and N are whole multiples of the range here: no bounds on m and n */
	for (int k = t; k < K; k += OCL_GEMV_WG)
		acc += LD(A, m * a_rs + k * a_cs) * load_b(B, k, n, b_rs, b_cs, conv, geo, geob);
	part[t] = acc;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int w = OCL_GEMV_WG / 2; w > 0; w /= 2) {
		if (t < w)
			part[t] += part[t + w];
		/* each level's sums are written before the next level reads them */
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	if (t == 0)
		store_c(C, co + boff[4 * z + 2], ldc, m, n, part[0], bias, bias_o + boff[4 * z + 3],
			bias_rs, bias_cs, has_bias, alpha, beta, res, res_o + boff[4 * z + 2], has_res,
			act, p0, p1);
}
