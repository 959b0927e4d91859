/* SPDX-License-Identifier: MIT */
/*
 * Hostile models (issue 14): every integer attribute of every op, and every
 * input that shape inference reads for its value, gets the extreme integers
 * (0, +-1, +-2, the int32 and int64 limits, 2^31, 2^32, +-2^62) one at a time.
 *
 * Each model goes two ways: as an ONNX file through the importer and its
 * clean-up passes, then as .ert; and straight into an .ert file, as a
 * hand-made or damaged file gives it to the loader. Either way the outcome
 * must be an error whose message names the node and the attribute (or input),
 * or a plan and a run that finish, with the right values where the row says
 * what they are. Under ASan+UBSan (11-unit-asan) any overflow, negation of
 * INT64_MIN or bad access stops the program.
 *
 * A second table plants the same values in one declared dim of a graph input
 * (dim_rows), alone and with a dim beside it 0 (no elements, extreme dims):
 * the model must be refused naming the input or the node, or run. A model
 * that takes more than ALARM_SECONDS to plan and run fails the program.
 *
 * Each row first runs with its ordinary value, which must plan and run: a row
 * that fails for another reason would make its extreme cases say nothing.
 *
 * Usage: test-hostile-attrs [filter]      rows whose "OpN.target[i]" holds filter
 *        test-hostile-attrs --list        the rows' names
 *        test-hostile-attrs --onnx DIR    write each row's ordinary model as
 *                                         DIR/hostile-<row>.onnx (fuzz seeds)
 *        test-hostile-attrs --ert DIR     the same as .ert files
 *        test-hostile-attrs --write ROW VALUE FILE
 *                                         one row's model with VALUE planted, as
 *                                         FILE (.onnx or .ert), to try by hand
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "edgert.h"
#include "ert-graph.h"
#include "ert-test-onnx-write.h"
#include "format/ert-format.h"
#include "onnx/onnx-import.h"

#define F32 ERT_DTYPE_FLOAT32
#define I64 ERT_DTYPE_INT64
#define I32 ERT_DTYPE_INT32
#define U8 ERT_DTYPE_UINT8

enum { IN_NONE, IN_X, IN_CONST };

struct tin {
	const char *name; /* NULL ends the list */
	ert_dtype dt;
	int32_t rank;
	int64_t dims[4];
	int kind;         /* IN_X: graph input 0, 1, 2, ...; IN_CONST: constant */
	int64_t vals[8];  /* IN_CONST of an integer type: the values (float: 0, 1, 2, ...) */
};

struct tattr {
	const char *name; /* NULL ends the list */
	enum ert_attr_type type;
	uint32_t n;
	int64_t i[8];
	float f;
	const char *s;
};

struct hrow;
/* Check a finished run with @v planted; print why and return false when wrong. */
typedef bool (*check_fn)(const struct hrow *r, int64_t v, ert_session *s);

struct hrow {
	const char *op;
	int opset;
	const char *target; /* an attribute in attr[] or a constant input in in[] */
	int pos;            /* which entry of an INTS attribute or input gets the value */
	struct tin in[9];
	struct tattr attr[8];
	int n_out;
	check_fn check;
};

#define X(nm, dt, r, ...) { nm, dt, r, { __VA_ARGS__ }, IN_X, { 0 } }
#define CF(nm, r, ...) { nm, F32, r, { __VA_ARGS__ }, IN_CONST, { 0 } }
/* an integer constant: name, dtype, rank, dims (one set of braces), values */
#define CI(nm, dt, r, dims, ...) { nm, dt, r, dims, IN_CONST, { __VA_ARGS__ } }
#define NONE { "", F32, 0, { 0 }, IN_NONE, { 0 } }
#define D(...) { __VA_ARGS__ }
#define AI(nm, v) { nm, ERT_ATTR_INT, 1, { v }, 0, NULL }
#define AIS(nm, n, ...) { nm, ERT_ATTR_INTS, n, { __VA_ARGS__ }, 0, NULL }
#define AF(nm, v) { nm, ERT_ATTR_FLOAT, 1, { 0 }, v, NULL }
#define ASTR(nm, v) { nm, ERT_ATTR_STRING, 1, { 0 }, 0, v }
#define NOATTR { NULL, ERT_ATTR_UNDEFINED, 0, { 0 }, 0, NULL }

static const int64_t extremes[] = {
	0, 1, -1, 2, -2,
	INT32_MAX, INT32_MIN, (int64_t)1 << 31, (int64_t)1 << 32, -((int64_t)1 << 32),
	(int64_t)1 << 62, -((int64_t)1 << 62), INT64_MAX, INT64_MIN, INT64_MIN + 1,
};

/* ---- checks of results that extreme values still define ---- */

static const void *out_data(ert_session *s, uint32_t k, int64_t *numel)
{
	const ert_tensor *t = ert_session_get_output(s, k);

	*numel = t ? (int64_t)ert_tensor_element_count(t) : -1;
	return t ? ert_tensor_data(t) : NULL;
}

/* EyeLike of a 3x4 input: 1 where column - row == k. */
static bool check_eye(const struct hrow *r, int64_t k, ert_session *s)
{
	int64_t n;
	const float *y = out_data(s, 0, &n);

	if (n != 12)
		return false;
	for (int64_t i = 0; i < 3; i++)
		for (int64_t j = 0; j < 4; j++)
			if (y[i * 4 + j] != ((k >= -2 && k <= 3 && j - i == k) ? 1.0f : 0.0f)) {
				printf("    EyeLike k=%lld: y[%lld][%lld] = %g\n", (long long)k,
				       (long long)i, (long long)j, (double)y[i * 4 + j]);
				return false;
			}
	return true;
}

/* Trilu (upper) of a 3x4 input holding 0..11: keeps column - row >= k. */
static bool check_trilu(const struct hrow *r, int64_t k, ert_session *s)
{
	int64_t n;
	const float *y = out_data(s, 0, &n);

	if (n != 12)
		return false;
	for (int64_t i = 0; i < 3; i++)
		for (int64_t j = 0; j < 4; j++) {
			bool keep = k <= -3 || (k <= 3 && j - i >= k);

			if (y[i * 4 + j] != (keep ? (float)(i * 4 + j) : 0.0f)) {
				printf("    Trilu k=%lld: y[%lld][%lld] = %g\n", (long long)k,
				       (long long)i, (long long)j, (double)y[i * 4 + j]);
				return false;
			}
		}
	return true;
}

/* Shape of a rank-4 input [1, 2, 3, 4] with start or end = v (the other default). */
static bool check_shape(const struct hrow *r, int64_t v, ert_session *s)
{
	static const int64_t dims[4] = { 1, 2, 3, 4 };
	int64_t start = 0, end = 4, n;
	const int64_t *y = out_data(s, 0, &n);

	if (!strcmp(r->target, "start"))
		start = v < -4 ? 0 : v < 0 ? v + 4 : v > 4 ? 4 : v;
	else
		end = v < -4 ? 0 : v < 0 ? v + 4 : v > 4 ? 4 : v;
	if (n != (end > start ? end - start : 0)) {
		printf("    Shape %s=%lld: %lld values\n", r->target, (long long)v, (long long)n);
		return false;
	}
	for (int64_t i = 0; i < n; i++)
		if (y[i] != dims[start + i])
			return false;
	return true;
}

/* Slice of x = 0..9 (1-D) with starts [v] or ends [v] (the other 1 or 8), step 1. */
static bool check_slice(const struct hrow *r, int64_t v, ert_session *s)
{
	int64_t b = 1, e = 8, n;
	const float *y = out_data(s, 0, &n);

	if (!strcmp(r->target, "starts"))
		b = v < -10 ? 0 : v < 0 ? v + 10 : v > 10 ? 10 : v;
	else
		e = v < -10 ? 0 : v < 0 ? v + 10 : v > 10 ? 10 : v;
	if (n != (e > b ? e - b : 0)) {
		printf("    Slice %s=%lld: %lld values\n", r->target, (long long)v, (long long)n);
		return false;
	}
	for (int64_t i = 0; i < n; i++)
		if (y[i] != (float)(b + i))
			return false;
	return true;
}

/* LRN over 3 channels of 0..11 (1x3x2x2): a window wider than C sums every channel. */
static bool check_lrn(const struct hrow *r, int64_t size, ert_session *s)
{
	int64_t n;
	const float *y = out_data(s, 0, &n);

	if (n != 12)
		return false;
	for (int64_t c = 0; c < 3; c++)
		for (int64_t p = 0; p < 4; p++) {
			int64_t lo = c - (size - 1) / 2, hi = c + size / 2;
			double sq = 0, x = (double)(c * 4 + p), want;

			for (int64_t k = lo < 0 ? 0 : lo; k <= (hi > 2 ? 2 : hi); k++)
				sq += (double)(k * 4 + p) * (double)(k * 4 + p);
			want = x / pow(1.0 + 1e-4 / (double)size * sq, 0.75);
			if (fabs(y[c * 4 + p] - want) > 1e-4 * (fabs(want) + 1)) {
				printf("    LRN size=%lld: y[%lld] = %g, want %g\n", (long long)size,
				       (long long)(c * 4 + p), (double)y[c * 4 + p], want);
				return false;
			}
		}
	return true;
}

/* ---- the table ---- */

#define CONV_W CF("W", 4, 4, 2, 3, 3)
#define CONVT_W CF("W", 4, 2, 3, 3, 3)
#define QSCALE(nm) CF(nm, 0, 0)
#define QZP(nm) CI(nm, U8, 0, D(0), 0)

