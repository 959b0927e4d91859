/* SPDX-License-Identifier: MIT */
/*
 * dwconv-bench: the fp32 depthwise kernels (cpu/conv/dwconv.h) alone at the
 * MobileNetV2 layer sizes (3x3, bias, ReLU6), one thread, at every kernel
 * level the CPU has, in thread CPU time (a shared machine disturbs it less).
 *
 *   cc -O2 -D_GNU_SOURCE -Ilibruntime/include -Ilibruntime -Ibackends -I. \
 *      bench/dwconv-bench.c build/libedgert.a -lprotobuf-c -lm -lpthread -o build/dwconv-bench
 *   build/dwconv-bench [REPEATS [SIZE]]
 *
 * Per layer: the best of REPEATS runs (default 30) over a fresh input each
 * time ("cold": the layer's input and output are larger than the L2 cache
 * at the big layers, as in the model, where the expansion conv has just
 * written the input), and over the same input again ("warm"), in ms,
 * GFLOP/s and GB/s of input read plus output written. SIZE: only the
 * layers of that input size (112, 56, 28, 14 or 7).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu/conv/dwconv.h"
#include "cpu/cpu-impl.h"

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* channels, input size, stride: the 17 depthwise layers of MobileNetV2 1.0 */
static const struct {
	int64_t c, hw, s;
} layers[] = {
	{ 32, 112, 1 }, { 96, 112, 2 }, { 144, 56, 1 }, { 144, 56, 2 }, { 192, 28, 1 },
	{ 192, 28, 1 }, { 192, 28, 2 }, { 384, 14, 1 }, { 384, 14, 1 }, { 384, 14, 1 },
	{ 384, 14, 1 }, { 576, 14, 1 }, { 576, 14, 1 }, { 576, 14, 2 }, { 960, 7, 1 },
	{ 960, 7, 1 },  { 960, 7, 1 },
};

static float *frand(int64_t n)
{
	float *p = malloc((size_t)n * sizeof(float));

	if (!p)
		abort();
	for (int64_t i = 0; i < n; i++)
		p[i] = (float)((i * 7919 % 2003) - 1001) / 1001.0f;
	return p;
}

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 30;
	int64_t only = argc > 2 ? atoll(argv[2]) : 0;
	/* enough inputs to push each other out of a 32 MiB L3 */
	enum { NX = 8 };

	if (reps < 1)
		reps = 1;
	for (int isa = ERT_ISA_AVX2; isa <= (int)ert_cpu_isa_best() && isa <= ERT_ISA_AVX512; isa++) {
		struct ert_cpu cpu = { .isa = (enum ert_cpu_isa)isa, .precision = ERT_LEVEL_NORMAL };
		double tot[2] = { 0, 0 }, macs_all = 0;

		printf("%-6s layer                kernel                 cold ms  GFLOP/s  GB/s    warm ms  GFLOP/s\n",
		       ert_cpu_isa_name(cpu.isa));
		for (size_t l = 0; l < sizeof(layers) / sizeof(layers[0]); l++) {
			int64_t c = layers[l].c, hw = layers[l].hw, s = layers[l].s;
			int64_t o = (hw + 2 - 3) / s + 1;

			if (only && hw != only)
				continue;
			struct ert_conv_geom g = {
				.nsp = 2, .in = { 1, hw, hw }, .k = { 1, 3, 3 }, .stride = { 1, s, s },
				.dil = { 1, 1, 1 }, .pad_b = { 0, 1, 1 }, .pad_e = { 0, 1, 1 },
				.out = { 1, o, o }, .win = { 1, 3, 3 },
			};
			float *x[NX], *w = frand(c * 9), *b = frand(c), *y = frand(c * o * o);
			double best[2] = { 1e30, 1e30 };
			double macs = (double)(c * o * o * 9), bytes = 4.0 * (double)(c * (hw * hw + o * o));
			const char *name = ert_dwconv_kernel(cpu.isa, &g);
			for (int i = 0; i < NX; i++)
				x[i] = frand(c * hw * hw);
			for (int warm = 0; warm < 2; warm++)
				for (int r = 0; r < reps; r++) {
					struct ert_dwconv_args a = {
						.g = &g, .n_img = 1, .c_in = c, .m = c, .m_g = 1,
						.x = x[warm ? 0 : r % NX], .w = w, .bias = b, .y = y,
						.act = { ERT_ACT_CLIP, 0.0f, 6.0f },
					};
					double t0 = now();

					if (!ert_dwconv_run(&cpu, &a)) {
						fprintf(stderr, "no depthwise kernel at %s\n", ert_cpu_isa_name(cpu.isa));
						return 1;
					}
					t0 = now() - t0;
					best[warm] = t0 < best[warm] ? t0 : best[warm];
				}
			printf("       %4lld x %3lld^2 s%lld      %-22s %7.3f  %7.1f  %5.1f  %7.3f  %7.1f\n",
			       (long long)c, (long long)hw, (long long)s, name ? name : "-",
			       best[0] * 1e3, 2 * macs / best[0] * 1e-9, bytes / best[0] * 1e-9,
			       best[1] * 1e3, 2 * macs / best[1] * 1e-9);
			tot[0] += best[0];
			tot[1] += best[1];
			macs_all += macs;
			for (int i = 0; i < NX; i++)
				free(x[i]);
			free(w);
			free(b);
			free(y);
		}
		printf("       all %zu layers                                    %7.3f  %7.1f         %7.3f  %7.1f\n",
		       sizeof(layers) / sizeof(layers[0]), tot[0] * 1e3, 2 * macs_all / tot[0] * 1e-9,
		       tot[1] * 1e3, 2 * macs_all / tot[1] * 1e-9);
	}
	return 0;
}
