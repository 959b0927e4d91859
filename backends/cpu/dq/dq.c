/* SPDX-License-Identifier: MIT */
/*
 * Dynamic quantisation: the activation quantiser shared by every level and
 * the scalar reference dot kernel (the oracle the other levels must match
 * bit for bit, see dq.h).
 */
#include <math.h>
#include <string.h>

#include "cpu/dq/dq.h"

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF /* the levels' bits must not depend on fused multiply-adds */
#endif

static const struct ert_dq_kernel kernels[] = {
	{ "dq8-gemm-scalar", "dq4-gemm-scalar", ert_dq_dot__scalar },
	{ "dq8-gemm-avx2", "dq4-gemm-avx2", ert_dq_dot__avx2 },
	{ "dq8-gemm-avx512vnni", "dq4-gemm-avx512vnni", ert_dq_dot__avx512vnni },
};

const struct ert_dq_kernel *ert_dq_kernel_for(enum ert_cpu_isa isa)
{
	return isa >= ERT_ISA_AVX512VNNI ? &kernels[2] : isa >= ERT_ISA_AVX2 ? &kernels[1]
									       : &kernels[0];
}

/*
 * Round to nearest even after clamping to +-127 (a NaN clamps to -127, as
 * the vector max instructions do); the scale is a division so that every
 * level that quantises gets the same bits.
 */
void ert_dq_quant_rows(const float *x, int64_t n, int64_t rs, int64_t cs, int64_t k, bool int4,
		       int8_t *q, float *s)
{
	int64_t kb = (k + ERT_DQ_BLOCK - 1) / ERT_DQ_BLOCK;

	for (int64_t i = 0; i < n; i++) {
		const float *xr = x + i * rs;
		int8_t *qr = q + i * kb * ERT_DQ_BLOCK;

		for (int64_t b = 0; b < kb; b++) {
			int64_t k0 = b * ERT_DQ_BLOCK;
			int64_t len = k - k0 < ERT_DQ_BLOCK ? k - k0 : ERT_DQ_BLOCK;
			float amax = 0.0f, scale, inv;
			int8_t *qb = qr + k0;

			for (int64_t t = 0; t < len; t++) {
				float a = fabsf(xr[(k0 + t) * cs]);

				amax = a > amax ? a : amax;
			}
			scale = amax / 127.0f;
			inv = amax > 0.0f ? 127.0f / amax : 0.0f;
			s[i * kb + b] = scale;
			memset(qb, 0, ERT_DQ_BLOCK);
			for (int64_t t = 0; t < len; t++) {
				float v = xr[(k0 + t) * cs] * inv;

				v = v > -127.0f ? v : -127.0f;
				v = v < 127.0f ? v : 127.0f;
				/* int4 weights unpack as 16 low nibbles (even k), then 16 high ones */
				qb[int4 ? (t & 1) * 16 + t / 2 : t] = (int8_t)lrintf(v);
			}
		}
	}
}

/* Block @b of weight row @r in the activations' order (dq.h). */
static void weight_block(const struct ert_dq_w *w, int64_t r, int64_t b, int8_t out[32])
{
	if (w->bits == 8) {
		memcpy(out, w->q + r * w->q_rs + b * 32, 32);
		return;
	}
	const uint8_t *p = w->q + r * w->q_rs + b * 16;

	for (int t = 0; t < 16; t++) {
		int lo = p[t] & 0xf, hi = p[t] >> 4;

		out[t] = (int8_t)(lo >= 8 ? lo - 16 : lo);
		out[16 + t] = (int8_t)(hi >= 8 ? hi - 16 : hi);
	}
}

void ert_dq_dot__scalar(const int8_t *qa, const float *sa, int64_t ni, const struct ert_dq_w *w,
			int64_t j0, int64_t nj, float *out, int64_t out_rs)
{
	int8_t wb[32];

	for (int64_t j = 0; j < nj; j++) {
		const float *sw = w->s + (j0 + j) * w->s_rs;

		for (int64_t i = 0; i < ni; i++)
			out[i * out_rs + j] = 0.0f;
		/* each output still adds its blocks in order, one after another */
		for (int64_t b = 0; b < w->kb; b++) {
			weight_block(w, j0 + j, b, wb);
			for (int64_t i = 0; i < ni; i++) {
				const int8_t *ab = qa + (i * w->kb + b) * 32;
				int32_t isum = 0;
				float sc, p;

				for (int t = 0; t < 32; t++)
					isum += (int32_t)ab[t] * wb[t];
				sc = sa[i * w->kb + b] * sw[b];
				p = (float)isum * sc;
				out[i * out_rs + j] += p;
			}
		}
	}
}
