/* SPDX-License-Identifier: MIT */
/*
 * Dynamic quantisation ops (dq.h): Conv, Gemm and MatMul with block-quantised
 * weights that a memory LOW session left encoded.
 *
 * Weights are read where the model keeps them (the mapped file) when their
 * rows run along K in blocks of 32: Conv weights [M, C/group, k...] and Gemm
 * with transB (B is [N, K]), K a multiple of 32. Otherwise (B of [K, N],
 * blocks of another size, a K with a short last block) prepare() makes an
 * int8 copy of rows along K, blocks of 32: the same values and scales where
 * the file's blocks are already those, else the decoded values quantised
 * again per block of 32 like the activations. The copy is the session's
 * (ert_session_peak_bytes() counts it).
 *
 * Work is cut into tasks of ROWS activation rows of one problem (an image
 * and a group); a task quantises its rows once into its lane's slot of the
 * workspace and runs them against every weight row, JT rows at a time.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/dq/dq.h"
#include "ops/linalg-geom.h"

#define ROWS 16
#define JT 64

struct dq_state {
	struct ert_cpu *cpu;       /* whose packed_bytes counts the copy */
	struct ert_dq_w w;
	void *copy;                /* int8 rows and their scales, or NULL */
	size_t copy_bytes;
};

/* The op's GEMM view: out[i][j] = sum_k act[i][k] w[j][k], per problem. */
struct dq_geom {
	int64_t batch, ni, nj, k;  /* problems, activation rows, weight rows, K */
	/* Conv */
	struct ert_conv_geom g;
	int64_t n_img, c_in, m, group, cin_g, m_g, kk, in_sp;
	bool pointwise;
	/* weights: row j of the logical [rows, K] matrix is element (j, k) of B at
	 * j * w_rs + k * w_cs (Gemm without transB, MatMul: transposed) */
	int64_t w_rows, w_rs, w_cs;
};

static bool is_f32(const struct ert_value *v)
{
	return v && v->dtype == ERT_DTYPE_FLOAT32;
}

static bool geom_of(const struct ert_exec *x, struct dq_geom *d)
{
	const struct ert_value *a = x->in[0], *b = x->in[1];
	struct ert_err err;

	memset(d, 0, sizeof(*d));
	if (x->node->op == ERT_OP_Conv) {
		if (a->rank < 3 || a->rank > 5 || b->rank != a->rank)
			return false;
		if (ert_geom_conv(x->node, a->rank - 2, a->dims + 2, b->dims + 2, false, &d->g,
				  &err) != ERT_OK)
			return false;
		d->n_img = a->dims[0];
		d->c_in = a->dims[1];
		d->m = b->dims[0];
		d->group = ert_attr_int(x->node, "group", 1);
		if (d->group < 1 || d->c_in % d->group || d->m % d->group)
			return false;
		d->cin_g = d->c_in / d->group;
		d->m_g = d->m / d->group;
		if (b->dims[1] != d->cin_g)
			return false;
		d->kk = ert_geom_k_size(&d->g);
		d->in_sp = ert_geom_in_size(&d->g);
		d->pointwise = d->kk == 1;
		for (int i = 0; i < 3; i++)
			if (d->g.stride[i] != 1 || d->g.pad_b[i] || d->g.pad_e[i])
				d->pointwise = false;
		d->batch = d->n_img * d->group;
		d->ni = ert_geom_out_size(&d->g);
		d->nj = d->m_g;
		d->k = d->cin_g * d->kk;
		d->w_rows = d->m;
		d->w_rs = d->k;
		d->w_cs = 1;
		return true;
	}
	if (x->node->op == ERT_OP_Gemm) {
		bool ta = ert_attr_int(x->node, "transA", 0) != 0;
		bool tb = ert_attr_int(x->node, "transB", 0) != 0;

		if (a->rank != 2 || b->rank != 2)
			return false;
		d->batch = 1;
		d->ni = a->dims[ta ? 1 : 0];
		d->k = a->dims[ta ? 0 : 1];
		d->nj = b->dims[tb ? 0 : 1];
		d->w_rows = d->nj;
		d->w_rs = tb ? d->k : 1;
		d->w_cs = tb ? 1 : d->nj;
		return true;
	}
	/* MatMul with a 1-D or 2-D B: the batch of A folds into its rows */
	if (b->rank < 1 || b->rank > 2 || a->rank < 1)
		return false;
	d->batch = 1;
	d->k = a->dims[a->rank - 1];
	d->ni = a->rank > 1 ? a->numel / (d->k ? d->k : 1) : 1;
	if (d->k == 0)
		d->ni = x->out[0]->numel / (b->rank == 2 ? (b->dims[1] ? b->dims[1] : 1) : 1);
	d->nj = b->rank == 2 ? b->dims[1] : 1;
	d->w_rows = d->nj;
	d->w_rs = b->rank == 2 ? 1 : 0;
	d->w_cs = b->rank == 2 ? d->nj : 1;
	return true;
}

