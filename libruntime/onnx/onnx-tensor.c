/* SPDX-License-Identifier: MIT */
/* ONNX TensorProto → dtype, shape and a private copy of the data. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ert-file.h"
#include "ert-strings.h"
#include "onnx/onnx-private.h"

ert_status ert_onnx_read_file(const char *path, uint8_t **data_out, size_t *size_out,
			      struct ert_err *err)
{
	struct stat sb;
	uint8_t *buf = NULL;
	size_t size, got = 0;
	ert_status st = ERT_STATUS_IO;
	int fd = ert_file_open_regular(path, &sb, err);

	if (fd < 0)
		return ERT_STATUS_IO;
	if ((uint64_t)sb.st_size > ERT_ONNX_MAX_FILE) {
		ert_err_set(err, "failed to read '%s': %lld bytes, at most %zu supported", path,
			    (long long)sb.st_size, ERT_ONNX_MAX_FILE);
		st = ERT_STATUS_UNSUPPORTED;
		goto out;
	}
	size = (size_t)sb.st_size;
	buf = malloc(size ? size : 1);
	if (!buf) {
		ert_err_set(err, "failed to read '%s': out of memory", path);
		st = ERT_STATUS_OUT_OF_MEMORY;
		goto out;
	}
	while (got < size) {
		ssize_t r = read(fd, buf + got, size - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			ert_err_set(err, "failed to read '%s': %s", path,
				    r < 0 ? strerror(errno) : "file shrank while reading");
			goto out;
		}
		got += (size_t)r;
	}
	*data_out = buf;
	*size_out = size;
	buf = NULL;
	st = ERT_OK;
out:
	free(buf);
	close(fd);
	return st;
}

char *ert_onnx_dirname(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

/* A location must stay below the model directory: relative, no ".." part. */
static bool location_is_safe(const char *loc)
{
	if (!*loc || loc[0] == '/')
		return false;
	for (const char *p = loc; *p;) {
		size_t n = strcspn(p, "/");

		if (n == 2 && p[0] == '.' && p[1] == '.')
			return false;
		p += n;
		if (*p == '/')
			p++;
	}
	return true;
}

static bool parse_u64(const char *s, uint64_t *out)
{
	char *end;

	if (!s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);

	if (errno || *end)
		return false;
	*out = v;
	return true;
}

/* Read @nbytes of external data into a new buffer *@out, after every check passed. */
static ert_status read_external(const Onnx__TensorProto *tp, const char *dir, const char *what,
				size_t nbytes, uint8_t **out, struct ert_err *err)
{
	uint8_t *dst = NULL;
	const char *loc = NULL;
	uint64_t offset = 0, length = 0;
	bool has_length = false;
	char *path = NULL, *real_dir = NULL, *real_file = NULL;
	ert_status st = ERT_STATUS_INVALID_MODEL;
	int fd = -1;
	struct stat sb;
	struct ert_err why = { "" };

	for (size_t i = 0; i < tp->n_external_data; i++) {
		const Onnx__StringStringEntryProto *kv = tp->external_data[i];
		const char *key = kv->key ? kv->key : "";

		if (strcmp(key, "location") == 0) {
			loc = kv->value;
		} else if (strcmp(key, "offset") == 0) {
			if (!parse_u64(kv->value, &offset)) {
				ert_err_set(err, "%s: bad external data offset", what);
				return ERT_STATUS_INVALID_MODEL;
			}
		} else if (strcmp(key, "length") == 0) {
			if (!parse_u64(kv->value, &length)) {
				ert_err_set(err, "%s: bad external data length", what);
				return ERT_STATUS_INVALID_MODEL;
			}
			has_length = true;
		}
	}
	if (!loc || !location_is_safe(loc)) {
		ert_err_set(err, "%s: external data location '%s' is missing, absolute or "
			    "outside the model directory", what, loc ? loc : "");
		return ERT_STATUS_INVALID_MODEL;
	}
	if (!dir) {
		ert_err_set(err, "%s: external data '%s' needs the model's directory", what, loc);
		return ERT_STATUS_INVALID_ARGUMENT;
	}
	if (has_length && length != nbytes) {
		ert_err_set(err, "%s: external data length %llu, its shape needs %zu bytes", what,
			    (unsigned long long)length, nbytes);
		return ERT_STATUS_INVALID_MODEL;
	}
	path = malloc(strlen(dir) + strlen(loc) + 2);
	if (!path) {
		ert_err_set(err, "%s: out of memory", what);
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	sprintf(path, "%s/%s", dir, loc);
	/* Symbolic links must not lead out of the model directory either. */
	real_dir = realpath(dir, NULL);
	real_file = realpath(path, NULL);
	if (!real_dir || !real_file) {
		ert_err_set(err, "%s: failed to open external data '%s': %s", what, path,
			    strerror(errno));
		st = ERT_STATUS_IO;
		goto out;
	}
	size_t dl = strlen(real_dir);

	if (strncmp(real_file, real_dir, dl) != 0 ||
	    (real_file[dl] != '/' && !(dl == 1 && real_dir[0] == '/'))) {
		ert_err_set(err, "%s: external data '%s' resolves outside the model directory",
			    what, loc);
		goto out;
	}
	fd = ert_file_open_regular(real_file, &sb, &why);
	if (fd < 0) {
		ert_err_set(err, "%s: failed to open external data: %s", what, why.msg);
		st = ERT_STATUS_IO;
		goto out;
	}
	if (offset > (uint64_t)sb.st_size || nbytes > (uint64_t)sb.st_size - offset) {
		ert_err_set(err, "%s: external data '%s' holds %lld bytes, needs %zu at offset %llu",
			    what, loc, (long long)sb.st_size, nbytes, (unsigned long long)offset);
		goto out;
	}
	dst = malloc(nbytes ? nbytes : 1);
	if (!dst) {
		ert_err_set(err, "%s: out of memory for %zu bytes", what, nbytes);
		st = ERT_STATUS_OUT_OF_MEMORY;
		goto out;
	}
	for (size_t got = 0; got < nbytes;) {
		ssize_t r = pread(fd, dst + got, nbytes - got, (off_t)(offset + got));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			ert_err_set(err, "%s: failed to read external data '%s'", what, path);
			st = ERT_STATUS_IO;
			goto out;
		}
		got += (size_t)r;
	}
	*out = dst;
	dst = NULL;
	st = ERT_OK;
out:
	free(dst);
	if (fd >= 0)
		close(fd);
	free(real_file);
	free(real_dir);
	free(path);
	return st;
}

