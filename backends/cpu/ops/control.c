/* SPDX-License-Identifier: MIT */
/*
 * CPU kernels: If, Loop, Scan (docs/control-flow.md). Each runs its
 * subgraphs as sessions of their own (ert-subgraph.h), made when the step
 * is prepared and kept with it, so a body is planned once per input shape
 * and its runs allocate nothing once its shapes were seen. Outputs whose
 * shapes planning could not tell are given through ert_exec_output().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu-impl.h"
#include "ert-seq.h"
#include "ert-subgraph.h"

struct cf_buf {
	uint8_t *p;
	size_t cap;
};

/* Per-iteration outputs stacked: @iters blocks of @slot's shape in @b. */
struct stack_out {
	struct ert_value slot;   /* shape of one iteration's output */
	bool seen;
};

struct cf_state {
	struct ert_subrun *run[2];  /* If: then, else; Loop and Scan: the body */
	uint32_t n_run;
	/* kept across runs, grown when needed: slices, scan outputs, states */
	struct cf_buf *buf;
	uint32_t n_buf;
	/* per-run bookkeeping, sized for the node once: runs allocate nothing */
	struct stack_out *so;          /* n_out + n_in entries */
	int32_t *axes;                 /* n_in entries */
	const struct ert_value **ins;  /* n_in entries */
	struct ert_value *tmp;         /* n_in entries */
	/* a sequence/optional output: the node's own copy of the subgraph's (ert-seq.h) */
	struct ert_seq **obox;         /* n_out entries */
	uint32_t n_obox;
};

static void state_free(struct cf_state *s)
{
	if (!s)
		return;
	for (uint32_t r = 0; r < s->n_run; r++)
		ert_subrun_destroy(s->run[r]);
	for (uint32_t b = 0; b < s->n_buf; b++)
		free(s->buf[b].p);
	free(s->buf);
	free(s->so);
	free(s->axes);
	free(s->ins);
	free(s->tmp);
	for (uint32_t k = 0; k < s->n_obox; k++)
		ert_seq_destroy(s->obox[k]);
	free(s->obox);
	free(s);
}

static uint32_t explicit_inputs(const struct ert_exec *x)
{
	return x->n_in - ert_node_implicit_inputs(x->node);
}

/* "Op 'name': ..." into @err, returning @st (ert_node_fail, ert-op-impl.h). */
#define fail(x, err, st, ...) ert_node_fail((x)->node, err, st, __VA_ARGS__)

void ert_cpu_subrun_config(const struct ert_cpu *cpu, const struct ert_exec *x, ert_config *cfg)
{
	ert_config_init(cfg);
	cfg->num_threads = cpu->num_threads ? cpu->num_threads : 1;
	cfg->precision = cpu->precision;
	cfg->memory = cpu->memory;
	/* each subgraph session within the session's budget (not summed with it) */
	if (x->session_cfg && x->session_cfg->max_memory)
		cfg->max_memory = x->session_cfg->max_memory;
}

static ert_status state_create(struct ert_cpu *cpu, const struct ert_exec *x,
			       struct cf_state **out, struct ert_err *err)
{
	struct cf_state *s = calloc(1, sizeof(*s));
	uint32_t at = explicit_inputs(x);
	ert_config cfg;

