/* SPDX-License-Identifier: MIT */
/*
 * ert-strings.h — string tensors (ERT_DTYPE_STRING) inside libedgert.
 *
 * Storage rule: a string tensor's data is numel ert_string handles
 * (edgert.h), 16 bytes each, so the memory planner, the arenas, in-place
 * reuse and every op that only moves elements (Identity, Reshape, Gather,
 * Concat, Transpose, Slice, ...) treat it as any 16-byte element type. The
 * bytes a handle points to are immutable and owned elsewhere, by whoever
 * outlives every reader:
 *  - constants: the graph (one block: handles, then bytes; ert_strings_pack());
 *  - inputs: the session, copied by ert_session_set_input() into that input's
 *    string block (replaced at its next set_input);
 *  - strings an op makes (Cast to string, StringConcat, ...): the session's
 *    run heap, emptied when a run starts, so outputs stay valid until the
 *    next run. The heap keeps its memory: a run allocates only when it makes
 *    more string bytes than every run before it (the one exception to "run
 *    allocates nothing", docs/strings.md).
 * A kernel outside a session (plan-time folding, ert_cpu_eval_node()) has no
 * heap: ops that make strings then refuse with ERT_STATUS_UNSUPPORTED and
 * run as ordinary steps; ops that only move handles fold as usual.
 */
#ifndef ERT_STRINGS_H
#define ERT_STRINGS_H

#include <stddef.h>

#include "ert-graph.h"

struct ert_str_heap;

/* NULL on out-of-memory. */
struct ert_str_heap *ert_str_heap_create(void);
void ert_str_heap_destroy(struct ert_str_heap *h);
/* Forget every string; keep (one block of) the memory for the next run. */
void ert_str_heap_reset(struct ert_str_heap *h);
/* Room for @len bytes and a NUL (not part of the string); NULL on out-of-memory. */
char *ert_str_heap_alloc(struct ert_str_heap *h, size_t len);

/*
 * One malloc'd block: @n handles followed by copies of the strings @src
 * points to; the handles point into the block. free() releases it. NULL on
 * out-of-memory, or when the sizes overflow. *@bytes_out (may be NULL): the
 * block's size.
 */
ert_string *ert_strings_pack(const ert_string *src, size_t n, size_t *bytes_out);

/* The byte-wise order of two strings, as memcmp with the shorter first. */
int ert_string_cmp(const ert_string *a, const ert_string *b);

#endif /* ERT_STRINGS_H */
