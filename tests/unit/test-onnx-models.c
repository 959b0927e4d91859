/* SPDX-License-Identifier: MIT */
/*
 * ONNX import of real models from the ONNX backend test data
 * ($ERT_CONFORMANCE, default ../shared/conformance/onnx-backend).
 */
#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "onnx/onnx-import.h"
#include "ert-test.h"

static const char *data_dir(void)
{
	const char *d = getenv("ERT_CONFORMANCE");

	return d && *d ? d : "../shared/conformance/onnx-backend";
}

/* False (and a note) when the test data is absent: the test then checks nothing. */
static bool have_data(const char *sub)
{
	char path[1024];
	struct stat sb;

	snprintf(path, sizeof(path), "%s/%s", data_dir(), sub);
	if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
		return true;
	printf("note: %s not found, ONNX model import not checked\n", path);
	return false;
}

static ert_status import(const char *rel, bool optimize, struct ert_graph **g,
			 struct ert_err *err)
{
	char path[1024];
	struct ert_onnx_options opt = { .optimize = optimize };

	snprintf(path, sizeof(path), "%s/%s/model.onnx", data_dir(), rel);
	return ert_onnx_import_file(path, &opt, g, err);
}

static uint32_t count_op(const struct ert_graph *g, enum ert_op op)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < g->n_nodes; i++)
		n += g->nodes[i].op == op;
	return n;
}

/* Real architectures: conv counts are those of the networks (densenet121 ends in a 1x1 conv). */
ERT_TEST(light_models)
{
	static const struct {
		const char *name;
		uint32_t convs;
	} models[] = {
		{ "test_resnet50", 53 },  { "test_squeezenet", 26 }, { "test_bvlc_alexnet", 5 },
		{ "test_vgg19", 16 },     { "test_zfnet512", 5 },    { "test_inception_v1", 57 },
		{ "test_densenet121", 121 }, { "test_shufflenet", 49 }, { "test_inception_v2", 69 },
	};

	if (!have_data("light"))
		return;
	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++) {
		char rel[128];
		struct ert_graph *g = NULL;
		struct ert_err err = { "" };

		snprintf(rel, sizeof(rel), "light/%s", models[i].name);
		CHECK_EQ_INT(import(rel, false, &g, &err), ERT_OK);
		if (!g) {
			fprintf(stderr, "%s: %s\n", rel, err.msg);
			continue;
		}
		if (count_op(g, ERT_OP_Conv) != models[i].convs)
			fprintf(stderr, "%s: %u convs\n", rel, count_op(g, ERT_OP_Conv));
		CHECK_EQ_INT(count_op(g, ERT_OP_Conv), models[i].convs);
		CHECK_EQ_INT(g->n_inputs, 1);
		CHECK_EQ_INT(g->n_outputs, 1);
		CHECK_EQ_INT(g->opset, 9);
		CHECK_EQ_INT(g->tensors[g->inputs[0]].rank, 4);
		CHECK_EQ_INT(g->tensors[g->inputs[0]].dtype, ERT_DTYPE_FLOAT32);
		CHECK_EQ_INT(ert_graph_validate(g, &err), ERT_OK);
		ert_graph_destroy(g);
	}
}

ERT_TEST(conv_node_models)
{
	struct ert_graph *g = NULL;
	struct ert_err err = { "" };
	struct ert_value v;
	char path[1024], name[64];

	if (!have_data("node/test_conv_with_strides_padding"))
		return;
	CHECK_EQ_INT(import("node/test_conv_with_strides_padding", false, &g, &err), ERT_OK);
	REQUIRE(g);
	CHECK_EQ_INT(g->n_nodes, 1);
	CHECK_EQ_INT(g->n_inputs, 2);
	CHECK_EQ_INT(g->nodes[0].op, ERT_OP_Conv);
	CHECK_EQ_INT(g->nodes[0].n_inputs, 2);
	const struct ert_tensor *x = &g->tensors[g->nodes[0].inputs[0]];

	CHECK_EQ_INT(x->rank, 4);
	CHECK_EQ_INT(x->dims[2], 7);
	CHECK_EQ_INT(x->dims[3], 5);
	uint32_t n = 0;
	const int64_t *strides = ert_attr_ints(&g->nodes[0], "strides", &n);

	CHECK_EQ_INT(n, 2);
	CHECK(strides && strides[0] == 2);
	ert_graph_destroy(g);

	snprintf(path, sizeof(path), "%s/node/test_conv_with_strides_padding/test_data_set_0/"
		 "input_0.pb", data_dir());
	CHECK_EQ_INT(ert_onnx_load_tensor_file(path, &v, name, sizeof(name), &err), ERT_OK);
	CHECK_EQ_INT(v.rank, 4);
	CHECK_EQ_INT(v.numel, 35);
	CHECK_EQ_INT(v.nbytes, 140);
	CHECK_NEAR(((float *)v.data)[34], 34.0, 0);
	free(v.data);
}

/*
 * Every model under @sub imports, or is refused as unsupported with a message:
 * never another failure, never a crash.
 */
static void import_all(int *ert_test_failed_, const char *sub, uint32_t min_ok, bool optimize)
{
	char dir[1024];
	DIR *d;
	struct dirent *e;
	uint32_t ok = 0, unsupported = 0;

	snprintf(dir, sizeof(dir), "%s/%s", data_dir(), sub);
	d = opendir(dir);
	REQUIRE(d);
	while ((e = readdir(d))) {
		char rel[512];
		struct ert_graph *g = NULL;
		struct ert_err err = { "" };
		ert_status st;

		if (e->d_name[0] == '.' || strncmp(e->d_name, "test_", 5) != 0)
			continue;
		snprintf(rel, sizeof(rel), "%s/%.300s", sub, e->d_name);
		st = import(rel, optimize, &g, &err);
		if (st == ERT_OK) {
			ok++;
			ert_graph_destroy(g);
		} else if (st == ERT_STATUS_UNSUPPORTED && err.msg[0]) {
			unsupported++;
		} else {
			fprintf(stderr, "%s: status %d: %s\n", rel, st, err.msg);
			*ert_test_failed_ = 1;
		}
	}
	closedir(d);
	if (ok < min_ok)
		fprintf(stderr, "%s: %u imported, expected at least %u\n", sub, ok, min_ok);
	CHECK(ok >= min_ok);
}

ERT_TEST(all_models)
{
	if (!have_data("node"))
		return;
	import_all(ert_test_failed_, "node", 1000, false);
	import_all(ert_test_failed_, "pytorch-converted", 82, false);
	import_all(ert_test_failed_, "pytorch-operator", 20, false);
	import_all(ert_test_failed_, "simple", 5, false);
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(light_models), ERT_TEST_ENTRY(conv_node_models),
	      ERT_TEST_ENTRY(all_models))
