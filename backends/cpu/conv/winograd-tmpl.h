/* SPDX-License-Identifier: MIT */
/*
 * Winograd F(4x4, 3x3) input and output transforms, written once and
 * compiled per kernel level: include after defining WINO_LEVEL (avx2,
 * avx512). Every inner loop runs across tiles, so the compiler turns it into
 * that level's vector instructions; no loop reassociates a sum.
 */
#include <string.h>

#include "cpu/conv/winograd.h"

#define WINO_CAT_(a, b) a##_##b
#define WINO_CAT(a, b) WINO_CAT_(a, b)
#define WINO_FN(name) WINO_CAT(name, WINO_LEVEL)

#define NR_MAX ERT_SGEMM_NR_MAX
#define LANES 16 /* tiles per output-transform pass */

/*
 * The input transform in two passes over a run of tiles that lie on one tile
 * row and in one packed panel. Pass 1 applies B^T down the six input rows of
 * the tile row, contiguous along x (no gather), into t[6][x]; pass 2 applies
 * B along x, lane j reading the six values from x = 4 j, and stores the 36
 * results of NR-contiguous tiles into the panel. Both passes compute the
 * sums of the one-tile formula in the same order, on the same zeros for the
 * padding, so the result is the same bits as transforming tile by tile.
 */
#define RUN_X (4 * NR_MAX + 4)   /* input columns of a run of NR_MAX tiles, and 2 more */

/*
 * The six sums of one 6-point B^T product, lane by lane: out_k[i] from
 * in_0..in_5[i]. Parameters, not locals, carry restrict: GCC honours it
 * only there, and needs it to vectorise without alias checks.
 */
static void bt6(int64_t n, const float *restrict a0, const float *restrict a1,
		const float *restrict a2, const float *restrict a3, const float *restrict a4,
		const float *restrict a5, float *restrict o0, float *restrict o1,
		float *restrict o2, float *restrict o3, float *restrict o4, float *restrict o5)
{
	for (int64_t i = 0; i < n; i++) {
		float e0 = a0[i], e1 = a1[i], e2 = a2[i], e3 = a3[i], e4 = a4[i], e5 = a5[i];

		o0[i] = 4.0f * e0 - 5.0f * e2 + e4;
		o1[i] = -4.0f * (e1 + e2) + e3 + e4;
		o2[i] = 4.0f * (e1 - e2) - e3 + e4;
		o3[i] = 2.0f * (e3 - e1) - e2 + e4;
		o4[i] = 2.0f * (e1 - e3) - e2 + e4;
		o5[i] = 4.0f * e1 - 5.0f * e3 + e5;
	}
}

/* Pass 1: t[k][i] = (B^T d)[k] at column x0 + i, i < len; zero outside the image. */
static void input_rows(const float *plane, int64_t h, int64_t w, int64_t y0, int64_t x0,
		       int64_t len, const float *zero, float (*t)[RUN_X])
{
	const float *r[6];
	int64_t lo = x0 < 0 ? -x0 : 0, hi = x0 + len > w ? w - x0 : len;

	if (hi < lo)
		hi = lo;
	for (int k = 0; k < 6; k++) {
		for (int64_t i = 0; i < lo; i++)
			t[k][i] = 0.0f;
		for (int64_t i = hi; i < len; i++)
			t[k][i] = 0.0f;
	}
	/* rows outside the image read zeros; x0 + lo is inside the row */
	for (int q = 0; q < 6; q++)
		r[q] = y0 + q >= 0 && y0 + q < h ? plane + (y0 + q) * w + x0 + lo : zero;
	bt6(hi - lo, r[0], r[1], r[2], r[3], r[4], r[5], t[0] + lo, t[1] + lo, t[2] + lo,
	    t[3] + lo, t[4] + lo, t[5] + lo);
}

/*
 * Pass 2: row @k of V for @n tiles, tile j from t[4 j .. 4 j + 5], into
 * o[q * pos_stride + j]. t is first split by x mod 4 (a load-lanes pattern
 * the vectoriser handles), so that the sums read contiguous lanes; columns
 * 4 and 5 of tile j are columns 0 and 1 of tile j + 1.
 */
