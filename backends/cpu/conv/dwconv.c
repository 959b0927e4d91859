/* SPDX-License-Identifier: MIT */
/* Depthwise convolution: the level's plane kernel over every (image, channel). */
#include "cpu/conv/dwconv.h"
#include "cpu/conv/dwconv-impl.h"

static const struct ert_dwconv_level *level_of(enum ert_cpu_isa isa)
{
	return isa >= ERT_ISA_AVX512 ? &ert_dwconv_avx512
	       : isa >= ERT_ISA_AVX2 ? &ert_dwconv_avx2 : NULL;
}

/* the rows above and below the input, for the 3x3 planes */
const float ert_dw3_zero_row[ERT_DW3_MAX_W];

bool ert_dwconv_is_3x3(const struct ert_conv_geom *g)
{
	return g->in[0] == 1 && g->out[0] == 1 && g->k[0] == 1 && g->k[1] == 3 && g->k[2] == 3 &&
	       g->dil[1] == 1 && g->dil[2] == 1 && g->stride[1] == g->stride[2] &&
	       (g->stride[2] == 1 || g->stride[2] == 2) && g->in[2] <= ERT_DW3_MAX_W;
}

const char *ert_dwconv_kernel(enum ert_cpu_isa isa, const struct ert_conv_geom *g)
{
	struct ert_vec_win w;

	if (!level_of(isa) || !ert_vec_win_init(&w, g))
		return NULL;
	return ert_dwconv_is_3x3(g) ? level_of(isa)->name3 : level_of(isa)->name;
}

bool ert_dwconv_flat(enum ert_cpu_isa isa, const struct ert_conv_geom *g)
{
	struct ert_vec_win w;

	return level_of(isa) && ert_vec_win_init(&w, g) && ert_dwconv_is_3x3(g) &&
	       level_of(isa)->flat3(g);
}

struct dw_job {
	const struct ert_dwconv_args *a;
	const struct ert_dwconv_level *lv;
	struct ert_vec_win win;
	ert_dwconv_plane_fn plane;
	int64_t in_sp, out_sp, kk;
};

static void dw_range(void *arg, int64_t begin, int64_t end)
{
	const struct dw_job *j = arg;
	const struct ert_dwconv_args *a = j->a;

	if (j->plane == j->lv->plane3) {
		j->lv->planes3(&j->win, a, j->in_sp, j->out_sp, begin, end);
		return;
	}
	for (int64_t pl = begin; pl < end; pl++) {
		int64_t n = pl / a->m, m = pl % a->m;

		j->plane(&j->win, a->x + (n * a->c_in + m / a->m_g) * j->in_sp, a->w + m * j->kk,
			     a->bias ? a->bias[m] : 0.0f, a->res ? a->res + pl * j->out_sp : NULL,
			     a->y + pl * j->out_sp);
	}
}

bool ert_dwconv_run(struct ert_cpu *cpu, const struct ert_dwconv_args *a)
{
	struct dw_job j = { .a = a, .lv = level_of(cpu->isa) };
	bool defer;
	int64_t work;

	if (!j.lv || !ert_vec_win_init(&j.win, a->g))
		return false;
	/* precision HIGH keeps libm's expf/tanhf for these, as ert_cpu_act_apply() */
	defer = cpu->precision == ERT_LEVEL_HIGH && ert_act_is_approx(a->act.type);
	j.win.act = defer ? (struct ert_act_desc){ ERT_ACT_NONE, 0.0f, 0.0f } : a->act;
	j.plane = ert_dwconv_is_3x3(a->g) ? j.lv->plane3 : j.lv->plane;
	j.in_sp = ert_geom_in_size(a->g);
	j.out_sp = ert_geom_out_size(a->g);
	j.kk = ert_geom_k_size(a->g);
	work = j.out_sp * j.kk;
	ert_parallel_for(cpu->pool, a->n_img * a->m, work >= 16384 ? 1 : 16384 / (work + 1),
			 dw_range, &j);
	if (defer)
		ert_act_apply(&a->act, a->y, a->n_img * a->m * j.out_sp);
	return true;
}

bool ert_dwconv_band_ok(enum ert_cpu_isa isa, const struct ert_conv_geom *g)
{
	struct ert_vec_win w;

	if (g->nsp > 2 || g->in[0] != 1 || g->out[0] != 1 || g->k[0] != 1)
		return false;
	return !level_of(isa) || (ert_vec_win_init(&w, g) && ert_dwconv_is_3x3(g));
}

void ert_dwconv_band_run(const struct ert_cpu *cpu, const struct ert_dwconv_args *a,
			 const struct ert_dwconv_band *b)
{
	const struct ert_dwconv_level *lv = level_of(cpu->isa);
	const int64_t OW = a->g->out[2], kk = ert_geom_k_size(a->g);
	/* what ert_dwconv_run() defers at precision HIGH, and the reference always applies after */
	bool defer = !lv || (cpu->precision == ERT_LEVEL_HIGH && ert_act_is_approx(a->act.type));
	struct ert_vec_win win;

	if (lv) {
		ert_vec_win_init(&win, a->g);
		win.act = defer ? (struct ert_act_desc){ ERT_ACT_NONE, 0.0f, 0.0f } : a->act;
	}
	for (int64_t c = 0; c < a->m; c++) {
		float *y = a->y + c * b->y_cs;
		const float *x = a->x + c * b->x_cs;
		float bias = a->bias ? a->bias[c] : 0.0f;

		if (lv)
			lv->band3(&win, x, a->w + c * kk, bias, y, b->oh0, b->oh1, b->iy0, b->iy1);
		else
			ert_dwconv_ref_rows(a->g, x, b->iy0, a->w + c * kk, bias, y, b->oh0, b->oh1);
		if (defer)
			ert_act_apply(&a->act, y, (b->oh1 - b->oh0) * OW);
	}
}

bool ert_dwconv_band_flat(enum ert_cpu_isa isa, const struct ert_conv_geom *g, int64_t rows)
{
	const struct ert_dwconv_level *lv = level_of(isa);
	struct ert_vec_win w;

	return lv && rows > 0 && ert_dwconv_band_ok(isa, g) && ert_vec_win_init(&w, g) &&
	       lv->band_flat3_ok(g, rows);
}

bool ert_dwconv_band_flat_run(const struct ert_cpu *cpu, const struct ert_dwconv_args *a,
			      const struct ert_dwconv_band *b)
{
	const struct ert_dwconv_level *lv = level_of(cpu->isa);
	const int64_t n = (b->oh1 - b->oh0) * a->g->out[2];
	bool defer = cpu->precision == ERT_LEVEL_HIGH && ert_act_is_approx(a->act.type);
	struct ert_vec_win win;

	if (!ert_dwconv_band_flat(cpu->isa, a->g, b->oh1 - b->oh0))
		return false;
	ert_vec_win_init(&win, a->g);
	win.act = defer ? (struct ert_act_desc){ ERT_ACT_NONE, 0.0f, 0.0f } : a->act;
	lv->band_flat3(&win, a, b);
	for (int64_t c = 0; defer && c < a->m; c++)
		ert_act_apply(&a->act, a->y + c * b->y_cs, n);
	return true;
}
