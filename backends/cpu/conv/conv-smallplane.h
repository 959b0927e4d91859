/* SPDX-License-Identifier: MIT */
/*
 * conv-smallplane.h — dense convolutions on small output planes with the
 * GEMM's roles swapped.
 *
 * The Conv GEMM (ops/linalg-conv.c) computes C = W * im2col: output
 * channels on M (MR rows a block), pixels on N (NR columns a panel). On a
 * 7x7 plane N = 49 = 48 + 1 at avx512 (3 x 16 + 1 at avx2), so a one-column
 * edge panel costs a pass over every K step of A for one column. Here the
 * product is taken transposed, C^T (pixels x Cout) = im2col^T (pixels x K) *
 * W^T (K x Cout): the pixels are the M rows (49 = 6 x 8 + 1 at avx512, an
 * edge row costs one broadcast per K step) and the weights, packed once at
 * plan time as NR-wide B panels (ERT_CPU_PACK_B of W^T), the N columns. The
 * micro-kernels are the GEMM's (at avx512 a copy that also prefetches the
 * weights the next call reads, from inside its K loop), run by a loop of
 * this file's own; the bias is the column bias of their epilogue. im2col^T
 * is packed straight into the A panels the micro-kernel reads (no K x N
 * temporary; on two threads or more each thread packs its own copy, where
 * A is at least the input's size), C^T goes to a scratch in the workspace,
 * and each thread transposes its columns into the NCHW output, adding a
 * fused residual and applying the activation there when there is one
 * (act(conv + bias + residual)); otherwise the micro-kernel's epilogue
 * applies it.
 *
 * Which layers take it: ert_conv_sp_kernel() (docs/cpu-kernels.md).
 */
#ifndef ERT_CPU_CONV_SMALLPLANE_H
#define ERT_CPU_CONV_SMALLPLANE_H

#include "cpu/gemm/sgemm.h"
#include "ops/linalg-geom.h"

/*
 * Output planes of at most this many pixels: 7x7 (49) and 8x8 take it, 14x14
 * (196) does not. Measured at avx2 on Zen 3 (gemm-bench, 1 thread): the
 * 7x7-output layers of ResNet gained 10-45 %, the 14x14 ones lost 5-15 %
 * (the old path's 196 = 12 x 16 + 4 wastes little there, and the swapped
 * one pays for packing im2col^T and the transposing pass). A build may set
 * another limit to measure other CPUs: -DERT_CONV_SP_MAX_PIXELS=256 takes
 * 14x14 too; 0, with ERT_CONV_SP_WINDOW_PIXELS 0, turns the path off (the
 * before of a comparison).
 */
#ifndef ERT_CONV_SP_MAX_PIXELS
#define ERT_CONV_SP_MAX_PIXELS 64
#endif

/*
 * At avx512 (8 x 48), output planes of at most this many pixels also take
 * it when the window is larger than 1x1 and at most 3x3 (what was measured:
 * not ViT's 16x16/16 patch embedding, also 196 pixels): on Sapphire Rapids
 * (gemm-bench, 1 thread, two alternated rounds) 3x3/2 256 -> 256 and 128 ->
 * 256 onto 14x14 ran at 181-188 GFLOP/s swapped against 125-153 on the
 * im2col GEMM (its stride-2 im2col about a fifth of the time, and N = 196 =
 * 4 x 48 + 4 an edge panel of 4 columns), at 2 threads 249-285 against
 * 167-240. The 1x1/2 layers onto 14x14 were no faster swapped (164-181
 * against 160-164), and 3x3/2 onto 28x28 (784 pixels) gained 3-8 % at 1
 * thread but lost a third at 2 (16-column work items: 8 for 128 channels).
 * Both limits 0 turn the path off.
 */
#ifndef ERT_CONV_SP_WINDOW_PIXELS
#define ERT_CONV_SP_WINDOW_PIXELS 196
#endif

/*
 * The kernel name ("f32-conv-smallplane-8x48-avx512") if a group-1 Conv of
 * geometry @g, @c_in -> @m channels, runs swapped in @cpu's session, else
 * NULL: an fp32 SIMD GEMM kernel (not the scalar reference level, not
 * precision LOW's bf16 kernels), at most ERT_CONV_SP_MAX_PIXELS output
 * pixels (ERT_CONV_SP_WINDOW_PIXELS at avx512 for windows of 2 to 3x3
 * taps), input planes of at most INT32_MAX floats, and fewer padded
 * multiply-adds swapped than not (rounding the pixels and channels up to
 * the register block that holds each). The weights must also be constant
 * and prepacked (decided by the caller).
 */
const char *ert_conv_sp_kernel(const struct ert_cpu *cpu, const struct ert_conv_geom *g,
			       int64_t c_in, int64_t m);

/* Workspace bytes ert_conv_sp_run() needs for one such Conv. */
size_t ert_conv_sp_workspace(const struct ert_cpu *cpu, const struct ert_conv_geom *g,
			     int64_t c_in, int64_t m);

/* The weights as B: W^T (K x m, K = c_in x window), ert_sgemm_pack_b() panels of cpu->gemm. */
static inline struct ert_cpu_pack_key ert_conv_sp_pack_key(const float *w, int64_t k, int64_t m)
{
	return (struct ert_cpu_pack_key){
		.src = w, .kind = ERT_CPU_PACK_B, .rows = k, .cols = m, .rs = 1, .cs = k,
		.count = 1,
	};
}

struct ert_conv_sp_args {
	const struct ert_conv_geom *g;
	int64_t n_img, c_in, m;
	const float *x;               /* n_img x c_in input planes */
	const float *w_packed;        /* from ert_conv_sp_pack_key() */
	const float *bias;            /* m, or NULL */
	const float *res;             /* fused residual, the output's shape, or NULL */
	struct ert_act_desc act;
	float *y;                     /* n_img x m output planes */
};

/* Run the convolution with @ws of ert_conv_sp_workspace() bytes. */
void ert_conv_sp_run(const struct ert_cpu *cpu, const struct ert_conv_sp_args *a, void *ws);

/*
 * ert_f32_gemm_ukernel_8x48__avx512() (the same sums, bit for bit) that also
 * prefetches @pf_lines 64-byte lines from @pf on towards L2, one every other
 * K step (conv-smallplane-avx512.c).
 */
void ert_conv_sp_ukernel_8x48__avx512(int64_t kc, const float *a, const float *b, int64_t ldb,
				      float *c, int64_t ldc, int64_t mr, int64_t nr,
				      const struct ert_sgemm_epi *e, const void *pf,
				      int64_t pf_lines);

/*
 * One 8-row panel of im2col^T at avx512: for each of @c_in planes of @in_sp
 * floats from @x and each of @kk taps, the 8 floats at the offsets idx[tap][0..7]
 * (0.0f where an offset is -1), into @dst as [c_in][kk][8].
 */
void ert_conv_sp_gather_8__avx512(const float *x, int64_t in_sp, int64_t c_in, int64_t kk,
				  const int32_t *idx, float *dst);

/*
 * dst[c * ldd + i] = src[i * lds + c] for @rows rows i and @cols columns c, at avx512
 * (16 x 16 blocks transposed in registers).
 */
void ert_conv_sp_transpose__avx512(const float *src, int64_t lds, int64_t rows, int64_t cols,
				   float *dst, int64_t ldd);

#endif /* ERT_CPU_CONV_SMALLPLANE_H */
