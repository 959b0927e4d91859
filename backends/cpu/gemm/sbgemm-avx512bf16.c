/* SPDX-License-Identifier: MIT */
/*
 * bf16 GEMM with fp32 accumulation (precision LOW), AVX512_BF16: the packing
 * of fp32 operands into bf16 pairs and an 8 x 48 micro-kernel on vdpbf16ps.
 *
 * vdpbf16ps adds a[2j] * b[2j] + a[2j+1] * b[2j+1] to fp32 lane j, so both
 * operands are packed as pairs of consecutive K steps (one 32-bit word per
 * pair): A as [K/2][MR] pairs per panel (a pair broadcast to every lane), B
 * as [K/2][NR] pairs (16 columns per vector). An odd K is padded with a zero
 * step in both. fp32 becomes bf16 by vcvtne2ps2bf16 (round to nearest even;
 * like vdpbf16ps it treats subnormals as zero), so plan-time and run-time
 * packing give the same bits.
 */
#include <immintrin.h>
#include <string.h>

#include "cpu/gemm/sgemm.h"
#include "cpu/gemm/sgemm-epi-avx512.h"

#define MR 8
#define NR 48

static inline __mmask16 mask16(int64_t n)
{
	return n >= 16 ? 0xffff : n <= 0 ? 0 : (__mmask16)((1u << n) - 1);
}

static inline __m512i cvt32(__m512 lo, __m512 hi)
{
	/* 32 bf16 in order: lo's 16 values, then hi's */
	return (__m512i)_mm512_cvtne2ps_pbh(hi, lo);
}

/* Pairs (r0[j], r1[j]) for j < 16, the lanes past @n zero; r1 may be NULL. */
static inline __m512i pairs16(const float *r0, const float *r1, int64_t n)
{
	const __m512i idx = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10,
					     25, 9, 24, 8, 23, 7, 22, 6, 21, 5, 20, 4, 19, 3,
					     18, 2, 17, 1, 16, 0);
	__mmask16 m = mask16(n);
	__m512 a = _mm512_maskz_loadu_ps(m, r0);
	__m512 b = r1 ? _mm512_maskz_loadu_ps(m, r1) : _mm512_setzero_ps();

	return _mm512_permutexvar_epi16(idx, cvt32(a, b));
}

/*
 * One pair-row of a B panel: pairs of fp32 rows r0 and r1 (r1 NULL past K)
 * for columns [0, nr), zero to NR. Reads a vector of both rows before
 * writing its pairs, which lets ert_sbgemm_panels_to_bf16() work in place.
 */
static void b_pair_row(const float *r0, const float *r1, int64_t nr, int NRp, uint32_t *dst)
{
	for (int64_t j = 0; j < NRp; j += 16)
		_mm512_storeu_si512(dst + j, pairs16(r0 + j, r1 ? r1 + j : NULL, nr - j));
}

void ert_sbgemm_pack_b_strided(const float *b, int64_t rs, int64_t cs, int64_t k0, int64_t kc,
			       int64_t n0, int64_t nc, int NRp, uint32_t *dst)
{
	float g[2][ERT_SGEMM_NR_MAX];

	for (int64_t j0 = 0; j0 < nc; j0 += NRp) {
		int64_t nr = nc - j0 < NRp ? nc - j0 : NRp;
		const float *src = b + k0 * rs + (n0 + j0) * cs;

		for (int64_t p = 0; p < kc; p += 2) {
			const float *r0 = src + p * rs, *r1 = p + 1 < kc ? r0 + rs : NULL;

			if (cs != 1) {
				for (int64_t j = 0; j < nr; j++) {
					g[0][j] = r0[j * cs];
					g[1][j] = r1 ? r1[j * cs] : 0.0f;
				}
				r0 = g[0];
				r1 = r1 ? g[1] : NULL;
			}
			b_pair_row(r0, r1, nr, NRp, dst + (p / 2) * NRp);
		}
		dst += NRp * ((kc + 1) / 2);
	}
}

void ert_sbgemm_panels_to_bf16(float *buf, int64_t kc, int64_t nc, int NRp)
{
	uint32_t *dst = (uint32_t *)(void *)buf;

	/*
	 * Panel t's fp32 rows start at t * NR * kc floats, its pairs at
	 * t * NR * ceil(kc / 2) words: every write lands on rows already read.
	 */
	for (int64_t j0 = 0; j0 < nc; j0 += NRp) {
		const float *src = buf + j0 * kc;

		for (int64_t p = 0; p < kc; p += 2)
			b_pair_row(src + p * NRp, p + 1 < kc ? src + (p + 1) * NRp : NULL, NRp, NRp,
				   dst + (p / 2) * NRp);
		dst += NRp * ((kc + 1) / 2);
	}
}