	if (!s)
		return fail(x, err, ERT_STATUS_OUT_OF_MEMORY, "out of memory");
	ert_cpu_subrun_config(cpu, x, &cfg);
	/* slices and stacked outputs; opset 8's Scan also per-batch inputs and states */
	s->n_buf = 2 * (x->n_in + x->n_out);
	s->buf = calloc(s->n_buf, sizeof(*s->buf));
	s->so = calloc((size_t)x->n_out + x->n_in + 1, sizeof(*s->so));
	s->axes = calloc((size_t)x->n_in + 1, sizeof(*s->axes));
	s->ins = calloc((size_t)x->n_in + 1, sizeof(*s->ins));
	s->tmp = calloc((size_t)x->n_in + 1, sizeof(*s->tmp));
	s->n_obox = x->n_out;
	s->obox = calloc((size_t)x->n_out + 1, sizeof(*s->obox));
	if (!s->buf || !s->so || !s->axes || !s->ins || !s->tmp || !s->obox) {
		state_free(s);
		return fail(x, err, ERT_STATUS_OUT_OF_MEMORY, "out of memory");
	}
	for (uint32_t a = 0; a < x->node->n_attrs; a++) {
		const struct ert_attr *attr = &x->node->attrs[a];
		struct ert_err e = { { 0 } };
		ert_status st;
		uint32_t r;

		if (attr->type != ERT_ATTR_GRAPH)
			continue;
		/* If's branches in a fixed order, whatever the node's attribute order */
		r = strcmp(attr->name, "else_branch") == 0 ? 1 : 0;
		if (s->run[r]) {
			state_free(s);
			return fail(x, err, ERT_STATUS_INVALID_MODEL, "two subgraphs named like '%s'",
				    attr->name);
		}
		st = ert_subrun_create(attr->graph, &cfg, (const struct ert_value *const *)x->in + at,
				       x->in_const ? x->in_const + at : NULL, x->seqs, &s->run[r],
				       &e);
		if (st != ERT_OK) {
			state_free(s);
			return fail(x, err, st, "%s: %s", attr->name, e.msg);
		}
		ert_subrun_set_callbacks(s->run[r], x->node->name, x->session_cfg);
		s->n_run = 2;
		at += attr->graph->n_captures;
	}
	*out = s;
	return ERT_OK;
}

static ert_status cf_prepare(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	struct cf_state *s;
	ert_status st = state_create(cpu, x, &s, err);

	if (st == ERT_OK)
		x->state = s;
	return st;
}

static void cf_release(struct ert_exec *x)
{
	state_free(x->state);
	x->state = NULL;
}

static bool buf_fit(struct cf_buf *b, size_t n)
{
	uint8_t *p;

	if (n <= b->cap)
		return true;
	p = realloc(b->p, n);
	if (!p)
		return false;
	b->p = p;
	b->cap = n;
	return true;
}

/*
 * A sequence or optional output: copied into the node's own object, since
 * the subgraph's is rewritten by its next run (or dropped with its plan).
 */
static ert_status put_seq(struct ert_exec *x, uint32_t k, const struct ert_value *v,
			  struct ert_err *err)
{
	struct cf_state *s = x->state;
	const struct ert_seq *src = ert_seq_of(v);
	uint8_t kind = x->out[k]->kind;
	char who[160];

	if (kind == ERT_VALUE_TENSOR || !src || !s)
		return fail(x, err, ERT_STATUS_DTYPE, "output %u is a %s, planned as a %s", k,
			    ert_value_kind_name(v->kind), ert_value_kind_name(kind));
	if (s->obox[k] && s->obox[k]->kind != kind) {
		ert_seq_destroy(s->obox[k]);
		s->obox[k] = NULL;
	}
	if (!s->obox[k] && !(s->obox[k] = ert_seq_create(kind, x->out[k]->elem, x->seqs)))
		return fail(x, err, ERT_STATUS_OUT_OF_MEMORY, "out of memory");
	ert_seq_put(x->out[k], s->obox[k]);
	return ert_seq_assign(s->obox[k], src, ert_node_label(x->node, who, sizeof(who)), err);
}

/* Output @k of the node is @v (shape and bytes). */
static ert_status put_output(struct ert_exec *x, uint32_t k, const struct ert_value *v,
			     struct ert_err *err)
{
	ert_status st;

	if (k >= x->n_out || !x->out[k])
		return ERT_OK;
	if (x->out[k]->kind != ERT_VALUE_TENSOR || v->kind != ERT_VALUE_TENSOR)
		return put_seq(x, k, v, err);
	if (v->dtype != x->out[k]->dtype)
		return fail(x, err, ERT_STATUS_DTYPE, "output %u is %s, planned as %s", k,
			    ert_dtype_name(v->dtype), ert_dtype_name(x->out[k]->dtype));
	st = ert_exec_output(x, k, v->rank, v->dims, err);
	if (st != ERT_OK)
		return st;
	if (v->nbytes)
		memcpy(x->out[k]->data, v->data, v->nbytes);
	return ERT_OK;
}

/* Set the subrun's inputs from @first on to the node's implicit inputs from @at. */
static ert_status set_captures(const struct ert_exec *x, struct ert_subrun *r,
			       const struct ert_graph *g, uint32_t first, uint32_t at,
			       struct ert_err *err)
{
	for (uint32_t c = 0; c < g->n_captures; c++) {
		ert_status st = ert_subrun_set(r, first + c, x->in[at + c], err);

		if (st != ERT_OK)
			return st;
	}
	return ERT_OK;
}

