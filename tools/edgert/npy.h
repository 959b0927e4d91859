/* SPDX-License-Identifier: MIT */
/*
 * npy.h — NumPy .npy files (format versions 1.0, 2.0 and 3.0): little-endian,
 * C order, the element types the runtime knows.
 */
#ifndef ERT_NPY_H
#define ERT_NPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "edgert.h"

struct npy_array {
	ert_dtype dtype;
	int32_t rank;
	int64_t dims[ERT_MAX_RANK];
	void *data;      /* malloc'd; the caller frees it */
	size_t nbytes;
};

/* True when @data starts with the .npy magic. */
bool npy_probe(const void *data, size_t size);

/*
 * Parse an .npy image. Fortran order, big-endian, object and unsupported
 * descriptors, ranks above ERT_MAX_RANK and a data size that does not match
 * the shape are refused with a message in @err.
 */
bool npy_parse(const void *image, size_t size, struct npy_array *out, char *err,
	       size_t err_size);
/* Read and parse @path. */
bool npy_read_file(const char *path, struct npy_array *out, char *err, size_t err_size);

/* The '<f4'-style descriptor of @dtype, or NULL when .npy has none for it. */
const char *npy_descr(ert_dtype dtype);

/* Write a version 1.0 file (header padded to 64 bytes). */
bool npy_write_file(const char *path, ert_dtype dtype, int32_t rank, const int64_t *dims,
		    const void *data, size_t nbytes, char *err, size_t err_size);

#endif /* ERT_NPY_H */
