/* SPDX-License-Identifier: MIT */
/*
 * Models of a few hundred bytes that declare or infer huge tensors (issue 15
 * item 5), written by `bad-input --write-hostile DIR` for the CLI cases of
 * tests/suites/40-bad-input.sh, which run `edgert run` on each under an
 * address-space limit and expect a refusal that names the memory budget:
 *
 *   input-2e32.ert   x[batch, 2^32] float32 -> Relu         16 GiB input
 *   input-2e44.ert   x[2^44] float32 -> Relu                64 TiB input
 *   relu-2e18.ert    x[2^18] float32 -> Relu                2 MiB in all
 *   int64-input.onnx x[2^31 + 1] int64 -> Add(x, x)         16 GiB input
 *   bool-input.onnx  x[2^31 + 1] bool -> Not                2 GiB input
 *   onehot.onnx      OneHot(x[1] int64, depth 2^31)         8 GiB output
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bad-input.h"
#include "format/ert-format.h"
#include "onnx.pb-c.h"

/* x[dims] float32 -> Relu -> y, as an .ert file; a negative dim is "batch". */
static int write_relu_ert(const char *dir, const char *file, int32_t rank, const int64_t *dims)
{
	struct ert_graph *g = ert_graph_create();
	struct ert_err err = { "" };
	char path[1024];
	int32_t x, y;
	ert_status st;

	if (!g)
		return 1;
	g->opset = 17;
	x = ert_graph_add_tensor(g, "x", ERT_DTYPE_FLOAT32, rank, dims);
	y = ert_graph_add_tensor(g, "y", ERT_DTYPE_FLOAT32, -1, NULL);
	if (x < 0 || y < 0) {
		ert_graph_destroy(g);
		return 1;
	}
	for (int32_t d = 0; d < rank; d++)
		if (dims[d] < 0)
			g->tensors[x].dim_names[d] = ert_graph_strdup(g, "batch");
	ert_graph_add_input(g, x);
	ert_graph_add_node(g, ERT_OP_Relu, "relu", 1, &x, 1, &y);
	ert_graph_add_output(g, y);
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	st = ert_graph_toposort(g, &err);
	if (st == ERT_OK)
		st = ert_format_write_file(g, NULL, path, &err);
	if (st != ERT_OK)
		fprintf(stderr, "bad-input: cannot write %s: %s\n", path, err.msg);
	ert_graph_destroy(g);
	return st != ERT_OK;
}

/* A small ONNX model put together on the stack: at most 3 inputs, 2 initializers. */
struct onnx_model {
	Onnx__ModelProto m;
	Onnx__OperatorSetIdProto opset, *opsets[1];
	Onnx__GraphProto g;
	Onnx__NodeProto node, *nodes[1];
	char *node_in[3], *node_out[1];
	Onnx__ValueInfoProto vi[2], *ins[1], *outs[1];
	Onnx__TypeProto type[2];
	Onnx__TypeProto__Tensor tt[2];
	Onnx__TensorShapeProto shape[2];
	Onnx__TensorShapeProto__Dimension dim[2], *dims[2][1];
	Onnx__TensorProto init[2], *inits[2];
};

/* Value info @k: name, element type and, with @rank 1, the one dim (else unknown shape). */
static void onnx_value(struct onnx_model *o, int k, char *name, int elem, int rank, int64_t dim)
{
	onnx__value_info_proto__init(&o->vi[k]);
	onnx__type_proto__init(&o->type[k]);
	onnx__type_proto__tensor__init(&o->tt[k]);
	o->vi[k].name = name;
	o->vi[k].type = &o->type[k];
	o->type[k].value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	o->type[k].tensor_type = &o->tt[k];
	o->tt[k].has_elem_type = 1;
	o->tt[k].elem_type = elem;
	if (rank != 1)
		return;
	onnx__tensor_shape_proto__init(&o->shape[k]);
	onnx__tensor_shape_proto__dimension__init(&o->dim[k]);
	o->dim[k].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
	o->dim[k].dim_value = dim;
	o->dims[k][0] = &o->dim[k];
	o->shape[k].n_dim = 1;
	o->shape[k].dim = o->dims[k];
	o->tt[k].shape = &o->shape[k];
}

/* Initializer @k of @len raw bytes; rank 0 with @dims NULL. */
static void onnx_init(struct onnx_model *o, int k, char *name, int elem, size_t rank,
		      int64_t *dims, void *data, size_t len)
{
	onnx__tensor_proto__init(&o->init[k]);
	o->init[k].name = name;
	o->init[k].has_data_type = 1;
	o->init[k].data_type = elem;
	o->init[k].n_dims = rank;
	o->init[k].dims = dims;
	o->init[k].has_raw_data = 1;
	o->init[k].raw_data.len = len;
	o->init[k].raw_data.data = data;
	o->inits[k] = &o->init[k];
	o->g.n_initializer = (size_t)k + 1;
	o->g.initializer = o->inits;
}