static ert_status run_body(const struct ert_exec *x, struct ert_subrun *r, const char *what,
			   struct ert_err *err)
{
	struct ert_err e = { { 0 } };
	ert_status st = ert_subrun_run(r, what, &e);

	if (st != ERT_OK)
		return fail(x, err, st, "%s", e.msg);
	return ERT_OK;
}

static bool same_shape(const struct ert_value *a, const struct ert_value *b)
{
	if (a->dtype != b->dtype || a->rank != b->rank)
		return false;
	for (int32_t i = 0; i < a->rank; i++)
		if (a->dims[i] != b->dims[i])
			return false;
	return true;
}

/* Index of @g's first implicit input: they follow the GRAPH attributes' order. */
static uint32_t capture_offset(const struct ert_exec *x, const struct ert_graph *g)
{
	uint32_t at = explicit_inputs(x);

	for (uint32_t a = 0; a < x->node->n_attrs; a++) {
		const struct ert_attr *attr = &x->node->attrs[a];

		if (attr->type != ERT_ATTR_GRAPH)
			continue;
		if (attr->graph == g)
			break;
		at += attr->graph->n_captures;
	}
	return at;
}

static ert_status if_run(struct cf_state *s, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_graph *then_g = ert_attr_graph(x->node, "then_branch");
	const struct ert_graph *else_g = ert_attr_graph(x->node, "else_branch");
	bool cond = *(const uint8_t *)x->in[0]->data != 0;
	const struct ert_graph *g = cond ? then_g : else_g;
	struct ert_subrun *r = s->run[cond ? 0 : 1];
	ert_status st = set_captures(x, r, g, 0, capture_offset(x, g), err);

	if (st == ERT_OK)
		st = run_body(x, r, cond ? "then_branch" : "else_branch", err);
	for (uint32_t k = 0; k < x->n_out && st == ERT_OK; k++) {
		struct ert_value v;

		ert_subrun_output(r, k, &v);
		st = put_output(x, k, &v, err);
	}
	return st;
}

static ert_status stack_add(const struct ert_exec *x, struct stack_out *so, struct cf_buf *b,
			    int64_t at, const struct ert_value *v, uint32_t k, struct ert_err *err)
{
	size_t off;

	if (so->seen && !same_shape(&so->slot, v))
		return fail(x, err, ERT_STATUS_SHAPE, "scan output %u changes its type or shape "
			    "between iterations", k);
	so->slot = *v;
	so->seen = true;
	if (__builtin_mul_overflow((size_t)at + 1, v->nbytes, &off) || !buf_fit(b, off))
		return fail(x, err, ERT_STATUS_OUT_OF_MEMORY, "out of memory stacking scan "
			    "output %u", k);
	if (v->nbytes)
		memcpy(b->p + (size_t)at * v->nbytes, v->data, v->nbytes);
	return ERT_OK;
}

/* One iteration's shape when no iteration ran: the planned one, unknown extents 0. */
static void slot_from_plan(const struct ert_value *planned, int32_t axis, struct ert_value *slot)
{
	memset(slot, 0, sizeof(*slot));
	slot->dtype = planned->dtype;
	slot->rank = planned->rank - 1;
	for (int32_t i = 0, j = 0; i < planned->rank; i++)
		if (i != axis)
			slot->dims[j++] = planned->dims[i] < 0 ? 0 : planned->dims[i];
	ert_value_finish(slot);
}

/*
 * Output @k: @iters slots stacked along @axis, slot i at position i (or
 * iters-1-i when @reverse).
 */
static ert_status stack_put(struct ert_exec *x, uint32_t k, struct stack_out *so,
			    const struct cf_buf *b, int64_t iters, int32_t axis, bool reverse,
			    struct ert_err *err)
{
	struct ert_value v;
	int64_t outer = 1, inner;
	size_t esz;
	ert_status st;

