/* SPDX-License-Identifier: MIT */
/*
 * q8add-bench: the fixed-rule QLinearAdd (ert_q8_add_run(), cpu/ops/
 * qlinear-kernels.h) over the 16 residual Adds of the int8 ResNet-50, at
 * each SIMD level up to the session's (ERT_CPU_ISA lowers it): the 32-bit
 * form the level runs now against the three requantisations' lanes it ran
 * before (the same struct with the form switched off), alternating in the
 * same process, one thread, in thread CPU time. Every run's bytes are
 * compared with the scalar tables': exit 1 on a difference.
 *
 *   cc -O2 -D_GNU_SOURCE -Ilibruntime/include -Ilibruntime -Ibackends -I. \
 *      bench/q8add-bench.c build/libedgert.a -lprotobuf-c -ljpeg -lpng16 -lz -lm -lpthread \
 *      -ldrm -lOpenCL -lvulkan -o build/q8add-bench
 *   build/q8add-bench [REPEATS]
 *
 * Per level and clamp (int8 like `edgert quantize`'s models: ReLU, the
 * clamp at the output zero point, and the type's full range, which takes the
 * sum's sign correction): the best of REPEATS (default 20) passes over the
 * 16 Adds (5.5 M elements), old and new, in ms and ns per element.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu/cpu-impl.h"
#include "cpu/ops/qlinear-kernels.h"

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* elements of the residual Adds of ResNet-50 (C x H x W of each stage's blocks) */
static const int64_t adds[] = {
	802816, 802816, 802816, 401408, 401408, 401408, 401408, 200704,
	200704, 200704, 200704, 200704, 200704, 100352, 100352, 100352,
};
#define NADD (sizeof(adds) / sizeof(adds[0]))

/* One pass over the 16 Adds with @p; the time taken. */
static double pass(const struct ert_q8_add *p, uint8_t *const *a, uint8_t *const *b,
		   uint8_t *const *y)
{
	double t = now();

	for (size_t i = 0; i < NADD; i++)
		ert_q8_add_run(p, a[i], 1, b[i], 1, y[i], adds[i]);
	return now() - t;
}

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 20;
	enum ert_cpu_isa top;
	struct ert_err err;
	uint8_t *a[NADD], *b[NADD], *y[NADD], *ref[NADD];
	struct ert_q8_add *p = malloc(sizeof(*p)), *old = malloc(sizeof(*old)),
			  *scalar = malloc(sizeof(*scalar));
	int64_t total = 0;
	uint32_t r = 12345;
	int bad = 0;

	if (!p || !old || !scalar || reps < 1 || ert_cpu_isa_choose(0, &top, &err) != ERT_OK) {
		fprintf(stderr, "q8add-bench: %s\n", reps < 1 ? "bad REPEATS" : err.msg);
		return 2;
	}
	for (size_t i = 0; i < NADD; i++) {
		a[i] = malloc((size_t)adds[i]);
		b[i] = malloc((size_t)adds[i]);
		y[i] = malloc((size_t)adds[i]);
		ref[i] = malloc((size_t)adds[i]);
		if (!a[i] || !b[i] || !y[i] || !ref[i])
			return 2;
		for (int64_t k = 0; k < adds[i]; k++) {
			r = r * 1664525u + 1013904223u;
			a[i][k] = (uint8_t)(r >> 24);
			b[i][k] = (uint8_t)(r >> 16);
		}
		total += adds[i];
	}
	printf("q8add-bench: %lld elements a pass, best of %d, thread CPU time\n",
	       (long long)total, reps);
	printf("%-7s %-10s %10s %10s %8s %8s %6s\n", "level", "clamp", "old ms", "new ms", "old ns",
	       "new ns", "x");
	for (int relu = 1; relu >= 0; relu--) {
		/* output zero point -20: ReLU clamps at it, the full range lets negatives through */
		struct ert_qout qo = { .dtype = ERT_DTYPE_INT8, .zp = -20, .lo = relu ? -20 : -128,
				       .hi = 127, .fixed = true };

		if (!ert_q8_add_init(scalar, ERT_ISA_SCALAR, &qo, 0.0473, -9, 0.0311, 14, 0.0622))
			return 2;
		for (size_t i = 0; i < NADD; i++)
			ert_q8_add_run(scalar, a[i], 1, b[i], 1, ref[i], adds[i]);
		for (int isa = ERT_ISA_AVX2; isa <= (int)top && isa <= ERT_ISA_AVX512; isa++) {
			double best_old = 1e30, best_new = 1e30;

			ert_q8_add_init(p, (enum ert_cpu_isa)isa, &qo, 0.0473, -9, 0.0311, 14, 0.0622);
			*old = *p;
			old->fast = NULL;
			for (int k = 0; k < reps; k++) {
				double t_old = pass(old, a, b, y), t_new;

				for (size_t i = 0; i < NADD; i++)
					bad |= memcmp(y[i], ref[i], (size_t)adds[i]) != 0;
				t_new = pass(p, a, b, y);
				for (size_t i = 0; i < NADD; i++)
					bad |= memcmp(y[i], ref[i], (size_t)adds[i]) != 0;
				best_old = t_old < best_old ? t_old : best_old;
				best_new = t_new < best_new ? t_new : best_new;
			}
			printf("%-7s %-10s %10.3f %10.3f %8.3f %8.3f %6.2f%s\n",
			       ert_cpu_isa_name((enum ert_cpu_isa)isa), relu ? "relu" : "full",
			       best_old * 1e3, best_new * 1e3, best_old * 1e9 / (double)total,
			       best_new * 1e9 / (double)total, best_old / best_new,
			       p->fast ? "" : " (32-bit form not taken)");
		}
	}
	if (bad)
		fprintf(stderr, "q8add-bench: outputs differ from the scalar tables'\n");
	for (size_t i = 0; i < NADD; i++) {
		free(a[i]);
		free(b[i]);
		free(y[i]);
		free(ref[i]);
	}
	free(p);
	free(old);
	free(scalar);
	return bad;
}
