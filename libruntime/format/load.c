/* SPDX-License-Identifier: MIT */
/*
 * .ert reader (docs/model-format.md). The image is untrusted: every field is
 * read through bounds-checked cursors and validated before it is used, and
 * sizes are compared by subtraction so that no sum can overflow.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

#include "ert-op-impl.h"
#include "format/format-priv.h"

struct loader {
	const uint8_t *img;
	uint64_t size;
	uint32_t version;
	ert_status st;
	struct ert_err *err;
	uint64_t sec_off[FMT_SEC_MAX + 1], sec_size[FMT_SEC_MAX + 1];
	uint32_t n_strings;
	const uint8_t *str_index, *str_bytes;
	struct ert_graph *g;      /* the graph whose records are being read */
	uint32_t cur;             /* its number: 0 the main graph, i + 1 subgraph i */
	/* v5: the main graph, then each subgraph (SUBGRAPHS section) */
	struct ert_graph **graphs;
	struct sub_rec *subs;
	uint32_t n_subs;
	uint8_t *rec_flags;       /* INPUT/OUTPUT bits as the tensor records state them */
	struct range *ranges;     /* weight ranges of constants, for the overlap check */
	uint32_t n_ranges;
	uint32_t value_crc;       /* v2: CRC-32 of the data of FMT_TENSOR_VALUE constants */
};

struct range {
	uint64_t off, size;
	uint32_t id;    /* tensor record, or section type for the section table */
	const char *name; /* tensor records: the tensor's name */
};

/* A subgraph record (v5), checked; its lists read once its tensors are. */
struct sub_rec {
	uint32_t parent, depth;
	uint32_t first_tensor, n_tensors, first_node, n_nodes;
	uint32_t n_lists[3];        /* inputs, outputs, captures */
	const uint8_t *lists[3];    /* their i32 indices in the image */
	bool used;                  /* a GRAPH attribute refers to it */
};

struct cur {
	struct loader *ld;
	const uint8_t *p;
	uint64_t len, pos;
	const char *what;
};

__attribute__((format(printf, 3, 4)))
static bool fail(struct loader *ld, ert_status st, const char *fmt, ...)
{
	va_list ap;

	ld->st = st;
	va_start(ap, fmt);
	ert_err_vset(ld->err, fmt, ap);
	va_end(ap);
	return false;
}

static bool need(struct cur *c, uint64_t n)
{
	if (n <= c->len - c->pos)
		return true;
	return fail(c->ld, ERT_STATUS_INVALID_MODEL,
		    "%s is truncated: %llu bytes needed at offset %llu, %llu left", c->what,
		    (unsigned long long)n, (unsigned long long)c->pos,
		    (unsigned long long)(c->len - c->pos));
}

/* The count of @elem-byte items that follow must fit in what is left. */
static bool need_items(struct cur *c, uint64_t count, uint64_t elem, const char *items)
{
	if (count <= (c->len - c->pos) / elem)
		return true;
	return fail(c->ld, ERT_STATUS_INVALID_MODEL,
		    "%s claims %llu %s, but only %llu bytes are left", c->what,
		    (unsigned long long)count, items, (unsigned long long)(c->len - c->pos));
}

static uint32_t rd32(struct cur *c)
{
	uint32_t v = fmt_get32(c->p + c->pos);

	c->pos += 4;
	return v;
}

static uint64_t rd64(struct cur *c)
{
	uint64_t v = fmt_get64(c->p + c->pos);

	c->pos += 8;
	return v;
}

static float rdf(struct cur *c)
{
	uint32_t u = rd32(c);
	float f;

	memcpy(&f, &u, 4);
	return f;
}

static struct cur section(struct loader *ld, enum fmt_section s, const char *what)
{
	return (struct cur){ ld, ld->img + ld->sec_off[s], ld->sec_size[s], 0, what };
}

uint32_t fmt_crc32(uint32_t crc, const uint8_t *p, uint64_t n)
{
	/* zlib takes uInt lengths: feed large ranges in pieces */
	while (n) {
		uInt k = n > (1u << 30) ? 1u << 30 : (uInt)n;

		crc = (uint32_t)crc32(crc, p, k);
		p += k;
		n -= k;
	}
	return crc;
}

uint32_t fmt_checksum(const uint8_t *img, uint32_t header_size, uint32_t n_sections)
{
	uint8_t hdr[FMT_HEADER_V1];
	uLong crc = crc32(0L, Z_NULL, 0);

	memcpy(hdr, img, FMT_HEADER_V1);
	fmt_put32(hdr + FMT_OFF_CHECKSUM, 0);
	crc = crc32(crc, hdr, FMT_HEADER_V1);
	crc = crc32(crc, img + FMT_HEADER_V1, header_size - FMT_HEADER_V1 +
			  n_sections * FMT_SECTION_ENTRY);
	for (uint32_t s = 0; s < n_sections; s++) {
		const uint8_t *e = img + header_size + s * FMT_SECTION_ENTRY;
		uint64_t off = fmt_get64(e + 8), size = fmt_get64(e + 16);

		if (fmt_get32(e) == FMT_SEC_WEIGHTS)
			continue;
		crc = fmt_crc32((uint32_t)crc, img + off, size);
	}
	return (uint32_t)crc;
}

bool ert_format_probe(const void *data, size_t size)
{
	return data && size >= FMT_MAGIC_LEN && memcmp(data, FMT_MAGIC, FMT_MAGIC_LEN) == 0;
}

static const char *const section_names[] = {
	"?", "string table", "tensor table", "node table", "graph section", "weights section",
	"subgraph section",
};

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

