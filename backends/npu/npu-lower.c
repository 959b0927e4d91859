/* SPDX-License-Identifier: MIT */
/*
 * Lowering int8 nodes to enpu commands (uapi/drm/enpu_cmdstream.h): the
 * building blocks and the dispatch (see npu-lower.h for the other parts).
 *
 * Tensors stay in the graph's layout: the command stream takes a byte stride
 * per dimension, so an NCHW activation is handed to CONV2D and POOL as an
 * NHWC view and OIHW weights as an OHWI view, with no repacking. Only ops
 * with the fixed-point rule (ert.requant = 1, docs/int8.md) are lowered, so
 * the results equal the CPU backend's bit for bit.
 *
 * A command asks for at most the device's per-job work (QUERY max_job_work):
 * larger layers are cut into several commands (by output channel, then by
 * output row), which the job builder may put in different jobs.
 */
#include <stdlib.h>
#include <string.h>

#include "npu/npu-lower.h"
#include "ops/quant-fixed.h"

/* ---- building commands ---------------------------------------------------- */

ert_status nl_lower_fail(struct lower *l, ert_status st, const char *why)
{
	ert_err_set(l->err, "npu: %s '%s': %s", ert_op_name(l->x->node->op), l->x->node->name,
		    why);
	return st;
}

struct npu_cmd_entry *nl_add_cmd(struct lower *l, uint16_t opcode, size_t size,
				    uint64_t work)
{
	struct npu_op *op = l->op;

	if (op->n_cmds == l->cap) {
		uint32_t cap = l->cap ? l->cap * 2 : 4;
		struct npu_cmd_entry *c = realloc(op->cmds, cap * sizeof(*c));

		if (!c)
			return NULL;
		op->cmds = c;
		l->cap = cap;
	}
	struct npu_cmd_entry *e = &op->cmds[op->n_cmds++];

	memset(e, 0, sizeof(*e));
	e->c.hdr.opcode = opcode;
	e->c.hdr.size = (uint16_t)size;
	e->work = work;
	return e;
}

/* A node-local reference to @bo (+ @offset of the tensor's first byte). */
static int32_t add_ref(struct lower *l, const struct npu_bo *bo, int32_t input,
		       const struct ert_value *base, uint64_t offset)
{
	struct npu_op *op = l->op;

	for (uint32_t i = 0; i < op->n_refs; i++)
		if (input >= 0 ? op->refs[i].input == input
			       : op->refs[i].bo == bo && op->refs[i].input < 0)
			return (int32_t)i;
	if (op->n_refs == NPU_MAX_REFS)
		return -1;
	op->refs[op->n_refs] = (struct npu_ref){ .bo = bo, .input = input,
						 .base = base ? base->data : NULL,
						 .gen = base ? base->storage_gen : 0,
						 .offset = offset };
	return (int32_t)op->n_refs++;
}

/* Where value @v (input @k of the node, or -1 for an output) lives: ref + offset. */
ert_status nl_locate(struct lower *l, const struct ert_value *v, int32_t k, bool is_const,
			uint32_t *ref, uint64_t *offset)
{
	struct ert_npu *npu = l->npu;
	const struct npu_bo *bo = NULL;
	ert_status st;

	if (is_const) {
		st = ert_npu_upload(npu, v->data, v->nbytes, &bo, offset, l->err);
		if (st != ERT_OK)
			return st;
	} else {
		bo = ert_npu_find(npu, v->data, v->nbytes, offset);
		/* a graph input, in the session's page-aligned buffer: wrapped by the node */
		if (!bo && k >= 0) {
			int32_t r = add_ref(l, NULL, k, v, 0);
			struct npu_ref *ir = r >= 0 ? &l->op->refs[r] : NULL;

			if (!ir)
				return nl_lower_fail(l, ERT_STATUS_INTERNAL,
						     "too many buffers for one node");
			if (!ir->bo) {
				st = ert_npu_wrap(npu, v->data, v->nbytes, &ir->own, l->err);
				if (st != ERT_OK)
					return st;
				ir->bo = &ir->own;
			}
			*offset = 0;
			*ref = (uint32_t)r;
			return ERT_OK;
		}
		if (!bo)
			return nl_lower_fail(l, ERT_STATUS_INTERNAL,
					     "a tensor is not in NPU-visible memory");
	}
	int32_t r = add_ref(l, bo, -1, NULL, 0);

	if (r < 0)
		return nl_lower_fail(l, ERT_STATUS_INTERNAL, "too many buffers for one node");
	*ref = (uint32_t)r;
	return ERT_OK;
}