static const struct hrow rows[] = {
	/* the three cases of the issue */
	{ "ConvTranspose", 11, "output_shape", 0, { X("X", F32, 4, 1, 2, 3, 3), CONVT_W },
	  { AIS("output_shape", 2, 7, 7), AIS("strides", 2, 2, 2) }, 1, NULL },
	{ "EyeLike", 17, "k", 0, { X("x", F32, 2, 3, 4) }, { AI("k", 1) }, 1, check_eye },
	{ "LRN", 13, "size", 0, { X("X", F32, 4, 1, 3, 2, 2) }, { AI("size", 3) }, 1, check_lrn },

	/* convolution and pooling geometry */
	{ "ConvTranspose", 11, "output_shape", 1, { X("X", F32, 4, 1, 2, 3, 3), CONVT_W },
	  { AIS("output_shape", 2, 7, 7), AIS("strides", 2, 2, 2) }, 1, NULL },
	{ "ConvTranspose", 11, "strides", 0, { X("X", F32, 4, 1, 2, 3, 3), CONVT_W },
	  { AIS("strides", 2, 2, 2) }, 1, NULL },
	{ "ConvTranspose", 11, "dilations", 1, { X("X", F32, 4, 1, 2, 3, 3), CONVT_W },
	  { AIS("dilations", 2, 1, 1) }, 1, NULL },
	{ "ConvTranspose", 11, "pads", 0, { X("X", F32, 4, 1, 2, 3, 3), CONVT_W },
	  { AIS("pads", 4, 1, 1, 1, 1) }, 1, NULL },
	{ "ConvTranspose", 11, "pads", 3, { X("X", F32, 4, 1, 2, 3, 3), CONVT_W },
	  { AIS("pads", 4, 1, 1, 1, 1) }, 1, NULL },
	{ "ConvTranspose", 11, "output_padding", 0, { X("X", F32, 4, 1, 2, 3, 3), CONVT_W },
	  { AIS("output_padding", 2, 1, 1), AIS("strides", 2, 2, 2) }, 1, NULL },
	{ "ConvTranspose", 11, "group", 0, { X("X", F32, 4, 1, 2, 3, 3), CONVT_W },
	  { AI("group", 1) }, 1, NULL },
	{ "ConvTranspose", 11, "kernel_shape", 0, { X("X", F32, 4, 1, 2, 3, 3), CONVT_W },
	  { AIS("kernel_shape", 2, 3, 3) }, 1, NULL },
	{ "Conv", 11, "strides", 0, { X("X", F32, 4, 1, 2, 5, 5), CONV_W },
	  { AIS("strides", 2, 1, 1) }, 1, NULL },
	{ "Conv", 11, "dilations", 1, { X("X", F32, 4, 1, 2, 5, 5), CONV_W },
	  { AIS("dilations", 2, 1, 1) }, 1, NULL },
	{ "Conv", 11, "pads", 0, { X("X", F32, 4, 1, 2, 5, 5), CONV_W },
	  { AIS("pads", 4, 1, 1, 1, 1) }, 1, NULL },
	{ "Conv", 11, "pads", 2, { X("X", F32, 4, 1, 2, 5, 5), CONV_W },
	  { AIS("pads", 4, 1, 1, 1, 1) }, 1, NULL },
	{ "Conv", 11, "group", 0, { X("X", F32, 4, 1, 2, 5, 5), CONV_W }, { AI("group", 1) }, 1,
	  NULL },
	{ "Conv", 11, "kernel_shape", 1, { X("X", F32, 4, 1, 2, 5, 5), CONV_W },
	  { AIS("kernel_shape", 2, 3, 3) }, 1, NULL },
	{ "Conv", 11, "ert.act", 0, { X("X", F32, 4, 1, 2, 5, 5), CONV_W }, { AI("ert.act", 1) },
	  1, NULL },
	{ "MaxPool", 12, "kernel_shape", 0, { X("X", F32, 4, 1, 1, 5, 5) },
	  { AIS("kernel_shape", 2, 2, 2) }, 1, NULL },
	{ "MaxPool", 12, "strides", 1, { X("X", F32, 4, 1, 1, 5, 5) },
	  { AIS("kernel_shape", 2, 2, 2), AIS("strides", 2, 1, 1) }, 1, NULL },
	{ "MaxPool", 12, "pads", 0, { X("X", F32, 4, 1, 1, 5, 5) },
	  { AIS("kernel_shape", 2, 2, 2), AIS("pads", 4, 1, 1, 1, 1) }, 1, NULL },
	{ "MaxPool", 12, "dilations", 0, { X("X", F32, 4, 1, 1, 5, 5) },
	  { AIS("kernel_shape", 2, 2, 2), AIS("dilations", 2, 1, 1) }, 1, NULL },
	{ "MaxPool", 12, "ceil_mode", 0, { X("X", F32, 4, 1, 1, 5, 5) },
	  { AIS("kernel_shape", 2, 2, 2), AIS("strides", 2, 2, 2), AI("ceil_mode", 1) }, 1, NULL },
	{ "MaxPool", 12, "storage_order", 0, { X("X", F32, 4, 1, 1, 5, 5) },
	  { AIS("kernel_shape", 2, 2, 2), AI("storage_order", 1) }, 2, NULL },
	{ "AveragePool", 19, "kernel_shape", 1, { X("X", F32, 4, 1, 1, 5, 5) },
	  { AIS("kernel_shape", 2, 2, 2) }, 1, NULL },
	{ "AveragePool", 19, "pads", 1, { X("X", F32, 4, 1, 1, 5, 5) },
	  { AIS("kernel_shape", 2, 2, 2), AIS("pads", 4, 1, 1, 1, 1) }, 1, NULL },
	{ "AveragePool", 19, "count_include_pad", 0, { X("X", F32, 4, 1, 1, 5, 5) },
	  { AIS("kernel_shape", 2, 2, 2), AIS("pads", 4, 1, 1, 1, 1), AI("count_include_pad", 1) },
	  1, NULL },
	{ "AveragePool", 19, "strides", 0, { X("X", F32, 3, 1, 1, 5) },
	  { AIS("kernel_shape", 1, 2), AIS("strides", 1, 2) }, 1, NULL },
	{ "LpPool", 18, "p", 0, { X("X", F32, 4, 1, 1, 4, 4) },
	  { AIS("kernel_shape", 2, 2, 2), AI("p", 2) }, 1, NULL },
	{ "LpPool", 18, "kernel_shape", 0, { X("X", F32, 4, 1, 1, 4, 4) },
	  { AIS("kernel_shape", 2, 2, 2) }, 1, NULL },
	{ "GlobalLpPool", 2, "p", 0, { X("X", F32, 4, 1, 2, 3, 3) }, { AI("p", 2) }, 1, NULL },
	{ "Gemm", 13, "transA", 0, { X("A", F32, 2, 3, 3), CF("B", 2, 3, 4) }, { AI("transA", 0) }, 1,
	  NULL },
	{ "Gemm", 13, "transB", 0, { X("A", F32, 2, 2, 3), CF("B", 2, 4, 3) }, { AI("transB", 1) }, 1,
	  NULL },

	/* normalisation */
	{ "Softmax", 13, "axis", 0, { X("x", F32, 2, 2, 3) }, { AI("axis", 1) }, 1, NULL },
	{ "LogSoftmax", 13, "axis", 0, { X("x", F32, 2, 2, 3) }, { AI("axis", -1) }, 1, NULL },
	{ "Hardmax", 11, "axis", 0, { X("x", F32, 2, 2, 3) }, { AI("axis", 1) }, 1, NULL },
	{ "LayerNormalization", 17, "axis", 0, { X("X", F32, 2, 2, 3), CF("Scale", 1, 3) },
	  { AI("axis", -1) }, 1, NULL },
	{ "LayerNormalization", 17, "stash_type", 0, { X("X", F32, 2, 2, 3), CF("Scale", 1, 3) },
	  { AI("stash_type", 1) }, 1, NULL },
	{ "BatchNormalization", 15, "training_mode", 0,
	  { X("X", F32, 4, 1, 2, 2, 2), CF("scale", 1, 2), CF("B", 1, 2), CF("mean", 1, 2),
	    CF("var", 1, 2) },
	  { AI("training_mode", 0) }, 1, NULL },
	{ "GroupNormalization", 18, "num_groups", 0,
	  { X("X", F32, 4, 1, 4, 2, 2), CF("scale", 1, 2), CF("bias", 1, 2) },
	  { AI("num_groups", 2) }, 1, NULL },
	{ "LpNormalization", 1, "p", 0, { X("x", F32, 2, 2, 3) }, { AI("p", 2) }, 1, NULL },
	{ "LpNormalization", 1, "axis", 0, { X("x", F32, 2, 2, 3) }, { AI("axis", -1) }, 1, NULL },
	{ "MeanVarianceNormalization", 13, "axes", 1, { X("X", F32, 4, 1, 2, 2, 2) },
	  { AIS("axes", 3, 0, 2, 3) }, 1, NULL },

	/* reductions */
	{ "ReduceSum", 13, "axes", 0, { X("data", F32, 2, 2, 3), CI("axes", I64, 1, D(1), 1) },
	  { NOATTR }, 1, NULL },
	{ "ReduceSum", 13, "keepdims", 0, { X("data", F32, 2, 2, 3), CI("axes", I64, 1, D(1), 1) },
	  { AI("keepdims", 1) }, 1, NULL },
	{ "ReduceSum", 13, "noop_with_empty_axes", 0, { X("data", F32, 2, 2, 3) },
	  { AI("noop_with_empty_axes", 0) }, 1, NULL },
	{ "ReduceMean", 13, "axes", 0, { X("data", F32, 2, 2, 3) }, { AIS("axes", 1, 1) }, 1, NULL },
	{ "ReduceMax", 18, "axes", 0, { X("data", F32, 2, 2, 3), CI("axes", I64, 1, D(1), 0) },
	  { NOATTR }, 1, NULL },
	{ "ArgMax", 13, "axis", 0, { X("data", F32, 2, 2, 3) }, { AI("axis", 1) }, 1, NULL },
	{ "ArgMin", 13, "keepdims", 0, { X("data", F32, 2, 2, 3) }, { AI("keepdims", 1) }, 1, NULL },
	{ "ArgMax", 13, "select_last_index", 0, { X("data", F32, 2, 2, 3) },
	  { AI("select_last_index", 0) }, 1, NULL },
	{ "CumSum", 14, "axis", 0, { X("x", F32, 2, 2, 3), CI("axis", I64, 0, D(0), 1) },
	  { NOATTR }, 1, NULL },
	{ "CumSum", 14, "exclusive", 0, { X("x", F32, 2, 2, 3), CI("axis", I64, 0, D(0), 1) },
	  { AI("exclusive", 0) }, 1, NULL },
	{ "CumSum", 14, "reverse", 0, { X("x", F32, 2, 2, 3), CI("axis", I64, 0, D(0), 1) },
	  { AI("reverse", 0) }, 1, NULL },
	{ "TopK", 11, "K", 0, { X("X", F32, 2, 2, 5), CI("K", I64, 1, D(1), 2) }, { NOATTR }, 2,
	  NULL },
	{ "TopK", 11, "axis", 0, { X("X", F32, 2, 2, 5), CI("K", I64, 1, D(1), 2) },
	  { AI("axis", -1) }, 2, NULL },
	{ "TopK", 11, "largest", 0, { X("X", F32, 2, 2, 5), CI("K", I64, 1, D(1), 2) },
	  { AI("largest", 1) }, 2, NULL },
	{ "TopK", 11, "sorted", 0, { X("X", F32, 2, 2, 5), CI("K", I64, 1, D(1), 2) },
	  { AI("sorted", 1) }, 2, NULL },

	/* movement and shapes */
	{ "Flatten", 13, "axis", 0, { X("input", F32, 3, 2, 3, 4) }, { AI("axis", 1) }, 1, NULL },
	{ "Reshape", 14, "shape", 0, { X("data", F32, 2, 2, 6), CI("shape", I64, 1, D(2), 3, 4) },
	  { NOATTR }, 1, NULL },
	{ "Reshape", 14, "shape", 1, { X("data", F32, 2, 2, 6), CI("shape", I64, 1, D(2), 3, -1) },
	  { NOATTR }, 1, NULL },
	{ "Reshape", 14, "allowzero", 0,
	  { X("data", F32, 2, 2, 6), CI("shape", I64, 1, D(2), 3, 4) }, { AI("allowzero", 0) }, 1,
	  NULL },
	{ "Transpose", 13, "perm", 0, { X("data", F32, 3, 2, 3, 4) }, { AIS("perm", 3, 2, 0, 1) }, 1,
	  NULL },
	{ "Squeeze", 11, "axes", 0, { X("data", F32, 3, 2, 1, 4) }, { AIS("axes", 1, 1) }, 1, NULL },
	{ "Squeeze", 13, "axes", 0, { X("data", F32, 3, 2, 1, 4), CI("axes", I64, 1, D(1), 1) },
	  { NOATTR }, 1, NULL },
	{ "Unsqueeze", 11, "axes", 0, { X("data", F32, 2, 2, 4) }, { AIS("axes", 1, 1) }, 1, NULL },
	{ "Unsqueeze", 13, "axes", 0, { X("data", F32, 2, 2, 4), CI("axes", I64, 1, D(1), 0) },
	  { NOATTR }, 1, NULL },
	{ "Concat", 13, "axis", 0, { X("a", F32, 2, 2, 3), X("b", F32, 2, 2, 3) }, { AI("axis", 1) },
	  1, NULL },
	{ "Split", 13, "axis", 0, { X("input", F32, 2, 2, 4) }, { AI("axis", 1) }, 2, NULL },
	{ "Split", 13, "split", 0, { X("input", F32, 2, 2, 5), CI("split", I64, 1, D(2), 2, 3) },
	  { AI("axis", 1) }, 2, NULL },
	{ "Split", 13, "split", 1, { X("input", F32, 2, 2, 5), CI("split", I64, 1, D(2), 2, 3) },
	  { AI("axis", 1) }, 2, NULL },
	{ "Split", 11, "split", 1, { X("input", F32, 2, 2, 5) },
	  { AI("axis", 1), AIS("split", 2, 2, 3) }, 2, NULL },
	{ "Split", 18, "num_outputs", 0, { X("input", F32, 2, 2, 5) },
	  { AI("axis", 1), AI("num_outputs", 2) }, 2, NULL },
	{ "Slice", 13, "starts", 0,
	  { X("data", F32, 1, 10), CI("starts", I64, 1, D(1), 1), CI("ends", I64, 1, D(1), 8) },
	  { NOATTR }, 1, check_slice },
	{ "Slice", 13, "ends", 0,
	  { X("data", F32, 1, 10), CI("starts", I64, 1, D(1), 1), CI("ends", I64, 1, D(1), 8) },
	  { NOATTR }, 1, check_slice },
	{ "Slice", 13, "axes", 0,
	  { X("data", F32, 2, 3, 10), CI("starts", I64, 1, D(1), 1), CI("ends", I64, 1, D(1), 8),
	    CI("axes", I64, 1, D(1), 1) },
	  { NOATTR }, 1, NULL },
	{ "Slice", 13, "steps", 0,
	  { X("data", F32, 1, 10), CI("starts", I64, 1, D(1), 1), CI("ends", I64, 1, D(1), 8),
	    CI("axes", I64, 1, D(1), 0), CI("steps", I64, 1, D(1), 2) },
	  { NOATTR }, 1, NULL },
	{ "Slice", 18, "steps", 0,
	  { X("data", F32, 1, 10), CI("starts", I64, 1, D(1), -1), CI("ends", I64, 1, D(1), -100),
	    CI("axes", I64, 1, D(1), 0), CI("steps", I64, 1, D(1), -1) },
	  { NOATTR }, 1, NULL },
	{ "Slice", 9, "starts", 0, { X("data", F32, 1, 10) },
	  { AIS("starts", 1, 1), AIS("ends", 1, 8) }, 1, NULL },
	{ "Slice", 9, "ends", 0, { X("data", F32, 1, 10) },
	  { AIS("starts", 1, -3), AIS("ends", 1, 8) }, 1, NULL },
	{ "Slice", 9, "axes", 0, { X("data", F32, 1, 10) },
	  { AIS("starts", 1, 1), AIS("ends", 1, 8), AIS("axes", 1, 0) }, 1, NULL },
	{ "Gather", 13, "axis", 0, { X("data", F32, 2, 3, 4), CI("indices", I64, 1, D(2), 0, 2) },
	  { AI("axis", 1) }, 1, NULL },
	{ "Gather", 13, "indices", 1,
	  { X("data", F32, 2, 3, 4), CI("indices", I64, 1, D(2), 0, 2) }, { AI("axis", 1) }, 1,
	  NULL },
	{ "GatherElements", 13, "axis", 0,
	  { X("data", F32, 2, 3, 4), CI("indices", I64, 2, D(3, 4), 0, 1, 2, 0) },
	  { AI("axis", 0) }, 1, NULL },
	{ "GatherElements", 13, "indices", 2,
	  { X("data", F32, 2, 3, 4), CI("indices", I64, 2, D(1, 4), 0, 1, 2, 0) },
	  { AI("axis", 0) }, 1, NULL },
	{ "GatherND", 13, "batch_dims", 0,
	  { X("data", F32, 3, 2, 3, 4), CI("indices", I64, 2, D(2, 1), 1, 2) },
	  { AI("batch_dims", 1) }, 1, NULL },
	{ "GatherND", 13, "indices", 1,
	  { X("data", F32, 3, 2, 3, 4), CI("indices", I64, 2, D(2, 1), 1, 2) },
	  { AI("batch_dims", 1) }, 1, NULL },
	{ "ScatterElements", 16, "axis", 0,
	  { X("data", F32, 2, 3, 4), CI("indices", I64, 2, D(1, 2), 1, 3), X("updates", F32, 2, 1, 2) },
	  { AI("axis", 1) }, 1, NULL },
	{ "ScatterElements", 16, "indices", 1,
	  { X("data", F32, 2, 3, 4), CI("indices", I64, 2, D(1, 2), 1, 3), X("updates", F32, 2, 1, 2) },
	  { AI("axis", 1) }, 1, NULL },
	{ "ScatterND", 16, "indices", 0,
	  { X("data", F32, 2, 3, 4), CI("indices", I64, 2, D(1, 2), 1, 3), X("updates", F32, 1, 1) },
	  { NOATTR }, 1, NULL },
	{ "Expand", 13, "shape", 0, { X("input", F32, 2, 3, 1), CI("shape", I64, 1, D(2), 3, 4) },
	  { NOATTR }, 1, NULL },
	{ "Expand", 13, "shape", 1, { X("input", F32, 2, 3, 1), CI("shape", I64, 1, D(2), 3, 4) },
	  { NOATTR }, 1, NULL },
	{ "Tile", 13, "repeats", 0, { X("input", F32, 2, 2, 3), CI("repeats", I64, 1, D(2), 2, 1) },
	  { NOATTR }, 1, NULL },
	{ "Pad", 13, "pads", 1,
	  { X("data", F32, 2, 2, 3), CI("pads", I64, 1, D(4), 0, 1, 0, 1) }, { NOATTR }, 1, NULL },
	{ "Pad", 13, "pads", 3,
	  { X("data", F32, 2, 2, 3), CI("pads", I64, 1, D(4), 0, 1, 0, -1) },
	  { ASTR("mode", "reflect") }, 1, NULL },
	{ "Pad", 18, "axes", 0,
	  { X("data", F32, 2, 2, 3), CI("pads", I64, 1, D(2), 1, 1), NONE,
	    CI("axes", I64, 1, D(1), 1) },
	  { ASTR("mode", "edge") }, 1, NULL },
	{ "Pad", 2, "pads", 2, { X("data", F32, 2, 2, 3) }, { AIS("pads", 4, 0, 1, 0, 1) }, 1, NULL },
	{ "CenterCropPad", 18, "shape", 0,
	  { X("input_data", F32, 2, 3, 4), CI("shape", I64, 1, D(2), 2, 5) }, { NOATTR }, 1, NULL },
	{ "CenterCropPad", 18, "axes", 0,
	  { X("input_data", F32, 2, 3, 4), CI("shape", I64, 1, D(1), 5) }, { AIS("axes", 1, 1) }, 1,
	  NULL },
	{ "Resize", 19, "sizes", 2,
	  { X("X", F32, 4, 1, 1, 2, 2), NONE, NONE, CI("sizes", I64, 1, D(4), 1, 1, 4, 4) },
	  { NOATTR }, 1, NULL },
	{ "Resize", 19, "axes", 0,
	  { X("X", F32, 4, 1, 1, 2, 2), NONE, NONE, CI("sizes", I64, 1, D(2), 4, 4) },
	  { AIS("axes", 2, 2, 3) }, 1, NULL },
	{ "Resize", 19, "antialias", 0,
	  { X("X", F32, 4, 1, 1, 4, 4), NONE, NONE, CI("sizes", I64, 1, D(4), 1, 1, 2, 2) },
	  { AI("antialias", 1), ASTR("mode", "linear") }, 1, NULL },
	{ "Resize", 19, "exclude_outside", 0,
	  { X("X", F32, 4, 1, 1, 2, 2), NONE, NONE, CI("sizes", I64, 1, D(4), 1, 1, 4, 4) },
	  { AI("exclude_outside", 1), ASTR("mode", "cubic") }, 1, NULL },
	{ "GridSample", 16, "align_corners", 0,
	  { X("X", F32, 4, 1, 1, 3, 3), X("grid", F32, 4, 1, 2, 2, 2) }, { AI("align_corners", 0) },
	  1, NULL },
	{ "AffineGrid", 20, "size", 2, { X("theta", F32, 3, 1, 2, 3), CI("size", I64, 1, D(4), 1, 1, 2, 3) },
	  { NOATTR }, 1, NULL },
	{ "AffineGrid", 20, "align_corners", 0,
	  { X("theta", F32, 3, 1, 2, 3), CI("size", I64, 1, D(4), 1, 1, 2, 3) },
	  { AI("align_corners", 0) }, 1, NULL },
	{ "RoiAlign", 16, "output_height", 0,
	  { X("X", F32, 4, 1, 1, 4, 4), CF("rois", 2, 1, 4), CI("batch_indices", I64, 1, D(1), 0) },
	  { AI("output_height", 2) }, 1, NULL },
	{ "RoiAlign", 16, "output_width", 0,
	  { X("X", F32, 4, 1, 1, 4, 4), CF("rois", 2, 1, 4), CI("batch_indices", I64, 1, D(1), 0) },
	  { AI("output_width", 2) }, 1, NULL },
	{ "RoiAlign", 16, "sampling_ratio", 0,
	  { X("X", F32, 4, 1, 1, 4, 4), CF("rois", 2, 1, 4), CI("batch_indices", I64, 1, D(1), 0) },
	  { AI("sampling_ratio", 2) }, 1, NULL },
	{ "RoiAlign", 16, "batch_indices", 0,
	  { X("X", F32, 4, 1, 1, 4, 4), CF("rois", 2, 1, 4), CI("batch_indices", I64, 1, D(1), 0) },
	  { NOATTR }, 1, NULL },
	{ "Shape", 15, "start", 0, { X("data", F32, 4, 1, 2, 3, 4) }, { AI("start", 1) }, 1,
	  check_shape },
	{ "Shape", 15, "end", 0, { X("data", F32, 4, 1, 2, 3, 4) }, { AI("end", -1) }, 1,
	  check_shape },
	{ "ConstantOfShape", 9, "input", 1, { CI("input", I64, 1, D(2), 2, 3) }, { NOATTR }, 1,
	  NULL },
	{ "Range", 11, "limit", 0,
	  { CI("start", I64, 0, D(0), 1), CI("limit", I64, 0, D(0), 9), CI("delta", I64, 0, D(0), 2) },
	  { NOATTR }, 1, NULL },
	{ "Range", 11, "start", 0,
	  { CI("start", I64, 0, D(0), 1), CI("limit", I64, 0, D(0), 9), CI("delta", I64, 0, D(0), 2) },
	  { NOATTR }, 1, NULL },
	{ "Range", 11, "delta", 0,
	  { CI("start", I64, 0, D(0), 1), CI("limit", I64, 0, D(0), 9), CI("delta", I64, 0, D(0), 2) },
	  { NOATTR }, 1, NULL },
	{ "DepthToSpace", 13, "blocksize", 0, { X("input", F32, 4, 1, 4, 2, 2) },
	  { AI("blocksize", 2) }, 1, NULL },
	{ "SpaceToDepth", 13, "blocksize", 0, { X("input", F32, 4, 1, 1, 4, 4) },
	  { AI("blocksize", 2) }, 1, NULL },
	{ "Trilu", 14, "k", 0, { X("input", F32, 2, 3, 4), CI("k", I64, 0, D(0), 1) }, { NOATTR }, 1,
	  check_trilu },
	{ "Trilu", 14, "upper", 0, { X("input", F32, 2, 3, 4) }, { AI("upper", 1) }, 1, NULL },
	{ "EyeLike", 17, "dtype", 0, { X("x", F32, 2, 3, 4) }, { AI("dtype", 1) }, 1, NULL },
	{ "OneHot", 11, "depth", 0,
	  { CI("indices", I64, 1, D(3), 0, 2, -1), CI("depth", I64, 0, D(0), 4), CF("values", 1, 2) },
	  { NOATTR }, 1, NULL },
	{ "OneHot", 11, "axis", 0,
	  { X("indices", I64, 1, 3), CI("depth", I64, 0, D(0), 4), CF("values", 1, 2) },
	  { AI("axis", -1) }, 1, NULL },
	{ "OneHot", 11, "indices", 1,
	  { CI("indices", I64, 1, D(3), 0, 2, -1), CI("depth", I64, 0, D(0), 4), CF("values", 1, 2) },
	  { AI("axis", 0) }, 1, NULL },

	/* elementwise */
	{ "Cast", 19, "to", 0, { X("input", F32, 2, 2, 3) }, { AI("to", 7) }, 1, NULL },
	{ "Cast", 19, "saturate", 0, { X("input", F32, 2, 2, 3) },
	  { AI("to", 17), AI("saturate", 1) }, 1, NULL },
	{ "Dropout", 13, "seed", 0, { X("data", F32, 2, 2, 3) }, { AI("seed", 5) }, 1, NULL },
	{ "IsInf", 20, "detect_negative", 0, { X("X", F32, 2, 2, 3) }, { AI("detect_negative", 1) },
	  1, NULL },
	{ "Mod", 13, "fmod", 0, { X("A", I64, 1, 4), CI("B", I64, 1, D(4), 3, -3, 2, 5) },
	  { AI("fmod", 0) }, 1, NULL },
	{ "Mod", 13, "B", 1, { X("A", I64, 1, 4), CI("B", I64, 1, D(4), 3, -3, 2, 5) },
	  { AI("fmod", 0) }, 1, NULL },
	{ "Div", 13, "B", 2, { X("A", I64, 1, 4), CI("B", I64, 1, D(4), 3, -3, 2, 5) }, { NOATTR }, 1,
	  NULL },
	{ "BitShift", 11, "Y", 0, { X("X", ERT_DTYPE_UINT64, 1, 4), CI("Y", ERT_DTYPE_UINT64, 1, D(4), 1, 2, 3, 4) },
	  { ASTR("direction", "LEFT") }, 1, NULL },

	/* losses */
	{ "NegativeLogLikelihoodLoss", 13, "ignore_index", 0,
	  { X("input", F32, 2, 2, 3), CI("target", I64, 1, D(2), 0, 2) }, { AI("ignore_index", 1) },
	  1, NULL },
	{ "NegativeLogLikelihoodLoss", 13, "target", 1,
	  { X("input", F32, 2, 2, 3), CI("target", I64, 1, D(2), 0, 2) }, { NOATTR }, 1, NULL },
	{ "SoftmaxCrossEntropyLoss", 13, "ignore_index", 0,
	  { X("scores", F32, 2, 2, 3), CI("labels", I64, 1, D(2), 0, 2) }, { AI("ignore_index", 1) },
	  1, NULL },
	{ "SoftmaxCrossEntropyLoss", 13, "labels", 0,
	  { X("scores", F32, 2, 2, 3), CI("labels", I64, 1, D(2), 0, 2) }, { NOATTR }, 1, NULL },

	/* quantisation */
	{ "QuantizeLinear", 21, "axis", 0, { X("x", F32, 2, 2, 4), CF("y_scale", 1, 4) },
	  { AI("axis", 1) }, 1, NULL },
	{ "QuantizeLinear", 21, "block_size", 0, { X("x", F32, 2, 2, 4), CF("y_scale", 2, 2, 2) },
	  { AI("axis", 1), AI("block_size", 2) }, 1, NULL },
	{ "QuantizeLinear", 21, "output_dtype", 0, { X("x", F32, 2, 2, 4), QSCALE("y_scale") },
	  { AI("output_dtype", 3) }, 1, NULL },
	{ "QuantizeLinear", 21, "saturate", 0, { X("x", F32, 2, 2, 4), QSCALE("y_scale") },
	  { AI("output_dtype", 17), AI("saturate", 1) }, 1, NULL },
	{ "DequantizeLinear", 21, "axis", 0, { X("x", U8, 2, 2, 4), CF("x_scale", 1, 4) },
	  { AI("axis", 1) }, 1, NULL },
	{ "DequantizeLinear", 21, "block_size", 0, { X("x", U8, 2, 2, 4), CF("x_scale", 2, 2, 2) },
	  { AI("axis", 1), AI("block_size", 2) }, 1, NULL },
	{ "QLinearConv", 10, "strides", 0,
	  { X("x", U8, 4, 1, 2, 5, 5), QSCALE("x_scale"), QZP("x_zero_point"),
	    CI("w", U8, 4, D(2, 2, 3, 3), 1, 2, 3), QSCALE("w_scale"), QZP("w_zero_point"),
	    QSCALE("y_scale"), QZP("y_zero_point") },
	  { AIS("strides", 2, 1, 1) }, 1, NULL },
	{ "QLinearConv", 10, "pads", 1,
	  { X("x", U8, 4, 1, 2, 5, 5), QSCALE("x_scale"), QZP("x_zero_point"),
	    CI("w", U8, 4, D(2, 2, 3, 3), 1, 2, 3), QSCALE("w_scale"), QZP("w_zero_point"),
	    QSCALE("y_scale"), QZP("y_zero_point") },
	  { AIS("pads", 4, 1, 1, 1, 1) }, 1, NULL },
	{ "QLinearConv", 10, "dilations", 0,
	  { X("x", U8, 4, 1, 2, 5, 5), QSCALE("x_scale"), QZP("x_zero_point"),
	    CI("w", U8, 4, D(2, 2, 3, 3), 1, 2, 3), QSCALE("w_scale"), QZP("w_zero_point"),
	    QSCALE("y_scale"), QZP("y_zero_point") },
	  { AIS("dilations", 2, 1, 1) }, 1, NULL },
	{ "QLinearConv", 10, "group", 0,
	  { X("x", U8, 4, 1, 2, 5, 5), QSCALE("x_scale"), QZP("x_zero_point"),
	    CI("w", U8, 4, D(2, 2, 3, 3), 1, 2, 3), QSCALE("w_scale"), QZP("w_zero_point"),
	    QSCALE("y_scale"), QZP("y_zero_point") },
	  { AI("group", 1) }, 1, NULL },
	{ "ConvInteger", 10, "pads", 0,
	  { X("x", U8, 4, 1, 2, 5, 5), CI("w", U8, 4, D(2, 2, 3, 3), 1, 2, 3) },
	  { AIS("pads", 4, 1, 1, 1, 1) }, 1, NULL },
	{ "QGemm", 1, "transB", 0,
	  { X("A", U8, 2, 2, 3), QSCALE("a_scale"), QZP("a_zero_point"),
	    CI("B", U8, 2, D(4, 3), 1, 2, 3), QSCALE("b_scale"), QZP("b_zero_point"), NONE,
	    QSCALE("y_scale"), QZP("y_zero_point") },
	  { AI("transB", 1) }, 1, NULL },
	{ "QLinearAveragePool", 1, "kernel_shape", 0,
	  { X("X", U8, 4, 1, 1, 5, 5), QSCALE("x_scale"), QZP("x_zero_point"), QSCALE("y_scale"),
	    QZP("y_zero_point") },
	  { AIS("kernel_shape", 2, 2, 2) }, 1, NULL },
	{ "QLinearAveragePool", 1, "pads", 0,
	  { X("X", U8, 4, 1, 1, 5, 5), QSCALE("x_scale"), QZP("x_zero_point"), QSCALE("y_scale"),
	    QZP("y_zero_point") },
	  { AIS("kernel_shape", 2, 2, 2), AIS("pads", 4, 1, 1, 1, 1) }, 1, NULL },
	{ "QLinearAveragePool", 1, "channels_last", 0,
	  { X("X", U8, 4, 1, 1, 5, 5), QSCALE("x_scale"), QZP("x_zero_point"), QSCALE("y_scale"),
	    QZP("y_zero_point") },
	  { AIS("kernel_shape", 2, 2, 2), AI("channels_last", 0) }, 1, NULL },
	{ "QLinearGlobalAveragePool", 1, "channels_last", 0,
	  { X("X", U8, 4, 1, 2, 3, 3), QSCALE("x_scale"), QZP("x_zero_point"), QSCALE("y_scale"),
	    QZP("y_zero_point") },
	  { AI("channels_last", 0) }, 1, NULL },

	/* signal processing: lengths from plan-time inputs */
#define WIN(op) { op, 17, "size", 0, { CI("size", I64, 0, D(0), 10) }, { AI("periodic", 1) }, 1, NULL }
	WIN("HannWindow"), WIN("HammingWindow"), WIN("BlackmanWindow"),
	{ "HannWindow", 17, "periodic", 0, { CI("size", I64, 0, D(0), 10) }, { AI("periodic", 0) }, 1,
	  NULL },
	{ "BlackmanWindow", 17, "output_datatype", 0, { CI("size", I64, 0, D(0), 10) },
	  { AI("output_datatype", 1) }, 1, NULL },
#define DFT_IN { X("x", F32, 3, 1, 8, 1), CI("dft_length", I64, 0, D(0), 8), CI("axis", I64, 0, D(0), 1) }
	{ "DFT", 20, "dft_length", 0, DFT_IN, { AI("onesided", 0) }, 1, NULL },
	{ "DFT", 20, "axis", 0, DFT_IN, { AI("onesided", 0) }, 1, NULL },
	{ "DFT", 20, "onesided", 0, DFT_IN, { AI("onesided", 0) }, 1, NULL },
	{ "DFT", 20, "inverse", 0, DFT_IN, { AI("inverse", 0) }, 1, NULL },
	{ "DFT", 17, "axis", 0, { X("x", F32, 3, 1, 8, 1) }, { AI("axis", 1) }, 1, NULL },
#define STFT_IN { X("signal", F32, 3, 1, 16, 1), CI("frame_step", I64, 0, D(0), 4), NONE, \
		  CI("frame_length", I64, 0, D(0), 8) }
	{ "STFT", 17, "frame_step", 0, STFT_IN, { AI("onesided", 1) }, 1, NULL },
	{ "STFT", 17, "frame_length", 0, STFT_IN, { AI("onesided", 1) }, 1, NULL },
	{ "STFT", 17, "onesided", 0, STFT_IN, { AI("onesided", 1) }, 1, NULL },

	/* image rearrangement and sampling */
