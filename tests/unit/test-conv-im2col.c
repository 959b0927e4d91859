/* SPDX-License-Identifier: MIT */
/*
 * The implicit im2col's avx512 gather (cpu/conv/conv-im2col.h) called
 * directly, panel by panel, against an im2col worked out here float by
 * float: the same bits in every place (it only moves floats; zeros in the
 * padding and past the panel's last pixel). Awkward shapes: odd planes,
 * stride 2 with pads on 1x1 windows, asymmetric pads with dilation, K rows
 * starting mid-window and ending before the last plane, partial last
 * panels, 16, 32 and 48 columns a panel. The Conv op at every level on
 * such shapes, batch > 1 included: test-cpu-levels.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/conv/conv-im2col.h"
#include "cpu/conv/conv-smallplane.h"
#include "cpu/conv/conv-stem.h"
#include "cpu/cpu-impl.h"
#include "cpu/gemm/sgemm.h"
#include "cpu/isa.h"
#include "ert-test.h"

struct gcase {
	const char *name;
	int64_t c, h, w, kh, kw, sh, sw, dh, dw;
	int64_t pads[4]; /* top, left, bottom, right */
	int64_t k0, kc;  /* K rows of each call; kc 0: all of K from k0 */
};

static const struct gcase gcases[] = {
	/* resnet's projection shortcut shape, fewer channels */
	{ "1x1/2 56x56", 9, 56, 56, 1, 1, 2, 2, 1, 1, { 0 }, 0, 0 },
	{ "1x1/2 odd 13x15, pads", 11, 13, 15, 1, 1, 2, 2, 1, 1, { 1, 0, 0, 1 }, 0, 0 },
	/* a K block from plane 5 to plane 34 of 37 */
	{ "1x1/2 29x31, K block mid-image", 37, 29, 31, 1, 1, 2, 2, 1, 1, { 0 }, 5, 30 },
	{ "1x1/3 odd 17x19", 6, 17, 19, 1, 1, 3, 3, 1, 1, { 0 }, 2, 0 },
	{ "3x3/2 15x14, K starting mid-window", 5, 15, 14, 3, 3, 2, 2, 1, 1, { 1, 1, 1, 1 }, 7,
	  31 },
	{ "3x3/2 dilation 2, asymmetric pads", 4, 17, 13, 3, 3, 2, 2, 2, 2, { 0, 1, 2, 0 }, 0, 0 },
	/* rows of 21 outputs: vectors on one output row (one window), across two, and padded */
	{ "3x3/2 37x41, pads", 6, 37, 41, 3, 3, 2, 2, 1, 1, { 1, 1, 1, 1 }, 4, 47 },
	{ "2x2/2 odd 21x35", 3, 21, 35, 2, 2, 2, 2, 1, 1, { 0 }, 0, 0 },
	{ "1x3 stride (1, 3)", 7, 9, 20, 1, 3, 1, 3, 1, 1, { 0, 1, 0, 1 }, 1, 18 },
};

/* The float B(q, o) of the implicit im2col: plane q / taps, tap q % taps, output pixel o. */
static float ref_at(const struct gcase *gc, const float *x, int64_t ow_n, int64_t q, int64_t o)
{
	int64_t taps = gc->kh * gc->kw, ci = q / taps, t = q % taps;
	int64_t iy = o / ow_n * gc->sh - gc->pads[0] + t / gc->kw * gc->dh;
	int64_t ix = o % ow_n * gc->sw - gc->pads[1] + t % gc->kw * gc->dw;

	if (iy < 0 || iy >= gc->h || ix < 0 || ix >= gc->w)
		return 0.0f;
	return x[(ci * gc->h + iy) * gc->w + ix];
}

