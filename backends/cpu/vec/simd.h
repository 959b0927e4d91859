/* SPDX-License-Identifier: MIT */
/*
 * simd.h — one set of names over AVX2 (8 lanes) and AVX-512 (16 lanes), for
 * the kernel templates in backends/cpu/vec/ and backends/cpu/conv/dwconv*.
 *
 * Include only from a file named *-avx2.c or *-avx512.c (the Makefile gives
 * those the level's -m flags), after defining ERT_SIMD_AVX512 for the wider
 * one. Comparisons are ordered and quiet: a NaN compares false. vf_max(a, b)
 * and vf_min(a, b) are the instructions' own a > b ? a : b and a < b ? a : b,
 * so which operand a NaN or a signed zero comes from is the second one; the
 * kernels pick operand order to match the scalar reference's expression.
 */
#ifndef ERT_CPU_SIMD_H
#define ERT_CPU_SIMD_H

#include <immintrin.h>
#include <stdint.h>

#define SIMD_INLINE static inline __attribute__((always_inline))

#if defined(ERT_SIMD_AVX512)

#define VW 16
typedef __m512 vf;
typedef __m512d vd;        /* VW / 2 doubles */
typedef __m512i vi;
typedef __mmask16 vm;

SIMD_INLINE vf vf_zero(void) { return _mm512_setzero_ps(); }
SIMD_INLINE vf vf_set1(float f) { return _mm512_set1_ps(f); }
SIMD_INLINE vf vf_ld(const float *p) { return _mm512_loadu_ps(p); }
SIMD_INLINE void vf_st(float *p, vf v) { _mm512_storeu_ps(p, v); }
SIMD_INLINE vf vf_ldm(const float *p, vm m) { return _mm512_maskz_loadu_ps(m, p); }
SIMD_INLINE void vf_stm(float *p, vm m, vf v) { _mm512_mask_storeu_ps(p, m, v); }

SIMD_INLINE vf vf_add(vf a, vf b) { return _mm512_add_ps(a, b); }
SIMD_INLINE vf vf_sub(vf a, vf b) { return _mm512_sub_ps(a, b); }
SIMD_INLINE vf vf_mul(vf a, vf b) { return _mm512_mul_ps(a, b); }
SIMD_INLINE vf vf_div(vf a, vf b) { return _mm512_div_ps(a, b); }
/*
 * 1 / d by the 14-bit estimate (relative error below 2^-14) and one Newton
 * step r + r (1 - d r): below 2^-28 before the FMA's rounding, for normal d
 * whose reciprocal is normal (vmath.h's erfc, d in [1, 8.5]); 0 and inf as 1/d.
 */
SIMD_INLINE vf vf_recip(vf d)
{
	__m512 r = _mm512_rcp14_ps(d);

	return _mm512_fmadd_ps(r, _mm512_fnmadd_ps(d, r, _mm512_set1_ps(1.0f)), r);
}
SIMD_INLINE vf vf_fma(vf a, vf b, vf c) { return _mm512_fmadd_ps(a, b, c); }
SIMD_INLINE vf vf_max(vf a, vf b) { return _mm512_max_ps(a, b); }
SIMD_INLINE vf vf_min(vf a, vf b) { return _mm512_min_ps(a, b); }

SIMD_INLINE vm vf_lt(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
SIMD_INLINE vm vf_le(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_LE_OQ); }
SIMD_INLINE vm vf_gt(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ); }
SIMD_INLINE vm vf_ge(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_GE_OQ); }
SIMD_INLINE vm vf_isnan(vf a) { return _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q); }
SIMD_INLINE vm vm_or(vm a, vm b) { return (vm)(a | b); }
SIMD_INLINE vm vm_and(vm a, vm b) { return (vm)(a & b); }
SIMD_INLINE vm vm_none(void) { return 0; }
SIMD_INLINE vm vm_all(void) { return 0xffff; }
/* m ? a : b, lane by lane */
SIMD_INLINE vf vf_sel(vm m, vf a, vf b) { return _mm512_mask_blend_ps(m, b, a); }

