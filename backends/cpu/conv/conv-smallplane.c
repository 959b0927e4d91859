/* SPDX-License-Identifier: MIT */
/*
 * Dense convolutions on small output planes as C^T = im2col^T W^T
 * (conv-smallplane.h): the pixels on the GEMM's M rows, the prepacked
 * weights on its N columns, then a transposing pass into NCHW.
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
	int64_t n = ert_geom_out_size(g), most = ERT_CONV_SP_MAX_PIXELS;

	if (name && k->fn == ert_f32_gemm_ukernel_8x48__avx512 && ert_geom_k_size(g) > 1 &&
	    g->k[0] <= 3 && g->k[1] <= 3 && g->k[2] <= 3 && most < ERT_CONV_SP_WINDOW_PIXELS)
		most = ERT_CONV_SP_WINDOW_PIXELS;
	/* the gather's offsets into an input plane are 32-bit */
	if (!name || n < 1 || n > most || m < 1 || c_in < 1 || ert_geom_in_size(g) > INT32_MAX)
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
	int32_t *idx;
	float *a, *ct;
	int64_t a_floats;            /* one copy of A, a multiple of 16 */
};

/* Copies of A: one a lane, each lane packing its own (see ert_conv_sp_run()). */
static int64_t sp_a_copies(const struct ert_cpu *cpu)
{
	return ert_cpu_lanes(cpu);
}

static float *align64(void *p)
{
	return (float *)(((uintptr_t)p + 63) & ~(uintptr_t)63);
}

static struct sp_layout sp_layout_of(const struct ert_cpu *cpu, const struct ert_conv_geom *g,
				     int64_t c_in, void *ws)
{
	const struct ert_sgemm_kernel *k = cpu->gemm;
	int64_t n = ert_geom_out_size(g), kk = ert_geom_k_size(g);
	struct sp_layout l;

	l.idx = (int32_t *)(void *)align64(ws);
	l.a = align64(l.idx + idx_count(g, k->mr));
	l.a_floats = (int64_t)ert_sgemm_packed_a_floats(n, c_in * kk, k->mr) + 16;
	l.ct = align64(l.a + l.a_floats * sp_a_copies(cpu));
	return l;
}

size_t ert_conv_sp_workspace(const struct ert_cpu *cpu, const struct ert_conv_geom *g,
			     int64_t c_in, int64_t m)
{
	const struct ert_sgemm_kernel *k = cpu->gemm;
	int64_t n = ert_geom_out_size(g), kk = ert_geom_k_size(g);

	if (!k)
		return 0;
	return 3 * 64 + idx_count(g, k->mr) * sizeof(int32_t) +
	       ((ert_sgemm_packed_a_floats(n, c_in * kk, k->mr) + 16) * (size_t)sp_a_copies(cpu) +
		(size_t)(n * m)) * sizeof(float);
}

/* The input offset of every (panel, tap, row): the same for every channel and image. */
static void fill_idx(const struct ert_conv_geom *g, int mr, int32_t *idx)
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
					 ? (int32_t)((iz * g->in[1] + iy) * g->in[2] + ix)
					 : -1;
			}
		}
}

struct sp_job {
	const struct ert_cpu *cpu;
	const struct ert_conv_sp_args *a;
	const float *x, *res;        /* this image's */
	float *y;
	const int32_t *idx;
	float *pa, *ct;
	int64_t a_floats;            /* from one copy of A to the next */
	int64_t per_copy;            /* column items of a copy of A; 0: one A */
	bool jit;                    /* A packed by sp_gemm() K block by K block; else before */
	int64_t n, k, kk, in_sp;
	int mr;
	bool pointwise;
	int epi_act;                 /* the epilogue's clamp (ERT_EPI_*) */
	bool post_act;               /* a residual and / or activation after the transpose */
};

/*
 * A panels [begin, end) of im2col^T, K rows [k0, k0 + kc) of each (or a few
 * more: whole channels' taps): panel P holds pixels P*MR .. P*MR+MR-1 as K
 * rows of MR floats (ert_sgemm_pack_a()'s layout), K = channel x tap.
 */
