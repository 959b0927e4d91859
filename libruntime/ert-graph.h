/* SPDX-License-Identifier: MIT */
/*
 * ert-graph.h — the in-memory graph every part of libedgert works on.
 *
 * The ONNX importer builds it, the optimisation passes rewrite it, the .ert writer
 * serialises it and the .ert loader rebuilds it with constant data pointing into
 * the mapped file. The planner reads it and never changes it.
 *
 * Ownership: a graph owns its strings, attributes and arrays (allocated from its
 * arena, freed with the graph). Constant tensor data is either borrowed (pointing
 * into a mapping the model keeps alive) or owned (ERT_TENSOR_OWNED: freed with the
 * graph).
 */
#ifndef ERT_GRAPH_H
#define ERT_GRAPH_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "edgert.h"

enum ert_op {
#define ERT_OP(name, value_inputs) ERT_OP_##name,
#include "ert-ops.def"
#undef ERT_OP
	ERT_OP_COUNT
};

/* ONNX spelling of an op ("Conv"); "?" when out of range. */
const char *ert_op_name(enum ert_op op);
/* Look an ONNX op type up; ERT_OP_COUNT when unknown. */
enum ert_op ert_op_from_name(const char *name);

/* The newest opset of ONNX's default domain edgert knows (ert-ops-opset.def). */
#define ERT_ONNX_OPSET_MAX 22

/* The opsets of @domain ("" ONNX's default, "com.microsoft") in which an op is read. */
struct ert_op_opset {
	const char *domain;
	int64_t since, until;   /* until resolved: ERT_ONNX_OPSET_MAX when the op is current */
};
/* @op's range from ert-ops-opset.def, or NULL for edgert's own ops (QLinearLookup). */
const struct ert_op_opset *ert_op_opset(enum ert_op op);
/*
 * Bit i set: input i is read for its *value* by shape inference (Reshape's shape,
 * Slice's starts, ...), so the planner must know it at plan time.
 */
uint32_t ert_op_value_inputs(enum ert_op op);

/* Sizes, names and classes of dtypes. */
size_t ert_dtype_size(ert_dtype dt);    /* bytes per element; 0 for sub-byte/unknown */
size_t ert_dtype_bytes(ert_dtype dt, int64_t count); /* storage bytes for @count elements */
bool ert_dtype_is_float(ert_dtype dt);  /* any floating type incl. fp16/bf16/fp8 */
bool ert_dtype_is_int(ert_dtype dt);    /* any integer type incl. int4 */
bool ert_dtype_valid(int32_t dt);       /* a dtype the runtime knows (not string/complex) */

enum ert_attr_type {
	ERT_ATTR_UNDEFINED = 0,
	ERT_ATTR_FLOAT = 1,
	ERT_ATTR_INT = 2,
	ERT_ATTR_STRING = 3,
	ERT_ATTR_TENSOR = 4,  /* ->tensor is a tensor index in the graph */
	ERT_ATTR_GRAPH = 5,   /* ->graph: a subgraph the node's graph owns (If, Loop, Scan) */
	ERT_ATTR_FLOATS = 6,
	ERT_ATTR_INTS = 7,
	ERT_ATTR_STRINGS = 8,
};

struct ert_attr {
	const char *name;
	enum ert_attr_type type;
	uint32_t count;        /* FLOATS / INTS / STRINGS; 1 for scalars */
	union {
		float f;
		int64_t i;
		const char *s;     /* STRING: NUL-terminated (ONNX strings may hold NULs: len) */
		int32_t tensor;
		const float *floats;
		const int64_t *ints;
		const char *const *strings;
		struct ert_graph *graph;
	};
	uint32_t len;          /* STRING: byte length without the NUL */
};

/* Quantisation parameters attached to a tensor (optional). */
struct ert_quant {
	int32_t axis;              /* -1: per tensor */
	uint32_t count;            /* 0: none; else number of scales (1 or dims[axis]) */
	const float *scales;
	const int32_t *zero_points;
};

