/* SPDX-License-Identifier: MIT */
/*
 * sgemm.h — the CPU backend's packed, register-blocked fp32 GEMM.
 *
 * C[m x n] = alpha * A[m x k] * B[k x n] (+ bias per row, or + C), then a
 * fused activation, for a batch of independent problems. The work is cut into
 * MC x NC tiles of C handed to the thread pool; each tile packs KC-deep panels
 * of A and B into its lane of the workspace and runs the MR x NR micro-kernel
 * over them. B can come from a callback so that convolution packs straight
 * from the image (implicit im2col) without a K x N temporary.
 */
#ifndef ERT_CPU_SGEMM_H
#define ERT_CPU_SGEMM_H

#include "cpu/cpu-impl.h"
#include "cpu/isa.h"

/*
 * Register-block sizes differ by kernel level (struct ert_sgemm_kernel); these
 * bound them, for scratch sized before the level is known.
 */
#define ERT_SGEMM_MR_MAX 16
#define ERT_SGEMM_NR_MAX 48
#define ERT_SGEMM_KC 256
#define ERT_SGEMM_MC 128
#define ERT_SGEMM_NC 256
/*
 * The largest B packed once for all row tiles (ert_sgemm_desc.b_shared): past
 * L2, but the one copy read back from L3 still beat packing per row tile on
 * Zen 3 (3x3/2 256 -> 256 at 28x28, 2.2 MiB: 36 -> 46 GFLOP/s at avx2).
 */
#define ERT_SGEMM_SHARED_B_MAX (4 << 20)
/*
 * Most units of an A packed lazily into ert_sgemm_desc.a_shared (row tiles x
 * K blocks): 197 x 1536 at avx512 is 12, 4096 x 4096 is 32 x 16 = 512. Past
 * it, A is packed first, in a parallel_for of its own.
 */
#define ERT_SGEMM_A_UNITS_MAX 512
/*
 * Most units of a B packed once into ert_sgemm_desc.b_shared by the tiles
 * (column tiles x K blocks; resnet50's most is 4 x 8). Past it, or on one
 * thread, B is packed first, in a parallel_for of its own.
 */
#define ERT_SGEMM_B_UNITS_MAX 256

/* What the micro-kernel does with its block of C once the K loop is done. */
struct ert_sgemm_epi {
	float alpha;
	bool load_c;             /* C += alpha * AB; else C = bias + alpha * AB */
	const float *bias;       /* per row, or NULL (ignored with load_c) */
	/*
	 * Then + cbias[j] per column, or NULL: given with the last K block only,
	 * so the sum is complete before it joins, as a separate Add would see it.
	 */
	const float *cbias;
	const float *res;        /* then + res[i * ldc + j], or NULL */
	/*
	 * Then an activation, as ert_act_apply() computes it: RELU C > 0 ? C : 0,
	 * CLIP C < lo ? lo : C > hi ? hi : C (lo <= hi; a NaN stays NaN).
	 */
	enum { ERT_EPI_NONE, ERT_EPI_RELU, ERT_EPI_CLIP } act;
	float lo, hi;
	/*
	 * For a kernel with prefetch_b: @pf_lines 64-byte lines from @pf on
	 * asked for towards L2, spread through the K loop (the driver's next B
	 * panel); 0: none. Likewise @pf2_lines from @pf2 on the K steps
	 * between (a prepacked A's next row panel). @pf_pairs: the kernel
	 * tests for both once every two K steps (a Conv's prepacked A, where
	 * that measured faster); else it tests for @pf alone each step (a
	 * MatMul's prepacked B, where the pairs measured slower at 2 threads).
	 * Other kernels ignore them.
	 */
	const void *pf;
	int64_t pf_lines;
	/*
	 * With pf_row_lines > 0 (the pairs' loop only), @pf's lines are rows
	 * of that many lines each, the next row's first line pf_skip bytes past
	 * the last row's end: a B read in place, its rows a plane apart. 0: one
	 * run.
	 */
	int64_t pf_row_lines, pf_skip;
	const void *pf2;
	int64_t pf2_lines;
	bool pf_pairs;
};

