/* SPDX-License-Identifier: MIT */
/*
 * int8 GEMM micro-kernel, AVX2 (level "avx2"): 4 rows x 16 columns, the
 * byte products through vpmaddwd on int16 as in the AVX-512 kernel (B quads
 * split into even and odd bytes, A as int16 pairs); 8 accumulators, four B
 * halves and two broadcasts fit the 16 ymm registers. Also the AVX2
 * epilogue: 8 lanes, the tail one element at a time.
 */
#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "cpu/ops/qlinear-kernels.h"
#include "cpu/qgemm/q8-avx2.h"
#include "cpu/qgemm/qgemm.h"
#include "ops/quant-fixed.h"

#define MR 4

static inline __attribute__((always_inline)) void
kernel_nv(const int NV, int64_t k4, const void *a, const uint8_t *b, int64_t bw, int32_t *c,
	  int64_t ldc, bool add)
{
	const uint8_t *ap = a;
	const __m256i lo_bytes = _mm256_set1_epi32(0x00ff00ff);
	__m256i acc[MR][2];

#pragma GCC unroll 4
	for (int i = 0; i < MR; i++)
#pragma GCC unroll 2
		for (int v = 0; v < NV; v++)
			acc[i][v] = add ? _mm256_loadu_si256((const __m256i *)(c + i * ldc + 8 * v))
					: _mm256_setzero_si256();
	for (int64_t p = 0; p < k4; p++) {
		__m256i be[2], bo[2];

#pragma GCC unroll 2
		for (int v = 0; v < NV; v++) {
			__m256i bv = _mm256_loadu_si256((const __m256i *)(b + 32 * v));

			be[v] = _mm256_and_si256(bv, lo_bytes);
			bo[v] = _mm256_srli_epi16(bv, 8);
		}
#pragma GCC unroll 4
		for (int i = 0; i < MR; i++) {
			int32_t q[2];

			memcpy(q, ap + 8 * i, 8);
			__m256i we = _mm256_set1_epi32(q[0]), wo = _mm256_set1_epi32(q[1]);

#pragma GCC unroll 2
			for (int v = 0; v < NV; v++)
				acc[i][v] = _mm256_add_epi32(
					acc[i][v], _mm256_add_epi32(_mm256_madd_epi16(be[v], we),
								    _mm256_madd_epi16(bo[v], wo)));
		}
		ap += 8 * MR;
		b += 4 * bw;
	}
#pragma GCC unroll 4
	for (int i = 0; i < MR; i++)
#pragma GCC unroll 2
		for (int v = 0; v < NV; v++)
			_mm256_storeu_si256((__m256i *)(c + i * ldc + 8 * v), acc[i][v]);
}

ERT_QGEMM_UKERNEL(1)
ERT_QGEMM_UKERNEL(2)

const struct ert_qgemm_kernel ert_qgemm_kernel_avx2 = {
	.name = "q8-gemm-4x16-avx2",
	.mr = MR, .vc = 8, .nv = 2,
	.kc4 = 192,
	.afmt = ERT_QGEMM_A_S16,
	.ukernel = { ukernel_1, ukernel_2, NULL },
	.epi = ert_qgemm_epi_avx2,
	.epi_rows = ert_qgemm_epi_rows_avx2,
};

/* ---- epilogue ---- */

static inline __m256d load_f(const struct ert_qgemm_epi *e, double f1, int64_t j)
{
	return e->f ? _mm256_loadu_pd(e->f + j) : _mm256_set1_pd(f1);
}

