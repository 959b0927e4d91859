/* SPDX-License-Identifier: MIT */
/*
 * CPU pooling: MaxPool (float, uint8, int8; optional Indices), AveragePool,
 * LpPool and the global forms. One item of parallel work is one (n, c) plane.
 */
#include <math.h>
#include <string.h>

#include "cpu/cpu-impl.h"
#include "cpu/ops/qlinear-kernels.h"
#include "cpu/vec/vec.h"
#include "ops/linalg-geom.h"

enum pool_kind { POOL_MAX, POOL_AVG, POOL_LP };

struct pool_job {
	struct ert_conv_geom g;
	enum pool_kind kind;
	ert_dtype dtype;
	const void *x;
	void *y;
	int64_t *indices;          /* MaxPool's second output, or NULL */
	bool col_major;            /* storage_order 1 */
	bool include_pad;
	float p;                   /* LpPool */
	int64_t in_sp, out_sp;
	/* float32 Max/AveragePool without Indices: planes through vk->pool */
	const struct ert_vec_kernels *vk;
	struct ert_vec_win win;
	bool rows;                 /* byte MaxPool without Indices: max_rows_*() */
	bool whole;                /* float AveragePool of whole unpadded planes: vk->gap */
	const struct ert_q8_pool_kernels *qk;  /* their level's loops, or NULL */
};

/*
 * Taps of one axis that land inside the input: [lo, hi) in kernel units.
 * @padded: the divisor's share under count_include_pad, the whole window
 * (ONNX's reference counts taps past the end in ceil_mode too, unlike PyTorch).
 */
static void tap_range(const struct ert_conv_geom *g, int ax, int64_t o, int64_t *start,
		      int64_t *lo, int64_t *hi, int64_t *padded)
{
	/* geometry keeps every term below 2^50 (linalg-geom.h); the kernel may
	 * be far wider than the input, so the bounds are computed, not walked */
	int64_t s = o * g->stride[ax] - g->pad_b[ax], d = g->dil[ax];
	int64_t l, h;

	/* the same bounds without a division (one per output) at dilation 1 */
	if (d == 1) {
		l = s < 0 ? -s : 0;
		h = s < g->in[ax] ? g->in[ax] - s : 0;
	} else {
		l = s < 0 ? (-s + d - 1) / d : 0;
		h = s < g->in[ax] ? (g->in[ax] - 1 - s) / d + 1 : 0;
	}

	l = l < g->k[ax] ? l : g->k[ax];
	h = h < g->k[ax] ? h : g->k[ax];
	h = h > l ? h : l;
	*start = s;
	*lo = l;
	*hi = h;
	*padded = g->k[ax];
}

#define DEFINE_MAX_PLANE(name, T)                                                        \
	static void name(const struct pool_job *j, int64_t pl)                           \
	{                                                                                \
		const struct ert_conv_geom *g = &j->g;                                   \
		const T *x = (const T *)j->x + pl * j->in_sp;                            \
		T *y = (T *)j->y + pl * j->out_sp;                                       \
		int64_t o = 0;                                                           \
		for (int64_t od = 0; od < g->out[0]; od++) {                             \
			int64_t sd, ld, hd, pd;                                          \
			tap_range(g, 0, od, &sd, &ld, &hd, &pd);                         \
			for (int64_t oh = 0; oh < g->out[1]; oh++) {                     \
				int64_t sh, lh, hh, ph;                                  \
				tap_range(g, 1, oh, &sh, &lh, &hh, &ph);                 \
				for (int64_t ow = 0; ow < g->out[2]; ow++, o++) {        \
					int64_t sw, lw, hw, pw, best = -1;               \
					T v = 0;                                         \
					tap_range(g, 2, ow, &sw, &lw, &hw, &pw);         \
					for (int64_t a = ld; a < hd; a++)                \
						for (int64_t b = lh; b < hh; b++)        \
							for (int64_t c = lw; c < hw; c++) { \
								int64_t iz = sd + a * g->dil[0];  \
								int64_t iy = sh + b * g->dil[1];  \
								int64_t ix = sw + c * g->dil[2];  \
								int64_t i = (iz * g->in[1] + iy) * g->in[2] + ix; \
								if (best < 0 || x[i] > v || x[i] != x[i]) { \
									v = x[i];                 \
									best = j->col_major ? (ix * g->in[1] + iy) * g->in[0] + iz : i; \
								}                                 \
							}                                         \
					y[o] = v;                                        \
					if (j->indices)                                  \
						j->indices[pl * j->out_sp + o] =         \
							best < 0 ? 0 : pl * j->in_sp + best; \
				}                                                        \
			}                                                                \
		}                                                                        \
	}

