/* SPDX-License-Identifier: MIT */
/*
 * CPU reference kernel: GridSample over any number of spatial dims. Each output
 * position reads X at the grid's coordinates (last grid axis, reversed: its first
 * component indexes the innermost spatial dim), denormalised with or without
 * align_corners, rounded (nearest) or interpolated separably (linear: 2 taps,
 * cubic: 4 Keys taps with a = -0.75 per dim). Out-of-range coordinates are
 * clamped (border) or mirrored (reflection) first; taps that still fall outside
 * read 0 (zeros) or are clamped/mirrored again, as ONNX's reference does.
 */
#include <string.h>

#include "cpu/ops/norm-access.h"
#include "cpu/ops/resize-kernels.h"
#include "ops/resize-grid.h"

#define GS_MAX_SPATIAL (ERT_MAX_RANK - 2)

struct gs_args {
	const struct ert_value *x, *grid;
	struct ert_value *y;
	struct ert_grid_params p;
	int32_t r;
	int64_t c, in_sp, out_sp;
	int64_t len[GS_MAX_SPATIAL], stride[GS_MAX_SPATIAL];
};

/* Mirror @v into [lo, hi] as many times as needed. */
static double reflect(double v, double lo, double hi)
{
	double rng = hi - lo, dx, k, rem;

	if (!(rng > 0.0))
		return lo;
	if (v < lo) {
		dx = lo - v;
		k = floor(dx / rng);
		rem = dx - k * rng;
		return fmod(k, 2.0) == 0.0 ? lo + rem : hi - rem;
	}
	if (v > hi) {
		dx = v - hi;
		k = floor(dx / rng);
		rem = dx - k * rng;
		return fmod(k, 2.0) == 0.0 ? hi - rem : lo + rem;
	}
	return v;
}

/* Input index for integer tap @i of a dim of length @len; -1 reads as zero. */
static int64_t tap_index(const struct gs_args *a, double i, int64_t len, double lo, double hi)
{
	int64_t k;

	switch (a->p.padding) {
	case ERT_GRID_ZEROS:
		return i >= 0.0 && i < (double)len ? (int64_t)i : -1;
	case ERT_GRID_BORDER:
		return i < 0.0 ? 0 : i > (double)(len - 1) ? len - 1 : (int64_t)i;
	default:
		k = (int64_t)reflect(i, lo, hi);
		return k < 0 ? 0 : k >= len ? len - 1 : k;
	}
}

static double keys(double t)
{
	const double a = -0.75;

	t = fabs(t);
	if (t <= 1.0)
		return ((a + 2.0) * t - (a + 3.0)) * t * t + 1.0;
	if (t < 2.0)
		return ((a * t - 5.0 * a) * t + 8.0 * a) * t - 4.0 * a;
	return 0.0;
}

/* Taps of one spatial dim for normalised coordinate @nv. Returns the count. */
static int dim_taps(const struct gs_args *a, int32_t d, float nv, int64_t *idx, double *w)
{
	int64_t len = a->len[d];
	double lo = a->p.align_corners ? 0.0 : -0.5;
	double hi = a->p.align_corners ? (double)(len - 1) : (double)len - 0.5, v, x0, t;
	/* The reference denormalises in float32; ties in nearest depend on it. */
	float xf = a->p.align_corners ? (nv + 1.0f) / 2.0f * (float)(len - 1)
				      : ((nv + 1.0f) * (float)len - 1.0f) / 2.0f;

	/* Half to even in every rank: what ONNX's test data for 2-D and 3-D expects. */
	if (a->p.mode == ERT_RESIZE_NEAREST)
		xf = nearbyintf(xf);
	v = isnan(xf) ? -1e18 : xf;
	/* Keep far-away coordinates finite for the integer conversions below. */
	v = v < -1e15 ? -1e15 : v > 1e15 ? 1e15 : v;
	if (v < lo || v > hi) {
		if (a->p.padding == ERT_GRID_BORDER)
			v = v < 0.0 ? 0.0 : v > (double)(len - 1) ? (double)(len - 1) : v;
		else if (a->p.padding == ERT_GRID_REFLECTION)
			v = (float)reflect(v, lo, hi);
	}
	if (a->p.mode == ERT_RESIZE_NEAREST) {
		idx[0] = tap_index(a, trunc(v), len, lo, hi);
		w[0] = 1.0;
		return 1;
	}
	x0 = floor(v);
	t = v - x0;
	if (a->p.mode == ERT_RESIZE_LINEAR) {
		idx[0] = tap_index(a, x0, len, lo, hi);
		idx[1] = tap_index(a, x0 + 1.0, len, lo, hi);
		w[0] = 1.0 - t;
		w[1] = t;
		return 2;
	}
	for (int j = 0; j < 4; j++) {
		idx[j] = tap_index(a, x0 - 1.0 + j, len, lo, hi);
		w[j] = keys(t + 1.0 - j);
	}
	return 4;
}

