/* SPDX-License-Identifier: MIT */
/*
 * winograd.h — 3x3 stride-1 convolution as Winograd F(4x4, 3x3) or F(2x2, 3x3).
 *
 * Each 6x6 input tile d (4x4 outputs plus the 3x3 window's halo) becomes
 * V = B^T d B, each 3x3 filter g becomes U = G g G^T, and the 36 products
 * M[p] = U[p] V[p] summed over input channels are 36 independent GEMMs
 * (Cout x Cin times Cin x tiles) run on the packed SGEMM; Y = A^T M A gives
 * the 4x4 outputs. 36 multiplies per 16 outputs instead of 144: the
 * arithmetic of a 3x3 layer drops 4x, at the price of the transforms and a
 * rounding error some 10x that of the direct sum (still ~1e-6 relative for
 * unit-scale data; tests hold it to 1e-4 of the output's magnitude).
 *
 * F(2x2, 3x3) is the same with 4x4 input tiles d (2x2 outputs) and 16
 * positions: 16 multiplies per 4 outputs (2.25x fewer than direct, against
 * 4x), transformed filters of 16 / 9 the weights' size (F(4x4): 4x), and a
 * rounding error close to the direct sum's. linalg-conv.c takes it where
 * F(4x4)'s tiles are few and padded (14x14 planes: 16 tiles of 16x16).
 *
 * The transforms run across tiles in the level's vectors, compiled once per
 * kernel level (winograd-<level>.c include winograd-tmpl.h). The scalar
 * level never uses Winograd: its direct convolution is the reference.
 */
#ifndef ERT_CPU_WINOGRAD_H
#define ERT_CPU_WINOGRAD_H

#include "cpu/gemm/sgemm.h"

#define ERT_WINO_ALPHA 6         /* F(4x4)'s tile side: 4 outputs + 3 - 1 */
#define ERT_WINO_POS 36          /* ALPHA * ALPHA transform positions (the most of both) */
#define ERT_WINO2_POS 16         /* F(2x2, 3x3): 4 x 4 positions */

/* What the transforms need of one image and one block of tiles. */
struct ert_wino_tiles {
	const float *x;              /* input image: channels of h x w planes */
	int64_t h, w, pad_t, pad_l;  /* input size and padding before */
	int64_t oh, ow;              /* output size */
	int64_t tiles_w;             /* tiles across a row: ceil(ow / 4), F(2x2): ceil(ow / 2) */
	int64_t t0, nt;              /* the block: tiles t0 .. t0 + nt - 1 */
	int nr;                      /* tiles per packed panel (the GEMM's NR) */
	int64_t cin, cout;
	/*
	 * Floats from one transform position's data to the next, in V (the
	 * input transform's packed panels) and M (the GEMM's products): at
	 * least the position's size, an odd number of 64-byte lines, so the
	 * 36 positions a transform reads or writes together fall in different
	 * L1 sets (see ert_wino_pos_stride()).
	 */
	int64_t v_pos, m_pos;
	/*
	 * The rows of transform positions the input transform writes:
	 * positions row0 * A .. row1 * A - 1 (A the tile side: 6, F(2x2) 4);
	 * row1 0: all. linalg-conv.c gives each thread the rows whose GEMMs
	 * its own lane runs (see wino_conv()).
	 */
	int row0, row1;
};

/*
 * The position stride for @n floats of one position: @n rounded up to whole
 * 64-byte lines, plus one line when that is an even number of lines. With
 * the natural stride (often a multiple of 4 KiB: 3 panels x 64 channels x 16
 * tiles) every one of the 36 streams mapped to the same L1 set.
 */
static inline int64_t ert_wino_pos_stride(int64_t n)
{
	int64_t lines = (n + 15) / 16;

	return (lines | 1) * 16;
}

