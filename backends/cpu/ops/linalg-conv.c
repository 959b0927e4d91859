/* SPDX-License-Identifier: MIT */
/*
 * CPU Conv: 1x1 stride-1 convolutions are a GEMM on the image itself, other
 * dense/grouped ones a GEMM whose B panels are packed straight from the image
 * (implicit im2col: no K x N temporary), and depthwise ones a direct loop.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu/conv/conv-im2col.h"
#include "cpu/conv/conv-smallplane.h"
#include "cpu/conv/conv-stem.h"
#include "cpu/conv/dwconv.h"
#include "cpu/conv/winograd.h"
#include "cpu/gemm/sgemm.h"
#include "cpu/ops/linalg-kernels.h"
#include "ops/linalg-geom.h"

struct conv_plan {
	struct ert_conv_geom g;
	int64_t n_img, c_in, m, group, cin_g, m_g;
	int64_t kk, k, n, in_sp;    /* window size, GEMM K and N, input plane size */
	bool depthwise, pointwise;
};

static void plan_sizes(struct conv_plan *p, int64_t n_img, int64_t c_in, int64_t m,
		       int64_t group);

static ert_status conv_plan_of(const struct ert_exec *x, struct conv_plan *p,
			       struct ert_err *err)
{
	const struct ert_value *xv = x->in[0], *w = x->in[1];
	ert_status st;

	memset(p, 0, sizeof(*p));
	st = ert_geom_conv(x->node, xv->rank - 2, xv->dims + 2, w->dims + 2, false, &p->g, err);
	if (st != ERT_OK)
		return st;
	plan_sizes(p, xv->dims[0], xv->dims[1], w->dims[0], ert_attr_int(x->node, "group", 1));
	return ERT_OK;
}

/* The rest of @p from its geometry, images, channels in and out, and group. */
static void plan_sizes(struct conv_plan *p, int64_t n_img, int64_t c_in, int64_t m, int64_t group)
{
	p->n_img = n_img;
	p->c_in = c_in;
	p->m = m;
	p->group = group < 1 ? 1 : group;
	p->cin_g = p->c_in / p->group;
	p->m_g = p->m / p->group;
	p->kk = ert_geom_k_size(&p->g);
	p->k = p->cin_g * p->kk;
	p->n = ert_geom_out_size(&p->g);
	p->in_sp = ert_geom_in_size(&p->g);
	p->depthwise = p->cin_g == 1 && p->group > 1;
	p->pointwise = p->kk == 1;
	for (int i = 0; i < 3; i++)
		if (p->g.stride[i] != 1 || p->g.pad_b[i] || p->g.pad_e[i])
			p->pointwise = false;
}

/*
 * Winograd (cpu/conv/winograd.h) for a 2-D 3x3 stride-1 dense convolution
 * wide enough to gain: at least 16 channels in and out and 16 output tiles
 * of F(4x4, 3x3). Its packed filters take 4x (36/9) the memory of the
 * weights, so layers with more than 256 x 256 channels keep the direct
 * convolution, as does memory LOW (nothing prepacked), the scalar level
 * (the reference), and precision LOW with a bf16 kernel that is faster
 * than it (over_winograd: AMX). The shape test: 0 (none), or the variant's
 * tile (4: F(4x4), 2: F(2x2)); the rest is decided in prepare().
 *
 * F(2x2, 3x3), with its GEMM's roles swapped, where F(4x4)'s tiles do not
 * fill one of the GEMM's NR-wide panels: at avx512 (NR 48) the 14x14
 * planes (16 tiles of 4x4 over 16x16, 31 % of them padding). Measured on
 * the Sapphire Rapids VM (1 thread, 3x3 256 -> 256 at 14x14, best of 15,
 * loaded host; 2026-11-26, eighth session): 1.20-1.44 ms with F(4x4)
 * against 1.03-1.17 ms with the transformed filters flushed from the
 * caches before each run (as in the model, where they stream from memory:
 * 9.4 MB for F(4x4), 4.2 MB for F(2x2)), 0.79-0.97 against 0.79-0.85 ms
 * with them in cache; in resnet50 (edgert profile) 1.28-1.40 against
 * 1.03-1.12 ms a layer. At avx2 (NR 16) F(4x4)'s 16 tiles fill a panel
 * and F(2x2) was slower (1.17-1.19 against 0.96-1.05 ms in cache, about
 * the same flushed).
 */
static int wino_shape(const struct ert_cpu *cpu, const struct conv_plan *p)
{
	const struct ert_conv_geom *g = &p->g;
	int64_t tiles = ((g->out[1] + 3) / 4) * ((g->out[2] + 3) / 4);

	if (!(g->nsp == 2 && p->group == 1 && g->k[1] == 3 && g->k[2] == 3 &&
	      g->stride[1] == 1 && g->stride[2] == 1 && g->dil[1] == 1 && g->dil[2] == 1 &&
	      p->c_in >= 16 && p->m >= 16 && p->c_in * p->m <= 256 * 256 && tiles >= 16))
		return 0;
	return cpu->gemm && tiles < cpu->gemm->nr ? 2 : 4;
}

/* Transform positions of F(@tile x @tile, 3x3). */
static int wino_pos(int tile)
{
	return tile == 2 ? ERT_WINO2_POS : ERT_WINO_POS;
}

/*
 * Tiles transformed and multiplied at a time: the transformed input of a
 * block (36 x cin x tiles floats, for the wider of cin and cout) about one
 * core's L2 (2 MiB where unknown; between 256 KiB and 2 MiB), so that the
 * 36 GEMMs read it from L2 rather than L3, in whole panels of 48 (the
 * largest NR, a multiple of the output transform's 16 lanes). Measured at
 * avx2 on Zen 3 (512 KiB L2): 3x3 64->64 at 56x56 went from 192-tile
 * blocks to 48, 1.3-1.5x faster; Sapphire Rapids' 2 MiB L2 keeps its
 * former 2 MiB blocks. F(4x4) takes half that: on Sapphire Rapids
 * (gemm-bench, 1 thread, filters flushed, alternated) 3x3 64 -> 64 at
 * 56x56 went from blocks of 192 tiles (and one of 4) to 96, 325-341 ->
 * 377-387 GFLOP/s (2 threads the same within the noise); 128 -> 128 at
 * 28x28 (49 tiles: blocks of 48 and 1 instead of one) 352 -> 349-355.
 * F(2x2) keeps the whole: its filters are the GEMM's B, read again by
 * every block, and 256 -> 256 at 14x14 in blocks of 48 and 1 fell from
 * 264-280 to 221-222.
 */
