/* SPDX-License-Identifier: MIT */
/*
 * QLinearAdd and QLinearMul in 16 lanes (level "avx512" and up): the bytes
 * widened to int32, both rules computed as the scalar loop computes them
 * (the fixed rule's per-input requantisation directly instead of its 256-entry
 * tables, which hold the same values), tails under k-masks.
 */
#include "cpu/ops/qlinear-kernels.h"
#include "cpu/qgemm/q8-avx512.h"

static inline __m512i load16(const uint8_t *p, int64_t step, __mmask16 m, bool u8)
{
	__m128i x = step ? _mm_maskz_loadu_epi8(m, p) : _mm_set1_epi8((char)p[0]);

	return u8 ? _mm512_cvtepu8_epi32(x) : _mm512_cvtepi8_epi32(x);
}

/* ert_qout_float() of 8 doubles. */
static inline __m256i out_float8(__m512d q, const struct ert_q8_bin *p)
{
	q = _mm512_add_pd(_mm512_roundscale_pd(q, _MM_FROUND_CUR_DIRECTION),
			  _mm512_set1_pd((double)p->zp));
	q = _mm512_max_pd(q, _mm512_set1_pd((double)p->lo));
	return _mm512_cvtpd_epi32(_mm512_min_pd(q, _mm512_set1_pd((double)p->hi)));
}

static inline __m512i join(__m256i lo, __m256i hi)
{
	return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}

void ert_q8_bin_avx512(const struct ert_q8_bin *p, const uint8_t *a, int64_t sa, const uint8_t *b,
		       int64_t sb, uint8_t *y, int64_t n)
{
	const __m512i azp = _mm512_set1_epi32(p->azp), bzp = _mm512_set1_epi32(p->bzp);
	const __m512i lo = _mm512_set1_epi32(p->lo - p->zp), hi = _mm512_set1_epi32(p->hi - p->zp);
	const __m512i zp = _mm512_set1_epi32(p->zp);
	const __m512i m = _mm512_set1_epi32(p->m), s = _mm512_set1_epi32(p->s);

	for (int64_t j = 0; j < n; j += 16) {
		__mmask16 k = n - j >= 16 ? 0xffff : (__mmask16)((1u << (n - j)) - 1);
		__m512i da = _mm512_sub_epi32(load16(a + j * sa, sa, k, p->u8), azp);
		__m512i db = _mm512_sub_epi32(load16(b + j * sb, sb, k, p->u8), bzp);
		__m512i r;

		if (p->mul && p->fixed) {
			r = ert_q8_requant_fixed_avx512(_mm512_mullo_epi32(da, db), m, s);
		} else if (p->mul) {
			__m512i prod = _mm512_mullo_epi32(da, db);
			__m512d f = _mm512_set1_pd(p->f);

			r = join(out_float8(_mm512_mul_pd(_mm512_cvtepi32_pd(
							  _mm512_castsi512_si256(prod)), f), p),
				 out_float8(_mm512_mul_pd(_mm512_cvtepi32_pd(
							  _mm512_extracti64x4_epi64(prod, 1)), f), p));
		} else if (p->fixed) {
			r = ert_q8_add_fixed_avx512(da, db, p->am, p->as, p->bm, p->bs, p->m, p->s);
		} else {
			__m512d ra = _mm512_set1_pd(p->ra), rb = _mm512_set1_pd(p->rb);
			__m512d q0 = _mm512_add_pd(
				_mm512_mul_pd(_mm512_cvtepi32_pd(_mm512_castsi512_si256(da)), ra),
				_mm512_mul_pd(_mm512_cvtepi32_pd(_mm512_castsi512_si256(db)), rb));
			__m512d q1 = _mm512_add_pd(
				_mm512_mul_pd(_mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(da, 1)), ra),
				_mm512_mul_pd(_mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(db, 1)), rb));

			r = join(out_float8(q0, p), out_float8(q1, p));
		}
		if (p->fixed)
			r = _mm512_add_epi32(_mm512_min_epi32(_mm512_max_epi32(r, lo), hi), zp);
		_mm512_mask_cvtepi32_storeu_epi8(y + j, k, r);
	}
}

/*
 * The fixed-rule Add in the 32-bit form (struct ert_q8_addf), as
 * qlinear-ew-avx2.c computes it, 64 elements a block (four groups of 16
 * lanes, the clamp in 16-bit lanes), tails under k-masks.
 */
static inline __m512i addf_widen(const uint8_t *p, __mmask16 k, bool s8)
{
	__m128i x = _mm_maskz_loadu_epi8(k, p);

	return s8 ? _mm512_cvtepi8_epi32(x) : _mm512_cvtepu8_epi32(x);
}

static inline __attribute__((always_inline)) void
addf_block(const struct ert_q8_addf *p, const uint8_t *s, const uint8_t *g, uint8_t *y,
	   __mmask64 km, bool two, bool adj, bool s8)
{
	const __m512i lo = _mm512_set1_epi16(p->lo), hi = _mm512_set1_epi16(p->hi);
	const __m512i zp = _mm512_set1_epi16(p->zp);
	/* dword i of the packed bytes holds elements 4 * (4 * (i % 4) + i / 4) .. + 3 */
	const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11,
						15);
	__m512i r[4], o;

	for (int k = 0; k < 4; k++) {
		__mmask16 kk = (__mmask16)(km >> (16 * k));

		r[k] = ert_q8_addf_lanes_avx512(
			p, two ? addf_widen(s + 16 * k, kk, s8) : _mm512_setzero_si512(),
			addf_widen(g + 16 * k, kk, s8), two, adj, s8);
	}
	r[0] = _mm512_packs_epi32(r[0], r[1]);
	r[2] = _mm512_packs_epi32(r[2], r[3]);
	r[0] = _mm512_add_epi16(_mm512_min_epi16(_mm512_max_epi16(r[0], lo), hi), zp);
	r[2] = _mm512_add_epi16(_mm512_min_epi16(_mm512_max_epi16(r[2], lo), hi), zp);
	o = s8 ? _mm512_packs_epi16(r[0], r[2]) : _mm512_packus_epi16(r[0], r[2]);
	_mm512_mask_storeu_epi8(y, km, _mm512_permutexvar_epi32(order, o));
}

static inline __attribute__((always_inline)) void
addf_runs(const struct ert_q8_addf *p, const uint8_t *s, const uint8_t *g, uint8_t *y, int64_t n,
	  bool two, bool adj, bool s8)
{
	for (int64_t j = 0; j < n; j += 64) {
		__mmask64 km = n - j >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << (n - j)) - 1;

		addf_block(p, two ? s + j : NULL, g + j, y + j, km, two, adj, s8);
	}
}

void ert_q8_addf_avx512(const struct ert_q8_addf *p, const uint8_t *s, const uint8_t *g,
			uint8_t *y, int64_t n)
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
