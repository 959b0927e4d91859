/* SPDX-License-Identifier: MIT */
/*
 * ONNX ModelProto → ert_graph. Nodes keep their per-opset form (attributes vs
 * inputs): kernels read node->opset and handle both.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/onnx-private.h"
#include "opt/passes.h"

struct importer {
	struct ert_graph *g;
	const char *dir;
	struct ert_err *err;
	/*
	 * A subgraph's importer: the one of the graph whose node holds it, and
	 * the subgraph's depth (docs/control-flow.md). Names the subgraph does
	 * not define are values of the enclosing graphs: captures.
	 */
	struct importer *outer;
	uint32_t depth;
	/* the model: its opset_import gives the version of each domain */
	const Onnx__ModelProto *model;
};

static const char *str_or_empty(const char *s)
{
	return s ? s : "";
}

static bool is_default_domain(const char *d)
{
	return !d || !*d || strcmp(d, "ai.onnx") == 0;
}

/*
 * The version of @domain the model imports, 0 when it imports none (ONNX's
 * checker requires an import for every domain a node uses; edgert reads such
 * a node at its op's first version of the domain, as it always read
 * com.microsoft nodes).
 */
static int64_t domain_version(const struct importer *im, const char *domain)
{
	for (size_t i = 0; i < im->model->n_opset_import; i++) {
		const Onnx__OperatorSetIdProto *o = im->model->opset_import[i];

		if (o->domain && strcmp(o->domain, domain) == 0 && o->has_version)
			return o->version;
	}
	return 0;
}

static ert_status oom(struct importer *im, const char *what)
{
	ert_err_set(im->err, "failed to import %s: out of memory", what);
	return ERT_STATUS_OUT_OF_MEMORY;
}

/*
 * Index of the tensor called @name, created with unknown type when new. In a
 * subgraph, every name it defines exists before its nodes are read
 * (declare_outputs()), so a new name is an outer value: a capture.
 */
static int32_t tensor_ref(struct importer *im, const char *name)
{
	int32_t t = ert_graph_find_tensor(im->g, name);

	if (t >= 0)
		return t;
	t = ert_graph_add_tensor(im->g, name, ERT_DTYPE_UNDEFINED, -1, NULL);
	if (t >= 0 && im->outer && !ert_graph_add_capture(im->g, t))
		return -1;
	return t;
}

/*
 * A sequence or optional type (docs/sequences.md): its kind and its tensors'
 * TypeProto; false for a tensor, a map, a sequence of sequences, ...
 */
static bool value_kind_of(const Onnx__TypeProto *tp, uint8_t *kind,
			  const Onnx__TypeProto__Tensor **elem)
{
	const Onnx__TypeProto *in = NULL;

	if (tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE && tp->sequence_type) {
		*kind = ERT_VALUE_SEQUENCE;
		in = tp->sequence_type->elem_type;
	} else if (tp->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE && tp->optional_type &&
		   (in = tp->optional_type->elem_type)) {
		*kind = ERT_VALUE_OPTIONAL;
		if (in->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE && in->sequence_type) {
			*kind = ERT_VALUE_OPTIONAL_SEQUENCE;
			in = in->sequence_type->elem_type;
		}
	}
	if (!in || in->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !in->tensor_type)
		return false;
	*elem = in->tensor_type;
	return true;
}

/* Tensor @x is a sequence or optional of @kind holding tensors of type @tt. */
static ert_status apply_value_kind(struct importer *im, struct ert_tensor *x, uint8_t kind,
				   const Onnx__TypeProto__Tensor *tt, const char *what, bool strict)
{
	int32_t dt = tt->has_elem_type ? tt->elem_type : 0;

	if (dt && !ert_dtype_valid(dt)) {
		if (!strict)
			return ERT_OK;
		ert_err_set(im->err, "%s '%s' is a %s of %s tensors: unsupported", what, x->name,
			    ert_value_kind_name(kind), dt > 0 && dt < ERT_DTYPE_COUNT ?
			    ert_dtype_name((ert_dtype)dt) : "unknown");
		return dt > 0 && dt < ERT_DTYPE_COUNT ? ERT_STATUS_UNSUPPORTED :
		       ERT_STATUS_INVALID_MODEL;
	}
	if (x->dtype != ERT_DTYPE_UNDEFINED || x->rank >= 0)
		return ERT_OK;
	x->kind = kind;
	x->elem = (ert_dtype)dt;
	x->dtype = ERT_DTYPE_UINT64;
	x->rank = 0;
	return ERT_OK;
}

