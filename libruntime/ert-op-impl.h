/* SPDX-License-Identifier: MIT */
/*
 * ert-op-impl.h — the op contract: shape inference (backend independent, in
 * libruntime/ops/) and the values kernels see.
 *
 * Each op family has one file in libruntime/ops/ that exports a table
 * `const struct ert_op_def ert_op_defs_<family>[]`, ended by an entry with
 * .infer == NULL. ops/registry.c indexes all families by op. An op of
 * ert-ops.def with no entry is reported as unsupported.
 */
#ifndef ERT_OP_IMPL_H
#define ERT_OP_IMPL_H

#include "ert-checked.h"
#include "ert-graph.h"

/*
 * A tensor with a concrete shape, row-major and contiguous. During shape
 * inference data is NULL unless the value is known at plan time (a constant, or
 * computed by the planner because some op needs it, see ert_op_value_inputs()).
 */
struct ert_value {
	ert_dtype dtype;
	int32_t rank;
	int64_t dims[ERT_MAX_RANK];
	int64_t numel;
	void *data;
	size_t nbytes;
	const struct ert_quant *quant; /* may be NULL */
	/*
	 * A model constant stored block-quantised (ert-graph.h), or NULL. With
	 * memory LOW, data is NULL for the weights the CPU's int8 kernels read
	 * in this form (cpu/dq/); otherwise data holds the decoded values.
	 */
	struct ert_wq *wq;
	/*
	 * Graph inputs only (0 elsewhere): changes whenever the memory behind
	 * @data is replaced or has pages given back to the system, even when
	 * @data keeps its address. A backend that pinned those pages (the NPU
	 * wraps input buffers as user-pointer buffer objects) wraps them again.
	 */
	uint32_t storage_gen;
	/*
	 * A sequence or optional (ert-seq.h): kind != ERT_VALUE_TENSOR, dtype
	 * ERT_DTYPE_UINT64, rank 0, and data holds a struct ert_seq pointer;
	 * @elem is its tensors' dtype. Shape inference leaves both 0 (a tensor)
	 * unless the op gives such a value.
	 */
	uint8_t kind;
	ert_dtype elem;
};

struct ert_infer_ctx {
	const struct ert_graph *graph;
	const struct ert_node *node;
	const struct ert_value *const *in; /* n_in entries, NULL for omitted optional inputs */
	struct ert_value *const *out;      /* n_out entries, NULL for omitted optional outputs */
	uint32_t n_in, n_out;
	struct ert_err *err;               /* set a message before returning failure */
};

/*
 * Set dtype, rank and dims of every non-NULL output (numel/nbytes are derived by
 * the caller). Return ERT_STATUS_SHAPE/_DTYPE/_UNSUPPORTED/_INVALID_MODEL with a
 * message naming the problem ("Conv: weight rank 3, expected 4").
 */
typedef ert_status (*ert_infer_fn)(struct ert_infer_ctx *ctx);

/*
 * Bounds of one integer attribute, declared beside the op's shape inference in
 * its ert_op_def. Models are untrusted: every INT (or each entry of an INTS)
 * must lie in [min, max], an INTS may hold at most max_count entries. The
 * bounds come from the ONNX spec where it gives them (flags are 0 or 1, sizes
 * and strides are positive) and from what any tensor can hold otherwise
 * (sizes up to ERT_ATTR_SIZE_MAX, axes within ERT_MAX_RANK), so that shape
 * inference and kernels compute on them without leaving int64.
 *
 * The rules are checked when a graph is validated (ONNX import, .ert load:
 * ert_graph_validate()) and again before every shape inference, so a model
 * built in memory gets the same answer. An attribute absent from the node is
 * not checked (the op's default applies); one of another type than the rule's
 * is refused (an INT read from a FLOAT is checked as ert_attr_int() reads it).
 */
struct ert_attr_rule {
	const char *name;   /* NULL ends a list */
	int64_t min, max;
	uint32_t max_count; /* 0: an INT attribute; else an INTS of at most this many */
};

#define ERT_RULE_INT(name, lo, hi) { (name), (lo), (hi), 0 }
#define ERT_RULE_INTS(name, count, lo, hi) { (name), (lo), (hi), (count) }
/* ONNX's int flags: 0 or 1 */
#define ERT_RULE_FLAG(name) ERT_RULE_INT(name, 0, 1)
/* an axis or a list of axes: within [-ERT_MAX_RANK, ERT_MAX_RANK] (Flatten's and
 * Unsqueeze's count against rank + 1) */
