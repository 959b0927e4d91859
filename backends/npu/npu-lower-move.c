/* SPDX-License-Identifier: MIT */
/*
 * NPU lowering of what moves or maps bytes (see npu-lower.h): views,
 * Transpose, Concat, Slice and Pad on int8 as strided COPYs;
 * DequantizeLinear as four LUTs (one per byte of the float); QLinearLookup
 * as one LUT.
 */
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu-impl.h"
#include "npu/npu-lower.h"
#include "ops/movement-params.h"

/* ---- byte moves: COPY and LUT ---------------------------------------------- */

/* One COPY (or LUT with @table_ref) of 4-D @d from (src, ss) to (dst, ds), split for work. */
static ert_status emit_bytes(struct lower *l, uint32_t rs, uint64_t os, const int64_t *ss,
			     uint32_t rd, uint64_t od, const int64_t *ds, const int64_t *d,
			     int32_t table_ref, uint64_t table_off)
{
	struct rows4 r = nl_split_rows(d, 4, 16, l->limit);

	if (!nl_fits4(d, ss) || !nl_fits4(d, ds))
		return nl_lower_fail(l, ERT_STATUS_UNSUPPORTED, "tensor too large for one command");
	for (int64_t i = 0; i < nl_pieces(&r); i++) {
		int64_t at[3], cd[4];
		uint64_t work, so, doff;
		struct npu_cmd_entry *e;

		nl_piece_at(&r, i, at, cd);
		work = (uint64_t)cd[0] * cd[1] * cd[2] * (cd[3] * 4 + 16);
		so = os + nl_piece_offset(at, ss);
		doff = od + nl_piece_offset(at, ds);
		if (work > l->limit)
			return nl_lower_fail(l, ERT_STATUS_UNSUPPORTED,
					     "a row exceeds the work limit");
		if (table_ref >= 0) {
			int64_t td[4] = { 256, 1, 1, 1 }, ts[4] = { 1, 0, 0, 0 };

			e = nl_add_cmd(l, ENPU_OP_LUT, sizeof(struct enpu_cs_lut), work);
			if (!e)
				return ERT_STATUS_OUT_OF_MEMORY;
			e->c.lut.in = nl_tensor4(rs, so, cd, ss);
			e->c.lut.table = nl_tensor4((uint32_t)table_ref, table_off, td, ts);
			e->c.lut.out = nl_tensor4(rd, doff, cd, ds);
		} else {
			e = nl_add_cmd(l, ENPU_OP_COPY, sizeof(struct enpu_cs_copy), work);
			if (!e)
				return ERT_STATUS_OUT_OF_MEMORY;
			e->c.copy.src = nl_tensor4(rs, so, cd, ss);
			e->c.copy.dst = nl_tensor4(rd, doff, cd, ds);
		}
	}
	return ERT_OK;
}

/*
 * A byte range of @n bytes as a 4-D walk of rows of at most 65535 bytes:
 * (1, rows, 1, width) with a tail handled by the caller.
 */
static ert_status copy_flat(struct lower *l, uint32_t rs, uint64_t os, uint32_t rd, uint64_t od,
			    uint64_t n)
{
	const uint64_t width = 32768;

	while (n) {
		uint64_t rows = n / width, w = width;

		if (!rows) {
			rows = 1;
			w = n;
		}
		if (rows > ENPU_CS_MAX_DIM)
			rows = ENPU_CS_MAX_DIM;
		int64_t d[4] = { 1, (int64_t)rows, 1, (int64_t)w };
		int64_t s[4] = { 0, (int64_t)w, 0, 1 };
		ert_status st = emit_bytes(l, rs, os, s, rd, od, s, d, -1, 0);

		if (st != ERT_OK)
			return st;
		os += rows * w;
		od += rows * w;
		n -= rows * w;
	}
	return ERT_OK;
}

static bool is_view(enum ert_op op)
{
	return op == ERT_OP_Reshape || op == ERT_OP_Flatten || op == ERT_OP_Squeeze ||
	       op == ERT_OP_Unsqueeze || op == ERT_OP_Identity;
}

static ert_status lower_view(struct lower *l)
{
	struct ert_exec *x = l->x;
	uint32_t rs, rd;
	uint64_t os, od;
	ert_status st;

	/* planned in place: nothing to move */
	if (x->in[0]->data == x->out[0]->data)
		return ERT_OK;
	st = nl_locate_io(l, &rs, &os, &rd, &od);
	if (st != ERT_OK)
		return st;
	return copy_flat(l, rs, os, rd, od, x->out[0]->nbytes);
}