/*
 * Copy what a TypeProto says into tensor @t where the tensor does not know it
 * yet. @strict (graph inputs/outputs): non-tensor types and strings are errors;
 * value_info entries of other kinds are ignored.
 */
static ert_status apply_type(struct importer *im, int32_t t, const Onnx__TypeProto *tp,
			     const char *kind, bool strict)
{
	struct ert_tensor *x = &im->g->tensors[t];
	const Onnx__TypeProto__Tensor *tt;

	if (!tp || (x->flags & ERT_TENSOR_CONST))
		return ERT_OK;
	if (tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type) {
		uint8_t vk;

		if (value_kind_of(tp, &vk, &tt))
			return apply_value_kind(im, x, vk, tt, kind, strict);
		if (!strict)
			return ERT_OK;
		ert_err_set(im->err, "%s '%s' is not a tensor (map types, sparse tensors and "
			    "sequences or optionals of those are not supported)", kind, x->name);
		return ERT_STATUS_UNSUPPORTED;
	}
	tt = tp->tensor_type;
	if (tt->has_elem_type && tt->elem_type != 0) {
		if (!ert_dtype_valid(tt->elem_type) && tt->elem_type != ERT_DTYPE_STRING) {
			if (!strict)
				return ERT_OK;
			bool known = tt->elem_type > 0 && tt->elem_type < ERT_DTYPE_COUNT;

			ert_err_set(im->err, "%s '%s' has %s type %s", kind, x->name,
				    known ? "unsupported" : "unknown",
				    known ? ert_dtype_name((ert_dtype)tt->elem_type) : "");
			return known ? ERT_STATUS_UNSUPPORTED : ERT_STATUS_INVALID_MODEL;
		}
		if (x->dtype == ERT_DTYPE_UNDEFINED)
			x->dtype = (ert_dtype)tt->elem_type;
	}
	if (!tt->shape || x->rank >= 0)
		return ERT_OK;
	if (tt->shape->n_dim > ERT_MAX_RANK) {
		if (!strict)
			return ERT_OK;
		ert_err_set(im->err, "%s '%s' has rank %zu, at most %d supported", kind, x->name,
			    tt->shape->n_dim, ERT_MAX_RANK);
		return ERT_STATUS_UNSUPPORTED;
	}
	for (size_t i = 0; i < tt->shape->n_dim; i++) {
		const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];

		x->dims[i] = -1;
		x->dim_names[i] = NULL;
		if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
		    d->dim_value > ERT_DIM_MAX) {
			/* a hint (value_info) that large is dropped; a graph input's is refused */
			if (!strict)
				continue;
			ert_err_set(im->err, "%s '%s' dimension %zu is %lld (at most 2^48)", kind,
				    x->name, i, (long long)d->dim_value);
			return ERT_STATUS_INVALID_MODEL;
		}
		if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
		    d->dim_value >= 0) {
			x->dims[i] = d->dim_value;
		} else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
			   d->dim_param && *d->dim_param) {
			x->dim_names[i] = ert_graph_strdup(im->g, d->dim_param);
			if (!x->dim_names[i])
				return oom(im, "a dimension name");
		}
	}
	x->rank = (int32_t)tt->shape->n_dim;
	return ERT_OK;
}

static ert_status import_opset(struct importer *im, const Onnx__ModelProto *m)
{
	/* Models without an opset_import predate it: ONNX reads them as opset 1. */
	im->g->opset = 1;
	for (size_t i = 0; i < m->n_opset_import; i++) {
		const Onnx__OperatorSetIdProto *o = m->opset_import[i];

		if (!is_default_domain(o->domain))
			continue;
		if (!o->has_version || o->version < 1) {
			ert_err_set(im->err, "model imports opset version %lld of the default domain",
				    (long long)o->version);
			return ERT_STATUS_INVALID_MODEL;
		}
		/* a newer opset may have changed any op: edgert cannot know how */
		if (o->version > ERT_ONNX_OPSET_MAX) {
			ert_err_set(im->err, "model imports opset %lld of the default domain; edgert "
				    "reads opsets 1 to %d (edgert ops lists each op's range)",
				    (long long)o->version, ERT_ONNX_OPSET_MAX);
			return ERT_STATUS_UNSUPPORTED;
		}
		im->g->opset = o->version;
	}
	return ERT_OK;
}