#define ERT_RULE_AXIS(name) ERT_RULE_INT(name, -ERT_MAX_RANK, ERT_MAX_RANK)
#define ERT_RULE_AXES(name) ERT_RULE_INTS(name, ERT_MAX_RANK, -ERT_MAX_RANK, ERT_MAX_RANK)
/* one entry per spatial axis (two for pads), each in [lo, ERT_ATTR_SIZE_MAX] */
#define ERT_RULE_SPATIAL(name, lo) ERT_RULE_INTS(name, 2 * ERT_MAX_RANK, lo, ERT_ATTR_SIZE_MAX)
#define ERT_RULE_END { NULL, 0, 0, 0 }

struct ert_op_def {
	enum ert_op op;
	ert_infer_fn infer;
	const struct ert_attr_rule *attrs; /* may be NULL: no integer attributes */
};

/* Shape inference of @op, or NULL when no family implements it. */
ert_infer_fn ert_op_infer(enum ert_op op);
/*
 * Check @n's integer attributes against its op's rules. INVALID_MODEL with a
 * message naming the node and the attribute ("LRN 'norm1': attribute size =
 * -1 is out of range [1, 281474976710656]"); ERT_OK for ops without rules.
 */
ert_status ert_op_check_attrs(const struct ert_node *n, struct ert_err *err);
/*
 * A random generator (RandomNormal, Bernoulli, ...): never evaluated while
 * planning nor folded into a constant, whatever its inputs (ops/random.c).
 */
bool ert_op_is_random(enum ert_op op);
/*
 * An op that makes or reads sequences or optionals (ops/sequence.c): never
 * evaluated while planning nor folded, since its values live in objects a
 * session's step owns.
 */
bool ert_op_is_sequence(enum ert_op op);
/*
 * Before shape inference of ctx->node: an input that is a sequence or
 * optional where the op takes only tensors is refused (DTYPE, naming the
 * node, the input and both kinds). ops/sequence.c.
 */
ert_status ert_infer_check_kinds(struct ert_infer_ctx *ctx);
/* Name of a value kind ("tensor", "sequence", "optional", "optional sequence"). */
const char *ert_value_kind_name(int kind);
/* @dst takes @src's kind and element dtype (shape inference of pass-through ops). */
static inline void ert_value_copy_kind(struct ert_value *dst, const struct ert_value *src)
{
	dst->kind = src->kind;
	dst->elem = src->elem;
}

/*
 * The subgraphs of @n (ops/control.c): If has then_branch and else_branch,
 * without inputs, each with as many outputs as the node; Loop and Scan a
 * body whose inputs and outputs match the node's as the ONNX spec says
 * (Scan's counts, directions and axes included). Any other op with a GRAPH
 * attribute is refused. INVALID_MODEL with a message naming the node and
 * the counts; ERT_OK for a node without subgraphs that needs none.
 * Called by ert_graph_validate() for every node.
 */
ert_status ert_op_check_subgraphs(const struct ert_node *n, struct ert_err *err);

/*
 * Scan's layout (ONNX opset 8 differs from 9 and later): how many state
 * and scan inputs and outputs @n has, and whether input 0 is opset 8's
 * sequence_lens (with a batch axis 0 on every input and output).
 * Only for a node that passed ert_op_check_subgraphs().
 */
struct ert_scan_layout {
	bool v8;
	uint32_t first;    /* index of the first state input: 1 in opset 8, else 0 */
	uint32_t n_state;  /* N: loop state variables */
	uint32_t n_scan;   /* M: scan inputs */
	uint32_t n_out;    /* K: scan outputs */
};
void ert_scan_layout(const struct ert_node *n, struct ert_scan_layout *out);

/* ---- helpers shared by shape inference and kernels (ops/common.c) ---- */

/*
 * Set numel and nbytes from dtype/rank/dims; false when the size overflows, a
 * dim exceeds ERT_DIM_MAX or the product of the non-zero dims exceeds the
 * element limit (SIZE_MAX / 16): any product of some dims of a finished value
 * fits in int64.
 */
bool ert_value_finish(struct ert_value *v);
/* Numpy-style broadcast of @n shapes into @out; SHAPE error naming the dims. */
ert_status ert_broadcast_shapes(const struct ert_value *const *vals, uint32_t n,
				struct ert_value *out, struct ert_err *err, const char *op);
