/* SPDX-License-Identifier: MIT */
/*
 * int8 GEMM micro-kernel, AVX-512BW (level "avx512"): 8 rows x 32 columns.
 * Without VNNI the byte products go through vpmaddwd, which is exact on
 * int16: the B quads are split into their even and odd bytes (zero-extended
 * to int16 in place) and multiplied by the A block's int16 pairs (bytes 0, 2
 * and 1, 3 of each quad), so each lane gets the same four products as
 * vpdpbusd would. (vpmaddubsw would saturate: 2 * 255 * 128 > 32767.)
 *
 * Also the AVX-512 epilogue, shared with the VNNI level: the zero-point
 * corrections and the output stage in 16 lanes, tails under k-masks.
 */
#include <immintrin.h>
#include <string.h>

#include "cpu/ops/qlinear-kernels.h"
#include "cpu/qgemm/q8-avx512.h"
#include "cpu/qgemm/qgemm.h"

#define MR 8

static inline __attribute__((always_inline)) void
kernel_nv(const int NV, int64_t k4, const void *a, const uint8_t *b, int64_t bw, int32_t *c,
	  int64_t ldc, bool add)
{
	const uint8_t *ap = a;
	const __m512i lo_bytes = _mm512_set1_epi32(0x00ff00ff);
	__m512i acc[MR][2];

#pragma GCC unroll 8
	for (int i = 0; i < MR; i++)
#pragma GCC unroll 2
		for (int v = 0; v < NV; v++)
			acc[i][v] = add ? _mm512_loadu_si512(c + i * ldc + 16 * v)
					: _mm512_setzero_si512();
	for (int64_t p = 0; p < k4; p++) {
		__m512i be[2], bo[2];

#pragma GCC unroll 2
		for (int v = 0; v < NV; v++) {
			__m512i bv = _mm512_loadu_si512(b + 64 * v);

			be[v] = _mm512_and_si512(bv, lo_bytes);
			bo[v] = _mm512_srli_epi16(bv, 8);
		}
#pragma GCC unroll 8
		for (int i = 0; i < MR; i++) {
			int32_t q[2];

			memcpy(q, ap + 8 * i, 8);
			__m512i we = _mm512_set1_epi32(q[0]), wo = _mm512_set1_epi32(q[1]);

#pragma GCC unroll 2
			for (int v = 0; v < NV; v++)
				acc[i][v] = _mm512_add_epi32(
					acc[i][v], _mm512_add_epi32(_mm512_madd_epi16(be[v], we),
								    _mm512_madd_epi16(bo[v], wo)));
		}
		ap += 8 * MR;
		b += 4 * bw;
	}
#pragma GCC unroll 8
	for (int i = 0; i < MR; i++)
#pragma GCC unroll 2
		for (int v = 0; v < NV; v++)
			_mm512_storeu_si512(c + i * ldc + 16 * v, acc[i][v]);
}

ERT_QGEMM_UKERNEL(1)
ERT_QGEMM_UKERNEL(2)

const struct ert_qgemm_kernel ert_qgemm_kernel_avx512 = {
	.name = "q8-gemm-8x32-avx512",
	.mr = MR, .vc = 16, .nv = 2,
	.kc4 = 128,
	.afmt = ERT_QGEMM_A_S16,
	.ukernel = { ukernel_1, ukernel_2, NULL },
	.epi = ert_qgemm_epi_avx512,
	.epi_rows = ert_qgemm_epi_rows_avx512,
};

/* ---- epilogue ---- */

static inline __m512d load_f(const struct ert_qgemm_epi *e, double f1, int64_t j, __mmask8 m)
{
	return e->f ? _mm512_maskz_loadu_pd(m, e->f + j) : _mm512_set1_pd(f1);
}

/* The fused residual of 16 outputs @q (values of the output type) and the bytes at @r (@k). */
static inline __m512i residual16(const struct ert_q8_add *a, __m512i q, const uint8_t *r,
				 __mmask16 k)
{
	const struct ert_q8_bin *p = &a->vp;
	__m128i rb = _mm_maskz_loadu_epi8(k, r);
	__m512i da = _mm512_sub_epi32(q, _mm512_set1_epi32(p->azp));
	__m512i db = _mm512_sub_epi32(p->u8 ? _mm512_cvtepu8_epi32(rb) : _mm512_cvtepi8_epi32(rb),
				      _mm512_set1_epi32(p->bzp));
	__m512i s = ert_q8_add_fixed_avx512(da, db, p->am, p->as, p->bm, p->bs, p->m, p->s);

	s = _mm512_min_epi32(_mm512_max_epi32(s, _mm512_set1_epi32(p->lo - p->zp)),
			     _mm512_set1_epi32(p->hi - p->zp));
	return _mm512_add_epi32(s, _mm512_set1_epi32(p->zp));
}