static ert_status import_initializers(struct importer *im, const Onnx__GraphProto *gp)
{
	char what[300];

	if (gp->n_sparse_initializer) {
		const Onnx__SparseTensorProto *sp = gp->sparse_initializer[0];

		ert_err_set(im->err, "sparse initializer '%s' is not supported",
			    sp->values ? str_or_empty(sp->values->name) : "");
		return ERT_STATUS_UNSUPPORTED;
	}
	for (size_t i = 0; i < gp->n_initializer; i++) {
		const Onnx__TensorProto *tp = gp->initializer[i];
		const char *name = str_or_empty(tp->name);
		struct ert_value v;
		int32_t t;
		ert_status st;

		if (!*name) {
			ert_err_set(im->err, "initializer %zu has no name", i);
			return ERT_STATUS_INVALID_MODEL;
		}
		if (ert_graph_find_tensor(im->g, name) >= 0) {
			ert_err_set(im->err, "initializer '%s' is defined twice", name);
			return ERT_STATUS_INVALID_MODEL;
		}
		snprintf(what, sizeof(what), "initializer '%.250s'", name);
		st = ert_onnx_tensor_decode(tp, im->dir, what, &v, im->err);
		if (st != ERT_OK)
			return st;
		t = ert_graph_add_tensor(im->g, name, v.dtype, v.rank, v.dims);
		if (t < 0) {
			free(v.data);
			return oom(im, what);
		}
		ert_tensor_make_const(im->g, t, &v);
	}
	return ERT_OK;
}

static ert_status import_inputs(struct importer *im, const Onnx__GraphProto *gp)
{
	for (size_t i = 0; i < gp->n_input; i++) {
		const Onnx__ValueInfoProto *vi = gp->input[i];
		const char *name = str_or_empty(vi->name);
		int32_t t;
		ert_status st;

		if (!*name) {
			ert_err_set(im->err, "graph input %zu has no name", i);
			return ERT_STATUS_INVALID_MODEL;
		}
		t = ert_graph_find_tensor(im->g, name);
		if (t >= 0 && (im->g->tensors[t].flags & ERT_TENSOR_CONST))
			continue; /* an initializer listed as input (IR < 4): a constant */
		if (t >= 0) {
			ert_err_set(im->err, "graph input '%s' is listed twice", name);
			return ERT_STATUS_INVALID_MODEL;
		}
		t = ert_graph_add_tensor(im->g, name, ERT_DTYPE_UNDEFINED, -1, NULL);
		if (t < 0)
			return oom(im, "graph inputs");
		st = apply_type(im, t, vi->type, "graph input", true);
		if (st != ERT_OK)
			return st;
		if (!ert_graph_add_input(im->g, t))
			return oom(im, "graph inputs");
	}
	return ERT_OK;
}

static ert_status import_outputs(struct importer *im, const Onnx__GraphProto *gp)
{
	for (size_t i = 0; i < gp->n_output; i++) {
		const Onnx__ValueInfoProto *vi = gp->output[i];
		const char *name = str_or_empty(vi->name);
		int32_t t;
		ert_status st;

		if (!*name) {
			ert_err_set(im->err, "graph output %zu has no name", i);
			return ERT_STATUS_INVALID_MODEL;
		}
		t = tensor_ref(im, name);
		if (t < 0)
			return oom(im, "graph outputs");
		st = apply_type(im, t, vi->type, "graph output", true);
		if (st != ERT_OK)
			return st;
		if (!ert_graph_add_output(im->g, t))
			return oom(im, "graph outputs");
	}
	for (size_t i = 0; i < gp->n_value_info; i++) {
		const Onnx__ValueInfoProto *vi = gp->value_info[i];
		int32_t t = ert_graph_find_tensor(im->g, str_or_empty(vi->name));

		if (t >= 0 && apply_type(im, t, vi->type, "value", false) != ERT_OK)
			return ERT_STATUS_OUT_OF_MEMORY;
	}
	return ERT_OK;
}

/* ---- nodes ---- */

static enum ert_attr_type attr_type_of(const Onnx__AttributeProto *a)
{
	if (a->has_type && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED)
		return (enum ert_attr_type)a->type;
	/* Very old models leave the type out: go by the field that is set. */
	if (a->has_f)
		return ERT_ATTR_FLOAT;
	if (a->has_i)
		return ERT_ATTR_INT;
	if (a->has_s)
		return ERT_ATTR_STRING;
	if (a->t)
		return ERT_ATTR_TENSOR;
	if (a->g)
		return ERT_ATTR_GRAPH;
	if (a->n_floats)
		return ERT_ATTR_FLOATS;
	if (a->n_ints)
		return ERT_ATTR_INTS;
	if (a->n_strings)
		return ERT_ATTR_STRINGS;
	return ERT_ATTR_UNDEFINED;
}