	if (k >= x->n_out || !x->out[k])
		return ERT_OK;
	if (!so->seen)
		slot_from_plan(x->out[k], axis, &so->slot);
	v = so->slot;
	if (v.rank + 1 > ERT_MAX_RANK || axis > v.rank)
		return fail(x, err, ERT_STATUS_SHAPE, "scan output %u: axis %d for rank %d", k,
			    (int)axis, (int)v.rank + 1);
	memmove(v.dims + axis + 1, v.dims + axis, (size_t)(v.rank - axis) * sizeof(v.dims[0]));
	v.dims[axis] = iters;
	v.rank++;
	if (!ert_value_finish(&v))
		return fail(x, err, ERT_STATUS_SHAPE, "scan output %u is too large", k);
	if (v.dtype != x->out[k]->dtype)
		return fail(x, err, ERT_STATUS_DTYPE, "output %u is %s, planned as %s", k,
			    ert_dtype_name(v.dtype), ert_dtype_name(x->out[k]->dtype));
	st = ert_exec_output(x, k, v.rank, v.dims, err);
	if (st != ERT_OK || !v.nbytes)
		return st;
	esz = ert_dtype_size(v.dtype);
	for (int32_t i = 0; i < axis; i++)
		outer *= so->slot.dims[i];
	inner = so->slot.numel / (outer ? outer : 1) * (int64_t)esz;
	for (int64_t it = 0; it < iters; it++) {
		int64_t p = reverse ? iters - 1 - it : it;
		const uint8_t *src = b->p + (size_t)it * so->slot.nbytes;
		uint8_t *dst = x->out[k]->data;

		for (int64_t o = 0; o < outer; o++)
			memcpy(dst + (size_t)((o * iters + p) * inner), src + (size_t)(o * inner),
			       (size_t)inner);
	}
	return ERT_OK;
}

static ert_status loop_run(struct cf_state *s, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_graph *body = ert_attr_graph(x->node, "body");
	struct ert_subrun *r = s->run[0];
	uint32_t carried = explicit_inputs(x) - 2, scans = x->n_out - carried;
	const struct ert_value *m = x->in[0], *c = x->in[1];
	int64_t trips = m ? ert_value_get_int(m, 0) : INT64_MAX, i;
	uint8_t cond = c ? *(const uint8_t *)c->data != 0 : 1;
	struct ert_value iter = { .dtype = ERT_DTYPE_INT64, .rank = 0, .data = &i };
	struct ert_value cv = { .dtype = ERT_DTYPE_BOOL, .rank = 0, .data = &cond };
	struct stack_out *so = s->so;
	ert_status st = ERT_OK;
	bool ran = false;

	memset(so, 0, (scans ? scans : 1) * sizeof(*so));
	if (!m && !c)
		return fail(x, err, ERT_STATUS_INVALID_MODEL, "has neither a trip count nor a "
			    "condition: it would not end");
	ert_value_finish(&iter);
	ert_value_finish(&cv);
	st = set_captures(x, r, body, 2 + carried, explicit_inputs(x), err);
	for (uint32_t j = 0; j < carried && st == ERT_OK; j++)
		st = ert_subrun_set(r, 2 + j, x->in[2 + j], err);
	for (i = 0; i < trips && cond && st == ERT_OK; i++) {
		struct ert_value o;

		if ((st = ert_subrun_set(r, 0, &iter, err)) != ERT_OK ||
		    (st = ert_subrun_set(r, 1, &cv, err)) != ERT_OK ||
		    (st = run_body(x, r, "body", err)) != ERT_OK)
			break;
		ran = true;
		ert_subrun_output(r, 0, &o);
		if (o.dtype != ERT_DTYPE_BOOL || o.numel != 1) {
			st = fail(x, err, ERT_STATUS_DTYPE, "the body's condition is not one bool");
			break;
		}
		/* without a cond input the body's is ignored (ONNX: a for loop) */
		if (c)
			cond = *(const uint8_t *)o.data != 0;
		/* the body's outputs stay valid until its next run: set copies them now */
		for (uint32_t j = 0; j < carried && st == ERT_OK; j++) {
			ert_subrun_output(r, 1 + j, &o);
			st = ert_subrun_set(r, 2 + j, &o, err);
		}
		for (uint32_t k = 0; k < scans && st == ERT_OK; k++) {
			ert_subrun_output(r, 1 + carried + k, &o);
			st = stack_add(x, &so[k], &s->buf[k], i, &o, k, err);
		}
	}
	for (uint32_t j = 0; j < carried && st == ERT_OK; j++) {
		struct ert_value o;

		if (ran)
			ert_subrun_output(r, 1 + j, &o);
		else
			o = *x->in[2 + j];
		st = put_output(x, j, &o, err);
	}
	for (uint32_t k = 0; k < scans && st == ERT_OK; k++)
		st = stack_put(x, carried + k, &so[k], &s->buf[k], i, 0, false, err);
	return st;
}

