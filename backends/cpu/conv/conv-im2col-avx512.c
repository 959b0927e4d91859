/* SPDX-License-Identifier: MIT */
/* The implicit im2col of strided windows by gathers and permutes at avx512 (conv-im2col.h). */
#include <immintrin.h>

#include "cpu/conv/conv-im2col.h"
#include "cpu/gemm/sgemm.h"

/*
 * How one 16-column vector of a panel's row is read at one tap of a window
 * of several taps, the same for every input plane: its real lanes' offsets
 * span at most 32 floats (one window), or two such spans (two windows: the
 * vector crosses onto the next output row), or neither (a gather), or it
 * has none (zeros).
 */
enum { VEC_ZERO, VEC_WIN1, VEC_WIN2, VEC_GATHER };

struct vec_plan {
	int32_t at[2];          /* each window's first float in the plane */
	__mmask16 lanes[2];     /* the lanes each window fills */
	__mmask16 lo[2], hi[2]; /* the floats each window loads: [at, at + 16), [at + 16, at + 32) */
	int kind;
};

/* Window @i of @p from @plane: two masked loads (none past its last float) and a permute. */
static inline __attribute__((always_inline)) __m512 win_read(const struct vec_plan *p, int i,
							     __m512i perm, const float *plane)
{
	const float *s = plane + p->at[i];
	__m512 a = _mm512_maskz_loadu_ps(p->lo[i], s), b = _mm512_maskz_loadu_ps(p->hi[i], s + 16);

	return _mm512_maskz_permutex2var_ps(p->lanes[i], a, perm, b);
}

/* Plan the offsets @vi (-1: zero) into @p; @perm gets each lane's place in its window. */
static void plan_vec(__m512i vi, struct vec_plan *p, int32_t *perm)
{
	__mmask16 left = _mm512_cmpge_epi32_mask(vi, _mm512_setzero_si512());
	__m512i pv = _mm512_setzero_si512();

	p->kind = VEC_ZERO;
	for (int i = 0; i < 2 && left; i++) {
		int32_t at = _mm512_mask_reduce_min_epi32(left, vi);
		__m512i d = _mm512_sub_epi32(vi, _mm512_set1_epi32(at));
		__mmask16 in = left & _mm512_cmplt_epu32_mask(d, _mm512_set1_epi32(32));
		int32_t span = _mm512_mask_reduce_max_epi32(in, d);

		p->at[i] = at;
		p->lanes[i] = in;
		p->lo[i] = (__mmask16)(span >= 15 ? 0xffff : (1u << (span + 1)) - 1);
		p->hi[i] = (__mmask16)(span < 16 ? 0 : span == 31 ? 0xffff : (1u << (span - 15)) - 1);
		pv = _mm512_mask_mov_epi32(pv, in, d);
		left &= (__mmask16)~in;
		p->kind = i ? VEC_WIN2 : VEC_WIN1;
	}
	if (left)
		p->kind = VEC_GATHER;
	_mm512_store_si512((void *)perm, pv);
}

/*
 * Rows [k0, k0 + kc) of a panel of @w columns for a window of @taps > 1
 * taps, offsets @idx as below: tap by tap and vector by vector, each
 * vector's plan (and its masks) held in registers across all the planes.
 */
static void panel_by_windows(const float *x, int64_t in_sp, int64_t taps, int64_t w, int nr16,
			     const int32_t *idx, int64_t k0, int64_t kc, float *dst)
{
	struct vec_plan plan[ERT_CONV_IM2COL_TAPS * ERT_SGEMM_NR_MAX / 16];
	int32_t perm[ERT_CONV_IM2COL_TAPS * ERT_SGEMM_NR_MAX] __attribute__((aligned(64)));

	for (int64_t t = 0; t < taps * nr16; t++)
		plan_vec(_mm512_load_si512((const void *)(idx + 16 * t)), plan + t, perm + 16 * t);
	for (int64_t t = 0; t < taps; t++) {
		/* the first row of the call at tap t, and its plane */
		const int64_t q0 = ((t - k0 % taps) % taps + taps) % taps;

		for (int v = 0; v < nr16; v++) {
			const struct vec_plan p = plan[t * nr16 + v];
			const __m512i pv = _mm512_load_si512((const void *)(perm + t * w + 16 * v));
			const __m512i vi = _mm512_load_si512((const void *)(idx + t * w + 16 * v));
			const __mmask16 in = _mm512_cmpge_epi32_mask(vi, _mm512_setzero_si512());
			const float *plane = x + (k0 + q0) / taps * in_sp;
			float *o = dst + q0 * w + 16 * v;
			const int64_t step = taps * w;

			if (p.kind == VEC_WIN1) {
				for (int64_t q = q0; q < kc; q += taps, o += step, plane += in_sp)
					_mm512_storeu_ps(o, win_read(&p, 0, pv, plane));
			} else if (p.kind == VEC_WIN2) {
				for (int64_t q = q0; q < kc; q += taps, o += step, plane += in_sp)
					_mm512_storeu_ps(o, _mm512_or_ps(win_read(&p, 0, pv, plane),
									 win_read(&p, 1, pv, plane)));
			} else if (p.kind == VEC_GATHER) {
				for (int64_t q = q0; q < kc; q += taps, o += step, plane += in_sp)
					_mm512_storeu_ps(o, _mm512_mask_i32gather_ps(_mm512_setzero_ps(), in,
										    vi, plane, 4));
			} else {
				for (int64_t q = q0; q < kc; q += taps, o += step)
					_mm512_storeu_ps(o, _mm512_setzero_ps());
			}
		}
	}
}

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

	/*
	 * Windows of several taps (3x3/2) by permutes where they can: on the
	 * Sapphire Rapids VM the gathers were most of the packing (a layer's
	 * input in L2), 3x3/2 128 -> 128 at 56x56 per tile of 256 columns and
	 * K block of 256 rows 0.20 -> 0.135 ms (warm), 0.22 -> 0.17 (from L3).
	 * A 1x1 window keeps the gathers row by row: by vectors its rows read
	 * each plane's lines three times over (0.067 -> 0.072 ms warm, 0.12 ->
	 * 0.14 from L3 for 1x1/2 256 -> 512).
	 */
	if (taps > 1) {
		panel_by_windows(x, in_sp, taps, w, nr16, idx, k0, kc, dst);
		return;
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
