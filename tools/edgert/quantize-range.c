/* SPDX-License-Identifier: MIT */
/* edgert quantize: activation ranges, int8 parameters, per-channel weights, cosines. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "quantize.h"

void q_stats_update(struct q_stats *s, const float *x, size_t n)
{
	float lo = INFINITY, hi = -INFINITY;

	for (size_t i = 0; i < n; i++) {
		/* NaN and infinities say nothing about the range int8 must cover */
		if (!isfinite(x[i]))
			continue;
		lo = x[i] < lo ? x[i] : lo;
		hi = x[i] > hi ? x[i] : hi;
	}
	if (lo > hi)
		lo = hi = 0.0f; /* empty, or nothing finite */
	if (!s->samples) {
		s->min = lo;
		s->max = hi;
		s->ema_min = lo;
		s->ema_max = hi;
	} else {
		s->min = lo < s->min ? lo : s->min;
		s->max = hi > s->max ? hi : s->max;
		s->ema_min = (1.0 - Q_EMA_FACTOR) * s->ema_min + Q_EMA_FACTOR * lo;
		s->ema_max = (1.0 - Q_EMA_FACTOR) * s->ema_max + Q_EMA_FACTOR * hi;
	}
	s->samples++;
}

void q_stats_hist_update(struct q_stats *s, const float *x, size_t n)
{
	double per_bin;

	if (!s->hist || !(s->hist_max > 0.0f))
		return;
	per_bin = Q_HIST_BINS / (double)s->hist_max;
	for (size_t i = 0; i < n; i++) {
		double b;

		/*
		 * Zero is exact at any threshold (it is the zero point); counted, the
		 * Relu zeros would sit in bin 0 and every candidate would be charged
		 * for spreading them over a whole quantisation step.
		 */
		if (!isfinite(x[i]) || x[i] == 0.0f)
			continue;
		b = fabs((double)x[i]) * per_bin;
		s->hist[b >= Q_HIST_BINS - 1 ? Q_HIST_BINS - 1 : (uint32_t)b]++;
	}
}

struct q_params q_params_from_range(float lo, float hi)
{
	struct q_params p = { 1.0f, 0 };
	double r, zp;

	if (!isfinite(lo) || !isfinite(hi))
		return p;
	lo = lo < 0.0f ? lo : 0.0f;
	hi = hi > 0.0f ? hi : 0.0f;
	r = ((double)hi - (double)lo) / 255.0;
	/* a scale below FLT_MIN would make 1 / scale overflow in QuantizeLinear */
	if (!(r >= FLT_MIN))
		r = 1.0;
	p.scale = (float)r;
	zp = round(-128.0 - (double)lo / (double)p.scale);
	p.zp = (int8_t)(zp < -128.0 ? -128 : zp > 127.0 ? 127 : zp);
	return p;
}

/*
 * KL(P || Q) for threshold bin @i, in closed form per merged chunk: Q is
 * constant over the non-empty bins of a chunk, so sum p log q needs one log
 * per chunk, and sum p log p comes from a prefix sum.
 */
static double kl_at(const uint32_t *hist, const double *cum, const double *cum_plogp,
		    const uint32_t *cum_nz, double total, uint32_t i, uint32_t levels)
{
	double tail = total - cum[i];
	double last = (double)hist[i - 1] + tail;
	double q_total = cum[i];
	double plogp, plogq = 0.0;

	if (q_total <= 0.0)
		return INFINITY;
	/* p is hist[0..i) with every count beyond the threshold added to its last bin */
	plogp = cum_plogp[i - 1] + (last > 0.0 ? last * log(last) : 0.0);
	for (uint32_t j = 0; j < levels; j++) {
		uint32_t b0 = (uint32_t)((uint64_t)j * i / levels);
		uint32_t b1 = (uint32_t)((uint64_t)(j + 1) * i / levels);
		double hsum = cum[b1] - cum[b0];
		double psum = hsum;
		uint32_t nz = cum_nz[b1] - cum_nz[b0];
		double q;

		if (b1 == i) {
			psum += tail;
			if (hist[i - 1] == 0 && tail > 0.0)
				nz++;
		}
		if (psum <= 0.0 || nz == 0)
			continue;
		/*
		 * Q spreads the chunk's clipped counts over its non-empty bins. A
		 * chunk that holds only clipped-away counts gets half a count: a
		 * large, finite penalty.
		 */
		q = hsum > 0.0 ? hsum / nz : 0.5;
		plogq += psum * log(q);
	}
	return (plogp - plogq) / total - log(total) + log(q_total);
}

