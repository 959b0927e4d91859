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

struct ert_dwconv_level {
	const char *name;
	ert_dwconv_plane_fn plane;
};

extern const struct ert_dwconv_level ert_dwconv_avx2;
extern const struct ert_dwconv_level ert_dwconv_avx512;

#endif /* ERT_CPU_DWCONV_IMPL_H */