DEFINE_MAX_PLANE(max_plane_f32, float)
DEFINE_MAX_PLANE(max_plane_u8, uint8_t)
DEFINE_MAX_PLANE(max_plane_i8, int8_t)

/*
 * Output columns [i0, i1) of a row whose windows lie wholly inside it, for
 * the level's max_rows() (strides 1 and 2; i1 <= i0: none).
 */
static void q8_interior(const struct ert_conv_geom *g, int64_t *i0, int64_t *i1)
{
	int64_t s = g->stride[2], p = g->pad_b[2];
	int64_t last = g->in[2] - 1 - (g->k[2] - 1) * g->dil[2] + p; /* ow * s <= last */

	*i0 = *i1 = 0;
	if ((s != 1 && s != 2) || last < 0)
		return;
	*i0 = (p + s - 1) / s;
	*i1 = last / s + 1;
	*i1 = *i1 < g->out[2] ? *i1 : g->out[2];
}

/*
 * Byte MaxPool without Indices (the int8 models' pools): the window's input
 * rows of an output row are first folded into one row by an elementwise
 * max (contiguous, vectorised by the compiler), then each output takes the
 * max of its taps along that row: a window wholly inside the row reads its
 * k taps directly, only the edge windows ask tap_range() (whose divisions
 * by the dilation, once per output, were most of the int8 resnet50's
 * MaxPool). The same bytes as max_plane_*(): the max of the taps inside
 * the input, 0 for a window with none.
 */
#define ROW_MAX 4096
#define DEFINE_MAX_ROWS(name, T)                                                         \
	static void name(const struct pool_job *j, int64_t pl)                           \
	{                                                                                \
		const struct ert_conv_geom *g = &j->g;                                   \
		const T *x = (const T *)j->x + pl * j->in_sp;                            \
		T *y = (T *)j->y + pl * j->out_sp;                                       \
		const int64_t W = g->in[2];                                              \
		T row[ROW_MAX];                                                          \
		for (int64_t od = 0; od < g->out[0]; od++) {                             \
			int64_t sd, ld, hd, pd;                                          \
			tap_range(g, 0, od, &sd, &ld, &hd, &pd);                         \
			for (int64_t oh = 0; oh < g->out[1]; oh++, y += g->out[2]) {     \
				int64_t sh, lh, hh, ph;                                  \
				bool any = false;                                        \
				tap_range(g, 1, oh, &sh, &lh, &hh, &ph);                 \
				for (int64_t a = ld; a < hd; a++)                        \
					for (int64_t b = lh; b < hh; b++) {              \
						const T *r = x + ((sd + a * g->dil[0]) * g->in[1] + \
								  sh + b * g->dil[1]) * W;   \
						if (!any)                                \
							memcpy(row, r, (size_t)W * sizeof(T)); \
						else                                     \
							for (int64_t i = 0; i < W; i++)  \
								row[i] = r[i] > row[i] ? r[i] : row[i]; \
						any = true;                              \
					}                                                \
				/* k 3, stride 2: the windows inside the row, [i0, i1), \
				 * in one loop the compiler vectorises */               \
				int64_t i0 = -1, i1 = -1;                                \
				if (any && g->k[2] == 3 && g->stride[2] == 2 && g->dil[2] == 1 && \
				    W - 3 + g->pad_b[2] >= 0) {                          \
					i0 = (g->pad_b[2] + 1) / 2;                      \
					i1 = (W - 3 + g->pad_b[2]) / 2 + 1;              \
					i1 = i1 < g->out[2] ? i1 : g->out[2];            \
				}                                                        \
				for (int64_t ow = 0; ow < g->out[2]; ow++) {             \
					int64_t sw = ow * g->stride[2] - g->pad_b[2], lw, hw, pw; \
					T v = 0;                                         \
					if (ow == i0 && i1 > i0) {                       \
						const T *t = row + sw;                   \
						for (int64_t i = 0; i < i1 - i0; i++) {  \
							T m0 = t[2 * i], m1 = t[2 * i + 1], m2 = t[2 * i + 2]; \
							m0 = m1 > m0 ? m1 : m0;          \
							y[i0 + i] = m2 > m0 ? m2 : m0;   \
						}                                        \
						ow = i1 - 1;                             \
						continue;                                \
					}                                                \
					if (any && sw >= 0 && sw + (g->k[2] - 1) * g->dil[2] < W) { \
						const T *t = row + sw;                   \
						v = t[0];                                \
						for (int64_t c = 1; c < g->k[2]; c++) {  \
							T e = t[c * g->dil[2]];          \
							v = e > v ? e : v;               \
						}                                        \
						y[ow] = v;                               \
						continue;                                \
					}                                                \
					tap_range(g, 2, ow, &sw, &lw, &hw, &pw);         \
					if (any && hw > lw) {                            \
						v = row[sw + lw * g->dil[2]];            \
						for (int64_t c = lw + 1; c < hw; c++) {  \
							T e = row[sw + c * g->dil[2]];   \
							v = e > v ? e : v;               \
						}                                        \
					}                                                \
					y[ow] = v;                                       \
				}                                                        \
			}                                                                \
		}                                                                        \
	}