/*
 * Input transform of channels [c0, c1) of the block into @v, laid out as
 * the GEMM's packed B: 36 (F(2x2): 16) positions t->v_pos floats apart,
 * each [ceil(nt / nr)][cin][nr] (tiles past nt zero); only the positions
 * of rows t->row0 .. t->row1 - 1, where t->row1 is set.
 */
typedef void (*ert_wino_input_fn)(const struct ert_wino_tiles *t, int64_t c0, int64_t c1,
				  float *v);
/*
 * Output transform of channels [c0, c1) from @m (36 (F(2x2): 16) positions
 * t->m_pos floats apart, each [cout][ldm], tile i of the block at column
 * i) into the output image @y (cout planes of oh x ow):
 * plus bias[c] (NULL: none), plus @res at the same place in an image like
 * @y (NULL: none), then ReLU/Clip per @act (the GEMM epilogue's encoding;
 * other activations are applied by the caller afterwards).
 */
typedef void (*ert_wino_output_fn)(const struct ert_wino_tiles *t, const float *m, int64_t ldm,
				   const float *bias, const float *res,
				   const struct ert_sgemm_epi *act, int64_t c0, int64_t c1,
				   float *y);

struct ert_wino_kernels {
	const char *name;            /* "f32-winograd-4x4-3x3-avx512" */
	int tile;                    /* outputs per tile side: 4 or 2 */
	int pos;                     /* transform positions: 36 or 16 */
	/*
	 * F(2x2): the GEMM runs with its roles swapped, tiles as its rows and
	 * output channels as its columns: the input transform packs V as A
	 * panels (t->nr = MR), the transformed filters come transposed as B
	 * panels (ERT_CPU_PACK_WINO_B), and the output transform reads each
	 * position of M as [tile][ldm] instead of [cout][ldm].
	 */
	bool tiles_as_rows;
	ert_wino_input_fn input;
	ert_wino_output_fn output;
};

/*
 * The F(@tile x @tile, 3x3) transforms (tile 4 or 2) of level @isa; NULL at
 * the scalar level, and for F(2x2) below avx512.
 */
const struct ert_wino_kernels *ert_wino_kernels_for(enum ert_cpu_isa isa, int tile);

/*
 * U = G g G^T of every (cout, cin) filter of @w ([cout][cin][3][3]) into @u
 * ([pos][cout][cin]); @pos 36 is F(4x4, 3x3), 16 F(2x2, 3x3).
 */
void ert_wino_filter_transform(const float *w, int64_t cout, int64_t cin, int pos, float *u);

/*
 * Convolutions run with the input transform split by rows of positions
 * (linalg-conv.c's wino_conv() on several threads), since the process
 * started: for tests, which assert the path.
 */
void ert_wino_note_row_split(void);
uint64_t ert_wino_row_split_runs(void);

/* The per-level instances (winograd-avx2.c, winograd-avx512.c). */
void ert_wino_input_avx2(const struct ert_wino_tiles *t, int64_t c0, int64_t c1, float *v);
void ert_wino_output_avx2(const struct ert_wino_tiles *t, const float *m, int64_t ldm,
			  const float *bias, const float *res, const struct ert_sgemm_epi *act,
			  int64_t c0, int64_t c1, float *y);
void ert_wino_input_avx512(const struct ert_wino_tiles *t, int64_t c0, int64_t c1, float *v);
void ert_wino_output_avx512(const struct ert_wino_tiles *t, const float *m, int64_t ldm,
			    const float *bias, const float *res, const struct ert_sgemm_epi *act,
			    int64_t c0, int64_t c1, float *y);
void ert_wino2_input_avx512(const struct ert_wino_tiles *t, int64_t c0, int64_t c1, float *v);
void ert_wino2_output_avx512(const struct ert_wino_tiles *t, const float *m, int64_t ldm,
			     const float *bias, const float *res, const struct ert_sgemm_epi *act,
			     int64_t c0, int64_t c1, float *y);

#endif /* ERT_CPU_WINOGRAD_H */
