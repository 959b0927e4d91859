/* SPDX-License-Identifier: MIT */
/*
 * The AVX-512 fp32 micro-kernel (8 rows x 48 columns) reading A where it
 * lies: 8 rows @lda floats apart, K along each row, instead of from a
 * packed panel of 8 floats a K step. The FMAs, their order and the
 * epilogue are those of ert_f32_gemm_ukernel_8x48__avx512()
 * (sgemm-ukernel-avx512.h), so the bits are too; only where A's floats are
 * loaded from differs. Full panels of 8 rows only (the driver packs a last
 * panel of fewer, whose missing rows are not there to read); narrow panels
 * of B (nr <= 32, nr <= 16) run 2 or 1 vectors, and the next B panel's
 * lines are asked for as the packed kernel asks for them
 * (ert_sgemm_epi.pf).
 *
 * Used for MatMuls whose B is not constant (the driver packs such a B per
 * tile; A, the activations, went through the level's packing into the
 * lane's slot first): vit_s16's attention products, Q (197 x 64, rows 384
 * floats apart) times K^T and the probabilities (197 x 197) times V, where
 * packing A was 7.5 % of the unfused attention's time (perf, cpu-clock,
 * attention-bench, 1 thread, Sapphire Rapids); attention-bench's unfused
 * layer took 0.546-0.562 ms best against 0.517-0.541 with A read in place
 * (alternated, three rounds each). Not for the linear layers (B the
 * weights): their A, packed once into a_shared and read back by each of
 * the 8-32 B panels, ran no faster in place (vit_s16 at 1 thread: the
 * packing's 4 % of the samples went, the kernel's grew by as much).
 */
#include "cpu/gemm/sgemm-ukernel-avx512.h"

static inline __attribute__((always_inline)) void
body(const int NV, int64_t kc, const float *restrict a, int64_t lda, const float *restrict b,
     int64_t ldb, float *restrict c, int64_t ldc, int64_t nr, const struct ert_sgemm_epi *e,
     const char *pf, int64_t pf_lines)
{
	__m512 acc[ERT_SGEMM_AVX512_MR][3];
	/* rows 0..7 as three bases and one index: [a], [a + l], [a + 2l], [a3], ... */
	const float *a3 = a + 3 * lda, *a6 = a + 6 * lda;

#pragma GCC unroll 8
	for (int i = 0; i < ERT_SGEMM_AVX512_MR; i++)
#pragma GCC unroll 3
		for (int v = 0; v < NV; v++)
			acc[i][v] = _mm512_setzero_ps();
	for (int64_t p = 0; p < kc; p++) {
		const float *row[ERT_SGEMM_AVX512_MR] = { a, a + lda, a + 2 * lda, a3,
							  a + 4 * lda, a3 + 2 * lda, a6, a6 + lda };
		__m512 bv[3];

		if (!(p & 1) && p < 2 * pf_lines) {
			_mm_prefetch(pf, _MM_HINT_T1);
			pf += 64;
		}
#pragma GCC unroll 3
		for (int v = 0; v < NV; v++)
			bv[v] = _mm512_loadu_ps(b + 16 * v);
#pragma GCC unroll 8
		for (int i = 0; i < ERT_SGEMM_AVX512_MR; i++) {
			__m512 av = _mm512_set1_ps(row[i][p]);

#pragma GCC unroll 3
			for (int v = 0; v < NV; v++)
				acc[i][v] = _mm512_fmadd_ps(av, bv[v], acc[i][v]);
		}
		b += ldb;
	}
	ert_sgemm_epi_store_avx512(NV, ERT_SGEMM_AVX512_MR, acc, c, ldc, ERT_SGEMM_AVX512_MR, nr, e);
}

void ert_f32_gemm_ukernel_8x48__avx512_arows(int64_t kc, const float *a, int64_t lda,
					     const float *b, int64_t ldb, float *c, int64_t ldc,
					     int64_t nr, const struct ert_sgemm_epi *e)
{
	if (nr > 32 && e->pf_lines > 0)
		body(3, kc, a, lda, b, ldb, c, ldc, nr, e, e->pf, e->pf_lines);
	else if (nr > 32)
		body(3, kc, a, lda, b, ldb, c, ldc, nr, e, NULL, 0);
	else if (nr > 16)
		body(2, kc, a, lda, b, ldb, c, ldc, nr, e, NULL, 0);
	else
		body(1, kc, a, lda, b, ldb, c, ldc, nr, e, NULL, 0);
}

/*
 * A packed panel of 2 to 7 rows (@mr), full width (nr > 32): the body of
 * ert_f32_gemm_ukernel_8x48__avx512() for exactly @mr rows instead of 8, so
 * the missing rows' FMAs are not issued (same FMAs in the same order for
 * the rows there, the same epilogue: the same bits). vit_s16's 197 tokens
 * end in a panel of 5 rows (24 x 8 + 5): 15 FMAs a K step against 24, in
 * every linear layer and attention product. Narrower panels (an N edge)
 * and full ones go to the 8-row kernel.
 */
void ert_f32_gemm_ukernel_8x48__avx512_short(int64_t kc, const float *a, const float *b,
					     int64_t ldb, float *c, int64_t ldc, int64_t mr,
					     int64_t nr, const struct ert_sgemm_epi *e)
{
#define SHORT_ROWS(R)                                                                            \
	case R:                                                                                  \
		ert_sgemm_8x48_avx512_body(3, R, kc, a, b, ldb, c, ldc, mr, nr, e, e->pf,        \
					   e->pf_lines, e->pf2, e->pf2_lines);                   \
		return
	if (nr > 32) {
		switch (mr) {
			SHORT_ROWS(2);
			SHORT_ROWS(3);
			SHORT_ROWS(4);
			SHORT_ROWS(5);
			SHORT_ROWS(6);
			SHORT_ROWS(7);
		default:
			break;
		}
	}
#undef SHORT_ROWS
	ert_f32_gemm_ukernel_8x48__avx512(kc, a, b, ldb, c, ldc, mr, nr, e);
}
