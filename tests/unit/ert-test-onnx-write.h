/* SPDX-License-Identifier: MIT */
/*
 * ert-test-onnx-write.h — serialise an ert_graph built in a test as an ONNX
 * ModelProto (protobuf-c, ONNX's own schema), so a test can feed the same model
 * to the ONNX importer and to the .ert loader. Covers what test graphs hold:
 * graph inputs with static shapes, constants as initializers (raw_data),
 * INT/INTS/FLOAT/FLOATS/STRING attributes, constant TENSOR attributes and
 * GRAPH attributes (subgraphs: their captures are referred to by name, as
 * ONNX does, so a node's implicit inputs are left out); the node of
 * onnxruntime's int8 ops goes to the com.microsoft domain.
 */
#ifndef ERT_TEST_ONNX_WRITE_H
#define ERT_TEST_ONNX_WRITE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edgert.h"
#include "onnx.pb-c.h"
#include "ert-graph.h"

/* Every message comes from here and is freed in one go. */
struct ow_pool {
	void **ptr;
	size_t n, cap;
};

static inline void *ow_alloc(struct ow_pool *p, size_t size)
{
	void *q;

	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 64;
		void **np = realloc(p->ptr, cap * sizeof(*np));

		if (!np)
			abort(); /* test scaffolding only */
		p->ptr = np;
		p->cap = cap;
	}
	q = calloc(1, size ? size : 1);
	if (!q)
		abort();
	p->ptr[p->n++] = q;
	return q;
}

static inline void ow_free(struct ow_pool *p)
{
	while (p->n)
		free(p->ptr[--p->n]);
	free(p->ptr);
	p->ptr = NULL;
	p->cap = 0;
}

static inline char *ow_str(struct ow_pool *p, const char *s)
{
	char *q = ow_alloc(p, strlen(s) + 1);

	strcpy(q, s);
	return q;
}

static inline Onnx__TensorProto *ow_tensor(struct ow_pool *p, const struct ert_tensor *x)
{
	Onnx__TensorProto *t = ow_alloc(p, sizeof(*t));

	onnx__tensor_proto__init(t);
	t->name = ow_str(p, x->name);
	t->has_data_type = 1;
	t->data_type = (int32_t)x->dtype;
	t->n_dims = x->rank > 0 ? (size_t)x->rank : 0;
	t->dims = ow_alloc(p, (t->n_dims ? t->n_dims : 1) * sizeof(int64_t));
	for (size_t i = 0; i < t->n_dims; i++)
		t->dims[i] = x->dims[i];
	t->has_raw_data = 1;
	t->raw_data.len = x->nbytes;
	t->raw_data.data = ow_alloc(p, x->nbytes);
	if (x->nbytes)
		memcpy(t->raw_data.data, x->data, x->nbytes);
	return t;
}

static inline Onnx__ValueInfoProto *ow_value_info(struct ow_pool *p, const struct ert_tensor *x,
						  bool with_type)
{
	Onnx__ValueInfoProto *v = ow_alloc(p, sizeof(*v));
	Onnx__TypeProto *tp;
	Onnx__TypeProto__Tensor *tt;

	onnx__value_info_proto__init(v);
	v->name = ow_str(p, x->name);
	if (!with_type)
		return v;
	tp = ow_alloc(p, sizeof(*tp));
	tt = ow_alloc(p, sizeof(*tt));
	onnx__type_proto__init(tp);
	onnx__type_proto__tensor__init(tt);
	v->type = tp;
	tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	tp->tensor_type = tt;
	tt->has_elem_type = 1;
	tt->elem_type = (int32_t)x->dtype;
	if (x->kind != ERT_VALUE_TENSOR) {
		/* a sequence or optional of tensors of x->elem (no shape) */
		Onnx__TypeProto *outer = ow_alloc(p, sizeof(*outer)), *mid = tp;

		tt->elem_type = (int32_t)x->elem;
		if (x->kind != ERT_VALUE_OPTIONAL) {
			mid = ow_alloc(p, sizeof(*mid));
			onnx__type_proto__init(mid);
			mid->value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
			mid->sequence_type = ow_alloc(p, sizeof(*mid->sequence_type));
			onnx__type_proto__sequence__init(mid->sequence_type);
			mid->sequence_type->elem_type = tp;
		}
		if (x->kind == ERT_VALUE_SEQUENCE) {
			v->type = mid;
			return v;
		}
		onnx__type_proto__init(outer);
		outer->value_case = ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE;
		outer->optional_type = ow_alloc(p, sizeof(*outer->optional_type));
		onnx__type_proto__optional__init(outer->optional_type);
		outer->optional_type->elem_type = mid;
		v->type = outer;
		return v;
	}
	if (x->rank < 0)
		return v;
	tt->shape = ow_alloc(p, sizeof(*tt->shape));
	onnx__tensor_shape_proto__init(tt->shape);
	tt->shape->n_dim = (size_t)x->rank;
	tt->shape->dim = ow_alloc(p, (size_t)(x->rank ? x->rank : 1) * sizeof(*tt->shape->dim));
	for (int32_t i = 0; i < x->rank; i++) {
		Onnx__TensorShapeProto__Dimension *d = ow_alloc(p, sizeof(*d));

		onnx__tensor_shape_proto__dimension__init(d);
		if (x->dims[i] >= 0) {
			d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
			d->dim_value = x->dims[i];
		} else {
			d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
			d->dim_param = ow_str(p, x->dim_names[i] ? x->dim_names[i] : "N");
		}
		tt->shape->dim[i] = d;
	}
	return v;
}

