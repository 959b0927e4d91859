/* SPDX-License-Identifier: MIT */
/*
 * The small-plane convolutions' micro-kernel at avx512 (conv-smallplane.h):
 * the GEMM's 8 x 48 kernel body (cpu/gemm/sgemm-ukernel-avx512.h: the same
 * FMAs in the same order, the same epilogue) with software prefetches of the
 * weights the next calls read spread through its K loop, one line every
 * other K step; and the transposing pass from C^T into the NCHW output.
 */
#include <immintrin.h>

#include "cpu/conv/conv-smallplane.h"
#include "cpu/gemm/sgemm-ukernel-avx512.h"

void ert_conv_sp_ukernel_8x48__avx512(int64_t kc, const float *a, const float *b, int64_t ldb,
				      float *c, int64_t ldc, int64_t mr, int64_t nr,
				      const struct ert_sgemm_epi *e, const void *pf,
				      int64_t pf_lines)
{
	ert_sgemm_8x48_avx512(kc, a, b, ldb, c, ldc, mr, nr, e, pf, pf_lines);
}

void ert_conv_sp_gather_8__avx512(const float *x, int64_t in_sp, int64_t c_in, int64_t kk,
				  const int32_t *idx, float *dst)
{
	for (int64_t ci = 0; ci < c_in; ci++) {
		const float *plane = x + ci * in_sp;

		for (int64_t t = 0; t < kk; t++, dst += 8) {
			__m256i vi = _mm256_loadu_si256((const __m256i *)(const void *)(idx + t * 8));
			__mmask8 in = _mm256_cmpge_epi32_mask(vi, _mm256_setzero_si256());

			_mm256_storeu_ps(dst, _mm256_mmask_i32gather_ps(_mm256_setzero_ps(), in, vi,
									 plane, 4));
		}
	}
}

/* r[j] (16 floats each) transposed in place: r[j][i] becomes r[i][j]. */
static inline __attribute__((always_inline)) void sp_transpose_16x16(__m512 r[16])
{
	__m512 t[16];

	for (int k = 0; k < 8; k++) {
		t[2 * k] = _mm512_unpacklo_ps(r[2 * k], r[2 * k + 1]);
		t[2 * k + 1] = _mm512_unpackhi_ps(r[2 * k], r[2 * k + 1]);
	}
	for (int k = 0; k < 4; k++) {
		r[4 * k] = _mm512_shuffle_ps(t[4 * k], t[4 * k + 2], 0x44);
		r[4 * k + 1] = _mm512_shuffle_ps(t[4 * k], t[4 * k + 2], 0xee);
		r[4 * k + 2] = _mm512_shuffle_ps(t[4 * k + 1], t[4 * k + 3], 0x44);
		r[4 * k + 3] = _mm512_shuffle_ps(t[4 * k + 1], t[4 * k + 3], 0xee);
	}
	for (int h = 0; h < 2; h++)
		for (int k = 0; k < 4; k++) {
			t[8 * h + k] = _mm512_shuffle_f32x4(r[8 * h + k], r[8 * h + k + 4], 0x88);
			t[8 * h + k + 4] = _mm512_shuffle_f32x4(r[8 * h + k], r[8 * h + k + 4], 0xdd);
		}
	for (int k = 0; k < 8; k++) {
		r[k] = _mm512_shuffle_f32x4(t[k], t[k + 8], 0x88);
		r[k + 8] = _mm512_shuffle_f32x4(t[k], t[k + 8], 0xdd);
	}
}

void ert_conv_sp_transpose__avx512(const float *src, int64_t lds, int64_t rows, int64_t cols,
				   float *dst, int64_t ldd)
{
	for (int64_t c0 = 0; c0 < cols; c0 += 16) {
		const int64_t nc = cols - c0 < 16 ? cols - c0 : 16;
		const __mmask16 cm = (__mmask16)((1u << nc) - 1);

		for (int64_t i0 = 0; i0 < rows; i0 += 16) {
			const int64_t ni = rows - i0 < 16 ? rows - i0 : 16;
			const __mmask16 im = (__mmask16)((1u << ni) - 1);
			__m512 r[16];

			for (int i = 0; i < 16; i++)
				r[i] = i < ni ? _mm512_maskz_loadu_ps(cm, src + (i0 + i) * lds + c0)
					      : _mm512_setzero_ps();
			sp_transpose_16x16(r);
			for (int c = 0; c < nc; c++)
				_mm512_mask_storeu_ps(dst + (c0 + c) * ldd + i0, im, r[c]);
		}
	}
}
