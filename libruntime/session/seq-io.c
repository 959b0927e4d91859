/* SPDX-License-Identifier: MIT */
/*
 * Sequence and optional inputs and outputs of a session (edgert.h's
 * ert_item functions, docs/sequences.md). An input of such a kind is a
 * uint64 handle in the session's input buffer, pointing to an object the
 * session owns; an output's handle points to the object of the step that
 * wrote it, kept until the next run.
 */
#include <stdlib.h>
#include <string.h>

#include "ert-seq.h"
#include "session/session-impl.h"

ert_status ert_session_seq_inputs_init(struct ert_session *s)
{
	const struct ert_graph *g = s->model->graph;

	s->in_seqs = calloc(g->n_inputs ? g->n_inputs : 1, sizeof(*s->in_seqs));
	if (!s->in_seqs)
		return ERT_STATUS_OUT_OF_MEMORY;
	for (uint32_t k = 0; k < g->n_inputs; k++) {
		struct ert_value *v = &s->in_vals[k];

		if (v->kind == ERT_VALUE_TENSOR)
			continue;
		s->in_seqs[k] = ert_seq_create(v->kind, v->elem, &s->seqs);
		if (!s->in_seqs[k] || v->nbytes < sizeof(void *))
			return ERT_STATUS_OUT_OF_MEMORY;
		memcpy(s->in_bufs[k], &s->in_seqs[k], sizeof(s->in_seqs[k]));
	}
	return ERT_OK;
}

void ert_session_seq_inputs_free(struct ert_session *s)
{
	if (!s->in_seqs)
		return;
	for (uint32_t k = 0; k < s->model->graph->n_inputs; k++)
		ert_seq_destroy(s->in_seqs[k]);
	free(s->in_seqs);
	s->in_seqs = NULL;
}

void ert_session_seq_outputs_clear(struct ert_session *s)
{
	for (uint32_t k = 0; k < s->model->graph->n_outputs; k++) {
		const struct ert_value *v = ert_session_output_value(s, k);

		if (v && v->kind != ERT_VALUE_TENSOR && v->data && v->nbytes >= sizeof(void *))
			memset(v->data, 0, sizeof(void *));
	}
}

/* The object behind a sequence/optional handle, or NULL (a tensor, no value yet). */
static const struct ert_seq *handle_seq(const ert_tensor *t)
{
	const struct ert_value *v;

	if (!t)
		return NULL;
	if (t->is_input)
		return t->sess->in_seqs ? t->sess->in_seqs[t->index] : NULL;
	v = ert_session_handle_value(t);
	return v ? ert_seq_of(v) : NULL;
}

ERT_API ert_value_kind ert_tensor_kind(const ert_tensor *t)
{
	const struct ert_value *v;

	if (!t)
		return ERT_VALUE_TENSOR;
	v = ert_session_handle_value(t);
	return (ert_value_kind)(v ? v->kind : t->sess->model->graph->tensors[t->tensor].kind);
}

ERT_API ert_dtype ert_tensor_item_dtype(const ert_tensor *t)
{
	const struct ert_seq *q = handle_seq(t);
	const struct ert_value *v;

	if (!t)
		return ERT_DTYPE_UNDEFINED;
	if (q && q->elem != ERT_DTYPE_UNDEFINED)
		return q->elem;
	v = ert_session_handle_value(t);
	if (v)
		return v->kind != ERT_VALUE_TENSOR ? v->elem : v->dtype;
	const struct ert_tensor *x = &t->sess->model->graph->tensors[t->tensor];

	return x->kind != ERT_VALUE_TENSOR ? x->elem : x->dtype;
}

ERT_API int64_t ert_tensor_item_count(const ert_tensor *t)
{
	const struct ert_seq *q = handle_seq(t);

	return q ? (int64_t)q->n : -1;
}

ERT_API int ert_tensor_has_value(const ert_tensor *t)
{
	const struct ert_seq *q = handle_seq(t);

	if (q)
		return !q->none;
	return t && ert_tensor_kind(t) == ERT_VALUE_TENSOR;
}

