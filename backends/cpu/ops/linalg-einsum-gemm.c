/* SPDX-License-Identifier: MIT */
/*
 * Einsum's matmul-shaped cases on the SGEMM. With two float32 operands, no
 * label repeated inside an operand, no broadcast and no label summed out of
 * one operand alone, every label is a batch (both operands and the output),
 * M (first operand and output), N (second operand and output) or K (both
 * operands, not the output) label. Each operand whose axes already read as
 * [batch][M][K] / [batch][K][M] (resp. K, N) goes to the GEMM as strides;
 * any other layout is gathered into the workspace first, and so is an output
 * that is not [batch][M][N].
 */
#include <string.h>

#include "cpu/gemm/sgemm.h"
#include "cpu/ops/linalg-kernels.h"
#include "ops/linalg-einsum.h"

struct eg_plan {
	uint8_t order[3][ERT_MAX_RANK];  /* A as bl ml kl, B as bl kl nl, C as bl ml nl */
	int32_t n_order[3];
	int64_t batch, m, n, k;
	bool gather[2], a_trans, b_trans, scatter;
};

static int32_t group(const struct ert_einsum *e, const bool *in_a, const bool *in_b, int want,
		     const uint8_t *src, int32_t n_src, uint8_t *dst, int32_t at)
{
	for (int32_t i = 0; i < n_src; i++) {
		int l = src[i];
		int kind = in_a[l] && in_b[l] ? (e->in_out[l] ? 0 : 3) : in_a[l] ? 1 : 2;

		if (kind == want)
			dst[at++] = (uint8_t)l;
	}
	return at;
}

static bool same(const uint8_t *a, const uint8_t *b, int32_t n)
{
	return memcmp(a, b, (size_t)n) == 0;
}

static bool eg_plan_of(const struct ert_exec *x, const struct ert_einsum *e, struct eg_plan *p)
{
	bool in_a[ERT_EINSUM_MAX_LABELS] = { false }, in_b[ERT_EINSUM_MAX_LABELS] = { false };
	uint8_t bl[ERT_MAX_RANK], ml[ERT_MAX_RANK], nl[ERT_MAX_RANK], kl[ERT_MAX_RANK];
	int32_t nb, nm, nn, nk;

	memset(p, 0, sizeof(*p));
	if (e->n_ops != 2 || x->in[0]->dtype != ERT_DTYPE_FLOAT32)
		return false;
	for (uint32_t k = 0; k < 2; k++)
		for (int32_t a = 0; a < e->rank[k]; a++) {
			int l = e->label[k][a];
			bool *seen = k ? in_b : in_a;

			if (seen[l] || x->in[k]->dims[a] != e->size[l])
				return false;
			seen[l] = true;
		}
	for (int l = 0; l < ERT_EINSUM_MAX_LABELS; l++)
		if (e->size[l] >= 0 && !e->in_out[l] && in_a[l] != in_b[l])
			return false;
	nb = group(e, in_a, in_b, 0, e->out_label, e->out_rank, bl, 0);
	nm = group(e, in_a, in_b, 1, e->out_label, e->out_rank, ml, 0);
	nn = group(e, in_a, in_b, 2, e->out_label, e->out_rank, nl, 0);
	nk = group(e, in_a, in_b, 3, e->label[0], e->rank[0], kl, 0);
	p->batch = p->m = p->n = p->k = 1;
	for (int32_t i = 0; i < nb; i++)
		p->batch *= e->size[bl[i]];
	for (int32_t i = 0; i < nm; i++)
		p->m *= e->size[ml[i]];
	for (int32_t i = 0; i < nn; i++)
		p->n *= e->size[nl[i]];
	for (int32_t i = 0; i < nk; i++)
		p->k *= e->size[kl[i]];

	/* canonical orders */
	memcpy(p->order[0], bl, (size_t)nb);
	memcpy(p->order[0] + nb, ml, (size_t)nm);
	memcpy(p->order[0] + nb + nm, kl, (size_t)nk);
	memcpy(p->order[1], bl, (size_t)nb);
	memcpy(p->order[1] + nb, kl, (size_t)nk);
	memcpy(p->order[1] + nb + nk, nl, (size_t)nn);
	memcpy(p->order[2], bl, (size_t)nb);
	memcpy(p->order[2] + nb, ml, (size_t)nm);
	memcpy(p->order[2] + nb + nm, nl, (size_t)nn);
	p->n_order[0] = nb + nm + nk;
	p->n_order[1] = nb + nk + nn;
	p->n_order[2] = nb + nm + nn;

	/* Operands already laid out as GEMM matrices (possibly transposed)? */
	const uint8_t *la = e->label[0], *lb = e->label[1];

	p->gather[0] = true;
	if (same(la, bl, nb) && same(la + nb, ml, nm) && same(la + nb + nm, kl, nk))
		p->gather[0] = false;
	else if (same(la, bl, nb) && same(la + nb, kl, nk) && same(la + nb + nk, ml, nm))
		p->gather[0] = false, p->a_trans = true;
	p->gather[1] = true;
	if (same(lb, bl, nb) && same(lb + nb, kl, nk) && same(lb + nb + nk, nl, nn))
		p->gather[1] = false;
	else if (same(lb, bl, nb) && same(lb + nb, nl, nn) && same(lb + nb + nn, kl, nk))
		p->gather[1] = false, p->b_trans = true;
	p->scatter = !same(e->out_label, p->order[2], e->out_rank);
	return true;
}

