/* SPDX-License-Identifier: MIT */
/*
 * An ert_graph written as an ONNX model: the way back from the graphs edgert
 * builds itself (`edgert zoo NAME -o FILE.onnx`), so that another runtime can
 * run the very same model, weights included, next to edgert.
 *
 * Only what ONNX can say is written: ops of ONNX's domains with their
 * attributes, constant tensors as initializers (their bytes as raw_data,
 * little-endian as in memory), the graph's inputs and outputs with their
 * shapes. A graph the optimiser has worked on carries edgert's own ops
 * (FusedAttention, InvertedResidual, QLinearLookup) and attributes ("ert.act",
 * "ert.residual", ...) that no other runtime reads: those are refused with a
 * message naming the node, as are subgraphs, block-quantised constants and
 * models past protobuf's 2 GiB.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "ert-file.h"
#include "onnx.pb-c.h"
#include "onnx/onnx-export.h"

/* Everything the model points at, freed at once. */
struct ex {
	void **blocks;
	size_t n, cap;
	bool oom;
};

static void *ex_alloc(struct ex *e, size_t size)
{
	void *p;

	if (e->oom)
		return NULL;
	if (e->n == e->cap) {
		size_t cap = e->cap ? 2 * e->cap : 64;
		void **nb = realloc(e->blocks, cap * sizeof(*nb));

		if (!nb) {
			e->oom = true;
			return NULL;
		}
		e->blocks = nb;
		e->cap = cap;
	}
	p = calloc(1, size ? size : 1);
	if (!p) {
		e->oom = true;
		return NULL;
	}
	e->blocks[e->n++] = p;
	return p;
}

static void ex_free(struct ex *e)
{
	for (size_t i = 0; i < e->n; i++)
		free(e->blocks[i]);
	free(e->blocks);
}

/* The lowest IR version that may import default-domain opset @opset. */
static int64_t ir_for_opset(int64_t opset)
{
	return opset >= 21 ? 10 : opset >= 19 ? 9 : opset >= 15 ? 8 : 7;
}

/* TensorProto of constant @t (raw_data points at the graph's bytes). */
static Onnx__TensorProto *tensor_proto(struct ex *e, const struct ert_tensor *t)
{
	Onnx__TensorProto *tp = ex_alloc(e, sizeof(*tp));
	int64_t *dims = ex_alloc(e, (size_t)(t->rank > 0 ? t->rank : 1) * sizeof(*dims));

	if (!tp || !dims)
		return NULL;
	onnx__tensor_proto__init(tp);
	tp->name = (char *)t->name;
	tp->has_data_type = true;
	tp->data_type = (int32_t)t->dtype;
	for (int32_t d = 0; d < t->rank; d++)
		dims[d] = t->dims[d];
	tp->n_dims = (size_t)t->rank;
	tp->dims = dims;
	tp->has_raw_data = true;
	tp->raw_data.len = t->nbytes;
	tp->raw_data.data = (uint8_t *)t->data;
	return tp;
}