/* Slice @t of @v along @axis (of length @len) into @b; @slice gets its shape. */
static ert_status take_slice(const struct ert_exec *x, const struct ert_value *v, int32_t axis,
			     int64_t t, struct cf_buf *b, struct ert_value *slice,
			     struct ert_err *err)
{
	int64_t outer = 1, len = v->dims[axis], inner;
	size_t esz = ert_dtype_size(v->dtype);

	*slice = *v;
	slice->rank = v->rank - 1;
	memmove(slice->dims + axis, v->dims + axis + 1,
		(size_t)(v->rank - axis - 1) * sizeof(v->dims[0]));
	ert_value_finish(slice);
	if (!buf_fit(b, slice->nbytes ? slice->nbytes : 1))
		return fail(x, err, ERT_STATUS_OUT_OF_MEMORY, "out of memory slicing");
	slice->data = b->p;
	for (int32_t i = 0; i < axis; i++)
		outer *= v->dims[i];
	inner = slice->numel / (outer ? outer : 1) * (int64_t)esz;
	for (int64_t o = 0; o < outer && inner; o++)
		memcpy(b->p + (size_t)(o * inner),
		       (const uint8_t *)v->data + (size_t)((o * len + t) * inner), (size_t)inner);
	return ERT_OK;
}

/*
 * @len iterations of Scan's body over @ins (the states, then the scan
 * inputs, as the body sees them whole; opset 8 passes one batch entry),
 * scan outputs stacked in @so/@bufs; the body's final states stay its
 * outputs (or @ins when no iteration ran: *@ran says).
 */
static ert_status scan_iterate(struct cf_state *s, struct ert_exec *x,
			       const struct ert_scan_layout *L, const struct ert_value *const *ins,
			       const int32_t *axes, const int64_t *dirs, int64_t len,
			       struct stack_out *so, struct cf_buf *bufs, int64_t slot0,
			       bool *ran, struct ert_err *err)
{
	struct ert_subrun *r = s->run[0];
	ert_status st = ERT_OK;

	*ran = false;
	for (uint32_t j = 0; j < L->n_state && st == ERT_OK; j++)
		st = ert_subrun_set(r, j, ins[j], err);
	for (int64_t it = 0; it < len && st == ERT_OK; it++) {
		for (uint32_t j = 0; j < L->n_scan && st == ERT_OK; j++) {
			struct ert_value slice;
			int64_t t = dirs && dirs[j] ? len - 1 - it : it;

			st = take_slice(x, ins[L->n_state + j], axes[j], t,
					&s->buf[x->n_out + j], &slice, err);
			if (st == ERT_OK)
				st = ert_subrun_set(r, L->n_state + j, &slice, err);
		}
		if (st != ERT_OK || (st = run_body(x, r, "body", err)) != ERT_OK)
			break;
		*ran = true;
		for (uint32_t j = 0; j < L->n_state && st == ERT_OK; j++) {
			struct ert_value o;

			ert_subrun_output(r, j, &o);
			st = ert_subrun_set(r, j, &o, err);
		}
		for (uint32_t k = 0; k < L->n_out && st == ERT_OK; k++) {
			struct ert_value o;

			ert_subrun_output(r, L->n_state + k, &o);
			st = stack_add(x, &so[k], &bufs[k], slot0 + it, &o, k, err);
		}
	}
	return st;
}

/*
 * Opset 8's Scan: every input and output has a batch axis 0 that the body
 * does not see; each batch entry is scanned on its own, over its
 * sequence_lens[b] first steps (all when absent); scan outputs past that
 * length are zeros.
 */
