/* SPDX-License-Identifier: MIT */
/*
 * conv-stem-tmpl.h — the stem convolution kernels of one level (see
 * conv-stem.h), included by conv-stem-<level>.c after it has defined
 * ST_LEVEL (its struct ert_stem_level), ST_NAME, ST_CO (output channels per
 * tile), ST_P (pixel blocks per tile) and ERT_SIMD_AVX512 for AVX-512.
 *
 * A tile is CO output channels by P blocks of VW pixels: CO x P accumulators,
 * then for every tap P vector loads from the padded phase rows and CO
 * broadcast weights, each load feeding CO FMAs. AVX-512: 8 x 3 (24 of 32
 * registers, 11 loads to 24 FMAs a tap); AVX2: 4 x 3 (12 of 16).
 */
#ifndef ERT_CPU_CONV_STEM_TMPL_H
#define ERT_CPU_CONV_STEM_TMPL_H

#include <string.h>

#include "cpu/conv/conv-stem-impl.h"
#include "cpu/vec/vact.h"
#include "cpu/vec/simd.h"

/* Where a tile's pixel blocks read, write and add their residual. */
struct st_items {
	const float *x[ST_P];
	float *y[ST_P];
	const float *r[ST_P];
	int64_t lanes[ST_P];
};

/*
 * Residual, activation of type @t, store: channels [0, nco) of the tile in
 * @v (c * P + u: channel c, block u). Inlined with constant CO and P for
 * the activations of the tap loop's own copy, so @v stays in registers.
 */
SIMD_INLINE void st_store_t(struct ert_act_desc a, enum ert_act t, const vf *v, const int P,
			    const struct st_items *it, int64_t nco, int64_t plane)
{
	a.type = t;
#pragma GCC unroll 4
	for (int u = 0; u < P; u++) {
		bool whole = it->lanes[u] == VW;
		vm msk = vm_first(it->lanes[u]);

#pragma GCC unroll 8
		for (int c = 0; c < ST_CO; c++) {
			vf acc = v[c * P + u];
			int64_t o = c * plane;

			if (c >= nco)
				break;
			if (it->r[u])
				acc = vf_add(acc, whole ? vf_ld(it->r[u] + o) : vf_ldm(it->r[u] + o, msk));
			acc = vact(&a, acc);
			if (whole)
				vf_st(it->y[u] + o, acc);
			else
				vf_stm(it->y[u] + o, msk, acc);
		}
	}
}

/* The other activations, out of line: one copy of their code for every tile shape. */
static __attribute__((noinline)) void st_store(const struct ert_act_desc *a, const vf *v,
					       const int P, const struct st_items *it, int64_t nco,
					       int64_t plane)
{
	st_store_t(*a, a->type, v, P, it, nco, plane);
}

/*
 * One tile: P pixel blocks of @it, channels [0, nco) of the CO whose packed
 * weights are @wp ([taps][CO]) and biases @bias.
 */
SIMD_INLINE void st_tile(const struct ert_stem_plan *p, const int P, const struct st_items *it,
			 const float *wp, const float *bias, int64_t nco, int64_t plane)
{
	const int CO = ST_CO;
	const int32_t *toff = p->toff;
	const int64_t taps = p->taps;
	vf acc[ST_CO * ST_P], out[ST_CO * ST_P];

#pragma GCC unroll 8
	for (int c = 0; c < CO; c++) {
		vf b = vf_set1(bias[c]);

#pragma GCC unroll 4
		for (int u = 0; u < P; u++)
			acc[c * P + u] = b;
	}
	for (int64_t t = 0; t < taps; t++) {
		const int32_t o = toff[t];
		vf xv[ST_P];

#pragma GCC unroll 4
		for (int u = 0; u < P; u++)
			xv[u] = vf_ld(it->x[u] + o);
#pragma GCC unroll 8
		for (int c = 0; c < CO; c++) {
			vf wv = vf_set1(wp[t * CO + c]);

#pragma GCC unroll 4
			for (int u = 0; u < P; u++)
				acc[c * P + u] = vf_fma(wv, xv[u], acc[c * P + u]);
		}
	}
	switch (p->act.type) {
	case ERT_ACT_NONE: st_store_t(p->act, ERT_ACT_NONE, acc, P, it, nco, plane); break;
	case ERT_ACT_RELU: st_store_t(p->act, ERT_ACT_RELU, acc, P, it, nco, plane); break;
	case ERT_ACT_CLIP: st_store_t(p->act, ERT_ACT_CLIP, acc, P, it, nco, plane); break;
	default:
		/* a copy, so that acc[] itself never has its address taken */
#pragma GCC unroll 32
		for (int i = 0; i < CO * P; i++)
			out[i] = acc[i];
		st_store(&p->act, out, P, it, nco, plane);
		break;
	}
}