/* ValueInfoProto of graph input or output @t: its dtype and static or named dims. */
static Onnx__ValueInfoProto *value_info(struct ex *e, const struct ert_tensor *t)
{
	Onnx__ValueInfoProto *vi = ex_alloc(e, sizeof(*vi));
	Onnx__TypeProto *ty = ex_alloc(e, sizeof(*ty));
	Onnx__TypeProto__Tensor *tt = ex_alloc(e, sizeof(*tt));

	if (!vi || !ty || !tt)
		return NULL;
	onnx__value_info_proto__init(vi);
	onnx__type_proto__init(ty);
	onnx__type_proto__tensor__init(tt);
	vi->name = (char *)t->name;
	vi->type = ty;
	ty->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	ty->tensor_type = tt;
	tt->has_elem_type = true;
	tt->elem_type = (int32_t)t->dtype;
	if (t->rank < 0)
		return vi;
	Onnx__TensorShapeProto *sh = ex_alloc(e, sizeof(*sh));
	Onnx__TensorShapeProto__Dimension **dv =
		ex_alloc(e, (size_t)(t->rank ? t->rank : 1) * sizeof(*dv));

	if (!sh || !dv)
		return NULL;
	onnx__tensor_shape_proto__init(sh);
	for (int32_t d = 0; d < t->rank; d++) {
		Onnx__TensorShapeProto__Dimension *dim = ex_alloc(e, sizeof(*dim));

		if (!dim)
			return NULL;
		onnx__tensor_shape_proto__dimension__init(dim);
		if (t->dim_names[d]) {
			dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
			dim->dim_param = (char *)t->dim_names[d];
		} else if (t->dims[d] >= 0) {
			dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
			dim->dim_value = t->dims[d];
		}
		dv[d] = dim;
	}
	sh->n_dim = (size_t)t->rank;
	sh->dim = dv;
	tt->shape = sh;
	return vi;
}

static ert_status refuse(struct ert_err *err, const struct ert_node *n, const char *why,
			 const char *what)
{
	ert_err_set(err, "node '%s' (%s): %s%s%s", n->name ? n->name : "", ert_op_name(n->op), why,
		    what ? " " : "", what ? what : "");
	return ERT_STATUS_UNSUPPORTED;
}

static ert_status attr_proto(struct ex *e, const struct ert_graph *g, const struct ert_node *n,
			     const struct ert_attr *a, Onnx__AttributeProto **out,
			     struct ert_err *err)
{
	Onnx__AttributeProto *ap;

	if (!strncmp(a->name, "ert.", 4))
		return refuse(err, n, "carries edgert's own attribute", a->name);
	ap = ex_alloc(e, sizeof(*ap));
	if (!ap)
		return ERT_STATUS_OUT_OF_MEMORY;
	onnx__attribute_proto__init(ap);
	ap->name = (char *)a->name;
	ap->has_type = true;
	switch (a->type) {
	case ERT_ATTR_FLOAT:
		ap->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
		ap->has_f = true;
		ap->f = a->f;
		break;
	case ERT_ATTR_INT:
		ap->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
		ap->has_i = true;
		ap->i = a->i;
		break;
	case ERT_ATTR_STRING:
		ap->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
		ap->has_s = true;
		ap->s.len = a->len;
		ap->s.data = (uint8_t *)a->s;
		break;
	case ERT_ATTR_FLOATS:
		ap->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
		ap->n_floats = a->count;
		ap->floats = (float *)a->floats;
		break;
	case ERT_ATTR_INTS:
		ap->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
		ap->n_ints = a->count;
		ap->ints = (int64_t *)a->ints;
		break;
	case ERT_ATTR_STRINGS: {
		ProtobufCBinaryData *sv = ex_alloc(e, (a->count ? a->count : 1) * sizeof(*sv));

		if (!sv)
			return ERT_STATUS_OUT_OF_MEMORY;
		for (uint32_t k = 0; k < a->count; k++) {
			sv[k].len = strlen(a->strings[k]);
			sv[k].data = (uint8_t *)a->strings[k];
		}
		ap->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS;
		ap->n_strings = a->count;
		ap->strings = sv;
		break;
	}
	case ERT_ATTR_TENSOR: {
		const struct ert_tensor *t;

		if (a->tensor < 0 || (uint32_t)a->tensor >= g->n_tensors)
			return refuse(err, n, "has a tensor attribute without a tensor:", a->name);
		t = &g->tensors[a->tensor];
		if (!(t->flags & ERT_TENSOR_CONST) || !t->data)
			return refuse(err, n, "has a tensor attribute that is not plain data:",
				      a->name);
		ap->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
		ap->t = tensor_proto(e, t);
		if (!ap->t)
			return ERT_STATUS_OUT_OF_MEMORY;
		break;
	}
	default:
		return refuse(err, n, "has an attribute ONNX export does not write (a subgraph):",
			      a->name);
	}
	*out = ap;
	return ERT_OK;
}