#define COL2IM_IN { X("input", F32, 3, 1, 4, 4), CI("image_shape", I64, 1, D(2), 3, 3), \
		    CI("block_shape", I64, 1, D(2), 2, 2) }
	{ "Col2Im", 18, "image_shape", 0, COL2IM_IN, { NOATTR }, 1, NULL },
	{ "Col2Im", 18, "block_shape", 1, COL2IM_IN, { NOATTR }, 1, NULL },
	{ "Col2Im", 18, "dilations", 0, COL2IM_IN, { AIS("dilations", 2, 1, 1) }, 1, NULL },
	{ "Col2Im", 18, "strides", 1, COL2IM_IN, { AIS("strides", 2, 1, 1) }, 1, NULL },
	{ "Col2Im", 18, "pads", 0, COL2IM_IN, { AIS("pads", 4, 0, 0, 0, 0) }, 1, NULL },
#define DEFORM_IN { X("X", F32, 4, 1, 2, 3, 3), CF("W", 4, 2, 1, 2, 2), X("offset", F32, 4, 1, 8, 2, 2) }
#define DEFORM_ROW(attr, pos, ...) { "DeformConv", 19, attr, pos, DEFORM_IN, \
		{ AIS("kernel_shape", 2, 2, 2), AI("group", 2), __VA_ARGS__ }, 1, NULL }
	DEFORM_ROW("kernel_shape", 0, NOATTR),
	DEFORM_ROW("group", 0, NOATTR),
	DEFORM_ROW("offset_group", 0, AI("offset_group", 1)),
	DEFORM_ROW("strides", 1, AIS("strides", 2, 1, 1)),
	DEFORM_ROW("dilations", 0, AIS("dilations", 2, 1, 1)),
	DEFORM_ROW("pads", 3, AIS("pads", 4, 0, 0, 0, 0)),
