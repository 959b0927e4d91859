/* SPDX-License-Identifier: MIT */
/*
 * The cross-backend op test: every op a GPU backend claims, on a table of
 * shapes and attributes (tails past every tile and vector width, broadcasts,
 * odd channel counts, fused activations), run through a session on that
 * backend and through one on the CPU's scalar kernels (the reference), and
 * compared: float outputs within 1e-3 x max |ref| (NaN where the reference
 * has NaN, nowhere else), others bit for bit. Each case must also be placed
 * where the table says: on the backend for the cases it claims, on the CPU
 * for those it must refuse (which then cross the split through copies).
 * Every op type the backend claims needs at least one case.
 *
 * Backends: every GPU backend present, in turn: OpenCL (its first GPU or
 * device, ERT_OPENCL_DEVICE to choose) and Vulkan (ERT_VULKAN_DEVICE; its
 * GEMMs on both shaders, ERT_VULKAN_GEMM; its row reductions with and
 * without subgroup operations, ERT_VULKAN_SUBGROUP; in LOW its elementwise
 * ops in half and in float arithmetic, ERT_VULKAN_F16). ERT_TEST_BACKENDS=opencl or
 * =vulkan runs one of them. A backend with no device has every case
 * reported skipped.
 *
 *   test-backend-ops [FILTER]   only cases whose description contains FILTER
 *
 * Prints one line per case and ends with "N passed, N failed, N skipped".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edgert.h"
#include "ert-backend-impl.h"
#include "ert-graph.h"
#include "format/ert-format.h"
#include "ert-test-model.h"
#include "ert-test-placement.h"
#include "ert-test-qgraph.h"
#include "opencl/ocl-impl.h"
#include "vulkan/vk-impl.h"
#include "session/session-impl.h"

#define MAX_IN 6
#define MAX_ATTRS 6

struct in_desc {
	int rank;               /* -1: input omitted */
	int64_t dims[8];
	bool is_const;          /* a model constant (weights), else a graph input */
	ert_dtype dtype;        /* 0: float32 */
	int64_t ivals[8];       /* integer constants' values */
	float lo, hi;           /* float values' range ([-2, 2] when both are 0) */
};

struct attr_desc {
	const char *name;
	char type;              /* 'i', 'f', 'I' (ints), 'F' (floats), 's' */
	int64_t i;
	float f;
	int64_t ints[8];
	float floats[2];
	int n;                  /* count of ints / floats */
	const char *s;
};

struct op_case {
	const char *what;
	enum ert_op op;
	int opset;
	int n_in, n_out;
	struct in_desc in[MAX_IN];
	struct attr_desc attrs[MAX_ATTRS];
	bool on_cpu;            /* the backend must refuse it: placed on the CPU */
};

/* Inputs: X(dims...) a float graph input, W(dims...) a float constant, I64C a constant of int64 values. */
#define NARGS_(a, b, c, d, e, f, g, h, n, ...) n
#define NARGS(...) NARGS_(__VA_ARGS__, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define X(...) { .rank = NARGS(__VA_ARGS__), .dims = { __VA_ARGS__ } }
#define XR(lo_, hi_, ...) { .rank = NARGS(__VA_ARGS__), .dims = { __VA_ARGS__ }, .lo = lo_, .hi = hi_ }
#define W(...) { .rank = NARGS(__VA_ARGS__), .dims = { __VA_ARGS__ }, .is_const = true }
#define X0 { .rank = 0 }
#define W0(v) { .rank = 0, .is_const = true, .lo = v, .hi = v }
#define I64C(n, ...) { .rank = 1, .dims = { n }, .is_const = true, .dtype = ERT_DTYPE_INT64, \
		       .ivals = { __VA_ARGS__ } }
#define I64S(v) { .rank = 0, .is_const = true, .dtype = ERT_DTYPE_INT64, .ivals = { v } }
#define NONE { .rank = -1 }
#define AI(nm, v) { .name = nm, .type = 'i', .i = v }
#define AF(nm, v) { .name = nm, .type = 'f', .f = v }
#define AS(nm, v) { .name = nm, .type = 's', .s = v }
#define AIS(nm, ...) { .name = nm, .type = 'I', .ints = { __VA_ARGS__ }, .n = NARGS(__VA_ARGS__) }
#define ACT(a) AI("ert.act", a)
#define ACTP(a, b) { .name = "ert.act_params", .type = 'F', .floats = { a, b }, .n = 2 }

#define NOATTR { 0 }
#define UN(op_, desc, ...) { desc, ERT_OP_##op_, 17, 1, 1, { XR(-3, 3, 3, 5, 7) }, { __VA_ARGS__ }, false }
#define UNR(op_, desc, lo, hi) { desc, ERT_OP_##op_, 17, 1, 1, { XR(lo, hi, 2, 67) }, { { 0 } }, false }
#define BIN(op_, desc, a, b, ...) { desc, ERT_OP_##op_, 17, 2, 1, { a, b }, { __VA_ARGS__ }, false }