static inline bool ow_contrib(enum ert_op op)
{
	return op == ERT_OP_QGemm || op == ERT_OP_QLinearAdd || op == ERT_OP_QLinearMul ||
	       op == ERT_OP_QLinearAveragePool || op == ERT_OP_QLinearGlobalAveragePool;
}

static inline Onnx__GraphProto *ow_graph(struct ow_pool *p, const struct ert_graph *g);

static inline Onnx__AttributeProto *ow_attr(struct ow_pool *p, const struct ert_graph *g,
					    const struct ert_attr *a)
{
	Onnx__AttributeProto *o = ow_alloc(p, sizeof(*o));

	onnx__attribute_proto__init(o);
	o->name = ow_str(p, a->name);
	o->has_type = 1;
	o->type = (Onnx__AttributeProto__AttributeType)a->type;
	switch (a->type) {
	case ERT_ATTR_INT:
		o->has_i = 1;
		o->i = a->i;
		break;
	case ERT_ATTR_FLOAT:
		o->has_f = 1;
		o->f = a->f;
		break;
	case ERT_ATTR_STRING:
		o->has_s = 1;
		o->s.len = a->len;
		o->s.data = (uint8_t *)ow_str(p, a->s);
		break;
	case ERT_ATTR_INTS:
		o->n_ints = a->count;
		o->ints = ow_alloc(p, (a->count ? a->count : 1) * sizeof(int64_t));
		if (a->count)
			memcpy(o->ints, a->ints, a->count * sizeof(int64_t));
		break;
	case ERT_ATTR_FLOATS:
		o->n_floats = a->count;
		o->floats = ow_alloc(p, (a->count ? a->count : 1) * sizeof(float));
		if (a->count)
			memcpy(o->floats, a->floats, a->count * sizeof(float));
		break;
	case ERT_ATTR_TENSOR:
		o->t = ow_tensor(p, &g->tensors[a->tensor]);
		break;
	case ERT_ATTR_GRAPH:
		o->g = ow_graph(p, a->graph);
		break;
	default:
		o->has_type = 0;
		break;
	}
	return o;
}

static inline bool ow_attr_tensor(const struct ert_graph *g, int32_t t)
{
	for (uint32_t i = 0; i < g->n_nodes; i++)
		for (uint32_t a = 0; a < g->nodes[i].n_attrs; a++)
			if (g->nodes[i].attrs[a].type == ERT_ATTR_TENSOR &&
			    g->nodes[i].attrs[a].tensor == t)
				return true;
	return false;
}