static int64_t wino_block(const struct conv_plan *p, int pos)
{
	long l2 = ert_cpu_features()->l2_bytes;
	int64_t bytes = l2 <= 0 ? 2 << 20 : l2 < (256 << 10) ? 256 << 10 : l2 > (2 << 20) ? 2 << 20 : l2;
	int64_t wide = p->c_in > p->m ? p->c_in : p->m;
	int64_t blk = (pos == ERT_WINO_POS ? bytes / 2 : bytes) / (pos * 4 * wide) / 48 * 48;

	return blk < 48 ? 48 : blk > 480 ? 480 : blk;
}

/* The GEMM's workspace for a block of @blk tiles, its roles swapped or not. */
static size_t wino_gemm_ws(const struct ert_cpu *cpu, const struct conv_plan *p, int64_t blk,
			   bool swap)
{
	return swap ? ert_sgemm_workspace(ert_cpu_lanes(cpu), blk, p->m, p->c_in)
		    : ert_sgemm_workspace(ert_cpu_lanes(cpu), p->m, blk, p->c_in);
}

static size_t wino_workspace(const struct ert_cpu *cpu, const struct conv_plan *p, int tile)
{
	int pos = wino_pos(tile);
	int64_t blk = wino_block(p, pos);
	const struct ert_wino_kernels *wk = ert_wino_kernels_for(cpu->isa, tile);

	/*
	 * V and M, each position padded by up to a line (ert_wino_pos_stride());
	 * M's rows (F(2x2): a tile's output channels) a multiple of 16 floats
	 */
	return (size_t)(pos * ((p->c_in + (p->m + 15) / 16 * 16) * blk + 32)) * sizeof(float) + 64 +
	       wino_gemm_ws(cpu, p, blk, wk && wk->tiles_as_rows) + 3 * ERT_WINO_POS * sizeof(int64_t);
}

/*
 * Workspace for B packed once for every row tile (ert_sgemm_desc.b_shared):
 * one image and group, B not over ERT_SGEMM_SHARED_B_MAX.
 */
static size_t shared_b_bytes(const struct conv_plan *p)
{
	size_t f = p->n_img * p->group == 1 ? ert_sgemm_shared_b_floats(p->k, p->n) : 0;

	return f ? f * sizeof(float) + 64 : 0;
}

/*
 * Small output planes with the GEMM's roles swapped (cpu/conv/conv-smallplane.h):
 * group 1 only, weights prepacked (not memory LOW; prepare() also wants them
 * constant); the shape and level rule is ert_conv_sp_kernel()'s.
 */
static const char *smallplane_shape(const struct ert_cpu *cpu, const struct conv_plan *p)
{
	return p->group == 1 && cpu->memory != ERT_LEVEL_LOW
		       ? ert_conv_sp_kernel(cpu, &p->g, p->c_in, p->m)
		       : NULL;
}

/*
 * Column phases: with a horizontal stride s > 1 the implicit im2col reads
 * every s-th pixel of an input row, one float at a time, and each pixel
 * once per tap of the window's row (7 times for a 7x7/2 stem). Splitting
 * every input row once per run into its s phases (pixels 0, s, 2s, ...;
 * then 1, s + 1, ...; each phase ceil(W / s) long) makes every tap's run a
 * memcpy from one phase. Measured at avx2 on Zen 3 (perf, gemm-bench's
 * 7x7/2 3 -> 64 at 224x224): the packing was a third of the layer's time.
 * Taken where a window row has more than one tap (a 1x1/2 reads each
 * pixel it uses once, a quarter of them) and the copy is at most 16 MiB;
 * at avx512 and up only where it has more than three: on Sapphire Rapids
 * (gemm-bench, 1 thread, alternated sets of best of 20) the 3x3/2 layers
 * left on the im2col GEMM, onto 28x28, ran faster reading the image in
 * place, 64 -> 128 at 56x56 134-144 -> 143-155 GFLOP/s and 128 -> 128
 * 127-143 -> 134-146 (the split image is one more pass over the input,
 * and the tiles' im2col then reads the copy, 1.6 MB at 128 x 56 x 56, out
 * of L2 or L3 instead of the input); at avx2 on the same CPU it changed
 * nothing beyond the noise (-6 to +5 %).
 */
static int64_t phase_width(const struct ert_cpu *cpu, const struct conv_plan *p)
{
	const struct ert_conv_geom *g = &p->g;
	int64_t s = g->stride[2];

	if (p->pointwise || s < 2 || g->k[2] < 2 || s > g->in[2] ||
	    (cpu->isa >= ERT_ISA_AVX512 && g->k[2] <= 3))
		return 0;
	return s * ((g->in[2] + s - 1) / s);
}

static size_t phase_bytes(const struct ert_cpu *cpu, const struct conv_plan *p)
{
	int64_t pw = phase_width(cpu, p);
	int64_t f = pw ? p->n_img * p->c_in * p->g.in[0] * p->g.in[1] * pw : 0;

	return f && f <= (4 << 20) ? (size_t)f * sizeof(float) + 64 : 0;
}

/* Few input channels (a first convolution): the direct kernel of cpu/conv/conv-stem.h. */
static const char *stem_shape(const struct ert_cpu *cpu, const struct conv_plan *p)
{
	return p->group == 1 ? ert_conv_stem_kernel(cpu, &p->g, p->c_in, p->m) : NULL;
}

