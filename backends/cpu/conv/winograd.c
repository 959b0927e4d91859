/* SPDX-License-Identifier: MIT */
/* Winograd F(4x4, 3x3) and F(2x2, 3x3): the filter transforms and the kernels of each level. */
#include "cpu/conv/winograd.h"

#include <stdatomic.h>

static atomic_uint_fast64_t row_split_runs;

void ert_wino_note_row_split(void)
{
	atomic_fetch_add_explicit(&row_split_runs, 1, memory_order_relaxed);
}

uint64_t ert_wino_row_split_runs(void)
{
	return atomic_load_explicit(&row_split_runs, memory_order_relaxed);
}

static const struct ert_wino_kernels wino_avx2 = {
	"f32-winograd-4x4-3x3-avx2", 4, 36, false, ert_wino_input_avx2, ert_wino_output_avx2,
};
static const struct ert_wino_kernels wino_avx512 = {
	"f32-winograd-4x4-3x3-avx512", 4, 36, false, ert_wino_input_avx512, ert_wino_output_avx512,
};
static const struct ert_wino_kernels wino2_avx512 = {
	"f32-winograd-2x2-3x3-avx512", 2, 16, true, ert_wino2_input_avx512,
	ert_wino2_output_avx512,
};

const struct ert_wino_kernels *ert_wino_kernels_for(enum ert_cpu_isa isa, int tile)
{
	/* F(2x2) at avx512 only: see wino_shape() in ops/linalg-conv.c */
	if (tile == 2)
		return isa >= ERT_ISA_AVX512 ? &wino2_avx512 : NULL;
	return isa >= ERT_ISA_AVX512 ? &wino_avx512 : isa >= ERT_ISA_AVX2 ? &wino_avx2 : NULL;
}

/* G of F(4x4, 3x3): 6 x 3. */
static const double wino_g[6][3] = {
	{ 1.0 / 4, 0, 0 },
	{ -1.0 / 6, -1.0 / 6, -1.0 / 6 },
	{ -1.0 / 6, 1.0 / 6, -1.0 / 6 },
	{ 1.0 / 24, 1.0 / 12, 1.0 / 6 },
	{ 1.0 / 24, -1.0 / 12, 1.0 / 6 },
	{ 0, 0, 1 },
};

/* G of F(2x2, 3x3): 4 x 3. */
static const double wino2_g[4][3] = {
	{ 1, 0, 0 },
	{ 1.0 / 2, 1.0 / 2, 1.0 / 2 },
	{ 1.0 / 2, -1.0 / 2, 1.0 / 2 },
	{ 0, 0, 1 },
};

void ert_wino_filter_transform(const float *w, int64_t cout, int64_t cin, int pos, float *u)
{
	const int a = pos == ERT_WINO2_POS ? 4 : 6;
	const double(*gm)[3] = pos == ERT_WINO2_POS ? wino2_g : wino_g;

	for (int64_t o = 0; o < cout; o++) {
		for (int64_t i = 0; i < cin; i++) {
			const float *g = w + (o * cin + i) * 9;
			double t[6][3];

			/* t = G g, then U = t G^T, in double: rounded once */
			for (int r = 0; r < a; r++)
				for (int c = 0; c < 3; c++)
					t[r][c] = gm[r][0] * g[c] + gm[r][1] * g[3 + c] +
						  gm[r][2] * g[6 + c];
			for (int r = 0; r < a; r++)
				for (int c = 0; c < a; c++)
					u[((int64_t)(r * a + c) * cout + o) * cin + i] =
						(float)(t[r][0] * gm[c][0] + t[r][1] * gm[c][1] +
							t[r][2] * gm[c][2]);
		}
	}
}
