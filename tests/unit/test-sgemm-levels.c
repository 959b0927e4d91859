/* SPDX-License-Identifier: MIT */
/*
 * The fp32 GEMM (cpu/gemm/sgemm.h) below the ops, at every SIMD level this
 * CPU has: the micro-kernels' edges, the levels' packing against the
 * reference packing, A and B packed once for every tile (shared A, shared
 * B, the shared A past the lazy units) and the workspace bounds. The ops
 * that run on it (Conv, MatMul, Gemm) are test-cpu-levels'.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu-impl.h"
#include "cpu/gemm/sgemm.h"
#include "ert-op-test.h"
#include "ert-test.h"

/*
 * The GEMM micro-kernels alone: every mr x nr edge, with and without load_c,
 * the row bias and the column bias.
 */
ERT_TEST(gemm_ukernel_edges)
{
	const struct ert_sgemm_kernel *ref = ert_sgemm_kernel_for(ERT_ISA_SCALAR);
	enum ert_cpu_isa best = ert_cpu_isa_best();
	uint32_t seed = 7;

	for (int isa = ERT_ISA_AVX2; isa <= (int)best; isa++) {
		const struct ert_sgemm_kernel *k = ert_sgemm_kernel_for((enum ert_cpu_isa)isa);
		int64_t kc = 37, ldc = 64;
		float *a = malloc(sizeof(float) * (size_t)(kc * k->mr));
		float *b = malloc(sizeof(float) * (size_t)(kc * k->nr));
		float *c = malloc(sizeof(float) * (size_t)(k->mr * ldc));
		float *want = malloc(sizeof(float) * (size_t)(k->mr * ldc));
		float *pa = malloc(sizeof(float) * (size_t)(kc * ref->mr));
		float *pb = malloc(sizeof(float) * (size_t)(kc * ref->nr));
		float bias[ERT_SGEMM_MR_MAX], cbias[ERT_SGEMM_NR_MAX];

		REQUIRE(a && b && c && want && pa && pb);
		for (int64_t i = 0; i < kc * k->mr; i++)
			a[i] = frand_r(&seed);
		for (int64_t i = 0; i < kc * k->nr; i++)
			b[i] = frand_r(&seed);
		for (int i = 0; i < ERT_SGEMM_MR_MAX; i++)
			bias[i] = frand_r(&seed);
		for (int i = 0; i < ERT_SGEMM_NR_MAX; i++)
			cbias[i] = frand_r(&seed);
		for (int64_t mr = 1; mr <= k->mr; mr++) {
			for (int64_t nr = 1; nr <= k->nr; nr++) {
				/* 3: load_c + column bias; 4: row and column bias; 5: column bias, alpha */
				for (int mode = 0; mode < 6; mode++) {
					struct ert_sgemm_epi e = {
						.alpha = mode == 2 || mode == 5 ? 0.25f : 1.0f,
						.load_c = mode == 1 || mode == 3,
						.bias = mode == 0 || mode == 4 ? bias : NULL,
						.cbias = mode >= 3 ? cbias : NULL,
						.act = mode == 2 || mode == 3 ? ERT_EPI_CLIP
						       : mode == 5 ? ERT_EPI_NONE : ERT_EPI_RELU,
						.lo = -0.3f, .hi = 0.4f,
					};

					for (int64_t i = 0; i < k->mr * ldc; i++)
						c[i] = want[i] = (float)i * 1e-3f;
					k->fn(kc, a, b, k->nr, c, ldc, mr, nr, &e);
					/* the reference, 4x8 blocks at a time from the same panels */
					for (int64_t i0 = 0; i0 < mr; i0 += ref->mr) {
						for (int64_t j0 = 0; j0 < nr; j0 += ref->nr) {
							for (int64_t p = 0; p < kc; p++) {
								for (int i = 0; i < ref->mr; i++)
									pa[p * ref->mr + i] =
										i0 + i < k->mr ? a[p * k->mr + i0 + i] : 0;
								for (int j = 0; j < ref->nr; j++)
									pb[p * ref->nr + j] =
										j0 + j < k->nr ? b[p * k->nr + j0 + j] : 0;
							}
							struct ert_sgemm_epi re = e;

							re.bias = e.bias ? e.bias + i0 : NULL;
							re.cbias = e.cbias ? e.cbias + j0 : NULL;
							ref->fn(kc, pa, pb, ref->nr, want + i0 * ldc + j0, ldc,
								mr - i0 < ref->mr ? mr - i0 : ref->mr,
								nr - j0 < ref->nr ? nr - j0 : ref->nr, &re);
						}
					}
					double worst = 0;

					for (int64_t i = 0; i < k->mr * ldc; i++) {
						double d = fabs((double)c[i] - want[i]);

						worst = d > worst ? d : worst;
					}
					if (!(worst <= 1e-5)) {
						fprintf(stderr, "%s %ldx%ld mode %d: differs by %g\n", k->name,
							(long)mr, (long)nr, mode, worst);
						*ert_test_failed_ = 1;
					}
				}
			}
		}
		free(a);
		free(b);
		free(c);
		free(want);
		free(pa);
		free(pb);
	}
}

/*
 * fn_edge3 (three row panels of a narrow edge panel a call) gives the bits
 * of three calls of the level's fn: 1 to 16 columns, odd and even K, the
 * row bias, an accumulated C, the column bias, a residual, ReLU and Clip,
 * A's panels a_ps apart as in a prepacked A of a longer K.
 */