float q_kl_threshold(const uint32_t *hist, uint32_t nbins, float hist_max, uint32_t levels)
{
	double *cum = NULL, *cum_plogp = NULL;
	uint32_t *cum_nz = NULL;
	double best = INFINITY;
	uint32_t best_i = nbins;

	if (!(hist_max > 0.0f) || levels == 0 || levels >= nbins)
		return hist_max;
	cum = malloc((nbins + 1) * sizeof(*cum));
	cum_plogp = malloc((nbins + 1) * sizeof(*cum_plogp));
	cum_nz = malloc((nbins + 1) * sizeof(*cum_nz));
	if (!cum || !cum_plogp || !cum_nz)
		goto out; /* the full range is a safe answer */
	cum[0] = cum_plogp[0] = 0.0;
	cum_nz[0] = 0;
	for (uint32_t k = 0; k < nbins; k++) {
		double h = hist[k];

		cum[k + 1] = cum[k] + h;
		cum_plogp[k + 1] = cum_plogp[k] + (h > 0.0 ? h * log(h) : 0.0);
		cum_nz[k + 1] = cum_nz[k] + (hist[k] != 0);
	}
	if (cum[nbins] <= 0.0)
		goto out;
	for (uint32_t i = levels; i <= nbins; i++) {
		double kl = kl_at(hist, cum, cum_plogp, cum_nz, cum[nbins], i, levels);

		/* '<' keeps the smallest threshold among equals; ties are rare */
		if (kl < best) {
			best = kl;
			best_i = i;
		}
	}
out:
	free(cum);
	free(cum_plogp);
	free(cum_nz);
	return (float)((double)hist_max * best_i / nbins);
}

void q_range_of(const struct q_stats *s, enum q_method method, float *lo, float *hi)
{
	*lo = s->min;
	*hi = s->max;
	if (method == Q_METHOD_EMA && s->samples) {
		*lo = (float)s->ema_min;
		*hi = (float)s->ema_max;
	} else if (method == Q_METHOD_KL && s->hist) {
		/*
		 * One-signed tensors (after Relu) use all 255 steps on one side of
		 * zero; two-signed ones about half on each.
		 */
		uint32_t levels = s->min >= 0.0f || s->max <= 0.0f ? 255 : 128;
		float t = q_kl_threshold(s->hist, Q_HIST_BINS, s->hist_max, levels);

		*lo = s->min < -t ? -t : s->min;
		*hi = s->max > t ? t : s->max;
	}
}

float q_bias_min_weight_scale(float b, float x_scale)
{
	/* 2^31 less a margin, so that float rounding of the scales cannot push it over */
	double m = fabs((double)b) / ((double)x_scale * 2147418112.0);

	return isfinite(m) && m < FLT_MAX ? (float)m : 0.0f;
}

void q_weights_per_channel(const float *w, int64_t outer, int64_t n, int64_t inner, float alpha,
			   const float *min_scale, int8_t *q, float *scale)
{
	for (int64_t c = 0; c < n; c++) {
		float m = 0.0f;

		for (int64_t o = 0; o < outer; o++) {
			const float *p = w + (o * n + c) * inner;

			for (int64_t k = 0; k < inner; k++) {
				float a = fabsf(p[k] * alpha);

				m = a > m ? a : m;
			}
		}
		scale[c] = isfinite(m) && m / 127.0f >= FLT_MIN ? m / 127.0f : 1.0f;
		/* a tiny channel under a large bias: coarser weights, but a bias that fits */
		if (min_scale && scale[c] < min_scale[c])
			scale[c] = min_scale[c];
	}
	for (int64_t o = 0; o < outer; o++) {
		for (int64_t c = 0; c < n; c++) {
			const float *p = w + (o * n + c) * inner;
			int8_t *d = q + (o * n + c) * inner;

			for (int64_t k = 0; k < inner; k++) {
				float v = nearbyintf(p[k] * alpha / scale[c]);

				if (isnan(v))
					v = 0.0f;
				d[k] = (int8_t)(v < -127.0f ? -127 : v > 127.0f ? 127 : v);
			}
		}
	}
}

int32_t q_saturate_i32(double x)
{
	double r = round(x);

	if (isnan(r))
		return 0;
	return r <= -2147483648.0 ? INT32_MIN : r >= 2147483647.0 ? INT32_MAX : (int32_t)r;
}

void q_cosine_add_f32(struct q_cosine *c, const float *a, const float *b, size_t n)
{
	double dot = 0.0, aa = 0.0, bb = 0.0;

	for (size_t i = 0; i < n; i++) {
		dot += (double)a[i] * b[i];
		aa += (double)a[i] * a[i];
		bb += (double)b[i] * b[i];
	}
	c->dot += dot;
	c->aa += aa;
	c->bb += bb;
}

void q_cosine_add_q8(struct q_cosine *c, const float *a, const int8_t *q, struct q_params p,
		     size_t n)
{
	double dot = 0.0, aa = 0.0, bb = 0.0;

	for (size_t i = 0; i < n; i++) {
		/* as DequantizeLinear computes it: float32 (q - zp) * scale */
		double b = (float)(q[i] - p.zp) * p.scale;

		dot += (double)a[i] * b;
		aa += (double)a[i] * a[i];
		bb += b * b;
	}
	c->dot += dot;
	c->aa += aa;
	c->bb += bb;
}

double q_cosine_value(const struct q_cosine *c)
{
	if (c->aa == 0.0 && c->bb == 0.0)
		return 1.0;
	if (c->aa == 0.0 || c->bb == 0.0)
		return 0.0;
	return c->dot / (sqrt(c->aa) * sqrt(c->bb));
}
