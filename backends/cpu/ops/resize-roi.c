/* SPDX-License-Identifier: MIT */
/*
 * CPU reference kernel: RoiAlign. Each output bin averages (or takes the max
 * of) a grid of bilinear samples inside its part of the RoI, exactly as ONNX's
 * reference: samples more than one pixel outside the map count as zero,
 * others are clamped to the map, and "max" compares the four weighted corner
 * values of each sample rather than interpolated values.
 */
#include "cpu/ops/norm-access.h"
#include "cpu/ops/resize-kernels.h"
#include "ops/resize-roi.h"

/* A grid dimension beyond this is a hostile RoI, not an image region. */
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
		ert_err_set(err, "%s '%s': RoI %lld has a bad batch index or size",
			    ert_op_name(node->op), node->name, (long long)r);
		return ERT_STATUS_INVALID_ARGUMENT;
	}
	g->grid_h = gh > 0.0 ? (int64_t)gh : 0;
	g->grid_w = gw > 0.0 ? (int64_t)gw : 0;
	return ERT_OK;
}

/* Corner offsets and weights of a sample at (y, x); false when it reads zero. */
static bool sample(const struct roi_args *a, double y, double x, int64_t *pos, double *w)
{
	int64_t yl, xl, yh, xh;
	double ly, lx;

	if (!(y >= -1.0 && y <= (double)a->h && x >= -1.0 && x <= (double)a->w))
		return false;
	y = y > 0.0 ? y : 0.0;
	x = x > 0.0 ? x : 0.0;
	yl = (int64_t)y;
	xl = (int64_t)x;
	if (yl >= a->h - 1) {
		yh = yl = a->h - 1;
		y = (double)yl;
	} else {
		yh = yl + 1;
	}
	if (xl >= a->w - 1) {
		xh = xl = a->w - 1;
		x = (double)xl;
	} else {
		xh = xl + 1;
	}
	ly = y - (double)yl;
	lx = x - (double)xl;
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

static double bin_value(const struct roi_args *a, const struct roi_geom *g, int64_t base,
			int64_t ph, int64_t pw)
{
	double acc = 0.0, best = 0.0;
	bool first = true;

	for (int64_t iy = 0; iy < g->grid_h; iy++) {
		double y = g->start_h + (double)ph * g->bin_h +
			   ((double)iy + 0.5) * g->bin_h / (double)g->grid_h;

		for (int64_t ix = 0; ix < g->grid_w; ix++) {
			double x = g->start_w + (double)pw * g->bin_w +
				   ((double)ix + 0.5) * g->bin_w / (double)g->grid_w;
			int64_t pos[4] = { 0, 0, 0, 0 };
			double w[4] = { 0, 0, 0, 0 }, v = 0.0;

			if (sample(a, y, x, pos, w)) {
				for (int k = 0; k < 4; k++) {
					double t = w[k] * ert_nx_ld(a->x->data, a->x->dtype,
								    base + pos[k]);

					if (a->p.max_mode)
						v = k == 0 || t > v ? t : v;
					else
						v += t;
				}
			}
			if (a->p.max_mode) {
				best = first || v > best ? v : best;
				first = false;
			} else {
				acc += v;
			}
		}
	}
	if (a->p.max_mode)
		return best;
	return acc / (double)(g->grid_h * g->grid_w > 1 ? g->grid_h * g->grid_w : 1);
}

ert_status ert_cpu_roi_align(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	struct roi_args a = { .x = x->in[0], .rois = x->in[1], .batch = x->in[2], .y = x->out[0] };
	ert_status st = ert_roi_params_get(x->node, a.x, a.rois, a.batch, &a.p, err);
	int64_t nr;

	if (st != ERT_OK)
		return st;
	a.c = a.x->dims[1];
	a.h = a.x->dims[2];
	a.w = a.x->dims[3];
	nr = a.rois->dims[0];
	if (a.y->numel > 0 && a.h * a.w == 0) {
		ert_err_set(err, "%s '%s': X has an empty spatial map", ert_op_name(x->node->op),
			    x->node->name);
		return ERT_STATUS_SHAPE;
	}
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
						  bin_value(&a, &g, base, ph, pw));
		}
	}
	return ERT_OK;
}