/*
 * C[mr x nr] (mr <= MR, nr <= NR; ldc floats between rows) from kc steps of a
 * packed A panel (kc x MR) and a B panel of kc rows of NR floats, ldb floats
 * apart (NR for a packed panel; a row stride to read B where it lies).
 */
typedef void (*ert_sgemm_ukernel_fn)(int64_t kc, const float *a, const float *b, int64_t ldb,
				     float *c, int64_t ldc, int64_t mr, int64_t nr,
				     const struct ert_sgemm_epi *e);

/*
 * Packing of an A or a B that is not prepacked, into the panels
 * ert_sgemm_pack_a_strided() and ert_sgemm_pack_b_strided() make (their
 * arguments): the same floats in the same places, the same zeros past an
 * edge panel's rows or columns, so every level's packing gives the same
 * bits.
 */
typedef void (*ert_sgemm_pack_a_strided_fn)(const float *a, int64_t rs, int64_t cs, int64_t m0,
					    int64_t mc, int64_t k0, int64_t kc, int mr,
					    float *dst);
typedef void (*ert_sgemm_pack_b_strided_fn)(const float *b, int64_t rs, int64_t cs, int64_t k0,
					    int64_t kc, int64_t n0, int64_t nc, int nr,
					    float *dst);

/*
 * The micro-kernel reading a full panel of MR rows of A where they lie
 * (@lda floats apart, K along each row) instead of packed: the same FMAs
 * in the same order as the level's fn, so the same bits.
 */
typedef void (*ert_sgemm_ukernel_arows_fn)(int64_t kc, const float *a, int64_t lda,
					   const float *b, int64_t ldb, float *c, int64_t ldc,
					   int64_t nr, const struct ert_sgemm_epi *e);

/*
 * Three full row panels of A (@a, a + a_ps, a + 2 * a_ps: 3 x MR rows) by
 * one narrow B panel (nr <= 16 columns) at once: one B vector a K step for
 * 3 x MR FMAs, where the level's fn takes one for MR and is bound by its
 * broadcasts of A. Each C element gets the same FMAs in the same order as
 * from three calls of fn, and the same epilogue: @e's bias and residual
 * are those of the first panel's rows, the others follow them.
 */
typedef void (*ert_sgemm_ukernel_edge3_fn)(int64_t kc, const float *a, int64_t a_ps,
					   const float *b, int64_t ldb, float *c, int64_t ldc,
					   int64_t nr, const struct ert_sgemm_epi *e);

struct ert_sgemm_kernel {
	const char *name;        /* "f32-gemm-8x48-avx512" */
	int mr, nr, kc;          /* register block and K block */
	ert_sgemm_ukernel_fn fn;
	/*
	 * bf16 operands (precision LOW): the driver packs A and B as bf16 pairs
	 * of K steps (ert_sbgemm_pack_*), and fn gets the number of pairs for
	 * kc, the panels' pairs through its float pointers and ldb in pairs.
	 */
	bool bf16;
	/*
	 * bf16 A packed by rows (ert_sbgemm_pack_a_rows(), blocks of kc of K)
	 * instead of as [K/2][mr] pairs: the AMX tile kernel's layout.
	 */
	bool a_rows;
	/*
	 * 3x3 stride-1 convolutions run on this kernel rather than on fp32
	 * Winograd F(4x4, 3x3) (measured faster on whole models).
	 */
	bool over_winograd;
	/*
	 * fn issues ert_sgemm_epi.pf_lines prefetches through its K loop, at
	 * most one every other K step (the driver asks for no more than that),
	 * and pf2_lines on the K steps between, on blocks of at least 2 rows
	 * (the driver gives lines to no others).
	 */
	bool prefetch_b;
	/*
	 * The level's packing of A and B (fp32 kernels; the bf16 ones pack with
	 * ert_sbgemm_pack_*): in-register transposes above scalar where A's
	 * rows or B's columns run along K (gemm/sgemm-pack-<level>.c).
	 */
	ert_sgemm_pack_a_strided_fn pack_a;
	ert_sgemm_pack_b_strided_fn pack_b;
	/* fn reading A in place (ert_sgemm_desc.a_direct), or NULL where the level has none */
	ert_sgemm_ukernel_arows_fn fn_arows;
	/* fn for three row panels of a narrow edge panel, or NULL */
	ert_sgemm_ukernel_edge3_fn fn_edge3;
	/*
	 * fn for a packed panel of fewer than mr rows, computing only those
	 * (the same FMAs and epilogue for them, so the same bits), or NULL
	 */
	ert_sgemm_ukernel_fn fn_short;
};