bool ert_cpu_dq_accepts(const struct ert_exec *x)
{
	struct dq_geom d;
	enum ert_op op = x->node->op;

	if (op != ERT_OP_Conv && op != ERT_OP_Gemm && op != ERT_OP_MatMul)
		return false;
	/* folded Transposes (ert.perm_*) run on the fp32 GEMM, which reads through strides */
	if (op == ERT_OP_MatMul && ert_matmul_has_perm(x->node))
		return false;
	if (x->n_in < 2 || !is_f32(x->in[0]) || !is_f32(x->in[1]) || !x->in[1]->wq ||
	    x->n_out < 1 || !is_f32(x->out[0]))
		return false;
	if (!geom_of(x, &d) || d.k <= 0)
		return false;
	/* depthwise: a few taps per channel, no dot product to speak of */
	if (op == ERT_OP_Conv && d.cin_g == 1 && d.group > 1)
		return false;
	return x->in[1]->wq->rows * x->in[1]->wq->row_len == x->in[1]->numel;
}

static bool ert_cpu_dq_applies(const struct ert_exec *x)
{
	return x->n_in > 1 && x->in[1] && x->in[1]->wq && !x->in[1]->data &&
	       ert_cpu_dq_accepts(x);
}

/* Quantised value and scale of element @idx of @wq (docs/model-format.md). */
static float wq_value(const struct ert_wq *wq, int64_t idx)
{
	int64_t r = idx / wq->row_len, c = idx % wq->row_len;
	float s = wq->scales[r * wq->blocks_per_row + c / wq->block];
	int q;

	if (wq->bits == 8) {
		q = (int8_t)wq->q[idx];
	} else {
		int nib = (idx & 1) ? wq->q[idx / 2] >> 4 : wq->q[idx / 2] & 0xf;

		q = nib >= 8 ? nib - 16 : nib;
	}
	return (float)q * s;
}

/*
 * The int8 copy: rows of kb * 32 values (zeros past K), then the scales.
 * Rows of the file along K in blocks of 32 are copied as they are; the rest
 * is decoded and quantised again.
 */