static void input_cols(const float *restrict t, int64_t n, float *o, int64_t pos_stride)
{
	float u0[NR_MAX + 1], u1[NR_MAX + 1], u2[NR_MAX + 1], u3[NR_MAX + 1];

	for (int64_t j = 0; j <= n; j++) {
		u0[j] = t[4 * j];
		u1[j] = t[4 * j + 1];
		u2[j] = t[4 * j + 2];
		u3[j] = t[4 * j + 3];
	}
	bt6(n, u0, u1, u2, u3, u0 + 1, u1 + 1, o, o + pos_stride, o + 2 * pos_stride,
	    o + 3 * pos_stride, o + 4 * pos_stride, o + 5 * pos_stride);
}

void WINO_FN(ert_wino_input)(const struct ert_wino_tiles *t, int64_t c0, int64_t c1, float *v)
{
	const int NR = t->nr;
	const int64_t np = (t->nt + NR - 1) / NR;
	const int64_t pos_stride = t->v_pos;
	float rows[6][RUN_X] __attribute__((aligned(64)));
	float zero[RUN_X] __attribute__((aligned(64))) = { 0 };

	for (int64_t c = c0; c < c1; c++) {
		const float *plane = t->x + c * t->h * t->w;

		/* runs: tiles of one tile row and one panel */
		for (int64_t i = 0; i < t->nt;) {
			int64_t tile = t->t0 + i, ty = tile / t->tiles_w, tx = tile % t->tiles_w;
			int64_t pn = i / NR, j = i % NR, n = t->tiles_w - tx;

			if (n > NR - j)
				n = NR - j;
			if (n > t->nt - i)
				n = t->nt - i;
			/* 4 n + 2 columns; the 2 after them are read by input_cols() and unused */
			input_rows(plane, t->h, t->w, ty * 4 - t->pad_t, tx * 4 - t->pad_l, 4 * n + 4,
				   zero, rows);

			float *vo = v + (pn * t->cin + c) * NR + j;

			for (int row = 0; row < 6; row++)
				input_cols(rows[row], n, vo + (int64_t)row * 6 * pos_stride, pos_stride);
			i += n;
		}
		/* the last panel's columns past the block are zero */
		if (t->nt % NR) {
			float *vo = v + ((np - 1) * t->cin + c) * NR;

			for (int q = 0; q < ERT_WINO_POS; q++)
				for (int jj = (int)(t->nt % NR); jj < NR; jj++)
					vo[q * pos_stride + jj] = 0.0f;
		}
	}
}

/*
 * One output row of a run of @len tiles: lane j of o0..o3 holds columns
 * 4 j .. 4 j + 3. Interleaved into a contiguous row (a store-lanes pattern
 * the vectoriser handles), then @cols pixels written to @y, plus @res and
 * the activation (as ert_act_apply() computes it) where there is a residual;
 * without one, the activation was applied to the lanes already.
 */
static void output_row(const float *restrict o0, const float *restrict o1,
		       const float *restrict o2, const float *restrict o3, int64_t len,
		       int64_t cols, const float *res, const struct ert_sgemm_epi *act, float *y)
{
	float row[4 * LANES];

	for (int64_t j = 0; j < len; j++) {
		row[4 * j] = o0[j];
		row[4 * j + 1] = o1[j];
		row[4 * j + 2] = o2[j];
		row[4 * j + 3] = o3[j];
	}
	if (!res) {
		memcpy(y, row, (size_t)cols * sizeof(float));
	} else if (act->act == ERT_EPI_RELU) {
		for (int64_t x = 0; x < cols; x++) {
			float v = row[x] + res[x];

			y[x] = v > 0.0f ? v : 0.0f;
		}
	} else if (act->act == ERT_EPI_CLIP) {
		for (int64_t x = 0; x < cols; x++) {
			float v = row[x] + res[x];

			y[x] = v < act->lo ? act->lo : v > act->hi ? act->hi : v;
		}
	} else {
		for (int64_t x = 0; x < cols; x++)
			y[x] = row[x] + res[x];
	}
}