static bool read_header(struct loader *ld)
{
	const uint8_t *h = ld->img;
	uint32_t hs, ns, flags;
	uint64_t fsize, table_end;
	struct range secs[FMT_MAX_SECTIONS];

	if (!ert_format_probe(h, ld->size))
		return fail(ld, ERT_STATUS_INVALID_MODEL, "not an .ert model file (bad magic)");
	if (ld->size < FMT_OFF_VERSION + 4)
		return fail(ld, ERT_STATUS_INVALID_MODEL,
			    "model file is truncated: %llu bytes, no format version",
			    (unsigned long long)ld->size);
	ld->version = fmt_get32(h + FMT_OFF_VERSION);
	if (ld->version == 0)
		return fail(ld, ERT_STATUS_INVALID_MODEL, "model format version 0 does not exist");
	if (ld->version > ERT_FORMAT_VERSION)
		return fail(ld, ERT_STATUS_VERSION,
			    "model format version %u is newer than this runtime's %u",
			    ld->version, ERT_FORMAT_VERSION);
	if (ld->size < FMT_HEADER_V1)
		return fail(ld, ERT_STATUS_INVALID_MODEL,
			    "model file is truncated: %llu bytes, the header alone needs %u",
			    (unsigned long long)ld->size, FMT_HEADER_V1);
	flags = fmt_get32(h + FMT_OFF_FLAGS);
	fsize = fmt_get64(h + FMT_OFF_FILE_SIZE);
	ns = fmt_get32(h + FMT_OFF_NSECTIONS);
	hs = fmt_get32(h + FMT_OFF_HEADER_SIZE);
	if (flags)
		return fail(ld, ERT_STATUS_INVALID_MODEL, "header flags 0x%x are not defined", flags);
	/* v2 uses the first four reserved bytes of v1 for the value checksum */
	for (uint32_t i = FMT_OFF_HEADER_SIZE + (ld->version >= 2 ? 8 : 4); i < FMT_HEADER_V1; i++)
		if (h[i])
			return fail(ld, ERT_STATUS_INVALID_MODEL,
				    "reserved header byte %u is not zero", i);
	if (fsize != ld->size)
		return fail(ld, ERT_STATUS_INVALID_MODEL,
			    "model file is %llu bytes but its header says %llu%s",
			    (unsigned long long)ld->size, (unsigned long long)fsize,
			    fsize > ld->size ? " (truncated)" : "");
	/* Versions 1 to 10 fix the header size; later versions may only grow it. */
	if (ld->version <= 10 && hs != FMT_HEADER_V1)
		return fail(ld, ERT_STATUS_INVALID_MODEL,
			    "header size %u, format version %u has %u", hs, ld->version,
			    FMT_HEADER_V1);
	if (ns < FMT_SEC_COUNT_V1 || ns > FMT_MAX_SECTIONS)
		return fail(ld, ERT_STATUS_INVALID_MODEL, "%u sections (expected %u to %u)", ns,
			    FMT_SEC_COUNT_V1, FMT_MAX_SECTIONS);
	table_end = (uint64_t)hs + (uint64_t)ns * FMT_SECTION_ENTRY;
	if (table_end > ld->size)
		return fail(ld, ERT_STATUS_INVALID_MODEL,
			    "section table ends at %llu, past the end of the %llu-byte file",
			    (unsigned long long)table_end, (unsigned long long)ld->size);
	for (uint32_t s = 0; s < ns; s++) {
		const uint8_t *e = h + hs + s * FMT_SECTION_ENTRY;
		uint32_t type = fmt_get32(e);
		uint64_t off = fmt_get64(e + 8), size = fmt_get64(e + 16);

		/* version 5 adds the subgraph section */
		if (type < 1 || type > (ld->version >= 5 ? FMT_SEC_MAX : FMT_SEC_COUNT_V1) ||
		    fmt_get32(e + 4))
			return fail(ld, ERT_STATUS_INVALID_MODEL,
				    "section %u has unknown type %u", s, type);
		if (ld->sec_off[type])
			return fail(ld, ERT_STATUS_INVALID_MODEL, "%s appears twice",
				    section_names[type]);
		if (off < table_end || off > ld->size || size > ld->size - off)
			return fail(ld, ERT_STATUS_INVALID_MODEL,
				    "%s at %llu+%llu lies outside the file (%llu bytes, tables end at %llu)",
				    section_names[type], (unsigned long long)off,
				    (unsigned long long)size, (unsigned long long)ld->size,
				    (unsigned long long)table_end);
		if (type == FMT_SEC_WEIGHTS && off % FMT_ALIGN)
			return fail(ld, ERT_STATUS_INVALID_MODEL,
				    "weights section at %llu is not %u-byte aligned",
				    (unsigned long long)off, FMT_ALIGN);
		ld->sec_off[type] = off;
		ld->sec_size[type] = size;
		secs[s] = (struct range){ off, size, type, NULL };
	}
	if (ld->version >= 5 && !ld->sec_size[FMT_SEC_SUBGRAPHS] && !ld->sec_off[FMT_SEC_SUBGRAPHS])
		return fail(ld, ERT_STATUS_INVALID_MODEL, "format version %u needs a %s",
			    ld->version, section_names[FMT_SEC_SUBGRAPHS]);
	qsort(secs, ns, sizeof(secs[0]), cmp_range);
	for (uint32_t s = 1; s < ns; s++)
		if (secs[s - 1].size > secs[s].off - secs[s - 1].off)
			return fail(ld, ERT_STATUS_INVALID_MODEL, "%s overlaps %s",
				    section_names[secs[s - 1].id], section_names[secs[s].id]);
	/*
	 * Bytes outside every section (alignment padding, mostly before the
	 * weights) are covered by no checksum: they must be zero, so that a
	 * file carries nothing that is not part of the model.
	 */
	for (uint32_t s = 0; s <= ns; s++) {
		uint64_t from = s ? secs[s - 1].off + secs[s - 1].size : table_end;
		uint64_t to = s < ns ? secs[s].off : ld->size;

		for (uint64_t i = from; i < to; i++)
			if (h[i])
				return fail(ld, ERT_STATUS_INVALID_MODEL,
					    "padding byte at %llu, outside every section, is not zero",
					    (unsigned long long)i);
	}
	uint32_t want = fmt_get32(h + FMT_OFF_CHECKSUM), got = fmt_checksum(h, hs, ns);

	if (want != got)
		return fail(ld, ERT_STATUS_INVALID_MODEL,
			    "checksum mismatch (file says %08x, contents give %08x): the file is damaged",
			    want, got);
	return true;
}

static bool read_strings(struct loader *ld)
{
	struct cur c = section(ld, FMT_SEC_STRINGS, "string table");
	uint64_t nbytes;

	if (!need(&c, 4))
		return false;
	ld->n_strings = rd32(&c);
	if (!need_items(&c, ld->n_strings, 8, "strings"))
		return false;
	ld->str_index = c.p + c.pos;
	ld->str_bytes = c.p + c.pos + (uint64_t)ld->n_strings * 8;
	nbytes = c.len - c.pos - (uint64_t)ld->n_strings * 8;
	for (uint32_t i = 0; i < ld->n_strings; i++) {
		uint64_t off = fmt_get32(ld->str_index + 8 * i);
		uint64_t len = fmt_get32(ld->str_index + 8 * i + 4);

		if (off >= nbytes || len >= nbytes - off || ld->str_bytes[off + len] != 0)
			return fail(ld, ERT_STATUS_INVALID_MODEL,
				    "string %u at %llu+%llu is outside the string table (%llu bytes) or not NUL-terminated",
				    i, (unsigned long long)off, (unsigned long long)len,
				    (unsigned long long)nbytes);
	}
	return true;
}

/*
 * Resolve string reference @idx. @name: a name (non-empty, no NUL inside).
 * @optional: FMT_STR_NONE gives NULL.
 */
