/* SPDX-License-Identifier: MIT */
/*
 * graph-stats.h — what `edgert info` reports about a graph: op histogram,
 * parameter count and MACs, from a walk of the graph with static shapes.
 */
#ifndef ERT_GRAPH_STATS_H
#define ERT_GRAPH_STATS_H

#include "ert-op-impl.h"

struct graph_stats {
	uint32_t op_count[ERT_OP_COUNT];
	uint64_t params;       /* elements of constant tensors */
	uint64_t param_bytes;
	uint64_t macs;         /* Conv, ConvTranspose, Gemm, MatMul, Einsum, RNN/GRU/LSTM */
	uint64_t *node_macs;   /* per node: its share of ->macs (0: none or unknown shapes) */
	uint32_t unknown;      /* nodes whose shapes could not be inferred */
	struct ert_value *vals; /* per tensor, shapes after the walk (rank -1: unknown) */
	bool *owned;           /* per tensor: vals[t].data was computed by the walk */
	uint32_t n_tensors;
};

/*
 * Walk @g in order with shape inference (symbolic input dims taken as 1;
 * values of constants used where an op reads them, and small values that
 * shapes need computed on the CPU from known ones, as a session's planning
 * does: Shape -> Gather -> Concat -> Reshape). Never fails on odd
 * graphs: what cannot be inferred is counted in ->unknown. False only on
 * out-of-memory.
 */
bool graph_stats_compute(const struct ert_graph *g, struct graph_stats *out);
void graph_stats_free(struct graph_stats *s);

#endif /* ERT_GRAPH_STATS_H */
