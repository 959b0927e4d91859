/* SPDX-License-Identifier: MIT */
/* onnx-export.h — an ert_graph written as an ONNX model (onnx-export.c). */
#ifndef ERT_ONNX_EXPORT_H
#define ERT_ONNX_EXPORT_H

#include "ert-graph.h"

/*
 * Write @g to @path as an ONNX model (replacing the file atomically): its
 * nodes, constants as initializers, inputs and outputs. @g must hold only
 * ONNX's ops and attributes, no subgraph and no block-quantised constant: an
 * optimised graph (edgert's own fused ops and "ert." attributes) is refused
 * with ERT_STATUS_UNSUPPORTED and @err naming the node. ERT_STATUS_IO when the
 * file cannot be written.
 */
ert_status ert_onnx_export_file(const struct ert_graph *g, const char *path, struct ert_err *err);

#endif