static bool get_str(struct loader *ld, uint32_t idx, bool name, bool optional,
		    const char *what, const char **out, uint32_t *len_out)
{
	if (idx == FMT_STR_NONE && optional) {
		*out = NULL;
		return true;
	}
	if (idx >= ld->n_strings)
		return fail(ld, ERT_STATUS_INVALID_MODEL, "%s: string index %u out of range (%u strings)",
			    what, idx, ld->n_strings);
	const char *s = (const char *)ld->str_bytes + fmt_get32(ld->str_index + 8 * idx);
	uint32_t len = fmt_get32(ld->str_index + 8 * idx + 4);

	if (name && (len == 0 || strlen(s) != len))
		return fail(ld, ERT_STATUS_INVALID_MODEL, "%s: name is empty or holds a NUL byte", what);
	*out = s;
	if (len_out)
		*len_out = len;
	return true;
}

/* Decoded or copied constant data in a 64-byte aligned owned buffer. */
static void *alloc_aligned(uint64_t nbytes)
{
	uint64_t n = (nbytes + FMT_ALIGN - 1) & ~(uint64_t)(FMT_ALIGN - 1);

	return aligned_alloc(FMT_ALIGN, n ? n : FMT_ALIGN);
}

/*
 * Block-quantised constants stay encoded (in place when the image is 64-byte
 * aligned, as a mapping is; else in an aligned copy): they are decoded to
 * float32 only when a session needs float32 (ert_graph_const_data()).
 */
static bool keep_encoded(struct loader *ld, int32_t ti, uint32_t enc, uint32_t block,
			 const uint8_t *src, uint64_t size, int64_t numel, const char *what)
{
	struct ert_tensor *t = &ld->g->tensors[ti];
	struct ert_wq *wq = ert_graph_alloc(ld->g, sizeof(*wq));
	uint64_t nb = fmt_quant_blocks(t->rank, t->dims, numel, block);

	if (!wq || (uint64_t)numel > SIZE_MAX / 4)
		return fail(ld, ERT_STATUS_OUT_OF_MEMORY, "%s: out of memory", what);
	memset(wq, 0, sizeof(*wq));
	if ((uintptr_t)src % FMT_ALIGN) {
		wq->own = alloc_aligned(size);
		if (!wq->own)
			return fail(ld, ERT_STATUS_OUT_OF_MEMORY, "%s: out of memory for %llu bytes",
				    what, (unsigned long long)size);
		memcpy(wq->own, src, size);
		src = wq->own;
	}
	wq->bits = enc == FMT_ENC_Q8 ? 8 : 4;
	wq->block = block;
	wq->rows = t->rank >= 2 && t->dims[0] > 0 ? t->dims[0] : 1;
	wq->row_len = numel / wq->rows;
	wq->blocks_per_row = (int64_t)(nb / (uint64_t)wq->rows);
	wq->scales = (const float *)(const void *)src;
	wq->q = src + nb * 4;
	wq->enc_bytes = size;
	ert_graph_set_const(ld->g, ti, NULL, (size_t)numel * 4, false);
	t->wq = wq;
	return true;
}

/*
 * A string constant (encoding 5): numel + 1 offsets, the first 0, none
 * decreasing, the last the byte count, all inside the stored size; the
 * handles are made here and point into the image.
 */
static bool read_string_const(struct loader *ld, int32_t ti, int64_t numel, uint64_t off,
			      uint64_t size, const char *what)
{
	uint64_t ws = ld->sec_off[FMT_SEC_WEIGHTS], wl = ld->sec_size[FMT_SEC_WEIGHTS];
	uint64_t head, prev = 0;
	const uint8_t *src;
	ert_string *h;

	if ((uint64_t)numel >= UINT64_MAX / 16 || (head = ((uint64_t)numel + 1) * 8) > size)
		return fail(ld, ERT_STATUS_INVALID_MODEL,
			    "%s: %llu bytes cannot hold the offsets of %lld strings", what,
			    (unsigned long long)size, (long long)numel);
	if (off % FMT_ALIGN || off < ws || off - ws > wl || size > wl - (off - ws))
		return fail(ld, ERT_STATUS_INVALID_MODEL,
			    "%s: strings at %llu+%llu lie outside the weights section", what,
			    (unsigned long long)off, (unsigned long long)size);
	src = ld->img + off;
	for (int64_t i = 0; i <= numel; i++) {
		uint64_t o = fmt_get64(src + 8 * i);

		if (i == 0 ? o != 0 : o < prev || o > size - head)
			return fail(ld, ERT_STATUS_INVALID_MODEL,
				    "%s: string offset %lld is %llu (after %llu, of %llu bytes)", what,
				    (long long)i, (unsigned long long)o, (unsigned long long)prev,
				    (unsigned long long)(size - head));
		prev = o;
	}
	if (prev != size - head)
		return fail(ld, ERT_STATUS_INVALID_MODEL,
			    "%s: the strings end at %llu of %llu bytes", what,
			    (unsigned long long)prev, (unsigned long long)(size - head));
	if (size)
		ld->ranges[ld->n_ranges++] =
			(struct range){ off, size, (uint32_t)ti, ld->g->tensors[ti].name };
	h = malloc(numel ? (size_t)numel * sizeof(*h) : 1);
	if (!h)
		return fail(ld, ERT_STATUS_OUT_OF_MEMORY, "%s: out of memory for %lld strings", what,
			    (long long)numel);
	for (int64_t i = 0; i < numel; i++) {
		uint64_t a = fmt_get64(src + 8 * i), b = fmt_get64(src + 8 * (i + 1));

		h[i] = (ert_string){ (const char *)src + head + a, b - a };
	}
	ert_graph_set_const(ld->g, ti, h, (size_t)numel * sizeof(*h), true);
	return true;
}

