/* SPDX-License-Identifier: MIT */
/*
 * Winograd F(4x4, 3x3) input and output transforms, written once and
 * compiled per kernel level: include after defining WINO_LEVEL (avx2,
 * avx512). The input transform and the output transform's interleave use
 * the level's vectors through the few V_* operations, masked loads and
 * shuffles defined below (the same operations lane by lane at both
 * levels); the output transform's sums are plain C loops across tiles that
 * the compiler vectorises. No loop reassociates a sum.
 */
#include <string.h>

#include "cpu/conv/winograd.h"

#define WINO_CAT_(a, b) a##_##b
#define WINO_CAT(a, b) WINO_CAT_(a, b)
#define WINO_FN(name) WINO_CAT(name, WINO_LEVEL)

#define LANES 16 /* tiles per output-transform pass */

/*
 * Explicit vectors of the level, VW floats: the input transform and the
 * output transform's interleave are written with them (the compiler
 * leaves scalar tails on rows of 4 n + 2 floats and on lanes of the 4..14
 * tiles of a tile row). Both levels compute the same operations lane by
 * lane, so they give the same bits.
 */
#include <immintrin.h>

#if defined(__AVX512F__)
#define VW 16
typedef __m512 vf;
#define V_LD(p) _mm512_loadu_ps(p)
#define V_ZERO() _mm512_setzero_ps()
#define V_ST(p, x) _mm512_storeu_ps(p, x)
#define V_ADD(a, b) _mm512_add_ps(a, b)
#define V_SUB(a, b) _mm512_sub_ps(a, b)
#define V_FMA(c, a, b) _mm512_fmadd_ps(_mm512_set1_ps(c), a, b)   /* c a + b */
#define V_FNMA(c, a, b) _mm512_fnmadd_ps(_mm512_set1_ps(c), a, b) /* b - c a */
/* lane l: b[l] where m[l] (int32) is nonzero, else a[l] */
#define V_SEL(m, a, b) \
	_mm512_mask_blend_ps(_mm512_cmpneq_epi32_mask(_mm512_loadu_si512(m), _mm512_setzero_si512()), a, b)

/* u_c[j] = p[4 j + c], j < 16: two-source permutes, then halves joined */
static inline void deint4(const float *p, vf *u0, vf *u1, vf *u2, vf *u3)
{
	const __m512i i01 = _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28,
					      1, 5, 9, 13, 17, 21, 25, 29);
	const __m512i i23 = _mm512_setr_epi32(2, 6, 10, 14, 18, 22, 26, 30,
					      3, 7, 11, 15, 19, 23, 27, 31);
	vf a = V_LD(p), b = V_LD(p + 16), c = V_LD(p + 32), d = V_LD(p + 48);
	vf lo01 = _mm512_permutex2var_ps(a, i01, b), hi01 = _mm512_permutex2var_ps(c, i01, d);
	vf lo23 = _mm512_permutex2var_ps(a, i23, b), hi23 = _mm512_permutex2var_ps(c, i23, d);

	*u0 = _mm512_shuffle_f32x4(lo01, hi01, 0x44);
	*u1 = _mm512_shuffle_f32x4(lo01, hi01, 0xee);
	*u2 = _mm512_shuffle_f32x4(lo23, hi23, 0x44);
	*u3 = _mm512_shuffle_f32x4(lo23, hi23, 0xee);
}

/*
 * The inverse of deint4(): p[4 j + c] = u_c[j] for j < 16, so 16 tiles'
 * columns become one contiguous output row.
 */
