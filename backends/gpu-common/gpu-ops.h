/* SPDX-License-Identifier: MIT */
/*
 * gpu-ops.h — the op planning the GPU backends (OpenCL, Vulkan) share: for
 * every op they take, what it supports (dtype, shape and attribute limits,
 * one answer for both APIs) and the parameters its kernel is launched with
 * (codes, broadcast strides, convolution geometry, GEMM strides and batch
 * offsets, row counts), computed from the node and its values alone.
 *
 * A backend keeps what is its API's: the buffers (its refs, uploads of the
 * tables planned here), the kernel or pipeline, how the parameters are laid
 * out as kernel arguments or push constants, the work sizes and the launch.
 * Its op tables (ops/ *.c) name, per kind of op below, the function that
 * turns a plan of this file into launches, and may add a limit of its device
 * (the OpenCL GEMM's work-group size); a backend claims exactly the ops here.
 */
#ifndef ERT_GPU_OPS_H
#define ERT_GPU_OPS_H

#include "gpu-common/gpu-codes.h"
#include "gpu-common/gpu-shape.h"

/* Strided copies one Concat may plan (a launch each; both backends' step limit). */
#define ERT_GPU_MAX_COPIES 32

/* ---- what the GPU backends take ---- */

/* The kinds of op: those of one kind are planned by one function here. */
enum ert_gpu_kind {
	ERT_GPU_UNARY,               /* ert_gpu_unary_plan */
	ERT_GPU_BINARY,              /* ert_gpu_binary_plan */
	ERT_GPU_CONV,                /* ert_gpu_conv_dw_plan or ert_gpu_gemm_plan */
	ERT_GPU_GEMM,                /* Gemm, MatMul: ert_gpu_gemm_plan */
	ERT_GPU_POOL,                /* ert_gpu_pool_plan */
	ERT_GPU_PLANE_REDUCE,        /* the global pools: ert_gpu_plane_reduce_plan */
	ERT_GPU_SOFTMAX,             /* ert_gpu_softmax_plan */
	ERT_GPU_LAYERNORM,           /* ert_gpu_layernorm_plan */
	ERT_GPU_VIEW,                /* a buffer copy of input 0 to output 0, or none */
	ERT_GPU_COPY,                /* Transpose, Slice, Concat: ert_gpu_copy_plan */
	ERT_GPU_GATHER,              /* ert_gpu_gather_plan */
	ERT_GPU_KIND_COUNT
};

struct ert_gpu_op {
	enum ert_op op;
	enum ert_gpu_kind kind;
	/* dtype/shape/attribute limits of the op on either GPU API */
	bool (*supports)(const struct ert_exec *x);
};

/* The entry for @op, or NULL: an op neither GPU backend takes. */
const struct ert_gpu_op *ert_gpu_op_find(enum ert_op op);

/*
 * The API-independent part of a GPU backend's supports_op: @x's op is one of
 * ert_gpu_op_find's, every tensor fits the int indexing of the kernels, and
 * the op's own limits hold.
 */
bool ert_gpu_supports(const struct ert_exec *x);

/* ---- elementwise (gpu-eltwise.c) ---- */

/* A unary kernel launch: @n items of ERT_GPU_UN_* @code with parameters @p0, @p1. */
struct ert_gpu_unary {
	int64_t n;
	int32_t code;
	float p0, p1;
};

void ert_gpu_unary_plan(const struct ert_exec *x, struct ert_gpu_unary *u);

/*
 * A binary kernel launch (inputs 0 and 1 into output 0): @same when both
 * inputs are read as the output is (the kernel with no strides), else the
 * walk over @dims (@rank, folded) with each input's strides (0: broadcast).
 */
struct ert_gpu_binary {
	int64_t n;
	int32_t op;                  /* ERT_GPU_BIN_* */
	bool same;
	int32_t rank;
	int64_t dims[ERT_MAX_RANK], sa[ERT_MAX_RANK], sb[ERT_MAX_RANK];
	struct ert_act_desc act;
};

void ert_gpu_binary_plan(const struct ert_exec *x, struct ert_gpu_binary *b);

/* ---- Conv, Gemm, MatMul (gpu-linalg.c) ---- */

/* A depthwise Conv (weights of one input channel): a launch of @n items. */
struct ert_gpu_conv_dw {
	int64_t n;
	/* H, W, KH, KW, stride h, w, pad h, w; dil h, w, OH, OW, C, OC, OC/C, N */
	int64_t geo[8], geob[8];
	bool has_bias, has_res;      /* inputs 2 and 3 */
	struct ert_act_desc act;
};