/* One element, as the scalar kernels compute it. */
static void epi_one(const int32_t *raw, int64_t j, const struct ert_qgemm_epi *e, void *dst)
{
	uint32_t v = (uint32_t)raw[j] + e->c0;
	double f = e->f ? e->f[j] : e->f1;
	int64_t q;

	if (e->u)
		v += e->c1 * (uint32_t)e->u[j];
	if (e->t)
		v += e->c2 * (uint32_t)e->t[j];
	if (e->w)
		v += (uint32_t)e->w[j];
	switch (e->mode) {
	case ERT_QGEMM_OUT_I32:
		((int32_t *)dst)[j] = (int32_t)v;
		return;
	case ERT_QGEMM_OUT_F32:
		((float *)dst)[j] = (float)((double)(int32_t)v * f);
		return;
	case ERT_QGEMM_OUT_FIXED:
		q = (int64_t)ert_requant_fixed((int32_t)v, e->mult ? e->mult[j] : e->mult1,
					       e->shift ? e->shift[j] : e->shift1) + e->zp;
		q = q < e->lo ? e->lo : q > e->hi ? e->hi : q;
		if (e->res) {
			const struct ert_q8_add *a = e->res;
			uint32_t sum = (uint32_t)a->ta[(uint8_t)q] + (uint32_t)a->tb[e->r[j]];

			q = ert_qout_fixed(&a->qo, (int32_t)sum, a->out_m, a->out_s);
		}
		break;
	case ERT_QGEMM_OUT_FLOAT: {
		double d = rint((double)(int32_t)v * f) + e->zp;

		q = !(d >= e->lo) ? e->lo : d > e->hi ? e->hi : (int64_t)d;
		break;
	}
	default:
		return;
	}
	((uint8_t *)dst)[j] = (uint8_t)q;
}

/* The fused residual of 8 outputs @q (values of the output type) and the bytes at @r. */
static inline __m256i residual8(const struct ert_q8_add *a, __m256i q, const uint8_t *r)
{
	const struct ert_q8_bin *p = &a->vp;
	__m128i rb = _mm_loadl_epi64((const __m128i *)r);
	__m256i da = _mm256_sub_epi32(q, _mm256_set1_epi32(p->azp));
	__m256i db = _mm256_sub_epi32(p->u8 ? _mm256_cvtepu8_epi32(rb) : _mm256_cvtepi8_epi32(rb),
				      _mm256_set1_epi32(p->bzp));
	__m256i s = ert_q8_add_fixed_avx2(da, db, p->am, p->as, p->bm, p->bs, p->m, p->s);

	s = _mm256_min_epi32(_mm256_max_epi32(s, _mm256_set1_epi32(p->lo - p->zp)),
			     _mm256_set1_epi32(p->hi - p->zp));
	return _mm256_add_epi32(s, _mm256_set1_epi32(p->zp));
}

/* Which input of the fused residual's Add (struct ert_q8_add) is the power-of-two one. */
enum res_form {
	RES_NONE,       /* no fused residual */
	RES_CONV_S,     /* the conv's output (in[0], p->shift == 0) */
	RES_CONV_G,     /* the residual (in[1]) */
};

static inline __m256i widen8(const uint8_t *p, bool s8)
{
	__m128i x = _mm_loadl_epi64((const __m128i *)p);

	return s8 ? _mm256_cvtepi8_epi32(x) : _mm256_cvtepu8_epi32(x);
}

/*
 * A convolution's fixed-rule rows (one multiplier and shift per row, no
 * per-column terms but colsum's u) 16 outputs at a time: the block's
 * constants once, each row's once, ert_q8_requant_fixed_avx2() with its
 * shifts as uniform counts and the sign put back by vpsignd, then the
 * clamp on bytes after saturating packs. The packs only saturate values
 * that lie outside [lo, hi] (which is inside the output type's range, int8
 * when hi <= 127) on the same side, so the clamped bytes are those of the
 * 32-bit clamp.
 *
 * With a fused residual (@res, e->res in the 32-bit form): the outputs'
 * values, clamped to [lo, hi] in 32-bit lanes (the type's range, as the
 * QLinearConv wrote them), and the residual's bytes of the same columns go
 * through the Add's lanes (ert_q8_addf_lanes_avx2(), as QLinearAdd runs
 * them), and only the sum's bytes are stored. The conv's zero point is
 * folded into the Add's constants (ert_q8_addf_fold_zp()), and both conv
 * halves are issued before the Add halves (docs/int8.md).
 *
 * Returns the columns done in every row (a multiple of 16); the caller
 * finishes the rest.
 */
