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

/*
 * A row's constants of the fixed-rule output stage, as vectors: the shift
 * counts, the multiplier, and for the rounding in 64-bit lanes (requant16())
 * the constant k = 2^30 + half * 2^31, the sign bit it loses on negative
 * lanes (2^31, or 0 when rs = 0) and the count 31 + rs.
 */
struct fixed_row {
	__m512i c0, c1, mult, k, kneg, sh;
	int32_t ls;
};

/*
 * Row @r's constants (e's, or rt's row r over them): the multiplier and the
 * shift's (ert_qgemm_shiftc) broadcasts from memory.
 */
static inline struct fixed_row fixed_row_at(const struct ert_qgemm_epi *e,
					    const struct ert_qgemm_rows *rt, int64_t r,
					    const int32_t *u)
{
	const int32_t shift = rt->shift1 ? rt->shift1[r] : e->shift1;
	const int32_t *mult = rt->mult1 ? rt->mult1 + r : &e->mult1;
	const uint32_t c0 = e->c0 + (rt->c0 ? (uint32_t)rt->c0[r] : 0u);
	const struct ert_qgemm_shiftc *sc = ert_qgemm_shiftc_of(shift);

	return (struct fixed_row){
		.c0 = _mm512_set1_epi32((int32_t)c0),
		.c1 = u ? _mm512_set1_epi32(rt->c1 ? rt->c1[r] : (int32_t)e->c1)
			: _mm512_setzero_si512(),
		.mult = _mm512_set1_epi32(*mult),
		.k = _mm512_set1_epi64(sc->k),
		.kneg = _mm512_set1_epi64(sc->kneg),
		.sh = _mm512_set1_epi64(sc->sh),
		.ls = sc->ls,
	};
}

/*
 * 16 outputs of a fixed-rule row, ert_requant_fixed() on the row's
 * constants, before the clamp and the zero point. Both roundings in one
 * 64-bit arithmetic shift (docs/int8.md, "One rounding in 64-bit lanes"):
 * with p = x * m (m >= 0) and s = 1 where x < 0 and rs > 0,
 *
 *	requant = (p + 2^30 + (half - s) * 2^31) >> (31 + rs)
 *
 * s * 2^31 is bit 31 of a qword holding x in its low dword: x itself for
 * the even lanes, vpshufd's copy of the odd dwords for the odd ones. The
 * odd results come back into the high dwords by a masked vpshufd.
 */
static inline __attribute__((always_inline)) __m512i
requant16(const struct fixed_row *w, const int32_t *rr, const int32_t *u, __mmask16 m)
{
	__m512i x = _mm512_add_epi32(_mm512_maskz_loadu_epi32(m, rr), w->c0);

	if (u)
		x = _mm512_add_epi32(x, _mm512_mullo_epi32(w->c1, _mm512_maskz_loadu_epi32(m, u)));
	if (w->ls)      /* rare: a multiplier above 1 */
		x = _mm512_sllv_epi32(x, _mm512_set1_epi32(w->ls));
	__m512i xo = _mm512_shuffle_epi32(x, _MM_PERM_DDBB);
	__m512i ev = _mm512_sub_epi64(_mm512_add_epi64(_mm512_mul_epi32(x, w->mult), w->k),
				      _mm512_and_si512(x, w->kneg));
	__m512i od = _mm512_sub_epi64(_mm512_add_epi64(_mm512_mul_epi32(xo, w->mult), w->k),
				      _mm512_and_si512(xo, w->kneg));

	ev = _mm512_srav_epi64(ev, w->sh);
	od = _mm512_srav_epi64(od, w->sh);
	return _mm512_mask_shuffle_epi32(ev, 0xAAAA, od, _MM_PERM_CDAB);
}

/* requant16() clamped to [lo, hi] (the type's range less the zero point). */
static inline __attribute__((always_inline)) __m512i
fixed16(const struct fixed_row *w, const int32_t *rr, const int32_t *u, __mmask16 m, __m512i lo,
	__m512i hi)
{
	return _mm512_min_epi32(_mm512_max_epi32(requant16(w, rr, u, m), lo), hi);
}

static inline __mmask16 tail_mask(int64_t left)
{
	return left >= 16 ? 0xffff : left <= 0 ? 0 : (__mmask16)((1u << left) - 1);
}