static ert_status make_copy(struct dq_state *st, const struct ert_wq *wq, const struct dq_geom *d)
{
	int64_t kb = (d->k + 31) / 32, rows = d->w_rows;
	size_t qbytes = (size_t)(rows * kb * 32), bytes = qbytes + (size_t)(rows * kb) * 4;
	bool same = d->w_cs == 1 && wq->block == 32 && wq->row_len == d->k;
	float *row = NULL;

	st->copy = aligned_alloc(64, (bytes | 63) + 1);
	if (!st->copy)
		return ERT_STATUS_OUT_OF_MEMORY;
	if (!same && !(row = malloc((size_t)d->k * sizeof(float)))) {
		free(st->copy);
		st->copy = NULL;
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	int8_t *q = st->copy;
	float *s = (float *)(void *)((uint8_t *)st->copy + qbytes);

	for (int64_t j = 0; j < rows; j++) {
		if (same) {
			memset(q + j * kb * 32, 0, (size_t)kb * 32);
			for (int64_t k = 0; k < d->k; k++) {
				int64_t idx = j * d->k + k;
				int v;

				if (wq->bits == 8) {
					v = (int8_t)wq->q[idx];
				} else {
					v = (idx & 1) ? wq->q[idx / 2] >> 4 : wq->q[idx / 2] & 0xf;
					v = v >= 8 ? v - 16 : v;
				}
				q[j * kb * 32 + k] = (int8_t)v;
			}
			memcpy(s + j * kb, wq->scales + j * wq->blocks_per_row, (size_t)kb * 4);
			continue;
		}
		for (int64_t k = 0; k < d->k; k++)
			row[k] = wq_value(wq, j * d->w_rs + k * d->w_cs);
		ert_dq_quant_rows(row, 1, d->k, 1, d->k, false, q + j * kb * 32, s + j * kb);
	}
	free(row);
	st->copy_bytes = (bytes | 63) + 1;
	st->w = (struct ert_dq_w){
		.bits = 8, .rows = rows, .k = d->k, .kb = kb,
		.q = (const uint8_t *)q, .q_rs = kb * 32, .s = s, .s_rs = kb,
	};
	return ERT_OK;
}

static ert_status dq_prepare(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_wq *wq = x->in[1]->wq;
	const struct ert_dq_kernel *kern = ert_dq_kernel_for(cpu->isa);
	struct dq_state *st;
	struct dq_geom d;

	if (!geom_of(x, &d))
		return ert_node_fail(x->node, err, ERT_STATUS_INTERNAL,
				     "shapes the int8 kernels do not take");
	st = calloc(1, sizeof(*st));
	if (!st)
		goto oom;
	st->cpu = cpu;
	/* in place: rows along K (w_cs 1, row length K), blocks of 32 covering K exactly */
	if (d.w_cs == 1 && wq->row_len == d.k && wq->block == 32 && d.k % 32 == 0) {
		st->w = (struct ert_dq_w){
			.bits = wq->bits, .rows = d.w_rows, .k = d.k, .kb = d.k / 32,
			.q = wq->q, .q_rs = wq->bits == 8 ? d.k : d.k / 2,
			.s = wq->scales, .s_rs = wq->blocks_per_row,
		};
	} else if (make_copy(st, wq, &d) != ERT_OK) {
		goto oom;
	}
	cpu->packed_bytes += st->copy_bytes;
	x->state = st;
	x->kernel = st->w.bits == 8 ? kern->name8 : kern->name4;
	return ERT_OK;
oom:
	free(st);
	return ert_node_fail(x->node, err, ERT_STATUS_OUT_OF_MEMORY,
			     "out of memory for its int8 weights");
}

static void dq_release(struct ert_exec *x)
{
	struct dq_state *st = x->state;

	if (!st)
		return;
	st->cpu->packed_bytes -= st->copy_bytes;
	free(st->copy);
	free(st);
	x->state = NULL;
}

/* Bytes of one lane's slot: float rows, their int8 form and scales, a tile of outputs. */
static size_t slot_bytes(const struct dq_geom *d)
{
	int64_t kb = (d->k + 31) / 32;

	return (size_t)(ROWS * d->k * 4 + ROWS * kb * 32 + ROWS * kb * 4 + ROWS * JT * 4 + 64 * 4);
}

static size_t dq_workspace(const struct ert_cpu *cpu, const struct ert_exec *x)
{
	struct dq_geom d;

	if (!geom_of(x, &d) || d.k <= 0)
		return 0;
	return slot_bytes(&d) * ert_cpu_lanes(cpu) + 64;
}

struct dq_job {
	const struct ert_exec *x;
	const struct dq_geom *d;
	const struct ert_dq_w *w;
	ert_dq_dot_fn dot;
	const float *a;            /* activations (Conv: the image; Gemm/MatMul: A) */
	int64_t a_rs, a_cs;        /* Gemm/MatMul: element (i, k) of A */
	float *y;
	const float *bias, *res;   /* Conv (res also MatMul's ert.residual) */
	const float *c;            /* Gemm: C, broadcast through c_rs, c_cs */
	int64_t c_rs, c_cs;
	float alpha, beta;
	struct ert_act_desc act;
	uint8_t *ws;
	size_t slot;
	int64_t chunks, tasks;
	atomic_llong next;
};

static uint8_t *align64(uint8_t *p)
{
	return (uint8_t *)(((uintptr_t)p + 63) & ~(uintptr_t)63);
}

/* Rows i0.. of problem @bi of a Conv as im2col rows (K = C/group x window) in @t. */
static void conv_rows(const struct dq_job *j, int64_t bi, int64_t i0, int64_t n, float *t)
{
	const struct dq_geom *d = j->d;
	const struct ert_conv_geom *g = &d->g;
	const float *xb = j->a + ((bi / d->group) * d->c_in + (bi % d->group) * d->cin_g) * d->in_sp;

	if (d->pointwise) {
		for (int64_t c = 0; c < d->k; c++)
			for (int64_t i = 0; i < n; i++)
				t[i * d->k + c] = xb[c * d->in_sp + i0 + i];
		return;
	}
	for (int64_t i = 0; i < n; i++) {
		int64_t o = i0 + i, ow = o % g->out[2], oh = o / g->out[2] % g->out[1];
		int64_t od = o / g->out[2] / g->out[1];
		float *r = t + i * d->k;

		for (int64_t c = 0; c < d->cin_g; c++) {
			const float *plane = xb + c * d->in_sp;

			for (int64_t kd = 0; kd < g->k[0]; kd++) {
				int64_t iz = od * g->stride[0] - g->pad_b[0] + kd * g->dil[0];

				for (int64_t kh = 0; kh < g->k[1]; kh++) {
					int64_t iy = oh * g->stride[1] - g->pad_b[1] + kh * g->dil[1];
					bool in = iz >= 0 && iz < g->in[0] && iy >= 0 && iy < g->in[1];
					const float *line = in ? plane + (iz * g->in[1] + iy) * g->in[2] : NULL;

					for (int64_t kw = 0; kw < g->k[2]; kw++) {
						int64_t ix = ow * g->stride[2] - g->pad_b[2] + kw * g->dil[2];

						*r++ = in && ix >= 0 && ix < g->in[2] ? line[ix] : 0.0f;
					}
				}
			}
		}
	}
}

/* Tile @tile (n rows x nj' columns, JT apart) into the outputs, with the epilogue. */
static void store(const struct dq_job *j, int64_t bi, int64_t i0, int64_t n, int64_t j0,
		  int64_t nj, const float *tile)
{
	const struct dq_geom *d = j->d;

	if (j->x->node->op == ERT_OP_Conv) {
		int64_t img = bi / d->group, m0 = (bi % d->group) * d->m_g + j0;
		int64_t base = (img * d->m + m0) * d->ni + i0;

		for (int64_t c = 0; c < nj; c++) {
			float *y = j->y + base + c * d->ni;
			const float *res = j->res ? j->res + base + c * d->ni : NULL;
			float bv = j->bias ? j->bias[m0 + c] : 0.0f;

			for (int64_t i = 0; i < n; i++) {
				float v = tile[i * JT + c];

				if (j->bias)
					v += bv;
				if (res)
					v += res[i];
				y[i] = v;
			}
			ert_act_apply(&j->act, y, n);
		}
		return;
	}
	for (int64_t i = 0; i < n; i++) {
		float *y = j->y + (i0 + i) * d->nj + j0;

		for (int64_t c = 0; c < nj; c++) {
			float v = tile[i * JT + c];

			if (j->alpha != 1.0f)
				v *= j->alpha;
			if (j->c)
				v += j->beta * j->c[(i0 + i) * j->c_rs + (j0 + c) * j->c_cs];
			if (j->res)
				v += j->res[(i0 + i) * d->nj + j0 + c];
			y[c] = v;
		}
		ert_act_apply(&j->act, y, nj);
	}
}

static void lane_main(void *arg, int64_t begin, int64_t end)
{
	struct dq_job *j = arg;
	const struct dq_geom *d = j->d;
	int64_t kb = (d->k + 31) / 32;

	for (int64_t lane = begin; lane < end; lane++) {
		uint8_t *slot = align64(j->ws + lane * j->slot);
		float *rows = (float *)(void *)slot;
		int8_t *qa = (int8_t *)align64((uint8_t *)(rows + ROWS * d->k));
		float *sa = (float *)(void *)align64((uint8_t *)(qa + ROWS * kb * 32));
		float *tile = (float *)(void *)align64((uint8_t *)(sa + ROWS * kb));

		for (;;) {
			int64_t task = atomic_fetch_add(&j->next, 1);

			if (task >= j->tasks)
				break;
			int64_t bi = task / j->chunks, i0 = task % j->chunks * ROWS;
			int64_t n = d->ni - i0 < ROWS ? d->ni - i0 : ROWS;

			if (j->x->node->op == ERT_OP_Conv) {
				conv_rows(j, bi, i0, n, rows);
				ert_dq_quant_rows(rows, n, d->k, 1, d->k, j->w->bits == 4, qa, sa);
			} else if (j->a_cs == 1) {
				ert_dq_quant_rows(j->a + i0 * j->a_rs, n, j->a_rs, 1, d->k,
						  j->w->bits == 4, qa, sa);
			} else {
				/* transA: gather the columns first, reading A along its rows */
				for (int64_t k = 0; k < d->k; k++)
					for (int64_t i = 0; i < n; i++)
						rows[i * d->k + k] = j->a[(i0 + i) * j->a_rs + k * j->a_cs];
				ert_dq_quant_rows(rows, n, d->k, 1, d->k, j->w->bits == 4, qa, sa);
			}
			int64_t wbase = d->group > 1 ? (bi % d->group) * d->m_g : 0;

			for (int64_t j0 = 0; j0 < d->nj; j0 += JT) {
				int64_t nj = d->nj - j0 < JT ? d->nj - j0 : JT;

				j->dot(qa, sa, n, j->w, wbase + j0, nj, tile, JT);
				store(j, bi, i0, n, j0, nj, tile);
			}
		}
	}
}

static ert_status dq_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct dq_state *st = x->state;
	struct dq_geom d;
	struct dq_job job, *j = &job;
	size_t need;

	if (!st || !geom_of(x, &d))
		return ert_node_fail(x->node, err, ERT_STATUS_INTERNAL,
				     "int8 weights not prepared");
	need = slot_bytes(&d) + 64;
	if (!x->workspace || x->workspace_size < need)
		return ert_node_fail(x->node, err, ERT_STATUS_INTERNAL,
				     "workspace of %zu bytes, %zu needed", x->workspace_size, need);
	memset(j, 0, sizeof(*j));
	j->x = x;
	j->d = &d;
	j->w = &st->w;
	j->dot = ert_dq_kernel_for(cpu->isa)->dot;
	j->a = x->in[0]->data;
	j->y = x->out[0]->data;
	j->act = ert_node_act(x->node);
	j->alpha = 1.0f;
	j->a_rs = d.k;
	j->a_cs = 1;
	if (x->node->op == ERT_OP_Conv) {
		j->bias = x->n_in > 2 && x->in[2] ? x->in[2]->data : NULL;
		j->res = x->n_in > 3 && x->in[3] ? x->in[3]->data : NULL;
	} else if (x->node->op == ERT_OP_Gemm) {
		const struct ert_value *c = x->n_in > 2 ? x->in[2] : NULL;

		if (ert_attr_int(x->node, "transA", 0)) {
			j->a_rs = 1;
			j->a_cs = d.ni;
		}
		j->alpha = ert_attr_float(x->node, "alpha", 1.0f);
		j->beta = ert_attr_float(x->node, "beta", 1.0f);
		if (c && j->beta != 0.0f) {
			j->c = c->data;
			j->c_rs = c->rank == 2 && c->dims[0] != 1 ? c->dims[1] : 0;
			j->c_cs = c->rank >= 1 && c->dims[c->rank - 1] != 1 ? 1 : 0;
		}
	} else {
		/* MatMul's fused epilogue (opt/fuse-residual.c): scale, bias, residual */
		j->alpha = ert_attr_float(x->node, "ert.scale", 1.0f);
		if (ert_attr_int(x->node, "ert.bias", 0) && x->n_in > 2 && x->in[2]) {
			/* input 2 added to every row, as C of Gemm */
			j->c = x->in[2]->data;
			j->beta = 1.0f;
			j->c_rs = 0;
			j->c_cs = 1;
		}
		if (ert_attr_int(x->node, "ert.residual", 0) && x->n_in > 3 && x->in[3])
			j->res = x->in[3]->data;
	}
	j->chunks = (d.ni + ROWS - 1) / ROWS;
	j->tasks = d.batch * j->chunks;
	j->slot = slot_bytes(&d);
	j->ws = x->workspace;
	atomic_init(&j->next, 0);

	int64_t lanes = (int64_t)((x->workspace_size - 64) / j->slot);

	if (lanes > (int64_t)cpu->num_threads)
		lanes = cpu->num_threads;
	if (lanes > j->tasks)
		lanes = j->tasks;
	if (lanes < 1)
		lanes = 1;
	ert_parallel_for(cpu->pool, lanes, 1, lane_main, j);
	return ERT_OK;
}

static const struct ert_cpu_op dq_ops[] = {
	{ .op = ERT_OP_Conv, .workspace = dq_workspace, .prepare = dq_prepare,
	  .compute = dq_compute, .release = dq_release },
	{ .op = ERT_OP_Gemm, .workspace = dq_workspace, .prepare = dq_prepare,
	  .compute = dq_compute, .release = dq_release },
	{ .op = ERT_OP_MatMul, .workspace = dq_workspace, .prepare = dq_prepare,
	  .compute = dq_compute, .release = dq_release },
};

const struct ert_cpu_op *ert_cpu_dq_op(const struct ert_exec *x)
{
	if (!ert_cpu_dq_applies(x))
		return NULL;
	return &dq_ops[x->node->op == ERT_OP_Conv ? 0 : x->node->op == ERT_OP_Gemm ? 1 : 2];
}