static const struct op_case cases[] = {
	/* unary */
	UN(Relu, "Relu [3,5,7]", NOATTR),
	UN(Sigmoid, "Sigmoid [3,5,7]", NOATTR),
	UN(Tanh, "Tanh [3,5,7]", NOATTR),
	UN(LeakyRelu, "LeakyRelu alpha 0.3", AF("alpha", 0.3f)),
	UN(HardSwish, "HardSwish [3,5,7]", NOATTR),
	UN(HardSigmoid, "HardSigmoid alpha 0.3 beta 0.4", AF("alpha", 0.3f), AF("beta", 0.4f)),
	UN(Elu, "Elu alpha 0.7", AF("alpha", 0.7f)),
	UN(Exp, "Exp [3,5,7]", NOATTR),
	UNR(Log, "Log (0.1, 5)", 0.1f, 5.0f),
	UN(Neg, "Neg [3,5,7]", NOATTR),
	UN(Abs, "Abs [3,5,7]", NOATTR),
	UNR(Sqrt, "Sqrt (0, 9)", 0.0f, 9.0f),
	UNR(Reciprocal, "Reciprocal (0.5, 4)", 0.5f, 4.0f),
	UN(Erf, "Erf [3,5,7]", NOATTR),
	UN(Softplus, "Softplus [3,5,7]", NOATTR),
	UN(Softsign, "Softsign [3,5,7]", NOATTR),
	UN(Floor, "Floor [3,5,7]", NOATTR),
	UN(Ceil, "Ceil [3,5,7]", NOATTR),
	{ "Gelu exact (opset 20)", ERT_OP_Gelu, 20, 1, 1, { XR(-4, 4, 2, 3, 65) }, { { 0 } }, false },
	{ "Gelu tanh (opset 20)", ERT_OP_Gelu, 20, 1, 1, { XR(-4, 4, 2, 3, 65) },
	  { AS("approximate", "tanh") }, false },
	/* large arguments: intermediates past float16's range (half arithmetic) give the limit */
	UNR(Sigmoid, "Sigmoid wide (-30, 30)", -30.0f, 30.0f),
	UNR(Tanh, "Tanh wide (-20, 20)", -20.0f, 20.0f),
	UNR(Erf, "Erf wide (-300, 300)", -300.0f, 300.0f),
	UNR(Softplus, "Softplus wide (-30, 30)", -30.0f, 30.0f),
	{ "Gelu tanh wide (-100, 100)", ERT_OP_Gelu, 20, 1, 1, { XR(-100, 100, 2, 67) },
	  { AS("approximate", "tanh") }, false },
	{ "Clip min/max inputs (opset 13)", ERT_OP_Clip, 13, 3, 1, { X(4, 33), W0(-0.5f), W0(1.25f) },
	  { { 0 } }, false },
	{ "Clip max only (opset 13)", ERT_OP_Clip, 13, 3, 1, { X(4, 33), NONE, W0(0.75f) }, { { 0 } }, false },
	{ "Clip attributes (opset 6)", ERT_OP_Clip, 6, 1, 1, { X(4, 33) },
	  { AF("min", -1.0f), AF("max", 0.5f) }, false },
	{ "Clip min from a graph input (CPU)", ERT_OP_Clip, 13, 2, 1, { X(4, 33), X0 }, { { 0 } },
	  .on_cpu = true },

	/* binary, with broadcasting */
	BIN(Add, "Add same [2,3,5,7]", X(2, 3, 5, 7), X(2, 3, 5, 7)),
	BIN(Add, "Add [2,3,5,7] + [3,1,1] (channel)", X(2, 3, 5, 7), X(3, 1, 1)),
	BIN(Add, "Add [2,1,5,1] + [1,3,1,7] (both)", X(2, 1, 5, 1), X(1, 3, 1, 7)),
	BIN(Add, "Add [5,7] + scalar", X(5, 7), X0),
	BIN(Add, "Add fused ReLU", X(2, 67), X(67), ACT(1)),
	BIN(Add, "Add fused Clip 0..6", X(2, 67), W(2, 67), ACT(2), ACTP(0.0f, 6.0f)),
	BIN(Add, "Add fused Gelu", X(3, 67), W(67), ACT(8), ACTP(0.0f, 0.0f)),
	BIN(Add, "Add fused Gelu (tanh form)", X(3, 67), W(67), ACT(8), ACTP(1.0f, 0.0f)),
	BIN(Sub, "Sub [4,9] - [9]", X(4, 9), X(9)),
	BIN(Sub, "Sub [1] - [3,70]", X(1), X(3, 70)),
	BIN(Mul, "Mul [2,16,9,9] * [1,16,1,1]", X(2, 16, 9, 9), W(1, 16, 1, 1)),
	BIN(Div, "Div [3,31] / [3,1]", X(3, 31), XR(0.5f, 2.0f, 3, 1)),
	BIN(Max, "Max [6,10] [10]", X(6, 10), X(10)),
	BIN(Min, "Min [6,10] [6,1]", X(6, 10), X(6, 1)),
	BIN(Sum, "Sum of two [5,7]", X(5, 7), X(5, 7)),
	BIN(Pow, "Pow (0.5, 3) ^ [-2, 2]", XR(0.5f, 3.0f, 4, 17), X(17)),
	BIN(PRelu, "PRelu slope [3,1,1]", X(2, 3, 4, 5), W(3, 1, 1)),
	{ "Add int64 (CPU)", ERT_OP_Add, 17, 2, 1,
	  { { .rank = 1, .dims = { 5 }, .dtype = ERT_DTYPE_INT64 },
	    { .rank = 1, .dims = { 5 }, .dtype = ERT_DTYPE_INT64 } }, { { 0 } }, .on_cpu = true },
	{ "Sum of three (CPU)", ERT_OP_Sum, 17, 3, 1, { X(5, 7), X(5, 7), X(5, 7) }, { { 0 } },
	  .on_cpu = true },

	/* Conv: pointwise, 3x3, strides, dilations, groups, depthwise, pads, fusions */
	{ "Conv 1x1 C5 -> 7, 9x11, bias", ERT_OP_Conv, 17, 3, 1, { X(1, 5, 9, 11), W(7, 5, 1, 1), W(7) },
	  { AIS("kernel_shape", 1, 1) }, false },
	{ "Conv 1x1 C70 -> 130, 7x9, batch 2", ERT_OP_Conv, 17, 2, 1,
	  { X(2, 70, 7, 9), W(130, 70, 1, 1) }, { { 0 } }, false },
	{ "Conv 3x3 pad 1 C3 -> 17, 13x13", ERT_OP_Conv, 17, 3, 1, { X(1, 3, 13, 13), W(17, 3, 3, 3), W(17) },
	  { AIS("pads", 1, 1, 1, 1) }, false },
	{ "Conv 3x3 stride 2 C8 -> 16, 15x15, ReLU", ERT_OP_Conv, 17, 3, 1,
	  { X(1, 8, 15, 15), W(16, 8, 3, 3), W(16) },
	  { AIS("pads", 1, 1, 1, 1), AIS("strides", 2, 2), ACT(1) }, false },
	{ "Conv 3x3 dilation 2 C6 -> 9, 12x10", ERT_OP_Conv, 17, 2, 1,
	  { X(1, 6, 12, 10), W(9, 6, 3, 3) }, { AIS("pads", 2, 2, 2, 2), AIS("dilations", 2, 2) }, false },
	{ "Conv 7x7 stride 2 pad 3 C3 -> 11, 23x23", ERT_OP_Conv, 17, 3, 1,
	  { X(1, 3, 23, 23), W(11, 3, 7, 7), W(11) },
	  { AIS("pads", 3, 3, 3, 3), AIS("strides", 2, 2) }, false },
	{ "Conv 3x3 C70 -> 33 (K tail), batch 2, Clip 0..6", ERT_OP_Conv, 17, 3, 1,
	  { X(2, 70, 6, 6), W(33, 70, 3, 3), W(33) },
	  { AIS("pads", 1, 1, 1, 1), ACT(2), ACTP(0.0f, 6.0f) }, false },
	{ "Conv grouped 4 C8 -> 12, 3x3", ERT_OP_Conv, 17, 3, 1, { X(1, 8, 9, 9), W(12, 2, 3, 3), W(12) },
	  { AI("group", 4), AIS("pads", 1, 1, 1, 1) }, false },
	{ "Conv depthwise C12 3x3 pad 1, HardSwish", ERT_OP_Conv, 17, 3, 1,
	  { X(1, 12, 11, 13), W(12, 1, 3, 3), W(12) },
	  { AI("group", 12), AIS("pads", 1, 1, 1, 1), ACT(5) }, false },
	{ "Conv depthwise x2 multiplier C4 -> 8, stride 2", ERT_OP_Conv, 17, 2, 1,
	  { X(2, 4, 10, 9), W(8, 1, 3, 3) },
	  { AI("group", 4), AIS("pads", 1, 1, 1, 1), AIS("strides", 2, 2) }, false },
	{ "Conv asymmetric pads 0,1,1,0", ERT_OP_Conv, 17, 2, 1, { X(1, 4, 8, 8), W(5, 4, 2, 2) },
	  { AIS("pads", 0, 1, 1, 0) }, false },
	{ "Conv auto_pad SAME_UPPER stride 2", ERT_OP_Conv, 17, 2, 1, { X(1, 3, 9, 8), W(4, 3, 3, 3) },
	  { AS("auto_pad", "SAME_UPPER"), AIS("strides", 2, 2) }, false },
	{ "Conv 1-D k5 pad 2 C6 -> 10, length 37", ERT_OP_Conv, 17, 3, 1,
	  { X(2, 6, 37), W(10, 6, 5), W(10) }, { AIS("pads", 2, 2) }, false },
	{ "Conv residual + ReLU (ert.residual)", ERT_OP_Conv, 17, 4, 1,
	  { X(1, 6, 7, 7), W(6, 6, 3, 3), W(6), X(1, 6, 7, 7) },
	  { AIS("pads", 1, 1, 1, 1), AI("ert.residual", 1), ACT(1) }, false },
	{ "Conv weights from a graph input", ERT_OP_Conv, 17, 2, 1, { X(1, 3, 6, 6), X(4, 3, 3, 3) },
	  { { 0 } }, false },
	{ "Conv 3-D (CPU)", ERT_OP_Conv, 17, 2, 1, { X(1, 2, 4, 4, 4), W(3, 2, 2, 2, 2) }, { { 0 } },
	  .on_cpu = true },

	/* Gemm and MatMul */
	{ "Gemm 33x70 . 70x65 + C[65]", ERT_OP_Gemm, 17, 3, 1, { X(33, 70), W(70, 65), W(65) }, { { 0 } }, false },
	{ "Gemm transB, C[33,1], alpha 0.5 beta 2", ERT_OP_Gemm, 17, 3, 1,
	  { X(33, 70), W(65, 70), W(33, 1) },
	  { AI("transB", 1), AF("alpha", 0.5f), AF("beta", 2.0f) }, false },
	{ "Gemm transA, C[33,65], ReLU", ERT_OP_Gemm, 17, 3, 1, { X(70, 33), W(70, 65), X(33, 65) },
	  { AI("transA", 1), ACT(1) }, false },
	{ "Gemm 1x2048 . 1000x2048^T + C (classifier)", ERT_OP_Gemm, 17, 3, 1,
	  { X(1, 2048), W(1000, 2048), W(1000) }, { AI("transB", 1) }, false },
	{ "Gemm no C, scalar-C absent", ERT_OP_Gemm, 17, 2, 1, { X(5, 3), X(3, 129) }, { { 0 } }, false },
	{ "MatMul [2,3,17,33] . [33,19]", ERT_OP_MatMul, 17, 2, 1, { X(2, 3, 17, 33), W(33, 19) }, { { 0 } }, false },
	{ "MatMul [1,3,17,33] . [2,1,33,19] (both broadcast)", ERT_OP_MatMul, 17, 2, 1,
	  { X(1, 3, 17, 33), X(2, 1, 33, 19) }, { { 0 } }, false },
	{ "MatMul [6,65,64] . [6,64,65] (attention)", ERT_OP_MatMul, 17, 2, 1,
	  { X(6, 65, 64), X(6, 64, 65) }, { { 0 } }, false },
	{ "MatMul [33] . [33,7] (1-D A)", ERT_OP_MatMul, 17, 2, 1, { X(33), W(33, 7) }, { { 0 } }, false },
	{ "MatMul [4,33] . [33] (1-D B)", ERT_OP_MatMul, 17, 2, 1, { X(4, 33), X(33) }, { { 0 } }, false },
	{ "MatMul fused Sigmoid", ERT_OP_MatMul, 17, 2, 1, { X(3, 40), W(40, 70) }, { ACT(4) }, false },
	{ "MatMul fused Gelu", ERT_OP_MatMul, 17, 2, 1, { X(3, 40), W(40, 70) }, { ACT(8) }, false },
	{ "MatMul fused bias (ert.bias) and Gelu, batched A", ERT_OP_MatMul, 17, 3, 1,
	  { X(2, 5, 40), W(40, 70), W(70) }, { AI("ert.bias", 1), ACT(8) }, false },
	{ "MatMul fused bias (ert.bias), batched B", ERT_OP_MatMul, 17, 3, 1,
	  { X(3, 9, 33), X(3, 33, 19), X(19) }, { AI("ert.bias", 1) }, false },
	/* folded Transposes (ert.perm_*): the GEMM reads through their strides */
	{ "MatMul folded Transposes (ert.perm_a, ert.perm_b): ViT Q K^T", ERT_OP_MatMul, 17, 2, 1,
	  { X(1, 17, 3, 8), X(1, 17, 3, 8) }, { AIS("ert.perm_a", 0, 2, 1, 3),
						AIS("ert.perm_b", 0, 2, 3, 1) }, false },
	{ "MatMul folded Transposes (ert.perm_b, ert.perm_y): attention x V", ERT_OP_MatMul, 17, 2,
	  1, { X(1, 3, 17, 17), X(1, 17, 3, 8) }, { AIS("ert.perm_b", 0, 2, 1, 3),
						     AIS("ert.perm_y", 0, 2, 1, 3) }, false },
	{ "MatMul folded Transposes: broadcast batches, 2-D B^T with a bias", ERT_OP_MatMul, 17, 3, 1,
	  { X(2, 1, 20, 13), X(19, 20), X(19) }, { AIS("ert.perm_a", 1, 0, 3, 2),
						  AIS("ert.perm_b", 1, 0), AI("ert.bias", 1) }, false },
	{ "MatMul folded Transposes: batched A^T, 3-D output permutation", ERT_OP_MatMul, 17, 2,
	  1, { X(3, 5, 4), X(3, 5, 6) }, { AIS("ert.perm_a", 0, 2, 1),
					  AIS("ert.perm_y", 1, 0, 2) }, false },

	/* fused residual (ert.residual, input 3) and scale (ert.scale) of fuse-residual.c */
	{ "MatMul fused bias and residual (ViT proj), K 300", ERT_OP_MatMul, 17, 4, 1,
	  { X(1, 13, 300), W(300, 40), W(40), X(1, 13, 40) },
	  { AI("ert.bias", 1), AI("ert.residual", 1) }, false },
	{ "MatMul fused residual, no bias, batched B", ERT_OP_MatMul, 17, 4, 1,
	  { X(3, 9, 33), X(3, 33, 19), NONE, X(3, 9, 19) }, { AI("ert.residual", 1) }, false },
	{ "MatMul fused scale (ert.scale 0.125): ViT Q K^T", ERT_OP_MatMul, 17, 2, 1,
	  { X(1, 17, 3, 8), X(1, 17, 3, 8) }, { AIS("ert.perm_a", 0, 2, 1, 3),
						AIS("ert.perm_b", 0, 2, 3, 1),
						AF("ert.scale", 0.125f) }, false },
	{ "MatMul fused scale 0.3, bias, residual and Gelu", ERT_OP_MatMul, 17, 4, 1,
	  { X(2, 5, 40), W(40, 70), W(70), X(2, 5, 70) },
	  { AF("ert.scale", 0.3f), AI("ert.bias", 1), AI("ert.residual", 1), ACT(8) }, false },

	/* pooling */
	{ "MaxPool 3x3 stride 2 pad 1, 13x13", ERT_OP_MaxPool, 12, 1, 1, { X(1, 5, 13, 13) },
	  { AIS("kernel_shape", 3, 3), AIS("strides", 2, 2), AIS("pads", 1, 1, 1, 1) }, false },
	{ "MaxPool 2x2 ceil_mode, 7x9", ERT_OP_MaxPool, 12, 1, 1, { X(2, 3, 7, 9) },
	  { AIS("kernel_shape", 2, 2), AIS("strides", 2, 2), AI("ceil_mode", 1) }, false },
	{ "MaxPool dilation 2, 1-D", ERT_OP_MaxPool, 12, 1, 1, { X(2, 3, 20) },
	  { AIS("kernel_shape", 3), AIS("dilations", 2) }, false },
	{ "MaxPool with Indices (CPU)", ERT_OP_MaxPool, 12, 1, 2, { X(1, 2, 6, 6) },
	  { AIS("kernel_shape", 2, 2) }, .on_cpu = true },
	{ "AveragePool 3x3 pad 1 exclude pad", ERT_OP_AveragePool, 19, 1, 1, { X(1, 4, 10, 11) },
	  { AIS("kernel_shape", 3, 3), AIS("pads", 1, 1, 1, 1) }, false },
	{ "AveragePool 3x3 stride 2 pad 1 count_include_pad", ERT_OP_AveragePool, 19, 1, 1,
	  { X(1, 4, 10, 11) },
	  { AIS("kernel_shape", 3, 3), AIS("strides", 2, 2), AIS("pads", 1, 1, 1, 1),
	    AI("count_include_pad", 1) }, false },
	{ "GlobalAveragePool [2,7,9,11]", ERT_OP_GlobalAveragePool, 17, 1, 1, { X(2, 7, 9, 11) }, { { 0 } }, false },
	{ "GlobalAveragePool [1,13,1,1]", ERT_OP_GlobalAveragePool, 17, 1, 1, { X(1, 13, 1, 1) }, { { 0 } }, false },
	{ "GlobalMaxPool [2,5,70]", ERT_OP_GlobalMaxPool, 17, 1, 1, { X(2, 5, 70) }, { { 0 } }, false },
	/* row reductions: rows of 1, of 3, of 13 (no multiple of a subgroup), long */
	{ "GlobalMaxPool planes of 1 [2,3,1,1]", ERT_OP_GlobalMaxPool, 17, 1, 1, { X(2, 3, 1, 1) },
	  { { 0 } }, false },
	{ "GlobalMaxPool planes of 3 [1,4,3]", ERT_OP_GlobalMaxPool, 17, 1, 1, { X(1, 4, 3) },
	  { { 0 } }, false },
	{ "GlobalAveragePool long planes [1,2,70,70]", ERT_OP_GlobalAveragePool, 17, 1, 1,
	  { X(1, 2, 70, 70) }, { { 0 } }, false },

	/* normalisation */
	{ "Softmax axis -1 [3,5,130]", ERT_OP_Softmax, 13, 1, 1, { XR(-8, 8, 3, 5, 130) }, { { 0 } }, false },
	{ "Softmax axis 1 [2,7,5] (strided rows)", ERT_OP_Softmax, 13, 1, 1, { X(2, 7, 5) },
	  { AI("axis", 1) }, false },
	{ "Softmax opset 11 axis 1 [2,3,4] (flattened)", ERT_OP_Softmax, 11, 1, 1, { X(2, 3, 4) },
	  { { 0 } }, false },
	{ "LogSoftmax axis -1 [4,33]", ERT_OP_LogSoftmax, 13, 1, 1, { X(4, 33) }, { { 0 } }, false },
	{ "Softmax rows of 1 [4,1]", ERT_OP_Softmax, 13, 1, 1, { X(4, 1) }, { { 0 } }, false },
	{ "Softmax rows of 3 [5,3]", ERT_OP_Softmax, 13, 1, 1, { X(5, 3) }, { { 0 } }, false },
	{ "LogSoftmax rows of 13 [3,13]", ERT_OP_LogSoftmax, 13, 1, 1, { X(3, 13) }, { { 0 } }, false },
	{ "Softmax long rows [2,5000]", ERT_OP_Softmax, 13, 1, 1, { XR(-8, 8, 2, 5000) }, { { 0 } },
	  false },
	{ "LayerNormalization rows of 1 [3,1] + bias", ERT_OP_LayerNormalization, 17, 3, 1,
	  { X(3, 1), W(1), W(1) }, { { 0 } }, false },
	{ "LayerNormalization rows of 3 [4,3]", ERT_OP_LayerNormalization, 17, 2, 1,
	  { X(4, 3), W(3) }, { { 0 } }, false },
	{ "LayerNormalization long rows [2,4099] + bias", ERT_OP_LayerNormalization, 17, 3, 1,
	  { X(2, 4099), W(4099), W(4099) }, { { 0 } }, false },
	{ "LayerNormalization [2,7,130] + bias", ERT_OP_LayerNormalization, 17, 3, 1,
	  { X(2, 7, 130), W(130), W(130) }, { AF("epsilon", 1e-6f) }, false },
	{ "LayerNormalization axis 1 [2,3,4,5], no bias", ERT_OP_LayerNormalization, 17, 2, 1,
	  { X(2, 3, 4, 5), W(3, 4, 5) }, { AI("axis", 1) }, false },
	{ "LayerNormalization with Mean output (CPU)", ERT_OP_LayerNormalization, 17, 2, 2,
	  { X(2, 9), W(9) }, { { 0 } }, .on_cpu = true },

	/* movement */
	{ "Reshape [2,3,4] -> [4,6]", ERT_OP_Reshape, 17, 2, 1, { X(2, 3, 4), I64C(2, 4, 6) }, { { 0 } }, false },
	{ "Flatten axis 2 [2,3,4,5]", ERT_OP_Flatten, 17, 1, 1, { X(2, 3, 4, 5) }, { AI("axis", 2) }, false },
	{ "Squeeze axes [1]", ERT_OP_Squeeze, 17, 2, 1, { X(3, 1, 5), I64C(1, 1) }, { { 0 } }, false },
	{ "Unsqueeze axes [0, 3]", ERT_OP_Unsqueeze, 17, 2, 1, { X(3, 5), I64C(2, 0, 3) }, { { 0 } }, false },
	{ "Identity [7,9]", ERT_OP_Identity, 17, 1, 1, { X(7, 9) }, { { 0 } }, false },
	{ "Dropout (inference) [7,9]", ERT_OP_Dropout, 13, 1, 1, { X(7, 9) }, { { 0 } }, false },
	{ "Transpose perm 0,2,3,1", ERT_OP_Transpose, 17, 1, 1, { X(2, 3, 4, 5) },
	  { AIS("perm", 0, 2, 3, 1) }, false },
	{ "Transpose default (reverse) [3,5,7]", ERT_OP_Transpose, 17, 1, 1, { X(3, 5, 7) }, { { 0 } }, false },
	{ "Transpose heads [1,197,6,64] -> [1,6,197,64]", ERT_OP_Transpose, 17, 1, 1, { X(1, 197, 6, 64) },
	  { AIS("perm", 0, 2, 1, 3) }, false },
	{ "Slice [1:5:2, -1:-8:-3] of [6,9]", ERT_OP_Slice, 13, 5, 1,
	  { X(6, 9), I64C(2, 1, -1), I64C(2, 5, -8), I64C(2, 0, 1), I64C(2, 2, -3) }, { { 0 } }, false },
	{ "Slice axis 2 [2,3,10] 3..end", ERT_OP_Slice, 13, 4, 1,
	  { X(2, 3, 10), I64C(1, 3), I64C(1, 100), I64C(1, 2) }, { { 0 } }, false },
	{ "Concat axis 1 of three (one constant)", ERT_OP_Concat, 13, 3, 1,
	  { X(2, 3, 4), W(2, 1, 4), X(2, 5, 4) }, { AI("axis", 1) }, false },
	{ "Concat axis -1 of two", ERT_OP_Concat, 13, 2, 1, { X(3, 7), X(3, 2) }, { AI("axis", -1) }, false },
	{ "Gather axis 1 scalar index 0 (class token)", ERT_OP_Gather, 13, 2, 1,
	  { X(1, 197, 24), I64S(0) }, { AI("axis", 1) }, false },
	{ "Gather axis 0 indices [3] with a negative", ERT_OP_Gather, 13, 2, 1,
	  { X(5, 6), I64C(3, 4, -5, 2) }, { { 0 } }, false },
};

