/* SPDX-License-Identifier: MIT */
/*
 * Resize taps per axis, following the ONNX reference definition: the output
 * coordinate is mapped to x_ori by the coordinate transformation; the taps are
 * the n input coordinates nearest to x_ori (the left one preferred, so an integer
 * x_ori counts as ratio 1 from its left neighbour), clamped to the edge, with
 * weights from the nearest/linear/cubic kernel (stretched by 1/scale when
 * antialiasing a downsample); exclude_outside drops out-of-range taps and
 * renormalises.
 */
#include <math.h>

#include "cpu/ops/resize-taps.h"

/* Keys cubic convolution kernel with parameter a. */
static double cubic_kernel(double x, double a)
{
	x = fabs(x);
	if (x <= 1.0)
		return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0;
	if (x < 2.0)
		return ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a;
	return 0.0;
}

/* First tap offset relative to the left neighbour; the count is 2 - 2 * start. */
static int64_t tap_start(const struct ert_resize_params *p, double scale)
{
	double s = scale < 1.0 ? scale : 1.0;

	if (p->mode == ERT_RESIZE_NEAREST)
		return 0;
	if (!p->antialias)
		return p->mode == ERT_RESIZE_CUBIC ? -1 : 0;
	return (int64_t)floor((p->mode == ERT_RESIZE_CUBIC ? -2.0 : -1.0) / s) + 1;
}

int32_t ert_resize_slots(const struct ert_resize_params *p, int64_t in, int64_t out)
{
	double inv;

	if (!p->antialias || p->mode == ERT_RESIZE_NEAREST)
		return p->mode == ERT_RESIZE_CUBIC ? 4 : 2;
	/*
	 * scale >= (out - 0.5) / in whatever produced the size (floor of in * scale,
	 * or half-up rounding of a kept aspect ratio), so 1/scale <= 2 * in / out.
	 */
	inv = out > 0 ? 2.0 * (double)in / (double)out : 1.0;
	inv = inv < 1.0 ? 1.0 : inv;
	if (inv > 1e6)
		inv = 1e6;
	return (int32_t)(2.0 * ceil((p->mode == ERT_RESIZE_CUBIC ? 2.0 : 1.0) * inv)) + 2;
}

size_t ert_resize_axis_bytes(int64_t out, int32_t slots)
{
	size_t n = (size_t)out * (size_t)slots;

	return n * (sizeof(double) + sizeof(int64_t)) + (((size_t)out * sizeof(int32_t) + 7) & ~(size_t)7);
}

/*
 * Follows ONNX's reference, which uses scale * in (not the integer output
 * length) for align_corners, pytorch_half_pixel and tf_crop_and_resize; the
 * backend tests depend on it (downsample by 0.6 with align_corners). PyTorch
 * and onnxruntime use the integer length, so a PyTorch export with a fractional
 * scale_factor and align_corners=True differs from PyTorch here.
 */
static double transform(const struct ert_resize_params *p, int32_t d, int64_t xo, int64_t in)
{
	double scale = p->scale[d], x = (double)xo, ow = scale * (double)in;
	double s = p->roi_start[d], e = p->roi_end[d], adj, off;

	switch (p->coord) {
	case ERT_COORD_ALIGN_CORNERS:
		return ow == 1.0 ? 0.0 : x * (double)(in - 1) / (ow - 1.0);
	case ERT_COORD_ASYMMETRIC:
		return x / scale;
	case ERT_COORD_TF_CROP_AND_RESIZE:
		if (ow == 1.0)
			return (e - s) * (double)(in - 1) / 2.0 + s * (double)(in - 1);
		return x * (e - s) * (double)(in - 1) / (ow - 1.0) + s * (double)(in - 1);
	case ERT_COORD_PYTORCH_HALF_PIXEL:
		return ow == 1.0 ? -0.5 : (x + 0.5) / scale - 0.5;
	case ERT_COORD_HALF_PIXEL_SYMMETRIC:
		adj = (double)p->out_dims[d] / ow;
		off = (double)in / 2.0 * (1.0 - adj);
		return off + (x + 0.5) / scale - 0.5;
	default:
		return (x + 0.5) / scale - 0.5;
	}
}

