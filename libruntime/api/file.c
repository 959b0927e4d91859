/* SPDX-License-Identifier: MIT */
/*
 * The files a user names: inputs are opened only when they are regular files
 * (never a blocking open); outputs replace regular files atomically and are
 * never put in place of a device, FIFO or socket.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ert-file.h"

const char *ert_file_type_name(mode_t mode)
{
	if (S_ISREG(mode))
		return "a regular file";
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISLNK(mode))
		return "a symbolic link";
	return "not a regular file";
}

int ert_file_open_regular(const char *path, struct stat *st_out, struct ert_err *err)
{
	struct stat st;
	int fd;

	/*
	 * Look before opening: open() of a FIFO blocks until a writer comes, and
	 * opening a device can have effects of its own.
	 */
	if (stat(path, &st) != 0) {
		ert_err_set(err, "cannot open '%s': %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode))
		goto not_regular;
	/* O_NONBLOCK: the file may have been replaced by a FIFO since stat() */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		ert_err_set(err, "cannot open '%s': %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0) {
		ert_err_set(err, "cannot open '%s': %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		goto not_regular;
	}
	int fl = fcntl(fd, F_GETFL);

	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	if (st_out)
		*st_out = st;
	return fd;
not_regular:
	ert_err_set(err, "cannot open '%s': it is %s, not a regular file", path,
		    ert_file_type_name(st.st_mode));
	errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
	return -1;
}

FILE *ert_file_fopen_regular(const char *path, struct stat *st_out, struct ert_err *err)
{
	int fd = ert_file_open_regular(path, st_out, err);
	FILE *f;

	if (fd < 0)
		return NULL;
	f = fdopen(fd, "rb");
	if (!f) {
		ert_err_set(err, "cannot open '%s': %s", path, strerror(errno));
		close(fd);
	}
	return f;
}

/*
 * The mode a new file would get from open(path, O_CREAT, 0666): mkstemp()
 * makes 0600, which would leave models unreadable to others. The umask is
 * read from /proc, since umask() would change it for every thread of the
 * process while it is read.
 */
static mode_t new_file_mode(void)
{
	unsigned int mask = 022;
	char line[128];
	FILE *f = fopen("/proc/self/status", "r");

	if (f) {
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "Umask: %o", &mask) == 1)
				break;
		fclose(f);
	}
	return 0666 & ~(mode_t)mask;
}

static int write_all(int fd, const struct iovec *iov, int iovcnt, const char *path,
		     struct ert_err *err)
{
	for (int i = 0; i < iovcnt; i++) {
		const uint8_t *p = iov[i].iov_base;

		for (size_t done = 0; done < iov[i].iov_len;) {
			ssize_t n = write(fd, p + done, iov[i].iov_len - done);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				ert_err_set(err, "failed to write '%s': %s", path,
					    n < 0 ? strerror(errno) : "short write");
				return -1;
			}
			done += (size_t)n;
		}
	}
	return 0;
}

/* A character device (/dev/null, say) is written in place, as a shell redirection would. */
static ert_status write_device(const char *path, const struct iovec *iov, int iovcnt,
			       struct ert_err *err)
{
	struct stat st;
	ert_status status = ERT_OK;
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd < 0) {
		ert_err_set(err, "failed to open '%s': %s", path, strerror(errno));
		return ERT_STATUS_IO;
	}
	if (fstat(fd, &st) != 0 || !S_ISCHR(st.st_mode)) {
		ert_err_set(err, "failed to write '%s': it changed while being opened", path);
		close(fd);
		return ERT_STATUS_IO;
	}
	int fl = fcntl(fd, F_GETFL);

	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	if (write_all(fd, iov, iovcnt, path, err) != 0)
		status = ERT_STATUS_IO;
	if (close(fd) != 0 && status == ERT_OK) {
		ert_err_set(err, "failed to write '%s': %s", path, strerror(errno));
		status = ERT_STATUS_IO;
	}
	return status;
}

ert_status ert_file_write_atomic(const char *path, const struct iovec *iov, int iovcnt,
				 struct ert_err *err)
{
	ert_status status = ERT_OK;
	char *target = NULL, *tmp = NULL;
	struct stat st;
	mode_t mode;
	int fd;

	if (!path || !*path) {
		ert_err_set(err, "failed to write: no path");
		return ERT_STATUS_INVALID_ARGUMENT;
	}
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
		/* write through the link: the file it names is replaced, the link stays */
		target = realpath(path, NULL);
		if (!target) {
			ert_err_set(err, "failed to write '%s': it is a symbolic link that leads nowhere (%s)",
				    path, strerror(errno));
			return ERT_STATUS_IO;
		}
	} else {
		target = strdup(path);
		if (!target) {
			ert_err_set(err, "failed to write '%s': out of memory", path);
			return ERT_STATUS_OUT_OF_MEMORY;
		}
	}
	if (stat(target, &st) == 0) {
		if (S_ISCHR(st.st_mode)) {
			status = write_device(target, iov, iovcnt, err);
			free(target);
			return status;
		}
		if (!S_ISREG(st.st_mode)) {
			ert_err_set(err, "refusing to write '%s': it is %s, and only a regular file is replaced",
				    path, ert_file_type_name(st.st_mode));
			free(target);
			return ERT_STATUS_INVALID_ARGUMENT;
		}
		mode = st.st_mode & 07777; /* replacing a file keeps its mode */
	} else if (errno == ENOENT) {
		mode = new_file_mode();
	} else {
		ert_err_set(err, "failed to write '%s': %s", path, strerror(errno));
		free(target);
		return ERT_STATUS_IO;
	}
	tmp = malloc(strlen(target) + 16);
	if (!tmp) {
		ert_err_set(err, "failed to write '%s': out of memory", path);
		free(target);
		return ERT_STATUS_OUT_OF_MEMORY;
	}
	/* in the target's directory, so that rename() replaces it atomically */
	sprintf(tmp, "%s.tmp.XXXXXX", target);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		ert_err_set(err, "failed to create '%s': %s", tmp, strerror(errno));
		free(tmp);
		free(target);
		return ERT_STATUS_IO;
	}
	if (fchmod(fd, mode) != 0) {
		ert_err_set(err, "failed to set the mode of '%s': %s", tmp, strerror(errno));
		status = ERT_STATUS_IO;
	}
	if (status == ERT_OK && write_all(fd, iov, iovcnt, tmp, err) != 0)
		status = ERT_STATUS_IO;
	if (status == ERT_OK && fsync(fd) != 0) {
		ert_err_set(err, "failed to write '%s': %s", tmp, strerror(errno));
		status = ERT_STATUS_IO;
	}
	if (close(fd) != 0 && status == ERT_OK) {
		ert_err_set(err, "failed to write '%s': %s", tmp, strerror(errno));
		status = ERT_STATUS_IO;
	}
	if (status == ERT_OK && rename(tmp, target) != 0) {
		ert_err_set(err, "failed to rename '%s' to '%s': %s", tmp, target, strerror(errno));
		status = ERT_STATUS_IO;
	}
	if (status != ERT_OK)
		unlink(tmp);
	free(tmp);
	free(target);
	return status;
}
