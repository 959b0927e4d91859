/* SPDX-License-Identifier: MIT */
/*
 * CPU kernels: sequences and optionals (docs/sequences.md). Each step owns
 * the objects of the sequences and optionals it gives (made when it is
 * prepared, kept with the plan, their buffers reused run after run) and
 * writes their handles into its outputs; what it reads it copies, so no
 * object is written while another step reads it (ert-seq.h). SequenceMap
 * runs its body as a subgraph session, as Loop does (ert-subgraph.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu-impl.h"
#include "ert-seq.h"
#include "ert-subgraph.h"

struct sq_state {
	struct ert_seq **box;     /* n_out entries: a sequence/optional output's object, or NULL */
	uint32_t n_box;
	struct ert_subrun *run;   /* SequenceMap: the body */
	uint8_t *scratch;         /* SplitToSequence: one piece */
	size_t scratch_cap;
	char who[160];            /* "Op 'name'": how ert-seq.h's messages start */
};

/* "Op 'name': ..." into @err, returning @st (ert_node_fail, ert-op-impl.h). */
#define fail(x, err, st, ...) ert_node_fail((x)->node, err, st, __VA_ARGS__)

static void sq_release(struct ert_exec *x)
{
	struct sq_state *s = x->state;

	if (!s)
		return;
	for (uint32_t k = 0; k < s->n_box; k++)
		ert_seq_destroy(s->box[k]);
	free(s->box);
	ert_subrun_destroy(s->run);
	free(s->scratch);
	free(s);
	x->state = NULL;
}

static ert_status sq_prepare(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	struct sq_state *s = calloc(1, sizeof(*s));

	if (!s)
		return fail(x, err, ERT_STATUS_OUT_OF_MEMORY, "out of memory");
	x->state = s;
	ert_node_label(x->node, s->who, sizeof(s->who));
	s->n_box = x->n_out;
	s->box = calloc(x->n_out ? x->n_out : 1, sizeof(*s->box));
	if (!s->box)
		goto oom;
	for (uint32_t k = 0; k < x->n_out; k++) {
		if (!x->out[k] || x->out[k]->kind == ERT_VALUE_TENSOR)
			continue;
		s->box[k] = ert_seq_create(x->out[k]->kind, x->out[k]->elem, x->seqs);
		if (!s->box[k])
			goto oom;
	}
	if (x->node->op == ERT_OP_SequenceMap) {
		const struct ert_graph *body = ert_attr_graph(x->node, "body");
		uint32_t at = x->n_in - ert_node_implicit_inputs(x->node);
		struct ert_err e = { { 0 } };
		ert_config cfg;
		ert_status st;

		ert_cpu_subrun_config(cpu, x, &cfg);
		st = ert_subrun_create(body, &cfg, (const struct ert_value *const *)x->in + at,
				       x->in_const ? x->in_const + at : NULL, x->seqs, &s->run, &e);
		if (st != ERT_OK) {
			sq_release(x);
			return fail(x, err, st, "body: %s", e.msg);
		}
		/* the body's ops are seen by the session's callbacks, as If's and Loop's are */
		ert_subrun_set_callbacks(s->run, x->node->name, x->session_cfg);
	}
	return ERT_OK;
oom:
	sq_release(x);
	return fail(x, err, ERT_STATUS_OUT_OF_MEMORY, "out of memory");
}

static const char *who(const struct ert_exec *x)
{
	return ((const struct sq_state *)x->state)->who;
}

/* Input @k's object; fails when it has none (a hostile or half-made value). */
static ert_status in_seq(const struct ert_exec *x, uint32_t k, const struct ert_seq **out,
			 struct ert_err *err)
{
	*out = k < x->n_in ? ert_seq_of(x->in[k]) : NULL;
	if (!*out)
		return fail(x, err, ERT_STATUS_INVALID_ARGUMENT, "input %u holds no sequence or "
			    "optional", k);
	return ERT_OK;
}

/* Output @k's object, its handle written. */
static struct ert_seq *out_seq(struct ert_exec *x, uint32_t k)
{
	struct sq_state *s = x->state;