static ert_status scan8_run(struct cf_state *s, struct ert_exec *x,
			    const struct ert_scan_layout *L, const int32_t *axes,
			    const int64_t *dirs, int64_t len, struct stack_out *so,
			    const struct ert_value **ins, struct ert_err *err)
{
	const struct ert_value *seq = x->in[0];
	uint32_t nb = x->n_in + x->n_out;
	int64_t batch = x->in[L->first]->dims[0];
	struct ert_value *tmp = s->tmp;
	ert_status st = ERT_OK;
	bool ran;

	if (seq && seq->numel != batch) {
		return fail(x, err, ERT_STATUS_SHAPE, "sequence_lens has %lld entries for a batch "
			    "of %lld", (long long)seq->numel, (long long)batch);
	}
	for (int64_t b = 0; b < batch && st == ERT_OK; b++) {
		int64_t n = seq ? ert_value_get_int(seq, b) : len;

		if (n < 0 || n > len) {
			st = fail(x, err, ERT_STATUS_INVALID_ARGUMENT, "sequence_lens[%lld] = %lld "
				  "is outside [0, %lld]", (long long)b, (long long)n, (long long)len);
			break;
		}
		for (uint32_t j = 0; j < L->n_state + L->n_scan && st == ERT_OK; j++) {
			st = take_slice(x, x->in[L->first + j], 0, b, &s->buf[nb + j], &tmp[j], err);
			ins[j] = &tmp[j];
		}
		if (st == ERT_OK)
			st = scan_iterate(s, x, L, ins, axes, dirs, n, so, s->buf, b * len, &ran, err);
		/* this entry's final states, stacked like scan outputs (after them) */
		for (uint32_t j = 0; j < L->n_state && st == ERT_OK; j++) {
			struct ert_value o;

			if (ran)
				ert_subrun_output(s->run[0], j, &o);
			else
				o = *ins[j];
			st = stack_add(x, &so[L->n_out + j], &s->buf[L->n_out + j], b, &o, j, err);
		}
		/* zeros past the sequence's length */
		for (uint32_t k = 0; k < L->n_out && st == ERT_OK; k++) {
			size_t slot = so[k].slot.nbytes, end;

			if (!so[k].seen)
				continue;
			if (__builtin_mul_overflow((size_t)((b + 1) * len), slot, &end) ||
			    !buf_fit(&s->buf[k], end ? end : 1)) {
				st = fail(x, err, ERT_STATUS_OUT_OF_MEMORY, "out of memory");
				break;
			}
			memset(s->buf[k].p + (size_t)(b * len + n) * slot, 0,
			       (size_t)(len - n) * slot);
		}
	}
	for (uint32_t k = 0; k < L->n_state + L->n_out && st == ERT_OK; k++) {
		bool is_state = k < L->n_state;
		uint32_t out = k, acc = is_state ? L->n_out + k : k - L->n_state;
		struct ert_value v;

		if (!x->out[out])
			continue;
		if (!so[acc].seen)
			slot_from_plan(x->out[out], 0, &so[acc].slot);
		v = so[acc].slot;
		if (!is_state && !so[acc].seen)
			slot_from_plan(x->out[out], 0, &v); /* [len, ...] of one batch entry */
		if (v.rank + (is_state ? 1 : 2) > ERT_MAX_RANK) {
			st = fail(x, err, ERT_STATUS_SHAPE, "output %u has too high a rank", out);
			break;
		}
		memmove(v.dims + (is_state ? 1 : 2), v.dims, (size_t)v.rank * sizeof(v.dims[0]));
		v.dims[0] = batch;
		if (!is_state)
			v.dims[1] = len;
		v.rank += is_state ? 1 : 2;
		if (!is_state && !so[acc].seen) {
			/* no iteration ran anywhere: the planned shape, unknown extents 0 */
			v.rank = x->out[out]->rank;
			for (int32_t i = 0; i < v.rank; i++)
				v.dims[i] = x->out[out]->dims[i] < 0 ? 0 : x->out[out]->dims[i];
			v.dims[0] = batch;
			if (v.rank > 1)
				v.dims[1] = len;
		}
		if (!ert_value_finish(&v)) {
			st = fail(x, err, ERT_STATUS_SHAPE, "output %u is too large", out);
			break;
		}
		v.data = s->buf[acc].p;
		if (v.nbytes && (!so[acc].seen || s->buf[acc].cap < v.nbytes)) {
			/* nothing ran (or the last entries ran no step): zeros */
			if (!buf_fit(&s->buf[acc], v.nbytes)) {
				st = fail(x, err, ERT_STATUS_OUT_OF_MEMORY, "out of memory");
				break;
			}
			if (!so[acc].seen)
				memset(s->buf[acc].p, 0, v.nbytes);
			v.data = s->buf[acc].p;
		}
		st = put_output(x, out, &v, err);
	}
	return st;
}