/* Lanes [a, b) of the vector; a and b are clamped to [0, VW]. */
SIMD_INLINE vm vm_range(int64_t a, int64_t b)
{
	uint32_t hi, lo;

	a = a < 0 ? 0 : a > VW ? VW : a;
	b = b < 0 ? 0 : b > VW ? VW : b;
	hi = (uint32_t)((1ull << b) - 1);
	lo = (uint32_t)((1ull << a) - 1);
	return (vm)(hi & ~lo);
}

SIMD_INLINE vf vf_abs(vf a) { return _mm512_abs_ps(a); }
/* |a| with the sign bit of s */
SIMD_INLINE vf vf_copysign(vf a, vf s)
{
	const vf sign = _mm512_castsi512_ps(_mm512_set1_epi32((int)0x80000000));

	return _mm512_or_ps(vf_abs(a), _mm512_and_ps(s, sign));
}
SIMD_INLINE vf vf_round(vf a)
{
	return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
/* a * 2^n for integral n (any range: overflow gives inf, underflow rounds once) */
SIMD_INLINE vf vf_scale2(vf a, vf n) { return _mm512_scalef_ps(a, n); }

/* Widen lanes [0, VW/2) and [VW/2, VW) to double. */
SIMD_INLINE vd vd_lo(vf a) { return _mm512_cvtps_pd(_mm512_castps512_ps256(a)); }
SIMD_INLINE vd vd_hi(vf a) { return _mm512_cvtps_pd(_mm512_extractf32x8_ps(a, 1)); }
SIMD_INLINE vd vd_zero(void) { return _mm512_setzero_pd(); }
SIMD_INLINE vd vd_set1(double d) { return _mm512_set1_pd(d); }
SIMD_INLINE vd vd_add(vd a, vd b) { return _mm512_add_pd(a, b); }
SIMD_INLINE vd vd_mul(vd a, vd b) { return _mm512_mul_pd(a, b); }
SIMD_INLINE vd vd_sub(vd a, vd b) { return _mm512_sub_pd(a, b); }
SIMD_INLINE vd vd_fma(vd a, vd b, vd c) { return _mm512_fmadd_pd(a, b, c); }
SIMD_INLINE vd vd_div(vd a, vd b) { return _mm512_div_pd(a, b); }
/* Two double halves narrowed (rounded once each) back into one vector. */
SIMD_INLINE vf vf_from_vd(vd lo, vd hi)
{
	return _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(lo)),
				  _mm512_cvtpd_ps(hi), 1);
}
/* The lanes' sum, in a fixed order (the same for every call). */
SIMD_INLINE double vd_hsum(vd a) { return _mm512_reduce_add_pd(a); }
SIMD_INLINE float vf_hmax(vf a) { return _mm512_reduce_max_ps(a); }

/* p[0], p[2], ..., p[2 VW - 2]: reads p[0 .. 2 VW - 2] only. */
SIMD_INLINE vf vf_ld_s2(const float *p)
{
	const vi even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);

	return _mm512_permutex2var_ps(_mm512_loadu_ps(p), even, _mm512_maskz_loadu_ps(0x7fff, p + 16));
}

/* Stride 2 with only raw elements p[a .. b) read (0 <= a <= b <= 2 VW); others 0. */
SIMD_INLINE vf vf_ld_s2_range(const float *p, int64_t a, int64_t b)
{
	const vi even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);

	return _mm512_permutex2var_ps(_mm512_maskz_loadu_ps(vm_range(a, b), p), even,
				      _mm512_maskz_loadu_ps(vm_range(a - 16, b - 16), p + 16));
}

/* p[i * s] for lanes in @m (others 0); s * (VW - 1) must fit in int32. */
SIMD_INLINE vf vf_gather_s(const float *p, int64_t s, vm m)
{
	const vi iota = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
	vi idx = _mm512_mullo_epi32(iota, _mm512_set1_epi32((int)s));

	return _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, idx, p, 4);
}

#else /* AVX2 */

