/* SPDX-License-Identifier: MIT */
/* The inverted-residual block by bands of rows (see irblock.h). */
#include <string.h>

#include "cpu/conv/dwconv.h"
#include "cpu/conv/irblock.h"
#include "cpu/gemm/sgemm.h"

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static size_t align64(size_t n)
{
	return (n + 63) & ~(size_t)63;
}

bool ert_irb_ok(const struct ert_cpu *cpu, const struct ert_conv_geom *g)
{
	return g->nsp == 2 && ert_dwconv_band_ok(cpu->isa, g);
}

/* Input rows a band of @r output rows reads at most: its rows, strided, and the window's span. */
static int64_t in_rows(const struct ert_conv_geom *g, int64_t r)
{
	return min64((r - 1) * g->stride[1] + g->win[1], g->in[1]);
}

/* Bytes of one lane's two band buffers for bands of @r rows. */
static int64_t band_bytes(const struct ert_irb_args *a, int64_t r)
{
	const struct ert_conv_geom *g = a->g;
	int64_t e = a->expand ? in_rows(g, r) * g->in[2] : 0;

	return a->c_mid * (e + r * g->out[2]) * (int64_t)sizeof(float);
}

/*
 * The largest band whose buffers take at most half of one core's L2 (1 MiB
 * where unknown; between 128 KiB and 2 MiB), so that the depthwise conv
 * reads the expanded rows, and the project GEMM the depthwise rows, from
 * L2 rather than memory; at least one row.
 */
int64_t ert_irb_band_rows(const struct ert_irb_args *a)
{
	long l2 = ert_cpu_features()->l2_bytes;
	int64_t budget = l2 <= 0 ? 1 << 20 : min64(max64(l2 / 2, 128 << 10), 2 << 20);
	int64_t r = 1;

	while (r < a->g->out[1] && band_bytes(a, r + 1) <= budget)
		r++;
	return r;
}

/*
 * May the band GEMMs' kernel read B (K rows @rs floats apart) where it lies
 * rather than pack it? As the 1x1 Conv decides for its image (linalg-conv.c,
 * ert_sgemm_b_rows_spread()):
 * not where 128 rows' first three lines fall into fewer than 16 of the 64 L1
 * sets (a row stride of a multiple of 1 KiB). A band's rows of a plane are
 * contiguous, so its pixels are B's columns like the Conv's. Packing copied
 * every band's B once per row tile of A (the expand conv's c_mid rows: up to
 * 5 times): on the Sapphire Rapids VM (1 thread, mobilenet_v2's blocks in
 * sessions of their own) reading in place took the 112x112 blocks from 0.27
 * to 0.23 ms (32 -> 16) and 0.71 to 0.58 ms (16 -> 96 -> 24, stride 2), and
 * 56x56 24 -> 144 -> 24 from 0.49 to 0.45 ms; memmove (the packing's row
 * copies) had been 12 % of the block's time.
 */
static bool direct_ok(int64_t rs)
{
	return ert_sgemm_b_rows_spread(rs);
}

/*
 * Floats between the depthwise band's channels (the project GEMM's B rows):
 * at least a band, whole 64-byte lines, and a stride the GEMM reads in place.
 */
static int64_t band_stride(const struct ert_irb_args *a, int64_t r)
{
	int64_t s = (r * a->g->out[2] + 15) / 16 * 16;

	while (!direct_ok(s))
		s += 16;
	return s;
}

/* One lane's slot: the expanded rows, the depthwise band, the GEMMs' workspace. */
struct irb_slot {
	size_t e, d, gemm, total;      /* bytes of each, 64-byte multiples */
};

static struct irb_slot slot_of(const struct ert_irb_args *a, int64_t r)
{
	const struct ert_conv_geom *g = a->g;
	int64_t cap = in_rows(g, r) * g->in[2], band = band_stride(a, r);
	size_t ge = a->expand ? ert_sgemm_workspace(1, a->c_mid, cap, a->c_in) : 0;
	size_t gp = ert_sgemm_workspace(1, a->c_out, band, a->c_mid);
	struct irb_slot s = {
		.e = a->expand ? align64((size_t)(a->c_mid * cap) * sizeof(float)) : 0,
		.d = align64((size_t)(a->c_mid * band) * sizeof(float)),
		.gemm = align64(ge > gp ? ge : gp),
	};

	s.total = s.e + s.d + s.gemm;
	return s;
}