static void sp_pack_panels(const struct sp_job *j, float *pa, int64_t begin, int64_t end,
			   int64_t k0, int64_t kc)
{
	const int mr = j->mr;
	const int64_t c_lo = k0 / j->kk, c_hi = (k0 + kc + j->kk - 1) / j->kk;

	for (int64_t pn = begin; pn < end; pn++) {
		float *panel = pa + pn * mr * j->k;
		const int32_t *pidx = j->idx + pn * j->kk * mr;

		if (j->pointwise) {
			int64_t m0 = pn * mr, mc = j->n - m0 < mr ? j->n - m0 : mr;

			j->cpu->gemm->pack_a(j->x, 1, j->in_sp, m0, mc, k0, kc, mr, panel + k0 * mr);
			continue;
		}
		if (mr == 8 && j->cpu->gemm->fn == ert_f32_gemm_ukernel_8x48__avx512) {
			ert_conv_sp_gather_8__avx512(j->x + c_lo * j->in_sp, j->in_sp, c_hi - c_lo,
						     j->kk, pidx, panel + c_lo * j->kk * mr);
			continue;
		}
		float *dst = panel + c_lo * j->kk * mr;

		for (int64_t ci = c_lo; ci < c_hi; ci++) {
			const float *plane = j->x + ci * j->in_sp;
			const int32_t *ix = pidx;

			for (int64_t t = 0; t < j->kk; t++, ix += mr, dst += mr)
				for (int r = 0; r < mr; r++)
					dst[r] = ix[r] >= 0 ? plane[ix[r]] : 0.0f;
		}
	}
}

static void sp_pack_a(void *arg, int64_t begin, int64_t end)
{
	const struct sp_job *j = arg;

	sp_pack_panels(j, j->pa, begin, end, 0, j->k);
}

/*
 * A of at least this many bytes is packed K block by K block (sp_gemm()),
 * smaller A all at once first. On Sapphire Rapids (2 MiB L2; smallplane-bench,
 * weights flushed, 1 thread, the two ways alternated run by run in one
 * process) the first was faster by 3-4 % (median) for 3x3 512 -> 512 at 7x7
 * and 3x3/2 512 -> 512 onto it (A 1.03 MB) and 8 % for 3x3/2 256 -> 256
 * onto 14x14 (1.8 MB), and by 0-10 % slower for A of 0.1-0.92 MB (the 1x1
 * layers at 7x7, resnet18's 3x3/2 layers): a K block cuts a channel's taps,
 * whose channel is then gathered twice, and packs A in more, smaller calls.
 */
#define SP_JIT_A_BYTES 1000000

/* Columns of C^T a work item spans: one AVX-512 vector, a third of a 48-wide panel. */
#define SP_COLS 16

/*
 * Output channels [c0, c0 + nc), complete in C^T: y[c][i] = C^T[i][c] (+ res[c][i], then the
 * activation, when a residual is fused or the epilogue has no clamp for it).
 */
static void sp_transpose(const struct sp_job *j, int64_t c0, int64_t nc)
{
	const int64_t n = j->n, m = j->a->m;

	/*
	 * At avx512 in 16 x 16 blocks: the scalar loop's strided stores took
	 * about a tenth of 1x1 512 -> 2048 at 7x7 (100 K floats; perf,
	 * Sapphire Rapids), which ran 3-6 % faster so.
	 */
	if (j->cpu->gemm->fn == ert_f32_gemm_ukernel_8x48__avx512)
		ert_conv_sp_transpose__avx512(j->ct + c0, m, n, nc, j->y + c0 * n, n);
	else
		for (int64_t i = 0; i < n; i++) {
			const float *src = j->ct + i * m;

			for (int64_t c = c0; c < c0 + nc; c++)
				j->y[c * n + i] = src[c];
		}
	if (!j->post_act)
		return;
	for (int64_t c = c0; c < c0 + nc; c++) {
		float *yr = j->y + c * n;

		if (j->res)
			for (int64_t i = 0; i < n; i++)
				yr[i] += j->res[c * n + i];
		ert_cpu_act_apply(j->cpu, &j->a->act, yr, n);
	}
}

/* The part of a range of columns that lies in one NR-wide weight panel. */
struct sp_piece {
	int64_t nc, pn;
};

static struct sp_piece sp_piece_at(int64_t c0, int64_t c_end, int nr)
{
	int64_t pn = c0 / nr, c1 = (pn + 1) * nr < c_end ? (pn + 1) * nr : c_end;

	return (struct sp_piece){ c1 - c0, pn };
}