static inline void inter4(vf u0, vf u1, vf u2, vf u3, float *p)
{
	const __m512i lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
	const __m512i hi = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30,
					     15, 31);
	const __m512i q0 = _mm512_setr_epi32(0, 1, 16, 17, 2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23);
	const __m512i q1 = _mm512_setr_epi32(8, 9, 24, 25, 10, 11, 26, 27, 12, 13, 28, 29, 14, 15,
					     30, 31);
	vf ab0 = _mm512_permutex2var_ps(u0, lo, u1), ab1 = _mm512_permutex2var_ps(u0, hi, u1);
	vf cd0 = _mm512_permutex2var_ps(u2, lo, u3), cd1 = _mm512_permutex2var_ps(u2, hi, u3);

	V_ST(p, _mm512_permutex2var_ps(ab0, q0, cd0));
	V_ST(p + 16, _mm512_permutex2var_ps(ab0, q1, cd0));
	V_ST(p + 32, _mm512_permutex2var_ps(ab1, q0, cd1));
	V_ST(p + 48, _mm512_permutex2var_ps(ab1, q1, cd1));
}

/* p[l] for a <= l < b (0 <= a <= b <= 16), zero elsewhere; p[l] outside is not read */
static inline vf ld_lanes(uintptr_t p, int64_t a, int64_t b)
{
	__mmask16 m = (__mmask16)(((1u << b) - 1) & ~((1u << a) - 1));

	return _mm512_maskz_loadu_ps(m, (const void *)p);
}

/* [u_1 .. u_15, s] */
static inline vf shift_in(vf u, float s)
{
	return _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(_mm512_set1_ps(s)),
						       _mm512_castps_si512(u), 1));
}
#else
#define VW 8
typedef __m256 vf;
#define V_LD(p) _mm256_loadu_ps(p)
#define V_ZERO() _mm256_setzero_ps()
#define V_ST(p, x) _mm256_storeu_ps(p, x)
#define V_ADD(a, b) _mm256_add_ps(a, b)
#define V_SUB(a, b) _mm256_sub_ps(a, b)
#define V_FMA(c, a, b) _mm256_fmadd_ps(_mm256_set1_ps(c), a, b)
#define V_FNMA(c, a, b) _mm256_fnmadd_ps(_mm256_set1_ps(c), a, b)
#define V_SEL(m, a, b) _mm256_blendv_ps(a, b, _mm256_castsi256_ps(_mm256_loadu_si256((const __m256i *)(m))))

/* u_c[j] = p[4 j + c], j < 8: a 4x4 transpose in each 128-bit half */
static inline void deint4(const float *p, vf *u0, vf *u1, vf *u2, vf *u3)
{
	vf a = V_LD(p), b = V_LD(p + 8), c = V_LD(p + 16), d = V_LD(p + 24);
	vf p0 = _mm256_permute2f128_ps(a, c, 0x20), p1 = _mm256_permute2f128_ps(a, c, 0x31);
	vf p2 = _mm256_permute2f128_ps(b, d, 0x20), p3 = _mm256_permute2f128_ps(b, d, 0x31);
	vf t0 = _mm256_unpacklo_ps(p0, p1), t1 = _mm256_unpackhi_ps(p0, p1);
	vf t2 = _mm256_unpacklo_ps(p2, p3), t3 = _mm256_unpackhi_ps(p2, p3);

	*u0 = _mm256_shuffle_ps(t0, t2, 0x44);
	*u1 = _mm256_shuffle_ps(t0, t2, 0xee);
	*u2 = _mm256_shuffle_ps(t1, t3, 0x44);
	*u3 = _mm256_shuffle_ps(t1, t3, 0xee);
}

/* p[l] for a <= l < b (0 <= a <= b <= 8), zero elsewhere; p[l] outside is not read */
static inline vf ld_lanes(uintptr_t p, int64_t a, int64_t b)
{
	const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
	__m256i m = _mm256_and_si256(_mm256_cmpgt_epi32(idx, _mm256_set1_epi32((int)a - 1)),
				     _mm256_cmpgt_epi32(_mm256_set1_epi32((int)b), idx));

	return _mm256_maskload_ps((const float *)p, m);
}