/* One node @op reading @n_in names (the first is the graph input x), writing y. */
static void onnx_start(struct onnx_model *o, int64_t opset, char *op, size_t n_in)
{
	static char x[] = "x", y[] = "y", domain[] = "", name[] = "hostile";

	memset(o, 0, sizeof(*o));
	onnx__model_proto__init(&o->m);
	onnx__operator_set_id_proto__init(&o->opset);
	onnx__graph_proto__init(&o->g);
	onnx__node_proto__init(&o->node);
	o->m.has_ir_version = 1;
	o->m.ir_version = 8;
	o->opset.domain = domain;
	o->opset.has_version = 1;
	o->opset.version = opset;
	o->opsets[0] = &o->opset;
	o->m.n_opset_import = 1;
	o->m.opset_import = o->opsets;
	o->m.graph = &o->g;
	o->g.name = name;
	o->node.op_type = op;
	o->node.name = name;
	o->node_in[0] = x;
	o->node.n_input = n_in;
	o->node.input = o->node_in;
	o->node_out[0] = y;
	o->node.n_output = 1;
	o->node.output = o->node_out;
	o->nodes[0] = &o->node;
	o->g.n_node = 1;
	o->g.node = o->nodes;
	o->ins[0] = &o->vi[0];
	o->outs[0] = &o->vi[1];
	o->g.n_input = 1;
	o->g.input = o->ins;
	o->g.n_output = 1;
	o->g.output = o->outs;
}

static int onnx_write(const struct onnx_model *o, const char *dir, const char *file)
{
	size_t len = onnx__model_proto__get_packed_size(&o->m);
	uint8_t *buf = malloc(len ? len : 1);
	char path[1024];
	FILE *f;
	int bad;

	if (!buf)
		return 1;
	onnx__model_proto__pack(&o->m, buf);
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "wb");
	bad = !f || fwrite(buf, 1, len, f) != len;
	if (f && fclose(f) != 0)
		bad = 1;
	if (bad)
		fprintf(stderr, "bad-input: cannot write %s\n", path);
	free(buf);
	return bad;
}

int bi_write_hostile(const char *dir)
{
	static char x[] = "x", y[] = "y", add[] = "Add", not_op[] = "Not", onehot[] = "OneHot";
	static char depth_name[] = "depth", values_name[] = "values";
	const int64_t big = ((int64_t)1 << 31) + 1;
	int64_t depth = (int64_t)1 << 31, two = 2;
	float values[2] = { 0.0f, 1.0f };
	struct onnx_model o;
	int bad = 0;

	bad |= write_relu_ert(dir, "input-2e32.ert", 2, (int64_t[]){ -1, (int64_t)1 << 32 });
	bad |= write_relu_ert(dir, "input-2e44.ert", 1, (int64_t[]){ (int64_t)1 << 44 });
	bad |= write_relu_ert(dir, "relu-2e18.ert", 1, (int64_t[]){ (int64_t)1 << 18 });

	onnx_start(&o, 13, add, 2);
	o.node_in[1] = x;
	onnx_value(&o, 0, x, ERT_DTYPE_INT64, 1, big);
	onnx_value(&o, 1, y, ERT_DTYPE_INT64, 1, big);
	bad |= onnx_write(&o, dir, "int64-input.onnx");

	onnx_start(&o, 13, not_op, 1);
	onnx_value(&o, 0, x, ERT_DTYPE_BOOL, 1, big);
	onnx_value(&o, 1, y, ERT_DTYPE_BOOL, 1, big);
	bad |= onnx_write(&o, dir, "bool-input.onnx");

	onnx_start(&o, 11, onehot, 3);
	o.node_in[1] = depth_name;
	o.node_in[2] = values_name;
	onnx_value(&o, 0, x, ERT_DTYPE_INT64, 1, 1);
	onnx_value(&o, 1, y, ERT_DTYPE_FLOAT32, -1, 0);
	onnx_init(&o, 0, depth_name, ERT_DTYPE_INT64, 0, NULL, &depth, sizeof(depth));
	onnx_init(&o, 1, values_name, ERT_DTYPE_FLOAT32, 1, &two, values, sizeof(values));
	bad |= onnx_write(&o, dir, "onehot.onnx");
	return bad;
}