DEFINE_MAX_ROWS(max_rows_u8, uint8_t)
DEFINE_MAX_ROWS(max_rows_i8, int8_t)

/*
 * Byte MaxPool without Indices above the scalar level (j->qk): the input
 * rows of an output row's windows go to the level's max_rows(), which takes
 * the max over rows and taps in registers for the windows inside the row
 * (no folded row is stored and loaded back); the edge windows take their
 * in-bounds taps here. The same bytes as max_rows_*(): the max of the taps
 * inside the input, 0 for a window with none.
 */
static void max_rows_vec(const struct pool_job *j, int64_t pl)
{
	const struct ert_conv_geom *g = &j->g;
	const uint8_t *x = (const uint8_t *)j->x + pl * j->in_sp;
	uint8_t *y = (uint8_t *)j->y + pl * j->out_sp;
	const int64_t W = g->in[2], OW = g->out[2], s = g->stride[2], d = g->dil[2];
	const bool s8 = j->dtype == ERT_DTYPE_INT8;
	const uint8_t *rows[ERT_VEC_WIN_MAX], *in[ERT_VEC_WIN_MAX];
	int64_t i0, i1, off;

	q8_interior(g, &i0, &i1);
	/* the first inside window's first tap: >= 0 when there is one */
	off = i1 > i0 ? i0 * s - g->pad_b[2] : 0;
	for (int64_t od = 0; od < g->out[0]; od++) {
		int64_t sd, ld, hd, pd;

		tap_range(g, 0, od, &sd, &ld, &hd, &pd);
		for (int64_t oh = 0; oh < g->out[1]; oh++, y += OW) {
			int64_t sh, lh, hh, ph;
			int nr = 0;

			tap_range(g, 1, oh, &sh, &lh, &hh, &ph);
			/* both arrays here: a pass over rows[] just stored would
			 * reload it in 16-byte pieces, which store forwarding fails */
			for (int64_t a = ld; a < hd; a++)
				for (int64_t b = lh; b < hh; b++, nr++) {
					rows[nr] = x + ((sd + a * g->dil[0]) * g->in[1] + sh +
							b * g->dil[1]) * W;
					in[nr] = rows[nr] + off;
				}
			if (nr == 0) {
				memset(y, 0, (size_t)OW);
				continue;
			}
			if (i1 > i0)
				j->qk->max_rows(in, nr, y + i0, i1 - i0, g->k[2], s, d, s8);
			/* the edges: [0, i0) and [i1, OW), or every output */
			for (int64_t ow = 0; ow < OW; ow = ow + 1 == i0 && i1 > i0 ? i1 : ow + 1) {
				int64_t sw, lw, hw, pw;
				uint8_t v;

				tap_range(g, 2, ow, &sw, &lw, &hw, &pw);
				v = hw > lw ? rows[0][sw + lw * d] : 0;
				for (int r = 0; r < nr; r++)
					for (int64_t c = lw; c < hw; c++) {
						uint8_t e = rows[r][sw + c * d];

						v = (s8 ? (int8_t)e > (int8_t)v : e > v) ? e : v;
					}
				y[ow] = v;
			}
		}
	}
}

