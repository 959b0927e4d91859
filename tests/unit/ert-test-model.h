/* SPDX-License-Identifier: MIT */
/*
 * ert-test-model.h — load a graph built in a test as a model, through the
 * .ert format, and open a session on it.
 */
#ifndef ERT_TEST_MODEL_H
#define ERT_TEST_MODEL_H

#include <stdio.h>
#include <stdlib.h>

#include "edgert.h"
#include "ert-graph.h"
#include "format/ert-format.h"

/* How many live (not dead) nodes of @g run @op. */
static inline int graph_count_op(const struct ert_graph *g, enum ert_op op)
{
	int n = 0;

	for (uint32_t i = 0; i < g->n_nodes; i++)
		n += !g->nodes[i].dead && g->nodes[i].op == op;
	return n;
}

/* Serialise @g and load it as a model (the image is copied); consumes @g. */
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

/* A session of @m (may be NULL) on one thread; NULL, the reason printed, on failure. */
static inline ert_session *session_one_thread(ert_model *m)
{
	ert_session *s = NULL;
	ert_config cfg;

	ert_config_init(&cfg);
	cfg.num_threads = 1;
	if (m && ert_session_create(m, &cfg, &s) != ERT_OK)
		fprintf(stderr, "session: %s\n", ert_last_error());
	return s;
}

#endif
