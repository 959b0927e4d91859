/* SPDX-License-Identifier: MIT */
/*
 * QLinearAdd and QLinearMul in 8 lanes (level "avx2"): as the AVX-512
 * version; the tail goes through the same lanes from a padded copy.
 */
#include <string.h>

#include "cpu/ops/qlinear-kernels.h"
#include "cpu/qgemm/q8-avx2.h"

static inline __m256i widen8(const uint8_t *p, int64_t step, bool u8)
{
	__m128i x = step ? _mm_loadl_epi64((const __m128i *)p) : _mm_set1_epi8((char)p[0]);

	return u8 ? _mm256_cvtepu8_epi32(x) : _mm256_cvtepi8_epi32(x);
}

/* ert_qout_float() of 4 doubles. */
static inline __m128i out_float4(__m256d q, const struct ert_q8_bin *p)
{
	q = _mm256_add_pd(_mm256_round_pd(q, _MM_FROUND_CUR_DIRECTION),
			  _mm256_set1_pd((double)p->zp));
	q = _mm256_max_pd(q, _mm256_set1_pd((double)p->lo));
	return _mm256_cvtpd_epi32(_mm256_min_pd(q, _mm256_set1_pd((double)p->hi)));
}

/* Eight outputs at y from eight (or one repeated, step 0) inputs at a and b. */
static inline void bin8(const struct ert_q8_bin *p, const uint8_t *a, int64_t sa,
			const uint8_t *b, int64_t sb, uint8_t *y)
{
	const __m256i da = _mm256_sub_epi32(widen8(a, sa, p->u8), _mm256_set1_epi32(p->azp));
	const __m256i db = _mm256_sub_epi32(widen8(b, sb, p->u8), _mm256_set1_epi32(p->bzp));
	const __m256i m = _mm256_set1_epi32(p->m), s = _mm256_set1_epi32(p->s);
	const __m256i pick = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
					      -1, -1, 0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1,
					      -1, -1, -1, -1);
	__m256i r;

	if (p->mul && p->fixed) {
		r = ert_q8_requant_fixed_avx2(_mm256_mullo_epi32(da, db), m, s);
	} else if (p->mul) {
		__m256i prod = _mm256_mullo_epi32(da, db);
		__m256d f = _mm256_set1_pd(p->f);

		r = _mm256_set_m128i(
			out_float4(_mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(prod, 1)),
						 f), p),
			out_float4(_mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(prod)), f),
				   p));
	} else if (p->fixed) {
		r = ert_q8_add_fixed_avx2(da, db, p->am, p->as, p->bm, p->bs, p->m, p->s);
	} else {
		__m256d ra = _mm256_set1_pd(p->ra), rb = _mm256_set1_pd(p->rb);
		__m256d q0 = _mm256_add_pd(
			_mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(da)), ra),
			_mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(db)), rb));
		__m256d q1 = _mm256_add_pd(
			_mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(da, 1)), ra),
			_mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(db, 1)), rb));

		r = _mm256_set_m128i(out_float4(q1, p), out_float4(q0, p));
	}
	if (p->fixed)
		r = _mm256_add_epi32(_mm256_min_epi32(_mm256_max_epi32(r, _mm256_set1_epi32(p->lo - p->zp)),
						      _mm256_set1_epi32(p->hi - p->zp)),
				     _mm256_set1_epi32(p->zp));
	r = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(r, pick),
					_mm256_setr_epi32(0, 4, 0, 0, 0, 0, 0, 0));
	_mm_storel_epi64((__m128i *)y, _mm256_castsi256_si128(r));
}

void ert_q8_bin_avx2(const struct ert_q8_bin *p, const uint8_t *a, int64_t sa, const uint8_t *b,
		     int64_t sb, uint8_t *y, int64_t n)
{
	int64_t j = 0;

	for (; j + 8 <= n; j += 8)
		bin8(p, a + j * sa, sa, b + j * sb, sb, y + j);
	if (j < n) {
		uint8_t ta[8] = { 0 }, tb[8] = { 0 }, ty[8];

		memcpy(ta, a + j * sa, (size_t)(sa ? n - j : 1));
		memcpy(tb, b + j * sb, (size_t)(sb ? n - j : 1));
		bin8(p, ta, sa, tb, sb, ty);
		memcpy(y + j, ty, (size_t)(n - j));
	}
}