static void sum_plane(const struct pool_job *j, int64_t pl)
{
	const struct ert_conv_geom *g = &j->g;
	const float *x = (const float *)j->x + pl * j->in_sp;
	float *y = (float *)j->y + pl * j->out_sp;
	int64_t o = 0;

	for (int64_t od = 0; od < g->out[0]; od++) {
		int64_t sd, ld, hd, pd;

		tap_range(g, 0, od, &sd, &ld, &hd, &pd);
		for (int64_t oh = 0; oh < g->out[1]; oh++) {
			int64_t sh, lh, hh, ph;

			tap_range(g, 1, oh, &sh, &lh, &hh, &ph);
			for (int64_t ow = 0; ow < g->out[2]; ow++, o++) {
				int64_t sw, lw, hw, pw;
				double acc = 0.0;

				tap_range(g, 2, ow, &sw, &lw, &hw, &pw);
				for (int64_t a = ld; a < hd; a++)
					for (int64_t b = lh; b < hh; b++) {
						const float *row = x + ((sd + a * g->dil[0]) * g->in[1] +
									sh + b * g->dil[1]) * g->in[2];

						for (int64_t c = lw; c < hw; c++) {
							float v = row[sw + c * g->dil[2]];

							if (j->kind == POOL_LP)
								acc += pow(fabs(v), j->p);
							else
								acc += v;
						}
					}
				if (j->kind == POOL_LP) {
					y[o] = (float)pow(acc, 1.0 / j->p);
				} else {
					/* a padded window's size may pass int64 (each side <= 2^48) */
					double cnt = j->include_pad
							     ? (double)pd * (double)ph * (double)pw
							     : (double)((hd - ld) * (hh - lh) * (hw - lw));

					y[o] = cnt > 0 ? (float)(acc / cnt) : 0.0f;
				}
			}
		}
	}
}

static void pool_planes(void *arg, int64_t begin, int64_t end)
{
	const struct pool_job *j = arg;

	if (j->whole) {
		j->vk->gap((const float *)j->x + begin * j->in_sp, (float *)j->y + begin,
			   end - begin, j->in_sp);
		return;
	}
	for (int64_t pl = begin; pl < end; pl++) {
		if (j->vk)
			j->vk->pool(&j->win, (const float *)j->x + pl * j->in_sp,
				    (float *)j->y + pl * j->out_sp);
		else if (j->kind != POOL_MAX)
			sum_plane(j, pl);
		else if (j->qk)
			max_rows_vec(j, pl);
		else if (j->dtype == ERT_DTYPE_UINT8 && j->rows)
			max_rows_u8(j, pl);
		else if (j->dtype == ERT_DTYPE_INT8 && j->rows)
			max_rows_i8(j, pl);
		else if (j->dtype == ERT_DTYPE_UINT8)
			max_plane_u8(j, pl);
		else if (j->dtype == ERT_DTYPE_INT8)
			max_plane_i8(j, pl);
		else
			max_plane_f32(j, pl);
	}
}

/*
 * A window that covers the whole unpadded plane (the 7x7 AveragePool of
 * Caffe-era classifiers): one output per plane, the same mean as
 * GlobalAveragePool, whose kernel reads the plane as one run instead of
 * row by row (2048 planes of 7x7 on Sapphire Rapids: 0.29 ms -> 0.02).
 */
