/* SPDX-License-Identifier: MIT */
/*
 * qgemm.h — the CPU backend's packed int8 GEMM, exact in int32.
 *
 * The integer ops (QLinearConv, ConvInteger, QLinearMatMul, MatMulInteger,
 * QGemm) reduce to C[m x n] = sum_p (a(i, p) - az_i) * (b(p, j) - bz_j) in
 * int32 with wraparound. The kernels multiply bytes: A is packed as signed
 * bytes (uint8 A flipped by 128), B as unsigned bytes (int8 B flipped by 128),
 * four K steps per 32-bit lane, and compute raw(i, j) = sum_p as(i, p) bu(p, j).
 * With az'_i = az_i - oa and bz'_j = bz_j - ob (oa, ob: the flips, so that
 * a - az = as - az' and b - bz = bu - bz'), modulo 2^32
 *
 *	C(i, j) = raw(i, j) - bz'_j * rowsum_i - az'_i * colsum_j + K * az'_i * bz'_j
 *
 * where rowsum and colsum are the sums of the packed bytes over the K real
 * steps (zero past K). Integer arithmetic is exact, so C is bit for bit the
 * scalar reference's accumulator, whatever the order of the sums.
 *
 * Layouts, K4 = ceil(K / 4):
 *   packed A: blocks of MR rows, [K4][MR][4 bytes] (ERT_QGEMM_A_S8X4: the
 *     VNNI operand), [K4][MR][2][2 int16] (ERT_QGEMM_A_S16: the bytes
 *     0, 2 and 1, 3 of each quad as int16 pairs, for vpmaddwd) or
 *     [K4 / 16][MR][16 quads] (ERT_QGEMM_A_AMX: AMX tile rows, K4 rounded
 *     up to 16 with zero quads); K4 step q of a block starts at q * MR *
 *     (4 or 8) bytes in all three when q is a multiple of 16;
 *   packed B: panels of up to NR columns, [K4][w][4 bytes], w a multiple of
 *     the kernel's vector width VC (columns past the matrix zero).
 *
 * The micro-kernels compute a block of MR x (nv * VC) raw sums into a
 * scratch tile; the epilogue (per level) applies the corrections above and
 * the output stage of the op (int32, or the float or fixed requantisation
 * of docs/int8.md, identical to cpu/ops/qlinear-kernels.h) to one row.
 */
#ifndef ERT_CPU_QGEMM_H
#define ERT_CPU_QGEMM_H

#include <stddef.h>
#include <stdint.h>

#include "cpu/cpu-impl.h"
#include "cpu/isa.h"

#define ERT_QGEMM_MR_MAX 16
#define ERT_QGEMM_NR_MAX 48
#define ERT_QGEMM_NV_MAX 3

enum ert_qgemm_afmt {
	ERT_QGEMM_A_S8X4 = 1,    /* 4 bytes per row and K4 step */
	ERT_QGEMM_A_S16 = 2,     /* 8 bytes per row and K4 step */
	ERT_QGEMM_A_AMX = 3,     /* [K4 / 16][MR][64 bytes], K4 rounded up to 16: tile rows */
};

/*
 * raw[i][j] for i < MR, j < nv * VC (ldc int32 between rows) from @k4 steps
 * of one packed A block @a and a packed B panel @b of @bw columns; plus the
 * sums already in @c when @add (K is done in blocks that stay in L1).
 */
typedef void (*ert_qgemm_ukernel_fn)(int64_t k4, const void *a, const uint8_t *b, int64_t bw,
				     int32_t *c, int64_t ldc, bool add);

/* How a row of raw sums becomes the op's output. */
enum ert_qgemm_out {
	ERT_QGEMM_OUT_I32,       /* int32 (ConvInteger, MatMulInteger) */
	ERT_QGEMM_OUT_FIXED,     /* fixed rule: requant(v, m, s) + zp, clamped, int8/uint8 */
	ERT_QGEMM_OUT_FLOAT,     /* float rule: rint((double)v * f) + zp, clamped, int8/uint8 */
	ERT_QGEMM_OUT_F32,       /* (float)((double)v * f): QGemm without y_zero_point */
};

