/* SPDX-License-Identifier: MIT */
/*
 * Test data of sequences and optionals: ONNX's SequenceProto and
 * OptionalProto (onnx-data.proto), read field by field since the build
 * compiles only onnx.proto; the tensors inside are TensorProtos, decoded as
 * any tensor file's.
 *
 *   SequenceProto { 1 name; 2 elem_type; 3 repeated TensorProto tensor_values;
 *                   4 sparse_tensor_values; 5 sequence_values; 6 map_values;
 *                   7 optional_values }
 *   OptionalProto { 1 name; 2 elem_type; 3 TensorProto tensor_value;
 *                   4 sparse_tensor_value; 5 SequenceProto sequence_value;
 *                   6 map_value; 7 optional_value }
 * elem_type: 0 undefined, 1 tensor, 3 sequence (others: not supported).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/onnx-import.h"
#include "onnx/onnx-private.h"

void ert_onnx_items_free(struct ert_onnx_items *v)
{
	if (!v)
		return;
	for (uint32_t i = 0; i < v->n; i++)
		free(v->items[i].data);
	free(v->items);
	memset(v, 0, sizeof(*v));
}

static ert_status add_tensor(const uint8_t *data, size_t len, const char *dir, const char *path,
			     struct ert_onnx_items *out, struct ert_err *err)
{
	Onnx__TensorProto *tp;
	struct ert_value *grown;
	char what[320];
	ert_status st;

	if (out->n >= ERT_MAX_SEQUENCE_LENGTH) {
		ert_err_set(err, "'%s' holds more than %u tensors", path, ERT_MAX_SEQUENCE_LENGTH);
		return ERT_STATUS_INVALID_MODEL;
	}
	if ((st = ert_onnx_check_depth(&onnx__tensor_proto__descriptor, data, len, err)))
		return st;
	tp = onnx__tensor_proto__unpack(NULL, len, data);
	if (!tp) {
		ert_err_set(err, "'%s': tensor %u is not a TensorProto", path, out->n);
		return ERT_STATUS_INVALID_MODEL;
	}
	grown = realloc(out->items, (out->n + 1) * sizeof(*grown));
	if (!grown) {
		onnx__tensor_proto__free_unpacked(tp, NULL);
		ert_err_set(err, "failed to load '%s': out of memory", path);
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	out->items = grown;
	snprintf(what, sizeof(what), "tensor %u of '%.250s'", out->n, path);
	st = ert_onnx_tensor_decode(tp, dir, what, &out->items[out->n], err);
	onnx__tensor_proto__free_unpacked(tp, NULL);
	if (st == ERT_OK)
		out->n++;
	return st;
}

/* A SequenceProto's tensors (@seq) or an OptionalProto's value into @out. */
static ert_status parse(const uint8_t *p, size_t size, bool seq, int kind, const char *dir,
			const char *path, struct ert_onnx_items *out, struct ert_err *err)
{
	const uint8_t *end = p + size;
	struct ert_wire_field f;
	bool bad, present = false;
	ert_status st;

	while (ert_onnx_wire_next(&p, end, &f, &bad)) {
		if (f.num == 1 || f.num == 2)
			continue;     /* name, elem_type: the fields below say what is there */
		if (f.wire_type != 2 || f.num > 7)
			goto malformed;
		if (f.num == 3) {
			if (!seq && (present || kind != ERT_VALUE_OPTIONAL))
				goto wrong;
			if ((st = add_tensor(f.data, f.len, dir, path, out, err)))
				return st;
			present = true;
		} else if (f.num == 5 && !seq && kind == ERT_VALUE_OPTIONAL_SEQUENCE && !present) {
			if ((st = parse(f.data, f.len, true, ERT_VALUE_SEQUENCE, dir, path, out, err)))
				return st;
			present = true;
		} else {
			goto wrong;
		}
	}
	if (bad)
		goto malformed;
	if (!seq)
		out->none = !present;
	return ERT_OK;
malformed:
	ert_err_set(err, "failed to parse '%s': malformed protobuf data", path);
	return ERT_STATUS_INVALID_MODEL;
wrong:
	ert_err_set(err, "'%s' holds values other than a %s of tensors (field %u)", path,
		    seq ? "sequence" : "optional", f.num);
	return ERT_STATUS_UNSUPPORTED;
}

ert_status ert_onnx_load_items_file(const char *path, int kind, struct ert_onnx_items *out,
				    struct ert_err *err)
{
	uint8_t *buf = NULL;
	size_t size = 0;
	char *dir = NULL;
	ert_status st;

	memset(out, 0, sizeof(*out));
	if (kind != ERT_VALUE_SEQUENCE && kind != ERT_VALUE_OPTIONAL &&
	    kind != ERT_VALUE_OPTIONAL_SEQUENCE) {
		ert_err_set(err, "'%s': not a sequence or optional kind (%d)", path, kind);
		return ERT_STATUS_INVALID_ARGUMENT;
	}
	if ((st = ert_onnx_read_file(path, &buf, &size, err)))
		return st;
	dir = ert_onnx_dirname(path);
	if (!dir) {
		free(buf);
		ert_err_set(err, "failed to load '%s': out of memory", path);
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	st = parse(buf, size, kind == ERT_VALUE_SEQUENCE, kind, dir, path, out, err);
	if (st != ERT_OK)
		ert_onnx_items_free(out);
	free(dir);
	free(buf);
	return st;
}