/* Input 0 and output 0 of the node: where each lives. */
ert_status nl_locate_io(struct lower *l, uint32_t *ri, uint64_t *oi, uint32_t *ro,
			   uint64_t *oo)
{
	struct ert_exec *x = l->x;
	ert_status st = nl_locate(l, x->in[0], 0, x->in_const[0], ri, oi);

	return st == ERT_OK ? nl_locate(l, x->out[0], -1, false, ro, oo) : st;
}

/* Upload bytes computed at prepare time (requant tables, LUTs): not cached. */
ert_status nl_locate_bytes(struct lower *l, const void *data, size_t n, uint32_t *ref,
			      uint64_t *offset)
{
	const struct npu_bo *bo;
	ert_status st = ert_npu_upload_bytes(l->npu, data, n, &bo, offset, l->err);
	if (st != ERT_OK)
		return st;
	int32_t r = add_ref(l, bo, -1, NULL, 0);

	if (r < 0)
		return nl_lower_fail(l, ERT_STATUS_INTERNAL, "too many buffers for one node");
	*ref = (uint32_t)r;
	return ERT_OK;
}

struct enpu_cs_tensor nl_tensor4(uint32_t ref, uint64_t offset, const int64_t *dims,
				    const int64_t *strides)
{
	struct enpu_cs_tensor t = { .region = ref, .offset = offset };

	for (int i = 0; i < 4; i++) {
		t.dim[i] = (uint32_t)dims[i];
		t.stride[i] = (uint32_t)strides[i];
	}
	return t;
}

struct enpu_cs_tensor nl_tensor_none(void)
{
	struct enpu_cs_tensor t = { .region = ENPU_CS_NO_REGION };

	return t;
}

/* Dense row-major strides (bytes) of dims[0..rank) with element size @es. */
void nl_dense_strides(const int64_t *dims, int32_t rank, int64_t es, int64_t *st)
{
	int64_t s = es;

	for (int32_t i = rank; i-- > 0;) {
		st[i] = s;
		s *= dims[i];
	}
}

/* Dims and strides fit the command stream (dims 1..65535, strides < 2^32). */
bool nl_fits4(const int64_t *dims, const int64_t *st)
{
	for (int i = 0; i < 4; i++)
		if (dims[i] < 1 || dims[i] > ENPU_CS_MAX_DIM || st[i] < 0 || st[i] > UINT32_MAX)
			return false;
	return true;
}

/* Right-align a value of rank <= 4 to 4 dims; false when the rank is larger. */
bool nl_as4(const struct ert_value *v, int64_t *dims, int64_t *st, int64_t es)
{
	int64_t d[ERT_MAX_RANK], s[ERT_MAX_RANK];

	if (v->rank > 4)
		return false;
	nl_dense_strides(v->dims, v->rank, es, s);
	for (int32_t i = 0; i < v->rank; i++)
		d[i] = v->dims[i];
	for (int i = 0; i < 4; i++) {
		int32_t j = v->rank - 4 + i;

		dims[i] = j >= 0 ? d[j] : 1;
		st[i] = j >= 0 ? s[j] : 0;
	}
	return nl_fits4(dims, st);
}

/* ---- quantisation parameters ---------------------------------------------- */

const struct ert_value *nl_in_at(const struct ert_exec *x, uint32_t i)
{
	return i < x->n_in ? x->in[i] : NULL;
}