ERT_TEST(gemm_ukernel_edge3)
{
	enum ert_cpu_isa best = ert_cpu_isa_best();
	uint32_t seed = 13;
	int levels = 0;

	for (int isa = ERT_ISA_SCALAR; isa <= (int)best; isa++) {
		const struct ert_sgemm_kernel *k = ert_sgemm_kernel_for((enum ert_cpu_isa)isa);
		const int64_t kcs[] = { 1, 37, 128 }, ldc = 21, a_ps = 130 * 8;

		if (!k->fn_edge3)
			continue;
		levels++;

		float *a = malloc(sizeof(float) * (size_t)(3 * a_ps));
		float *b = malloc(sizeof(float) * (size_t)(128 * k->nr));
		float *res = malloc(sizeof(float) * (size_t)(3 * k->mr * ldc));
		float *c = malloc(sizeof(float) * (size_t)(3 * k->mr * ldc));
		float *want = malloc(sizeof(float) * (size_t)(3 * k->mr * ldc));
		float bias[3 * ERT_SGEMM_MR_MAX], cbias[ERT_SGEMM_NR_MAX];

		REQUIRE(k->mr == 8 && a && b && res && c && want);
		for (int64_t i = 0; i < 3 * a_ps; i++)
			a[i] = frand_r(&seed);
		for (int64_t i = 0; i < 128 * k->nr; i++)
			b[i] = frand_r(&seed);
		for (int64_t i = 0; i < 3 * k->mr * ldc; i++)
			res[i] = frand_r(&seed);
		for (int i = 0; i < 3 * ERT_SGEMM_MR_MAX; i++)
			bias[i] = frand_r(&seed);
		for (int i = 0; i < ERT_SGEMM_NR_MAX; i++)
			cbias[i] = frand_r(&seed);
		for (size_t ki = 0; ki < sizeof(kcs) / sizeof(kcs[0]); ki++) {
			for (int64_t nr = 1; nr <= 16; nr += nr < 4 ? 1 : 4) {
				for (int mode = 0; mode < 3; mode++) {
					int64_t kc = kcs[ki];
					struct ert_sgemm_epi e = {
						.alpha = 1.0f, .load_c = mode == 1,
						.bias = mode == 0 ? bias : NULL,
						.cbias = mode == 2 ? cbias : NULL,
						.res = mode != 1 ? res : NULL,
						.act = mode == 2 ? ERT_EPI_CLIP : ERT_EPI_RELU,
						.lo = -0.3f, .hi = 0.4f,
					};

					for (int64_t i = 0; i < 3 * k->mr * ldc; i++)
						c[i] = want[i] = (float)i * 1e-3f;
					for (int g = 0; g < 3; g++) {
						struct ert_sgemm_epi eg = e;

						eg.bias = e.bias ? e.bias + g * k->mr : NULL;
						eg.res = e.res ? e.res + g * k->mr * ldc : NULL;
						k->fn(kc, a + g * a_ps, b, k->nr, want + g * k->mr * ldc, ldc,
						      k->mr, nr, &eg);
					}
					k->fn_edge3(kc, a, a_ps, b, k->nr, c, ldc, nr, &e);
					if (memcmp(c, want, sizeof(float) * (size_t)(3 * k->mr * ldc))) {
						fprintf(stderr, "%s edge3 kc %ld nr %ld mode %d: differs\n",
							k->name, (long)kc, (long)nr, mode);
						*ert_test_failed_ = 1;
					}
				}
			}
		}
		free(a);
		free(b);
		free(res);
		free(c);
		free(want);
	}
	CHECK(levels > 0 || best < ERT_ISA_AVX512);
}

/*
 * The lines a kernel is given to prefetch (ert_sgemm_epi.pf for the next B
 * panel, pf2 for a prepacked A's next row panel) change no bit of C: every
 * level's kernel, full blocks and edges (a one-row panel, 4, 16, 20, 32,
 * 40 columns: the avx512 kernel's narrow variants take the lines too), odd
 * and even K, as many lines as the driver gives and none; a test a step
 * (MatMul's), in pairs of steps (Conv's), and in pairs as rows of 3 lines
 * (pf_row_lines: a B read in place).
 */
ERT_TEST(gemm_ukernel_prefetch_same_bits)
{
	enum ert_cpu_isa best = ert_cpu_isa_best();
	uint32_t seed = 11;

	for (int isa = ERT_ISA_SCALAR; isa <= (int)best; isa++) {
		const struct ert_sgemm_kernel *k = ert_sgemm_kernel_for((enum ert_cpu_isa)isa);
		const int64_t kcs[] = { 1, 2, 37, 64 }, ldc = 56;
		const int64_t nrs[] = { 4, 16, 20, 32, 40, 48 };
		float *a = malloc(sizeof(float) * (size_t)(64 * k->mr));
		float *b = malloc(sizeof(float) * (size_t)(64 * k->nr));
		float *next = malloc(sizeof(float) * 64 * 48); /* the lines asked for */
		float *c = malloc(sizeof(float) * (size_t)(k->mr * ldc));
		float *want = malloc(sizeof(float) * (size_t)(k->mr * ldc));

		REQUIRE(a && b && next && c && want);
		for (int64_t i = 0; i < 64 * k->mr; i++)
			a[i] = frand_r(&seed);
		for (int64_t i = 0; i < 64 * k->nr; i++)
			b[i] = frand_r(&seed);
		for (int64_t i = 0; i < 64 * 48; i++)
			next[i] = frand_r(&seed);
		for (size_t ki = 0; ki < sizeof(kcs) / sizeof(kcs[0]); ki++) {
			for (size_t ni = 0; ni < sizeof(nrs) / sizeof(nrs[0]); ni++) {
				for (int64_t mr = 1; mr <= k->mr; mr += k->mr - 1 > 3 ? 3 : 1) {
					int64_t kc = kcs[ki], nr = nrs[ni] < k->nr ? nrs[ni] : k->nr;
					struct ert_sgemm_epi e = { .alpha = 1.0f, .act = ERT_EPI_RELU };

					for (int mode = 0; mode < 3; mode++) {
						struct ert_sgemm_epi pe = e;

						pe.pf = next;
						pe.pf_lines = (kc + 1) / 2;
						pe.pf2 = next + 32 * 48;
						pe.pf2_lines = kc / 2;
						pe.pf_pairs = mode > 0;
						/* rows of 3 lines 256 bytes apart: within next[] */
						pe.pf_row_lines = mode == 2 ? 3 : 0;
						pe.pf_skip = mode == 2 ? 64 : 0;
						for (int64_t i = 0; i < k->mr * ldc; i++)
							c[i] = want[i] = (float)i;
						k->fn(kc, a, b, k->nr, want, ldc, mr, nr, &e);
						k->fn(kc, a, b, k->nr, c, ldc, mr, nr, &pe);
						if (memcmp(c, want,
							   sizeof(float) * (size_t)(k->mr * ldc))) {
							fprintf(stderr,
								"%s %ldx%ld kc %ld, mode %d: prefetching "
								"changed C\n", k->name, (long)mr, (long)nr,
								(long)kc, mode);
							*ert_test_failed_ = 1;
						}
					}
				}
			}
		}
		free(a);
		free(b);
		free(next);
		free(c);
		free(want);
	}
}

/*
 * A level's kernel for panels of fewer than MR rows (fn_short) gives fn's
 * bits for the rows there and writes no other: every row count, full and
 * narrow panels, odd K, each part of the epilogue (alpha, row bias or the
 * previous sum, column bias, residual, ReLU), with lines to prefetch and
 * without.
 */
