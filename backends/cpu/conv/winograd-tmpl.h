/* SPDX-License-Identifier: MIT */
/*
 * Winograd F(4x4, 3x3) and F(2x2, 3x3) input and output transforms, written once and
 * compiled per kernel level: include after defining WINO_LEVEL (avx2,
 * avx512). Both transforms work across tiles in the level's vectors
 * through the few V_* operations, masked loads and shuffles defined below
 * (the same operations lane by lane at both levels, so they give the same
 * bits). No sum is reassociated or fused beyond what the formulas say.
 */
#include <string.h>

#include "cpu/conv/winograd.h"

#define WINO_CAT_(a, b) a##_##b
#define WINO_CAT(a, b) WINO_CAT_(a, b)
#define WINO_FN(name) WINO_CAT(name, WINO_LEVEL)

/*
 * Explicit vectors of the level, VW floats: both transforms are written
 * with them (the compiler leaves scalar tails on rows of 4 n + 2 floats
 * and on lanes of the 4..14 tiles of a tile row; the output transform's
 * former C loops went through memory between each step). Both levels
 * compute the same operations lane by lane, so they give the same bits.
 */
#include <immintrin.h>

#if defined(__AVX512F__)
#define VW 16
#define UT 4 /* tiles per vector of whole output rows (p_k of lanes4()) */
typedef __m512 vf;
#define V_LD(p) _mm512_loadu_ps(p)
#define V_ZERO() _mm512_setzero_ps()
#define V_ST(p, x) _mm512_storeu_ps(p, x)
#define V_ADD(a, b) _mm512_add_ps(a, b)
#define V_SUB(a, b) _mm512_sub_ps(a, b)
#define V_MUL(c, a) _mm512_mul_ps(_mm512_set1_ps(c), a)
#define V_SET1(c) _mm512_set1_ps(c)
#define V_MAX(a, b) _mm512_max_ps(a, b)   /* a > b ? a : b */
#define V_MIN(a, b) _mm512_min_ps(a, b)   /* a < b ? a : b */
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
 * With lane L of r_k holding tile 4 L + k (after the transpose in each
 * 128-bit lane, below), p_k = tiles 4 k .. 4 k + 3: a 4x4 transpose of the
 * 128-bit lanes. EMIT_UNIT() hands each of p_k's tiles to f(tile, value).
 */
static inline void lanes4(vf r0, vf r1, vf r2, vf r3, vf *p)
{
	vf a = _mm512_shuffle_f32x4(r0, r1, 0x44), b = _mm512_shuffle_f32x4(r2, r3, 0x44);
	vf c = _mm512_shuffle_f32x4(r0, r1, 0xee), d = _mm512_shuffle_f32x4(r2, r3, 0xee);

	p[0] = _mm512_shuffle_f32x4(a, b, 0x88);
	p[1] = _mm512_shuffle_f32x4(a, b, 0xdd);
	p[2] = _mm512_shuffle_f32x4(c, d, 0x88);
	p[3] = _mm512_shuffle_f32x4(c, d, 0xdd);
}

#define EMIT_UNIT(f, k, v)                                                        \
	do {                                                                      \
		f(4 * (k), _mm512_castps512_ps128(v));                            \
		f(4 * (k) + 1, _mm512_extractf32x4_ps(v, 1));                     \
		f(4 * (k) + 2, _mm512_extractf32x4_ps(v, 2));                     \
		f(4 * (k) + 3, _mm512_extractf32x4_ps(v, 3));                     \
	} while (0)
#define V_UNPLO(a, b) _mm512_unpacklo_ps(a, b)
#define V_UNPHI(a, b) _mm512_unpackhi_ps(a, b)
#define V_SHUF(a, b, i) _mm512_shuffle_ps(a, b, i)

/* u_c[j] = p[2 j + c], j < 16 */
static inline void deint2(const float *p, vf *u0, vf *u1)
{
	const __m512i ev = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14,
					     16, 18, 20, 22, 24, 26, 28, 30);
	const __m512i od = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15,
					     17, 19, 21, 23, 25, 27, 29, 31);
	vf a = V_LD(p), b = V_LD(p + 16);

	*u0 = _mm512_permutex2var_ps(a, ev, b);
	*u1 = _mm512_permutex2var_ps(a, od, b);
}

