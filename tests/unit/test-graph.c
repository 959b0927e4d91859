/* SPDX-License-Identifier: MIT */
/* The in-memory graph: building, sorting, compaction, validation. */
#include "ert-graph.h"
#include "ert-test.h"

ERT_TEST(add_and_find)
{
	struct ert_graph *g = ert_graph_create();
	int64_t dims[2] = { 2, 3 };

	REQUIRE(g);
	for (int i = 0; i < 1000; i++) {
		char name[32];

		snprintf(name, sizeof(name), "t%d", i);
		CHECK_EQ_INT(ert_graph_add_tensor(g, name, ERT_DTYPE_FLOAT32, 2, dims), i);
	}
	CHECK_EQ_INT(ert_graph_find_tensor(g, "t517"), 517);
	CHECK_EQ_INT(ert_graph_find_tensor(g, "nope"), -1);
	CHECK_EQ_INT(ert_graph_add_tensor(g, "t3", ERT_DTYPE_FLOAT32, 2, dims), -1);
	ert_graph_destroy(g);
}

ERT_TEST(toposort_and_cycle)
{
	struct ert_graph *g = ert_graph_create();
	struct ert_err err;
	int32_t a, b, c, d;

	REQUIRE(g);
	a = ert_graph_add_tensor(g, "a", ERT_DTYPE_FLOAT32, 1, (int64_t[]){ 4 });
	b = ert_graph_add_tensor(g, "b", ERT_DTYPE_FLOAT32, 1, (int64_t[]){ 4 });
	c = ert_graph_add_tensor(g, "c", ERT_DTYPE_FLOAT32, 1, (int64_t[]){ 4 });
	d = ert_graph_add_tensor(g, "d", ERT_DTYPE_FLOAT32, 1, (int64_t[]){ 4 });
	ert_graph_add_input(g, a);
	/* out of order: c = relu(b) listed before b = relu(a) */
	ert_graph_add_node(g, ERT_OP_Relu, "second", 1, &b, 1, &c);
	ert_graph_add_node(g, ERT_OP_Relu, "first", 1, &a, 1, &b);
	ert_graph_add_output(g, c);
	CHECK_EQ_INT(ert_graph_validate(g, &err), ERT_STATUS_INVALID_MODEL);
	CHECK_EQ_INT(ert_graph_toposort(g, &err), ERT_OK);
	CHECK(strcmp(g->nodes[0].name, "first") == 0);
	CHECK_EQ_INT(ert_graph_validate(g, &err), ERT_OK);

	/* dead node and unused tensor go away on compaction */
	ert_graph_add_node(g, ERT_OP_Relu, "unused", 1, &c, 1, &d);
	g->nodes[2].dead = true;
	CHECK_EQ_INT(ert_graph_compact(g), ERT_OK);
	CHECK_EQ_INT(g->n_nodes, 2);
	CHECK_EQ_INT(g->n_tensors, 3);
	CHECK_EQ_INT(ert_graph_find_tensor(g, "c"), 2);

	/* a cycle is reported */
	g->nodes[0].inputs[0] = c;
	CHECK_EQ_INT(ert_graph_toposort(g, &err), ERT_STATUS_INVALID_MODEL);
	CHECK(strstr(err.msg, "cycle") != NULL);
	ert_graph_destroy(g);
}

ERT_TEST(attributes)
{
	struct ert_graph *g = ert_graph_create();
	int32_t a, b;
	int64_t pads[4] = { 1, 1, 2, 2 };
	uint32_t n;

	REQUIRE(g);
	a = ert_graph_add_tensor(g, "a", ERT_DTYPE_FLOAT32, -1, NULL);
	b = ert_graph_add_tensor(g, "b", ERT_DTYPE_FLOAT32, -1, NULL);
	int32_t ni = ert_graph_add_node(g, ERT_OP_Conv, NULL, 1, &a, 1, &b);
	struct ert_node *node = &g->nodes[ni];

	CHECK(ert_node_set_attr_int(g, node, "group", 2));
	CHECK(ert_node_set_attr_ints(g, node, "pads", pads, 4));
	CHECK(ert_node_set_attr_float(g, node, "alpha", 0.5f));
	CHECK(ert_node_set_attr_int(g, node, "group", 3));
	CHECK_EQ_INT(ert_attr_int(node, "group", 1), 3);
	CHECK_EQ_INT(ert_attr_int(node, "missing", 7), 7);
	CHECK_NEAR(ert_attr_float(node, "alpha", 0), 0.5, 0);
	const int64_t *p = ert_attr_ints(node, "pads", &n);
	CHECK_EQ_INT(n, 4);
	CHECK(p && p[3] == 2);
	CHECK(strcmp(node->name, "Conv_0") == 0);
	ert_graph_destroy(g);
}

ERT_TEST(op_names)
{
	CHECK_EQ_INT(ert_op_from_name("Conv"), ERT_OP_Conv);
	CHECK(strcmp(ert_op_name(ERT_OP_MatMul), "MatMul") == 0);
	CHECK_EQ_INT(ert_op_from_name("NoSuchOp"), ERT_OP_COUNT);
	CHECK_EQ_INT(ert_op_value_inputs(ERT_OP_Reshape), 2);
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(add_and_find), ERT_TEST_ENTRY(toposort_and_cycle),
	      ERT_TEST_ENTRY(attributes), ERT_TEST_ENTRY(op_names))