#define N_CASES (sizeof(cases) / sizeof(cases[0]))

/* ---- building and running one case ---- */

static uint32_t rng_state;

static float rnd_value(float lo, float hi)
{
	rng_state = rng_state * 1664525u + 1013904223u;
	return lo + (hi - lo) * (float)(rng_state >> 8) / (float)(1u << 24);
}

static ert_dtype in_dtype(const struct in_desc *d)
{
	return d->dtype ? d->dtype : ERT_DTYPE_FLOAT32;
}

static int64_t numel(const struct in_desc *d)
{
	int64_t n = 1;

	for (int i = 0; i < d->rank; i++)
		n *= d->dims[i];
	return n;
}

/* Values of input @k of case @c: floats in its range, integers as listed. */
static void fill(const struct op_case *c, int k, void *data)
{
	const struct in_desc *d = &c->in[k];
	float lo = d->lo, hi = d->hi;
	int64_t n = numel(d);

	if (lo == 0.0f && hi == 0.0f) {
		lo = -2.0f;
		hi = 2.0f;
	}
	rng_state = 12345u + 7919u * (uint32_t)k + (uint32_t)(c - cases) * 104729u;
	for (int64_t i = 0; i < n; i++) {
		switch (in_dtype(d)) {
		case ERT_DTYPE_INT64:
			((int64_t *)data)[i] = d->is_const ? d->ivals[i] : (int64_t)rnd_value(-50, 50);
			break;
		default:
			((float *)data)[i] = lo == hi ? lo : rnd_value(lo, hi);
			break;
		}
	}
}

