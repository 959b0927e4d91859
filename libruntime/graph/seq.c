/* SPDX-License-Identifier: MIT */
/* Sequence and optional values (ert-seq.h, docs/sequences.md). */
#include <stdlib.h>
#include <string.h>

#include "ert-seq.h"

struct ert_seq *ert_seq_create(uint8_t kind, ert_dtype elem, struct ert_seq_meter *meter)
{
	struct ert_seq *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->meter = meter;
	s->kind = kind;
	s->elem = elem;
	s->none = kind == ERT_VALUE_OPTIONAL || kind == ERT_VALUE_OPTIONAL_SEQUENCE;
	return s;
}

void ert_seq_destroy(struct ert_seq *s)
{
	if (!s)
		return;
	for (uint32_t i = 0; i < s->cap; i++)
		free(s->items[i].v.data);
	free(s->items);
	if (s->meter)
		s->meter->bytes -= s->held;
	free(s);
}

/* May @s allocate @more bytes? Its meter says (ERT_OK without one). */
static ert_status reserve(struct ert_seq *s, uint64_t more, const char *what, struct ert_err *err)
{
	return s->meter ? s->meter->reserve(s->meter, more, what, err) : ERT_OK;
}

/* @s allocated @more bytes. */
static void account(struct ert_seq *s, uint64_t more)
{
	s->held += more;
	if (s->meter)
		s->meter->bytes += more;
}

void ert_seq_clear(struct ert_seq *s, bool present)
{
	s->n = 0;
	s->none = !present && (s->kind == ERT_VALUE_OPTIONAL ||
			       s->kind == ERT_VALUE_OPTIONAL_SEQUENCE);
}

struct ert_seq *ert_seq_of(const struct ert_value *v)
{
	struct ert_seq *s = NULL;

	if (v && v->kind != ERT_VALUE_TENSOR && v->data && v->nbytes >= sizeof(s))
		memcpy(&s, v->data, sizeof(s));
	return s;
}

void ert_seq_put(struct ert_value *v, struct ert_seq *s)
{
	memcpy(v->data, &s, sizeof(s));
}

bool ert_seq_position(int64_t pos, uint32_t n, bool end_ok, uint32_t *out)
{
	int64_t hi = end_ok ? (int64_t)n : (int64_t)n - 1;

	if (pos < -(int64_t)n || pos > hi)
		return false;
	*out = (uint32_t)(pos < 0 ? pos + (int64_t)n : pos);
	return true;
}