static bool transpose_perm(const struct ert_exec *x, int32_t *perm)
{
	const struct ert_value *in = x->in[0];
	uint32_t n = 0;
	const int64_t *p = ert_attr_ints(x->node, "perm", &n);

	if (in->rank > 4)
		return false;
	for (int32_t i = 0; i < in->rank; i++)
		perm[i] = p ? (int32_t)p[i] : in->rank - 1 - i;
	return !p || n == (uint32_t)in->rank;
}

static ert_status lower_transpose(struct lower *l)
{
	struct ert_exec *x = l->x;
	const struct ert_value *in = x->in[0];
	int32_t perm[4];
	int64_t ist[ERT_MAX_RANK], d[4], ss[4], ds[4];
	uint32_t rs, rd;
	uint64_t os, od;
	ert_status st;

	transpose_perm(x, perm);
	nl_dense_strides(in->dims, in->rank, 1, ist);
	nl_as4(x->out[0], d, ds, 1);
	for (int i = 0; i < 4; i++) {
		int32_t j = in->rank - 4 + i;

		ss[i] = j >= 0 ? ist[perm[j]] : 0;
	}
	st = nl_locate_io(l, &rs, &os, &rd, &od);
	if (st != ERT_OK)
		return st;
	return emit_bytes(l, rs, os, ss, rd, od, ds, d, -1, 0);
}

static ert_status lower_concat(struct lower *l)
{
	struct ert_exec *x = l->x;
	const struct ert_value *out = x->out[0];
	int32_t axis;
	int64_t od[4], os[4], at = 0;
	uint32_t rd;
	uint64_t oo;
	ert_status st;

	ert_norm_axis(ert_attr_int(x->node, "axis", 0), out->rank, &axis);
	nl_as4(out, od, os, 1);
	st = nl_locate(l, out, -1, false, &rd, &oo);
	int32_t a4 = axis + 4 - out->rank;

	for (uint32_t k = 0; st == ERT_OK && k < x->n_in; k++) {
		const struct ert_value *in = x->in[k];
		int64_t d[4], s[4];
		uint32_t rs;
		uint64_t os_in;

		if (!in->numel)
			continue;
		nl_as4(in, d, s, 1);
		st = nl_locate(l, in, (int32_t)k, x->in_const[k], &rs, &os_in);
		if (st == ERT_OK)
			st = emit_bytes(l, rs, os_in, s, rd, oo + (uint64_t)(at * os[a4]), os, d,
					-1, 0);
		at += d[a4];
	}
	return st;
}

static bool slice_params(const struct ert_exec *x, struct ert_mv_slice *sp)
{
	struct ert_err e;

	if (x->in[0]->rank > 4 ||
	    ert_mv_slice_params(x->node, &e, (const struct ert_value *const *)x->in, x->n_in,
				sp) != ERT_OK)
		return false;
	for (int32_t i = 0; i < sp->rank; i++)
		if (sp->step[i] < 1 || sp->dims[i] < 1)
			return false;
	return true;
}

static ert_status lower_slice(struct lower *l)
{
	struct ert_exec *x = l->x;
	const struct ert_value *in = x->in[0];
	struct ert_mv_slice sp;
	int64_t ist[ERT_MAX_RANK], d[4], ss[4], ds[4];
	uint64_t off = 0, os, od;
	uint32_t rs, rd;
	ert_status st;

	slice_params(x, &sp);
	nl_dense_strides(in->dims, in->rank, 1, ist);
	nl_as4(x->out[0], d, ds, 1);
	for (int32_t i = 0; i < in->rank; i++)
		off += (uint64_t)(sp.start[i] * ist[i]);
	for (int i = 0; i < 4; i++) {
		int32_t j = in->rank - 4 + i;

		/* a length-1 axis never steps, and its step may be huge (INT64_MAX) */
		ss[i] = j >= 0 && sp.dims[j] > 1 ? ist[j] * sp.step[j] : 0;
	}
	st = nl_locate_io(l, &rs, &os, &rd, &od);
	if (st != ERT_OK)
		return st;
	return emit_bytes(l, rs, os + off, ss, rd, od, ds, d, -1, 0);
}

/*
 * DequantizeLinear int8 -> float32 as four LUTs, one per byte of the float:
 * the tables are the CPU backend's own results for the 256 inputs, so the
 * values are bit-identical by construction.
 */
