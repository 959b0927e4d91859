/* SPDX-License-Identifier: MIT */
/* dwconv-impl.h — private to the depthwise files: one level's plane kernel. */
#ifndef ERT_CPU_DWCONV_IMPL_H
#define ERT_CPU_DWCONV_IMPL_H

#include "cpu/vec/vec.h"

/*
 * One output plane: @x the input plane, @k the plane's window (k[0] x k[1] x
 * k[2]), @res the residual plane or NULL; w->act is applied last.
 */
typedef void (*ert_dwconv_plane_fn)(const struct ert_vec_win *w, const float *x, const float *k,
				    float bias, const float *res, float *y);

/*
 * Output rows [oh0, oh1) of a 3x3 plane (no residual), @y at row oh0's start,
 * from @x holding input rows [iy0, iy1), row iy at x + (iy - iy0) * W: every
 * row inside the input that those output rows read (dwconv.h).
 */
typedef void (*ert_dwconv_band_fn)(const struct ert_vec_win *w, const float *x, const float *k,
				   float bias, float *y, int64_t oh0, int64_t oh1, int64_t iy0,
				   int64_t iy1);

struct ert_dwconv_args;
struct ert_dwconv_band;

/*
 * Planes [p0, p1) of a 3x3 job (ert_dwconv_is_3x3()), plane p = (image, channel) as
 * dwconv.c's dw_range() numbers them; planes in_sp and out_sp floats apart.
 */
typedef void (*ert_dwconv_planes_fn)(const struct ert_vec_win *w,
				     const struct ert_dwconv_args *a, int64_t in_sp,
				     int64_t out_sp, int64_t p0, int64_t p1);

struct ert_dwconv_level {
	const char *name;
	ert_dwconv_plane_fn plane;
	/* 3x3, stride 1 or 2 (ert_dwconv_is_3x3()): several rows per pass, no copy */
	const char *name3;
	ert_dwconv_plane_fn plane3;
	ert_dwconv_band_fn band3;     /* plane3 by rows */
	ert_dwconv_planes_fn planes3; /* plane3 over a range of planes */
	/* does planes3 compute @g's planes flat (dwconv-tmpl.h), not by rows */
	bool (*flat3)(const struct ert_conv_geom *g);
	/* may band3's bands of @rows rows of @g go flat (dwconv.h's ert_dwconv_band_flat()) */
	bool (*band_flat3_ok)(const struct ert_conv_geom *g, int64_t rows);
	/* a band flat, every channel of @a; band_flat3_ok() must hold */
	void (*band_flat3)(const struct ert_vec_win *w, const struct ert_dwconv_args *a,
			   const struct ert_dwconv_band *b);
};

/* Widest input row the 3x3 planes take (their zero row for the padding above and below). */
#define ERT_DW3_MAX_W 4096
extern const float ert_dw3_zero_row[ERT_DW3_MAX_W];

/*
 * A 2-D 3x3 window, dilation 1, the same stride 1 or 2 along both axes, input
 * rows at most ERT_DW3_MAX_W wide: the geometry the plane3 kernels take.
 */
bool ert_dwconv_is_3x3(const struct ert_conv_geom *g);

extern const struct ert_dwconv_level ert_dwconv_avx2;
extern const struct ert_dwconv_level ert_dwconv_avx512;

#endif /* ERT_CPU_DWCONV_IMPL_H */
