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

/*
 * Does ert_dwconv_run() compute @g's planes at @isa flat (small 3x3 planes,
 * padded copies, no lane masks; see dwconv-tmpl.h) rather than by rows?
 * For tests that hold the two to the same bits.
 */
bool ert_dwconv_flat(enum ert_cpu_isa isa, const struct ert_conv_geom *g);

/* Run @a at @cpu's level; false (nothing written) where ert_dwconv_kernel() is NULL. */
bool ert_dwconv_run(struct ert_cpu *cpu, const struct ert_dwconv_args *a);

/*
 * A band of output rows of one image: rows [oh0, oh1) of every output plane,
 * plane c's row oh at y + c * y_cs + (oh - oh0) * OW, from input planes that
 * hold rows [iy0, iy1) only, plane c's row iy at x + c * x_cs + (iy - iy0) *
 * W; they must hold every row inside the input that the band reads. For the
 * fused inverted-residual block (cpu/conv/irblock.h), which computes the
 * input rows band by band.
 */
struct ert_dwconv_band {
	int64_t oh0, oh1, iy0, iy1;
	int64_t x_cs, y_cs;
};

/*
 * Is there a band kernel for @g at @isa: a 2-D 3x3 window of stride 1 or 2
 * (ert_dwconv_kernel()'s 3x3 planes) at the vector levels, any 2-D window
 * at the scalar level (the reference loop)?
 */
bool ert_dwconv_band_ok(enum ert_cpu_isa isa, const struct ert_conv_geom *g);

/*
 * Band @b of @a (n_img 1, channel multiplier 1, no residual) on the caller's
 * thread, at @cpu's level. Each output float is the one ert_dwconv_run()
 * (or, at the scalar level, the Conv's reference loop) writes there: the
 * same taps added in the same order. @b must satisfy ert_dwconv_band_ok().
 */
void ert_dwconv_band_run(const struct ert_cpu *cpu, const struct ert_dwconv_args *a,
			 const struct ert_dwconv_band *b);

/*
 * Does ert_dwconv_band_flat_run() take bands of @rows output rows of @g at
 * @isa: 3x3 stride-1 planes of the input's size, rows narrower than a
 * vector and at most 256 outputs a band (ert_dwconv_flat()'s stride-1
 * planes, by bands)?
 */
bool ert_dwconv_band_flat(enum ert_cpu_isa isa, const struct ert_conv_geom *g, int64_t rows);

/*
 * Band @b of @a as ert_dwconv_band_run() with the same bits, computed flat
 * (every channel's band in one call: masks built once, outputs VW to a
 * vector across rows) where ert_dwconv_band_flat() holds for its rows; else
 * false, nothing written.
 */
bool ert_dwconv_band_flat_run(const struct ert_cpu *cpu, const struct ert_dwconv_args *a,
			      const struct ert_dwconv_band *b);

/*
 * The scalar reference, one output plane of rows [oh0, oh1) (a 3-D window:
 * all of them), from @x holding its input plane's rows from @iy0 on (3-D:
 * 0), row (iz, iy) at x + (iz * IH + iy - iy0) * IW, @k the plane's window;
 * y at row oh0's start. Sets bias + the window's sum; no activation.
 */
void ert_dwconv_ref_rows(const struct ert_conv_geom *g, const float *x, int64_t iy0,
			 const float *k, float bias, float *y, int64_t oh0, int64_t oh1);

#endif /* ERT_CPU_DWCONV_H */