static bool read_const(struct loader *ld, int32_t ti, uint32_t enc, uint32_t block,
		       uint64_t off, uint64_t size, bool value_read, const char *what)
{
	struct ert_tensor *t = &ld->g->tensors[ti];
	int64_t numel = ert_shape_numel(t->rank, t->dims);
	uint64_t want, ws = ld->sec_off[FMT_SEC_WEIGHTS], wl = ld->sec_size[FMT_SEC_WEIGHTS];

	if (t->rank < 0 || numel < 0)
		return fail(ld, ERT_STATUS_INVALID_MODEL,
			    "%s: a constant needs a known shape whose size fits in 64 bits", what);
	if (enc == FMT_ENC_STRINGS)
		return read_string_const(ld, ti, numel, off, size, what);
	if (!ert_dtype_valid(t->dtype))
		return fail(ld, ERT_STATUS_INVALID_MODEL, "%s: constant of dtype %u", what,
			    (unsigned)t->dtype);
	if (enc == FMT_ENC_RAW) {
		size_t es = ert_dtype_size(t->dtype);

		if (es && (uint64_t)numel > UINT64_MAX / es)
			return fail(ld, ERT_STATUS_INVALID_MODEL, "%s: byte size overflows", what);
		want = es ? (uint64_t)numel * es : (uint64_t)numel / 2 + ((uint64_t)numel & 1);
	} else {
		if (t->dtype != ERT_DTYPE_FLOAT32)
			return fail(ld, ERT_STATUS_INVALID_MODEL,
				    "%s: encoding %u needs dtype float32, not %s", what, enc,
				    ert_dtype_name(t->dtype));
		if ((uint64_t)numel > UINT64_MAX / 8)
			return fail(ld, ERT_STATUS_INVALID_MODEL, "%s: byte size overflows", what);
		want = fmt_encoded_size((enum fmt_encoding)enc, t->rank, t->dims, numel, block);
	}
	if (size != want)
		return fail(ld, ERT_STATUS_INVALID_MODEL,
			    "%s: stores %llu bytes, its shape and encoding need %llu", what,
			    (unsigned long long)size, (unsigned long long)want);
	if (off % FMT_ALIGN)
		return fail(ld, ERT_STATUS_INVALID_MODEL, "%s: data offset %llu is not %u-byte aligned",
			    what, (unsigned long long)off, FMT_ALIGN);
	if (off < ws || off - ws > wl || size > wl - (off - ws))
		return fail(ld, ERT_STATUS_INVALID_MODEL,
			    "%s: data at %llu+%llu lies outside the weights section (%llu+%llu)", what,
			    (unsigned long long)off, (unsigned long long)size,
			    (unsigned long long)ws, (unsigned long long)wl);
	if (size)
		ld->ranges[ld->n_ranges++] =
			(struct range){ off, size, (uint32_t)ti, ld->g->tensors[ti].name };
	if (value_read)
		ld->value_crc = fmt_crc32(ld->value_crc, ld->img + off, size);

	const uint8_t *src = ld->img + off;

	if (enc == FMT_ENC_Q8 || enc == FMT_ENC_Q4)
		return keep_encoded(ld, ti, enc, block, src, size, numel, what);
	/* A mapping is page aligned; an arbitrary buffer may not be: then copy. */
	if (enc == FMT_ENC_RAW && (size == 0 || (uintptr_t)ld->img % FMT_ALIGN == 0)) {
		ert_graph_set_const(ld->g, ti, src, size, false);
		return true;
	}
	uint64_t out_bytes = enc == FMT_ENC_RAW ? size : (uint64_t)numel * 4;
	void *buf = out_bytes <= SIZE_MAX - FMT_ALIGN ? alloc_aligned(out_bytes) : NULL;

	if (!buf)
		return fail(ld, ERT_STATUS_OUT_OF_MEMORY, "%s: out of memory for %llu bytes", what,
			    (unsigned long long)out_bytes);
	if (enc == FMT_ENC_RAW)
		memcpy(buf, src, size);
	else
		fmt_decode((enum fmt_encoding)enc, src, t->rank, t->dims, numel, block, buf);
	ert_graph_set_const(ld->g, ti, buf, out_bytes, true);
	return true;
}

static bool read_tensor(struct loader *ld, struct cur *c, uint32_t i)
{
	char what[160];
	const char *name, *dn[ERT_MAX_RANK];
	uint32_t dtype, enc, flags, block, name_idx, qcount, qzp, kind;
	int32_t rank, qaxis;
	int64_t dims[ERT_MAX_RANK];
	uint64_t off, size;

	if (!need(c, FMT_TENSOR_FIXED))
		return false;
	name_idx = rd32(c);
	snprintf(what, sizeof(what), "tensor %u", i);
	if (!get_str(ld, name_idx, true, false, what, &name, NULL))
		return false;
	snprintf(what, sizeof(what), "tensor %u ('%.100s')", i, name);
	dtype = rd32(c);
	enc = rd32(c);
	rank = (int32_t)rd32(c);
	flags = rd32(c);
	block = rd32(c);
	if (dtype >= ERT_DTYPE_COUNT)
		return fail(ld, ERT_STATUS_INVALID_MODEL, "%s: unknown dtype %u", what, dtype);
	if (enc > (ld->version >= 7 ? FMT_ENC_STRINGS : FMT_ENC_Q4))
		return fail(ld, ERT_STATUS_INVALID_MODEL, "%s: unknown encoding %u", what, enc);
	if ((enc == FMT_ENC_STRINGS) != (dtype == ERT_DTYPE_STRING && enc != FMT_ENC_NONE))
		return fail(ld, ERT_STATUS_INVALID_MODEL, "%s: encoding %u with dtype %s", what, enc,
			    ert_dtype_name((ert_dtype)dtype));
	if (rank < -1 || rank > ERT_MAX_RANK)
		return fail(ld, ERT_STATUS_INVALID_MODEL, "%s: rank %d (must be -1..%d)", what, rank,
			    ERT_MAX_RANK);
	if (flags & ~(FMT_TENSOR_FLAGS | (ld->version >= 2 ? FMT_TENSOR_VALUE : 0) |
		      (ld->version >= 8 ? FMT_TENSOR_KIND_MASK : 0)))
		return fail(ld, ERT_STATUS_INVALID_MODEL, "%s: undefined flags 0x%x", what, flags);
	kind = (flags & FMT_TENSOR_KIND_MASK) >> FMT_TENSOR_KIND_SHIFT;
	if (kind && ((flags & ERT_TENSOR_CONST) || rank != 0 ||
		     (dtype && !ert_dtype_valid((int32_t)dtype))))
		return fail(ld, ERT_STATUS_INVALID_MODEL, "%s: a %s must be a non-constant of rank 0 "
			    "holding tensors of a known dtype", what, ert_value_kind_name((int)kind));
	if ((flags & FMT_TENSOR_VALUE) && !(flags & ERT_TENSOR_CONST))
		return fail(ld, ERT_STATUS_INVALID_MODEL, "%s: value flag on a non-constant", what);
	if (!(flags & ERT_TENSOR_CONST) != (enc == FMT_ENC_NONE))
		return fail(ld, ERT_STATUS_INVALID_MODEL,
			    "%s: constant flag and data encoding %u disagree", what, enc);
	if ((enc == FMT_ENC_Q8 || enc == FMT_ENC_Q4) != (block != 0))
		return fail(ld, ERT_STATUS_INVALID_MODEL, "%s: block size %u with encoding %u",
			    what, block, enc);
	for (int d = 0; d < ERT_MAX_RANK; d++) {
		dims[d] = (int64_t)rd64(c);
		if (d < rank ? dims[d] < -1 : dims[d] != 0)
			return fail(ld, ERT_STATUS_INVALID_MODEL, "%s: dimension %d is %lld", what, d,
				    (long long)dims[d]);
	}
	for (int d = 0; d < ERT_MAX_RANK; d++) {
		uint32_t s = rd32(c);

		if (d >= rank && s != FMT_STR_NONE)
			return fail(ld, ERT_STATUS_INVALID_MODEL,
				    "%s: name for dimension %d beyond rank %d", what, d, rank);
		if (d < rank && !get_str(ld, s, true, true, what, &dn[d], NULL))
			return false;
	}
	off = rd64(c);
	size = rd64(c);
	qaxis = (int32_t)rd32(c);
	qcount = rd32(c);
	qzp = rd32(c);
	if (enc == FMT_ENC_NONE && (off || size))
		return fail(ld, ERT_STATUS_INVALID_MODEL, "%s: data without encoding", what);
	if (qzp > 1 || (qcount == 0 && (qaxis != -1 || qzp)))
		return fail(ld, ERT_STATUS_INVALID_MODEL, "%s: malformed quantisation header", what);
	if (qcount && (qaxis < -1 || qaxis >= rank ||
		       (qaxis == -1 ? qcount != 1 : qcount != 1 && dims[qaxis] != (int64_t)qcount)))
		return fail(ld, ERT_STATUS_INVALID_MODEL,
			    "%s: %u quantisation scales on axis %d do not fit its shape", what, qcount,
			    qaxis);
	if (!need_items(c, qcount, qzp ? 8 : 4, "quantisation parameters"))
		return false;

	int32_t ti = ert_graph_add_tensor(ld->g, name, (ert_dtype)dtype, rank, dims);

	if (ti < 0) {
		if (ert_graph_find_tensor(ld->g, name) >= 0)
			return fail(ld, ERT_STATUS_INVALID_MODEL, "%s: duplicate tensor name", what);
		return fail(ld, ERT_STATUS_OUT_OF_MEMORY, "%s: out of memory", what);
	}
	struct ert_tensor *t = &ld->g->tensors[ti];

	if (kind) {
		/* the record's dtype is the tensors' it holds; the value is a handle */
		t->kind = (uint8_t)kind;
		t->elem = (ert_dtype)dtype;
		t->dtype = ERT_DTYPE_UINT64;
	}
	for (int d = 0; d < rank; d++)
		if (dn[d] && !(t->dim_names[d] = ert_graph_strdup(ld->g, dn[d])))
			return fail(ld, ERT_STATUS_OUT_OF_MEMORY, "%s: out of memory", what);
	if (qcount) {
		float *sc = ert_graph_alloc(ld->g, (size_t)qcount * sizeof(float));
		int32_t *zp = qzp ? ert_graph_alloc(ld->g, (size_t)qcount * sizeof(int32_t)) : NULL;

		if (!sc || (qzp && !zp))
			return fail(ld, ERT_STATUS_OUT_OF_MEMORY, "%s: out of memory", what);
		for (uint32_t k = 0; k < qcount; k++)
			sc[k] = rdf(c);
		for (uint32_t k = 0; qzp && k < qcount; k++)
			zp[k] = (int32_t)rd32(c);
		t->quant = (struct ert_quant){ qaxis, qcount, sc, zp };
	}
	ld->rec_flags[i] = (uint8_t)(flags & (ERT_TENSOR_INPUT | ERT_TENSOR_OUTPUT));
	if (enc != FMT_ENC_NONE)
		return read_const(ld, ti, enc, block, off, size, flags & FMT_TENSOR_VALUE, what);
	return true;
}