ERT_TEST(gemm_ukernel_short_same_bits)
{
	enum ert_cpu_isa best = ert_cpu_isa_best();
	uint32_t seed = 23;

	for (int isa = ERT_ISA_SCALAR; isa <= (int)best; isa++) {
		const struct ert_sgemm_kernel *k = ert_sgemm_kernel_for((enum ert_cpu_isa)isa);
		const int64_t kcs[] = { 1, 37, 128 }, nrs[] = { 16, 33, 48 }, ldc = 53;
		float *a, *b, *bias, *cbias, *res, *next, *c, *want;

		if (!k->fn_short)
			continue;
		a = malloc(sizeof(float) * (size_t)(128 * k->mr));
		b = malloc(sizeof(float) * (size_t)(128 * k->nr));
		bias = malloc(sizeof(float) * (size_t)k->mr);
		cbias = malloc(sizeof(float) * (size_t)k->nr);
		res = malloc(sizeof(float) * (size_t)(k->mr * ldc));
		next = malloc(sizeof(float) * 128 * 48);
		c = malloc(sizeof(float) * (size_t)(k->mr * ldc));
		want = malloc(sizeof(float) * (size_t)(k->mr * ldc));
		REQUIRE(a && b && bias && cbias && res && next && c && want);
		for (int64_t i = 0; i < 128 * k->mr; i++)
			a[i] = frand_r(&seed);
		for (int64_t i = 0; i < 128 * k->nr; i++)
			b[i] = frand_r(&seed);
		for (int64_t i = 0; i < k->mr; i++)
			bias[i] = frand_r(&seed);
		for (int64_t i = 0; i < k->nr; i++)
			cbias[i] = frand_r(&seed);
		for (int64_t i = 0; i < k->mr * ldc; i++)
			res[i] = frand_r(&seed);
		for (size_t ki = 0; ki < sizeof(kcs) / sizeof(kcs[0]); ki++)
			for (size_t ni = 0; ni < sizeof(nrs) / sizeof(nrs[0]); ni++)
				for (int64_t mr = 1; mr <= k->mr; mr++)
					for (int v = 0; v < 4; v++) {
						int64_t kc = kcs[ki];
						int64_t nr = nrs[ni] < k->nr ? nrs[ni] : k->nr;
						struct ert_sgemm_epi e = {
							.alpha = v == 1 ? 0.75f : 1.0f,
							.act = v == 2 ? ERT_EPI_RELU : ERT_EPI_NONE,
							.load_c = v == 3,
							.bias = v == 1 ? bias : NULL,
							.cbias = v >= 2 ? cbias : NULL,
							.res = v == 3 ? res : NULL,
						};

						if (v == 3) {
							e.pf = next;
							e.pf_lines = (kc + 1) / 2;
						}
						for (int64_t i = 0; i < k->mr * ldc; i++)
							c[i] = want[i] = (float)i;
						k->fn(kc, a, b, k->nr, want, ldc, mr, nr, &e);
						k->fn_short(kc, a, b, k->nr, c, ldc, mr, nr, &e);
						if (memcmp(c, want,
							   sizeof(float) * (size_t)(k->mr * ldc))) {
							fprintf(stderr,
								"%s %ldx%ld kc %ld epilogue %d: "
								"fn_short differs from fn\n",
								k->name, (long)mr, (long)nr, (long)kc, v);
							*ert_test_failed_ = 1;
						}
					}
		free(a);
		free(b);
		free(bias);
		free(cbias);
		free(res);
		free(next);
		free(c);
		free(want);
	}
}

/* @n floats of random bits (NaNs, infinities, denormals and -0 among them), or NULL. */
static float *rand_bits(int64_t n, uint32_t *seed)
{
	float *p = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));

	for (int64_t i = 0; p && i < n; i++) {
		uint32_t u = lcg_next(seed) ^ lcg_next(seed) << 16;

		memcpy(p + i, &u, sizeof(u));
	}
	return p;
}

/*
 * Each level's packing of A and B (struct ert_sgemm_kernel's pack_a and
 * pack_b, which the driver runs on every A and B that is not prepacked)
 * gives the bits of the scalar ert_sgemm_pack_a_strided() and
 * ert_sgemm_pack_b_strided(): every float in its place, zeros past an edge
 * panel, nothing written past the panels. Sources of random bits, exactly as
 * large as the block read (so the sanitizer build sees a load past it), with
 * rows along K (cs 1), transposed (rs 1) and both strides past 1; blocks that
 * start inside the matrix; sizes around every multiple of 6, 8 and 16, and
 * each level's own MR and NR as well as the other levels' (the avx2 code
 * serves avx512's 8-row panels).
 */
ERT_TEST(sgemm_pack_every_level)
{
	static const int64_t sizes[] = { 1, 3, 5, 6, 7, 8, 9, 13, 16, 17, 31, 47, 48, 49, 69, 97, 130 };
	const size_t ns = sizeof(sizes) / sizeof(sizes[0]);
	enum ert_cpu_isa best = ert_cpu_isa_best();
	const int64_t guard = 64;
	uint32_t seed = 5;
	int cases = 0;

	for (int isa = ERT_ISA_AVX2; isa <= (int)best; isa++) {
		const struct ert_sgemm_kernel *kern = ert_sgemm_kernel_for((enum ert_cpu_isa)isa);
		const int panels[2][4] = { { kern->mr, 4, 6, 8 }, { kern->nr, 8, 16, 48 } };

		for (int op = 0; op < 2; op++)           /* A, B */
		for (int lay = 0; lay < 3; lay++)        /* along K, transposed, both strided */
		for (size_t ri = 0; ri < ns; ri++)       /* rows of A / columns of B */
		for (size_t ki = 0; ki < ns; ki++)
		for (int pi = 0; pi < 4; pi++) {
			const int pw = panels[op][pi];
			const int64_t rows = sizes[ri], kc = sizes[ki];
			const int64_t r0 = (int64_t)(ri + ki) % 3, k0 = (int64_t)(ri * 7 + ki) % 5;
			/* A(i, p) = a[i * rs + p * cs]; B(p, j) = b[p * rs + j * cs] */
			const int64_t ext_k = k0 + kc + 2, ext_r = r0 + rows + 1;
			int64_t rs, cs, last;

			if (pi > 0 && pw == panels[op][0])
				continue;
			if (lay == 0)        /* rows of A along K; B's rows along N */
				op == 0 ? (rs = ext_k, cs = 1) : (rs = ext_r, cs = 1);
			else if (lay == 1)   /* transposed */
				op == 0 ? (rs = 1, cs = ext_r) : (rs = 1, cs = ext_k);
			else
				op == 0 ? (rs = 2 * ext_k, cs = 2) : (rs = 3, cs = 3 * ext_k);
			last = op == 0 ? (r0 + rows - 1) * rs + (k0 + kc - 1) * cs
				       : (k0 + kc - 1) * rs + (r0 + rows - 1) * cs;

			const int64_t out = (rows + pw - 1) / pw * pw * kc;
			float *src = rand_bits(last + 1, &seed);
			float *want = malloc(sizeof(float) * (size_t)(out + guard));
			float *got = malloc(sizeof(float) * (size_t)(out + guard));

			/* not REQUIRE: it would stop at the first case after a failed one */
			CHECK(src && want && got);
			if (!src || !want || !got)
				return;
			memset(want, 0xa5, sizeof(float) * (size_t)(out + guard));
			memset(got, 0xa5, sizeof(float) * (size_t)(out + guard));
			if (op == 0) {
				ert_sgemm_pack_a_strided(src, rs, cs, r0, rows, k0, kc, pw, want);
				kern->pack_a(src, rs, cs, r0, rows, k0, kc, pw, got);
			} else {
				ert_sgemm_pack_b_strided(src, rs, cs, k0, kc, r0, rows, pw, want);
				kern->pack_b(src, rs, cs, k0, kc, r0, rows, pw, got);
			}
			if (memcmp(want, got, sizeof(float) * (size_t)(out + guard))) {
				int64_t at = 0;

				while (!memcmp(want + at, got + at, sizeof(float)))
					at++;
				fprintf(stderr, "%s: pack_%c, layout %d, %lld x %lld at (%lld, %lld), "
					"panel %d: float %lld differs\n", kern->name, op ? 'b' : 'a', lay,
					(long long)rows, (long long)kc, (long long)r0, (long long)k0, pw,
					(long long)at);
				*ert_test_failed_ = 1;
			}
			free(src);
			free(want);
			free(got);
			cases++;
		}
	}
	CHECK(cases > 0 || best < ERT_ISA_AVX2);
}