/*
 * One tiled GEMM over @batches products C = act(alpha A B + beta bias + res),
 * A M x K at strides @a_rs, @a_cs, B K x N, C of leading dimension @ldc,
 * each product at the offsets of its row of @boff (A, B, C, bias; elements).
 * Conv runs as one (@conv: B is read as the implicit im2col of its input,
 * @geo its geometry).
 */
struct ert_gpu_gemm {
	uint32_t a_in, b_in;         /* the inputs read as A and B */
	int32_t bias_in, res_in;     /* the inputs read as bias and residual, or -1 */
	int32_t a_rs, a_cs, b_rs, b_cs, ldc, m, n, k;
	int32_t bias_rs, bias_cs;
	float alpha, beta;
	struct ert_act_desc act;
	bool conv;
	int64_t geo[11];             /* H, W, KH, KW, sh, sw, ph, pw, dh, dw, OW */
	int32_t *boff;               /* 4 offsets per batch (ert_gpu_gemm_free) */
	size_t batches;
};

/* Does Conv @x run as a depthwise convolution (else as a GEMM)? */
bool ert_gpu_conv_is_dw(const struct ert_exec *x);

ert_status ert_gpu_conv_dw_plan(const struct ert_exec *x, struct ert_gpu_conv_dw *d,
				struct ert_err *err);

/* The GEMM of a dense or grouped Conv, a Gemm or a MatMul. */
ert_status ert_gpu_gemm_plan(const struct ert_exec *x, struct ert_gpu_gemm *g, struct ert_err *err);
void ert_gpu_gemm_free(struct ert_gpu_gemm *g);

/* The inputs @g reads (A, B, bias, residual), in input order, into @in (room for 4); their count. */
uint32_t ert_gpu_gemm_inputs(const struct ert_gpu_gemm *g, uint32_t *in);

/* ---- pooling (gpu-pool.c) ---- */

/* MaxPool, AveragePool: a launch of @n items (one per output element). */
struct ert_gpu_pool {
	int64_t n;
	int32_t mode;                /* ERT_GPU_POOL_* */
	/* H, W, KH, KW, stride h, w, pad h, w; dil h, w, OH, OW, N x C */
	int64_t geo[8], geob[8];
};

ert_status ert_gpu_pool_plan(const struct ert_exec *x, struct ert_gpu_pool *p, struct ert_err *err);

/* The global pools: each of @planes planes of @len elements to one value, a work-group each. */
struct ert_gpu_plane_reduce {
	int64_t planes, len;
	int32_t mode;                /* ERT_GPU_POOL_MAX or _AVG */
};

void ert_gpu_plane_reduce_plan(const struct ert_exec *x, struct ert_gpu_plane_reduce *p);

/* ---- normalization (gpu-norm.c): a work-group per row ---- */

/* Softmax, LogSoftmax: @rows rows of @len elements, @inner apart. */
struct ert_gpu_softmax {
	int64_t rows, len, inner;
	bool log;
};

ert_status ert_gpu_softmax_plan(const struct ert_exec *x, struct ert_gpu_softmax *s,
				struct ert_err *err);

/* LayerNormalization: @rows rows of @len, Scale (input 1) and B (input 2, @has_bias). */
struct ert_gpu_layernorm {
	int64_t rows, len;
	bool has_bias;
	float epsilon;
};

ert_status ert_gpu_layernorm_plan(const struct ert_exec *x, struct ert_gpu_layernorm *l,
				  struct ert_err *err);

/* ---- movement (gpu-movement.c) ---- */

/*
 * One strided copy: input @in read at strides @ss from element @s_base,
 * output 0 written at strides @ds from element @d_base, over the walk @dims
 * (@rank, folded) of @n elements (no launch when 0).
 */
struct ert_gpu_copy {
	uint32_t in;
	int64_t n, s_base, d_base;
	int32_t rank;
	int64_t dims[ERT_MAX_RANK], ss[ERT_MAX_RANK], ds[ERT_MAX_RANK];
};

/*
 * The copies of Transpose, Slice (one) or Concat (one per input) into @c
 * (room for ERT_GPU_MAX_COPIES); their count in @n.
 */
ert_status ert_gpu_copy_plan(const struct ert_exec *x, struct ert_gpu_copy *c, uint32_t *n,
			     struct ert_err *err);

/*
 * Gather along an axis with the indices known when planning: @n items, a
 * table of @nidx non-negative indices (@table, ert_gpu_gather_free) into an
 * axis of @axis_len, @inner elements per index.
 */
struct ert_gpu_gather {
	int64_t n, inner, nidx, axis_len;
	int32_t *table;
};

ert_status ert_gpu_gather_plan(const struct ert_exec *x, struct ert_gpu_gather *g,
			       struct ert_err *err);
void ert_gpu_gather_free(struct ert_gpu_gather *g);

#endif
