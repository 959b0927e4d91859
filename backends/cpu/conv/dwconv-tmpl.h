/* SPDX-License-Identifier: MIT */
/*
 * dwconv-tmpl.h — the depthwise plane kernel of one level (see dwconv.h),
 * included by dwconv-<level>.c after it has defined DW_LEVEL (the level's
 * struct ert_dwconv_level), DW_NAME, and ERT_SIMD_AVX512 for AVX-512.
 *
 * Each output row: whole blocks with every tap inside, four at a time (four
 * independent FMA chains), then the blocks at the edges with per-lane tap
 * masks. The activation type is a constant inside each instance of the
 * plane loop, so its switch folds away.
 */
#ifndef ERT_CPU_DWCONV_TMPL_H
#define ERT_CPU_DWCONV_TMPL_H

#include "cpu/conv/dwconv-impl.h"
#include "cpu/vec/vact.h"
#include "cpu/vec/window-simd.h"

/* Bias, then residual, then the activation (type @t) on one block; stored. */
SIMD_INLINE void dw_finish(const struct ert_vec_win *w, enum ert_act t, vf acc, const float *res,
			   float *y, vm m, bool whole)
{
	struct ert_act_desc a = w->act;

	a.type = t;
	if (res)
		acc = vf_add(acc, whole ? vf_ld(res) : vf_ldm(res, m));
	acc = vact(&a, acc);
	if (whole)
		vf_st(y, acc);
	else
		vf_stm(y, m, acc);
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

SIMD_INLINE void dw_plane_t(const struct ert_vec_win *w, enum ert_act t, const float *x,
			    const float *k, float bias, const float *res, float *y)
{
	const struct ert_conv_geom *g = w->g;
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

static void dw_plane(const struct ert_vec_win *w, const float *x, const float *k, float bias,
		     const float *res, float *y)
{
	switch (w->act.type) {
	case ERT_ACT_RELU: dw_plane_t(w, ERT_ACT_RELU, x, k, bias, res, y); break;
	case ERT_ACT_CLIP: dw_plane_t(w, ERT_ACT_CLIP, x, k, bias, res, y); break;
	case ERT_ACT_LEAKY_RELU: dw_plane_t(w, ERT_ACT_LEAKY_RELU, x, k, bias, res, y); break;
	case ERT_ACT_SIGMOID: dw_plane_t(w, ERT_ACT_SIGMOID, x, k, bias, res, y); break;
	case ERT_ACT_HARD_SWISH: dw_plane_t(w, ERT_ACT_HARD_SWISH, x, k, bias, res, y); break;
	case ERT_ACT_HARD_SIGMOID: dw_plane_t(w, ERT_ACT_HARD_SIGMOID, x, k, bias, res, y); break;
	case ERT_ACT_TANH: dw_plane_t(w, ERT_ACT_TANH, x, k, bias, res, y); break;
	case ERT_ACT_NONE:
	default: dw_plane_t(w, ERT_ACT_NONE, x, k, bias, res, y); break;
	}
}

const struct ert_dwconv_level DW_LEVEL = { .name = DW_NAME, .plane = dw_plane };

#endif /* ERT_CPU_DWCONV_TMPL_H */
