/* SPDX-License-Identifier: MIT */
/*
 * Packing of fp32 GEMM operands at avx512 (the level's 8x48 kernel): a
 * transposed B (rs 1: attention's K^T, Gemm's transB) by 16x16 in-register
 * transposes, 16 K steps x 16 columns at a time, a last block of fewer K
 * steps through zero-masked loads; B with its rows along N (cs 1) a row of
 * a panel at a time in zmm copies; everything else as at avx2 (A's 8-row
 * panels are 8x8 transposes there). The same floats in the same places as
 * ert_sgemm_pack_b_strided(), zeros past an edge panel's columns.
 */
#include <immintrin.h>

#include "cpu/gemm/sgemm.h"

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/* r[q] = column q of the 16x16 block whose rows were r[0..15]. */
static inline __attribute__((always_inline)) void transpose16(__m512 r[16])
{
	__m512 t[16], s[16];

#pragma GCC unroll 8
	for (int i = 0; i < 8; i++) {
		t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
		t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
	}
	/* s[4 g + c]: in each 128-bit lane L, column 4 L + c of rows 4g .. 4g + 3 */
#pragma GCC unroll 4
	for (int g = 0; g < 4; g++) {
		s[4 * g + 0] = _mm512_shuffle_ps(t[4 * g], t[4 * g + 2], _MM_SHUFFLE(1, 0, 1, 0));
		s[4 * g + 1] = _mm512_shuffle_ps(t[4 * g], t[4 * g + 2], _MM_SHUFFLE(3, 2, 3, 2));
		s[4 * g + 2] = _mm512_shuffle_ps(t[4 * g + 1], t[4 * g + 3], _MM_SHUFFLE(1, 0, 1, 0));
		s[4 * g + 3] = _mm512_shuffle_ps(t[4 * g + 1], t[4 * g + 3], _MM_SHUFFLE(3, 2, 3, 2));
	}
	/* column 4 L + c: lane L of s[c], s[4 + c], s[8 + c], s[12 + c] */
#pragma GCC unroll 4
	for (int c = 0; c < 4; c++) {
		__m512 lo01 = _mm512_shuffle_f32x4(s[c], s[4 + c], _MM_SHUFFLE(1, 0, 1, 0));
		__m512 hi01 = _mm512_shuffle_f32x4(s[c], s[4 + c], _MM_SHUFFLE(3, 2, 3, 2));
		__m512 lo23 = _mm512_shuffle_f32x4(s[8 + c], s[12 + c], _MM_SHUFFLE(1, 0, 1, 0));
		__m512 hi23 = _mm512_shuffle_f32x4(s[8 + c], s[12 + c], _MM_SHUFFLE(3, 2, 3, 2));

		r[c] = _mm512_shuffle_f32x4(lo01, lo23, _MM_SHUFFLE(2, 0, 2, 0));
		r[4 + c] = _mm512_shuffle_f32x4(lo01, lo23, _MM_SHUFFLE(3, 1, 3, 1));
		r[8 + c] = _mm512_shuffle_f32x4(hi01, hi23, _MM_SHUFFLE(2, 0, 2, 0));
		r[12 + c] = _mm512_shuffle_f32x4(hi01, hi23, _MM_SHUFFLE(3, 1, 3, 1));
	}
}

/*
 * One panel of a transposed B (B(p, j) = src[j * cs + p]), @nr of its NR (a
 * multiple of 16) columns there.
 */
static void pack_b_cols(const float *src, int64_t cs, int64_t nr, int64_t kc, int NR, float *dst)
{
	for (int64_t p = 0; p < kc; p += 16) {
		const int64_t kb = min64(16, kc - p);
		const __mmask16 km = (__mmask16)((1u << kb) - 1);

		for (int g = 0; g < NR; g += 16) {
			__m512 r[16];
			float *d = dst + p * NR + g;

			if (g + 16 <= nr) {
#pragma GCC unroll 16
				for (int i = 0; i < 16; i++)
					r[i] = _mm512_maskz_loadu_ps(km, src + (g + i) * cs + p);
			} else {
#pragma GCC unroll 16
				for (int i = 0; i < 16; i++)
					r[i] = g + i < nr
						       ? _mm512_maskz_loadu_ps(km, src + (g + i) * cs + p)
						       : _mm512_setzero_ps();
			}
			transpose16(r);
			/* the K steps there are: columns of the block past kb are zero */
#pragma GCC unroll 16
			for (int q = 0; q < 16; q++)
				if (q < kb)
					_mm512_storeu_ps(d + q * NR, r[q]);
		}
	}
}

/*
 * One panel of a B with its rows along N (B(p, j) = src[p * rs + j]), @nr
 * of its NR (a multiple of 16, at most 48) columns there: each K step's row
 * copied by zmm loads and stores, masked past nr, zeros after. The scalar
 * code's memcpy() and memset() a row cost more in calls than in copying
 * (attention's V: 64 columns, a 48-wide and a 16-wide panel, 197 rows).
 */
static void pack_b_rows(const float *src, int64_t rs, int64_t nr, int64_t kc, int NR, float *dst)
{
	for (int64_t p = 0; p < kc; p++) {
		const float *s = src + p * rs;
		float *d = dst + p * NR;

		for (int g = 0; g < NR; g += 16) {
			int64_t left = nr - g;
			__mmask16 m = left >= 16 ? (__mmask16)0xffff
				      : left > 0 ? (__mmask16)((1u << left) - 1) : 0;

			_mm512_storeu_ps(d + g, _mm512_maskz_loadu_ps(m, s + g));
		}
	}
}

void ert_sgemm_pack_b_strided__avx512(const float *b, int64_t rs, int64_t cs, int64_t k0,
				      int64_t kc, int64_t n0, int64_t nc, int NR, float *dst)
{
	if (cs == 1 && NR % 16 == 0 && NR <= 48) {
		for (int64_t j0 = 0; j0 < nc; j0 += NR) {
			pack_b_rows(b + k0 * rs + n0 + j0, rs, min64(NR, nc - j0), kc, NR, dst);
			dst += NR * kc;
		}
		return;
	}
	if (rs != 1 || cs == 1 || NR % 16) {
		ert_sgemm_pack_b_strided__avx2(b, rs, cs, k0, kc, n0, nc, NR, dst);
		return;
	}
	for (int64_t j0 = 0; j0 < nc; j0 += NR) {
		pack_b_cols(b + k0 + (n0 + j0) * cs, cs, min64(NR, nc - j0), kc, NR, dst);
		dst += NR * kc;
	}
}