	ert_seq_put(x->out[k], s->box[k]);
	return s->box[k];
}

/* Input @k as a position in a sequence of @n (@end_ok: n too); @def when absent. */
static ert_status position(const struct ert_exec *x, uint32_t k, uint32_t n, bool end_ok,
			   int64_t def, uint32_t *out, struct ert_err *err)
{
	const struct ert_value *v = k < x->n_in ? x->in[k] : NULL;
	int64_t p = v ? ert_value_get_int(v, 0) : def;

	if (!ert_seq_position(p, n, end_ok, out))
		return fail(x, err, ERT_STATUS_SHAPE, "position %lld is outside [%lld, %lld] for a "
			    "sequence of %u", (long long)p, -(long long)n,
			    end_ok ? (long long)n : (long long)n - 1, n);
	return ERT_OK;
}

/* Output @k (a tensor) becomes a copy of @v: its shape given, then its bytes. */
static ert_status put_tensor(struct ert_exec *x, uint32_t k, const struct ert_value *v,
			     struct ert_err *err)
{
	ert_status st;

	if (!x->out[k])
		return ERT_OK;
	if (v->dtype != x->out[k]->dtype)
		return fail(x, err, ERT_STATUS_DTYPE, "the element is %s, planned as %s",
			    ert_dtype_name(v->dtype), ert_dtype_name(x->out[k]->dtype));
	st = ert_exec_output(x, k, v->rank, v->dims, err);
	if (st == ERT_OK && v->nbytes)
		memcpy(x->out[k]->data, v->data, v->nbytes);
	return st;
}

static ert_status run_empty_construct(struct ert_exec *x, struct ert_err *err)
{
	struct ert_seq *o = out_seq(x, 0);
	const char *what = who(x);
	ert_status st = ERT_OK;

	ert_seq_clear(o, true);
	for (uint32_t k = 0; k < x->n_in && st == ERT_OK; k++)
		st = ert_seq_insert(o, k, x->in[k], what, err);
	return st;
}

static ert_status run_insert_erase(struct ert_exec *x, struct ert_err *err)
{
	const char *what = who(x);
	struct ert_seq *o = out_seq(x, 0);
	const struct ert_seq *q;
	uint32_t pos;
	ert_status st;

	if ((st = in_seq(x, 0, &q, err)) || (st = ert_seq_assign(o, q, what, err)))
		return st;
	if (x->node->op == ERT_OP_SequenceInsert) {
		if ((st = position(x, 2, q->n, true, q->n, &pos, err)))
			return st;
		return ert_seq_insert(o, pos, x->in[1], what, err);
	}
	if (!q->n)
		return fail(x, err, ERT_STATUS_SHAPE, "erasing from an empty sequence");
	if ((st = position(x, 1, q->n, false, -1, &pos, err)))
		return st;
	ert_seq_erase(o, pos);
	return ERT_OK;
}

static ert_status run_at_length(struct ert_exec *x, struct ert_err *err)
{
	const struct ert_seq *q;
	uint32_t pos;
	ert_status st;

	if ((st = in_seq(x, 0, &q, err)))
		return st;
	if (x->node->op == ERT_OP_SequenceLength) {
		*(int64_t *)x->out[0]->data = q->n;
		return ERT_OK;
	}
	if ((st = position(x, 1, q->n, false, 0, &pos, err)))
		return st;
	return put_tensor(x, 0, &q->items[pos].v, err);
}

/* Bytes of @v's elements from @axis on (one step along axis - 1), and the count before it. */
static void axis_blocks(const struct ert_value *v, int32_t axis, int64_t *outer, size_t *inner)
{
	*outer = 1;
	*inner = ert_dtype_size(v->dtype);
	for (int32_t i = 0; i < axis; i++)
		*outer *= v->dims[i];
	for (int32_t i = axis + 1; i < v->rank; i++)
		*inner *= (size_t)v->dims[i];
}