static bool read_tensors(struct loader *ld)
{
	struct cur c = section(ld, FMT_SEC_TENSORS, "tensor table");
	uint32_t n;

	if (!need(&c, 4))
		return false;
	n = rd32(&c);
	if (n > INT32_MAX)
		return fail(ld, ERT_STATUS_INVALID_MODEL, "tensor table claims %u tensors", n);
	if (!need_items(&c, n, FMT_TENSOR_FIXED, "tensors"))
		return false;
	ld->value_crc = (uint32_t)crc32(0L, Z_NULL, 0);
	ld->rec_flags = calloc(n ? n : 1, 1);
	ld->ranges = malloc((n ? n : 1) * sizeof(*ld->ranges));
	if (!ld->rec_flags || !ld->ranges)
		return fail(ld, ERT_STATUS_OUT_OF_MEMORY, "out of memory for %u tensors", n);
	if (ld->n_subs && (uint64_t)ld->subs[ld->n_subs - 1].first_tensor +
				  ld->subs[ld->n_subs - 1].n_tensors != n)
		return fail(ld, ERT_STATUS_INVALID_MODEL,
			    "the subgraphs' tensors end at record %llu, the tensor table has %u",
			    (unsigned long long)ld->subs[ld->n_subs - 1].first_tensor +
				    ld->subs[ld->n_subs - 1].n_tensors, n);
	for (uint32_t i = 0, gi = 0; i < n; i++) {
		/* records of the main graph first, then each subgraph's range */
		while (gi < ld->n_subs && i == ld->subs[gi].first_tensor)
			gi++;
		ld->g = ld->graphs[gi];
		if (!read_tensor(ld, &c, i))
			return false;
	}
	ld->g = ld->graphs[0];
	if (c.pos != c.len)
		return fail(ld, ERT_STATUS_INVALID_MODEL, "tensor table has %llu trailing bytes",
			    (unsigned long long)(c.len - c.pos));
	if (ld->version >= 2) {
		uint32_t want = fmt_get32(ld->img + FMT_OFF_VALUE_CHECKSUM);

		if (want != ld->value_crc)
			return fail(ld, ERT_STATUS_INVALID_MODEL,
				    "value checksum mismatch (file says %08x, the constants planning reads give %08x): the file is damaged",
				    want, ld->value_crc);
	}
	qsort(ld->ranges, ld->n_ranges, sizeof(*ld->ranges), cmp_range);
	for (uint32_t i = 1; i < ld->n_ranges; i++) {
		const struct range *a = &ld->ranges[i - 1], *b = &ld->ranges[i];

		if (a->size > b->off - a->off)
			return fail(ld, ERT_STATUS_INVALID_MODEL,
				    "data of tensors '%s' and '%s' overlap", a->name, b->name);
	}
	return true;
}

static bool read_index(struct loader *ld, struct cur *c, bool optional, const char *what,
		       uint32_t k, int32_t *out)
{
	int32_t t = (int32_t)rd32(c);

	if ((t == -1 && optional) || (t >= 0 && (uint32_t)t < ld->g->n_tensors)) {
		*out = t;
		return true;
	}
	return fail(ld, ERT_STATUS_INVALID_MODEL, "%s %u: tensor index %d out of range (%u tensors)",
		    what, k, t, ld->g->n_tensors);
}

/*
 * A GRAPH attribute names subgraph record k, which must belong to the graph
 * being read (its parent) and be used by no other attribute: so subgraphs
 * form a tree, and a cycle cannot be written down.
 */
