/* SPDX-License-Identifier: MIT */
/*
 * dwconv-tmpl.h — the depthwise plane kernel of one level (see dwconv.h),
 * included by dwconv-<level>.c after it has defined DW_LEVEL (the level's
 * struct ert_dwconv_level), DW_NAME and DW_NAME3 (its 3x3 planes), and
 * ERT_SIMD_AVX512 for AVX-512.
 *
 * Each output row: whole blocks with every tap inside, four at a time (four
 * independent FMA chains), then the blocks at the edges with per-lane tap
 * masks. The activation type is a constant inside each instance of the
 * plane loop, so its switch folds away.
 */
#ifndef ERT_CPU_DWCONV_TMPL_H
#define ERT_CPU_DWCONV_TMPL_H

#include <string.h>

#include "cpu/conv/dwconv.h"
#include "cpu/conv/dwconv-impl.h"
#include "cpu/vec/vact.h"
#include "cpu/vec/window-simd.h"

/* Residual, then the activation @a of type @t on one block; stored. */
SIMD_INLINE void dw_finish_a(struct ert_act_desc a, enum ert_act t, vf acc, const float *res,
			     float *y, vm m, bool whole)
{
	a.type = t;
	if (res)
		acc = vf_add(acc, whole ? vf_ld(res) : vf_ldm(res, m));
	acc = vact(&a, acc);
	if (whole)
		vf_st(y, acc);
	else
		vf_stm(y, m, acc);
}

/* The same with the activation of @w. */
SIMD_INLINE void dw_finish(const struct ert_vec_win *w, enum ert_act t, vf acc, const float *res,
			   float *y, vm m, bool whole)
{
	dw_finish_a(w->act, t, acc, res, y, m, whole);
}

/* @U whole blocks from column c0, every tap inside. */
SIMD_INLINE void dw_full(const struct ert_vec_win *w, enum ert_act t, const float *const *rows,
			 const int64_t *tap0, int nr, const float *k, float bias,
			 const float *res, int64_t c0, const int U, float *yr)
{
	const struct ert_conv_geom *g = w->g;
	const int64_t s = g->stride[2];
	vf acc[4];

	for (int u = 0; u < U; u++)
		acc[u] = vf_set1(bias);
	for (int r = 0; r < nr; r++)
		for (int64_t kw = 0; kw < g->k[2]; kw++) {
			const float *p = rows[r] + c0 * s + w->off[kw];
			vf wv = vf_set1(k[tap0[r] + kw]);

			for (int u = 0; u < U; u++)
				acc[u] = vf_fma(wv, win_ld_full(p + u * VW * s, s), acc[u]);
		}
	for (int u = 0; u < U; u++)
		dw_finish(w, t, acc[u], res ? res + c0 + u * VW : NULL, yr + c0 + u * VW, vm_all(),
			  true);
}

/* One block of @nl lanes at c0; a lane skips the taps that fall outside the row. */
SIMD_INLINE void dw_part(const struct ert_vec_win *w, enum ert_act t, const float *const *rows,
			 const int64_t *tap0, int nr, const float *k, float bias,
			 const float *res, int64_t c0, int64_t nl, float *yr)
{
	const struct ert_conv_geom *g = w->g;
	const int64_t s = g->stride[2];
	vf acc = vf_set1(bias);

	for (int r = 0; r < nr; r++)
		for (int64_t kw = 0; kw < g->k[2]; kw++) {
			int64_t la, lb;

			win_lanes(w, kw, c0, nl, &la, &lb);
			if (la >= lb)
				continue;
			vf x = win_ld_part(rows[r] + c0 * s + w->off[kw], s, la, lb);

			acc = vf_sel(vm_range(la, lb), vf_fma(vf_set1(k[tap0[r] + kw]), x, acc), acc);
		}
	dw_finish(w, t, acc, res ? res + c0 : NULL, yr + c0, vm_first(nl), false);
}

#ifndef DW_PLAIN_EDGE_STORES
#define DW_PLAIN_EDGE_STORES 0
#endif

/* Floats of the zero-padded input strip (32 KiB, on the stack). */
#define DW_BUF 8192

/* Lane i reads p[i * s]; everything read lies inside the padded strip. */
SIMD_INLINE vf dw_ld(const float *p, int64_t s)
{
	return s == 1 ? vf_ld(p) : s == 2 ? vf_ld_s2(p) : vf_gather_s(p, s, vm_all());
}

/* Geometry of the padded strip of a 2-D plane. */
struct dw_strip {
	int64_t pw;          /* floats per padded row */
	int64_t nb;          /* vector blocks per output row */
	int64_t rows;        /* output rows per strip */
};

/*
 * A 2-D plane whose padded strip of at least one output row fits DW_BUF:
 * output columns rounded up to whole vectors, input rows copied between
 * zero margins, so that every tap of every block is a plain load. A zero
 * tap adds w * 0 = +0, which leaves every sum but -0 unchanged (the im2col
 * convolution pads with zeros the same way).
 */
static bool dw_strip_of(const struct ert_conv_geom *g, struct dw_strip *st)
{
	int64_t s = g->stride[2], owp = (g->out[2] + VW - 1) / VW * VW;
	int64_t span = (g->k[1] - 1) * g->dil[1] + 1;

	if (g->in[0] != 1 || g->out[0] != 1 || g->k[0] != 1)
		return false;
	st->pw = (owp - 1) * s + (g->k[2] - 1) * g->dil[2] + 1;
	st->nb = owp / VW;
	if (st->pw > DW_BUF || DW_BUF / st->pw < span)
		return false;
	st->rows = (DW_BUF / st->pw - span) / g->stride[1] + 1;
	return true;
}

/* Padded rows [0, n) of the strip whose first padded row is input row @iy0. */
static void dw_fill(const struct ert_conv_geom *g, const struct dw_strip *st, const float *x,
		    int64_t iy0, int64_t n, float *buf)
{
	int64_t pl = g->pad_b[2] < st->pw ? g->pad_b[2] : st->pw;
	int64_t cnt = st->pw - pl < g->in[2] ? st->pw - pl : g->in[2];

	for (int64_t r = 0; r < n; r++) {
		float *row = buf + r * st->pw;
		int64_t iy = iy0 + r;

		if (iy < 0 || iy >= g->in[1]) {
			memset(row, 0, (size_t)st->pw * sizeof(float));
			continue;
		}
		memset(row, 0, (size_t)pl * sizeof(float));
		memcpy(row + pl, x + iy * g->in[2], (size_t)cnt * sizeof(float));
		memset(row + pl + cnt, 0, (size_t)(st->pw - pl - cnt) * sizeof(float));
	}
}

