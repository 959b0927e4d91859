/* SPDX-License-Identifier: MIT */
/*
 * onnx-private.h — shared by the files of libruntime/onnx/ only.
 */
#ifndef ERT_ONNX_PRIVATE_H
#define ERT_ONNX_PRIVATE_H

#include <stdint.h>

#include "onnx.pb-c.h"
#include "onnx/onnx-import.h"

/* Files larger than this are refused: protobuf messages cannot exceed 2 GiB. */
#define ERT_ONNX_MAX_FILE ((size_t)INT32_MAX)

/* Deepest message nesting accepted before protobuf-c is allowed to unpack. */
#define ERT_ONNX_MAX_DEPTH 64

/*
 * Decode a TensorProto into @out: dtype, rank, dims, numel, nbytes and a
 * malloc'd copy of the data (at least one byte, so data is never NULL on
 * success). @dir resolves external data (NULL: external data is refused).
 * @what names the tensor in messages ("initializer 'w'").
 */
ert_status ert_onnx_tensor_decode(const Onnx__TensorProto *tp, const char *dir,
				  const char *what, struct ert_value *out, struct ert_err *err);

/* Read a whole regular file into a malloc'd buffer. */
ert_status ert_onnx_read_file(const char *path, uint8_t **data_out, size_t *size_out,
			      struct ert_err *err);

/* malloc'd directory part of @path ("." when it has none); NULL on out-of-memory. */
char *ert_onnx_dirname(const char *path);

/*
 * Check that the protobuf wire data nests messages at most ERT_ONNX_MAX_DEPTH
 * deep and that every length stays inside its parent, so that protobuf-c's
 * recursive unpacker cannot exhaust the stack on hostile input.
 */
/* One field of protobuf wire data (ert_onnx_wire_next()). */
struct ert_wire_field {
	uint32_t num, wire_type;
	uint64_t value;          /* varint: its value; length-delimited: its length */
	const uint8_t *data;     /* length-delimited and fixed: the bytes */
	size_t len;
};
/*
 * The field at *@pos (before @end), *@pos moved past it: false at the end,
 * or with *@bad set on malformed data. For the few messages read by hand
 * (onnx-seqdata.c: ONNX's SequenceProto and OptionalProto are in
 * onnx-data.proto, not in the schema the build compiles).
 */
bool ert_onnx_wire_next(const uint8_t **pos, const uint8_t *end, struct ert_wire_field *f,
			bool *bad);

ert_status ert_onnx_check_depth(const ProtobufCMessageDescriptor *desc, const uint8_t *data,
				size_t size, struct ert_err *err);

#endif
