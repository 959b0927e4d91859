/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for ONNX import with the clean-up passes on: any input must
 * give a valid graph or a status with a message, never a crash, a leak, a hang
 * or undefined behaviour. External data is refused (no model directory), so
 * the input never reaches the file system. A graph that imports is written as
 * .ert, planned and run (fz_plan_run), as `edgert convert` then `run` would.
 *
 * The custom mutator knows the format: half of the mutations decode the
 * ModelProto and plant an extreme integer (fuzz-common.h) in a node
 * attribute (or add one), a tensor or input dim, an integer initializer or
 * the opset; the others are libFuzzer's own, with fuzz/onnx.dict.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz-common.h"
#include "format/ert-format.h"
#include "onnx.pb-c.h"
#include "onnx/onnx-import.h"
#include "onnx/onnx-private.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ert_onnx_options opt = { .optimize = true };
	struct ert_graph *g = NULL;
	struct ert_err err = { "" };
	ert_status st = ert_onnx_import_memory(data, size, NULL, &opt, &g, &err);

	if (st == ERT_OK) {
		/* what import hands out must pass validation and hold its bytes */
		volatile uint8_t sink = 0;
		void *img = NULL;
		size_t n = 0;

		if (ert_graph_validate(g, &err) != ERT_OK) {
			fprintf(stderr, "imported graph does not validate: %s\n", err.msg);
			abort();
		}
		for (uint32_t t = 0; t < g->n_tensors; t++)
			if (g->tensors[t].nbytes)
				sink ^= ((const uint8_t *)g->tensors[t].data)[g->tensors[t].nbytes - 1];
		(void)sink;
		bool npu = fz_wants_npu(g);

		st = ert_format_write_memory(g, NULL, &img, &n, &err);
		fz_require_message("ert_format_write_memory", st, err.msg);
		ert_graph_destroy(g);
		if (st == ERT_OK)
			fz_plan_run(img, n, npu);
		free(img);
	} else if (!err.msg[0] || g) {
		fprintf(stderr, "status %d without a message or with a graph\n", (int)st);
		abort();
	}
	return 0;
}

/* ---- the mutator ---- */

/* Where an integer can go: a slot of 1, 4 or 8 bytes (little-endian in raw_data). */
struct site {
	void *p;
	int width; /* 8: int64_t, 4: int32_t, -8 / -4: bytes of raw_data */
};

struct sites {
	struct site s[512];
	unsigned n;
};

static void add_site(struct sites *ss, void *p, int width)
{
	if (ss->n < sizeof(ss->s) / sizeof(ss->s[0]))
		ss->s[ss->n++] = (struct site){ p, width };
}

static void tensor_sites(struct sites *ss, Onnx__TensorProto *t)
{
	for (size_t k = 0; k < t->n_dims; k++)
		add_site(ss, &t->dims[k], 8);
	for (size_t k = 0; k < t->n_int64_data; k++)
		add_site(ss, &t->int64_data[k], 8);
	for (size_t k = 0; k < t->n_int32_data; k++)
		add_site(ss, &t->int32_data[k], 4);
	if (t->has_raw_data && (t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT64 ||
				t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT32))
		for (size_t k = 0, w = t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT64 ? 8 : 4;
		     k + w <= t->raw_data.len; k += w)
			add_site(ss, t->raw_data.data + k, -(int)w);
}

static void value_info_sites(struct sites *ss, Onnx__ValueInfoProto *vi)
{
	Onnx__TypeProto__Tensor *tt;

	if (!vi->type || vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
		return;
	tt = vi->type->tensor_type;
	if (!tt || !tt->shape)
		return;
	for (size_t k = 0; k < tt->shape->n_dim; k++) {
		Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[k];

		if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
			add_site(ss, &d->dim_value, 8);
	}
}

static void plant(const struct site *s, int64_t v)
{
	int32_t v32 = (int32_t)(uint32_t)(uint64_t)v;

	switch (s->width) {
	case 8: *(int64_t *)s->p = v; break;
	case 4: *(int32_t *)s->p = v32; break;
	case -8: memcpy(s->p, &v, 8); break;
	default: memcpy(s->p, &v32, 4); break;
	}
}

/* Give node @np an INT attribute named after one of fz_attr_names (protobuf-c's
 * default allocator is malloc, so free_unpacked frees what is added here). */
static void add_attr(Onnx__NodeProto *np, uint64_t *rs)
{
	const char *name = fz_attr_names[fz_rand(rs) % (sizeof(fz_attr_names) /
						       sizeof(fz_attr_names[0]))];
	Onnx__AttributeProto **arr, *a;

	for (size_t k = 0; k < np->n_attribute; k++)
		if (np->attribute[k]->name && !strcmp(np->attribute[k]->name, name))
			return;
	arr = realloc(np->attribute, (np->n_attribute + 1) * sizeof(*arr));
	if (!arr)
		return;
	np->attribute = arr;
	a = malloc(sizeof(*a));
	if (!a)
		return;
	onnx__attribute_proto__init(a);
	a->name = strdup(name);
	if (!a->name) {
		free(a);
		return;
	}
	a->has_type = 1;
	a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
	a->has_i = 1;
	a->i = fz_pick(rs);
	arr[np->n_attribute++] = a;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
	uint64_t rs = seed;
	struct ert_err err = { "" };
	Onnx__ModelProto *m;
	Onnx__GraphProto *gp;
	static struct sites ss;
	size_t n;

	if (fz_rand(&rs) % 2 ||
	    ert_onnx_check_depth(&onnx__model_proto__descriptor, data, size, &err) != ERT_OK)
		return LLVMFuzzerMutate(data, size, max_size);
	m = onnx__model_proto__unpack(NULL, size, data);
	if (!m || !m->graph) {
		if (m)
			onnx__model_proto__free_unpacked(m, NULL);
		return LLVMFuzzerMutate(data, size, max_size);
	}
	gp = m->graph;
	ss.n = 0;
	for (size_t i = 0; i < gp->n_node; i++)
		for (size_t k = 0; k < gp->node[i]->n_attribute; k++) {
			Onnx__AttributeProto *a = gp->node[i]->attribute[k];

			if (a->has_i || a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT) {
				a->has_i = 1;
				add_site(&ss, &a->i, 8);
			}
			for (size_t j = 0; j < a->n_ints; j++)
				add_site(&ss, &a->ints[j], 8);
			if (a->t)
				tensor_sites(&ss, a->t);
		}
	for (size_t i = 0; i < gp->n_initializer; i++)
		tensor_sites(&ss, gp->initializer[i]);
	for (size_t i = 0; i < gp->n_input; i++)
		value_info_sites(&ss, gp->input[i]);
	for (size_t i = 0; i < m->n_opset_import; i++)
		if (m->opset_import[i]->has_version)
			add_site(&ss, &m->opset_import[i]->version, 8);

	if (gp->n_node && (ss.n == 0 || fz_rand(&rs) % 4 == 0))
		add_attr(gp->node[fz_rand(&rs) % gp->n_node], &rs);
	else if (ss.n)
		plant(&ss.s[fz_rand(&rs) % ss.n], fz_pick(&rs));
	n = onnx__model_proto__get_packed_size(m);
	if (n <= max_size)
		onnx__model_proto__pack(m, data);
	onnx__model_proto__free_unpacked(m, NULL);
	return n <= max_size ? n : LLVMFuzzerMutate(data, size, max_size);
}