/* @U (row, block) items from item @it of the strip at output row @oh0. */
SIMD_INLINE void dw_tile(const struct ert_vec_win *w, enum ert_act t, const struct dw_strip *st,
			 const float *buf, int64_t oh0, int64_t it, const int U, const float *k,
			 float bias, const float *res, float *y)
{
	const struct ert_conv_geom *g = w->g;
	const int64_t s = g->stride[2], OW = g->out[2];
	const float *base[4];
	int64_t out[4], lanes[4];
	vf acc[4];

	for (int u = 0; u < U; u++) {
		int64_t r = (it + u) / st->nb, b = (it + u) % st->nb;

		base[u] = buf + r * g->stride[1] * st->pw + b * VW * s;
		out[u] = (oh0 + r) * OW + b * VW;
		lanes[u] = OW - b * VW < VW ? OW - b * VW : VW;
		acc[u] = vf_set1(bias);
	}
	for (int64_t kh = 0; kh < g->k[1]; kh++)
		for (int64_t kw = 0; kw < g->k[2]; kw++) {
			int64_t off = kh * g->dil[1] * st->pw + kw * g->dil[2];
			vf wv = vf_set1(k[kh * g->k[2] + kw]);

			for (int u = 0; u < U; u++)
				acc[u] = vf_fma(wv, dw_ld(base[u] + off, s), acc[u]);
		}
	for (int u = 0; u < U; u++)
		dw_finish(w, t, acc[u], res ? res + out[u] : NULL, y + out[u], vm_first(lanes[u]),
			  lanes[u] == VW);
}

SIMD_INLINE void dw_plane_strips(const struct ert_vec_win *w, enum ert_act t,
				 const struct dw_strip *st, const float *x, const float *k,
				 float bias, const float *res, float *y, float *buf)
{
	const struct ert_conv_geom *g = w->g;
	const int64_t span = (g->k[1] - 1) * g->dil[1] + 1;

	for (int64_t oh0 = 0; oh0 < g->out[1]; oh0 += st->rows) {
		int64_t nr = g->out[1] - oh0 < st->rows ? g->out[1] - oh0 : st->rows;
		int64_t items = nr * st->nb, it = 0;

		dw_fill(g, st, x, oh0 * g->stride[1] - g->pad_b[1], (nr - 1) * g->stride[1] + span,
			buf);
		/* four independent accumulators: across blocks and rows alike */
		for (; it + 4 <= items; it += 4)
			dw_tile(w, t, st, buf, oh0, it, 4, k, bias, res, y);
		for (; it < items; it++)
			dw_tile(w, t, st, buf, oh0, it, 1, k, bias, res, y);
	}
}

/* @buf: DW_BUF floats of scratch */
SIMD_INLINE void dw_plane_t(const struct ert_vec_win *w, enum ert_act t, const float *x,
			    const float *k, float bias, const float *res, float *y, float *buf)
{
	const struct ert_conv_geom *g = w->g;
	struct dw_strip st;

	if (dw_strip_of(g, &st)) {
		dw_plane_strips(w, t, &st, x, k, bias, res, y, buf);
		return;
	}
	/* wider planes and 3-D: straight from the input, edges masked per lane */
	const int64_t OW = g->out[2];
	const float *rows[ERT_VEC_WIN_MAX];
	int64_t tap0[ERT_VEC_WIN_MAX];

	for (int64_t od = 0; od < g->out[0]; od++)
		for (int64_t oh = 0; oh < g->out[1]; oh++) {
			int64_t o = (od * g->out[1] + oh) * OW, c0 = 0;
			const float *rr = res ? res + o : NULL;
			int nr = win_rows(w, x, od, oh, rows, tap0);

			while (c0 < OW) {
				int64_t nl = OW - c0 < VW ? OW - c0 : VW, nb = 0;

				while (nb < 4 && c0 >= w->in_lo && c0 + (nb + 1) * VW - 1 <= w->in_hi &&
				       c0 + (nb + 1) * VW <= OW)
					nb++;
				if (nb == 4) {
					dw_full(w, t, rows, tap0, nr, k, bias, rr, c0, 4, y + o);
					c0 += 4 * VW;
				} else if (nb > 0) {
					dw_full(w, t, rows, tap0, nr, k, bias, rr, c0, 1, y + o);
					c0 += VW;
				} else {
					dw_part(w, t, rows, tap0, nr, k, bias, rr, c0, nl, y + o);
					c0 += nl;
				}
			}
		}
}

/*
 * 3x3 planes (ert_dwconv_is_3x3()): DW3_RB(S) output rows per pass over a
 * block of VW output columns. Each input row's three taps are loaded once
 * and feed every output row of the pass whose window covers that row; the
 * nine weights stay in registers; nothing is copied. Rows above and below
 * the input read ert_dw3_zero_row; blocks whose loads would reach past a
 * row's ends (the edges, a short last block) load through lane masks that
 * give 0 there. Padding so adds w * 0, as in the strip path above.
 * AVX-512 has the registers for 8 rows a pass at stride 1 (4 at stride 2):
 * twice the independent FMA chains, each row's taps in the same order, so
 * the same bits (dwconv-bench, warm, 1 thread, Sapphire Rapids, 4 rounds
 * alternated, medians: 960 x 7^2 18.3 -> 19.6 GFLOP/s, 576 x 14^2 about
 * 3 % faster).
 */
#if defined(ERT_SIMD_AVX512)
#define DW3_RB(S) ((S) == 1 ? 8 : 4)
#else
#define DW3_RB(S) ((S) == 1 ? 4 : 2)
#endif
/* input rows of one pass: (DW3_RB - 1) * S + 3, at most 10 */
#define DW3_NI_MAX 10
/* floats read from an input row per block: VW * S + 2 */
#define DW3_SPAN(S) (VW * (S) + 2)

/* VW floats at p + off; through mask m[i] on an edge block. */
SIMD_INLINE vf dw3_ld(const float *p, int off, const vm *m, int i, const bool edge)
{
	return edge ? vf_ldm(p + off, m[i]) : vf_ld(p + off);
}