/*
 * B prepacked and split by columns between threads: A is packed once into
 * a_shared (it is written there), by the tiles, a K block of a row tile at a
 * time as they first need it, and every level gives the bits of the run
 * that packs A per tile, with and without the column bias; on one thread
 * too. Where a K block of all rows of A is small (100 rows at every level,
 * 197 and 250 at avx512's K block of 128), a_shared makes the tiles span all
 * rows, on any number of threads; 300 rows are over that limit at every
 * level (row tiles, each packing its own rows of A). Three threads on a
 * pool of three: a lane that finds its K block being packed by another
 * packs the next ones meanwhile; each case runs several times, as the
 * lanes race for the blocks differently each time.
 */
ERT_TEST(sgemm_shared_a)
{
	struct ert_threadpool *pool = ert_threadpool_create(3);
	enum ert_cpu_isa best = ert_cpu_isa_best();
	const int64_t mmax = 300, n = 150, k = 300;
	const int64_t ms[] = { 100, 197, 250, mmax };
	float *a = malloc(sizeof(float) * (size_t)(mmax * k)), *b = malloc(sizeof(float) * (size_t)(k * n));
	float *bias = malloc(sizeof(float) * (size_t)n);
	float *c1 = malloc(sizeof(float) * (size_t)(mmax * n));
	float *c2 = malloc(sizeof(float) * (size_t)(mmax * n));
	uint32_t seed = 99;

	REQUIRE(pool && a && b && bias && c1 && c2);
	for (int64_t i = 0; i < mmax * k; i++)
		a[i] = frand_r(&seed);
	for (int64_t i = 0; i < k * n; i++)
		b[i] = frand_r(&seed);
	for (int64_t i = 0; i < n; i++)
		bias[i] = frand_r(&seed);
	for (int isa = ERT_ISA_SCALAR; isa <= (int)best; isa++) {
		const struct ert_sgemm_kernel *kern = ert_sgemm_kernel_for((enum ert_cpu_isa)isa);
		size_t ws_size = ert_sgemm_workspace(3, mmax, n, k);
		float *pb = malloc(sizeof(float) * ert_sgemm_packed_b_floats(k, n, kern->nr));
		float *shared = aligned_alloc(64, (ert_sgemm_shared_a_floats(mmax, k) *
						   sizeof(float) + 63) & ~(size_t)63);
		void *ws = malloc(ws_size);

		REQUIRE(pb && shared && ws);
		ert_sgemm_pack_b(b, n, 1, k, n, kern->nr, pb);
		for (int v = 0; v < 24; v++) {
			int with_bias = v & 1;
			uint32_t threads = 1 + (uint32_t)(v >> 1) % 3;
			int64_t m = ms[v / 6];
			struct ert_sgemm_desc d = {
				.kern = kern, .m = m, .n = n, .k = k, .batch = 1,
				.a = a, .a_rs = k, .a_cs = 1, .b_packed = pb,
				.c = c1, .ldc = n, .alpha = 1.0f,
				.col_bias = with_bias ? bias : NULL,
			};

			ert_sgemm_run(pool, threads, &d, ws, ws_size);
			d.c = c2;
			d.a_shared = shared;
			for (int rep = 0; rep < (threads > 1 ? 8 : 1); rep++) {
				for (size_t i = 0; i < ert_sgemm_shared_a_floats(m, k); i++)
					shared[i] = NAN;
				memset(c2, 0, sizeof(float) * (size_t)(m * n));
				ert_sgemm_run(pool, threads, &d, ws, ws_size);
				/* packed when it is used: the first panel's first K step, A's first rows */
				if (threads > 1 || m == 100)
					CHECK(shared[0] == a[0] && shared[1] == a[k]);
				if (memcmp(c1, c2, sizeof(float) * (size_t)(m * n))) {
					fprintf(stderr, "%s, m %ld, bias %d, %u threads: shared A differs\n",
						kern->name, (long)m, with_bias, threads);
					*ert_test_failed_ = 1;
					break;
				}
			}
		}
		free(pb);
		free(shared);
		free(ws);
	}
	free(a);
	free(b);
	free(bias);
	free(c1);
	free(c2);
	ert_threadpool_destroy(pool);
}

/*
 * B prepacked, A packed once into a_shared and a K block of all its rows
 * small (tiles of all rows): on 2 and 3 threads, where A has at least four
 * row panels a thread, the lanes split the rows (ert_sgemm_split.by_rows,
 * one row tile a lane) rather than the columns; 37 rows are too few for
 * that at avx2 and above (MR 6 and 8), not at scalar (MR 4) on 2 threads.
 * N = 200 leaves a narrow edge panel at every level (8 columns at avx512:
 * the three-panel edge kernel, now in a tile of several panels), K = 300
 * several K blocks, with the column bias, the residual and ReLU, and with
 * a scale past one K block (applied over the finished tile). C has the
 * bits of the run that packs A per tile, and of one thread.
 */
