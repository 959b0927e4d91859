/* SPDX-License-Identifier: MIT */
/* Window geometry (strides, dilations, pads, auto_pad) for convolutions and pools. */
#include <stdio.h>
#include <string.h>

#include "ops/linalg-geom.h"

static ert_status geom_fail(const struct ert_node *n, struct ert_err *err, const char *fmt,
			    int64_t a, int64_t b)
{
	char buf[200];

	snprintf(buf, sizeof(buf), fmt, (long long)a, (long long)b);
	ert_err_set(err, "%s '%s': %s", ert_op_name(n->op), n->name, buf);
	return ERT_STATUS_INVALID_MODEL;
}

/* Read an INTS attribute of exactly @want entries, each >= @min, into @dst[off..]. */
static ert_status read_ints(const struct ert_node *n, const char *name, int32_t want,
			    int64_t min, int64_t *dst, int32_t off, struct ert_err *err)
{
	uint32_t count;
	const int64_t *v = ert_attr_ints(n, name, &count);

	if (!v)
		return ERT_OK;
	if ((int32_t)count != want) {
		ert_err_set(err, "%s '%s': attribute %s has %u values, expected %d",
			    ert_op_name(n->op), n->name, name, count, (int)want);
		return ERT_STATUS_INVALID_MODEL;
	}
	for (int32_t i = 0; i < want; i++) {
		if (v[i] < min || v[i] > ((int64_t)1 << 40)) {
			ert_err_set(err, "%s '%s': attribute %s[%d] = %lld is out of range",
				    ert_op_name(n->op), n->name, name, (int)i, (long long)v[i]);
			return ERT_STATUS_INVALID_MODEL;
		}
		dst[off + i] = v[i];
	}
	return ERT_OK;
}

static ert_status geom_common(const struct ert_node *n, int32_t nsp, const int64_t *in_sp,
			      const int64_t *kernel, struct ert_conv_geom *g, struct ert_err *err)
{
	ert_status st;
	uint32_t count;
	const int64_t *pads;
	int32_t off = 3 - nsp;

	if (nsp < 1 || nsp > ERT_GEOM_MAX_SPATIAL) {
		ert_err_set(err, "%s '%s': %d spatial dimensions; only 1 to 3 are supported",
			    ert_op_name(n->op), n->name, (int)nsp);
		return ERT_STATUS_UNSUPPORTED;
	}
	memset(g, 0, sizeof(*g));
	g->nsp = nsp;
	for (int32_t i = 0; i < 3; i++) {
		g->in[i] = g->k[i] = g->stride[i] = g->dil[i] = g->out[i] = 1;
	}
	for (int32_t i = 0; i < nsp; i++) {
		if (kernel[i] < 1)
			return geom_fail(n, err, "kernel size %lld on spatial axis %lld", kernel[i], i);
		if (in_sp[i] < 0)
			return geom_fail(n, err, "input size %lld on spatial axis %lld", in_sp[i], i);
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
			return geom_fail(n, err, "pads has %lld values, expected %lld", count,
					 2 * nsp);
		for (int32_t i = 0; i < nsp; i++) {
			if (pads[i] < 0 || pads[nsp + i] < 0 || pads[i] > ((int64_t)1 << 40) ||
			    pads[nsp + i] > ((int64_t)1 << 40))
				return geom_fail(n, err, "pad on spatial axis %lld is out of range "
						 "(%lld)", i, pads[i] < 0 ? pads[i] : pads[nsp + i]);
			g->pad_b[off + i] = pads[i];
			g->pad_e[off + i] = pads[nsp + i];
		}
	}
	return ERT_OK;
}

static int64_t ceil_div(int64_t a, int64_t b)
{
	return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}

ert_status ert_geom_conv(const struct ert_node *n, int32_t nsp, const int64_t *in_sp,
			 const int64_t *kernel, bool ceil_mode, struct ert_conv_geom *g,
			 struct ert_err *err)
{
	ert_status st = geom_common(n, nsp, in_sp, kernel, g, err);
	const char *ap = ert_attr_string(n, "auto_pad", "NOTSET");

	if (st != ERT_OK)
		return st;
	for (int32_t i = 3 - nsp; i < 3; i++) {
		int64_t dk = (g->k[i] - 1) * g->dil[i] + 1;

		if (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER")) {
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
			ert_err_set(err, "%s '%s': unknown auto_pad '%s'", ert_op_name(n->op),
				    n->name, ap);
			return ERT_STATUS_INVALID_MODEL;
		}
		int64_t span = g->in[i] + g->pad_b[i] + g->pad_e[i] - dk;

		if (span < 0)
			return geom_fail(n, err,
					 "window of %lld does not fit the padded input of %lld",
					 dk, g->in[i] + g->pad_b[i] + g->pad_e[i]);
		g->out[i] = (ceil_mode ? ceil_div(span, g->stride[i]) : span / g->stride[i]) + 1;
		/* The last window must start inside the input or its leading padding. */
		if (ceil_mode && (g->out[i] - 1) * g->stride[i] >= g->in[i] + g->pad_b[i])
			g->out[i]--;
	}
	return ERT_OK;
}

ert_status ert_geom_convt(const struct ert_node *n, int32_t nsp, const int64_t *in_sp,
			  const int64_t *kernel, struct ert_conv_geom *g, struct ert_err *err)
{
	ert_status st = geom_common(n, nsp, in_sp, kernel, g, err);
	const char *ap = ert_attr_string(n, "auto_pad", "NOTSET");
	uint32_t n_os = 0;
	const int64_t *os = ert_attr_ints(n, "output_shape", &n_os);
	int32_t off = 3 - nsp;

	if (st != ERT_OK)
		return st;
	st = read_ints(n, "output_padding", nsp, 0, g->out_pad, off, err);
	if (st != ERT_OK)
		return st;
	if (os && (int32_t)n_os < nsp)
		return geom_fail(n, err, "output_shape has %lld values, expected %lld", n_os, nsp);
	for (int32_t i = off; i < 3; i++) {
		int64_t dk = (g->k[i] - 1) * g->dil[i] + 1;
		int64_t full = g->stride[i] * (g->in[i] - 1) + g->out_pad[i] + dk;
		bool same = !strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER");

		if (g->out_pad[i] >= g->stride[i] && g->out_pad[i] >= g->dil[i])
			return geom_fail(n, err, "output_padding %lld is not below stride %lld",
					 g->out_pad[i], g->stride[i]);
		if (os || same) {
			int64_t want = os ? os[n_os - nsp + (i - off)] : g->in[i] * g->stride[i];
			int64_t total = full - want;

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
			return geom_fail(n, err, "output size %lld on spatial axis %lld",
					 g->out[i], i - off);
	}
	return ERT_OK;
}
