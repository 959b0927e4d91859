/* SPDX-License-Identifier: MIT */
/*
 * pool-tmpl.h — MaxPool and AveragePool of one NCHW plane, VW output columns
 * a vector, compiled once per level by vec-<level>.c.
 *
 * Bit for bit the reference (cpu/ops/pool.c): each output visits its taps in
 * the same order (depth, row, column). Max keeps x when x > v or x is NaN,
 * starting from the first tap (-inf then that update is the same); an empty
 * window gives 0. Average adds in double in tap order and divides in double
 * by the reference's count; lanes whose tap is padding add nothing (a masked
 * load's +0 leaves a sum that started at +0 unchanged).
 */
#ifndef ERT_CPU_POOL_TMPL_H
#define ERT_CPU_POOL_TMPL_H

#include <math.h>
#include <string.h>

#include "cpu/vec/window-simd.h"

/* v = x > v || x != x ? x : v */
SIMD_INLINE vf max_step(vf v, vf x)
{
	return vf_sel(vf_isnan(x), x, vf_max(x, v));
}

/* @U whole blocks at c0, c0 + VW, ...: every tap inside. */
SIMD_INLINE void max_full(const struct ert_vec_win *w, const float *const *rows, int nr,
			  int64_t c0, const int U, float *yr)
{
	const struct ert_conv_geom *g = w->g;
	const int64_t s = g->stride[2];
	vf v[4];

	for (int u = 0; u < U; u++)
		v[u] = vf_set1(-INFINITY);
	for (int r = 0; r < nr; r++)
		for (int64_t kw = 0; kw < g->k[2]; kw++) {
			const float *p = rows[r] + c0 * s + w->off[kw];

			for (int u = 0; u < U; u++)
				v[u] = max_step(v[u], win_ld_full(p + u * VW * s, s));
		}
	for (int u = 0; u < U; u++)
		vf_st(yr + c0 + u * VW, v[u]);
}

/* One block at c0 of @nl lanes, some taps outside the row. */
static void max_part(const struct ert_vec_win *w, const float *const *rows, int nr, int64_t c0,
		     int64_t nl, float *yr)
{
	const struct ert_conv_geom *g = w->g;
	const int64_t s = g->stride[2];
	vf v = vf_set1(-INFINITY);
	vm seen = vm_none();

	for (int r = 0; r < nr; r++)
		for (int64_t kw = 0; kw < g->k[2]; kw++) {
			int64_t la, lb;

			win_lanes(w, kw, c0, nl, &la, &lb);
			if (la >= lb)
				continue;
			vm m = vm_range(la, lb);
			vf x = win_ld_part(rows[r] + c0 * s + w->off[kw], s, la, lb);

			v = vf_sel(m, max_step(v, x), v);
			seen = vm_or(seen, m);
		}
	vf_stm(yr + c0, vm_first(nl), vf_sel(seen, v, vf_zero()));
}

SIMD_INLINE void avg_store(float *y, vm m, vd s0, vd s1, vd c0, vd c1, vf cnt)
{
	vf q = vf_from_vd(vd_div(s0, c0), vd_div(s1, c1));

	/* a window with no tap inside gives 0 (only without count_include_pad) */
	vf_stm(y, m, vf_sel(vf_gt(cnt, vf_zero()), q, vf_zero()));
}

SIMD_INLINE void avg_full(const struct ert_vec_win *w, const float *const *rows, int nr,
			  int64_t c0, const int U, double cnt, float *yr)
{
	const struct ert_conv_geom *g = w->g;
	const int64_t s = g->stride[2];
	vd s0[4], s1[4];

	for (int u = 0; u < U; u++)
		s0[u] = s1[u] = vd_zero();
	for (int r = 0; r < nr; r++)
		for (int64_t kw = 0; kw < g->k[2]; kw++) {
			const float *p = rows[r] + c0 * s + w->off[kw];

			for (int u = 0; u < U; u++) {
				vf x = win_ld_full(p + u * VW * s, s);

				s0[u] = vd_add(s0[u], vd_lo(x));
				s1[u] = vd_add(s1[u], vd_hi(x));
			}
		}
	for (int u = 0; u < U; u++)
		avg_store(yr + c0 + u * VW, vm_all(), s0[u], s1[u], vd_set1(cnt), vd_set1(cnt),
			  vf_set1((float)cnt));
}

