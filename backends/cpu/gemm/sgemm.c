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
#include <string.h>
#include <unistd.h>

#include "cpu/gemm/sgemm.h"

#define MR ERT_SGEMM_MR
#define NR ERT_SGEMM_NR

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static int64_t round_up(int64_t v, int64_t to)
{
	return (v + to - 1) / to * to;
}

static uint32_t machine_lanes(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > ERT_MAX_THREADS ? ERT_MAX_THREADS : (uint32_t)n;
}

/* Floats of one lane's slot: an MC x KC panel of A and a KC x NC panel of B. */
static size_t slot_floats(int64_t m, int64_t n, int64_t k)
{
	int64_t mc = round_up(min64(m, ERT_SGEMM_MC), MR);
	int64_t nc = round_up(min64(n, ERT_SGEMM_NC), NR);
	int64_t kc = min64(k, ERT_SGEMM_KC);

	if (kc < 1)
		kc = 1;
	/* Keep every slot 64-byte aligned. */
	return (size_t)round_up(mc * kc + nc * kc, 16);
}

size_t ert_sgemm_workspace(int64_t m, int64_t n, int64_t k)
{
	return slot_floats(m, n, k) * sizeof(float) * machine_lanes() + 64;
}

void ert_sgemm_pack_a_strided(const float *a, int64_t rs, int64_t cs, int64_t m0, int64_t mc,
			      int64_t k0, int64_t kc, float *dst)
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
			      int64_t n0, int64_t nc, float *dst)
{
	for (int64_t j0 = 0; j0 < nc; j0 += NR) {
		int64_t nr = min64(NR, nc - j0);
		const float *src = b + k0 * rs + (n0 + j0) * cs;

		if (cs == 1 && nr == NR) {
			for (int64_t p = 0; p < kc; p++)
				memcpy(dst + p * NR, src + p * rs, NR * sizeof(float));
		} else {
			for (int64_t p = 0; p < kc; p++)
				for (int64_t j = 0; j < NR; j++)
					dst[p * NR + j] = j < nr ? src[p * rs + j * cs] : 0.0f;
		}
		dst += NR * kc;
	}
}

size_t ert_sgemm_packed_a_floats(int64_t m, int64_t k)
{
	return (size_t)(round_up(m, MR) * k);
}

void ert_sgemm_pack_a(const float *a, int64_t rs, int64_t cs, int64_t m, int64_t k, float *dst)
{
	ert_sgemm_pack_a_strided(a, rs, cs, 0, m, 0, k, dst);
}

size_t ert_sgemm_packed_b_floats(int64_t k, int64_t n)
{
	return (size_t)(round_up(n, NR) * k);
}

void ert_sgemm_pack_b(const float *b, int64_t rs, int64_t cs, int64_t k, int64_t n, float *dst)
{
	ert_sgemm_pack_b_strided(b, rs, cs, 0, k, 0, n, dst);
}

struct sgemm_job {
	const struct ert_sgemm_desc *d;
	float *ws;
	size_t slot;                /* floats per lane */
	int64_t mc, nc, mt, nt;     /* tile sizes and counts */
	int64_t tiles;
	atomic_int_fast64_t next;
};