/*
 * One row of output: v[j] = raw[j] + c0 + c1 * u[j] + c2 * t[j] + w[j]
 * (modulo 2^32; a NULL array adds nothing), then the output stage with
 * per-column parameters (mult/shift/f non-NULL) or the row's (mult1, ...).
 * mult and shift are already clamped as ert_requant_fixed() clamps them.
 */
struct ert_q8_add;

struct ert_qgemm_epi {
	uint32_t c0, c1, c2;
	const int32_t *u, *t, *w;
	enum ert_qgemm_out mode;
	const int32_t *mult, *shift;
	const double *f;
	int32_t mult1, shift1;
	double f1;
	int32_t zp, lo, hi;
	/*
	 * A fused residual (QLinearConv "ert.residual", the fixed rule only):
	 * each output, its value after the stage above (clamped to the type),
	 * becomes the fixed-rule Add of it and the byte r[j] through res
	 * (cpu/ops/qlinear-kernels.h), as ert_q8_add_run() computes it. NULL:
	 * none.
	 */
	const struct ert_q8_add *res;
	const uint8_t *r;
};

/* Write @n outputs of one row from @raw to @dst (int32, bytes or floats per mode). */
typedef void (*ert_qgemm_epi_fn)(const int32_t *raw, int64_t n, const struct ert_qgemm_epi *e,
				 void *dst);

/*
 * The terms of a block's rows that differ from row to row (a convolution's
 * output channels): row r adds c0[r] to e->c0 and takes c1[r], mult1[r],
 * shift1[r] and f1[r] for e's; a NULL array leaves e's value.
 */
struct ert_qgemm_rows {
	const int32_t *c0, *c1, *mult1, *shift1;
	const double *f1;
};

/*
 * The same for a block of @rows rows just out of the micro-kernel, while its
 * raw sums are in L1: row r from raw + r * ldr, with e and row r of @rt, to
 * (char *)dst + r * ldd bytes. One call per micro-tile instead of one per
 * row; each row's outputs are those of epi with that row's terms.
 */
typedef void (*ert_qgemm_epi_rows_fn)(const int32_t *raw, int64_t ldr, int64_t rows, int64_t n,
				      const struct ert_qgemm_epi *e,
				      const struct ert_qgemm_rows *rt, void *dst, int64_t ldd);

struct ert_qgemm_kernel {
	const char *name;        /* "q8-gemm-8x48-avx512vnni" */
	int mr, vc, nv;          /* rows, columns per vector, vectors: NR = vc * nv */
	int kc4;                 /* K4 steps per block: a B panel's block stays in L1 */
	enum ert_qgemm_afmt afmt;
	/* ukernel[v - 1]: v vectors of columns (narrow panels at the right edge) */
	ert_qgemm_ukernel_fn ukernel[ERT_QGEMM_NV_MAX];
	ert_qgemm_epi_fn epi;
	ert_qgemm_epi_rows_fn epi_rows;
};

static inline int ert_qgemm_nr(const struct ert_qgemm_kernel *k)
{
	return k->vc * k->nv;
}

/* The int8 GEMM of level @isa (the best at or below it); NULL at the scalar level. */
const struct ert_qgemm_kernel *ert_qgemm_kernel_for(enum ert_cpu_isa isa);
/* Every kernel, for scratch sized before the level is known; NULL-terminated. */
extern const struct ert_qgemm_kernel *const ert_qgemm_kernels[];

static inline int64_t ert_qgemm_k4(int64_t k)
{
	return (k + 3) / 4;
}

/* Bytes of one packed A block (MR rows, K columns), and of its K4 step. */
size_t ert_qgemm_a_block_bytes(const struct ert_qgemm_kernel *k, int64_t K);
static inline size_t ert_qgemm_a_step_bytes(const struct ert_qgemm_kernel *k)
{
	return (size_t)k->mr * (k->afmt == ERT_QGEMM_A_S16 ? 8 : 4);
}

