/* SPDX-License-Identifier: MIT */
/*
 * Window geometry (strides, dilations, pads, auto_pad) for convolutions and pools.
 *
 * Every size here comes from the model. The attribute rules bound each value
 * (ERT_ATTR_SIZE_MAX) and the arithmetic on them is checked, and the result
 * keeps one invariant kernels rely on: every window (k - 1) * dil + 1, padded
 * input, output size and output_padding is at most ERT_DIM_MAX, so kernels'
 * index terms (o * stride - pad + k * dil) stay far inside int64.
 */
#include <stdio.h>
#include <string.h>

#include "ops/linalg-geom.h"

/* "Op 'name': ..." into @err, returning ERT_STATUS_INVALID_MODEL (ert_node_fail). */
#define geom_fail(n, err, ...) ert_node_fail(n, err, ERT_STATUS_INVALID_MODEL, __VA_ARGS__)

/* Read an INTS attribute of exactly @want entries, each in [@min, ERT_ATTR_SIZE_MAX]. */
static ert_status read_ints(const struct ert_node *n, const char *name, int32_t want,
			    int64_t min, int64_t *dst, int32_t off, struct ert_err *err)
{
	uint32_t count;
	const int64_t *v = ert_attr_ints(n, name, &count);

	if (!v)
		return ERT_OK;
	if ((int32_t)count != want)
		return geom_fail(n, err, "attribute %s has %u values, expected %d", name, count,
				 (int)want);
	for (int32_t i = 0; i < want; i++) {
		if (v[i] < min || v[i] > ERT_ATTR_SIZE_MAX)
			return geom_fail(n, err, "attribute %s[%d] = %lld is out of range [%lld, %lld]",
					 name, (int)i, (long long)v[i], (long long)min,
					 (long long)ERT_ATTR_SIZE_MAX);
		dst[off + i] = v[i];
	}
	return ERT_OK;
}

/* The window (k - 1) * dil + 1 of axis @i, at most ERT_DIM_MAX. */
static ert_status window(const struct ert_node *n, struct ert_conv_geom *g, int32_t i,
			 const char *kname, struct ert_err *err)
{
	int64_t w;

	if (!ert_muladd_i64(g->k[i] - 1, g->dil[i], 1, &w) || w > ERT_DIM_MAX)
		return geom_fail(n, err, "%s %lld with dilations %lld on spatial axis %d makes "
				 "a window larger than %lld", kname, (long long)g->k[i],
				 (long long)g->dil[i], (int)(i - (3 - g->nsp)),
				 (long long)ERT_DIM_MAX);
	g->win[i] = w;
	return ERT_OK;
}

static ert_status geom_common(const struct ert_node *n, int32_t nsp, const int64_t *in_sp,
			      const int64_t *kernel, const char *kname, struct ert_conv_geom *g,
			      struct ert_err *err)
{
	ert_status st;
	uint32_t count;
	const int64_t *pads;
	int32_t off = 3 - nsp;

