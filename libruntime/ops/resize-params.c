/* SPDX-License-Identifier: MIT */
/* Resize / Upsample parameters per axis (see resize-params.h). */
#include <math.h>
#include <string.h>

#include "ops/resize-params.h"

static int lookup(const char *s, const char *const *names, int count)
{
	for (int i = 0; i < count; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return -1;
}

static ert_status read_modes(const struct ert_node *n, bool legacy, struct ert_resize_params *p,
			     struct ert_err *err)
{
	static const char *const modes[] = { "nearest", "linear", "cubic", "bilinear" };
	static const char *const coords[] = { "half_pixel", "half_pixel_symmetric",
					      "pytorch_half_pixel", "align_corners",
					      "asymmetric", "tf_crop_and_resize" };
	static const char *const nearest[] = { "round_prefer_floor", "round_prefer_ceil",
					       "floor", "ceil" };
	const char *s = ert_attr_string(n, "mode", "nearest");
	int v = lookup(s, modes, 4);

	if (v < 0 || (legacy && v == ERT_RESIZE_CUBIC))
		return ert_node_fail(n, err, ERT_STATUS_UNSUPPORTED, "unknown mode '%s'", s);
	p->mode = v == 3 ? ERT_RESIZE_LINEAR : (enum ert_resize_mode)v;
	if (legacy) {
		/*
		 * Upsample and Resize-10 predate the coordinate attributes; ONNX's
		 * version converter maps them to asymmetric coordinates, floor rounding.
		 */
		p->coord = ERT_COORD_ASYMMETRIC;
		p->nearest = ERT_NEAREST_FLOOR;
		p->cubic_a = -0.75;
		return ERT_OK;
	}
	s = ert_attr_string(n, "coordinate_transformation_mode", "half_pixel");
	v = lookup(s, coords, 6);
	if (v < 0)
		return ert_node_fail(n, err, ERT_STATUS_UNSUPPORTED,
				     "unknown coordinate_transformation_mode '%s'", s);
	p->coord = (enum ert_resize_coord)v;
	s = ert_attr_string(n, "nearest_mode", "round_prefer_floor");
	v = lookup(s, nearest, 4);
	if (v < 0)
		return ert_node_fail(n, err, ERT_STATUS_UNSUPPORTED, "unknown nearest_mode '%s'",
				     s);
	p->nearest = (enum ert_resize_nearest)v;
	p->cubic_a = ert_attr_float(n, "cubic_coeff_a", -0.75f);
	p->exclude_outside = ert_attr_int(n, "exclude_outside", 0) != 0;
	p->extrapolation = ert_attr_float(n, "extrapolation_value", 0.0f);
	p->antialias = ert_attr_int(n, "antialias", 0) != 0;
	if (p->antialias && p->mode == ERT_RESIZE_NEAREST)
		return ert_node_fail(n, err, ERT_STATUS_INVALID_MODEL,
				     "antialias needs linear or cubic");
	return ERT_OK;
}

static const struct ert_value *given(const struct ert_value *const *in, uint32_t n_in,
				     uint32_t i)
{
	const struct ert_value *v = i < n_in ? in[i] : NULL;

	/* An empty tensor stands for an omitted input (opset 11 had no other way). */
	return v && v->numel > 0 ? v : NULL;
}

static ert_status apply_sizes(const struct ert_node *n, const struct ert_value *x,
			      const struct ert_value *sizes, const int32_t *axes, uint32_t naxes,
			      struct ert_resize_params *p, struct ert_err *err)
{
	const char *policy = ert_attr_string(n, "keep_aspect_ratio_policy", "stretch");
	double s = 0.0;

	for (uint32_t i = 0; i < naxes; i++) {
		int64_t want = ert_value_get_int(sizes, i), d = x->dims[axes[i]];

		ert_status st = ert_check_dim(n, err, "sizes", i, want);

		if (st != ERT_OK)
			return st;
		p->out_dims[axes[i]] = want;
		p->scale[axes[i]] = d > 0 ? (double)want / (double)d : 1.0;
	}
	if (strcmp(policy, "stretch") == 0)
		return ERT_OK;
	if (strcmp(policy, "not_larger") && strcmp(policy, "not_smaller"))
		return ert_node_fail(n, err, ERT_STATUS_UNSUPPORTED,
				     "unknown keep_aspect_ratio_policy '%s'", policy);
	for (uint32_t i = 0; i < naxes; i++) {
		double si = p->scale[axes[i]];

		if (i == 0 || (policy[4] == 'l' ? si < s : si > s))
			s = si;
	}
	for (uint32_t i = 0; i < naxes; i++) {
		/* ONNX rounds half up here, not to even. */
		double od = s * (double)x->dims[axes[i]] + 0.5;

		if (!(od <= (double)ERT_DIM_MAX))
			return ert_node_fail(n, err, ERT_STATUS_SHAPE,
					     "sizes and keep_aspect_ratio_policy make a "
					     "dimension above 2^48");
		p->scale[axes[i]] = s;
		p->out_dims[axes[i]] = (int64_t)od;
	}
	return ERT_OK;
}

ert_status ert_resize_params_get(const struct ert_node *n, const struct ert_value *const *in,
				 uint32_t n_in, struct ert_resize_params *p, struct ert_err *err)
{
	const struct ert_value *x = n_in > 0 ? in[0] : NULL, *roi = NULL, *scales, *sizes = NULL;
	bool upsample = n->op == ERT_OP_Upsample, legacy = upsample || n->opset < 11;
	int32_t axes[ERT_MAX_RANK];
	uint32_t naxes = 0, count;
	const int64_t *ax;
	const float *fscales = NULL;
	ert_status st;

	memset(p, 0, sizeof(*p));
	if (!x)
		return ert_node_fail(n, err, ERT_STATUS_INVALID_MODEL, "input X is missing");
	p->rank = x->rank;
	for (int32_t d = 0; d < x->rank; d++) {
		p->out_dims[d] = x->dims[d];
		p->scale[d] = 1.0;
		p->roi_end[d] = 1.0;
	}
	st = read_modes(n, legacy, p, err);
	if (st != ERT_OK)
		return st;
	ax = legacy ? NULL : ert_attr_ints(n, "axes", &count);
	if (ax) {
		for (uint32_t i = 0; i < count; i++) {
			if (i >= ERT_MAX_RANK || !ert_norm_axis(ax[i], x->rank, &axes[i])) {
				return ert_node_fail(n, err, ERT_STATUS_SHAPE, "axis %lld "
						     "(axes[%u]) is out of range for rank %d",
						     (long long)ax[i], i, (int)x->rank);
			}
			for (uint32_t j = 0; j < i; j++)
				if (axes[j] == axes[i])
					return ert_node_fail(n, err, ERT_STATUS_INVALID_MODEL,
							     "axes repeats an axis");
		}
		naxes = count;
	} else {
		for (int32_t d = 0; d < x->rank; d++)
			axes[naxes++] = d;
	}
	if (upsample && n->opset < 9) {
		scales = NULL;
		fscales = ert_attr_floats(n, "scales", &count);
		if (!fscales || count != naxes)
			return ert_node_fail(n, err, ERT_STATUS_INVALID_MODEL,
					     "scales attribute must have one value per axis");
	} else if (legacy) {
		scales = given(in, n_in, 1);
	} else {
		roi = given(in, n_in, 1);
		scales = given(in, n_in, 2);
		sizes = given(in, n_in, 3);
	}
	if (scales && sizes)
		return ert_node_fail(n, err, ERT_STATUS_INVALID_MODEL,
				     "both scales and sizes are given");
	if (scales) {
		st = ert_check_known(n, err, "scales", scales);
		if (st != ERT_OK)
			return st;
		if (!ert_dtype_is_float(scales->dtype) || scales->numel != naxes)
			return ert_node_fail(n, err, ERT_STATUS_SHAPE,
					     "scales must be floats, one per resized axis");
	}
	if (scales || fscales) {
		for (uint32_t i = 0; i < naxes; i++) {
			double s = fscales ? fscales[i] : ert_value_get_float(scales, i);
			int32_t d = axes[i];

			if (!(s > 0.0) || isinf(s))
				return ert_node_fail(n, err, ERT_STATUS_INVALID_MODEL,
						     "scales must be positive and finite");
			double od = floor((double)x->dims[d] * s);

			if (!(od <= (double)ERT_DIM_MAX))
				return ert_node_fail(n, err, ERT_STATUS_SHAPE,
						     "scales make a dimension above 2^48");
			p->scale[d] = s;
			p->out_dims[d] = (int64_t)od;
		}
	} else if (sizes) {
		st = ert_check_known(n, err, "sizes", sizes);
		if (st != ERT_OK)
			return st;
		if (!ert_dtype_is_int(sizes->dtype) || sizes->numel != naxes)
			return ert_node_fail(n, err, ERT_STATUS_SHAPE,
					     "sizes must be integers, one per resized axis");
		st = apply_sizes(n, x, sizes, axes, naxes, p, err);
		if (st != ERT_OK)
			return st;
	} else {
		return ert_node_fail(n, err, ERT_STATUS_INVALID_MODEL,
				     "neither scales nor sizes is given");
	}
	if (roi && p->coord == ERT_COORD_TF_CROP_AND_RESIZE) {
		st = ert_check_known(n, err, "roi", roi);
		if (st != ERT_OK)
			return st;
		if (roi->numel != 2 * (int64_t)naxes)
			return ert_node_fail(n, err, ERT_STATUS_SHAPE,
					     "roi must hold a start and an end per resized axis");
		for (uint32_t i = 0; i < naxes; i++) {
			p->roi_start[axes[i]] = ert_value_get_float(roi, i);
			p->roi_end[axes[i]] = ert_value_get_float(roi, naxes + i);
		}
	}
	return ERT_OK;
}