/* Normalise a possibly negative @axis against @rank; false when out of range. */
bool ert_norm_axis(int64_t axis, int32_t rank, int32_t *out);
/* Read element @i of an integer value (any int dtype or bool) as int64. */
int64_t ert_value_get_int(const struct ert_value *v, int64_t i);
/* Read element @i of a float value (float32/64/16/bf16) as double. */
double ert_value_get_float(const struct ert_value *v, int64_t i);
/* Copy dims from @src into @dst, set dtype. */
void ert_value_set_shape(struct ert_value *dst, ert_dtype dt, int32_t rank, const int64_t *dims);
/* Give graph tensor @x the dtype and static shape of @v (dim names dropped). */
void ert_tensor_take_shape(struct ert_tensor *x, const struct ert_value *v);
/* Make graph tensor @t a constant holding @v's shape and data; takes v->data. */
void ert_tensor_make_const(struct ert_graph *g, int32_t t, struct ert_value *v);
/*
 * A dimension taken from an attribute or a plan-time input value: ERT_OK when
 * in [0, ERT_DIM_MAX], else ERT_STATUS_SHAPE with "Op 'name': what[idx] = v is
 * negative" (or "exceeds the largest dimension"); @idx < 0 leaves out "[idx]".
 */
ert_status ert_check_dim(const struct ert_node *n, struct ert_err *err, const char *what,
			 int64_t idx, int64_t v);
/*
 * An input whose values the op needs while planning (a constant, or computed
 * by the planner first): ERT_OK when @v holds them or is empty, else
 * ERT_STATUS_UNSUPPORTED with "Op 'name': what must be known when the model
 * is planned" (edgert info and the clean-up passes plan without values).
 */
ert_status ert_check_known(const struct ert_node *n, struct ert_err *err, const char *what,
			   const struct ert_value *v);
/*
 * Set @err to "Op 'name': " and the printf message @fmt (the node's name may be
 * NULL: empty) and return @st: the one error prefix of op decoding and kernels.
 */
ert_status ert_node_fail(const struct ert_node *n, struct ert_err *err, ert_status st,
			 const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* "Op 'name'" of @n into @buf (what ert_node_fail() starts with); returns @buf. */
const char *ert_node_label(const struct ert_node *n, char *buf, size_t size);
/* ert_node_fail() for the node @ctx infers: "Op 'name': ..." into ctx->err. */
ert_status ert_infer_fail(struct ert_infer_ctx *ctx, ert_status st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Scalar conversions for reduced-precision floats (round to nearest even). */
float ert_fp16_to_fp32(uint16_t h);
uint16_t ert_fp32_to_fp16(float f);
float ert_bf16_to_fp32(uint16_t h);
uint16_t ert_fp32_to_bf16(float f);

/*
 * Fused activation carried by Conv/ConvTranspose/Gemm/MatMul/Add nodes after the
 * fusion pass: attribute "ert.act" (INT, enum ert_act) and "ert.act_params"
 * (FLOATS: LeakyRelu alpha; Clip min, max; HardSigmoid alpha, beta; Gelu
 * p0 = 1 for approximate="tanh", 0 for the erf form).
 */
enum ert_act {
	ERT_ACT_NONE = 0,
	ERT_ACT_RELU = 1,
	ERT_ACT_CLIP = 2,
	ERT_ACT_LEAKY_RELU = 3,
	ERT_ACT_SIGMOID = 4,
	ERT_ACT_HARD_SWISH = 5,
	ERT_ACT_HARD_SIGMOID = 6,
	ERT_ACT_TANH = 7,
	ERT_ACT_GELU = 8,
};

struct ert_act_desc {
	enum ert_act type;
	float p0, p1;
};

/*
 * Activations whose vector kernels are approximations (vmath.h): precision
 * HIGH runs them through libm instead.
 */
static inline bool ert_act_is_approx(enum ert_act t)
{
	return t == ERT_ACT_SIGMOID || t == ERT_ACT_TANH || t == ERT_ACT_GELU;
}

/* Read a node's fused activation (NONE when absent). */
struct ert_act_desc ert_node_act(const struct ert_node *n);
/*
 * The same from attributes @type and @params (InvertedResidual's
 * "ert.dw_act" / "ert.dw_act_params" and "ert.ex_act" / "ert.ex_act_params").
 */
struct ert_act_desc ert_node_act_named(const struct ert_node *n, const char *type,
				       const char *params);
/* Apply an activation in place to @count floats. */
void ert_act_apply(const struct ert_act_desc *act, float *x, int64_t count);

#endif /* ERT_OP_IMPL_H */
