/* SPDX-License-Identifier: MIT */
/*
 * fp32 GEMM micro-kernel, AVX-512 (level "avx512" and up): 8 rows x 48
 * columns, 24 zmm accumulators, three B vectors and a broadcast of A per K
 * step. Narrow edge panels (nr <= 32, nr <= 16) run a 2- or 1-vector variant
 * instead of computing zero columns; the last vector's columns are masked.
 * A one-row panel (the last of M = 49 pixels in the small-plane
 * convolutions, every panel of an M = 1 product) runs a 1-row variant
 * instead of multiplying the panel's seven zero rows; its sums are the same
 * FMAs in the same order. (Variants for 2 and 4 rows too made this file
 * five times slower to build under the sanitizers, for rare shapes.) The
 * body is sgemm-ukernel-avx512.h's, shared with the small-plane
 * convolutions' prefetching copy; a full 8 x 48 block also prefetches the
 * lines the driver gives it (ert_sgemm_epi.pf, sgemm.c's run_tile()).
 */
#include "cpu/gemm/sgemm-ukernel-avx512.h"

void ert_f32_gemm_ukernel_8x48__avx512(int64_t kc, const float *a, const float *b, int64_t ldb,
				       float *c, int64_t ldc, int64_t mr, int64_t nr,
				       const struct ert_sgemm_epi *e)
{
	/*
	 * a full block with lines of the next B panel or A panel to ask for
	 * (prefetch_b): the same FMAs
	 */
	if ((e->pf_lines > 0 || e->pf2_lines > 0) && mr > 1) {
		if (nr > 32)
			ert_sgemm_8x48_avx512_body(3, 8, kc, a, b, ldb, c, ldc, mr, nr, e, e->pf,
						   e->pf_lines, e->pf2, e->pf2_lines);
		else if (nr > 16)
			ert_sgemm_8x48_avx512_body(2, 8, kc, a, b, ldb, c, ldc, mr, nr, e, e->pf,
						   e->pf_lines, e->pf2, e->pf2_lines);
		else
			ert_sgemm_8x48_avx512_body(1, 8, kc, a, b, ldb, c, ldc, mr, nr, e, e->pf,
						   e->pf_lines, e->pf2, e->pf2_lines);
	} else
		ert_sgemm_8x48_avx512(kc, a, b, ldb, c, ldc, mr, nr, e, NULL, 0);
}

/*
 * A narrow edge panel (nr <= 16: the 4 columns past 192 of a 14x14 plane)
 * for three full row panels at once: one B vector and 24 broadcasts of A a
 * K step for 24 FMAs, where the 1-vector variant above takes 8 broadcasts
 * for 8 FMAs and is bound by the loads (the edge of N = 196, 2 % of the
 * columns, took 8-10 % of resnet50's 14x14 1x1 layers). Each element gets
 * the FMAs of the 1-vector variant in the same order, then the same
 * epilogue a row panel at a time: the same bits as three calls.
 */
void ert_f32_gemm_ukernel_24x16__avx512_edge3(int64_t kc, const float *a, int64_t a_ps,
					      const float *b, int64_t ldb, float *c, int64_t ldc,
					      int64_t nr, const struct ert_sgemm_epi *e)
{
	__m512 acc[3][ERT_SGEMM_AVX512_MR][3];
	const float *a1 = a + a_ps, *a2 = a + 2 * a_ps;

#pragma GCC unroll 8
	for (int i = 0; i < ERT_SGEMM_AVX512_MR; i++) {
		acc[0][i][0] = _mm512_setzero_ps();
		acc[1][i][0] = _mm512_setzero_ps();
		acc[2][i][0] = _mm512_setzero_ps();
	}
	for (int64_t p = 0; p < kc; p++) {
		/* all 16 lanes, as the 1-vector variant: edge panels are packed, NR wide */
		__m512 bv = _mm512_loadu_ps(b);

#pragma GCC unroll 8
		for (int i = 0; i < ERT_SGEMM_AVX512_MR; i++) {
			acc[0][i][0] = _mm512_fmadd_ps(_mm512_set1_ps(a[i]), bv, acc[0][i][0]);
			acc[1][i][0] = _mm512_fmadd_ps(_mm512_set1_ps(a1[i]), bv, acc[1][i][0]);
			acc[2][i][0] = _mm512_fmadd_ps(_mm512_set1_ps(a2[i]), bv, acc[2][i][0]);
		}
		a += ERT_SGEMM_AVX512_MR;
		a1 += ERT_SGEMM_AVX512_MR;
		a2 += ERT_SGEMM_AVX512_MR;
		b += ldb;
	}
	for (int g = 0; g < 3; g++) {
		struct ert_sgemm_epi eg = *e;

		if (eg.bias)
			eg.bias += g * ERT_SGEMM_AVX512_MR;
		if (eg.res)
			eg.res += g * ERT_SGEMM_AVX512_MR * ldc;
		ert_sgemm_epi_store_avx512(1, ERT_SGEMM_AVX512_MR, acc[g],
					   c + g * ERT_SGEMM_AVX512_MR * ldc, ldc, ERT_SGEMM_AVX512_MR,
					   nr, &eg);
	}
}