/* The GEMM kernel of level @isa (the best one at or below it). */
const struct ert_sgemm_kernel *ert_sgemm_kernel_for(enum ert_cpu_isa isa);

/*
 * The bf16 kernel (fp32 accumulation) for precision LOW at level @isa, or
 * NULL where there is none: it needs the avx512 level or above and a CPU
 * with AVX512_BF16 (a feature, not a level); at the amx level, the AMX-BF16
 * tile kernel.
 */
const struct ert_sgemm_kernel *ert_sbgemm_kernel_for(enum ert_cpu_isa isa);

/* The kernel Conv, Gemm and MatMul run in @cpu's session: bf16 with precision LOW where it can. */
static inline const struct ert_sgemm_kernel *ert_cpu_linalg_gemm(const struct ert_cpu *cpu)
{
	return cpu->gemm_low ? cpu->gemm_low : cpu->gemm;
}

/*
 * Fill @dst with rows [k0, k0 + kc) and columns [n0, n0 + nc) of problem
 * @batch's B, as ceil(nc / nr) panels of kc rows of nr floats (columns past
 * nc zero); @nr is the kernel's NR.
 */
typedef void (*ert_sgemm_pack_b_fn)(const void *ctx, int64_t batch, int64_t k0, int64_t kc,
				    int64_t n0, int64_t nc, int nr, float *dst);