static void gs_range(void *arg, int64_t begin, int64_t end)
{
	const struct gs_args *a = arg;
	int64_t idx[GS_MAX_SPATIAL][4];
	double w[GS_MAX_SPATIAL][4];
	int cnt[GS_MAX_SPATIAL];

	for (int64_t pos = begin; pos < end; pos++) {
		int64_t n = pos / a->out_sp, o = pos % a->out_sp;
		int64_t gbase = pos * a->r;

		for (int32_t d = 0; d < a->r; d++) {
			float nv = (float)ert_nx_ld(a->grid->data, a->grid->dtype,
						    gbase + (a->r - 1 - d));

			cnt[d] = dim_taps(a, d, nv, idx[d], w[d]);
		}
		for (int64_t ch = 0; ch < a->c; ch++) {
			int64_t xbase = (n * a->c + ch) * a->in_sp;
			int t[GS_MAX_SPATIAL] = { 0 };
			double acc = 0.0;
			int32_t d;

			for (;;) {
				int64_t off = xbase;
				double wt = 1.0;

				for (d = 0; d < a->r; d++) {
					int64_t i = idx[d][t[d]];

					if (i < 0) {
						wt = 0.0;
						break;
					}
					off += i * a->stride[d];
					wt *= w[d][t[d]];
				}
				if (wt != 0.0)
					acc += wt * ert_nx_ld(a->x->data, a->x->dtype, off);
				for (d = a->r - 1; d >= 0; d--) {
					if (++t[d] < cnt[d])
						break;
					t[d] = 0;
				}
				if (d < 0)
					break;
			}
			ert_nx_st(a->y->data, a->y->dtype, (n * a->c + ch) * a->out_sp + o, acc);
		}
	}
}

ert_status ert_cpu_grid_sample(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	struct gs_args a = { .x = x->in[0], .grid = x->in[1], .y = x->out[0] };
	ert_status st = ert_grid_params_get(x->node, a.x, a.grid, &a.p, err);
	int64_t stride = 1, total;

	if (st != ERT_OK)
		return st;
	a.r = a.p.spatial;
	a.c = a.x->dims[1];
	for (int32_t d = a.r - 1; d >= 0; d--) {
		a.len[d] = a.x->dims[d + 2];
		a.stride[d] = stride;
		stride *= a.len[d];
	}
	a.in_sp = stride;
	a.out_sp = 1;
	for (int32_t k = 2; k < a.y->rank; k++)
		a.out_sp *= a.y->dims[k];
	total = a.x->dims[0] * a.out_sp;
	if (a.y->numel == 0)
		return ERT_OK;
	if (a.in_sp == 0)
		return ert_node_fail(x->node, err, ERT_STATUS_SHAPE, "cannot sample an empty X");
	ert_parallel_for(cpu ? cpu->pool : NULL, total, 256, gs_range, &a);
	return ERT_OK;
}

/* Normalised coordinate of pixel @i of @len: pixel centres, or corners at +-1. */
static double base_coord(int64_t i, int64_t len, bool align)
{
	if (align)
		return len > 1 ? -1.0 + 2.0 * (double)i / (double)(len - 1) : -1.0;
	return -1.0 + (2.0 * (double)i + 1.0) / (double)len;
}

ert_status ert_cpu_affine_grid(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *theta = x->in[0];
	struct ert_value *g = x->out[0];
	bool align = ert_attr_int(x->node, "align_corners", 0) != 0;
	int32_t r = g->rank - 2;
	int64_t n = g->dims[0], pos = 0, c[3] = { 0, 0, 0 }, sp = 1;

	if (r < 2 || r > 3)
		return ert_node_fail(x->node, err, ERT_STATUS_UNSUPPORTED,
				     "only 2-D and 3-D grids");
	for (int32_t k = 0; k < r; k++)
		sp *= g->dims[k + 1];
	for (int64_t b = 0; b < n; b++) {
		for (int64_t s = 0; s < sp; s++, pos++) {
			double h[4];
			int64_t rest = s;

			/* Homogeneous point (x, y[, z], 1): x runs along the innermost dim. */
			for (int32_t k = r - 1; k >= 0; k--) {
				c[k] = rest % g->dims[k + 1];
				rest /= g->dims[k + 1];
			}
			for (int32_t k = 0; k < r; k++)
				h[k] = base_coord(c[r - 1 - k], g->dims[r - k], align);
			h[r] = 1.0;
			for (int32_t row = 0; row < r; row++) {
				double acc = 0.0;

				for (int32_t k = 0; k <= r; k++)
					acc += ert_nx_ld(theta->data, theta->dtype,
							 (b * r + row) * (r + 1) + k) * h[k];
				ert_nx_st(g->data, g->dtype, pos * r + row, acc);
			}
		}
	}
	return ERT_OK;
}