static ert_status scan_run(struct cf_state *s, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_graph *body = ert_attr_graph(x->node, "body");
	struct ert_scan_layout L;
	const int64_t *in_axes, *out_axes, *in_dirs, *out_dirs;
	uint32_t cnt;
	int32_t *axes = s->axes;
	struct stack_out *so = s->so;
	const struct ert_value **ins = s->ins;
	int64_t len = 0;
	ert_status st = ERT_OK;
	bool ran;

	ert_scan_layout(x->node, &L);
	in_axes = ert_attr_ints(x->node, "scan_input_axes", &cnt);
	out_axes = ert_attr_ints(x->node, "scan_output_axes", &cnt);
	in_dirs = ert_attr_ints(x->node, L.v8 ? "directions" : "scan_input_directions", &cnt);
	out_dirs = ert_attr_ints(x->node, "scan_output_directions", &cnt);
	memset(so, 0, ((size_t)x->n_out + x->n_in + 1) * sizeof(*so));
	for (uint32_t j = 0; j < L.n_scan; j++) {
		const struct ert_value *v = x->in[L.first + L.n_state + j];

		if (L.v8)
			axes[j] = 0; /* of one batch entry */
		else if (!ert_norm_axis(in_axes ? in_axes[j] : 0, v->rank, &axes[j])) {
			st = fail(x, err, ERT_STATUS_SHAPE, "bad scan axis");
			goto out;
		}
		len = L.v8 ? v->dims[1] : v->dims[axes[j]];
	}
	st = set_captures(x, s->run[0], body, L.n_state + L.n_scan, explicit_inputs(x), err);
	if (st != ERT_OK)
		goto out;
	if (!L.v8) {
		for (uint32_t j = 0; j < L.n_state + L.n_scan; j++)
			ins[j] = x->in[j];
		st = scan_iterate(s, x, &L, ins, axes, in_dirs, len, so, s->buf, 0, &ran, err);
		for (uint32_t k = 0; k < L.n_state && st == ERT_OK; k++) {
			struct ert_value o;

			if (ran)
				ert_subrun_output(s->run[0], k, &o);
			else
				o = *x->in[k];
			st = put_output(x, k, &o, err);
		}
		for (uint32_t k = 0; k < L.n_out && st == ERT_OK; k++) {
			const struct ert_value *planned = x->out[L.n_state + k];
			int32_t axis = 0;

			if (!planned)
				continue;
			ert_norm_axis(out_axes ? out_axes[k] : 0, planned->rank, &axis);
			st = stack_put(x, L.n_state + k, &so[k], &s->buf[k], len, axis,
				       out_dirs && out_dirs[k], err);
		}
		goto out;
	}
	st = scan8_run(s, x, &L, axes, in_dirs, len, so, ins, err);
out:
	return st;
}

static ert_status cf_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	struct cf_state *s = x->state;
	ert_status st;

	/* outside a session (planning-time evaluation): subgraph sessions for this call */
	if (!s && (st = state_create(cpu, x, &s, err)) != ERT_OK)
		return st;
	switch (x->node->op) {
	case ERT_OP_If:
		st = if_run(s, x, err);
		break;
	case ERT_OP_Loop:
		st = loop_run(s, x, err);
		break;
	default:
		st = scan_run(s, x, err);
		break;
	}
	if (s != x->state)
		state_free(s);
	return st;
}

/* Numbers and bools: the kernels copy bytes; sub-byte and string types have none. */
static bool cf_supports(const struct ert_exec *x)
{
	for (uint32_t k = 0; k < x->n_in; k++)
		if (x->in[k] && ert_dtype_size(x->in[k]->dtype) == 0)
			return false;
	for (uint32_t k = 0; k < x->n_out; k++)
		if (x->out[k] && ert_dtype_size(x->out[k]->dtype) == 0)
			return false;
	return true;
}

const struct ert_cpu_op ert_cpu_ops_control[] = {
	{ .op = ERT_OP_If, .supports = cf_supports, .prepare = cf_prepare, .compute = cf_compute,
	  .release = cf_release },
	{ .op = ERT_OP_Loop, .supports = cf_supports, .prepare = cf_prepare,
	  .compute = cf_compute, .release = cf_release },
	{ .op = ERT_OP_Scan, .supports = cf_supports, .prepare = cf_prepare,
	  .compute = cf_compute, .release = cf_release },
	{ .compute = NULL },
};