static bool read_graph_attr(struct loader *ld, struct cur *c, struct ert_attr *a,
			    const char *what)
{
	uint32_t k = rd32(c);

	if (k >= ld->n_subs)
		return fail(ld, ERT_STATUS_INVALID_MODEL,
			    "%s: attribute '%s' refers to subgraph %u of %u", what, a->name, k,
			    ld->n_subs);
	if (ld->subs[k].parent != ld->cur)
		return fail(ld, ERT_STATUS_INVALID_MODEL,
			    "%s: attribute '%s' refers to subgraph %u, which belongs to graph %u, "
			    "not to this graph %u (a cycle or a shared subgraph)", what, a->name, k,
			    ld->subs[k].parent, ld->cur);
	if (ld->subs[k].used)
		return fail(ld, ERT_STATUS_INVALID_MODEL,
			    "%s: attribute '%s' refers to subgraph %u, which another attribute "
			    "holds already", what, a->name, k);
	ld->subs[k].used = true;
	a->graph = ld->graphs[k + 1];
	return true;
}

static bool read_attr(struct loader *ld, struct cur *c, struct ert_attr *a, const char *what)
{
	struct ert_graph *g = ld->g;
	uint32_t name_idx, type, count, len;
	const char *s;

	if (!need(c, FMT_ATTR_FIXED))
		return false;
	name_idx = rd32(c);
	type = rd32(c);
	count = rd32(c);
	if (!get_str(ld, name_idx, true, false, what, &s, NULL))
		return false;
	if (!(a->name = ert_graph_strdup(g, s)))
		return fail(ld, ERT_STATUS_OUT_OF_MEMORY, "%s: out of memory", what);
	a->type = (enum ert_attr_type)type;
	a->count = count;
	switch (type) {
	case ERT_ATTR_FLOAT:
	case ERT_ATTR_INT:
	case ERT_ATTR_STRING:
	case ERT_ATTR_TENSOR:
		if (count != 1)
			return fail(ld, ERT_STATUS_INVALID_MODEL,
				    "%s: attribute '%s' is a scalar with count %u", what, a->name, count);
		if (!need(c, type == ERT_ATTR_INT ? 8 : 4))
			return false;
		break;
	case ERT_ATTR_FLOATS:
	case ERT_ATTR_STRINGS:
		if (!need_items(c, count, 4, "attribute values"))
			return false;
		break;
	case ERT_ATTR_INTS:
		if (!need_items(c, count, 8, "attribute values"))
			return false;
		break;
	case ERT_ATTR_GRAPH:
		if (ld->version < 5)
			return fail(ld, ERT_STATUS_INVALID_MODEL,
				    "%s: attribute '%s' is a graph, which format version %u cannot hold",
				    what, a->name, ld->version);
		if (count != 1)
			return fail(ld, ERT_STATUS_INVALID_MODEL,
				    "%s: attribute '%s' is a scalar with count %u", what, a->name, count);
		if (!need(c, 4))
			return false;
		return read_graph_attr(ld, c, a, what);
	default:
		return fail(ld, ERT_STATUS_INVALID_MODEL, "%s: attribute '%s' has unknown type %u",
			    what, a->name, type);
	}
	switch (type) {
	case ERT_ATTR_FLOAT:
		a->f = rdf(c);
		return true;
	case ERT_ATTR_INT:
		a->i = (int64_t)rd64(c);
		return true;
	case ERT_ATTR_STRING:
		if (!get_str(ld, rd32(c), false, false, what, &s, &len))
			return false;
		a->len = len;
		if (!(a->s = ert_graph_strndup(g, s, len)))
			return fail(ld, ERT_STATUS_OUT_OF_MEMORY, "%s: out of memory", what);
		return true;
	case ERT_ATTR_TENSOR:
		return read_index(ld, c, false, what, 0, &a->tensor);
	default:
		break;
	}
	/* arrays: count was checked against the bytes left, so the sizes below fit */
	size_t elem = type == ERT_ATTR_INTS ? 8 : type == ERT_ATTR_FLOATS ? 4 : sizeof(char *);
	void *arr = ert_graph_alloc(g, (count ? count : 1) * elem);

	if (!arr)
		return fail(ld, ERT_STATUS_OUT_OF_MEMORY, "%s: out of memory", what);
	for (uint32_t k = 0; k < count; k++) {
		if (type == ERT_ATTR_FLOATS) {
			((float *)arr)[k] = rdf(c);
		} else if (type == ERT_ATTR_INTS) {
			((int64_t *)arr)[k] = (int64_t)rd64(c);
		} else {
			if (!get_str(ld, rd32(c), false, false, what, &s, &len))
				return false;
			if (!(((const char **)arr)[k] = ert_graph_strndup(g, s, len)))
				return fail(ld, ERT_STATUS_OUT_OF_MEMORY, "%s: out of memory", what);
		}
	}
	if (type == ERT_ATTR_FLOATS)
		a->floats = arr;
	else if (type == ERT_ATTR_INTS)
		a->ints = arr;
	else
		a->strings = (const char *const *)arr;
	return true;
}

static bool read_node(struct loader *ld, struct cur *c, uint32_t i, int32_t *io)
{
	char what[200];
	const char *op_name, *name;
	uint32_t op_idx, name_idx, opset, n_in, n_out, n_attrs;
	enum ert_op op;

	if (!need(c, FMT_NODE_FIXED))
		return false;
	op_idx = rd32(c);
	name_idx = rd32(c);
	opset = rd32(c);
	n_in = rd32(c);
	n_out = rd32(c);
	n_attrs = rd32(c);
	snprintf(what, sizeof(what), "node %u", i);
	if (!get_str(ld, name_idx, true, false, what, &name, NULL))
		return false;
	snprintf(what, sizeof(what), "node %u ('%.100s')", i, name);
	if (!get_str(ld, op_idx, true, false, what, &op_name, NULL))
		return false;
	op = ert_op_from_name(op_name);
	if (op == ERT_OP_COUNT)
		return fail(ld, ERT_STATUS_UNSUPPORTED, "unsupported op '%.64s' in node '%.100s'",
			    op_name, name);
	if (opset > UINT16_MAX)
		return fail(ld, ERT_STATUS_INVALID_MODEL, "%s: opset %u", what, opset);
	if (n_in > ERT_NODE_MAX_IO || n_out > ERT_NODE_MAX_IO)
		return fail(ld, ERT_STATUS_INVALID_MODEL, "%s: %u inputs and %u outputs (at most %u)",
			    what, n_in, n_out, ERT_NODE_MAX_IO);
	if (!need_items(c, (uint64_t)n_in + n_out, 4, "tensor indices"))
		return false;
	for (uint32_t k = 0; k < n_in; k++)
		if (!read_index(ld, c, true, "input", k, &io[k]))
			return false;
	for (uint32_t k = 0; k < n_out; k++)
		if (!read_index(ld, c, true, "output", k, &io[n_in + k]))
			return false;
	if (!need_items(c, n_attrs, FMT_ATTR_FIXED, "attributes"))
		return false;

	int32_t ni = ert_graph_add_node(ld->g, op, name, n_in, io, n_out, io + n_in);

	if (ni < 0)
		return fail(ld, ERT_STATUS_OUT_OF_MEMORY, "%s: out of memory", what);
	struct ert_node *n = &ld->g->nodes[ni];

	n->opset = (uint16_t)opset;
	if (!n_attrs)
		return true;
	n->attrs = ert_graph_alloc(ld->g, (size_t)n_attrs * sizeof(*n->attrs));
	if (!n->attrs)
		return fail(ld, ERT_STATUS_OUT_OF_MEMORY, "%s: out of memory", what);
	for (uint32_t a = 0; a < n_attrs; a++) {
		n->n_attrs = a + 1;
		if (!read_attr(ld, c, &n->attrs[a], what))
			return false;
	}
	return true;
}