static bool set_attr(struct ert_graph *g, struct ert_node *n, const struct attr_desc *a)
{
	struct ert_attr *at;

	switch (a->type) {
	case 'i':
		return ert_node_set_attr_int(g, n, a->name, a->i);
	case 'f':
		return ert_node_set_attr_float(g, n, a->name, a->f);
	case 'I':
		return ert_node_set_attr_ints(g, n, a->name, a->ints, (uint32_t)a->n);
	case 'F': {
		float *v = ert_graph_alloc(g, sizeof(a->floats));

		at = ert_node_add_attr(g, n, a->name, ERT_ATTR_FLOATS);
		if (!v || !at)
			return false;
		memcpy(v, a->floats, sizeof(a->floats));
		at->floats = v;
		at->count = (uint32_t)a->n;
		return true;
	}
	case 's':
		at = ert_node_add_attr(g, n, a->name, ERT_ATTR_STRING);
		if (!at)
			return false;
		at->s = ert_graph_strdup(g, a->s);
		at->len = (uint32_t)strlen(a->s);
		return at->s != NULL;
	default:
		return false;
	}
}

static ert_model *case_model(const struct op_case *c)
{
	struct ert_graph *g = ert_graph_create();
	int32_t ins[MAX_IN], outs[4];
	char name[16];
	int32_t ni;

	if (!g)
		return NULL;
	g->opset = c->opset;
	for (int k = 0; k < c->n_in; k++) {
		const struct in_desc *d = &c->in[k];

		if (d->rank < 0) {
			ins[k] = -1;
			continue;
		}
		snprintf(name, sizeof(name), "x%d", k);
		ins[k] = ert_graph_add_tensor(g, name, in_dtype(d), d->rank, d->dims);
		if (d->is_const) {
			size_t bytes = ert_dtype_bytes(in_dtype(d), numel(d));
			void *data = malloc(bytes ? bytes : 1);

			if (!data)
				goto fail;
			fill(c, k, data);
			ert_graph_set_const(g, ins[k], data, bytes, true);
		} else {
			ert_graph_add_input(g, ins[k]);
		}
	}
	for (int k = 0; k < c->n_out; k++) {
		snprintf(name, sizeof(name), "y%d", k);
		outs[k] = ert_graph_add_tensor(g, name, ERT_DTYPE_UNDEFINED, -1, NULL);
	}
	ni = ert_graph_add_node(g, c->op, "node", (uint32_t)c->n_in, ins, (uint32_t)c->n_out, outs);
	if (ni < 0)
		goto fail;
	g->nodes[ni].opset = (uint16_t)c->opset;
	for (int a = 0; a < MAX_ATTRS && c->attrs[a].name; a++)
		if (!set_attr(g, &g->nodes[ni], &c->attrs[a]))
			goto fail;
	for (int k = 0; k < c->n_out; k++)
		ert_graph_add_output(g, outs[k]);
	return model_from_graph(g);
fail:
	ert_graph_destroy(g);
	return NULL;
}

struct placed {
	char backend[16];
	int steps;
};

static void visit(const struct ert_node *node, const struct ert_value *const *in, uint32_t n_in,
		  const struct ert_value *const *out, uint32_t n_out, const char *backend, void *user)
{
	struct placed *p = user;

	snprintf(p->backend, sizeof(p->backend), "%s", backend);
	p->steps++;
}

/*
 * $ERT_TEST_PRECISION=low: the GPU sessions run with precision LOW (float16
 * on OpenCL where the device has cl_khr_fp16 or $ERT_OPENCL_F16=storage, on
 * Vulkan where it has storageBuffer16BitAccess),
 * compared with cosine >= 0.999 and max abs error <= 1e-2 x max |ref|.
 */
static ert_level test_precision = ERT_LEVEL_NORMAL;

static ert_session *open_session_cfg(ert_model *m, ert_backend_type type, ert_level precision,
				     ert_fp16_guard guard, char *why, size_t len)
{
	ert_session *s = NULL;
	ert_config cfg;

	ert_config_init(&cfg);
	cfg.num_threads = 1;
	cfg.precision = type == ERT_BACKEND_CPU ? ERT_LEVEL_NORMAL : precision;
	cfg.fp16_guard = guard;
	if (type == ERT_BACKEND_CPU) {
		/* the oracle: the scalar kernels */
		cfg.cpu_level = ERT_CPU_LEVEL_SCALAR;
	} else {
		cfg.backends[0] = type;
		cfg.num_backends = 1;
	}
	if (ert_session_create(m, &cfg, &s) != ERT_OK)
		snprintf(why, len, "session on %s: %s", ert_backend_type_name(type), ert_last_error());
	return s;
}

static ert_session *open_session(ert_model *m, ert_backend_type type, char *why, size_t len)
{
	return open_session_cfg(m, type, test_precision, ERT_FP16_GUARD_ON, why, len);
}

/* Give both sessions the case's values for every graph input. */
static bool set_inputs(const struct op_case *c, ert_session *a, ert_session *b, char *why,
		       size_t len)
{
	uint32_t idx = 0;

	for (int k = 0; k < c->n_in; k++) {
		const struct in_desc *d = &c->in[k];
		size_t bytes = ert_dtype_bytes(in_dtype(d), numel(d));
		void *data;

		if (d->rank < 0 || d->is_const)
			continue;
		data = malloc(bytes ? bytes : 1);
		if (!data)
			return false;
		fill(c, k, data);
		if (ert_session_set_input(a, idx, in_dtype(d), data, bytes) != ERT_OK ||
		    ert_session_set_input(b, idx, in_dtype(d), data, bytes) != ERT_OK) {
			snprintf(why, len, "set input %u: %s", idx, ert_last_error());
			free(data);
			return false;
		}
		free(data);
		idx++;
	}
	return true;
}