/*
 * Expanding pointwise convolutions (more output channels than input ones) on
 * small planes on several threads: each thread takes an even band of the
 * output channels (whole panels of the kernel's MR rows) and runs the
 * one-thread GEMM on it with a workspace of its own, packing all of B (the
 * small input image) itself. The depthwise conv that follows an expansion
 * in mobilenet_v2 splits by channels the same way (cpu/conv/dwconv.c: the
 * pool's home parts), so each thread reads the planes it wrote. The GEMM
 * driver split these by columns where M < N (the 28x28 blocks' 32 -> 192:
 * the depthwise conv then read half of its input from the other core),
 * and where it split the rows (14x14) it posted a job to pack B first and
 * cut 576 rows into 9 tiles for 2 threads. Two threads on the Sapphire
 * Rapids VM, per-op minima: mobilenet_v2's 10 expansions 541 -> 476 us, its
 * 28x28 depthwise convs 92 -> 71 us (docs/performance-mobilenet.md, "mobilenet_v2
 * on two threads"). Each thread reads all of B and its share of the
 * weights, so only where the weights are small: resnet50's 1x1 layers (256
 * KiB of weights and up) keep the driver's split. Same K blocks and kernel
 * calls per output float: the same bits.
 */
#define BAND_SPLIT_A_MAX (224 << 10)
#define BAND_SPLIT_N_MAX 784

static uint32_t band_split_parts(const struct ert_cpu *cpu, const struct conv_plan *p)
{
	uint32_t t = ert_cpu_lanes(cpu);
	const struct ert_sgemm_kernel *k = ert_cpu_linalg_gemm(cpu);

	if (t < 2 || !p->pointwise || p->n_img * p->group != 1 || cpu->gemm_low || !k ||
	    p->m < 2 * p->k || p->n > BAND_SPLIT_N_MAX || p->m < (int64_t)t * k->mr ||
	    p->m * p->k * (int64_t)sizeof(float) > BAND_SPLIT_A_MAX)
		return 0;
	return t;
}

uint32_t ert_cpu_conv_band_parts(const struct ert_cpu *cpu, const struct ert_conv_geom *g,
				 int64_t n_img, int64_t c_in, int64_t m, int64_t group)
{
	struct conv_plan p = { .g = *g };

	plan_sizes(&p, n_img, c_in, m, group);
	/* ert_cpu_conv_prepare() gives these their own kernels first */
	if (p.depthwise || stem_shape(cpu, &p) || wino_shape(cpu, &p) || smallplane_shape(cpu, &p))
		return 0;
	return band_split_parts(cpu, &p);
}

/* The first output channel of part @i of @parts: whole panels of @mr rows. */
static int64_t band_split_at(const struct conv_plan *p, uint32_t i, uint32_t parts, int mr)
{
	int64_t at = (p->m + mr - 1) / mr * i / parts * mr;

	return at < p->m ? at : p->m;
}

/* One part's workspace: the one-thread GEMM's for the largest band and B packed once. */
static size_t band_split_part_bytes(const struct ert_cpu *cpu, const struct conv_plan *p,
				    uint32_t parts)
{
	int mr = ert_cpu_linalg_gemm(cpu)->mr;
	int64_t m = 0;

	for (uint32_t i = 0; i < parts; i++) {
		int64_t rows = band_split_at(p, i + 1, parts, mr) - band_split_at(p, i, parts, mr);

		m = rows > m ? rows : m;
	}
	return (ert_sgemm_workspace(1, m, p->n, p->k) +
		ert_sgemm_shared_b_floats(p->k, p->n) * sizeof(float) + 127) / 64 * 64;
}

size_t ert_cpu_conv_workspace(const struct ert_cpu *cpu, const struct ert_exec *x)
{
	struct conv_plan p;
	struct ert_err err;
	uint32_t parts;
	size_t ws, band;

	if (conv_plan_of(x, &p, &err) != ERT_OK || p.depthwise)
		return 0;
	ws = ert_sgemm_workspace(ert_cpu_lanes(cpu), p.m_g, p.n, p.k) +
	     (size_t)(p.n_img * p.group) * 4 * sizeof(int64_t) + shared_b_bytes(&p) +
	     phase_bytes(cpu, &p);
	/* the band split's parts, each its own GEMM workspace and packed B */
	parts = band_split_parts(cpu, &p);
	band = parts ? band_split_part_bytes(cpu, &p, parts) * parts : 0;
	ws = band > ws ? band : ws;
	/* prepare() decides between them: room for any */
	if (wino_shape(cpu, &p) && wino_workspace(cpu, &p, wino_shape(cpu, &p)) > ws)
		ws = wino_workspace(cpu, &p, wino_shape(cpu, &p));
	if (smallplane_shape(cpu, &p) && ert_conv_sp_workspace(cpu, &p.g, p.c_in, p.m) > ws)
		ws = ert_conv_sp_workspace(cpu, &p.g, p.c_in, p.m);
	if (stem_shape(cpu, &p) && ert_conv_stem_workspace(&p.g, p.c_in, p.m) > ws)
		ws = ert_conv_stem_workspace(&p.g, p.c_in, p.m);
	return ws;
}

/*
 * May the GEMM kernel read a pointwise convolution's B (the image: K input
 * planes of N pixels) where it lies instead of packing it? Packing costs a
 * copy of B per row block of A; reading in place makes the kernel take the
 * cache misses of K strided rows itself. Measured on Zen 4 (AVX-512), in
 * place wins when there are few row blocks to share a packed B (M <= 64) or
 * when the image stays in L2 (K x N floats <= 512 KiB), and loses on a
 * large image read by many row blocks (64 -> 256 channels at 56x56: 65
 * against 90 GFLOP/s). A row stride that puts every row in a handful of the
 * 64 L1 sets (a multiple of 2 or 4 KiB: 32x32 or 64x64 planes) always packs.
 */
static bool direct_b_ok(const struct conv_plan *p)
{
	if (p->m_g > 64 && p->k * p->n * (int64_t)sizeof(float) > (512 << 10))
		return false;
	return ert_sgemm_b_rows_spread(p->in_sp);
}

struct im2col_ctx {
	const float *x;              /* the image, or its column phases */
	const struct conv_plan *p;
	int64_t pw;                  /* a phase-split row's width (phase_width()), or 0 */
	bool gather;                 /* panels by gathers (im2col_gather_ok()) */
};

