/* SPDX-License-Identifier: MIT */
/*
 * npu-lower.h — private to the NPU lowering: the state of one node's
 * lowering and the building blocks shared by its three parts.
 *
 *   npu-lower.c          commands, refs and where tensors live; tensor views;
 *                        quantisation parameters; cutting walks under the
 *                        work limit; dispatch
 *   npu-lower-compute.c  CONV2D, MATMUL, ELTWISE and POOL
 *   npu-lower-move.c     COPY and LUT: views, Transpose, Concat, Slice, Pad,
 *                        DequantizeLinear, QLinearLookup
 */
#ifndef ERT_NPU_LOWER_H
#define ERT_NPU_LOWER_H

#include "npu/npu-impl.h"

struct lower {
	struct ert_npu *npu;
	struct ert_exec *x;
	struct npu_op *op;
	uint32_t cap;
	uint64_t limit;      /* most work of one command */
	struct ert_err *err;
};

/* ---- commands and where tensors live (npu-lower.c) ---- */

/* Fail the lowering with "npu: Op 'name': @why". */
ert_status nl_lower_fail(struct lower *l, ert_status st, const char *why);
/* Append a command of @opcode (@size bytes, @work units) to the node; NULL on OOM. */
struct npu_cmd_entry *nl_add_cmd(struct lower *l, uint16_t opcode, size_t size, uint64_t work);
/* Where value @v (input @k of the node, or -1 for an output) lives: ref + offset. */
ert_status nl_locate(struct lower *l, const struct ert_value *v, int32_t k, bool is_const,
		     uint32_t *ref, uint64_t *offset);
/* Input 0 and output 0 of the node: where each lives. */
ert_status nl_locate_io(struct lower *l, uint32_t *ri, uint64_t *oi, uint32_t *ro, uint64_t *oo);
/* Upload bytes computed at prepare time (requant tables, LUTs): not cached. */
ert_status nl_locate_bytes(struct lower *l, const void *data, size_t n, uint32_t *ref,
			   uint64_t *offset);

/* ---- tensor views ---- */

struct enpu_cs_tensor nl_tensor4(uint32_t ref, uint64_t offset, const int64_t *dims,
				 const int64_t *strides);
struct enpu_cs_tensor nl_tensor_none(void);
/* Dense row-major strides (bytes) of dims[0..rank) with element size @es. */
void nl_dense_strides(const int64_t *dims, int32_t rank, int64_t es, int64_t *st);
/* Dims and strides fit the command stream (dims 1..65535, strides < 2^32). */
bool nl_fits4(const int64_t *dims, const int64_t *st);
/* Right-align a value of rank <= 4 to 4 dims; false when the rank is larger. */
bool nl_as4(const struct ert_value *v, int64_t *dims, int64_t *st, int64_t es);

/* ---- inputs and quantisation parameters ---- */

const struct ert_value *nl_in_at(const struct ert_exec *x, uint32_t i);
bool nl_in_is_const(const struct ert_exec *x, uint32_t i);
bool nl_is_int8(const struct ert_value *v);
/* A constant scalar scale (float32/16) > 0, finite. */
bool nl_scalar_scale(const struct ert_exec *x, uint32_t i, double *s);
/* A constant int8 scalar zero point (absent: 0). */
bool nl_scalar_zp(const struct ert_exec *x, uint32_t i, int32_t *zp);
/* The weight zero point: absent, or int8 constant all-equal. */
bool nl_weight_zp(const struct ert_exec *x, uint32_t i, int32_t *zp);
/* The node has ert.requant = 1 (docs/int8.md). */
bool nl_fixed_rule(const struct ert_node *n);
/* ert.clamp, or the int8 range. */
void nl_clamp_of(const struct ert_node *n, int32_t *lo, int32_t *hi);
/* Per-channel (mult, shift) pairs of x_s * w_s[c] / y_s for @n channels; false if one fails. */
bool nl_requant_table(const struct ert_exec *x, double xs, uint32_t ws_idx, double ys,
		      int64_t n, int32_t *tab);

/* ---- cutting a 4-D walk under the work limit ---- */

/*
 * A 4-D walk cut into pieces along dims 0, 1 and 2 so that each piece's work
 * fits: whole rows of dim 3 (at most 65535 elements, always within a job's
 * work), as few pieces as halving finds.
 */
struct rows4 {
	int64_t dims[4];      /* the whole walk */
	int64_t chunk[3];     /* piece sizes along dims 0, 1 and 2 */
	int64_t n[3];         /* pieces along dims 0, 1 and 2 */
};

struct rows4 nl_split_rows(const int64_t *od, uint64_t per_elem, uint64_t per_row,
			   uint64_t limit);
int64_t nl_pieces(const struct rows4 *r);
/* Piece @i (dim 0 slowest): its start @at along dims 0..2 and its dims @d. */
void nl_piece_at(const struct rows4 *r, int64_t i, int64_t *at, int64_t *d);
/* Byte offset of a piece starting at @at in a tensor of strides @st. */
uint64_t nl_piece_offset(const int64_t *at, const int64_t *st);

/* ---- the two families (npu-lower-compute.c, npu-lower-move.c) ---- */

/* Ops npu-lower-compute.c lowers: the int8 convolutions, products, eltwise, pools. */
bool nl_compute_op(enum ert_op op);
bool nl_compute_supports(const struct ert_exec *x, uint64_t limit);
ert_status nl_compute_lower(struct lower *l);
/* Everything else the NPU runs: byte moves, DequantizeLinear, QLinearLookup. */
bool nl_move_op(enum ert_op op);
bool nl_move_supports(const struct ert_exec *x);
ert_status nl_move_lower(struct lower *l);

#endif /* ERT_NPU_LOWER_H */
