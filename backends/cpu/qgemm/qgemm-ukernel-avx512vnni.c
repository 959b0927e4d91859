/* SPDX-License-Identifier: MIT */
/*
 * int8 GEMM micro-kernel, AVX512-VNNI (levels "avx512vnni" and "amx"):
 * 8 rows x 48 columns, 24 zmm accumulators; per K4 step three B vectors of
 * 16 column quads (unsigned) and one vpdpbusd per row and vector with the
 * row's quad (signed) broadcast from memory. vpdpbusd adds four exact
 * products to each lane without saturation, so the sums wrap like the
 * reference's. The epilogue is the AVX-512 one.
 */
#include <immintrin.h>
#include <string.h>

#include "cpu/qgemm/qgemm.h"

#define MR 8

static inline __attribute__((always_inline)) void
kernel_nv(const int NV, int64_t k4, const void *a, const uint8_t *b, int64_t bw, int32_t *c,
	  int64_t ldc, bool add)
{
	const uint8_t *ap = a;
	__m512i acc[MR][3];

#pragma GCC unroll 8
	for (int i = 0; i < MR; i++)
#pragma GCC unroll 3
		for (int v = 0; v < NV; v++)
			acc[i][v] = add ? _mm512_loadu_si512(c + i * ldc + 16 * v)
					: _mm512_setzero_si512();
	for (int64_t p = 0; p < k4; p++) {
		__m512i bv[3];

#pragma GCC unroll 3
		for (int v = 0; v < NV; v++)
			bv[v] = _mm512_loadu_si512(b + 64 * v);
#pragma GCC unroll 8
		for (int i = 0; i < MR; i++) {
			int32_t q;

			memcpy(&q, ap + 4 * i, 4);
			__m512i av = _mm512_set1_epi32(q);

#pragma GCC unroll 3
			for (int v = 0; v < NV; v++)
				acc[i][v] = _mm512_dpbusd_epi32(acc[i][v], bv[v], av);
		}
		ap += 4 * MR;
		b += 4 * bw;
	}
#pragma GCC unroll 8
	for (int i = 0; i < MR; i++)
#pragma GCC unroll 3
		for (int v = 0; v < NV; v++)
			_mm512_storeu_si512(c + i * ldc + 16 * v, acc[i][v]);
}

ERT_QGEMM_UKERNEL(1)
ERT_QGEMM_UKERNEL(2)
ERT_QGEMM_UKERNEL(3)

const struct ert_qgemm_kernel ert_qgemm_kernel_avx512vnni = {
	.name = "q8-gemm-8x48-avx512vnni",
	.mr = MR, .vc = 16, .nv = 3,
	.kc4 = 96,
	.afmt = ERT_QGEMM_A_S8X4,
	.ukernel = { ukernel_1, ukernel_2, ukernel_3 },
	.epi = ert_qgemm_epi_avx512,
	.epi_rows = ert_qgemm_epi_rows_avx512,
};