/* First float of raw load i of a row's taps (see dw3_taps). */
SIMD_INLINE int dw3_off(const int S, int i)
{
	return S == 1 ? i : (i & 1) * VW + (i & 2);
}

/*
 * The three taps of the input row at @p: lane j of t[kw] is p[j * S + kw].
 * Stride 2 loads two vectors for kw = 0, 1 and two for kw = 2 and takes the
 * even and odd floats. On AVX2 the in-lane shuffle leaves the lanes in the
 * order of output columns 0 1 4 5 2 3 6 7; every tap has that same order,
 * so the sums are put right once, in dw3_order().
 */
SIMD_INLINE void dw3_taps(const float *p, const int S, const vm *m, const bool edge, vf *t)
{
	if (S == 1) {
		for (int kw = 0; kw < 3; kw++)
			t[kw] = dw3_ld(p, kw, m, kw, edge);
		return;
	}
	vf lo = dw3_ld(p, dw3_off(2, 0), m, 0, edge), hi = dw3_ld(p, dw3_off(2, 1), m, 1, edge);
	vf lo2 = dw3_ld(p, dw3_off(2, 2), m, 2, edge), hi2 = dw3_ld(p, dw3_off(2, 3), m, 3, edge);
#if defined(ERT_SIMD_AVX512)
	const vi even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
	const vi odd = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);

	t[0] = _mm512_permutex2var_ps(lo, even, hi);
	t[1] = _mm512_permutex2var_ps(lo, odd, hi);
	t[2] = _mm512_permutex2var_ps(lo2, even, hi2);
#else
	t[0] = _mm256_shuffle_ps(lo, hi, 0x88);
	t[1] = _mm256_shuffle_ps(lo, hi, 0xdd);
	t[2] = _mm256_shuffle_ps(lo2, hi2, 0x88);
#endif
}

/* Output columns back in order (AVX2, stride 2; see dw3_taps). */
SIMD_INLINE vf dw3_order(vf v, const int S)
{
#if defined(ERT_SIMD_AVX512)
	(void)S;
	return v;
#else
	return S == 1 ? v : _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(v), 0xd8));
#endif
}

/*
 * One block: acc[r] = bias + the window sum of output row r of the pass, for
 * the input rows rp[] from column @ix0. Each sum adds its taps in the order
 * (kh, kw) of the other paths.
 */
SIMD_INLINE void dw3_block(const vf *wv, vf vb, const float *const *rp, int64_t ix0,
			   const int S, const vm *m, const bool edge, vf *acc)
{
	const int RB = DW3_RB(S);

#pragma GCC unroll 8
	for (int r = 0; r < RB; r++)
		acc[r] = vb;
#pragma GCC unroll 10
	for (int i = 0; i < (RB - 1) * S + 3; i++) {
		vf t[3];

		dw3_taps(rp[i] + ix0, S, m, edge, t);
#pragma GCC unroll 8
		for (int r = 0; r < RB; r++) {
			const int kh = i - r * S;

			if (kh < 0 || kh > 2)
				continue;
#pragma GCC unroll 3
			for (int kw = 0; kw < 3; kw++)
				acc[r] = vf_fma(wv[kh * 3 + kw], t[kw], acc[r]);
		}
	}
}

/*
 * With DW_PLAIN_EDGE_STORES 1 (the level file's choice, default 0), partial
 * blocks are stored without masks where there is no residual (each output
 * float then depends on the input alone). On AMD's AVX2 cores a masked
 * store (vmaskmovps to memory) is microcoded and far slower than a plain
 * one: measured on Zen 3 (bench/dwconv-bench.c, warm, 1 thread), the 28x28,
 * 14x14 and 7x7 layers took 1.25-1.45x as long with masked stores. A row
 * wider than a vector ends with a whole block moved back to end at OW: it
 * writes the columns it shares with the block before it again, with the
 * same value (each lane adds the same taps in the same order wherever its
 * block starts). A row narrower than a vector (one block a row, stored in
 * increasing order) is stored whole, its extra lanes landing on the next
 * rows, which are stored later; only a block within the last VW floats of
 * the rows computed goes through the mask.
 *
 * Output rows [oh_lo, oh_hi) of a 3x3 plane, @y and @res at row oh_lo's
 * start, from @x holding input rows [iy0, iy1) (row iy at x + (iy - iy0) * W;
 * the whole plane: 0, H). Rows outside those read ert_dw3_zero_row: the
 * caller holds every row inside the input that the output rows read, so
 * a zero row only feeds the sums of a pass's rows past oh_hi, never stored.
 */
SIMD_INLINE void dw3_plane_t(const struct ert_vec_win *w, enum ert_act t, const int S,
			     const float *x, const float *k, float bias, const float *res, float *y,
			     int64_t oh_lo, int64_t oh_hi, int64_t iy0, int64_t iy1)
{
	const struct ert_conv_geom *g = w->g;
	const int64_t W = g->in[2], OH = oh_hi, OW = g->out[2];
	const int RB = DW3_RB(S), NI = (RB - 1) * S + 3;
	/* rows no wider than a vector, no residual: whole stores up to the last VW floats */
	const bool spill = DW_PLAIN_EDGE_STORES && !res && OW < VW;
	const int64_t n_out = (oh_hi - oh_lo) * OW;
	/* a copy the stores to y cannot alias, so its parameters stay in registers */
	const struct ert_act_desc act = w->act;
	const float *rp[DW3_NI_MAX];
	vf wv[9], acc[8], vb = vf_set1(bias);
	vm m[4];

	for (int i = 0; i < 9; i++)
		wv[i] = vf_set1(k[i]);
	for (int64_t oh0 = oh_lo; oh0 < OH; oh0 += RB) {
		int64_t nv = OH - oh0 < RB ? OH - oh0 : RB;

		for (int i = 0; i < NI; i++) {
			int64_t iy = oh0 * S - g->pad_b[1] + i;

			rp[i] = iy >= iy0 && iy < iy1 ? x + (iy - iy0) * W : ert_dw3_zero_row;
		}
		for (int64_t c = 0; c < OW; c += VW) {
			/* a row's short last block moved back to end at OW (see above) */
			int64_t c0 = DW_PLAIN_EDGE_STORES && !res && c + VW > OW && OW >= VW ? OW - VW : c;
			int64_t ix0 = c0 * S - g->pad_b[2], nl = OW - c0 < VW ? OW - c0 : VW;

			if (ix0 >= 0 && ix0 + DW3_SPAN(S) <= W) {
				dw3_block(wv, vb, rp, ix0, S, m, false, acc);
			} else {
				/* lane j of raw load i reads column ix0 + off + j: inside [0, W) */
				for (int i = 0; i < (S == 1 ? 3 : 4); i++)
					m[i] = vm_range(-ix0 - dw3_off(S, i), W - ix0 - dw3_off(S, i));
				dw3_block(wv, vb, rp, ix0, S, m, true, acc);
			}
			if (nv == RB && nl == VW) {
				for (int r = 0; r < RB; r++) {
					int64_t o = (oh0 - oh_lo + r) * OW + c0;

					dw_finish_a(act, t, dw3_order(acc[r], S), res ? res + o : NULL,
						    y + o, vm_all(), true);
				}
				continue;
			}
			/* a constant index into acc[] keeps it in registers */
			for (int r = 0; r < RB; r++) {
				int64_t o = (oh0 - oh_lo + r) * OW + c0;
				bool whole = nl == VW || (spill && o + VW <= n_out);

				if (r < nv)
					dw_finish_a(act, t, dw3_order(acc[r], S), res ? res + o : NULL,
						    y + o, vm_first(nl), whole);
			}
		}
	}
}

