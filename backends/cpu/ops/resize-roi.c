/* SPDX-License-Identifier: MIT */
/*
 * CPU reference kernel: RoiAlign. Each output bin averages (or takes the max
 * of) a grid of bilinear samples inside its part of the RoI, exactly as ONNX's
 * reference: samples more than one pixel outside the map count as zero,
 * others are clamped to the map, and "max" compares the four weighted corner
 * values of each sample rather than interpolated values.
 */
#include <string.h>

#include "cpu/ops/norm-access.h"
#include "cpu/ops/resize-kernels.h"
#include "ops/resize-roi.h"

/*
 * A grid dimension beyond this is a hostile RoI, not an image region (the
 * grid's product is computed in int64; only samples on the map are visited).
 */
#define ROI_MAX_GRID 65536

struct roi_geom {
	double start_h, start_w, bin_h, bin_w;
	int64_t grid_h, grid_w, batch;
};

struct roi_args {
	const struct ert_value *x, *rois, *batch;
	struct ert_value *y;
	struct ert_roi_params p;
	int64_t c, h, w;
};

static ert_status roi_geom_get(const struct roi_args *a, int64_t r, struct roi_geom *g,
			       struct ert_err *err, const struct ert_node *node)
{
	double off = a->p.half_pixel ? 0.5 : 0.0, s = a->p.spatial_scale, rh, rw, gh, gw;
	double x1 = ert_nx_ld(a->rois->data, a->rois->dtype, r * 4) * s - off;
	double y1 = ert_nx_ld(a->rois->data, a->rois->dtype, r * 4 + 1) * s - off;
	double x2 = ert_nx_ld(a->rois->data, a->rois->dtype, r * 4 + 2) * s - off;
	double y2 = ert_nx_ld(a->rois->data, a->rois->dtype, r * 4 + 3) * s - off;

	g->batch = ert_value_get_int(a->batch, r);
	rw = x2 - x1;
	rh = y2 - y1;
	if (!a->p.half_pixel) {
		/* Malformed RoIs become 1x1 in the legacy mode. */
		rw = rw > 1.0 ? rw : 1.0;
		rh = rh > 1.0 ? rh : 1.0;
	}
	g->start_h = y1;
	g->start_w = x1;
	g->bin_h = rh / (double)a->p.out_h;
	g->bin_w = rw / (double)a->p.out_w;
	gh = a->p.sampling_ratio > 0 ? (double)a->p.sampling_ratio : ceil(g->bin_h);
	gw = a->p.sampling_ratio > 0 ? (double)a->p.sampling_ratio : ceil(g->bin_w);
	if (g->batch < 0 || g->batch >= a->x->dims[0] || !isfinite(rh) || !isfinite(rw) ||
	    !isfinite(y1) || !isfinite(x1) || gh > ROI_MAX_GRID || gw > ROI_MAX_GRID) {
		return ert_node_fail(node, err, ERT_STATUS_INVALID_ARGUMENT,
				     "RoI %lld has a bad batch index or size", (long long)r);
	}
	g->grid_h = gh > 0.0 ? (int64_t)gh : 0;
	g->grid_w = gw > 0.0 ? (int64_t)gw : 0;
	return ERT_OK;
}

/*
 * One axis of a sample at coordinate c on a map of n: false when it reads
 * zero (more than a pixel outside); else its lower and upper neighbours and
 * the upper one's weight, clamped to the map as ONNX's reference does (at
 * the last pixel both neighbours are it, with weights 1 and 0).
 */
static bool axis_corner(double c, int64_t n, int64_t *lo, int64_t *hi, double *l)
{
	if (!(c >= -1.0 && c <= (double)n))
		return false;
	c = c > 0.0 ? c : 0.0;
	*lo = (int64_t)c;
	if (*lo >= n - 1) {
		*hi = *lo = n - 1;
		c = (double)*lo;
	} else {
		*hi = *lo + 1;
	}
	*l = c - (double)*lo;
	return true;
}

/* Corner offsets and weights of a sample at (y, x); false when it reads zero. */
static bool sample(const struct roi_args *a, double y, double x, int64_t *pos, double *w)
{
	int64_t yl, xl, yh, xh;
	double ly, lx;

	if (!axis_corner(y, a->h, &yl, &yh, &ly) || !axis_corner(x, a->w, &xl, &xh, &lx))
		return false;
	pos[0] = yl * a->w + xl;
	pos[1] = yl * a->w + xh;
	pos[2] = yh * a->w + xl;
	pos[3] = yh * a->w + xh;
	w[0] = (1.0 - ly) * (1.0 - lx);
	w[1] = (1.0 - ly) * lx;
	w[2] = ly * (1.0 - lx);
	w[3] = ly * lx;
	return true;
}

