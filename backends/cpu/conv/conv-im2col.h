/* SPDX-License-Identifier: MIT */
/*
 * conv-im2col.h — the implicit im2col of strided windows (ops/linalg-conv.c)
 * by vector gathers and permutes at avx512.
 *
 * The Conv GEMM packs each B panel of a convolution other than a 1x1 with
 * stride 1 straight from the image: NR output pixels, K = channel x tap
 * rows. With a stride of 1 each
 * run of a panel's pixels on one output row is a memcpy of an input row;
 * with a stride of 2 it is every other float, copied one at a time between
 * the bounds of each run (at avx512 without column phases: phase_width()).
 * Here the offsets of a panel's pixels into an input plane are worked out
 * once per panel and tap on vectors (-1 for the padding and the columns past
 * the panel's pixels), and every row of the panel is NR / 16 masked gathers
 * from one plane at those offsets: the same floats in the same places, zeros
 * where the scalar packing writes them. A window of several taps (3x3/2) is
 * filled tap by tap instead, and a vector whose offsets span at most 32
 * floats (one or two runs of an output row) by masked loads and a permute.
 */
#ifndef ERT_CPU_CONV_IM2COL_H
#define ERT_CPU_CONV_IM2COL_H

#include <stdint.h>

#include "ops/linalg-geom.h"

/* Most taps of a window the gather takes (the offsets of a panel live on the stack). */
#define ERT_CONV_IM2COL_TAPS 9

/*
 * Rows [k0, k0 + kc) of one B panel of a 2-D convolution of geometry @g
 * (at most ERT_CONV_IM2COL_TAPS taps) into @dst: @nr16 x 16 columns, output
 * pixels n0 .. n0 + nv - 1 and zeros past them; row q is input plane
 * q / taps of @x (planes @in_sp floats apart) at tap q % taps (row-major
 * in the window), 0.0f in the padding.
 */
void ert_conv_im2col_gather__avx512(const float *x, int64_t in_sp, const struct ert_conv_geom *g,
				    int64_t n0, int64_t nv, int nr16, int64_t k0, int64_t kc,
				    float *dst);

#endif /* ERT_CPU_CONV_IM2COL_H */