static bool read_nodes(struct loader *ld)
{
	struct cur c = section(ld, FMT_SEC_NODES, "node table");
	int32_t *io;
	uint32_t n;
	bool ok = true;

	if (!need(&c, 4))
		return false;
	n = rd32(&c);
	if (n > INT32_MAX || !need_items(&c, n, FMT_NODE_FIXED, "nodes"))
		return n > INT32_MAX ? fail(ld, ERT_STATUS_INVALID_MODEL, "node table claims %u nodes", n)
				     : false;
	io = malloc(2 * ERT_NODE_MAX_IO * sizeof(*io));
	if (!io)
		return fail(ld, ERT_STATUS_OUT_OF_MEMORY, "out of memory reading nodes");
	if (ld->n_subs && (uint64_t)ld->subs[ld->n_subs - 1].first_node +
				  ld->subs[ld->n_subs - 1].n_nodes != n) {
		free(io);
		return fail(ld, ERT_STATUS_INVALID_MODEL,
			    "the subgraphs' nodes end at record %llu, the node table has %u",
			    (unsigned long long)ld->subs[ld->n_subs - 1].first_node +
				    ld->subs[ld->n_subs - 1].n_nodes, n);
	}
	for (uint32_t i = 0, gi = 0; i < n && ok; i++) {
		while (gi < ld->n_subs && i == ld->subs[gi].first_node)
			gi++;
		ld->g = ld->graphs[gi];
		ld->cur = gi;
		ok = read_node(ld, &c, i, io);
	}
	ld->g = ld->graphs[0];
	ld->cur = 0;
	free(io);
	if (ok && c.pos != c.len)
		return fail(ld, ERT_STATUS_INVALID_MODEL, "node table has %llu trailing bytes",
			    (unsigned long long)(c.len - c.pos));
	return ok;
}

static bool read_graph(struct loader *ld)
{
	struct cur c = section(ld, FMT_SEC_GRAPH, "graph section");
	struct ert_graph *g = ld->g;
	const char *producer;
	uint32_t len, n;
	int32_t t;

	if (!need(&c, 4 + 8 + 8 + 4))
		return false;
	if (!get_str(ld, rd32(&c), false, false, "producer", &producer, &len))
		return false;
	if (!(g->producer = ert_graph_strndup(g, producer, len)))
		return fail(ld, ERT_STATUS_OUT_OF_MEMORY, "out of memory");
	g->ir_version = (int64_t)rd64(&c);
	g->opset = (int64_t)rd64(&c);
	for (int pass = 0; pass < 2; pass++) {
		const char *what = pass ? "graph output" : "graph input";

		if (pass && !need(&c, 4))
			return false;
		n = rd32(&c);
		if (!need_items(&c, n, 4, pass ? "graph outputs" : "graph inputs"))
			return false;
		for (uint32_t k = 0; k < n; k++) {
			if (!read_index(ld, &c, false, what, k, &t))
				return false;
			if (!(pass ? ert_graph_add_output(g, t) : ert_graph_add_input(g, t)))
				return fail(ld, ERT_STATUS_OUT_OF_MEMORY, "out of memory");
		}
	}
	if (c.pos != c.len)
		return fail(ld, ERT_STATUS_INVALID_MODEL, "graph section has %llu trailing bytes",
			    (unsigned long long)(c.len - c.pos));
	for (uint32_t i = 0; i < g->n_tensors; i++)
		if ((g->tensors[i].flags & (ERT_TENSOR_INPUT | ERT_TENSOR_OUTPUT)) != ld->rec_flags[i])
			return fail(ld, ERT_STATUS_INVALID_MODEL,
				    "tensor '%s': input/output flags disagree with the graph's lists",
				    g->tensors[i].name);
	return true;
}

/*
 * v5, before the tensors: the subgraph records, checked, and a graph for
 * each, owned by its parent. Records come in preorder: a subgraph's parent
 * is a graph before it, so parents exist first and nesting is a tree.
 */
static bool read_subgraphs(struct loader *ld)
{
	struct cur c = section(ld, FMT_SEC_SUBGRAPHS, "subgraph section");
	uint32_t n;

	if (!need(&c, 4))
		return false;
	n = rd32(&c);
	if (!need_items(&c, n, FMT_SUBGRAPH_FIXED, "subgraphs"))
		return false;
	ld->subs = calloc(n ? n : 1, sizeof(*ld->subs));
	ld->graphs = calloc((size_t)n + 1, sizeof(*ld->graphs));
	if (!ld->subs || !ld->graphs)
		return fail(ld, ERT_STATUS_OUT_OF_MEMORY, "out of memory for %u subgraphs", n);
	ld->graphs[0] = ld->g;
	for (uint32_t i = 0; i < n; i++) {
		struct sub_rec *r = &ld->subs[i];

		if (!need(&c, FMT_SUBGRAPH_FIXED - 4))
			return false;
		r->parent = rd32(&c);
		r->first_tensor = rd32(&c);
		r->n_tensors = rd32(&c);
		r->first_node = rd32(&c);
		r->n_nodes = rd32(&c);
		for (int l = 0; l < 3; l++) {
			if (!need(&c, 4))
				return false;
			r->n_lists[l] = rd32(&c);
			if (!need_items(&c, r->n_lists[l], 4, "subgraph tensor indices"))
				return false;
			r->lists[l] = c.p + c.pos;
			c.pos += (uint64_t)r->n_lists[l] * 4;
		}
		if (r->parent > i)
			return fail(ld, ERT_STATUS_INVALID_MODEL,
				    "subgraph %u names graph %u as its parent: a parent comes before "
				    "its subgraphs (a cycle?)", i, r->parent);
		r->depth = r->parent ? ld->subs[r->parent - 1].depth + 1 : 1;
		if (r->depth > ERT_GRAPH_MAX_DEPTH)
			return fail(ld, ERT_STATUS_INVALID_MODEL,
				    "subgraph %u nests %u levels deep, at most %d", i, r->depth,
				    ERT_GRAPH_MAX_DEPTH);
		if (i && ((uint64_t)ld->subs[i - 1].first_tensor + ld->subs[i - 1].n_tensors !=
				  r->first_tensor ||
			  (uint64_t)ld->subs[i - 1].first_node + ld->subs[i - 1].n_nodes !=
				  r->first_node))
			return fail(ld, ERT_STATUS_INVALID_MODEL,
				    "subgraph %u: its tensors or nodes do not follow those of subgraph %u",
				    i, i - 1);
		if (r->n_tensors > INT32_MAX || r->n_nodes > INT32_MAX ||
		    r->n_lists[0] > ERT_NODE_MAX_IO || r->n_lists[1] > ERT_NODE_MAX_IO ||
		    r->n_lists[2] > ERT_NODE_MAX_IO)
			return fail(ld, ERT_STATUS_INVALID_MODEL,
				    "subgraph %u has too many tensors, nodes, inputs, outputs or outer values", i);
		ld->graphs[i + 1] = ert_graph_add_subgraph(ld->graphs[r->parent]);
		if (!ld->graphs[i + 1])
			return fail(ld, ERT_STATUS_OUT_OF_MEMORY, "out of memory for subgraph %u", i);
		ld->n_subs = i + 1;
	}
	if (c.pos != c.len)
		return fail(ld, ERT_STATUS_INVALID_MODEL, "subgraph section has %llu trailing bytes",
			    (unsigned long long)(c.len - c.pos));
	return true;
}

