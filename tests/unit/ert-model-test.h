/* SPDX-License-Identifier: MIT */
/*
 * ert-model-test.h — for tests that run graphs they build through sessions:
 * a graph serialised to an .ert image and loaded as a model. Static inline,
 * so each program compiles only what it calls.
 */
#ifndef ERT_MODEL_TEST_H
#define ERT_MODEL_TEST_H

#include <stdio.h>
#include <stdlib.h>

#include "edgert.h"
#include "ert-graph.h"
#include "format/ert-format.h"

/* Serialise @g and load it as a model (the image is copied). */
static inline ert_model *model_from_graph(struct ert_graph *g)
{
	struct ert_err err = { "" };
	ert_model *m = NULL;
	void *img = NULL;
	size_t size = 0;
	char msg[256];

	if (ert_graph_toposort(g, &err) != ERT_OK ||
	    ert_format_write_memory(g, NULL, &img, &size, &err) != ERT_OK) {
		fprintf(stderr, "cannot serialise test graph: %s\n", err.msg);
		ert_graph_destroy(g);
		return NULL;
	}
	if (ert_model_load_memory(img, size, 1, &m, msg, sizeof(msg)) != ERT_OK)
		fprintf(stderr, "cannot load test graph: %s\n", msg);
	free(img);
	ert_graph_destroy(g);
	return m;
}

#endif /* ERT_MODEL_TEST_H */