enum ert_tensor_flags {
	ERT_TENSOR_CONST = 1u << 0,  /* data holds the value (initializer, folded constant) */
	ERT_TENSOR_INPUT = 1u << 1,  /* graph input */
	ERT_TENSOR_OUTPUT = 1u << 2, /* graph output */
	ERT_TENSOR_OWNED = 1u << 3,  /* data was malloc'd and is freed with the graph */
	/* in a subgraph: a value of an enclosing graph (one of the graph's captures) */
	ERT_TENSOR_OUTER = 1u << 4,
};

/*
 * A float32 constant stored block-quantised in the model file (.ert
 * encodings 3 and 4, docs/model-format.md): weight-only, symmetric. The
 * tensor is rows = dims[0] rows (1 for rank <= 1) of row_len elements, each
 * row cut into blocks of @block elements (the last may be shorter); value =
 * q x scale of its block. @scales (rows x blocks_per_row float32) and @q
 * (int8 in -127..127, or int4 in -7..7 two per byte, low nibble first, over
 * the whole tensor in row-major order) point into the mapped file, or into
 * @own when the image had to be copied.
 *
 * Such a constant is decoded to float32 only when something needs float32
 * (ert_graph_const_data()): once, shared by every session of the model.
 * Sessions with memory LOW leave the weights of Conv, Gemm and MatMul
 * encoded, and the CPU backend runs them with int8 kernels (cpu/dq/).
 */
struct ert_wq {
	int bits;                  /* 8 or 4 */
	uint32_t block;
	int64_t rows, row_len, blocks_per_row;
	const float *scales;
	const uint8_t *q;
	size_t enc_bytes;          /* stored bytes (scales and values) */
	void *own;                 /* owned copy of the stored bytes, or NULL */
	void *_Atomic decoded;     /* float32 values once decoded (owned), else NULL */
};

/*
 * A dimension is known (>= 0) or not (-1). Unknown dimensions may carry a
 * symbolic name (ONNX dim_param, "batch") in dim_names[].
 */
struct ert_tensor {
	const char *name;
	ert_dtype dtype;
	int32_t rank;                  /* -1: rank unknown (no shape information) */
	int64_t dims[ERT_MAX_RANK];
	const char *dim_names[ERT_MAX_RANK];
	uint32_t flags;
	/*
	 * ERT_TENSOR_CONST only. NULL for a block-quantised constant (@wq set):
	 * read those through ert_graph_const_data().
	 */
	const void *data;
	size_t nbytes;                 /* bytes at data (decoded float32 bytes with @wq) */
	struct ert_quant quant;
	struct ert_wq *wq;             /* block-quantised storage, or NULL */
	/*
	 * A sequence or optional (docs/sequences.md): kind != ERT_VALUE_TENSOR,
	 * dtype ERT_DTYPE_UINT64 and rank 0 (the value is a handle,
	 * ert-seq.h), @elem its tensors' dtype (UNDEFINED: not declared).
	 */
	uint8_t kind;                  /* ert_value_kind */
	ert_dtype elem;
};

#define ERT_NODE_MAX_IO 4096

struct ert_node {
	const char *name;
	enum ert_op op;
	uint16_t opset;         /* version of the node's domain the model imports */
	bool dead;              /* removed by a pass; dropped by ert_graph_compact() */
	uint32_t n_inputs;
	uint32_t n_outputs;
	int32_t *inputs;        /* tensor indices; -1 for an omitted optional input */
	int32_t *outputs;       /* tensor indices; -1 for an omitted optional output */
	uint32_t n_attrs;
	struct ert_attr *attrs;
};

struct ert_graph_hash;

/*
 * Deepest nesting of subgraphs a graph may hold: the main graph is depth 0,
 * an If branch in it depth 1, a Loop body inside that branch depth 2, ...
 * Deeper graphs are refused when validated (docs/control-flow.md).
 */
#define ERT_GRAPH_MAX_DEPTH 16

struct ert_graph {
	struct ert_tensor *tensors;
	uint32_t n_tensors, cap_tensors;
	struct ert_node *nodes;      /* in topological order once ert_graph_toposort() ran */
	uint32_t n_nodes, cap_nodes;
	int32_t *inputs;             /* tensor indices of graph inputs (not initializers) */
	uint32_t n_inputs, cap_inputs;
	int32_t *outputs;
	uint32_t n_outputs, cap_outputs;