static ert_status dq_tables(const struct ert_exec *x, uint8_t tables[4][256], struct ert_err *err)
{
	struct ert_value in = { .dtype = ERT_DTYPE_INT8, .rank = 1, .dims = { 256 } };
	struct ert_value out = { 0 };
	int8_t codes[256];
	const struct ert_value *ins[3] = { &in, x->in[1], nl_in_at(x, 2) };
	ert_status st;

	for (int i = 0; i < 256; i++)
		codes[i] = (int8_t)(uint8_t)i;
	in.data = codes;
	ert_value_finish(&in);
	st = ert_cpu_eval_node(x->graph, x->node, ins, x->n_in < 3 ? x->n_in : 3, &out, 1, err);
	if (st != ERT_OK)
		return st;
	for (int i = 0; i < 256; i++)
		for (int b = 0; b < 4; b++)
			tables[b][i] = ((const uint8_t *)out.data)[4 * i + b];
	free(out.data);
	return ERT_OK;
}

static bool dq_supported(const struct ert_exec *x)
{
	double s;
	int32_t zp;
	int64_t d[4], st[4];

	return nl_is_int8(x->in[0]) && x->out[0] && x->out[0]->dtype == ERT_DTYPE_FLOAT32 &&
	       nl_scalar_scale(x, 1, &s) && nl_in_at(x, 1)->dtype == ERT_DTYPE_FLOAT32 &&
	       nl_scalar_zp(x, 2, &zp) && nl_as4(x->in[0], d, st, 1) && nl_as4(x->out[0], d, st, 4);
}

static ert_status lower_dq(struct lower *l)
{
	struct ert_exec *x = l->x;
	uint8_t tables[4][256];
	int64_t d[4], ss[4], ds[4];
	uint32_t rs, rd, rt;
	uint64_t os, od, ot;
	ert_status st = dq_tables(x, tables, l->err);

	if (st == ERT_OK)
		st = nl_locate_bytes(l, tables, sizeof(tables), &rt, &ot);
	if (st == ERT_OK)
		st = nl_locate_io(l, &rs, &os, &rd, &od);
	if (st != ERT_OK)
		return st;
	nl_as4(x->in[0], d, ss, 1);
	nl_as4(x->out[0], d, ds, 4);
	for (int b = 0; b < 4 && st == ERT_OK; b++)
		st = emit_bytes(l, rs, os, ss, rd, od + (uint64_t)b, ds, d, (int32_t)rt,
				ot + 256u * (uint64_t)b);
	return st;
}

/* QLinearLookup: one LUT command (split by rows), the table uploaded with the weights. */
static bool lookup_supported(const struct ert_exec *x)
{
	int64_t d[4], st[4];

	return x->n_in == 2 && nl_is_int8(x->in[0]) && nl_is_int8(x->out[0]) && nl_in_is_const(x, 1) &&
	       nl_is_int8(x->in[1]) && x->in[1]->numel == 256 && nl_as4(x->in[0], d, st, 1);
}

static ert_status lower_lookup(struct lower *l)
{
	struct ert_exec *x = l->x;
	int64_t d[4], ss[4], ds[4];
	uint32_t rs, rd, rt;
	uint64_t os, od, ot;
	ert_status st = nl_locate(l, x->in[1], 1, true, &rt, &ot);

	if (st == ERT_OK)
		st = nl_locate_io(l, &rs, &os, &rd, &od);
	if (st != ERT_OK)
		return st;
	nl_as4(x->in[0], d, ss, 1);
	nl_as4(x->out[0], d, ds, 1);
	return emit_bytes(l, rs, os, ss, rd, od, ds, d, (int32_t)rt, ot);
}


/* Pad in constant mode with no crops (begin/end >= 0); the fill value as int8. */
static bool pad_params(const struct ert_exec *x, struct ert_mv_pad *pp, int8_t *value)
{
	struct ert_err e;
	double v;

	if (x->in[0]->rank > 4 ||
	    ert_mv_pad_params(x->node, &e, (const struct ert_value *const *)x->in, x->n_in,
			      pp) != ERT_OK || pp->mode != ERT_MV_PAD_CONSTANT)
		return false;
	for (int32_t i = 0; i < pp->rank; i++)
		if (pp->begin[i] < 0 || pp->end[i] < 0)
			return false;
	if (pp->has_value_input) {
		if (!nl_in_is_const(x, 2) || !nl_is_int8(x->in[2]))
			return false;
		v = (double)ert_value_get_int(x->in[2], 0);
	} else {
		v = pp->value;
	}
	if (v != (double)(int8_t)v)
		return false;
	*value = (int8_t)v;
	return true;
}