static void avg_part(const struct ert_vec_win *w, const float *const *rows, int nr, int64_t c0,
		     int64_t nl, double pad_cnt, float *yr)
{
	const struct ert_conv_geom *g = w->g;
	const int64_t s = g->stride[2];
	vd s0 = vd_zero(), s1 = vd_zero();
	vf cnt = vf_zero();

	for (int r = 0; r < nr; r++)
		for (int64_t kw = 0; kw < g->k[2]; kw++) {
			int64_t la, lb;

			win_lanes(w, kw, c0, nl, &la, &lb);
			if (la >= lb)
				continue;
			vf x = win_ld_part(rows[r] + c0 * s + w->off[kw], s, la, lb);

			s0 = vd_add(s0, vd_lo(x));
			s1 = vd_add(s1, vd_hi(x));
			cnt = vf_add(cnt, vf_sel(vm_range(la, lb), vf_set1(1.0f), vf_zero()));
		}
	if (w->include_pad)
		avg_store(yr + c0, vm_first(nl), s0, s1, vd_set1(pad_cnt), vd_set1(pad_cnt),
			  vf_set1(1.0f));
	else
		avg_store(yr + c0, vm_first(nl), s0, s1, vd_lo(cnt), vd_hi(cnt), cnt);
}

static void pool_plane(const struct ert_vec_win *w, const float *x, float *y)
{
	const struct ert_conv_geom *g = w->g;
	const int64_t OW = g->out[2];
	/* count_include_pad divides by the whole window, as the reference */
	const double pad_cnt = (double)g->k[0] * (double)g->k[1] * (double)g->k[2];
	const float *rows[ERT_VEC_WIN_MAX];
	int64_t tap0[ERT_VEC_WIN_MAX];

	for (int64_t od = 0; od < g->out[0]; od++)
		for (int64_t oh = 0; oh < g->out[1]; oh++) {
			float *yr = y + (od * g->out[1] + oh) * OW;
			int nr = win_rows(w, x, od, oh, rows, tap0);
			double cnt = w->include_pad ? pad_cnt : (double)nr * (double)g->k[2];
			int64_t c0 = 0;

			if (nr == 0) {
				memset(yr, 0, (size_t)OW * sizeof(float));
				continue;
			}
			while (c0 < OW) {
				int64_t nl = OW - c0 < VW ? OW - c0 : VW;
				/* whole blocks inside, up to four at once */
				int64_t nb = 0;

				while (nb < 4 && c0 + (nb + 1) * VW - 1 <= w->in_hi &&
				       c0 >= w->in_lo && c0 + (nb + 1) * VW <= OW)
					nb++;
				/*
				 * A last, partial block whose whole-vector neighbour to
				 * the left is inside: recompute a few columns instead of
				 * masking (the same values; y never aliases x).
				 */
				if (nb == 0 && nl < VW && OW >= VW && OW - VW >= w->in_lo &&
				    OW - 1 <= w->in_hi) {
					c0 = OW - VW;
					nb = 1;
				}
				if (nb > 0) {
#define POOL_FULL(U)                                                                     \
	do {                                                                             \
		if (w->max)                                                              \
			max_full(w, rows, nr, c0, U, yr);                                \
		else                                                                     \
			avg_full(w, rows, nr, c0, U, cnt, yr);                           \
	} while (0)
					switch (nb) {
					case 4: POOL_FULL(4); break;
					case 3: POOL_FULL(3); break;
					case 2: POOL_FULL(2); break;
					default: POOL_FULL(1); break;
					}
#undef POOL_FULL
					c0 += nb * VW;
				} else {
					if (w->max)
						max_part(w, rows, nr, c0, nl, yr);
					else
						avg_part(w, rows, nr, c0, nl, pad_cnt, yr);
					c0 += nl;
				}
			}
		}
}

/*
 * GlobalAveragePool of @planes planes of @sp floats, VW planes at a time: a
 * lane per plane, gathered element by element, so each lane adds in double
 * in the reference's order and divides by sp in double (the same bits).
 */
static void gap_planes(const float *x, float *y, int64_t planes, int64_t sp)
{
	for (int64_t p0 = 0; p0 < planes; p0 += VW) {
		vm m = vm_first(planes - p0);
		const float *xp = x + p0 * sp;
		vd s0 = vd_zero(), s1 = vd_zero();

		for (int64_t i = 0; i < sp; i++) {
			vf v = vf_gather_s(xp + i, sp, m);

			s0 = vd_add(s0, vd_lo(v));
			s1 = vd_add(s1, vd_hi(v));
		}
		vf_stm(y + p0, m, vf_from_vd(vd_div(s0, vd_set1((double)sp)),
					    vd_div(s1, vd_set1((double)sp))));
	}
}

#endif /* ERT_CPU_POOL_TMPL_H */