/* The GraphProto of @g (a subgraph too: its outputs carry their types then). */
static inline Onnx__GraphProto *ow_graph(struct ow_pool *p, const struct ert_graph *g)
{
	Onnx__GraphProto *gp = ow_alloc(p, sizeof(*gp));

	onnx__graph_proto__init(gp);
	gp->name = ow_str(p, g->parent ? "sub" : "test");
	gp->initializer = ow_alloc(p, (g->n_tensors + 1) * sizeof(*gp->initializer));
	gp->input = ow_alloc(p, (g->n_inputs + 1) * sizeof(*gp->input));
	gp->output = ow_alloc(p, (g->n_outputs + 1) * sizeof(*gp->output));
	gp->node = ow_alloc(p, (g->n_nodes + 1) * sizeof(*gp->node));
	for (uint32_t t = 0; t < g->n_tensors; t++)
		if ((g->tensors[t].flags & ERT_TENSOR_CONST) && !ow_attr_tensor(g, t))
			gp->initializer[gp->n_initializer++] = ow_tensor(p, &g->tensors[t]);
	for (uint32_t k = 0; k < g->n_inputs; k++)
		gp->input[gp->n_input++] = ow_value_info(p, &g->tensors[g->inputs[k]], true);
	for (uint32_t k = 0; k < g->n_outputs; k++) {
		const struct ert_tensor *x = &g->tensors[g->outputs[k]];

		gp->output[gp->n_output++] =
			ow_value_info(p, x, g->parent && x->dtype != ERT_DTYPE_UNDEFINED);
	}
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct ert_node *n = &g->nodes[i];
		Onnx__NodeProto *np = ow_alloc(p, sizeof(*np));
		uint32_t n_in = n->n_inputs - ert_node_implicit_inputs(n);

		onnx__node_proto__init(np);
		np->op_type = ow_str(p, ert_op_name(n->op));
		np->name = ow_str(p, n->name ? n->name : "");
		np->domain = ow_str(p, ow_contrib(n->op) ? "com.microsoft" : "");
		np->input = ow_alloc(p, (n->n_inputs + 1) * sizeof(char *));
		np->output = ow_alloc(p, (n->n_outputs + 1) * sizeof(char *));
		np->attribute = ow_alloc(p, (n->n_attrs + 1) * sizeof(*np->attribute));
		for (uint32_t k = 0; k < n_in; k++)
			np->input[np->n_input++] =
				ow_str(p, n->inputs[k] >= 0 ? g->tensors[n->inputs[k]].name : "");
		for (uint32_t k = 0; k < n->n_outputs; k++)
			np->output[np->n_output++] =
				ow_str(p, n->outputs[k] >= 0 ? g->tensors[n->outputs[k]].name : "");
		for (uint32_t a = 0; a < n->n_attrs; a++)
			np->attribute[np->n_attribute++] = ow_attr(p, g, &n->attrs[a]);
		gp->node[gp->n_node++] = np;
	}
	return gp;
}

/* Serialise @g into a malloc'd buffer; returns its size, 0 on failure. */
static inline size_t ert_test_graph_to_onnx(const struct ert_graph *g, uint8_t **out)
{
	struct ow_pool p = { 0 };
	Onnx__ModelProto *m = ow_alloc(&p, sizeof(*m));
	Onnx__OperatorSetIdProto *os[2];
	size_t len;

	onnx__model_proto__init(m);
	m->has_ir_version = 1;
	m->ir_version = 8;
	m->opset_import = ow_alloc(&p, 2 * sizeof(*m->opset_import));
	for (int i = 0; i < 2; i++) {
		os[i] = ow_alloc(&p, sizeof(*os[i]));
		onnx__operator_set_id_proto__init(os[i]);
		os[i]->has_version = 1;
		os[i]->version = i ? 1 : g->opset;
		os[i]->domain = ow_str(&p, i ? "com.microsoft" : "");
		m->opset_import[i] = os[i];
	}
	m->n_opset_import = 2;
	m->graph = ow_graph(&p, g);
	len = onnx__model_proto__get_packed_size(m);
	*out = malloc(len ? len : 1);
	if (!*out) {
		ow_free(&p);
		return 0;
	}
	onnx__model_proto__pack(m, *out);
	ow_free(&p);
	return len;
}

/* Write @g as ONNX and load it as a model; consumes @g. NULL, the reason printed, on failure. */
static inline ert_model *model_from_graph_onnx(struct ert_graph *g)
{
	uint8_t *onnx = NULL;
	ert_model *m = NULL;
	char msg[512] = "";
	size_t size;

	if (!g)
		return NULL;
	size = ert_test_graph_to_onnx(g, &onnx);
	ert_graph_destroy(g);
	if (!size)
		fprintf(stderr, "cannot write test graph as ONNX\n");
	else if (ert_model_load_memory(onnx, size, 1, &m, msg, sizeof(msg)) != ERT_OK)
		fprintf(stderr, "cannot load test graph from ONNX: %s\n", msg);
	free(onnx);
	return m;
}

#endif /* ERT_TEST_ONNX_WRITE_H */
