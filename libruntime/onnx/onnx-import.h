/* SPDX-License-Identifier: MIT */
/*
 * onnx-import.h — ONNX → ert_graph, through protobuf-c and ONNX's own schema.
 */
#ifndef ERT_ONNX_IMPORT_H
#define ERT_ONNX_IMPORT_H

#include "ert-op-impl.h"

struct ert_onnx_options {
	bool optimize;   /* run ert_graph_optimize() after import */
};

/*
 * Import an ONNX model file. External data files are resolved relative to the
 * model's directory. Unknown ops fail with ERT_STATUS_UNSUPPORTED and a message
 * that starts "unsupported op 'Type'". On failure *@out is untouched.
 */
ert_status ert_onnx_import_file(const char *path, const struct ert_onnx_options *opt,
				struct ert_graph **out, struct ert_err *err);
/* Same from memory; @dir (may be NULL) is where external data files live. */
ert_status ert_onnx_import_memory(const void *data, size_t size, const char *dir,
				  const struct ert_onnx_options *opt, struct ert_graph **out,
				  struct ert_err *err);

/*
 * Read a serialized TensorProto (.pb, as in ONNX test_data_set_N/) into @out
 * (shape, dtype; data is malloc'd, the caller frees it) and its name into @name.
 */
ert_status ert_onnx_load_tensor_file(const char *path, struct ert_value *out, char *name,
				     size_t name_size, struct ert_err *err);

/*
 * A sequence or optional of tensors from test data: ONNX's SequenceProto
 * (for @kind ERT_VALUE_SEQUENCE) or OptionalProto (ERT_VALUE_OPTIONAL, an
 * optional tensor; ERT_VALUE_OPTIONAL_SEQUENCE, an optional sequence).
 * @items: @n tensors (data malloc'd); @none: an optional holding nothing.
 * Free with ert_onnx_items_free().
 */
struct ert_onnx_items {
	bool none;
	uint32_t n;
	struct ert_value *items;
};
ert_status ert_onnx_load_items_file(const char *path, int kind, struct ert_onnx_items *out,
				    struct ert_err *err);
void ert_onnx_items_free(struct ert_onnx_items *v);

#endif