void WINO_FN(ert_wino_output)(const struct ert_wino_tiles *t, const float *m, int64_t ldm,
			      const float *bias, const float *res,
			      const struct ert_sgemm_epi *act, int64_t c0, int64_t c1, float *y)
{
	const int64_t pos_stride = t->m_pos;
	float s[24][LANES] __attribute__((aligned(64)));
	float o[16][LANES] __attribute__((aligned(64)));

	for (int64_t c = c0; c < c1; c++) {
		const float *mc = m + c * ldm;
		const float b = bias ? bias[c] : 0.0f;
		float *yp = y + c * t->oh * t->ow;

		/* ldm is a multiple of LANES: whole passes read inside the block */
		for (int64_t i0 = 0; i0 < t->nt; i0 += LANES) {
			int64_t n = t->nt - i0 < LANES ? t->nt - i0 : LANES;

			/* s = A^T M, column by column */
			for (int col = 0; col < 6; col++) {
				const float *p = mc + (int64_t)col * pos_stride + i0;

				for (int j = 0; j < LANES; j++) {
					float m0 = p[j], m1 = p[6 * pos_stride + j];
					float m2 = p[12 * pos_stride + j], m3 = p[18 * pos_stride + j];
					float m4 = p[24 * pos_stride + j], m5 = p[30 * pos_stride + j];

					s[col][j] = m0 + m1 + m2 + m3 + m4;
					s[6 + col][j] = (m1 - m2) + 2.0f * (m3 - m4);
					s[12 + col][j] = (m1 + m2) + 4.0f * (m3 + m4);
					s[18 + col][j] = (m1 - m2) + 8.0f * (m3 - m4) + m5;
				}
			}
			/* Y = s A + bias */
			for (int row = 0; row < 4; row++) {
				for (int j = 0; j < LANES; j++) {
					float e0 = s[row * 6][j], e1 = s[row * 6 + 1][j];
					float e2 = s[row * 6 + 2][j], e3 = s[row * 6 + 3][j];
					float e4 = s[row * 6 + 4][j], e5 = s[row * 6 + 5][j];

					o[row * 4][j] = e0 + e1 + e2 + e3 + e4 + b;
					o[row * 4 + 1][j] = (e1 - e2) + 2.0f * (e3 - e4) + b;
					o[row * 4 + 2][j] = (e1 + e2) + 4.0f * (e3 + e4) + b;
					o[row * 4 + 3][j] = (e1 - e2) + 8.0f * (e3 - e4) + e5 + b;
				}
			}
			/* with a residual, the activation comes after it, per pixel below */
			if (!res && act->act == ERT_EPI_RELU) {
				for (int q = 0; q < 16; q++)
					for (int j = 0; j < LANES; j++)
						o[q][j] = o[q][j] > 0.0f ? o[q][j] : 0.0f;
			} else if (!res && act->act == ERT_EPI_CLIP) {
				for (int q = 0; q < 16; q++)
					for (int j = 0; j < LANES; j++)
						o[q][j] = o[q][j] < act->lo ? act->lo
							  : o[q][j] > act->hi ? act->hi : o[q][j];
			}
			/* runs of the pass's tiles on one tile row: their four output rows */
			for (int64_t j = 0; j < n;) {
				int64_t tile = t->t0 + i0 + j;
				int64_t oy = (tile / t->tiles_w) * 4, tx = tile % t->tiles_w;
				int64_t len = t->tiles_w - tx < n - j ? t->tiles_w - tx : n - j;
				int64_t cols = t->ow - tx * 4 < 4 * len ? t->ow - tx * 4 : 4 * len;
				int rows = t->oh - oy < 4 ? (int)(t->oh - oy) : 4;

				for (int r = 0; r < rows; r++) {
					int64_t at = (oy + r) * t->ow + tx * 4;

					output_row(o[r * 4] + j, o[r * 4 + 1] + j, o[r * 4 + 2] + j,
						   o[r * 4 + 3] + j, len, cols,
						   res ? res + c * t->oh * t->ow + at : NULL, act, yp + at);
				}
				j += len;
			}
		}
	}
}