ERT_TEST(sgemm_rows_split)
{
	struct ert_threadpool *pool = ert_threadpool_create(3);
	enum ert_cpu_isa best = ert_cpu_isa_best();
	const int64_t mmax = 100, n = 200, k = 300;
	const int64_t ms[] = { 37, mmax };
	const float scale = 0.125f;
	float *a = malloc(sizeof(float) * (size_t)(mmax * k)), *b = malloc(sizeof(float) * (size_t)(k * n));
	float *bias = malloc(sizeof(float) * (size_t)n), *res = malloc(sizeof(float) * (size_t)(mmax * n));
	float *c1 = malloc(sizeof(float) * (size_t)(mmax * n));
	float *c2 = malloc(sizeof(float) * (size_t)(mmax * n));
	float *c_one = malloc(sizeof(float) * (size_t)(mmax * n));
	uint32_t seed = 5;

	REQUIRE(pool && a && b && bias && res && c1 && c2 && c_one);
	for (int64_t i = 0; i < mmax * k; i++)
		a[i] = frand_r(&seed);
	for (int64_t i = 0; i < k * n; i++)
		b[i] = frand_r(&seed) - 0.5f;
	for (int64_t i = 0; i < n; i++)
		bias[i] = frand_r(&seed);
	for (int64_t i = 0; i < mmax * n; i++)
		res[i] = frand_r(&seed) - 0.5f;
	for (int isa = ERT_ISA_SCALAR; isa <= (int)best; isa++) {
		const struct ert_sgemm_kernel *kern = ert_sgemm_kernel_for((enum ert_cpu_isa)isa);
		size_t ws_size = ert_sgemm_workspace(3, mmax, n, k);
		float *pb = malloc(sizeof(float) * ert_sgemm_packed_b_floats(k, n, kern->nr));
		float *shared = aligned_alloc(64, (ert_sgemm_shared_a_floats(mmax, k) *
						   sizeof(float) + 63) & ~(size_t)63);
		void *ws = malloc(ws_size);

		REQUIRE(pb && shared && ws);
		ert_sgemm_pack_b(b, n, 1, k, n, kern->nr, pb);
		for (int v = 0; v < 12; v++) {
			uint32_t threads = 1 + (uint32_t)v % 3;
			int64_t m = ms[v / 3 % 2];
			int64_t mpad = (m + kern->mr - 1) / kern->mr * kern->mr;
			struct ert_sgemm_desc d = {
				.kern = kern, .m = m, .n = n, .k = k, .batch = 1,
				.a = a, .a_rs = k, .a_cs = 1, .b_packed = pb,
				.c = c1, .ldc = n, .alpha = 1.0f, .col_bias = bias,
				.residual = res, .act = { ERT_ACT_RELU, 0.0f, 0.0f },
				.scale = v >= 6 ? &scale : NULL,
			};
			struct ert_sgemm_split sp;

			ert_sgemm_run(pool, threads, &d, ws, ws_size);
			d.c = c2;
			d.a_shared = shared;
			ert_sgemm_split_of(threads, &d, ws_size, &sp);
			bool rows = threads > 1 && mpad >= 4 * kern->mr * (int64_t)threads;

			if (sp.by_rows != rows || (rows && (sp.mt != threads || sp.by_cols))) {
				fprintf(stderr, "%s, m %ld, %u threads: rows %ssplit (%ld row tiles)\n",
					kern->name, (long)m, threads, sp.by_rows ? "" : "not ",
					(long)sp.mt);
				*ert_test_failed_ = 1;
			}
			for (int rep = 0; rep < (threads > 1 ? 4 : 1); rep++) {
				memset(c2, 0, sizeof(float) * (size_t)(m * n));
				ert_sgemm_run(pool, threads, &d, ws, ws_size);
				if (memcmp(c1, c2, sizeof(float) * (size_t)(m * n)) ||
				    (threads > 1 &&
				     memcmp(c_one, c2, sizeof(float) * (size_t)(m * n)))) {
					fprintf(stderr, "%s, m %ld, scale %d, %u threads: C differs\n",
						kern->name, (long)m, v >= 6, threads);
					*ert_test_failed_ = 1;
					break;
				}
			}
			if (threads == 1)
				memcpy(c_one, c2, sizeof(float) * (size_t)(m * n));
		}
		free(pb);
		free(shared);
		free(ws);
	}
	free(a);
	free(b);
	free(bias);
	free(res);
	free(c1);
	free(c2);
	free(c_one);
	ert_threadpool_destroy(pool);
}

/*
 * A shared A of more K blocks than the lazy packing keeps state for
 * (ERT_SGEMM_A_UNITS_MAX): A is packed first, in a pass of its own, and the
 * tiles step into it. 9 rows (tiles of all rows; an edge row panel at every
 * level), K one block past the limit (a short last block), N two panels
 * and an edge: the bits of the run that packs A per tile, on 1 and 2
 * threads, and A is in a_shared afterwards.
 */
ERT_TEST(sgemm_shared_a_past_units)
{
	struct ert_threadpool *pool = ert_threadpool_create(2);
	enum ert_cpu_isa best = ert_cpu_isa_best();
	const int64_t m = 9;
	uint32_t seed = 7;

	REQUIRE(pool != NULL);
	for (int isa = ERT_ISA_SCALAR; isa <= (int)best; isa++) {
		const struct ert_sgemm_kernel *kern = ert_sgemm_kernel_for((enum ert_cpu_isa)isa);
		const int64_t kc = kern->kc < ERT_SGEMM_KC ? kern->kc : ERT_SGEMM_KC;
		const int64_t k = ERT_SGEMM_A_UNITS_MAX * kc + kc / 2, n = 2 * kern->nr + 5;
		size_t ws_size = ert_sgemm_workspace(2, m, n, k);
		float *a = malloc(sizeof(float) * (size_t)(m * k));
		float *b = malloc(sizeof(float) * (size_t)(k * n));
		float *pb = malloc(sizeof(float) * ert_sgemm_packed_b_floats(k, n, kern->nr));
		float *shared = aligned_alloc(64, (ert_sgemm_shared_a_floats(m, k) * sizeof(float) +
						   63) & ~(size_t)63);
		float *c1 = malloc(sizeof(float) * (size_t)(m * n));
		float *c2 = malloc(sizeof(float) * (size_t)(m * n));
		void *ws = malloc(ws_size);

		REQUIRE(a && b && pb && shared && c1 && c2 && ws);
		for (int64_t i = 0; i < m * k; i++)
			a[i] = frand_r(&seed);
		for (int64_t i = 0; i < k * n; i++)
			b[i] = frand_r(&seed);
		ert_sgemm_pack_b(b, n, 1, k, n, kern->nr, pb);
		for (uint32_t threads = 1; threads <= 2; threads++) {
			struct ert_sgemm_desc d = {
				.kern = kern, .m = m, .n = n, .k = k, .batch = 1,
				.a = a, .a_rs = k, .a_cs = 1, .b_packed = pb,
				.c = c1, .ldc = n, .alpha = 1.0f,
			};

			ert_sgemm_run(pool, threads, &d, ws, ws_size);
			d.c = c2;
			d.a_shared = shared;
			for (size_t i = 0; i < ert_sgemm_shared_a_floats(m, k); i++)
				shared[i] = NAN;
			memset(c2, 0, sizeof(float) * (size_t)(m * n));
			ert_sgemm_run(pool, threads, &d, ws, ws_size);
			CHECK(shared[0] == a[0] && shared[1] == a[k]);
			if (memcmp(c1, c2, sizeof(float) * (size_t)(m * n))) {
				fprintf(stderr, "%s, K %lld, %u threads: A packed first differs\n",
					kern->name, (long long)k, threads);
				*ert_test_failed_ = 1;
			}
		}
		free(a);
		free(b);
		free(pb);
		free(shared);
		free(c1);
		free(c2);
		free(ws);
	}
	ert_threadpool_destroy(pool);
}

/* A pack_b callback for sgemm_shared_b: B(p, j) = src[p * n + j], as ert_sgemm_pack_b_strided. */
struct shared_b_src {
	const float *b;
	int64_t n;
};

static void shared_b_pack(const void *ctx, int64_t batch, int64_t k0, int64_t kc, int64_t n0,
			  int64_t nc, int nr, float *dst)
{
	const struct shared_b_src *s = ctx;

	(void)batch;
	ert_sgemm_pack_b_strided(s->b, s->n, 1, k0, kc, n0, nc, nr, dst);
}