/* Rows of a 3x3 plane (dw3_plane_t); the whole plane: 0, OH, 0, H. */
struct dw_rows {
	int64_t oh_lo, oh_hi, iy0, iy1;
};

/* The plane kernel of activation @t: 3x3 (stride 1 or 2, rows @rr) or any other window. */
SIMD_INLINE void dw_plane_act(const struct ert_vec_win *w, enum ert_act t, bool three,
			      const float *x, const float *k, float bias, const float *res, float *y,
			      const struct dw_rows *rr)
{
	float buf[DW_BUF] __attribute__((aligned(64)));

	if (!three)
		dw_plane_t(w, t, x, k, bias, res, y, buf);
	else if (w->g->stride[2] == 1)
		dw3_plane_t(w, t, 1, x, k, bias, res, y, rr->oh_lo, rr->oh_hi, rr->iy0, rr->iy1);
	else
		dw3_plane_t(w, t, 2, x, k, bias, res, y, rr->oh_lo, rr->oh_hi, rr->iy0, rr->iy1);
}

/*
 * Under AddressSanitizer (make SAN=1, the fuzz build) one plane kernel serves
 * every activation, its type switched on per block: the nine copies with the
 * type folded make clang and gcc take minutes over this file there, and the
 * sanitizers check the same loads, stores and arithmetic either way. The
 * optimised build keeps a copy per activation.
 */
#if defined(__SANITIZE_ADDRESS__)
#define DW_ONE_ACT_COPY 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DW_ONE_ACT_COPY 1
#endif
#endif

/*
 * fn(w, T, ...) with the activation type T a constant for ReLU, Clip and
 * none, whose copies fold it (MobileNet's ReLU6 is a Clip), and
 * w->act.type for the others; w->act.type always under DW_ONE_ACT_COPY.
 */
#ifdef DW_ONE_ACT_COPY
#define DW_ACT3_CALL(fn, w, ...) fn(w, (w)->act.type, __VA_ARGS__)
#else
#define DW_ACT3_CALL(fn, w, ...)                                                   \
	do {                                                                       \
		switch ((w)->act.type) {                                           \
		case ERT_ACT_RELU: fn(w, ERT_ACT_RELU, __VA_ARGS__); break;        \
		case ERT_ACT_CLIP: fn(w, ERT_ACT_CLIP, __VA_ARGS__); break;        \
		case ERT_ACT_NONE: fn(w, ERT_ACT_NONE, __VA_ARGS__); break;        \
		default: fn(w, (w)->act.type, __VA_ARGS__); break;                 \
		}                                                                  \
	} while (0)
#endif

static void dw_plane_any(const struct ert_vec_win *w, bool three, const float *x, const float *k,
			 float bias, const float *res, float *y, const struct dw_rows *rr)
{
#ifdef DW_ONE_ACT_COPY
	dw_plane_act(w, w->act.type, three, x, k, bias, res, y, rr);
#else
	switch (w->act.type) {
	case ERT_ACT_RELU: dw_plane_act(w, ERT_ACT_RELU, three, x, k, bias, res, y, rr); break;
	case ERT_ACT_CLIP: dw_plane_act(w, ERT_ACT_CLIP, three, x, k, bias, res, y, rr); break;
	case ERT_ACT_LEAKY_RELU:
		dw_plane_act(w, ERT_ACT_LEAKY_RELU, three, x, k, bias, res, y, rr);
		break;
	case ERT_ACT_SIGMOID: dw_plane_act(w, ERT_ACT_SIGMOID, three, x, k, bias, res, y, rr); break;
	case ERT_ACT_HARD_SWISH:
		dw_plane_act(w, ERT_ACT_HARD_SWISH, three, x, k, bias, res, y, rr);
		break;
	case ERT_ACT_HARD_SIGMOID:
		dw_plane_act(w, ERT_ACT_HARD_SIGMOID, three, x, k, bias, res, y, rr);
		break;
	case ERT_ACT_TANH: dw_plane_act(w, ERT_ACT_TANH, three, x, k, bias, res, y, rr); break;
	case ERT_ACT_GELU: dw_plane_act(w, ERT_ACT_GELU, three, x, k, bias, res, y, rr); break;
	case ERT_ACT_NONE:
	default: dw_plane_act(w, ERT_ACT_NONE, three, x, k, bias, res, y, rr); break;
	}
#endif
}

static void dw_plane(const struct ert_vec_win *w, const float *x, const float *k, float bias,
		     const float *res, float *y)
{
	dw_plane_any(w, false, x, k, bias, res, y, NULL);
}

static void dw_plane3(const struct ert_vec_win *w, const float *x, const float *k, float bias,
		      const float *res, float *y)
{
	struct dw_rows rr = { 0, w->g->out[1], 0, w->g->in[1] };

	dw_plane_any(w, true, x, k, bias, res, y, &rr);
}

static void dw_band3(const struct ert_vec_win *w, const float *x, const float *k, float bias,
		     float *y, int64_t oh0, int64_t oh1, int64_t iy0, int64_t iy1)
{
	struct dw_rows rr = { oh0, oh1, iy0, iy1 };

	dw_plane_any(w, true, x, k, bias, NULL, y, &rr);
}