ERT_API ert_status ert_tensor_get_item(const ert_tensor *t, uint32_t i, ert_item *item_out)
{
	const struct ert_seq *q = handle_seq(t);
	const struct ert_value *v;

	if (!item_out)
		return ert_set_last_error(ERT_STATUS_INVALID_ARGUMENT, "get_item: NULL argument");
	if (!q || i >= q->n)
		return ert_set_last_error(ERT_STATUS_NOT_FOUND, "get_item: '%s' holds no item %u",
					  t ? ert_tensor_name(t) : "(null)", i);
	v = &q->items[i].v;
	memset(item_out, 0, sizeof(*item_out));
	item_out->dtype = v->dtype;
	item_out->rank = (uint32_t)v->rank;
	memcpy(item_out->dims, v->dims, (size_t)v->rank * sizeof(v->dims[0]));
	item_out->data = v->data;
	item_out->size = v->nbytes;
	return ERT_OK;
}

ERT_API ert_status ert_session_set_input_items(ert_session *s, uint32_t index, int has_value,
					       uint32_t count, const ert_item *items)
{
	struct ert_err err = { "" };
	struct ert_seq *q;
	const char *name;
	ert_status st;

	if (!s || (count && !items))
		return ert_set_last_error(ERT_STATUS_INVALID_ARGUMENT, "set_input_items: NULL argument");
	if (s->running)
		return ert_session_fail(s, ERT_STATUS_BUSY, "set_input_items: the session is "
					"running (called from a callback)");
	if (index >= s->model->graph->n_inputs)
		return ert_session_fail(s, ERT_STATUS_NOT_FOUND, "set_input_items: no input %u "
					"(model has %u)", index, s->model->graph->n_inputs);
	name = s->model->graph->tensors[s->model->graph->inputs[index]].name;
	q = s->in_seqs[index];
	if (!q)
		return ert_session_fail(s, ERT_STATUS_DTYPE, "set_input_items: input '%s' is a "
					"tensor: set it with ert_session_set_input()", name);
	if (q->kind == ERT_VALUE_OPTIONAL)
		has_value = count > 0;
	else if (q->kind == ERT_VALUE_SEQUENCE)
		has_value = 1;
	if (!has_value && count)
		return ert_session_fail(s, ERT_STATUS_INVALID_ARGUMENT, "set_input_items: input "
					"'%s' holds nothing, yet %u items were given", name, count);
	if (count > (q->kind == ERT_VALUE_OPTIONAL ? 1u : ERT_MAX_SEQUENCE_LENGTH))
		return ert_session_fail(s, ERT_STATUS_SHAPE, "set_input_items: input '%s' (a %s) "
					"takes at most %u items, got %u", name,
					ert_value_kind_name(q->kind),
					q->kind == ERT_VALUE_OPTIONAL ? 1u : ERT_MAX_SEQUENCE_LENGTH,
					count);
	ert_seq_clear(q, has_value);
	q->elem = s->in_vals[index].elem;
	for (uint32_t i = 0; i < count; i++) {
		struct ert_value v = { 0 };

		if (items[i].rank > ERT_MAX_RANK)
			goto bad_shape;
		ert_value_set_shape(&v, items[i].dtype, (int32_t)items[i].rank, items[i].dims);
		if (!ert_dtype_valid(items[i].dtype) || !ert_value_finish(&v) ||
		    v.nbytes != items[i].size || (v.nbytes && !items[i].data))
			goto bad_shape;
		v.data = (void *)items[i].data;
		st = ert_seq_insert(q, i, &v, name, &err);
		if (st != ERT_OK) {
			ert_seq_clear(q, false);
			return ert_session_fail(s, st, "set_input_items: %s", err.msg);
		}
		continue;
bad_shape:
		ert_seq_clear(q, false);
		return ert_session_fail(s, ERT_STATUS_SHAPE, "set_input_items: input '%s' item %u: "
					"dtype %d, rank %u and %zu bytes do not fit together",
					name, i, (int)items[i].dtype, items[i].rank, items[i].size);
	}
	return ERT_OK;
}