ERT_TEST(im2col_gather_same_floats)
{
	int ran = 0;

	if (ert_cpu_isa_best() < ERT_ISA_AVX512) {
		printf("  (no avx512 on this CPU: the gather is not built to run)\n");
		return;
	}
	for (size_t i = 0; i < sizeof(gcases) / sizeof(gcases[0]); i++) {
		const struct gcase *gc = &gcases[i];
		const int64_t oh_n = (gc->h + gc->pads[0] + gc->pads[2] - gc->dh * (gc->kh - 1) - 1) /
					     gc->sh + 1;
		const int64_t ow_n = (gc->w + gc->pads[1] + gc->pads[3] - gc->dw * (gc->kw - 1) - 1) /
					     gc->sw + 1;
		const int64_t n = oh_n * ow_n, sp = gc->h * gc->w, taps = gc->kh * gc->kw;
		const int64_t kc = gc->kc ? gc->kc : gc->c * taps - gc->k0;
		const struct ert_conv_geom g = {
			.nsp = 2,
			.in = { 1, gc->h, gc->w },
			.k = { 1, gc->kh, gc->kw },
			.stride = { 1, gc->sh, gc->sw },
			.dil = { 1, gc->dh, gc->dw },
			.pad_b = { 0, gc->pads[0], gc->pads[1] },
			.pad_e = { 0, gc->pads[2], gc->pads[3] },
			.out = { 1, oh_n, ow_n },
			.win = { 1, (gc->kh - 1) * gc->dh + 1, (gc->kw - 1) * gc->dw + 1 },
		};
		/* exactly the planes: reads past the image are ASan's to catch */
		float *x = malloc((size_t)(gc->c * sp) * sizeof(float));
		float *got = malloc((size_t)(48 * kc) * sizeof(float));
		float *want = malloc((size_t)(48 * kc) * sizeof(float));
		uint32_t seed = 7 + (uint32_t)i;

		REQUIRE(x && got && want);
		for (int64_t k = 0; k < gc->c * sp; k++) {
			seed = seed * 1664525u + 1013904223u;
			/* never 0: a zero of the padding cannot pass for a pixel */
			x[k] = (float)(seed >> 8) / (float)(1 << 24) + 0.5f;
		}
		for (int nr16 = 1; nr16 <= 3; nr16++) {
			const int64_t w = 16 * nr16;

			for (int64_t n0 = 0; n0 < n; n0 += w) {
				int64_t nv = n - n0 < w ? n - n0 : w;

				memset(got, 0xff, (size_t)(w * kc) * sizeof(float));
				ert_conv_im2col_gather__avx512(x, sp, &g, n0, nv, nr16, gc->k0, kc, got);
				for (int64_t q = 0; q < kc; q++)
					for (int64_t j = 0; j < w; j++)
						want[q * w + j] = j < nv ? ref_at(gc, x, ow_n, gc->k0 + q,
										 n0 + j)
									 : 0.0f;
				if (memcmp(got, want, (size_t)(w * kc) * sizeof(float))) {
					fprintf(stderr, "%s: %d columns a panel, panel at %lld differs\n",
						gc->name, (int)w, (long long)n0);
					CHECK(false);
				}
				ran++;
			}
		}
		free(x);
		free(got);
		free(want);
	}
	CHECK(ran > 0);
}

/*
 * test-cpu-levels.c's 1x1/2 rows reach the im2col GEMM (and so the gather,
 * at avx512 and up: a strided window of one tap in two dimensions, no column
 * phases), not the small-plane GEMM or the stem kernel: 300 -> 40 channels
 * from 31x33 with pads (1, 0, 0, 1) onto 16x17, 270 -> 200 from 29x31 onto
 * 15x16.
 */
ERT_TEST(im2col_rows_reach_the_gather)
{
	static const struct {
		int64_t c, m, h, w, pads[4], oh, ow;
	} rows[] = {
		{ 300, 40, 31, 33, { 1, 0, 0, 1 }, 16, 17 },
		{ 270, 200, 29, 31, { 0 }, 15, 16 },
	};
	int asked = 0;

	for (int isa = ERT_ISA_AVX512; isa <= (int)ert_cpu_isa_best(); isa++) {
		const struct ert_cpu cpu = {
			.isa = (enum ert_cpu_isa)isa, .num_threads = 1,
			.gemm = ert_sgemm_kernel_for((enum ert_cpu_isa)isa),
		};

		for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
			const struct ert_conv_geom g = {
				.nsp = 2,
				.in = { 1, rows[i].h, rows[i].w },
				.k = { 1, 1, 1 },
				.stride = { 1, 2, 2 },
				.dil = { 1, 1, 1 },
				.pad_b = { 0, rows[i].pads[0], rows[i].pads[1] },
				.pad_e = { 0, rows[i].pads[2], rows[i].pads[3] },
				.out = { 1, rows[i].oh, rows[i].ow },
				.win = { 1, 1, 1 },
			};

			CHECK(ert_conv_sp_kernel(&cpu, &g, rows[i].c, rows[i].m) == NULL);
			CHECK(ert_conv_stem_kernel(&cpu, &g, rows[i].c, rows[i].m) == NULL);
			asked++;
		}
	}
	if (ert_cpu_isa_best() >= ERT_ISA_AVX512)
		CHECK(asked > 0);
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(im2col_gather_same_floats),
	      ERT_TEST_ENTRY(im2col_rows_reach_the_gather))
