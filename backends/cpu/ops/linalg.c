/* SPDX-License-Identifier: MIT */
/* CPU kernels: Gemm and MatMul on the packed SGEMM; table of the linalg family. */
#include <stdlib.h>
#include <string.h>

#include "cpu/gemm/sgemm.h"
#include "ops/linalg-geom.h"
#include "cpu/ops/linalg-kernels.h"

struct gemm_dims {
	int64_t m, n, k;
};

static struct gemm_dims gemm_dims_of(const struct ert_exec *x)
{
	const struct ert_value *a = x->in[0], *b = x->in[1];
	bool ta = ert_attr_int(x->node, "transA", 0) != 0;
	bool tb = ert_attr_int(x->node, "transB", 0) != 0;
	struct gemm_dims d = { a->dims[ta ? 1 : 0], b->dims[tb ? 0 : 1], a->dims[ta ? 0 : 1] };

	return d;
}

/*
 * A constant B (weights) packed into GEMM panels once per session, at plan
 * time (shared by every plan: see ert_cpu_pack_get(); none with memory LOW).
 * Worth its memory (a second copy of the weights) whatever M is: without it
 * every run re-packs all of B, which for a batch-1 classifier head (M = 1)
 * costs several times the arithmetic it feeds.
 */
static ert_status pack_b_state(struct ert_cpu *cpu, struct ert_exec *x, int64_t rs, int64_t cs,
			       int64_t k, int64_t n, struct ert_err *err)
{
	struct ert_cpu_pack_key key = {
		.src = x->in[1]->data, .kind = cpu->gemm_low ? ERT_CPU_PACK_B_BF16 : ERT_CPU_PACK_B,
		.rows = k, .cols = n, .rs = rs, .cs = cs, .count = 1,
	};
	struct ert_cpu_packed *pk;
	ert_status st = ert_cpu_pack_get(cpu, &key, &pk);

	if (st != ERT_OK)
		ert_node_fail(x->node, err, st, "out of memory packing weights");
	x->state = pk;
	return st;
}

static ert_status gemm_prepare(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	struct gemm_dims dm = gemm_dims_of(x);
	bool tb = ert_attr_int(x->node, "transB", 0) != 0;

	x->kernel = ert_cpu_linalg_gemm(cpu)->name;
	if (!x->in_const[1] || dm.k == 0)
		return ERT_OK;
	return pack_b_state(cpu, x, tb ? 1 : dm.n, tb ? dm.k : 1, dm.k, dm.n, err);
}

/*
 * With a constant B (packed at plan time), room after @off bytes of the
 * workspace for A packed once for all threads (ert_sgemm_desc.a_shared).
 */
static size_t shared_a_bytes(const struct ert_exec *x, int64_t m, int64_t k)
{
	return x->in_const && x->in_const[1] ? ert_sgemm_shared_a_floats(m, k) * sizeof(float) + 64
					     : 0;
}

static float *shared_a_at(const struct ert_exec *x, size_t off)
{
	if (!x->in_const || !x->in_const[1])
		return NULL;
	return (float *)(((uintptr_t)x->workspace + off + 63) & ~(uintptr_t)63);
}

static size_t gemm_workspace(const struct ert_cpu *cpu, const struct ert_exec *x)
{
	struct gemm_dims d = gemm_dims_of(x);

	return ert_sgemm_workspace(ert_cpu_lanes(cpu), d.m, d.n, d.k) + shared_a_bytes(x, d.m, d.k);
}