#define VW 8
typedef __m256 vf;
typedef __m256d vd;
typedef __m256i vi;
typedef __m256 vm;         /* all-ones or all-zeros lanes */

SIMD_INLINE vf vf_zero(void) { return _mm256_setzero_ps(); }
SIMD_INLINE vf vf_set1(float f) { return _mm256_set1_ps(f); }
SIMD_INLINE vf vf_ld(const float *p) { return _mm256_loadu_ps(p); }
SIMD_INLINE void vf_st(float *p, vf v) { _mm256_storeu_ps(p, v); }
SIMD_INLINE vf vf_ldm(const float *p, vm m) { return _mm256_maskload_ps(p, _mm256_castps_si256(m)); }
SIMD_INLINE void vf_stm(float *p, vm m, vf v) { _mm256_maskstore_ps(p, _mm256_castps_si256(m), v); }

SIMD_INLINE vf vf_add(vf a, vf b) { return _mm256_add_ps(a, b); }
SIMD_INLINE vf vf_sub(vf a, vf b) { return _mm256_sub_ps(a, b); }
SIMD_INLINE vf vf_mul(vf a, vf b) { return _mm256_mul_ps(a, b); }
SIMD_INLINE vf vf_div(vf a, vf b) { return _mm256_div_ps(a, b); }
/*
 * 1 / d by the 12-bit estimate (relative error below 1.5 * 2^-12) and one
 * Newton step r + r (1 - d r): relative error below 2^-22.5 for normal d whose
 * reciprocal is normal (vmath.h's erfc, d in [1, 8.5]); 0 and inf as 1/d.
 */
SIMD_INLINE vf vf_recip(vf d)
{
	__m256 r = _mm256_rcp_ps(d);

	return _mm256_fmadd_ps(r, _mm256_fnmadd_ps(d, r, _mm256_set1_ps(1.0f)), r);
}
SIMD_INLINE vf vf_fma(vf a, vf b, vf c) { return _mm256_fmadd_ps(a, b, c); }
SIMD_INLINE vf vf_max(vf a, vf b) { return _mm256_max_ps(a, b); }
SIMD_INLINE vf vf_min(vf a, vf b) { return _mm256_min_ps(a, b); }

SIMD_INLINE vm vf_lt(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
SIMD_INLINE vm vf_le(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_LE_OQ); }
SIMD_INLINE vm vf_gt(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
SIMD_INLINE vm vf_ge(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_GE_OQ); }
SIMD_INLINE vm vf_isnan(vf a) { return _mm256_cmp_ps(a, a, _CMP_UNORD_Q); }
SIMD_INLINE vm vm_or(vm a, vm b) { return _mm256_or_ps(a, b); }
SIMD_INLINE vm vm_and(vm a, vm b) { return _mm256_and_ps(a, b); }
SIMD_INLINE vm vm_none(void) { return _mm256_setzero_ps(); }
SIMD_INLINE vm vm_all(void) { return _mm256_castsi256_ps(_mm256_set1_epi32(-1)); }
SIMD_INLINE vf vf_sel(vm m, vf a, vf b) { return _mm256_blendv_ps(b, a, m); }

SIMD_INLINE vm vm_range(int64_t a, int64_t b)
{
	const vi iota = _mm256_set_epi32(7, 6, 5, 4, 3, 2, 1, 0);

	a = a < 0 ? 0 : a > VW ? VW : a;
	b = b < 0 ? 0 : b > VW ? VW : b;
	/* a <= i < b: (i > a - 1) and (b > i) */
	return _mm256_castsi256_ps(_mm256_and_si256(
		_mm256_cmpgt_epi32(iota, _mm256_set1_epi32((int)a - 1)),
		_mm256_cmpgt_epi32(_mm256_set1_epi32((int)b), iota)));
}

