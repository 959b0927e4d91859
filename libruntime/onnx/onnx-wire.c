/* SPDX-License-Identifier: MIT */
/*
 * A pre-pass over protobuf wire data before protobuf-c unpacks it.
 *
 * protobuf-c's unpacker recurses once per nested message and has no depth
 * limit; ONNX nests GraphProto inside AttributeProto inside NodeProto inside
 * GraphProto, so a hostile file of a few megabytes could nest deep enough to
 * exhaust the stack. This walk only follows the message structure (using the
 * generated descriptors to know which fields are messages) and bounds the
 * depth; the decoding itself stays with protobuf-c.
 */
#include <string.h>

#include "onnx/onnx-private.h"

struct wire {
	const uint8_t *p, *end;
};

static bool read_varint(struct wire *w, uint64_t *out)
{
	uint64_t v = 0;

	for (int shift = 0; shift < 64; shift += 7) {
		if (w->p >= w->end)
			return false;
		uint8_t b = *w->p++;

		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*out = v;
			return true;
		}
	}
	return false;
}

static bool skip(struct wire *w, uint64_t n)
{
	if (n > (uint64_t)(w->end - w->p))
		return false;
	w->p += n;
	return true;
}

/* 0: fine; 1: malformed; 2: too deep. */
static int walk(const ProtobufCMessageDescriptor *desc, const uint8_t *data, size_t size,
		int depth)
{
	struct wire w = { data, data + size };

	if (depth > ERT_ONNX_MAX_DEPTH)
		return 2;
	while (w.p < w.end) {
		uint64_t tag, v;

		if (!read_varint(&w, &tag) || (tag >> 3) == 0 || (tag >> 3) > UINT32_MAX)
			return 1;
		switch (tag & 7) {
		case 0:
			if (!read_varint(&w, &v))
				return 1;
			break;
		case 1:
			if (!skip(&w, 8))
				return 1;
			break;
		case 5:
			if (!skip(&w, 4))
				return 1;
			break;
		case 2: {
			const ProtobufCFieldDescriptor *f;
			const uint8_t *sub;

			if (!read_varint(&w, &v) || v > (uint64_t)(w.end - w.p))
				return 1;
			sub = w.p;
			w.p += v;
			f = desc ? protobuf_c_message_descriptor_get_field(desc,
									   (unsigned)(tag >> 3))
				 : NULL;
			if (f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
				int r = walk(f->descriptor, sub, (size_t)v, depth + 1);

				if (r)
					return r;
			}
			break;
		}
		default: /* groups (3, 4) are not used by ONNX; 6, 7 do not exist */
			return 1;
		}
	}
	return 0;
}

ert_status ert_onnx_check_depth(const ProtobufCMessageDescriptor *desc, const uint8_t *data,
				size_t size, struct ert_err *err)
{
	int r = walk(desc, data, size, 0);

	if (r == 1) {
		ert_err_set(err, "failed to parse %s: malformed protobuf data", desc->short_name);
		return ERT_STATUS_INVALID_MODEL;
	}
	if (r == 2) {
		ert_err_set(err, "failed to parse %s: messages nest deeper than %d levels",
			    desc->short_name, ERT_ONNX_MAX_DEPTH);
		return ERT_STATUS_INVALID_MODEL;
	}
	return ERT_OK;
}

bool ert_onnx_wire_next(const uint8_t **pos, const uint8_t *end, struct ert_wire_field *f,
			bool *bad)
{
	struct wire w = { *pos, end };
	uint64_t tag;

	*bad = false;
	if (w.p >= w.end)
		return false;
	memset(f, 0, sizeof(*f));
	if (!read_varint(&w, &tag) || (tag >> 3) == 0 || (tag >> 3) > UINT32_MAX)
		goto bad;
	f->num = (uint32_t)(tag >> 3);
	f->wire_type = (uint32_t)(tag & 7);
	switch (f->wire_type) {
	case 0:
		if (!read_varint(&w, &f->value))
			goto bad;
		break;
	case 1:
	case 5:
		f->data = w.p;
		f->len = f->wire_type == 1 ? 8 : 4;
		if (!skip(&w, f->len))
			goto bad;
		break;
	case 2:
		if (!read_varint(&w, &f->value) || f->value > (uint64_t)(w.end - w.p))
			goto bad;
		f->data = w.p;
		f->len = (size_t)f->value;
		w.p += f->len;
		break;
	default:
		goto bad;
	}
	*pos = w.p;
	return true;
bad:
	*bad = true;
	return false;
}