#define UNPOOL_IN { X("xT", F32, 4, 1, 1, 2, 2), CI("xI", I64, 4, D(1, 1, 2, 2), 0, 3, 8, 15), \
		    CI("output_shape", I64, 1, D(4), 1, 1, 4, 4) }
	{ "MaxUnpool", 11, "kernel_shape", 0, UNPOOL_IN,
	  { AIS("kernel_shape", 2, 2, 2), AIS("strides", 2, 2, 2) }, 1, NULL },
	{ "MaxUnpool", 11, "strides", 1, UNPOOL_IN,
	  { AIS("kernel_shape", 2, 2, 2), AIS("strides", 2, 2, 2) }, 1, NULL },
	{ "MaxUnpool", 11, "pads", 0, UNPOOL_IN,
	  { AIS("kernel_shape", 2, 2, 2), AIS("strides", 2, 2, 2), AIS("pads", 4, 0, 0, 0, 0) }, 1,
	  NULL },
	{ "MaxUnpool", 11, "xI", 2, UNPOOL_IN,
	  { AIS("kernel_shape", 2, 2, 2), AIS("strides", 2, 2, 2) }, 1, NULL },
	{ "MaxUnpool", 11, "output_shape", 3, UNPOOL_IN,
	  { AIS("kernel_shape", 2, 2, 2), AIS("strides", 2, 2, 2) }, 1, NULL },
	{ "ReverseSequence", 10, "sequence_lens", 1,
	  { X("x", F32, 2, 4, 2), CI("sequence_lens", I64, 1, D(2), 1, 4) }, { NOATTR }, 1, NULL },
	{ "ReverseSequence", 10, "batch_axis", 0,
	  { X("x", F32, 2, 4, 2), CI("sequence_lens", I64, 1, D(2), 1, 4) },
	  { AI("batch_axis", 1), AI("time_axis", 0) }, 1, NULL },
	{ "Scatter", 9, "axis", 0,
	  { X("data", F32, 2, 3, 3), CI("indices", I64, 2, D(1, 2), 0, 2), CF("updates", 2, 1, 2) },
	  { AI("axis", 1) }, 1, NULL },

	/* TfIdfVectorizer: unigrams 2, 3; bigrams (5, 6), (7, 8) */