/* Output @k of @got against the reference's: within tolerance for floats, exact otherwise. */
static bool compare(ert_session *got, ert_session *ref, uint32_t k, char *why, size_t len)
{
	const ert_tensor *tg = ert_session_get_output(got, k), *tr = ert_session_get_output(ref, k);
	size_t bytes = ert_tensor_byte_size(tr);
	ert_dtype dt = ert_tensor_dtype(tr);

	if (ert_tensor_byte_size(tg) != bytes || ert_tensor_dtype(tg) != dt ||
	    ert_tensor_rank(tg) != ert_tensor_rank(tr)) {
		snprintf(why, len, "output %u: shape or type differs from the reference", k);
		return false;
	}
	if (dt != ERT_DTYPE_FLOAT32) {
		if (memcmp(ert_tensor_data(tg), ert_tensor_data(tr), bytes)) {
			snprintf(why, len, "output %u: differs from the reference", k);
			return false;
		}
		return true;
	}
	const float *g = ert_tensor_data(tg), *r = ert_tensor_data(tr);
	size_t n = bytes / sizeof(float), worst = 0;
	double max_ref = 0.0, max_err = 0.0, gg = 0.0, rr = 0.0, gr = 0.0;
	double tol = test_precision == ERT_LEVEL_LOW ? 1e-2 : 1e-3;

	for (size_t i = 0; i < n; i++) {
		if (isnan(r[i]) != isnan(g[i])) {
			snprintf(why, len, "output %u[%zu]: %g, reference %g", k, i, g[i], r[i]);
			return false;
		}
		if (isnan(r[i]))
			continue;
		if (isinf(g[i]) && !isinf(r[i])) {
			snprintf(why, len, "output %u[%zu]: %g, reference %g", k, i, g[i], r[i]);
			return false;
		}
		if (!isinf(r[i])) {
			gg += (double)g[i] * g[i];
			rr += (double)r[i] * r[i];
			gr += (double)g[i] * r[i];
		}
		if (fabs(r[i]) > max_ref)
			max_ref = fabs(r[i]);
		if (fabs((double)g[i] - r[i]) > max_err) {
			max_err = fabs((double)g[i] - r[i]);
			worst = i;
		}
	}
	if (max_err > tol * max_ref + 1e-7) {
		snprintf(why, len, "output %u: max abs error %.3g at %zu (%g vs %g) over %.3g x %g",
			 k, max_err, worst, g[worst], r[worst], max_ref, tol);
		return false;
	}
	/* LOW: the direction too (cosine), where the reference is not all zeros */
	if (test_precision == ERT_LEVEL_LOW && rr > 0.0 && gr / sqrt(gg * rr) < 0.999) {
		snprintf(why, len, "output %u: cosine %.6f < 0.999", k, gr / sqrt(gg * rr));
		return false;
	}
	return true;
}

/* One case on @type: true when it passes, with @why saying what failed. */
static bool run_case(const struct op_case *c, ert_backend_type type, char *why, size_t len)
{
	const char *want = c->on_cpu ? "cpu" : ert_backend_type_name(type);
	ert_model *m = case_model(c);
	ert_session *s = NULL, *ref = NULL;
	struct placed p = { "", 0 };
	bool ok = false;

	if (!m) {
		snprintf(why, len, "cannot build the model");
		return false;
	}
	s = open_session(m, type, why, len);
	ref = s ? open_session(m, ERT_BACKEND_CPU, why, len) : NULL;
	if (!s || !ref)
		goto out;
	if (ert_session_visit_steps(s, visit, &p) != ERT_OK || p.steps != 1 ||
	    strcmp(p.backend, want)) {
		snprintf(why, len, "placed on %s, expected %s", p.backend, want);
		goto out;
	}
	if (!set_inputs(c, s, ref, why, len))
		goto out;
	if (ert_session_run(s) != ERT_OK) {
		snprintf(why, len, "run on %s: %s", want, ert_session_error(s));
		goto out;
	}
	if (ert_session_run(ref) != ERT_OK) {
		snprintf(why, len, "run on the reference: %s", ert_session_error(ref));
		goto out;
	}
	ok = true;
	for (uint32_t k = 0; k < ert_session_output_count(ref) && ok; k++)
		ok = compare(s, ref, k, why, len);
out:
	ert_session_destroy(s);
	ert_session_destroy(ref);
	ert_model_unref(m);
	return ok;
}

/* ---- checks beyond the table ---- */

/* A GPU backend under test. */
struct gpu {
	ert_backend_type type;
	const char *name;
	bool (*claims)(enum ert_op op);
	const char *(*device)(const struct ert_backend *be);
	const char *device_var;      /* its device variable */
	const char *f16_var;         /* its precision LOW variable: "storage" or "off" */
	bool f16_forced;             /* "storage" gives float16 storage on any device */
};

static bool ocl_claims(enum ert_op op)
{
	return ert_ocl_op_find(op) != NULL;
}

static bool vk_claims(enum ert_op op)
{
	return ert_vk_op_find(op) != NULL;
}

static const struct gpu gpus[] = {
	{ ERT_BACKEND_OPENCL, "opencl", ocl_claims, ert_opencl_backend_device, "ERT_OPENCL_DEVICE",
	  "ERT_OPENCL_F16", true },
	{ ERT_BACKEND_VULKAN, "vulkan", vk_claims, ert_vulkan_backend_device, "ERT_VULKAN_DEVICE",
	  "ERT_VULKAN_F16", false },
};

/* Every op type the backend claims has a case it runs. */
static int check_coverage(const struct gpu *gp, int *claimed)
{
	int failed = 0;

	*claimed = 0;
	for (int op = 0; op < ERT_OP_COUNT; op++) {
		bool has = false;

		if (!gp->claims((enum ert_op)op))
			continue;
		(*claimed)++;
		for (size_t i = 0; i < N_CASES; i++)
			has |= cases[i].op == (enum ert_op)op && !cases[i].on_cpu;
		if (!has) {
			printf("not ok - %s claims %s, which no case runs\n", gp->name,
			       ert_op_name((enum ert_op)op));
			failed++;
		}
	}
	return failed;
}

/*
 * x -> Relu (opencl) -> a -> Sin (cpu) -> b -> Add(b, x) (opencl) -> y: x
 * goes to the device once (both readers share its copy), a comes back, b
 * goes over, y comes back: four copies of 4 x 33 floats per run.
 */
/* Does @s keep float32 tensors as float16 on the device (precision LOW)? */
static bool fp16_storage(ert_session *s)
{
	const struct ert_graph *g = s->model->graph;

	for (uint32_t i = 0; i < g->n_nodes; i++) {
		bool fp16;
		const char *t;
		float max, bound;

		if (ert_session_fp16_note(s, &g->nodes[i], &fp16, &t, &max, &bound) && fp16)
			return true;
	}
	return false;
}

static bool check_split(const struct gpu *gp, char *why, size_t len)
{
	struct ert_graph *g = ert_graph_create();
	int64_t dims[2] = { 4, 33 };
	int32_t x, a, b, y;
	ert_session *s = NULL, *ref = NULL;
	ert_model *m;
	bool ok = false;

	if (!g)
		return false;
	g->opset = 17;
	x = ert_graph_add_tensor(g, "x", ERT_DTYPE_FLOAT32, 2, dims);
	a = ert_graph_add_tensor(g, "a", ERT_DTYPE_FLOAT32, -1, NULL);
	b = ert_graph_add_tensor(g, "b", ERT_DTYPE_FLOAT32, -1, NULL);
	y = ert_graph_add_tensor(g, "y", ERT_DTYPE_FLOAT32, -1, NULL);
	ert_graph_add_input(g, x);
	ert_graph_add_node(g, ERT_OP_Relu, "relu", 1, &x, 1, &a);
	ert_graph_add_node(g, ERT_OP_Sin, "sin", 1, &a, 1, &b);
	ert_graph_add_node(g, ERT_OP_Add, "add", 2, (int32_t[]){ b, x }, 1, &y);
	ert_graph_add_output(g, y);
	m = model_from_graph(g);
	if (!m)
		return false;
	s = open_session(m, gp->type, why, len);
	ref = s ? open_session(m, ERT_BACKEND_CPU, why, len) : NULL;
	if (s && ref) {
		float xs[4 * 33];

		for (int i = 0; i < 4 * 33; i++)
			xs[i] = (float)((i * 37) % 19) * 0.25f - 2.0f;
		if (ert_session_set_input(s, 0, ERT_DTYPE_FLOAT32, xs, sizeof(xs)) != ERT_OK ||
		    ert_session_set_input(ref, 0, ERT_DTYPE_FLOAT32, xs, sizeof(xs)) != ERT_OK ||
		    ert_session_run(s) != ERT_OK || ert_session_run(ref) != ERT_OK) {
			snprintf(why, len, "run: %s", ert_last_error());
		} else if (ert_session_copied_bytes(s) != 4 * sizeof(xs) / (fp16_storage(s) ? 2 : 1)) {
			snprintf(why, len, "copied %llu bytes, expected %zu%s",
				 (unsigned long long)ert_session_copied_bytes(s),
				 4 * sizeof(xs) / (fp16_storage(s) ? 2 : 1),
				 fp16_storage(s) ? " (float16 storage)" : "");
		} else {
			ok = compare(s, ref, 0, why, len);
		}
	}
	ert_session_destroy(s);
	ert_session_destroy(ref);
	ert_model_unref(m);
	return ok;
}

/*
 * x (int8) -> QLinearConv -> DequantizeLinear (npu) -> a -> Relu -> r ->
 * Add(r, a) (gpu) -> y. a crosses from the NPU's arena to the GPU: read in
 * place through a dma-buf import where both sides can (an enpu device and a
 * GPU API that imports), else copied once per run; y comes back to the host.
 * Either way the answer is the CPU's, and copied_bytes counts exactly the
 * copies made. The NPU simulator exports nothing, so on these machines the
 * copy is what is checked.
 */