/* The inverse of deint4(): p[4 j + c] = u_c[j] for j < 8. */
static inline void inter4(vf u0, vf u1, vf u2, vf u3, float *p)
{
	vf t0 = _mm256_unpacklo_ps(u0, u1), t1 = _mm256_unpackhi_ps(u0, u1);
	vf t2 = _mm256_unpacklo_ps(u2, u3), t3 = _mm256_unpackhi_ps(u2, u3);
	vf r0 = _mm256_shuffle_ps(t0, t2, 0x44), r1 = _mm256_shuffle_ps(t0, t2, 0xee);
	vf r2 = _mm256_shuffle_ps(t1, t3, 0x44), r3 = _mm256_shuffle_ps(t1, t3, 0xee);

	V_ST(p, _mm256_permute2f128_ps(r0, r1, 0x20));
	V_ST(p + 8, _mm256_permute2f128_ps(r2, r3, 0x20));
	V_ST(p + 16, _mm256_permute2f128_ps(r0, r1, 0x31));
	V_ST(p + 24, _mm256_permute2f128_ps(r2, r3, 0x31));
}

static inline vf shift_in(vf u, float s)
{
	const __m256i rot = _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 0);

	return _mm256_blend_ps(_mm256_permutevar8x32_ps(u, rot), _mm256_set1_ps(s), 0x80);
}
#endif

/*
 * The input transform, in chunks of up to CH tiles of the block (tile rows
 * cut where a chunk ends), each chunk channel by channel:
 *  1. for each run of the chunk's tiles on one tile row, B^T down the six
 *     input rows, VW columns at a time (lanes outside the image load as
 *     zeros), into the chunk's rows t[6][T_X] at the run's place (tile j of
 *     the chunk at columns 4 j .. 4 j + 5); the next run overwrites the
 *     run's last tile's columns 4 and 5, so they are kept aside first;
 *  2. for each of those six rows, VW tiles at a time: the row split by
 *     x mod 4 in registers (deint4()), columns 4 and 5 of each tile shifted
 *     in from the next (shift_in()), or, for the last tile of a run, taken
 *     from what step 1 kept aside (a blend), B along x on the vectors, and
 *     the six results stored straight into the GEMM's packed panels (VW
 *     tiles lie in one panel: NR is a multiple of VW), so every lane carries
 *     a tile whatever the length of a tile row.
 */
#define CH 64                      /* tiles per chunk (a multiple of VW) */
#define T_X (4 * CH + 4 * VW + 8)  /* t row: 4 n + 2 columns and what whole vectors read past */
#define E_X (CH + VW)              /* kept-aside columns: a chunk and one vector of overrun */

/*
 * The six sums of one 6-point B^T product on vectors, the products fused:
 * 4 e0 - 5 e2 + e4, -4 (e1 + e2) + e3 + e4, 4 (e1 - e2) - e3 + e4,
 * 2 (e3 - e1) - e2 + e4, 2 (e1 - e3) - e2 + e4, 4 e1 - 5 e3 + e5.
 */
static inline void bt6v(vf e0, vf e1, vf e2, vf e3, vf e4, vf e5, float *o, int64_t ld)
{
	vf d13 = V_SUB(e3, e1), d42 = V_SUB(e4, e2);

	V_ST(o, V_FMA(4.0f, e0, V_FNMA(5.0f, e2, e4)));
	V_ST(o + ld, V_FNMA(4.0f, V_ADD(e1, e2), V_ADD(e3, e4)));
	V_ST(o + 2 * ld, V_FMA(4.0f, V_SUB(e1, e2), V_SUB(e4, e3)));
	V_ST(o + 3 * ld, V_FMA(2.0f, d13, d42));
	V_ST(o + 4 * ld, V_FNMA(2.0f, d13, d42));
	V_ST(o + 5 * ld, V_FMA(4.0f, e1, V_FNMA(5.0f, e3, e5)));
}

/*
 * Step 1: t[k * T_X + i] = (B^T d)[k] at column x0 + i for i < len rounded
 * up to VW; zero outside the image. Vectors that reach past the image's
 * columns (or the run's) load only the lanes inside, so the padding comes
 * as zeros.
 */
