/* SPDX-License-Identifier: MIT */
/*
 * FusedAttention (ops/attention.c): Y = softmax(scale * Q KT) V per batch
 * and head, on the packed SGEMM and the level's vector Softmax.
 *
 * First KT and V of every (batch, head) are packed once into the
 * workspace as the GEMM's B panels, shared out between the threads. Then
 * tasks of one (batch, head) and a block of query rows: the block's scores
 * (rows x T, sized to stay in L1/L2) come from one GEMM with alpha = scale,
 * each row goes through the Softmax kernel in place, and a second GEMM
 * multiplies them by V straight into Y's rows (through perm_y's strides).
 * The score tensor never goes to memory, and the tasks (batch x heads x
 * row blocks, several per thread) split evenly where the unfused MatMuls of
 * 197 x 64 x 197 did not.
 *
 * Each GEMM is the same problem, K block and micro-kernel as the unfused
 * MatMul's, and the scale is one multiply of the finished sum (the Mul's),
 * so with a Mul by the scale the result is that of the unfused ops bit for
 * bit; a Div by c becomes a multiply by 1 / c (opt/fuse-attention.c).
 * Precision LOW multiplies in bf16 like MatMul where the level has a bf16
 * kernel (ert_cpu_linalg_gemm()): KT and V are then packed as bf16 pairs.
 */
#include <stdatomic.h>
#include <string.h>

#include "cpu/gemm/sgemm.h"
#include "cpu/ops/norm-kernels.h"
#include "cpu/vec/vec.h"
#include "ops/linalg-geom.h"

/* Scores of one row block: about this many bytes, so the block stays in L1/L2. */
#define ATTN_BLOCK_BYTES (32 << 10)

struct attn_view {
	int64_t dims[ERT_MAX_RANK], st[ERT_MAX_RANK];
};

struct attn_plan {
	const struct ert_sgemm_kernel *kern;
	int32_t r;
	int64_t batch, s, d, t, e;   /* problems; Q [s x d], KT [d x t], V [t x e], Y [s x e] */
	int64_t mb, blocks, tasks;   /* query rows per task, blocks per problem, tasks */
	int64_t ld;                  /* floats between rows of a score block */
	size_t kt_floats, v_floats;  /* one problem's packed KT and V, rounded to 64 bytes */
	size_t lane_floats, gemm_ws; /* per lane: scores and GEMM workspace (bytes) */
	struct attn_view q, kt, v, y;
};

static int64_t round_up64(int64_t x, int64_t m)
{
	return (x + m - 1) / m * m;
}

static const struct ert_sgemm_kernel *attn_kernel(const struct ert_cpu *cpu)
{
	return cpu && cpu->gemm ? ert_cpu_linalg_gemm(cpu) : ert_sgemm_kernel_for(ERT_ISA_SCALAR);
}

/* Floats (or bf16 pair words) of a k x n B packed for @kern, rounded to 64 bytes. */
static size_t packed_b_floats(const struct ert_sgemm_kernel *kern, int64_t k, int64_t n)
{
	size_t f = kern->bf16 ? ert_sbgemm_packed_words(n, k, kern->nr)
			      : ert_sgemm_packed_b_floats(k, n, kern->nr);

	return (f + 15) / 16 * 16;
}

static void pack_b(const struct ert_sgemm_kernel *kern, const float *b, int64_t rs, int64_t cs,
		   int64_t k, int64_t n, float *dst)
{
	if (kern->bf16)
		ert_sbgemm_pack_b_strided(b, rs, cs, 0, k, 0, n, kern->nr, (uint32_t *)(void *)dst);
	else  /* the level's packing: K^T (rs 1) by in-register transposes */
		kern->pack_b(b, rs, cs, 0, k, 0, n, kern->nr, dst);
}

static struct attn_plan attn_plan_of(const struct ert_cpu *cpu, const struct ert_exec *x)
{
	const struct ert_value *const in[3] = { x->in[0], x->in[1], x->in[2] };
	struct attn_view *views[3];
	int32_t perm[ERT_MAX_RANK];
	struct attn_plan p;
	uint32_t lanes = ert_cpu_lanes(cpu);

