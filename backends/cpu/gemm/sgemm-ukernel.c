/* SPDX-License-Identifier: MIT */
/*
 * The portable fp32 GEMM micro-kernel. Written so that GCC -O3 keeps the 4x8
 * accumulators in eight SSE registers and vectorises across the NR columns
 * (baseline x86-64; measured against 6x8, 3x16 and 4x12 shapes, 4x8 was the
 * fastest GCC output). The SIMD variants come as separate kernels.
 */
#include "cpu/gemm/sgemm.h"

#define MR ERT_SGEMM_MR
#define NR ERT_SGEMM_NR

void ert_f32_gemm_ukernel_4x8__scalar(int64_t kc, const float *restrict a,
				      const float *restrict b, float *restrict c, int64_t ldc,
				      int64_t mr, int64_t nr, float alpha, bool load_c,
				      const float *restrict bias)
{
	float acc[MR * NR] = { 0 };

	for (int64_t p = 0; p < kc; p++) {
		float bv[NR];

		for (int j = 0; j < NR; j++)
			bv[j] = b[j];
		for (int i = 0; i < MR; i++) {
			const float av = a[i];

			for (int j = 0; j < NR; j++)
				acc[i * NR + j] += av * bv[j];
		}
		a += MR;
		b += NR;
	}
	if (mr == MR && nr == NR) {
		for (int i = 0; i < MR; i++) {
			float *ci = c + i * ldc;
			const float base = bias ? bias[i] : 0.0f;

			if (load_c)
				for (int j = 0; j < NR; j++)
					ci[j] += alpha * acc[i * NR + j];
			else
				for (int j = 0; j < NR; j++)
					ci[j] = base + alpha * acc[i * NR + j];
		}
		return;
	}
	for (int64_t i = 0; i < mr; i++) {
		float *ci = c + i * ldc;
		const float base = bias ? bias[i] : 0.0f;

		for (int64_t j = 0; j < nr; j++)
			ci[j] = (load_c ? ci[j] : base) + alpha * acc[i * NR + j];
	}
}