void ert_sbgemm_pack_a_strided(const float *a, int64_t rs, int64_t cs, int64_t m0, int64_t mc,
			       int64_t k0, int64_t kc, int MRp, uint32_t *dst)
{
	uint32_t t[ERT_SGEMM_MR_MAX][16];
	float g[32];

	for (int64_t i0 = 0; i0 < mc; i0 += MRp) {
		int64_t mr = mc - i0 < MRp ? mc - i0 : MRp;
		const float *src = a + (m0 + i0) * rs + k0 * cs;

		/* 32 K steps of each row become 16 pairs, then go out row-interleaved */
		for (int64_t p0 = 0; p0 < kc; p0 += 32) {
			int64_t n = kc - p0 < 32 ? kc - p0 : 32;

			for (int i = 0; i < MRp; i++) {
				const float *r = src + i * rs + p0 * cs;
				__m512i v;

				if (i >= mr) {
					v = _mm512_setzero_si512();
				} else {
					if (cs != 1) {
						for (int64_t p = 0; p < n; p++)
							g[p] = r[p * cs];
						r = g;
					}
					v = cvt32(_mm512_maskz_loadu_ps(mask16(n), r),
						  _mm512_maskz_loadu_ps(mask16(n - 16), r + 16));
				}
				_mm512_storeu_si512(t[i], v);
			}
			for (int64_t q = 0; q < (n + 1) / 2; q++)
				for (int i = 0; i < MRp; i++)
					dst[(p0 / 2 + q) * MRp + i] = t[i][q];
		}
		dst += MRp * ((kc + 1) / 2);
	}
}

void ert_sbgemm_pack_a_rows(const float *a, int64_t rs, int64_t cs, int64_t m0, int64_t mc,
			    int64_t k0, int64_t kc, int MRp, int64_t kblock, uint32_t *dst)
{
	float g[32];

	for (int64_t i0 = 0; i0 < mc; i0 += MRp) {
		int64_t mr = mc - i0 < MRp ? mc - i0 : MRp;

		for (int64_t b0 = 0; b0 < kc; b0 += kblock) {
			int64_t kb = kc - b0 < kblock ? kc - b0 : kblock, kq = (kb + 1) / 2;

			for (int i = 0; i < MRp; i++) {
				const float *r = a + (m0 + i0 + i) * rs + (k0 + b0) * cs;
				uint32_t *d = dst + i * kq;

				for (int64_t p0 = 0; p0 < kb; p0 += 32) {
					int64_t n = kb - p0 < 32 ? kb - p0 : 32;
					const float *src = r + p0 * cs;
					__m512i v = _mm512_setzero_si512();

					if (i < mr) {
						if (cs != 1) {
							for (int64_t p = 0; p < n; p++)
								g[p] = src[p * cs];
							src = g;
						}
						v = cvt32(_mm512_maskz_loadu_ps(mask16(n), src),
							  _mm512_maskz_loadu_ps(mask16(n - 16), src + 16));
					}
					_mm512_mask_storeu_epi32(d + p0 / 2, mask16((n + 1) / 2), v);
				}
			}
			dst += MRp * kq;
		}
	}
}

static inline __attribute__((always_inline)) void
kernel_nv(const int NV, int64_t kq, const uint32_t *restrict a, const uint32_t *restrict b,
	  int64_t ldb, float *restrict c, int64_t ldc, int64_t mr, int64_t nr,
	  const struct ert_sgemm_epi *e)
{
	__m512 acc[MR][3];

#pragma GCC unroll 8
	for (int i = 0; i < MR; i++)
#pragma GCC unroll 3
		for (int v = 0; v < NV; v++)
			acc[i][v] = _mm512_setzero_ps();
	for (int64_t q = 0; q < kq; q++) {
		__m512bh bv[3];

#pragma GCC unroll 3
		for (int v = 0; v < NV; v++)
			bv[v] = (__m512bh)_mm512_loadu_si512(b + 16 * v);
#pragma GCC unroll 8
		for (int i = 0; i < MR; i++) {
			__m512bh av = (__m512bh)_mm512_set1_epi32((int)a[i]);

#pragma GCC unroll 3
			for (int v = 0; v < NV; v++)
				acc[i][v] = _mm512_dpbf16_ps(acc[i][v], av, bv[v]);
		}
		a += MR;
		b += ldb;
	}
	ert_sgemm_epi_store_avx512(NV, 8, acc, c, ldc, mr, nr, e);
}

/*
 * kq pairs of K steps; a and b are packed pairs (passed as float pointers to
 * share ert_sgemm_ukernel_fn), ldb counted in pairs.
 */
void ert_bf16_gemm_ukernel_8x48__avx512bf16(int64_t kq, const float *a, const float *b,
					    int64_t ldb, float *c, int64_t ldc, int64_t mr,
					    int64_t nr, const struct ert_sgemm_epi *e)
{
	const uint32_t *pa = (const uint32_t *)(const void *)a;
	const uint32_t *pb = (const uint32_t *)(const void *)b;

	if (nr > 32)
		kernel_nv(3, kq, pa, pb, ldb, c, ldc, mr, nr, e);
	else if (nr > 16)
		kernel_nv(2, kq, pa, pb, ldb, c, ldc, mr, nr, e);
	else
		kernel_nv(1, kq, pa, pb, ldb, c, ldc, mr, nr, e);
}