static bool check_npu_split(const struct gpu *gp, char *why, size_t len)
{
	static const struct conv_spec cs = { .oc = 16, .kh = 3, .kw = 3, .pads = { 1, 1, 1, 1 },
					      .bias = true };
	int64_t dims[4] = { 1, 16, 16, 16 };
	struct qb b = qb_begin(0x5eed0010u);
	struct qt x = qb_input(&b, "x", 4, dims);
	struct qt c = q_conv(&b, "conv", x, &cs);
	int32_t a = dequant(&b, "dq", c), r = qb_value(&b, "r"), y = qb_value(&b, "y");
	size_t a_bytes = 16 * 16 * 16 * sizeof(float);
	char placed[256] = "";
	ert_session *s = NULL, *ref = NULL;
	ert_config cfg;
	ert_model *m;
	bool ok = false;

	qb_node(&b, ERT_OP_Relu, "relu", 1, &a, r);
	qb_node(&b, ERT_OP_Add, "add", 2, (int32_t[]){ r, a }, y);
	qb_output(&b, y);
	m = model_from_graph(b.g);
	if (!m) {
		snprintf(why, len, "model: %s", ert_last_error());
		return false;
	}
	ert_config_init(&cfg);
	cfg.num_threads = 1;
	cfg.backends[0] = ERT_BACKEND_NPU;
	cfg.backends[1] = gp->type;
	cfg.backends[2] = ERT_BACKEND_CPU;
	cfg.num_backends = 3;
	if (ert_session_create(m, &cfg, &s) != ERT_OK) {
		snprintf(why, len, "session on npu,%s,cpu: %s", gp->name, ert_last_error());
		s = NULL;
	}
	ref = s ? open_session(m, ERT_BACKEND_CPU, why, len) : NULL;
	if (s && ref) {
		int8_t xs[16 * 16 * 16];
		char want[256];
		uint64_t shared = session_shared_mirrors(s), copies;

		for (size_t i = 0; i < sizeof(xs); i++)
			xs[i] = (int8_t)((i * 37) % 251 - 125);
		snprintf(want, sizeof(want), "conv=npu dq=npu relu=%s add=%s", gp->name, gp->name);
		copies = (shared ? 0 : a_bytes) + a_bytes;
		if (ert_session_set_input(s, 0, ERT_DTYPE_INT8, xs, sizeof(xs)) != ERT_OK ||
		    ert_session_set_input(ref, 0, ERT_DTYPE_INT8, xs, sizeof(xs)) != ERT_OK ||
		    ert_session_run(s) != ERT_OK || ert_session_run(ref) != ERT_OK) {
			snprintf(why, len, "run: %s", ert_last_error());
		} else if (!session_placement(s, placed, sizeof(placed)) || strcmp(placed, want)) {
			snprintf(why, len, "placed %.200s, expected %.200s", placed, want);
		} else if (ert_session_copied_bytes(s) != copies) {
			snprintf(why, len, "copied %llu bytes, expected %llu (%s)",
				 (unsigned long long)ert_session_copied_bytes(s),
				 (unsigned long long)copies, shared ? "a shared" : "a copied");
		} else if (compare(s, ref, 0, why, len)) {
			/* a second run: the copy (or the share) is made again, with new inputs */
			for (size_t i = 0; i < sizeof(xs); i++)
				xs[i] = (int8_t)((i * 11) % 239 - 119);
			if (ert_session_set_input(s, 0, ERT_DTYPE_INT8, xs, sizeof(xs)) != ERT_OK ||
			    ert_session_set_input(ref, 0, ERT_DTYPE_INT8, xs, sizeof(xs)) != ERT_OK ||
			    ert_session_run(s) != ERT_OK || ert_session_run(ref) != ERT_OK)
				snprintf(why, len, "second run: %s", ert_last_error());
			else if (ert_session_copied_bytes(s) != copies)
				snprintf(why, len, "second run copied %llu bytes, expected %llu",
					 (unsigned long long)ert_session_copied_bytes(s),
					 (unsigned long long)copies);
			else
				ok = compare(s, ref, 0, why, len);
		}
		if (ok)
			printf("# %s: npu split: tensor a %s\n", gp->name,
			       shared ? "shared through a dma-buf" : "copied");
	}
	ert_session_destroy(s);
	ert_session_destroy(ref);
	ert_model_unref(m);
	return ok;
}

/* The device variable: malformed or out of range, the session is not created, and says why. */
static bool check_device_variable(const struct gpu *gp, char *why, size_t len)
{
	struct bad_value {
		const char *value, *message;
	};
	static const struct bad_value ocl_bad[] = {
		{ "gpu", "is not PLATFORM:DEVICE" },
		{ "0:", "is not PLATFORM:DEVICE" },
		{ "0:0x", "is not PLATFORM:DEVICE" },
		{ "99:0", "platform 99 does not exist" },
		{ "0:99", "has no device 99" },
		{ NULL, NULL },
	};
	static const struct bad_value vk_bad[] = {
		{ "gpu", "is not a device index" },
		{ "0x", "is not a device index" },
		{ "-1", "is not a device index" },
		{ "99", "there is no device 99" },
		{ NULL, NULL },
	};
	const struct bad_value *bad = gp->type == ERT_BACKEND_OPENCL ? ocl_bad : vk_bad;
	const char *good = gp->type == ERT_BACKEND_OPENCL ? "0:0" : "0";
	const struct op_case *c = &cases[0];
	ert_model *m = case_model(c);
	bool ok = m != NULL;

	for (size_t i = 0; bad[i].value && ok; i++) {
		ert_session *s = NULL;
		ert_config cfg;
		ert_status st;

		setenv(gp->device_var, bad[i].value, 1);
		ert_config_init(&cfg);
		cfg.backends[0] = gp->type;
		cfg.num_backends = 1;
		st = ert_session_create(m, &cfg, &s);
		if (st != ERT_STATUS_INVALID_ARGUMENT || s || !strstr(ert_last_error(), bad[i].message)) {
			snprintf(why, len, "%s=%s: status %d, '%s'", gp->device_var, bad[i].value,
				 (int)st, ert_last_error());
			ok = false;
		}
		ert_session_destroy(s);
	}
	if (ok) {
		char tmp[256];

		setenv(gp->device_var, good, 1);
		ok = run_case(c, gp->type, tmp, sizeof(tmp));
		if (!ok)
			snprintf(why, len, "%s=%s: %s", gp->device_var, good, tmp);
	}
	unsetenv(gp->device_var);
	ert_model_unref(m);
	return ok;
}

/*
 * A program that fails to build for the device (ERT_OPENCL_TEST_BREAK plants
 * an #error in it): the session is not created, and the message names the
 * op, the program, the CL error and the compiler's words.
 */
static bool check_build_failure(char *why, size_t len)
{
	const struct op_case *c = &cases[0];
	ert_model *m = case_model(c);
	ert_session *s = NULL;
	ert_config cfg;
	ert_status st;
	bool ok;

	if (!m)
		return false;
	setenv("ERT_OPENCL_TEST_BREAK", "eltwise", 1);
	ert_config_init(&cfg);
	cfg.backends[0] = ERT_BACKEND_OPENCL;
	cfg.num_backends = 1;
	st = ert_session_create(m, &cfg, &s);
	unsetenv("ERT_OPENCL_TEST_BREAK");
	/* the op, its type and the backend named once, first */
	ok = st == ERT_STATUS_BACKEND && !s &&
	     !strncmp(ert_last_error(), "failed to create session: failed to plan: Relu 'node': "
					"opencl: building eltwise.cl for ", 81) &&
	     !strstr(strstr(ert_last_error(), "Relu 'node'") + 1, "Relu 'node'") &&
	     strstr(ert_last_error(), "CL_BUILD_PROGRAM_FAILURE") &&
	     strstr(ert_last_error(), "build log:") &&
	     strstr(ert_last_error(), "planted by ERT_OPENCL_TEST_BREAK");
	if (!ok)
		snprintf(why, len, "status %d, '%s'", (int)st, ert_last_error());
	ert_session_destroy(s);
	ert_model_unref(m);
	return ok;
}

/*
 * An input shape over a device limit: a MatMul of a batch of 65536 1x1
 * matrices takes one work-group along z per matrix on Vulkan, over the 65535
 * that lavapipe and most Vulkan devices allow. The backend's supports_op
 * refuses the node at that shape, so the plan puts it on the CPU and the run
 * gives the right products (*@reached true); a device that allows more runs
 * it itself. Either way the same session first runs a batch of 1 on the
 * device, and again after the big batch (plans are kept per input shape).
 */
