/* SPDX-License-Identifier: MIT */
/* The AVX-512 fp32 peak: independent zmm FMA chains (built with -mavx512f). */
#include <immintrin.h>

#include "bench-suite.h"

/*
 * 16 chains: FMA latency 4 cycles times 2 zmm FMA ports (Intel server
 * cores; Zen 4 splits a zmm FMA over its two 256-bit pipes) needs 8 in
 * flight; 16 leave margin for longer latencies and fit the 32 zmm registers.
 */
#define CHAINS 16

uint64_t bench_fma_chains_avx512(uint64_t iters, float *sink)
{
	/* a = a * m + c converges to c / (1 - m) = 1: no overflow, no denormals */
	const __m512 m = _mm512_set1_ps(0.999f), c = _mm512_set1_ps(0.001f);
	__m512 a[CHAINS];
	__m512 sum;

	for (int k = 0; k < CHAINS; k++)
		a[k] = _mm512_set1_ps(1.0f + 0.01f * (float)k);
	for (uint64_t i = 0; i < iters; i++) {
		a[0] = _mm512_fmadd_ps(a[0], m, c);
		a[1] = _mm512_fmadd_ps(a[1], m, c);
		a[2] = _mm512_fmadd_ps(a[2], m, c);
		a[3] = _mm512_fmadd_ps(a[3], m, c);
		a[4] = _mm512_fmadd_ps(a[4], m, c);
		a[5] = _mm512_fmadd_ps(a[5], m, c);
		a[6] = _mm512_fmadd_ps(a[6], m, c);
		a[7] = _mm512_fmadd_ps(a[7], m, c);
		a[8] = _mm512_fmadd_ps(a[8], m, c);
		a[9] = _mm512_fmadd_ps(a[9], m, c);
		a[10] = _mm512_fmadd_ps(a[10], m, c);
		a[11] = _mm512_fmadd_ps(a[11], m, c);
		a[12] = _mm512_fmadd_ps(a[12], m, c);
		a[13] = _mm512_fmadd_ps(a[13], m, c);
		a[14] = _mm512_fmadd_ps(a[14], m, c);
		a[15] = _mm512_fmadd_ps(a[15], m, c);
	}
	sum = a[0];
	for (int k = 1; k < CHAINS; k++)
		sum = _mm512_add_ps(sum, a[k]);
	*sink = _mm512_reduce_add_ps(sum);
	return iters * CHAINS * 16 * 2;
}