static void input_rows(const float *plane, int64_t h, int64_t w, int64_t y0, int64_t x0,
		       int64_t len, float *t)
{
	int64_t lo = x0 < 0 ? -x0 : 0, hi = x0 + len > w ? w - x0 : len;
	uintptr_t r[6];
	bool in[6];

	for (int q = 0; q < 6; q++) {
		in[q] = y0 + q >= 0 && y0 + q < h;
		/* an address, not a pointer: x0 may lie before the row */
		r[q] = (uintptr_t)(plane + (in[q] ? y0 + q : 0) * w) + (uintptr_t)x0 * sizeof(float);
	}
	for (int64_t i = 0; i < len; i += VW) {
		int64_t a = lo - i < 0 ? 0 : lo - i > VW ? VW : lo - i;
		int64_t b = hi - i < 0 ? 0 : hi - i > VW ? VW : hi - i;
		vf e[6];

		for (int q = 0; q < 6; q++) {
			uintptr_t at = r[q] + (uintptr_t)i * sizeof(float);

			e[q] = !in[q] || b <= a ? V_ZERO()
			       : a == 0 && b == VW ? V_LD((const float *)at) : ld_lanes(at, a, b);
		}
		bt6v(e[0], e[1], e[2], e[3], e[4], e[5], t + i, T_X);
	}
}

/*
 * Step 2 for VW tiles (from the first, j) of one row of t: tile j's six
 * values are t[4 j .. 4 j + 5], except that a tile with brk[j] set (the
 * last of its run) has columns 4 and 5 in x4[j], x5[j]; B along x into
 * o[q * ld], q < 6. @any: some of the VW tiles has brk set.
 */
static inline void input_cols(const float *t, const float *x4, const float *x5,
			      const int32_t *brk, bool any, float *o, int64_t ld)
{
	vf e0, e1, e2, e3;

	deint4(t, &e0, &e1, &e2, &e3);

	vf e4 = shift_in(e0, t[4 * VW]), e5 = shift_in(e1, t[4 * VW + 1]);

	if (any) {
		e4 = V_SEL(brk, e4, V_LD(x4));
		e5 = V_SEL(brk, e5, V_LD(x5));
	}
	bt6v(e0, e1, e2, e3, e4, e5, o, ld);
}