static bool check_limit_fallback(const struct gpu *gp, bool *reached, char *why, size_t len)
{
	struct ert_graph *g = ert_graph_create();
	int64_t d[3] = { 1, 1, 1 }, big[3] = { 65536, 1, 1 };
	char placed[64], want[64];
	ert_model *m = NULL;
	ert_session *s = NULL;
	int32_t in[2], y;
	bool ok = false;

	*reached = false;
	if (!g)
		return false;
	g->opset = 17;
	for (int k = 0; k < 2; k++) {
		in[k] = ert_graph_add_tensor(g, k ? "b" : "a", ERT_DTYPE_FLOAT32, 3, d);
		g->tensors[in[k]].dims[0] = -1;
		g->tensors[in[k]].dim_names[0] = ert_graph_strdup(g, "batch");
		ert_graph_add_input(g, in[k]);
	}
	y = ert_graph_add_tensor(g, "y", ERT_DTYPE_UNDEFINED, -1, NULL);
	ert_graph_add_node(g, ERT_OP_MatMul, "node", 2, in, 1, &y);
	ert_graph_add_output(g, y);
	m = model_from_graph(g);
	s = m ? open_session_cfg(m, gp->type, ERT_LEVEL_NORMAL, ERT_FP16_GUARD_ON, why, len) : NULL;
	if (!s)
		goto out;
	/* batch 1, 65536, then 1 again: x = (i % 7) - 3 in both inputs, y = x * x */
	for (int pass = 0; pass < 3; pass++) {
		int64_t *shape = pass == 1 ? big : d, nb = shape[0];

		for (uint32_t k = 0; k < 2; k++) {
			if (ert_session_resize_input(s, k, 3, shape) != ERT_OK) {
				snprintf(why, len, "resize to %lld: %s", (long long)nb,
					 ert_session_error(s));
				goto out;
			}
			float *x = ert_tensor_data(ert_session_get_input(s, k));

			for (int64_t i = 0; x && i < nb; i++)
				x[i] = (float)(i % 7) - 3.0f;
		}
		if (ert_session_run(s) != ERT_OK) {
			snprintf(why, len, "batch %lld: %s", (long long)nb, ert_session_error(s));
			goto out;
		}
		if (!session_placement(s, placed, sizeof(placed))) {
			snprintf(why, len, "batch %lld: no placement", (long long)nb);
			goto out;
		}
		if (pass == 1)
			*reached = !strcmp(placed, "node=cpu");
		snprintf(want, sizeof(want), "node=%s", pass == 1 && *reached ? "cpu" : gp->name);
		if (strcmp(placed, want)) {
			snprintf(why, len, "batch %lld placed %s, expected %s", (long long)nb,
				 placed, want);
			goto out;
		}

		const float *o = ert_tensor_data(ert_session_get_output(s, 0));

		for (int64_t i = 0; i < nb; i++) {
			float v = (float)(i % 7) - 3.0f;

			if (!o || o[i] != v * v) {
				snprintf(why, len, "batch %lld on %s: y[%lld] = %g, expected %g",
					 (long long)nb, placed, (long long)i, o ? o[i] : 0.0,
					 (double)(v * v));
				goto out;
			}
		}
	}
	ok = true;
out:
	ert_session_destroy(s);
	ert_model_unref(m);
	return ok;
}

/*
 * A model built to overflow float16 in its middle (docs/opencl.md, "Precision
 * LOW"): x in [-1, 1) of [1, 64]; up = x * 500 (|up| <= 500); sq = up * up
 * (up to 250000, over float16's 65504); down = sq * 1e-4 (<= 25); relu;
 * y = relu x W (64 x 16, W in [-1, 1)). The guard must keep 'square' and
 * 'scale_down' in float32 and run the rest in float16.
 */
static struct ert_graph *overflow_graph(void)
{
	struct ert_graph *g = ert_graph_create();
	int64_t xd[2] = { 1, 64 }, wd[2] = { 64, 16 }, sd[1] = { 1 };
	int32_t x, c_up, up, sq, c_down, down, r, w, y;
	float *cu = malloc(4), *cd = malloc(4), *wv = malloc(64 * 16 * 4);
	uint32_t seed = 7;

	if (!g || !cu || !cd || !wv) {
		free(cu);
		free(cd);
		free(wv);
		ert_graph_destroy(g);
		return NULL;
	}
	g->opset = 13;
	*cu = 500.0f;
	*cd = 1e-4f;
	for (int i = 0; i < 64 * 16; i++) {
		seed = seed * 1664525u + 1013904223u;
		wv[i] = (float)(seed >> 8) / 8388608.0f - 1.0f;
	}
	x = ert_graph_add_tensor(g, "x", ERT_DTYPE_FLOAT32, 2, xd);
	ert_graph_add_input(g, x);
	c_up = ert_graph_add_tensor(g, "c_up", ERT_DTYPE_FLOAT32, 1, sd);
	ert_graph_set_const(g, c_up, cu, 4, true);
	c_down = ert_graph_add_tensor(g, "c_down", ERT_DTYPE_FLOAT32, 1, sd);
	ert_graph_set_const(g, c_down, cd, 4, true);
	w = ert_graph_add_tensor(g, "w", ERT_DTYPE_FLOAT32, 2, wd);
	ert_graph_set_const(g, w, wv, 64 * 16 * 4, true);
	up = ert_graph_add_tensor(g, "up", ERT_DTYPE_UNDEFINED, -1, NULL);
	sq = ert_graph_add_tensor(g, "sq", ERT_DTYPE_UNDEFINED, -1, NULL);
	down = ert_graph_add_tensor(g, "down", ERT_DTYPE_UNDEFINED, -1, NULL);
	r = ert_graph_add_tensor(g, "r", ERT_DTYPE_UNDEFINED, -1, NULL);
	y = ert_graph_add_tensor(g, "y", ERT_DTYPE_UNDEFINED, -1, NULL);
	int32_t i_up[2] = { x, c_up }, i_sq[2] = { up, up }, i_down[2] = { sq, c_down };
	int32_t i_mm[2] = { r, w };

	if (ert_graph_add_node(g, ERT_OP_Mul, "scale_up", 2, i_up, 1, &up) < 0 ||
	    ert_graph_add_node(g, ERT_OP_Mul, "square", 2, i_sq, 1, &sq) < 0 ||
	    ert_graph_add_node(g, ERT_OP_Mul, "scale_down", 2, i_down, 1, &down) < 0 ||
	    ert_graph_add_node(g, ERT_OP_Relu, "relu", 1, &down, 1, &r) < 0 ||
	    ert_graph_add_node(g, ERT_OP_MatMul, "matmul", 2, i_mm, 1, &y) < 0) {
		ert_graph_destroy(g);
		return NULL;
	}
	for (uint32_t i = 0; i < g->n_nodes; i++)
		g->nodes[i].opset = 13;
	ert_graph_add_output(g, y);
	return g;
}

/* Input values of the overflow model: x[i] spread over [-1, 1]. */
static void overflow_input(float *x)
{
	for (int i = 0; i < 64; i++)
		x[i] = -1.0f + (float)i * (2.0f / 63.0f);
}

static const char *const kept_by_guard[] = { "square", "scale_down" };

/* Does the plan of @s run each step as the guard should (@guard on) or all in fp16 (off)? */
static bool check_decision(ert_session *s, bool guard, char *why, size_t len)
{
	const struct ert_graph *g = s->model->graph;

	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct ert_node *n = &g->nodes[i];
		bool fp16, kept = false;
		const char *t;
		float max, bound;

		for (size_t k = 0; guard && k < 2; k++)
			kept = kept || !strcmp(n->name, kept_by_guard[k]);
		if (!ert_session_fp16_note(s, n, &fp16, &t, &max, &bound)) {
			snprintf(why, len, "%s: no precision LOW note (not in float16 storage?)", n->name);
			return false;
		}
		if (fp16 == kept || (kept && (!t || !(max >= bound)))) {
			snprintf(why, len, "%s: %s (tensor %s, max %g, bound %g), expected %s", n->name,
				 fp16 ? "fp16" : "fp32", t ? t : "-", (double)max, (double)bound,
				 kept ? "fp32" : "fp16");
			return false;
		}
	}
	return true;
}

/* Run the overflow model; *@bad_out: how many outputs are inf or NaN. */
static bool run_overflow(ert_session *s, ert_session *ref, int *bad_out, char *why, size_t len)
{
	float x[64];
	const ert_tensor *t;
	const float *y;

	overflow_input(x);
	if (ert_session_set_input(s, 0, ERT_DTYPE_FLOAT32, x, sizeof(x)) != ERT_OK ||
	    ert_session_set_input(ref, 0, ERT_DTYPE_FLOAT32, x, sizeof(x)) != ERT_OK ||
	    ert_session_run(s) != ERT_OK || ert_session_run(ref) != ERT_OK) {
		snprintf(why, len, "run: %s / %s", ert_session_error(s), ert_session_error(ref));
		return false;
	}
	t = ert_session_get_output(s, 0);
	y = ert_tensor_data(t);
	*bad_out = 0;
	for (size_t i = 0; i < ert_tensor_element_count(t); i++)
		*bad_out += !isfinite(y[i]);
	return true;
}

/*
 * The fp16 overflow guard on the overflow model, in float16 storage
 * ($ERT_OPENCL_F16=storage where the device lacks cl_khr_fp16): the guard
 * keeps the two ops around the overflow in float32 and the output matches
 * the CPU; with the guard off every op runs in float16 and the output holds
 * inf or NaN. Then LOW without float16 storage (ERT_OPENCL_F16=off,
 * ERT_VULKAN_F16=off): float32 throughout, within 1e-3 x max |ref|.
 */
/* Does the device store float16 for precision LOW by itself (cl_khr_fp16, 16-bit storage)? */
static bool native_fp16(ert_backend_type type)
{
	struct ert_err err = { "" };
	struct ert_backend *be = NULL;
	ert_config cfg;
	bool yes;

	ert_config_init(&cfg);
	cfg.precision = ERT_LEVEL_LOW;
	if (ert_backend_create(type, &cfg, &be, &err) != ERT_OK)
		return false;
	yes = ert_backend_fp16_storage(be);
	ert_backend_destroy(be);
	return yes;
}

