/* SPDX-License-Identifier: MIT */
/*
 * Packing of fp32 GEMM operands at avx2: the panels of
 * ert_sgemm_pack_a_strided() and ert_sgemm_pack_b_strided() (gemm/sgemm.c),
 * float for float, built with in-register transposes where the scalar code
 * moves one float at a time.
 *
 * - A with its rows along K (cs 1: an activation, attention's Q and
 *   probabilities): a panel of MR rows (6 at avx2, 8 at avx512) x 8 K steps
 *   is MR row loads, one 8x8 transpose (missing rows zero) and 8 stores of
 *   a K step's MR floats. MR 6 stores 8 floats a step, the 2 past the step
 *   written over by the next one; the last step of a block stores 4 + 2.
 * - A transposed (rs 1: Gemm's transA, a 1x1 convolution's image): a K step
 *   is MR floats in a row, loaded through a lane mask (zeros past an edge
 *   panel's rows).
 * - B transposed (rs 1: attention's K^T, Gemm's transB): each group of 8
 *   columns x 8 K steps is 8 loads along K, one 8x8 transpose and 8 stores
 *   into the panel's rows.
 * K steps past the last multiple of 8, and panels of other strides or
 * other MR, are packed by the scalar code. Nothing is computed: the bits
 * are the scalar packing's (test-cpu-levels: sgemm_pack_every_level).
 */
#include <immintrin.h>

#include "cpu/gemm/sgemm.h"

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/* r[q] = column q of the 8x8 block whose rows were r[0..7]. */
static inline __attribute__((always_inline)) void transpose8(__m256 r[8])
{
	__m256 t[8], s[8];

#pragma GCC unroll 4
	for (int i = 0; i < 4; i++) {
		t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
		t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
	}
	/* s[4 h + c]: column c (and c + 4 in the upper half) of rows 4h .. 4h + 3 */
#pragma GCC unroll 2
	for (int h = 0; h < 2; h++) {
		s[4 * h + 0] = _mm256_shuffle_ps(t[4 * h], t[4 * h + 2], _MM_SHUFFLE(1, 0, 1, 0));
		s[4 * h + 1] = _mm256_shuffle_ps(t[4 * h], t[4 * h + 2], _MM_SHUFFLE(3, 2, 3, 2));
		s[4 * h + 2] = _mm256_shuffle_ps(t[4 * h + 1], t[4 * h + 3], _MM_SHUFFLE(1, 0, 1, 0));
		s[4 * h + 3] = _mm256_shuffle_ps(t[4 * h + 1], t[4 * h + 3], _MM_SHUFFLE(3, 2, 3, 2));
	}
#pragma GCC unroll 4
	for (int c = 0; c < 4; c++) {
		r[c] = _mm256_permute2f128_ps(s[c], s[4 + c], 0x20);
		r[4 + c] = _mm256_permute2f128_ps(s[c], s[4 + c], 0x31);
	}
}

static inline __m256i lane_mask(int64_t n)
{
	const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);

	return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), idx);
}

/*
 * One panel of A, rows along K (A(i, p) = src[i * rs + p]), @mr of its MR
 * rows there: K steps of MR floats.
 */
static inline __attribute__((always_inline)) void
pack_a_rows(const float *src, int64_t rs, int64_t mr, int64_t kc, const int MR, float *dst)
{
	int64_t p = 0;

	for (; p + 8 <= kc; p += 8) {
		__m256 r[8];
		float *d = dst + p * MR;

#pragma GCC unroll 8
		for (int i = 0; i < 8; i++)
			r[i] = i < mr ? _mm256_loadu_ps(src + i * rs + p) : _mm256_setzero_ps();
		transpose8(r);
		if (MR == 8) {
#pragma GCC unroll 8
			for (int q = 0; q < 8; q++)
				_mm256_storeu_ps(d + 8 * q, r[q]);
		} else {
			/* MR 6: lanes 6 and 7 (zero) land on the next step, stored after */
#pragma GCC unroll 7
			for (int q = 0; q < 7; q++)
				_mm256_storeu_ps(d + 6 * q, r[q]);
			_mm_storeu_ps(d + 42, _mm256_castps256_ps128(r[7]));
			_mm_storel_pi((__m64 *)(void *)(d + 46), _mm256_extractf128_ps(r[7], 1));
		}
	}
	for (; p < kc; p++)
		for (int i = 0; i < MR; i++)
			dst[p * MR + i] = i < mr ? src[i * rs + p] : 0.0f;
}