/*
 * The avx512 im2col gather (cpu/conv/conv-im2col.h) for a 2-D window of 1
 * to 9 taps with a horizontal stride over 1, read in place (no column
 * phases). On the 2-core Sapphire Rapids VM (perf, gemm-bench, 1 thread)
 * the scalar packing of 3x3/2 64 -> 128 at 56x56 took 31 % of the layer's
 * time, every other float of a run copied one at a time between the run's
 * bounds; with the gathers (each panel's offsets worked out on vectors:
 * with a division per column and tap they ate half the gain)
 * 3x3/2 128 -> 128 and 64 -> 128 at 56x56 went from 149-155 to 172-179
 * GFLOP/s (weights flushed before each run, 4 alternated rounds, best of
 * 15), at 2 threads 136-141 -> 155-165 on a loaded host. Strided 1x1
 * windows (one tap: the projection shortcuts) gain too: 1x1/2 64 -> 128
 * at 56x56 136-149 -> 159-170, 128 -> 256 at 28x28 141-149 -> 160-168,
 * 256 -> 512 at 56x56 157-170 -> 166-198, 512 -> 1024 at 28x28 147-161 ->
 * 161-166.
 */
static bool im2col_gather_ok(const struct ert_cpu *cpu, const struct conv_plan *p)
{
	const struct ert_conv_geom *g = &p->g;

	/* the gather works out window coordinates in 32 bits: keep them there */
	const int64_t lim = (int64_t)1 << 30;

	return cpu->isa >= ERT_ISA_AVX512 && !p->pointwise && g->stride[2] > 1 &&
	       p->kk <= ERT_CONV_IM2COL_TAPS && g->k[0] == 1 && g->in[0] == 1 &&
	       p->in_sp <= INT32_MAX && g->pad_b[1] < lim && g->pad_b[2] < lim &&
	       g->out[1] * g->stride[1] < lim && g->out[2] * g->stride[2] < lim &&
	       g->k[1] * g->dil[1] < lim && g->k[2] * g->dil[2] < lim && !phase_bytes(cpu, p);
}

/* A run of a B panel's columns that lie on one output row. */
struct im2col_seg {
	int64_t od, oh, ow, len, off;
};

/*
 * Fill a slice of a B panel: the @len output pixels of @sg, for window tap
 * (kd, kh, kw) of one input plane. Taps outside the image are zero.
 */
static inline __attribute__((always_inline)) void
seg_fill(float *restrict out, const float *restrict plane, const struct ert_conv_geom *g,
	 const struct im2col_seg *sg, int64_t kd, int64_t kh, int64_t kw, int64_t pw, int64_t sw)
{
	const int64_t IH = g->in[1], IW = g->in[2], len = sg->len;
	int64_t iz = sg->od * g->stride[0] - g->pad_b[0] + kd * g->dil[0];
	int64_t iy = sg->oh * g->stride[1] - g->pad_b[1] + kh * g->dil[1];
	int64_t ix0 = sg->ow * sw - g->pad_b[2] + kw * g->dil[2], lo, hi;

	if (iz < 0 || iz >= g->in[0] || iy < 0 || iy >= IH) {
		memset(out, 0, (size_t)len * sizeof(float));
		return;
	}
	/* columns lo..hi read inside the row */
	lo = ix0 >= 0 ? 0 : (-ix0 + sw - 1) / sw;
	hi = IW - 1 - ix0 < 0 ? -1 : (IW - 1 - ix0) / sw;
	if (hi > len - 1)
		hi = len - 1;
	if (lo > hi) {
		memset(out, 0, (size_t)len * sizeof(float));
		return;
	}
	if (lo > 0)
		memset(out, 0, (size_t)lo * sizeof(float));
	if (pw) {
		/* pixel ix0 + sw * j is pixel j + floor(ix0 / sw) of phase ix0 mod sw */
		int64_t ph = ((ix0 % sw) + sw) % sw, q = (ix0 - ph) / sw;
		int64_t at = (iz * IH + iy) * pw + ph * (pw / sw) + q + lo;

		memcpy(out + lo, plane + at, (size_t)(hi - lo + 1) * sizeof(float));
	} else if (sw == 1) {
		const float *row = plane + (iz * IH + iy) * IW + ix0;

		memcpy(out + lo, row + lo, (size_t)(hi - lo + 1) * sizeof(float));
	} else {
		const float *row = plane + (iz * IH + iy) * IW + ix0;

		for (int64_t j = lo; j <= hi; j++)
			out[j] = row[j * sw];
	}
	if (hi < len - 1)
		memset(out + hi + 1, 0, (size_t)(len - 1 - hi) * sizeof(float));
}

/* seg_fill() with the common strides constant: its divisions become shifts */
static void im2col_seg_fill(float *restrict out, const float *restrict plane,
			    const struct ert_conv_geom *g, const struct im2col_seg *sg,
			    int64_t kd, int64_t kh, int64_t kw, int64_t pw)
{
	if (g->stride[2] == 1)
		seg_fill(out, plane, g, sg, kd, kh, kw, pw, 1);
	else if (g->stride[2] == 2)
		seg_fill(out, plane, g, sg, kd, kh, kw, pw, 2);
	else
		seg_fill(out, plane, g, sg, kd, kh, kw, pw, g->stride[2]);
}

/*
 * Implicit im2col: B(q, o) is input plane ci at window tap (kd, kh, kw) of
 * output pixel o, q = ((ci * KD + kd) * KH + kh) * KW + kw. A panel's
 * columns are cut into runs on one output row, each filled by a copy of the
 * input row it reads (a memcpy for stride 1) with zeros for the padding.
 */
