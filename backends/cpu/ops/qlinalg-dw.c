/* SPDX-License-Identifier: MIT */
/*
 * Depthwise integer convolutions (one input channel per group, fewer than
 * four outputs per group) at the SIMD levels. Per output plane, the input
 * plane minus its zero point is copied as int16 into the lane's slot,
 * padded with zeros and split by column phase of the stride, so that the
 * inputs one tap reads for consecutive outputs are consecutive; each row of
 * outputs is then a sum over the taps in the level's lanes, exact in int32,
 * and goes through the int8 GEMM's epilogue (bias, requantisation) like
 * the dense convolutions.
 */
#include <string.h>

#include "cpu/ops/qlinalg.h"
#include "cpu/qgemm/qgemm.h"

/* int16 past each phase plane, int32 past the sums: room for a whole vector past the end. */
#define DW_SLACK 64

typedef void (*dw_row_fn)(const int16_t *const *rows, const int32_t *w, int kk, int32_t *acc,
			  int64_t n);

struct dwconv {
	const struct iconv_job *j;
	dw_row_fn row;
	ert_qgemm_epi_fn epi;
	struct ert_qgemm_epi base;
	int64_t hp, wp, phw;      /* padded rows and columns; int16 per phase row */
	int64_t span;             /* sums per row call: a whole plane at vertical stride 1 */
	size_t plane, w, rows, acc, total;
	int64_t osz;
};

static dw_row_fn dw_row_for(enum ert_cpu_isa isa)
{
	return isa >= ERT_ISA_AVX512 ? ert_q8_dw_row_avx512
	       : isa >= ERT_ISA_AVX2 ? ert_q8_dw_row_avx2 : NULL;
}

/* Padded planes past this many int16 (hostile pads or strides) stay with the reference. */
#define DW_PLANE_MAX ((int64_t)1 << 22)

/*
 * 1-D and 2-D depthwise convolutions whose padded plane is of a sane size;
 * the GEMM takes groups of four outputs or more.
 */
static bool dw_usable(const struct iconv_job *j)
{
	const struct ert_conv_geom *g = &j->g;
	int64_t rows, cols;

	if (!(j->cin_g == 1 && j->m_g >= 1 && j->m_g < 4 && j->out_sp > 0 && j->kk > 0 &&
	      g->in[0] == 1 && g->k[0] == 1 && g->out[0] == 1 && g->pad_b[0] == 0))
		return false;
	/* geometry keeps each term below 2^50 (linalg-geom.h): these sums cannot overflow */
	rows = g->pad_b[1] + g->in[1] + g->pad_e[1] + (g->k[1] - 1) * g->dil[1];
	cols = g->pad_b[2] + g->in[2] + g->pad_e[2] + (g->k[2] - 1) * g->dil[2] + g->stride[2];
	return rows <= DW_PLANE_MAX && cols <= DW_PLANE_MAX && g->out[2] <= DW_PLANE_MAX &&
	       g->out[1] <= DW_PLANE_MAX && rows <= DW_PLANE_MAX / cols;
}

static size_t rup64(size_t v)
{
	return (v + 63) & ~(size_t)63;
}

/* The padded plane (rows hp, columns wp) covers every tap of every output. */
static void dw_layout(const struct iconv_job *j, struct dwconv *d)
{
	const struct ert_conv_geom *g = &j->g;
	int64_t reach_h = (g->out[1] - 1) * g->stride[1] + (g->k[1] - 1) * g->dil[1] + 1;
	int64_t reach_w = (g->out[2] - 1) * g->stride[2] + (g->k[2] - 1) * g->dil[2] + 1;
	size_t off = 0;

	d->hp = g->pad_b[1] + g->in[1] + g->pad_e[1];
	d->wp = g->pad_b[2] + g->in[2] + g->pad_e[2];
	d->hp = d->hp > reach_h ? d->hp : reach_h;
	d->wp = d->wp > reach_w ? d->wp : reach_w;
	d->phw = (d->wp + g->stride[2] - 1) / g->stride[2];
	/*
	 * At vertical stride 1, output (oh, ow) at oh * phw + ow reads inputs at
	 * the same offset plus the tap's: the whole plane is one row of sums
	 * (phw - OW columns of each row wasted); else one output row at a time.
	 */
	d->span = g->stride[1] == 1 ? (g->out[1] - 1) * d->phw + g->out[2] : g->out[2];
	d->plane = off;
	off += rup64((size_t)(g->stride[2] * (d->hp * d->phw + DW_SLACK)) * sizeof(int16_t));
	d->w = off;
	off += rup64((size_t)j->kk * sizeof(int32_t));
	d->rows = off;
	off += rup64((size_t)j->kk * sizeof(int16_t *));
	d->acc = off;
	off += rup64((size_t)(d->span + DW_SLACK) * sizeof(int32_t));
	d->total = off;
}