/*
 * Pad: one COPY fills the output with the value from a one-byte table read
 * with stride 0, a second COPY places the input inside it.
 */
static ert_status lower_pad(struct lower *l)
{
	struct ert_exec *x = l->x;
	struct ert_mv_pad pp;
	int8_t value;
	int64_t d[4], ds[4], id[4], is[4], ost[ERT_MAX_RANK];
	int64_t zero[4] = { 0, 0, 0, 0 };
	uint32_t rs, rd, rv;
	uint64_t os, od, ov, inner = 0;
	ert_status st;

	pad_params(x, &pp, &value);
	nl_as4(x->out[0], d, ds, 1);
	nl_dense_strides(x->out[0]->dims, x->out[0]->rank, 1, ost);
	for (int32_t i = 0; i < pp.rank; i++)
		inner += (uint64_t)(pp.begin[i] * ost[i]);
	st = nl_locate_bytes(l, &value, 1, &rv, &ov);
	if (st == ERT_OK)
		st = nl_locate(l, x->out[0], -1, false, &rd, &od);
	if (st == ERT_OK)
		st = emit_bytes(l, rv, ov, zero, rd, od, ds, d, -1, 0);
	if (st != ERT_OK || !x->in[0]->numel)
		return st;
	st = nl_locate(l, x->in[0], 0, x->in_const[0], &rs, &os);
	if (st != ERT_OK)
		return st;
	nl_as4(x->in[0], id, is, 1);
	return emit_bytes(l, rs, os, is, rd, od + inner, ds, id, -1, 0);
}

static bool movement_supported(const struct ert_exec *x)
{
	const struct ert_node *n = x->node;
	int64_t d[4], s[4];

	if (!x->n_in || !nl_is_int8(x->in[0]) || !x->out[0] || !nl_is_int8(x->out[0]) ||
	    !x->out[0]->numel)
		return false;
	for (uint32_t k = 1; k < n->n_outputs; k++)
		if (n->outputs[k] >= 0)
			return false;
	if (is_view(n->op))
		return true;
	if (!nl_as4(x->out[0], d, s, 1))
		return false;
	switch (n->op) {
	case ERT_OP_Transpose: {
		int32_t perm[4];

		return transpose_perm(x, perm);
	}
	case ERT_OP_Concat:
		/* a BO for each input (graph inputs have their own) and the output */
		if (x->n_in >= NPU_MAX_REFS)
			return false;
		for (uint32_t k = 0; k < x->n_in; k++)
			if (!x->in[k] || !nl_is_int8(x->in[k]) || x->in[k]->rank != x->out[0]->rank)
				return false;
		return true;
	case ERT_OP_Slice: {
		struct ert_mv_slice sp;

		return slice_params(x, &sp);
	}
	case ERT_OP_Pad: {
		struct ert_mv_pad pp;
		int8_t value;

		return pad_params(x, &pp, &value);
	}
	default:
		return false;
	}
}

bool nl_move_op(enum ert_op op)
{
	switch (op) {
	case ERT_OP_DequantizeLinear: case ERT_OP_QLinearLookup: case ERT_OP_Transpose:
	case ERT_OP_Concat: case ERT_OP_Slice: case ERT_OP_Pad:
		return true;
	default:
		return is_view(op);
	}
}

bool nl_move_supports(const struct ert_exec *x)
{
	switch (x->node->op) {
	case ERT_OP_DequantizeLinear:
		return dq_supported(x);
	case ERT_OP_QLinearLookup:
		return lookup_supported(x);
	default:
		return movement_supported(x);
	}
}

ert_status nl_move_lower(struct lower *l)
{
	switch (l->x->node->op) {
	case ERT_OP_DequantizeLinear:
		return lower_dq(l);
	case ERT_OP_QLinearLookup:
		return lower_lookup(l);
	case ERT_OP_Transpose:
		return lower_transpose(l);
	case ERT_OP_Concat:
		return lower_concat(l);
	case ERT_OP_Slice:
		return lower_slice(l);
	case ERT_OP_Pad:
		return lower_pad(l);
	default:
		return is_view(l->x->node->op) ? lower_view(l)
					       : nl_lower_fail(l, ERT_STATUS_INTERNAL, "no lowering");
	}
}