/*
 * Pack rows [0, mr) (mr <= MR; the rest zero) of A(i, p) = a[i * rs + p * cs]
 * (bytes; uint8 when @a_u8, flipped to signed) into one A block at @dst, and
 * their sums of packed values into rowsum[0 .. MR).
 */
void ert_qgemm_pack_a_block(const struct ert_qgemm_kernel *k, const void *a, bool a_u8,
			    int64_t rs, int64_t cs, int64_t mr, int64_t K, void *dst,
			    int32_t *rowsum);

/* Bytes of B columns [0, nc) packed as panels of the kernel's NR. */
size_t ert_qgemm_b_bytes(const struct ert_qgemm_kernel *k, int64_t K, int64_t nc);

/*
 * Pack B(p, j) = b[p * rs + j * cs] for p < K, j < nc (bytes; int8 when
 * @b_s8, flipped to unsigned) as panels of NR columns at @dst; colsum[j]
 * (j < nc; NULL: not wanted) gets the sum of column j's packed values.
 */
void ert_qgemm_pack_b(const struct ert_qgemm_kernel *k, const void *b, bool b_s8, int64_t rs,
		      int64_t cs, int64_t K, int64_t nc, uint8_t *dst, int32_t *colsum);

/*
 * Interleave four rows of @nc bytes (K steps 4 * k4 .. 4 * k4 + 3; NULL rows
 * are zeros after the flip) into K4 step @k4 of the panels at @dst, xor-ing
 * each byte with @flip; colsum[j] += the four packed bytes when non-NULL.
 */
void ert_qgemm_pack_b_quad(const struct ert_qgemm_kernel *k, const uint8_t *const rows[4],
			   uint8_t flip, int64_t nc, int64_t K4, int64_t k4, uint8_t *dst,
			   int32_t *colsum);

/* Offset of the panel holding column @j0 (a multiple of NR) in packed B. */
static inline size_t ert_qgemm_b_panel_offset(const struct ert_qgemm_kernel *k, int64_t K,
					      int64_t j0)
{
	return (size_t)(j0 * ert_qgemm_k4(K) * 4);
}

/*
 * The pack-cache entries (ERT_CPU_PACK_Q8A, ERT_CPU_PACK_Q8B), one matrix
 * of rows x cols bytes at key->src (key->count is the caller's): Q8A packs
 * it as A blocks followed by the rows' sums (int32, rows rounded up to MR);
 * Q8B as B panels followed by the columns' sums (int32, cols rounded up to
 * VC). key->fmt says the kernel and the source type (ert_qgemm_key_fmt()).
 * Bytes per matrix (a multiple of 64), and the packing.
 */
#define ERT_QGEMM_KEY_U8 0x100   /* source bytes are uint8 (else int8) */
/*
 * Q8A of a convolution's weights with the columns in tap-major quads: the
 * source's column ci * kk + tap (kk = key->cs; the rows contiguous, cols a
 * multiple of 4 kk) is packed column (ci / 4) * 4 kk + tap * 4 + ci % 4,
 * so that K4 step (ci / 4) * kk + tap holds four channels of one tap
 * (qlinalg-gemm.c packs B in that order straight from the input). The sums
 * are over the same products, so the results are the same.
 */
#define ERT_QGEMM_KEY_TAP4 0x200
size_t ert_qgemm_entry_bytes(const struct ert_cpu_pack_key *key);
void ert_qgemm_entry_pack(const struct ert_cpu_pack_key *key, void *dst);
/* key->fmt for @k (level index in the low byte) and a source of @u8 bytes. */
int ert_qgemm_key_fmt(const struct ert_qgemm_kernel *k, bool u8);

/*
 * The entry points ukernel_1 .. ukernel_N of a level's file: each calls the
 * file's always-inline kernel_nv(NV, ...) with NV vectors of columns.
 */