/* v5, once the tensors are read: each subgraph's inputs, outputs and outer values. */
static bool read_subgraph_lists(struct loader *ld)
{
	static const char *const what[3] = { "input", "output", "outer value" };

	for (uint32_t i = 0; i < ld->n_subs; i++) {
		const struct sub_rec *r = &ld->subs[i];
		struct ert_graph *g = ld->graphs[i + 1];

		for (int l = 0; l < 3; l++) {
			for (uint32_t k = 0; k < r->n_lists[l]; k++) {
				int32_t t = (int32_t)fmt_get32(r->lists[l] + 4 * k);
				bool ok;

				if (t < 0 || (uint32_t)t >= g->n_tensors)
					return fail(ld, ERT_STATUS_INVALID_MODEL,
						    "subgraph %u %s %u: tensor index %d out of range "
						    "(%u tensors)", i, what[l], k, t, g->n_tensors);
				if (l == 2 && (g->tensors[t].flags & (ERT_TENSOR_CONST | ERT_TENSOR_OUTER)))
					return fail(ld, ERT_STATUS_INVALID_MODEL,
						    "subgraph %u outer value %u: '%s' is a constant or "
						    "listed twice", i, k, g->tensors[t].name);
				ok = l == 0 ? ert_graph_add_input(g, t)
				     : l == 1 ? ert_graph_add_output(g, t) : ert_graph_add_capture(g, t);
				if (!ok)
					return fail(ld, ERT_STATUS_OUT_OF_MEMORY, "out of memory");
			}
		}
		for (uint32_t t = 0; t < g->n_tensors; t++)
			if ((g->tensors[t].flags & (ERT_TENSOR_INPUT | ERT_TENSOR_OUTPUT)) !=
			    ld->rec_flags[r->first_tensor + t])
				return fail(ld, ERT_STATUS_INVALID_MODEL,
					    "subgraph %u tensor '%s': input/output flags disagree with "
					    "its lists", i, g->tensors[t].name);
	}
	return true;
}

static bool check_subgraphs_used(struct loader *ld)
{
	for (uint32_t i = 0; i < ld->n_subs; i++)
		if (!ld->subs[i].used)
			return fail(ld, ERT_STATUS_INVALID_MODEL,
				    "subgraph %u belongs to graph %u, but no node there holds it", i,
				    ld->subs[i].parent);
	return true;
}

ert_status ert_format_load(const void *data, size_t size, struct ert_graph **out,
			   struct ert_err *err)
{
	struct loader ld = { .img = data, .size = size, .st = ERT_OK, .err = err };
	struct ert_graph *root;  /* ld.g moves to each subgraph while its records are read */
	ert_status st;

	if (!data || !out) {
		ert_err_set(err, "failed to load model: no data");
		return ERT_STATUS_INVALID_ARGUMENT;
	}
	if (!read_header(&ld) || !read_strings(&ld))
		return ld.st;
	root = ld.g = ert_graph_create();
	if (!ld.g) {
		ert_err_set(err, "out of memory loading model");
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	/*
	 * Each file version has its own reading rules. v2 differs from v1 only
	 * in the value checksum and flag, which read_header() and
	 * read_tensor() handle; the records are the same. v3 and v4 have v2's
	 * layout (v3 may hold Conv nodes with a fused residual, v4 QLinearConv
	 * nodes with one too: docs/model-format.md). v5 adds the subgraph
	 * section and GRAPH attributes; v6 has v5's layout (it may hold MatMul
	 * nodes with a fused bias), and so has v7 (it may hold string constants,
	 * encoding 5).
	 * v8 has that layout too, and its tensor records may be sequences or
	 * optionals (flags, read_tensor()). v9 has v8's layout (it may hold
	 * MatMul nodes with folded Transposes, ert.perm_a/_b/_y), and so has v10
	 * (MatMul nodes with a fused residual or scale, ert.residual, ert.scale).
	 */
	if (ld.version >= 1 && ld.version <= 4) {
		ld.graphs = calloc(1, sizeof(*ld.graphs));
		if (!ld.graphs) {
			ld.st = ERT_STATUS_OUT_OF_MEMORY;
			ert_err_set(err, "out of memory loading model");
			goto fail;
		}
		ld.graphs[0] = ld.g;
		if (!read_tensors(&ld) || !read_nodes(&ld) || !read_graph(&ld))
			goto fail;
	}
	/* v5 adds subgraphs: their records first, their lists once the tensors are read */
	if (ld.version >= 5 &&
	    (!read_subgraphs(&ld) || !read_tensors(&ld) || !read_subgraph_lists(&ld) ||
	     !read_nodes(&ld) || !check_subgraphs_used(&ld) || !read_graph(&ld)))
		goto fail;
	st = ert_graph_validate(root, err);
	if (st != ERT_OK) {
		ld.st = st;
		goto fail;
	}
	free(ld.rec_flags);
	free(ld.ranges);
	free(ld.graphs);
	free(ld.subs);
	*out = root;
	return ERT_OK;
fail:
	free(ld.rec_flags);
	free(ld.ranges);
	free(ld.graphs);
	free(ld.subs);
	ert_graph_destroy(root);
	return ld.st;
}