static inline __attribute__((always_inline)) void
epi_row(const int32_t *raw, int64_t n, const struct ert_qgemm_epi *e, struct ert_qgemm_rowv rv,
	void *dst)
{
	const __m512i c0 = _mm512_set1_epi32((int32_t)rv.c0), c1 = _mm512_set1_epi32((int32_t)rv.c1);
	const __m512i c2 = _mm512_set1_epi32((int32_t)e->c2);
	const __m512i lo = _mm512_set1_epi32(e->lo - e->zp), hi = _mm512_set1_epi32(e->hi - e->zp);
	const __m512i zp = _mm512_set1_epi32(e->zp);

	for (int64_t j = 0; j < n; j += 16) {
		__mmask16 m = n - j >= 16 ? 0xffff : (__mmask16)((1u << (n - j)) - 1);
		__m512i v = _mm512_add_epi32(_mm512_maskz_loadu_epi32(m, raw + j), c0);

		if (e->u)
			v = _mm512_add_epi32(v, _mm512_mullo_epi32(c1, _mm512_maskz_loadu_epi32(m, e->u + j)));
		if (e->t)
			v = _mm512_add_epi32(v, _mm512_mullo_epi32(c2, _mm512_maskz_loadu_epi32(m, e->t + j)));
		if (e->w)
			v = _mm512_add_epi32(v, _mm512_maskz_loadu_epi32(m, e->w + j));
		switch (e->mode) {
		case ERT_QGEMM_OUT_I32:
			_mm512_mask_storeu_epi32((int32_t *)dst + j, m, v);
			continue;
		case ERT_QGEMM_OUT_FIXED: {
			__m512i mu = e->mult ? _mm512_maskz_loadu_epi32(m, e->mult + j)
					     : _mm512_set1_epi32(rv.mult1);
			__m512i sh = e->shift ? _mm512_maskz_loadu_epi32(m, e->shift + j)
					      : _mm512_set1_epi32(rv.shift1);

			v = ert_q8_requant_fixed_avx512(v, mu, sh);
			v = _mm512_add_epi32(_mm512_min_epi32(_mm512_max_epi32(v, lo), hi), zp);
			if (e->res)
				v = residual16(e->res, v, rv.r + j, m);
			break;
		}
		case ERT_QGEMM_OUT_FLOAT: {
			__m256i r0 = ert_q8_requant_float8_avx512(
				_mm512_castsi512_si256(v), load_f(e, rv.f1, j, (__mmask8)m), e->zp, e->lo, e->hi);
			__m256i r1 = ert_q8_requant_float8_avx512(_mm512_extracti64x4_epi64(v, 1),
								  load_f(e, rv.f1, j + 8, (__mmask8)(m >> 8)),
								  e->zp, e->lo, e->hi);

			v = _mm512_inserti64x4(_mm512_castsi256_si512(r0), r1, 1);
			break;
		}
		case ERT_QGEMM_OUT_F32: {
			float *o = (float *)dst + j;
			__m512d d0 = _mm512_mul_pd(_mm512_cvtepi32_pd(_mm512_castsi512_si256(v)),
						   load_f(e, rv.f1, j, (__mmask8)m));
			__m512d d1 = _mm512_mul_pd(_mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(v, 1)),
						   load_f(e, rv.f1, j + 8, (__mmask8)(m >> 8)));

			_mm256_mask_storeu_ps(o, (__mmask8)m, _mm512_cvtpd_ps(d0));
			_mm256_mask_storeu_ps(o + 8, (__mmask8)(m >> 8), _mm512_cvtpd_ps(d1));
			continue;
		}
		}
		/* inside [lo, hi], so the low byte is the int8 or uint8 value */
		_mm512_mask_cvtepi32_storeu_epi8((int8_t *)dst + j, m, v);
	}
}

/* Which input of the fused residual's Add (struct ert_q8_add) is the power-of-two one. */
enum res_form {
	RES_NONE,       /* no fused residual */
	RES_CONV_S,     /* the conv's output (in[0], p->shift == 0) */
	RES_CONV_G,     /* the residual (in[1]) */
};

/* A row's constants of the fixed-rule output stage, as vectors. */
struct fixed_row {
	__m512i c0, c1, mult, lsv, rsv, half;
	int32_t ls;
};

