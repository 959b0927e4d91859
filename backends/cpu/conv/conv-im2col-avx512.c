/* SPDX-License-Identifier: MIT */
/* The implicit im2col of strided windows by masked gathers at avx512 (conv-im2col.h). */
#include <immintrin.h>

#include "cpu/conv/conv-im2col.h"
#include "cpu/gemm/sgemm.h"

void ert_conv_im2col_gather__avx512(const float *x, int64_t in_sp, const struct ert_conv_geom *g,
				    int64_t n0, int64_t nv, int nr16, int64_t k0, int64_t kc,
				    float *dst)
{
	const int64_t w = 16 * (int64_t)nr16, kh_n = g->k[1], kw_n = g->k[2], taps = kh_n * kw_n;
	const int64_t ow_n = g->out[2];
	int32_t by[ERT_SGEMM_NR_MAX] __attribute__((aligned(64)));
	int32_t bx[ERT_SGEMM_NR_MAX] __attribute__((aligned(64)));
	int32_t idx[ERT_CONV_IM2COL_TAPS * ERT_SGEMM_NR_MAX] __attribute__((aligned(64)));
	int64_t oh = n0 / ow_n, ow = n0 % ow_n;

	/* each column's window corner: no division past the first */
	for (int64_t c = 0; c < w; c++) {
		by[c] = (int32_t)(oh * g->stride[1] - g->pad_b[1]);
		bx[c] = (int32_t)(ow * g->stride[2] - g->pad_b[2]);
		if (++ow == ow_n) {
			ow = 0;
			oh++;
		}
	}
	const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
	const __m512i ih = _mm512_set1_epi32((int32_t)g->in[1]), iw = _mm512_set1_epi32((int32_t)g->in[2]);
	const __m512i zero = _mm512_setzero_si512(), none = _mm512_set1_epi32(-1);

	for (int v = 0; v < nr16; v++) {
		__m512i y0 = _mm512_load_si512((const void *)(by + 16 * v));
		__m512i x0 = _mm512_load_si512((const void *)(bx + 16 * v));

		__mmask16 live = _mm512_cmplt_epi32_mask(_mm512_add_epi32(lane, _mm512_set1_epi32(16 * v)),
					       _mm512_set1_epi32((int32_t)nv));
		for (int64_t kh = 0; kh < kh_n; kh++) {
			__m512i y = _mm512_add_epi32(y0, _mm512_set1_epi32((int32_t)(kh * g->dil[1])));
			__mmask16 my = live & _mm512_cmpge_epi32_mask(y, zero) &
				       _mm512_cmplt_epi32_mask(y, ih);
			__m512i row = _mm512_mullo_epi32(y, iw);

			for (int64_t kw = 0; kw < kw_n; kw++) {
				__m512i xx = _mm512_add_epi32(x0, _mm512_set1_epi32((int32_t)(kw * g->dil[2])));
				__mmask16 m = my & _mm512_cmpge_epi32_mask(xx, zero) &
					      _mm512_cmplt_epi32_mask(xx, iw);

				_mm512_store_si512((void *)(idx + (kh * kw_n + kw) * w + 16 * v),
						   _mm512_mask_add_epi32(none, m, row, xx));
			}
		}
	}

	int64_t ci = k0 / taps, tap = k0 % taps;

	for (int64_t q = 0; q < kc; q++, dst += w) {
		const float *plane = x + ci * in_sp;
		const int32_t *ix = idx + tap * w;

		for (int v = 0; v < nr16; v++) {
			__m512i vi = _mm512_load_si512((const void *)(ix + 16 * v));
			__mmask16 in = _mm512_cmpge_epi32_mask(vi, _mm512_setzero_si512());

			_mm512_storeu_ps(dst + 16 * v,
					 _mm512_mask_i32gather_ps(_mm512_setzero_ps(), in, vi, plane, 4));
		}
		if (++tap == taps) {
			tap = 0;
			ci++;
		}
	}
}