static bool whole_plane(const struct ert_conv_geom *g)
{
	for (int32_t a = 0; a < 3; a++)   /* axes past the op's are 1 */
		if (g->k[a] != g->in[a] || g->dil[a] != 1 || g->pad_b[a] || g->pad_e[a] ||
		    g->out[a] != 1)
			return false;
	return true;
}

/* The job of pooling node @x: geometry, kind, operands, and the vector kernel if it takes it. */
static ert_status pool_job_of(const struct ert_cpu *cpu, struct ert_exec *x, struct pool_job *j,
			      struct ert_err *err)
{
	const struct ert_value *xv = x->in[0];
	uint32_t nk;
	const int64_t *ks = ert_attr_ints(x->node, "kernel_shape", &nk);
	ert_status st;

	memset(j, 0, sizeof(*j));
	if (!ks || (int32_t)nk != xv->rank - 2)
		return ert_node_fail(x->node, err, ERT_STATUS_INVALID_MODEL, "bad kernel_shape");
	st = ert_geom_conv(x->node, xv->rank - 2, xv->dims + 2, ks,
			   ert_attr_int(x->node, "ceil_mode", 0) != 0, &j->g, err);
	if (st != ERT_OK)
		return st;
	j->kind = x->node->op == ERT_OP_MaxPool ? POOL_MAX
		  : x->node->op == ERT_OP_LpPool ? POOL_LP : POOL_AVG;
	j->dtype = xv->dtype;
	j->x = xv->data;
	j->y = x->out[0]->data;
	j->indices = x->n_out > 1 && x->out[1] ? x->out[1]->data : NULL;
	j->col_major = ert_attr_int(x->node, "storage_order", 0) == 1;
	j->include_pad = ert_attr_int(x->node, "count_include_pad", 0) != 0;
	j->p = (float)ert_attr_int(x->node, "p", 2);
	j->in_sp = ert_geom_in_size(&j->g);
	j->out_sp = ert_geom_out_size(&j->g);
	if (j->dtype == ERT_DTYPE_FLOAT32 && j->kind != POOL_LP && !j->indices &&
	    ert_vec_win_init(&j->win, &j->g)) {
		j->vk = ert_vec_kernels_for(cpu->isa);
		j->win.max = j->kind == POOL_MAX;
		j->win.include_pad = j->include_pad;
		j->whole = j->vk && j->kind == POOL_AVG && whole_plane(&j->g) && j->in_sp < (1 << 26);
	}
	j->rows = j->kind == POOL_MAX && !j->indices && j->g.in[2] <= ROW_MAX &&
		  (j->dtype == ERT_DTYPE_UINT8 || j->dtype == ERT_DTYPE_INT8);
	/* the level's loops: strides 1 and 2 along the row, rows of a window in an array */
	if (j->rows && (j->g.stride[2] == 1 || j->g.stride[2] == 2) &&
	    j->g.k[0] <= ERT_VEC_WIN_MAX && j->g.k[1] <= ERT_VEC_WIN_MAX &&
	    j->g.k[0] * j->g.k[1] <= ERT_VEC_WIN_MAX)
		j->qk = ert_q8_pool_kernels_for(cpu->isa);
	return ERT_OK;
}

static ert_status pool_prepare(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	struct pool_job j;
	struct ert_err perr;

	/* a bad attribute is compute()'s to report */
	if (pool_job_of(cpu, x, &j, &perr) == ERT_OK)
		x->kernel = j.vk ? j.vk->name_pool : j.qk ? j.qk->name : NULL;
	return ERT_OK;
}

static ert_status pool_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *xv = x->in[0];
	struct pool_job j;
	ert_status st = pool_job_of(cpu, x, &j, err);

	if (st != ERT_OK)
		return st;
	/* no elements: its other dims may still be huge, do not walk them */
	if (x->out[0]->numel == 0)
		return ERT_OK;
	ert_parallel_for(cpu->pool, xv->dims[0] * xv->dims[1], j.whole ? 16 : 1, pool_planes, &j);
	return ERT_OK;
}

struct global_job {
	enum ert_op op;
	ert_dtype dtype;
	const void *x;
	void *y;
	int64_t sp;
	double p;
	const struct ert_vec_kernels *vk;   /* float32 GlobalAveragePool through vk->gap */
};