/* Narrow int32_data into 1- or 2-byte elements (ints, bool, fp16/bf16/fp8 bits). */
static void narrow_int32(const int32_t *src, size_t n, size_t elem, uint8_t *dst)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t v = (uint32_t)src[i];

		if (elem == 1) {
			dst[i] = (uint8_t)v;
		} else {
			uint16_t h = (uint16_t)v;

			memcpy(dst + 2 * i, &h, 2);
		}
	}
}

static ert_status count_mismatch(struct ert_err *err, const char *what, const char *field,
				 size_t have, int64_t need)
{
	ert_err_set(err, "%s: %s holds %zu values, its shape needs %lld", what, field, have,
		    (long long)need);
	return ERT_STATUS_INVALID_MODEL;
}

/* The typed field that holds @dt's values and its length. */
static size_t typed_count(const Onnx__TensorProto *tp, ert_dtype dt, const char **field)
{
	switch (dt) {
	case ERT_DTYPE_FLOAT32: *field = "float_data"; return tp->n_float_data;
	case ERT_DTYPE_FLOAT64: *field = "double_data"; return tp->n_double_data;
	case ERT_DTYPE_INT64: *field = "int64_data"; return tp->n_int64_data;
	case ERT_DTYPE_UINT32:
	case ERT_DTYPE_UINT64: *field = "uint64_data"; return tp->n_uint64_data;
	default: *field = "int32_data"; return tp->n_int32_data;
	}
}