/*
 * Flat 3x3 planes: stride 1, "same" size (OH = H, OW = W), rows narrower
 * than a vector and at most DW3F_MAX outputs. The plane's outputs in
 * order, VW to a vector, regardless of rows: 7x7 is 4 vectors where the
 * row passes compute 8 rows of 16 lanes, 14x14 13 where they compute 16.
 * Output o = (oh, ow) reads x[o + (kh - pad) * W + (kw - pad)], so tap t
 * of vector v is one load at a fixed offset, through a mask (lanes whose
 * tap falls outside the input, and past the plane, read 0) that depends
 * on the geometry alone: the masks are built once per range of planes,
 * and the activation switch is taken once per range. Each output adds
 * bias, then its nine taps w * x (w * 0 for padding) in (kh, kw) order,
 * as dw3_block(): the same bits.
 */
#define DW3F_MAX 256
#define DW3F_NV (DW3F_MAX / VW)
#define DW3F_U 4

/* Are @rows output rows of @g's planes flat (all of them: the plane)? */
static bool dw3f_rows_ok(const struct ert_conv_geom *g, int64_t rows)
{
	return ert_dwconv_is_3x3(g) && g->stride[2] == 1 && g->out[1] == g->in[1] &&
	       g->out[2] == g->in[2] && g->out[2] < VW && rows * g->out[2] <= DW3F_MAX;
}

static bool dw3f_ok(const struct ert_conv_geom *g)
{
	return dw3f_rows_ok(g, g->out[1]);
}

struct dw3f {
	int nv;                      /* vectors a plane */
	int64_t n;                   /* outputs a plane (a band: its rows') */
	int64_t y_sp;                /* floats between output planes: n, or a band's y_cs */
	int64_t d[9];                /* offset of tap t from the output's index */
	vm m[DW3F_NV * 9];           /* tap t of vector v: m[v * 9 + t] */
};

/*
 * Output rows [oh0, oh1) of @g's planes (dw3f_rows_ok()), from input planes
 * holding rows from @iy0 on (dwconv.h's band; the whole plane: 0, OH, 0).
 * Output o of the band is row oh0 + o / W; its tap (kh, kw) reads input row
 * oh0 + o / W + kh - pt, at o + (oh0 - iy0 + kh - pt) W + kw - pl from the
 * band's input, masked by the rows and columns of the image as before.
 */
static void dw3f_init_rows(const struct ert_conv_geom *g, int64_t oh0, int64_t oh1, int64_t iy0,
			   struct dw3f *f)
{
	const int64_t H = g->in[1], W = g->in[2], pt = g->pad_b[1], pl = g->pad_b[2];
	float iota[VW];

	f->n = (oh1 - oh0) * W;
	f->y_sp = f->n;
	f->nv = (int)((f->n + VW - 1) / VW);
	for (int t = 0; t < 9; t++)
		f->d[t] = (oh0 - iy0 + t / 3 - pt) * W + (t % 3 - pl);
	for (int j = 0; j < VW; j++)
		iota[j] = (float)j;
	/*
	 * Once per range of planes, so in vectors: at two threads the pool runs
	 * a layer in 8 ranges, and masks built lane by lane (a division and nine
	 * tests a lane) cost about as much as the 14x14 layers' planes: 384 x
	 * 14^2 took 19 us at 2 threads before the flat planes, 30 with them.
	 * Output o's row is floor((o + 0.5) / W), exact here (o < 2^8, W < VW:
	 * the quotient is never within 1 / 32 of an integer), its column o - row W.
	 */
	for (int v = 0; v < f->nv; v++) {
		vf o = vf_add(vf_ld(iota), vf_set1((float)(v * VW)));
		vf oy = vf_round(vf_sub(vf_mul(vf_add(o, vf_set1(0.5f)), vf_set1(1.0f / (float)W)),
					vf_set1(0.5f)));
		vf ox = vf_sub(o, vf_mul(oy, vf_set1((float)W)));

		oy = vf_add(oy, vf_set1((float)oh0));
		vm in = vf_le(o, vf_set1((float)(f->n - 1)));

		for (int t = 0; t < 9; t++) {
			vf iy = vf_add(oy, vf_set1((float)(t / 3 - pt)));
			vf ix = vf_add(ox, vf_set1((float)(t % 3 - pl)));
			vm m = vm_and(vm_and(vf_ge(iy, vf_zero()), vf_le(iy, vf_set1((float)(H - 1)))),
				      vm_and(vf_ge(ix, vf_zero()), vf_le(ix, vf_set1((float)(W - 1)))));

			f->m[v * 9 + t] = vm_and(m, in);
		}
	}
}

static void dw3f_init(const struct ert_conv_geom *g, struct dw3f *f)
{
	dw3f_init_rows(g, 0, g->out[1], 0, f);
}

/* One plane of a group (dw3f_vecs). */
struct dw3f_pl {
	const float *x, *res;
	float *y;
	vf wv[9], vb;
};

/*
 * @U vectors from vector v of @P planes: each mask read once for the P
 * planes' loads (a kmovw on port 5 at avx512, which the FMAs share).
 */
SIMD_INLINE void dw3f_vecs(const struct dw3f *f, struct ert_act_desc act, enum ert_act t,
			   const struct dw3f_pl *q, const int P, int v, const int U)
{
	vf acc[2][DW3F_U];

	for (int p = 0; p < P; p++)
		for (int u = 0; u < U; u++)
			acc[p][u] = q[p].vb;
#pragma GCC unroll 9
	for (int i = 0; i < 9; i++)
		for (int u = 0; u < U; u++) {
			vm m = f->m[(v + u) * 9 + i];

			for (int p = 0; p < P; p++)
				acc[p][u] = vf_fma(q[p].wv[i],
						   vf_ldm(q[p].x + (v + u) * VW + f->d[i], m),
						   acc[p][u]);
		}
	for (int p = 0; p < P; p++)
		for (int u = 0; u < U; u++) {
			int64_t o = (int64_t)(v + u) * VW;
			bool whole = o + VW <= f->n;

			dw_finish_a(act, t, acc[p][u], q[p].res ? q[p].res + o : NULL, q[p].y + o,
				    whole ? vm_all() : vm_first(f->n - o), whole);
		}
}