/*
 * B not prepacked and several row tiles of A: B is packed once into b_shared
 * (it is written there) and every level gives the bits of the run that packs
 * B per tile or reads it in place, for a plain B, a B read in place and a
 * pack_b callback, with the row bias, the residual and ReLU, on one and two
 * threads; N = 49 leaves a one-column edge panel at every level. Then A
 * prepacked too (a Conv's weights, larger than B: two threads split the
 * rows), against the same run with A packed per tile. K = 520 runs several
 * K blocks; K = 60 one, which with A prepacked runs by row panels
 * (run_block_rows()), 300 rows leaving a 4-row edge panel at avx512. On
 * one thread B is packed first, on two and three by the tiles
 * (ert_sgemm_split.b_lazy) where it has a unit (K block of a column tile)
 * a lane, and C has the same bits on all three.
 */
static void shared_b_case(struct ert_threadpool *pool, int64_t k, int *failed)
{
	enum ert_cpu_isa best = ert_cpu_isa_best();
	const int64_t m = 300, n = 49;
	float *a = malloc(sizeof(float) * (size_t)(m * k)), *b = malloc(sizeof(float) * (size_t)(k * n));
	float *bias = malloc(sizeof(float) * (size_t)m), *res = malloc(sizeof(float) * (size_t)(m * n));
	float *c1 = malloc(sizeof(float) * (size_t)(m * n)), *c2 = malloc(sizeof(float) * (size_t)(m * n));
	size_t sb = ert_sgemm_shared_b_floats(k, n);
	float *shared = aligned_alloc(64, (sb * sizeof(float) + 63) & ~(size_t)63);
	size_t ws_size = ert_sgemm_workspace(3, m, n, k);
	void *ws = malloc(ws_size);
	float *c_one = malloc(sizeof(float) * (size_t)(m * n));
	struct shared_b_src src = { b, n };
	uint32_t seed = 7;

	if (!a || !b || !bias || !res || !c1 || !c2 || !sb || !shared || !ws || !c_one) {
		*failed = 1;
		return;
	}
	for (int64_t i = 0; i < m * k; i++)
		a[i] = frand_r(&seed);
	for (int64_t i = 0; i < k * n; i++)
		b[i] = frand_r(&seed);
	for (int64_t i = 0; i < m; i++)
		bias[i] = frand_r(&seed);
	for (int64_t i = 0; i < m * n; i++)
		res[i] = frand_r(&seed);
	for (int isa = ERT_ISA_SCALAR; isa <= (int)best; isa++) {
		const struct ert_sgemm_kernel *kern = ert_sgemm_kernel_for((enum ert_cpu_isa)isa);

		float *apk = malloc(sizeof(float) * ert_sgemm_packed_a_floats(m, k, kern->mr));

		if (!apk) {
			*failed = 1;
			break;
		}
		ert_sgemm_pack_a(a, k, 1, m, k, kern->mr, apk);
		for (int mode = 0; mode < 6; mode++) {
			for (uint32_t threads = 1; threads <= 3; threads++) {
				struct ert_sgemm_desc d = {
					.kern = kern, .m = m, .n = n, .k = k, .batch = 1,
					.a = a, .a_rs = k, .a_cs = 1,
					.b = b, .b_rs = n, .b_cs = 1, .b_direct = mode % 3 == 1,
					.pack_b = mode % 3 == 2 ? shared_b_pack : NULL, .pack_ctx = &src,
					.c = c1, .ldc = n, .alpha = 1.0f, .bias = bias,
					.residual = res, .act = { ERT_ACT_RELU, 0.0f, 0.0f },
				};

				ert_sgemm_run(pool, threads, &d, ws, ws_size);
				for (size_t i = 0; i < sb; i++)
					shared[i] = NAN;
				d.c = c2;
				d.b_shared = shared;
				d.a_packed = mode >= 3 ? apk : NULL;
				struct ert_sgemm_split sp;

				ert_sgemm_split_of(threads, &d, ws_size, &sp);
				/*
				 * by the tiles where there are as many units (K blocks
				 * x column tiles) as lanes: K = 520 is 3 K blocks or more
				 */
				bool lazy = threads > 1 && (k > 2 * ERT_SGEMM_KC || sp.nt >= threads);

				if (sp.b_lazy != lazy) {
					fprintf(stderr, "%s, K %lld, %u threads: B %s by the tiles\n",
						kern->name, (long long)k, threads,
						sp.b_lazy ? "packed" : "not packed");
					*failed = 1;
				}
				ert_sgemm_run(pool, threads, &d, ws, ws_size);
				if (threads == 1)
					memcpy(c_one, c2, sizeof(float) * (size_t)(m * n));
				else if (memcmp(c_one, c2, sizeof(float) * (size_t)(m * n))) {
					fprintf(stderr, "%s, K %lld, B mode %d: %u threads differ from 1\n",
						kern->name, (long long)k, mode, threads);
					*failed = 1;
				}
				/* the first panel's first K step: B's first row */
				if (shared[0] != b[0] || shared[1] != b[1]) {
					fprintf(stderr, "%s, K %lld: B not packed into b_shared\n",
						kern->name, (long long)k);
					*failed = 1;
				}
				if (memcmp(c1, c2, sizeof(float) * (size_t)(m * n))) {
					fprintf(stderr,
						"%s, K %lld, B mode %d, %u threads: shared B differs\n",
						kern->name, (long long)k, mode, threads);
					*failed = 1;
				}
			}
		}
		free(apk);
	}
	free(a);
	free(b);
	free(bias);
	free(res);
	free(c1);
	free(c2);
	free(shared);
	free(ws);
	free(c_one);
}

ERT_TEST(sgemm_shared_b)
{
	struct ert_threadpool *pool = ert_threadpool_create(3);

	REQUIRE(pool);
	shared_b_case(pool, 520, ert_test_failed_);
	shared_b_case(pool, 60, ert_test_failed_);
	ert_threadpool_destroy(pool);
}

/*
 * N cut between threads (B packed per tile, one row tile): the lanes' home
 * columns differ by at most one panel (N = 784 in tiles of 256, or of 240
 * at avx512, gave one lane a short last tile), the column tiles a multiple
 * of the lanes, and C the same bits on one, two and three threads, with
 * the row bias, the column bias and ReLU. K = 300 runs two K blocks.
 */