#define TFIDF_ROW(attr) { "TfIdfVectorizer", 9, attr, 0, { X("X", I64, 2, 2, 6) }, \
		{ AI("min_gram_length", 1), AI("max_gram_length", 2), AI("max_skip_count", 1), \
		  ASTR("mode", "TF"), AIS("ngram_counts", 2, 0, 2), AIS("ngram_indexes", 4, 0, 1, 2, 3), \
		  AIS("pool_int64s", 6, 2, 3, 5, 6, 7, 8) }, 1, NULL }
	TFIDF_ROW("min_gram_length"), TFIDF_ROW("max_gram_length"), TFIDF_ROW("max_skip_count"),
	TFIDF_ROW("ngram_counts"), TFIDF_ROW("ngram_indexes"),

	/* random generators: never folded, sizes from attributes */
	{ "RandomNormal", 1, "shape", 1, { NONE }, { AIS("shape", 2, 2, 3) }, 1, NULL },
	{ "RandomUniform", 1, "dtype", 0, { NONE }, { AIS("shape", 2, 2, 3), AI("dtype", 1) }, 1,
	  NULL },
	{ "RandomUniformLike", 1, "dtype", 0, { X("x", F32, 2, 2, 3) }, { AI("dtype", 1) }, 1, NULL },
	{ "Bernoulli", 15, "dtype", 0, { X("x", F32, 1, 4) }, { AI("dtype", 1) }, 1, NULL },
	{ "Multinomial", 7, "sample_size", 0, { X("x", F32, 2, 2, 3) }, { AI("sample_size", 4) }, 1,
	  NULL },
	{ "Multinomial", 7, "dtype", 0, { X("x", F32, 2, 2, 3) }, { AI("dtype", 6) }, 1, NULL },
};

