/* SPDX-License-Identifier: MIT */
/*
 * Dense convolutions on small output planes as C^T = im2col^T W^T
 * (conv-smallplane.h): the pixels on the GEMM's M rows, the prepacked
 * weights on its N columns, then one transposing pass into NCHW.
 */
#include <string.h>

#include "cpu/conv/conv-smallplane.h"
#include "cpu/vec/vec.h"

static int64_t round_up(int64_t v, int64_t to)
{
	return (v + to - 1) / to * to;
}

/* The levels' fp32 kernels this runs on, and the name a profile shows for each. */
static const char *sp_name(const struct ert_sgemm_kernel *k)
{
	if (!k || k->bf16)
		return NULL;
	if (k->fn == ert_f32_gemm_ukernel_8x48__avx512)
		return "f32-conv-smallplane-8x48-avx512";
	if (k->fn == ert_f32_gemm_ukernel_6x16__avx2)
		return "f32-conv-smallplane-6x16-avx2";
	return NULL;
}

const char *ert_conv_sp_kernel(const struct ert_cpu *cpu, const struct ert_conv_geom *g,
			       int64_t c_in, int64_t m)
{
	const struct ert_sgemm_kernel *k = cpu->gemm;
	const char *name = cpu->gemm_low ? NULL : sp_name(k);
	int64_t n = ert_geom_out_size(g);

	if (!name || n < 1 || n > ERT_CONV_SP_MAX_PIXELS || m < 1 || c_in < 1)
		return NULL;
	/*
	 * Padded work: swapped, pixels rounded up to MR and channels to NR;
	 * as the Conv GEMM runs it, channels to MR and pixels to NR. At
	 * avx512 (8 x 48) a 7x7 plane pays 96 columns for 49 there against
	 * 56 rows here; at avx2 (6 x 16) 64 against 54.
	 */
	int64_t swapped = round_up(n, k->mr) * round_up(m, k->nr);
	int64_t direct = round_up(m, k->mr) * round_up(n, k->nr);

	return swapped < direct ? name : NULL;
}

/* Offsets of each panel's pixels at each window tap: [panel][tap][MR], -1 outside. */
static size_t idx_count(const struct ert_conv_geom *g, int mr)
{
	return (size_t)(round_up(ert_geom_out_size(g), mr) * ert_geom_k_size(g));
}

struct sp_layout {
	int64_t *idx;
	float *a, *ct;
	void *gws;
	size_t gsize;
};

static float *align64(void *p)
{
	return (float *)(((uintptr_t)p + 63) & ~(uintptr_t)63);
}

static struct sp_layout sp_layout_of(const struct ert_cpu *cpu, const struct ert_conv_geom *g,
				     int64_t c_in, int64_t m, void *ws)
{
	const struct ert_sgemm_kernel *k = cpu->gemm;
	int64_t n = ert_geom_out_size(g), kk = ert_geom_k_size(g);
	struct sp_layout l;
	char *p = ws;

	l.gws = p;
	l.gsize = ert_sgemm_workspace(ert_cpu_lanes(cpu), n, m, c_in * kk);
	p += l.gsize;
	l.idx = (int64_t *)(void *)align64(p);
	p = (char *)(l.idx + idx_count(g, k->mr));
	l.a = align64(p);
	p = (char *)(l.a + ert_sgemm_packed_a_floats(n, c_in * kk, k->mr));
	l.ct = align64(p);
	p = (char *)(l.ct + n * m);
	return l;
}

size_t ert_conv_sp_workspace(const struct ert_cpu *cpu, const struct ert_conv_geom *g,
			     int64_t c_in, int64_t m)
{
	const struct ert_sgemm_kernel *k = cpu->gemm;
	int64_t n = ert_geom_out_size(g), kk = ert_geom_k_size(g);

	if (!k)
		return 0;
	return ert_sgemm_workspace(ert_cpu_lanes(cpu), n, m, c_in * kk) + 3 * 64 +
	       idx_count(g, k->mr) * sizeof(int64_t) +
	       (ert_sgemm_packed_a_floats(n, c_in * kk, k->mr) + (size_t)(n * m)) * sizeof(float);
}

/* The input offset of every (panel, tap, row): the same for every channel and image. */
static void fill_idx(const struct ert_conv_geom *g, int mr, int64_t *idx)
{
	const int64_t n = ert_geom_out_size(g), kk = ert_geom_k_size(g);
	const int64_t OH = g->out[1], OW = g->out[2];

	for (int64_t p0 = 0; p0 < n; p0 += mr)
		for (int64_t t = 0; t < kk; t++) {
			int64_t kw = t % g->k[2], kh = t / g->k[2] % g->k[1], kd = t / g->k[2] / g->k[1];

			for (int r = 0; r < mr; r++) {
				int64_t o = p0 + r, ow = o % OW, oh = o / OW % OH, od = o / OW / OH;
				int64_t iz = od * g->stride[0] - g->pad_b[0] + kd * g->dil[0];
				int64_t iy = oh * g->stride[1] - g->pad_b[1] + kh * g->dil[1];
				int64_t ix = ow * g->stride[2] - g->pad_b[2] + kw * g->dil[2];

				*idx++ = o < n && iz >= 0 && iz < g->in[0] && iy >= 0 && iy < g->in[1] &&
						 ix >= 0 && ix < g->in[2]
					 ? (iz * g->in[1] + iy) * g->in[2] + ix
					 : -1;
			}
		}
}

