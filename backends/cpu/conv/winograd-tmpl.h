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

/* One 6x6 input tile with its padding: rows and columns outside the image are zero. */
static void load_tile(const float *plane, int64_t h, int64_t w, int64_t y0, int64_t x0,
		      float (*d)[NR_MAX], int j)
{
	if (y0 >= 0 && y0 + 6 <= h && x0 >= 0 && x0 + 6 <= w) {
		const float *p = plane + y0 * w + x0;

		for (int r = 0; r < 6; r++)
			for (int c = 0; c < 6; c++)
				d[r * 6 + c][j] = p[r * w + c];
		return;
	}
	for (int r = 0; r < 6; r++) {
		int64_t y = y0 + r;

		for (int c = 0; c < 6; c++) {
			int64_t x = x0 + c;

			d[r * 6 + c][j] = y >= 0 && y < h && x >= 0 && x < w ? plane[y * w + x] : 0.0f;
		}
	}
}

void WINO_FN(ert_wino_input)(const struct ert_wino_tiles *t, int64_t c0, int64_t c1, float *v)
{
	const int NR = t->nr;
	const int64_t np = (t->nt + NR - 1) / NR;
	const int64_t pos_stride = np * t->cin * NR;
	float d[36][NR_MAX] __attribute__((aligned(64)));
	float s[36][NR_MAX] __attribute__((aligned(64)));
	int64_t y0[NR_MAX], x0[NR_MAX];

	for (int64_t pn = 0; pn < np; pn++) {
		int64_t cnt = t->nt - pn * NR < NR ? t->nt - pn * NR : NR;

		for (int j = 0; j < cnt; j++) {
			int64_t tile = t->t0 + pn * NR + j;

			y0[j] = (tile / t->tiles_w) * 4 - t->pad_t;
			x0[j] = (tile % t->tiles_w) * 4 - t->pad_l;
		}
		for (int64_t c = c0; c < c1; c++) {
			const float *plane = t->x + c * t->h * t->w;
			float *vo = v + pn * t->cin * NR + c * NR;

			for (int j = 0; j < NR; j++) {
				if (j < cnt)
					load_tile(plane, t->h, t->w, y0[j], x0[j], d, j);
				else
					for (int q = 0; q < 36; q++)
						d[q][j] = 0.0f;
			}
			/* s = B^T d, column by column */
			for (int col = 0; col < 6; col++) {
				for (int j = 0; j < NR; j++) {
					float d0 = d[col][j], d1 = d[6 + col][j], d2 = d[12 + col][j];
					float d3 = d[18 + col][j], d4 = d[24 + col][j], d5 = d[30 + col][j];

					s[col][j] = 4.0f * d0 - 5.0f * d2 + d4;
					s[6 + col][j] = -4.0f * (d1 + d2) + d3 + d4;
					s[12 + col][j] = 4.0f * (d1 - d2) - d3 + d4;
					s[18 + col][j] = 2.0f * (d3 - d1) - d2 + d4;
					s[24 + col][j] = 2.0f * (d1 - d3) - d2 + d4;
					s[30 + col][j] = 4.0f * d1 - 5.0f * d3 + d5;
				}
			}
			/* V = s B, row by row, into the packed panels */
			for (int row = 0; row < 6; row++) {
				float *o = vo + (int64_t)row * 6 * pos_stride;

				for (int j = 0; j < NR; j++) {
					float e0 = s[row * 6][j], e1 = s[row * 6 + 1][j];
					float e2 = s[row * 6 + 2][j], e3 = s[row * 6 + 3][j];
					float e4 = s[row * 6 + 4][j], e5 = s[row * 6 + 5][j];

					o[j] = 4.0f * e0 - 5.0f * e2 + e4;
					o[pos_stride + j] = -4.0f * (e1 + e2) + e3 + e4;
					o[2 * pos_stride + j] = 4.0f * (e1 - e2) - e3 + e4;
					o[3 * pos_stride + j] = 2.0f * (e3 - e1) - e2 + e4;
					o[4 * pos_stride + j] = 2.0f * (e1 - e3) - e2 + e4;
					o[5 * pos_stride + j] = 4.0f * e1 - 5.0f * e3 + e5;
				}
			}
		}
	}
}

/* The activation of the GEMM epilogue's encoding, as ert_act_apply() computes it. */
static inline float epi_act1(float v, const struct ert_sgemm_epi *act)
{
	if (act->act == ERT_EPI_RELU)
		return v > 0.0f ? v : 0.0f;
	if (act->act == ERT_EPI_CLIP)
		return v < act->lo ? act->lo : v > act->hi ? act->hi : v;
	return v;
}

void WINO_FN(ert_wino_output)(const struct ert_wino_tiles *t, const float *m, int64_t ldm,
			      const float *bias, const float *res,
			      const struct ert_sgemm_epi *act, int64_t c0, int64_t c1, float *y)
{
	const int64_t pos_stride = t->cout * ldm;
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
			for (int j = 0; j < n; j++) {
				int64_t tile = t->t0 + i0 + j;
				int64_t oy = (tile / t->tiles_w) * 4, ox = (tile % t->tiles_w) * 4;
				int rows = t->oh - oy < 4 ? (int)(t->oh - oy) : 4;
				int cols = t->ow - ox < 4 ? (int)(t->ow - ox) : 4;

				if (res) {
					const float *rp = res + c * t->oh * t->ow;

					for (int r = 0; r < rows; r++)
						for (int q = 0; q < cols; q++) {
							int64_t at = (oy + r) * t->ow + ox + q;

							yp[at] = epi_act1(o[r * 4 + q][j] + rp[at], act);
						}
					continue;
				}
				for (int r = 0; r < rows; r++)
					for (int q = 0; q < cols; q++)
						yp[(oy + r) * t->ow + ox + q] = o[r * 4 + q][j];
			}
		}
	}
}