/*
 * Extreme declared dims: the value goes into dim @pos of graph input @target
 * (ONNX import takes a negative dim as unknown). A tensor may have a dim of 0;
 * one above 2^48 is refused, by import, by the planner or by the budget.
 */
static const struct hrow dim_rows[] = {
	{ "Conv", 11, "X", 1, { X("X", F32, 4, 1, 2, 5, 5), CONV_W }, { AI("group", 1) }, 1, NULL },
	{ "Conv", 11, "X", 3, { X("X", F32, 4, 1, 2, 5, 5), CONV_W }, { AI("group", 1) }, 1, NULL },
	{ "ConvTranspose", 11, "X", 3, { X("X", F32, 4, 1, 2, 3, 3), CONVT_W },
	  { AIS("strides", 2, 2, 2) }, 1, NULL },
	/* output_shape keeps the output whatever the input: an empty input, a full output */
	{ "ConvTranspose", 11, "X", 2, { X("X", F32, 4, 1, 2, 3, 3), CONVT_W },
	  { AIS("strides", 2, 2, 2), AIS("output_shape", 2, 7, 7) }, 1, NULL },
	{ "MaxPool", 12, "X", 0, { X("X", F32, 4, 1, 1, 5, 5) }, { AIS("kernel_shape", 2, 2, 2) }, 1,
	  NULL },
	{ "AveragePool", 19, "X", 3, { X("X", F32, 4, 1, 1, 5, 5) },
	  { AIS("kernel_shape", 2, 2, 2), AIS("pads", 4, 1, 1, 1, 1) }, 1, NULL },
	{ "GlobalAveragePool", 1, "X", 2, { X("X", F32, 4, 1, 2, 3, 3) }, { NOATTR }, 1, NULL },
	{ "Concat", 13, "a", 1, { X("a", F32, 2, 2, 3), X("b", F32, 2, 2, 3) }, { AI("axis", 1) }, 1,
	  NULL },
	{ "Concat", 13, "b", 0, { X("a", F32, 2, 2, 3), X("b", F32, 2, 2, 3) }, { AI("axis", 1) }, 1,
	  NULL },
	{ "Reshape", 14, "data", 0, { X("data", F32, 2, 2, 6), CI("shape", I64, 1, D(2), -1, 3) },
	  { NOATTR }, 1, NULL },
	{ "Gather", 13, "data", 0, { X("data", F32, 2, 3, 4), CI("indices", I64, 1, D(2), 0, 2) },
	  { AI("axis", 1) }, 1, NULL },
	{ "MatMul", 13, "A", 0, { X("A", F32, 2, 2, 3), CF("B", 2, 3, 4) }, { NOATTR }, 1, NULL },
	{ "Gemm", 13, "A", 1, { X("A", F32, 2, 2, 3), CF("B", 2, 3, 4) }, { NOATTR }, 1, NULL },
	{ "Softmax", 13, "x", 1, { X("x", F32, 2, 2, 3) }, { AI("axis", 1) }, 1, NULL },
	{ "Transpose", 13, "data", 1, { X("data", F32, 3, 2, 3, 4) }, { AIS("perm", 3, 2, 0, 1) }, 1,
	  NULL },
	{ "Expand", 13, "input", 1, { X("input", F32, 2, 3, 1), CI("shape", I64, 1, D(2), 3, 4) },
	  { NOATTR }, 1, NULL },
	{ "Tile", 13, "input", 1, { X("input", F32, 2, 2, 3), CI("repeats", I64, 1, D(2), 2, 2) },
	  { NOATTR }, 1, NULL },
	{ "Split", 13, "input", 1, { X("input", F32, 2, 2, 4) }, { AI("axis", 1) }, 2, NULL },
	{ "Slice", 13, "data", 0,
	  { X("data", F32, 1, 10), CI("starts", I64, 1, D(1), 1), CI("ends", I64, 1, D(1), -1) },
	  { NOATTR }, 1, NULL },
	{ "Pad", 13, "data", 1, { X("data", F32, 2, 2, 3), CI("pads", I64, 1, D(4), 0, 1, 0, 1) },
	  { ASTR("mode", "reflect") }, 1, NULL },
	{ "Resize", 19, "X", 3,
	  { X("X", F32, 4, 1, 1, 2, 2), NONE, CF("scales", 1, 4) }, { NOATTR }, 1, NULL },
	{ "DepthToSpace", 13, "input", 2, { X("input", F32, 4, 1, 4, 2, 2) }, { AI("blocksize", 2) },
	  1, NULL },
	{ "LRN", 13, "X", 1, { X("X", F32, 4, 1, 3, 2, 2) }, { AI("size", 3) }, 1, NULL },
	{ "GroupNormalization", 18, "X", 2,
	  { X("X", F32, 4, 1, 4, 2, 2), CF("scale", 1, 2), CF("bias", 1, 2) },
	  { AI("num_groups", 2) }, 1, NULL },
	{ "TopK", 11, "X", 1, { X("X", F32, 2, 2, 5), CI("K", I64, 1, D(1), 2) }, { NOATTR }, 2,
	  NULL },
	{ "ReduceSum", 13, "data", 0, { X("data", F32, 2, 2, 3), CI("axes", I64, 1, D(1), 1) },
	  { NOATTR }, 1, NULL },
	{ "EyeLike", 17, "x", 1, { X("x", F32, 2, 3, 4) }, { AI("k", 1) }, 1, NULL },
	{ "OneHot", 11, "indices", 0,
	  { X("indices", I64, 1, 3), CI("depth", I64, 0, D(0), 4), CF("values", 1, 2) },
	  { AI("axis", -1) }, 1, NULL },
	{ "Trilu", 14, "input", 0, { X("input", F32, 2, 3, 4) }, { AI("upper", 1) }, 1, NULL },
	{ "GatherND", 13, "data", 1,
	  { X("data", F32, 3, 2, 3, 4), CI("indices", I64, 2, D(2, 1), 1, 2) },
	  { AI("batch_dims", 1) }, 1, NULL },
	{ "QLinearConv", 10, "x", 2,
	  { X("x", U8, 4, 1, 2, 5, 5), QSCALE("x_scale"), QZP("x_zero_point"),
	    CI("w", U8, 4, D(2, 2, 3, 3), 1, 2, 3), QSCALE("w_scale"), QZP("w_zero_point"),
	    QSCALE("y_scale"), QZP("y_zero_point") },
	  { NOATTR }, 1, NULL },
	{ "Add", 13, "A", 1, { X("A", F32, 3, 2, 3, 4), X("B", F32, 1, 4) }, { NOATTR }, 1, NULL },
	{ "Where", 16, "X", 0,
	  { X("condition", ERT_DTYPE_BOOL, 2, 2, 3), X("X", F32, 2, 2, 3), X("Y", F32, 1, 3) },
	  { NOATTR }, 1, NULL },
	{ "ArgMax", 13, "data", 0, { X("data", F32, 3, 2, 3, 4) }, { AI("axis", 1) }, 1, NULL },
	{ "CumSum", 14, "x", 1, { X("x", F32, 3, 2, 3, 4), CI("axis", I64, 0, D(0), 2) },
	  { NOATTR }, 1, NULL },
	{ "LogSoftmax", 13, "x", 0, { X("x", F32, 3, 2, 3, 4) }, { AI("axis", 1) }, 1, NULL },
	{ "Hardmax", 13, "x", 2, { X("x", F32, 3, 2, 3, 4) }, { AI("axis", 0) }, 1, NULL },
	{ "LayerNormalization", 17, "X", 0, { X("X", F32, 3, 2, 3, 4), CF("Scale", 1, 4) },
	  { AI("axis", -1) }, 1, NULL },
	{ "InstanceNormalization", 6, "input", 2,
	  { X("input", F32, 4, 1, 2, 3, 3), CF("scale", 1, 2), CF("B", 1, 2) }, { NOATTR }, 1,
	  NULL },
	{ "BatchNormalization", 15, "X", 2,
	  { X("X", F32, 4, 1, 2, 2, 2), CF("scale", 1, 2), CF("B", 1, 2), CF("mean", 1, 2),
	    CF("var", 1, 2) },
	  { NOATTR }, 1, NULL },
	{ "MeanVarianceNormalization", 13, "X", 1, { X("X", F32, 4, 1, 2, 2, 2) },
	  { AIS("axes", 3, 0, 2, 3) }, 1, NULL },
	{ "LpNormalization", 1, "x", 0, { X("x", F32, 3, 2, 3, 4) }, { AI("axis", 1) }, 1, NULL },
	{ "SpaceToDepth", 13, "input", 0, { X("input", F32, 4, 1, 1, 4, 4) }, { AI("blocksize", 2) },
	  1, NULL },
	{ "GatherElements", 13, "data", 1,
	  { X("data", F32, 2, 3, 4), CI("indices", I64, 2, D(3, 1), 0, 1, 2) }, { AI("axis", 1) },
	  1, NULL },
	{ "ScatterElements", 16, "data", 0,
	  { X("data", F32, 2, 3, 4), CI("indices", I64, 2, D(1, 2), 1, 3),
	    X("updates", F32, 2, 1, 2) },
	  { AI("axis", 1) }, 1, NULL },
	{ "GridSample", 16, "X", 2, { X("X", F32, 4, 1, 1, 3, 3), X("grid", F32, 4, 1, 2, 2, 2) },
	  { NOATTR }, 1, NULL },
	{ "QuantizeLinear", 21, "x", 0, { X("x", F32, 2, 2, 4), CF("y_scale", 1, 4) },
	  { AI("axis", 1) }, 1, NULL },
	{ "DequantizeLinear", 21, "x", 1, { X("x", U8, 2, 2, 4), CF("x_scale", 1, 2) },
	  { AI("axis", 0) }, 1, NULL },
	{ "Einsum", 12, "a", 0, { X("a", F32, 2, 2, 3), X("b", F32, 2, 3, 4) },
	  { ASTR("equation", "ij,jk->ik") }, 1, NULL },
	{ "LpPool", 18, "X", 2, { X("X", F32, 4, 1, 1, 4, 4) }, { AIS("kernel_shape", 2, 2, 2) }, 1,
	  NULL },
	{ "GlobalMaxPool", 1, "X", 3, { X("X", F32, 4, 1, 2, 3, 3) }, { NOATTR }, 1, NULL },
	{ "ReduceMax", 18, "data", 2, { X("data", F32, 3, 2, 3, 4), CI("axes", I64, 1, D(1), 1) },
	  { NOATTR }, 1, NULL },
	{ "Flatten", 13, "input", 2, { X("input", F32, 3, 2, 3, 4) }, { AI("axis", 1) }, 1, NULL },
	{ "Cast", 19, "input", 0, { X("input", F32, 2, 2, 3) }, { AI("to", 7) }, 1, NULL },
	{ "DynamicQuantizeLinear", 11, "x", 0, { X("x", F32, 2, 2, 3) }, { NOATTR }, 3, NULL },
	{ "NegativeLogLikelihoodLoss", 13, "input", 0,
	  { X("input", F32, 2, 2, 3), X("target", I64, 1, 2) }, { NOATTR }, 1, NULL },
};