/*
 * Sample indices [*lo, *hi) of one axis whose coordinate a + (i + 0.5) * d
 * may land in [-1, n], the only ones that read the map: a superset (a
 * sample each side for rounding; sample() decides), within [0, grid).
 */
static void axis_range(double a, double d, int64_t grid, int64_t n, int64_t *lo, int64_t *hi)
{
	double l, h;

	*lo = *hi = 0;
	if (grid <= 0)
		return;
	if (d == 0.0) {
		if (a >= -1.0 && a <= (double)n)
			*hi = grid;
		return;
	}
	l = (-1.0 - a) / d - 0.5;
	h = ((double)n - a) / d - 0.5;
	if (d < 0.0) {
		double t = l;

		l = h;
		h = t;
	}
	l = floor(l) - 1.0;
	h = ceil(h) + 1.0;
	if (!(l >= 0.0))
		l = 0.0;
	if (!(h <= (double)(grid - 1)))
		h = (double)(grid - 1);
	if (h < l)
		return;
	*lo = (int64_t)l;
	*hi = (int64_t)h + 1;
}

/*
 * One bin: samples that land more than a pixel outside the map read zero.
 * Only the samples that can land on the map are visited, so a RoI far
 * larger than the map (its grid follows the RoI's size) costs what the map
 * holds, not what the RoI spans. The result is the full grid's: the
 * average divides by every sample; the max counts a zero for the samples
 * outside, and starts from the first sample as the ONNX reference does
 * (which decides where NaN is kept).
 */
/*
 * The bilinear weights one axis's samples give the map's rows (or columns):
 * each sample on the map adds (1 - l) to its lower and l to its upper
 * neighbour, as sample() clamps them. wt[] must be zero outside what this
 * returns: the range [*r0, *r1) it wrote.
 */
static void axis_weights(double a, double d, int64_t grid, int64_t n, double *wt, int64_t *r0,
			 int64_t *r1)
{
	int64_t lo, hi;

	*r0 = n;
	*r1 = 0;
	axis_range(a, d, grid, n, &lo, &hi);
	for (int64_t i = lo; i < hi; i++) {
		int64_t cl, ch;
		double l;

		if (!axis_corner(a + ((double)i + 0.5) * d, n, &cl, &ch, &l))
			continue;
		wt[cl] += 1.0 - l;
		wt[ch] += l;
		*r0 = cl < *r0 ? cl : *r0;
		*r1 = ch + 1 > *r1 ? ch + 1 : *r1;
	}
}

/* A weight w that one of an axis's samples gives pixel k (see bin_max). */
static void extremes_add(double *wmax, double *wmin, int64_t k, double w)
{
	if (wmax[k] < 0.0) {
		wmax[k] = wmin[k] = w;
		return;
	}
	wmax[k] = w > wmax[k] ? w : wmax[k];
	wmin[k] = w < wmin[k] ? w : wmin[k];
}

/*
 * For each row (or column) of the map that a sample of one axis has as a
 * corner, the largest and smallest weight such a sample gives it; wmax[]
 * is -1 for the others, and must be on entry. Returns how many samples of
 * the axis read the map; [*r0, *r1) is the range written.
 */
static int64_t axis_extremes(double a, double d, int64_t grid, int64_t n, double *wmax,
			     double *wmin, int64_t *r0, int64_t *r1)
{
	int64_t lo, hi, inside = 0;

	*r0 = n;
	*r1 = 0;
	axis_range(a, d, grid, n, &lo, &hi);
	for (int64_t i = lo; i < hi; i++) {
		int64_t cl, ch;
		double l;

		if (!axis_corner(a + ((double)i + 0.5) * d, n, &cl, &ch, &l))
			continue;
		inside++;
		extremes_add(wmax, wmin, cl, 1.0 - l);
		extremes_add(wmax, wmin, ch, l);
		*r0 = cl < *r0 ? cl : *r0;
		*r1 = ch + 1 > *r1 ? ch + 1 : *r1;
	}
	return inside;
}

/*
 * The average of a bin's samples is separable: the sum over the grid of
 * bilinear samples is sum over rows r and columns c of wy[r] wx[c] X[r][c],
 * with each axis's weights summed once. So a bin costs its grid's two sides
 * and the pixels under it, not the grid's product (a sampling_ratio of 256
 * is 65536 samples a bin). @wy, @wx: a->h and a->w doubles, zero.
 */