static ert_status gemm_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *a = x->in[0], *b = x->in[1];
	const struct ert_value *c = x->n_in > 2 ? x->in[2] : NULL;
	struct ert_value *y = x->out[0];
	struct gemm_dims dm = gemm_dims_of(x);
	bool ta = ert_attr_int(x->node, "transA", 0) != 0;
	bool tb = ert_attr_int(x->node, "transB", 0) != 0;
	float alpha = ert_attr_float(x->node, "alpha", 1.0f);
	float beta = ert_attr_float(x->node, "beta", 1.0f);
	float *yd = y->data;
	size_t gws = ert_sgemm_workspace(ert_cpu_lanes(cpu), dm.m, dm.n, dm.k);
	ert_status st = ert_cpu_ws_check(x, gemm_workspace(cpu, x), err);

	if (st != ERT_OK)
		return st;
	struct ert_sgemm_desc d = {
		.kern = ert_cpu_linalg_gemm(cpu), .cpu = cpu,
		.m = dm.m, .n = dm.n, .k = dm.k, .batch = 1,
		.a = a->data, .a_rs = ta ? 1 : a->dims[1], .a_cs = ta ? a->dims[1] : 1,
		.b = b->data, .b_rs = tb ? 1 : b->dims[1], .b_cs = tb ? b->dims[1] : 1,
		.b_packed = ert_cpu_packed_data(x->state),
		.c = yd, .ldc = dm.n, .alpha = alpha,
		.a_shared = shared_a_at(x, gws),
		.act = ert_node_act(x->node),
	};

	if (c && beta == 1.0f && c->numel == dm.n && dm.m > 0 &&
	    (c->rank == 1 || (c->rank == 2 && c->dims[0] == 1))) {
		/* a vector C (a classifier's bias) joins in the epilogue */
		d.col_bias = c->data;
	} else if (c && beta != 0.0f) {
		const float *cd = c->data;
		int64_t rs = c->rank == 2 && c->dims[0] != 1 ? c->dims[1] : 0;
		int64_t cs = c->rank >= 1 && c->dims[c->rank - 1] != 1 ? 1 : 0;

		for (int64_t i = 0; i < dm.m; i++)
			for (int64_t j = 0; j < dm.n; j++)
				yd[i * dm.n + j] = beta * cd[i * rs + j * cs];
		d.accumulate = true;
	}
	if (dm.k == 0 && !d.accumulate)
		memset(yd, 0, (size_t)(dm.m * dm.n) * sizeof(float));
	/* with K = 0 the micro-kernel still runs once: 0 (or beta C) + column bias, then act */
	ert_sgemm_run(cpu->pool, cpu->num_threads, &d, x->workspace, gws);
	return ERT_OK;
}

/*
 * MatMul as a batch of GEMMs. Batch dims are broadcast through per-problem
 * offset tables kept in the workspace; a 2-D B shared by every problem folds
 * the batch of A into M instead (one big GEMM).
 *
 * Folded Transposes (ert.perm_a, ert.perm_b, ert.perm_y: ert_matmul_perm())
 * are views: A and B are read through the strides of their permuted dims
 * (the packers take any row and column stride, the batch dims go into the
 * offset tables) and Y is written through the strides of the stored
 * Transpose(Y, perm_y) (its rows stay contiguous). The problems, tiles and
 * sums are those of the MatMul of the transposed copies, so the bits are too.
 */
struct matmul_view {
	int64_t dims[ERT_MAX_RANK], st[ERT_MAX_RANK];
};

struct matmul_plan {
	int64_t m, n, k, batch;
	bool fold, perm_y;
	struct matmul_view a, b, y; /* the operands and the product as the GEMM sees them */
};

static struct matmul_plan matmul_plan_of(const struct ert_exec *x)
{
	const struct ert_value *a = x->in[0], *b = x->in[1], *y = x->out[0];
	int32_t perm[ERT_MAX_RANK];
	struct matmul_plan p;

	p.perm_y = ert_node_attr(x->node, ert_matmul_perm_attr[ERT_MATMUL_PERM_Y]) != NULL;
	ert_matmul_perm(x->node, ERT_MATMUL_PERM_A, a->rank, perm);
	ert_perm_view(a->rank, a->dims, perm, false, p.a.dims, p.a.st);
	ert_matmul_perm(x->node, ERT_MATMUL_PERM_B, b->rank, perm);
	ert_perm_view(b->rank, b->dims, perm, false, p.b.dims, p.b.st);
	ert_matmul_perm(x->node, ERT_MATMUL_PERM_Y, y->rank, perm);
	ert_perm_view(y->rank, y->dims, perm, true, p.y.dims, p.y.st);
	p.k = p.a.dims[a->rank - 1];
	p.m = a->rank > 1 ? p.a.dims[a->rank - 2] : 1;
	p.n = b->rank > 1 ? p.b.dims[b->rank - 1] : 1;
	p.batch = 1;
	for (int32_t i = 0; i < y->rank - (a->rank > 1) - (b->rank > 1); i++)
		p.batch *= p.y.dims[i];
	/* A's batch folds into M where A and Y are contiguous (B may be a view) */
	p.fold = b->rank <= 2 && a->rank > 2 && !p.perm_y &&
		 !ert_node_attr(x->node, ert_matmul_perm_attr[ERT_MATMUL_PERM_A]);
	if (p.fold) {
		p.m *= p.batch;
		p.batch = 1;
	}
	return p;
}

