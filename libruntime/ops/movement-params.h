/* SPDX-License-Identifier: MIT */
/*
 * movement-params.h — private to the movement family: attribute/input decoding
 * that shape inference (libruntime/ops/movement*.c) and the CPU kernels
 * (backends/cpu/ops/movement*.c) must agree on, so it lives in one place.
 *
 * Every function takes the node and the input values as either side sees them
 * (ert_infer_ctx or ert_exec) and fills a plain struct; failures set @err with
 * an "Op 'name': ..." message and return a status.
 */
#ifndef ERT_OPS_MOVEMENT_PARAMS_H
#define ERT_OPS_MOVEMENT_PARAMS_H

#include "ert-op-impl.h"

/* Like ert_infer_fail(), without an infer context. */
ert_status ert_mv_fail(const struct ert_node *n, struct ert_err *err, ert_status st,
		       const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Input @i of a node, or NULL when omitted or beyond n_in. */
static inline const struct ert_value *ert_mv_in(const struct ert_value *const *in,
						uint32_t n_in, uint32_t i)
{
	return i < n_in ? in[i] : NULL;
}

/*
 * Read at most @max integers of a 0-D or 1-D integer value whose data must be
 * known (a value input). @what names it in messages.
 */
ert_status ert_mv_read_ints(const struct ert_node *n, struct ert_err *err,
			    const struct ert_value *v, const char *what, int64_t *out,
			    uint32_t max, uint32_t *count);

/*
 * Read a list of axes either from input @input_idx (when the node has it) or
 * from the INTS attribute "axes"; normalise against @rank and reject duplicates.
 * *count is 0 and *present false when neither is given.
 */
ert_status ert_mv_read_axes(const struct ert_node *n, struct ert_err *err,
			    const struct ert_value *const *in, uint32_t n_in,
			    uint32_t input_idx, int32_t rank, int32_t *axes, uint32_t *count,
			    bool *present);

/* Slice: per-axis start, step and output length for every axis of the input. */
struct ert_mv_slice {
	int32_t rank;
	int64_t start[ERT_MAX_RANK];
	int64_t step[ERT_MAX_RANK];
	int64_t dims[ERT_MAX_RANK]; /* output dims */
};

ert_status ert_mv_slice_params(const struct ert_node *n, struct ert_err *err,
			       const struct ert_value *const *in, uint32_t n_in,
			       struct ert_mv_slice *out);

enum ert_mv_pad_mode {
	ERT_MV_PAD_CONSTANT = 0,
	ERT_MV_PAD_REFLECT,
	ERT_MV_PAD_EDGE,
	ERT_MV_PAD_WRAP,
};

/*
 * Pad and CenterCropPad: per-axis begin/end (negative crops) and output dims.
 * For Pad, the constant comes from input 2 or the "value" attribute (see
 * has_value_input / value).
 */
struct ert_mv_pad {
	int32_t rank;
	enum ert_mv_pad_mode mode;
	int64_t begin[ERT_MAX_RANK];
	int64_t end[ERT_MAX_RANK];
	int64_t dims[ERT_MAX_RANK]; /* output dims */
	float value;                /* constant from the attribute form */
	bool has_value_input;       /* constant from input 2 instead */
};

ert_status ert_mv_pad_params(const struct ert_node *n, struct ert_err *err,
			     const struct ert_value *const *in, uint32_t n_in,
			     struct ert_mv_pad *out);

/*
 * Store @v as one element of @dt at @dst. Returns false for types that have no
 * scalar conversion here (sub-byte ints, fp8).
 */
bool ert_mv_store_scalar(ert_dtype dt, double v, void *dst);

#endif /* ERT_OPS_MOVEMENT_PARAMS_H */