/*
 * Columns [begin, end) x SP_COLS of C^T, all of K, then their transpose into y.
 * K blocks outer, then the pieces of the range (its part in each weight
 * panel), then every row panel of A over the piece's kc x NR slice, which
 * stays in L1 while they pass; the range's C^T stays in L2 between K blocks.
 * The weights come from memory every run (9.4 MiB for 3x3 512 -> 512) and
 * each slice is a fresh 24 KiB run 884 KiB from the last, which no hardware
 * prefetcher follows: so every call also prefetches its share of the slice
 * read next (the next piece's, or the range's first of the next K block),
 * at avx512 one line every other K step from inside the kernel's K loop.
 * Issued all at once before each call (the GEMM driver's way, about 55
 * lines), the prefetches filled the line-fill buffers and held the FMAs
 * back: on Sapphire Rapids, weights flushed before each run, 3x3 512 -> 512
 * at 7x7 took 2.1 ms so, 1.5 ms from inside the K loop (performance.md).
 * Panels outer and all of K inner (each panel's weights one sequential
 * run), or the weights repacked K-block-major, without software prefetch,
 * were slower (2.2-2.3 ms): the hardware prefetchers do not run far enough.
 *
 * With j->jit, the range has its A to itself (one thread, or j->per_copy)
 * and packs each K block's part of it (whole channels' taps) just before
 * that block: packed all at once first, a large A (1 MiB for 3x3 512 ->
 * 512) left L2 for L3 while the weights streamed through it, and came back
 * from there block by block. See SP_JIT_A_BYTES.
 *
 * With j->per_copy, the range is lane (begin / per_copy)'s whole share and
 * packs A into that lane's own copy: every range reads all of A, and with A
 * packed once by both threads half of it came from the other core's cache.
 * On Sapphire Rapids (2 threads, pool counters' fastest call) 3x3 512 -> 512
 * at 7x7 spent 684 us in this loop against 1080 us on one thread (1.58x)
 * with a shared A; two one-thread processes each ran at full speed. Packing A twice costs a lane 46 us there instead of 23 plus a job
 * (docs/performance-gemm.md, "Two threads (2026-11-27, ninth session)").
 */
static void sp_gemm(void *arg, int64_t begin, int64_t end)
{
	const struct sp_job *j = arg;
	const struct ert_sgemm_kernel *kern = j->cpu->gemm;
	const int MR = kern->mr, NR = kern->nr;
	const int64_t n = j->n, m = j->a->m, K = j->k, calls = (n + MR - 1) / MR;
	const int64_t c_beg = begin * SP_COLS, c_end = end * SP_COLS < m ? end * SP_COLS : m;
	const bool own = kern->fn == ert_f32_gemm_ukernel_8x48__avx512;
	float *pa = j->per_copy ? j->pa + begin / j->per_copy * j->a_floats : j->pa;

	if (j->per_copy && !j->jit)
		sp_pack_panels(j, pa, 0, calls, 0, K);

	for (int64_t k0 = 0; k0 < K; k0 += kern->kc) {
		const int64_t kc = K - k0 < kern->kc ? K - k0 : kern->kc;
		const bool last = k0 + kc >= K;

		if (j->jit)
			sp_pack_panels(j, pa, 0, calls, k0, kc);

		for (int64_t c0 = c_beg; c0 < c_end;) {
			struct sp_piece pc = sp_piece_at(c0, c_end, NR);
			const float *bp = j->a->w_packed + pc.pn * NR * K + k0 * NR + (c0 - pc.pn * NR);
			struct ert_sgemm_epi e = {
				.alpha = 1.0f, .load_c = k0 > 0,
				.cbias = last && j->a->bias ? j->a->bias + c0 : NULL,
				.act = last ? j->epi_act : ERT_EPI_NONE,
				.lo = j->a->act.p0, .hi = j->a->act.p1,
			};
			/* the slice read next: of the next piece, or the range's first of the next K block */
			int64_t nk0 = k0, nc0 = c0 + pc.nc;
			const float *nx = NULL;
			int64_t lines = 0;

			if (nc0 >= c_end) {
				nk0 = k0 + kc;
				nc0 = c_beg;
			}
			if (nk0 < K) {
				int64_t npn = nc0 / NR, nkc = K - nk0 < kern->kc ? K - nk0 : kern->kc;

				nx = j->a->w_packed + npn * NR * K + nk0 * NR;
				lines = nkc * NR * (int64_t)sizeof(float) / 64;
			}
			/*
			 * Shared among the full row panels only: a one-row panel
			 * (49 = 6 x 8 + 1) runs its K steps about six times as
			 * fast, and its share came in one burst. On Sapphire
			 * Rapids (smallplane-bench, weights flushed, 1 thread,
			 * alternated in one process) the 7x7 layers of resnet50's
			 * last stage ran 3-5 % faster so.
			 */
			const int64_t fulls = n % MR == 1 && calls > 1 ? calls - 1 : calls;
			const int64_t share = (lines + fulls - 1) / fulls;

			for (int64_t i = 0; i < n; i += MR) {
				int64_t l0 = i / MR * share < lines ? i / MR * share : lines;
				int64_t l1 = l0 + share < lines ? l0 + share : lines;
				const char *pf = nx ? (const char *)nx + l0 * 64 : NULL;
				const float *ap = pa + i * K + k0 * MR;
				float *cp = j->ct + i * m + c0;
				int64_t rows = n - i < MR ? n - i : MR;

				if (own) {
					ert_conv_sp_ukernel_8x48__avx512(kc, ap, bp, NR, cp, m, rows, pc.nc,
									 &e, pf, l1 > l0 ? l1 - l0 : 0);
					continue;
				}
				for (; pf && l0 < l1; l0++, pf += 64)
					__builtin_prefetch(pf, 0, 2);
				kern->fn(kc, ap, bp, NR, cp, m, rows, pc.nc, &e);
			}
			c0 += pc.nc;
		}
	}
	for (int64_t c0 = c_beg; c0 < c_end;) {
		struct sp_piece pc = sp_piece_at(c0, c_end, NR);

		sp_transpose(j, c0, pc.nc);
		c0 += pc.nc;
	}
}

