/* SPDX-License-Identifier: MIT */
/*
 * The AVX-512 fp32 GEMM micro-kernel's body (8 rows x 48 columns), for
 * files built with AVX-512 flags: the GEMM's own kernel
 * (sgemm-ukernel-avx512.c) and the small-plane convolutions' copy that
 * prefetches the weights of the calls to come through its K loop
 * (cpu/conv/conv-smallplane-avx512.c). Both run the same FMAs in the same
 * order and the same epilogue, so they give the same bits.
 *
 * NV vectors of 16 columns (narrow edge panels: nr <= 32, nr <= 16 run 2 or
 * 1, the last one's columns masked), ROWS rows (1: a one-row panel, instead
 * of multiplying seven zero rows). With @pf_lines > 0, one 64-byte line from
 * @pf on is asked for towards L2 every other K step until @pf_lines have
 * been, and likewise @pf2_lines from @pf2 on the K steps between; a
 * constant 0 compiles the prefetch away.
 */
#ifndef ERT_CPU_SGEMM_UKERNEL_AVX512_H
#define ERT_CPU_SGEMM_UKERNEL_AVX512_H

#include <immintrin.h>

#include "cpu/gemm/sgemm.h"
#include "cpu/gemm/sgemm-epi-avx512.h"

#define ERT_SGEMM_AVX512_MR 8

static inline __attribute__((always_inline)) void
ert_sgemm_8x48_avx512_body(const int NV, const int ROWS, int64_t kc, const float *restrict a,
			   const float *restrict b, int64_t ldb, float *restrict c, int64_t ldc,
			   int64_t mr, int64_t nr, const struct ert_sgemm_epi *e, const char *pf,
			   int64_t pf_lines, const char *pf2, int64_t pf2_lines)
{
	__m512 acc[ERT_SGEMM_AVX512_MR][3];

#pragma GCC unroll 8
	for (int i = 0; i < ERT_SGEMM_AVX512_MR; i++)
#pragma GCC unroll 3
		for (int v = 0; v < NV; v++)
			acc[i][v] = _mm512_setzero_ps();
	/* one K step: NV vectors of B, ROWS broadcasts of A */
#define ERT_SGEMM_8X48_STEP()                                                                    \
	do {                                                                                     \
		__m512 bv[3];                                                                    \
                                                                                                 \
		_Pragma("GCC unroll 3") for (int v = 0; v < NV; v++)                             \
			bv[v] = _mm512_loadu_ps(b + 16 * v);                                     \
		_Pragma("GCC unroll 8") for (int i = 0; i < ROWS; i++)                           \
		{                                                                                \
			__m512 av = _mm512_set1_ps(a[i]);                                        \
                                                                                                 \
			_Pragma("GCC unroll 3") for (int v = 0; v < NV; v++)                     \
				acc[i][v] = _mm512_fmadd_ps(av, bv[v], acc[i][v]);               \
		}                                                                                \
		a += ERT_SGEMM_AVX512_MR;                                                        \
		b += ldb;                                                                        \
	} while (0)
	int64_t p = 0;

	/*
	 * K steps in pairs where there are lines to ask for, a line of each
	 * range a pair: two tests a pair rather than one a step (the same
	 * FMAs in the same order).
	 */
	if (!e->pf_pairs && pf_lines > 0) {
		/*
		 * a MatMul's or Gemm's prepacked B: a test a step, as before the
		 * pairs came, which measured 2 % slower on vit_s16 at 2 threads
		 * (Sapphire Rapids, 4 alternated rounds: 30.4-30.8 -> 30.8-31.6
		 * ms); resnet50 kept the pairs' gain only with them
		 */
		for (; p < kc; p++) {
			if (!(p & 1) && p < 2 * pf_lines) {
				_mm_prefetch(pf, _MM_HINT_T1);
				pf += 64;
			}
			ERT_SGEMM_8X48_STEP();
		}
	} else if (pf_lines > 0 || pf2_lines > 0) {
		const int64_t row_lines = e->pf_row_lines;
		int64_t col = 0;

		for (; p + 1 < kc; p += 2) {
			if (p < 2 * pf_lines) {
				_mm_prefetch(pf, _MM_HINT_T1);
				pf += 64;
				/* rows of a B read in place: on to the next row's first line */
				if (row_lines && ++col == row_lines) {
					col = 0;
					pf += e->pf_skip;
				}
			}
			if (p < 2 * pf2_lines) {
				_mm_prefetch(pf2, _MM_HINT_T1);
				pf2 += 64;
			}
			ERT_SGEMM_8X48_STEP();
			ERT_SGEMM_8X48_STEP();
		}
		if (p < kc && p < 2 * pf_lines)
			_mm_prefetch(pf, _MM_HINT_T1);
	}
	for (; p < kc; p++)
		ERT_SGEMM_8X48_STEP();
#undef ERT_SGEMM_8X48_STEP
	ert_sgemm_epi_store_avx512(NV, ROWS, acc, c, ldc, mr, nr, e);
}

/* The body for @nr columns and @mr rows: the variant with as few zero columns and rows. */
static inline __attribute__((always_inline)) void
ert_sgemm_8x48_avx512(int64_t kc, const float *a, const float *b, int64_t ldb, float *c,
		      int64_t ldc, int64_t mr, int64_t nr, const struct ert_sgemm_epi *e,
		      const char *pf, int64_t pf_lines)
{
#define ERT_SGEMM_8X48_ROWS(NV)                                                                  \
	do {                                                                                     \
		if (mr > 1)                                                                      \
			ert_sgemm_8x48_avx512_body(NV, 8, kc, a, b, ldb, c, ldc, mr, nr, e, pf,  \
						   pf_lines, NULL, 0);                           \
		else                                                                             \
			ert_sgemm_8x48_avx512_body(NV, 1, kc, a, b, ldb, c, ldc, mr, nr, e, pf,  \
						   pf_lines, NULL, 0);                           \
	} while (0)
	if (nr > 32)
		ERT_SGEMM_8X48_ROWS(3);
	else if (nr > 16)
		ERT_SGEMM_8X48_ROWS(2);
	else
		ERT_SGEMM_8X48_ROWS(1);
#undef ERT_SGEMM_8X48_ROWS
}

#endif /* ERT_CPU_SGEMM_UKERNEL_AVX512_H */
