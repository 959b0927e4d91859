/* SPDX-License-Identifier: MIT */
/*
 * ert-format.h — reading and writing .ert model files (spec: docs/model-format.md).
 */
#ifndef ERT_FORMAT_H
#define ERT_FORMAT_H

#include "ert-graph.h"

#define ERT_FORMAT_VERSION 10

struct ert_write_options {
	bool fp16;            /* store float32 weights as float16 */
	uint32_t weight_bits; /* 0: as is; 8 or 4: block-wise weight-only quantisation */
	uint32_t weight_block; /* elements per quantisation block (0: a default) */
};

/* Serialise @g (toposorted, validated) to @path, replacing it atomically. */
ert_status ert_format_write_file(const struct ert_graph *g, const struct ert_write_options *opt,
				 const char *path, struct ert_err *err);
/* Serialise into a malloc'd buffer (*data_out; caller frees). */
ert_status ert_format_write_memory(const struct ert_graph *g,
				   const struct ert_write_options *opt, void **data_out,
				   size_t *size_out, struct ert_err *err);

/* True when @data starts with the .ert magic (says nothing about validity). */
bool ert_format_probe(const void *data, size_t size);

/*
 * Build a graph from an .ert image. Every offset, size, count and index is
 * validated before use. Constant data points into @data (which must outlive the
 * graph) unless it had to be decoded (fp16 or quantised storage). A newer format
 * version fails with ERT_STATUS_VERSION and a message naming both versions.
 */
ert_status ert_format_load(const void *data, size_t size, struct ert_graph **out,
			   struct ert_err *err);

#endif