ert_status ert_seq_insert(struct ert_seq *s, uint32_t pos, const struct ert_value *t,
			  const char *what, struct ert_err *err)
{
	struct ert_seq_item spare;
	ert_status st;

	if (t->kind != ERT_VALUE_TENSOR) {
		ert_err_set(err, "%s: inserting a %s into a %s: only tensors are held", what,
			    ert_value_kind_name(t->kind), ert_value_kind_name(s->kind));
		return ERT_STATUS_DTYPE;
	}
	if (s->elem != ERT_DTYPE_UNDEFINED && t->dtype != s->elem) {
		ert_err_set(err, "%s: inserting a %s tensor into a %s of %s", what,
			    ert_dtype_name(t->dtype), ert_value_kind_name(s->kind),
			    ert_dtype_name(s->elem));
		return ERT_STATUS_DTYPE;
	}
	if (s->n >= ERT_MAX_SEQUENCE_LENGTH || (s->kind == ERT_VALUE_OPTIONAL && s->n >= 1)) {
		ert_err_set(err, "%s: a %s holds at most %u tensors", what,
			    ert_value_kind_name(s->kind),
			    s->kind == ERT_VALUE_OPTIONAL ? 1u : ERT_MAX_SEQUENCE_LENGTH);
		return ERT_STATUS_SHAPE;
	}
	if (pos > s->n)
		pos = s->n;
	if (s->n == s->cap) {
		uint32_t cap = s->cap ? 2 * s->cap : 4;
		struct ert_seq_item *items;

		if ((st = reserve(s, (cap - s->cap) * sizeof(*items), what, err)) != ERT_OK)
			return st;
		items = realloc(s->items, cap * sizeof(*items));
		if (!items)
			goto oom;
		memset(items + s->cap, 0, (cap - s->cap) * sizeof(*items));
		account(s, (cap - s->cap) * sizeof(*items));
		s->items = items;
		s->cap = cap;
	}
	/* the spare item past n keeps its buffer: reuse it */
	spare = s->items[s->n];
	if (t->nbytes > spare.cap) {
		void *p;

		if ((st = reserve(s, t->nbytes - spare.cap, what, err)) != ERT_OK)
			return st;
		p = realloc(spare.v.data, t->nbytes);
		if (!p)
			goto oom;
		account(s, t->nbytes - spare.cap);
		spare.v.data = p;
		spare.cap = t->nbytes;
		s->items[s->n] = spare;
	}
	void *data = spare.v.data;

	spare.v = *t;
	spare.v.data = data;
	spare.v.quant = NULL;
	spare.v.wq = NULL;
	if (t->nbytes)
		memcpy(data, t->data, t->nbytes);
	memmove(s->items + pos + 1, s->items + pos, (s->n - pos) * sizeof(*s->items));
	s->items[pos] = spare;
	s->n++;
	if (s->elem == ERT_DTYPE_UNDEFINED)
		s->elem = t->dtype;
	s->none = false;
	return ERT_OK;
oom:
	ert_err_set(err, "%s: out of memory holding a tensor of %zu bytes", what, t->nbytes);
	return ERT_STATUS_OUT_OF_MEMORY;
}

void ert_seq_erase(struct ert_seq *s, uint32_t pos)
{
	struct ert_seq_item gone;

	if (pos >= s->n)
		return;
	gone = s->items[pos];
	memmove(s->items + pos, s->items + pos + 1, (s->n - pos - 1) * sizeof(*s->items));
	s->n--;
	/* its buffer becomes the spare past n */
	s->items[s->n] = gone;
}

ert_status ert_seq_assign(struct ert_seq *dst, const struct ert_seq *src, const char *what,
			  struct ert_err *err)
{
	bool dst_seq = dst->kind != ERT_VALUE_OPTIONAL;
	bool src_seq = src->kind != ERT_VALUE_OPTIONAL;
	ert_status st;

	if (dst == src)
		return ERT_OK;
	if (src->none && dst->kind == ERT_VALUE_SEQUENCE) {
		ert_err_set(err, "%s: the optional holds nothing where a sequence is needed", what);
		return ERT_STATUS_INVALID_ARGUMENT;
	}
	if (!src->none && dst_seq != src_seq) {
		ert_err_set(err, "%s: a %s where a %s is needed", what,
			    ert_value_kind_name(src->kind), ert_value_kind_name(dst->kind));
		return ERT_STATUS_DTYPE;
	}
	if (dst->elem != ERT_DTYPE_UNDEFINED && src->elem != ERT_DTYPE_UNDEFINED &&
	    dst->elem != src->elem) {
		ert_err_set(err, "%s: a %s of %s where one of %s is needed", what,
			    ert_value_kind_name(src->kind), ert_dtype_name(src->elem),
			    ert_dtype_name(dst->elem));
		return ERT_STATUS_DTYPE;
	}
	ert_seq_clear(dst, !src->none);
	for (uint32_t i = 0; i < src->n; i++)
		if ((st = ert_seq_insert(dst, i, &src->items[i].v, what, err)) != ERT_OK)
			return st;
	if (dst->elem == ERT_DTYPE_UNDEFINED)
		dst->elem = src->elem;
	dst->none = src->none && !(dst->kind == ERT_VALUE_SEQUENCE);
	return ERT_OK;
}