ERT_TEST(sgemm_even_columns)
{
	static const int64_t ns[] = { 784, 3136 / 4 + 13 };
	struct ert_threadpool *pool = ert_threadpool_create(3);
	enum ert_cpu_isa best = ert_cpu_isa_best();
	const int64_t m = 40, k = 300, nmax = 800;
	float *a = malloc(sizeof(float) * (size_t)(m * k));
	float *b = malloc(sizeof(float) * (size_t)(k * nmax));
	float *bias = malloc(sizeof(float) * (size_t)m), *cb = malloc(sizeof(float) * (size_t)nmax);
	float *c1 = malloc(sizeof(float) * (size_t)(m * nmax));
	float *c2 = malloc(sizeof(float) * (size_t)(m * nmax));
	size_t ws_size = ert_sgemm_workspace(3, m, nmax, k);
	void *ws = malloc(ws_size);
	uint32_t seed = 11;

	REQUIRE(pool && a && b && bias && cb && c1 && c2 && ws);
	for (int64_t i = 0; i < m * k; i++)
		a[i] = frand_r(&seed) - 0.5f;
	for (int64_t i = 0; i < k * nmax; i++)
		b[i] = frand_r(&seed) - 0.5f;
	for (int64_t i = 0; i < m; i++)
		bias[i] = frand_r(&seed);
	for (int64_t i = 0; i < nmax; i++)
		cb[i] = frand_r(&seed);
	for (int isa = ERT_ISA_SCALAR; isa <= (int)best; isa++) {
		const struct ert_sgemm_kernel *kern = ert_sgemm_kernel_for((enum ert_cpu_isa)isa);

		for (size_t ni = 0; ni < sizeof(ns) / sizeof(ns[0]); ni++) {
			const int64_t n = ns[ni];

			for (uint32_t threads = 1; threads <= 3; threads++) {
				struct ert_sgemm_desc d = {
					.kern = kern, .m = m, .n = n, .k = k, .batch = 1,
					.a = a, .a_rs = k, .a_cs = 1, .b = b, .b_rs = n, .b_cs = 1,
					.c = threads == 1 ? c1 : c2, .ldc = n, .alpha = 1.0f,
					.bias = bias, .col_bias = cb,
					.act = { ERT_ACT_RELU, 0.0f, 0.0f },
				};
				struct ert_sgemm_split sp;
				int64_t lo = INT64_MAX, hi = 0;

				ert_sgemm_split_of(threads, &d, ws_size, &sp);
				for (int64_t l = 0; sp.by_cols && l < sp.lanes; l++) {
					lo = sp.lane_cols[l] < lo ? sp.lane_cols[l] : lo;
					hi = sp.lane_cols[l] > hi ? sp.lane_cols[l] : hi;
				}
				if (threads > 1 && (sp.mt != 1 || !sp.by_cols || sp.lanes != threads ||
						    sp.nt % threads || hi - lo > kern->nr)) {
					fprintf(stderr,
						"%s, N %lld, %u threads: %lld x %lld tiles on %lld lanes, home columns %lld..%lld\n",
						kern->name, (long long)n, threads, (long long)sp.mt,
						(long long)sp.nt, (long long)sp.lanes, (long long)lo,
						(long long)hi);
					*ert_test_failed_ = 1;
				}
				ert_sgemm_run(pool, threads, &d, ws, ws_size);
				if (threads > 1 && memcmp(c1, c2, sizeof(float) * (size_t)(m * n))) {
					fprintf(stderr, "%s, N %lld: %u threads differ from 1\n",
						kern->name, (long long)n, threads);
					*ert_test_failed_ = 1;
				}
			}
		}
	}
	free(a);
	free(b);
	free(bias);
	free(cb);
	free(c1);
	free(c2);
	free(ws);
	ert_threadpool_destroy(pool);
}

/*
 * The driver stays inside the workspace ert_sgemm_workspace() sizes, at
 * every level: row counts that no MR divides (avx2's 6 rows: 16, 32 and
 * 64 round up past the next multiple of 16) with B packed per tile into
 * panels that fill the slot (N a multiple of 48 up to 256), and more than
 * ERT_SGEMM_MC rows. Guard bytes after the workspace must come back
 * untouched, and C must be the reference product.
 */
ERT_TEST(sgemm_workspace_bounds)
{
	static const int64_t ms[] = { 16, 32, 64, 130, 200 }, ns[] = { 48, 96, 240 };
	static const int64_t ks[] = { 7, 300 };
	struct ert_threadpool *pool = ert_threadpool_create(2);
	enum ert_cpu_isa best = ert_cpu_isa_best();
	const size_t guard = 4096;
	uint32_t seed = 11;

	REQUIRE(pool);
	for (int isa = ERT_ISA_SCALAR; isa <= (int)best; isa++) {
		const struct ert_sgemm_kernel *kern = ert_sgemm_kernel_for((enum ert_cpu_isa)isa);

		for (size_t mi = 0; mi < sizeof(ms) / sizeof(ms[0]); mi++)
		for (size_t ni = 0; ni < sizeof(ns) / sizeof(ns[0]); ni++)
		for (size_t ki = 0; ki < sizeof(ks) / sizeof(ks[0]); ki++)
		for (uint32_t threads = 1; threads <= 2; threads++) {
			const int64_t m = ms[mi], n = ns[ni], k = ks[ki];
			size_t ws_size = ert_sgemm_workspace(threads, m, n, k);
			unsigned char *ws = malloc(ws_size + guard);
			float *a = malloc(sizeof(float) * (size_t)(m * k));
			float *b = malloc(sizeof(float) * (size_t)(k * n));
			float *c = malloc(sizeof(float) * (size_t)(m * n));
			bool intact = true, right = true;

			REQUIRE(ws && a && b && c);
			for (int64_t i = 0; i < m * k; i++)
				a[i] = frand_r(&seed);
			for (int64_t i = 0; i < k * n; i++)
				b[i] = frand_r(&seed);
			memset(ws + ws_size, 0xa5, guard);

			struct ert_sgemm_desc d = {
				.kern = kern, .m = m, .n = n, .k = k, .batch = 1,
				.a = a, .a_rs = k, .a_cs = 1, .b = b, .b_rs = n, .b_cs = 1,
				.c = c, .ldc = n, .alpha = 1.0f,
			};

			ert_sgemm_run(pool, threads, &d, ws, ws_size);
			for (size_t i = 0; i < guard; i++)
				intact = intact && ws[ws_size + i] == 0xa5;
			for (int64_t i = 0; i < m && right; i++)
				for (int64_t j = 0; j < n && right; j++) {
					double ref = 0.0;

					for (int64_t p = 0; p < k; p++)
						ref += (double)a[i * k + p] * b[p * n + j];
					right = fabs(c[i * n + j] - ref) <= 1e-4 * (1.0 + fabs(ref));
				}
			if (!intact || !right) {
				fprintf(stderr, "%s, m %lld n %lld k %lld, %u threads: %s\n", kern->name,
					(long long)m, (long long)n, (long long)k, threads,
					!intact ? "wrote past its workspace" : "wrong product");
				*ert_test_failed_ = 1;
			}
			free(ws);
			free(a);
			free(b);
			free(c);
		}
	}
	ert_threadpool_destroy(pool);
}

/*
 * A read in place by the kernel (ert_sgemm_desc.a_direct; levels with
 * fn_arows): the bits of the run that packs A, and nothing packed into
 * a_shared. 197 rows with B prepacked (tiles of all rows at avx512; full
 * panels read in place, the last 5 rows packed), 13 and 5 rows (a full
 * panel and an edge, an edge alone), 1 row; K of two blocks with a short
 * last one (131 at avx512), rows of A further apart than K and A exactly as
 * large as the rows read (so the sanitizer build sees a load past them);
 * N with a 5-column edge; alpha, the column bias, the residual, ReLU and
 * GELU (not in the kernel: applied after); 1 to 3 threads. Then batches of
 * 3 problems with A at per-problem offsets (one not 16-byte aligned) and B
 * not prepacked (read transposed, as attention's K^T), of 40 and of 140
 * rows (a tile of all rows: more than one row tile of packed A).
 */