static ert_status node_proto(struct ex *e, const struct ert_graph *g, const struct ert_node *n,
			     Onnx__NodeProto **out, struct ert_err *err)
{
	const struct ert_op_opset *os = ert_op_opset(n->op);
	Onnx__NodeProto *np;
	char **in, **outs;
	Onnx__AttributeProto **attrs;

	if (!os)
		return refuse(err, n, "is an op of edgert's own, which no ONNX runtime reads", NULL);
	np = ex_alloc(e, sizeof(*np));
	in = ex_alloc(e, (n->n_inputs ? n->n_inputs : 1) * sizeof(*in));
	outs = ex_alloc(e, (n->n_outputs ? n->n_outputs : 1) * sizeof(*outs));
	attrs = ex_alloc(e, (n->n_attrs ? n->n_attrs : 1) * sizeof(*attrs));
	if (!np || !in || !outs || !attrs)
		return ERT_STATUS_OUT_OF_MEMORY;
	onnx__node_proto__init(np);
	np->name = (char *)(n->name ? n->name : "");
	np->op_type = (char *)ert_op_name(n->op);
	np->domain = (char *)os->domain;
	/* an omitted optional input or output is the empty name */
	for (uint32_t k = 0; k < n->n_inputs; k++)
		in[k] = (char *)(n->inputs[k] >= 0 ? g->tensors[n->inputs[k]].name : "");
	for (uint32_t k = 0; k < n->n_outputs; k++)
		outs[k] = (char *)(n->outputs[k] >= 0 ? g->tensors[n->outputs[k]].name : "");
	np->n_input = n->n_inputs;
	np->input = in;
	np->n_output = n->n_outputs;
	np->output = outs;
	for (uint32_t k = 0; k < n->n_attrs; k++) {
		ert_status st = attr_proto(e, g, n, &n->attrs[k], &attrs[k], err);

		if (st != ERT_OK)
			return st;
	}
	np->n_attribute = n->n_attrs;
	np->attribute = attrs;
	*out = np;
	return ERT_OK;
}

/* The domains the nodes use besides the default one, each once, with their newest version. */
static ert_status opset_imports(struct ex *e, const struct ert_graph *g, Onnx__ModelProto *m)
{
	Onnx__OperatorSetIdProto **ids = ex_alloc(e, (g->n_nodes + 1) * sizeof(*ids));
	size_t n = 0;

	if (!ids)
		return ERT_STATUS_OUT_OF_MEMORY;
	for (uint32_t i = 0; i <= g->n_nodes; i++) {
		const char *dom = "";
		int64_t ver = g->opset;

		if (i < g->n_nodes) {
			const struct ert_op_opset *os = ert_op_opset(g->nodes[i].op);

			if (!os || !os->domain[0])
				continue;
			dom = os->domain;
			ver = os->until;
		}
		size_t k = 0;

		while (k < n && strcmp(ids[k]->domain, dom))
			k++;
		if (k < n)
			continue;
		ids[n] = ex_alloc(e, sizeof(**ids));
		if (!ids[n])
			return ERT_STATUS_OUT_OF_MEMORY;
		onnx__operator_set_id_proto__init(ids[n]);
		ids[n]->domain = (char *)dom;
		ids[n]->has_version = true;
		ids[n]->version = ver;
		n++;
	}
	m->n_opset_import = n;
	m->opset_import = ids;
	return ERT_OK;
}

static ert_status build_model(struct ex *e, const struct ert_graph *g, Onnx__ModelProto *m,
			      struct ert_err *err)
{
	Onnx__GraphProto *gp = ex_alloc(e, sizeof(*gp));
	Onnx__NodeProto **nodes = ex_alloc(e, (g->n_nodes ? g->n_nodes : 1) * sizeof(*nodes));
	Onnx__TensorProto **inits = ex_alloc(e, (g->n_tensors ? g->n_tensors : 1) * sizeof(*inits));
	Onnx__ValueInfoProto **ins = ex_alloc(e, (g->n_inputs ? g->n_inputs : 1) * sizeof(*ins));
	Onnx__ValueInfoProto **outs = ex_alloc(e, (g->n_outputs ? g->n_outputs : 1) * sizeof(*outs));
	ert_status st;
	size_t ni = 0;