SIMD_INLINE vf vf_abs(vf a)
{
	return _mm256_and_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff)));
}
SIMD_INLINE vf vf_copysign(vf a, vf s)
{
	const vf sign = _mm256_castsi256_ps(_mm256_set1_epi32((int)0x80000000));

	return _mm256_or_ps(vf_abs(a), _mm256_and_ps(s, sign));
}
SIMD_INLINE vf vf_round(vf a)
{
	return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
/*
 * a * 2^n for integral n in [-252, 254]: two exact power-of-two factors, so
 * the product rounds once (into the subnormals too), as scalef does.
 */
SIMD_INLINE vf vf_scale2(vf a, vf n)
{
	vi ni = _mm256_cvtps_epi32(n);
	vi h = _mm256_srai_epi32(ni, 1);
	vi l = _mm256_sub_epi32(ni, h);
	vf sh = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(h, _mm256_set1_epi32(127)), 23));
	vf sl = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(l, _mm256_set1_epi32(127)), 23));

	return _mm256_mul_ps(_mm256_mul_ps(a, sh), sl);
}

SIMD_INLINE vd vd_lo(vf a) { return _mm256_cvtps_pd(_mm256_castps256_ps128(a)); }
SIMD_INLINE vd vd_hi(vf a) { return _mm256_cvtps_pd(_mm256_extractf128_ps(a, 1)); }
SIMD_INLINE vd vd_zero(void) { return _mm256_setzero_pd(); }
SIMD_INLINE vd vd_set1(double d) { return _mm256_set1_pd(d); }
SIMD_INLINE vd vd_add(vd a, vd b) { return _mm256_add_pd(a, b); }
SIMD_INLINE vd vd_mul(vd a, vd b) { return _mm256_mul_pd(a, b); }
SIMD_INLINE vd vd_sub(vd a, vd b) { return _mm256_sub_pd(a, b); }
SIMD_INLINE vd vd_fma(vd a, vd b, vd c) { return _mm256_fmadd_pd(a, b, c); }
SIMD_INLINE vd vd_div(vd a, vd b) { return _mm256_div_pd(a, b); }
SIMD_INLINE vf vf_from_vd(vd lo, vd hi)
{
	return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm256_cvtpd_ps(lo)),
				    _mm256_cvtpd_ps(hi), 1);
}
SIMD_INLINE double vd_hsum(vd a)
{
	__m128d s = _mm_add_pd(_mm256_castpd256_pd128(a), _mm256_extractf128_pd(a, 1));

	return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}
SIMD_INLINE float vf_hmax(vf a)
{
	__m128 m = _mm_max_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));

	m = _mm_max_ps(m, _mm_movehl_ps(m, m));
	m = _mm_max_ss(m, _mm_movehdup_ps(m));
	return _mm_cvtss_f32(m);
}

/* p[0], p[2], ..., p[14]: reads p[0 .. 14] only. */
SIMD_INLINE vf vf_ld_s2(const float *p)
{
	vf lo = _mm256_loadu_ps(p), hi = vf_ldm(p + 8, vm_range(0, 7));
	vf t = _mm256_shuffle_ps(lo, hi, 0x88);   /* lo0 lo2 hi0 hi2 | lo4 lo6 hi4 hi6 */

	return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(t), 0xd8));
}

SIMD_INLINE vf vf_ld_s2_range(const float *p, int64_t a, int64_t b)
{
	vf lo = vf_ldm(p, vm_range(a, b)), hi = vf_ldm(p + 8, vm_range(a - 8, b - 8));
	vf t = _mm256_shuffle_ps(lo, hi, 0x88);

	return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(t), 0xd8));
}

SIMD_INLINE vf vf_gather_s(const float *p, int64_t s, vm m)
{
	const vi iota = _mm256_set_epi32(7, 6, 5, 4, 3, 2, 1, 0);
	vi idx = _mm256_mullo_epi32(iota, _mm256_set1_epi32((int)s));

	return _mm256_mask_i32gather_ps(_mm256_setzero_ps(), p, idx, m, 4);
}

#endif

/* The first @n lanes (n clamped to [0, VW]). */
SIMD_INLINE vm vm_first(int64_t n) { return vm_range(0, n); }

#endif /* ERT_CPU_SIMD_H */
