/* SPDX-License-Identifier: MIT */
/* conv-stem-impl.h — private to the stem convolution files: the plan and one level's kernels. */
#ifndef ERT_CPU_CONV_STEM_IMPL_H
#define ERT_CPU_CONV_STEM_IMPL_H

#include "cpu/conv/conv-stem.h"

/* Output channels padded to a multiple of this (the widest level's CO). */
#define ERT_STEM_CO_MAX 8
/* Phase rows are padded to a multiple of this many floats (the widest VW). */
#define ERT_STEM_VW_MAX 16

/* Floats of a band's padded copy of the input (on the stack: 48 KiB). */
#define ERT_STEM_BUF 12288
/* Output rows a band takes at most (a tile's pixel blocks: a band of 3 rows is whole tiles). */
#define ERT_STEM_BAND 3

/*
 * A band of output rows [oh0, oh0 + band) reads padded rows [oh0 * sh, oh0 *
 * sh + hb) of the input (row r: input row r - pad_t), copied into buf[ci][j][ph][q]
 * = input (ci, oh0 * sh + j - pad_t, q * sw + ph - pad_l), zero outside the
 * input; j in [0, hb), ph in [0, sw), q in [0, wq). Output pixel (oh, ow)'s
 * tap (ci, kh, kw) is buf + (oh - oh0) * sh * row + ow + toff[tap].
 */
struct ert_stem_plan {
	const struct ert_conv_geom *g;
	int64_t c_in, m, m_pad, taps;     /* taps = c_in * KH * KW */
	int64_t band, hb, wq, row;        /* output rows a band, its input rows, phase width, a row */
	const float *x;                   /* the input, [n_img, c_in, H, W] */
	const int32_t *toff;              /* [taps] */
	const float *wp;                  /* [m_pad / CO][taps][CO] */
	const float *bias;                /* [m_pad], zeros where none */
	const float *res;                 /* residual or NULL */
	float *y;
	struct ert_act_desc act;
};

struct ert_stem_level {
	const char *name;
	int co;                           /* output channels per tile */
	/* output rows [r0, r1) of image n, every output channel */
	void (*rows)(const struct ert_stem_plan *p, int64_t n, int64_t r0, int64_t r1);
};

extern const struct ert_stem_level ert_stem_avx2;
extern const struct ert_stem_level ert_stem_avx512;

#endif /* ERT_CPU_CONV_STEM_IMPL_H */