	memset(&p, 0, sizeof(p));
	views[0] = &p.q;
	views[1] = &p.kt;
	views[2] = &p.v;
	p.kern = attn_kernel(cpu);
	p.r = in[0]->rank;
	for (int i = 0; i < 3; i++) {
		ert_perm_attr(x->node, ert_attention_perm_attr[i], p.r, false, perm);
		ert_perm_view(p.r, in[i]->dims, perm, false, views[i]->dims, views[i]->st);
	}
	ert_perm_attr(x->node, ert_attention_perm_attr[ERT_ATTN_PERM_Y], p.r, true, perm);
	ert_perm_view(p.r, x->out[0]->dims, perm, true, p.y.dims, p.y.st);
	p.batch = 1;
	for (int32_t i = 0; i < p.r - 2; i++)
		p.batch *= p.q.dims[i];
	p.s = p.q.dims[p.r - 2];
	p.d = p.q.dims[p.r - 1];
	p.t = p.kt.dims[p.r - 1];
	p.e = p.v.dims[p.r - 1];
	p.ld = round_up64(p.t > 0 ? p.t : 1, 16);

	/* even blocks of whole register rows, the scores of one about ATTN_BLOCK_BYTES */
	int64_t mr = p.kern->mr, want = ATTN_BLOCK_BYTES / (p.ld * (int64_t)sizeof(float));
	int64_t s = p.s > 0 ? p.s : 1;

	if (want < mr)
		want = mr;
	p.blocks = (s + want - 1) / want;
	p.mb = round_up64((s + p.blocks - 1) / p.blocks, mr);
	/* several tasks a thread, so that the last ones even out */
	while (p.batch * p.blocks < 4 * (int64_t)lanes && p.mb > mr) {
		p.mb = round_up64(p.mb / 2, mr);
		p.blocks = (s + p.mb - 1) / p.mb;
	}
	p.blocks = (s + p.mb - 1) / p.mb;
	p.tasks = p.batch * p.blocks;
	p.kt_floats = packed_b_floats(p.kern, p.d, p.t);
	p.v_floats = packed_b_floats(p.kern, p.t, p.e);
	p.lane_floats = (size_t)(p.mb * p.ld);
	size_t w1 = ert_sgemm_workspace(1, p.mb, p.t, p.d), w2 = ert_sgemm_workspace(1, p.mb, p.e, p.t);

	p.gemm_ws = ((w1 > w2 ? w1 : w2) + 63) / 64 * 64;
	return p;
}

static size_t attn_workspace(const struct ert_cpu *cpu, const struct ert_exec *x)
{
	struct attn_plan p = attn_plan_of(cpu, x);

	return 64 + (size_t)p.batch * (p.kt_floats + p.v_floats) * sizeof(float) +
	       ert_cpu_lanes(cpu) * (p.lane_floats * sizeof(float) + p.gemm_ws);
}

struct attn_job {
	const struct attn_plan *p;
	const struct ert_exec *x;
	const struct ert_vec_kernels *vk;  /* NULL: the reference Softmax row */
	float scale;
	float *packed;                     /* batch x (KT, V) panels */
	char *lanes;                       /* per lane: scores, then GEMM workspace */
	atomic_int_fast64_t next;
};

/* Element offset of problem @b's first element in view @v (rank @r, leading dims). */
static int64_t batch_offset(const struct attn_view *v, int32_t r, int64_t b)
{
	int64_t off = 0;

	for (int32_t i = r - 3; i >= 0; i--) {
		off += (b % v->dims[i]) * v->st[i];
		b /= v->dims[i];
	}
	return off;
}

/* Items 2b and 2b + 1: problem b's KT and V as B panels. */
static void pack_range(void *arg, int64_t begin, int64_t end)
{
	const struct attn_job *j = arg;
	const struct attn_plan *p = j->p;
	int r = p->r;

	for (int64_t i = begin; i < end; i++) {
		int64_t b = i / 2;
		float *dst = j->packed + (size_t)b * (p->kt_floats + p->v_floats);

		if (i % 2 == 0 && p->d == 0)
			continue; /* no product: the scores are zeros */
		if (i % 2 == 0)
			pack_b(p->kern, (const float *)j->x->in[1]->data + batch_offset(&p->kt, r, b),
			       p->kt.st[r - 2], p->kt.st[r - 1], p->d, p->t, dst);
		else
			pack_b(p->kern, (const float *)j->x->in[2]->data + batch_offset(&p->v, r, b),
			       p->v.st[r - 2], p->v.st[r - 1], p->t, p->e, dst + p->kt_floats);
	}
}

