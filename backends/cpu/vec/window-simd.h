/* SPDX-License-Identifier: MIT */
/*
 * window-simd.h — loading the inputs of a pooling or depthwise window for a
 * block of VW output columns of one row (cpu/vec/simd.h level), shared by
 * pool-tmpl.h and conv/dwconv-tmpl.h.
 *
 * Lane j of a block starting at output column c0 reads input column
 * (c0 + j) * s + off[kw] of a row. Blocks whose every lane has every tap
 * inside the row ([in_lo, in_hi] of struct ert_vec_win) load whole vectors;
 * the others load only the lanes whose tap is inside (masked loads, or a
 * masked gather past stride 2), so no byte outside the row is read.
 */
#ifndef ERT_CPU_WINDOW_SIMD_H
#define ERT_CPU_WINDOW_SIMD_H

#include "cpu/vec/simd.h"
#include "cpu/vec/vec.h"

/* Rows of the window for output row (od, oh): pointers into the plane. */
SIMD_INLINE int win_rows(const struct ert_vec_win *w, const float *x, int64_t od, int64_t oh,
			 const float **rows, int64_t *tap0)
{
	const struct ert_conv_geom *g = w->g;
	int nr = 0;

	for (int64_t kd = 0; kd < g->k[0]; kd++) {
		int64_t iz = od * g->stride[0] - g->pad_b[0] + kd * g->dil[0];

		if (iz < 0 || iz >= g->in[0])
			continue;
		for (int64_t kh = 0; kh < g->k[1]; kh++) {
			int64_t iy = oh * g->stride[1] - g->pad_b[1] + kh * g->dil[1];

			if (iy < 0 || iy >= g->in[1])
				continue;
			rows[nr] = x + (iz * g->in[1] + iy) * g->in[2];
			/* index of tap (kd, kh, 0) in the kernel */
			tap0[nr++] = (kd * g->k[1] + kh) * g->k[2];
		}
	}
	return nr;
}

/* Every lane inside: p points at lane 0's input. */
SIMD_INLINE vf win_ld_full(const float *p, int64_t s)
{
	if (s == 1)
		return vf_ld(p);
	if (s == 2)
		return vf_ld_s2(p);
	return vf_gather_s(p, s, vm_all());
}

/*
 * Lanes [la, lb) only (0 <= la < lb <= VW), the others 0. @p may point
 * before the row; only the lanes' own elements are read.
 */
SIMD_INLINE vf win_ld_part(const float *p, int64_t s, int64_t la, int64_t lb)
{
	if (s == 1)
		return vf_ldm(p, vm_range(la, lb));
	if (s == 2)
		return vf_ld_s2_range(p, 2 * la, 2 * (lb - 1) + 1);
	return vf_gather_s(p, s, vm_range(la, lb));
}

/* Lanes [la, lb) of the block at @c0 where tap kw lands inside; la >= lb: none. */
SIMD_INLINE void win_lanes(const struct ert_vec_win *w, int64_t kw, int64_t c0, int64_t nl,
			   int64_t *la, int64_t *lb)
{
	int64_t a = w->lo[kw] - c0, b = w->hi[kw] - c0 + 1;

	*la = a > 0 ? a : 0;
	*lb = b < nl ? b : nl;
}

#endif /* ERT_CPU_WINDOW_SIMD_H */
