/* SPDX-License-Identifier: MIT */
/*
 * The scalar depthwise reference (the scalar level's kernel and the vector
 * kernels' oracle): an output plane accumulated row by row, tap by tap.
 */
#include "cpu/conv/dwconv.h"

/* out[i] += w * in[i * stride]: restrict lets GCC vectorise without alias checks. */
static void axpy_row(float *restrict out, const float *restrict in, int64_t n, int64_t stride,
		     float w)
{
	if (stride == 1)
		for (int64_t i = 0; i < n; i++)
			out[i] += w * in[i];
	else if (stride == 2)
		for (int64_t i = 0; i < n; i++)
			out[i] += w * in[2 * i];
	else
		for (int64_t i = 0; i < n; i++)
			out[i] += w * in[i * stride];
}

/* Three horizontal taps at once: one pass over the output row instead of three. */
static void axpy3_row(float *restrict out, const float *restrict in, int64_t n, int64_t stride,
		      int64_t dil, float w0, float w1, float w2)
{
	if (stride == 1)
		for (int64_t i = 0; i < n; i++)
			out[i] += w0 * in[i] + w1 * in[i + dil] + w2 * in[i + 2 * dil];
	else
		for (int64_t i = 0; i < n; i++)
			out[i] += w0 * in[i * stride] + w1 * in[i * stride + dil] +
				  w2 * in[i * stride + 2 * dil];
}

/* Output columns [lo, hi] whose tap at input offset @off lands inside a row of @iw. */
static void tap_cols(int64_t off, int64_t sw, int64_t iw, int64_t ow, int64_t *lo, int64_t *hi)
{
	*lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
	*hi = iw - 1 - off < 0 ? -1 : (iw - 1 - off) / sw;
	if (*hi > ow - 1)
		*hi = ow - 1;
}

/* orow += the taps of window row @wr over input row @irow. */
static void row_taps(const struct ert_conv_geom *g, float *orow, const float *irow,
		     const float *wr)
{
	const int64_t IW = g->in[2], OW = g->out[2], sw = g->stride[2];
	int64_t lo[3], hi[3], L = 0, H = OW - 1;
	int64_t nk = g->k[2], dw = g->dil[2];

	if (nk == 3) {
		for (int t = 0; t < 3; t++) {
			tap_cols(t * dw - g->pad_b[2], sw, IW, OW, &lo[t], &hi[t]);
			L = lo[t] > L ? lo[t] : L;
			H = hi[t] < H ? hi[t] : H;
		}
	}
	if (nk == 3 && L <= H) {
		/* fused interior, then each tap's own edges */
		int64_t off = -g->pad_b[2];

		axpy3_row(orow + L, irow + L * sw + off, H - L + 1, sw, dw, wr[0], wr[1], wr[2]);
		for (int t = 0; t < 3; t++) {
			int64_t o = t * dw + off;
			int64_t e = hi[t] < L - 1 ? hi[t] : L - 1;

			if (e >= lo[t])
				axpy_row(orow + lo[t], irow + lo[t] * sw + o, e - lo[t] + 1, sw,
					 wr[t]);
			int64_t r = lo[t] > H + 1 ? lo[t] : H + 1;

			if (hi[t] >= r)
				axpy_row(orow + r, irow + r * sw + o, hi[t] - r + 1, sw, wr[t]);
		}
		return;
	}
	for (int64_t kw = 0; kw < nk; kw++) {
		int64_t off = kw * dw - g->pad_b[2], l, h;

		tap_cols(off, sw, IW, OW, &l, &h);
		if (h >= l)
			axpy_row(orow + l, irow + l * sw + off, h - l + 1, sw, wr[kw]);
	}
}

void ert_dwconv_ref_rows(const struct ert_conv_geom *g, const float *x, int64_t iy0,
			 const float *k, float bias, float *y, int64_t oh0, int64_t oh1)
{
	const int64_t OD = g->out[0], OH = g->out[1], OW = g->out[2];
	const int64_t IH = g->in[1], IW = g->in[2];

	for (int64_t od = 0; od < OD; od++)
		for (int64_t oh = oh0; oh < oh1; oh++) {
			float *orow = y + (od * OH + oh - oh0) * OW;

			for (int64_t i = 0; i < OW; i++)
				orow[i] = bias;
			for (int64_t kd = 0; kd < g->k[0]; kd++) {
				int64_t iz = od * g->stride[0] - g->pad_b[0] + kd * g->dil[0];

				if (iz < 0 || iz >= g->in[0])
					continue;
				for (int64_t kh = 0; kh < g->k[1]; kh++) {
					int64_t iy = oh * g->stride[1] - g->pad_b[1] + kh * g->dil[1];

					if (iy < 0 || iy >= IH)
						continue;
					row_taps(g, orow, x + (iz * IH + iy - iy0) * IW,
						 k + (kd * g->k[1] + kh) * g->k[2]);
				}
			}
		}
}
