/* SPDX-License-Identifier: MIT */
/*
 * The dot kernel of dq.h for 256-bit vectors, included by dq-avx2.c and
 * dq-avx512vnni.c after they define
 *   DQ_FN         the function's name
 *   dq_dot32(u, s)  eight int32 sums of four u8 x s8 products each (u: |a|,
 *                 s: the weights with a's signs): vpmaddubsw + vpmaddwd, or
 *                 vpdpbusd. No step saturates: |a|, |w| <= 127, so a pair
 *                 of products stays below 2^15.
 *
 * One activation row against eight weight rows at a time: per block, the
 * eight vectors of partial sums are reduced to the eight blocks' exact sums,
 * which are then scaled and added in the order of the scalar reference.
 */
#include <immintrin.h>

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF /* same float operations as the scalar reference */
#endif

static inline __m256i dq_wblock(const struct ert_dq_w *w, int64_t r, int64_t b)
{
	if (w->bits == 8)
		return _mm256_loadu_si256((const __m256i *)(const void *)(w->q + r * w->q_rs + b * 32));

	const __m128i m4 = _mm_set1_epi8(0x0f);
	__m128i p = _mm_loadu_si128((const __m128i *)(const void *)(w->q + r * w->q_rs + b * 16));
	__m256i v = _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(p, 4), m4), _mm_and_si128(p, m4));
	const __m256i e8 = _mm256_set1_epi8(8);

	/* 4-bit two's complement: (v ^ 8) - 8 */
	return _mm256_sub_epi8(_mm256_xor_si256(v, e8), e8);
}

static inline __m256i dq_prod(__m256i abs_a, __m256i a, __m256i wv)
{
	return dq_dot32(abs_a, _mm256_sign_epi8(wv, a));
}

static inline int32_t dq_hsum(__m256i v)
{
	__m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));

	s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
	s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
	return _mm_cvtsi128_si32(s);
}

void DQ_FN(const int8_t *qa, const float *sa, int64_t ni, const struct ert_dq_w *w, int64_t j0,
	   int64_t nj, float *out, int64_t out_rs)
{
	const int64_t kb = w->kb;
	const __m256i vidx = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
						_mm256_set1_epi32((int32_t)w->s_rs));
	int64_t j = 0;

	for (; j + 8 <= nj; j += 8) {
		const int64_t r = j0 + j;
		const float *sw = w->s + r * w->s_rs;

		for (int64_t i = 0; i < ni; i++) {
			const int8_t *ar = qa + i * kb * 32;
			__m256 acc = _mm256_setzero_ps();

			for (int64_t b = 0; b < kb; b++) {
				__m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(ar + b * 32));
				__m256i ua = _mm256_abs_epi8(a);
				__m256i d0 = dq_prod(ua, a, dq_wblock(w, r + 0, b));
				__m256i d1 = dq_prod(ua, a, dq_wblock(w, r + 1, b));
				__m256i d2 = dq_prod(ua, a, dq_wblock(w, r + 2, b));
				__m256i d3 = dq_prod(ua, a, dq_wblock(w, r + 3, b));
				__m256i h01 = _mm256_hadd_epi32(d0, d1), h23 = _mm256_hadd_epi32(d2, d3);
				__m256i d4 = dq_prod(ua, a, dq_wblock(w, r + 4, b));
				__m256i d5 = dq_prod(ua, a, dq_wblock(w, r + 5, b));
				__m256i d6 = dq_prod(ua, a, dq_wblock(w, r + 6, b));
				__m256i d7 = dq_prod(ua, a, dq_wblock(w, r + 7, b));
				__m256i h45 = _mm256_hadd_epi32(d4, d5), h67 = _mm256_hadd_epi32(d6, d7);
				__m256i h03 = _mm256_hadd_epi32(h01, h23), h47 = _mm256_hadd_epi32(h45, h67);
				/* lanes: rows 0-3 then 4-7, low and high 128-bit halves added */
				__m256i isum = _mm256_add_epi32(_mm256_permute2x128_si256(h03, h47, 0x20),
								_mm256_permute2x128_si256(h03, h47, 0x31));
				__m256 swv = _mm256_i32gather_ps(sw + b, vidx, 4);
				__m256 sc = _mm256_mul_ps(_mm256_set1_ps(sa[i * kb + b]), swv);
				__m256 p = _mm256_mul_ps(_mm256_cvtepi32_ps(isum), sc);

				acc = _mm256_add_ps(acc, p);
			}
			_mm256_storeu_ps(out + i * out_rs + j, acc);
		}
	}
	for (; j < nj; j++) {
		const int64_t r = j0 + j;
		const float *sw = w->s + r * w->s_rs;

		for (int64_t i = 0; i < ni; i++) {
			const int8_t *ar = qa + i * kb * 32;
			float acc = 0.0f;

			for (int64_t b = 0; b < kb; b++) {
				__m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(ar + b * 32));
				int32_t isum = dq_hsum(dq_prod(_mm256_abs_epi8(a), a, dq_wblock(w, r, b)));
				float sc = sa[i * kb + b] * sw[b];
				float p = (float)isum * sc;

				acc += p;
			}
			out[i * out_rs + j] = acc;
		}
	}
}