static ert_status run_split(struct ert_exec *x, struct ert_err *err)
{
	struct sq_state *s = x->state;
	const struct ert_value *in = x->in[0], *split = x->n_in > 1 ? x->in[1] : NULL;
	bool keep = ert_attr_int(x->node, "keepdims", 1) != 0 || split;
	struct ert_seq *o = out_seq(x, 0);
	int64_t len, outer, pieces, start = 0;
	int32_t axis;
	size_t inner;

	if (!ert_norm_axis(ert_attr_int(x->node, "axis", 0), in->rank, &axis))
		return fail(x, err, ERT_STATUS_SHAPE, "axis outside the input's rank %d",
			    (int)in->rank);
	len = in->dims[axis];
	axis_blocks(in, axis, &outer, &inner);
	/* the number of pieces first: a hostile split must not make millions */
	if (!split || split->rank == 0) {
		int64_t size = split ? ert_value_get_int(split, 0) : 1;

		if (size < 1)
			return fail(x, err, ERT_STATUS_SHAPE, "split %lld: pieces of at least one",
				    (long long)size);
		pieces = len / size + (len % size ? 1 : 0);
	} else {
		int64_t sum = 0;

		pieces = split->numel;
		for (int64_t i = 0; i < pieces; i++) {
			int64_t p = ert_value_get_int(split, i);

			if (p < 0 || p > len || (sum += p) > len)
				return fail(x, err, ERT_STATUS_SHAPE, "split[%lld] = %lld: the "
					    "lengths must be >= 0 and add up to %lld", (long long)i,
					    (long long)p, (long long)len);
		}
		if (sum != len)
			return fail(x, err, ERT_STATUS_SHAPE, "split adds up to %lld, the axis is "
				    "%lld long", (long long)sum, (long long)len);
	}
	if (pieces > (int64_t)ERT_MAX_SEQUENCE_LENGTH)
		return fail(x, err, ERT_STATUS_SHAPE, "%lld pieces: a sequence holds at most %u",
			    (long long)pieces, ERT_MAX_SEQUENCE_LENGTH);
	ert_seq_clear(o, true);
	for (int64_t i = 0; i < pieces; i++) {
		int64_t n = !split ? 1 : split->rank == 0 ?
			    (ert_value_get_int(split, 0) < len - start ? ert_value_get_int(split, 0) :
			     len - start) : ert_value_get_int(split, i);
		struct ert_value piece = *in;
		ert_status st;

		piece.kind = ERT_VALUE_TENSOR;
		piece.dims[axis] = n;
		if (!keep) {
			memmove(piece.dims + axis, piece.dims + axis + 1,
				(size_t)(in->rank - axis - 1) * sizeof(piece.dims[0]));
			piece.rank--;
		}
		ert_value_finish(&piece);
		if (piece.nbytes > s->scratch_cap) {
			uint8_t *p = realloc(s->scratch, piece.nbytes);

			if (!p)
				return fail(x, err, ERT_STATUS_OUT_OF_MEMORY, "out of memory");
			s->scratch = p;
			s->scratch_cap = piece.nbytes;
		}
		for (int64_t b = 0; b < outer && n; b++)
			memcpy(s->scratch + (size_t)(b * n) * inner,
			       (const uint8_t *)in->data + (size_t)(b * len + start) * inner,
			       (size_t)n * inner);
		piece.data = s->scratch;
		if ((st = ert_seq_insert(o, (uint32_t)i, &piece, who(x), err)))
			return st;
		start += n;
	}
	return ERT_OK;
}