/*
 * Padded rows [r0, r0 + n) of image @n_img's input into the band's copy
 * @buf (ert_stem_plan); strides 1 and 2 by vector loads inside the row.
 */
static void st_fill(const struct ert_stem_plan *p, int64_t n_img, int64_t r0, int64_t n,
		    float *buf)
{
	const struct ert_conv_geom *g = p->g;
	const int64_t H = g->in[1], W = g->in[2], sw = g->stride[2];
	const int64_t pt = g->pad_b[1], pl = g->pad_b[2], wq = p->wq;

	for (int64_t ci = 0; ci < p->c_in; ci++) {
		const float *xc = p->x + (n_img * p->c_in + ci) * H * W;

		for (int64_t j = 0; j < n; j++) {
			float *o = buf + (ci * p->hb + j) * p->row;
			int64_t iy = r0 + j - pt;

			if (iy < 0 || iy >= H) {
				memset(o, 0, (size_t)p->row * sizeof(float));
				continue;
			}
			const float *in = xc + iy * W;

			for (int64_t ph = 0; ph < sw; ph++, o += wq) {
				/* q reads column q * sw + ph - pl: inside the row for q in [lo, hi) */
				int64_t a = pl - ph, b = W - 1 + pl - ph;
				int64_t lo = a <= 0 ? 0 : (a + sw - 1) / sw, hi = b < 0 ? 0 : b / sw + 1;
				int64_t q;

				lo = lo < wq ? lo : wq;
				hi = hi < wq ? hi : wq;
				hi = hi > lo ? hi : lo;
				memset(o, 0, (size_t)lo * sizeof(float));
				q = lo;
				if (sw == 1) {
					for (; q + VW <= hi; q += VW)
						vf_st(o + q, vf_ld(in + q + ph - pl));
				} else if (sw == 2) {
					/* vf_ld_s2 reads columns up to (q + VW - 1) * 2 + ph - pl < W */
					for (; q + VW <= hi; q += VW)
						vf_st(o + q, vf_ld_s2(in + q * 2 + ph - pl));
				}
				for (; q < hi; q++)
					o[q] = in[q * sw + ph - pl];
				memset(o + hi, 0, (size_t)(wq - hi) * sizeof(float));
			}
		}
	}
}

/*
 * Output rows [r0, r1) of image @n, band by band: the band's input copied
 * (into L1), then every channel tile over the band's pixel blocks.
 */
static void st_rows(const struct ert_stem_plan *p, int64_t n, int64_t r0, int64_t r1)
{
	const struct ert_conv_geom *g = p->g;
	const int64_t OW = g->out[2], plane = g->out[1] * OW, sh = g->stride[1];
	const int64_t nb = (OW + VW - 1) / VW;
	float buf[ERT_STEM_BUF] __attribute__((aligned(64)));

	for (int64_t b0 = r0; b0 < r1; b0 += p->band) {
		int64_t nr = r1 - b0 < p->band ? r1 - b0 : p->band, items = nr * nb;

		st_fill(p, n, b0 * sh, (nr - 1) * sh + p->hb - (p->band - 1) * sh, buf);
		for (int64_t co0 = 0; co0 < p->m_pad; co0 += ST_CO) {
			const float *wp = p->wp + co0 * p->taps;
			int64_t nco = p->m - co0 < ST_CO ? p->m - co0 : ST_CO;
			float *yc = p->y + (n * p->m + co0) * plane;
			const float *rc = p->res ? p->res + (n * p->m + co0) * plane : NULL;

			for (int64_t i = 0; i < items;) {
				int64_t np = items - i < ST_P ? items - i : ST_P;
				struct st_items it;

				for (int64_t u = 0; u < np; u++) {
					int64_t r = (i + u) / nb, b = (i + u) % nb;
					int64_t o = (b0 + r) * OW + b * VW;

					it.x[u] = buf + r * sh * p->row + b * VW;
					it.y[u] = yc + o;
					it.r[u] = rc ? rc + o : NULL;
					it.lanes[u] = OW - b * VW < VW ? OW - b * VW : VW;
				}
				if (np == ST_P)
					st_tile(p, ST_P, &it, wp, p->bias + co0, nco, plane);
				else if (np == 2)
					st_tile(p, 2, &it, wp, p->bias + co0, nco, plane);
				else
					st_tile(p, 1, &it, wp, p->bias + co0, nco, plane);
				i += np;
			}
		}
	}
}

const struct ert_stem_level ST_LEVEL = {
	.name = ST_NAME, .co = ST_CO, .rows = st_rows,
};

#endif /* ERT_CPU_CONV_STEM_TMPL_H */