static inline __attribute__((always_inline)) int64_t
epi_rows_fixed16(const bool s8, const enum res_form res, const int32_t *raw, int64_t ldr,
		 int64_t rows, int64_t n, const struct ert_qgemm_epi *e,
		 const struct ert_qgemm_rows *rt, uint8_t *dst, int64_t ldd)
{
	const __m256i rnd = _mm256_set1_epi64x(1LL << 30);
	const __m256i zp = _mm256_set1_epi16((int16_t)e->zp);
	const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
	const __m128i lo = _mm_set1_epi8((char)e->lo), hi = _mm_set1_epi8((char)e->hi);
	const __m256i lo32 = _mm256_set1_epi32(e->lo - e->zp), hi32 = _mm256_set1_epi32(e->hi - e->zp);
	/*
	 * a copy the stores cannot alias: its fields stay in registers; the
	 * conv's zero point folded in (the bias always added)
	 */
	const struct ert_q8_addf fp =
		res ? ert_q8_addf_fold_zp(e->res->fp, e->zp, res == RES_CONV_S, s8)
		    : (struct ert_q8_addf){ 0 };
	const int32_t *u = e->u;
	const int64_t n16 = n / 16 * 16;

	for (int64_t r = 0; r < rows && n16; r++) {
		/*
		 * the row's multiplier and shift constants loaded and broadcast
		 * from memory (ert_qgemm_shiftc), c1 only with colsum terms
		 */
		const struct ert_qgemm_shiftc *sc =
			ert_qgemm_shiftc_of(rt->shift1 ? rt->shift1[r] : e->shift1);
		const int32_t ls = sc->ls;
		const __m128i lsc = _mm_cvtsi32_si128(sc->ls), rsc = _mm_cvtsi32_si128(sc->rs);
		const __m256i c0 =
			_mm256_set1_epi32((int32_t)(e->c0 + (rt->c0 ? (uint32_t)rt->c0[r] : 0u)));
		const __m256i c1 = u ? _mm256_set1_epi32(rt->c1 ? rt->c1[r] : (int32_t)e->c1)
				     : _mm256_setzero_si256();
		const __m256i mult = _mm256_set1_epi32(*(rt->mult1 ? rt->mult1 + r : &e->mult1));
		const __m256i half = _mm256_set1_epi32(sc->half);
		const uint8_t *rres = e->r ? e->r + r * ldd : NULL;
		const int32_t *rr = raw + r * ldr;
		uint8_t *d = dst + r * ldd;

		for (int64_t j = 0; j < n16; j += 16) {
			__m256i v[2], w;

			for (int h = 0; h < 2; h++) {
				__m256i x = _mm256_add_epi32(
					_mm256_loadu_si256((const __m256i *)(rr + j + 8 * h)), c0);

				if (u)
					x = _mm256_add_epi32(x, _mm256_mullo_epi32(c1, _mm256_loadu_si256(
									(const __m256i *)(u + j + 8 * h))));
				if (ls)
					x = _mm256_sll_epi32(x, lsc);
				__m256i ev = _mm256_add_epi64(_mm256_mul_epi32(x, mult), rnd);
				__m256i od = _mm256_add_epi64(
					_mm256_mul_epi32(_mm256_srli_epi64(x, 32), mult), rnd);
				__m256i q = _mm256_blend_epi32(_mm256_srli_epi64(ev, 31),
							       _mm256_slli_epi64(od, 1), 0xaa);
				__m256i m = _mm256_srl_epi32(_mm256_add_epi32(_mm256_abs_epi32(q), half),
							     rsc);

				/* -m where q < 0; q == 0 gives m == 0 either way */
				v[h] = _mm256_sign_epi32(m, q);
			}
			/* the Add's halves after both conv halves: their inputs ready when issued */
			for (int h = 0; res && h < 2; h++) {
				__m256i wc = _mm256_min_epi32(_mm256_max_epi32(v[h], lo32), hi32);
				__m256i wr = widen8(rres + j + 8 * h, s8);

				/* the bias always: it holds the conv's zero point */
				v[h] = ert_q8_addf_lanes_avx2(&fp, res == RES_CONV_S ? wc : wr,
							      res == RES_CONV_S ? wr : wc, true, fp.adj,
							      true);
			}
			if (res) {
				w = ert_q8_addf_out16_avx2(&fp, v[0], v[1]);
				w = s8 ? _mm256_packs_epi16(w, w) : _mm256_packus_epi16(w, w);
				_mm_storeu_si128((__m128i *)(d + j), _mm256_castsi256_si128(
									_mm256_permutevar8x32_epi32(w, order)));
				continue;
			}
			w = _mm256_adds_epi16(_mm256_packs_epi32(v[0], v[1]), zp);
			w = s8 ? _mm256_packs_epi16(w, w) : _mm256_packus_epi16(w, w);
			__m128i b = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(w, order));

			b = s8 ? _mm_min_epi8(_mm_max_epi8(b, lo), hi)
			       : _mm_min_epu8(_mm_max_epu8(b, lo), hi);
			_mm_storeu_si128((__m128i *)(d + j), b);
		}
	}
	return n16;
}