static void nearest_weights(const struct ert_resize_params *p, double ratio, double *w)
{
	bool right;

	if (ratio == 1.0) {
		right = true;
	} else {
		switch (p->nearest) {
		case ERT_NEAREST_ROUND_PREFER_CEIL: right = ratio >= 0.5; break;
		case ERT_NEAREST_FLOOR: right = false; break;
		case ERT_NEAREST_CEIL: right = true; break;
		default: right = ratio > 0.5; break;
		}
	}
	w[0] = right ? 0.0 : 1.0;
	w[1] = right ? 1.0 : 0.0;
}

/* Weights for taps at left + start + j, j < n. */
static void kernel_weights(const struct ert_resize_params *p, double scale, double ratio,
			   int64_t start, int64_t n, double *w)
{
	double s = scale < 1.0 ? scale : 1.0, sum = 0.0, a = p->cubic_a;

	if (p->mode == ERT_RESIZE_NEAREST) {
		nearest_weights(p, ratio, w);
		return;
	}
	if (!p->antialias) {
		if (p->mode == ERT_RESIZE_LINEAR) {
			w[0] = 1.0 - ratio;
			w[1] = ratio;
		} else {
			for (int64_t j = 0; j < 4; j++)
				w[j] = cubic_kernel((double)(j - 1) - ratio, a);
		}
		return;
	}
	for (int64_t j = 0; j < n; j++) {
		double t = ((double)(start + j) - ratio) * s;

		if (p->mode == ERT_RESIZE_LINEAR) {
			t = 1.0 - fabs(t);
			w[j] = t < 0.0 ? 0.0 : t > 1.0 ? 1.0 : t;
		} else {
			w[j] = cubic_kernel(t, a);
		}
		sum += w[j];
	}
	for (int64_t j = 0; j < n; j++)
		w[j] /= sum;
}

ert_status ert_resize_axis_taps(const struct ert_node *node, const struct ert_resize_params *p,
				int32_t d, int64_t in, void *mem, int32_t slots,
				struct ert_resize_axis *ax, struct ert_err *err)
{
	int64_t out = p->out_dims[d], start = tap_start(p, p->scale[d]), n = 2 - 2 * start;

	ax->in = in;
	ax->out = out;
	ax->slots = slots;
	ax->weight = mem;
	ax->index = (int64_t *)(ax->weight + (size_t)out * (size_t)slots);
	ax->count = (int32_t *)(ax->index + (size_t)out * (size_t)slots);
	if (n > slots || n < 1)
		return ert_node_fail(node, err, ERT_STATUS_INTERNAL,
				     "axis %d needs %lld taps, %d planned", (int)d, (long long)n,
				     (int)slots);
	for (int64_t xo = 0; xo < out; xo++) {
		double x_ori = transform(p, d, xo, in), fl = floor(x_ori), ratio, sum = 0.0;
		double *w = ax->weight + xo * slots;
		int64_t *idx = ax->index + xo * slots, left;
		int32_t c = 0;

		if (p->coord == ERT_COORD_TF_CROP_AND_RESIZE &&
		    (x_ori < 0.0 || x_ori > (double)(in - 1))) {
			ax->count[xo] = -1;
			continue;
		}
		if (x_ori == fl) {
			ratio = 1.0;
			left = (int64_t)fl - 1;
		} else {
			ratio = x_ori - fl;
			left = (int64_t)fl;
		}
		kernel_weights(p, p->scale[d], ratio, start, n, w);
		if (p->exclude_outside) {
			for (int64_t j = 0; j < n; j++) {
				int64_t pos = left + start + j;

				if (pos < 0 || pos >= in)
					w[j] = 0.0;
				sum += w[j];
			}
			for (int64_t j = 0; j < n && sum != 0.0; j++)
				w[j] /= sum;
		}
		/* Keep the nonzero taps only, clamped to the edge (edge padding). */
		for (int64_t j = 0; j < n; j++) {
			int64_t pos = left + start + j;

			if (w[j] == 0.0)
				continue;
			pos = pos < 0 ? 0 : pos >= in ? in - 1 : pos;
			w[c] = w[j];
			idx[c++] = pos;
		}
		ax->count[xo] = c;
	}
	return ERT_OK;
}