/* Plane @pl of the job into @q. */
SIMD_INLINE void dw3f_pl_of(const struct dw3f *f, const struct ert_dwconv_args *a,
			    int64_t in_sp, int64_t pl, struct dw3f_pl *q)
{
	int64_t n = pl / a->m, m = pl % a->m;
	const float *k = a->w + m * 9;

	q->x = a->x + (n * a->c_in + m / a->m_g) * in_sp;
	q->res = a->res ? a->res + pl * f->y_sp : NULL;
	q->y = a->y + pl * f->y_sp;
	q->vb = vf_set1(a->bias ? a->bias[m] : 0.0f);
	for (int i = 0; i < 9; i++)
		q->wv[i] = vf_set1(k[i]);
}

/* @P planes from @pl. */
SIMD_INLINE void dw3f_group(const struct dw3f *f, struct ert_act_desc act, enum ert_act t,
			    const struct ert_dwconv_args *a, int64_t in_sp, int64_t pl,
			    const int P)
{
	struct dw3f_pl q[2];
	int v = 0;

	for (int p = 0; p < P; p++)
		dw3f_pl_of(f, a, in_sp, pl + p, &q[p]);
	for (; v + DW3F_U <= f->nv; v += DW3F_U)
		dw3f_vecs(f, act, t, q, P, v, DW3F_U);
	for (; v < f->nv; v++)
		dw3f_vecs(f, act, t, q, P, v, 1);
}

/*
 * Planes of a group: two at avx512 (2 x 9 weights and 2 x 4 sums in 32
 * registers), one at avx2 (16 registers).
 */
#if defined(ERT_SIMD_AVX512)
#define DW3F_P 2
#else
#define DW3F_P 1
#endif

/* Planes [p0, p1) of the job (dwconv.c's dw_range()), every one flat. */
SIMD_INLINE void dw3f_planes(const struct ert_vec_win *w, enum ert_act t, const struct dw3f *f,
			     const struct ert_dwconv_args *a, int64_t in_sp, int64_t p0, int64_t p1)
{
	const struct ert_act_desc act = w->act;
	int64_t pl = p0;

	for (; pl + DW3F_P <= p1; pl += DW3F_P)
		dw3f_group(f, act, t, a, in_sp, pl, DW3F_P);
	for (; pl < p1; pl++)
		dw3f_group(f, act, t, a, in_sp, pl, 1);
}

/*
 * Flat stride-2 3x3 planes (dw3e_init()): output rows narrower than a
 * vector, at most DW3E_MAX outputs (mobilenet_v2's 14 -> 7 at both
 * levels, 28 -> 14 at avx512). Each input row is split once into its even
 * and odd floats (two permutes a row, where the row passes split every
 * row again for each pass and each pair of taps: three permutes a row and
 * pass) and copied into four zeroed buffers by the parity of iy + pt and
 * of ix + pl, (iy, ix) at ((iy + pt) / 2) * P + (ix + pl) / 2, rows P >=
 * OW + 1 floats apart. Output (oh, ow), at padded index q = oh * P + ow,
 * then reads tap (kh, kw) at q + (kh / 2) * P + kw / 2 in buffer (kh & 1,
 * kw & 1): a plain load at a fixed offset, no mask. The padded outputs go
 * VW to a vector regardless of rows (14 -> 7: 4 vectors where the row
 * passes compute 8 rows of VW); a permute moves each vector's outputs to
 * its first lanes before the store. Each output adds bias, then its nine
 * taps w * x (w * +0 for padding) in (kh, kw) order, as dw3_block(): the
 * same bits (test-vec-levels holds the two to them).
 */
/*
 * Outputs a plane, at most: 192 x 28^2 -> 14^2 at avx512 (196 outputs,
 * rows of 14 in 16 lanes) gained nothing by rows' worth of permutes saved:
 * 28.0 -> 27.5 us at one thread, 16 -> 18 at two (the pool's 8 ranges
 * each zero 15 KB and build the permute indices).
 */
#define DW3E_MAX 64
#define DW3E_BUF 2048                /* floats of a plane's padded copy */
#define DW3E_NV 32                   /* padded output vectors a plane, at most */

#if defined(ERT_SIMD_AVX512)
#define DW3E_VI_LD(p) _mm512_loadu_si512(p)
#else
#define DW3E_VI_LD(p) _mm256_loadu_si256((const __m256i *)(p))
#endif

struct dw3e {
	int nv;                      /* padded output vectors */
	int64_t H, W, OH, OW, P, pt, pl;
	int64_t bsz;                 /* floats of one of the four buffers */
	int64_t o[9];                /* tap t: at q + o[t] from the plane's copy */
	vm m_e, m_o;                 /* a row's even and odd floats */
	/* padded vector v: its outputs' lanes first (idx), cnt of them, the first at start */
	vi idx[DW3E_NV];
	int64_t start[DW3E_NV], cnt[DW3E_NV];
};

/* The flat layout of @g, false where the planes are not flat. */
static bool dw3e_init(const struct ert_conv_geom *g, struct dw3e *f)
{
	int64_t ns, need;

	/* OW < VW: an input row is at most 2 VW + 1 - pads floats; the split takes 2 VW */
	if (!ert_dwconv_is_3x3(g) || g->stride[2] != 2 || g->out[2] >= VW || g->in[2] > 2 * VW ||
	    g->out[1] * g->out[2] > DW3E_MAX)
		return false;
	f->H = g->in[1], f->W = g->in[2], f->OH = g->out[1], f->OW = g->out[2];
	f->pt = g->pad_b[1], f->pl = g->pad_b[2];
	/* a row's taps at ow .. ow + 1 < P; its floats at 0 .. (W - 1 + pl) / 2 < P */
	f->P = f->OW + 1 > (f->W + f->pl + 1) / 2 ? f->OW + 1 : (f->W + f->pl + 1) / 2;
	ns = f->OH + 1 > (f->H + f->pt + 1) / 2 ? f->OH + 1 : (f->H + f->pt + 1) / 2;
	f->nv = (int)((f->OH * f->P + VW - 1) / VW);
	/* the last vector's lanes past the plane read up to P + 1 further */
	need = ns * f->P > f->nv * VW + f->P + 1 ? ns * f->P : f->nv * VW + f->P + 1;
	f->bsz = (need + VW - 1) / VW * VW;
	if (f->nv > DW3E_NV || 4 * f->bsz > DW3E_BUF)
		return false;
	for (int t = 0; t < 9; t++) {
		int kh = t / 3, kw = t % 3;

		f->o[t] = ((kh & 1) * 2 + (kw & 1)) * f->bsz + (kh >> 1) * f->P + (kw >> 1);
	}
	/*
	 * Once per range of planes (the pool runs a layer in 8 ranges at two
	 * threads), so no division a lane: with q % P, 192 x 28^2 s2 took 23
	 * us at two threads against 16 by rows.
	 */
	for (int v = 0, n = 0, oh = 0, ow = 0; v < f->nv; v++) {
		int32_t idx[VW] = { 0 };
		int c = 0;

		for (int j = 0; j < VW; j++) {
			if (oh < f->OH && ow < f->OW)
				idx[c++] = j;
			if (++ow == f->P)
				ow = 0, oh++;
		}
		f->idx[v] = DW3E_VI_LD(idx);
		f->start[v] = n;
		f->cnt[v] = c;
		n += c;
	}
	f->m_e = vm_first((f->W + 1) / 2);
	f->m_o = vm_first(f->W / 2);
	return true;
}