#define ERT_QGEMM_UKERNEL(nv)                                                                 \
	static void ukernel_##nv(int64_t k4, const void *a, const uint8_t *b, int64_t bw,     \
				 int32_t *c, int64_t ldc, bool add)                           \
	{                                                                                     \
		kernel_nv(nv, k4, a, b, bw, c, ldc, add);                                      \
	}

/* Per-level pieces (qgemm-ukernel-<level>.c). */
extern const struct ert_qgemm_kernel ert_qgemm_kernel_avx2;
extern const struct ert_qgemm_kernel ert_qgemm_kernel_avx512;
extern const struct ert_qgemm_kernel ert_qgemm_kernel_avx512vnni;
extern const struct ert_qgemm_kernel ert_qgemm_kernel_amx;
void ert_qgemm_epi_avx2(const int32_t *raw, int64_t n, const struct ert_qgemm_epi *e, void *dst);
void ert_qgemm_epi_avx512(const int32_t *raw, int64_t n, const struct ert_qgemm_epi *e,
			  void *dst);
void ert_qgemm_epi_rows_avx2(const int32_t *raw, int64_t ldr, int64_t rows, int64_t n,
			     const struct ert_qgemm_epi *e, const struct ert_qgemm_rows *rt,
			     void *dst, int64_t ldd);
void ert_qgemm_epi_rows_avx512(const int32_t *raw, int64_t ldr, int64_t rows, int64_t n,
			       const struct ert_qgemm_epi *e, const struct ert_qgemm_rows *rt,
			       void *dst, int64_t ldd);

/*
 * The fixed rule's per-shift constants of the conv-row epilogues, at
 * shift + 31 (shift -31 to 30, as ert_requant_fixed() clamps it; 64
 * entries): ls = max(s, 0), rs = max(-s, 0), half = 2^(rs-1) (0 when rs is
 * 0), and for the AVX-512 form in 64-bit lanes (docs/int8.md "One rounding
 * in 64-bit lanes") k = 2^30 + half * 2^31, kneg = 2^31 when rs > 0 (else
 * 0) and sh = 31 + rs. A table, so that a row's constants are broadcasts
 * from memory (load ports) rather than from general registers.
 */
struct ert_qgemm_shiftc {
	int64_t k, kneg, sh;
	int32_t ls, rs, half, pad_;
};
extern const struct ert_qgemm_shiftc ert_qgemm_shift_table[64];

static inline const struct ert_qgemm_shiftc *ert_qgemm_shiftc_of(int32_t shift)
{
	return &ert_qgemm_shift_table[shift + 31];
}

/*
 * A row's own terms, by value: e's, or row r's of @rt over e's. The levels'
 * row epilogue takes them apart from the shared ert_qgemm_epi, so that they
 * stay in registers (the output bytes it stores may alias any struct).
 */
struct ert_qgemm_rowv {
	uint32_t c0, c1;
	int32_t mult1, shift1;
	double f1;
	const uint8_t *r;         /* the row's residual bytes (e->res) */
};

static inline struct ert_qgemm_rowv ert_qgemm_rowv_e(const struct ert_qgemm_epi *e)
{
	return (struct ert_qgemm_rowv){ e->c0, e->c1, e->mult1, e->shift1, e->f1, e->r };
}

/* Row @r of a block whose rows are @ldd bytes apart in the output (and the residual). */
static inline struct ert_qgemm_rowv ert_qgemm_rowv_at(const struct ert_qgemm_epi *e,
						      const struct ert_qgemm_rows *rt, int64_t r,
						      int64_t ldd)
{
	return (struct ert_qgemm_rowv){
		e->c0 + (rt->c0 ? (uint32_t)rt->c0[r] : 0u),
		rt->c1 ? (uint32_t)rt->c1[r] : e->c1,
		rt->mult1 ? rt->mult1[r] : e->mult1,
		rt->shift1 ? rt->shift1[r] : e->shift1,
		rt->f1 ? rt->f1[r] : e->f1,
		e->r ? e->r + r * ldd : NULL,
	};
}

#endif /* ERT_CPU_QGEMM_H */