/*
 * The band on @cpu's lanes: no taller than a lane's share of an image's
 * rows where there are fewer images than lanes, so that each lane has a
 * chunk of rows. A 14x14 block's band is all 14 rows (1.2 MB at 576
 * channels), so its one chunk ran on one thread while the other waited;
 * 7 rows a lane compute 8 expanded rows each (the halo twice), and on the
 * Sapphire Rapids VM at 2 threads (per-op minima of 200 runs, mobilenet_v2)
 * the 14x14 blocks fused took 0.87-0.91x the three Convs (64 -> 384 -> 64)
 * and 0.94-0.96x (96 -> 576 -> 96) with the lanes below, 1.0x at 1 thread.
 */
static int64_t rows_for(const struct ert_cpu *cpu, const struct ert_irb_args *a)
{
	int64_t r = ert_irb_band_rows(a), lanes = ert_cpu_lanes(cpu);

	if (lanes > 1 && a->n_img < lanes)
		r = min64(r, (a->g->out[1] + lanes - 1) / lanes);
	return r;
}

/* Row chunks per image: one per lane, each at least a band. */
static int64_t chunks_of(const struct ert_cpu *cpu, const struct ert_irb_args *a, int64_t r)
{
	int64_t bands = (a->g->out[1] + r - 1) / r;

	return max64(1, min64((int64_t)ert_cpu_lanes(cpu), bands));
}

int64_t ert_irb_chunks(const struct ert_cpu *cpu, const struct ert_irb_args *a)
{
	return chunks_of(cpu, a, rows_for(cpu, a));
}

bool ert_irb_dw_flat(const struct ert_cpu *cpu, const struct ert_irb_args *a)
{
	int64_t r = rows_for(cpu, a), OH = a->g->out[1], c = chunks_of(cpu, a, r);

	/* every band of every chunk: the tallest is at most r rows */
	for (int64_t i = 0; i < c; i++) {
		int64_t rows = min64(r, OH * (i + 1) / c - OH * i / c);

		if (rows > 0 && !ert_dwconv_band_flat(cpu->isa, a->g, rows))
			return false;
	}
	return true;
}

size_t ert_irb_workspace(const struct ert_cpu *cpu, const struct ert_irb_args *a)
{
	int64_t r = rows_for(cpu, a);
	int64_t lanes = min64((int64_t)ert_cpu_lanes(cpu), a->n_img * chunks_of(cpu, a, r));

	return (size_t)lanes * slot_of(a, r).total + 64;
}

struct irb_job {
	struct ert_cpu *cpu;
	const struct ert_irb_args *a;
	char *ws;
	struct irb_slot slot;
	int64_t rows, chunks;
	int64_t d_cs;                  /* floats between the depthwise band's channels */
	bool x_direct;                 /* the expand GEMM reads the input in place */
	int64_t lanes;                 /* lanes running chunks: the pool's job size */
};

/* C = act(bias + W * B (+ res)) on the caller's thread: the Conv's GEMM. */
static void pw_gemm(const struct irb_job *j, const struct ert_irb_pw *pw, int64_t m, int64_t n,
		    int64_t k, const float *b, int64_t b_rs, float *c, int64_t ldc,
		    const float *res, bool direct, void *gws)
{
	struct ert_sgemm_desc d = {
		.kern = ert_cpu_linalg_gemm(j->cpu), .cpu = j->cpu,
		.m = m, .n = n, .k = k, .batch = 1,
		.a = pw->w, .a_rs = k, .a_cs = 1, .a_packed = pw->w_packed,
		.b = b, .b_rs = b_rs, .b_cs = 1, .b_direct = direct,
		.c = c, .ldc = ldc,
		.bias = pw->bias, .alpha = 1.0f, .residual = res, .act = pw->act,
	};

	ert_sgemm_run(NULL, 1, &d, gws, j->slot.gemm);
}

