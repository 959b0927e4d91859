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

/*
 * The fixed-rule Add in the 32-bit form (struct ert_q8_addf), 32 elements a
 * block: four groups of 8 lanes, then the clamp in 16-bit lanes.
 */
static inline __m256i addf_widen(const uint8_t *p, bool s8)
{
	__m128i x = _mm_loadl_epi64((const __m128i *)p);

	return s8 ? _mm256_cvtepi8_epi32(x) : _mm256_cvtepu8_epi32(x);
}

static inline __attribute__((always_inline)) void
addf_block(const struct ert_q8_addf *p, const uint8_t *s, const uint8_t *g, uint8_t *y, bool two,
	   bool adj, bool s8)
{
	__m256i r[4], o;

	for (int k = 0; k < 4; k++)
		r[k] = ert_q8_addf_lanes_avx2(p, two ? addf_widen(s + 8 * k, s8) : _mm256_setzero_si256(),
					      addf_widen(g + 8 * k, s8), two, adj, s8);
	r[0] = ert_q8_addf_out16_avx2(p, r[0], r[1]);
	r[2] = ert_q8_addf_out16_avx2(p, r[2], r[3]);
	o = s8 ? _mm256_packs_epi16(r[0], r[2]) : _mm256_packus_epi16(r[0], r[2]);
	/* the packs interleave 4-byte groups of the 128-bit halves */
	o = _mm256_permutevar8x32_epi32(o, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
	_mm256_storeu_si256((__m256i *)y, o);
}

static inline __attribute__((always_inline)) void
addf_runs(const struct ert_q8_addf *p, const uint8_t *s, const uint8_t *g, uint8_t *y, int64_t n,
	  bool two, bool adj, bool s8)
{
	int64_t j = 0;

	for (; j + 32 <= n; j += 32)
		addf_block(p, two ? s + j : NULL, g + j, y + j, two, adj, s8);
	if (j < n) {
		uint8_t ts[32] = { 0 }, tg[32] = { 0 }, ty[32];

		if (two)
			memcpy(ts, s + j, (size_t)(n - j));
		memcpy(tg, g + j, (size_t)(n - j));
		addf_block(p, ts, tg, ty, two, adj, s8);
		memcpy(y + j, ty, (size_t)(n - j));
	}
}

void ert_q8_addf_avx2(const struct ert_q8_addf *p, const uint8_t *s, const uint8_t *g, uint8_t *y,
		      int64_t n)
{
	bool two = s != NULL;

	if (two && p->adj)
		p->s8 ? addf_runs(p, s, g, y, n, true, true, true)
		      : addf_runs(p, s, g, y, n, true, true, false);
	else if (two)
		p->s8 ? addf_runs(p, s, g, y, n, true, false, true)
		      : addf_runs(p, s, g, y, n, true, false, false);
	else if (p->adj)
		p->s8 ? addf_runs(p, s, g, y, n, false, true, true)
		      : addf_runs(p, s, g, y, n, false, true, false);
	else
		p->s8 ? addf_runs(p, s, g, y, n, false, false, true)
		      : addf_runs(p, s, g, y, n, false, false, false);
}
