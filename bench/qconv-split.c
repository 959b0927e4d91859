/* SPDX-License-Identifier: MIT */
/*
 * qconv-split: where an int8 convolution's time goes in the packed int8 GEMM
 * (cpu/qgemm/qgemm.h) at one kernel level, at int8 resnet50's layer sizes:
 * the B packing of the activations, the micro-kernel and the fixed-rule
 * block epilogue, each layer's work driven the way qlinalg-gemm.c's
 * qconv_item() drives it (tiles of output pixels, B packed once per tile,
 * panel by panel, K in the kernel's kc4 blocks, each micro-tile finished by
 * epi_rows right after its last K block). Three runs per layer, each a
 * prefix of the pipeline: pack; pack + kernel; pack + kernel + epilogue;
 * the differences are the kernel's and the epilogue's share (no timer
 * inside the loops); and a fourth of the epilogue calls alone ("epi-only",
 * the raw sums in L1: the less noisy figure on a busy machine). The B source is a K x N byte matrix: the input planes
 * of a 1x1 layer, a stand-in for a 3x3 layer's im2col rows (the im2col
 * itself is not timed here: `perf record` over `edgert bench` shows it, as
 * qconv_item).
 *
 *   cc -O2 -Wno-unused-parameter -D_GNU_SOURCE -Ilibruntime/include -Ilibruntime -Ibackends -I. \
 *      bench/qconv-split.c build/libedgert.a -lprotobuf-c -ljpeg -lpng16 -lz -lm \
 *      -lpthread -ldrm -lOpenCL -lvulkan -o build/qconv-split
 *   [ERT_CPU_ISA=avx2|avx512|avx512vnni|amx] build/qconv-split [REPS]
 *
 * Times are process CPU time, 1 thread, the minimum over REPS (default 5)
 * runs of each prefix.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu/cpu-impl.h"
#include "cpu/qgemm/qgemm.h"

#define TILE_LD ERT_QGEMM_NR_MAX
#define B_BUDGET (192 * 1024)

struct layer {
	const char *name;
	int64_t m, k, n;           /* output channels, cin x window, output pixels */
};

static const struct layer layers[] = {
	{ "s1 1x1 64->256 56x56", 256, 64, 3136 },
	{ "s1 1x1 256->64 56x56", 64, 256, 3136 },
	{ "s1 3x3 64 56x56", 64, 576, 3136 },
	{ "s2 3x3 128 28x28", 128, 1152, 784 },
	{ "s2 1x1 128->512 28x28", 512, 128, 784 },
	{ "s3 3x3 256 14x14", 256, 2304, 196 },
	{ "s3 1x1 1024->256 14x14", 256, 1024, 196 },
	{ "s4 3x3 512 7x7", 512, 4608, 49 },
	{ "s4 1x1 512->2048 7x7", 2048, 512, 49 },
};

static double cpu_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static int64_t rup(int64_t v, int64_t to)
{
	return (v + to - 1) / to * to;
}

/* qlinalg-gemm.c's tile_cols(): about B_BUDGET of packed B, whole panels, at most 8. */
static int64_t tile_cols(const struct ert_qgemm_kernel *k, int64_t K, int64_t n)
{
	int64_t nr = ert_qgemm_nr(k), nc = B_BUDGET / (ert_qgemm_k4(K) * 4) / nr * nr;

	nc = nc < nr ? nr : nc > 8 * nr ? 8 * nr : nc;
	return min64(nc, rup(n, k->vc));
}

struct work {
	const struct ert_qgemm_kernel *k;
	const struct layer *l;
	const uint8_t *a;          /* packed A blocks, then the row sums */
	size_t a_blk;
	const uint8_t *src;        /* K x N source bytes (int8) */
	uint8_t *bp, *y;
	int32_t *c;
	int32_t *c0, *c1, *mult, *shift;
};