size_t ert_qconv_dw_workspace(const struct iconv_job *j, uint32_t lanes)
{
	struct dwconv d;

	if (!dw_usable(j))
		return 0;
	dw_layout(j, &d);
	return d.total * (lanes < 1 ? 1 : lanes);
}

ert_status ert_qconv_dw_prepare(struct ert_cpu *cpu, struct ert_exec *x, const struct iconv_job *j)
{
	if (dw_row_for(cpu->isa) && dw_usable(j))
		x->kernel = cpu->isa >= ERT_ISA_AVX512 ? "q8-dwconv-avx512" : "q8-dwconv-avx2";
	return ERT_OK;
}

/* @n values of @x (stride @sx) minus @z, into @dst: the copy the compiler vectorises. */
static void widen_u8(int16_t *restrict dst, const uint8_t *restrict x, int64_t sx, int64_t n,
		     int32_t z)
{
	if (sx == 1)
		for (int64_t i = 0; i < n; i++)
			dst[i] = (int16_t)(x[i] - z);
	else
		for (int64_t i = 0; i < n; i++)
			dst[i] = (int16_t)(x[i * sx] - z);
}

static void widen_i8(int16_t *restrict dst, const int8_t *restrict x, int64_t sx, int64_t n,
		     int32_t z)
{
	if (sx == 1)
		for (int64_t i = 0; i < n; i++)
			dst[i] = (int16_t)(x[i] - z);
	else
		for (int64_t i = 0; i < n; i++)
			dst[i] = (int16_t)(x[i * sx] - z);
}

/*
 * The plane of input channel @ci of image @n minus x's zero point, padded
 * with zeros, column col of row r at phase col % sw, index col / sw.
 */
static void dw_plane(const struct dwconv *d, int64_t n, int64_t ci, int16_t *p)
{
	const struct iconv_job *j = d->j;
	const struct ert_conv_geom *g = &j->g;
	const int64_t sw = g->stride[2], IH = g->in[1], IW = g->in[2], pt = g->pad_b[1];
	const int64_t pl = g->pad_b[2];
	const int32_t xz = ert_qlinalg_zp(j->xzp, 0);
	const uint8_t *xu = (const uint8_t *)j->x->data + (n * j->c_in + ci) * j->in_sp;
	const bool u8 = j->x->dtype == ERT_DTYPE_UINT8;

	for (int64_t ph = 0; ph < sw; ph++) {
		int16_t *pp = p + ph * (d->hp * d->phw + DW_SLACK);
		/* first input column of this phase, its slot, and how many */
		int64_t ix0 = ((ph - pl) % sw + sw) % sw, c0 = (ix0 + pl) / sw;
		int64_t cnt = ix0 < IW ? (IW - 1 - ix0) / sw + 1 : 0;

		memset(pp, 0, (size_t)(pt * d->phw) * sizeof(*pp));
		for (int64_t iy = 0; iy < IH; iy++) {
			int16_t *row = pp + (iy + pt) * d->phw;
			const uint8_t *src = xu + iy * IW + ix0;

			memset(row, 0, (size_t)c0 * sizeof(*row));
			if (u8)
				widen_u8(row + c0, src, sw, cnt, xz);
			else
				widen_i8(row + c0, (const int8_t *)src, sw, cnt, xz);
			memset(row + c0 + cnt, 0, (size_t)(d->phw - c0 - cnt) * sizeof(*row));
		}
		memset(pp + (IH + pt) * d->phw, 0,
		       (size_t)((d->hp - IH - pt) * d->phw + DW_SLACK) * sizeof(*pp));
	}
}