static double bin_average(const struct roi_args *a, const struct roi_geom *g, int64_t base,
			  int64_t ph, int64_t pw, double *wy, double *wx)
{
	const double ay = g->start_h + (double)ph * g->bin_h, dy = g->bin_h / (double)g->grid_h;
	const double ax = g->start_w + (double)pw * g->bin_w, dx = g->bin_w / (double)g->grid_w;
	int64_t ry0, ry1, rx0, rx1;
	double acc = 0.0;

	if (g->grid_h <= 0 || g->grid_w <= 0)
		return 0.0;
	axis_weights(ay, dy, g->grid_h, a->h, wy, &ry0, &ry1);
	axis_weights(ax, dx, g->grid_w, a->w, wx, &rx0, &rx1);
	for (int64_t r = ry0; r < ry1; r++) {
		double row = 0.0;

		for (int64_t c = rx0; c < rx1; c++)
			row += wx[c] * ert_nx_ld(a->x->data, a->x->dtype, base + r * a->w + c);
		acc += wy[r] * row;
	}
	for (int64_t r = ry0; r < ry1; r++)
		wy[r] = 0.0;
	for (int64_t c = rx0; c < rx1; c++)
		wx[c] = 0.0;
	return acc / (double)(g->grid_h * g->grid_w > 1 ? g->grid_h * g->grid_w : 1);
}

static double bin_value(const struct roi_args *a, const struct roi_geom *g, int64_t base,
			int64_t ph, int64_t pw)
{
	const double ay = g->start_h + (double)ph * g->bin_h, dy = g->bin_h / (double)g->grid_h;
	const double ax = g->start_w + (double)pw * g->bin_w, dx = g->bin_w / (double)g->grid_w;
	int64_t y0, y1, x0, x1, inside = 0;
	double acc = 0.0, best = 0.0;
	bool any = false;

	if (g->grid_h <= 0 || g->grid_w <= 0)
		return 0.0;
	axis_range(ay, dy, g->grid_h, a->h, &y0, &y1);
	axis_range(ax, dx, g->grid_w, a->w, &x0, &x1);
	if (a->p.max_mode) {
		int64_t pos[4];
		double w[4];

		/* the first sample reads zero: the max starts from it */
		if (!sample(a, ay + 0.5 * dy, ax + 0.5 * dx, pos, w))
			any = true;
	}
	for (int64_t iy = y0; iy < y1; iy++) {
		double y = ay + ((double)iy + 0.5) * dy;

		for (int64_t ix = x0; ix < x1; ix++) {
			double x = ax + ((double)ix + 0.5) * dx;
			int64_t pos[4] = { 0, 0, 0, 0 };
			double w[4] = { 0, 0, 0, 0 }, v = 0.0;

			if (!sample(a, y, x, pos, w))
				continue;
			inside++;
			for (int k = 0; k < 4; k++) {
				double t = w[k] * ert_nx_ld(a->x->data, a->x->dtype, base + pos[k]);

				if (a->p.max_mode)
					v = k == 0 || t > v ? t : v;
				else
					v += t;
			}
			if (a->p.max_mode) {
				best = !any || v > best ? v : best;
				any = true;
			} else {
				acc += v;
			}
		}
	}
	if (a->p.max_mode) {
		if (inside < g->grid_h * g->grid_w && 0.0 > best)
			best = 0.0;
		return best;
	}
	return acc / (double)(g->grid_h * g->grid_w > 1 ? g->grid_h * g->grid_w : 1);
}

/*
 * The max, separably. A sample's corner values are wy wx X over pairs of a
 * row corner and a column corner, so the samples that have pixel (r, c) as
 * a corner are every row sample touching r paired with every column sample
 * touching c. The weights are >= 0: the largest wy wx X among them is X
 * times the largest weight of each axis when X >= 0, times the smallest
 * when X < 0 (the same double products as the samples', so the same
 * result). A bin costs its grid's two sides and the pixels under it, not
 * the grid's product. Samples off the map count a zero, as in bin_value();
 * where a pixel under the bin is NaN or infinite, which value is kept
 * depends on the order of the samples: those bins walk them.
 * @ws: 2 (a->h + a->w) doubles, the wmax halves -1.
 */