	if (nsp < 1 || nsp > ERT_GEOM_MAX_SPATIAL)
		return geom_fail(n, err, "%d spatial dimensions; only 1 to 3 are supported",
				 (int)nsp);
	memset(g, 0, sizeof(*g));
	g->nsp = nsp;
	for (int32_t i = 0; i < 3; i++)
		g->in[i] = g->k[i] = g->stride[i] = g->dil[i] = g->out[i] = g->win[i] = 1;
	for (int32_t i = 0; i < nsp; i++) {
		if (kernel[i] < 1 || kernel[i] > ERT_ATTR_SIZE_MAX)
			return geom_fail(n, err, "%s %lld on spatial axis %d is out of range [1, %lld]",
					 kname, (long long)kernel[i], (int)i,
					 (long long)ERT_ATTR_SIZE_MAX);
		if (in_sp[i] < 0 || in_sp[i] > ERT_DIM_MAX)
			return geom_fail(n, err, "input size %lld on spatial axis %d",
					 (long long)in_sp[i], (int)i);
		g->in[off + i] = in_sp[i];
		g->k[off + i] = kernel[i];
	}
	st = read_ints(n, "strides", nsp, 1, g->stride, off, err);
	if (st == ERT_OK)
		st = read_ints(n, "dilations", nsp, 1, g->dil, off, err);
	if (st != ERT_OK)
		return st;
	pads = ert_attr_ints(n, "pads", &count);
	if (pads) {
		if ((int32_t)count != 2 * nsp)
			return geom_fail(n, err, "attribute pads has %u values, expected %d", count,
					 (int)(2 * nsp));
		for (int32_t i = 0; i < 2 * nsp; i++)
			if (pads[i] < 0 || pads[i] > ERT_ATTR_SIZE_MAX)
				return geom_fail(n, err, "attribute pads[%d] = %lld is out of range "
						 "[0, %lld]", (int)i, (long long)pads[i],
						 (long long)ERT_ATTR_SIZE_MAX);
		for (int32_t i = 0; i < nsp; i++) {
			g->pad_b[off + i] = pads[i];
			g->pad_e[off + i] = pads[nsp + i];
		}
	}
	for (int32_t i = off; i < 3; i++) {
		st = window(n, g, i, kname, err);
		if (st != ERT_OK)
			return st;
	}
	return ERT_OK;
}

static int64_t ceil_div(int64_t a, int64_t b)
{
	return a >= 0 ? a / b + (a % b != 0) : -((-a) / b);
}

static bool is_same(const char *ap)
{
	return !strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER");
}

ert_status ert_geom_conv(const struct ert_node *n, int32_t nsp, const int64_t *in_sp,
			 const int64_t *kernel, bool ceil_mode, struct ert_conv_geom *g,
			 struct ert_err *err)
{
	const char *kname = n->op == ERT_OP_Conv || n->op == ERT_OP_ConvInteger ||
				    n->op == ERT_OP_QLinearConv ? "kernel size (W's shape)" : "kernel_shape";
	ert_status st = geom_common(n, nsp, in_sp, kernel, kname, g, err);
	const char *ap = ert_attr_string(n, "auto_pad", "NOTSET");

	if (st != ERT_OK)
		return st;
	for (int32_t i = 3 - nsp; i < 3; i++) {
		int32_t ax = i - (3 - nsp);
		int64_t dk = g->win[i];

		if (is_same(ap)) {
			/* all terms <= 2 * ERT_DIM_MAX: (out - 1) * stride < in */
			int64_t out = ceil_div(g->in[i], g->stride[i]);
			int64_t total = (out - 1) * g->stride[i] + dk - g->in[i];

			if (total < 0)
				total = 0;
			g->pad_b[i] = ap[5] == 'U' ? total / 2 : total - total / 2;
			g->pad_e[i] = total - g->pad_b[i];
			g->out[i] = out;
			continue;
		}
		if (!strcmp(ap, "VALID")) {
			g->pad_b[i] = g->pad_e[i] = 0;
		} else if (strcmp(ap, "NOTSET") != 0) {
			return geom_fail(n, err, "unknown auto_pad '%s'", ap);
		}
		/* in, pads <= ERT_DIM_MAX each: no overflow */
		int64_t padded = g->in[i] + g->pad_b[i] + g->pad_e[i];
		int64_t span = padded - dk;

		if (span < 0)
			return geom_fail(n, err, "the window of %lld on spatial axis %d (%s, "
					 "dilations) does not fit the padded input of %lld (pads)",
					 (long long)dk, (int)ax, kname, (long long)padded);
		g->out[i] = (ceil_mode ? ceil_div(span, g->stride[i]) : span / g->stride[i]) + 1;
		/* The last window must start inside the input or its leading padding. */
		if (ceil_mode && (g->out[i] - 1) * g->stride[i] >= g->in[i] + g->pad_b[i])
			g->out[i]--;
		if (g->out[i] > ERT_DIM_MAX)
			return geom_fail(n, err, "output size %lld on spatial axis %d (input %lld, "
					 "pads %lld + %lld) exceeds %lld", (long long)g->out[i],
					 (int)ax, (long long)g->in[i], (long long)g->pad_b[i],
					 (long long)g->pad_e[i], (long long)ERT_DIM_MAX);
	}
	return ERT_OK;
}