/* The even and odd floats of p[0 .. n), n <= 2 VW, in lane order; 0 past them. */
SIMD_INLINE void dw3e_split(const float *p, int64_t n, vf *e, vf *o)
{
	vf lo = vf_ldm(p, vm_range(0, n)), hi = vf_ldm(p + VW, vm_range(-VW, n - VW));
#if defined(ERT_SIMD_AVX512)
	const vi even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
	const vi odd = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);

	*e = _mm512_permutex2var_ps(lo, even, hi);
	*o = _mm512_permutex2var_ps(lo, odd, hi);
#else
	*e = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(lo, hi, 0x88)),
						    0xd8));
	*o = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(lo, hi, 0xdd)),
						    0xd8));
#endif
}

/* Lane idx[j] of @v to lane j. */
SIMD_INLINE vf dw3e_perm(vf v, vi idx)
{
#if defined(ERT_SIMD_AVX512)
	return _mm512_permutexvar_ps(idx, v);
#else
	return _mm256_permutevar8x32_ps(v, idx);
#endif
}

/* The plane at @x into @buf (zeroed once; only the input's floats are written). */
SIMD_INLINE void dw3e_copy(const struct dw3e *f, const float *x, float *buf)
{
	/* even ix + pl: the even floats to parity 0, the odd to 1; else the other way round */
	const int64_t pe = (f->pl & 1) * f->bsz, po = f->bsz - pe;
	const int64_t ce = f->pl >> 1, co = (f->pl + 1) >> 1;

	for (int64_t iy = 0; iy < f->H; iy++) {
		float *r = buf + ((iy + f->pt) & 1) * 2 * f->bsz + ((iy + f->pt) >> 1) * f->P;
		vf e, o;

		dw3e_split(x + iy * f->W, f->W, &e, &o);
		vf_stm(r + pe + ce, f->m_e, e);
		vf_stm(r + po + co, f->m_o, o);
	}
}

/* One plane of a group (dw3e_vecs). */
struct dw3e_pl {
	const float *res;
	float *y, *buf;
	vf wv[9], vb;
};

/*
 * @U padded output vectors from vector v of @P planes; each one's outputs
 * moved to its first lanes (a permute, port 5) and finished. As in
 * dw3_plane_t(), without a residual a vector is stored whole where it ends
 * inside the plane: its spare lanes land on outputs stored later.
 */
SIMD_INLINE void dw3e_vecs(const struct dw3e *f, struct ert_act_desc act, enum ert_act t,
			   const struct dw3e_pl *q, const int P, int v, const int U)
{
	const int64_t n = f->OH * f->OW;
	vf acc[2][DW3F_U];

	for (int p = 0; p < P; p++)
		for (int u = 0; u < U; u++)
			acc[p][u] = q[p].vb;
#pragma GCC unroll 9
	for (int i = 0; i < 9; i++)
		for (int u = 0; u < U; u++)
			for (int p = 0; p < P; p++)
				acc[p][u] = vf_fma(q[p].wv[i], vf_ld(q[p].buf + (v + u) * VW + f->o[i]),
						   acc[p][u]);
	for (int p = 0; p < P; p++)
		for (int u = 0; u < U; u++) {
			int64_t o = f->start[v + u];
			bool whole = DW_PLAIN_EDGE_STORES && !q[p].res && o + VW <= n;

			dw_finish_a(act, t, dw3e_perm(acc[p][u], f->idx[v + u]),
				    q[p].res ? q[p].res + o : NULL, q[p].y + o,
				    whole ? vm_all() : vm_first(f->cnt[v + u]), whole);
		}
}

/* Plane @pl of the job into @q. */
SIMD_INLINE void dw3e_pl_of(const struct dw3e *f, const struct ert_dwconv_args *a,
			    int64_t in_sp, int64_t pl, struct dw3e_pl *q)
{
	int64_t m = pl % a->m, out_sp = f->OH * f->OW;
	const float *k = a->w + m * 9;

	q->res = a->res ? a->res + pl * out_sp : NULL;
	q->y = a->y + pl * out_sp;
	q->vb = vf_set1(a->bias ? a->bias[m] : 0.0f);
	for (int i = 0; i < 9; i++)
		q->wv[i] = vf_set1(k[i]);
}

/* Scratch of one plane of a group: its padded copy. */
struct dw3e_scratch {
	float buf[DW3E_BUF] __attribute__((aligned(64)));
};

/* planes a group as dw3f's; copies in flight: the next group's, made before this one's sums */
#define DW3E_P DW3F_P
#define DW3E_NBUF (2 * DW3E_P)

/* Plane @pl of the job copied into @buf. */
SIMD_INLINE void dw3e_copy_pl(const struct dw3e *f, const struct ert_dwconv_args *a,
			      int64_t in_sp, int64_t pl, float *buf)
{
	int64_t n = pl / a->m, m = pl % a->m;

	dw3e_copy(f, a->x + (n * a->c_in + m / a->m_g) * in_sp, buf);
}