static void run_tile(const struct sgemm_job *job, int64_t t, float *pa, float *pb)
{
	const struct ert_sgemm_desc *d = job->d;
	int64_t per_batch = job->mt * job->nt;
	int64_t bi = t / per_batch, r = t % per_batch;
	int64_t m0 = (r / job->nt) * job->mc, n0 = (r % job->nt) * job->nc;
	int64_t mc = min64(job->mc, d->m - m0), nc = min64(job->nc, d->n - n0);
	int64_t ao = d->a_off ? d->a_off[bi] : 0, bo = d->b_off ? d->b_off[bi] : 0;
	float *c = d->c + (d->c_off ? d->c_off[bi] : 0) + m0 * d->ldc + n0;
	const float *bias = d->bias ? d->bias + (d->bias_off ? d->bias_off[bi] : 0) + m0 : NULL;
	int64_t k0 = 0;

	do {
		int64_t kc = min64(ERT_SGEMM_KC, d->k - k0);
		bool load_c = d->accumulate || k0 > 0;
		const float *ap = pa, *bpk = pb;
		int64_t a_ps = MR * kc, b_ps = NR * kc; /* panel strides */

		/* Prepacked panels hold all of K: step into them instead of packing. */
		if (d->a_packed) {
			ap = d->a_packed + ao + m0 * d->k + k0 * MR;
			a_ps = MR * d->k;
		} else {
			ert_sgemm_pack_a_strided(d->a + ao, d->a_rs, d->a_cs, m0, mc, k0, kc, pa);
		}
		if (d->b_packed) {
			bpk = d->b_packed + bo + n0 * d->k + k0 * NR;
			b_ps = NR * d->k;
		} else if (d->pack_b) {
			d->pack_b(d->pack_ctx, bi, k0, kc, n0, nc, pb);
		} else {
			ert_sgemm_pack_b_strided(d->b + bo, d->b_rs, d->b_cs, k0, kc, n0, nc, pb);
		}
		for (int64_t j = 0; j < nc; j += NR) {
			const float *bp = bpk + (j / NR) * b_ps;

			for (int64_t i = 0; i < mc; i += MR)
				ert_f32_gemm_ukernel_4x8__scalar(kc, ap + (i / MR) * a_ps, bp,
								 c + i * d->ldc + j, d->ldc,
								 min64(MR, mc - i), min64(NR, nc - j),
								 d->alpha, load_c,
								 load_c || !bias ? NULL : bias + i);
		}
		k0 += kc;
	} while (k0 < d->k);
	if (d->act.type != ERT_ACT_NONE)
		for (int64_t i = 0; i < mc; i++)
			ert_act_apply(&d->act, c + i * d->ldc, nc);
}

static void lane_main(void *arg, int64_t begin, int64_t end)
{
	struct sgemm_job *job = arg;

	for (int64_t lane = begin; lane < end; lane++) {
		float *pa = job->ws + (size_t)lane * job->slot;
		float *pb = pa + round_up(job->mc, MR) * min64(job->d->k, ERT_SGEMM_KC);

		for (;;) {
			int64_t t = atomic_fetch_add(&job->next, 1);

			if (t >= job->tiles)
				break;
			run_tile(job, t, pa, pb);
		}
	}
}

void ert_sgemm_run(struct ert_threadpool *pool, uint32_t threads, const struct ert_sgemm_desc *d,
		   void *ws, size_t ws_size)
{
	struct sgemm_job job;
	uint32_t want = threads ? threads : 1;
	int64_t lanes;

	if (d->m <= 0 || d->n <= 0 || d->batch <= 0)
		return;
	memset(&job, 0, sizeof(job));
	job.d = d;
	job.ws = (float *)(((uintptr_t)ws + 63) & ~(uintptr_t)63);
	job.slot = slot_floats(d->m, d->n, d->k);
	job.mc = min64(d->m, ERT_SGEMM_MC);
	job.nc = min64(d->n, ERT_SGEMM_NC);
	job.mt = (d->m + job.mc - 1) / job.mc;
	job.nt = (d->n + job.nc - 1) / job.nc;
	/* Too few tiles to keep every thread busy: cut N finer (A is re-packed per tile). */
	while (want > 1 && d->batch * job.mt * job.nt < 3 * (int64_t)want && job.nc > 4 * NR) {
		job.nc = round_up(job.nc / 2, NR);
		job.nt = (d->n + job.nc - 1) / job.nc;
	}
	while (want > 1 && d->batch * job.mt * job.nt < 2 * (int64_t)want && job.mc > 4 * MR) {
		job.mc = round_up(job.mc / 2, MR);
		job.mt = (d->m + job.mc - 1) / job.mc;
	}
	job.tiles = d->batch * job.mt * job.nt;
	lanes = (int64_t)((ws_size > 64 ? ws_size - 64 : 0) / (job.slot * sizeof(float)));
	if (lanes > want)
		lanes = want;
	if (lanes > job.tiles)
		lanes = job.tiles;
	if (lanes < 1)
		lanes = 1; /* caller sized ws with ert_sgemm_workspace(): one slot always fits */
	atomic_store(&job.next, 0);
	ert_parallel_for(pool, lanes, 1, lane_main, &job);
}
