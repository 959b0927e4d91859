/* SPDX-License-Identifier: MIT */
/*
 * .npy reader and writer. The header is a Python dict literal; we accept only
 * what numpy writes (keys descr, fortran_order, shape in any order, each once)
 * and refuse anything else rather than guess.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "cli.h"
#include "npy.h"

static const char npy_magic[6] = { '\x93', 'N', 'U', 'M', 'P', 'Y' };

static const struct {
	const char *descr;
	ert_dtype dtype;
} descrs[] = {
	{ "<f4", ERT_DTYPE_FLOAT32 }, { "<f8", ERT_DTYPE_FLOAT64 }, { "<f2", ERT_DTYPE_FLOAT16 },
	{ "|i1", ERT_DTYPE_INT8 },    { "|u1", ERT_DTYPE_UINT8 },   { "<i2", ERT_DTYPE_INT16 },
	{ "<u2", ERT_DTYPE_UINT16 },  { "<i4", ERT_DTYPE_INT32 },   { "<u4", ERT_DTYPE_UINT32 },
	{ "<i8", ERT_DTYPE_INT64 },   { "<u8", ERT_DTYPE_UINT64 },  { "|b1", ERT_DTYPE_BOOL },
	/* spellings numpy accepts for single-byte types */
	{ "<i1", ERT_DTYPE_INT8 },    { "<u1", ERT_DTYPE_UINT8 },   { "<b1", ERT_DTYPE_BOOL },
};

#define N_DESCRS (sizeof(descrs) / sizeof(descrs[0]))

static bool fail(char *err, size_t err_size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static bool fail(char *err, size_t err_size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, err_size, fmt, ap);
	va_end(ap);
	return false;
}

bool npy_probe(const void *data, size_t size)
{
	return size >= 6 && memcmp(data, npy_magic, 6) == 0;
}

const char *npy_descr(ert_dtype dtype)
{
	for (size_t i = 0; i < N_DESCRS; i++)
		if (descrs[i].dtype == dtype)
			return descrs[i].descr;
	return NULL;
}

struct hdr_parser {
	const char *p, *end;
};

static void skip_ws(struct hdr_parser *hp)
{
	while (hp->p < hp->end && (*hp->p == ' ' || *hp->p == '\t'))
		hp->p++;
}

static bool expect(struct hdr_parser *hp, char c)
{
	skip_ws(hp);
	if (hp->p >= hp->end || *hp->p != c)
		return false;
	hp->p++;
	return true;
}

/* A quoted Python string without escapes (numpy never writes any). */
static bool parse_str(struct hdr_parser *hp, char *buf, size_t size)
{
	char q;
	size_t n = 0;

	skip_ws(hp);
	if (hp->p >= hp->end || (*hp->p != '\'' && *hp->p != '"'))
		return false;
	q = *hp->p++;
	while (hp->p < hp->end && *hp->p != q) {
		unsigned char c = (unsigned char)*hp->p;

		/* a NUL would end the C string early: "<f4\0junk" must not read as "<f4" */
		if (c == '\\' || c < 0x20 || c >= 0x7f || n + 1 >= size)
			return false;
		buf[n++] = *hp->p++;
	}
	if (hp->p >= hp->end)
		return false;
	hp->p++;
	buf[n] = '\0';
	return true;
}

static bool parse_word(struct hdr_parser *hp, const char *word)
{
	size_t n = strlen(word);

	skip_ws(hp);
	if ((size_t)(hp->end - hp->p) < n || memcmp(hp->p, word, n) != 0)
		return false;
	hp->p += n;
	return true;
}