static void pack_im2col(const void *vctx, int64_t bi, int64_t k0, int64_t kc, int64_t n0,
			int64_t nc, int NR, float *dst)
{
	const struct im2col_ctx *ctx = vctx;
	const struct conv_plan *p = ctx->p;
	const struct ert_conv_geom *g = &p->g;
	const int64_t psp = ctx->pw ? g->in[0] * g->in[1] * ctx->pw : p->in_sp;
	const float *xb = ctx->x + ((bi / p->group) * p->c_in + (bi % p->group) * p->cin_g) * psp;
	const int64_t OH = g->out[1], OW = g->out[2];
	struct im2col_seg segs[ERT_SGEMM_NR_MAX];

	if (ctx->gather && NR % 16 == 0 && NR <= ERT_SGEMM_NR_MAX) {
		for (int64_t j0 = 0; j0 < nc; j0 += NR, dst += NR * kc)
			ert_conv_im2col_gather__avx512(xb, psp, g, n0 + j0, nc - j0 < NR ? nc - j0 : NR,
						       NR / 16, k0, kc, dst);
		return;
	}
	for (int64_t j0 = 0; j0 < nc; j0 += NR) {
		int64_t nr = nc - j0 < NR ? nc - j0 : NR, ns = 0;

		for (int64_t o = n0 + j0, off = 0; off < nr; ns++) {
			int64_t ow = o % OW, t = o / OW, len = OW - ow;

			if (len > nr - off)
				len = nr - off;
			segs[ns] = (struct im2col_seg){ t / OH, t % OH, ow, len, off };
			o += len;
			off += len;
		}
		int64_t kw = k0 % g->k[2], t = k0 / g->k[2];
		int64_t kh = t % g->k[1];
		int64_t kd = (t / g->k[1]) % g->k[0], ci = t / g->k[1] / g->k[0];

		for (int64_t q = 0; q < kc; q++) {
			const float *plane = xb + ci * psp;
			float *o = dst + q * NR;

			for (int64_t s = 0; s < ns; s++)
				im2col_seg_fill(o + segs[s].off, plane, g, &segs[s], kd, kh, kw,
						ctx->pw);
			if (nr < NR)
				memset(o + nr, 0, (size_t)(NR - nr) * sizeof(float));
			if (++kw == g->k[2]) {
				kw = 0;
				if (++kh == g->k[1]) {
					kh = 0;
					if (++kd == g->k[0]) {
						kd = 0;
						ci++;
					}
				}
			}
		}
		dst += NR * kc;
	}
}

struct phase_job {
	const float *x;
	float *xs;
	int64_t w, s, pw;
};

/* Rows [begin, end) of the image into their column phases (phase_width()). */
static void phase_rows(void *arg, int64_t begin, int64_t end)
{
	const struct phase_job *j = arg;
	const int64_t W = j->w, s = j->s, w2 = j->pw / s;

	for (int64_t r = begin; r < end; r++) {
		const float *restrict in = j->x + r * W;
		float *restrict out = j->xs + r * j->pw;

		for (int64_t ph = 0; ph < s; ph++) {
			int64_t n = (W - ph + s - 1) / s;

			if (s == 2) {
				for (int64_t i = 0; i < n; i++)
					out[i] = in[2 * i + ph];
			} else {
				for (int64_t i = 0; i < n; i++)
					out[i] = in[s * i + ph];
			}
			for (int64_t i = n; i < w2; i++)
				out[i] = 0.0f;
			out += w2;
		}
	}
}

struct dw_job {
	const struct conv_plan *p;
	const float *x, *w, *bias;
	float *y;
	struct ert_act_desc act;
};

/* Depthwise: one output plane per item, by the reference loop (cpu/conv/dwconv.h). */
static void dw_planes(void *arg, int64_t begin, int64_t end)
{
	const struct dw_job *job = arg;
	const struct conv_plan *p = job->p;

	for (int64_t pl = begin; pl < end; pl++) {
		int64_t n = pl / p->m, m = pl % p->m;
		float *yp = job->y + pl * p->n;

		ert_dwconv_ref_rows(&p->g, job->x + (n * p->c_in + m / p->m_g) * p->in_sp, 0,
				    job->w + m * p->kk, job->bias ? job->bias[m] : 0.0f, yp, 0,
				    p->g.out[1]);
		ert_act_apply(&job->act, yp, p->n);
	}
}

/*
 * Constant weights are packed into GEMM panels once per session, at plan time
 * (shared by every plan: see ert_cpu_pack_get()); x->state is that copy.
 */
ert_status ert_cpu_conv_prepare(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	struct ert_cpu_packed *pk;
	struct conv_plan p;
	ert_status st;

	st = conv_plan_of(x, &p, err);
	if (st != ERT_OK)
		return st;
	x->kernel = p.depthwise ? ert_dwconv_kernel(cpu->isa, &p.g)
				: ert_cpu_linalg_gemm(cpu)->name;
	if (!p.depthwise && stem_shape(cpu, &p)) {
		/* no packed weights: the kernel packs its few thousand floats each run */
		x->kernel = stem_shape(cpu, &p);
		return ERT_OK;
	}
	if (!x->in_const[1] || p.depthwise)
		return ERT_OK;
	int tile = wino_shape(cpu, &p);

	if (tile && ert_wino_kernels_for(cpu->isa, tile) && cpu->memory != ERT_LEVEL_LOW &&
	    !(cpu->gemm_low && cpu->gemm_low->over_winograd)) {
		struct ert_cpu_pack_key wkey = {
			.src = x->in[1]->data,
			.kind = ert_wino_kernels_for(cpu->isa, tile)->tiles_as_rows ? ERT_CPU_PACK_WINO_B
										    : ERT_CPU_PACK_WINO,
			.rows = p.m, .cols = p.c_in, .rs = p.c_in * 9, .cs = 9,
			.count = wino_pos(tile),
		};

		st = ert_cpu_pack_get(cpu, &wkey, &pk);
		if (st != ERT_OK)
			ert_err_set(err, "Conv '%s': out of memory packing weights", x->node->name);
		x->state = pk;
		if (pk)
			x->kernel = ert_wino_kernels_for(cpu->isa, tile)->name;
		return st;
	}

	const char *sp = smallplane_shape(cpu, &p);

	if (sp) {
		struct ert_cpu_pack_key skey = ert_conv_sp_pack_key(x->in[1]->data, p.k, p.m);

		st = ert_cpu_pack_get(cpu, &skey, &pk);
		if (st != ERT_OK)
			ert_err_set(err, "Conv '%s': out of memory packing weights", x->node->name);
		x->state = pk;
		if (pk)
			x->kernel = sp;
		return st;
	}

	struct ert_cpu_pack_key key = {
		.src = x->in[1]->data, .kind = cpu->gemm_low ? ERT_CPU_PACK_A_BF16 : ERT_CPU_PACK_A,
		.rows = p.m_g, .cols = p.k, .rs = p.k, .cs = 1,
		.count = p.group, .src_stride = p.m_g * p.k,
	};

	st = ert_cpu_pack_get(cpu, &key, &pk);
	if (st != ERT_OK)
		ert_err_set(err, "Conv '%s': out of memory packing weights", x->node->name);
	x->state = pk;
	return st;
}

