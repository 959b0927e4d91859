/* SPDX-License-Identifier: MIT */
/*
 * qlinalg.h — private to the CPU integer linear algebra: qlinalg.c (the
 * scalar reference kernels, the ops' table, the work shared by both paths)
 * and qlinalg-gemm.c (the SIMD levels: the same ops on the packed int8
 * GEMM of cpu/qgemm/, bit-identical to the reference).
 */
#ifndef ERT_CPU_QLINALG_H
#define ERT_CPU_QLINALG_H

#include "cpu/ops/qlinear-kernels.h"
#include "ops/linalg-geom.h"

/*
 * The requantisation of one output channel (column), computed once per run
 * in front of the lanes' scratch: the float rule's multiplier @f, or the
 * fixed rule's (@m, @s).
 */
struct q_chan {
	double f;
	int32_t m, s;
};

struct iconv_job {
	struct ert_conv_geom g;
	const struct ert_value *x, *w, *xzp, *wzp, *bias, *xs, *ws, *ys, *yzp, *y;
	bool qlinear;
	struct ert_qout qo;
	const struct q_chan *chans;  /* QLinearConv: one per output channel */
	int64_t c_in, m, group, cin_g, m_g, kk, in_sp, out_sp;
	/*
	 * QLinearConv with "ert.residual" (input 9, of y's shape): each run of
	 * requantised outputs y[i..i+n) becomes add(y, r) in place, through
	 * res (qout above: the type's full range, the clamp being res's).
	 */
	const struct ert_value *r;
	const struct ert_q8_add *res;
};

/* The fused residual stage over @n outputs from flat index @i of y (qlinalg.c). */
static inline void ert_qconv_residual(const struct iconv_job *j, int64_t i, int64_t n)
{
	uint8_t *y = (uint8_t *)j->y->data + i;

	ert_q8_add_run(j->res, y, 1, (const uint8_t *)j->r->data + i, 1, y, n);
}

enum imm_kind { IMM_INTEGER, IMM_QLINEAR, IMM_QGEMM };

struct imm_job {
	enum imm_kind kind;
	const struct ert_value *a, *b, *azp, *bzp, *as, *bs, *ys, *yzp, *y, *c;
	bool quantised;           /* int8/uint8 output (QLinearMatMul, QGemm with y_zero_point) */
	struct ert_qout qo;
	const struct q_chan *chans; /* per column, or NULL: per-row a_scale (float rule) */
	float alpha;              /* QGemm */
	int64_t m, n, k, nb;      /* nb: number of batch dims of y */
	int32_t ba, bb;           /* batch dims of a and b */
	int64_t a_rs, a_cs;       /* element (i, p) of A at i * a_rs + p * a_cs */
	bool b_trans;             /* B stored (n, k): QGemm transB */
};

/* Bytes of the per-channel table in front of the lanes' scratch (kept 64-byte aligned). */
size_t ert_qlinalg_chans_bytes(int64_t count);

/*
 * Run item(job, i, scratch) for i < @items on the pool, each lane with its
 * own @slot uint32_t of scratch from the workspace past its first @skip bytes.
 */
ert_status ert_qlinalg_run_lanes(struct ert_cpu *cpu, struct ert_exec *x, size_t skip,
				 int64_t items, int64_t slot,
				 void (*item)(const void *, int64_t, uint32_t *), const void *job,
				 struct ert_err *err);

/* Per-tensor or per-channel zero point @c of @v (int8 or uint8); 0 when absent. */
int32_t ert_qlinalg_zp(const struct ert_value *v, int64_t c);

/*
 * The SIMD path (qlinalg-gemm.c). *_workspace: bytes it needs past the
 * per-channel table at any level, for @lanes lanes (ert_cpu_lanes()); *_run
 * uses no more lanes than the workspace has slots for. *_prepare: at a level above scalar, packs
 * constant weights (x->state) and names the kernel. *_run: false when the
 * path does not take this case (the caller runs the reference); else runs
 * it with *st the result. The job is set up and its channels computed.
 */
size_t ert_qconv_gemm_workspace(const struct iconv_job *j, uint32_t lanes);
ert_status ert_qconv_gemm_prepare(struct ert_cpu *cpu, struct ert_exec *x,
				  const struct iconv_job *j, struct ert_err *err);
bool ert_qconv_gemm_run(struct ert_cpu *cpu, struct ert_exec *x, const struct iconv_job *j,
			size_t skip, ert_status *st, struct ert_err *err);

/*
 * Depthwise convolutions (qlinalg-dw.c), as above; rows of outputs by
 * the level's ert_q8_dw_row_<level>(): acc[j] = sum_t w[t] * rows[t][j]
 * for j < n (w[t]: the int16 pair (w, 0); rows readable a vector past n).
 */
size_t ert_qconv_dw_workspace(const struct iconv_job *j, uint32_t lanes);
ert_status ert_qconv_dw_prepare(struct ert_cpu *cpu, struct ert_exec *x, const struct iconv_job *j);
bool ert_qconv_dw_run(struct ert_cpu *cpu, struct ert_exec *x, const struct iconv_job *j,
		      size_t skip, ert_status *st, struct ert_err *err);
void ert_q8_dw_row_avx2(const int16_t *const *rows, const int32_t *w, int kk, int32_t *acc,
			int64_t n);
void ert_q8_dw_row_avx512(const int16_t *const *rows, const int32_t *w, int kk, int32_t *acc,
			  int64_t n);

size_t ert_qmm_gemm_workspace(const struct imm_job *j, uint32_t lanes);
ert_status ert_qmm_gemm_prepare(struct ert_cpu *cpu, struct ert_exec *x, const struct imm_job *j,
				struct ert_err *err);
bool ert_qmm_gemm_run(struct ert_cpu *cpu, struct ert_exec *x, const struct imm_job *j,
		      size_t skip, ert_status *st, struct ert_err *err);

#endif /* ERT_CPU_QLINALG_H */