ert_status ert_geom_convt(const struct ert_node *n, int32_t nsp, const int64_t *in_sp,
			  const int64_t *kernel, struct ert_conv_geom *g, struct ert_err *err)
{
	ert_status st = geom_common(n, nsp, in_sp, kernel, "kernel size (W's shape)", g, err);
	const char *ap = ert_attr_string(n, "auto_pad", "NOTSET");
	uint32_t n_os = 0;
	const int64_t *os = ert_attr_ints(n, "output_shape", &n_os);
	int32_t off = 3 - nsp;
	bool same = is_same(ap);

	if (st != ERT_OK)
		return st;
	st = read_ints(n, "output_padding", nsp, 0, g->out_pad, off, err);
	if (st != ERT_OK)
		return st;
	if (os && (int32_t)n_os < nsp)
		return geom_fail(n, err, "attribute output_shape has %u values, expected %d", n_os,
				 (int)nsp);
	if (!same && strcmp(ap, "VALID") && strcmp(ap, "NOTSET"))
		return geom_fail(n, err, "unknown auto_pad '%s'", ap);
	for (int32_t i = off; i < 3; i++) {
		int32_t ax = i - off;
		int64_t full;

		if (g->out_pad[i] >= g->stride[i] && g->out_pad[i] >= g->dil[i])
			return geom_fail(n, err, "attribute output_padding[%d] = %lld is not below "
					 "strides %lld or dilations %lld", (int)ax,
					 (long long)g->out_pad[i], (long long)g->stride[i],
					 (long long)g->dil[i]);
		/* stride * (in - 1) + output_padding + window */
		if (!ert_muladd_i64(g->stride[i], g->in[i] - 1, g->out_pad[i] + g->win[i], &full) ||
		    full > ERT_DIM_MAX)
			return geom_fail(n, err, "the full output on spatial axis %d (strides %lld x "
					 "input %lld + output_padding + window %lld) exceeds %lld",
					 (int)ax, (long long)g->stride[i], (long long)g->in[i],
					 (long long)g->win[i], (long long)ERT_DIM_MAX);
		if (os || same) {
			int64_t want = os ? os[n_os - nsp + ax] : 0;
			int64_t total;

			if (os && (want < 1 || want > ERT_DIM_MAX))
				return geom_fail(n, err, "attribute output_shape[%d] = %lld is out of "
						 "range [1, %lld]", (int)(n_os - nsp + ax),
						 (long long)want, (long long)ERT_DIM_MAX);
			if (!os && (!ert_mul_i64(g->in[i], g->stride[i], &want) ||
				    want > ERT_DIM_MAX))
				return geom_fail(n, err, "input %lld x strides %lld on spatial axis %d "
						 "exceeds %lld", (long long)g->in[i],
						 (long long)g->stride[i], (int)ax,
						 (long long)ERT_DIM_MAX);
			/* both in [0, ERT_DIM_MAX]: no overflow */
			total = full - want;
			if (total < 0)
				total = 0;
			if (!strcmp(ap, "SAME_UPPER")) {
				g->pad_b[i] = total / 2;
				g->pad_e[i] = total - total / 2;
			} else {
				g->pad_b[i] = total - total / 2;
				g->pad_e[i] = total / 2;
			}
			g->out[i] = want;
		} else {
			if (!strcmp(ap, "VALID"))
				g->pad_b[i] = g->pad_e[i] = 0;
			g->out[i] = full - g->pad_b[i] - g->pad_e[i];
		}
		if (g->out[i] < 1)
			return geom_fail(n, err, "output size %lld on spatial axis %d (pads %lld, "
					 "%lld)", (long long)g->out[i], (int)ax,
					 (long long)g->pad_b[i], (long long)g->pad_e[i]);
	}
	return ERT_OK;
}
