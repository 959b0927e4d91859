/* SPDX-License-Identifier: MIT */
/*
 * conv-stem.h — direct fp32 convolution for layers with very few input
 * channels (a network's first convolution: 3x3/2 3 -> 32, 7x7/2 3 -> 64 on
 * a 224x224 image), at the AVX2 and AVX-512 levels.
 *
 * Their GEMM has K = c_in x window, 27 or 147, against an output of tens
 * of thousands of pixels: the implicit im2col packs K x N floats (1.35 MB
 * and 7.4 MB for those two) for a product of 27 or 147 steps per tile. Here
 * a band of output rows at a time copies the input rows it reads onto the
 * stack (48 KiB at most: L1), zero-padded and split into their column
 * phases (pixels 0, s, 2s, ...; then 1, s + 1, ...), so that every tap of
 * the window, for VW output pixels of a row, is one plain vector load; each
 * load feeds CO output channels (weights broadcast from a packed copy made
 * each run: a few thousand floats), CO x P accumulators of P pixel blocks
 * held in registers over the whole window, then the residual
 * ("ert.residual", added before the activation), the activation and one
 * store per vector into the NCHW output. The sums start from the bias and
 * add the taps in the weights' order (ci, kh, kw); FMA rounds differently
 * from the reference, within 1e-5 of the output's magnitude (test-cpu-levels).
 */
#ifndef ERT_CPU_CONV_STEM_H
#define ERT_CPU_CONV_STEM_H

#include "cpu/cpu-impl.h"
#include "ops/linalg-geom.h"

struct ert_conv_stem_args {
	const struct ert_conv_geom *g;
	int64_t n_img, c_in, m;      /* images, input and output channels (group 1) */
	const float *x;              /* [n_img, c_in, H, W] */
	const float *w;              /* [m, c_in, KH, KW] */
	const float *bias;           /* [m] or NULL */
	const float *res;            /* residual, the output's shape, or NULL */
	float *y;                    /* [n_img, m, OH, OW] */
	struct ert_act_desc act;
};

/*
 * Name of the stem kernel for a group-1 convolution of @c_in -> @m channels
 * and geometry @g at @cpu's level ("f32-conv-stem-avx512"), or NULL where
 * the rule does not take it: 2-D, at most ERT_CONV_STEM_MAX_CIN input
 * channels, at least 8 output channels (a tile's), a window of more than
 * one tap and at most ERT_CONV_STEM_MAX_TAPS products an output (c_in x
 * window), output rows at least 8 wide, and the copy of one output row's
 * input rows within the 48 KiB band buffer. Not at the scalar level. At
 * precision LOW with a bf16 GEMM kernel only up to ERT_CONV_STEM_LOW_MAX_TAPS
 * products an output (c_in x window): the bf16 GEMM's speed grows with its
 * K, this kernel's hardly (Sapphire Rapids, gemm-bench, 1 thread: 3x3/2 3 ->
 * 32, K = 27, AMX bf16 70 GFLOP/s against 140 here; 7x7/2 3 -> 64, K = 147,
 * AMX 250 against 180-190), so larger windows keep the bf16 GEMM.
 */
#define ERT_CONV_STEM_MAX_CIN 4
/*
 * Past this many products an output the GEMM keeps the layer: vit_s16's
 * patch embedding (16x16/16 3 -> 384: 768 products, windows that do not
 * overlap, so im2col copies nothing twice) ran 2.2-2.7 ms against 1.6-2.1
 * on the GEMM at 1 thread (loaded 2-core Sapphire Rapids VM, profile, four
 * alternated rounds; likewise at 2 threads, where its 14 output rows make
 * 3 chunks for 2 threads), and this kernel repacks its weights (m x taps
 * floats: 1.2 MB there) every run. The first convs measured here have 27
 * and 147.
 */
#define ERT_CONV_STEM_MAX_TAPS 160
#define ERT_CONV_STEM_LOW_MAX_TAPS 64
const char *ert_conv_stem_kernel(const struct ert_cpu *cpu, const struct ert_conv_geom *g,
				 int64_t c_in, int64_t m);

/* Workspace bytes of ert_conv_stem_run() (any level): the packed weights. */
size_t ert_conv_stem_workspace(const struct ert_conv_geom *g, int64_t c_in, int64_t m);

/* Run @a (ert_conv_stem_kernel() non-NULL) on @cpu's pool; @ws as sized above. */
void ert_conv_stem_run(struct ert_cpu *cpu, const struct ert_conv_stem_args *a, void *ws);

#endif /* ERT_CPU_CONV_STEM_H */
