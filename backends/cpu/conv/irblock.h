/* SPDX-License-Identifier: MIT */
/*
 * irblock.h — a MobileNet-v2 inverted-residual block run by bands of rows:
 * Conv 1x1 (expand) -> act -> depthwise Conv -> act -> Conv 1x1 (project)
 * [+ residual] -> act, without writing the expanded tensor or the depthwise
 * output to memory.
 *
 * For each band of R output rows of the depthwise conv: the expanded input
 * rows it reads (its rows plus the window's halo) come from the expand GEMM
 * on that range of pixels, into a buffer that keeps the rows the next band
 * shares with this one (a small ring: 2 rows at stride 1, 1 at stride 2), so
 * nothing is computed twice; the depthwise band kernel (cpu/conv/dwconv.h)
 * writes the band's depthwise output; the project GEMM reads it and writes
 * the band's output rows with its bias, residual and activation epilogue.
 * R is the largest band whose two buffers fit half of one core's L2. Both
 * GEMMs are the Conv's own (cpu/gemm/sgemm.h: the same kernel, the same
 * packed weights, the same K blocks), and every output float of each stage
 * sums the same products in the same order as the separate Conv ops do, so
 * the results are bit-identical to them at every level.
 *
 * Threads: each image's output rows are cut into one chunk per thread (the
 * band no taller than a chunk where there are fewer images than threads);
 * a thread runs a chunk's bands one after another with its own buffers (a
 * chunk's first band computes its halo rows again, 2 rows per chunk), and
 * thread i always takes chunk i (lane i of the pool's job), so it works on
 * the same rows of every block, whose input the last block wrote there.
 */
#ifndef ERT_CPU_IRBLOCK_H
#define ERT_CPU_IRBLOCK_H

#include "cpu/cpu-impl.h"
#include "ops/linalg-geom.h"

/* One pointwise (1x1, stride 1, no padding, group 1) conv of the block. */
struct ert_irb_pw {
	const float *w;               /* [c_out, c_in] */
	/* A packed for ert_cpu_linalg_gemm(cpu), as the Conv prepacks it, or NULL */
	const float *w_packed;
	const float *bias;            /* [c_out] or NULL */
	struct ert_act_desc act;
};

struct ert_irb_args {
	int64_t n_img, c_in;          /* the block's input: [n_img, c_in, H, W] */
	int64_t c_mid, c_out;         /* the depthwise conv's channels; the output's */
	/* the depthwise conv's geometry (2-D; its input H x W is the block's) */
	const struct ert_conv_geom *g;
	bool expand;                  /* false: no expand conv, c_mid == c_in */
	struct ert_irb_pw ex;         /* c_in -> c_mid */
	const float *dw_w;            /* [c_mid, 1, kh, kw] */
	const float *dw_bias;         /* [c_mid] or NULL */
	struct ert_act_desc dw_act;
	struct ert_irb_pw pj;         /* c_mid -> c_out */
	const float *x;               /* [n_img, c_in, H, W] */
	const float *res;             /* added before pj.act: the output's shape, or NULL */
	float *y;                     /* [n_img, c_out, OH, OW] */
};

/* May a block with depthwise geometry @g run banded at @cpu's level (ert_dwconv_band_ok())? */
bool ert_irb_ok(const struct ert_cpu *cpu, const struct ert_conv_geom *g);

/* Workspace bytes ert_irb_run() needs for @a (its pointers unused). */
size_t ert_irb_workspace(const struct ert_cpu *cpu, const struct ert_irb_args *a);

/* Output rows per band for @a (its pointers unused). */
int64_t ert_irb_band_rows(const struct ert_irb_args *a);

/* Row chunks each image is cut into on @cpu's lanes (1 on one thread). */
int64_t ert_irb_chunks(const struct ert_cpu *cpu, const struct ert_irb_args *a);

/*
 * Does every band of @a on @cpu's lanes run its depthwise stage flat
 * (ert_dwconv_band_flat(): 14x14 planes at avx512) rather than by rows?
 */
bool ert_irb_dw_flat(const struct ert_cpu *cpu, const struct ert_irb_args *a);

/* Run the block; @ws of ert_irb_workspace() bytes. */
void ert_irb_run(struct ert_cpu *cpu, const struct ert_irb_args *a, void *ws);

#endif /* ERT_CPU_IRBLOCK_H */