/* While the dim rows run: build() plants in an input's dims. */
static bool planting_dims;
/*
 * And, when >= 0, sets this dim of the same input to 0 (a tensor with no
 * elements whose other dims are extreme: its loops must not walk them).
 */
static int zero_dim = -1;

/* ---- building and running one model ---- */

static size_t elem_size(ert_dtype dt)
{
	size_t s = ert_dtype_size(dt);

	return s ? s : 1;
}

static void store_int(ert_dtype dt, void *p, int64_t i, int64_t v)
{
	switch (dt) {
	case ERT_DTYPE_INT64: case ERT_DTYPE_UINT64: ((int64_t *)p)[i] = v; break;
	case ERT_DTYPE_INT32: case ERT_DTYPE_UINT32: ((int32_t *)p)[i] = (int32_t)v; break;
	case ERT_DTYPE_INT16: case ERT_DTYPE_UINT16: ((int16_t *)p)[i] = (int16_t)v; break;
	case ERT_DTYPE_FLOAT32: ((float *)p)[i] = (float)v; break;
	default: ((uint8_t *)p)[i] = (uint8_t)v; break;
	}
}

static bool row_has_attr(const struct hrow *r, const char *name)
{
	for (int a = 0; a < 8 && r->attr[a].name; a++)
		if (!strcmp(r->attr[a].name, name))
			return true;
	return false;
}

/* The row's model with @v planted (or the ordinary one when !plant). */
static struct ert_graph *build(const struct hrow *r, bool plant, int64_t v)
{
	struct ert_graph *g = ert_graph_create();
	int32_t ins[9], outs[4], ni;
	uint32_t n_in = 0;
	struct ert_node *n;

	g->opset = r->opset;
	for (int i = 0; i < 9 && r->in[i].name; i++) {
		const struct tin *ti = &r->in[i];
		int64_t numel = 1;

		if (ti->kind == IN_NONE) {
			ins[n_in++] = -1;
			continue;
		}
		int64_t dims[4];

		memcpy(dims, ti->dims, sizeof(dims));
		if (plant && planting_dims && !strcmp(ti->name, r->target)) {
			dims[r->pos] = v;
			if (zero_dim >= 0)
				dims[zero_dim] = 0;
		}
		for (int32_t k = 0; k < ti->rank; k++)
			numel *= ti->dims[k];
		ins[n_in] = ert_graph_add_tensor(g, ti->name, ti->dt, ti->rank, dims);
		if (ti->kind == IN_X) {
			ert_graph_add_input(g, ins[n_in]);
		} else {
			size_t nb = (size_t)numel * elem_size(ti->dt);
			void *data = calloc(1, nb ? nb : 1);

			for (int64_t k = 0; k < numel; k++) {
				int64_t val = ti->dt == F32 ? k + 1 : k < 8 ? ti->vals[k] : 0;

				if (plant && !strcmp(ti->name, r->target) && k == r->pos)
					val = v;
				store_int(ti->dt, data, k, val);
			}
			ert_graph_set_const(g, ins[n_in], data, nb, true);
		}
		n_in++;
	}
	for (int k = 0; k < r->n_out; k++) {
		char name[16];

		snprintf(name, sizeof(name), "y%d", k);
		outs[k] = ert_graph_add_tensor(g, name, ERT_DTYPE_UNDEFINED, -1, NULL);
		ert_graph_add_output(g, outs[k]);
	}
	ni = ert_graph_add_node(g, ert_op_from_name(r->op), "hostile", n_in, ins,
				(uint32_t)r->n_out, outs);
	n = &g->nodes[ni];
	for (int a = 0; a < 8 && r->attr[a].name; a++) {
		const struct tattr *ta = &r->attr[a];
		bool here = plant && !strcmp(ta->name, r->target);
		int64_t iv[8];

		switch (ta->type) {
		case ERT_ATTR_INT:
			ert_node_set_attr_int(g, n, ta->name, here ? v : ta->i[0]);
			break;
		case ERT_ATTR_INTS:
			memcpy(iv, ta->i, sizeof(iv));
			if (here)
				iv[r->pos] = v;
			ert_node_set_attr_ints(g, n, ta->name, iv, ta->n);
			break;
		case ERT_ATTR_FLOAT:
			ert_node_set_attr_float(g, n, ta->name, ta->f);
			break;
		case ERT_ATTR_STRING: {
			struct ert_attr *at = ert_node_add_attr(g, n, ta->name, ERT_ATTR_STRING);

			at->s = ert_graph_strdup(g, ta->s);
			at->len = (uint32_t)strlen(ta->s);
			break;
		}
		default:
			break;
		}
	}
	return g;
}

/* Is the target an input the op reads for its data rather than at plan time? */
static bool data_target(const struct hrow *r)
{
	uint32_t mask = ert_op_value_inputs(ert_op_from_name(r->op));

	if (row_has_attr(r, r->target))
		return false;
	for (int i = 0; i < 9 && r->in[i].name; i++)
		if (!strcmp(r->in[i].name, r->target))
			return !(mask >> i & 1);
	return false;
}

enum stage { LOADING, PLANNING, RUNNING };

/* Outcomes over the whole run, printed at the end: what the rows exercised. */
static unsigned long n_ran, n_refused[3];

/*
 * A failure's message must say where: the node, and what was planted when the
 * model is refused while loading or planning. Three outcomes need only the
 * node: an index or label out of range in the data (found by the kernel while
 * running), a run-time failure, and the work budget refusing a tensor that a
 * valid but extreme value makes huge (test-session-budget covers that
 * message; its sizes are what it names).
 */
static bool names_it(const struct hrow *r, enum stage stage, ert_status st, const char *msg,
		     char *why, size_t len)
{
	bool budget = st == ERT_STATUS_OUT_OF_MEMORY && msg && strstr(msg, "budget");

	n_refused[stage]++;

	if (!msg || !*msg) {
		snprintf(why, len, "failed (status %d) without a message", (int)st);
		return false;
	}
	if (planting_dims) {
		char input[80];

		snprintf(input, sizeof(input), "'%s'", r->target);
		if (strstr(msg, "hostile") || strstr(msg, input))
			return true;
		snprintf(why, len, "message names neither node 'hostile' nor input %s: %s", input,
			 msg);
		return false;
	}
	if (!strstr(msg, "hostile") ||
	    (stage != RUNNING && !budget && !data_target(r) && !strstr(msg, r->target))) {
		snprintf(why, len, "message does not name node 'hostile'%s%s: %s",
			 stage != RUNNING && !budget && !data_target(r) ? " and " : "",
			 stage != RUNNING && !budget && !data_target(r) ? r->target : "", msg);
		return false;
	}
	return true;
}

/* Seconds one model may take to plan and run (they take milliseconds). */
#define ALARM_SECONDS 20

static char alarm_what[160];

static void on_alarm(int sig)
{
	static const char msg[] = "planning and running took too long: ";

	(void)sig;
	/* async-signal-safe: write(2) only */
	if (write(2, msg, sizeof(msg) - 1) < 0 || write(2, alarm_what, strlen(alarm_what)) < 0 ||
	    write(2, "\n", 1) < 0)
		_exit(2);
	_exit(1);
}

/* Memory budget of the sessions: more than any ordinary row needs. */
#define RUN_MAX_BYTES ((uint64_t)64 << 20)

static void fill_inputs(ert_session *s)
{
	for (uint32_t k = 0; k < ert_session_input_count(s); k++) {
		ert_tensor *t = ert_session_get_input(s, k);
		size_t n = ert_tensor_element_count(t);
		void *p = ert_tensor_data(t);

		for (size_t i = 0; i < n; i++)
			store_int(ert_tensor_dtype(t), p, (int64_t)i,
				  ert_tensor_dtype(t) == F32 ? (int64_t)i : (int64_t)(i % 2));
	}
}

/*
 * Load @img as a model, plan and run it. 0: ran (and @r's check passed);
 * 1: failed with a message naming the node and target; -1: wrong (@why says).
 */