void ert_conv_sp_run(const struct ert_cpu *cpu, const struct ert_conv_sp_args *a, void *ws)
{
	const struct ert_conv_geom *g = a->g;
	const int64_t n = ert_geom_out_size(g), kk = ert_geom_k_size(g), in_sp = ert_geom_in_size(g);
	const int mr = cpu->gemm->mr;
	struct sp_layout l = sp_layout_of(cpu, g, a->c_in, ws);
	bool pointwise = kk == 1;
	struct sp_job job = {
		.cpu = cpu, .a = a, .idx = l.idx, .pa = l.a, .ct = l.ct,
		.n = n, .k = a->c_in * kk, .kk = kk, .in_sp = in_sp, .mr = mr,
		.a_floats = l.a_floats,
	};
	const int64_t items = (a->m + SP_COLS - 1) / SP_COLS;
	int64_t lanes = sp_a_copies(cpu), threads = ert_threadpool_size(cpu->pool);

	if (lanes > threads)
		lanes = threads;
	if (lanes > items)
		lanes = items;
	/*
	 * On two threads or more, each lane packs A for itself where A is at
	 * least the input's size (not a strided 1x1, whose A is a quarter of
	 * what it reads): see sp_gemm().
	 */
	if (lanes > 1 && round_up(n, mr) * job.k >= a->c_in * in_sp)
		job.per_copy = (items + lanes - 1) / lanes;
	job.jit = (job.per_copy || threads <= 1) &&
		  round_up(n, mr) * job.k * (int64_t)sizeof(float) >= SP_JIT_A_BYTES;

	/* ReLU and Clip are the epilogue's clamp unless a residual comes first */
	if (!a->res && a->act.type == ERT_ACT_RELU)
		job.epi_act = ERT_EPI_RELU;
	else if (!a->res && a->act.type == ERT_ACT_CLIP && a->act.p0 <= a->act.p1)
		job.epi_act = ERT_EPI_CLIP;
	else
		job.post_act = a->res || a->act.type != ERT_ACT_NONE;
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
		if (job.per_copy) {
			ert_parallel_for(cpu->pool, items, job.per_copy, sp_gemm, &job);
			continue;
		}
		if (job.jit) {
			sp_gemm(&job, 0, items);
			continue;
		}
		ert_parallel_for(cpu->pool, (n + mr - 1) / mr, 1, sp_pack_a, &job);
		ert_parallel_for(cpu->pool, items, 1, sp_gemm, &job);
	}
}