/* Fill @dst (nbytes) from the typed repeated fields of @tp. */
static ert_status decode_typed(const Onnx__TensorProto *tp, ert_dtype dt, int64_t numel,
			       uint8_t *dst, size_t nbytes, const char *what, struct ert_err *err)
{
	size_t n = (size_t)numel;

	switch (dt) {
	case ERT_DTYPE_FLOAT32:
		if (tp->n_float_data != n)
			return count_mismatch(err, what, "float_data", tp->n_float_data, numel);
		memcpy(dst, tp->float_data, nbytes);
		return ERT_OK;
	case ERT_DTYPE_FLOAT64:
		if (tp->n_double_data != n)
			return count_mismatch(err, what, "double_data", tp->n_double_data, numel);
		memcpy(dst, tp->double_data, nbytes);
		return ERT_OK;
	case ERT_DTYPE_INT64:
		if (tp->n_int64_data != n)
			return count_mismatch(err, what, "int64_data", tp->n_int64_data, numel);
		memcpy(dst, tp->int64_data, nbytes);
		return ERT_OK;
	case ERT_DTYPE_INT32:
		if (tp->n_int32_data != n)
			return count_mismatch(err, what, "int32_data", tp->n_int32_data, numel);
		memcpy(dst, tp->int32_data, nbytes);
		return ERT_OK;
	case ERT_DTYPE_UINT64:
		if (tp->n_uint64_data != n)
			return count_mismatch(err, what, "uint64_data", tp->n_uint64_data, numel);
		memcpy(dst, tp->uint64_data, nbytes);
		return ERT_OK;
	case ERT_DTYPE_UINT32:
		if (tp->n_uint64_data != n)
			return count_mismatch(err, what, "uint64_data", tp->n_uint64_data, numel);
		for (size_t i = 0; i < n; i++) {
			uint32_t v = (uint32_t)tp->uint64_data[i];

			memcpy(dst + 4 * i, &v, 4);
		}
		return ERT_OK;
	case ERT_DTYPE_INT4:
	case ERT_DTYPE_UINT4:
		/* ONNX packs two 4-bit values per int32_data entry; accept one per entry too. */
		if (tp->n_int32_data == nbytes) {
			narrow_int32(tp->int32_data, nbytes, 1, dst);
			return ERT_OK;
		}
		if (tp->n_int32_data != n)
			return count_mismatch(err, what, "int32_data", tp->n_int32_data, numel);
		memset(dst, 0, nbytes);
		for (size_t i = 0; i < n; i++)
			dst[i / 2] |= (uint8_t)((tp->int32_data[i] & 0xf) << (4 * (i & 1)));
		return ERT_OK;
	default:
		if (tp->n_int32_data != n)
			return count_mismatch(err, what, "int32_data", tp->n_int32_data, numel);
		narrow_int32(tp->int32_data, n, ert_dtype_size(dt), dst);
		return ERT_OK;
	}
}

/*
 * A string tensor: string_data only (ONNX stores strings nowhere else), one
 * entry per element, packed into one block of handles and bytes
 * (ert_strings_pack()) that free() releases like any decoded tensor.
 */
static ert_status decode_strings(const Onnx__TensorProto *tp, const char *what,
				 struct ert_value *v, struct ert_value *out, struct ert_err *err)
{
	ert_string *tmp;