static void dw_item(const void *arg, int64_t pl, uint32_t *slot)
{
	const struct dwconv *d = arg;
	const struct iconv_job *j = d->j;
	const struct ert_conv_geom *g = &j->g;
	const int64_t OH = g->out[1], OW = g->out[2], sh = g->stride[1], sw = g->stride[2];
	int64_t n = pl / j->m, m = pl % j->m;
	uint8_t *ws = (uint8_t *)slot;
	int16_t *plane = (int16_t *)(ws + d->plane);
	int32_t *w = (int32_t *)(ws + d->w), *acc = (int32_t *)(ws + d->acc);
	const int16_t **rows = (const int16_t **)(void *)(ws + d->rows);
	int32_t wz = ert_qlinalg_zp(j->wzp, m);
	struct ert_qgemm_epi e = d->base;
	uint8_t *y = (uint8_t *)j->y->data + (size_t)(pl * j->out_sp * d->osz);

	dw_plane(d, n, m / j->m_g, plane);
	for (int64_t t = 0; t < j->kk; t++) {
		int32_t wv = (j->w->dtype == ERT_DTYPE_UINT8 ? ((const uint8_t *)j->w->data)[m * j->kk + t]
							       : ((const int8_t *)j->w->data)[m * j->kk + t]) -
			     wz;

		w[t] = (int32_t)(uint16_t)(int16_t)wv; /* the pair (wv, 0) */
	}
	e.c0 = j->bias ? (uint32_t)((const int32_t *)j->bias->data)[m] : 0;
	if (j->chans) {
		e.mult1 = j->chans[m].m < 0 ? 0 : j->chans[m].m;
		e.shift1 = j->chans[m].s > 30 ? 30 : j->chans[m].s < -31 ? -31 : j->chans[m].s;
		e.f1 = j->chans[m].f;
	}
	for (int64_t oh = 0; oh < OH; oh++) {
		if (sh == 1 && oh > 0) {
			d->epi(acc + oh * d->phw, OW, &e, y + (size_t)(oh * OW * d->osz));
			continue;
		}
		for (int64_t t = 0; t < j->kk; t++) {
			int64_t kh = t / g->k[2], kw = t % g->k[2], c = kw * g->dil[2];

			rows[t] = plane + (c % sw) * (d->hp * d->phw + DW_SLACK) +
				  (oh * sh + kh * g->dil[1]) * d->phw + c / sw;
		}
		d->row(rows, w, (int)j->kk, acc, d->span);
		d->epi(acc, OW, &e, y + (size_t)(oh * OW * d->osz));
	}
	if (j->res)
		ert_qconv_residual(j, pl * j->out_sp, j->out_sp);
}

bool ert_qconv_dw_run(struct ert_cpu *cpu, struct ert_exec *x, const struct iconv_job *j,
		      size_t skip, ert_status *st, struct ert_err *err)
{
	const struct ert_qgemm_kernel *k = ert_qgemm_kernel_for(cpu->isa);
	struct dwconv d;

	if (!k || !dw_row_for(cpu->isa) || !dw_usable(j))
		return false;
	memset(&d, 0, sizeof(d));
	d.j = j;
	d.row = dw_row_for(cpu->isa);
	d.epi = k->epi;
	d.osz = (int64_t)ert_dtype_size(j->y->dtype);
	d.base.mode = !j->qlinear ? ERT_QGEMM_OUT_I32 : j->qo.fixed ? ERT_QGEMM_OUT_FIXED
								  : ERT_QGEMM_OUT_FLOAT;
	if (j->qlinear) {
		d.base.zp = j->qo.zp;
		d.base.lo = j->qo.lo;
		d.base.hi = j->qo.hi;
	}
	dw_layout(j, &d);
	*st = ert_qlinalg_run_lanes(cpu, x, skip, j->x->dims[0] * j->m,
				    (int64_t)(d.total / sizeof(uint32_t)), dw_item, &d, err);
	return true;
}
