/* SPDX-License-Identifier: MIT */
/*
 * float32 Sigmoid, Tanh, Erf and Gelu four lanes at a time, through the GCC/Clang
 * vector extension (SSE2 on x86-64, NEON on arm64; no intrinsics). libm's
 * expf/tanhf/erff are scalar calls, and without -ffast-math the compiler cannot
 * vectorise the selects these functions need; these loops are about ten times
 * faster and stay within a few float ulps (checked in test-ops-elementwise).
 *
 * exp: x = n ln2 + r with |r| <= ln2/2 (ln2 split in two for exactness), e^r
 * by its degree-7 Taylor polynomial (truncation < 1e-8 relative), 2^n built
 * in the exponent bits. Inputs are clamped to [-87, 88] so that 2^n stays a
 * normal float; callers only use it where that clamp cannot show.
 */
#include <math.h>
#include <string.h>

#include "cpu/ops/elementwise.h"

typedef float v4f __attribute__((vector_size(16)));
typedef int32_t v4i __attribute__((vector_size(16)));

static inline v4f splat(float f)
{
	return (v4f){ f, f, f, f };
}

static inline v4f select(v4i m, v4f a, v4f b)
{
	v4i ai, bi, r;

	memcpy(&ai, &a, sizeof(ai));
	memcpy(&bi, &b, sizeof(bi));
	r = (m & ai) | (~m & bi);
	memcpy(&a, &r, sizeof(a));
	return a;
}

static inline v4f vabs(v4f x)
{
	v4i xi;

	memcpy(&xi, &x, sizeof(xi));
	xi &= 0x7fffffff;
	memcpy(&x, &xi, sizeof(x));
	return x;
}

/* Copy the sign of @s onto non-negative @x. */
static inline v4f with_sign(v4f x, v4f s)
{
	v4i xi, si;

	memcpy(&xi, &x, sizeof(xi));
	memcpy(&si, &s, sizeof(si));
	xi |= si & (int32_t)0x80000000;
	memcpy(&x, &xi, sizeof(x));
	return x;
}

static inline v4f vexp(v4f x)
{
	const v4f shift = splat(12582912.0f); /* 1.5 * 2^23: adding rounds to an integer */
	v4f t, n, r, p, s;
	v4i ni;

	x = select(x < splat(-87.0f), splat(-87.0f), x);
	x = select(x > splat(88.0f), splat(88.0f), x);
	t = x * splat(1.44269504088896341f) + shift;
	n = t - shift;
	memcpy(&ni, &t, sizeof(ni));
	ni -= 0x4b400000; /* the bits of shift */
	r = x - n * splat(0.693145751953125f) - n * splat(1.42860676533018704e-6f);
	p = splat(1.0f / 5040);
	p = p * r + splat(1.0f / 720);
	p = p * r + splat(1.0f / 120);
	p = p * r + splat(1.0f / 24);
	p = p * r + splat(1.0f / 6);
	p = p * r + splat(0.5f);
	p = p * r + splat(1.0f);
	p = p * r + splat(1.0f);
	ni = (ni + 127) << 23;
	memcpy(&s, &ni, sizeof(s));
	return p * s;
}

static inline v4f vsigmoid(v4f x)
{
	return splat(1.0f) / (splat(1.0f) + vexp(-x));
}

/* Near 0 the odd series (next term < 1e-8 relative); elsewhere through e^2|x|. */
static inline v4f vtanh(v4f x)
{
	v4f a = vabs(x), x2 = x * x, small, big;

	small = splat(62.0f / 2835);
	small = small * x2 + splat(-17.0f / 315);
	small = small * x2 + splat(2.0f / 15);
	small = small * x2 + splat(-1.0f / 3);
	small = small * x2 * x + x;
	big = splat(1.0f) - splat(2.0f) / (vexp(a + a) + splat(1.0f));
	return select(a < splat(0.25f), small, with_sign(big, x));
}

/*
 * Near 0 the Maclaurin series of erf (to x^19; the next term is below 2e-9
 * relative); elsewhere Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7,
 * under 2.1e-7 relative for |x| >= 0.8).
 */
static inline v4f verf(v4f x)
{
	v4f a = vabs(x), x2 = x * x, small, t, q, big;

	small = splat(1.0f / 6894720);
	small = small * x2 + splat(-1.0f / 685440);
	small = small * x2 + splat(1.0f / 75600);
	small = small * x2 + splat(-1.0f / 9360);
	small = small * x2 + splat(1.0f / 1320);
	small = small * x2 + splat(-1.0f / 216);
	small = small * x2 + splat(1.0f / 42);
	small = small * x2 + splat(-1.0f / 10);
	small = small * x2 + splat(1.0f / 3);
	small = (x - small * x2 * x) * splat(1.12837916709551257f);
	t = splat(1.0f) / (splat(1.0f) + splat(0.3275911f) * a);
	q = splat(1.061405429f);
	q = q * t + splat(-1.453152027f);
	q = q * t + splat(1.421413741f);
	q = q * t + splat(-0.284496736f);
	q = q * t + splat(0.254829592f);
	big = splat(1.0f) - q * t * vexp(-x2);
	return select(a < splat(0.8f), small, with_sign(big, x));
}

static inline v4f vgelu(v4f x)
{
	return splat(0.5f) * x * (splat(1.0f) + verf(x * splat(0.70710678118654752f)));
}

static inline v4f vgelu_tanh(v4f x)
{
	v4f inner = splat(0.79788456080286535588f) * (x + splat(0.044715f) * x * x * x);

	return splat(0.5f) * x * (splat(1.0f) + vtanh(inner));
}

/* Whole vectors straight from memory; the tail through a padded vector. */
#define DEF_VLOOP(name, fn)                                                              \
	void name(const float *x, float *y, int64_t n)                                  \
	{                                                                               \
		int64_t i = 0;                                                          \
		v4f v;                                                                  \
		for (; i + 4 <= n; i += 4) {                                            \
			memcpy(&v, x + i, sizeof(v));                                   \
			v = fn(v);                                                      \
			memcpy(y + i, &v, sizeof(v));                                   \
		}                                                                       \
		if (i < n) {                                                            \
			v = splat(0.0f);                                                \
			memcpy(&v, x + i, (size_t)(n - i) * sizeof(float));             \
			v = fn(v);                                                      \
			memcpy(y + i, &v, (size_t)(n - i) * sizeof(float));             \
		}                                                                       \
	}

DEF_VLOOP(ert_vm_sigmoid_f32, vsigmoid)
DEF_VLOOP(ert_vm_tanh_f32, vtanh)
DEF_VLOOP(ert_vm_erf_f32, verf)
static DEF_VLOOP(gelu_body, vgelu)
DEF_VLOOP(ert_vm_gelu_tanh_f32, vgelu_tanh)

/*
 * Below x = -2, 1 + erf(x/sqrt2) is small and the absolute error of 7.1.26
 * would show relative to it: those elements take libm's erfc instead.
 */
void ert_vm_gelu_f32(const float *x, float *y, int64_t n)
{
	float in[ERT_EW_CHUNK];

	/* A copy of the inputs: the run may be in place. */
	for (int64_t i = 0; i < n; i += ERT_EW_CHUNK) {
		int64_t m = n - i < ERT_EW_CHUNK ? n - i : ERT_EW_CHUNK;

		memcpy(in, x + i, (size_t)m * sizeof(float));
		gelu_body(in, y + i, m);
		for (int64_t j = 0; j < m; j++)
			if (in[j] < -2.0f)
				y[i + j] = 0.5f * in[j] * erfcf(-in[j] * 0.70710678118654752f);
	}
}