static bool parse_shape(struct hdr_parser *hp, struct npy_array *a)
{
	if (!expect(hp, '('))
		return false;
	a->rank = 0;
	for (;;) {
		int64_t v = 0;
		int digits = 0;

		skip_ws(hp);
		if (hp->p < hp->end && *hp->p == ')') {
			hp->p++;
			return true;
		}
		if (a->rank == ERT_MAX_RANK)
			return false;
		while (hp->p < hp->end && *hp->p >= '0' && *hp->p <= '9') {
			if (++digits > 15)
				return false;
			v = v * 10 + (*hp->p++ - '0');
		}
		if (!digits)
			return false;
		a->dims[a->rank++] = v;
		skip_ws(hp);
		if (hp->p < hp->end && *hp->p == ',')
			hp->p++;
		else if (hp->p >= hp->end || *hp->p != ')')
			return false;
	}
}

static bool parse_header(const char *h, size_t len, struct npy_array *a, char *err,
			 size_t err_size)
{
	struct hdr_parser hp = { h, h + len };
	bool have_descr = false, have_order = false, have_shape = false;
	char key[32], descr[16];

	if (!expect(&hp, '{'))
		return fail(err, err_size, "header is not a dict");
	for (;;) {
		skip_ws(&hp);
		if (expect(&hp, '}'))
			break;
		if (!parse_str(&hp, key, sizeof(key)) || !expect(&hp, ':'))
			return fail(err, err_size, "malformed header");
		if (strcmp(key, "descr") == 0 && !have_descr) {
			size_t i;

			if (!parse_str(&hp, descr, sizeof(descr)))
				return fail(err, err_size, "malformed 'descr' in header");
			for (i = 0; i < N_DESCRS; i++)
				if (strcmp(descrs[i].descr, descr) == 0)
					break;
			if (i == N_DESCRS)
				return fail(err, err_size,
					    "unsupported element type '%s' (little-endian numbers and bool only)",
					    descr);
			a->dtype = descrs[i].dtype;
			have_descr = true;
		} else if (strcmp(key, "fortran_order") == 0 && !have_order) {
			if (parse_word(&hp, "True"))
				return fail(err, err_size, "Fortran-order arrays are not supported");
			if (!parse_word(&hp, "False"))
				return fail(err, err_size, "malformed 'fortran_order' in header");
			have_order = true;
		} else if (strcmp(key, "shape") == 0 && !have_shape) {
			if (!parse_shape(&hp, a))
				return fail(err, err_size, "malformed 'shape' in header (rank at most %d)",
					    ERT_MAX_RANK);
			have_shape = true;
		} else {
			return fail(err, err_size, "unexpected or repeated key '%s' in header", key);
		}
		skip_ws(&hp);
		if (expect(&hp, ','))
			continue;
		if (!expect(&hp, '}'))
			return fail(err, err_size, "malformed header");
		break;
	}
	/* numpy pads the dict with spaces and ends the header with one newline */
	while (hp.p < hp.end && *hp.p == ' ')
		hp.p++;
	if (hp.p == hp.end)
		return fail(err, err_size, "header does not end with a newline");
	if (*hp.p != '\n' || hp.p + 1 != hp.end)
		return fail(err, err_size, "trailing bytes after the header dict");
	if (!have_descr || !have_order || !have_shape)
		return fail(err, err_size, "header lacks '%s'",
			    !have_descr ? "descr" : !have_order ? "fortran_order" : "shape");
	return true;
}