static ert_status run_concat(struct ert_exec *x, struct ert_err *err)
{
	bool new_axis = ert_attr_int(x->node, "new_axis", 0) != 0;
	const struct ert_seq *q;
	const struct ert_value *first;
	struct ert_value out;
	int64_t outer;
	int32_t axis, rank;
	size_t inner;
	ert_status st;

	if ((st = in_seq(x, 0, &q, err)))
		return st;
	if (!q->n)
		return fail(x, err, ERT_STATUS_SHAPE, "concatenating an empty sequence");
	first = &q->items[0].v;
	rank = first->rank + (new_axis ? 1 : 0);
	if (rank < 1 || rank > ERT_MAX_RANK ||
	    !ert_norm_axis(ert_attr_int(x->node, "axis", 0), rank, &axis))
		return fail(x, err, ERT_STATUS_SHAPE, "axis %lld for tensors of rank %d%s",
			    (long long)ert_attr_int(x->node, "axis", 0), (int)first->rank,
			    new_axis ? " and a new axis" : "");
	memset(&out, 0, sizeof(out));
	out.dtype = first->dtype;
	out.rank = rank;
	for (int32_t i = 0, j = 0; i < rank; i++)
		out.dims[i] = new_axis && i == axis ? 0 : first->dims[j++];
	out.dims[axis] = 0;
	for (uint32_t t = 0; t < q->n; t++) {
		const struct ert_value *v = &q->items[t].v;
		bool same = v->rank == first->rank && v->dtype == first->dtype;

		for (int32_t i = 0; same && i < v->rank; i++)
			same = v->dims[i] == first->dims[i] || (!new_axis && i == axis);
		if (!same)
			return fail(x, err, ERT_STATUS_SHAPE, "tensor %u's type or shape does not "
				    "fit tensor 0's for concatenation on axis %d", t, (int)axis);
		out.dims[axis] += new_axis ? 1 : v->dims[axis];
	}
	if ((st = ert_exec_output(x, 0, out.rank, out.dims, err)) != ERT_OK)
		return st;
	axis_blocks(&out, axis, &outer, &inner);
	uint8_t *dst = x->out[0]->data;

	for (int64_t b = 0; b < outer; b++) {
		for (uint32_t t = 0; t < q->n; t++) {
			const struct ert_value *v = &q->items[t].v;
			size_t n = (size_t)(new_axis ? 1 : v->dims[axis]) * inner;

			memcpy(dst, (const uint8_t *)v->data + (size_t)b * n, n);
			dst += n;
		}
	}
	return ERT_OK;
}

static ert_status run_map(struct ert_exec *x, struct ert_err *err)
{
	struct sq_state *s = x->state;
	const struct ert_graph *body = ert_attr_graph(x->node, "body");
	uint32_t explicit_in = x->n_in - ert_node_implicit_inputs(x->node);
	const struct ert_seq *q;
	ert_status st;

	if ((st = in_seq(x, 0, &q, err)))
		return st;
	for (uint32_t k = 1; k < explicit_in; k++) {
		const struct ert_seq *a = ert_seq_of(x->in[k]);

		if (x->in[k]->kind != ERT_VALUE_TENSOR && (!a || a->n != q->n))
			return fail(x, err, ERT_STATUS_SHAPE, "sequence input %u holds %u tensors, "
				    "input 0 %u", k, a ? a->n : 0, q->n);
	}
	for (uint32_t j = 0; j < x->n_out; j++)
		if (x->out[j])
			ert_seq_clear(out_seq(x, j), true);
	for (uint32_t c = 0; c < body->n_captures; c++)
		if ((st = ert_subrun_set(s->run, body->n_inputs + c, x->in[explicit_in + c], err)))
			return st;
	for (uint32_t i = 0; i < q->n; i++) {
		struct ert_err e = { { 0 } };

		for (uint32_t k = 0; k < explicit_in; k++) {
			const struct ert_value *v = x->in[k];

			if (v->kind != ERT_VALUE_TENSOR)
				v = &ert_seq_of(v)->items[i].v;
			if ((st = ert_subrun_set(s->run, k, v, err)))
				return st;
		}
		if ((st = ert_subrun_run(s->run, "body", &e)))
			return fail(x, err, st, "%s", e.msg);
		for (uint32_t j = 0; j < x->n_out; j++) {
			struct ert_value o;

			if (!x->out[j])
				continue;
			ert_subrun_output(s->run, j, &o);
			if ((st = ert_seq_insert(s->box[j], i, &o, who(x), err)))
				return st;
		}
	}
	return ERT_OK;
}

