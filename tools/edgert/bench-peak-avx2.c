/* SPDX-License-Identifier: MIT */
/* The AVX2 fp32 peak: independent ymm FMA chains (built with -mavx2 -mfma). */
#include <immintrin.h>

#include "bench-suite.h"

/*
 * 12 chains: FMA latency 4-5 cycles times 2 FMA ports needs 8 to 10 in
 * flight; 12 plus the two operands fit the 16 ymm registers without spills.
 */
#define CHAINS 12

uint64_t bench_fma_chains_avx2(uint64_t iters, float *sink)
{
	/* a = a * m + c converges to c / (1 - m) = 1: no overflow, no denormals */
	const __m256 m = _mm256_set1_ps(0.999f), c = _mm256_set1_ps(0.001f);
	__m256 a[CHAINS];
	float out[8];
	__m256 sum;

	for (int k = 0; k < CHAINS; k++)
		a[k] = _mm256_set1_ps(1.0f + 0.01f * (float)k);
	for (uint64_t i = 0; i < iters; i++) {
		a[0] = _mm256_fmadd_ps(a[0], m, c);
		a[1] = _mm256_fmadd_ps(a[1], m, c);
		a[2] = _mm256_fmadd_ps(a[2], m, c);
		a[3] = _mm256_fmadd_ps(a[3], m, c);
		a[4] = _mm256_fmadd_ps(a[4], m, c);
		a[5] = _mm256_fmadd_ps(a[5], m, c);
		a[6] = _mm256_fmadd_ps(a[6], m, c);
		a[7] = _mm256_fmadd_ps(a[7], m, c);
		a[8] = _mm256_fmadd_ps(a[8], m, c);
		a[9] = _mm256_fmadd_ps(a[9], m, c);
		a[10] = _mm256_fmadd_ps(a[10], m, c);
		a[11] = _mm256_fmadd_ps(a[11], m, c);
	}
	sum = a[0];
	for (int k = 1; k < CHAINS; k++)
		sum = _mm256_add_ps(sum, a[k]);
	_mm256_storeu_ps(out, sum);
	*sink = out[0] + out[7];
	return iters * CHAINS * 8 * 2;
}