struct ert_sgemm_desc {
	const struct ert_sgemm_kernel *kern; /* NULL: the scalar kernel */
	int64_t m, n, k, batch;
	const float *a;                 /* A(i, p) = a[a_off[b] + i * a_rs + p * a_cs] */
	int64_t a_rs, a_cs;
	/*
	 * Or A from ert_sgemm_pack_a() at a_packed + a_off[b] (for a bf16 kernel,
	 * from ert_sbgemm_pack_a_strided(), a_off counting pairs); likewise
	 * b_packed. bf16 kernels pack what is not packed, and ignore b_direct.
	 */
	const float *a_packed;
	const float *b;                 /* B(p, j) = b[b_off[b] + p * b_rs + j * b_cs] */
	int64_t b_rs, b_cs;
	const float *b_packed;          /* or B from ert_sgemm_pack_b() at b_packed + b_off[b] */
	ert_sgemm_pack_b_fn pack_b;     /* used instead of b when set */
	/*
	 * With b_cs == 1 and neither b_packed nor pack_b: the micro-kernel reads
	 * whole panels of B where they lie (rows b_rs apart) instead of packing
	 * them; a partial last panel is still packed.
	 */
	bool b_direct;
	const void *pack_ctx;
	float *c;                       /* C(i, j) = c[c_off[b] + i * ldc + j] */
	int64_t ldc;
	const int64_t *a_off, *b_off, *c_off, *bias_off; /* per problem; NULL: all 0 */
	const float *bias;              /* bias[bias_off[b] + i] added to row i, or NULL */
	/*
	 * col_bias[j] added to column j of every problem once the product is
	 * complete (after alpha, the row bias and an accumulated C; before the
	 * residual and act): MatMul's fused bias (ert.bias), Gemm's vector C.
	 */
	const float *col_bias;
	/*
	 * The complete product (after alpha, the row bias and an accumulated C)
	 * times *scale before col_bias, or NULL: MatMul's fused Mul by a
	 * constant (ert.scale), one rounding of the finished sum as the Mul's.
	 * The micro-kernels do not see it: with all of K in one block (no row
	 * bias, no C, alpha 1, a scale above 0) it is their alpha; otherwise the
	 * driver applies it, the column bias, the residual and the activation
	 * over each finished tile.
	 */
	const float *scale;
	float alpha;
	bool accumulate;                /* C += alpha * A * B (bias ignored) */
	/* Added after the product and bias, before act: residual[c_off[b] + i * ldc + j]. */
	const float *residual;
	struct ert_act_desc act;        /* applied to C once a tile is complete */
	/*
	 * Room for all of A packed (ert_sgemm_shared_a_floats(m, k) floats,
	 * 64-byte aligned), or NULL. With B prepacked and its columns split
	 * between threads, every column tile would pack the same rows of A
	 * again; with this buffer A is packed once, by the tiles, each K
	 * block of a row tile by the first tile to need it. Where a K block
	 * of all rows of A is small (at most 128 KiB: ViT's 197 tokens at
	 * avx512), A is then packed once on any number of threads and every
	 * tile spans all rows, so B is streamed once; on several threads with
	 * a few row panels of A a thread, each thread's tiles span its share
	 * of the rows instead (and all of N).
	 */
	float *a_shared;
	/*
	 * With a_cs == 1, A not prepacked and a kernel with fn_arows: the
	 * kernel reads full panels of A's rows where they lie instead of
	 * packed ones (a last panel of fewer rows is still packed, per tile
	 * and K block), and a_shared is not packed; the same bits.
	 */
	bool a_direct;
	/*
	 * Room for all of B packed (ert_sgemm_shared_b_floats(k, n) floats,
	 * 64-byte aligned), or NULL. B that is packed per tile (from b or
	 * pack_b) is packed again by every row tile of A; with this buffer and
	 * more than one row tile, B is packed once, all of K, by all threads,
	 * first, and the tiles step into it as into b_packed (fp32 kernels,
	 * batch 1; b_direct is then not used).
	 */
	float *b_shared;
	/*
	 * The session's CPU: an activation the micro-kernel's epilogue does not
	 * have runs on its vector kernels (ert_cpu_act_apply); NULL: the scalar
	 * reference.
	 */
	const struct ert_cpu *cpu;
};

/*
 * Workspace bytes ert_sgemm_run() needs for problems of this size run on up
 * to @lanes lanes (ert_cpu_lanes(): the backend's threads, not the machine's
 * CPUs); ert_sgemm_run() uses no more lanes than the workspace has slots.
 */
/*
 * Do B rows @row_floats apart spread over the L1 cache well enough for the
 * kernel to read B in place (ert_sgemm_desc.b_direct)? Not where 128 rows'
 * first three lines fall into fewer than 16 of the 64 L1 sets (a row stride
 * of a multiple of 1 KiB: 32x32 or 64x64 planes): those always pack.
 */
bool ert_sgemm_b_rows_spread(int64_t row_floats);
size_t ert_sgemm_workspace(uint32_t lanes, int64_t m, int64_t n, int64_t k);
/* Floats of ert_sgemm_desc.a_shared for one m x k A, at any level's MR. */
size_t ert_sgemm_shared_a_floats(int64_t m, int64_t k);
/*
 * Floats of ert_sgemm_desc.b_shared for one k x n B at any level's NR, or 0
 * where B packed is over ERT_SGEMM_SHARED_B_MAX bytes: then it is packed per
 * tile, in the caches, rather than written out whole and read back.
 */
size_t ert_sgemm_shared_b_floats(int64_t k, int64_t n);

/*
 * Run @d on @pool (NULL: inline) with at most @threads lanes, using @ws of
 * @ws_size bytes (at least ert_sgemm_workspace(); more lanes fit in more).
 * Calls ert_parallel_for once; must not be called from inside it.
 */
void ert_sgemm_run(struct ert_threadpool *pool, uint32_t threads, const struct ert_sgemm_desc *d,
		   void *ws, size_t ws_size);