static void global_planes(void *arg, int64_t begin, int64_t end)
{
	const struct global_job *j = arg;

	if (j->vk) {
		j->vk->gap((const float *)j->x + begin * j->sp, (float *)j->y + begin, end - begin,
			   j->sp);
		return;
	}
	for (int64_t pl = begin; pl < end; pl++) {
		if (j->dtype != ERT_DTYPE_FLOAT32) {
			/* GlobalMaxPool on 8-bit data */
			const uint8_t *u = (const uint8_t *)j->x + pl * j->sp;
			const int8_t *s = (const int8_t *)j->x + pl * j->sp;
			int v = j->dtype == ERT_DTYPE_UINT8 ? 0 : -128;

			for (int64_t i = 0; i < j->sp; i++) {
				int e = j->dtype == ERT_DTYPE_UINT8 ? u[i] : s[i];

				v = e > v ? e : v;
			}
			if (j->dtype == ERT_DTYPE_UINT8)
				((uint8_t *)j->y)[pl] = (uint8_t)v;
			else
				((int8_t *)j->y)[pl] = (int8_t)v;
			continue;
		}
		const float *x = (const float *)j->x + pl * j->sp;
		float *y = (float *)j->y + pl;

		if (j->op == ERT_OP_GlobalMaxPool) {
			float v = j->sp ? x[0] : 0.0f;

			for (int64_t i = 1; i < j->sp; i++)
				if (x[i] > v || x[i] != x[i])
					v = x[i];
			*y = v;
		} else if (j->op == ERT_OP_GlobalAveragePool) {
			double acc = 0.0;

			for (int64_t i = 0; i < j->sp; i++)
				acc += x[i];
			*y = j->sp ? (float)(acc / (double)j->sp) : 0.0f;
		} else {
			double acc = 0.0;

			for (int64_t i = 0; i < j->sp; i++)
				acc += pow(fabs(x[i]), j->p);
			*y = (float)pow(acc, 1.0 / j->p);
		}
	}
}

/* float32 GlobalAveragePool over planes of 1 .. 2^26 - 1 floats: the level's kernel. */
static const struct ert_vec_kernels *global_vec(const struct ert_cpu *cpu,
						const struct ert_exec *x, int64_t sp)
{
	if (x->node->op != ERT_OP_GlobalAveragePool || x->in[0]->dtype != ERT_DTYPE_FLOAT32 ||
	    sp < 1 || sp >= (1 << 26))
		return NULL;
	return ert_vec_kernels_for(cpu->isa);
}

static int64_t global_sp(const struct ert_value *xv)
{
	int64_t sp = 1;

	for (int32_t i = 2; i < xv->rank; i++)
		sp *= xv->dims[i];
	return sp;
}

static ert_status global_prepare(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_vec_kernels *vk = global_vec(cpu, x, global_sp(x->in[0]));

	x->kernel = vk ? vk->name_pool : NULL;
	return ERT_OK;
}

static ert_status global_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *xv = x->in[0];
	struct global_job j = {
		.op = x->node->op, .dtype = xv->dtype, .x = xv->data, .y = x->out[0]->data,
		.sp = global_sp(xv), .p = (double)ert_attr_int(x->node, "p", 2),
	};

	j.vk = global_vec(cpu, x, j.sp);
	ert_parallel_for(cpu->pool, xv->dims[0] * xv->dims[1], 16, global_planes, &j);
	return ERT_OK;
}

const struct ert_cpu_op ert_cpu_ops_pool[] = {
	{ .op = ERT_OP_MaxPool, .prepare = pool_prepare, .compute = pool_compute },
	{ .op = ERT_OP_AveragePool, .prepare = pool_prepare, .compute = pool_compute },
	{ .op = ERT_OP_LpPool, .compute = pool_compute },
	{ .op = ERT_OP_GlobalAveragePool, .prepare = global_prepare, .compute = global_compute },
	{ .op = ERT_OP_GlobalMaxPool, .compute = global_compute },
	{ .op = ERT_OP_GlobalLpPool, .compute = global_compute },
	{ .compute = NULL },
};