/* The fused bias (ert.bias, opt/fuse-residual.c): input 2, N floats added to every row. */
static const float *matmul_bias(const struct ert_exec *x)
{
	return ert_attr_int(x->node, "ert.bias", 0) && x->n_in > 2 && x->in[2] ? x->in[2]->data
										 : NULL;
}

/* The fused residual (ert.residual): input 3, of Y's stored shape, added after the bias. */
static const float *matmul_residual(const struct ert_exec *x)
{
	return ert_attr_int(x->node, "ert.residual", 0) && x->n_in > 3 && x->in[3] ? x->in[3]->data
										     : NULL;
}

/*
 * The fused Mul by a constant (ert.scale, opt/fuse-residual.c): the complete
 * product times it, before the bias, or NULL.
 */
static const float *matmul_scale(const struct ert_exec *x)
{
	const struct ert_attr *a = ert_node_attr(x->node, "ert.scale");

	return a && a->type == ERT_ATTR_FLOAT ? &a->f : NULL;
}

/*
 * Row and column strides of A (0), B (1) and Y (2); a vector operand is one
 * row or column. Without folded Transposes: contiguous, A's batch folded
 * into M by the same strides (Y's column stride is always 1).
 */
static void matmul_strides(const struct ert_exec *x, const struct matmul_plan *p, int64_t rs[3],
			   int64_t cs[3])
{
	int32_t ra = x->in[0]->rank, rb = x->in[1]->rank, ry = x->out[0]->rank;

	rs[0] = ra > 1 ? p->a.st[ra - 2] : p->k;
	cs[0] = p->a.st[ra - 1];
	rs[1] = rb > 1 ? p->b.st[rb - 2] : 1;
	cs[1] = rb > 1 ? p->b.st[rb - 1] : 1;
	/* a folded output Transpose needs A and B of rank 2 or more: Y's last two dims are M and N */
	rs[2] = p->perm_y ? p->y.st[ry - 2] : p->n;
	cs[2] = 1;
}

static ert_status matmul_prepare(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	struct matmul_plan p = matmul_plan_of(x);
	int64_t rs[3], cs[3];

	x->kernel = ert_cpu_linalg_gemm(cpu)->name;
	/* Batched B keeps its per-problem offsets: only a single matrix is packed. */
	if (!x->in_const[1] || x->in[1]->rank > 2 || p.k == 0)
		return ERT_OK;
	matmul_strides(x, &p, rs, cs);
	return pack_b_state(cpu, x, rs[1], cs[1], p.k, p.n, err);
}

static size_t matmul_workspace(const struct ert_cpu *cpu, const struct ert_exec *x)
{
	struct matmul_plan p = matmul_plan_of(x);

	return ert_sgemm_workspace(ert_cpu_lanes(cpu), p.m, p.n, p.k) +
	       (size_t)p.batch * 3 * sizeof(int64_t) +
	       (x->in[1]->rank <= 2 ? shared_a_bytes(x, p.m, p.k) : 0);
}

