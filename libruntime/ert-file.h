/* SPDX-License-Identifier: MIT */
/*
 * ert-file.h — private to libedgert and the CLI: opening the files a user
 * names (models, ONNX external data, inputs).
 */
#ifndef ERT_FILE_H
#define ERT_FILE_H

#include <stdio.h>
#include <sys/types.h>
#include <sys/stat.h>

#include "ert-graph.h"

/*
 * Open @path read-only (O_CLOEXEC) if it is a regular file, following
 * symbolic links. FIFOs, devices, sockets and directories are refused with
 * a message naming what the path is, and never opened in a way that could
 * block. Returns the descriptor and fills *@st_out (may be NULL), or -1 with
 * @err set and errno EISDIR for a directory, EINVAL for another
 * non-regular file, or open()'s errno.
 */
int ert_file_open_regular(const char *path, struct stat *st_out, struct ert_err *err);

/* ert_file_open_regular() as a stdio stream ("rb"), or NULL with @err set. */
FILE *ert_file_fopen_regular(const char *path, struct stat *st_out, struct ert_err *err);

/*
 * Write @iovcnt buffers to the file @path names, for outputs a user names
 * (models, .npy files):
 *  - a regular file, or none: the data goes to a temporary file in the same
 *    directory, is synced, and is renamed over @path, so readers (and models
 *    mapped from the old file) see the old file or the new one, never a mix;
 *    a replaced file keeps its mode, a new one gets 0666 less the umask;
 *  - a symbolic link: written through (the file it leads to is replaced the
 *    same way; the link stays); a link that leads nowhere is refused;
 *  - a character device (/dev/null): written in place;
 *  - a directory, FIFO, socket or block device: refused, untouched.
 * Returns ERT_OK, or a status with @err naming the problem.
 */
struct iovec;
ert_status ert_file_write_atomic(const char *path, const struct iovec *iov, int iovcnt,
				 struct ert_err *err);

/* "a FIFO", "a directory", ... for a stat() mode. */
const char *ert_file_type_name(mode_t mode);

#endif