/*
 * 16 outputs of a fixed-rule row: ert_q8_requant_fixed_avx512()'s steps on
 * the row's constants, clamped to [lo, hi] (the type's range less the zero
 * point; the caller adds the zero point, or folds it into what follows).
 */
static inline __attribute__((always_inline)) __m512i
fixed16(const struct fixed_row *w, const int32_t *rr, const int32_t *u, __mmask16 m, __m512i lo,
	__m512i hi)
{
	const __m512i zero = _mm512_setzero_si512(), rnd = _mm512_set1_epi64(1LL << 30);
	__m512i x = _mm512_add_epi32(_mm512_maskz_loadu_epi32(m, rr), w->c0);

	if (u)
		x = _mm512_add_epi32(x, _mm512_mullo_epi32(w->c1, _mm512_maskz_loadu_epi32(m, u)));
	if (w->ls)
		x = _mm512_sllv_epi32(x, w->lsv);
	__m512i ev = _mm512_add_epi64(_mm512_mul_epi32(x, w->mult), rnd);
	__m512i od = _mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(x, 32), w->mult), rnd);
	__m512i h = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(ev, 31),
					    _mm512_slli_epi64(od, 1));
	__m512i v = _mm512_srlv_epi32(_mm512_add_epi32(_mm512_abs_epi32(h), w->half), w->rsv);

	v = _mm512_mask_sub_epi32(v, _mm512_cmplt_epi32_mask(h, zero), zero, v);
	return _mm512_min_epi32(_mm512_max_epi32(v, lo), hi);
}

static inline __mmask16 tail_mask(int64_t left)
{
	return left >= 16 ? 0xffff : left <= 0 ? 0 : (__mmask16)((1u << left) - 1);
}

/*
 * A convolution's fixed-rule rows (one multiplier and shift per row, no
 * per-column terms but colsum's u): the block's constants once and each
 * row's once (its shift counts, rounding half and multiplier as vectors),
 * then ert_q8_requant_fixed_avx512()'s steps on them, 16 lanes at a time,
 * the tail under a k-mask.
 *
 * With a fused residual (@res, e->res in the Add's 32-bit form): the
 * outputs' values (clamped to the type, as the QLinearConv wrote them) and
 * the residual's bytes of the same columns go through the Add's lanes
 * (ert_q8_addf_lanes_avx512()'s steps, as QLinearAdd runs them); the sum is
 * clamped in 32-bit lanes (QLinearAdd clamps after a saturating pack to
 * int16, to a range inside int16: the same values) and only its bytes are
 * stored. The conv's zero point is folded into the Add's constants
 * (ert_q8_addf_fold_zp()), and a row's columns go 48 at a time: the three conv stages
 * first, then the three Add stages, so that each Add stage's input is
 * ready when it is issued (one long chain per 16 columns, issued as one,
 * filled the out-of-order scheduler and left the ports idle: docs/int8.md).
 */
