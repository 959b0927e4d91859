/* SPDX-License-Identifier: MIT */
/*
 * The portable fp32 GEMM micro-kernel (level "scalar": the reference the SIMD
 * kernels are tested against). Written so that GCC -O3 keeps the 4x8
 * accumulators in eight SSE registers and vectorises across the NR columns
 * (baseline x86-64; measured against 6x8, 3x16 and 4x12 shapes, 4x8 was the
 * fastest GCC output).
 */
#include "cpu/gemm/sgemm.h"

#define MR 4
#define NR 8

static float epi_act(float v, const struct ert_sgemm_epi *e)
{
	switch (e->act) {
	case ERT_EPI_RELU:
		return v > 0.0f ? v : 0.0f;
	case ERT_EPI_CLIP:
		return v < e->lo ? e->lo : v > e->hi ? e->hi : v;
	default:
		return v;
	}
}

void ert_f32_gemm_ukernel_4x8__scalar(int64_t kc, const float *restrict a,
				      const float *restrict b, int64_t ldb, float *restrict c,
				      int64_t ldc, int64_t mr, int64_t nr,
				      const struct ert_sgemm_epi *e)
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
		b += ldb;
	}
	for (int64_t i = 0; i < mr; i++) {
		float *ci = c + i * ldc;
		const float base = e->bias ? e->bias[i] : 0.0f;

		for (int64_t j = 0; j < nr; j++) {
			float v = (e->load_c ? ci[j] : base) + e->alpha * acc[i * NR + j];

			if (e->cbias)
				v += e->cbias[j];
			if (e->res)
				v += e->res[i * ldc + j];

			ci[j] = epi_act(v, e);
		}
	}
}