ERT_TEST(sgemm_a_direct)
{
	struct ert_threadpool *pool = ert_threadpool_create(3);
	enum ert_cpu_isa best = ert_cpu_isa_best();
	static const int64_t ms[] = { 197, 13, 5, 1 };
	const int64_t n = 101, k = 131, lda = k + 3, mmax = 197;
	const int64_t a_len = (mmax - 1) * lda + k;
	float *a = malloc(sizeof(float) * (size_t)a_len), *b = malloc(sizeof(float) * (size_t)(k * n));
	float *bias = malloc(sizeof(float) * (size_t)n), *res = malloc(sizeof(float) * (size_t)(mmax * n));
	const int64_t c_len = 3 * 140 * 48 > mmax * n ? 3 * 140 * 48 : mmax * n;
	float *c1 = malloc(sizeof(float) * (size_t)c_len), *c2 = malloc(sizeof(float) * (size_t)c_len);
	float *shared = aligned_alloc(64, (ert_sgemm_shared_a_floats(mmax, k) * sizeof(float) + 63) &
					  ~(size_t)63);
	size_t ws_size = ert_sgemm_workspace(3, mmax, n, k);
	void *ws = malloc(ws_size);
	uint32_t seed = 31;
	int direct_levels = 0;

	REQUIRE(pool && a && b && bias && res && c1 && c2 && shared && ws);
	for (int64_t i = 0; i < a_len; i++)
		a[i] = frand_r(&seed);
	for (int64_t i = 0; i < k * n; i++)
		b[i] = frand_r(&seed);
	for (int64_t i = 0; i < n; i++)
		bias[i] = frand_r(&seed);
	for (int64_t i = 0; i < mmax * n; i++)
		res[i] = frand_r(&seed);
	for (int isa = ERT_ISA_SCALAR; isa <= (int)best; isa++) {
		const struct ert_sgemm_kernel *kern = ert_sgemm_kernel_for((enum ert_cpu_isa)isa);
		float *pb = malloc(sizeof(float) * ert_sgemm_packed_b_floats(k, n, kern->nr));

		REQUIRE(pb != NULL);
		direct_levels += kern->fn_arows != NULL;
		ert_sgemm_pack_b(b, n, 1, k, n, kern->nr, pb);
		for (int v = 0; v < 12; v++) {
			const int64_t m = ms[v % 4];
			const uint32_t threads = 1 + (uint32_t)(v % 3);
			const int epi = v / 4;    /* 0: plain; 1: bias, residual, ReLU; 2: alpha, GELU */
			/* m rows ending where a ends */
			const float *am = a + (mmax - m) * lda;
			struct ert_sgemm_desc d = {
				.kern = kern, .m = m, .n = n, .k = k, .batch = 1,
				.a = am, .a_rs = lda, .a_cs = 1, .b_packed = pb,
				.c = c1, .ldc = n, .alpha = epi == 2 ? 0.375f : 1.0f,
				.col_bias = epi == 1 ? bias : NULL, .residual = epi == 1 ? res : NULL,
				.act = { epi == 1 ? ERT_ACT_RELU : epi == 2 ? ERT_ACT_GELU : ERT_ACT_NONE,
					 0.0f, 0.0f },
				.a_shared = shared,
			};

			ert_sgemm_run(pool, threads, &d, ws, ws_size);
			for (size_t i = 0; i < ert_sgemm_shared_a_floats(m, k); i++)
				shared[i] = NAN;
			d.c = c2;
			d.a_direct = true;
			memset(c2, 0, sizeof(float) * (size_t)(m * n));
			ert_sgemm_run(pool, threads, &d, ws, ws_size);
			if (kern->fn_arows)
				CHECK(isnan(shared[0]));
			if (memcmp(c1, c2, sizeof(float) * (size_t)(m * n))) {
				fprintf(stderr, "%s, m %lld, epilogue %d, %u threads: A in place differs\n",
					kern->name, (long long)m, epi, threads);
				*ert_test_failed_ = 1;
			}
		}

		/* batch 3: problems of bm x 64 of A at offsets, B transposed (41 columns) */
		for (int v = 0; v < 4; v++) {
			const int64_t bm = v < 2 ? 40 : 140, bn = 41, bk = 64;
			const int64_t a_off[3] = { 0, 2 * lda + 1, (mmax - bm) * lda };
			const int64_t b_off[3] = { 0, 7, 3 }, c_off[3] = { 0, bm * 48, 2 * bm * 48 };
			const uint32_t threads = 1 + (uint32_t)(v % 2);
			struct ert_sgemm_desc d = {
				.kern = kern, .m = bm, .n = bn, .k = bk, .batch = 3,
				.a = a, .a_rs = lda, .a_cs = 1, .a_off = a_off,
				.b = b, .b_rs = 1, .b_cs = bk + 10, .b_off = b_off,
				.c = c1, .ldc = 48, .c_off = c_off, .alpha = 0.125f,
			};

			memset(c1, 0, sizeof(float) * (size_t)(3 * bm * 48));
			ert_sgemm_run(pool, threads, &d, ws, ws_size);
			d.c = c2;
			d.a_direct = true;
			memset(c2, 0, sizeof(float) * (size_t)(3 * bm * 48));
			ert_sgemm_run(pool, threads, &d, ws, ws_size);
			if (memcmp(c1, c2, sizeof(float) * (size_t)(3 * bm * 48))) {
				fprintf(stderr, "%s, batch 3 of %lld rows, %u threads: A in place "
					"differs\n", kern->name, (long long)bm, threads);
				*ert_test_failed_ = 1;
			}
		}
		free(pb);
	}
	CHECK(direct_levels > 0 || best < ERT_ISA_AVX512);
	free(a);
	free(b);
	free(bias);
	free(res);
	free(c1);
	free(c2);
	free(shared);
	free(ws);
	ert_threadpool_destroy(pool);
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(gemm_ukernel_edges), ERT_TEST_ENTRY(gemm_ukernel_edge3),
	      ERT_TEST_ENTRY(gemm_ukernel_prefetch_same_bits),
	      ERT_TEST_ENTRY(gemm_ukernel_short_same_bits),
	      ERT_TEST_ENTRY(sgemm_pack_every_level),
	      ERT_TEST_ENTRY(sgemm_shared_a), ERT_TEST_ENTRY(sgemm_rows_split),
	      ERT_TEST_ENTRY(sgemm_shared_a_past_units),
	      ERT_TEST_ENTRY(sgemm_shared_b), ERT_TEST_ENTRY(sgemm_even_columns),
	      ERT_TEST_ENTRY(sgemm_workspace_bounds),
	      ERT_TEST_ENTRY(sgemm_a_direct))