static inline __attribute__((always_inline)) void
epi_row(const int32_t *raw, int64_t n, const struct ert_qgemm_epi *e, struct ert_qgemm_rowv rv,
	void *dst)
{
	const __m256i c0 = _mm256_set1_epi32((int32_t)rv.c0), c1 = _mm256_set1_epi32((int32_t)rv.c1);
	const __m256i c2 = _mm256_set1_epi32((int32_t)e->c2);
	const __m256i lo = _mm256_set1_epi32(e->lo - e->zp), hi = _mm256_set1_epi32(e->hi - e->zp);
	const __m256i zp = _mm256_set1_epi32(e->zp);
	/* byte 0 of each int32, per 128-bit half, then the two halves' dwords together */
	const __m256i pick = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
					      -1, -1, 0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1,
					      -1, -1, -1, -1);
	const __m256i join = _mm256_setr_epi32(0, 4, 0, 0, 0, 0, 0, 0);
	int64_t j = 0;

	for (; j + 8 <= n; j += 8) {
		__m256i v = _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(raw + j)), c0);

		if (e->u)
			v = _mm256_add_epi32(v, _mm256_mullo_epi32(
						c1, _mm256_loadu_si256((const __m256i *)(e->u + j))));
		if (e->t)
			v = _mm256_add_epi32(v, _mm256_mullo_epi32(
						c2, _mm256_loadu_si256((const __m256i *)(e->t + j))));
		if (e->w)
			v = _mm256_add_epi32(v, _mm256_loadu_si256((const __m256i *)(e->w + j)));
		switch (e->mode) {
		case ERT_QGEMM_OUT_I32:
			_mm256_storeu_si256((__m256i *)((int32_t *)dst + j), v);
			continue;
		case ERT_QGEMM_OUT_FIXED: {
			__m256i mu = e->mult ? _mm256_loadu_si256((const __m256i *)(e->mult + j))
					     : _mm256_set1_epi32(rv.mult1);
			__m256i sh = e->shift ? _mm256_loadu_si256((const __m256i *)(e->shift + j))
					      : _mm256_set1_epi32(rv.shift1);

			v = ert_q8_requant_fixed_avx2(v, mu, sh);
			v = _mm256_add_epi32(_mm256_min_epi32(_mm256_max_epi32(v, lo), hi), zp);
			if (e->res)
				v = residual8(e->res, v, rv.r + j);
			break;
		}
		case ERT_QGEMM_OUT_FLOAT: {
			__m128i r0 = ert_q8_requant_float4_avx2(_mm256_castsi256_si128(v), load_f(e, rv.f1, j),
								e->zp, e->lo, e->hi);
			__m128i r1 = ert_q8_requant_float4_avx2(_mm256_extracti128_si256(v, 1),
								load_f(e, rv.f1, j + 4), e->zp, e->lo, e->hi);

			v = _mm256_set_m128i(r1, r0);
			break;
		}
		case ERT_QGEMM_OUT_F32: {
			float *o = (float *)dst + j;
			__m256d d0 = _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(v)),
						   load_f(e, rv.f1, j));
			__m256d d1 = _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(v, 1)),
						   load_f(e, rv.f1, j + 4));

			_mm_storeu_ps(o, _mm256_cvtpd_ps(d0));
			_mm_storeu_ps(o + 4, _mm256_cvtpd_ps(d1));
			continue;
		}
		}
		v = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(v, pick), join);
		_mm_storel_epi64((__m128i *)((uint8_t *)dst + j), _mm256_castsi256_si128(v));
	}
	if (j < n) {
		struct ert_qgemm_epi t = *e;

		t.c0 = rv.c0;
		t.c1 = rv.c1;
		t.mult1 = rv.mult1;
		t.shift1 = rv.shift1;
		t.f1 = rv.f1;
		t.r = rv.r;
		for (; j < n; j++)
			epi_one(raw, j, &t, dst);
	}
}

