/* SPDX-License-Identifier: MIT */
/*
 * dwconv.h — depthwise fp32 convolution (one input channel per group, any
 * channel multiplier) in vector kernels at the AVX2 and AVX-512 levels.
 *
 * NCHW: an output plane at a time, VW output columns a vector, every tap of
 * the window accumulated in registers by FMA, then the bias, the residual
 * ("ert.residual", added before the activation) and the fused activation
 * applied before the one store (cpu/vec/vact.h). Lanes whose tap falls in the
 * padding skip it, as the reference does; no byte outside the input plane is
 * read. The reference is the direct loop in cpu/ops/linalg-conv.c (the
 * scalar level); FMA rounds differently, so outputs agree within a few
 * units in the last place of the window's sum (test-vec-levels holds 1e-5
 * of the output's magnitude).
 */
#ifndef ERT_CPU_DWCONV_H
#define ERT_CPU_DWCONV_H

#include "cpu/cpu-impl.h"
#include "ops/linalg-geom.h"

struct ert_dwconv_args {
	const struct ert_conv_geom *g;
	int64_t n_img, c_in, m;      /* images, input and output channels */
	int64_t m_g;                 /* output channels per input channel */
	const float *x;              /* [n_img, c_in, in] */
	const float *w;              /* [m, 1, k]: one window per output channel */
	const float *bias;           /* [m] or NULL */
	const float *res;            /* residual, the output's shape, or NULL */
	float *y;                    /* [n_img, m, out] */
	struct ert_act_desc act;
};

/*
 * Name of the depthwise kernel at @isa for geometry @g ("f32-dwconv-avx512"),
 * or NULL where there is none (the scalar level, windows wider than the
 * kernels take): the caller runs its reference loop.
 */
const char *ert_dwconv_kernel(enum ert_cpu_isa isa, const struct ert_conv_geom *g);

/* Run @a at @cpu's level; false (nothing written) where ert_dwconv_kernel() is NULL. */
bool ert_dwconv_run(struct ert_cpu *cpu, const struct ert_dwconv_args *a);

#endif /* ERT_CPU_DWCONV_H */