/* Rows [m0, m1) of a tile's nc columns from p0 (packed B at w->bp), up to @stage. */
static void run_rows(const struct work *w, int stage, int64_t p0, int64_t nc, int64_t m0,
		     int64_t m1)
{
	const struct ert_qgemm_kernel *k = w->k;
	const struct layer *l = w->l;
	const int64_t K4 = ert_qgemm_k4(l->k), NR = ert_qgemm_nr(k);
	const size_t step = ert_qgemm_a_step_bytes(k);
	struct ert_qgemm_epi e = { .mode = ERT_QGEMM_OUT_FIXED, .zp = -3, .lo = -128, .hi = 127 };

	for (int64_t j0 = 0; j0 < nc; j0 += NR) {
		int64_t wd = min64(NR, nc - j0), bw = nc - j0 < NR ? rup(nc - j0, k->vc) : NR;
		ert_qgemm_ukernel_fn fn = k->ukernel[(wd + k->vc - 1) / k->vc - 1];
		const uint8_t *bpp = w->bp + j0 * K4 * 4;

		for (int64_t k0 = 0; k0 < K4; k0 += k->kc4) {
			int64_t kc = min64(k->kc4, K4 - k0);
			bool last = k0 + kc >= K4;

			for (int64_t i0 = m0; i0 < m1; i0 += k->mr) {
				int32_t *c = w->c + (i0 - m0) * TILE_LD;
				const struct ert_qgemm_rows r = { .c0 = w->c0 + i0, .c1 = w->c1 + i0,
								  .mult1 = w->mult + i0,
								  .shift1 = w->shift + i0 };

				if (stage < 3)
					fn(kc, w->a + (size_t)(i0 / k->mr) * w->a_blk + (size_t)k0 * step,
					   bpp + k0 * bw * 4, bw, c, TILE_LD, k0 > 0);
				if (last && stage >= 2)
					k->epi_rows(c, TILE_LD, min64(k->mr, m1 - i0), wd, &e, &r,
						    w->y + i0 * l->n + p0 + j0, l->n);
			}
		}
	}
}

/*
 * One layer's run up to @stage: 0 pack, 1 + kernel, 2 + epilogue; 3 the
 * epilogue calls alone (on whatever raw sums the scratch tile holds).
 */