static ert_status import_graph_attr(struct importer *im, int32_t ni,
				    const Onnx__AttributeProto *a, const char *name);

/*
 * Optional's TypeProto attribute 'type', read as INTS [kind, element dtype]
 * (ERT_VALUE_TENSOR or _SEQUENCE): all the op needs to know.
 */
static ert_status import_type_attr(struct importer *im, int32_t ni,
				   const Onnx__AttributeProto *a, const char *name)
{
	const Onnx__TypeProto *tp = a->tp;
	const Onnx__TypeProto__Tensor *tt = NULL;
	int64_t v[2] = { ERT_VALUE_TENSOR, 0 };
	uint8_t kind;

	if (tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
		tt = tp->tensor_type;
	else if (tp && value_kind_of(tp, &kind, &tt) && kind == ERT_VALUE_SEQUENCE)
		v[0] = ERT_VALUE_SEQUENCE;
	else
		tt = NULL;
	if (!tt || !tt->has_elem_type || !ert_dtype_valid(tt->elem_type)) {
		ert_err_set(im->err, "node '%s' (Optional) attribute '%s': an optional of a tensor "
			    "or sequence of tensors of a supported dtype only",
			    im->g->nodes[ni].name, name);
		return ERT_STATUS_UNSUPPORTED;
	}
	v[1] = tt->elem_type;
	if (!ert_node_set_attr_ints(im->g, &im->g->nodes[ni], name, v, 2))
		return oom(im, "attributes");
	return ERT_OK;
}

static ert_status import_attr(struct importer *im, int32_t ni, const Onnx__AttributeProto *a)
{
	struct ert_graph *g = im->g;
	const char *node_name = g->nodes[ni].name;
	const char *name = str_or_empty(a->name);
	enum ert_attr_type type = attr_type_of(a);
	struct ert_attr *at;
	char what[300];

	if (!*name) {
		ert_err_set(im->err, "node '%s' has an attribute without a name", node_name);
		return ERT_STATUS_INVALID_MODEL;
	}
	if (ert_node_attr(&g->nodes[ni], name)) {
		ert_err_set(im->err, "node '%s' has attribute '%s' twice", node_name, name);
		return ERT_STATUS_INVALID_MODEL;
	}
	/* TYPE_PROTO (13): Optional's type */
	if ((int)type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO &&
	    g->nodes[ni].op == ERT_OP_Optional && strcmp(name, "type") == 0)
		return import_type_attr(im, ni, a, name);
	switch (type) {
	case ERT_ATTR_FLOAT:
	case ERT_ATTR_INT:
	case ERT_ATTR_STRING:
	case ERT_ATTR_TENSOR:
	case ERT_ATTR_FLOATS:
	case ERT_ATTR_INTS:
	case ERT_ATTR_STRINGS:
		break;
	case ERT_ATTR_GRAPH:
		return import_graph_attr(im, ni, a, name);
	default:
		ert_err_set(im->err, "node '%s' (%s) attribute '%s': attributes of type %d "
			    "(graph lists, sparse tensors, tensor lists, types) are not supported",
			    node_name, ert_op_name(g->nodes[ni].op), name, (int)type);
		return ERT_STATUS_UNSUPPORTED;
	}
	if (a->n_floats > UINT32_MAX || a->n_ints > UINT32_MAX || a->n_strings > UINT32_MAX) {
		ert_err_set(im->err, "node '%s' attribute '%s' is too long", node_name, name);
		return ERT_STATUS_INVALID_MODEL;
	}
	at = ert_node_add_attr(g, &g->nodes[ni], name, type);
	if (!at)
		return oom(im, "attributes");
	switch (type) {
	case ERT_ATTR_FLOAT:
		at->f = a->f;
		break;
	case ERT_ATTR_INT:
		at->i = a->i;
		break;
	case ERT_ATTR_STRING:
		if (a->s.len > UINT32_MAX - 1) {
			ert_err_set(im->err, "node '%s' attribute '%s' is too long", node_name,
				    name);
			return ERT_STATUS_INVALID_MODEL;
		}
		at->s = ert_graph_strndup(g, a->s.data ? (const char *)a->s.data : "", a->s.len);
		at->len = (uint32_t)a->s.len;
		if (!at->s)
			return oom(im, "attributes");
		break;
	case ERT_ATTR_TENSOR: {
		struct ert_value v;
		int32_t t;
		ert_status st;

		if (!a->t) {
			ert_err_set(im->err, "node '%s' attribute '%s' has no tensor", node_name,
				    name);
			return ERT_STATUS_INVALID_MODEL;
		}
		snprintf(what, sizeof(what), "node '%.120s' attribute '%.120s'", node_name, name);
		st = ert_onnx_tensor_decode(a->t, im->dir, what, &v, im->err);
		if (st != ERT_OK)
			return st;
		snprintf(what, sizeof(what), "%.120s.%.120s", node_name, name);
		t = ert_graph_add_tensor_unique(g, what, v.dtype, v.rank, v.dims);
		if (t < 0) {
			free(v.data);
			return oom(im, "attributes");
		}
		ert_tensor_make_const(g, t, &v);
		at->tensor = t;
		break;
	}
	case ERT_ATTR_FLOATS: {
		float *f = ert_graph_alloc(g, (a->n_floats ? a->n_floats : 1) * sizeof(*f));

		if (!f)
			return oom(im, "attributes");
		if (a->n_floats)
			memcpy(f, a->floats, a->n_floats * sizeof(*f));
		at->floats = f;
		at->count = (uint32_t)a->n_floats;
		break;
	}
	case ERT_ATTR_INTS: {
		int64_t *v = ert_graph_alloc(g, (a->n_ints ? a->n_ints : 1) * sizeof(*v));

		if (!v)
			return oom(im, "attributes");
		if (a->n_ints)
			memcpy(v, a->ints, a->n_ints * sizeof(*v));
		at->ints = v;
		at->count = (uint32_t)a->n_ints;
		break;
	}
	case ERT_ATTR_STRINGS: {
		const char **s = ert_graph_alloc(g, (a->n_strings ? a->n_strings : 1) * sizeof(*s));

		if (!s)
			return oom(im, "attributes");
		for (size_t k = 0; k < a->n_strings; k++) {
			const ProtobufCBinaryData *b = &a->strings[k];

			s[k] = ert_graph_strndup(g, b->data ? (const char *)b->data : "", b->len);
			if (!s[k])
				return oom(im, "attributes");
		}
		at->strings = s;
		at->count = (uint32_t)a->n_strings;
		break;
	}
	default:
		break;
	}
	return ERT_OK;
}

/* A Constant node becomes a constant tensor; it never reaches the graph. */
static ert_status import_constant(struct importer *im, const Onnx__NodeProto *np)
{
	const char *node_name = np->name && *np->name ? np->name : "Constant";
	const Onnx__AttributeProto *a;
	struct ert_value v;
	char what[300];
	int32_t t;
	ert_status st;

	if (np->n_output != 1 || !np->output[0] || !*np->output[0] || np->n_attribute != 1) {
		ert_err_set(im->err, "Constant '%s' needs one output and one attribute", node_name);
		return ERT_STATUS_INVALID_MODEL;
	}
	a = np->attribute[0];
	memset(&v, 0, sizeof(v));
	const char *an = str_or_empty(a->name);

	snprintf(what, sizeof(what), "Constant '%.250s'", node_name);
	if (strcmp(an, "value") == 0 && a->t) {
		st = ert_onnx_tensor_decode(a->t, im->dir, what, &v, im->err);
		if (st != ERT_OK)
			return st;
	} else if (strcmp(an, "value_float") == 0 || strcmp(an, "value_int") == 0 ||
		   strcmp(an, "value_floats") == 0 || strcmp(an, "value_ints") == 0) {
		bool is_float = an[6] == 'f';
		bool is_list = an[strlen(an) - 1] == 's';
		size_t n = !is_list ? 1 : is_float ? a->n_floats : a->n_ints;

		if (n > (size_t)INT32_MAX) {
			ert_err_set(im->err, "%s is too large", what);
			return ERT_STATUS_INVALID_MODEL;
		}
		v.dtype = is_float ? ERT_DTYPE_FLOAT32 : ERT_DTYPE_INT64;
		v.rank = is_list ? 1 : 0;
		v.dims[0] = (int64_t)n;
		v.numel = (int64_t)n;
		v.nbytes = n * ert_dtype_size(v.dtype);
		v.data = malloc(v.nbytes ? v.nbytes : 1);
		if (!v.data)
			return oom(im, what);
		if (!is_list && is_float)
			memcpy(v.data, &a->f, sizeof(float));
		else if (!is_list)
			memcpy(v.data, &a->i, sizeof(int64_t));
		else if (n)
			memcpy(v.data, is_float ? (const void *)a->floats : (const void *)a->ints,
			       v.nbytes);
	} else if (strncmp(an, "value_string", 12) == 0) {
		ert_err_set(im->err, "%s: string constants are not supported", what);
		return ERT_STATUS_UNSUPPORTED;
	} else if (strcmp(an, "sparse_value") == 0) {
		ert_err_set(im->err, "%s: sparse constants are not supported", what);
		return ERT_STATUS_UNSUPPORTED;
	} else {
		ert_err_set(im->err, "%s: unknown or empty attribute '%s'", what, an);
		return ERT_STATUS_INVALID_MODEL;
	}
	t = tensor_ref(im, np->output[0]);
	if (t < 0) {
		free(v.data);
		return oom(im, what);
	}
	if (im->g->tensors[t].flags & (ERT_TENSOR_CONST | ERT_TENSOR_INPUT)) {
		free(v.data);
		ert_err_set(im->err, "%s writes '%s', which already has a value", what,
			    np->output[0]);
		return ERT_STATUS_INVALID_MODEL;
	}
	ert_tensor_make_const(im->g, t, &v);
	return ERT_OK;
}

/*
 * The values node @ni's subgraphs read from enclosing graphs become its last
 * inputs, resolved here (a capture of this graph again when this graph is a
 * subgraph that does not define them).
 */
static ert_status add_implicit_inputs(struct importer *im, int32_t ni)
{
	struct ert_node *n = &im->g->nodes[ni];
	uint32_t extra = ert_node_implicit_inputs(n), at = n->n_inputs;
	int32_t *in;

	if (!extra)
		return ERT_OK;
	if (extra > ERT_NODE_MAX_IO - n->n_inputs) {
		ert_err_set(im->err, "node '%s' reads %u values of enclosing graphs, too many",
			    n->name, extra);
		return ERT_STATUS_UNSUPPORTED;
	}
	in = realloc(n->inputs, (n->n_inputs + extra) * sizeof(*in));
	if (!in)
		return oom(im, "node inputs");
	n->inputs = in;
	for (uint32_t a = 0; a < n->n_attrs; a++) {
		const struct ert_graph *sub = n->attrs[a].graph;

		if (n->attrs[a].type != ERT_ATTR_GRAPH)
			continue;
		for (uint32_t c = 0; c < sub->n_captures; c++) {
			int32_t t = tensor_ref(im, sub->tensors[sub->captures[c]].name);

			if (t < 0)
				return oom(im, "node inputs");
			in[at++] = t;
		}
	}
	n->n_inputs = at;
	return ERT_OK;
}

/*
 * A node is read only from the domain ert-ops-opset.def gives its op ("" the
 * default one, "ai.onnx.ml", "ai.onnx.preview.training", "com.microsoft"),
 * within the op's range of that domain's imported version.
 */
static ert_status check_opset(struct importer *im, enum ert_op op, const char *domain,
			      const char *type, const char *name)
{
	const struct ert_op_opset *r = ert_op_opset(op);
	bool dflt = is_default_domain(domain);
	int64_t v;

	if (!r)
		return ERT_OK; /* unknown or edgert's own: refused below with their own messages */
	if (dflt != !*r->domain || (!dflt && strcmp(domain, r->domain) != 0)) {
		if (dflt)
			ert_err_set(im->err, "unsupported op '%s' (node '%s'): %s is in the %s domain",
				    type, name, type, r->domain);
		else
			ert_err_set(im->err, "unsupported op '%s:%s' (node '%s'): %s is in the %s domain",
				    domain, type, name, type, *r->domain ? r->domain : "default");
		return ERT_STATUS_UNSUPPORTED;
	}
	v = dflt ? im->g->opset : domain_version(im, domain);
	/* edgert has read com.microsoft nodes without an import of their domain: keep doing so */
	if (!v)
		v = r->since;
	if (v < r->since) {
		if (dflt)
			ert_err_set(im->err, "op '%s' (node '%s') exists from opset %lld; the model "
				    "imports opset %lld", type, name, (long long)r->since, (long long)v);
		else
			ert_err_set(im->err, "op '%s:%s' (node '%s') exists from opset %lld of %s; "
				    "the model imports opset %lld of it", domain, type, name,
				    (long long)r->since, domain, (long long)v);
		return ERT_STATUS_INVALID_MODEL;
	}
	if (v > r->until) {
		ert_err_set(im->err, "unsupported op '%s' (node '%s'): ONNX deprecated it after opset "
			    "%lld; the model imports opset %lld", type, name, (long long)r->until,
			    (long long)v);
		return ERT_STATUS_UNSUPPORTED;
	}
	return ERT_OK;
}

static ert_status import_node(struct importer *im, const Onnx__NodeProto *np, int32_t *io)
{
	const char *type = str_or_empty(np->op_type);
	const char *name = str_or_empty(np->name);
	enum ert_op op;
	ert_status st;
	int32_t ni;

	op = ert_op_from_name(type);
	if (!is_default_domain(np->domain) && !ert_op_opset(op)) {
		ert_err_set(im->err, "unsupported op '%s:%s' (node '%s')", np->domain, type, name);
		return ERT_STATUS_UNSUPPORTED;
	}
	if ((st = check_opset(im, op, np->domain, type, name)) != ERT_OK)
		return st;
	if (op == ERT_OP_Constant)
		return import_constant(im, np);
	if (op == ERT_OP_QLinearLookup || op == ERT_OP_FusedAttention ||
	    op == ERT_OP_InvertedResidual) {
		ert_err_set(im->err, "unsupported op '%s' (node '%s'): edgert's own op, not an ONNX one",
			    type, name);
		return ERT_STATUS_UNSUPPORTED;
	}
	if (op == ERT_OP_COUNT) {
		ert_err_set(im->err, "unsupported op '%s' (node '%s')", type, name);
		return ERT_STATUS_UNSUPPORTED;
	}
	if (np->n_output == 0) {
		ert_err_set(im->err, "node '%s' (%s) has no outputs", name, type);
		return ERT_STATUS_INVALID_MODEL;
	}
	if (np->n_input > ERT_NODE_MAX_IO || np->n_output > ERT_NODE_MAX_IO) {
		ert_err_set(im->err, "node '%s' has %zu inputs and %zu outputs, at most %d each",
			    name, np->n_input, np->n_output, ERT_NODE_MAX_IO);
		return ERT_STATUS_UNSUPPORTED;
	}
	for (size_t k = 0; k < np->n_input + np->n_output; k++) {
		const char *tn = k < np->n_input ? np->input[k] : np->output[k - np->n_input];

		io[k] = tn && *tn ? tensor_ref(im, tn) : -1;
		if (tn && *tn && io[k] < 0)
			return oom(im, "node inputs");
	}
	ni = ert_graph_add_node(im->g, op, name, (uint32_t)np->n_input, io,
				(uint32_t)np->n_output, io + np->n_input);
	if (ni < 0)
		return oom(im, "nodes");
	/* ert_node.opset: the version of the node's domain */
	if (!is_default_domain(np->domain))
		im->g->nodes[ni].opset = (uint16_t)(domain_version(im, np->domain)
						    ? domain_version(im, np->domain)
						    : ert_op_opset(op)->since);
	for (size_t k = 0; k < np->n_attribute; k++) {
		st = import_attr(im, ni, np->attribute[k]);
		if (st != ERT_OK)
			return st;
	}
	return add_implicit_inputs(im, ni);
}

static ert_status import_nodes(struct importer *im, const Onnx__GraphProto *gp)
{
	int32_t *io = malloc(2 * ERT_NODE_MAX_IO * sizeof(*io));
	ert_status st = ERT_OK;

	if (!io)
		return oom(im, "nodes");
	for (size_t i = 0; i < gp->n_node && st == ERT_OK; i++)
		st = import_node(im, gp->node[i], io);
	free(io);
	return st;
}

/* A subgraph defines its node outputs before its nodes are read: see tensor_ref(). */
static ert_status declare_outputs(struct importer *im, const Onnx__GraphProto *gp)
{
	for (size_t i = 0; i < gp->n_node; i++) {
		const Onnx__NodeProto *np = gp->node[i];

		for (size_t k = 0; k < np->n_output; k++) {
			const char *tn = np->output[k];

			if (!tn || !*tn || ert_graph_find_tensor(im->g, tn) >= 0)
				continue;
			if (ert_graph_add_tensor(im->g, tn, ERT_DTYPE_UNDEFINED, -1, NULL) < 0)
				return oom(im, "a subgraph");
		}
	}
	return ERT_OK;
}

static ert_status import_graph_attr(struct importer *im, int32_t ni,
				    const Onnx__AttributeProto *a, const char *name)
{
	struct ert_node *n = &im->g->nodes[ni];
	struct importer sub = { .dir = im->dir, .err = im->err, .outer = im,
				.depth = im->depth + 1, .model = im->model };
	const Onnx__GraphProto *gp = a->g;
	ert_status st;

	if (!gp) {
		ert_err_set(im->err, "node '%s' attribute '%s' has no graph", n->name, name);
		return ERT_STATUS_INVALID_MODEL;
	}
	if (sub.depth > ERT_GRAPH_MAX_DEPTH) {
		ert_err_set(im->err, "%s '%s' attribute '%s': subgraphs nest deeper than %d levels",
			    ert_op_name(n->op), n->name, name, ERT_GRAPH_MAX_DEPTH);
		return ERT_STATUS_INVALID_MODEL;
	}
	sub.g = ert_graph_add_subgraph(im->g);
	if (!sub.g || !ert_node_set_attr_graph(im->g, n, name, sub.g))
		return oom(im, "a subgraph");
	if ((st = import_initializers(&sub, gp)) != ERT_OK ||
	    (st = import_inputs(&sub, gp)) != ERT_OK ||
	    (st = declare_outputs(&sub, gp)) != ERT_OK ||
	    (st = import_nodes(&sub, gp)) != ERT_OK ||
	    (st = import_outputs(&sub, gp)) != ERT_OK)
		goto error;
	if (sub.g->n_nodes && (st = ert_graph_toposort(sub.g, im->err)) != ERT_OK)
		goto error;
	return ERT_OK;
error:
	{
		char msg[sizeof(im->err->msg)];

		snprintf(msg, sizeof(msg), "%s", im->err->msg);
		ert_err_set(im->err, "%s '%s' %s: %s", ert_op_name(im->g->nodes[ni].op),
			    im->g->nodes[ni].name, name, msg);
	}
	return st;
}

static ert_status import_model(struct importer *im, const Onnx__ModelProto *m,
			       const struct ert_onnx_options *opt)
{
	const Onnx__GraphProto *gp = m->graph;
	ert_status st;

	if (!gp) {
		ert_err_set(im->err, "failed to import ONNX model: it has no graph");
		return ERT_STATUS_INVALID_MODEL;
	}
	im->g->ir_version = m->has_ir_version ? m->ir_version : 0;
	if (m->producer_name) {
		im->g->producer = ert_graph_strdup(im->g, m->producer_name);
		if (!im->g->producer)
			return oom(im, "the model");
	}
	if ((st = import_opset(im, m)) != ERT_OK ||
	    (st = import_initializers(im, gp)) != ERT_OK ||
	    (st = import_inputs(im, gp)) != ERT_OK ||
	    (st = import_nodes(im, gp)) != ERT_OK ||
	    (st = import_outputs(im, gp)) != ERT_OK)
		return st;
	/* toposort memcpy()s into g->nodes, which is NULL for a graph without nodes */
	if (im->g->n_nodes && (st = ert_graph_toposort(im->g, im->err)) != ERT_OK)
		return st;
	if ((st = ert_graph_validate(im->g, im->err)) != ERT_OK)
		return st;
	if (opt && opt->optimize)
		st = ert_graph_optimize(im->g, im->err);
	return st;
}

ert_status ert_onnx_import_memory(const void *data, size_t size, const char *dir,
				  const struct ert_onnx_options *opt, struct ert_graph **out,
				  struct ert_err *err)
{
	struct importer im = { .dir = dir, .err = err };
	Onnx__ModelProto *m;
	ert_status st;

	if (!data && size) {
		ert_err_set(err, "failed to import ONNX model: no data");
		return ERT_STATUS_INVALID_ARGUMENT;
	}
	st = ert_onnx_check_depth(&onnx__model_proto__descriptor, data, size, err);
	if (st != ERT_OK)
		return st;
	m = onnx__model_proto__unpack(NULL, size, data);
	if (!m) {
		ert_err_set(err, "failed to parse ONNX model: not a valid ModelProto");
		return ERT_STATUS_INVALID_MODEL;
	}
	im.model = m;
	im.g = ert_graph_create();
	if (!im.g) {
		onnx__model_proto__free_unpacked(m, NULL);
		ert_err_set(err, "failed to import ONNX model: out of memory");
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	st = import_model(&im, m, opt);
	onnx__model_proto__free_unpacked(m, NULL);
	if (st != ERT_OK) {
		ert_graph_destroy(im.g);
		return st;
	}
	*out = im.g;
	return ERT_OK;
}

ert_status ert_onnx_import_file(const char *path, const struct ert_onnx_options *opt,
				struct ert_graph **out, struct ert_err *err)
{
	uint8_t *buf = NULL;
	size_t size = 0;
	char *dir;
	ert_status st = ert_onnx_read_file(path, &buf, &size, err);

	if (st != ERT_OK)
		return st;
	dir = ert_onnx_dirname(path);
	if (!dir) {
		free(buf);
		ert_err_set(err, "failed to import '%s': out of memory", path);
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	st = ert_onnx_import_memory(buf, size, dir, opt, out, err);
	free(dir);
	free(buf);
	return st;
}