	if (tp->has_raw_data || (tp->has_data_location &&
				 tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)) {
		ert_err_set(err, "%s: a string tensor keeps its strings in string_data, not in "
			    "raw or external data", what);
		return ERT_STATUS_INVALID_MODEL;
	}
	if (tp->n_string_data != (size_t)v->numel)
		return count_mismatch(err, what, "string_data", tp->n_string_data, v->numel);
	tmp = malloc((v->numel ? (size_t)v->numel : 1) * sizeof(*tmp));
	if (!tmp) {
		ert_err_set(err, "%s: out of memory for %lld strings", what, (long long)v->numel);
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	for (int64_t i = 0; i < v->numel; i++) {
		tmp[i].data = (const char *)tp->string_data[i].data;
		tmp[i].len = tp->string_data[i].len;
	}
	v->data = ert_strings_pack(tmp, (size_t)v->numel, NULL);
	free(tmp);
	if (!v->data) {
		ert_err_set(err, "%s: out of memory for its strings", what);
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	*out = *v;
	return ERT_OK;
}

ert_status ert_onnx_tensor_decode(const Onnx__TensorProto *tp, const char *dir,
				  const char *what, struct ert_value *out, struct ert_err *err)
{
	int32_t raw_dt = tp->has_data_type ? tp->data_type : 0;
	struct ert_value v;
	uint8_t *data = NULL;
	ert_status st;

	memset(&v, 0, sizeof(v));
	if (raw_dt == ERT_DTYPE_COMPLEX64 || raw_dt == ERT_DTYPE_COMPLEX128) {
		ert_err_set(err, "%s: %s tensors are not supported", what,
			    ert_dtype_name((ert_dtype)raw_dt));
		return ERT_STATUS_UNSUPPORTED;
	}
	if (!ert_dtype_valid(raw_dt) && raw_dt != ERT_DTYPE_STRING) {
		ert_err_set(err, "%s: unknown data type %d", what, (int)raw_dt);
		return ERT_STATUS_INVALID_MODEL;
	}
	if (tp->n_dims > ERT_MAX_RANK) {
		ert_err_set(err, "%s: rank %zu, at most %d supported", what, tp->n_dims,
			    ERT_MAX_RANK);
		return ERT_STATUS_UNSUPPORTED;
	}
	if (tp->segment) {
		ert_err_set(err, "%s: segmented tensors are not supported", what);
		return ERT_STATUS_UNSUPPORTED;
	}
	v.dtype = (ert_dtype)raw_dt;
	v.rank = (int32_t)tp->n_dims;
	for (size_t i = 0; i < tp->n_dims; i++) {
		if (tp->dims[i] < 0) {
			ert_err_set(err, "%s: dimension %zu is %lld", what, i,
				    (long long)tp->dims[i]);
			return ERT_STATUS_INVALID_MODEL;
		}
		v.dims[i] = tp->dims[i];
	}
	v.numel = ert_shape_numel(v.rank, v.dims);
	if (v.numel < 0 || (uint64_t)v.numel > SIZE_MAX / 16) {
		ert_err_set(err, "%s: shape is too large", what);
		return ERT_STATUS_INVALID_MODEL;
	}
	v.nbytes = ert_dtype_bytes(v.dtype, v.numel);
	if (v.dtype == ERT_DTYPE_STRING)
		return decode_strings(tp, what, &v, out, err);

	bool external = tp->has_data_location &&
			tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;

	/* Before allocating: the bytes must exist (external sizes are checked on read). */
	if (!external && tp->has_raw_data && tp->raw_data.len != v.nbytes) {
		ert_err_set(err, "%s: raw_data holds %zu bytes, its shape needs %zu", what,
			    tp->raw_data.len, v.nbytes);
		return ERT_STATUS_INVALID_MODEL;
	}
	if (!external && !tp->has_raw_data && v.numel) {
		const char *field;
		size_t have = typed_count(tp, v.dtype, &field);
		bool packed4 = (v.dtype == ERT_DTYPE_INT4 || v.dtype == ERT_DTYPE_UINT4) &&
			       have == v.nbytes;

		if (have != (size_t)v.numel && !packed4)
			return count_mismatch(err, what, field, have, v.numel);
	}
	if (external) {
		st = read_external(tp, dir, what, v.nbytes, &data, err);
		if (st != ERT_OK)
			return st;
		v.data = data;
		*out = v;
		return ERT_OK;
	}
	data = malloc(v.nbytes ? v.nbytes : 1);
	if (!data) {
		ert_err_set(err, "%s: out of memory for %zu bytes", what, v.nbytes);
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	if (tp->has_raw_data && v.nbytes) /* raw_data.data is NULL when empty */
		st = (memcpy(data, tp->raw_data.data, v.nbytes), ERT_OK);
	else if (tp->has_raw_data)
		st = ERT_OK;
	else if (v.numel == 0)
		st = ERT_OK;
	else
		st = decode_typed(tp, v.dtype, v.numel, data, v.nbytes, what, err);
	if (st != ERT_OK) {
		free(data);
		return st;
	}
	v.data = data;
	*out = v;
	return ERT_OK;
}

ert_status ert_onnx_load_tensor_file(const char *path, struct ert_value *out, char *name,
				     size_t name_size, struct ert_err *err)
{
	uint8_t *buf = NULL;
	size_t size = 0;
	Onnx__TensorProto *tp = NULL;
	char *dir = NULL;
	char what[300];
	ert_status st = ert_onnx_read_file(path, &buf, &size, err);

	if (st != ERT_OK)
		return st;
	st = ert_onnx_check_depth(&onnx__tensor_proto__descriptor, buf, size, err);
	if (st != ERT_OK)
		goto out;
	tp = onnx__tensor_proto__unpack(NULL, size, buf);
	if (!tp) {
		ert_err_set(err, "failed to parse '%s': not a serialized TensorProto", path);
		st = ERT_STATUS_INVALID_MODEL;
		goto out;
	}
	dir = ert_onnx_dirname(path);
	if (!dir) {
		ert_err_set(err, "failed to load '%s': out of memory", path);
		st = ERT_STATUS_OUT_OF_MEMORY;
		goto out;
	}
	snprintf(what, sizeof(what), "tensor file '%.250s'", path);
	st = ert_onnx_tensor_decode(tp, dir, what, out, err);
	if (st == ERT_OK && name && name_size)
		snprintf(name, name_size, "%s", tp->name ? tp->name : "");
out:
	if (tp)
		onnx__tensor_proto__free_unpacked(tp, NULL);
	free(dir);
	free(buf);
	return st;
}