	const char *producer;        /* informational */
	int64_t ir_version;
	int64_t opset;               /* default-domain opset the model imports */

	struct ert_arena *arena;     /* strings, attributes, small arrays */
	struct ert_graph_hash *names; /* tensor name → index */

	/*
	 * Subgraphs (If branches, Loop and Scan bodies; docs/control-flow.md).
	 * A subgraph has its own tensors, nodes, inputs and outputs, and
	 * @parent, the graph whose node holds it in a GRAPH attribute. Its
	 * @captures are its tensors (flag OUTER) that stand for values of
	 * enclosing graphs; the node reads those values as *implicit inputs*:
	 * its inputs end with the captures of each of its GRAPH attributes,
	 * attribute by attribute, bound position by position (a capture's name
	 * is informational). So ordering, liveness and the passes see them as
	 * ordinary inputs of the node.
	 */
	struct ert_graph *parent;
	int32_t *captures;
	uint32_t n_captures, cap_captures;
	struct ert_graph **subs;     /* subgraphs created under this graph (owned) */
	uint32_t n_subs, cap_subs;
};

/* Error message buffer used throughout the internals: "what: why". */
struct ert_err {
	char msg[512];
};
void ert_err_set(struct ert_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ert_err_vset(struct ert_err *e, const char *fmt, va_list ap);

struct ert_graph *ert_graph_create(void);
/* Accepts NULL and half-built graphs. */
void ert_graph_destroy(struct ert_graph *g);

/* Arena allocations live as long as the graph; NULL on out-of-memory. */
void *ert_graph_alloc(struct ert_graph *g, size_t size);
char *ert_graph_strdup(struct ert_graph *g, const char *s);
char *ert_graph_strndup(struct ert_graph *g, const char *s, size_t len);

/*
 * Add a tensor named @name (copied). Returns its index, or -1 on out-of-memory or
 * when the name is taken. rank -1 means unknown shape. @dims may be NULL when
 * rank <= 0.
 */
int32_t ert_graph_add_tensor(struct ert_graph *g, const char *name, ert_dtype dtype,
			     int32_t rank, const int64_t *dims);
/* Add a tensor with a fresh unique name derived from @hint. */
int32_t ert_graph_add_tensor_unique(struct ert_graph *g, const char *hint, ert_dtype dtype,
				    int32_t rank, const int64_t *dims);
/* Index of the tensor named @name, or -1. */
int32_t ert_graph_find_tensor(const struct ert_graph *g, const char *name);
/*
 * Make tensor @t constant with @nbytes of @data. @owned: the graph takes ownership
 * of malloc'd @data (freed with the graph or when replaced).
 */
void ert_graph_set_const(struct ert_graph *g, int32_t t, const void *data, size_t nbytes,
			 bool owned);

/*
 * The bytes constant @t keeps as loaded (a block-quantised one's encoded
 * scales and values, else its data) and their count in *@n; NULL when none.
 */
static inline const uint8_t *ert_tensor_stored(const struct ert_tensor *t, size_t *n)
{
	if (t->wq) {
		*n = t->wq->enc_bytes;
		return (const uint8_t *)(const void *)t->wq->scales;
	}
	*n = t->data ? t->nbytes : 0;
	return (const uint8_t *)t->data;
}

/*
 * The data of constant @t: its float32 values for a block-quantised constant,
 * decoded on the first call (thread-safe: sessions on other threads may share
 * the graph) and kept until the graph is destroyed. NULL when that decode
 * runs out of memory (or for a non-constant).
 */
const void *ert_graph_const_data(const struct ert_graph *g, int32_t t);
/* The float32 values of @wq (numel elements), decoded once; NULL on out-of-memory. */
const float *ert_wq_decoded(struct ert_wq *wq);

/* Append a node; arrays are copied. Returns the node index or -1 on out-of-memory. */
int32_t ert_graph_add_node(struct ert_graph *g, enum ert_op op, const char *name,
			   uint32_t n_in, const int32_t *in, uint32_t n_out, const int32_t *out);
/* Attach attributes (copied into the arena). NULL on out-of-memory. */
struct ert_attr *ert_node_add_attr(struct ert_graph *g, struct ert_node *n, const char *name,
				   enum ert_attr_type type);
bool ert_node_set_attr_int(struct ert_graph *g, struct ert_node *n, const char *name, int64_t v);
bool ert_node_set_attr_float(struct ert_graph *g, struct ert_node *n, const char *name, float v);
bool ert_node_set_attr_string(struct ert_graph *g, struct ert_node *n, const char *name,
			      const char *v);
bool ert_node_set_attr_ints(struct ert_graph *g, struct ert_node *n, const char *name,
			    const int64_t *v, uint32_t count);

bool ert_graph_add_input(struct ert_graph *g, int32_t t);
bool ert_graph_add_output(struct ert_graph *g, int32_t t);

/*
 * A new empty subgraph owned by @g (freed with it), its parent, with @g's
 * opset and IR version; NULL on out-of-memory. Attach it to a node with a
 * GRAPH attribute (ert_node_set_attr_graph()).
 */
struct ert_graph *ert_graph_add_subgraph(struct ert_graph *g);
/* Make tensor @t of subgraph @g a capture (flag OUTER), appended to g->captures. */
bool ert_graph_add_capture(struct ert_graph *g, int32_t t);
bool ert_node_set_attr_graph(struct ert_graph *g, struct ert_node *n, const char *name,
			     struct ert_graph *sub);
/* Subgraph attribute @name of @n, or NULL. */
struct ert_graph *ert_attr_graph(const struct ert_node *n, const char *name);
/*
 * Implicit inputs of @n: its GRAPH attributes' captures added up. They are
 * the last ones of n->inputs; the others are the op's own (explicit) inputs.
 */
uint32_t ert_node_implicit_inputs(const struct ert_node *n);
/* Depth of @g: 0 for a main graph, 1 for a subgraph of it, ... */
uint32_t ert_graph_depth(const struct ert_graph *g);

/*
 * Sort nodes topologically (stable for already-sorted graphs). Fails with a
 * message on a cycle or on a tensor consumed but never produced.
 */
ert_status ert_graph_toposort(struct ert_graph *g, struct ert_err *err);
/* Drop dead nodes and tensors no node, input or output refers to; renumbers. */
ert_status ert_graph_compact(struct ert_graph *g);
/*
 * Check indices, arities and dtypes: every reference in range, every consumed
 * tensor produced once or constant or an input (or, in a subgraph, a
 * capture). Subgraphs are validated the same way, with the structure their op
 * asks for (ert_op_check_subgraphs()), at most ERT_GRAPH_MAX_DEPTH deep.
 * Used after loading untrusted files.
 */
ert_status ert_graph_validate(const struct ert_graph *g, struct ert_err *err);

/* Index of the node producing tensor @t, or -1 (input, constant). O(nodes). */
int32_t ert_graph_producer(const struct ert_graph *g, int32_t t);

/*
 * Tensors of @g whose values shape inference needs (ert_op_value_inputs()),
 * and everything they are computed from; Shape and Size need only their
 * input's shape, and the selecting ops (NonZero, Compress, Unique,
 * NonMaxSuppression) nothing: the nodes after them are planned once they
 * ran. @g's nodes must be in topological order. Returns a malloc'd
 * array of n_tensors flags, or NULL on out-of-memory.
 */
uint8_t *ert_graph_mark_value_needed(const struct ert_graph *g);
/* Number of node inputs (plus graph outputs) reading tensor @t. O(nodes). */
uint32_t ert_graph_consumers(const struct ert_graph *g, int32_t t);

/* Attribute look-ups by name. */
const struct ert_attr *ert_node_attr(const struct ert_node *n, const char *name);
int64_t ert_attr_int(const struct ert_node *n, const char *name, int64_t def);
float ert_attr_float(const struct ert_node *n, const char *name, float def);
const char *ert_attr_string(const struct ert_node *n, const char *name, const char *def);
/* INTS attribute: pointer and count, or NULL/0 when absent. */
const int64_t *ert_attr_ints(const struct ert_node *n, const char *name, uint32_t *count);
const float *ert_attr_floats(const struct ert_node *n, const char *name, uint32_t *count);

/* Number of elements of a tensor with known shape; -1 when unknown or overflowing. */
int64_t ert_shape_numel(int32_t rank, const int64_t *dims);

#endif /* ERT_GRAPH_H */