	if (!gp || !nodes || !inits || !ins || !outs)
		return ERT_STATUS_OUT_OF_MEMORY;
	onnx__graph_proto__init(gp);
	gp->name = "edgert";
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		if (g->nodes[i].dead) {
			ert_err_set(err, "the graph holds removed nodes (compact it first)");
			return ERT_STATUS_INVALID_ARGUMENT;
		}
		st = node_proto(e, g, &g->nodes[i], &nodes[i], err);
		if (st != ERT_OK)
			return st;
	}
	for (uint32_t i = 0; i < g->n_tensors; i++) {
		const struct ert_tensor *t = &g->tensors[i];

		if (!(t->flags & ERT_TENSOR_CONST))
			continue;
		if (!t->data && t->nbytes) {
			ert_err_set(err, "constant '%s' is block-quantised, which ONNX does not hold",
				    t->name);
			return ERT_STATUS_UNSUPPORTED;
		}
		inits[ni] = tensor_proto(e, t);
		if (!inits[ni++])
			return ERT_STATUS_OUT_OF_MEMORY;
	}
	for (uint32_t i = 0; i < g->n_inputs; i++)
		if (!(ins[i] = value_info(e, &g->tensors[g->inputs[i]])))
			return ERT_STATUS_OUT_OF_MEMORY;
	for (uint32_t i = 0; i < g->n_outputs; i++)
		if (!(outs[i] = value_info(e, &g->tensors[g->outputs[i]])))
			return ERT_STATUS_OUT_OF_MEMORY;
	gp->n_node = g->n_nodes;
	gp->node = nodes;
	gp->n_initializer = ni;
	gp->initializer = inits;
	gp->n_input = g->n_inputs;
	gp->input = ins;
	gp->n_output = g->n_outputs;
	gp->output = outs;

	m->has_ir_version = true;
	m->ir_version = g->ir_version > ir_for_opset(g->opset) ? g->ir_version : ir_for_opset(g->opset);
	m->producer_name = "edgert";
	m->graph = gp;
	return opset_imports(e, g, m);
}

ert_status ert_onnx_export_file(const struct ert_graph *g, const char *path, struct ert_err *err)
{
	struct ex e = { 0 };
	Onnx__ModelProto m;
	ert_status st;
	uint8_t *buf = NULL;

	onnx__model_proto__init(&m);
	st = build_model(&e, g, &m, err);
	if (st == ERT_OK && e.oom)
		st = ERT_STATUS_OUT_OF_MEMORY;
	if (st != ERT_OK) {
		if (st == ERT_STATUS_OUT_OF_MEMORY)
			ert_err_set(err, "out of memory");
		goto out;
	}
	size_t size = onnx__model_proto__get_packed_size(&m);

	/* protobuf's own limit: a message past 2 GiB cannot be read back */
	if (size > ((size_t)2 << 30) - 1) {
		ert_err_set(err, "the model takes %zu bytes, past protobuf's 2 GiB limit", size);
		st = ERT_STATUS_UNSUPPORTED;
		goto out;
	}
	buf = malloc(size ? size : 1);
	if (!buf) {
		ert_err_set(err, "out of memory (%zu bytes)", size);
		st = ERT_STATUS_OUT_OF_MEMORY;
		goto out;
	}
	onnx__model_proto__pack(&m, buf);
	st = ert_file_write_atomic(path, &(struct iovec){ .iov_base = buf, .iov_len = size }, 1, err);
out:
	free(buf);
	ex_free(&e);
	return st;
}