/* Lanes l of p with bit l of @bits set, others zero; nothing else read */
static inline vf ld_mask(uintptr_t p, uint32_t bits)
{
	return _mm512_maskz_loadu_ps((__mmask16)bits, (const void *)p);
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
#define UT 2
typedef __m256 vf;
#define V_LD(p) _mm256_loadu_ps(p)
#define V_ZERO() _mm256_setzero_ps()
#define V_ST(p, x) _mm256_storeu_ps(p, x)
#define V_ADD(a, b) _mm256_add_ps(a, b)
#define V_SUB(a, b) _mm256_sub_ps(a, b)
#define V_MUL(c, a) _mm256_mul_ps(_mm256_set1_ps(c), a)
#define V_SET1(c) _mm256_set1_ps(c)
#define V_MAX(a, b) _mm256_max_ps(a, b)
#define V_MIN(a, b) _mm256_min_ps(a, b)
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

/* lane L (of two) of r_k holds tile 4 L + k; p_k = tiles 2 k, 2 k + 1 */
static inline void lanes4(vf r0, vf r1, vf r2, vf r3, vf *p)
{
	p[0] = _mm256_permute2f128_ps(r0, r1, 0x20);
	p[1] = _mm256_permute2f128_ps(r2, r3, 0x20);
	p[2] = _mm256_permute2f128_ps(r0, r1, 0x31);
	p[3] = _mm256_permute2f128_ps(r2, r3, 0x31);
}

#define EMIT_UNIT(f, k, v)                                                        \
	do {                                                                      \
		f(2 * (k), _mm256_castps256_ps128(v));                            \
		f(2 * (k) + 1, _mm256_extractf128_ps(v, 1));                      \
	} while (0)
#define V_UNPLO(a, b) _mm256_unpacklo_ps(a, b)
#define V_UNPHI(a, b) _mm256_unpackhi_ps(a, b)
#define V_SHUF(a, b, i) _mm256_shuffle_ps(a, b, i)

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

/* F(2x2, 3x3)'s B^T on vectors: e0 - e2, e1 + e2, e2 - e1, e1 - e3. */
static inline void bt4v(vf e0, vf e1, vf e2, vf e3, float *o, int64_t ld)
{
	V_ST(o, V_SUB(e0, e2));
	V_ST(o + ld, V_ADD(e1, e2));
	V_ST(o + 2 * ld, V_SUB(e2, e1));
	V_ST(o + 3 * ld, V_SUB(e1, e3));
}

/* bt4v()'s sums k = r0 .. r1 - 1 only */
static inline void bt4v_rows(vf e0, vf e1, vf e2, vf e3, float *o, int64_t ld, int r0, int r1)
{
	if (r0 <= 0 && r1 > 0)
		V_ST(o, V_SUB(e0, e2));
	if (r0 <= 1 && r1 > 1)
		V_ST(o + ld, V_ADD(e1, e2));
	if (r0 <= 2 && r1 > 2)
		V_ST(o + 2 * ld, V_SUB(e2, e1));
	if (r0 <= 3 && r1 > 3)
		V_ST(o + 3 * ld, V_SUB(e1, e3));
}

/*
 * Step 1: t[k * T_X + i] = (B^T d)[k] at column x0 + i for i < len rounded
 * up to VW, k < A (the tile side: 6, or 4 for F(2x2); F(2x2) only r0 <= k
 * < r1, the rows of positions asked for); zero outside the image. Vectors
 * that reach past the image's columns (or the run's) load only the lanes
 * inside, so the padding comes as zeros.
 */
static inline __attribute__((always_inline)) void
input_rows(const float *plane, int64_t h, int64_t w, int64_t y0, int64_t x0, int64_t len, float *t,
	   const int A, int r0, int r1)
{
	int64_t lo = x0 < 0 ? -x0 : 0, hi = x0 + len > w ? w - x0 : len;
	uintptr_t r[6];
	bool in[6];

	for (int q = 0; q < A; q++) {
		in[q] = y0 + q >= 0 && y0 + q < h;
		/* an address, not a pointer: x0 may lie before the row */
		r[q] = (uintptr_t)(plane + (in[q] ? y0 + q : 0) * w) + (uintptr_t)x0 * sizeof(float);
	}
	for (int64_t i = 0; i < len; i += VW) {
		int64_t a = lo - i < 0 ? 0 : lo - i > VW ? VW : lo - i;
		int64_t b = hi - i < 0 ? 0 : hi - i > VW ? VW : hi - i;
		vf e[6];

		for (int q = 0; q < A; q++) {
			uintptr_t at = r[q] + (uintptr_t)i * sizeof(float);

			e[q] = !in[q] || b <= a ? V_ZERO()
			       : a == 0 && b == VW ? V_LD((const float *)at) : ld_lanes(at, a, b);
		}
		if (A == 6)
			bt6v(e[0], e[1], e[2], e[3], e[4], e[5], t + i, T_X);
		else if (r0 == 0 && r1 == 4)
			bt4v(e[0], e[1], e[2], e[3], t + i, T_X);
		else
			bt4v_rows(e[0], e[1], e[2], e[3], t + i, T_X, r0, r1);
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

#if VW == 16 /* F(2x2) at avx512 only (winograd.c) */
/* input_cols() for F(2x2): tile j's four values are t[2 j .. 2 j + 3], columns 2 and 3 as 4 and 5 there */
static inline void input_cols2(const float *t, const float *x2, const float *x3,
			       const int32_t *brk, bool any, float *o, int64_t ld)
{
	vf e0, e1;

	deint2(t, &e0, &e1);

	vf e2 = shift_in(e0, t[2 * VW]), e3 = shift_in(e1, t[2 * VW + 1]);

	if (any) {
		e2 = V_SEL(brk, e2, V_LD(x2));
		e3 = V_SEL(brk, e3, V_LD(x3));
	}
	bt4v(e0, e1, e2, e3, o, ld);
}
#endif

/* The input transform of F(F x F, 3x3), F 4 or 2 (the tiles F apart, F + 2 wide). */
static inline __attribute__((always_inline)) void
input_tiles(const struct ert_wino_tiles *t, int64_t c0, int64_t c1, float *v, const int F)
{
	const int A = F + 2;
	/* the rows of positions to write (t->row0, t->row1), and their positions q0 .. q1 - 1 */
	const int r0 = t->row1 ? t->row0 : 0, r1 = t->row1 ? t->row1 : A, q0 = r0 * A, q1 = r1 * A;
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
			run_y[nruns] = tile / t->tiles_w * F - t->pad_t;
			run_x[nruns++] = tx * F - t->pad_l;
			i += n;
			brk[i - 1] = -1;
			any[(i - 1) / VW] = true;
		}
		for (int64_t c = c0; c < c1; c++) {
			const float *plane = t->x + c * t->h * t->w;

			for (int64_t r = 0; r < nruns; r++) {
				int64_t at = F * run_at[r], last = run_at[r] + run_n[r] - 1;

				input_rows(plane, t->h, t->w, run_y[r], run_x[r], F * run_n[r] + 2,
					   rows[0] + at, A, r0, r1);
				for (int k = r0; k < r1; k++) {
					x45[0][k][last] = rows[k][F * last + F];
					x45[1][k][last] = rows[k][F * last + F + 1];
				}
			}
			/* VW tiles at a time into the panels: lanes past nt are zeroed below */
			for (int64_t j = 0; j < nc; j += VW) {
				int64_t b = i0 + j;
				float *vo = v + (b / NR * t->cin + c) * NR + b % NR;
				bool direct = NR % VW == 0, half = 2 * NR == VW;

				for (int row = r0; row < r1; row++) {
					float *o = direct ? vo + row * A * pos_stride : tmp + row * A * VW;
					int64_t ld = direct ? pos_stride : VW;

					if (F == 4)
						input_cols(rows[row] + 4 * j, x45[0][row] + j,
							   x45[1][row] + j, brk + j, any[j / VW], o, ld);
#if VW == 16
					else
						input_cols2(rows[row] + 2 * j, x45[0][row] + j,
							    x45[1][row] + j, brk + j, any[j / VW], o, ld);
#endif
				}
				/*
				 * else from tmp: panels half a vector wide (MR 8 at
				 * avx512, F(2x2)'s tiles as A's rows) by two
				 * fixed-size copies a position; the lanes past the
				 * block's last tile are zeroed below
				 */
				for (int h = 0; half && h < 2 && b + h * NR < t->nt; h++) {
					vo = v + ((b / NR + h) * t->cin + c) * NR;
					for (int q = q0; q < q1; q++)
						memcpy(vo + q * pos_stride, tmp + q * VW + h * (VW / 2),
						       (VW / 2) * sizeof(float));
				}
				/* other widths: the tiles' runs within one panel */
				for (int64_t jj = 0; !direct && !half && jj < VW && b + jj < t->nt;) {
					int64_t tt = b + jj, n = NR - tt % NR;

					n = n < VW - jj ? n : VW - jj;
					n = n < t->nt - tt ? n : t->nt - tt;
					vo = v + (tt / NR * t->cin + c) * NR + tt % NR;
					for (int q = q0; q < q1; q++)
						memcpy(vo + q * pos_stride, tmp + q * VW + jj,
						       (size_t)n * sizeof(float));
					jj += n;
				}
			}
		}
	}
	/* the last panel's columns past the block are zero */
	for (int64_t c = c0; c < c1 && t->nt % NR; c++) {
		float *vo = v + ((np - 1) * t->cin + c) * NR;

		for (int q = q0; q < q1; q++)
			for (int jj = (int)(t->nt % NR); jj < NR; jj++)
				vo[q * pos_stride + jj] = 0.0f;
	}
}

void WINO_FN(ert_wino_input)(const struct ert_wino_tiles *t, int64_t c0, int64_t c1, float *v)
{
	input_tiles(t, c0, c1, v, 4);
}

#if VW == 16 /* F(2x2) at avx512 only (winograd.c) */
void WINO_FN(ert_wino2_input)(const struct ert_wino_tiles *t, int64_t c0, int64_t c1, float *v)
{
	input_tiles(t, c0, c1, v, 2);
}
#endif

/*
 * ReLU/Clip as the scalar code computes them: x > 0 ? x : 0 is max(x, 0);
 * x < lo ? lo : x > hi ? hi : x is max(lo, min(hi, x)) for lo <= hi (NaN
 * stays NaN).
 */
#define ACT_V(x, act, MAXF, MINF, SET1, zero)                                             \
	((act)->act == ERT_EPI_RELU   ? MAXF(x, zero)                                         \
	 : (act)->act == ERT_EPI_CLIP ? MAXF(SET1((act)->lo), MINF(SET1((act)->hi), x)) : (x))

/* Where the output transform puts the tiles of one segment of the block. */
struct wino_out_geom {
	int64_t ow;
	const int64_t *off;          /* tile i's top-left output pixel in its plane */
	const uint8_t *part;         /* 0: all 4 x 4 inside; else rows << 4 | columns inside */
	const bool *whole;           /* whole[k]: tiles UT k .. UT k + UT - 1 one 4 x 4 UT block */
	int64_t n;                   /* tiles of the group */
};

/* p[0 .. n - 1] (0 < n <= 4) into the low lanes, zero above; nothing else read */
static inline __m128 ld_part(const float *p, int n)
{
	__m128 lo = n >= 2 ? _mm_loadl_pi(_mm_setzero_ps(), (const __m64 *)p) : _mm_load_ss(p);

	return n == 3 ? _mm_movelh_ps(lo, _mm_load_ss(p + 2)) : n == 4 ? _mm_loadu_ps(p) : lo;
}

/* the low @n lanes of @q (0 < n <= 4) to p[0 .. n - 1]; nothing else written */
static inline void st_part(float *p, __m128 q, int n)
{
	if (n == 4) {
		_mm_storeu_ps(p, q);
		return;
	}
	if (n >= 2)
		_mm_storel_pi((__m64 *)p, q);
	else
		_mm_store_ss(p, q);
	if (n == 3)
		_mm_store_ss(p + 2, _mm_movehl_ps(q, q));
}

/*
 * Output row r of tile @i of the group, @q (bias and, without a residual,
 * the activation applied): to @y, plus @res and then the activation where
 * there is a residual (v = row + res, then ReLU/Clip of v, as
 * ert_act_apply() computes it). A tile cut by the image's right edge stores
 * its columns inside, one cut by the bottom edge its rows inside.
 */
static inline void tile_out_part(const struct wino_out_geom *g, int64_t i, int r, __m128 q,
				 const float *res, const struct ert_sgemm_epi *act, float *y)
{
	int64_t at = g->off[i] + r * g->ow;
	int cols = g->part[i] & 15;

	if (r >= g->part[i] >> 4)
		return;
	if (res) {
		q = _mm_add_ps(q, ld_part(res + at, cols));
		q = ACT_V(q, act, _mm_max_ps, _mm_min_ps, _mm_set1_ps, _mm_setzero_ps());
	}
	st_part(y + at, q, cols);
}

static inline void tile_out(const struct wino_out_geom *g, int64_t i, int r, __m128 q,
			    const float *res, const struct ert_sgemm_epi *act, float *y)
{
	if (i >= g->n)
		return;
	if (g->part[i]) {
		tile_out_part(g, i, r, q, res, act, y);
		return;
	}

	int64_t at = g->off[i] + r * g->ow;

	if (res) {
		q = _mm_add_ps(q, _mm_loadu_ps(res + at));
		q = ACT_V(q, act, _mm_max_ps, _mm_min_ps, _mm_set1_ps, _mm_setzero_ps());
	}
	_mm_storeu_ps(y + at, q);
}

/* Output row r of UT tiles side by side in the image (@v, as tile_out()'s @q). */
static inline void unit_out(const struct wino_out_geom *g, int k, int r, vf v, const float *res,
			    const struct ert_sgemm_epi *act, float *y)
{
	int64_t at = g->off[UT * k] + r * g->ow;

	if (res) {
		v = V_ADD(v, V_LD(res + at));
		v = ACT_V(v, act, V_MAX, V_MIN, V_SET1, V_ZERO());
	}
	V_ST(y + at, v);
}

#define SEG 256 /* tiles whose places are worked out at a time */

/*
 * The output transform, VW tiles at a time per output channel: A^T over the
 * positions (M loaded once, 24 vectors kept), then per output row A plus
 * the bias (ReLU/Clip on the vectors when there is no residual), a 4x4
 * transpose in each 128-bit lane, and each tile's four pixels of the row
 * stored as one 128-bit vector at its place (a residual added there, then
 * the activation; only the columns and rows inside the image where the
 * tile is cut by its edge). The sums are those of the scalar formulas,
 * left to right, nothing fused.
 */
void WINO_FN(ert_wino_output)(const struct ert_wino_tiles *t, const float *m, int64_t ldm,
			      const float *bias, const float *res,
			      const struct ert_sgemm_epi *act, int64_t c0, int64_t c1, float *y)
{
	const int64_t ps = t->m_pos, plane = t->oh * t->ow;
	const vf zero = V_ZERO();
	int64_t off[SEG];
	uint8_t part[SEG];
	bool whole[SEG / UT];

	for (int64_t s0 = 0; s0 < t->nt; s0 += SEG) {
		int64_t ns = t->nt - s0 < SEG ? t->nt - s0 : SEG;
		int64_t tile = t->t0 + s0, ty = tile / t->tiles_w, tx = tile % t->tiles_w;
		struct wino_out_geom g = { .ow = t->ow, .off = off, .part = part, .whole = whole };

		for (int64_t i = 0; i < ns; i++) {
			int64_t rows = t->oh - 4 * ty < 4 ? t->oh - 4 * ty : 4;
			int64_t cols = t->ow - 4 * tx < 4 ? t->ow - 4 * tx : 4;

			off[i] = 4 * ty * t->ow + 4 * tx;
			part[i] = rows == 4 && cols == 4 ? 0 : (uint8_t)(rows << 4 | cols);
			if (++tx == t->tiles_w) {
				tx = 0;
				ty++;
			}
		}
		for (int64_t k = 0; k < SEG / UT; k++) {
			whole[k] = UT * k + UT <= ns;
			for (int64_t i = UT * k; whole[k] && i < UT * k + UT; i++)
				whole[k] = !part[i] && (i == UT * k || off[i] == off[i - 1] + 4);
		}
		for (int64_t c = c0; c < c1; c++) {
			const vf b = V_SET1(bias ? bias[c] : 0.0f);
			const float *rc = res ? res + c * plane : NULL;
			float *yc = y + c * plane;

			/* ldm is a multiple of 16: whole vectors read inside the block */
			for (int64_t j = 0; j < ns; j += VW) {
				const float *mj = m + c * ldm + s0 + j;
				vf s[24];

				g.off = off + j;
				g.part = part + j;
				g.whole = whole + j / UT;
				g.n = ns - j;
				/* s = A^T M, column by column */
				for (int col = 0; col < 6; col++) {
					const float *p = mj + col * ps;
					vf m0 = V_LD(p), m1 = V_LD(p + 6 * ps), m2 = V_LD(p + 12 * ps);
					vf m3 = V_LD(p + 18 * ps), m4 = V_LD(p + 24 * ps);
					vf m5 = V_LD(p + 30 * ps);
					vf d12 = V_SUB(m1, m2), d34 = V_SUB(m3, m4);

					s[col] = V_ADD(V_ADD(V_ADD(V_ADD(m0, m1), m2), m3), m4);
					s[6 + col] = V_ADD(d12, V_MUL(2.0f, d34));
					s[12 + col] = V_ADD(V_ADD(m1, m2), V_MUL(4.0f, V_ADD(m3, m4)));
					s[18 + col] = V_ADD(V_ADD(d12, V_MUL(8.0f, d34)), m5);
				}
				/* per output row: Y = s A + bias, then out tile by tile */
				for (int r = 0; r < 4; r++) {
					const vf *e = s + 6 * r;
					vf d12 = V_SUB(e[1], e[2]), d34 = V_SUB(e[3], e[4]);
					vf o0 = V_ADD(V_ADD(V_ADD(V_ADD(V_ADD(e[0], e[1]), e[2]), e[3]),
							    e[4]), b);
					vf o1 = V_ADD(V_ADD(d12, V_MUL(2.0f, d34)), b);
					vf o2 = V_ADD(V_ADD(V_ADD(e[1], e[2]),
							    V_MUL(4.0f, V_ADD(e[3], e[4]))), b);
					vf o3 = V_ADD(V_ADD(V_ADD(d12, V_MUL(8.0f, d34)), e[5]), b);

					/* with a residual, the activation comes after it */
					if (!res) {
						o0 = ACT_V(o0, act, V_MAX, V_MIN, V_SET1, zero);
						o1 = ACT_V(o1, act, V_MAX, V_MIN, V_SET1, zero);
						o2 = ACT_V(o2, act, V_MAX, V_MIN, V_SET1, zero);
						o3 = ACT_V(o3, act, V_MAX, V_MIN, V_SET1, zero);
					}

					vf t0 = V_UNPLO(o0, o1), t1 = V_UNPHI(o0, o1);
					vf t2 = V_UNPLO(o2, o3), t3 = V_UNPHI(o2, o3);
					vf r0 = V_SHUF(t0, t2, 0x44), r1 = V_SHUF(t0, t2, 0xee);
					vf r2 = V_SHUF(t1, t3, 0x44), r3 = V_SHUF(t1, t3, 0xee);

					vf pk[4];

					lanes4(r0, r1, r2, r3, pk);
#define TILE_OUT(i, q) tile_out(&g, i, r, q, rc, act, yc)
#define UNIT_OUT(k)                                                  \
	do {                                                         \
		if (g.whole[k])                                      \
			unit_out(&g, k, r, pk[k], rc, act, yc);      \
		else                                                 \
			EMIT_UNIT(TILE_OUT, k, pk[k]);               \
	} while (0)
					UNIT_OUT(0);
					UNIT_OUT(1);
					UNIT_OUT(2);
					UNIT_OUT(3);
#undef UNIT_OUT
#undef TILE_OUT
				}
			}
		}
	}
}

#if VW == 16
/*
 * The output transform of F(2x2, 3x3), after the GEMM with its roles
 * swapped (M at m[q * ps + i * ldm + c]: tile i's products of all output
 * channels side by side), VW output channels at a time per tile: A^T M A
 * on vectors of channels (y0 = m0 + m1 + m2, y1 = m1 - m2 - m3 down, then
 * across), the bias added and the activation applied on them (after a
 * residual, gathered into a vector first, where there is one), then each
 * channel's two or four outputs stored at their places in its plane (one
 * float at a time: 4 per channel and tile, against the GEMM's 16 x Cin
 * multiply-adds).
 */
void WINO_FN(ert_wino2_output)(const struct ert_wino_tiles *t, const float *m, int64_t ldm,
				 const float *bias, const float *res,
				 const struct ert_sgemm_epi *act, int64_t c0, int64_t c1, float *y)
{
	const int64_t ps = t->m_pos, plane = t->oh * t->ow, ow = t->ow;
	const vf zero = V_ZERO();
	float o[4][VW] __attribute__((aligned(64)));

	for (int64_t i = 0; i < t->nt; i++) {
		int64_t tile = t->t0 + i, ty = tile / t->tiles_w, tx = tile % t->tiles_w;
		int64_t rows = t->oh - 2 * ty < 2 ? t->oh - 2 * ty : 2;
		int64_t cols = ow - 2 * tx < 2 ? ow - 2 * tx : 2;
		int64_t off = 2 * ty * ow + 2 * tx;
		const float *mi = m + i * ldm;

		for (int64_t c = c0; c < c1; c += VW) {
			int64_t n = c1 - c < VW ? c1 - c : VW;
			uint32_t bits = (uint32_t)((1ull << n) - 1);
			/* lanes past c1 load as zeros and are never stored */
			vf s[8], b = bias ? ld_mask((uintptr_t)(bias + c), bits) : zero, e[4];

			for (int col = 0; col < 4; col++) {
				uintptr_t p = (uintptr_t)(mi + col * ps + c), st = 4 * ps * sizeof(float);
				vf m0 = n == VW ? V_LD((const float *)p) : ld_mask(p, bits);
				vf m1 = n == VW ? V_LD((const float *)(p + st)) : ld_mask(p + st, bits);
				vf m2 = n == VW ? V_LD((const float *)(p + 2 * st)) : ld_mask(p + 2 * st, bits);
				vf m3 = n == VW ? V_LD((const float *)(p + 3 * st)) : ld_mask(p + 3 * st, bits);

				s[col] = V_ADD(V_ADD(m0, m1), m2);
				s[4 + col] = V_SUB(V_SUB(m1, m2), m3);
			}
			for (int r = 0; r < 2; r++) {
				const vf *sr = s + 4 * r;

				e[2 * r] = V_ADD(V_ADD(V_ADD(sr[0], sr[1]), sr[2]), b);
				e[2 * r + 1] = V_ADD(V_SUB(V_SUB(sr[1], sr[2]), sr[3]), b);
			}
			if (res) {
				for (int k = 0; k < 4; k++)
					for (int64_t l = 0; l < VW; l++)
						o[k][l] = 0.0f;
				for (int64_t l = 0; l < n; l++) {
					const float *rc = res + (c + l) * plane + off;

					for (int k = 0; k < 4; k++)
						if ((k >> 1) < rows && (k & 1) < cols)
							o[k][l] = rc[(k >> 1) * ow + (k & 1)];
				}
				for (int k = 0; k < 4; k++)
					e[k] = V_ADD(e[k], V_LD(o[k]));
			}
			for (int k = 0; k < 4; k++)
				V_ST(o[k], ACT_V(e[k], act, V_MAX, V_MIN, V_SET1, zero));
			for (int64_t l = 0; l < n; l++) {
				float *yc = y + (c + l) * plane + off;

				yc[0] = o[0][l];
				if (cols == 2)
					yc[1] = o[1][l];
				if (rows == 2) {
					yc[ow] = o[2][l];
					if (cols == 2)
						yc[ow + 1] = o[3][l];
				}
			}
		}
	}
}
#endif