static size_t eg_workspace(const struct ert_cpu *cpu, const struct eg_plan *p)
{
	size_t floats = 0;

	if (p->gather[0])
		floats += (size_t)(p->batch * p->m * p->k);
	if (p->gather[1])
		floats += (size_t)(p->batch * p->k * p->n);
	if (p->scatter)
		floats += (size_t)(p->batch * p->m * p->n);
	return ert_sgemm_workspace(ert_cpu_lanes(cpu), p->m, p->n, p->k) +
	       (size_t)p->batch * 3 * sizeof(int64_t) + floats * sizeof(float);
}

size_t ert_cpu_einsum_gemm_workspace(const struct ert_cpu *cpu, const struct ert_exec *x,
				     const struct ert_einsum *e)
{
	struct eg_plan p;

	return eg_plan_of(x, e, &p) ? eg_workspace(cpu, &p) : 0;
}

/*
 * Copy between a tensor with axis labels @lab (@rank axes, contiguous) and a
 * contiguous buffer whose axes follow @order; @to_buf picks the direction.
 */
static void permute(const struct ert_einsum *e, float *t, const uint8_t *lab, int32_t rank,
		    float *buf, const uint8_t *order, int32_t n_order, bool to_buf)
{
	int64_t stride[ERT_EINSUM_MAX_LABELS] = { 0 }, idx[ERT_MAX_RANK] = { 0 };
	int64_t s = 1, total = 1, off = 0;

	for (int32_t a = rank - 1; a >= 0; a--) {
		stride[lab[a]] = s;
		s *= e->size[lab[a]];
	}
	for (int32_t i = 0; i < n_order; i++)
		total *= e->size[order[i]];
	for (int64_t i = 0; i < total; i++) {
		if (to_buf)
			buf[i] = t[off];
		else
			t[off] = buf[i];
		for (int32_t d = n_order - 1; d >= 0; d--) {
			int l = order[d];

			off += stride[l];
			if (++idx[d] < e->size[l])
				break;
			off -= idx[d] * stride[l];
			idx[d] = 0;
		}
	}
}

ert_status ert_cpu_einsum_gemm(struct ert_cpu *cpu, struct ert_exec *x,
			       const struct ert_einsum *e, bool *done)
{
	struct eg_plan p;

	*done = false;
	if (!eg_plan_of(x, e, &p) || !x->workspace || x->workspace_size < eg_workspace(cpu, &p))
		return ERT_OK;
	size_t gws = ert_sgemm_workspace(ert_cpu_lanes(cpu), p.m, p.n, p.k);
	int64_t *a_off = (int64_t *)((char *)x->workspace + gws);
	int64_t *b_off = a_off + p.batch, *c_off = b_off + p.batch;
	float *buf = (float *)(c_off + p.batch);
	float *a = x->in[0]->data, *b = x->in[1]->data, *c = x->out[0]->data;

	if (p.gather[0]) {
		permute(e, x->in[0]->data, e->label[0], e->rank[0], buf, p.order[0], p.n_order[0],
			true);
		a = buf;
		buf += p.batch * p.m * p.k;
	}
	if (p.gather[1]) {
		permute(e, x->in[1]->data, e->label[1], e->rank[1], buf, p.order[1], p.n_order[1],
			true);
		b = buf;
		buf += p.batch * p.k * p.n;
	}
	if (p.scatter)
		c = buf;
	for (int64_t t = 0; t < p.batch; t++) {
		a_off[t] = t * p.m * p.k;
		b_off[t] = t * p.k * p.n;
		c_off[t] = t * p.m * p.n;
	}
	struct ert_sgemm_desc d = {
		.kern = cpu->gemm, .cpu = cpu,
		.m = p.m, .n = p.n, .k = p.k, .batch = p.batch,
		.a = a, .a_rs = p.a_trans ? 1 : p.k, .a_cs = p.a_trans ? p.m : 1,
		.b = b, .b_rs = p.b_trans ? 1 : p.n, .b_cs = p.b_trans ? p.k : 1,
		.c = c, .ldc = p.n, .a_off = a_off, .b_off = b_off, .c_off = c_off,
		.alpha = 1.0f,
	};

	ert_sgemm_run(cpu->pool, cpu->num_threads, &d, x->workspace, gws);
	if (p.scatter)
		permute(e, x->out[0]->data, e->out_label, e->out_rank, c, p.order[2], p.n_order[2],
			false);
	*done = true;
	return ERT_OK;
}