static ert_status matmul_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *a = x->in[0], *b = x->in[1], *y = x->out[0];
	struct matmul_plan p = matmul_plan_of(x);
	size_t gws = ert_sgemm_workspace(ert_cpu_lanes(cpu), p.m, p.n, p.k);
	ert_status st = ert_cpu_ws_check(x, matmul_workspace(cpu, x), err);
	int64_t rs[3], cs[3];

	if (st != ERT_OK)
		return st;
	int64_t *a_off = (int64_t *)((char *)x->workspace + gws);
	int64_t *b_off = a_off + p.batch, *c_off = b_off + p.batch;
	int32_t nb = y->rank - (a->rank > 1) - (b->rank > 1);
	int32_t ba = a->rank > 2 ? a->rank - 2 : 0, bb = b->rank > 2 ? b->rank - 2 : 0;

	matmul_strides(x, &p, rs, cs);
	if (!p.fold) {
		for (int64_t t = 0; t < p.batch; t++) {
			int64_t rem = t, oa = 0, ob = 0, oc = 0;

			for (int32_t i = nb - 1; i >= 0; i--) {
				int64_t idx = rem % p.y.dims[i];
				int32_t ia = i - (nb - ba), ib = i - (nb - bb);

				rem /= p.y.dims[i];
				if (ia >= 0 && p.a.dims[ia] != 1)
					oa += idx * p.a.st[ia];
				if (ib >= 0 && p.b.dims[ib] != 1)
					ob += idx * p.b.st[ib];
				oc += idx * p.y.st[i];
			}
			a_off[t] = oa;
			b_off[t] = ob;
			c_off[t] = oc;
		}
	}
	struct ert_sgemm_desc d = {
		.kern = ert_cpu_linalg_gemm(cpu), .cpu = cpu,
		.m = p.m, .n = p.n, .k = p.k, .batch = p.batch,
		.a = a->data, .a_rs = rs[0], .a_cs = cs[0],
		.b = b->data, .b_rs = rs[1], .b_cs = cs[1],
		.b_packed = ert_cpu_packed_data(x->state),
		.c = y->data, .ldc = rs[2], .alpha = 1.0f,
		.a_off = p.fold ? NULL : a_off,
		.c_off = p.fold ? NULL : c_off,
		.b_off = p.fold || x->state ? NULL : b_off,
		.col_bias = matmul_bias(x),
		.scale = matmul_scale(x),
		.residual = matmul_residual(x),
		.a_shared = b->rank <= 2 && p.batch == 1
				    ? shared_a_at(x, gws + (size_t)p.batch * 3 * sizeof(int64_t))
				    : NULL,
		/*
		 * Activations as B (attention's K^T and V): A read in place. With
		 * weights as B, A packed once into a_shared ran as fast in vit_s16.
		 */
		.a_direct = !x->state,
		.act = ert_node_act(x->node),
	};

	if (p.k == 0) {
		float *yd = y->data;

		/* an empty sum, then the epilogue in its order (R, like Y, as stored) */
		for (int64_t i = 0; i < y->numel; i++) {
			float v = 0.0f;

			if (d.scale)
				v *= *d.scale;
			if (d.col_bias)
				v += d.col_bias[i % p.n];
			if (d.residual)
				v += d.residual[i];
			yd[i] = v;
		}
		ert_act_apply(&d.act, yd, y->numel);
		return ERT_OK;
	}
	ert_sgemm_run(cpu->pool, cpu->num_threads, &d, x->workspace, gws);
	return ERT_OK;
}

const struct ert_cpu_op ert_cpu_ops_linalg[] = {
	{ .op = ERT_OP_Conv, .workspace = ert_cpu_conv_workspace,
	  .prepare = ert_cpu_conv_prepare, .compute = ert_cpu_conv_compute,
	  .release = ert_cpu_release_packed },
	{ .op = ERT_OP_ConvTranspose, .workspace = ert_cpu_convt_workspace,
	  .compute = ert_cpu_convt_compute },
	{ .op = ERT_OP_Gemm, .workspace = gemm_workspace, .prepare = gemm_prepare,
	  .compute = gemm_compute, .release = ert_cpu_release_packed },
	{ .op = ERT_OP_MatMul, .workspace = matmul_workspace, .prepare = matmul_prepare,
	  .compute = matmul_compute, .release = ert_cpu_release_packed },
	{ .op = ERT_OP_Einsum, .workspace = ert_cpu_einsum_workspace,
	  .compute = ert_cpu_einsum_compute },
	{ .compute = NULL },
};
