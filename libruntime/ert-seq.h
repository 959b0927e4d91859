/* SPDX-License-Identifier: MIT */
/*
 * ert-seq.h — sequence and optional values (docs/sequences.md).
 *
 * A value of kind ERT_VALUE_SEQUENCE, _OPTIONAL or _OPTIONAL_SEQUENCE lies
 * in the plan like a uint64 scalar: its 8 bytes hold a pointer to a struct
 * ert_seq, owned by whoever made it (the step that wrote it, the session
 * for a graph input, a subgraph run for a subgraph's input) and kept, with
 * its buffers, for later runs. A reader never keeps the pointer past the
 * run; every kernel that gives such a value copies what it reads into an
 * object of its own, so no object is written while another owner reads it.
 *
 * One struct serves every kind: @items are the tensors (an optional tensor
 * holds 0 or 1), @none says an optional holds nothing.
 */
#ifndef ERT_SEQ_H
#define ERT_SEQ_H

#include "ert-op-impl.h"

struct ert_seq_item {
	struct ert_value v;   /* shape, dtype; data malloc'd (owned), may be NULL when empty */
	size_t cap;           /* bytes allocated at v.data */
};

/*
 * Where objects count the bytes they allocate (item buffers and item
 * arrays): a session's, against its memory budget (ert_config.max_memory).
 * @reserve is asked before an object grows by @more bytes: ERT_OK, or the
 * reason in @err ("@what: ..."). @bytes: what the objects counting here hold.
 */
struct ert_seq_meter {
	uint64_t bytes;
	ert_status (*reserve)(struct ert_seq_meter *m, uint64_t more, const char *what,
			      struct ert_err *err);
};

struct ert_seq {
	uint8_t kind;         /* ert_value_kind, never TENSOR */
	ert_dtype elem;       /* the tensors' dtype; UNDEFINED: any (not known yet) */
	bool none;            /* an optional holding nothing */
	uint32_t n, cap;      /* items held, items allocated (those past n keep their buffers) */
	struct ert_seq_item *items;
	struct ert_seq_meter *meter;  /* where its bytes count, or NULL: nowhere */
	uint64_t held;                /* bytes it counted there */
};

/*
 * A new empty value (an optional: none), its allocations counted in @meter
 * (which must outlive it; NULL: not counted); NULL on out-of-memory.
 */
struct ert_seq *ert_seq_create(uint8_t kind, ert_dtype elem, struct ert_seq_meter *meter);
/* Accepts NULL. */
void ert_seq_destroy(struct ert_seq *s);
/* Hold nothing (buffers kept); an optional becomes none unless @present. */
void ert_seq_clear(struct ert_seq *s, bool present);
/* The object a sequence/optional value's 8 bytes point to, or NULL. */
struct ert_seq *ert_seq_of(const struct ert_value *v);
/* Write @s as @v's handle (v->data must hold 8 bytes). */
void ert_seq_put(struct ert_value *v, struct ert_seq *s);
/*
 * Insert a copy of tensor @t at @pos (0..n). DTYPE when its dtype is not the
 * sequence's (the first tensor sets an UNDEFINED elem), SHAPE past
 * ERT_MAX_SEQUENCE_LENGTH, OUT_OF_MEMORY (out of memory, or past the
 * meter's budget); @what names the op in messages.
 */
ert_status ert_seq_insert(struct ert_seq *s, uint32_t pos, const struct ert_value *t,
			  const char *what, struct ert_err *err);
/* Remove item @pos (0..n-1). */
void ert_seq_erase(struct ert_seq *s, uint32_t pos);
/*
 * @dst holds a copy of what @src holds (@dst keeps its kind: a sequence
 * into an optional sequence makes it present). A none optional into a
 * sequence or an optional sequence's items into an optional tensor fail
 * (DTYPE). @dst == @src is a no-op.
 */
ert_status ert_seq_assign(struct ert_seq *dst, const struct ert_seq *src, const char *what,
			  struct ert_err *err);
/*
 * Resolve a possibly negative position against @n ([-n, n - 1], or
 * [-n, n] with @end_ok): false when outside.
 */
bool ert_seq_position(int64_t pos, uint32_t n, bool end_ok, uint32_t *out);

#endif /* ERT_SEQ_H */