static void run_task(const struct attn_job *j, int64_t task, float *sc, void *ws)
{
	const struct attn_plan *p = j->p;
	int64_t b = task / p->blocks, i0 = (task % p->blocks) * p->mb;
	int64_t m = p->s - i0 < p->mb ? p->s - i0 : p->mb;
	const float *pk = j->packed + (size_t)b * (p->kt_floats + p->v_floats);
	int r = p->r;

	if (p->d > 0) {
		struct ert_sgemm_desc d1 = {
			.kern = p->kern,
			.m = m, .n = p->t, .k = p->d, .batch = 1,
			.a = (const float *)j->x->in[0]->data + batch_offset(&p->q, r, b) +
			     i0 * p->q.st[r - 2],
			.a_rs = p->q.st[r - 2], .a_cs = p->q.st[r - 1],
			.b_packed = pk, .c = sc, .ldc = p->ld, .alpha = j->scale, .a_direct = true,
		};

		ert_sgemm_run(NULL, 1, &d1, ws, p->gemm_ws);
	} else {
		for (int64_t i = 0; i < m; i++)
			memset(sc + i * p->ld, 0, (size_t)p->t * sizeof(float));
	}
	for (int64_t i = 0; i < m; i++) {
		if (j->vk)
			j->vk->softmax(sc + i * p->ld, sc + i * p->ld, p->t);
		else
			ert_cpu_softmax_row_f32(sc + i * p->ld, sc + i * p->ld, p->t);
	}

	struct ert_sgemm_desc d2 = {
		.kern = p->kern,
		.m = m, .n = p->e, .k = p->t, .batch = 1,
		.a = sc, .a_rs = p->ld, .a_cs = 1,
		.b_packed = pk + p->kt_floats,
		.c = (float *)j->x->out[0]->data + batch_offset(&p->y, r, b) + i0 * p->y.st[r - 2],
		.ldc = p->y.st[r - 2], .alpha = 1.0f, .a_direct = true,
	};

	ert_sgemm_run(NULL, 1, &d2, ws, p->gemm_ws);
}

static void lane_range(void *arg, int64_t begin, int64_t end)
{
	struct attn_job *j = arg;
	const struct attn_plan *p = j->p;

	for (int64_t lane = begin; lane < end; lane++) {
		char *base = j->lanes + (size_t)lane * (p->lane_floats * sizeof(float) + p->gemm_ws);
		float *sc = (float *)base;
		void *ws = base + p->lane_floats * sizeof(float);

		for (;;) {
			int64_t t = atomic_fetch_add(&j->next, 1);

			if (t >= p->tasks)
				break;
			run_task(j, t, sc, ws);
		}
	}
}

static ert_status attn_prepare(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	x->kernel = attn_kernel(cpu)->name;
	return ERT_OK;
}

static ert_status attn_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	struct attn_plan p = attn_plan_of(cpu, x);
	ert_status st = ert_cpu_ws_check(x, attn_workspace(cpu, x), err);
	uint32_t lanes = ert_cpu_lanes(cpu);
	struct attn_job j = { .p = &p, .x = x, .scale = ert_attr_float(x->node, "scale", 1.0f) };

	if (st != ERT_OK)
		return st;
	if (p.t == 0 || p.e == 0 || p.s == 0 || p.batch == 0) {
		/* an empty softmax row: its products are empty sums */
		memset(x->out[0]->data, 0, x->out[0]->nbytes);
		return ERT_OK;
	}
	j.vk = cpu && cpu->precision != ERT_LEVEL_HIGH ? ert_vec_kernels_for(cpu->isa) : NULL;
	j.packed = (float *)(((uintptr_t)x->workspace + 63) & ~(uintptr_t)63);
	j.lanes = (char *)(j.packed + (size_t)p.batch * (p.kt_floats + p.v_floats));
	if ((int64_t)lanes > p.tasks)
		lanes = (uint32_t)p.tasks;
	ert_parallel_for(cpu ? cpu->pool : NULL, 2 * p.batch, 1, pack_range, &j);
	atomic_store(&j.next, 0);
	ert_parallel_for(cpu ? cpu->pool : NULL, lanes, 1, lane_range, &j);
	return ERT_OK;
}

const struct ert_cpu_op ert_cpu_ops_attention[] = {
	{ .op = ERT_OP_FusedAttention, .workspace = attn_workspace, .prepare = attn_prepare,
	  .compute = attn_compute },
	{ .compute = NULL },
};
