/* SPDX-License-Identifier: MIT */
/*
 * dq.h — dynamic quantisation: Conv, Gemm and MatMul whose weights a model
 * stores block-quantised (.ert encodings 3 and 4) and a memory LOW session
 * keeps so (docs/dynamic-quant.md).
 *
 * Each output is a dot product over K of an activation row and a weight
 * row. Activations are quantised as the op runs, per row and per block of
 * ERT_DQ_BLOCK along K, symmetric int8 in -127..127 (scale = max |x| / 127);
 * weights are int8 in -127..127 or int4 in -7..7 with one scale per row and
 * block. Each block's integer sum is exact at every level, so every level
 * computes, for every output, the same float operations in the same order:
 *
 *     acc = 0; for each block b: acc += (float)isum_b * (sa_b * sw_b)
 *
 * and gives the scalar reference's bits. Bias, alpha/beta, residual and the
 * fused activation follow, in portable code shared by the levels.
 */
#ifndef ERT_CPU_DQ_H
#define ERT_CPU_DQ_H

#include "cpu/cpu-impl.h"

#define ERT_DQ_BLOCK 32

/*
 * Weights as the kernels read them: @rows rows of @k values, blocks of 32
 * along k (kb = ceil(k / 32) per row). Row r's block b: 32 int8 at
 * q + r * q_rs + b * 32 (bits 8; a short last block is read whole, so rows
 * are padded, or k is a multiple of 32), or 16 bytes of int4 pairs at
 * q + r * q_rs + b * 16 (bits 4, k a multiple of 32). Its scale:
 * s[r * s_rs + b].
 */
struct ert_dq_w {
	int bits;
	int64_t rows, k, kb;
	const uint8_t *q;
	int64_t q_rs;
	const float *s;
	int64_t s_rs;
};

/*
 * out[i * out_rs + j'] for i < ni, j' < nj (weight row j0 + j'): the sum
 * above over activation rows of kb * 32 int8 (qa) and kb scales (sa). With
 * int4 weights the activation blocks are stored in the order
 * ert_dq_quant_rows() gives for them.
 */
typedef void (*ert_dq_dot_fn)(const int8_t *qa, const float *sa, int64_t ni,
			      const struct ert_dq_w *w, int64_t j0, int64_t nj, float *out,
			      int64_t out_rs);

struct ert_dq_kernel {
	const char *name8, *name4;   /* kernel names for int8 and int4 weights */
	ert_dq_dot_fn dot;
};

/* The kernel of a level: scalar, avx2 (also avx512), avx512vnni (also amx). */
const struct ert_dq_kernel *ert_dq_kernel_for(enum ert_cpu_isa isa);

/*
 * Quantise @n rows of @k floats (row i at x + i * rs, element k at + k * cs)
 * into rows of kb * 32 int8 (zeros past k) and kb scales. @int4: each block
 * is stored as its 16 even elements then its 16 odd ones, the order in which
 * the kernels unpack a block of int4 pairs (low nibbles, then high ones).
 */
void ert_dq_quant_rows(const float *x, int64_t n, int64_t rs, int64_t cs, int64_t k, bool int4,
		       int8_t *q, float *s);

/* Level kernels (dq-<level>.c). */
void ert_dq_dot__scalar(const int8_t *qa, const float *sa, int64_t ni, const struct ert_dq_w *w,
			int64_t j0, int64_t nj, float *out, int64_t out_rs);
void ert_dq_dot__avx2(const int8_t *qa, const float *sa, int64_t ni, const struct ert_dq_w *w,
		      int64_t j0, int64_t nj, float *out, int64_t out_rs);
void ert_dq_dot__avx512vnni(const int8_t *qa, const float *sa, int64_t ni,
			    const struct ert_dq_w *w, int64_t j0, int64_t nj, float *out,
			    int64_t out_rs);


#endif /* ERT_CPU_DQ_H */