void ert_qgemm_epi_avx2(const int32_t *raw, int64_t n, const struct ert_qgemm_epi *e, void *dst)
{
	epi_row(raw, n, e, ert_qgemm_rowv_e(e), dst);
}

/* The fixed rows with e->res in the Add's 32-bit form: one copy per type and form. */
static int64_t epi_rows_res(const int32_t *raw, int64_t ldr, int64_t rows, int64_t n,
			    const struct ert_qgemm_epi *e, const struct ert_qgemm_rows *rt,
			    uint8_t *dst, int64_t ldd)
{
	if (e->res->fp.s8)
		return e->res->shift ? epi_rows_fixed16(true, RES_CONV_G, raw, ldr, rows, n, e, rt, dst, ldd)
				     : epi_rows_fixed16(true, RES_CONV_S, raw, ldr, rows, n, e, rt, dst, ldd);
	return e->res->shift ? epi_rows_fixed16(false, RES_CONV_G, raw, ldr, rows, n, e, rt, dst, ldd)
			     : epi_rows_fixed16(false, RES_CONV_S, raw, ldr, rows, n, e, rt, dst, ldd);
}

void ert_qgemm_epi_rows_avx2(const int32_t *raw, int64_t ldr, int64_t rows, int64_t n,
			     const struct ert_qgemm_epi *e, const struct ert_qgemm_rows *rt,
			     void *dst, int64_t ldd)
{
	const bool fixed_rows =
		e->mode == ERT_QGEMM_OUT_FIXED && !e->mult && !e->shift && !e->t && !e->w;
	int64_t j = 0;

	if (fixed_rows && !e->res)
		j = e->hi <= 127 ? epi_rows_fixed16(true, RES_NONE, raw, ldr, rows, n, e, rt, dst, ldd)
				 : epi_rows_fixed16(false, RES_NONE, raw, ldr, rows, n, e, rt, dst, ldd);
	else if (fixed_rows && e->res->fast && e->res->fp.s8 == (e->hi <= 127))
		j = epi_rows_res(raw, ldr, rows, n, e, rt, dst, ldd);
	/* else (and for the last columns) the general rows, a residual in residual8()'s lanes */
	if (j == n)
		return;
	/* the columns from j (only the fixed rows above skip any): u and r moved along */
	struct ert_qgemm_epi t = *e;

	t.u = e->u ? e->u + j : NULL;
	t.r = e->r ? e->r + j : NULL;
	for (int64_t r = 0; r < rows; r++)
		epi_row(raw + r * ldr + j, n - j, &t, ert_qgemm_rowv_at(&t, rt, r, ldd),
			(uint8_t *)dst + r * ldd + j);
}