static int plan_and_run(const struct hrow *r, int64_t v, bool plant, const void *img, size_t size,
			char *why, size_t len)
{
	char msg[512] = "";
	ert_model *m = NULL;
	ert_session *s = NULL;
	ert_config cfg;
	ert_status st;
	int rc = 0;

	st = ert_model_load_memory(img, size, 1, &m, msg, sizeof(msg));
	if (st != ERT_OK)
		return names_it(r, LOADING, st, msg, why, len) ? 1 : -1;
	ert_config_init(&cfg);
	cfg.num_threads = 1;
	cfg.memory = ERT_LEVEL_LOW;
	cfg.max_memory = RUN_MAX_BYTES;
	/* a model that makes planning or a run walk a huge loop fails, not hangs */
	snprintf(alarm_what, sizeof(alarm_what), "%s%d.%s[%d] = %lld (zero dim %d)", r->op, r->opset,
		 r->target, r->pos, (long long)v, zero_dim);
	alarm(ALARM_SECONDS);
	st = ert_session_create(m, &cfg, &s);
	if (st != ERT_OK) {
		alarm(0);
		rc = names_it(r, PLANNING, st, ert_last_error(), why, len) ? 1 : -1;
		goto out;
	}
	fill_inputs(s);
	st = ert_session_run(s);
	alarm(0);
	if (st != ERT_OK) {
		rc = names_it(r, RUNNING, st, ert_session_error(s), why, len) ? 1 : -1;
		goto out;
	}
	n_ran++;
	if (plant && r->check && !r->check(r, v, s)) {
		snprintf(why, len, "ran with a wrong result");
		rc = -1;
	}
out:
	ert_session_destroy(s);
	ert_model_unref(m);
	return rc;
}

/* ONNX import (with the passes), then .ert. */
static int via_onnx(const struct hrow *r, bool plant, int64_t v, char *why, size_t len)
{
	struct ert_graph *g = build(r, plant, v), *gi = NULL;
	struct ert_onnx_options opt = { .optimize = true };
	struct ert_err err = { "" };
	uint8_t *bytes = NULL;
	void *img = NULL;
	size_t n = ert_test_graph_to_onnx(g, &bytes), size = 0;
	ert_status st;
	int rc;

	ert_graph_destroy(g);
	if (!n) {
		snprintf(why, len, "cannot write the ONNX model");
		return -1;
	}
	st = ert_onnx_import_memory(bytes, n, NULL, &opt, &gi, &err);
	free(bytes);
	if (st != ERT_OK)
		return names_it(r, LOADING, st, err.msg, why, len) ? 1 : -1;
	st = ert_format_write_memory(gi, NULL, &img, &size, &err);
	if (st != ERT_OK) {
		ert_graph_destroy(gi);
		return names_it(r, LOADING, st, err.msg, why, len) ? 1 : -1;
	}
	ert_graph_destroy(gi);
	rc = plan_and_run(r, v, plant, img, size, why, len);
	free(img);
	return rc;
}

/* Straight to .ert: the loader and the planner see what a crafted file holds. */
static int via_ert(const struct hrow *r, bool plant, int64_t v, char *why, size_t len)
{
	struct ert_graph *g = build(r, plant, v);
	struct ert_err err = { "" };
	void *img = NULL;
	size_t size = 0;
	int rc;

	ert_status st = ert_graph_toposort(g, &err);

	if (st == ERT_OK)
		st = ert_format_write_memory(g, NULL, &img, &size, &err);
	if (st != ERT_OK) {
		ert_graph_destroy(g);
		return names_it(r, LOADING, st, err.msg, why, len) ? 1 : -1;
	}
	ert_graph_destroy(g);
	rc = plan_and_run(r, v, plant, img, size, why, len);
	free(img);
	return rc;
}

static void row_name(const struct hrow *r, char *buf, size_t len)
{
	snprintf(buf, len, "%s%d.%s%s[%d]", r->op, r->opset, r->target,
		 planting_dims ? ".dims" : "", r->pos);
}

static bool run_row(const struct hrow *r)
{
	char name[96], why[768];
	bool ok = true;

	row_name(r, name, sizeof(name));
	if (ert_op_from_name(r->op) == ERT_OP_COUNT) {
		printf("  %s: unknown op\n", name);
		return false;
	}
	if (planting_dims || !row_has_attr(r, r->target)) {
		bool found = false;

		for (int i = 0; i < 9 && r->in[i].name; i++)
			found |= r->in[i].kind == (planting_dims ? IN_X : IN_CONST) &&
				 !strcmp(r->in[i].name, r->target);
		if (!found) {
			printf("  %s: the row has no %s '%s'\n", name,
			       planting_dims ? "graph input" : "attribute or constant input",
			       r->target);
			return false;
		}
	}
	/* the ordinary model must work both ways */
	for (int path = 0; path < 2; path++) {
		why[0] = '\0';
		if ((path ? via_ert : via_onnx)(r, false, 0, why, sizeof(why)) != 0) {
			printf("  %s: the ordinary model fails (%s): %s\n", name,
			       path ? "ert" : "onnx", why[0] ? why : "see above");
			return false;
		}
	}
	int32_t rank = 0;

	for (int i = 0; i < 9 && r->in[i].name; i++)
		if (!strcmp(r->in[i].name, r->target))
			rank = r->in[i].rank;
	/* dims rows: alone, then with the next dim and with the previous one 0 */
	for (int z = 0; z < (planting_dims && rank > 1 ? 3 : 1); z++) {
		zero_dim = z == 0 ? -1 : z == 1 ? (r->pos + 1) % rank : (r->pos + rank - 1) % rank;
		for (size_t e = 0; e < sizeof(extremes) / sizeof(extremes[0]); e++) {
			for (int path = 0; path < 2; path++) {
				why[0] = '\0';
				if ((path ? via_ert : via_onnx)(r, true, extremes[e], why,
								sizeof(why)) < 0) {
					printf("  %s = %lld (%s%s): %s\n", name,
					       (long long)extremes[e], path ? "ert" : "onnx",
					       zero_dim >= 0 ? ", a zero dim beside" : "", why);
					ok = false;
				}
			}
		}
	}
	zero_dim = -1;
	return ok;
}

/* Each row's ordinary model as DIR/hostile-<row>.onnx or .ert (fuzz seeds). */
static int write_seeds(const char *dir, bool ert)
{
	int failed = 0;

	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		perror(dir);
		return 1;
	}
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct ert_graph *g = build(&rows[i], false, 0);
		struct ert_err err = { "" };
		void *bytes = NULL;
		size_t n = 0;
		char path[512], name[96];
		FILE *f;

		if (ert) {
			if (ert_graph_toposort(g, &err) != ERT_OK ||
			    ert_format_write_memory(g, NULL, &bytes, &n, &err) != ERT_OK)
				n = 0;
		} else {
			n = ert_test_graph_to_onnx(g, (uint8_t **)&bytes);
		}
		row_name(&rows[i], name, sizeof(name));
		for (char *c = name, *w = name;; c++) {
			if (*c == ']')
				continue;
			*w++ = *c == '[' || *c == '.' ? '-' : *c;
			if (!*c)
				break;
		}
		snprintf(path, sizeof(path), "%s/hostile-%s.%s", dir, name, ert ? "ert" : "onnx");
		f = n ? fopen(path, "wb") : NULL;
		if (!f || fwrite(bytes, 1, n, f) != n)
			failed = 1;
		if (f)
			fclose(f);
		free(bytes);
		ert_graph_destroy(g);
	}
	return failed;
}

static void run_table(const struct hrow *t, size_t n, const char *filter, int *passed,
		      int *failed)
{
	for (size_t i = 0; i < n; i++) {
		char name[96];

		row_name(&t[i], name, sizeof(name));
		if (filter && !strstr(name, filter))
			continue;
		if (run_row(&t[i])) {
			(*passed)++;
		} else {
			printf("FAIL %s\n", name);
			(*failed)++;
		}
	}
}

/* One row's model with @v planted, as ONNX or .ert by @path's suffix. */
static int write_one(const char *row, int64_t v, const char *path)
{
	for (int d = 0; d < 2; d++) {
		const struct hrow *t = d ? dim_rows : rows;
		size_t n = d ? sizeof(dim_rows) / sizeof(dim_rows[0]) : sizeof(rows) / sizeof(rows[0]);

		planting_dims = d;
		for (size_t i = 0; i < n; i++) {
			struct ert_graph *g;
			struct ert_err err = { "" };
			void *bytes = NULL;
			size_t len = 0, pl = strlen(path);
			char name[96];
			FILE *f;

			row_name(&t[i], name, sizeof(name));
			if (strcmp(name, row))
				continue;
			g = build(&t[i], true, v);
			if (pl > 4 && !strcmp(path + pl - 4, ".ert")) {
				if (ert_graph_toposort(g, &err) != ERT_OK ||
				    ert_format_write_memory(g, NULL, &bytes, &len, &err) != ERT_OK)
					len = 0;
			} else {
				len = ert_test_graph_to_onnx(g, (uint8_t **)&bytes);
			}
			ert_graph_destroy(g);
			f = len ? fopen(path, "wb") : NULL;
			if (!f || fwrite(bytes, 1, len, f) != len) {
				perror(path);
				len = 0;
			}
			if (f)
				fclose(f);
			free(bytes);
			return len ? 0 : 1;
		}
	}
	fprintf(stderr, "no row '%s' (see --list)\n", row);
	return 1;
}

int main(int argc, char **argv)
{
	int passed = 0, failed = 0;

	if (argc > 4 && !strcmp(argv[1], "--write"))
		return write_one(argv[2], strtoll(argv[3], NULL, 0), argv[4]);

	if (argc > 2 && (!strcmp(argv[1], "--onnx") || !strcmp(argv[1], "--ert")))
		return write_seeds(argv[2], argv[1][2] == 'e');
	if (argc > 1 && !strcmp(argv[1], "--list")) {
		for (int d = 0; d < 2; d++) {
			const struct hrow *t = d ? dim_rows : rows;
			size_t n = d ? sizeof(dim_rows) / sizeof(dim_rows[0])
				     : sizeof(rows) / sizeof(rows[0]);

			planting_dims = d;
			for (size_t i = 0; i < n; i++) {
				char name[96];

				row_name(&t[i], name, sizeof(name));
				printf("%s\n", name);
			}
		}
		return 0;
	}
	signal(SIGALRM, on_alarm);
	run_table(rows, sizeof(rows) / sizeof(rows[0]), argc > 1 ? argv[1] : NULL, &passed,
		  &failed);
	planting_dims = true;
	run_table(dim_rows, sizeof(dim_rows) / sizeof(dim_rows[0]), argc > 1 ? argv[1] : NULL,
		  &passed, &failed);
	printf("models: %lu ran, %lu refused while loading, %lu while planning, %lu while running\n",
	       n_ran, n_refused[LOADING], n_refused[PLANNING], n_refused[RUNNING]);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