/*
 * How ert_sgemm_run() would cut @d on @threads lanes with @ws_size bytes of
 * workspace, run nothing (for tests): row and column tiles, lanes, whether
 * the lanes' home parts are runs of column tiles (by_cols) and then the
 * columns of each lane's home (lane_cols[l]), and whether a B packed once
 * into b_shared is packed by the tiles themselves (b_lazy) rather than in
 * a parallel_for first; by_rows: the lanes' homes are row tiles of all
 * rows, lane l's row tile l (B prepacked, A a few row panels a lane: see
 * WHOLE_A_ROWS_PANELS in sgemm.c). All zero for an empty problem.
 */
struct ert_sgemm_split {
	int64_t mt, nt, lanes;
	bool by_cols, b_lazy, by_rows;
	int64_t lane_cols[ERT_MAX_THREADS];
};

void ert_sgemm_split_of(uint32_t threads, const struct ert_sgemm_desc *d, size_t ws_size,
			struct ert_sgemm_split *out);

/* The kernels of each level (gemm/sgemm-ukernel*.c). */
void ert_f32_gemm_ukernel_4x8__scalar(int64_t kc, const float *a, const float *b, int64_t ldb,
				      float *c, int64_t ldc, int64_t mr, int64_t nr,
				      const struct ert_sgemm_epi *e);
void ert_f32_gemm_ukernel_6x16__avx2(int64_t kc, const float *a, const float *b, int64_t ldb,
				     float *c, int64_t ldc, int64_t mr, int64_t nr,
				     const struct ert_sgemm_epi *e);
void ert_f32_gemm_ukernel_8x48__avx512(int64_t kc, const float *a, const float *b, int64_t ldb,
				       float *c, int64_t ldc, int64_t mr, int64_t nr,
				       const struct ert_sgemm_epi *e);
void ert_f32_gemm_ukernel_24x16__avx512_edge3(int64_t kc, const float *a, int64_t a_ps,
					      const float *b, int64_t ldb, float *c, int64_t ldc,
					      int64_t nr, const struct ert_sgemm_epi *e);
void ert_f32_gemm_ukernel_8x48__avx512_arows(int64_t kc, const float *a, int64_t lda,
					     const float *b, int64_t ldb, float *c, int64_t ldc,
					     int64_t nr, const struct ert_sgemm_epi *e);
void ert_f32_gemm_ukernel_8x48__avx512_short(int64_t kc, const float *a, const float *b,
					     int64_t ldb, float *c, int64_t ldc, int64_t mr,
					     int64_t nr, const struct ert_sgemm_epi *e);

/*
 * Whole-matrix packing of constant operands at plan time: A (m x k) into
 * ceil(m / mr) panels of k x mr, B (k x n) into ceil(n / nr) panels of k x nr
 * (mr, nr: the kernel's MR and NR). The *_floats functions give the size of
 * the result.
 */
size_t ert_sgemm_packed_a_floats(int64_t m, int64_t k, int mr);
void ert_sgemm_pack_a(const float *a, int64_t rs, int64_t cs, int64_t m, int64_t k, int mr,
		      float *dst);
size_t ert_sgemm_packed_b_floats(int64_t k, int64_t n, int nr);
void ert_sgemm_pack_b(const float *b, int64_t rs, int64_t cs, int64_t k, int64_t n, int nr,
		      float *dst);

/* Pack rows [m0, m0+mc) x cols [k0, k0+kc) of a strided A into mr-row panels. */
void ert_sgemm_pack_a_strided(const float *a, int64_t rs, int64_t cs, int64_t m0, int64_t mc,
			      int64_t k0, int64_t kc, int mr, float *dst);
/* Pack rows [k0, k0+kc) x cols [n0, n0+nc) of a strided B into nr-column panels. */
void ert_sgemm_pack_b_strided(const float *b, int64_t rs, int64_t cs, int64_t k0, int64_t kc,
			      int64_t n0, int64_t nc, int nr, float *dst);