/*
 * 48 results of requant16() (v[2]'s lanes past the row: anything) as the
 * bytes of clamp(v + zp, lo, hi) in the first 48 bytes: saturating packs to
 * int16, the zero point added saturating, packs to bytes (int8 when @s8,
 * that is hi <= 127; else uint8), the clamp on bytes, and one vpermd to put
 * the 128-bit lanes' dwords in order. A saturation only moves a value that
 * lies outside [lo, hi] (inside the byte type) further out on the same side,
 * so the bytes are those of the 32-bit clamp (as in the AVX2 epilogue).
 */
static inline __attribute__((always_inline)) __m512i
pack48(const bool s8, const __m512i v[3], __m512i zp16, __m512i lo8, __m512i hi8)
{
	/* per 128-bit lane L, dwords [v0, v1, v2, v2] of columns 4L .. 4L + 3 */
	const __m512i order =
		_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
	__m512i a = _mm512_adds_epi16(_mm512_packs_epi32(v[0], v[1]), zp16);
	__m512i b = _mm512_adds_epi16(_mm512_packs_epi32(v[2], v[2]), zp16);
	__m512i y = s8 ? _mm512_packs_epi16(a, b) : _mm512_packus_epi16(a, b);

	y = s8 ? _mm512_min_epi8(_mm512_max_epi8(y, lo8), hi8)
	       : _mm512_min_epu8(_mm512_max_epu8(y, lo8), hi8);
	return _mm512_permutexvar_epi32(order, y);
}

/*
 * The fixed-rule conv rows without a residual: per 48 columns (a
 * micro-tile's width; a row of the block is no wider) the column masks
 * once, then per row its constants, three requant16() and pack48() into
 * one masked byte store.
 */
static inline __attribute__((always_inline)) void
epi_rows_bytes(const bool s8, const int32_t *raw, int64_t ldr, int64_t rows, int64_t n,
	       const struct ert_qgemm_epi *e, const struct ert_qgemm_rows *rt, uint8_t *dst,
	       int64_t ldd)
{
	const __m512i zp16 = _mm512_set1_epi16((int16_t)e->zp);
	const __m512i lo8 = _mm512_set1_epi8((char)e->lo), hi8 = _mm512_set1_epi8((char)e->hi);
	const int32_t *u = e->u;

	for (int64_t j = 0; j < n; j += 48) {
		const int64_t left = n - j < 48 ? n - j : 48;
		const __mmask16 m0 = tail_mask(left), m1 = tail_mask(left - 16);
		const __mmask16 m2 = tail_mask(left - 32);
		const __mmask64 mb = (1ULL << left) - 1;
		const int32_t *uj = u ? u + j : NULL;

		for (int64_t r = 0; r < rows; r++) {
			const struct fixed_row w = fixed_row_at(e, rt, r, u);
			const int32_t *rr = raw + r * ldr + j;
			__m512i v[3];

			v[0] = requant16(&w, rr, uj, m0);
			v[1] = m1 ? requant16(&w, rr + 16, uj ? uj + 16 : NULL, m1)
				  : _mm512_setzero_si512();
			v[2] = m2 ? requant16(&w, rr + 32, uj ? uj + 32 : NULL, m2)
				  : _mm512_setzero_si512();
			_mm512_mask_storeu_epi8(dst + r * ldd + j, mb, pack48(s8, v, zp16, lo8, hi8));
		}
	}
}

/*
 * A convolution's fixed-rule rows (one multiplier and shift per row, no
 * per-column terms but colsum's u): the block's constants once and each
 * row's once (struct fixed_row), then requant16() on them, 16 lanes at a
 * time, the tail under a k-mask (without a residual: epi_rows_bytes()).
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
		const struct fixed_row w = fixed_row_at(e, rt, r, u);
		const int32_t *rr = raw + r * ldr;
		uint8_t *d = dst + r * ldd;

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
		/* the packs to bytes and the clamp on them: one copy per type */
		if (e->hi <= 127)
			epi_rows_bytes(true, raw, ldr, rows, n, e, rt, dst, ldd);
		else
			epi_rows_bytes(false, raw, ldr, rows, n, e, rt, dst, ldd);
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