/* Output rows [oh_a, oh_b) of image @n, band by band. */
static void run_chunk(const struct irb_job *j, int64_t n, int64_t oh_a, int64_t oh_b, char *slot)
{
	const struct ert_irb_args *a = j->a;
	const struct ert_conv_geom *g = a->g;
	const int64_t H = g->in[1], W = g->in[2], OH = g->out[1], OW = g->out[2];
	const int64_t S = g->stride[1], R = j->rows, cap = in_rows(g, R);
	float *e = (float *)slot, *dbuf = (float *)(slot + j->slot.e);
	void *gws = slot + j->slot.e + j->slot.d;
	const float *x = a->x + n * a->c_in * H * W;
	float *y = a->y + n * a->c_out * OH * OW;
	const float *res = a->res ? a->res + n * a->c_out * OH * OW : NULL;
	int64_t ea = 0, eb = 0; /* the expanded rows e holds */
	struct ert_dwconv_args da = {
		.g = g, .n_img = 1, .c_in = a->c_mid, .m = a->c_mid, .m_g = 1,
		.w = a->dw_w, .bias = a->dw_bias, .y = dbuf, .act = a->dw_act,
	};

	for (int64_t oh0 = oh_a; oh0 < oh_b; oh0 += R) {
		int64_t oh1 = min64(oh0 + R, oh_b);
		int64_t ia = max64(0, oh0 * S - g->pad_b[1]);
		int64_t ib = min64(H, (oh1 - 1) * S - g->pad_b[1] + g->win[1]);
		struct ert_dwconv_band b = {
			.oh0 = oh0, .oh1 = oh1, .iy0 = ia, .iy1 = ib > ia ? ib : ia,
			.x_cs = H * W, .y_cs = j->d_cs,
		};

		if (a->expand) {
			/* rows this band shares with the last one move to the front */
			int64_t keep = ia >= ea && ia < eb ? min64(eb, ib) - ia : 0;

			if (keep > 0 && ia > ea)
				for (int64_t c = 0; c < a->c_mid; c++)
					memmove(e + c * cap * W, e + c * cap * W + (ia - ea) * W,
						(size_t)(keep * W) * sizeof(float));
			if (ia + keep < ib)
				pw_gemm(j, &a->ex, a->c_mid, (ib - ia - keep) * W, a->c_in,
					x + (ia + keep) * W, H * W, e + keep * W, cap * W, NULL,
					j->x_direct, gws);
			if (ib > ia) {
				ea = ia;
				eb = ib;
			}
			b.x_cs = cap * W;
			da.x = e;
		} else {
			b.iy0 = 0;
			b.iy1 = H;
			da.x = x;
		}
		if (!ert_dwconv_band_flat_run(j->cpu, &da, &b))
			ert_dwconv_band_run(j->cpu, &da, &b);
		pw_gemm(j, &a->pj, a->c_out, (oh1 - oh0) * OW, a->c_mid, dbuf, j->d_cs,
			y + oh0 * OW, OH * OW, res ? res + oh0 * OW : NULL, true, gws);
	}
}

/*
 * Lane i runs items i, i + lanes, ... (item: an image's chunk of rows), and
 * the pool runs lane i on thread i (cpu/work-parts.h), so a thread works on
 * the same rows of every block: the rows the last block wrote there, its
 * input and residual, are mostly in this core's L2. Taken from a shared
 * counter (before), the chunk of a thread changed from block to block.
 */
static void lane_main(void *arg, int64_t begin, int64_t end)
{
	struct irb_job *j = arg;
	const int64_t OH = j->a->g->out[1], items = j->a->n_img * j->chunks;

	for (int64_t lane = begin; lane < end; lane++) {
		char *slot = j->ws + (size_t)lane * j->slot.total;

		for (int64_t it = lane; it < items; it += j->lanes) {
			int64_t n = it / j->chunks, c = it % j->chunks;

			run_chunk(j, n, OH * c / j->chunks, OH * (c + 1) / j->chunks, slot);
		}
	}
}

void ert_irb_run(struct ert_cpu *cpu, const struct ert_irb_args *a, void *ws)
{
	struct irb_job j = { .cpu = cpu, .a = a };

	if (a->n_img <= 0 || a->g->out[1] <= 0 || a->g->out[2] <= 0)
		return;
	j.rows = rows_for(cpu, a);
	j.slot = slot_of(a, j.rows);
	j.chunks = chunks_of(cpu, a, j.rows);
	j.d_cs = band_stride(a, j.rows);
	j.x_direct = direct_ok(a->g->in[1] * a->g->in[2]);
	j.ws = (char *)(((uintptr_t)ws + 63) & ~(uintptr_t)63);
	j.lanes = min64((int64_t)ert_cpu_lanes(cpu), a->n_img * j.chunks);
	ert_parallel_for(cpu->pool, j.lanes, 1, lane_main, &j);
}