struct sp_job {
	const struct ert_cpu *cpu;
	const struct ert_conv_sp_args *a;
	const float *x, *res;        /* this image's */
	float *y;
	const int64_t *idx;
	float *pa, *ct;
	int64_t n, k, kk, in_sp;
	int mr;
	bool pointwise;
};

/*
 * A panels [begin, end) of im2col^T: panel P holds pixels P*MR .. P*MR+MR-1
 * as K rows of MR floats (ert_sgemm_pack_a()'s layout), K = channel x tap.
 */
static void sp_pack_a(void *arg, int64_t begin, int64_t end)
{
	const struct sp_job *j = arg;
	const int mr = j->mr;

	if (j->pointwise) {
		int64_t m0 = begin * mr, mc = (end * mr < j->n ? end * mr : j->n) - m0;

		j->cpu->gemm->pack_a(j->x, 1, j->in_sp, m0, mc, 0, j->k, mr, j->pa + m0 * j->k);
		return;
	}
	for (int64_t pn = begin; pn < end; pn++) {
		float *dst = j->pa + pn * mr * j->k;
		const int64_t *pidx = j->idx + pn * j->kk * mr;

		for (int64_t ci = 0; ci < j->k / j->kk; ci++) {
			const float *plane = j->x + ci * j->in_sp;
			const int64_t *ix = pidx;

			for (int64_t t = 0; t < j->kk; t++, ix += mr, dst += mr)
				for (int r = 0; r < mr; r++)
					dst[r] = ix[r] >= 0 ? plane[ix[r]] : 0.0f;
		}
	}
}

/*
 * Output channels [begin, end): y[c][i] = C^T[i][c] (+ res[c][i], then the
 * activation, when a residual is fused; else the GEMM applied it).
 */
static void sp_transpose(void *arg, int64_t begin, int64_t end)
{
	const struct sp_job *j = arg;
	const int64_t n = j->n, m = j->a->m;

	for (int64_t c0 = begin; c0 < end; c0 += 16) {
		int64_t c1 = c0 + 16 < end ? c0 + 16 : end;

		for (int64_t i = 0; i < n; i++) {
			const float *src = j->ct + i * m;

			for (int64_t c = c0; c < c1; c++)
				j->y[c * n + i] = src[c];
		}
		if (!j->res)
			continue;
		for (int64_t c = c0; c < c1; c++) {
			float *yr = j->y + c * n;
			const float *rr = j->res + c * n;

			for (int64_t i = 0; i < n; i++)
				yr[i] += rr[i];
			ert_cpu_act_apply(j->cpu, &j->a->act, yr, n);
		}
	}
}

void ert_conv_sp_run(const struct ert_cpu *cpu, const struct ert_conv_sp_args *a, void *ws)
{
	const struct ert_conv_geom *g = a->g;
	const int64_t n = ert_geom_out_size(g), kk = ert_geom_k_size(g), in_sp = ert_geom_in_size(g);
	const int mr = cpu->gemm->mr;
	struct sp_layout l = sp_layout_of(cpu, g, a->c_in, a->m, ws);
	bool pointwise = kk == 1;
	struct sp_job job = {
		.cpu = cpu, .a = a, .idx = l.idx, .pa = l.a, .ct = l.ct,
		.n = n, .k = a->c_in * kk, .kk = kk, .in_sp = in_sp, .mr = mr,
	};

	for (int i = 0; i < 3; i++)
		if (g->stride[i] != 1 || g->pad_b[i] || g->pad_e[i])
			pointwise = false;
	job.pointwise = pointwise;
	if (!pointwise)
		fill_idx(g, mr, l.idx);
	for (int64_t img = 0; img < a->n_img; img++) {
		job.x = a->x + img * a->c_in * in_sp;
		job.y = a->y + img * a->m * n;
		job.res = a->res ? a->res + img * a->m * n : NULL;
		ert_parallel_for(cpu->pool, (n + mr - 1) / mr, 1, sp_pack_a, &job);

		struct ert_sgemm_desc d = {
			.kern = cpu->gemm, .cpu = cpu,
			.m = n, .n = a->m, .k = job.k, .batch = 1,
			.a_packed = l.a, .b_packed = a->w_packed,
			.c = l.ct, .ldc = a->m,
			.col_bias = a->bias, .alpha = 1.0f,
			/* with a residual, the activation follows it in the transposing pass */
			.act = a->res ? (struct ert_act_desc){ ERT_ACT_NONE, 0.0f, 0.0f } : a->act,
		};

		ert_sgemm_run(cpu->pool, cpu->num_threads, &d, l.gws, l.gsize);
		ert_parallel_for(cpu->pool, a->m, 64, sp_transpose, &job);
	}
}