bool nl_in_is_const(const struct ert_exec *x, uint32_t i)
{
	return i < x->n_in && x->in[i] && x->in_const[i] && x->in[i]->data;
}

bool nl_is_int8(const struct ert_value *v)
{
	return v && v->dtype == ERT_DTYPE_INT8;
}

/* A constant scalar scale (float32/16) > 0, finite. */
bool nl_scalar_scale(const struct ert_exec *x, uint32_t i, double *s)
{
	const struct ert_value *v = nl_in_at(x, i);

	if (!nl_in_is_const(x, i) || v->numel != 1 || !ert_dtype_is_float(v->dtype))
		return false;
	*s = ert_value_get_float(v, 0);
	return *s > 0 && *s < 1e30;
}

/* A constant int8 scalar zero point (absent: 0). */
bool nl_scalar_zp(const struct ert_exec *x, uint32_t i, int32_t *zp)
{
	const struct ert_value *v = nl_in_at(x, i);

	*zp = 0;
	if (!v)
		return true;
	if (!nl_in_is_const(x, i) || v->numel != 1 || v->dtype != ERT_DTYPE_INT8)
		return false;
	*zp = (int32_t)ert_value_get_int(v, 0);
	return true;
}

/* The weight zero point: absent, or int8 constant all-equal. */
bool nl_weight_zp(const struct ert_exec *x, uint32_t i, int32_t *zp)
{
	const struct ert_value *v = nl_in_at(x, i);

	*zp = 0;
	if (!v)
		return true;
	if (!nl_in_is_const(x, i) || v->dtype != ERT_DTYPE_INT8 || v->numel < 1)
		return false;
	*zp = (int32_t)ert_value_get_int(v, 0);
	for (int64_t c = 1; c < v->numel; c++)
		if (ert_value_get_int(v, c) != *zp)
			return false;
	return true;
}

bool nl_fixed_rule(const struct ert_node *n)
{
	return ert_attr_int(n, "ert.requant", 0) == 1;
}

void nl_clamp_of(const struct ert_node *n, int32_t *lo, int32_t *hi)
{
	uint32_t count = 0;
	const int64_t *c = ert_attr_ints(n, "ert.clamp", &count);

	*lo = -128;
	*hi = 127;
	if (c && count == 2) {
		*lo = (int32_t)(c[0] < -128 ? -128 : c[0] > 127 ? 127 : c[0]);
		*hi = (int32_t)(c[1] < -128 ? -128 : c[1] > 127 ? 127 : c[1]);
	}
}

/*
 * Per-channel (mult, shift) table of x_s * w_s[c] / y_s for @n channels; the
 * weight scale input @ws has 1 or @n entries. False when one is not
 * representable or a scale is not positive.
 */
bool nl_requant_table(const struct ert_exec *x, double xs, uint32_t ws_idx, double ys,
			 int64_t n, int32_t *tab)
{
	const struct ert_value *ws = nl_in_at(x, ws_idx);

	if (!nl_in_is_const(x, ws_idx) || !ert_dtype_is_float(ws->dtype) ||
	    (ws->numel != 1 && ws->numel != n))
		return false;
	for (int64_t c = 0; c < n; c++) {
		double w = ert_value_get_float(ws, ws->numel == 1 ? 0 : c);

		if (!(w > 0) ||
		    !ert_quant_product_multiplier(xs, w, ys, &tab[2 * c], &tab[2 * c + 1]))
			return false;
	}
	return true;
}

/* ---- cutting walks ----------------------------------------------------------- */


struct rows4 nl_split_rows(const int64_t *od, uint64_t per_elem, uint64_t per_row,
			      uint64_t limit)
{
	struct rows4 r;
	uint64_t row = (uint64_t)od[3] * per_elem + per_row;

	memcpy(r.dims, od, sizeof(r.dims));
	memcpy(r.chunk, od, sizeof(r.chunk));
	for (int i = 0; i < 3; i++) {
		while (r.chunk[i] > 1 &&
		       (uint64_t)r.chunk[0] * r.chunk[1] * r.chunk[2] * row > limit)
			r.chunk[i] = (r.chunk[i] + 1) / 2;
		r.n[i] = (od[i] + r.chunk[i] - 1) / r.chunk[i];
	}
	return r;
}

