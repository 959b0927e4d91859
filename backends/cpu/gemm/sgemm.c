/* SPDX-License-Identifier: MIT */
/*
 * GEMM driver: tiles, lanes and packing around the micro-kernel.
 *
 * ert_parallel_for gives no thread index, so per-thread scratch is handed out
 * by lane: the driver runs one parallel_for over L lanes (L = the number of
 * workspace slots, capped by threads and tiles), lane i owns slot i, and lanes
 * pull tiles from a shared atomic counter. The workspace is sized for as many
 * lanes as the machine has CPUs (the kernel table's workspace() is not told
 * the session's thread count).
 */
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "cpu/gemm/sgemm.h"
#include "cpu/vec/vec.h"
#include "cpu/work-parts.h"

static const struct ert_sgemm_kernel kernels[] = {
	{ .name = "f32-gemm-4x8-scalar", .mr = 4, .nr = 8, .kc = ERT_SGEMM_KC,
	  .fn = ert_f32_gemm_ukernel_4x8__scalar, .pack_a = ert_sgemm_pack_a_strided,
	  .pack_b = ert_sgemm_pack_b_strided },
	{ .name = "f32-gemm-6x16-avx2", .mr = 6, .nr = 16, .kc = ERT_SGEMM_KC,
	  .fn = ert_f32_gemm_ukernel_6x16__avx2, .pack_a = ert_sgemm_pack_a_strided__avx2,
	  .pack_b = ert_sgemm_pack_b_strided__avx2 },
	/* K block 128: a 128 x 48 B panel (24 KiB) stays in a 32 KiB L1. */
	{ .name = "f32-gemm-8x48-avx512", .mr = 8, .nr = 48, .kc = 128,
	  .fn = ert_f32_gemm_ukernel_8x48__avx512, .pack_a = ert_sgemm_pack_a_strided__avx2,
	  .pack_b = ert_sgemm_pack_b_strided__avx512, .prefetch_b = true,
	  .fn_arows = ert_f32_gemm_ukernel_8x48__avx512_arows,
	  .fn_edge3 = ert_f32_gemm_ukernel_24x16__avx512_edge3,
	  .fn_short = ert_f32_gemm_ukernel_8x48__avx512_short },
};

bool ert_sgemm_b_rows_spread(int64_t row_floats)
{
	int64_t row_bytes = row_floats * (int64_t)sizeof(float);
	uint64_t used = 0;
	int n = 0;

	for (int64_t r = 0; r < 128; r++)
		for (int64_t l = 0; l < 3; l++)
			used |= 1ull << ((r * row_bytes / 64 + l) % 64);
	for (; used; used &= used - 1)
		n++;
	return n >= 16;
}

const struct ert_sgemm_kernel *ert_sgemm_kernel_for(enum ert_cpu_isa isa)
{
	return isa >= ERT_ISA_AVX512 ? &kernels[2] : isa >= ERT_ISA_AVX2 ? &kernels[1] : &kernels[0];
}

/*
 * K block 256: a 256 x 48 B panel of bf16 (128 pairs of 48 words, 24 KiB)
 * stays in a 32 KiB L1, as the fp32 kernel's 128 x 48 does. Even, so that
 * no pair straddles two K blocks.
 */
static const struct ert_sgemm_kernel bf16_kernels[] = {
	{ .name = "bf16-gemm-8x48-avx512bf16", .mr = 8, .nr = 48, .kc = 256,
	  .fn = ert_bf16_gemm_ukernel_8x48__avx512bf16, .bf16 = true },
	/*
	 * 256: eight 16-pair tile steps per K block; the B tiles' 24 KiB stay in
	 * L1. Over Winograd: on Sapphire Rapids, resnet18 at 1 thread took 23 ms
	 * with its 3x3 layers on this kernel against 26 ms on fp32 Winograd.
	 */
	{ .name = "bf16-gemm-16x48-amx", .mr = 16, .nr = 48, .kc = 256,
	  .fn = ert_bf16_gemm_ukernel_16x48__amx, .bf16 = true, .a_rows = true,
	  .over_winograd = true },
};