struct wino_job {
	const struct ert_wino_kernels *wk;
	struct ert_wino_tiles t;
	float *v, *m, *y;
	const float *res;            /* the image's residual, or NULL */
	int64_t ldm;
	const float *bias;
	struct ert_sgemm_epi act;
	int groups;                  /* the input transform's row groups (wino_conv()) */
};

/*
 * Items [begin, end) of the input transform: item u is channel u % cin of
 * row group u / cin, rows g * A / groups .. (g + 1) * A / groups - 1 of
 * the transform positions.
 */
static void wino_input_range(void *arg, int64_t begin, int64_t end)
{
	const struct wino_job *j = arg;
	const int A = j->wk->tile + 2;
	const int64_t cin = j->t.cin;

	if (j->groups == 1) {
		j->wk->input(&j->t, begin, end, j->v);
		return;
	}
	while (begin < end) {
		int64_t g = begin / cin, c1 = (g + 1) * cin < end ? (g + 1) * cin : end;
		struct ert_wino_tiles t = j->t;

		t.row0 = (int)(g * A / j->groups);
		t.row1 = (int)((g + 1) * A / j->groups);
		j->wk->input(&t, begin - g * cin, c1 - g * cin, j->v);
		begin = c1;
	}
}

static void wino_output_range(void *arg, int64_t begin, int64_t end)
{
	const struct wino_job *j = arg;

	j->wk->output(&j->t, j->m, j->ldm, j->bias, j->res, &j->act, begin, end, j->y);
}

/* Process CPU seconds, for cpu->wino_phase_s. */
static double wino_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/*
 * The convolution by Winograd F(4x4, 3x3) or F(2x2, 3x3) (as @pk was
 * packed), block of tiles by block of tiles.
 */
static void wino_conv(struct ert_cpu *cpu, struct ert_exec *x, const struct conv_plan *p,
		      const struct ert_cpu_packed *pk)
{
	const struct ert_conv_geom *g = &p->g;
	const struct ert_value *b = x->n_in > 2 ? x->in[2] : NULL;
	struct ert_act_desc act = ert_node_act(x->node);
	const int NR = cpu->gemm->nr, pos = (int)pk->key.count, T = pos == ERT_WINO2_POS ? 2 : 4;
	/* the GEMM's roles swapped (ert_wino_kernels.tiles_as_rows) */
	const bool swap = pk->key.kind == ERT_CPU_PACK_WINO_B;
	const int PR = swap ? cpu->gemm->mr : NR; /* tiles per panel of V */
	int64_t blk = wino_block(p, pos), tiles_w = (g->out[2] + T - 1) / T;
	int64_t tiles = tiles_w * ((g->out[1] + T - 1) / T);
	float *v = (float *)(((uintptr_t)x->workspace + 63) & ~(uintptr_t)63);
	float *m = v + pos * (p->c_in * blk + 16);
	void *gws = m + pos * ((p->m + 15) / 16 * 16 * blk + 16);
	size_t gsize = wino_gemm_ws(cpu, p, blk, swap);
	int64_t *a_off = (int64_t *)((char *)gws + gsize);
	int64_t *b_off = a_off + ERT_WINO_POS, *c_off = b_off + ERT_WINO_POS;
	struct wino_job job = {
		.wk = ert_wino_kernels_for(cpu->isa, T), .v = v, .m = m,
		.bias = b ? b->data : NULL,
		.t = {
			.h = g->in[1], .w = g->in[2], .pad_t = g->pad_b[1], .pad_l = g->pad_b[2],
			.oh = g->out[1], .ow = g->out[2], .tiles_w = tiles_w, .nr = PR,
			.cin = p->c_in, .cout = p->m,
		},
	};
	bool post_act = false;

	/*
	 * F(2x2): the input transform split by rows of transform positions
	 * between the threads, as the batched GEMM splits them (its tiles go
	 * position by position, a lane's home share of them in order: with 2
	 * threads lane 0 the first 8 positions, rows 0-1), so each lane
	 * multiplies V that its own core wrote; split by channel, each thread
	 * wrote every position of its channels. Where the threads do not
	 * divide the rows, and for F(4x4), by channel as before: there each
	 * row group loads all six input rows again and the GEMM did not gain
	 * (see docs/performance-winograd.md).
	 */
	job.groups = swap && cpu->num_threads > 1 && (T + 2) % cpu->num_threads == 0
			     ? (int)cpu->num_threads : 1;
	if (job.groups > 1)
		ert_wino_note_row_split();
	if (act.type == ERT_ACT_RELU) {
		job.act.act = ERT_EPI_RELU;
	} else if (act.type == ERT_ACT_CLIP && act.p0 <= act.p1) {
		job.act.act = ERT_EPI_CLIP;
		job.act.lo = act.p0;
		job.act.hi = act.p1;
	} else {
		post_act = act.type != ERT_ACT_NONE;
	}
	for (int64_t n = 0; n < p->n_img; n++) {
		job.t.x = (const float *)x->in[0]->data + n * p->c_in * p->in_sp;
		job.y = (float *)x->out[0]->data + n * p->m * p->n;
		job.res = x->n_in > 3 && x->in[3] ? (const float *)x->in[3]->data + n * p->m * p->n
						   : NULL;
		for (int64_t t0 = 0; t0 < tiles; t0 += blk) {
			int64_t nt = tiles - t0 < blk ? tiles - t0 : blk;
			int64_t np = (nt + PR - 1) / PR;

			job.t.t0 = t0;
			job.t.nt = nt;
			job.ldm = ((swap ? p->m : nt) + 15) / 16 * 16;
			job.t.v_pos = ert_wino_pos_stride(np * PR * p->c_in);
			job.t.m_pos = ert_wino_pos_stride((swap ? nt : p->m) * job.ldm);
			for (int q = 0; q < pos; q++) {
				a_off[q] = swap ? q * job.t.v_pos : q * (int64_t)pk->stride;
				b_off[q] = swap ? q * (int64_t)pk->stride : q * job.t.v_pos;
				c_off[q] = q * job.t.m_pos;
			}
			double ph0 = cpu->wino_phase_s ? wino_clock() : 0.0, ph1 = 0.0, ph2 = 0.0;

			ert_parallel_for(cpu->pool, job.groups * p->c_in, 4, wino_input_range,
					 &job);
			if (cpu->wino_phase_s)
				ph1 = wino_clock();

			struct ert_sgemm_desc d = {
				.kern = cpu->gemm, .cpu = cpu,
				.m = swap ? nt : p->m, .n = swap ? p->m : nt, .k = p->c_in, .batch = pos,
				.a_packed = swap ? v : pk->data, .b_packed = swap ? pk->data : v,
				.c = m, .ldc = job.ldm,
				.a_off = a_off, .b_off = b_off, .c_off = c_off,
				.alpha = 1.0f,
			};

			ert_sgemm_run(cpu->pool, cpu->num_threads, &d, gws, gsize);
			if (cpu->wino_phase_s)
				ph2 = wino_clock();
			ert_parallel_for(cpu->pool, p->m, 4, wino_output_range, &job);
			if (cpu->wino_phase_s) {
				cpu->wino_phase_s[0] += ph1 - ph0;
				cpu->wino_phase_s[1] += ph2 - ph1;
				cpu->wino_phase_s[2] += wino_clock() - ph2;
			}
		}
	}
	if (post_act)
		ert_act_apply(&act, x->out[0]->data, x->out[0]->numel);
}