int64_t nl_pieces(const struct rows4 *r)
{
	return r->n[0] * r->n[1] * r->n[2];
}

/* Piece @i (dim 0 slowest): its start @at along dims 0..2 and its dims @d. */
void nl_piece_at(const struct rows4 *r, int64_t i, int64_t *at, int64_t *d)
{
	for (int k = 2; k >= 0; k--) {
		at[k] = i % r->n[k] * r->chunk[k];
		d[k] = r->dims[k] - at[k] < r->chunk[k] ? r->dims[k] - at[k] : r->chunk[k];
		i /= r->n[k];
	}
	d[3] = r->dims[3];
}

/* Byte offset of a piece starting at @at in a tensor of strides @st. */
uint64_t nl_piece_offset(const int64_t *at, const int64_t *st)
{
	return (uint64_t)(at[0] * st[0] + at[1] * st[1] + at[2] * st[2]);
}

/* ---- dispatch ------------------------------------------------------------- */

bool ert_npu_supports(struct ert_npu *npu, const struct ert_exec *x)
{
	if (!x->n_out || !x->out[0])
		return false;
	if (nl_compute_op(x->node->op))
		return nl_compute_supports(x, npu->info->max_job_work);
	return nl_move_supports(x);
}

bool ert_npu_claims_op(enum ert_op op)
{
	return nl_compute_op(op) || nl_move_op(op);
}

ert_status ert_npu_lower(struct ert_npu *npu, struct ert_exec *x, struct ert_err *err)
{
	struct npu_op *op = calloc(1, sizeof(*op));
	struct lower l = { .npu = npu, .x = x, .op = op, .err = err };
	ert_status st;

	if (!op)
		return ERT_STATUS_OUT_OF_MEMORY;
	l.limit = npu->info->max_job_work;
	st = nl_compute_op(x->node->op) ? nl_compute_lower(&l) : nl_move_lower(&l);
	if (st != ERT_OK) {
		ert_npu_op_free(npu, op);
		return st;
	}
	x->state = op;
	return ERT_OK;
}

void ert_npu_op_free(struct ert_npu *npu, struct npu_op *op)
{
	if (!op)
		return;
	for (uint32_t i = 0; i < op->n_refs; i++)
		if (op->refs[i].input >= 0)
			npu_bo_destroy(npu->dev, &op->refs[i].own);
	free(op->cmds);
	free(op);
}

uint32_t ert_npu_cmd_tensors(union npu_cmd *c, struct enpu_cs_tensor **t)
{
	switch (c->hdr.opcode) {
	case ENPU_OP_CONV2D:
		t[0] = &c->conv.in, t[1] = &c->conv.weights, t[2] = &c->conv.bias;
		t[3] = &c->conv.requant, t[4] = &c->conv.out;
		return 5;
	case ENPU_OP_MATMUL:
		t[0] = &c->mm.a, t[1] = &c->mm.w, t[2] = &c->mm.bias;
		t[3] = &c->mm.requant, t[4] = &c->mm.out;
		return 5;
	case ENPU_OP_ELTWISE:
		t[0] = &c->elt.a, t[1] = &c->elt.b, t[2] = &c->elt.out;
		return 3;
	case ENPU_OP_POOL:
		t[0] = &c->pool.in, t[1] = &c->pool.out;
		return 2;
	case ENPU_OP_LUT:
		t[0] = &c->lut.in, t[1] = &c->lut.table, t[2] = &c->lut.out;
		return 3;
	case ENPU_OP_COPY:
		t[0] = &c->copy.src, t[1] = &c->copy.dst;
		return 2;
	default:
		return 0;
	}
}