/*
 * One panel of a transposed A (A(i, p) = src[p * cs + i]), @mr of its MR
 * (at most 8) rows there: each K step a masked load of mr floats.
 */
static void pack_a_cols(const float *src, int64_t cs, int64_t mr, int64_t kc, int MR, float *dst)
{
	const __m256i m = lane_mask(mr);
	int64_t p = 0;

	/* full stores while the 8 - MR floats past a step fall on the steps after it */
	for (; p * MR + 8 <= kc * MR; p++)
		_mm256_storeu_ps(dst + p * MR, _mm256_maskload_ps(src + p * cs, m));
	for (; p < kc; p++)
		_mm256_maskstore_ps(dst + p * MR, lane_mask(MR),
				    _mm256_maskload_ps(src + p * cs, m));
}

void ert_sgemm_pack_a_strided__avx2(const float *a, int64_t rs, int64_t cs, int64_t m0,
				    int64_t mc, int64_t k0, int64_t kc, int MR, float *dst)
{
	for (int64_t i0 = 0; i0 < mc; i0 += MR) {
		int64_t mr = min64(MR, mc - i0);
		const float *src = a + (m0 + i0) * rs + k0 * cs;

		if (cs == 1 && MR == 6 && mr == 6)
			pack_a_rows(src, rs, 6, kc, 6, dst);
		else if (cs == 1 && MR == 6)
			pack_a_rows(src, rs, mr, kc, 6, dst);
		else if (cs == 1 && MR == 8 && mr == 8)
			pack_a_rows(src, rs, 8, kc, 8, dst);
		else if (cs == 1 && MR == 8)
			pack_a_rows(src, rs, mr, kc, 8, dst);
		else if (rs == 1 && MR <= 8)
			pack_a_cols(src, cs, mr, kc, MR, dst);
		else
			ert_sgemm_pack_a_strided(a, rs, cs, m0 + i0, mr, k0, kc, MR, dst);
		dst += MR * kc;
	}
}

/*
 * One panel of a transposed B (B(p, j) = src[j * cs + p]), @nr of its NR (a
 * multiple of 8) columns there: per 8 K steps, a transpose per 8 columns.
 */
static void pack_b_cols(const float *src, int64_t cs, int64_t nr, int64_t kc, int NR, float *dst)
{
	int64_t p = 0;

	for (; p + 8 <= kc; p += 8) {
		for (int g = 0; g < NR; g += 8) {
			__m256 r[8];
			float *d = dst + p * NR + g;

			if (g + 8 <= nr) {
#pragma GCC unroll 8
				for (int i = 0; i < 8; i++)
					r[i] = _mm256_loadu_ps(src + (g + i) * cs + p);
			} else {
#pragma GCC unroll 8
				for (int i = 0; i < 8; i++)
					r[i] = g + i < nr ? _mm256_loadu_ps(src + (g + i) * cs + p)
							  : _mm256_setzero_ps();
			}
			transpose8(r);
#pragma GCC unroll 8
			for (int q = 0; q < 8; q++)
				_mm256_storeu_ps(d + q * NR, r[q]);
		}
	}
	for (; p < kc; p++)
		for (int j = 0; j < NR; j++)
			dst[p * NR + j] = j < nr ? src[j * cs + p] : 0.0f;
}

void ert_sgemm_pack_b_strided__avx2(const float *b, int64_t rs, int64_t cs, int64_t k0,
				    int64_t kc, int64_t n0, int64_t nc, int NR, float *dst)
{
	if (rs != 1 || cs == 1 || NR % 8) {
		/* rows along N are copied whole by the scalar code already */
		ert_sgemm_pack_b_strided(b, rs, cs, k0, kc, n0, nc, NR, dst);
		return;
	}
	for (int64_t j0 = 0; j0 < nc; j0 += NR) {
		pack_b_cols(b + k0 + (n0 + j0) * cs, cs, min64(NR, nc - j0), kc, NR, dst);
		dst += NR * kc;
	}
}
