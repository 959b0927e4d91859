/* SPDX-License-Identifier: MIT */
/* Stem convolution (conv-stem.h): the plan, the padded copy, the level's rows on the pool. */
#include <string.h>

#include "cpu/conv/conv-stem-impl.h"

static const struct ert_stem_level *level_of(enum ert_cpu_isa isa)
{
	return isa >= ERT_ISA_AVX512 ? &ert_stem_avx512
	       : isa >= ERT_ISA_AVX2 ? &ert_stem_avx2 : NULL;
}

/*
 * A band's output rows, its input rows and the phase width (ert_stem_plan):
 * ERT_STEM_BAND rows, fewer where the copy would not fit ERT_STEM_BUF; 0
 * where not even one row fits.
 */
static int64_t stem_band(const struct ert_conv_geom *g, int64_t c_in, int64_t *hb, int64_t *wq)
{
	const int64_t V = ERT_STEM_VW_MAX, sw = g->stride[2];
	const int64_t owp = (g->out[2] + V - 1) / V * V, span = (g->k[1] - 1) * g->dil[1] + 1;

	/* the last block's lanes past OW read up to q = owp - 1 + the last tap's offset */
	*wq = (owp + (g->k[2] - 1) * g->dil[2] / sw + V - 1) / V * V;
	for (int64_t band = ERT_STEM_BAND; band > 0; band--) {
		*hb = (band - 1) * g->stride[1] + span;
		if (c_in * *hb * sw * *wq <= ERT_STEM_BUF)
			return band;
	}
	return 0;
}

const char *ert_conv_stem_kernel(const struct ert_cpu *cpu, const struct ert_conv_geom *g,
				 int64_t c_in, int64_t m)
{
	const struct ert_stem_level *lv = level_of(cpu->isa);
	int64_t hb, wq;

	if (!lv || g->nsp != 2 || c_in < 1 || c_in > ERT_CONV_STEM_MAX_CIN || m < 8 ||
	    g->k[1] * g->k[2] < 2 || g->out[2] < 8 || g->out[1] < 1 ||
	    c_in * g->k[1] * g->k[2] > ERT_CONV_STEM_MAX_TAPS ||
	    (cpu->gemm_low && c_in * g->k[1] * g->k[2] > ERT_CONV_STEM_LOW_MAX_TAPS))
		return NULL;
	return stem_band(g, c_in, &hb, &wq) ? lv->name : NULL;
}

size_t ert_conv_stem_workspace(const struct ert_conv_geom *g, int64_t c_in, int64_t m)
{
	int64_t taps = c_in * g->k[1] * g->k[2];
	int64_t mp = (m + ERT_STEM_CO_MAX - 1) / ERT_STEM_CO_MAX * ERT_STEM_CO_MAX;

	return (size_t)(mp * taps + mp + taps) * sizeof(float) + 2 * 64;
}

struct stem_job {
	const struct ert_stem_level *lv;
	struct ert_stem_plan p;
};

/* Output rows [begin, end) of all images, (n, oh) in that order. */
static void rows_range(void *arg, int64_t begin, int64_t end)
{
	const struct stem_job *j = arg;
	const int64_t OH = j->p.g->out[1];

	while (begin < end) {
		int64_t n = begin / OH, r = begin % OH, e = OH - r < end - begin ? OH : r + end - begin;

		j->lv->rows(&j->p, n, r, e);
		begin += e - r;
	}
}

static void *align64(void *p)
{
	return (void *)(((uintptr_t)p + 63) & ~(uintptr_t)63);
}

void ert_conv_stem_run(struct ert_cpu *cpu, const struct ert_conv_stem_args *a, void *ws)
{
	const struct ert_conv_geom *g = a->g;
	const int64_t taps = a->c_in * g->k[1] * g->k[2], KH = g->k[1], KW = g->k[2];
	const int64_t sw = g->stride[2], plane = g->out[1] * g->out[2];
	struct stem_job j = { .lv = level_of(cpu->isa) };
	struct ert_stem_plan *p = &j.p;
	const int CO = j.lv->co;
	/* precision HIGH keeps libm's expf/tanhf for these, as ert_cpu_act_apply() */
	bool defer = cpu->precision == ERT_LEVEL_HIGH && ert_act_is_approx(a->act.type);
	float *wp, *bias;
	int32_t *toff;

	p->g = g;
	p->c_in = a->c_in;
	p->m = a->m;
	p->m_pad = (a->m + CO - 1) / CO * CO;
	p->taps = taps;
	p->band = stem_band(g, a->c_in, &p->hb, &p->wq);
	p->row = sw * p->wq;
	p->x = a->x;
	p->res = a->res;
	p->y = a->y;
	p->act = defer ? (struct ert_act_desc){ ERT_ACT_NONE, 0.0f, 0.0f } : a->act;
	wp = align64(ws);
	bias = align64(wp + p->m_pad * taps);
	toff = (int32_t *)(bias + p->m_pad);

	/* weights [m, c_in, KH, KW] into [m_pad / CO][taps][CO], zeros past m */
	for (int64_t co = 0; co < p->m_pad; co++) {
		float *d = wp + (co / CO) * taps * CO + co % CO;

		for (int64_t t = 0; t < taps; t++)
			d[t * CO] = co < a->m ? a->w[co * taps + t] : 0.0f;
		bias[co] = co < a->m && a->bias ? a->bias[co] : 0.0f;
	}
	for (int64_t ci = 0, t = 0; ci < a->c_in; ci++)
		for (int64_t kh = 0; kh < KH; kh++)
			for (int64_t kw = 0; kw < KW; kw++, t++) {
				int64_t x = kw * g->dil[2];

				toff[t] = (int32_t)((ci * p->hb + kh * g->dil[1]) * p->row +
						    (x % sw) * p->wq + x / sw);
			}
	p->wp = wp;
	p->bias = bias;
	p->toff = toff;

	/* chunks of whole bands where they can be */
	ert_parallel_for(cpu->pool, a->n_img * g->out[1], 2 * p->band, rows_range, &j);
	if (defer)
		ert_act_apply(&a->act, a->y, a->n_img * a->m * plane);
}