static ert_status run_optional(struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *v = x->n_in ? x->in[0] : NULL;
	struct ert_seq *o = out_seq(x, 0);
	const struct ert_seq *q;
	ert_status st;

	if (!v) {
		ert_seq_clear(o, false);
		return ERT_OK;
	}
	if (v->kind == ERT_VALUE_TENSOR) {
		ert_seq_clear(o, true);
		return ert_seq_insert(o, 0, v, who(x), err);
	}
	if ((st = in_seq(x, 0, &q, err)))
		return st;
	return ert_seq_assign(o, q, who(x), err);
}

static ert_status run_has(struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *v = x->n_in ? x->in[0] : NULL;
	const struct ert_seq *q;
	ert_status st;
	bool has = v != NULL;

	if (v && v->kind != ERT_VALUE_TENSOR) {
		if ((st = in_seq(x, 0, &q, err)))
			return st;
		has = !q->none;
	}
	*(uint8_t *)x->out[0]->data = has;
	return ERT_OK;
}

static ert_status run_get(struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *v = x->in[0];
	const struct ert_seq *q;
	ert_status st;

	if (v->kind == ERT_VALUE_TENSOR)
		return put_tensor(x, 0, v, err);
	if ((st = in_seq(x, 0, &q, err)))
		return st;
	if (q->none)
		return fail(x, err, ERT_STATUS_INVALID_ARGUMENT, "the optional holds nothing");
	if (x->out[0]->kind == ERT_VALUE_TENSOR)
		return put_tensor(x, 0, &q->items[0].v, err);
	return ert_seq_assign(out_seq(x, 0), q, who(x), err);
}

static ert_status sq_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	/* never folded (ert_op_is_sequence()): a step of a session always has its state */
	if (!x->state)
		return fail(x, err, ERT_STATUS_UNSUPPORTED, "runs only as a step of a session");
	switch (x->node->op) {
	case ERT_OP_SequenceEmpty:
	case ERT_OP_SequenceConstruct:
		return run_empty_construct(x, err);
	case ERT_OP_SequenceInsert:
	case ERT_OP_SequenceErase:
		return run_insert_erase(x, err);
	case ERT_OP_SequenceAt:
	case ERT_OP_SequenceLength:
		return run_at_length(x, err);
	case ERT_OP_SplitToSequence:
		return run_split(x, err);
	case ERT_OP_ConcatFromSequence:
		return run_concat(x, err);
	case ERT_OP_SequenceMap:
		return run_map(x, err);
	case ERT_OP_Optional:
		return run_optional(x, err);
	case ERT_OP_OptionalHasElement:
		return run_has(x, err);
	default:
		return run_get(x, err);
	}
}

/* The kernels copy bytes: any dtype of whole bytes. */
static bool sq_supports(const struct ert_exec *x)
{
	for (uint32_t k = 0; k < x->n_in; k++) {
		const struct ert_value *v = x->in[k];

		if (v && (v->kind == ERT_VALUE_TENSOR ? ert_dtype_size(v->dtype) == 0 :
			  v->elem != ERT_DTYPE_UNDEFINED && ert_dtype_size(v->elem) == 0))
			return false;
	}
	return true;
}

#define SQ_OP(name) { .op = ERT_OP_##name, .supports = sq_supports, .prepare = sq_prepare, \
		      .compute = sq_compute, .release = sq_release }

const struct ert_cpu_op ert_cpu_ops_sequence[] = {
	SQ_OP(SequenceEmpty),
	SQ_OP(SequenceConstruct),
	SQ_OP(SequenceInsert),
	SQ_OP(SequenceAt),
	SQ_OP(SequenceErase),
	SQ_OP(SequenceLength),
	SQ_OP(SplitToSequence),
	SQ_OP(ConcatFromSequence),
	SQ_OP(SequenceMap),
	SQ_OP(Optional),
	SQ_OP(OptionalHasElement),
	SQ_OP(OptionalGetElement),
	{ .compute = NULL },
};