static void run(const struct work *w, int stage)
{
	const struct layer *l = w->l;
	const int64_t nct = tile_cols(w->k, l->k, l->n);

	for (int64_t p0 = 0; p0 < l->n; p0 += nct) {
		int64_t nc = min64(nct, l->n - p0);

		if (stage < 3)
			ert_qgemm_pack_b(w->k, w->src + p0, true, l->n, 1, l->k, nc, w->bp, NULL);
		/* rows in chunks of 256 (qlinalg-gemm.c's C_ROWS), each over the tile's panels */
		for (int64_t m0 = 0; stage >= 1 && m0 < l->m; m0 += 256)
			run_rows(w, stage, p0, nc, m0, min64(m0 + 256, l->m));
	}
}

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 5;
	enum ert_cpu_isa isa;
	struct ert_err err;
	const struct ert_qgemm_kernel *k;
	double tot[4] = { 0, 0, 0, 0 };

	if (ert_cpu_isa_choose(0, &isa, &err) != ERT_OK) {
		fprintf(stderr, "qconv-split: %s\n", err.msg);
		return 1;
	}
	k = ert_qgemm_kernel_for(isa);
	if (!k) {
		fprintf(stderr, "qconv-split: no int8 GEMM at level %s\n", ert_cpu_isa_name(isa));
		return 1;
	}
	printf("level %s, kernel %s, 1 thread, min of %d runs, ms\n", ert_cpu_isa_name(isa),
	       k->name, reps < 1 ? 1 : reps);
	printf("%-26s %8s %8s %8s %8s %7s %7s %7s %8s\n", "layer", "total", "pack", "kernel", "epi",
	       "pack%", "kern%", "epi%", "epi-only");
	for (size_t li = 0; li < sizeof(layers) / sizeof(layers[0]); li++) {
		const struct layer *l = &layers[li];
		const int64_t nblk = (l->m + k->mr - 1) / k->mr;
		struct work w = { .k = k, .l = l, .a_blk = ert_qgemm_a_block_bytes(k, l->k) };
		uint8_t *wt = malloc((size_t)(l->m * l->k)), *src = malloc((size_t)(l->k * l->n));
		uint8_t *a = aligned_alloc(64, rup((int64_t)(nblk * w.a_blk), 64));
		int32_t *rs = calloc((size_t)nblk * k->mr, sizeof(int32_t));
		double best[4];
		uint32_t s = 12345;

		for (int64_t i = 0; i < l->m * l->k; i++)
			wt[i] = (uint8_t)((s = s * 1664525u + 1013904223u) >> 24);
		for (int64_t i = 0; i < l->k * l->n; i++)
			src[i] = (uint8_t)((s = s * 1664525u + 1013904223u) >> 24);
		for (int64_t b = 0; b < nblk; b++)
			ert_qgemm_pack_a_block(k, wt + b * k->mr * l->k, false, l->k, 1,
					       min64(k->mr, l->m - b * k->mr), l->k,
					       a + (size_t)b * w.a_blk, rs + b * k->mr);
		w.a = a;
		w.src = src;
		w.bp = aligned_alloc(64, rup((int64_t)ert_qgemm_b_bytes(k, l->k, 8 * 48), 64));
		w.y = malloc((size_t)(l->m * l->n));
		w.c = aligned_alloc(64, (size_t)256 * TILE_LD * sizeof(int32_t));
		w.c0 = calloc((size_t)l->m, sizeof(int32_t));
		w.c1 = calloc((size_t)l->m, sizeof(int32_t));
		w.mult = malloc((size_t)l->m * sizeof(int32_t));
		w.shift = malloc((size_t)l->m * sizeof(int32_t));
		for (int64_t i = 0; i < l->m; i++) {
			w.c0[i] = -(int32_t)(i * 37 % 1000);
			w.mult[i] = 1300000000 + (int32_t)(i * 7919 % 500000000);
			w.shift[i] = -8 - (int32_t)(i % 4);
		}
		for (int st = 0; st < 4; st++) {
			best[st] = 1e30;
			run(&w, st); /* fault the buffers in */
			for (int r = 0; r < (reps < 1 ? 1 : reps); r++) {
				double t0 = cpu_now();

				run(&w, st);
				t0 = cpu_now() - t0;
				best[st] = t0 < best[st] ? t0 : best[st];
			}
		}
		double pack = best[0], kern = best[1] - best[0], epi = best[2] - best[1];

		printf("%-26s %8.3f %8.3f %8.3f %8.3f %6.1f%% %6.1f%% %6.1f%% %8.3f\n", l->name,
		       1e3 * best[2], 1e3 * pack, 1e3 * kern, 1e3 * epi, 100 * pack / best[2],
		       100 * kern / best[2], 100 * epi / best[2], 1e3 * best[3]);
		tot[0] += pack;
		tot[1] += kern;
		tot[2] += epi;
		tot[3] += best[3];
		free(wt);
		free(src);
		free(a);
		free(rs);
		free(w.bp);
		free(w.y);
		free(w.c);
		free(w.c0);
		free(w.c1);
		free(w.mult);
		free(w.shift);
	}
	double all = tot[0] + tot[1] + tot[2];

	printf("%-26s %8.3f %8.3f %8.3f %8.3f %6.1f%% %6.1f%% %6.1f%% %8.3f\n", "sum", 1e3 * all,
	       1e3 * tot[0], 1e3 * tot[1], 1e3 * tot[2], 100 * tot[0] / all, 100 * tot[1] / all,
	       100 * tot[2] / all, 1e3 * tot[3]);
	return 0;
}