struct band_job {
	const struct ert_cpu *cpu;
	const struct conv_plan *p;
	const struct ert_exec *x;
	uint32_t parts;
	size_t part_bytes;
};

/* Parts [begin, end) of a band split (band_split_parts()): one thread's GEMM each. */
static void band_part(void *arg, int64_t begin, int64_t end)
{
	const struct band_job *j = arg;
	const struct conv_plan *p = j->p;
	const struct ert_exec *x = j->x;
	const struct ert_value *b = x->n_in > 2 ? x->in[2] : NULL;
	const int mr = ert_cpu_linalg_gemm(j->cpu)->mr;
	/* B read in place or packed once, as ert_cpu_conv_compute() decides for the whole */
	const bool direct = direct_b_ok(p);
	const bool shared = shared_b_bytes(p) && (!direct || p->in_sp % 16);

	for (int64_t i = begin; i < end; i++) {
		int64_t m0 = band_split_at(p, (uint32_t)i, j->parts, mr);
		int64_t m1 = band_split_at(p, (uint32_t)i + 1, j->parts, mr);
		char *ws = (char *)x->workspace + (size_t)i * j->part_bytes;
		size_t gws = ert_sgemm_workspace(1, m1 - m0, p->n, p->k);
		float *sb = (float *)(((uintptr_t)(ws + gws) + 63) & ~(uintptr_t)63);
		const int64_t a_off = m0 * p->k, c_off = m0 * p->n;
		struct ert_sgemm_desc d = {
			.kern = ert_cpu_linalg_gemm(j->cpu), .cpu = j->cpu,
			.m = m1 - m0, .n = p->n, .k = p->k, .batch = 1,
			.a = x->in[1]->data, .a_rs = p->k, .a_cs = 1,
			.a_packed = ert_cpu_packed_data(x->state),
			.b = x->in[0]->data, .b_rs = p->in_sp, .b_cs = 1, .b_direct = direct,
			.b_shared = shared ? sb : NULL,
			.c = x->out[0]->data, .ldc = p->n,
			.a_off = &a_off, .c_off = &c_off, .bias_off = &m0,
			.bias = b ? b->data : NULL, .alpha = 1.0f,
			.residual = x->n_in > 3 && x->in[3] ? x->in[3]->data : NULL,
			.act = ert_node_act(x->node),
		};

		if (m1 > m0)
			ert_sgemm_run(NULL, 1, &d, ws, gws);
	}
}

