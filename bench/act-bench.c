/* SPDX-License-Identifier: MIT */
/*
 * act-bench: the exact-erf GELU (vmath.h's vgelu(), the act that the GEMM
 * driver fuses after ViT/BERT fc1), the tanh-form GELU and erf at each SIMD level up to the
 * session's (ERT_CPU_ISA lowers it): ns per element in thread CPU time, and
 * the largest error in ulps against double-precision libm over a grid.
 *
 *   cc -O2 -D_GNU_SOURCE -Ilibruntime/include -Ilibruntime -Ibackends -I. \
 *      bench/act-bench.c build/libedgert.a -lprotobuf-c -ljpeg -lpng16 -lz -lm -lpthread \
 *      -ldrm -lOpenCL -lvulkan -o build/act-bench
 *   build/act-bench [STRIDE [REPEATS]]
 *
 * Speed: the best of REPEATS (default 30) passes over 197 x 1536 values
 * (one vit_s16 fc1 output) drawn from N(-0.5, 1.5^2), roughly the spread of
 * fc1's pre-activations: mixed signs and magnitudes in every vector, so the
 * kernel's both branches run. Accuracy: every float with |x| in [2^-40, 20],
 * both signs, whose bit pattern is a multiple of STRIDE (default 2048: the
 * mantissa multiples of 2^-12 that test-vec-levels sweeps; 16 is 128 times
 * denser); GELU in ulps for x >= -10 and absolute below, the tanh form for
 * x >= -8, as vmath.h states. Then the Softmax and LayerNorm row kernels
 * (rows-tmpl.h) on vit_s16's shapes, ns per element (their accuracy is
 * test-vec-levels').
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu/cpu-impl.h"
#include "cpu/vec/vec.h"

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double r_gelu(double x) { return 0.5 * x * erfc(-x / sqrt(2.0)); }

/* 0.5 x (1 + tanh u) without its cancellation, as test-vec-levels */
static double r_gelu_tanh(double x)
{
	return x / (1.0 + exp(-2.0 * 0.79788456080286535588 * (x + 0.044715 * x * x * x)));
}

/* the spacing of floats at @r (subnormal spacing below FLT_MIN) */
static double ulp_of(double r)
{
	int e;

	if (fabs(r) < 0x1p-126)
		return ldexp(1.0, -149);
	frexp(fabs(r), &e);
	return ldexp(1.0, e - 24);
}

/* worst ulps for x >= split (and at which x), worst |error| below */
struct worst {
	double ulps, abs_below;
	float at;
};

static void grid_err(const struct ert_vec_kernels *vk, enum ert_vec_unary id, double (*ref)(double),
		     double split, uint32_t stride, struct worst *w)
{
	enum { B = 1 << 16 };
	static float x[B], y[B];
	struct ert_vec_uparams p = { 0 };
	uint32_t b = 0x2b800000u;   /* 2^-40 */
	bool done = false;

	memset(w, 0, sizeof(*w));
	while (!done) {
		int64_t n = 0;

		for (; n < B; b += stride) {
			float v;

			memcpy(&v, &b, sizeof(v));
			if (v > 20) {
				done = true;
				break;
			}
			x[n++] = v;
			x[n++] = -v;
		}
		vk->unary[id](x, y, n, &p);
		for (int64_t i = 0; i < n; i++) {
			double r = ref(x[i]), e = fabs((double)y[i] - r);

			if (x[i] < split) {
				if (e > w->abs_below)
					w->abs_below = e;
			} else if (e / ulp_of(r) > w->ulps) {
				w->ulps = e / ulp_of(r);
				w->at = x[i];
			}
		}
	}
}

int main(int argc, char **argv)
{
	uint32_t stride = argc > 1 ? (uint32_t)atoi(argv[1]) : 2048;
	int reps = argc > 2 ? atoi(argv[2]) : 30;
	enum { N = 197 * 1536 };
	static float x[N], y[N];
	uint64_t s = 0x9e3779b97f4a7c15ull;
	struct ert_vec_uparams p = { 0 };
	enum ert_cpu_isa best;
	struct ert_err err = { 0 };

	if (stride < 2 || stride % 2 || reps < 1) {
		fprintf(stderr, "usage: act-bench [STRIDE (even) [REPEATS]]\n");
		return 2;
	}
	if (ert_cpu_isa_choose(0, &best, &err) != ERT_OK) {
		fprintf(stderr, "act-bench: %s\n", err.msg);
		return 1;
	}
	/* N(-0.5, 1.5^2) by Box-Muller over a 64-bit LCG */
	for (int i = 0; i < N; i += 2) {
		double u[2];

		for (int k = 0; k < 2; k++) {
			s = s * 6364136223846793005ull + 1442695040888963407ull;
			u[k] = ((double)(s >> 11) + 0.5) * 0x1p-53;
		}
		x[i] = (float)(-0.5 + 1.5 * sqrt(-2 * log(u[0])) * cos(6.283185307179586 * u[1]));
		x[i + 1] = (float)(-0.5 + 1.5 * sqrt(-2 * log(u[0])) * sin(6.283185307179586 * u[1]));
	}
	printf("%-7s %-9s %10s %12s %14s\n", "level", "op", "ns/elem", "max ulp", "at x");
	for (int isa = ERT_ISA_AVX2; isa <= (int)best; isa++) {
		const struct ert_vec_kernels *vk = ert_vec_kernels_for((enum ert_cpu_isa)isa);
		static const struct {
			const char *name;
			enum ert_vec_unary id;
			double (*ref)(double);
			double split;
		} ops[] = { { "gelu", ERT_VEC_GELU, r_gelu, -10 },
			    { "gelu_tanh", ERT_VEC_GELU_TANH, r_gelu_tanh, -8 },
			    { "erf", ERT_VEC_ERF, erf, -INFINITY } };

		if (vk == NULL)
			continue;
		for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
			double t_best = INFINITY;
			struct worst w;

			for (int r = 0; r < reps; r++) {
				double t0 = now();

				vk->unary[ops[o].id](x, y, N, &p);
				t0 = now() - t0;
				if (t0 < t_best)
					t_best = t0;
			}
			grid_err(vk, ops[o].id, ops[o].ref, ops[o].split, stride, &w);
			printf("%-7s %-9s %10.3f %12.3f %14.9g", vk->level, ops[o].name, 1e9 * t_best / N,
			       w.ulps, w.at);
			if (ops[o].split > -INFINITY)
				printf("   below %g: |err| <= %.3g", ops[o].split, w.abs_below);
			printf("\n");
		}
		/* the row kernels on vit_s16's shapes: one attention's 6 x 197 rows of 197
		 * scores, one LayerNorm's 197 rows of 384 (scale 1, bias 0) */
		for (int o = 0; o < 2; o++) {
			int64_t n = o ? 384 : 197, rows = o ? 197 : 6 * 197;
			static float one[384], zero[384];
			double t_best = INFINITY;
			float mean, inv;

			for (int64_t i = 0; i < n; i++)
				one[i] = 1.0f;
			for (int r = 0; r < reps; r++) {
				double t0 = now();

				for (int64_t k = 0; k < rows; k++) {
					if (o)
						vk->layer_norm(x + k * n, one, zero, y + k * n, n, 1e-6,
							       &mean, &inv);
					else
						vk->softmax(x + k * n, y + k * n, n);
				}
				t0 = now() - t0;
				if (t0 < t_best)
					t_best = t0;
			}
			printf("%-7s %-9s %10.3f\n", vk->level, o ? "layernorm" : "softmax",
			       1e9 * t_best / (double)(rows * n));
		}
	}
	return 0;
}