/*
 * The same at avx2 (gemm/sgemm-pack-avx2.c): 8x8 in-register transposes
 * where A's rows run along K (cs 1; MR 6 or 8) and where B's columns do
 * (rs 1, a transposed B; NR a multiple of 8), the rows of a transposed A
 * (rs 1, MR at most 8) through lane masks; other panels as the scalar ones.
 */
void ert_sgemm_pack_a_strided__avx2(const float *a, int64_t rs, int64_t cs, int64_t m0,
				    int64_t mc, int64_t k0, int64_t kc, int mr, float *dst);
void ert_sgemm_pack_b_strided__avx2(const float *b, int64_t rs, int64_t cs, int64_t k0,
				    int64_t kc, int64_t n0, int64_t nc, int nr, float *dst);
/*
 * B at avx512 (gemm/sgemm-pack-avx512.c): a transposed B (rs 1, NR a
 * multiple of 16) by 16x16 transposes, a last block of fewer than 16 K
 * steps through zero-masked loads; B with cs 1 (NR 16, 32 or 48) by zmm
 * copies of each row, masked past nc; other B as at avx2. A at avx512 is
 * packed by the avx2 function (8-row panels: one 8x8 transpose a block).
 */
void ert_sgemm_pack_b_strided__avx512(const float *b, int64_t rs, int64_t cs, int64_t k0,
				      int64_t kc, int64_t n0, int64_t nc, int nr, float *dst);

/*
 * bf16 packing (gemm/sbgemm-avx512bf16.c; only with AVX512_BF16): fp32 in,
 * round to nearest even, pairs of consecutive K steps out, one 32-bit word
 * per pair, an odd K padded with a zero step. A block of rows [m0, m0+mc) x
 * K [k0, k0+kc) as panels of ceil(kc / 2) x mr pairs; of B, K [k0, k0+kc) x
 * columns [n0, n0+nc) as panels of ceil(kc / 2) x nr pairs (columns past nc
 * zero). Whole matrices (k0 = 0, all of K) give the plan-time packed form,
 * ert_sbgemm_packed_words() words (floats' worth) for @rows rounded up to
 * @panel.
 */
size_t ert_sbgemm_packed_words(int64_t rows, int64_t k, int panel);
void ert_sbgemm_pack_a_strided(const float *a, int64_t rs, int64_t cs, int64_t m0, int64_t mc,
			       int64_t k0, int64_t kc, int mr, uint32_t *dst);
void ert_sbgemm_pack_b_strided(const float *b, int64_t rs, int64_t cs, int64_t k0, int64_t kc,
			       int64_t n0, int64_t nc, int nr, uint32_t *dst);
/*
 * A as the AMX kernel reads it: per panel of mr rows, K in blocks of
 * @kblock (the kernel's K block; the last may be shorter), each block as mr
 * rows of ceil(kb / 2) pairs; as many words as ert_sbgemm_pack_a_strided().
 */
void ert_sbgemm_pack_a_rows(const float *a, int64_t rs, int64_t cs, int64_t m0, int64_t mc,
			    int64_t k0, int64_t kc, int mr, int64_t kblock, uint32_t *dst);
/*
 * In place: B panels of kc rows of nr floats (an ert_sgemm_pack_b_fn's
 * output for nc columns) to the bf16 panels ert_sbgemm_pack_b_strided()
 * makes.
 */
void ert_sbgemm_panels_to_bf16(float *buf, int64_t kc, int64_t nc, int nr);
void ert_bf16_gemm_ukernel_8x48__avx512bf16(int64_t kq, const float *a, const float *b,
					    int64_t ldb, float *c, int64_t ldc, int64_t mr,
					    int64_t nr, const struct ert_sgemm_epi *e);
void ert_bf16_gemm_ukernel_16x48__amx(int64_t kq, const float *a, const float *b, int64_t ldb,
				      float *c, int64_t ldc, int64_t mr, int64_t nr,
				      const struct ert_sgemm_epi *e);

#endif /* ERT_CPU_SGEMM_H */