ert_status ert_cpu_conv_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *b = x->n_in > 2 ? x->in[2] : NULL;
	/* "ert.residual": input 3 is added before the activation (opt/fuse-residual.c) */
	const float *res = x->n_in > 3 && x->in[3] ? x->in[3]->data : NULL;
	struct conv_plan p;
	ert_status st = conv_plan_of(x, &p, err);

	if (st != ERT_OK)
		return st;
	if (p.depthwise) {
		struct ert_act_desc act = ert_node_act(x->node);
		/* the level's vector kernel (cpu/conv/dwconv.h) where it has one */
		struct ert_dwconv_args da = {
			.g = &p.g, .n_img = p.n_img, .c_in = p.c_in, .m = p.m, .m_g = p.m_g,
			.x = x->in[0]->data, .w = x->in[1]->data, .bias = b ? b->data : NULL,
			.res = res, .y = x->out[0]->data, .act = act,
		};

		if (ert_dwconv_run(cpu, &da))
			return ERT_OK;

		struct dw_job job = {
			.p = &p, .x = x->in[0]->data, .w = x->in[1]->data,
			.bias = b ? b->data : NULL, .y = x->out[0]->data,
			.act = res ? (struct ert_act_desc){ ERT_ACT_NONE, 0.0f, 0.0f } : act,
		};

		ert_parallel_for(cpu->pool, p.n_img * p.m, 1, dw_planes, &job);
		if (res) {
			/* the optimiser never fuses one here; a model file may */
			float *y = x->out[0]->data;

			for (int64_t i = 0; i < x->out[0]->numel; i++)
				y[i] += res[i];
			ert_act_apply(&act, y, x->out[0]->numel);
		}
		return ERT_OK;
	}
	st = ert_cpu_ws_check(x, ert_cpu_conv_workspace(cpu, x), err);
	if (st != ERT_OK)
		return st;
	if (stem_shape(cpu, &p)) {
		struct ert_conv_stem_args sa = {
			.g = &p.g, .n_img = p.n_img, .c_in = p.c_in, .m = p.m,
			.x = x->in[0]->data, .w = x->in[1]->data, .bias = b ? b->data : NULL,
			.res = res, .y = x->out[0]->data, .act = ert_node_act(x->node),
		};

		ert_conv_stem_run(cpu, &sa, x->workspace);
		return ERT_OK;
	}
	if (x->state && (((const struct ert_cpu_packed *)x->state)->key.kind == ERT_CPU_PACK_WINO ||
			 ((const struct ert_cpu_packed *)x->state)->key.kind == ERT_CPU_PACK_WINO_B)) {
		wino_conv(cpu, x, &p, x->state);
		return ERT_OK;
	}
	if (x->state && ((const struct ert_cpu_packed *)x->state)->key.kind == ERT_CPU_PACK_B) {
		struct ert_conv_sp_args sa = {
			.g = &p.g, .n_img = p.n_img, .c_in = p.c_in, .m = p.m,
			.x = x->in[0]->data, .w_packed = ert_cpu_packed_data(x->state),
			.bias = b ? b->data : NULL, .res = res, .act = ert_node_act(x->node),
			.y = x->out[0]->data,
		};

		/* sized by the shapes prepare() saw; never run past it if they changed */
		st = ert_cpu_ws_check(x, ert_conv_sp_workspace(cpu, &p.g, p.c_in, p.m), err);
		if (st != ERT_OK)
			return st;
		ert_conv_sp_run(cpu, &sa, x->workspace);
		return ERT_OK;
	}

	uint32_t parts = x->state ? band_split_parts(cpu, &p) : 0;

	if (parts) {
		struct band_job bj = { .cpu = cpu, .p = &p, .x = x, .parts = parts };

		bj.part_bytes = band_split_part_bytes(cpu, &p, bj.parts);
		ert_parallel_for(cpu->pool, bj.parts, 1, band_part, &bj);
		return ERT_OK;
	}

	int64_t batch = p.n_img * p.group;
	size_t gws = ert_sgemm_workspace(ert_cpu_lanes(cpu), p.m_g, p.n, p.k);
	int64_t *a_off = (int64_t *)((char *)x->workspace + gws);
	int64_t *b_off = a_off + batch, *c_off = b_off + batch, *bias_off = c_off + batch;
	float *b_shared = (float *)(((uintptr_t)(bias_off + batch) + 63) & ~(uintptr_t)63);
	/*
	 * B (the image, or its im2col) packed once for all row tiles where it
	 * is small (ert_sgemm_desc.b_shared), rather than by every row tile;
	 * also rather than read in place where the rows do not start on 64-byte
	 * lines (14x14 and 7x7 planes: every row of a panel read by the kernel
	 * then spans two lines, and N = 49 leaves a one-column edge panel to
	 * pack per tile and K block). Measured at avx2 on Zen 3 (gemm-bench, 1
	 * thread): the stride-2 1x1 layers 1.4-2.3x faster (their im2col was
	 * packed 5-17 times), 512 -> 2048 at 7x7 1.3-1.7x, the rest unchanged
	 * within the noise.
	 */
	bool direct = p.pointwise && direct_b_ok(&p);
	struct im2col_ctx ictx = { .x = x->in[0]->data, .p = &p,
				   .gather = im2col_gather_ok(cpu, &p) };
	const struct ert_cpu_packed *pk = x->state;
	size_t sb = shared_b_bytes(&p) && (!direct || p.in_sp % 16) ? shared_b_bytes(&p) : 0;

	if (phase_bytes(cpu, &p)) {
		struct phase_job pj = {
			.x = x->in[0]->data, .w = p.g.in[2], .s = p.g.stride[2],
			.pw = phase_width(cpu, &p),
			.xs = (float *)(((uintptr_t)((char *)(bias_off + batch) + shared_b_bytes(&p)) +
					 63) & ~(uintptr_t)63),
		};

		ert_parallel_for(cpu->pool, p.n_img * p.c_in * p.g.in[0] * p.g.in[1], 16,
				 phase_rows, &pj);
		ictx.x = pj.xs;
		ictx.pw = pj.pw;
	}

	for (int64_t bi = 0; bi < batch; bi++) {
		int64_t n = bi / p.group, gi = bi % p.group;

		a_off[bi] = pk ? gi * (int64_t)pk->stride : gi * p.m_g * p.k;
		b_off[bi] = (n * p.c_in + gi * p.cin_g) * p.in_sp;
		c_off[bi] = (n * p.m + gi * p.m_g) * p.n;
		bias_off[bi] = gi * p.m_g;
	}
	struct ert_sgemm_desc d = {
		.kern = ert_cpu_linalg_gemm(cpu), .cpu = cpu,
		.m = p.m_g, .n = p.n, .k = p.k, .batch = batch,
		.a = x->in[1]->data, .a_rs = p.k, .a_cs = 1,
		.a_packed = ert_cpu_packed_data(pk),
		.b = x->in[0]->data, .b_rs = p.in_sp, .b_cs = 1,
		.pack_b = p.pointwise ? NULL : pack_im2col, .pack_ctx = &ictx,
		.b_direct = direct,
		.b_shared = sb ? b_shared : NULL,
		.c = x->out[0]->data, .ldc = p.n,
		.a_off = a_off, .b_off = b_off, .c_off = c_off, .bias_off = bias_off,
		.bias = b ? b->data : NULL, .alpha = 1.0f, .residual = res,
		.act = ert_node_act(x->node),
	};

	ert_sgemm_run(cpu->pool, cpu->num_threads, &d, x->workspace, gws);
	return ERT_OK;
}