/* @P planes from @pl, copied into sc[(pl + p - p0) % DW3E_NBUF]. */
SIMD_INLINE void dw3e_group(const struct dw3e *f, struct ert_act_desc act, enum ert_act t,
			    const struct ert_dwconv_args *a, int64_t in_sp, int64_t pl,
			    const int P, struct dw3e_scratch *sc, int64_t p0)
{
	struct dw3e_pl q[2];
	int v = 0;

	for (int p = 0; p < P; p++) {
		dw3e_pl_of(f, a, in_sp, pl + p, &q[p]);
		q[p].buf = sc[(pl + p - p0) % DW3E_NBUF].buf;
	}
	for (; v + DW3F_U <= f->nv; v += DW3F_U)
		dw3e_vecs(f, act, t, q, P, v, DW3F_U);
	for (; v < f->nv; v++)
		dw3e_vecs(f, act, t, q, P, v, 1);
}

/*
 * Planes [p0, p1) of the job (dwconv.c's dw_range()), every one flat. A
 * group's loads span several of its copy's row stores, which cannot be
 * forwarded: they wait for the stores to reach L1. The next group's copy
 * is made first, so that those stores have drained by its turn.
 */
SIMD_INLINE void dw3e_planes(const struct ert_vec_win *w, enum ert_act t, const struct dw3e *f,
			     const struct ert_dwconv_args *a, int64_t in_sp, int64_t p0, int64_t p1)
{
	const struct ert_act_desc act = w->act;
	struct dw3e_scratch sc[DW3E_NBUF];
	int64_t pl = p0, copied = p0;

	/* the padding's floats are never written: zeroed once per range */
	for (int p = 0; p < DW3E_NBUF; p++)
		memset(sc[p].buf, 0, (size_t)(4 * f->bsz) * sizeof(float));
	while (pl < p1) {
		int P = pl + DW3E_P <= p1 ? DW3E_P : 1;
		int64_t ahead = pl + P + DW3E_P < p1 ? pl + P + DW3E_P : p1;

		for (; copied < ahead; copied++)
			dw3e_copy_pl(f, a, in_sp, copied, sc[(copied - p0) % DW3E_NBUF].buf);
		if (P == DW3E_P)
			dw3e_group(f, act, t, a, in_sp, pl, DW3E_P, sc, p0);
		else
			dw3e_group(f, act, t, a, in_sp, pl, 1, sc, p0);
		pl += P;
	}
}

/* Planes [p0, p1) of a 3x3 job, activation @t, stride @S, through dw3_plane_t(). */
SIMD_INLINE void dw3_planes(const struct ert_vec_win *w, enum ert_act t, const int S,
			    const struct ert_dwconv_args *a, int64_t in_sp, int64_t out_sp,
			    int64_t p0, int64_t p1)
{
	for (int64_t pl = p0; pl < p1; pl++) {
		int64_t n = pl / a->m, m = pl % a->m;

		dw3_plane_t(w, t, S, a->x + (n * a->c_in + m / a->m_g) * in_sp, a->w + m * 9,
			    a->bias ? a->bias[m] : 0.0f, a->res ? a->res + pl * out_sp : NULL,
			    a->y + pl * out_sp, 0, w->g->out[1], 0, w->g->in[1]);
	}
}

/*
 * The small stride-2 planes of dw_planes3(), in a frame of their own: its
 * 32 KiB of copies stay out of the other paths' frames.
 */
static __attribute__((noinline)) bool dw_planes3e(const struct ert_vec_win *w,
						   const struct ert_dwconv_args *a, int64_t in_sp,
						   int64_t p0, int64_t p1)
{
	struct dw3e e;

	if (!dw3e_init(w->g, &e))
		return false;
	DW_ACT3_CALL(dw3e_planes, w, &e, a, in_sp, p0, p1);
	return true;
}

/*
 * Planes [p0, p1) of a 3x3 job (ert_dwconv_run() hands each thread its range
 * in one call): flat where dw3f_ok() or dw3e_init() takes them, else plane by plane.
 */
static void dw_planes3(const struct ert_vec_win *w, const struct ert_dwconv_args *a,
		       int64_t in_sp, int64_t out_sp, int64_t p0, int64_t p1)
{
	struct dw3f f;

	if (w->g->stride[2] == 2 && dw_planes3e(w, a, in_sp, p0, p1))
		return;
	if (!dw3f_ok(w->g)) {
#ifndef DW_ONE_ACT_COPY
		/* ReLU6 (MobileNetV2): the 3x3 kernel straight, no call or switch a plane */
		if (w->act.type == ERT_ACT_CLIP) {
			if (w->g->stride[2] == 1)
				dw3_planes(w, ERT_ACT_CLIP, 1, a, in_sp, out_sp, p0, p1);
			else
				dw3_planes(w, ERT_ACT_CLIP, 2, a, in_sp, out_sp, p0, p1);
			return;
		}
#endif
		for (int64_t pl = p0; pl < p1; pl++) {
			int64_t n = pl / a->m, m = pl % a->m;

			dw_plane3(w, a->x + (n * a->c_in + m / a->m_g) * in_sp, a->w + m * 9,
				  a->bias ? a->bias[m] : 0.0f, a->res ? a->res + pl * out_sp : NULL,
				  a->y + pl * out_sp);
		}
		return;
	}
	dw3f_init(w->g, &f);
	DW_ACT3_CALL(dw3f_planes, w, &f, a, in_sp, p0, p1);
}

static bool dw_flat3(const struct ert_conv_geom *g)
{
	struct dw3e e;

	return dw3f_ok(g) || dw3e_init(g, &e);
}

static bool dw_band_flat3_ok(const struct ert_conv_geom *g, int64_t rows)
{
	return dw3f_rows_ok(g, rows);
}

/* Band @b of @a's planes flat (dw3f_init_rows()), every channel, one range. */
static void dw_band_flat3(const struct ert_vec_win *w, const struct ert_dwconv_args *a,
			  const struct ert_dwconv_band *b)
{
	struct dw3f f;

	dw3f_init_rows(w->g, b->oh0, b->oh1, b->iy0, &f);
	f.y_sp = b->y_cs;
	DW_ACT3_CALL(dw3f_planes, w, &f, a, b->x_cs, 0, a->m);
}

const struct ert_dwconv_level DW_LEVEL = {
	.name = DW_NAME, .plane = dw_plane, .name3 = DW_NAME3, .plane3 = dw_plane3,
	.band3 = dw_band3, .planes3 = dw_planes3, .flat3 = dw_flat3,
	.band_flat3_ok = dw_band_flat3_ok, .band_flat3 = dw_band_flat3,
};

#endif /* ERT_CPU_DWCONV_TMPL_H */