void WINO_FN(ert_wino_input)(const struct ert_wino_tiles *t, int64_t c0, int64_t c1, float *v)
{
	const int NR = t->nr;
	const int64_t np = (t->nt + NR - 1) / NR;
	const int64_t pos_stride = t->v_pos;
	float rows[6][T_X] __attribute__((aligned(64)));
	float x45[2][6][E_X] __attribute__((aligned(64)));   /* runs' last columns 4, 5 */
	int32_t brk[E_X] __attribute__((aligned(64)));       /* -1: the last tile of a run */
	bool any[CH / VW];                                   /* a group of VW tiles has one */
	int64_t run_at[CH], run_n[CH], run_y[CH], run_x[CH];
	float tmp[ERT_WINO_POS * VW] __attribute__((aligned(64)));  /* NR not a multiple of VW */

	/*
	 * What whole vectors read past a run's columns, and the lanes past the
	 * block's last tile, are stale but defined
	 */
	memset(rows, 0, sizeof(rows));
	memset(x45, 0, sizeof(x45));
	for (int64_t i0 = 0; i0 < t->nt; i0 += CH) {
		int64_t nc = t->nt - i0 < CH ? t->nt - i0 : CH, nruns = 0;

		/* runs: the chunk's tiles on one tile row */
		memset(brk, 0, sizeof(brk));
		memset(any, 0, sizeof(any));
		for (int64_t i = 0; i < nc;) {
			int64_t tile = t->t0 + i0 + i, tx = tile % t->tiles_w;
			int64_t n = t->tiles_w - tx < nc - i ? t->tiles_w - tx : nc - i;

			run_at[nruns] = i;
			run_n[nruns] = n;
			run_y[nruns] = tile / t->tiles_w * 4 - t->pad_t;
			run_x[nruns++] = tx * 4 - t->pad_l;
			i += n;
			brk[i - 1] = -1;
			any[(i - 1) / VW] = true;
		}
		for (int64_t c = c0; c < c1; c++) {
			const float *plane = t->x + c * t->h * t->w;

			for (int64_t r = 0; r < nruns; r++) {
				int64_t at = 4 * run_at[r], last = run_at[r] + run_n[r] - 1;

				input_rows(plane, t->h, t->w, run_y[r], run_x[r], 4 * run_n[r] + 2,
					   rows[0] + at);
				for (int k = 0; k < 6; k++) {
					x45[0][k][last] = rows[k][4 * last + 4];
					x45[1][k][last] = rows[k][4 * last + 5];
				}
			}
			/* VW tiles at a time into the panels: lanes past nt are zeroed below */
			for (int64_t j = 0; j < nc; j += VW) {
				int64_t b = i0 + j;
				float *vo = v + (b / NR * t->cin + c) * NR + b % NR;
				bool direct = NR % VW == 0;

				for (int row = 0; row < 6; row++)
					input_cols(rows[row] + 4 * j, x45[0][row] + j, x45[1][row] + j,
						   brk + j, any[j / VW],
						   direct ? vo + row * 6 * pos_stride : tmp + row * 6 * VW,
						   direct ? pos_stride : VW);
				for (int64_t jj = 0; !direct && jj < VW && b + jj < t->nt; jj++) {
					vo = v + ((b + jj) / NR * t->cin + c) * NR + (b + jj) % NR;
					for (int q = 0; q < ERT_WINO_POS; q++)
						vo[q * pos_stride] = tmp[q * VW + jj];
				}
			}
		}
	}
	/* the last panel's columns past the block are zero */
	for (int64_t c = c0; c < c1 && t->nt % NR; c++) {
		float *vo = v + ((np - 1) * t->cin + c) * NR;

		for (int q = 0; q < ERT_WINO_POS; q++)
			for (int jj = (int)(t->nt % NR); jj < NR; jj++)
				vo[q * pos_stride + jj] = 0.0f;
	}
}

/*
 * @cols pixels of one output row from @row (the run's tiles, interleaved)
 * to @y, plus @res and the activation (as ert_act_apply() computes it)
 * where there is a residual; without one, the activation was applied to
 * the lanes already.
 */
static void output_row(const float *restrict row, int64_t cols, const float *res,
		       const struct ert_sgemm_epi *act, float *y)
{
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
	float orow[4][4 * LANES] __attribute__((aligned(64)));

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
			/*
			 * The four output rows of the pass's tiles, lanes
			 * interleaved by x mod 4 (inter4(), whole vectors: a tile
			 * row may hold fewer tiles than a vector)
			 */
			for (int r = 0; r < 4; r++)
				for (int j = 0; j < LANES; j += VW)
					inter4(V_LD(o[r * 4] + j), V_LD(o[r * 4 + 1] + j),
					       V_LD(o[r * 4 + 2] + j), V_LD(o[r * 4 + 3] + j),
					       orow[r] + 4 * j);
			/* runs of the pass's tiles on one tile row: their four output rows */
			for (int64_t j = 0; j < n;) {
				int64_t tile = t->t0 + i0 + j;
				int64_t oy = (tile / t->tiles_w) * 4, tx = tile % t->tiles_w;
				int64_t len = t->tiles_w - tx < n - j ? t->tiles_w - tx : n - j;
				int64_t cols = t->ow - tx * 4 < 4 * len ? t->ow - tx * 4 : 4 * len;
				int rows = t->oh - oy < 4 ? (int)(t->oh - oy) : 4;

				for (int r = 0; r < rows; r++) {
					int64_t at = (oy + r) * t->ow + tx * 4;

					output_row(orow[r] + 4 * j, cols,
						   res ? res + c * t->oh * t->ow + at : NULL, act, yp + at);
				}
				j += len;
			}
		}
	}
}