static inline __attribute__((always_inline)) void
epi_rows_fixed(const bool s8, const enum res_form res, const int32_t *raw, int64_t ldr,
	       int64_t rows, int64_t n, const struct ert_qgemm_epi *e,
	       const struct ert_qgemm_rows *rt, uint8_t *dst, int64_t ldd)
{
	const __m512i lo = _mm512_set1_epi32(e->lo - e->zp), hi = _mm512_set1_epi32(e->hi - e->zp);
	const __m512i zp = _mm512_set1_epi32(e->zp);
	/* a copy the stores cannot alias: its fields stay in registers */
	struct ert_q8_addf fp = res ? e->res->fp : (struct ert_q8_addf){ 0 };
	const int32_t *u = e->u;

	/* the conv's zero point folded into the Add's constants (the bias always added) */
	if (res)
		fp = ert_q8_addf_fold_zp(fp, e->zp, res == RES_CONV_S, s8);
	const __m512i slo = _mm512_set1_epi32(fp.lo), shi = _mm512_set1_epi32(fp.hi);
	const __m512i szp = _mm512_set1_epi32(fp.zp);

	for (int64_t r = 0; r < rows; r++) {
		const struct ert_qgemm_rowv rv = ert_qgemm_rowv_at(e, rt, r, ldd);
		const int32_t ls = rv.shift1 > 0 ? rv.shift1 : 0, rs = rv.shift1 < 0 ? -rv.shift1 : 0;
		const struct fixed_row w = {
			.c0 = _mm512_set1_epi32((int32_t)rv.c0),
			.c1 = _mm512_set1_epi32((int32_t)rv.c1),
			.mult = _mm512_set1_epi32(rv.mult1),
			.lsv = _mm512_set1_epi32(ls),
			.rsv = _mm512_set1_epi32(rs),
			.half = _mm512_set1_epi32((int32_t)((1u << rs) >> 1)),
			.ls = ls,
		};
		const int32_t *rr = raw + r * ldr;
		uint8_t *d = dst + r * ldd;

		if (!res) {
			for (int64_t j = 0; j < n; j += 16) {
				__mmask16 m = tail_mask(n - j);
				__m512i v = fixed16(&w, rr + j, u ? u + j : NULL, m, lo, hi);

				/* inside [lo, hi], so the low byte is the int8 or uint8 value */
				_mm512_mask_cvtepi32_storeu_epi8((int8_t *)d + j,
								 m, _mm512_add_epi32(v, zp));
			}
			continue;
		}
		for (int64_t j = 0; j < n; j += 48) {
			__m512i v[3];
			__mmask16 m[3];

#pragma GCC unroll 3
			for (int k = 0; k < 3; k++) {
				m[k] = tail_mask(n - j - 16 * k);
				v[k] = m[k] ? fixed16(&w, rr + j + 16 * k, u ? u + j + 16 * k : NULL, m[k],
						      lo, hi)
					    : _mm512_setzero_si512();
			}
#pragma GCC unroll 3
			for (int k = 0; k < 3; k++) {
				if (!m[k])
					break;
				__m128i rb = _mm_maskz_loadu_epi8(m[k], rv.r + j + 16 * k);
				__m512i wr = s8 ? _mm512_cvtepi8_epi32(rb) : _mm512_cvtepu8_epi32(rb);
				/* the bias always: it holds the conv's zero point */
				__m512i a = ert_q8_addf_lanes_avx512(&fp, res == RES_CONV_S ? v[k] : wr,
								     res == RES_CONV_S ? wr : v[k], true,
								     fp.adj, true);

				a = _mm512_add_epi32(_mm512_min_epi32(_mm512_max_epi32(a, slo), shi), szp);
				_mm512_mask_cvtepi32_storeu_epi8((int8_t *)d + j + 16 * k, m[k], a);
			}
		}
	}
}

/* The fixed rows with e->res in the Add's 32-bit form: one copy per type and form. */
static void epi_rows_res(const int32_t *raw, int64_t ldr, int64_t rows, int64_t n,
			 const struct ert_qgemm_epi *e, const struct ert_qgemm_rows *rt,
			 uint8_t *dst, int64_t ldd)
{
	if (e->res->fp.s8 && e->res->shift)
		epi_rows_fixed(true, RES_CONV_G, raw, ldr, rows, n, e, rt, dst, ldd);
	else if (e->res->fp.s8)
		epi_rows_fixed(true, RES_CONV_S, raw, ldr, rows, n, e, rt, dst, ldd);
	else if (e->res->shift)
		epi_rows_fixed(false, RES_CONV_G, raw, ldr, rows, n, e, rt, dst, ldd);
	else
		epi_rows_fixed(false, RES_CONV_S, raw, ldr, rows, n, e, rt, dst, ldd);
}

void ert_qgemm_epi_avx512(const int32_t *raw, int64_t n, const struct ert_qgemm_epi *e, void *dst)
{
	epi_row(raw, n, e, ert_qgemm_rowv_e(e), dst);
}

void ert_qgemm_epi_rows_avx512(const int32_t *raw, int64_t ldr, int64_t rows, int64_t n,
			       const struct ert_qgemm_epi *e, const struct ert_qgemm_rows *rt,
			       void *dst, int64_t ldd)
{
	const bool fixed_rows =
		e->mode == ERT_QGEMM_OUT_FIXED && !e->mult && !e->shift && !e->t && !e->w;

	if (fixed_rows && !e->res) {
		/* s8 matters only with a residual: one copy */
		epi_rows_fixed(false, RES_NONE, raw, ldr, rows, n, e, rt, dst, ldd);
		return;
	}
	if (fixed_rows && e->res->fast) {
		epi_rows_res(raw, ldr, rows, n, e, rt, dst, ldd);
		return;
	}
	/* the general rows; a residual outside the 32-bit form in residual16()'s lanes */
	for (int64_t r = 0; r < rows; r++)
		epi_row(raw + r * ldr, n, e, ert_qgemm_rowv_at(e, rt, r, ldd), (char *)dst + r * ldd);
}
