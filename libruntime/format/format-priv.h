/* SPDX-License-Identifier: MIT */
/*
 * format-priv.h — constants of the .ert layout (docs/model-format.md) shared by
 * the reader, the writer and the weight codecs. Private to libruntime/format/.
 */
#ifndef ERT_FORMAT_PRIV_H
#define ERT_FORMAT_PRIV_H

#include <stdint.h>
#include <string.h>

#include "format/ert-format.h"

/* The in-place weights rely on the file's byte order matching the host's. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the .ert reader uses weights in place and needs a little-endian host"
#endif

#define FMT_MAGIC "\x89" "ERT\r\n\x1a\n"
#define FMT_MAGIC_LEN 8
#define FMT_HEADER_V1 48u          /* fixed header size of version 1 */
#define FMT_SECTION_ENTRY 24u
#define FMT_MAX_SECTIONS 32u
#define FMT_ALIGN 64u
#define FMT_STR_NONE 0xffffffffu
#define FMT_QUANT_MIN_ELEMS 256
#define FMT_DEFAULT_BLOCK 32u

/* header field offsets */
#define FMT_OFF_VERSION 8
#define FMT_OFF_FLAGS 12
#define FMT_OFF_FILE_SIZE 16
#define FMT_OFF_NSECTIONS 24
#define FMT_OFF_CHECKSUM 28
#define FMT_OFF_HEADER_SIZE 32
#define FMT_OFF_VALUE_CHECKSUM 36  /* v2; reserved (zero) in v1 */

enum fmt_section {
	FMT_SEC_STRINGS = 1,
	FMT_SEC_TENSORS = 2,
	FMT_SEC_NODES = 3,
	FMT_SEC_GRAPH = 4,
	FMT_SEC_WEIGHTS = 5,
	FMT_SEC_COUNT_V1 = 5,
	FMT_SEC_SUBGRAPHS = 6,     /* v5: the nested graphs of If, Loop and Scan */
	FMT_SEC_MAX = 6,
};

enum fmt_encoding {
	FMT_ENC_NONE = 0,
	FMT_ENC_RAW = 1,
	FMT_ENC_FP16 = 2,
	FMT_ENC_Q8 = 3,
	FMT_ENC_Q4 = 4,
	/* v7: string constants, (numel + 1) u64 offsets then the bytes (docs/strings.md) */
	FMT_ENC_STRINGS = 5,
};

/* fixed part of a tensor record before the variable quantisation arrays */
#define FMT_TENSOR_FIXED (6 * 4 + ERT_MAX_RANK * 8 + ERT_MAX_RANK * 4 + 2 * 8 + 3 * 4)
#define FMT_NODE_FIXED (6 * 4)
#define FMT_ATTR_FIXED (3 * 4)
/* fixed part of a subgraph record (v5): parent, two ranges, three list counts */
#define FMT_SUBGRAPH_FIXED (8 * 4)

#define FMT_TENSOR_FLAGS (ERT_TENSOR_CONST | ERT_TENSOR_INPUT | ERT_TENSOR_OUTPUT)
/*
 * v2 tensor flag, in files only: a constant whose values planning reads
 * (Reshape's shape, Slice's starts, ...). Its stored bytes are covered by the
 * header's value checksum, although they lie in the weights section.
 */
#define FMT_TENSOR_VALUE 0x8u
/*
 * v8 tensor flags, bits 4-5: the value kind (ert_value_kind; 0 a tensor).
 * A sequence or optional is no constant, has rank 0, and its record's dtype
 * is its tensors' (0: not declared); in memory it is a uint64 handle.
 */
#define FMT_TENSOR_KIND_SHIFT 4
#define FMT_TENSOR_KIND_MASK 0x30u

static inline uint32_t fmt_get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t fmt_get64(const uint8_t *p)
{
	return (uint64_t)fmt_get32(p) | (uint64_t)fmt_get32(p + 4) << 32;
}

static inline void fmt_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static inline void fmt_put64(uint8_t *p, uint64_t v)
{
	fmt_put32(p, (uint32_t)v);
	fmt_put32(p + 4, (uint32_t)(v >> 32));
}

/* CRC-32 (zlib) of @n bytes at @p added to @crc, for lengths beyond zlib's uInt. */
uint32_t fmt_crc32(uint32_t crc, const uint8_t *p, uint64_t n);

/* CRC-32 (zlib) of the checksummed parts of an image whose header was checked. */
uint32_t fmt_checksum(const uint8_t *img, uint32_t header_size, uint32_t n_sections);

/* ---- weight codecs (weights.c) ---- */

/* Number of quantisation blocks of a tensor of @rank/@dims with @block elements each. */
uint64_t fmt_quant_blocks(int32_t rank, const int64_t *dims, int64_t numel, uint32_t block);
/* Stored bytes of @numel elements in @enc (FMT_ENC_FP16/Q8/Q4); 0 on overflow. */
uint64_t fmt_encoded_size(enum fmt_encoding enc, int32_t rank, const int64_t *dims,
			  int64_t numel, uint32_t block);
/* Encode float32 @src into @dst (fmt_encoded_size bytes). */
void fmt_encode(enum fmt_encoding enc, const float *src, int32_t rank, const int64_t *dims,
		int64_t numel, uint32_t block, uint8_t *dst);
/* Decode @src into float32 @dst (numel elements). */
void fmt_decode(enum fmt_encoding enc, const uint8_t *src, int32_t rank, const int64_t *dims,
		int64_t numel, uint32_t block, float *dst);

#endif