static bool check_fp16_guard(const struct gpu *gp, char *why, size_t len)
{
	struct ert_graph *g = overflow_graph();
	ert_model *m = g ? model_from_graph(g) : NULL;
	const char *env = getenv(gp->f16_var);
	char *saved = env ? strdup(env) : NULL;
	ert_level prec = test_precision;
	ert_session *on = NULL, *off = NULL, *f32 = NULL, *ref = NULL;
	bool ok = false;
	int bad;

	if (!m)
		goto out;
	test_precision = ERT_LEVEL_LOW;
	/* a device with float16 storage uses it as is; OpenCL can give it to one without */
	if (saved && !strcmp(saved, "off"))
		unsetenv(gp->f16_var);
	if ((!saved || strcmp(saved, "storage")) && gp->f16_forced && !native_fp16(gp->type))
		setenv(gp->f16_var, "storage", 1);
	ref = open_session(m, ERT_BACKEND_CPU, why, len);
	on = ref ? open_session_cfg(m, gp->type, ERT_LEVEL_LOW, ERT_FP16_GUARD_ON, why, len) : NULL;
	off = on ? open_session_cfg(m, gp->type, ERT_LEVEL_LOW, ERT_FP16_GUARD_OFF, why, len) : NULL;
	if (!off)
		goto out;
	if (!check_decision(on, true, why, len) || !check_decision(off, false, why, len))
		goto out;
	if (!run_overflow(on, ref, &bad, why, len))
		goto out;
	if (bad) {
		snprintf(why, len, "guard on: %d outputs inf or NaN", bad);
		goto out;
	}
	if (!compare(on, ref, 0, why, len))
		goto out;
	if (!run_overflow(off, ref, &bad, why, len))
		goto out;
	if (!bad) {
		snprintf(why, len, "guard off: no inf or NaN in the output (does float16 overflow?)");
		goto out;
	}
	setenv(gp->f16_var, "off", 1);
	test_precision = ERT_LEVEL_NORMAL;   /* float32 storage: the fp32 tolerance */
	f32 = open_session_cfg(m, gp->type, ERT_LEVEL_LOW, ERT_FP16_GUARD_ON, why, len);
	if (!f32 || !run_overflow(f32, ref, &bad, why, len) || !compare(f32, ref, 0, why, len))
		goto out;
	ok = true;
out:
	if (saved)
		setenv(gp->f16_var, saved, 1);
	else
		unsetenv(gp->f16_var);
	free(saved);
	test_precision = prec;
	ert_session_destroy(on);
	ert_session_destroy(off);
	ert_session_destroy(f32);
	ert_session_destroy(ref);
	ert_model_unref(m);
	return ok;
}

/* --write-overflow-model FILE: the overflow model as an .ert file, for edgert run. */
static int write_overflow_model(const char *path)
{
	struct ert_graph *g = overflow_graph();
	struct ert_err err = { "" };
	ert_status st = g ? ert_format_write_file(g, NULL, path, &err) : ERT_STATUS_OUT_OF_MEMORY;

	ert_graph_destroy(g);
	if (st != ERT_OK) {
		fprintf(stderr, "test-backend-ops: failed to write %s: %s %s\n", path,
			ert_status_string(st), err.msg);
		return 1;
	}
	return 0;
}

/*
 * Every case of the table on @gp (cases whose description holds @filter and,
 * with @kinds, whose op is of one of those GPU kinds: a mask of
 * 1 << enum ert_gpu_kind).
 */
static void run_table(const struct gpu *gp, const char *filter, unsigned kinds,
		      const char *variant, int *passed, int *failed)
{
	char why[512];

	for (size_t i = 0; i < N_CASES; i++) {
		const struct op_case *c = &cases[i];
		const struct ert_gpu_op *g = ert_gpu_op_find(c->op);

		if (filter && !strstr(c->what, filter))
			continue;
		if (kinds && (!g || !(kinds & 1u << g->kind)))
			continue;
		why[0] = '\0';
		if (run_case(c, gp->type, why, sizeof(why))) {
			(*passed)++;
			printf("ok - %s%s %s: %s\n", gp->name, variant, ert_op_name(c->op), c->what);
		} else {
			(*failed)++;
			printf("not ok - %s%s %s: %s: %s\n", gp->name, variant, ert_op_name(c->op),
			       c->what, why);
		}
	}
}

/*
 * Vulkan's paths chosen from the device's features, the other way on the
 * cases they change (the table ran the device's choices, which its header
 * line "paths" names): the row reductions with the shared-memory tree
 * (ERT_VULKAN_SUBGROUP=off) where the device has subgroup arithmetic; in
 * LOW, the elementwise ops in float arithmetic (ERT_VULKAN_F16=storage)
 * where it has shaderFloat16. A variable already set keeps its one way.
 */
static void run_vk_paths(const struct gpu *gp, const char *filter, int *passed, int *failed)
{
	const unsigned rows = 1u << ERT_GPU_SOFTMAX | 1u << ERT_GPU_LAYERNORM |
			      1u << ERT_GPU_PLANE_REDUCE;
	const unsigned elt = 1u << ERT_GPU_UNARY | 1u << ERT_GPU_BINARY;

	if (!getenv("ERT_VULKAN_SUBGROUP")) {
		setenv("ERT_VULKAN_SUBGROUP", "off", 1);
		run_table(gp, filter, rows, " (reductions in shared memory)", passed, failed);
		unsetenv("ERT_VULKAN_SUBGROUP");
	}
	if (test_precision == ERT_LEVEL_LOW && !getenv("ERT_VULKAN_F16")) {
		setenv("ERT_VULKAN_F16", "storage", 1);
		run_table(gp, filter, elt, " (float arithmetic)", passed, failed);
		unsetenv("ERT_VULKAN_F16");
	}
}

#define CHECK(cond, okmsg, ...) do { \
	if (cond) { \
		passed++; \
		printf("ok - %s" okmsg "\n", gp->name); \
	} else { \
		failed++; \
		printf("not ok - %s", gp->name); \
		printf(__VA_ARGS__); \
	} \
} while (0)

int main(int argc, char **argv)
{
	const char *filter = argc > 1 ? argv[1] : NULL;
	const char *only = getenv("ERT_TEST_BACKENDS");
	int passed = 0, failed = 0, skipped = 0;
	char why[512];

	if (argc == 3 && !strcmp(argv[1], "--write-overflow-model"))
		return write_overflow_model(argv[2]);
	if (getenv("ERT_TEST_PRECISION") && !strcmp(getenv("ERT_TEST_PRECISION"), "low"))
		test_precision = ERT_LEVEL_LOW;
	for (size_t b = 0; b < sizeof(gpus) / sizeof(gpus[0]); b++) {
		const struct gpu *gp = &gpus[b];
		struct ert_err err = { "" };
		struct ert_backend *be = NULL;
		ert_config cfg;
		int claimed = 0;

		if (only && *only && !strstr(only, gp->name))
			continue;
		ert_config_init(&cfg);
		cfg.precision = test_precision;
		if (ert_backend_create(gp->type, &cfg, &be, &err) != ERT_OK) {
			for (size_t i = 0; i < N_CASES; i++)
				if (!filter || strstr(cases[i].what, filter))
					skipped++;
			printf("# %s: skipped (%s)\n", gp->name, err.msg);
			continue;
		}
		printf("# %s: %s\n", gp->name, gp->device(be));
		if (gp->type == ERT_BACKEND_VULKAN)
			printf("# %s paths: %s\n", gp->name, ert_vulkan_backend_paths(be));
		ert_backend_destroy(be);
		run_table(gp, filter, 0, "", &passed, &failed);
		if (gp->type == ERT_BACKEND_VULKAN && !getenv("ERT_VULKAN_GEMM")) {
			/* both GEMM shaders, whichever the device chose, on the GEMM ops' cases */
			static const char *const gemm_ops[] = { "Conv ", "Gemm ", "MatMul " };

			for (int v = 0; v < 2; v++) {
				setenv("ERT_VULKAN_GEMM", v ? "direct" : "tiled", 1);
				/* with a filter, its cases once on each shader */
				for (size_t k = 0; k < (filter ? 1 : 3); k++)
					run_table(gp, filter ? filter : gemm_ops[k], 0,
						  v ? " (gemm direct)" : " (gemm tiled)", &passed, &failed);
			}
			unsetenv("ERT_VULKAN_GEMM");
		}
		if (gp->type == ERT_BACKEND_VULKAN)
			run_vk_paths(gp, filter, &passed, &failed);
		if (filter)
			continue;
		{
			int f = check_coverage(gp, &claimed);

			failed += f;
			passed += !f;
		}
		printf("# %s claims %d op types\n", gp->name, claimed);
		CHECK(check_split(gp, why, sizeof(why)), "/cpu split: 4 copies per run, the CPU's answer",
		      "/cpu split: %s\n", why);
		CHECK(check_npu_split(gp, why, sizeof(why)),
		      "/npu split: the NPU's result read in place or copied (and counted), the CPU's answer",
		      "/npu split: %s\n", why);
		{
			bool reached;

			bool good = check_limit_fallback(gp, &reached, why, sizeof(why));

			passed += good;
			failed += !good;
			printf("%s - %s: an input shape over a device limit: %s\n",
			       good ? "ok" : "not ok", gp->name, !good ? why : reached ?
			       "the node runs on the CPU at that shape, on the device at batch 1, the right products" :
			       "the device takes it (limit not reached), the right products");
		}
		if (gp->type == ERT_BACKEND_OPENCL) {
			CHECK(check_build_failure(why, sizeof(why)),
			      ": a kernel that fails to build: the session says where and why",
			      ": a kernel that fails to build: %s\n", why);
		}
		if (!gp->f16_forced && !native_fp16(gp->type)) {
			skipped++;
			printf("# %s: fp16 guard skipped (no float16 storage on this device)\n", gp->name);
		} else {
			CHECK(check_fp16_guard(gp, why, sizeof(why)),
			      ": fp16 guard: the overflow model's square and scale_down kept in fp32, the CPU's answer; inf/NaN with the guard off; LOW without fp16 storage within 1e-3",
			      ": fp16 guard: %s\n", why);
		}
		CHECK(check_device_variable(gp, why, sizeof(why)),
		      ": the device variable: bad values refused with a reason, the first device runs",
		      ": the device variable: %s\n", why);
	}
	printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
	return failed ? 1 : 0;
}