const struct ert_sgemm_kernel *ert_sbgemm_kernel_for(enum ert_cpu_isa isa)
{
	/* both pack with vcvtne2ps2bf16: the AMX kernel wants AVX512_BF16 too */
	if (isa < ERT_ISA_AVX512 || !ert_cpu_features()->avx512bf16)
		return NULL;
	return isa >= ERT_ISA_AMX ? &bf16_kernels[1] : &bf16_kernels[0];
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static int64_t round_up(int64_t v, int64_t to)
{
	return (v + to - 1) / to * to;
}

/*
 * Rows of A a lane's slot holds: a tile's rows (at most MC) rounded up to
 * the level's MR. The workspace is sized before a level is chosen, so
 * they are rounded up to a multiple of every level's MR (4, 6, 8, 16):
 * rounding to 16 alone left avx2's 6-row panels short (32 rows pack as 36),
 * and B, packed right after them, ran past the slot.
 */
#define SLOT_MR 48

static int64_t slot_a_floats(int64_t m, int64_t kc)
{
	return round_up(round_up(min64(m, ERT_SGEMM_MC), SLOT_MR) * kc, 16);
}

/*
 * Floats of one lane's slot: an MC x KC panel of A and a KC x NC panel of B,
 * rounded up for the largest register block of any level.
 */
static size_t slot_floats(int64_t m, int64_t n, int64_t k)
{
	int64_t nc = round_up(min64(n, ERT_SGEMM_NC), ERT_SGEMM_NR_MAX);
	int64_t kc = min64(k, ERT_SGEMM_KC);

	if (kc < 1)
		kc = 1;
	/* Keep every slot, and the B panel in it, 64-byte aligned. */
	return (size_t)(slot_a_floats(m, kc) + round_up(nc * kc, 16));
}

size_t ert_sgemm_workspace(uint32_t lanes, int64_t m, int64_t n, int64_t k)
{
	return slot_floats(m, n, k) * sizeof(float) * (lanes < 1 ? 1 : lanes) + 64;
}

size_t ert_sgemm_shared_a_floats(int64_t m, int64_t k)
{
	/* m rounded up to any MR (6 at avx2 is no divisor of MR_MAX) */
	return (size_t)((m + ERT_SGEMM_MR_MAX) * (k > 0 ? k : 1));
}

size_t ert_sgemm_shared_b_floats(int64_t k, int64_t n)
{
	size_t f = (size_t)(round_up(n, ERT_SGEMM_NR_MAX) * (k > 0 ? k : 1));

	return f * sizeof(float) > ERT_SGEMM_SHARED_B_MAX ? 0 : f;
}

void ert_sgemm_pack_a_strided(const float *a, int64_t rs, int64_t cs, int64_t m0, int64_t mc,
			      int64_t k0, int64_t kc, int MR, float *dst)
{
	for (int64_t i0 = 0; i0 < mc; i0 += MR) {
		int64_t mr = min64(MR, mc - i0);
		const float *src = a + (m0 + i0) * rs + k0 * cs;

		if (cs == 1 && mr == MR) {
			for (int64_t p = 0; p < kc; p++)
				for (int i = 0; i < MR; i++)
					dst[p * MR + i] = src[i * rs + p];
		} else {
			for (int64_t p = 0; p < kc; p++)
				for (int64_t i = 0; i < MR; i++)
					dst[p * MR + i] = i < mr ? src[i * rs + p * cs] : 0.0f;
		}
		dst += MR * kc;
	}
}

void ert_sgemm_pack_b_strided(const float *b, int64_t rs, int64_t cs, int64_t k0, int64_t kc,
			      int64_t n0, int64_t nc, int NR, float *dst)
{
	for (int64_t j0 = 0; j0 < nc; j0 += NR) {
		int64_t nr = min64(NR, nc - j0);
		const float *src = b + k0 * rs + (n0 + j0) * cs;

		if (cs == 1 && nr == NR) {
			for (int64_t p = 0; p < kc; p++)
				memcpy(dst + p * NR, src + p * rs, (size_t)NR * sizeof(float));
		} else if (cs == 1) {
			for (int64_t p = 0; p < kc; p++) {
				memcpy(dst + p * NR, src + p * rs, (size_t)nr * sizeof(float));
				memset(dst + p * NR + nr, 0, (size_t)(NR - nr) * sizeof(float));
			}
		} else {
			for (int64_t p = 0; p < kc; p++)
				for (int64_t j = 0; j < NR; j++)
					dst[p * NR + j] = j < nr ? src[p * rs + j * cs] : 0.0f;
		}
		dst += NR * kc;
	}
}

size_t ert_sgemm_packed_a_floats(int64_t m, int64_t k, int mr)
{
	return (size_t)(round_up(m, mr) * k);
}

void ert_sgemm_pack_a(const float *a, int64_t rs, int64_t cs, int64_t m, int64_t k, int mr,
		      float *dst)
{
	ert_sgemm_pack_a_strided(a, rs, cs, 0, m, 0, k, mr, dst);
}

size_t ert_sgemm_packed_b_floats(int64_t k, int64_t n, int nr)
{
	return (size_t)(round_up(n, nr) * k);
}

void ert_sgemm_pack_b(const float *b, int64_t rs, int64_t cs, int64_t k, int64_t n, int nr,
		      float *dst)
{
	ert_sgemm_pack_b_strided(b, rs, cs, 0, k, 0, n, nr, dst);
}

size_t ert_sbgemm_packed_words(int64_t rows, int64_t k, int panel)
{
	return (size_t)(round_up(rows, panel) * ((k + 1) / 2));
}

struct sgemm_job {
	const struct ert_sgemm_desc *d;
	const struct ert_sgemm_kernel *kern;
	float *ws;
	size_t slot;                /* floats per lane */
	int64_t mc, nc, kc, mt, nt; /* tile sizes and counts */
	int64_t tiles;
	/*
	 * Column tiles as even shares of N's panels (whole_a_tiles()): tile c
	 * of nt spans panels [c * panels / nt, (c + 1) * panels / nt).
	 */
	bool even_n;
	int64_t panels;
	struct ert_sgemm_epi epi;   /* of the last K block (clamp for ReLU / Clip) */
	bool post_act;              /* an activation the kernel cannot apply */
	bool post_scale;            /* d->scale, bias, residual, act applied by scale_tile() */
	/*
	 * Lanes and their home tiles (lane_tile()): with at least as many
	 * column tiles as lanes, lane l's home is column tiles [l * nt / lanes,
	 * (l + 1) * nt / lanes) of every row tile and problem, so that a lane
	 * computes (and packs B for) the same columns in every op, most often
	 * on the same thread; otherwise an even run of tiles in their order.
	 */
	int64_t lanes;
	bool by_cols;
	bool rows_home;             /* whole_a_tiles() split rows: lanes' homes are row tiles */
	struct ert_work_part parts[ERT_MAX_THREADS];
	atomic_int_fast64_t next;   /* instead, past ERT_WORK_ITEMS_MAX tiles: the next one */
	/*
	 * A packed into d->a_shared by the tiles themselves (pack_a_unit()):
	 * K block kb of row tile r is unit r * kblocks + kb, at a_shared +
	 * k0 * mpad + m0 * kc (mpad: m rounded up to MR), in the panels a
	 * tile's own packing makes; a_state[unit] is A_UNPACKED, A_PACKING or
	 * A_PACKED.
	 */
	bool a_lazy;
	/* A read in place by the kernel (ert_sgemm_desc.a_direct), a last short panel packed */
	bool a_direct;
	/* the tiles' one K block by row panels (run_block_rows()) */
	bool rows_order;
	int64_t kblocks, mpad;
	/*
	 * B packed once into d->b_packed (ert_sgemm_desc.b_shared) by the tiles
	 * themselves (pack_b_unit()), from @b_src, the caller's description:
	 * K block kb of column tile ct is unit ct * kblocks + kb, in the
	 * panels a packing of all of K makes; b_state[unit] as a_state.
	 */
	bool b_lazy;
	const struct ert_sgemm_desc *b_src;
	atomic_int a_state[ERT_SGEMM_A_UNITS_MAX]; /* (these two: not cleared beyond the units used) */
	atomic_int b_state[ERT_SGEMM_B_UNITS_MAX];
};

enum { A_UNPACKED, A_PACKING, A_PACKED };

/* Where tile @t of a job lies: its problem, rows and columns, and operands. */
struct tile_pos {
	int64_t bi, m0, n0, mc, nc, ao, bo;
	float *c;
	const float *bias, *cbias, *res;
};

static struct tile_pos tile_pos_of(const struct sgemm_job *job, int64_t t)
{
	const struct ert_sgemm_desc *d = job->d;
	int64_t per_batch = job->mt * job->nt, r = t % per_batch, co;
	struct tile_pos tp;

	tp.bi = t / per_batch;
	tp.m0 = (r / job->nt) * job->mc;
	tp.n0 = (r % job->nt) * job->nc;
	tp.mc = min64(job->mc, d->m - tp.m0);
	tp.nc = min64(job->nc, d->n - tp.n0);
	if (job->even_n) {
		int64_t ct = r % job->nt, nr = job->kern->nr;

		tp.n0 = ct * job->panels / job->nt * nr;
		tp.nc = min64((ct + 1) * job->panels / job->nt * nr, d->n) - tp.n0;
	}
	tp.ao = d->a_off ? d->a_off[tp.bi] : 0;
	tp.bo = d->b_off ? d->b_off[tp.bi] : 0;
	co = (d->c_off ? d->c_off[tp.bi] : 0) + tp.m0 * d->ldc + tp.n0;
	tp.c = d->c + co;
	tp.bias = d->bias ? d->bias + (d->bias_off ? d->bias_off[tp.bi] : 0) + tp.m0 : NULL;
	tp.cbias = d->col_bias ? d->col_bias + tp.n0 : NULL;
	/* the residual joins once the sum is complete, as a separate Add would */
	tp.res = d->residual ? d->residual + co : NULL;
	return tp;
}

/*
 * Software prefetch of the operands of the next micro-kernel calls. A B
 * panel is used by every row panel of a tile (13 calls for a 104-row tile at
 * avx512, as few as 8 for M = 64) and then left; its first call would load
 * all of it from L3 or memory, a line at a time as the K loop reaches it:
 * rows a plane apart when B is read in place (one 1x1 convolution's 128 rows
 * of a K block span 128 pages, which the hardware prefetchers do not
 * follow), and a fresh 24 KiB run 72 KiB away when it is prepacked. So each
 * call first asks for a slice of the next panel's rows, towards L2 (into L1
 * it would push out the panel in use), all slices together covering it by
 * the time the last row panel is done (after a tile's last panel, the first
 * of the next tile: with one thread, or tiles taken in turn, often this
 * thread's next). For prepacked weights as B at avx512 (the kernel's
 * prefetch_b) the kernel issues the slice itself, one line every other K
 * step: issued in a burst before the call, the ~15 lines of a 197-row
 * GEMM's slice waited on the line-fill buffers when the weights came from
 * memory, and the FMAs behind them (perf, cpu-clock, vit_s16's linear
 * layers in a model's order on a 2-core Sapphire Rapids VM: 4.3 % of their
 * time on that prefetch; in the K loop, 1.1 % on all of the driver's
 * loop). Prefetches do not change what is computed. C is not
 * prefetched: asking for the next call's block of C (into L1, for writing)
 * made mobilenet_v2 6 % slower on Sapphire Rapids (its pointwise layers of
 * K = 16..96, where a call is short and the line fills compete with the
 * kernel's own stores) and gained nothing measurable elsewhere (resnet50
 * and vit_s16 within the noise, a little faster without it); measured with
 * the same build and the C prefetch switched off, five runs interleaved.
 * A prepacked A (a Conv's weights; Winograd's transformed filters) streams
 * from memory too: the K block's first B panel is the first to meet each
 * row panel (MR x kc floats, 4 KiB at avx512, one run on a fresh page), so
 * that pass also asks for the next row panel, towards L2. Measured on a
 * 2-core Sapphire Rapids VM (same tree with and without, runs alternated,
 * best of 4-5): resnet50 56.0-56.4 -> 54.2-54.7 ms at 1 thread and 33.2 ->
 * 31.6 at 2; resnet18, mobilenet_v2 and vit_s16 within the noise.
 * Issued in bursts before each call, though, these prefetches for Conv
 * (the next A row panel, 64 lines at kc 128, and the next B panel's
 * slice) stalled on the line-fill buffers, full of the previous call's
 * stores of C: perf on resnet50 (1 thread, Sapphire Rapids) put 10.8 % of
 * the run in the driver itself, ~90 % of it on those prefetcht1. So at
 * avx512 the kernel takes both (pf for B, pf2 for A: a line of each every
 * pair of K steps), edge panels included; a B packed per tile for MatMul
 * (in the caches already) keeps the burst. resnet50 at 1 thread, CPU time,
 * alternated with the base build: 49.4 -> 46.1 ms (median of the rounds'
 * best), the 1x1 layers 27.2 -> 25.3 ms, the Winograd F(2x2) layers (their
 * 36 batched GEMMs on prepacked filters) 0.97 -> 0.73 ms each.
 * The rows of a B read in place (a Conv's image, rows a plane apart) are
 * now asked for by the kernel too, whole rows of lines at a time
 * (ert_sgemm_epi.pf_row_lines): issued by the driver they were 83 % of its
 * samples on 1x1 256 -> 64 at 56x56 (gemm-bench, perf cpu-clock), 5.5 % of
 * the layer. Where a Conv's B is packed per tile from the image, the pass
 * over a K block asks for the rows the next packing reads (the next K
 * block, or the next tile's first), spread over all of the block's calls:
 * nothing asked for them before, and the packing took them as demand
 * misses on 128 rows a plane apart. resnet50 at 1 thread on the 2-core
 * Sapphire Rapids VM, per layer (op callbacks, process CPU time, best of 10
 * runs, four alternated rounds of one build with and without): 256 -> 64 at
 * 56x56 (B in place) 0.73-0.81 -> 0.64-0.72 ms, 64 -> 64 0.20-0.21 ->
 * 0.18-0.20; B packed per tile: 256 -> 128 at 56x56 1.59-1.63 -> 1.33-1.54,
 * 512 -> 128 at 28x28 0.65-0.74 -> 0.59-0.74.
 */
static void prefetch_rows(const float *p, int64_t ld, int64_t w, int64_t r0, int64_t r1)
{
	if (ld == w) {
		/* a packed panel: one run */
		uintptr_t s = (uintptr_t)(p + r0 * w) & ~(uintptr_t)63;

		for (uintptr_t e = (uintptr_t)(p + r1 * w); s < e; s += 64)
			__builtin_prefetch((const void *)s, 0, 2);
		return;
	}
	for (int64_t r = r0; r < r1; r++) {
		uintptr_t s = (uintptr_t)(p + r * ld) & ~(uintptr_t)63;

		for (uintptr_t e = (uintptr_t)(p + r * ld + w); s < e; s += 64)
			__builtin_prefetch((const void *)s, 0, 2);
	}
}

/* Pack unit @u of a lazily packed A (see sgemm_job.a_lazy): its rows, its K block. */
static void pack_a_unit(struct sgemm_job *job, int64_t u)
{
	const struct ert_sgemm_desc *d = job->d;
	int64_t m0 = u / job->kblocks * job->mc, k0 = u % job->kblocks * job->kc;
	int64_t mc = min64(job->mc, d->m - m0), kc = min64(job->kc, d->k - k0);

	job->kern->pack_a(d->a, d->a_rs, d->a_cs, m0, mc, k0, kc, job->kern->mr,
			  d->a_shared + k0 * job->mpad + m0 * kc);
	atomic_store_explicit(&job->a_state[u], A_PACKED, memory_order_release);
}

/* Claim unit @u for packing: true if this lane is to pack it. */
static bool claim_a_unit(struct sgemm_job *job, int64_t u)
{
	int expect = A_UNPACKED;

	return atomic_load_explicit(&job->a_state[u], memory_order_relaxed) == A_UNPACKED &&
	       atomic_compare_exchange_strong(&job->a_state[u], &expect, A_PACKING);
}

/*
 * K block @k0 of the row tile at @m0 of a lazily packed A, packed: by this
 * lane if no lane has claimed it; else, while another lane packs it, this
 * one packs the row tile's next unclaimed K blocks (which it will need
 * next) and then waits. A claimed unit is being packed by a running lane,
 * so the wait ends; a lane that has not started yet claims nothing.
 */
static const float *a_lazy_block(struct sgemm_job *job, int64_t m0, int64_t k0)
{
	int64_t u = m0 / job->mc * job->kblocks + k0 / job->kc;

	if (atomic_load_explicit(&job->a_state[u], memory_order_acquire) != A_PACKED) {
		if (claim_a_unit(job, u)) {
			pack_a_unit(job, u);
		} else {
			int64_t last = (u / job->kblocks + 1) * job->kblocks;

			for (int64_t v = u + 1; v < last &&
			     atomic_load_explicit(&job->a_state[u], memory_order_relaxed) != A_PACKED;
			     v++)
				if (claim_a_unit(job, v))
					pack_a_unit(job, v);
			while (atomic_load_explicit(&job->a_state[u], memory_order_acquire) != A_PACKED)
				ert_cpu_relax();
		}
	}
	return job->d->a_shared + k0 * job->mpad + m0 * min64(job->kc, job->d->k - k0);
}

/*
 * Pack unit @u of a lazily packed B (see sgemm_job.b_lazy): its column
 * tile's panels, its K block, each where a packing of all of K puts it
 * (panels NR x K apart; one call a panel unless the block is all of K).
 */
static void pack_b_unit(struct sgemm_job *job, int64_t u)
{
	const struct ert_sgemm_desc *s = job->b_src;
	const int nr = job->kern->nr;
	struct tile_pos tp = tile_pos_of(job, u / job->kblocks); /* row tile 0's: its columns */
	int64_t k0 = u % job->kblocks * job->kc, kc = min64(job->kc, s->k - k0);
	int64_t step = kc == s->k ? tp.nc : nr;

	for (int64_t j = 0; j < tp.nc; j += step) {
		int64_t n0 = tp.n0 + j, nc = min64(step, tp.nc - j);
		float *dst = s->b_shared + n0 * s->k + k0 * nr;

		if (s->pack_b)
			s->pack_b(s->pack_ctx, 0, k0, kc, n0, nc, nr, dst);
		else
			job->kern->pack_b(s->b + (s->b_off ? s->b_off[0] : 0), s->b_rs, s->b_cs, k0,
					  kc, n0, nc, nr, dst);
	}
	atomic_store_explicit(&job->b_state[u], A_PACKED, memory_order_release);
}

static bool claim_b_unit(struct sgemm_job *job, int64_t u)
{
	int expect = A_UNPACKED;

	return atomic_load_explicit(&job->b_state[u], memory_order_relaxed) == A_UNPACKED &&
	       atomic_compare_exchange_strong(&job->b_state[u], &expect, A_PACKING);
}

/*
 * K block @k0 of column tile @ct of a lazily packed B, packed: as
 * a_lazy_block(), by this lane if unclaimed, else this lane packs the
 * column tile's next unclaimed K blocks while another packs it, then waits.
 */
static void b_lazy_block(struct sgemm_job *job, int64_t ct, int64_t k0)
{
	int64_t u = ct * job->kblocks + k0 / job->kc;

	if (atomic_load_explicit(&job->b_state[u], memory_order_acquire) == A_PACKED)
		return;
	if (claim_b_unit(job, u)) {
		pack_b_unit(job, u);
		return;
	}
	for (int64_t v = u + 1; v < (ct + 1) * job->kblocks &&
	     atomic_load_explicit(&job->b_state[u], memory_order_relaxed) != A_PACKED; v++)
		if (claim_b_unit(job, v))
			pack_b_unit(job, v);
	while (atomic_load_explicit(&job->b_state[u], memory_order_acquire) != A_PACKED)
		ert_cpu_relax();
}

/*
 * Where the next B panel lies: @p, rows @ld floats apart, @rows of @w floats;
 * p NULL: unknown. Its rows are shared out in even slices over @calls
 * micro-kernel calls, the first of these calls taking slice @q0.
 */
struct next_panel {
	const float *p;
	int64_t ld, rows, w, calls, q0;
};

/*
 * The one K block of a tile whose A and B are both packed panels (a Conv's
 * prepacked weights and its image packed once, ert_sgemm_desc.b_shared), by
 * row panels: each row panel of C, and of the residual, is finished across
 * all of the tile's columns before the next. On the 56x56 1x1 Convs of K = 64
 * (C 3.2 MB, the residual as much, past the 2 MiB L2) the panel order took
 * C and the residual as 128 rows a plane apart, a few lines of each at a
 * time: more streams than the hardware prefetcher follows, so every line of
 * them was a demand miss. By rows, they are 8 runs of whole rows. The B
 * panels (0.8 MB packed) then come from L2 instead of L1, which costs less.
 * Same calls with the same panels and K block: the same bits.
 */
static void run_block_rows(const struct sgemm_job *job, const struct tile_pos *tp,
			   struct ert_sgemm_epi e, const float *ap, int64_t a_ps,
			   const float *bpk, int64_t b_ps, int64_t kc)
{
	const struct ert_sgemm_desc *d = job->d;
	const int MR = job->kern->mr, NR = job->kern->nr;
	const int64_t mc = tp->mc, nc = tp->nc;
	const bool pf_in_k = job->kern->prefetch_b;

	for (int64_t i = 0; i < mc; i += MR) {
		const float *a = ap + (i / MR) * a_ps;
		float *c = tp->c + i * d->ldc;
		const float *res = tp->res ? tp->res + i * d->ldc : NULL;

		e.bias = e.load_c || !tp->bias ? NULL : tp->bias + i;
		for (int64_t j = 0; j < nc; j += NR) {
			e.pf_lines = 0;
			e.pf2_lines = 0;
			/* the next row panel of A, on this one's first call */
			if (j == 0 && i + MR < mc) {
				uintptr_t s = (uintptr_t)(a + a_ps) & ~(uintptr_t)63;
				uintptr_t end = (uintptr_t)(a + a_ps + MR * kc);
				int64_t lines = (int64_t)((end - s + 63) / 64);

				if (pf_in_k) {
					e.pf2 = (const void *)s;
					e.pf2_lines = min64(lines, kc / 2);
					s += (uintptr_t)e.pf2_lines * 64;
				}
				for (; s < end; s += 64)
					__builtin_prefetch((const void *)s, 0, 2);
			}
			e.cbias = tp->cbias ? tp->cbias + j : NULL;
			e.res = res ? res + j : NULL;
			job->kern->fn(kc, a, bpk + (j / NR) * b_ps, NR, c + j, d->ldc,
				      min64(MR, mc - i), min64(NR, nc - j), &e);
		}
	}
}

/*
 * The scale of a finished tile (ert_sgemm_desc.scale, where it is not the
 * kernel's alpha), then its column bias and residual, which the kernel
 * left out: each one operation on the complete sum, as the graph's Mul and
 * Adds; the activation follows (post_act).
 */
static void scale_tile(const struct ert_sgemm_desc *d, const struct tile_pos *tp)
{
	const float s = *d->scale;

	for (int64_t i = 0; i < tp->mc; i++) {
		float *c = tp->c + i * d->ldc;
		const float *r = tp->res ? tp->res + i * d->ldc : NULL;

		for (int64_t j = 0; j < tp->nc; j++) {
			float v = c[j] * s;

			if (tp->cbias)
				v += tp->cbias[j];
			if (r)
				v += r[j];
			c[j] = v;
		}
	}
}

static void run_tile(struct sgemm_job *job, int64_t t, int64_t t_next, float *pa, float *pb)
{
	const struct ert_sgemm_desc *d = job->d;
	const int MR = job->kern->mr, NR = job->kern->nr;
	struct tile_pos tp = tile_pos_of(job, t);
	const int64_t bi = tp.bi, m0 = tp.m0, n0 = tp.n0, mc = tp.mc, nc = tp.nc;
	const int64_t ao = tp.ao, bo = tp.bo;
	float *c = tp.c;
	const float *bias = tp.bias, *res = tp.res;
	const bool direct = d->b_direct && !d->b_packed && !d->pack_b && d->b_cs == 1;
	/*
	 * prepacked weights (B for MatMul and Gemm, A for Conv): the next panel
	 * of a packed B and of a prepacked A asked for by the kernel
	 */
	const bool pf_in_k = job->kern->prefetch_b && (d->b_packed || d->a_packed);
	/* rows of full panels the kernel reads in place (a_direct) */
	const int64_t mfull = job->a_direct ? mc / MR * MR : 0;
	int64_t k0 = 0;

	do {
		int64_t kc = min64(job->kc, d->k - k0);
		struct ert_sgemm_epi e = job->epi;
		const float *ap = pa, *bpk = pb;
		int64_t a_ps = MR * kc, b_ps = NR * kc; /* panel strides */

		e.pf_pairs = d->a_packed;
		e.load_c = d->accumulate || k0 > 0;
		if (k0 + kc < d->k)
			e.act = ERT_EPI_NONE;
		/*
		 * the column bias and the residual join once the sum is complete, as
		 * a separate Add would (after the scale: then in scale_tile())
		 */
		const bool last = k0 + kc >= d->k && !job->post_scale;

		/* Prepacked panels hold all of K: step into them instead of packing. */
		if (job->a_direct) {
			/* only a last panel of fewer rows, at the slot's start */
			if (mfull < mc)
				job->kern->pack_a(d->a + ao, d->a_rs, d->a_cs, m0 + mfull, mc - mfull,
						  k0, kc, MR, pa);
		} else if (job->a_lazy) {
			ap = a_lazy_block(job, m0, k0);
		} else if (d->a_packed) {
			ap = d->a_packed + ao + m0 * d->k + k0 * MR;
			a_ps = MR * d->k;
		} else {
			job->kern->pack_a(d->a + ao, d->a_rs, d->a_cs, m0, mc, k0, kc, MR, pa);
		}
		if (d->b_packed) {
			if (job->b_lazy)
				b_lazy_block(job, t % job->nt, k0);
			bpk = d->b_packed + bo + n0 * d->k + k0 * NR;
			b_ps = NR * d->k;
		} else if (d->pack_b) {
			d->pack_b(d->pack_ctx, bi, k0, kc, n0, nc, NR, pb);
		} else if (!direct) {
			job->kern->pack_b(d->b + bo, d->b_rs, d->b_cs, k0, kc, n0, nc, NR, pb);
		}
		const int64_t calls = (mc + MR - 1) / MR; /* row panels: calls per B panel */
		const int64_t k1 = k0 + kc, kc1 = min64(job->kc, d->k - k1);

		if (job->rows_order) {
			run_block_rows(job, &tp, e, ap, a_ps, bpk, b_ps, kc);
			break;
		}
		/*
		 * B packed per tile from where it lies (a Conv's image, rows a
		 * plane apart): the rows the next packing reads, over all of this
		 * block's calls
		 */
		struct next_panel src = { NULL, NR, 0, NR, 1, 0 };

		if (pf_in_k && d->a_packed && !d->b_packed && !d->pack_b && !direct &&
		    d->b_cs == 1) {
			const int64_t all = (nc + NR - 1) / NR * calls;

			if (k1 < d->k) {
				src = (struct next_panel){ d->b + bo + k1 * d->b_rs + n0, d->b_rs, kc1,
							   nc, all, 0 };
			} else if (t_next >= 0) {
				struct tile_pos np = tile_pos_of(job, t_next);

				src = (struct next_panel){ d->b + np.bo + np.n0, d->b_rs,
							   min64(job->kc, d->k), np.nc, all, 0 };
			}
		}

		for (int64_t j = 0; j < nc; j += NR) {
			const float *bp = bpk + (j / NR) * b_ps;
			int64_t ldb = NR;
			struct next_panel nx = { NULL, NR, kc, NR, calls, 0 };

			if (direct && nc - j >= NR) {
				bp = d->b + bo + k0 * d->b_rs + n0 + j;
				ldb = d->b_rs;
			} else if (direct) {
				job->kern->pack_b(d->b + bo, d->b_rs, 1, k0, kc, n0 + j, nc - j, NR,
						  pb);
				bp = pb;
			}
			/* the next panel of this K block, or the first of the next one */
			if (j + NR < nc) {
				if (!direct)
					nx.p = bpk + (j / NR + 1) * b_ps;
				else if (nc - j - NR >= NR)
					nx = (struct next_panel){ bp + NR, d->b_rs, kc, NR, calls, 0 };
			} else if (k1 < d->k) {
				if (d->b_packed)
					nx = (struct next_panel){ d->b_packed + bo + n0 * d->k + k1 * NR,
								  NR, kc1, NR, calls, 0 };
				else if (direct && nc >= NR)
					nx = (struct next_panel){ d->b + bo + k1 * d->b_rs + n0,
								  d->b_rs, kc1, NR, calls, 0 };
			} else if (t_next >= 0 && (d->b_packed || direct)) {
				/* the lane's next tile's first (unless another lane takes it) */
				struct tile_pos np = tile_pos_of(job, t_next);
				int64_t rows = min64(job->kc, d->k);

				if (d->b_packed)
					nx = (struct next_panel){ d->b_packed + np.bo + np.n0 * d->k, NR,
								  rows, NR, calls, 0 };
				else if (np.nc >= NR)
					nx = (struct next_panel){ d->b + np.bo + np.n0, d->b_rs, rows, NR,
								  calls, 0 };
			}
			/* B packed per tile from where it lies: the next block to pack instead */
			if (src.p) {
				nx = src;
				nx.q0 = j / NR * calls;
			}

			/*
			 * a narrow edge panel (N = 196: 4 columns) three row panels a
			 * call (fn_edge3), its slices of the next panel not asked for:
			 * resnet50's 13 1x1 layers onto 14x14, 1 thread, op
			 * callbacks, best of 10, four alternated rounds: 9.43 -> 9.19
			 * ms (median of the rounds' sums); with the slices asked for
			 * in a burst before each call, about half that gain
			 */
			const bool edge3 = job->kern->fn_edge3 && !job->a_direct && j > 0 &&
					   nc - j <= 16;

			for (int64_t i = 0; i < mc; i += MR) {
				int64_t slice = (nx.rows + nx.calls - 1) / nx.calls;
				int64_t r0 = (nx.q0 + i / MR) * slice;

				if (edge3 && i + 3 * MR <= mc) {
					e.pf_lines = 0;
					e.pf2_lines = 0;
					e.bias = e.load_c || !bias ? NULL : bias + i;
					e.cbias = tp.cbias && last ? tp.cbias + j : NULL;
					e.res = res && last ? res + i * d->ldc + j : NULL;
					job->kern->fn_edge3(kc, ap + (i / MR) * a_ps, a_ps, bp, ldb,
							    c + i * d->ldc + j, d->ldc, nc - j, &e);
					i += 2 * MR;
					continue;
				}

				e.pf_lines = 0;
				e.pf_row_lines = 0;
				e.pf2_lines = 0;
				/*
				 * the kernel takes them on full-width blocks of two
				 * rows or more (a batch-1 Gemm's one row: here)
				 */
				if (nx.p && r0 < nx.rows && pf_in_k && nx.ld != nx.w && mc - i > 1 &&
				    nx.ld * (int64_t)sizeof(float) % 64 == 0) {
					/* rows of a B read in place, all on the same line offset */
					uintptr_t s = (uintptr_t)(nx.p + r0 * nx.ld) & ~(uintptr_t)63;
					uintptr_t rend = (uintptr_t)(nx.p + r0 * nx.ld + nx.w);
					int64_t rl = (int64_t)((rend - s + 63) / 64);
					int64_t r1 = min64(r0 + slice, nx.rows);
					int64_t kr = min64(r1 - r0, (kc + 1) / 2 / rl);

					e.pf = (const void *)s;
					e.pf_lines = kr * rl;
					e.pf_row_lines = rl;
					e.pf_skip = nx.ld * (int64_t)sizeof(float) - rl * 64;
					if (r0 + kr < r1)
						prefetch_rows(nx.p, nx.ld, nx.w, r0 + kr, r1);
				} else if (nx.p && r0 < nx.rows && pf_in_k && nx.ld == nx.w && mc - i > 1) {
					/* one run of lines: the kernel's share first, any rest here */
					uintptr_t s = (uintptr_t)(nx.p + r0 * nx.w) & ~(uintptr_t)63;
					uintptr_t end = (uintptr_t)(nx.p + min64(r0 + slice, nx.rows) * nx.w);
					int64_t lines = (int64_t)((end - s + 63) / 64);

					e.pf = (const void *)s;
					e.pf_lines = min64(lines, (kc + 1) / 2);
					for (s += (uintptr_t)e.pf_lines * 64; s < end; s += 64)
						__builtin_prefetch((const void *)s, 0, 2);
				} else if (nx.p && r0 < nx.rows) {
					prefetch_rows(nx.p, nx.ld, nx.w, r0, min64(r0 + slice, nx.rows));
				}
				/* prepacked A: the next row panel, on its first use (above) */
				if (d->a_packed && j == 0 && i + MR < mc && pf_in_k) {
					const float *na = ap + (i / MR + 1) * a_ps;
					uintptr_t s = (uintptr_t)na & ~(uintptr_t)63;
					uintptr_t end = (uintptr_t)(na + MR * kc);
					int64_t lines = (int64_t)((end - s + 63) / 64);

					e.pf2 = (const void *)s;
					e.pf2_lines = min64(lines, kc / 2);
					for (s += (uintptr_t)e.pf2_lines * 64; s < end; s += 64)
						__builtin_prefetch((const void *)s, 0, 2);
				} else if (d->a_packed && j == 0 && i + MR < mc) {
					prefetch_rows(ap + (i / MR + 1) * a_ps, MR * kc, MR * kc, 0, 1);
				}
				e.bias = e.load_c || !bias ? NULL : bias + i;
				e.cbias = tp.cbias && last ? tp.cbias + j : NULL;
				e.res = res && last ? res + i * d->ldc + j : NULL;
				if (i < mfull)
					job->kern->fn_arows(kc, d->a + ao + (m0 + i) * d->a_rs + k0,
							    d->a_rs, bp, ldb, c + i * d->ldc + j,
							    d->ldc, min64(NR, nc - j), &e);
				else
					(mc - i < MR && job->kern->fn_short ? job->kern->fn_short
									    : job->kern->fn)(
						kc, job->a_direct ? pa : ap + (i / MR) * a_ps, bp, ldb,
						c + i * d->ldc + j, d->ldc, min64(MR, mc - i),
						min64(NR, nc - j), &e);
			}
		}
		k0 += kc;
	} while (k0 < d->k);
	if (job->post_scale)
		scale_tile(d, &tp);
	if (job->post_act)
		for (int64_t i = 0; i < mc; i++)
			ert_cpu_act_apply(d->cpu, &d->act, c + i * d->ldc, nc);
}

/*
 * run_tile() for a bf16 kernel: A and B packed to bf16 pairs (prepacked ones
 * hold all of K in ceil(K / 2) pairs), B from a pack_b callback converted in
 * place, no direct B; the kernel counts K in pairs.
 */
static void run_tile_bf16(const struct sgemm_job *job, int64_t t, float *pa, float *pb)
{
	const struct ert_sgemm_desc *d = job->d;
	const int MR = job->kern->mr, NR = job->kern->nr;
	struct tile_pos tp = tile_pos_of(job, t);
	const int64_t bi = tp.bi, m0 = tp.m0, n0 = tp.n0, mc = tp.mc, nc = tp.nc;
	const int64_t ao = tp.ao, bo = tp.bo;
	float *c = tp.c;
	const float *bias = tp.bias, *res = tp.res;
	const int64_t kq_all = (d->k + 1) / 2;
	int64_t k0 = 0;

	do {
		int64_t kc = min64(job->kc, d->k - k0), kq = (kc + 1) / 2;
		struct ert_sgemm_epi e = job->epi;
		const float *ap = pa, *bpk = pb;
		int64_t a_ps = MR * kq, b_ps = NR * kq; /* panel strides, in pairs */

		e.load_c = d->accumulate || k0 > 0;
		if (k0 + kc < d->k)
			e.act = ERT_EPI_NONE;
		const bool last = k0 + kc >= d->k && !job->post_scale;

		if (d->a_packed) {
			ap = d->a_packed + ao + m0 * kq_all + k0 / 2 * MR;
			a_ps = MR * kq_all;
		} else if (job->kern->a_rows) {
			ert_sbgemm_pack_a_rows(d->a + ao, d->a_rs, d->a_cs, m0, mc, k0, kc, MR, kc,
					       (uint32_t *)(void *)pa);
		} else {
			ert_sbgemm_pack_a_strided(d->a + ao, d->a_rs, d->a_cs, m0, mc, k0, kc, MR,
						  (uint32_t *)(void *)pa);
		}
		if (d->b_packed) {
			bpk = d->b_packed + bo + n0 * kq_all + k0 / 2 * NR;
			b_ps = NR * kq_all;
		} else if (d->pack_b) {
			d->pack_b(d->pack_ctx, bi, k0, kc, n0, nc, NR, pb);
			ert_sbgemm_panels_to_bf16(pb, kc, nc, NR);
		} else {
			ert_sbgemm_pack_b_strided(d->b + bo, d->b_rs, d->b_cs, k0, kc, n0, nc, NR,
						  (uint32_t *)(void *)pb);
		}
		for (int64_t j = 0; j < nc; j += NR) {
			for (int64_t i = 0; i < mc; i += MR) {
				e.bias = e.load_c || !bias ? NULL : bias + i;
				e.cbias = tp.cbias && last ? tp.cbias + j : NULL;
				e.res = res && last ? res + i * d->ldc + j : NULL;
				job->kern->fn(kq, ap + (i / MR) * a_ps, bpk + (j / NR) * b_ps, NR,
					      c + i * d->ldc + j, d->ldc, min64(MR, mc - i),
					      min64(NR, nc - j), &e);
			}
		}
		k0 += kc;
	} while (k0 < d->k);
	if (job->post_scale)
		scale_tile(d, &tp);
	if (job->post_act)
		for (int64_t i = 0; i < mc; i++)
			ert_cpu_act_apply(d->cpu, &d->act, c + i * d->ldc, nc);
}

struct pack_a_job {
	const struct ert_sgemm_desc *d;
	const struct ert_sgemm_kernel *kern;
	float *dst;
};

/* Panels [begin, end) of A, all of K each, as ert_sgemm_pack_a() lays them out. */
static void pack_a_panels(void *arg, int64_t begin, int64_t end)
{
	const struct pack_a_job *j = arg;
	const struct ert_sgemm_desc *d = j->d;
	const int mr = j->kern->mr;
	int64_t m0 = begin * mr, mc = min64(end * mr, d->m) - m0;

	j->kern->pack_a(d->a, d->a_rs, d->a_cs, m0, mc, 0, d->k, mr, j->dst + m0 * d->k);
}

struct pack_b_job {
	const struct ert_sgemm_desc *d;
	const struct ert_sgemm_kernel *kern;
	float *dst;
};

/* Panels [begin, end) of B, all of K each, as ert_sgemm_pack_b() lays them out. */
static void pack_b_panels(void *arg, int64_t begin, int64_t end)
{
	const struct pack_b_job *j = arg;
	const struct ert_sgemm_desc *d = j->d;
	const int nr = j->kern->nr;
	int64_t n0 = begin * nr, nc = min64(end * nr, d->n) - n0;
	float *dst = j->dst + n0 * d->k;

	if (d->pack_b)
		d->pack_b(d->pack_ctx, 0, 0, d->k, n0, nc, nr, dst);
	else
		j->kern->pack_b(d->b + (d->b_off ? d->b_off[0] : 0), d->b_rs, d->b_cs, 0, d->k, n0,
				nc, nr, dst);
}

/* By columns: lane @l's home column tiles are [lane_col0(l), lane_col0(l + 1)). */
static int64_t lane_col0(const struct sgemm_job *job, int64_t l)
{
	return l * job->nt / job->lanes;
}

/* The tile that is item @u of the lanes' parts (see sgemm_job.lanes). */
static int64_t lane_tile(const struct sgemm_job *job, int64_t u)
{
	if (!job->by_cols)
		return u;

	int64_t rows = job->tiles / job->nt, l = 0; /* row tiles of every problem */

	while (l + 1 < job->lanes && rows * lane_col0(job, l + 1) <= u)
		l++;

	int64_t c0 = lane_col0(job, l), w = lane_col0(job, l + 1) - c0;
	int64_t v = u - rows * c0;

	return v / w * job->nt + c0 + v % w;
}

static void lane_main(void *arg, int64_t begin, int64_t end)
{
	struct sgemm_job *job = arg;

	for (int64_t lane = begin; lane < end; lane++) {
		float *pa = job->ws + (size_t)lane * job->slot;
		const int64_t kc = min64(job->d->k, ERT_SGEMM_KC);
		/* B after the slot's A rows (tiles of more than MC rows step into a shared A) */
		float *pb = pa + slot_a_floats(job->d->m, kc < 1 ? 1 : kc);
		bool many = job->tiles > ERT_WORK_ITEMS_MAX;

		for (;;) {
			int64_t t, next;
			uint32_t u;

			if (many) {
				t = atomic_fetch_add(&job->next, 1);
				if (t >= job->tiles)
					break;
				next = t + 1 < job->tiles ? t + 1 : -1;
			} else {
				if (!ert_work_take(job->parts, (uint32_t)job->lanes, (uint32_t)lane, &u))
					break;
				t = lane_tile(job, u);
				next = u + 1 < job->tiles ? lane_tile(job, u + 1) : -1;
			}
			if (job->kern->bf16)
				run_tile_bf16(job, t, pa, pb);
			else
				run_tile(job, t, next, pa, pb);
		}
	}
}

/*
 * ReLU and Clip become a clamp in the kernel's epilogue. A scale
 * (ert_sgemm_desc.scale) is the kernel's alpha where the kernel's sum is
 * the complete one and nothing is added before it: one block of K, no row
 * bias or C, alpha 1; 0 + s x sum rounds as the graph's (0 + sum) x s where
 * s > 0 (a zero keeps its sign then). Otherwise scale_tile() applies it and
 * what follows it. Not a step of the kernels' epilogue: the test for it
 * there made the fp32 kernel about 1 % slower in vit_s16's linear layers
 * (gemm-bench vitchain, Sapphire Rapids, three alternated rounds).
 */
static void epilogue_of(const struct ert_sgemm_desc *d, struct sgemm_job *job)
{
	job->epi.alpha = d->alpha;
	if (d->scale && d->k <= min64(job->kern->kc, ERT_SGEMM_KC) && !d->accumulate && !d->bias &&
	    d->alpha == 1.0f && *d->scale > 0.0f)
		job->epi.alpha = *d->scale;
	else if (d->scale)
		job->post_scale = true;
	if (job->post_scale) {
		job->epi.act = ERT_EPI_NONE;
		job->post_act = d->act.type != ERT_ACT_NONE;
	} else if (d->act.type == ERT_ACT_RELU) {
		job->epi.act = ERT_EPI_RELU;
	} else if (d->act.type == ERT_ACT_CLIP && d->act.p0 <= d->act.p1) {
		job->epi.act = ERT_EPI_CLIP;
		job->epi.lo = d->act.p0;
		job->epi.hi = d->act.p1;
	} else {
		job->epi.act = ERT_EPI_NONE;
		job->post_act = d->act.type != ERT_ACT_NONE;
	}
}

/*
 * B prepacked (constant weights), room for all of A packed (a_shared) or A
 * read in place by the kernel (a_direct: nothing to pack), and A short
 * enough that a K block of all its rows is at most WHOLE_A_BLOCK_BYTES
 * (ViT's 197 tokens at avx512's K block of 128: 100 KiB). Then A is packed
 * once, first, and every tile spans all rows, the threads splitting N (but see
 * WHOLE_A_ROWS_PANELS: with enough rows, on several threads, they split M).
 * Row tiles of at most ERT_SGEMM_MC rows (104 + 93 for 197) each streamed
 * all of their columns of B, so B (2.4 MB of weights for fc1 and fc2, which
 * a model run brings from memory every time) was read once per row tile, and
 * each B panel served 13 micro-kernel calls before it was left; now it is
 * read once and serves 25. The columns are cut so that a tile's C stays
 * within WHOLE_A_C_BYTES (C is loaded and stored once per K block: 197 x
 * 1536 floats would not stay in L2 from one to the next), into a multiple
 * of the threads' count of even shares of N's panels (at most one panel
 * apart), so that threads taking tiles in turn finish together, and at
 * least TAIL_TILES a thread, so that a thread that wakes late or runs
 * slower is made up for by the others taking more. At avx2 (K
 * block 256) 197 rows take 198 KiB, over the limit: on Zen 3 (512 KiB L2)
 * the tiles of all rows ran no faster than two row tiles, within the noise
 * (gemm-bench, vit shapes, 83-86 GFLOP/s either way).
 */
#define WHOLE_A_BLOCK_BYTES (128 << 10)
/* Rows of a tile with A read in place and B packed per tile (ert_sgemm_run()). */
#define A_DIRECT_ROWS 256
#define WHOLE_A_C_BYTES (256 << 10)
#define TAIL_TILES 8
/*
 * On several threads, where A has at least WHOLE_A_ROWS_PANELS row panels a
 * thread, the threads split the rows instead of the columns: lane l's home
 * is row tile l (even shares of the rows, whole panels), cut across N into
 * tiles of at most WHOLE_A_ROWS_C_BYTES of C (at least two, so that a lane
 * that runs ahead can take the other's last). Each lane then packs only
 * the K blocks of its own rows of A (a_lazy_block()) and writes whole rows
 * of C, which the next op (LayerNorm, the next residual) reads by rows on
 * the same core; split by columns, every lane read all of A, half of it
 * packed by the other core, and wrote half of every row. B (the weights)
 * is then read by both lanes rather than half by each: on vit_s16 (2.4 MB
 * for fc1 and fc2) that cost less than it saved. vit_s16 at 2 threads on
 * the 2-vCPU Sapphire Rapids VM (per-op minima of `edgert profile -t 2 -n
 * 20`, summed; six rounds alternated with the base build): 28.77 -> 26.20
 * ms (best of the rounds; medians 29.37 -> 27.85), of which the N = 384
 * layers (q, k, v, proj, fc2) 1.8 ms and the LayerNorms reading their C
 * 0.1 ms; one thread as before (about 50 ms). Same K blocks, the same row
 * and column panels: the same bits.
 */
#define WHOLE_A_ROWS_PANELS 4
#define WHOLE_A_ROWS_C_BYTES (128 << 10)

static bool whole_a_tiles(const struct ert_sgemm_desc *d, struct sgemm_job *job, int64_t want)
{
	const int64_t MR = job->kern->mr, NR = job->kern->nr;
	int64_t mc = round_up(d->m, MR), nt;

	if ((!d->a_shared && !job->a_direct) || !d->b_packed || d->a_packed || job->kern->bf16 ||
	    d->batch != 1 ||
	    d->k <= 0 || mc * job->kc * (int64_t)sizeof(float) > WHOLE_A_BLOCK_BYTES)
		return false;
	job->mc = mc;
	job->mt = 1;
	job->panels = (d->n + NR - 1) / NR;
	if (want > 1 && mc >= WHOLE_A_ROWS_PANELS * MR * want) {
		/* the rows split between the threads: see WHOLE_A_ROWS_PANELS */
		job->mc = round_up((d->m + want - 1) / want, MR);
		job->mt = (d->m + job->mc - 1) / job->mc;
		nt = (job->mc * d->n * (int64_t)sizeof(float) + WHOLE_A_ROWS_C_BYTES - 1) /
		     WHOLE_A_ROWS_C_BYTES;
		job->nt = min64(nt < 2 ? 2 : nt, job->panels);
		job->nc = (job->panels + job->nt - 1) / job->nt * NR;
		job->even_n = true;
		job->rows_home = true;
		return true;
	}
	nt = (mc * d->n * (int64_t)sizeof(float) + WHOLE_A_C_BYTES - 1) / WHOLE_A_C_BYTES;
	/*
	 * Eight a thread at least (where N has the panels): threads that run at
	 * different speeds finish within a small tile of each other. A is read
	 * once per panel whatever the tiles, so finer ones cost only the loop.
	 */
	if (want > 1 && nt < TAIL_TILES * want)
		nt = TAIL_TILES * want;
	nt = round_up(nt, want);
	job->nt = min64(nt, job->panels);
	job->nc = (job->panels + job->nt - 1) / job->nt * NR; /* the widest tile, for slots */
	job->even_n = true;
	return true;
}

/* The split of a job into lanes' home columns, for ert_sgemm_split_of(). */
static void split_out(const struct sgemm_job *job, struct ert_sgemm_split *out)
{
	*out = (struct ert_sgemm_split){ .mt = job->mt, .nt = job->nt, .lanes = job->lanes,
					 .by_cols = job->by_cols, .b_lazy = job->b_lazy,
					 .by_rows = job->rows_home };
	for (int64_t l = 0; job->by_cols && l < job->lanes && l < ERT_MAX_THREADS; l++)
		for (int64_t ct = lane_col0(job, l); ct < lane_col0(job, l + 1); ct++)
			out->lane_cols[l] += tile_pos_of(job, ct).nc;
}

/* ert_sgemm_run(), or with @query only how it would cut the job (nothing run). */
static void sgemm_run(struct ert_threadpool *pool, uint32_t threads,
		      const struct ert_sgemm_desc *d, void *ws, size_t ws_size,
		      struct ert_sgemm_split *query)
{
	struct sgemm_job job;
	uint32_t want = threads ? threads : 1;
	int64_t lanes, MR, NR;

	if (d->m <= 0 || d->n <= 0 || d->batch <= 0)
		return;
	memset(&job, 0, offsetof(struct sgemm_job, a_state));
	job.d = d;
	job.kern = d->kern ? d->kern : &kernels[0];
	MR = job.kern->mr;
	NR = job.kern->nr;
	epilogue_of(d, &job);
	job.ws = (float *)(((uintptr_t)ws + 63) & ~(uintptr_t)63);
	job.slot = slot_floats(d->m, d->n, d->k);
	/* Tiles are whole register blocks: prepacked panels are stepped into by m0, n0. */
	job.kc = min64(job.kern->kc, ERT_SGEMM_KC);
	job.a_direct = d->a_direct && d->a_cs == 1 && !d->a_packed && job.kern->fn_arows &&
		       !job.kern->bf16;

	bool whole_a = whole_a_tiles(d, &job, (int64_t)want);

	/*
	 * Row tiles of even height (197 rows: 104 + 93, not 128 + 69), so that
	 * threads taking one each finish together.
	 */
	if (!whole_a) {
		job.mt = (d->m + ERT_SGEMM_MC / MR * MR - 1) / (ERT_SGEMM_MC / MR * MR);
		job.mc = round_up((d->m + job.mt - 1) / job.mt, MR);
		job.mt = (d->m + job.mc - 1) / job.mc;
	}
	/*
	 * A read in place and B packed per tile: a tile of up to A_DIRECT_ROWS
	 * rows packs B once for all of them (the row tiles of 104 + 93 packed
	 * each head's K^T or V twice in vit_s16's attention products). Nothing
	 * of A is packed, so the slot needs no room for the rows.
	 */
	if (!whole_a && job.a_direct && !d->b_packed && d->m <= A_DIRECT_ROWS) {
		job.mt = 1;
		job.mc = round_up(d->m, MR);
	}

	/*
	 * B packed per tile, and more than one row tile: every row tile would
	 * pack the same B again (a Conv of 2048 output channels: 17 times at
	 * avx2). Pack it once, all of K (below, once the tiles are cut); the
	 * tiles then step into it as into a prepacked B.
	 */
	struct ert_sgemm_desc shared_b;
	const struct ert_sgemm_desc *b_src = d;

	if (d->b_shared && !d->b_packed && !job.kern->bf16 && d->batch == 1 && job.mt > 1 &&
	    d->k > 0) {
		shared_b = *d;
		shared_b.b_packed = d->b_shared;
		shared_b.b_off = NULL;
		shared_b.pack_b = NULL;
		shared_b.b_direct = false;
		d = &shared_b;
		job.d = d;
	}
	/*
	 * B packed once above, and a prepacked A (Conv weights) at least as
	 * large: the threads split the rows instead of the columns, so that
	 * each streams its share of the weights from memory rather than all
	 * of them (every column tile spans all rows). resnet50's 14x14 1x1
	 * layers (weights 1-2 MB, B 0.2-0.8 MB) and its 1x1/2 onto 14x14, 2
	 * threads on a 2-core Sapphire Rapids VM, wall, best of 20 runs in four
	 * alternated rounds: 1024 -> 256 0.42 -> 0.38 ms, 256 -> 1024 0.36 ->
	 * 0.33, 1024 -> 512 0.69 -> 0.65, 512 -> 1024 /2 0.75 -> 0.70. Same K
	 * blocks, tiles of other shapes: the same bits.
	 */
	bool rows_split = want > 1 && d == &shared_b && d->a_packed && d->m >= d->n;
	/* B packed once above, A prepacked, one K block: by row panels */
	job.rows_order = d == &shared_b && d->a_packed && d->k <= job.kc && !job.post_scale;
	/*
	 * With B prepacked (constant weights) nothing of B is packed per tile,
	 * and a tile spanning all of N packs each row of A once. With several
	 * threads, B is usually the larger operand (ViT's linear layers: 2.4 MB
	 * of weights against 0.3 MB of activations), so threads split N: each
	 * streams its share of B and packs the (small) A again. Tiles go N
	 * first, so a thread taking the next row tile finds its columns of B
	 * still in its cache.
	 */
	if (!whole_a) {
		job.nc = !d->b_packed ? min64(d->n, ERT_SGEMM_NC / NR * NR)
			 : want > 1 && d->batch < (int64_t)want && !rows_split
				 ? round_up((d->n + want - 1) / want, NR)
				 : d->n;
		job.nt = (d->n + job.nc - 1) / job.nc;
	}
	/*
	 * Too few tiles to keep every thread busy: cut N finer. Tiles are taken
	 * in order by whichever thread is free, so with several per thread the
	 * last, ragged ones even out. Finer tiles cost an A panel packing each,
	 * unless A is prepacked (Conv weights): then aim for more; with B
	 * prepacked the even row tiles already share the work.
	 */
	int64_t per_thread = d->a_packed ? 4 : d->b_packed ? 1 : 3;

	/* split rows: cut M finer instead, as below for N */
	while (!whole_a && rows_split && d->batch * job.mt * job.nt < per_thread * (int64_t)want &&
	       job.mc > 2 * MR) {
		job.mc = round_up(job.mc / 2, MR);
		job.mt = (d->m + job.mc - 1) / job.mc;
	}
	while (!whole_a && want > 1 && d->batch * job.mt * job.nt < per_thread * (int64_t)want &&
	       job.nc > 2 * NR) {
		job.nc = round_up(job.nc / 2, NR);
		job.nt = (d->n + job.nc - 1) / job.nc;
	}
	while (!whole_a && want > 1 && d->batch * job.mt * job.nt < 2 * (int64_t)want &&
	       job.mc > 2 * MR) {
		job.mc = round_up(job.mc / 2, MR);
		job.mt = (d->m + job.mc - 1) / job.mc;
	}
	/*
	 * N cut between threads: even shares of its panels, a multiple of the
	 * threads in number where N has the panels (as whole_a_tiles()), not
	 * tiles of nc and a short last one. resnet50's 784 columns in tiles of
	 * 240 left one lane 240 + 240 and the other 240 + 64 of every row, its
	 * 3136 in 14 tiles of 240 one lane 7 x 240 and the other 6 x 240 + 16:
	 * the lane with more was still in its last tile when the other ran out,
	 * nothing left to steal (7 % of those layers at 2 threads). Now they
	 * differ by at most the last, partial panel. No tile is wider than
	 * before (nt * nc >= n: the slots fit) and the K blocks stay: the same
	 * bits.
	 */
	if (!whole_a && want > 1 && job.nt > 1) {
		job.panels = (d->n + NR - 1) / NR;
		job.nt = min64(round_up(job.nt, want), job.panels);
		job.nc = (job.panels + job.nt - 1) / job.nt * NR; /* the widest tile, for slots */
		job.even_n = true;
	}
	job.tiles = d->batch * job.mt * job.nt;
	lanes = (int64_t)((ws_size > 64 ? ws_size - 64 : 0) / (job.slot * sizeof(float)));
	if (lanes > want)
		lanes = want;
	if (lanes > ERT_MAX_THREADS)
		lanes = ERT_MAX_THREADS;
	if (lanes > job.tiles)
		lanes = job.tiles;
	if (lanes < 1)
		lanes = 1; /* caller sized ws with ert_sgemm_workspace(): one slot always fits */

	/*
	 * B prepacked and its columns split between lanes: pack A once, all of
	 * K, rather than once per column tile (every tile of a row would pack
	 * the same rows again: on ViT's 197 x 384 x 384 layers about a tenth of
	 * each thread's time at two threads, AVX2). Tiles of all rows
	 * (whole_a) need it on any number of threads. The tiles pack it
	 * themselves, a K block of a row tile at a time, as they first need
	 * it (a_lazy_block()): a lane that finds its block being packed by
	 * another packs the blocks after it meanwhile. A packed first, in a
	 * parallel_for of its own, cost one more fork and join a GEMM (ViT:
	 * 72 a run) and left the threads idle at its end.
	 */
	struct ert_sgemm_desc shared;

	if (!job.a_direct &&
	    (whole_a || (d->a_shared && d->b_packed && !d->a_packed && !job.kern->bf16 &&
			 d->batch == 1 && job.nt > 1 && lanes > 1 && d->k > 0))) {
		int64_t kblocks = (d->k + job.kc - 1) / job.kc;

		if (job.mt * kblocks <= ERT_SGEMM_A_UNITS_MAX) {
			job.a_lazy = true;
			job.kblocks = kblocks;
			job.mpad = round_up(d->m, MR);
			for (int64_t u = 0; u < job.mt * kblocks; u++)
				atomic_init(&job.a_state[u], A_UNPACKED);
		} else if (!query) {
			struct pack_a_job pj = { d, job.kern, d->a_shared };
			int64_t panels = (d->m + MR - 1) / MR;

			/* at least about 16 KiB of A per chunk: smaller ones cost more than they share */
			ert_parallel_for(pool, panels, 1 + 4096 / (MR * d->k), pack_a_panels, &pj);
			shared = *d;
			shared.a_packed = d->a_shared;
			job.d = &shared;
		}
	}
	/*
	 * B packed once: on several lanes by the tiles, a K block of a column
	 * tile when first needed (b_lazy_block()), as A above; else first, its
	 * panels shared out in a parallel_for of its own. That cost a fork and
	 * a join of its own (resnet50: 19 a run), split the panels unevenly
	 * (N = 196: 5 panels, 3 + 2) and left a lane idle at its end. Not with
	 * fewer units than lanes (one K block of one column tile: resnet50's
	 * 1x1/2 128 -> 256 onto 14x14), where one lane would pack all of B
	 * while the others wait for it.
	 */
	if (d == &shared_b) {
		int64_t kblocks = (d->k + job.kc - 1) / job.kc;

		if (lanes > 1 && job.nt * kblocks >= lanes &&
		    job.nt * kblocks <= ERT_SGEMM_B_UNITS_MAX) {
			job.b_lazy = true;
			job.b_src = b_src;
			job.kblocks = kblocks;
			for (int64_t u = 0; u < job.nt * kblocks; u++)
				atomic_init(&job.b_state[u], A_UNPACKED);
		} else if (!query) {
			struct pack_b_job pj = { b_src, job.kern, b_src->b_shared };
			int64_t panels = (d->n + NR - 1) / NR;

			ert_parallel_for(pool, panels, 1 + 4096 / (NR * d->k), pack_b_panels, &pj);
		}
	}
	job.lanes = lanes;
	job.by_cols = job.nt >= lanes && !job.rows_home;
	if (query) {
		split_out(&job, query);
		return;
	}
	atomic_store(&job.next, 0);
	if (job.by_cols) {
		int64_t rows = job.tiles / job.nt;

		for (int64_t l = 0; l < lanes; l++) {
			uint64_t lo = (uint64_t)(rows * lane_col0(&job, l));
			uint64_t hi = (uint64_t)(rows * lane_col0(&job, l + 1));

			atomic_store_explicit(&job.parts[l].lohi, hi << 32 | lo, memory_order_relaxed);
		}
	} else {
		ert_work_parts_split(job.parts, (uint32_t)lanes, (uint64_t)job.tiles);
	}
	ert_parallel_for(pool, lanes, 1, lane_main, &job);
}

void ert_sgemm_run(struct ert_threadpool *pool, uint32_t threads, const struct ert_sgemm_desc *d,
		   void *ws, size_t ws_size)
{
	sgemm_run(pool, threads, d, ws, ws_size, NULL);
}

void ert_sgemm_split_of(uint32_t threads, const struct ert_sgemm_desc *d, size_t ws_size,
			struct ert_sgemm_split *out)
{
	*out = (struct ert_sgemm_split){ 0 };
	sgemm_run(NULL, threads, d, NULL, ws_size, out);
}