bool npy_parse(const void *image, size_t size, struct npy_array *out, char *err,
	       size_t err_size)
{
	const uint8_t *p = image;
	struct npy_array a = { 0 };
	size_t hlen, hstart;
	int64_t numel;

	if (!npy_probe(image, size))
		return fail(err, err_size, "not an .npy file (bad magic)");
	if (size < 10)
		return fail(err, err_size, "truncated header");
	if (p[6] == 1) {
		hlen = (size_t)p[8] | (size_t)p[9] << 8;
		hstart = 10;
	} else if (p[6] == 2 || p[6] == 3) {
		if (size < 12)
			return fail(err, err_size, "truncated header");
		hlen = (size_t)p[8] | (size_t)p[9] << 8 | (size_t)p[10] << 16 | (size_t)p[11] << 24;
		hstart = 12;
	} else {
		return fail(err, err_size, "unsupported .npy version %u.%u", p[6], p[7]);
	}
	if (hlen > size - hstart)
		return fail(err, err_size, "truncated header (%zu bytes declared, %zu present)",
			    hlen, size - hstart);
	if (!parse_header((const char *)p + hstart, hlen, &a, err, err_size))
		return false;
	numel = ert_shape_numel(a.rank, a.dims);
	if (numel < 0 || (uint64_t)numel > SIZE_MAX / 8)
		return fail(err, err_size, "shape too large");
	a.nbytes = (size_t)numel * ert_dtype_size(a.dtype);
	if (size - hstart - hlen != a.nbytes)
		return fail(err, err_size, "data is %zu bytes, shape and type need %zu",
			    size - hstart - hlen, a.nbytes);
	a.data = malloc(a.nbytes ? a.nbytes : 1);
	if (!a.data)
		return fail(err, err_size, "out of memory");
	memcpy(a.data, p + hstart + hlen, a.nbytes);
	*out = a;
	return true;
}

bool npy_read_file(const char *path, struct npy_array *out, char *err, size_t err_size)
{
	struct ert_err oerr = { "" };
	FILE *f = ert_file_fopen_regular(path, NULL, &oerr);
	void *buf = NULL;
	long len;
	bool ok = false;

	if (!f)
		return fail(err, err_size, "%s", oerr.msg);
	if (fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
		fail(err, err_size, "cannot read '%s': %s", path, strerror(errno));
		goto out;
	}
	buf = malloc(len ? (size_t)len : 1);
	if (!buf) {
		fail(err, err_size, "cannot read '%s': out of memory", path);
		goto out;
	}
	if (fread(buf, 1, (size_t)len, f) != (size_t)len) {
		fail(err, err_size, "cannot read '%s': short read", path);
		goto out;
	}
	if (!npy_parse(buf, (size_t)len, out, err, err_size)) {
		char why[256];

		snprintf(why, sizeof(why), "%s", err);
		fail(err, err_size, "bad .npy file '%s': %s", path, why);
		goto out;
	}
	ok = true;
out:
	free(buf);
	fclose(f);
	return ok;
}

bool npy_write_file(const char *path, ert_dtype dtype, int32_t rank, const int64_t *dims,
		    const void *data, size_t nbytes, char *err, size_t err_size)
{
	const char *descr = npy_descr(dtype);
	char dict[512];
	size_t n, total;

	if (!descr)
		return fail(err, err_size, ".npy has no element type for %s", ert_dtype_name(dtype));
	n = (size_t)snprintf(dict, sizeof(dict), "{'descr': '%s', 'fortran_order': False, 'shape': (",
			     descr);
	for (int32_t i = 0; i < rank; i++)
		n += (size_t)snprintf(dict + n, sizeof(dict) - n, "%lld,%s", (long long)dims[i],
				      i + 1 < rank ? " " : "");
	/* Python writes (3,) for one dim and (2, 3) for more. */
	if (rank > 1)
		n--;
	n += (size_t)snprintf(dict + n, sizeof(dict) - n, "), }");
	/* pad with spaces so that data starts on a 64-byte boundary; ends with '\n' */
	total = 10 + n + 1;
	total = (total + 63) / 64 * 64;
	while (10 + n + 1 < total)
		dict[n++] = ' ';
	dict[n++] = '\n';

	uint8_t pre[10] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (uint8_t)(n & 0xff),
			    (uint8_t)(n >> 8) };
	struct iovec iov[3] = {
		{ .iov_base = pre, .iov_len = sizeof(pre) },
		{ .iov_base = dict, .iov_len = n },
		{ .iov_base = (void *)data, .iov_len = nbytes },
	};
	struct ert_err werr = { "" };

	if (ert_file_write_atomic(path, iov, 3, &werr) != ERT_OK)
		return fail(err, err_size, "%s", werr.msg);
	return true;
}