static double bin_max(const struct roi_args *a, const struct roi_geom *g, int64_t base,
		      int64_t ph, int64_t pw, double *ws)
{
	const double ay = g->start_h + (double)ph * g->bin_h, dy = g->bin_h / (double)g->grid_h;
	const double ax = g->start_w + (double)pw * g->bin_w, dx = g->bin_w / (double)g->grid_w;
	double *ymax = ws, *ymin = ymax + a->h, *xmax = ymin + a->h, *xmin = xmax + a->w;
	int64_t ry0, ry1, rx0, rx1, ny, nx;
	double best = 0.0;
	bool any, finite = true;

	if (g->grid_h <= 0 || g->grid_w <= 0)
		return 0.0;
	ny = axis_extremes(ay, dy, g->grid_h, a->h, ymax, ymin, &ry0, &ry1);
	nx = axis_extremes(ax, dx, g->grid_w, a->w, xmax, xmin, &rx0, &rx1);
	any = ny * nx < g->grid_h * g->grid_w;
	for (int64_t r = ry0; r < ry1 && finite; r++) {
		if (ymax[r] < 0.0)
			continue;
		for (int64_t c = rx0; c < rx1; c++) {
			double v = ert_nx_ld(a->x->data, a->x->dtype, base + r * a->w + c);

			if (xmax[c] < 0.0)
				continue;
			if (!isfinite(v)) {
				finite = false;
				break;
			}
			v = v >= 0.0 ? ymax[r] * xmax[c] * v : ymin[r] * xmin[c] * v;
			best = !any || v > best ? v : best;
			any = true;
		}
	}
	for (int64_t r = ry0; r < ry1; r++)
		ymax[r] = -1.0;
	for (int64_t c = rx0; c < rx1; c++)
		xmax[c] = -1.0;
	return finite ? best : bin_value(a, g, base, ph, pw);
}

/*
 * Workspace: the separable average's weights (a row and a column of the
 * map), or the max's extremes (two of each).
 */

size_t ert_cpu_roi_align_workspace(const struct ert_cpu *cpu, const struct ert_exec *x)
{
	const struct ert_value *v = x->in[0];

	if (v->rank != 4 || v->dims[2] < 0 || v->dims[3] < 0)
		return 0;
	return 2 * (size_t)(v->dims[2] + v->dims[3]) * sizeof(double);
}

ert_status ert_cpu_roi_align(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	struct roi_args a = { .x = x->in[0], .rois = x->in[1], .batch = x->in[2], .y = x->out[0] };
	ert_status st = ert_roi_params_get(x->node, a.x, a.rois, a.batch, &a.p, err);
	double *wy, *wx;
	int64_t nr;

	if (st != ERT_OK)
		return st;
	/* called without its workspace (a direct kernel call): walk the samples */
	wy = x->workspace && x->workspace_size >= ert_cpu_roi_align_workspace(cpu, x) ? x->workspace
										   : NULL;
	wx = wy ? wy + a.x->dims[2] : NULL;
	if (wy && a.p.max_mode)
		for (int64_t i = 0; i < 2 * (a.x->dims[2] + a.x->dims[3]); i++)
			wy[i] = -1.0;
	else if (wy)
		memset(wy, 0, ert_cpu_roi_align_workspace(cpu, x));
	a.c = a.x->dims[1];
	a.h = a.x->dims[2];
	a.w = a.x->dims[3];
	nr = a.rois->dims[0];
	if (a.y->numel > 0 && a.h * a.w == 0)
		return ert_node_fail(x->node, err, ERT_STATUS_SHAPE, "X has an empty spatial map");
	for (int64_t r = 0; r < nr; r++) {
		struct roi_geom g;

		st = roi_geom_get(&a, r, &g, err, x->node);
		if (st != ERT_OK)
			return st;
		for (int64_t ch = 0; ch < a.c; ch++) {
			int64_t base = (g.batch * a.c + ch) * a.h * a.w;
			int64_t obase = (r * a.c + ch) * a.p.out_h * a.p.out_w;

			for (int64_t ph = 0; ph < a.p.out_h; ph++)
				for (int64_t pw = 0; pw < a.p.out_w; pw++)
					ert_nx_st(a.y->data, a.y->dtype, obase + ph * a.p.out_w + pw,
						  !wy ? bin_value(&a, &g, base, ph, pw)
						  : a.p.max_mode
							  ? bin_max(&a, &g, base, ph, pw, wy)
							  : bin_average(&a, &g, base, ph, pw, wy, wx));
		}
	}
	return ERT_OK;
}
