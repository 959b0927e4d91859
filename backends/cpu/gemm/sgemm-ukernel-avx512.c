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
